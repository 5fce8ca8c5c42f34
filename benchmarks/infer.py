"""Card inference against an AllPrintings-sized catalog: speed, and how often it is right.

The catalog is every real MTGJSON set file of ../shared/realdata/mtgjson-2022 (about 5,700
names), topped up to --names with names made of the real names' words (seeded), as many as
AllPrintings holds. The documents are the real rulings of those set files, one document per
card with its title taken away: inference should give back that card, or nothing.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pipeline.folding.catalog import Catalog, load_catalog  # noqa: E402 - after the path is set
from pipeline.folding.infer import infer  # noqa: E402 - after the path is set

SETS = HERE.parent.parent / "shared" / "realdata" / "mtgjson-2022"


def _documents(paths: list[Path]) -> dict[str, list[str]]:
    """Each card's real rulings, once per card name."""
    documents: dict[str, list[str]] = {}
    for path in paths:
        for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]:
            rulings = [r["text"] for r in card.get("rulings") or ()]
            if rulings and card["name"] not in documents:
                documents[card["name"]] = rulings
    return documents


def _top_up(catalog: Catalog, names: int, seed: int) -> int:
    """Add made-up names of two or three real name words until the catalog holds NAMES."""
    words = sorted({w for n in catalog.oracle_of for w in re.findall(r"[A-Z][a-z]+", n)})
    rng = random.Random(seed)
    added = 0
    real = len(catalog.oracle_of)
    while real + added < names:
        name = " ".join(rng.sample(words, rng.choice((2, 2, 3))))
        if name.casefold() not in catalog.english:
            catalog.add(name, None)
            added += 1
    return added


def _naive(documents: dict[str, list[str]], names: list[str]) -> float:
    """Seconds for the per-name scan this replaces: every name searched in every text."""
    texts = [t for ts in documents.values() for t in ts]
    start = time.perf_counter()
    for name in names:
        for text in texts:
            _ = name in text
    return time.perf_counter() - start


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--names", type=int, default=30_000, help="catalog size (AllPrintings)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of inference (median)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    paths = sorted(SETS.glob("*.json"))
    start = time.perf_counter()
    catalog = load_catalog(paths)
    loaded = time.perf_counter() - start
    real = len(catalog.oracle_of)
    start = time.perf_counter()
    made_up = _top_up(catalog, args.names, args.seed)
    topped = time.perf_counter() - start
    documents = _documents(paths)
    rulings = sum(len(t) for t in documents.values())
    runs = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        verdicts = infer(documents, catalog.index)
        runs.append(time.perf_counter() - start)
    seconds = statistics.median(runs)
    chosen = {path: v.card for path, v in verdicts.items() if v.card}
    right = sum(card == path for path, card in chosen.items())
    names = sorted(set(catalog.english.values()))
    sample = names[:: max(1, len(names) // 500)]
    naive = _naive(documents, sample) * (real + made_up) / len(sample)
    print(f"catalog: {len(paths)} real set files, {real:,} cards; load {loaded:.2f} s")
    print(f"names: {real + made_up:,} ({made_up:,} made up, indexed in {topped:.2f} s)")
    print(f"documents: {len(documents):,} cards' real rulings, {rulings:,} rulings")
    print(
        f"inference: {seconds:.2f} s (median of {args.repeat}), {rulings / seconds:,.0f} rulings/s"
    )
    print(f"naive per-name scan (`name in text`, extrapolated from {len(sample)} names): "
          f"{naive:.1f} s, {naive / seconds:.0f}x slower")  # fmt: skip
    share = len(chosen) / len(documents)
    print(f"card chosen: {len(chosen):,} of {len(documents):,} documents ({share:.0%}); "
          f"right {right:,}, wrong {len(chosen) - right:,}")  # fmt: skip
    unchosen = [v for path, v in verdicts.items() if not v.card]
    no_margin = sum(bool(v.candidates[0].evidence) for v in unchosen)
    print(f"no card: {len(documents) - len(chosen):,} ({len(documents) - len(verdicts):,} mention "
          f"no catalog name, {len(unchosen) - no_margin:,} have no self-reference, {no_margin:,} "
          "no clear margin)")  # fmt: skip
    for path, card in sorted(chosen.items()):
        if card != path:
            print(f"  wrong: {path} -> {card}: {verdicts[path].candidates[0].evidence[0]}")


if __name__ == "__main__":
    main()
