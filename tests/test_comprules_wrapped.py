"""Comprehensive Rules releases hard-wrapped at about 100 columns (2003-10-01 to 2004-02-01).

Those releases cut every line near 100 columns and go on, unindented, on the next lines; a
cross-reference can then open a line ("See rule" / "103.4. If a player ..."). The fixtures
are real rules of the 2004-10-01 release, whole and hard-wrapped (tests/fixtures/README.md).
"""

from __future__ import annotations

import re
import statistics
from typing import TYPE_CHECKING

import pytest
from conftest import FIXTURES, REALDATA, rows
from layouts import hard_wrap

from pipeline import ingest
from pipeline.models import Kind, RawDocument, SourceHints
from pipeline.reading.parsers import comprules, parse
from pipeline.reading.read import to_document

if TYPE_CHECKING:
    from pathlib import Path

    from pipeline.models import ParsedDocument

EXCERPTS = FIXTURES / "raw" / "comprules"
WHOLE = EXCERPTS / "2004-10-01-keywords.txt"
WRAPPED = EXCERPTS / "2004-10-01-keywords-wrapped.txt"
MODULAR = (
    'Modular represents both a static ability and a triggered ability. "Modular X" means "This'
    ' permanent comes into play with X +1/+1 counters on it" and "When this permanent is put'
    " into a graveyard from play, you may put a +1/+1 counter on target artifact creature for"
    ' each +1/+1 counter on this permanent."'
)
needs_realdata = pytest.mark.skipif(
    not REALDATA.is_dir(), reason="../shared/realdata is not beside this checkout"
)


def _read(name: str, text: str) -> ParsedDocument:
    return parse(to_document(name, text.encode("utf-8"), SourceHints()))


def _rows(parsed: ParsedDocument) -> list[tuple[Kind, str | None, str]]:
    return [(r.kind, r.rule_id, r.text) for r in parsed.rulings]


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def _rule(parsed: ParsedDocument, rule_id: str) -> str:
    [text] = [r.text for r in parsed.rulings if r.kind is Kind.RULE and r.rule_id == rule_id]
    return text


def _without_blank_lines_between_rules(text: str) -> str:
    """TEXT with no blank line from its first rule to the glossary (rules one under another)."""
    lines = text.split("\n")
    first = next(i for i, line in enumerate(lines) if re.match(r"\d{3}\.\d", line))
    glossary = max(i for i, line in enumerate(lines) if line.strip() == "Glossary")
    kept = [line for line in lines[first:glossary] if line.strip()]
    return "\n".join([*lines[:first], *kept, "", *lines[glossary:]])


def test_the_wrapped_fixture_reads_as_the_whole_one() -> None:
    """Every rule and term of the fixture cut at 100 columns has the words of the uncut lines."""
    whole, wrapped = _read(WHOLE.name, _text(WHOLE)), _read(WRAPPED.name, _text(WRAPPED))
    assert _rows(wrapped) == _rows(whole)
    assert _rule(wrapped, "502.35a") == MODULAR
    rules = [r for r in wrapped.rulings if r.kind is Kind.RULE]
    terms = [r.rule_id for r in wrapped.rulings if r.kind is Kind.GLOSSARY]
    assert len(rules) == 179  # the lines of section 502 that open with a rule number
    assert terms == [
        *("Ability", "Bushido", "Double Strike", "First Strike", "Flanking"),
        *("Keyword Ability", "Modular", "Scry", "Sunburst"),
    ]
    assert not wrapped.warnings
    # The fixture does hold a cross-reference that opens a line, right after "rules".
    assert "in rules\r\n409.1b and 409.1f-h." in _text(WRAPPED)
    assert "409.1b" not in {r.rule_id for r in rules}


