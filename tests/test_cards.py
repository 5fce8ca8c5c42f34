"""Card objects as CardFacts: the real MTGJSON 2022 set files, a Scryfall-shaped copy, v3/v4.

The expected values were read from the JSON files by hand (../shared/realdata/mtgjson-2022),
not from what the code makes of them.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from functools import cache
from typing import TYPE_CHECKING, Any

import pytest
from conftest import FIXTURES, REALDATA

from pipeline.folding import card_files
from pipeline.limits import Limits
from pipeline.models import CardFace, CardFacts, SourceHints
from pipeline.reading.cards import fold, from_mtgjson, from_scryfall
from pipeline.reading.parsers import parse
from pipeline.reading.read import to_document

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

BUILD = REALDATA / "mtgjson-2022"
SCRYFALL = FIXTURES / "cards" / "scryfall-oracle-cards.json"
needs_build = pytest.mark.skipif(not BUILD.is_dir(), reason="../shared/realdata is absent")

_COMMON = ("commander", "duel", "explorer", "gladiator", "historic", "historicbrawl", "legacy")
_LEGAL = tuple((f, "legal") for f in (*_COMMON, "modern", "pioneer", "vintage"))
_PENNY = tuple(sorted((*_LEGAL, ("penny", "legal"))))
_DOM, _GRN = dt.date(2018, 4, 27), dt.date(2018, 10, 5)
_M19, _M20, _ELD = dt.date(2018, 7, 13), dt.date(2019, 7, 12), dt.date(2019, 10, 4)

_FIRE_ELEMENTAL_SETS = ("2ED", "3ED", "4BB", "4ED", "6ED", "7ED", "CED", "CEI", "DOM", "FBB",
                        "LEA", "LEB", "M13", "M19", "M20", "MB1", "S99", "SUM")  # fmt: skip

EXPECTED = {
    "split": CardFacts(
        "Assure // Assemble",
        "087018b6-6355-4534-9a35-9336b4b7fccc",
        "split",
        (
            CardFace(
                "Assure",
                "{G/W}{G/W}",
                "Instant",
                "Put a +1/+1 counter on target creature. That creature gains indestructible "
                "until end of turn.",
            ),
            CardFace(
                "Assemble",
                "{4}{G}{W}",
                "Instant",
                "Create three 2/2 green and white Elf Knight creature tokens with vigilance.",
            ),
        ),
        types=("Instant",),
        mana_value=8.0,
        colors=("G", "W"),
        color_identity=("G", "W"),
        legalities=_PENNY,
        printings=(("GRN", _GRN), ("PGRN", None)),
    ),
    "transform, a planeswalker back": CardFacts(
        "Nicol Bolas, the Ravager // Nicol Bolas, the Arisen",
        "55e4b27e-5447-4fc2-8cae-a03e344600c6",
        "transform",
        (
            CardFace(
                "Nicol Bolas, the Ravager",
                "{1}{U}{B}{R}",
                "Legendary Creature \u2014 Elder Dragon",
                "Flying\nWhen Nicol Bolas, the Ravager enters the battlefield, each opponent "
                "discards a card.\n{4}{U}{B}{R}: Exile Nicol Bolas, the Ravager, then return him "
                "to the battlefield transformed under his owner's control. Activate only as a "
                "sorcery.",
                power="4",
                toughness="4",
            ),
            CardFace(
                "Nicol Bolas, the Arisen",
                None,
                "Legendary Planeswalker \u2014 Bolas",
                "[+2]: Draw two cards.\n[\u22123]: Nicol Bolas, the Arisen deals 10 damage to "
                "target creature or planeswalker.\n[\u22124]: Put target creature or "
                "planeswalker card from a graveyard onto the battlefield under your control.\n"
                "[\u221212]: Exile all but the bottom card of target player's library.",
                loyalty="7",
            ),
        ),
        supertypes=("Legendary",),
        types=("Creature", "Planeswalker"),
        subtypes=("Bolas", "Dragon", "Elder"),
        mana_value=4.0,
        colors=("B", "R", "U"),
        color_identity=("B", "R", "U"),
        keywords=("Flying", "Transform"),
        legalities=_LEGAL,
        printings=(("M19", _M19), ("PJ21", None), ("PM19", None)),
    ),
    "adventure": CardFacts(
        "Bonecrusher Giant // Stomp",
        "d6d72f5f-8f5d-4180-b514-f22ff5482902",
        "adventure",
        (
            CardFace(
                "Bonecrusher Giant",
                "{2}{R}",
                "Creature \u2014 Giant",
                "Whenever Bonecrusher Giant becomes the target of a spell, Bonecrusher Giant "
                "deals 2 damage to that spell's controller.",
                power="4",
                toughness="3",
            ),
            CardFace(
                "Stomp",
                "{1}{R}",
                "Instant \u2014 Adventure",
                "Damage can't be prevented this turn. Stomp deals 2 damage to any target.",
            ),
        ),
        types=("Creature", "Instant"),
        subtypes=("Adventure", "Giant"),
        mana_value=3.0,
        colors=("R",),
        color_identity=("R",),
        legalities=_LEGAL,
        printings=(("ELD", _ELD), ("PELD", None), ("PLIST", None), ("PRM", None)),
    ),
    "vanilla creature": CardFacts(
        "Fire Elemental",
        "3912d21e-1ebc-4a81-9dc9-f404248d564a",
        "normal",
        (CardFace("Fire Elemental", "{3}{R}{R}", "Creature \u2014 Elemental", None, "5", "4"),),
        types=("Creature",),
        subtypes=("Elemental",),
        mana_value=5.0,
        colors=("R",),
        color_identity=("R",),
        legalities=tuple(
            sorted((*_PENNY, *((f, "legal") for f in ("pauper", "paupercommander", "premodern"))))
        ),
        # Dated where one of the 22 files is that printing's set: DOM, M19, M20.
        printings=tuple(
            (code, {"DOM": _DOM, "M19": _M19, "M20": _M20}.get(code))
            for code in _FIRE_ELEMENTAL_SETS
        ),
    ),
    "planeswalker": CardFacts(
        "Teferi, Hero of Dominaria",
        "f2f165b6-ef0a-42ad-9352-ba68be8248b0",
        "normal",
        (
            CardFace(
                "Teferi, Hero of Dominaria",
                "{3}{W}{U}",
                "Legendary Planeswalker \u2014 Teferi",
                "[+1]: Draw a card. At the beginning of the next end step, untap up to two "
                "lands.\n[\u22123]: Put target nonland permanent into its owner's library third "
                'from the top.\n[\u22128]: You get an emblem with "Whenever you draw a card, '
                'exile target permanent an opponent controls."',
                loyalty="4",
            ),
        ),
        supertypes=("Legendary",),
        types=("Planeswalker",),
        subtypes=("Teferi",),
        mana_value=5.0,
        colors=("U", "W"),
        color_identity=("U", "W"),
        legalities=_LEGAL,
        printings=tuple(
            (code, _DOM if code == "DOM" else None)
            for code in ("DOM", "MED", "PANA", "PDOM", "PLIST", "PPRO", "SLD")
        ),
    ),
    "star power": CardFacts(
        "Crackling Drake",
        "c8b4eba6-88ce-42d7-a235-5a4765a4a981",
        "normal",
        (
            CardFace(
                "Crackling Drake",
                "{U}{U}{R}{R}",
                "Creature \u2014 Drake",
                "Flying\nCrackling Drake's power is equal to the total number of instant and "
                "sorcery cards you own in exile and in your graveyard.\nWhen Crackling Drake "
                "enters the battlefield, draw a card.",
                power="*",
                toughness="4",
            ),
        ),
        types=("Creature",),
        subtypes=("Drake",),
        mana_value=4.0,
        colors=("R", "U"),
        color_identity=("R", "U"),
        keywords=("Flying",),
        legalities=tuple(
            sorted((*_LEGAL, ("paupercommander", "restricted"))),
        ),
        printings=(("C19", None), ("C20", None), ("C21", None), ("GRN", _GRN)),
    ),
}


@cache
def _set(code: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((BUILD / f"{code}.json").read_text(encoding="utf-8"))["data"]
    return data


@cache
def _build() -> list[CardFacts]:
    """The cards of the 22 files, each file read as a catalog, folded across the files."""
    limits = Limits()
    return fold(f for path in sorted(BUILD.glob("*.json")) for f in card_files.facts(path, limits))


@needs_build
@pytest.mark.parametrize("case", EXPECTED, ids=str)
def test_mtgjson_cards_are_what_the_files_say(case: str) -> None:
    """Faces in side order, Oracle text (not printed text), types, legalities, printings."""
    expected = EXPECTED[case]
    found = [card for card in _build() if card.name == expected.name]
    assert found == [expected]


@needs_build
def test_one_card_per_oracle_id_of_the_files() -> None:
    """The fold of the 22 files holds as many cards as the files have oracle ids."""
    oracle_ids = {
        card["identifiers"]["scryfallOracleId"]
        for path in BUILD.glob("*.json")
        for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]
    }
    cards = _build()
    assert len(oracle_ids) == 5698
    assert len(cards) == len(oracle_ids)
    assert {card.oracle_id for card in cards} == oracle_ids
    assert cards == sorted(cards, key=lambda c: (c.name, c.oracle_id or ""))


@needs_build
def test_folding_is_order_free_and_idempotent() -> None:
    """The same cards whatever order the records come in; folding twice changes nothing."""
    records = [
        facts
        for code in ("GRN", "ELD", "M19")
        for card in _set(code)["cards"]
        for facts in [from_mtgjson(card, code, dt.date.fromisoformat(_set(code)["releaseDate"]))]
        if facts is not None
    ]
    folded = fold(records)
    shuffled = records[:]
    random.Random(54).shuffle(shuffled)
    assert fold(shuffled) == folded
    assert fold(folded) == folded


@needs_build
def test_the_parser_notes_every_card_of_a_set_file() -> None:
    """ELD's 286 cards, those without rulings too, once the rulings have been read."""
    path = BUILD / "ELD.json"
    parsed = parse(to_document(path.name, path.read_bytes(), SourceHints()))
    assert parsed.cards == []  # filled as the rulings are read
    assert sum(1 for _ in parsed.rulings) > 0
    no_rulings = {c["name"] for c in _set("ELD")["cards"] if not c["rulings"]}
    assert "Knight of the Keep" in no_rulings
    names = {card.name for card in parsed.cards}
    assert len(parsed.cards) == len(names) == 286
    assert no_rulings <= names
    giant = next(card for card in parsed.cards if card.name == "Bonecrusher Giant // Stomp")
    assert giant == EXPECTED["adventure"]


