"""Scryfall rulings: a `/rulings` list object, or the bulk rulings array."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.models import Kind, Layout, ParsedDocument, ParsedRuling, RawDocument
from pipeline.reading.parsers._json import items, top_level

if TYPE_CHECKING:
    from collections.abc import Iterator

LAYOUT = Layout.SCRYFALL
SOURCE = "scryfall"


def detect(doc: RawDocument) -> bool:
    """A list object, or an array whose first item is a ruling object."""
    if not doc.data or doc.text:
        return False
    kind, keys = top_level(doc.data)
    return (kind == "map" and keys.get("object") == "list") or (
        kind == "array" and keys.get("object") == "ruling"
    )


def parse(doc: RawDocument) -> ParsedDocument:
    """Each ruling object; the card is named by its oracle id until a catalog maps it."""
    kind, _ = top_level(doc.data)
    prefix = "data.item" if kind == "map" else "item"
    warnings: list[str] = []

    def rulings() -> Iterator[ParsedRuling]:
        position = 0
        for item in items(doc.data, prefix, doc.path):
            if not isinstance(item, dict) or item.get("object", "ruling") != "ruling":
                warnings.append(f"item {position} is not a ruling object; skipped")
                continue
            text, date = item.get("comment"), item.get("published_at")
            oracle, source = item.get("oracle_id"), item.get("source")
            if not isinstance(text, str) or not text.strip():
                warnings.append(f"item {position} has no comment; skipped")
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
