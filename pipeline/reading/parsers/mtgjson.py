"""MTGJSON files; rulings are per card name, and per set as the set files give them.

Shapes read, all streamed a set at a time: v5 files wrapped as `{"meta", "data"}` (a set
file, AllPrintings `{SETCODE: set}`, AtomicCards `{name: [card]}`), a bare v4 (or v3) set
object, and v3/v4 AllSets (`{SETCODE: set}` at the top level). v4 cards give their
Scryfall oracle id beside their name, v5 cards under `identifiers`.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
from enum import StrEnum
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any, NamedTuple

from pipeline.models import (
    CardFacts,
    Kind,
    Layout,
    LocalName,
    ParsedDocument,
    ParsedRuling,
    RawDocument,
)
from pipeline.reading.cards import Folder, from_mtgjson
from pipeline.reading.parsers._json import events, items, kvitems, scalar_before, top_level

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

LAYOUT = Layout.MTGJSON
# A set file's other lists of objects: not AtomicCards entries named "tokens".
_SET_LISTS = frozenset({"tokens", "sealedProduct", "decks"})
SOURCE = "mtgjson"
# Keys only a set object has before its `cards` (v4 sorts its keys; v3 puts code and date
# first): a `cards` list under one of them is a set's.
_SET_KEYS = frozenset({"baseSetSize", "code", "releaseDate"})
# Events looked at to find a v3/v4 set's `cards`: past a few small keys (v4's boosterV3,
# v3's booster), well before the end of its first set.
_SNIFF_EVENTS = 50_000


class Shape(StrEnum):
    """How an MTGJSON file holds its sets."""

    WRAPPED = "wrapped"  # v5: {"meta": …, "data": a set, AllPrintings or AtomicCards}
    SET = "set"  # a v3/v4 set file: the set object itself
    ALL_SETS = "all_sets"  # v3/v4 AllSets (and v4 AllPrintings): {SETCODE: set object}


# MTGJSON's foreignData language names, as the `lang` codes the rulings table uses.
LANGUAGES = {
    "German": "de",
    "Spanish": "es",
    "French": "fr",
    "Italian": "it",
    "Japanese": "ja",
    "Korean": "ko",
    "Portuguese (Brazil)": "pt",
    "Russian": "ru",
    "Chinese Simplified": "zh",
    "Chinese Traditional": "zh",
}


def detect(doc: RawDocument) -> bool:
    """An MTGJSON file: v5's `meta`/`data`, or a v3/v4 set object or AllSets."""
    return shape(doc) is not None


@lru_cache(maxsize=4)
def shape(doc: RawDocument) -> Shape | None:
    """The MTGJSON shape of DOC, from the head of its events; None if it is none."""
    if not doc.streamed or doc.lines:
        return None
    kind, keys = top_level(doc)
    if kind != "map" or "object" in keys:
        return None
    if {"meta", "data"} & keys.keys():
        return Shape.WRAPPED
    first: str | None = None  # the first top-level key: a set code if the file is AllSets
    set_keys = {"": False}  # where a key only a set has was met: the top level, the first set
    cards: str | None = None  # where a `cards` key was just met after such a key
    for prefix, event, value in itertools.islice(events(doc), _SNIFF_EVENTS):
        if cards is not None and event == "start_array":
            return Shape.SET if cards == "" else Shape.ALL_SETS
        cards = None
        if event != "map_key" or prefix not in {"", first}:
            continue
        if first is None:
            first = value
            set_keys[value] = False
        if value == "cards" and set_keys[prefix]:
            cards = prefix
        elif value in _SET_KEYS:
            set_keys[prefix] = True
    return None


class SetInfo(NamedTuple):
    """A set's code and release date, as its set object gives them (None: not given)."""

    code: str | None = None
    released: dt.date | None = None


_NO_SET = SetInfo()
# A group of cards and how to learn their set: called only by those who want it, since a
# set file names its code and date after its cards (a second pass over the file).
Group = tuple["Callable[[], SetInfo]", "Iterable[dict[str, Any]]"]


def sets(doc: RawDocument) -> Iterator[Iterable[dict[str, Any]]]:
    """The card objects of the file, a set at a time (one group for a set or AtomicCards)."""
    for _, group in groups(doc):
        yield group


