"""Held-out evaluation of translation links: card texts of sets the lexicon never saw.

The English card texts of each held-out set (a stand-in for rulings) are split in two
halves, each indexed alone. Each translated card text is linked among the half holding its
English text (linked % of all, wrong % of links), and among the other half, where any link
is wrong (false %: how often a translation whose original is absent still gets linked).
`--sweep` prints the same on the dev sets for a grid of thresholds. `--rulings` links the
dev sets' translated card texts among the English rulings of every set file, none of which
they translate: the share linked is the false-link rate against a real rulings pool.
`--hand` links the hand translations of real rulings (tests/fixtures/language/
hand-translations.jsonl) among every set file's English rulings, with their card's own.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import fuzz

from pipeline.folding.translate import translations_table
from pipeline.folding.translate.card import VERSION_SIMILARITY
from pipeline.folding.translate.index import EnglishIndex
from pipeline.folding.translate.lexicon import shipped
from pipeline.folding.translate.link import MIN_MARGIN, MIN_SCORE, Link, link
from pipeline.folding.translate.parallel import DEV_SETS, TEST_SETS, Pair, read_pairs
from pipeline.text.normalize import fold, text_hash

SETS = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "mtgjson-2022"
HAND = Path(__file__).resolve().parents[1] / "tests/fixtures/language/hand-translations.jsonl"
# One decision before thresholds: language, score, margin, whether the winner is right,
# and whether the right original was among the candidates at all.
Outcome = tuple[str, float, float, bool, bool]


def outcomes(pairs: list[Pair]) -> list[Outcome]:
    """Link every pair's translation among the English texts of its set, thresholds off."""
    lexicon = shipped()
    by_set: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        by_set[pair.set_code].append(pair)
    found: list[Outcome] = []
    for code in sorted(by_set):
        english = {text_hash(p.english): p.english for p in by_set[code]}
        hashes = sorted(english)
        halves = [EnglishIndex({h: english[h] for h in hashes[half::2]}) for half in (0, 1)]
        for pair in by_set[code]:
            right = text_hash(pair.english)
            for index in halves:
                result = link(
                    pair.foreign, pair.lang, (), index, lexicon, min_score=0, min_margin=-1
                )
                present = right in index.position
                found.append(
                    (pair.lang, result.score, result.margin, result.original == right, present)
                )
    return found


Row = tuple[str, int, float, float, float]


def table(found: list[Outcome], min_score: float, min_margin: float) -> list[Row]:
    """Per language (and "all"): texts, linked %, wrong % of links, false % of absent."""
    rows = []
    langs = sorted({o[0] for o in found})
    for lang in [*langs, "all"]:
        mine = [o for o in found if lang in {"all", o[0]}]
        linked = [o for o in mine if o[1] >= min_score and o[2] >= min_margin]
        present = [o for o in mine if o[4]]
        present_linked = [o for o in linked if o[4]]
        wrong = [o for o in present_linked if not o[3]]
        false = [o for o in linked if not o[4]]
        rows.append(
            (
                lang,
                len(present),
                100 * len(present_linked) / len(present),
                100 * len(wrong) / max(len(present_linked), 1),
                100 * len(false) / max(len(mine) - len(present), 1),
            )
        )
    return rows


def _rulings_pool() -> int:
    """Link the dev sets' translations among every set file's English rulings."""
    pool: dict[str, str] = {}
    for path in sorted(SETS.glob("*.json")):
        for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]:
            for ruling in card.get("rulings", ()):
                pool[text_hash(ruling["text"])] = ruling["text"]
    index = EnglishIndex(pool)
    pairs = read_pairs(SETS / f"{code}.json" for code in DEV_SETS)
    lexicon = shipped()
    linked: dict[str, list[bool]] = defaultdict(list)
    for pair in pairs:
        result = link(pair.foreign, pair.lang, (), index, lexicon)
        linked[pair.lang].append(result.original is not None)
    print(f"{len(pairs):,} card texts of {', '.join(DEV_SETS)} among {len(pool):,} rulings")
    for lang, flags in sorted(linked.items()):
        print(f"{lang}: {100 * sum(flags) / len(flags):.2f}% linked (all false)")
    every = [flag for flags in linked.values() for flag in flags]
    print(f"all: {100 * sum(every) / len(every):.2f}% linked (all false)")
    return 0


