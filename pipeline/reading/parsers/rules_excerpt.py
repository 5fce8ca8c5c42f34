"""Rules excerpts: undated paragraphs of rules text, with short heading lines between them."""

from __future__ import annotations

from pipeline.models import Kind, Layout, ParsedDocument, ParsedRuling, RawDocument
from pipeline.reading.parsers._text import join_paragraph, lines_of

LAYOUT = Layout.RULES_EXCERPT
_HEADING_WORDS = 5
_HEADING_CHARS = 48


def _paragraphs(text: str) -> list[list[str]]:
    paragraphs: list[list[str]] = [[]]
    for line in lines_of(text):
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]


def is_heading(paragraph: list[str]) -> bool:
    """A heading is one short line that does not end like a sentence."""
    if len(paragraph) != 1:
        return False
    line = paragraph[0].strip()
    return (
        len(line) <= _HEADING_CHARS
        and len(line.split()) <= _HEADING_WORDS
        and line[-1] not in ".!?;:,\u201d\"')"
    )


def detect(doc: RawDocument) -> bool:
    """Any text with at least one paragraph that is not a heading."""
    text = doc.text
    return any(not is_heading(p) for p in _paragraphs(text))


def parse(doc: RawDocument) -> ParsedDocument:
    """Every paragraph but the headings is one undated row of kind rule."""
    title: str | None = None
    rulings: list[ParsedRuling] = []
    for paragraph in _paragraphs(doc.text):
        if is_heading(paragraph):
            title = title or paragraph[0].strip()
            continue
        rulings.append(ParsedRuling(len(rulings), join_paragraph(paragraph), None, Kind.RULE))
    return ParsedDocument(LAYOUT, title, tuple(rulings))
