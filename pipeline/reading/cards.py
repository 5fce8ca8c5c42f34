"""Card objects as CardFacts: what MTGJSON and Scryfall say of a card, one record per card.

Pure functions on parsed JSON objects; the parsers and the catalog reader hand them cards.
MTGJSON gives one object per face and printing (v5 set files, AllPrintings, AtomicCards;
v4 set objects with the oracle id on the card; v3 AllSets, where fields may be missing):
from_mtgjson() makes a one-face record of each, and fold() joins a card's faces (in the
order its name lists them, which is MTGJSON's side order) and its printings. A Scryfall
card object (oracle_cards, default_cards) holds every face at once. Oracle text is MTGJSON's
`text` and Scryfall's `oracle_text`; MTGJSON's `originalText` is printed text, never read.
Names are spelt as the rulings' `card` column spells them (text.normalize.card_name).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from pipeline.models import CardFace, CardFacts
from pipeline.text.normalize import card_name

if TYPE_CHECKING:
    from collections.abc import Iterable

# Comprehensive Rules 205.4a: basic, legendary, ongoing, snow, world; Elite and Host are
# the supertypes of un-cards, printed before the card types as the others are.
SUPERTYPES = frozenset({"Basic", "Elite", "Host", "Legendary", "Ongoing", "Snow", "World"})
# Subtypes of more than one word, which a type line's spaces would split.
_LONG_SUBTYPES = ("Time Lord", "Bolas's Meditation Realm", "Serra's Realm", "New Phyrexia")
_SEPARATOR = " // "
_DASH = " \u2014 "
# v3's colour names; later versions (and Scryfall) give the letters.
_COLORS = {"White": "W", "Blue": "U", "Black": "B", "Red": "R", "Green": "G"}
_LAYOUTS = {"double-faced": "transform"}  # v3's name for a transforming card
# Objects a source lists beside cards that are no card a player puts in a deck: art cards
# (MTGJSON's art series sets), and Scryfall's tokens and emblems (MTGJSON keeps those apart).
NOT_CARDS = frozenset({"art_series", "token", "double_faced_token", "emblem"})
# A legality a source states for formats the card is not in: Scryfall lists every format,
# MTGJSON only those the card is legal, banned or restricted in; both are kept as MTGJSON's.
_NOT_LEGAL = "not_legal"
_Printing = tuple[str, "dt.date | None"]  # a set code and its release date, if known


def from_mtgjson(
    card: dict[str, Any], set_code: str | None = None, released: dt.date | None = None
) -> CardFacts | None:
    """The facts of one MTGJSON card object (one face of one printing).

    None for an object of no name, or no card (a layout of NOT_CARDS).

    SET_CODE and RELEASED are the printing's set and its release date, as the set object
    gives them (None for AtomicCards, of no one printing); the card's `printings` adds its
    other sets, with no date.
    """
    name, face_name = card.get("name"), card.get("faceName")
    if not isinstance(name, str) or not name or card.get("layout") in NOT_CARDS:
        return None
    names = _strings(card.get("names"))  # v3 and v4: every face's name
    if not isinstance(face_name, str):
        face_name = _face_name(name, names, card.get("side"))
        if len(names) > 1 and name in names:  # v3: NAME is a face's, NAMES the card's
            name = _SEPARATOR.join(names)
    face = CardFace(
        card_name(face_name),
        _text(card, "manaCost"),
        _text(card, "type"),
        _text(card, "text"),
        _text(card, "power"),
        _text(card, "toughness"),
        _text(card, "loyalty"),
        _text(card, "defense"),
    )
    code = set_code or _text(card, "setCode")
    printings: list[_Printing] = [(c.upper(), None) for c in _strings(card.get("printings"))]
    if code:
        printings.append((code.upper(), released))
    layout = _text(card, "layout")
    return CardFacts(
        card_name(name),
        _oracle_id(card),
        _LAYOUTS.get(layout, layout) if layout else None,
        (face,),
        supertypes=_sorted(card.get("supertypes")),
        types=_sorted(card.get("types")),
        subtypes=_sorted(card.get("subtypes")),
        mana_value=_number(card, "manaValue", "convertedManaCost", "cmc"),
        colors=_colors(card.get("colors")),
        color_identity=_colors(card.get("colorIdentity")),
        keywords=_sorted(card.get("keywords")),
        legalities=_legalities(card.get("legalities")),
        printings=_printings(printings),
    )


def from_scryfall(card: dict[str, Any]) -> CardFacts | None:
    """The facts of one Scryfall card object, every face at once; None as for from_mtgjson()."""
    name = card.get("name")
    if not isinstance(name, str) or not name or card.get("layout") in NOT_CARDS:
        return None
    sides = card.get("card_faces")
    objects = [f for f in sides if isinstance(f, dict)] if isinstance(sides, list) else []
    faces = tuple(_scryfall_face(f) for f in objects) or (_scryfall_face(card),)
    lines = [part for f in faces if f.type_line for part in f.type_line.split(_SEPARATOR)]
    supertypes, types, subtypes = _split_type_lines(lines)
    colors = card.get("colors")
    if not isinstance(colors, list):  # a transforming card's colours are its faces'
        colors = [c for f in objects for c in _strings(f.get("colors"))]
    code, day = _text(card, "set"), _date(card.get("released_at"))
    return CardFacts(
        card_name(name),
        _text(card, "oracle_id"),
        _text(card, "layout"),
        faces,
        supertypes=supertypes,
        types=types,
        subtypes=subtypes,
        mana_value=_number(card, "cmc"),
        colors=_colors(colors),
        color_identity=_colors(card.get("color_identity")),
        keywords=_sorted(card.get("keywords")),
        legalities=_legalities(card.get("legalities")),
        printings=((code.upper(), day),) if code else (),
    )


def fold(facts: Iterable[CardFacts]) -> list[CardFacts]:
    """One record per card (by oracle id, else by name), sorted by name then oracle id.

    A card's faces and printings are united (a printing's date kept if any record knows
    it); its other fields are the first record's, a field it lacks filled from a later one.
    A record without an oracle id joins the one card of its name that has one, if any.
    """
    folder = Folder()
    for one in facts:
        folder.add(one)
    return folder.result()


class Folder:
    """fold() a record at a time, holding one record per card seen so far."""

    def __init__(self) -> None:
        self._cards: dict[str, CardFacts] = {}  # by oracle id, or by "\0" + name
        self._dates: dict[str, dict[str, dt.date | None]] = {}  # set code -> date, per card

    def add(self, facts: CardFacts) -> None:
        """Fold FACTS into the card they describe."""
        key = facts.oracle_id or "\0" + facts.name
        held = self._cards.get(key)
        self._cards[key] = facts if held is None else _merge(held, facts)
        dates = self._dates.setdefault(key, {})
        for code, day in facts.printings:
            if dates.get(code) is None:
                dates[code] = day

    def result(self) -> list[CardFacts]:
        """The cards folded so far, sorted by name then oracle id."""
        cards = dict(self._cards)
        dates = {key: dict(found) for key, found in self._dates.items()}
        by_name: dict[str, list[str]] = {}
        for key, card in cards.items():
            if card.oracle_id:
                by_name.setdefault(card.name, []).append(key)
        for key in [k for k in cards if k.startswith("\0")]:
            owners = by_name.get(cards[key].name, [])
            if len(owners) == 1:  # a name two oracle ids share stays apart
                owner = owners[0]
                cards[owner] = _merge(cards[owner], cards.pop(key))
                for code, day in dates.pop(key).items():
                    if dates[owner].get(code) is None:
                        dates[owner][code] = day
        folded = [
            card._replace(printings=_printings(dates[key].items())) for key, card in cards.items()
        ]
        return sorted(folded, key=lambda c: (c.name, c.oracle_id or ""))


def _merge(held: CardFacts, other: CardFacts) -> CardFacts:
    """HELD with OTHER's new faces (and their types, colours, keywords) and missing fields.

    Printings are left to the Folder, which unites them once per card, not once per record.
    """
    known = {face.name for face in held.faces}
    new = [face for face in other.faces if face.name not in known]
    if new:
        order = {part: n for n, part in enumerate(held.name.split(_SEPARATOR))}
        faces = sorted((*held.faces, *new), key=lambda f: order.get(f.name, len(order)))
        held = held._replace(
            faces=tuple(faces),
            supertypes=_union(held.supertypes, other.supertypes),
            types=_union(held.types, other.types),
            subtypes=_union(held.subtypes, other.subtypes),
            colors=_union(held.colors, other.colors),
            keywords=_union(held.keywords, other.keywords),
        )
    filled = {
        field: getattr(other, field)
        for field in ("oracle_id", "layout", "mana_value", "color_identity", "legalities")
        if getattr(held, field) in {None, ()} and getattr(other, field) not in {None, ()}
    }
    return held._replace(**filled) if filled else held


def _face_name(name: str, names: list[str], side: object) -> str:
    """The face a card object without `faceName` is: its side's among NAMES, or NAME."""
    if name != _SEPARATOR.join(names) or not isinstance(side, str) or len(side) != 1:
        return name
    index = ord(side) - ord("a")
    return names[index] if 0 <= index < len(names) else name


