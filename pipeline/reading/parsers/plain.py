"""Plain layout: a title line, then blocks of [date line, blank line, paragraph]."""

from __future__ import annotations

from pipeline.models import Kind, Layout, ParsedDocument, ParsedRuling, RawDocument
from pipeline.reading.parsers._text import is_date_line, join_paragraph, lines_of, title_before

LAYOUT = Layout.PLAIN


def detect(doc: RawDocument) -> bool:
    """A plain dump has at least one line that is nothing but a date."""
    text = doc.text
    return any(is_date_line(line) for line in lines_of(text))


def parse(doc: RawDocument) -> ParsedDocument:
    """Each date line starts a ruling; the lines up to the next date line are its text."""
    lines = lines_of(doc.text)
    starts = [i for i, line in enumerate(lines) if is_date_line(line)]
    title, preamble = title_before(lines, starts[0] if starts else len(lines))
    warnings: list[str] = []
    rulings: list[ParsedRuling] = []
    if preamble:
        # Kept as an undated ruling rather than dropped: nothing read is lost.
        rulings.append(ParsedRuling(0, join_paragraph(preamble), None, Kind.RULING))
        warnings.append("text between the title and the first date is kept as an undated ruling")
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        body = join_paragraph(lines[start + 1 : end])
        printed = lines[start].strip()
        if not body:
            warnings.append(f"date line {printed!r} (line {start + 1}) has no text; skipped")
            continue
        rulings.append(ParsedRuling(len(rulings), body, printed, Kind.RULING))
    return ParsedDocument(LAYOUT, title, tuple(rulings), warnings)
