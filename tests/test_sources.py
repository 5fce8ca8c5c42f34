"""Real sources: Gatherer HTML, MTGJSON, Scryfall, the Comprehensive Rules, a card catalog."""

from __future__ import annotations

import re
import shutil
from typing import TYPE_CHECKING

import pytest
from conftest import FIXTURES, RAW, REALDATA, rows
from lxml import etree

from pipeline import ingest, open_dataset
from pipeline.folding.catalog import load_catalog
from pipeline.models import RawDocument, SourceHints
from pipeline.publishing.dataset import load_changeset
from pipeline.publishing.render import render_markdown
from pipeline.reading.parsers import gatherer, parse
from pipeline.reading.read import to_document
from pipeline.text.normalize import fold, text_hash

if TYPE_CHECKING:
    from pathlib import Path

GATHERER = REALDATA / "gatherer-2012"
COMPRULES = REALDATA / "comprules"
CATALOG = FIXTURES / "catalog" / "atomic-cards.json"
needs_realdata = pytest.mark.skipif(
    not REALDATA.is_dir(), reason="../shared/realdata is not beside this checkout"
)


def _doc(path: Path) -> RawDocument:
    return to_document(path.name, path.read_bytes(), SourceHints())


def _rows(out: Path, name: str = "sightings") -> list[dict[str, object]]:
    return rows(out, name)


def _gatherer_pages() -> list[Path]:
    return sorted(GATHERER.glob("*.html")) if GATHERER.is_dir() else []


@needs_realdata
@pytest.mark.parametrize("page", _gatherer_pages(), ids=lambda p: p.stem)
def test_every_gatherer_page_parses(page: Path) -> None:
    """Each real page parses; its rulings are exactly its rulingText cells, dated M/D/YYYY."""
    html = page.read_text(encoding="utf-8")
    cells = len(re.findall(r'<td id="[^"]*_rulingText"', html))
    parsed = parse(_doc(page))
    rulings = list(parsed.rulings)
    assert parsed.layout.value == "gatherer"
    assert len(rulings) == cells
    assert parsed.title
    assert all(re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", r.date_printed or "") for r in rulings)


def test_gatherer_fixture_pages(tmp_path: Path) -> None:
    """Card names (localized as printed), month-first dates, pages without rulings stored."""
    out = tmp_path / "out"
    report = ingest([FIXTURES / "raw" / "gatherer"], out=out)
    assert report.rejected == ()
    rows = _rows(out)
    assert {r["card"] for r in rows} == {"Ancestral Vision", "Vault Skirge"}
    dates = {(r["card"], r["date_printed"], str(r["effective_date"])) for r in rows}
    assert ("Ancestral Vision", "10/15/2006", "2006-10-15") in dates
    files = {r["source_path"]: (r["status"], r["rulings"]) for r in _rows(out, "files")}
    assert files["birdsofparadise_de.html"] == ("stored", 0)
    assert files["fire.html"] == ("stored", 0)
    assert {r["source"] for r in rows} == {"gatherer"}


@pytest.mark.parametrize(
    ("alt", "src", "token"),
    [
        ("Variable Colorless", None, "{X}"),
        ("Green", None, "{G}"),
        ("2", None, "{2}"),
        ("Tap", None, "{T}"),
        ("Green or White", None, "{G/W}"),
        ("Two or Red", None, "{2/R}"),
        ("Phyrexian Green", None, "{G/P}"),
        (None, "/Handlers/Image.ashx?size=small&name=WU&type=symbol", "{W/U}"),
        (None, "/Handlers/Image.ashx?size=small&name=tap&type=symbol", "{T}"),
    ],
)
def test_symbol_images_become_tokens(alt: str | None, src: str | None, token: str) -> None:
    """Gatherer's symbol images are written as Scryfall-style tokens."""
    assert gatherer.symbol(alt, src) == token


def test_gatherer_page_with_symbols_and_links() -> None:
    """Images inside ruling text become tokens; autocard links become their text."""
    html = (
        '<html><body><span id="x_SubContentHeader_subtitleDisplay">Rift Bolt</span><table><tr>'
        '<td id="r_ctl00_rulingDate">2/1/2007</td><td id="r_ctl00_rulingText">If the card has '
        '<img src="/Handlers/Image.ashx?name=X&amp;type=symbol" alt="Variable Colorless"> in its '
        'cost, pay <img alt="Phyrexian Green" src="x"> or <img alt="2" src="y">. See '
        "<autocard>Meddling Mage</autocard>.</td></tr></table></body></html>"
    )
    doc = RawDocument("p.html", "0" * 64, html, "utf-8")
    [ruling] = list(gatherer.parse(doc).rulings)
    assert ruling.text == "If the card has {X} in its cost, pay {G/P} or {2}. See Meddling Mage."
    assert ruling.card == "Rift Bolt"


def test_mtgjson_and_text_dump_share_hashes(tmp_path: Path) -> None:
    """Rift Bolt from MTGJSON (curly apostrophes) and from a text dump: the same keys."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(FIXTURES / "raw" / "mtgjson-tsp-rift-bolt.json", raw / "tsp.json")
    shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw / "rift-bolt.txt")
    ingest([raw], out=tmp_path / "out")
    rows = _rows(tmp_path / "out")
    mtgjson = {r["text_hash"] for r in rows if r["layout"] == "mtgjson"}
    dump = {r["text_hash"] for r in rows if r["layout"] == "plain"}
    countered = "If the second triggered ability is countered, the card can't be cast."
    curly = next(
        r for r in rows if r["layout"] == "mtgjson" and fold(str(r["text"])).startswith(countered)
    )
    assert "\u2019" in str(curly["text"])
    assert curly["text_hash"] in dump
    assert len(mtgjson & dump) >= 5
    assert {r["card"] for r in rows if r["layout"] == "mtgjson"} == {"Rift Bolt"}
    assert {r["lang"] for r in rows if r["layout"] == "mtgjson"} == {"en"}


def test_scryfall_rulings_keep_source_and_oracle_id(tmp_path: Path) -> None:
    """Without a catalog the card stays empty and a warning says how to name it."""
    report = ingest([FIXTURES / "raw" / "scryfall"], out=tmp_path / "out")
    rows = _rows(tmp_path / "out")
    assert [(r["card"], r["oracle_id"], r["source"]) for r in rows] == [
        (None, "22f1a4a4-c423-4d1c-8775-0ed604a9fa51", "scryfall/wotc")
    ] * 2
    assert any("2 rulings name only an oracle id" in w for w in report.warnings)


def test_scryfall_bulk_array_with_a_catalog(tmp_path: Path) -> None:
    """The bulk array shape; a Scryfall cards catalog names the card by its oracle id."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "bulk.json").write_text(
        '[{"object":"ruling","oracle_id":"22f1a4a4-c423-4d1c-8775-0ed604a9fa51",'
        '"source":"scryfall","published_at":"2020-01-01","comment":"A bulk ruling."}]',
        encoding="utf-8",
    )
    catalog = load_catalog([FIXTURES / "catalog" / "scryfall-cards.json"])
    report = ingest([raw], out=tmp_path / "out", catalog=catalog)
    assert report.warnings == ()
    [row] = _rows(tmp_path / "out")
    assert (row["card"], row["source"], str(row["effective_date"])) == (
        "Deathrite Shaman",
        "scryfall/scryfall",
        "2020-01-01",
    )