def _scryfall_face(face: dict[str, Any]) -> CardFace:
    """A Scryfall card face (or a one-faced card); empty strings are no value."""
    return CardFace(
        card_name(_text(face, "name") or ""),
        _text(face, "mana_cost"),
        _text(face, "type_line"),
        _text(face, "oracle_text"),
        _text(face, "power"),
        _text(face, "toughness"),
        _text(face, "loyalty"),
        _text(face, "defense"),
    )


def _split_type_lines(
    lines: Iterable[str],
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The supertypes, types and subtypes of type lines ("Legendary Creature — Elf")."""
    supertypes: set[str] = set()
    types: set[str] = set()
    subtypes: set[str] = set()
    for line in lines:
        left, _, right = line.replace("\u2014", _DASH).partition(_DASH)
        for word in left.split():
            (supertypes if word in SUPERTYPES else types).add(word)
        right = right.replace("\u2019", "'")
        for long in _LONG_SUBTYPES:
            if long in right:
                subtypes.add(long)
                right = right.replace(long, " ")
        subtypes.update(right.split())
    return tuple(sorted(supertypes)), tuple(sorted(types)), tuple(sorted(subtypes))


def _oracle_id(card: dict[str, Any]) -> str | None:
    """The Scryfall oracle id: v5 under `identifiers`, v4 on the card; v3 has none."""
    identifiers = card.get("identifiers")
    found = identifiers.get("scryfallOracleId") if isinstance(identifiers, dict) else None
    found = found if isinstance(found, str) and found else card.get("scryfallOracleId")
    return found if isinstance(found, str) and found else None


def _legalities(value: object) -> tuple[tuple[str, str], ...]:
    """(format, status) pairs, lower-cased: a dict (v4, v5, Scryfall) or v3's list."""
    if isinstance(value, list):  # v3: [{"format": "Commander", "legality": "Legal"}]
        pairs = [(v.get("format"), v.get("legality")) for v in value if isinstance(v, dict)]
    elif isinstance(value, dict):
        pairs = list(value.items())
    else:
        return ()
    found = {
        (fmt.lower(), status.lower().replace(" ", "_"))
        for fmt, status in pairs
        if isinstance(fmt, str) and isinstance(status, str) and fmt and status
    }
    return tuple(sorted(pair for pair in found if pair[1] != _NOT_LEGAL))


def _printings(pairs: Iterable[_Printing]) -> tuple[_Printing, ...]:
    """(set code, date) once per set, its date kept where any pair gives one; sorted."""
    dates: dict[str, dt.date | None] = {}
    for code, day in pairs:
        if dates.get(code) is None:
            dates[code] = day
    return tuple(sorted(dates.items(), key=lambda pair: pair[0]))


def _colors(value: object) -> tuple[str, ...]:
    return tuple(sorted({_COLORS.get(c, c) for c in _strings(value)}))


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a if set(b) <= set(a) else tuple(sorted({*a, *b}))


def _sorted(value: object) -> tuple[str, ...]:
    return tuple(sorted(set(_strings(value))))


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str) and v] if isinstance(value, list) else []


def _text(card: dict[str, Any], key: str) -> str | None:
    """A string field, or an integer one (v3's loyalty) as printed; empty is no value."""
    value = card.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) and value else None


def _number(card: dict[str, Any], *keys: str) -> float | None:
    """The first of KEYS that holds a number."""
    for key in keys:
        value = card.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def _date(value: object) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
