"""Comprehensive Rules releases of every era: 2004 and 2008 ("current as of"), 2022-2024."""

from __future__ import annotations

import datetime as dt
import shutil
from typing import TYPE_CHECKING

import pytest
from conftest import FIXTURES, REALDATA

from pipeline import ingest
from pipeline.models import Kind, Layout, RawDocument, SourceHints
from pipeline.reading.parsers import comprules, detect, parse, rules_excerpt
from pipeline.reading.read import to_document

if TYPE_CHECKING:
    from pathlib import Path

    from pipeline.models import ParsedRuling

EXCERPTS = FIXTURES / "raw" / "comprules"
needs_realdata = pytest.mark.skipif(
    not REALDATA.is_dir(), reason="../shared/realdata is not beside this checkout"
)
# (rules, glossary entries) of each whole release, counted by hand with grep and awk: rule
# lines between "100.1" and the second "Glossary" line (a number, then its text, with or
# without a space between: 2022-2024 print "901.4.All plane ..."), blank-separated blocks
# between the second "Glossary" and the second "Credits" line.
RELEASES = {
    "comprules-2004-2008/2004-10-01.txt": (dt.date(2004, 10, 1), 728, 319),
    "comprules-2004-2008/2008-10-01.txt": (dt.date(2008, 10, 1), 1173, 398),
    "comprules/2022-10-07.txt": (dt.date(2022, 10, 7), 2760, 642),
    "comprules/2022-11-18.txt": (dt.date(2022, 11, 18), 2791, 647),
    "comprules/2023-11-17.txt": (dt.date(2023, 11, 17), 2899, 668),
    "comprules/2024-02-06.txt": (dt.date(2024, 2, 2), 2937, 673),
}


def _doc(path: Path) -> RawDocument:
    return to_document(path.name, path.read_bytes(), SourceHints())


def _by_id(rows: list[ParsedRuling]) -> dict[str | None, ParsedRuling]:
    return {r.rule_id: r for r in rows}


def test_2004_excerpt_reads_as_rules() -> None:
    """'Current as of', '100.1.' numbering, indented rule and glossary lines, no credits."""
    doc = _doc(EXCERPTS / "2004-10-01-excerpt.txt")
    assert rules_excerpt.detect(doc)  # any prose would do for an excerpt: the rules win
    assert detect(doc) is comprules
    parsed = parse(doc)
    rows = list(parsed.rulings)
    assert parsed.layout is Layout.COMPREHENSIVE_RULES
    assert parsed.as_of == dt.date(2004, 10, 1)
    assert {r.date_printed for r in rows} == {"October 1, 2004"}
    rules = [r.rule_id for r in rows if r.kind is Kind.RULE]
    assert rules == ["100.1", "100.2", "100.3", "100.4", "413.2c", "413.2d", "509.2", "509.3"]
    terms = [r.rule_id for r in rows if r.kind is Kind.GLOSSARY]
    assert terms == [
        "Ability",
        "Activated Ability",
        "Activation Cost",
        "Active Player",
        "Zone-Change Triggers",
    ]
    by_id = _by_id(rows)
    choice = by_id["413.2d"].text
    assert "active player makes" in choice
    assert "Some spells and abilities have multiple steps" in choice  # the indented line
    assert choice.endswith("Each player reveals the cards simultaneously.")  # its example
    ability = by_id["Ability"].text
    assert "When an activated ability is played, it goes onto the stack" in ability
    assert "Richard Garfield" not in " ".join(r.text for r in rows)


def test_2008_excerpt_reads_as_rules() -> None:
    """Lettered sub-rules, a rule number missing its dot, an indented continuation."""
    parsed = parse(_doc(EXCERPTS / "2008-10-01-excerpt.txt"))
    rows = list(parsed.rulings)
    assert parsed.layout is Layout.COMPREHENSIVE_RULES
    assert parsed.as_of == dt.date(2008, 10, 1)
    rules = [r.rule_id for r in rows if r.kind is Kind.RULE]
    assert rules == [
        *("100.1", "100.1a", "100.1b", "203.1", "203.1a", "203.1b", "203.1c"),
        *("609.5", "609.6"),
    ]
    unpayable = _by_id(rows)["203.1b"].text
    assert unpayable.endswith("the alternative cost may be paid.")
    words = _by_id(rows)["Ability Word"].text
    assert "The list of ability words, updated through" in words
    assert len([r for r in rows if r.kind is Kind.GLOSSARY]) == 4


def test_a_release_without_its_date_line_is_not_rules() -> None:
    """Without 'current as of' or 'effective as of' under the title, it is not a release."""
    text = "Magic: The Gathering Comprehensive Rules\n\n100.1. These Magic rules apply.\n"
    doc = RawDocument("cr.txt", "0" * 64, text, "utf-8")
    assert not comprules.detect(doc)


@needs_realdata
@pytest.mark.parametrize("release", sorted(RELEASES), ids=lambda r: r.split("/")[-1])
def test_every_real_release(release: str) -> None:
    """Each whole release: its date, and the rule and glossary counts checked by hand."""
    as_of, rules, terms = RELEASES[release]
    parsed = parse(_doc(REALDATA / release))
    rows = list(parsed.rulings)
    assert parsed.layout is Layout.COMPREHENSIVE_RULES
    assert parsed.as_of == as_of
    assert sum(r.kind is Kind.RULE for r in rows) == rules
    assert sum(r.kind is Kind.GLOSSARY for r in rows) == terms
    assert not parsed.warnings


@needs_realdata
def test_old_releases_ingest_as_rules(tmp_path: Path) -> None:
    """2004 and 2008 in one run: every rule stored with its number and its release's date."""
    raw = tmp_path / "raw"
    raw.mkdir()
    releases = sorted((REALDATA / "comprules-2004-2008").glob("*.txt"))
    for release in releases:
        shutil.copy(release, raw / release.name)
    # A source each: the diff of one release against the other (every rule renumbered, a
    # minute and a half) is test_archive's subject, not this test's.
    sources = "".join(f"{r.name},cr-{r.stem}\n" for r in releases)
    (raw / "manifest.csv").write_text("path,source\n" + sources, encoding="utf-8")
    report = ingest([raw], out=tmp_path / "out")
    assert {f.source_path: (f.layout, f.rules) for f in report.files} == {
        "2004-10-01.txt": (Layout.COMPREHENSIVE_RULES, 728),
        "2008-10-01.txt": (Layout.COMPREHENSIVE_RULES, 1173),
    }
    assert not report.rejected
