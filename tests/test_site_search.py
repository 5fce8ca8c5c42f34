"""The site's search index: its words, Oracle texts, and rebuilds that make it only if needed."""

from __future__ import annotations

import json
import shutil
import unicodedata
from typing import TYPE_CHECKING

import pytest
from conftest import FIXTURES

from pipeline import ingest
from pipeline.publishing import site
from pipeline.publishing.site import beside, build_site
from pipeline.publishing.site_search import _postings, fold, shard

if TYPE_CHECKING:
    from pathlib import Path

CARDS_2022 = FIXTURES / "raw" / "mtgjson-tsp-cards-2022.json"
CARDS_2025 = FIXTURES / "raw" / "mtgjson-tsp-cards-2025.json"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Three Time Spiral cards as MTGJSON gave them in 2022; their raw folder and dataset."""
    root = tmp_path_factory.mktemp("search")
    (root / "raw").mkdir()
    shutil.copy(CARDS_2022, root / "raw" / "TSP.json")
    ingest([root / "raw"], out=root / "normalized")
    return root / "raw", root / "normalized"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".site.lock"}  # fmt: skip


def _found(folder: Path, word: str, field: str = "t") -> list[str]:
    """The labels of the documents whose texts (FIELD "n": names) hold WORD, as the page reads."""
    docs = json.loads((folder / "search" / "docs.js").read_bytes()[len(b"siteSearch.docs(") : -3])
    script = (folder / "search" / f"w-{shard(word)}.js").read_bytes()
    _, words = json.loads(b"[" + script[len(b"siteSearch.words(") : -3] + b"]")
    found, last = [], 0
    for gap in words[field].get(word, "").split(",") if word in words[field] else []:
        last += int(gap, 36)
        found.append(docs[last][1])
    return found


def _slow_fold(text: str) -> str:
    """The fold as it was first written, a character at a time."""
    text = unicodedata.normalize("NFKD", text.lower().replace("ß", "ss").replace("æ", "ae"))
    text = "".join(c for c in text if not unicodedata.category(c).startswith("M"))
    return text.replace("\u2019", "'").replace("\u2018", "'")


@pytest.mark.parametrize(
    "text",
    [
        "Rift Bolt deals 3 damage",
        "Æther Vial's STRASSE: Straße",
        "Dichotomagie \u2019tis \u2018so\u2019",
        "유예를 가진 카드를 추방하는 것은",
        "Lim-Dûl\u0301 the Ñecromancer",
        "",
    ],
    ids=["ascii", "ligatures", "curly-quotes", "korean", "marks", "empty"],
)
def test_fold_is_the_character_by_character_fold(text: str) -> None:
    """The fast fold (ASCII as is, marks dropped by a table) gives what the slow one gave."""
    assert fold(text) == _slow_fold(text)


def test_postings_are_gaps_in_base_36() -> None:
    """Each word's documents as gaps from the one before (the first from 0), in base 36."""
    assert _postings({"a": [0, 3, 40], "b": [5], "c": [36, 37]}, 41) == {
        "a": "0,3,11",
        "b": "5",
        "c": "10,1",
    }
    assert _postings({}, 0) == {}


def test_a_word_of_an_oracle_text_finds_the_card(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """`draws` is in Ancestral Vision's Oracle text alone, `damage` in Rift Bolt's: no ruling's."""
    folder = tmp_path / "site"
    build_site(runs[1], folder)
    assert _found(folder, "draws") == ["Ancestral Vision"]
    assert _found(folder, "damage") == ["Rift Bolt"]
    assert _found(folder, "suspend") == ["Ancestral Vision", "Rift Bolt"]
    assert _found(folder, "bolt", "n") == ["Rift Bolt"]


def test_a_rebuild_with_nothing_new_makes_no_index(
    runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its documents' digest is the manifest's: the index is neither made nor written again."""
    folder = tmp_path / "site"
    build_site(runs[1], folder)
    before = _files(folder)
    manifest = beside(folder)[0].read_bytes()

    def refused(*_: object) -> dict[str, bytes]:
        msg = "the index was made again"
        raise AssertionError(msg)

    monkeypatch.setattr(site, "index_files", refused)
    report = build_site(runs[1], folder)
    assert not report.full
    assert report.written == ()
    assert _files(folder) == before
    assert beside(folder)[0].read_bytes() == manifest


def test_a_search_file_removed_or_changed_by_hand_is_made_again(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    """A missing index file, or one of another size, and the index is made again as it was."""
    folder = tmp_path / "site"
    build_site(runs[1], folder)
    before = _files(folder)
    (folder / "search" / "w-dr.js").unlink()
    report = build_site(runs[1], folder)
    assert report.written == ("search/w-dr.js",)
    (folder / "search" / "w-da.js").write_bytes(b"siteSearch.words();\n")
    report = build_site(runs[1], folder)
    assert report.written == ("search/w-da.js",)
    assert _files(folder) == before


def test_the_index_after_an_incremental_run_is_a_full_builds(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    """A later run (the 2025 Oracle texts): the index is made again, byte for byte a fresh one.

    Its documents' digest in the manifest changes with it.
    """
    raw, dataset = tmp_path / "raw", tmp_path / "normalized"
    shutil.copytree(runs[0], raw)
    shutil.copytree(runs[1], dataset, symlinks=True)
    folder = tmp_path / "site"
    build_site(dataset, folder)
    digest = json.loads(beside(folder)[0].read_text(encoding="utf-8"))["search"]
    shutil.copy(CARDS_2025, raw / "TSP.json")
    ingest([raw], out=dataset)
    report = build_site(dataset, folder)
    assert not report.full
    assert any(p.startswith("search/") for p in report.written)
    assert json.loads(beside(folder)[0].read_text(encoding="utf-8"))["search"] != digest
    fresh = tmp_path / "fresh"
    build_site(dataset, fresh)
    assert _files(fresh) == _files(folder)
    assert beside(fresh)[0].read_bytes() == beside(folder)[0].read_bytes()
