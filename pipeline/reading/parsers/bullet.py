"""Bullet layout: "• 2023-10-13" lines, each followed by its (indented) ruling text."""

from __future__ import annotations

import re

from pipeline.models import Kind, Layout, ParsedDocument, ParsedRuling, RawDocument
from pipeline.reading.parsers._text import join_paragraph, lines_of, title_before
from pipeline.text.dates import parse_date

LAYOUT = Layout.BULLET
_MARKS = r"[\u2022\u00b7\u25aa\u2023*\-\u2013]"
_BULLET = re.compile(rf"^\s*{_MARKS}\s+(?P<rest>\S.*)$")
# Any line that may open with a bullet, found in the whole text at once: most documents
# have none, and need no line looked at one by one. Blanks within a line only ([^\S\n]),
# as _BULLET sees them: \s* would run on over every blank line that follows.
_ANY_BULLET = re.compile(rf"^[^\S\n]*{_MARKS}[^\S\n]", re.MULTILINE)


def _split(line: str) -> tuple[str, str] | None:
    """Return (printed date, text on the same line) for a bullet date line, else None."""
    match = _BULLET.match(line)
    if match is None:
        return None
    rest = match.group("rest")
    for cut in (len(rest), *(m.start() for m in re.finditer(r"[:\s\u2013\u2014]", rest))):
        head = rest[:cut]
        if parse_date(head) is not None:
            return head.strip(), rest[cut:].lstrip(" :\u2013\u2014-")
    return None


def detect(doc: RawDocument) -> bool:
    """A bullet dump has at least one bullet line that starts with a date."""
    text = doc.text
    if _ANY_BULLET.search(text) is None:
        return False
    return any(_split(line) is not None for line in lines_of(text))


def parse(doc: RawDocument) -> ParsedDocument:
    """Each bullet date line starts a ruling; its text runs to the next bullet date line."""
    lines = lines_of(doc.text)
    heads = [(i, split) for i, line in enumerate(lines) if (split := _split(line)) is not None]
    title, preamble = title_before(lines, heads[0][0] if heads else len(lines))
    warnings: list[str] = []
    rulings: list[ParsedRuling] = []
    if preamble:
        rulings.append(ParsedRuling(0, join_paragraph(preamble), None, Kind.RULING))
        warnings.append("text between the title and the first date is kept as an undated ruling")
    for n, (start, (printed, inline)) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        body = join_paragraph([inline, *lines[start + 1 : end]])
        if not body:
            warnings.append(f"bullet {printed!r} (line {start + 1}) has no text; skipped")
            continue
        rulings.append(ParsedRuling(len(rulings), body, printed, Kind.RULING))
    return ParsedDocument(LAYOUT, title, tuple(rulings), warnings)