# The hand set's parts: the first 44 translations (6 Kaldheim cards), the cards added after
# them whose rulings the rule within one card (pipeline.folding.translate.card) was tuned on,
# the cards added with them that were held out of that tuning, and cards whose translations
# (in Spanish and Italian too) were written once the rule was fixed.
FIRST_CARDS = frozenset(
    {
        "Search for Glory",
        "Halvar, God of Battle // Sword of the Realms",
        "Alrund, God of the Cosmos // Hakka, Whispering Raven",
        "Sigrid, God-Favored",
        "Cosmos Charger",
        "Glorious Protector",
    }
)
TUNED_CARDS = frozenset(
    {
        "Satoru Umezawa",
        "Thundering Raiju",
        "Touch the Spirit Realm",
        "Uncharted Haven",
        "Cemetery Desecrator",
        "Thalia, Guardian of Thraben",
        "Laid to Rest",
        "Militia Rallier",
    }
)
WRITTEN_AFTER_CARDS = frozenset(
    {
        "Anje, Maid of Dishonor",
        "Faithbound Judge // Sinner's Judgment",
        "Surtland Flinger",
        "Quakebringer",
        "Dead // Gone",
        "Kaito Shizuki",
    }
)
# Outcomes of one hand translation.
OUTCOMES = ("right", "version", "wrong", "not linked")


def _part(card: str) -> str:
    if card in FIRST_CARDS:
        return "first 44"
    if card in WRITTEN_AFTER_CARDS:
        return "written after tuning"
    return "added, tuned on" if card in TUNED_CARDS else "added, held out"


def _outcome(result: Link, right: str, card: set[str], index: EnglishIndex) -> int:
    """right, version, wrong, not linked (an index of OUTCOMES).

    A version is another wording of the original that the card holds too (rapidfuzz ratio
    of VERSION_SIMILARITY or more): the words cannot tell them apart, the dates do (the
    table links the version a translation's date points to).
    """
    if result.original is None:
        return 3
    if result.original == right:
        return 0
    if result.original in card:
        folded = fold(index.texts[index.position[result.original]])
        if fuzz.ratio(folded, fold(HAND_ORIGINALS[right])) >= VERSION_SIMILARITY:
            return 1
    return 2


HAND_ORIGINALS: dict[str, str] = {}


def _hand() -> int:
    """Link the hand translations among every set's English rulings: right, wrong, unlinked."""
    pool: dict[str, str] = {}
    own: dict[str, set[str]] = defaultdict(set)
    for path in sorted(SETS.glob("*.json")):
        for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]:
            for ruling in card.get("rulings", ()):
                pool[text_hash(ruling["text"])] = ruling["text"]
                own[card["name"]].add(text_hash(ruling["text"]))
    index = EnglishIndex(pool)
    lexicon = shipped()
    items = [json.loads(line) for line in HAND.read_text(encoding="utf-8").splitlines()]
    HAND_ORIGINALS.update({text_hash(item["english"]): item["english"] for item in items})
    originals = set(HAND_ORIGINALS)
    # The same without their originals anywhere: every link is false (but to a version).
    absent = EnglishIndex({h: text for h, text in pool.items() if h not in originals})
    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for item in items:
        right = text_hash(item["english"])
        modes: tuple[tuple[str, EnglishIndex, set[str], str | None], ...] = (
            ("card", index, own[item["card"]], item["card"]),
            ("no card", index, set(), None),
            ("original absent", absent, own[item["card"]] - originals, item["card"]),
        )
        for mode, pool_index, mine, card in modes:
            result = link(item["text"], item["lang"], mine, pool_index, lexicon, card=card)
            outcome = _outcome(result, right, own[item["card"]], pool_index)
            for part in (_part(item["card"]), "all"):
                for lang in (item["lang"], "all"):
                    counts[mode, part, lang][outcome] += 1
    cards = len({item["card"] for item in items})
    print(
        f"{len(items)} hand translations of {len(originals)} English rulings of {cards} cards, "
        f"among {len(pool):,} English rulings"
    )
    print("| with | part | lang | texts | " + " | ".join(OUTCOMES) + " |")
    print("| --- | --- | --- | --- | " + " | ".join("---" for _ in OUTCOMES) + " |")
    for (mode, part, lang), found in sorted(counts.items()):
        print(f"| {mode} | {part} | {lang} | {sum(found)} | " + " | ".join(map(str, found)) + " |")
    return 0