def groups(doc: RawDocument, warnings: list[str] | None = None) -> Iterator[Group]:
    """The file's groups of cards (sets(), in order), each with its set's code and date.

    What was repaired on the way (a lone surrogate escape) is told in WARNINGS.
    """
    found = shape(doc)
    if found is Shape.SET:
        cards = (c for c in items(doc, "cards.item", warnings) if isinstance(c, dict))
        yield partial(_set_info, doc, ""), cards
    elif found is Shape.ALL_SETS:
        for _, value in kvitems(doc, "", warnings):
            yield partial(_info_of, value), _set_cards(value)
    elif found is Shape.WRAPPED:
        yield from _wrapped(doc, warnings)


def _wrapped(doc: RawDocument, warnings: list[str] | None) -> Iterator[Group]:
    """The groups of a v5 file: its set's cards, each AllPrintings set's, AtomicCards'."""
    atomic: list[dict[str, Any]] = []  # AtomicCards' entries, one per name
    for key, value in kvitems(doc, "data", warnings):
        if key == "cards" and isinstance(value, list):  # a set file
            yield partial(_set_info, doc, "data."), (c for c in value if isinstance(c, dict))
        elif isinstance(value, dict) and isinstance(value.get("cards"), list):  # AllPrintings
            yield partial(_info_of, value), _set_cards(value)
        elif key in _SET_LISTS:
            continue
        elif isinstance(value, list) and value and isinstance(value[0], dict):  # AtomicCards
            # Every face of the card (a split card's halves), in one group: its rulings,
            # which each face repeats, are given once per group.
            atomic.extend({**face, "name": key} for face in value if isinstance(face, dict))
            if len(atomic) >= _ATOMIC_GROUP:
                yield _no_set, atomic
                atomic = []
    if atomic:
        yield _no_set, atomic


def _no_set() -> SetInfo:
    return _NO_SET  # AtomicCards: a card of every printing, of no one set


def _info_of(value: dict[str, Any]) -> SetInfo:
    """The code and release date of a set object held whole."""
    return _set(value.get("code"), value.get("releaseDate"))


def _set_info(doc: RawDocument, prefix: str) -> SetInfo:
    """The code and release date of the set object at PREFIX, from one pass over DOC."""
    wanted = {f"{prefix}code": "code", f"{prefix}releaseDate": "released"}
    found: dict[str, Any] = {}
    for where, event, value in events(doc):
        if where in wanted and event == "string":
            found[wanted[where]] = value
            if len(found) == len(wanted):
                break
    return _set(found.get("code"), found.get("released"))


def _set(code: object, released: object) -> SetInfo:
    try:
        day = dt.date.fromisoformat(released) if isinstance(released, str) else None
    except ValueError:
        day = None  # a date MTGJSON never prints: the set is still named
    return SetInfo(code if isinstance(code, str) and code else None, day)


_ATOMIC_GROUP = 1024  # AtomicCards entries handed on at once: names are unique there


def _set_cards(value: object) -> list[dict[str, Any]]:
    cards = value.get("cards") if isinstance(value, dict) else None
    return [c for c in cards if isinstance(c, dict)] if isinstance(cards, list) else []


def cards(doc: RawDocument) -> Iterator[dict[str, Any]]:
    """Every card object of the file, whatever the file's shape, first printing first."""
    for group in sets(doc):
        yield from group


def oracle_id(card: dict[str, Any]) -> str | None:
    """The card's Scryfall oracle id, where MTGJSON gives it (v5 `identifiers`, v4 the card)."""
    identifiers = card.get("identifiers")
    found = identifiers.get("scryfallOracleId") if isinstance(identifiers, dict) else None
    found = found if found is not None else card.get("scryfallOracleId")
    return found if isinstance(found, str) else None


def build_date(doc: RawDocument, warnings: list[str]) -> dt.date | None:
    """The day the file was built (`meta.date`), the version of the rulings it holds.

    v5 puts `meta` before `data`; a v4 set object holds its own `meta` (after its cards, as
    v4 sorts its keys), and an AllSets one per set: the first set's is the file's.
    """
    found = shape(doc)
    if found is Shape.WRAPPED:
        printed = scalar_before(doc, "meta.date", "data")
    elif found is Shape.SET:
        printed = _scalar(doc, "meta.date")
    else:
        printed = _first_set_date(doc)
    if printed is None:
        return None
    try:
        return dt.date.fromisoformat(str(printed))
    except ValueError:
        warnings.append(f"meta.date {printed!r} is not a date: the file's date is not used")
        return None