def test_scryfall_cards_say_what_mtgjson_says() -> None:
    """The Scryfall-shaped copy of six cards gives their facts: one printing, no not_legal."""
    by_name = {card.name: card for card in card_files.facts(SCRYFALL, Limits())}
    assert sorted(by_name) == sorted(e.name for e in EXPECTED.values())
    for expected in EXPECTED.values():
        # The copy is of the printing of the first dated set: GRN, M19, ELD, DOM.
        code, day = next((c, d) for c, d in expected.printings if d is not None)
        assert by_name[expected.name] == expected._replace(printings=((code, day),))


@pytest.mark.parametrize(
    ("type_line", "supertypes", "types", "subtypes"),
    [
        ("Basic Snow Land \u2014 Forest", ("Basic", "Snow"), ("Land",), ("Forest",)),
        (
            "Legendary Creature \u2014 Time Lord Doctor",
            ("Legendary",),
            ("Creature",),
            ("Doctor", "Time Lord"),
        ),
        ("Host Creature \u2014 Dwarf", ("Host",), ("Creature",), ("Dwarf",)),
        (
            "Plane \u2014 Bolas\u2019s Meditation Realm",
            (),
            ("Plane",),
            ("Bolas's Meditation Realm",),
        ),
        ("Artifact // Sorcery \u2014 Adventure", (), ("Artifact", "Sorcery"), ("Adventure",)),
    ],
    ids=["snow basic", "two-word subtype", "un-card host", "plane", "two faces"],
)
def test_a_scryfall_type_line_is_split(
    type_line: str, supertypes: tuple[str, ...], types: tuple[str, ...], subtypes: tuple[str, ...]
) -> None:
    """Supertypes by Comprehensive Rules 205.4a (and un-cards'), subtypes after the dash."""
    facts = from_scryfall({"object": "card", "name": "X", "type_line": type_line})
    assert facts is not None
    assert (facts.supertypes, facts.types, facts.subtypes) == (supertypes, types, subtypes)


