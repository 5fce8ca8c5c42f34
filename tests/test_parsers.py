"""Each layout parser, layout detection, and a contract every parser must keep."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.errors import InputError
from pipeline.models import Kind, Layout, RawDocument, SourceHints
from pipeline.reading.parsers import PARSERS, Parser, bullet, detect, parse
from pipeline.reading.read import to_document


def _doc(text: str) -> RawDocument:
    return RawDocument(path="doc.txt", sha256="0" * 64, text=text, encoding="utf-8")


PLAIN = "Rift Bolt\n\n2024-02-02\n\nFirst ruling\ncontinues here.\n\n02/02/2024\n\nSecond.\n"
BULLET = (
    "Rulings\n\n\u2022 2023-10-13\n  Indented text\n  on two lines.\n"
    "- 2023-10-14: Same-line text.\n"
)
EXCERPT = "Search\n\nFirst rule paragraph.\n\nSuspend\n\nSecond rule\nparagraph.\n"


@pytest.mark.parametrize(
    ("text", "layout"),
    [(PLAIN, Layout.PLAIN), (BULLET, Layout.BULLET), (EXCERPT, Layout.RULES_EXCERPT)],
    ids=["plain", "bullet", "excerpt"],
)
def test_layout_is_detected_from_content(text: str, layout: Layout) -> None:
    """The layout comes from the text itself."""
    assert detect(_doc(text)).LAYOUT is layout


def test_plain_layout() -> None:
    """Date lines start rulings; their paragraph lines are joined."""
    parsed = parse(_doc(PLAIN))
    assert parsed.title == "Rift Bolt"
    assert [(r.position, r.date_printed, r.text, r.kind) for r in parsed.rulings] == [
        (0, "2024-02-02", "First ruling continues here.", Kind.RULING),
        (1, "02/02/2024", "Second.", Kind.RULING),
    ]
    assert parsed.warnings == []


def test_plain_layout_keeps_preamble_and_reports_empty_dates() -> None:
    """Text before the first date is kept (with a warning); a date with no text is reported."""
    parsed = parse(_doc("Title\nAn undated note.\n2024-01-01\n\n2024-01-02\nText.\n"))
    assert [(r.date_printed, r.text) for r in parsed.rulings] == [
        (None, "An undated note."),
        ("2024-01-02", "Text."),
    ]
    assert len(parsed.warnings) == 2
    assert "'2024-01-01' (line 3) has no text" in parsed.warnings[1]


def test_bullet_layout() -> None:
    """Bullet date lines start rulings; text may be indented below or on the same line."""
    parsed = parse(_doc(BULLET))
    assert parsed.title == "Rulings"
    assert [(r.date_printed, r.text) for r in parsed.rulings] == [
        ("2023-10-13", "Indented text on two lines."),
        ("2023-10-14", "Same-line text."),
    ]


_BLANKS_AND_MARKS = st.text(
    alphabet=st.sampled_from([" ", "\t", "\r", "\n", "\u00a0", "\u2022", "-", "*", "x", "1"]),
    max_size=40,
)


@given(before=_BLANKS_AND_MARKS, line=_BLANKS_AND_MARKS, after=_BLANKS_AND_MARKS)
def test_bullet_lines_are_found_in_the_whole_text(before: str, line: str, after: str) -> None:
    """The whole-text look for a bullet finds every line the line-by-line pattern takes."""
    text = f"{before}\n{line.replace(chr(10), ' ')}\n{after}"
    if any(bullet._BULLET.match(each) for each in text.split("\n")):
        assert bullet._ANY_BULLET.search(text) is not None


def test_rules_excerpt_headings_are_not_rows() -> None:
    """Short heading lines are skipped; every other paragraph is an undated rule."""
    parsed = parse(_doc(EXCERPT))
    assert parsed.title == "Search"
    assert [(r.text, r.date_printed, r.kind) for r in parsed.rulings] == [
        ("First rule paragraph.", None, Kind.RULE),
        ("Second rule paragraph.", None, Kind.RULE),
    ]


@pytest.mark.parametrize("text", ["Only\n\nHeadings\n", "\n\n"])
def test_no_rulings_is_an_input_error(text: str) -> None:
    """A document with nothing to store is rejected with a reason."""
    with pytest.raises(InputError, match=r"^doc\.txt: no "):
        parse(_doc(text))


@pytest.mark.parametrize("parser", PARSERS, ids=lambda p: p.LAYOUT.value)
@given(data=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)))
def test_parser_contract(parser: Parser, data: bytes) -> None:
    """Every parser takes any document: rulings with text, in order, or an InputError."""
    try:
        doc = to_document("doc.txt", data, SourceHints())
        parsed = parser.parse(doc)
        rulings = list(parsed.rulings)
    except InputError:
        return
    assert parsed.layout is parser.LAYOUT
    positions = [r.position for r in rulings]
    assert positions == sorted(set(positions))
    assert all(r.text.strip() for r in rulings)


@given(text=st.text(max_size=400))
def test_parse_raises_only_input_error(text: str) -> None:
    """Whatever the text, parse() returns rulings or raises the project's InputError."""
    try:
        parsed = parse(_doc(text))
    except InputError:
        return
    assert parsed.rulings
