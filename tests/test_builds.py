"""One-file builds and older MTGJSON: AllPrintings, v4 set objects, AllSets, catalogs.

The one-file inputs are built inside the tests from real set files of ../shared/realdata:
PLC (Dichotomancy and its translations), M19 and M20 (18 rulings reprinted in both).
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import zipfile
from typing import TYPE_CHECKING, Any

import pytest
import zstandard
from click.testing import CliRunner
from conftest import FIXTURES, RAW, REALDATA, rows

from pipeline import ingest
from pipeline.cli import cli
from pipeline.folding.card_files import ACCEPTED
from pipeline.folding.catalog import Catalog, load_catalog
from pipeline.models import AsOfOrigin, FileStatus
from pipeline.reading import documents

if TYPE_CHECKING:
    from pathlib import Path

BUILD = REALDATA / "mtgjson-2022"
SETS = ("PLC", "M19", "M20")
needs_realdata = pytest.mark.skipif(
    not BUILD.is_dir(), reason="../shared/realdata is not beside this checkout"
)
# What tells one reading of a ruling from another beside its content: where it was read.
_WHERE = {"run", "source_path", "source_sha256", "position"}
CARDS = FIXTURES / "catalog" / "scryfall-cards.json"


def _v5(code: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads((BUILD / f"{code}.json").read_bytes())
    return parsed


def _dump(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def _all_printings() -> bytes:
    """AllPrintings as MTGJSON builds it: the first set file's meta, each set's data by code."""
    files = [_v5(code) for code in SETS]
    data = {code: file["data"] for code, file in zip(SETS, files, strict=True)}
    return _dump({"meta": files[0]["meta"], "data": data})


def _v4_set(code: str) -> dict[str, Any]:
    """A v4 set object from a v5 set file: its data unwrapped, its meta inside.

    Its keys are sorted (as v4 wrote them) and each card's oracle id is beside its name
    (v5 moved it under `identifiers`).
    """
    v5 = _v5(code)
    cards = []
    for card in v5["data"]["cards"]:
        v4 = {k: v for k, v in card.items() if k != "identifiers"}
        oracle = card.get("identifiers", {}).get("scryfallOracleId")
        if oracle:
            v4["scryfallOracleId"] = oracle
        cards.append(dict(sorted(v4.items())))
    return dict(sorted({**v5["data"], "cards": cards, "meta": v5["meta"]}.items()))


def _folder(tmp_path: Path, name: str, files: dict[str, bytes]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file, data in files.items():
        (folder / file).write_bytes(data)
    return folder


def _set_files(tmp_path: Path) -> Path:
    return _folder(
        tmp_path, "sets", {f"{c}.json": (BUILD / f"{c}.json").read_bytes() for c in SETS}
    )


def _readings(out: Path) -> list[tuple[Any, ...]]:
    """Each sighting's content: every column but where it was read, sorted."""
    found = rows(out, "sightings")
    return sorted(tuple(str(v) for k, v in sorted(r.items()) if k not in _WHERE) for r in found)


def _same_rows(one: Path, many: Path) -> None:
    assert rows(one, "rulings") == rows(many, "rulings")
    assert _readings(one) == _readings(many)


INPUTS = {
    "AllPrintings.json": lambda: {"AllPrintings.json": _all_printings()},
    "AllPrintings.json.xz": lambda: {
        "AllPrintings.json.xz": lzma.compress(_all_printings(), preset=1)
    },
    "v4-set-objects": lambda: {f"{c}.json": _dump(_v4_set(c)) for c in SETS},
    "v4-AllSets.json.gz": lambda: {
        "AllSets.json.gz": gzip.compress(_dump({c: _v4_set(c) for c in SETS}), 1)
    },
}


@pytest.mark.slow
@needs_realdata
@pytest.mark.parametrize("shape", list(INPUTS))
def test_one_file_gives_the_rows_of_the_set_files(tmp_path: Path, shape: str) -> None:
    """AllPrintings (plain, xz), v4 set objects and AllSets store what the set files store.

    The rulings table is row for row the same; each sighting too, but for its path, hash
    and position; every file is as of its build day, from its `meta`.
    """
    sets = _set_files(tmp_path)
    ingest([sets], out=tmp_path / "many")
    one = _folder(tmp_path, "one", INPUTS[shape]())
    report = ingest([one], out=tmp_path / "one-out")
    assert report.rejected == ()
    _same_rows(tmp_path / "one-out", tmp_path / "many")
    assert {(f.status, f.layout, str(f.as_of), f.as_of_origin) for f in report.files} == {
        (FileStatus.STORED, "mtgjson", "2022-04-25", AsOfOrigin.DOCUMENT)
    }