def _v4(card: dict[str, Any]) -> dict[str, Any]:
    """A v4 card from a v5 one: its oracle id on the card, convertedManaCost, `names`."""
    v4 = {k: v for k, v in card.items() if k not in {"identifiers", "manaValue", "faceManaValue"}}
    v4["scryfallOracleId"] = card["identifiers"]["scryfallOracleId"]
    if "faceName" in card:
        v4["names"] = card["name"].split(" // ")
    return v4


_V3_COLORS = {"W": "White", "U": "Blue", "B": "Black", "R": "Red", "G": "Green"}


def _v3(card: dict[str, Any]) -> dict[str, Any]:
    """A v3 card: no oracle id, `cmc`, a face named by its own name, colour names, v3 lists."""
    v3 = {k: v for k, v in _v4(card).items() if k not in {"scryfallOracleId", "side"}}
    v3["cmc"] = v3.pop("convertedManaCost")
    v3["colors"] = [_V3_COLORS[c] for c in card["colors"]]
    v3["legalities"] = [
        {"format": f.capitalize(), "legality": s} for f, s in card["legalities"].items()
    ]
    if "faceName" in card:
        v3["name"] = v3.pop("faceName")
    if card["layout"] == "transform":
        v3["layout"] = "double-faced"
    if "loyalty" in card:
        v3["loyalty"] = int(card["loyalty"])
    return v3