def _scale() -> int:
    """Time translations_table() on every set's English rulings plus the dev translations."""
    rows: list[dict[str, object]] = []
    for path in sorted(SETS.glob("*.json")):
        rows.extend(
            {"card": card["name"], "lang": "en", "text": ruling["text"]}
            for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]
            for ruling in card.get("rulings", ())
        )
    # Of no known card: a translation of a known card without English rulings is not ranked.
    rows += [
        {"card": None, "lang": pair.lang, "text": pair.foreign}
        for pair in read_pairs(SETS / f"{code}.json" for code in DEV_SETS)
    ]
    table = pa.table(
        {
            "text_hash": [text_hash(str(row["text"])) for row in rows],
            "card": [row["card"] for row in rows],
            "lang": [row["lang"] for row in rows],
            "text": [row["text"] for row in rows],
            "current": [True] * len(rows),
            "effective_date": pa.nulls(len(rows), pa.date32()),
            "first_run": [1] * len(rows),
        }
    )
    shipped()  # loading the lexicon is not the table's work
    start = time.perf_counter()
    result = translations_table(table)
    elapsed = time.perf_counter() - start
    english_rows = table.filter(pc.equal(table["lang"], pa.scalar("en")))
    english = len(set(english_rows["text_hash"].to_pylist()))
    print(
        f"translations_table: {len(table):,} rulings ({english:,} distinct English texts), "
        f"{len(result):,} translation rows in {elapsed:.1f} s"
    )
    return 0


def main() -> int:
    """Print the held-out table (or the dev sweep)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sweep", action="store_true", help="threshold grid on the dev sets")
    parser.add_argument("--rulings", action="store_true", help="false links among real rulings")
    parser.add_argument("--scale", action="store_true", help="time translations_table()")
    parser.add_argument("--hand", action="store_true", help="the hand-translated rulings")
    options = parser.parse_args()
    if options.hand:
        return _hand()
    if options.rulings:
        return _rulings_pool()
    if options.scale:
        return _scale()
    codes = DEV_SETS if options.sweep else TEST_SETS
    pairs = read_pairs(SETS / f"{code}.json" for code in codes)
    start = time.perf_counter()
    found = outcomes(pairs)
    elapsed = time.perf_counter() - start
    print(f"sets {', '.join(codes)}: {len(found):,} translations linked in {elapsed:.1f} s")
    if options.sweep:
        for min_score in (0.3, 0.4, 0.5, 0.6):
            for min_margin in (0.02, 0.05, 0.08, 0.1):
                rows = table(found, min_score, min_margin)
                *langs, total = rows
                print(
                    f"score >= {min_score}, margin >= {min_margin}: linked {total[2]:.1f}% "
                    f"(least {min(r[2] for r in langs):.1f}%), wrong {total[3]:.2f}% "
                    f"(most {max(r[3] for r in langs):.2f}%), false {total[4]:.2f}% "
                    f"(most {max(r[4] for r in langs):.2f}%)"
                )
        return 0
    print(f"thresholds: score >= {MIN_SCORE}, margin >= {MIN_MARGIN}")
    print("| lang | texts | linked % | wrong % of links | false % (original absent) |")
    print("| --- | --- | --- | --- | --- |")
    for lang, count, linked, wrong, false in table(found, MIN_SCORE, MIN_MARGIN):
        print(f"| {lang} | {count:,} | {linked:.1f} | {wrong:.2f} | {false:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