@pytest.mark.slow
@needs_realdata
def test_a_large_file_is_streamed_from_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AllPrintings past the size read whole is streamed from the file: the same rows."""
    monkeypatch.setattr(documents, "_WHOLE", 0)  # every JSON file "large"
    sets = _set_files(tmp_path)
    ingest([sets], out=tmp_path / "many")
    one = _folder(tmp_path, "one", {"AllPrintings.json": _all_printings()})
    assert ingest([one], out=tmp_path / "one-out").rejected == ()
    _same_rows(tmp_path / "one-out", tmp_path / "many")


def _names(catalog: Catalog) -> tuple[dict[str, str], ...]:
    return catalog.english, catalog.oracle_of, catalog.name_of


@pytest.mark.slow
@needs_realdata
@pytest.mark.parametrize("shape", list(INPUTS))
def test_one_file_catalogs_are_the_set_files_catalog(tmp_path: Path, shape: str) -> None:
    """As --catalog, each one-file shape gives the names and oracle ids the set files give."""
    expected = _names(load_catalog(sorted(_set_files(tmp_path).iterdir(), key=_by_set)))
    one = _folder(tmp_path, "one", INPUTS[shape]())
    assert _names(load_catalog(sorted(one.iterdir(), key=_by_set))) == expected
    assert expected[0]["dichotomagie"] == "Dichotomancy"  # a name of PLC's foreignData


def _by_set(path: Path) -> int:
    """The files of SETS in their order (the first name read wins a clash, as in AllPrintings)."""
    return next((n for n, code in enumerate(SETS) if path.name.startswith(code)), len(SETS))


def _scryfall_forms() -> dict[str, tuple[str, bytes]]:
    cards = json.loads(CARDS.read_bytes())
    lines = ("\n".join(json.dumps(c) for c in cards) + "\n").encode()
    listed = _dump({"object": "list", "has_more": False, "data": cards})
    return {
        "array": ("cards.json", CARDS.read_bytes()),
        "list-object-bz2": ("cards.json.bz2", bz2.compress(listed)),
        "json-lines": ("cards.jsonl", lines),
        "json-lines-zst": ("cards.jsonl.zst", zstandard.ZstdCompressor().compress(lines)),
    }


@pytest.mark.parametrize("form", list(_scryfall_forms()))
def test_scryfall_cards_catalog_in_every_form(tmp_path: Path, form: str) -> None:
    """Scryfall cards as an array, a list object or JSON Lines, plain or compressed, agree."""
    name, data = _scryfall_forms()[form]
    (tmp_path / name).write_bytes(data)
    catalog = load_catalog([tmp_path / name])
    assert catalog.english["todesriten-schamane"] == "Deathrite Shaman"
    assert catalog.oracle_of == {"Deathrite Shaman": "22f1a4a4-c423-4d1c-8775-0ed604a9fa51"}


def test_atomic_cards_in_a_zip_is_a_catalog(tmp_path: Path) -> None:
    """AtomicCards zipped, as MTGJSON offers it, is read member by member."""
    with zipfile.ZipFile(tmp_path / "AtomicCards.json.zip", "w", zipfile.ZIP_DEFLATED) as packed:
        packed.write(FIXTURES / "catalog" / "atomic-cards.json", "AtomicCards.json")
    catalog = load_catalog([tmp_path / "AtomicCards.json.zip"])
    assert catalog.english["dichotomagie"] == "Dichotomancy"


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("cards.json", b'{"cards": "none", "count": 0}'),
        ("rulings.json", (FIXTURES / "raw" / "scryfall" / "rulings-single.json").read_bytes()),
        ("notes.txt.gz", gzip.compress((RAW / "001_ca7dd0badab20c1e.txt").read_bytes())),
        ("empty.json", b"[]"),
    ],
    ids=["unknown-object", "scryfall-rulings", "gzipped-text", "empty-array"],
)
def test_a_catalog_of_no_known_shape_exits_2(tmp_path: Path, name: str, data: bytes) -> None:
    """--catalog FILE of no known shape stops the run (exit 2) naming it and the shapes read."""
    catalog = tmp_path / name
    catalog.write_bytes(data)
    raw = _folder(tmp_path, "raw", {"seed.txt": (RAW / "001_ca7dd0badab20c1e.txt").read_bytes()})
    out = tmp_path / "out"
    args = ["ingest", str(raw), "--out", str(out), "--catalog", str(catalog)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"Error: {catalog}: not a card catalog of a known shape; accepted: {ACCEPTED}\n"
    )
    assert not out.exists()
