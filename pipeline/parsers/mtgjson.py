"""MTGJSON files: a set file, AllPrintings or AtomicCards; rulings are per card name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipeline.models import Kind, Layout, ParsedDocument, ParsedRuling, RawDocument
from pipeline.parsers._json import kvitems, top_level

if TYPE_CHECKING:
    from collections.abc import Iterator

LAYOUT = Layout.MTGJSON
# A set file's other lists of objects: not AtomicCards entries named "tokens".
_SET_LISTS = frozenset({"tokens", "sealedProduct", "decks"})
SOURCE = "mtgjson"


def detect(doc: RawDocument) -> bool:
    """An MTGJSON file is an object whose top level holds `meta` or `data`."""
    if not doc.data or doc.text:
        return False
    kind, keys = top_level(doc.data)
    return kind == "map" and bool({"meta", "data"} & keys.keys()) and "object" not in keys


def cards(doc: RawDocument) -> Iterator[dict[str, Any]]:
    """Every card object of the file, whatever the file's shape, first printing first."""
    for key, value in kvitems(doc.data, "data", doc.path):
        if key == "cards" and isinstance(value, list):  # a set file
            yield from (c for c in value if isinstance(c, dict))
        elif isinstance(value, dict) and isinstance(value.get("cards"), list):  # AllPrintings
            yield from (c for c in value["cards"] if isinstance(c, dict))
        elif key in _SET_LISTS:
            continue
        elif isinstance(value, list) and value and isinstance(value[0], dict):  # AtomicCards
            yield {**value[0], "name": key}


def oracle_id(card: dict[str, Any]) -> str | None:
    """The card's Scryfall oracle id, where MTGJSON gives it."""
    identifiers = card.get("identifiers")
    found = identifiers.get("scryfallOracleId") if isinstance(identifiers, dict) else None
    return found if isinstance(found, str) else None


def parse(doc: RawDocument) -> ParsedDocument:
    """Each card's rulings, once per card name (reprints repeat them)."""
    warnings: list[str] = []

    def rulings() -> Iterator[ParsedRuling]:
        seen: set[str] = set()
        position = 0
        for card in cards(doc):
            name = card.get("name")
            if not isinstance(name, str) or name in seen:
                continue
            seen.add(name)
            for ruling in card.get("rulings") or ():
                text, date = ruling.get("text"), ruling.get("date")
                if not isinstance(text, str) or not text.strip():
                    warnings.append(f"{name}: a ruling without text is skipped")
                    continue
                when = date if isinstance(date, str) else None
                oracle = oracle_id(card)
                yield ParsedRuling(position, text, when, Kind.RULING, name, oracle, lang="en")
                position += 1

    return ParsedDocument(LAYOUT, None, rulings(), warnings, source=SOURCE)
