"""One parser per raw layout, chosen by looking at the content, never at the file name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pipeline.errors import InputError
from pipeline.reading.parsers import (
    bullet,
    comprules,
    gatherer,
    mtgjson,
    plain,
    rules_excerpt,
    scryfall,
)
from pipeline.reading.parsers._json import first_record
from pipeline.reading.parsers._text import MAX_LINE

if TYPE_CHECKING:
    from pipeline.models import Layout, ParsedDocument, RawDocument


class Parser(Protocol):
    """What every parser module provides."""

    LAYOUT: Layout

    def detect(self, doc: RawDocument) -> bool:
        """Tell whether DOC is in this parser's layout."""

    def parse(self, doc: RawDocument) -> ParsedDocument:
        """Turn a document in this layout into rulings."""


# Most specific first: structured formats, then the Comprehensive Rules (numbered, dated
# once), then text dumps: a bullet dump also has date lines, and any prose is an excerpt.
PARSERS: tuple[Parser, ...] = (
    scryfall,
    mtgjson,
    gatherer,
    comprules,
    bullet,
    plain,
    rules_excerpt,
)


def detect(doc: RawDocument) -> Parser:
    """Return the parser for DOC's layout, or raise InputError naming why none fits."""
    for parser in PARSERS:
        if parser.detect(doc):
            return parser
    if doc.lines:
        if first_record(doc).get("object") == "card":
            reason = "JSON Lines of Scryfall cards: a card catalog (pass it with --catalog)"
            raise InputError(doc.path, reason)
        raise InputError(doc.path, "JSON Lines of an unknown shape: not Scryfall rulings")
    if doc.streamed:
        raise InputError(doc.path, "JSON of an unknown shape: not MTGJSON nor Scryfall rulings")
    if "<html" in doc.text[:2048].lower():
        raise InputError(doc.path, "HTML that is not a Gatherer card page")
    raise InputError(doc.path, "no known layout: no dated rulings and no prose paragraphs")


def parse(doc: RawDocument) -> ParsedDocument:
    """Detect DOC's layout and parse it (lazily, for streamed layouts)."""
    if len(doc.text) > MAX_LINE:  # only then can one line be too long
        longest = max(len(line) for line in doc.text.split("\n"))
        if longest > MAX_LINE:
            reason = f"a line of {longest:,} characters: not a ruling dump (at most {MAX_LINE:,})"
            raise InputError(doc.path, reason)
    return detect(doc).parse(doc)
