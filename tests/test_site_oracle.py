"""The site's Oracle text: a card page's Oracle block and history, Oracle changes as news."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import pytest
from conftest import FIXTURES

from pipeline import ingest
from pipeline.publishing.changelog import OracleEdit
from pipeline.publishing.feed import Latest, on_home
from pipeline.publishing.site import build_site
from pipeline.publishing.site_oracle import face

if TYPE_CHECKING:
    from pathlib import Path

CARDS_2022 = FIXTURES / "raw" / "mtgjson-tsp-cards-2022.json"
CARDS_2025 = FIXTURES / "raw" / "mtgjson-tsp-cards-2025.json"


@pytest.fixture(scope="module")
def oracle_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three Time Spiral cards as MTGJSON gave them in 2022, then in 2025; the site of both runs."""
    root = tmp_path_factory.mktemp("oracle")
    (root / "raw").mkdir()
    shutil.copy(CARDS_2022, root / "raw" / "TSP.json")
    ingest([root / "raw"], out=root / "normalized")
    shutil.copy(CARDS_2025, root / "raw" / "TSP.json")
    ingest([root / "raw"], out=root / "normalized")
    build_site(root / "normalized", root / "site")
    return root / "site"


def _section(page: str, section: str) -> str:
    start = page.index(f'<section id="{section}"')
    return page[start : page.index("</section>", start)]


def test_a_card_page_shows_its_oracle_text_and_its_history(oracle_site: Path) -> None:
    """Rift Bolt's Oracle today, face by face, its source and date; the 2022 text with its diff.

    The text keeps its line breaks; the diff pairs the texts line by line.
    """
    page = (oracle_site / "cards" / "rift-bolt.html").read_text(encoding="utf-8")
    oracle = _section(page, "oracle")
    assert page.index('id="oracle"') < page.index('id="today"')  # above the rulings
    assert '<p class="face-head"><b>Rift Bolt</b> <span class="cost">{2}{R}</span></p>' in oracle
    assert '<p class="type">Sorcery</p>' in oracle
    assert "This spell deals 3 damage to any target.\nSuspend 1—{R}" in oracle
    assert "From MTGJSON (TSP.json), as of <time>2025-08-18</time>" in oracle
    assert "Oracle history: 2 texts" in oracle
    assert re.search(
        r"The text of <time>2022-04-25</time> .*? until <time>2025-08-18</time>", oracle
    )
    assert "\n<del>Rift Bolt</del> <ins>This spell</ins> deals 3 damage to any target.\n" in oracle
    assert not (oracle_site / "cards" / "amrou-seekers.html").exists()  # no rulings, no page


@pytest.mark.parametrize(
    ("numbers", "stats"),
    [
        ({"power": "2", "toughness": "2"}, "2/2"),
        ({"power": "*", "toughness": "1+*"}, "*/1+*"),
        ({"loyalty": "3"}, "Loyalty: 3"),
        ({"defense": "4"}, "Defense: 4"),
        ({}, None),
    ],
    ids=["creature", "stars", "planeswalker", "battle", "sorcery"],
)
def test_a_face_shows_its_numbers(numbers: dict[str, str], stats: str | None) -> None:
    """Power/toughness, loyalty or defense, as the face has them."""
    assert face({"name": "X", **numbers}).stats == stats


def test_no_oracle_block_without_the_card(tmp_path: Path) -> None:
    """A card the dataset has no card row for (a rulings dump) has no Oracle block."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "manifest.csv").write_text("path,card\ndump.txt,Rift Bolt\n", "utf-8")
    (raw / "dump.txt").write_text("Rulings\n\n2024-02-02\n\nA ruling.\n", "utf-8")
    ingest([raw], out=tmp_path / "normalized")
    build_site(tmp_path / "normalized", tmp_path / "site")
    page = (tmp_path / "site" / "cards" / "rift-bolt.html").read_text(encoding="utf-8")
    assert "<h1>Rift Bolt</h1>" in page
    assert 'id="oracle"' not in page
    assert "Oracle text" not in page


ATOM = "{http://www.w3.org/2005/Atom}"


def _entries(site: Path) -> list[ET.Element]:
    return ET.parse(site / "feed.xml").getroot().findall(f"{ATOM}entry")  # noqa: S314 - ours


def test_oracle_changes_are_news(oracle_site: Path, tmp_path: Path) -> None:
    """Run 2's two groups of Oracle edits: feed entries, the home page, the run page.

    Each entry's title names the edit and its card count, its link opens the group on the
    run page, and its id is the same in another build of the same dataset.
    """
    entries = _entries(oracle_site)
    oracle = [e for e in entries if (e.findtext(f"{ATOM}title") or "").startswith("Oracle")]
    titles = sorted(e.findtext(f"{ATOM}title") or "" for e in oracle)
    assert titles == [
        (
            "Oracle text of 2 cards: \u201ccast it\u201d \u2192 \u201cyou may play it\u201d;"
            " \u201cis removed,\u201d \u2192 \u201c,\u201d; \u201cthe\u201d \u2192"
            " \u201cyou remove the\u201d"
        ),
        "Oracle text of 2 cards: \u201c~\u201d \u2192 \u201cthis ~\u201d",
    ]
    run_page = (oracle_site / "runs" / "2.html").read_text(encoding="utf-8")
    for entry in oracle:
        assert entry.findtext(f"{ATOM}updated") == "2025-08-18T00:00:00Z"
        link = entry.find(f"{ATOM}link")
        assert link is not None
        page, anchor = link.attrib["href"].split("#")
        assert page == "runs/2.html"
        assert f'<article class="oracle" id="{anchor}">' in _section(run_page, "oracle")
    ids = sorted(e.findtext(f"{ATOM}id") or "" for e in oracle)
    assert len(set(ids)) == 2
    shutil.copytree(oracle_site.parent / "normalized", tmp_path / "normalized")
    build_site(tmp_path / "normalized", tmp_path / "site")
    again = [e for e in _entries(tmp_path / "site") if e.findtext(f"{ATOM}id") in ids]
    assert len(again) == 2
    home = _section((oracle_site / "index.html").read_text(encoding="utf-8"), "latest")
    assert home.count('<article class="oracle"') == 2
    assert '<a href="runs/2.html#o-' in home
    assert "<h3>Oracle text of 2 cards: <del>~</del> → <ins>this ~</ins></h3>" in run_page
    assert "\n<del>Amrou Seekers</del> <ins>This creature</ins> can&#39;t be blocked" in run_page


def test_the_home_page_shows_a_few_groups_of_oracle_edits_per_run() -> None:
    """Seven groups of one run: five on the home page, the fifth saying two more."""
    day = dt.date(2025, 8, 18)
    edits = [
        OracleEdit(((f"w{n}", f"v{n}"),), ("Rift Bolt",), "Rift Bolt", "a", "b", day)
        for n in range(7)
    ]
    items = [Latest(day, oracle=e, run=3) for e in edits]
    items.insert(2, Latest(day, run=2))
    shown = on_home(items, 20, 5)
    assert [i.oracle for i in shown if i.oracle] == edits[:5]
    assert [i.more for i in shown if i.oracle] == [0, 0, 0, 0, 2]
    assert len(shown) == 6
    assert len(on_home(items, 3, 5)) == 3