@needs_build
@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("GRN", "Assure // Assemble"),
        ("M19", "Nicol Bolas, the Ravager // Nicol Bolas, the Arisen"),
        ("DOM", "Teferi, Hero of Dominaria"),
    ],
    ids=["split", "transform", "planeswalker"],
)
def test_v4_and_v3_cards_give_the_same_facts(code: str, name: str) -> None:
    """The v5 objects as v4 and v3 wrote them: the same facts; v3 knows no oracle id."""
    objects = [card for card in _set(code)["cards"] if card["name"] == name]
    released = dt.date.fromisoformat(_set(code)["releaseDate"])

    def folded(shape: Callable[[dict[str, Any]], dict[str, Any]]) -> list[CardFacts]:
        return fold(f for c in objects for f in [from_mtgjson(shape(c), code, released)] if f)

    v5 = folded(dict)
    assert len(v5) == 1
    assert folded(_v4) == v5
    assert folded(_v3) == [v5[0]._replace(oracle_id=None)]


def test_a_record_without_oracle_id_joins_the_card_of_its_name() -> None:
    """A v3 record (no oracle id) adds its printing to the card its name has; no card else."""
    five = {"name": "Fire Elemental", "identifiers": {"scryfallOracleId": "o"}, "setCode": "DOM"}
    three = {"name": "Fire Elemental", "printings": ["LEA"], "cmc": 5}
    alone = {"name": "Nothing Else", "setCode": "LEA"}
    facts = [from_mtgjson(c) for c in (five, three, alone)]
    folded = fold(f for f in facts if f is not None)
    assert [(c.name, c.oracle_id, c.printings, c.mana_value) for c in folded] == [
        ("Fire Elemental", "o", (("DOM", None), ("LEA", None)), 5.0),
        ("Nothing Else", None, (("LEA", None),), None),
    ]


@needs_build
def test_atomic_cards_give_every_face_once(tmp_path: Path) -> None:
    """AtomicCards lists an adventurer's faces under its name: both faces, rulings once."""
    name = "Bonecrusher Giant // Stomp"
    faces = [
        {k: v for k, v in card.items() if k not in {"setCode", "foreignData"}}
        for card in _set("ELD")["cards"]
        if card["name"] == name
    ][:2]
    path = tmp_path / "AtomicCards.json"
    atomic = {"meta": {"date": "2022-04-25"}, "data": {name: faces}}
    path.write_text(json.dumps(atomic), encoding="utf-8")
    undated = EXPECTED["adventure"]
    undated = undated._replace(printings=tuple((code, None) for code, _ in undated.printings))
    assert card_files.facts(path, Limits()) == [undated]
    parsed = parse(to_document(path.name, path.read_bytes(), SourceHints()))
    texts = [ruling.text for ruling in parsed.rulings]
    assert len(texts) == len(set(texts)) == len(faces[0]["rulings"]) > 0
    assert parsed.cards == [undated]


@pytest.mark.parametrize("layout", ["art_series", "token", "double_faced_token", "emblem"])
def test_art_cards_tokens_and_emblems_are_no_cards(layout: str) -> None:
    """What a source lists beside its cards gives no facts; a card without a name neither."""
    card = {"object": "card", "name": "Soldier", "layout": layout, "oracle_id": "o"}
    assert from_scryfall(card) is None
    assert from_mtgjson({**card, "identifiers": {"scryfallOracleId": "o"}}) is None
    assert from_mtgjson({"layout": "normal"}) is None
    assert from_scryfall({"object": "card", "name": ""}) is None
