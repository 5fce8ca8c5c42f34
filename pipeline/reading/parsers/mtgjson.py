"""MTGJSON files: a set file, AllPrintings or AtomicCards; rulings are per card name."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from pipeline.models import Kind, Layout, ParsedDocument, ParsedRuling, RawDocument
from pipeline.reading.parsers._json import kvitems, scalar_before, top_level

if TYPE_CHECKING:
    from collections.abc import Iterator

LAYOUT = Layout.MTGJSON
# A set file's other lists of objects: not AtomicCards entries named "tokens".
_SET_LISTS = frozenset({"tokens", "sealedProduct", "decks"})
SOURCE = "mtgjson"


def detect(doc: RawDocument) -> bool:
    """An MTGJSON file is an object whose top level holds `meta` or `data`."""
    if not doc.streamed or doc.lines:
        return False
    kind, keys = top_level(doc)
    return kind == "map" and bool({"meta", "data"} & keys.keys()) and "object" not in keys


def cards(doc: RawDocument) -> Iterator[dict[str, Any]]:
    """Every card object of the file, whatever the file's shape, first printing first."""
    for key, value in kvitems(doc, "data"):
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


def build_date(doc: RawDocument, warnings: list[str]) -> dt.date | None:
    """The day the file was built (`meta.date`), the version of the rulings it holds."""
    printed = scalar_before(doc, "meta.date", "data")
    if printed is None:
        return None
    try:
        return dt.date.fromisoformat(str(printed))
    except ValueError:
        warnings.append(f"meta.date {printed!r} is not a date: the file's date is not used")
        return None


def parse(doc: RawDocument) -> ParsedDocument:
    """Each card's rulings, each once per card name: reprints repeat them, variants add theirs.

    Cards that share a name may not share their rulings (Unstable's "Sly Spy" variants), so
    a printing's rulings are skipped only when that name already gave the same text and date.
    A file whose cards carry no rulings (art series, tokens) is a file, not an error.
    """
    warnings: list[str] = []

    def rulings() -> Iterator[ParsedRuling]:
        seen: dict[str, set[tuple[str, str | None]]] = {}
        position = 0
        for card in cards(doc):
            name = card.get("name")
            if not isinstance(name, str):
                continue
            given = seen.setdefault(name, set())
            for ruling in card.get("rulings") or ():
                text, date = ruling.get("text"), ruling.get("date")
                text = text if isinstance(text, str) else ""
                when = date if isinstance(date, str) else None
                if (text, when) in given:
                    continue  # a reprint's copy
                given.add((text, when))
                if not text.strip():
                    warnings.append(f"{name}: a ruling without text is skipped")
                    continue
                oracle = oracle_id(card)
                yield ParsedRuling(position, text, when, Kind.RULING, name, oracle, lang="en")
                position += 1
        if not seen:
            warnings.append("no cards found: stored with 0 rulings")

    return ParsedDocument(
        LAYOUT,
        None,
        rulings(),
        warnings,
        source=SOURCE,
        may_be_empty=True,
        as_of=build_date(doc, warnings),
    )