def _scalar(doc: RawDocument, prefix: str) -> Any:  # noqa: ANN401 - JSON
    """The scalar at PREFIX, wherever it comes in the document."""
    for where, event, value in events(doc):
        if where == prefix and event in {"string", "number", "boolean"}:
            return value
    return None


def _first_set_date(doc: RawDocument) -> Any:  # noqa: ANN401 - JSON
    """The `meta.date` of an AllSets file's first set, read no further than that set."""
    first = None
    for where, event, value in events(doc):
        if where == "" and event == "map_key":
            if first is not None:
                return None
            first = value
        elif first is not None and where == f"{first}.meta.date" and event == "string":
            return value
    return None


def parse(doc: RawDocument) -> ParsedDocument:
    """Each card's rulings, each once per card name and set: reprints in a set repeat them.

    Cards that share a name may not share their rulings (Unstable's "Sly Spy" variants), so
    a printing's rulings are skipped only when that name already gave the same text and date
    in its set. A file of many sets (AllPrintings) gives the rows its set files give, one
    set at a time. A file whose cards carry no rulings (art series, tokens) is a file, not
    an error. The cards' translated names (foreignData) and their facts (one CardFacts per
    card, its printings folded) are noted as the cards are read.
    """
    warnings: list[str] = []
    names: list[LocalName] = []
    cards: list[CardFacts] = []

    def rulings() -> Iterator[ParsedRuling]:
        position, named = 0, False
        local: dict[tuple[str, str, str], LocalName] = {}
        folder = Folder()
        for given, group in groups(doc, warnings):
            info = functools.cache(given)  # the set is looked up once, for cards and rulings
            seen: dict[str, set[tuple[str, str | None]]] = {}
            known: SetInfo | None = None
            for ruling in _rulings(_noting(_naming(group, local), info, folder), seen, warnings):
                known = known or info()  # once a set has a ruling
                code = known.code or ruling.set_code  # a v5 card's setCode
                yield ruling._replace(position=position, set_code=code, set_released=known.released)
                position += 1
            named = named or bool(seen)
        if not named:
            warnings.append("no cards found: stored with 0 rulings")
        names.extend(local[key] for key in sorted(local))
        cards.extend(folder.result())

    return ParsedDocument(
        LAYOUT,
        None,
        rulings(),
        warnings,
        source=SOURCE,
        may_be_empty=True,
        as_of=build_date(doc, warnings),
        names=names,
        cards=cards,
    )


def _naming(
    group: Iterable[dict[str, Any]], local: dict[tuple[str, str, str], LocalName]
) -> Iterator[dict[str, Any]]:
    """GROUP's cards, each passed on once its translated names are noted in LOCAL.

    A name is noted once per (name, language, card), from the card's first printing: a name
    two cards share ("Eliminare", Italian for Cancel and for Wipe Away) is noted for both. A
    card's English name printed as its own translation (a basic land in some languages) is
    no translation.
    """
    for card in group:
        english = card.get("name")
        for foreign in card.get("foreignData") or ():
            name = foreign.get("name") if isinstance(foreign, dict) else None
            lang = LANGUAGES.get(foreign.get("language", "")) if isinstance(foreign, dict) else None
            if isinstance(english, str) and isinstance(name, str) and lang and name != english:
                local.setdefault(
                    (name, lang, english), LocalName(name, lang, english, oracle_id(card))
                )
        yield card


def _noting(
    group: Iterable[dict[str, Any]], info: Callable[[], SetInfo], folder: Folder
) -> Iterator[dict[str, Any]]:
    """GROUP's cards, each passed on once its facts are folded into FOLDER.

    The set's code and date are asked of INFO at the group's first card, so a set of no
    rulings (tokens, art cards) is looked up too: its cards are cards still.
    """
    for card in group:
        facts = from_mtgjson(card, *info())
        if facts is not None:
            folder.add(facts)
        yield card


def _rulings(
    group: Iterable[dict[str, Any]],
    seen: dict[str, set[tuple[str, str | None]]],
    warnings: list[str],
) -> Iterator[ParsedRuling]:
    """The rulings of one set's cards, each (name, text, date) once; positions left at 0."""
    for card in group:
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
            code = card.get("setCode")
            yield ParsedRuling(
                0,
                text,
                when,
                Kind.RULING,
                name,
                oracle_id(card),
                lang="en",
                set_code=code if isinstance(code, str) else None,
            )