def test_localized_title_maps_to_english_with_a_catalog(tmp_path: Path) -> None:
    """Seed 002 with a catalog: card Dichotomancy, printed Dichotomagie, oracle id filled."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / "002_389235662a8edeae.txt", raw)
    catalog = load_catalog([CATALOG])
    ingest([raw], out=tmp_path / "out", catalog=catalog)
    rows = _rows(tmp_path / "out")
    assert {(r["card"], r["card_printed"], r["oracle_id"]) for r in rows} == {
        ("Dichotomancy", "Dichotomagie", "6d23f074-d84c-429b-9322-adc731f54a5b")
    }


@needs_realdata
def test_localized_title_with_the_real_plc_catalog(tmp_path: Path) -> None:
    """The real PLC set file's foreignData maps the German name."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / "002_389235662a8edeae.txt", raw)
    catalog = load_catalog([REALDATA / "mtgjson-2022" / "PLC.json"])
    ingest([raw], out=tmp_path / "out", catalog=catalog)
    assert {r["card"] for r in _rows(tmp_path / "out")} == {"Dichotomancy"}


def test_card_inferred_from_its_rulings(tmp_path: Path) -> None:
    """Seed 000 with no manifest: the catalog card its rulings refer to as itself."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / "000_3c6244a5804b91f0.txt", raw)
    report = ingest([raw], out=tmp_path / "out", catalog=load_catalog([CATALOG]))
    rows = _rows(tmp_path / "out")
    assert {(r["card"], r["card_origin"]) for r in rows} == {("The Tenth Doctor", "inferred")}
    [note] = report.warnings
    assert note.startswith(
        "000_3c6244a5804b91f0.txt: card The Tenth Doctor inferred from its rulings (possessive: "
    )


def test_several_referred_cards_are_not_guessed(tmp_path: Path) -> None:
    """Two catalog cards referred to as themselves: no card, and a warning naming both."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "d.txt").write_text(
        "Rulings\n\n2024-01-01\n\nRift Bolt deals 3 damage.\n\n2024-01-01\n\n"
        "The copy of Dichotomancy's ability searches a library.\n",
        encoding="utf-8",
    )
    report = ingest([raw], out=tmp_path / "out", catalog=load_catalog([CATALOG]))
    assert {r["card"] for r in _rows(tmp_path / "out")} == {None}
    assert (
        "d.txt: no card inferred (no clear margin between the candidates): "
        'Rift Bolt (subject: "Rift Bolt deals 3 damage."); '
        'Dichotomancy (possessive: "The copy of Dichotomancy\'s ability searches a library.")'
    ) in report.warnings