def test_a_wrapped_release_then_the_same_rules_unwrapped_change_nothing(tmp_path: Path) -> None:
    """The wrapped fixture dated February 1, 2004, then the whole one: no rule changed.

    Read first line only, every rule of the wrapped one came out amended (947 false
    amendments over the three wrapped releases) and the glossary's Modular "renumbered".
    """
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    wrapped = _text(WRAPPED).replace("October 1, 2004", "February 1, 2004", 1)
    (raw / "cr.txt").write_bytes(wrapped.encode("utf-8"))
    ingest([raw], out=out)
    (raw / "cr.txt").write_bytes(WHOLE.read_bytes())
    report = ingest([raw], out=out)
    assert [f.rules for f in report.files] == [179]
    assert [r for r in rows(out, "changes") if r["run"] == 2] == []


@pytest.mark.parametrize("blank_lines", [True, False], ids=["blank-lines", "no-blank-lines"])
@pytest.mark.parametrize("width", [50, 56, 80, 100, 126])
def test_any_wrapping_reads_the_same(width: int, *, blank_lines: bool) -> None:
    """Cut at any width, rules spaced or not: the same rows (cross-references open lines)."""
    whole = _text(WHOLE)
    text = hard_wrap(whole, width)
    if not blank_lines:
        text = _without_blank_lines_between_rules(text)
    assert _rows(_read("cr.txt", text)) == _rows(_read("cr.txt", whole))


def test_see_rule_then_a_number_on_the_next_line_is_no_rule() -> None:
    """413.2d wrapped just before "103.4." (inside "See rule 103.4."): one rule, whole."""
    excerpt = _text(EXCERPTS / "2004-10-01-excerpt.txt")
    cut = excerpt.replace("See rule 103.4. If a player", "See rule\r\n103.4. If a player")
    assert cut != excerpt
    parsed = _read("cr.txt", cut)
    assert _rows(parsed) == _rows(_read("cr.txt", excerpt))
    assert "103.4" not in {r.rule_id for r in parsed.rulings}


@pytest.mark.parametrize(
    ("before", "number"),
    [
        ("the choices (see rule", "502.28), creatures"),  # a reference word
        ("blocking creatures,", "502.40 of them"),  # a comma, even in order
        ("as the additional costs", "409.1b and 409.1f-h."),  # mid-sentence, going back
        ("counters on it for each", "502.35a counter"),  # mid-sentence, repeating the rule
    ],
)
def test_a_number_inside_a_sentence_continues_the_rule(before: str, number: str) -> None:
    """A line opening with a number continues the sentence the line before left open."""
    text = (
        "Magic: The Gathering Comprehensive Rules\n\nThese rules are current as of October 1,"
        f" 2004.\n\n502.35a Modular goes on over {before}\n{number} and ends here.\n\n"
        "502.35b If a creature has multiple instances of modular, each one works separately.\n"
    )
    parsed = _read("cr.txt", text)
    assert [r.rule_id for r in parsed.rulings] == ["502.35a", "502.35b"]
    assert _rule(parsed, "502.35a") == f"Modular goes on over {before} {number} and ends here."


def test_a_heading_s_sentence_cut_before_a_number_is_no_rule() -> None:
    """A heading's sentence cut before a number: the number goes on with it, no rule.

    2004 prints "215. This section is now empty. See rule 205.4c and rule 420.5e about
    legendary permanents." under its heading; cut at 60 columns, 420.5e opens a line.
    """
    text = (
        "Magic: The Gathering Comprehensive Rules\n\nThese rules are current as of October 1,"
        " 2004.\n\n214.1. A permanent is a card or token in play.\n\n215. This section is now"
        " empty. See rule 205.4c and rule\n420.5e about legendary permanents.\n\n216. Tokens\n\n"
        "216.1. Some effects put token creatures into play.\n"
    )
    parsed = _read("cr.txt", text)
    assert [r.rule_id for r in parsed.rulings] == ["214.1", "216.1"]
    assert _rule(parsed, "214.1") == "A permanent is a card or token in play."


