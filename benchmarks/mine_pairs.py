"""Candidate cases for the diff's labelled set: `python benchmarks/mine_pairs.py`.

Finds, in the real data of ../shared (realdata/README.md), two versions of a card's rulings:

- same card: a card of a 2012 Gatherer page (gatherer-2012) that an MTGJSON 2022 set file
  also holds, and a card of the seeds (../shared/seeds, their English rulings) that a 2022 set
  file holds; the older text is "old";
- same mechanic, two eras: a Time Spiral or Planar Chaos card (rulings written from 2006 on)
  against a Modern Horizons 2 card (2021) that shares one of its rulings word for word (the
  same mechanic), the newer card's name written as the older one's, as the stress set of
  diff_quality.py does; a 2012 Gatherer card against a 2022 card with a near sentence; a
  card of a 2017-2020 set against one of a later set with a near general ruling (CHOSEN).

For each case it prints every removed/added pair whose rewording score (the mean of the
self-folded character and weighted word likeness) reaches --floor, best first, for a person
to read and label; `--write PATH` writes the chosen cases (CHOSEN, the same-card ones) as
JSON with empty labels. The labels are a reading, not this script's output: they live in
tests/fixtures/diff-labels.json.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.diffing.likeness import Texts  # noqa: E402 - after the path is set
from pipeline.models import RawDocument  # noqa: E402
from pipeline.reading.parsers import gatherer, plain  # noqa: E402 - after the path is set
from pipeline.text.language import detect_language  # noqa: E402 - after the path is set
from pipeline.text.normalize import fold  # noqa: E402 - after the path is set

SHARED = ROOT.parent / "shared"
MTGJSON = SHARED / "realdata" / "mtgjson-2022"
OLD_ERA, NEW_ERA = ("TSP", "PLC"), ("MH2",)
# Card pairs of two eras taken into the labelled set: one per mechanic, the ones whose rulings
# hold a reworded general ruling beside card rulings that only look alike. Chosen by reading
# the candidate list this script prints with --eras (Time Spiral -> Modern Horizons 2), and,
# for the 2017-2022 sets, the near pairs of small cards (five rulings or fewer) of an older
# and a newer set: clear rewordings and clear look-alikes, ambiguous ones left out.
CHOSEN = (
    ("Boom // Bust", "Fire // Ice"),  # split cards
    ("Hypergenesis", "Glimpse of Tomorrow"),  # triggers during resolution
    ("Crookclaw Transmuter", "Aeromoeba"),  # switching power and toughness
    ("Grapeshot", "Aeve, Progenitor Ooze"),  # storm
    ("Aeon Chronicler", "Bloodbraid Marauder"),  # cast without paying its mana cost
    ("Restore Balance", "Glimpse of Tomorrow"),  # no mana cost, suspend
    ("Dralnu, Lich Lord", "Kaleidoscorch"),  # flashback against converge
    ("Voidstone Gargoyle", "Cursed Totem"),  # stopping activated abilities
    ("Ancestral Vision", "Asmoranomardicadaistinaculdacar"),  # 2012 page: no mana cost
    ("Æther Storm", "Essence Scatter"),  # 2012 page: what a creature spell is
    ("Dina, Soul Steeper", "Celestial Unicorn"),  # 2021: life gain events
    ("Ajani's Pridemate", "Scion of the Swarm"),  # 2019 -> 2020: lethal damage and life gain
    ("Mayhem Devil", "Havoc Jester"),  # 2019 -> 2020: sacrifice triggers
    ("Trapjaw Tyrant", "Glass Casket"),  # 2018 -> 2019: leaves before its trigger resolves
    ("Stolen by the Fae", "Niambi, Esteemed Speaker"),  # 2019 -> 2020: illegal targets
    ("Switcheroo", "Traitorous Greed"),  # 2018 -> 2020: illegal targets
)


def _document(path: Path) -> RawDocument:
    text = path.read_text(encoding="utf-8", errors="replace")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return RawDocument(path.name, digest, text, "utf-8")


def gatherer_pages() -> dict[str, list[str]]:
    """Card name -> the rulings of its English 2012 Gatherer page (pages without any left out)."""
    pages: dict[str, list[str]] = {}
    for path in sorted((SHARED / "realdata" / "gatherer-2012").glob("*.html")):
        parsed = gatherer.parse(_document(path))
        texts = [" ".join(r.text.split()) for r in parsed.rulings]
        if parsed.title and texts and detect_language(" ".join(texts)) == "en":
            pages.setdefault(parsed.title, texts)
    return pages


def seeds() -> dict[str, tuple[str, list[str]]]:
    """Card name (as the seed's title) -> (seed file, its English rulings)."""
    found: dict[str, tuple[str, list[str]]] = {}
    for path in sorted((SHARED / "seeds").glob("*.txt")):
        parsed = plain.parse(_document(path))
        texts = [r.text for r in parsed.rulings if detect_language(r.text) == "en"]
        if parsed.title and texts:
            found.setdefault(parsed.title, (path.name, texts))
    return found


def set_files() -> dict[str, tuple[str, list[str]]]:
    """Card name -> (set code, rulings) over the MTGJSON 2022 files, the first set holding it."""
    cards: dict[str, tuple[str, list[str]]] = {}
    for card, code in _cards():
        if card.get("rulings"):
            cards.setdefault(card["name"], (code, [r["text"] for r in card["rulings"]]))
    return cards


def printed_names() -> dict[str, str]:
    """Printed name in any language (English too) -> the card's English name."""
    names: dict[str, str] = {}
    for card, _ in _cards():
        names.setdefault(card["name"], card["name"])
        for foreign in card.get("foreignData", []):
            names.setdefault(foreign["name"], card["name"])
    return names


def _cards() -> list[tuple[dict[str, Any], str]]:
    return [
        (card, path.stem)
        for path in sorted(MTGJSON.glob("*.json"))
        for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]
    ]


