"""Card catalog files: the cards of MTGJSON and Scryfall files, whatever their shape.

A catalog is read as any raw file is (pipeline/reading/documents.py): by its content,
plain or compressed, streamed a set or a line at a time. A file of no known shape is an
error naming the shapes accepted, never a catalog of no cards.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pipeline.errors import InputError, UsageError
from pipeline.models import Layout, SourceHints
from pipeline.reading import documents, read
from pipeline.reading.cards import fold, from_mtgjson, from_scryfall
from pipeline.reading.parsers import mtgjson
from pipeline.reading.parsers._json import first_record, items, records, top_level

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable, Generator, Iterable, Iterator
    from pathlib import Path

    from pipeline.limits import Limits
    from pipeline.models import CardFacts, RawDocument

_T = TypeVar("_T")

ACCEPTED = (
    "MTGJSON (a set file, AllPrintings or AtomicCards; a v4 set object, v3/v4 AllSets) or "
    "Scryfall cards (an array, a list object or JSON Lines of card objects), plain or "
    "compressed (gzip, xz, bzip2, zstd, zip)"
)
_TYPE_WORD = re.compile(r"[^\W\d_][\w'\-]*")


class Entry(NamedTuple):
    """One card of a catalog file."""

    name: str
    oracle: str | None
    localized: list[str]
    faces: list[str]
    terms: list[str]  # keywords, ability words, types, subtypes, supertypes
    text: str | None  # the rules text


def entries(path: Path, limits: Limits) -> Generator[Entry]:
    """The cards of the catalog file PATH; UsageError if it is none or cannot be read."""
    return _read(path, limits, _cards)


def facts(path: Path, limits: Limits) -> list[CardFacts]:
    """The cards of the catalog file PATH as CardFacts, one per card (reading.cards.fold).

    UsageError if it is no catalog or cannot be read, as for entries().
    """
    return fold(_read(path, limits, _facts))


class Described(NamedTuple):
    """What a catalog file says of its cards: its layout, its own date, the cards."""

    layout: Layout
    as_of: dt.date | None  # MTGJSON's meta.date; Scryfall's bulk files state none
    cards: list[CardFacts]


def described(path: Path, limits: Limits) -> Described:
    """The cards of the catalog file PATH with its layout and date; UsageError as facts()."""
    found: list[tuple[Layout, dt.date | None]] = []

    def convert(doc: RawDocument) -> Iterator[CardFacts] | None:
        if not found:
            is_mtgjson = mtgjson.detect(doc)
            day = mtgjson.build_date(doc, []) if is_mtgjson else None
            found.append((Layout.MTGJSON if is_mtgjson else Layout.SCRYFALL, day))
        return _facts(doc)

    cards = fold(_read(path, limits, convert))
    layout, day = found[0] if found else (Layout.SCRYFALL, None)
    return Described(layout, day, cards)


def _read(
    path: Path, limits: Limits, convert: Callable[[RawDocument], Iterator[_T] | None]
) -> Generator[_T]:
    """What CONVERT makes of each document of PATH; UsageError if one is of no known shape."""
    file = read.InputFile(str(path), path.name)
    try:
        with documents.opened(file, path.parent) as source:
            for doc in documents.documents(source, SourceHints(), limits):
                if isinstance(doc, InputError):
                    raise doc
                found = convert(doc)
                if found is None:
                    shown = path if doc.path == path.name else path.parent / doc.path
                    msg = f"{shown}: not a card catalog of a known shape; accepted: {ACCEPTED}"
                    raise UsageError(msg)
                yield from found
    except (OSError, InputError) as exc:
        msg = f"{path}: cannot read the catalog ({exc})"
        raise UsageError(msg) from exc


def check(path: Path, limits: Limits) -> None:
    """Refuse (UsageError) a catalog file that cannot be read or is of no known shape.

    Only its first card is read, so that a run can refuse a bad --catalog before it
    writes anything, and load the whole catalog later, only if it has something to read.
    """
    with contextlib.closing(entries(path, limits)) as cards:
        next(cards, None)


def _cards(doc: RawDocument) -> Iterator[Entry] | None:
    """The cards of one document, or None if it is no catalog of a known shape."""
    if mtgjson.detect(doc):
        return (_mtgjson(card) for card in mtgjson.cards(doc) if isinstance(card.get("name"), str))
    found = _scryfall_cards(doc)
    if found is None:
        return None
    return (_scryfall(c) for c in found if isinstance(c.get("name"), str))


def _facts(doc: RawDocument) -> Iterator[CardFacts] | None:
    """The CardFacts of one document's card objects (a face and printing each), or None."""
    if mtgjson.detect(doc):
        return (
            one
            for info, group in mtgjson.groups(doc)
            for one in _set_facts(info, group)
            if one is not None
        )
    found = _scryfall_cards(doc)
    return None if found is None else (f for f in map(from_scryfall, found) if f is not None)


def _set_facts(
    info: Callable[[], mtgjson.SetInfo], group: Iterable[dict[str, Any]]
) -> Iterator[CardFacts | None]:
    """The facts of a set's cards, its code and date looked up once, at its first card."""
    known: mtgjson.SetInfo | None = None
    for card in group:
        known = known or info()
        yield from_mtgjson(card, *known)


def _scryfall_cards(doc: RawDocument) -> Iterator[dict[str, Any]] | None:
    """The Scryfall card objects of a document, or None if it holds none."""
    if not doc.streamed:
        return None
    found: Iterable[Any]
    if doc.lines:
        if not _is_card(first_record(doc)):
            return None
        found = (value for _, value in records(doc, []))
    else:
        kind, keys = top_level(doc)
        if kind == "map" and keys.get("object") == "list":
            found = items(doc, "data.item")
            first = next(iter(items(doc, "data.item")), None)
            if not _is_card(first):
                return None
        elif kind == "array" and _is_card(keys):
            found = items(doc, "item")
        else:
            return None
    return (c for c in found if isinstance(c, dict))


def _is_card(value: object) -> bool:
    """A Scryfall card object (or the first keys of one, as top_level() gives them)."""
    return isinstance(value, dict) and value.get("object") == "card"


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _text(card: dict[str, Any], key: str) -> str | None:
    value = card.get(key)
    return value if isinstance(value, str) else None


def _mtgjson(card: dict[str, Any]) -> Entry:
    """An MTGJSON card: localized names from `foreignData` (v4, v5) or `foreignNames` (v3)."""
    foreign = [*(card.get("foreignData") or []), *(card.get("foreignNames") or [])]
    local = [f["name"] for f in foreign if isinstance(f, dict) and isinstance(f.get("name"), str)]
    terms = [
        *_strings(card.get("keywords")),
        *_strings(card.get("types")),
        *_strings(card.get("subtypes")),
        *_strings(card.get("supertypes")),
    ]
    faces = _strings([card.get("faceName")])
    return Entry(card["name"], mtgjson.oracle_id(card), local, faces, terms, _text(card, "text"))


def _scryfall(card: dict[str, Any]) -> Entry:
    """A Scryfall card object: its printed name, faces, keywords and type line."""
    local = _strings([card.get("printed_name")])
    sides = card.get("card_faces")
    names = [f.get("name") for f in sides if isinstance(f, dict)] if isinstance(sides, list) else []
    terms = _strings(card.get("keywords")) + _TYPE_WORD.findall(_text(card, "type_line") or "")
    return Entry(
        card["name"],
        _text(card, "oracle_id"),
        local,
        _strings(names),
        terms,
        _text(card, "oracle_text"),
    )