@needs_realdata
def test_comprehensive_rules_releases(tmp_path: Path) -> None:
    """Four releases in four encodings; each rule dated by the first release with its text."""
    raw = tmp_path / "raw"
    raw.mkdir()
    releases = sorted(COMPRULES.glob("*.txt"))
    for release in releases:
        shutil.copy(release, raw / release.name)
    # A source each: the diffs between releases (a minute and a half) are test_archive's
    # subject; the first release with a rule's text still dates it.
    sources = "".join(f"{r.name},cr-{r.stem}\n" for r in releases)
    (raw / "manifest.csv").write_text("path,source\n" + sources, encoding="utf-8")
    report = ingest([raw], out=tmp_path / "out")
    assert {f.source_path: (f.encoding, f.rules) for f in report.files} == {
        "2022-10-07.txt": ("cp1252", 2760),
        "2022-11-18.txt": ("utf-16-be", 2791),
        "2023-11-17.txt": ("utf-8", 2899),
        "2024-02-06.txt": ("utf-8", 2937),
    }
    rows = [r for r in _rows(tmp_path / "out") if r["rule_id"] == "100.1"]
    assert {str(r["effective_date"]) for r in rows} == {"2022-10-07"}


@pytest.mark.slow
@needs_realdata
def test_rules_diff_lists_the_suspend_change(tmp_path: Path) -> None:
    """2023-11-17 then 2024-02-06 as one source: 702.62a is amended; rulings link to it."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    shutil.copy(COMPRULES / "2023-11-17.txt", raw / "cr.txt")
    shutil.copy(RAW / "003_4e428d287bba6602.txt", raw / "doctor.txt")
    (raw / "manifest.csv").write_text("path,card\ndoctor.txt,The Tenth Doctor\n", encoding="utf-8")
    ingest([raw], out=out)
    shutil.copy(COMPRULES / "2024-02-06.txt", raw / "cr.txt")
    shutil.copy(RAW / "000_3c6244a5804b91f0.txt", raw / "doctor.txt")
    ingest([raw], out=out)
    changes = [r for r in _rows(out, "changes") if r["run"] == 2]
    suspend = [r for r in changes if r["new_rule_id"] == "702.62a"]
    assert [(r["change"], r["old_rule_id"]) for r in suspend] == [("amended", "702.62a")]
    assert "you may play it" in str(suspend[0]["new_text"])
    assert any(r["change"] == "renumbered" for r in changes)
    cs = load_changeset(out)
    explained = [g for g in cs.groups if g.explained_by]
    assert explained
    assert all("702.62a (amended, effective 2024-02-02)" in g.explained_by for g in explained)
    assert "Explained by Comprehensive Rules 702.62a" in render_markdown(cs)
    # The API says the same per change, in a column.
    frame = open_dataset(out).changes(run=2)
    reasons = frame.loc[frame["explained_by"].notna()]
    assert set(reasons["group"]) == {g.group for g in explained}
    suspend_rule = "702.62a (amended, effective 2024-02-02)"
    assert all(suspend_rule in list(r) for r in reasons["explained_by"])
    assert set(reasons["kind"]) == {"ruling"}
    assert frame.loc[frame["kind"] == "rule", "explained_by"].isna().all()


def test_unknown_json_and_html_are_rejected(tmp_path: Path) -> None:
    """JSON and HTML of other shapes are rejected with their reason."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.json").write_text('{"rows": [1, 2]}', encoding="utf-8")
    (raw / "b.html").write_text("<html><body><p>Hello there.</p></body></html>", encoding="utf-8")
    (raw / "c.json").write_text('{"object": "list", "data": [1, {"comment": ', encoding="utf-8")
    report = ingest([raw], out=tmp_path / "out")
    reasons = {f.source_path: f.reason for f in report.rejected}
    assert reasons["a.json"] == "JSON of an unknown shape: not MTGJSON nor Scryfall rulings"
    assert reasons["b.html"] == "HTML that is not a Gatherer card page"
    assert str(reasons["c.json"]).startswith("invalid JSON")


def test_text_hash_of_tokens_matches_between_sources() -> None:
    """A Gatherer ruling with a symbol image and the same ruling typed with {X}: one hash."""
    html = (
        '<html><body>gatherer<table><tr><td id="r_ctl00_rulingDate">2/2/2024</td>'
        '<td id="r_ctl00_rulingText">If the card has <img alt="Variable Colorless" src="x"> '
        "in its mana cost, you must choose 0 as the value of X.</td></tr></table></body></html>"
    )
    [ruling] = list(gatherer.parse(RawDocument("p.html", "0" * 64, html, "utf-8")).rulings)
    typed = "If the card has {X} in its mana cost, you must choose 0 as the value of X."
    assert text_hash(ruling.text) == text_hash(typed)


def test_beautifulsoup_fallback_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where lxml gives up, BeautifulSoup reads the page to the same rulings."""
    page = FIXTURES / "raw" / "gatherer" / "ancestralvision.html"
    fast = list(parse(_doc(page)).rulings)

    def refuse(*_: object, **__: object) -> None:
        msg = "Document is empty"
        raise etree.ParserError(msg)

    monkeypatch.setattr("lxml.html.fromstring", refuse)  # lxml refuses: BeautifulSoup reads
    slow = list(parse(_doc(page)).rulings)
    assert slow == fast
    assert len(fast) == 2