def case(name: str, card: str, origin: str, old: list[str], new: list[str]) -> dict[str, Any]:
    """A case of the labelled set's shape, labels empty."""
    return {"name": name, "card": card, "origin": origin, "note": "", "old": old, "new": new,
            "amended": [], "replaced_by": []}  # fmt: skip


def _slug(text: str) -> str:
    return re.sub(r"\W+", "-", fold(text).lower()).strip("-")


def same_card() -> list[dict[str, Any]]:
    """Cases of one card in two real versions: 2012 Gatherer or a seed, and MTGJSON 2022."""
    cards, out = set_files(), []
    for title, texts in gatherer_pages().items():
        if title in cards:
            code, new = cards[title]
            origin = f"Gatherer page saved 2012 -> MTGJSON {code}.json 2022-04-25"
            out.append(case(f"{_slug(title)}-2012-2022", title, origin, texts, new))
    names = printed_names()
    for title, (seed, texts) in seeds().items():
        name = names.get(title)  # a seed may be titled by a printed (translated) name
        if name in cards:
            code, old = cards[name]
            origin = f"MTGJSON {code}.json 2022-04-25 -> seed {seed} (2024), its English rulings"
            out.append(case(f"{_slug(name)}-2022-2024", name, origin, old, texts))
    return out


def two_eras(older: str, newer: str, cards: dict[str, tuple[str, list[str]]]) -> dict[str, Any]:
    """A case of OLDER's rulings becoming NEWER's (NEWER's name written as OLDER's)."""
    pages = gatherer_pages()
    old = pages[older] if older in pages else cards[older][1]
    era = "Gatherer 2012" if older in pages else f"MTGJSON {cards[older][0]}.json 2022"
    new = [t.replace(newer, older) for t in cards[newer][1]]
    origin = f"two eras: {older} ({era}) -> {newer} (MTGJSON {cards[newer][0]}.json 2022)"
    return case(f"{_slug(older)}-to-{_slug(newer)}", older, origin, old, new)


def era_pairs(cards: dict[str, tuple[str, list[str]]]) -> list[tuple[str, str]]:
    """Older-era and newer-era cards that share a ruling word for word (the same mechanic)."""
    holders: dict[str, set[str]] = {}
    for name, (_, texts) in cards.items():
        for text in texts:
            holders.setdefault(fold(text), set()).add(name)
    pairs: set[tuple[str, str]] = set()
    for names in holders.values():
        for a, b in itertools.product(sorted(names), repeat=2):
            if cards[a][0] in OLD_ERA and cards[b][0] in NEW_ERA:
                pairs.add((a, b))
    return sorted(pairs)


def candidates(c: dict[str, Any], floor: float) -> list[tuple[float, float, float, str, str]]:
    """(score, characters, words, old, new) of the case's removed/added pairs at FLOOR or above."""
    old_folded, new_folded = {fold(t) for t in c["old"]}, {fold(t) for t in c["new"]}
    gone = [t for t in c["old"] if fold(t) not in new_folded]
    came = [t for t in c["new"] if fold(t) not in old_folded]
    texts = Texts([*gone, *came], c["card"])
    out = []
    for a, b in itertools.product(gone, came):
        chars, words = texts.characters(a, b), texts.words(a, b)
        if (chars + words) / 2 >= floor:
            out.append(((chars + words) / 2, chars, words, a, b))
    return sorted(out, reverse=True)


def main() -> None:
    """Print the candidate pairs of each case; write the cases with --write."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor", type=float, default=25.0, help="lowest score printed")
    parser.add_argument("--eras", action="store_true", help="list every pair of two eras")
    parser.add_argument("--write", type=Path, help="write the cases (labels empty) here")
    args = parser.parse_args()
    cards = set_files()
    if args.eras:
        for older, newer in era_pairs(cards):
            top = candidates(two_eras(older, newer, cards), args.floor)
            if top:
                print(f"{older} -> {newer}: {len(top)} pairs, best {top[0][0]:.1f}")
        return
    cases = [*same_card(), *(two_eras(a, b, cards) for a, b in CHOSEN)]
    for c in cases:
        print(f"== {c['name']} ({c['origin']}): {len(c['old'])} old, {len(c['new'])} new")
        for score, chars, words, a, b in candidates(c, args.floor):
            print(f"  {score:.1f} (c{chars:.1f} w{words:.1f})\n    O {a}\n    N {b}")
    if args.write:
        args.write.write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
