"""Scryfall rulings: a `/rulings` list object, the bulk rulings array, or JSON Lines of rulings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipeline.models import Kind, Layout, ParsedDocument, ParsedRuling, RawDocument
from pipeline.reading.parsers._json import first_record, items, records, top_level

if TYPE_CHECKING:
    from collections.abc import Iterator

LAYOUT = Layout.SCRYFALL
SOURCE = "scryfall"


def detect(doc: RawDocument) -> bool:
    """A list object, an array whose first item is a ruling object, or lines of them."""
    if not doc.streamed:
        return False
    if doc.lines:
        return first_record(doc).get("object") == "ruling"
    kind, keys = top_level(doc)
    return (kind == "map" and keys.get("object") == "list") or (
        kind == "array" and keys.get("object") == "ruling"
    )


def parse(doc: RawDocument) -> ParsedDocument:
    """Each ruling object; the card is named by its oracle id until a catalog maps it."""
    warnings: list[str] = []

    def rulings() -> Iterator[ParsedRuling]:
        position = 0
        for where, item in _objects(doc, warnings):
            if not isinstance(item, dict) or item.get("object", "ruling") != "ruling":
                warnings.append(f"{where} is not a ruling object; skipped")
                continue
            text, date = item.get("comment"), item.get("published_at")
            oracle, source = item.get("oracle_id"), item.get("source")
            if not isinstance(text, str) or not text.strip():
                warnings.append(f"{where} has no comment; skipped")
                continue
            yield ParsedRuling(
                position,
                text,
                date if isinstance(date, str) else None,
                Kind.RULING,
                oracle_id=oracle if isinstance(oracle, str) else None,
                lang="en",
                source=f"{SOURCE}/{source}" if isinstance(source, str) else SOURCE,
            )
            position += 1

    return ParsedDocument(LAYOUT, None, rulings(), warnings, source=SOURCE)


def _objects(doc: RawDocument, warnings: list[str]) -> Iterator[tuple[str, Any]]:
    """Each object with where it is: `line 3` of JSON Lines, `item 2` of an array."""
    if doc.lines:
        for number, value in records(doc, warnings):
            yield f"line {number}", value
        return
    kind, _ = top_level(doc)
    for index, value in enumerate(items(doc, "data.item" if kind == "map" else "item", warnings)):
        yield f"item {index}", value