@needs_realdata
@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize(
    "release",
    ["comprules-2004-2008/2004-10-01", "comprules-2004-2008/2008-10-01", "comprules/2024-02-06"],
    ids=lambda r: r.split("/")[-1],
)
def test_a_whole_real_release_hard_wrapped_reads_the_same(release: str, width: int) -> None:
    """Every rule and term of a real release cut at WIDTH has its words (spaces aside).

    textwrap drops the second of two spaces where it cuts ("one  --" in 2008).
    """
    path = REALDATA / f"{release}.txt"
    text = to_document(path.name, path.read_bytes(), SourceHints()).text

    def words(parsed: ParsedDocument) -> list[tuple[Kind, str | None, str]]:
        return [(kind, rule_id, " ".join(t.split())) for kind, rule_id, t in _rows(parsed)]

    wrapped = _read("cr.txt", hard_wrap(text, width))
    assert words(wrapped) == words(_read("cr.txt", text))
    assert not wrapped.warnings


def test_a_rule_title_then_its_first_rule_are_two_rules() -> None:
    """A title with no full stop and the next rule in order under it: two rules, not one."""
    text = (
        "Magic: The Gathering Comprehensive Rules\n\nThese rules are current as of October 1,"
        " 2004.\n\n502.35. Modular\n502.35a Modular represents both a static ability\nand a"
        " triggered ability.\n502. Keyword Abilities\n502.36. Scry\n"
    )
    parsed = _read("cr.txt", text)
    assert _rows(parsed) == [
        (Kind.RULE, "502.35", "Modular"),
        (Kind.RULE, "502.35a", "Modular represents both a static ability and a triggered ability."),
        (Kind.RULE, "502.36", "Scry"),
    ]


def test_a_number_glued_to_its_text_is_read() -> None:
    """'901.4.All plane ...' (no space after the number) is rule 901.4, not a lost line."""
    text = (
        "Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of October 7,"
        " 2022.\n\n901.3. Planar die rolls ...\n\n901.4.All plane and phenomenon cards remain in"
        " the command zone throughout the game.\n\n901.5. Face-up plane cards ...\n"
    )
    parsed = _read("cr.txt", text)
    assert [r.rule_id for r in parsed.rulings] == ["901.3", "901.4", "901.5"]
    assert _rule(parsed, "901.4").startswith("All plane and phenomenon cards remain")


def test_rules_cut_to_their_first_lines_are_warned_about() -> None:
    """A release whose rules stop mid-sentence (first lines only) is named in a warning."""
    wrapped = _text(WRAPPED).split("\n")
    first = next(i for i, line in enumerate(wrapped) if re.match(r"\d{3}\.\d", line))
    glossary = max(i for i, line in enumerate(wrapped) if line.strip() == "Glossary")
    # What a reader that drops the lines opening with no number keeps of the rules.
    kept = [line for line in wrapped[first:glossary] if not line.strip() or line[0].isdigit()]
    cut = "\n".join([*wrapped[:first], *kept, *wrapped[glossary:]])
    parsed = _read("cr.txt", cut)
    rules = [r for r in parsed.rulings if r.kind is Kind.RULE]
    assert statistics.mean(len(r.text) for r in rules) < 100  # cut, as in 2004
    assert [w.split(":")[0] for w in parsed.warnings] == ["the release of October 1, 2004"]
    assert "end mid-sentence" in parsed.warnings[0]
    assert not _read("cr.txt", _text(WRAPPED)).warnings


@needs_realdata
def test_rule_901_4_of_the_2022_release_is_read() -> None:
    """The real 2022-10-07 release prints '901.4.All': the rule is there, whole."""
    path = REALDATA / "comprules" / "2022-10-07.txt"
    parsed = parse(to_document(path.name, path.read_bytes(), SourceHints()))
    assert _rule(parsed, "901.4").startswith("All plane and phenomenon cards remain in the")


def test_detect_still_reads_the_wrapped_fixture() -> None:
    """The wrapped fixture is a Comprehensive Rules release to the layout detection."""
    doc = RawDocument(WRAPPED.name, "0" * 64, _text(WRAPPED), "utf-8")
    assert comprules.detect(doc)
