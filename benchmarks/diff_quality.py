"""How well the diff pairs rulings, on real data: `python benchmarks/diff_quality.py`.

Prints precision and recall of `amended` and `replaced_by` over the labelled real pairs
(tests/fixtures/diff-labels.json), and the false pairings on a stress set of unrelated real
rulings: for every two Time Spiral cards (MTGJSON 2022) that share a ruling, the rulings
each has and the other has not, compared as if one card's had become the other's (its name
written in; `--all-sets`: two cards of any one MTGJSON 2022 set). Any rewording or
replacement found there is false. `--write-stems` rebuilds
pipeline/diffing/stem_counts.txt from the MTGJSON 2022 set files. Asserts nothing: figures are read.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.diffing import diff  # noqa: E402 - after the path is set
from pipeline.diffing.diff import ChangeType, Match, Version, compare  # noqa: E402 - after the path is set
from pipeline.diffing.likeness import self_folded, stems_of  # noqa: E402 - after the path is set
from pipeline.text.normalize import fold, text_hash  # noqa: E402 - after the path is set

REALDATA = ROOT.parent / "shared" / "realdata" / "mtgjson-2022"
LABELS = ROOT / "tests" / "fixtures" / "diff-labels.json"
_MIN_COUNT = 3  # stems seen fewer times are left out of the table: rare either way


def _snapshot(texts: list[str], date: dt.date) -> list[Version]:
    return [Version(text_hash(t), date, t) for t in texts]


GROUPS = ("same card", "engine copies", "two eras")  # each case's "part"


def labelled() -> dict[str, dict[str, list[int]]]:
    """[true positives, false positives, false negatives] of each label, by group of cases."""
    counts = {g: {"amended": [0, 0, 0], "replaced_by": [0, 0, 0]} for g in GROUPS}
    cases = json.loads(LABELS.read_text(encoding="utf-8"))["cases"]
    for case in cases:
        date = dt.date(2000, 1, 1)
        old, new = _snapshot(case["old"], date), _snapshot(case["new"], date)
        changes = compare(old, new, card=case["card"], source="s")
        got = {
            "amended": {(fold(c.old.text), fold(c.new.text)) for c in changes
                        if c.change is ChangeType.AMENDED and c.old and c.new},
            "replaced_by": {(fold(c.old.text), fold(c.replaced_by.text)) for c in changes
                            if c.old and c.replaced_by},
        }  # fmt: skip
        for label, pairs in got.items():
            want = {(fold(a), fold(b)) for a, b in case[label]}
            for pair in sorted(pairs - want):
                print(f"  false {label} ({case['name']}): {pair[0][:60]} | {pair[1][:60]}")
            for pair in sorted(want - pairs):
                print(f"  missed {label} ({case['name']}): {pair[0][:60]} | {pair[1][:60]}")
            tally = counts[case["part"]][label]
            tally[0] += len(pairs & want)
            tally[1] += len(pairs - want)
            tally[2] += len(want - pairs)
    return counts


def stress(sets: list[str]) -> tuple[int, int, int, int]:
    """(card pairs, removed/added ruling pairs, false rewordings, false replacements).

    Over the cards of each of SETS (MTGJSON 2022 file names), two cards of one set at a time.
    """
    totals = [0, 0, 0, 0]
    for name in sets:
        data = json.loads((REALDATA / f"{name}.json").read_text(encoding="utf-8"))
        cards = data["data"]["cards"]
        rulings = {c["name"]: [r["text"] for r in c.get("rulings", [])] for c in cards}
        totals = [a + b for a, b in zip(totals, _stress_set(rulings), strict=True)]
    cards, pairs, reworded, replaced = totals
    return cards, pairs, reworded, replaced


def _stress_set(rulings: dict[str, list[str]]) -> tuple[int, int, int, int]:
    names = sorted(n for n, texts in rulings.items() if texts)
    cards = pairs = reworded = replaced = 0
    for mine, theirs in itertools.combinations(names, 2):
        own, other = {fold(t) for t in rulings[mine]}, {fold(t) for t in rulings[theirs]}
        if not own & other:
            continue
        old = [t for t in rulings[mine] if fold(t) not in other]
        new = [re.sub(re.escape(theirs), mine, t) for t in rulings[theirs] if fold(t) not in own]
        if not old or not new:
            continue
        cards, pairs = cards + 1, pairs + len(old) * len(new)
        date = dt.date(2000, 1, 1)
        for c in compare(_snapshot(old, date), _snapshot(new, date), card=mine, source="s"):
            reworded += c.change is ChangeType.AMENDED and c.match in (Match.WORDS, Match.SENTENCES)
            replaced += c.replaced_by is not None
    return cards, pairs, reworded, replaced


def write_stems(target: Path) -> None:
    """Count, over the distinct rulings of the MTGJSON 2022 files, the rulings holding each stem."""
    seen: set[tuple[str, str]] = set()
    for path in sorted(REALDATA.glob("*.json")):
        for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]:
            seen.update((card["name"], fold(r["text"])) for r in card.get("rulings", []))
    counts: dict[str, int] = {}
    for card, text in seen:
        for s in stems_of(self_folded(text, card)):
            counts[s] = counts.get(s, 0) + 1
    lines, line = [str(len(seen))], ""
    for s, n in sorted(counts.items()):
        if n < _MIN_COUNT:
            continue
        item = f"{s}:{n}"
        if len(line) + len(item) + 1 > 100:  # noqa: PLR2004 - the line length of the repo
            lines.append(line)
            line = item
        else:
            line = f"{line} {item}".strip()
    target.write_text("\n".join([*lines, line]) + "\n", encoding="utf-8")
    print(f"{target}: {len(seen)} rulings, {len(lines)} lines")


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-stems", action="store_true", help="rebuild stem_counts.txt")
    parser.add_argument("--words", type=float, help="try another WORDS_THRESHOLD")
    parser.add_argument(
        "--all-sets", action="store_true", help="stress set over every MTGJSON 2022 file (1 min)"
    )
    args = parser.parse_args()
    if args.write_stems:
        write_stems(ROOT / "pipeline" / "diffing" / "stem_counts.txt")
        return
    if args.words is not None:
        diff.WORDS_THRESHOLD = args.words
    print(f"WORDS_THRESHOLD {diff.WORDS_THRESHOLD}, REPLACE_THRESHOLD {diff.REPLACE_THRESHOLD}")
    counts = labelled()
    counts["all"] = {
        label: [sum(counts[g][label][k] for g in GROUPS) for k in range(3)]
        for label in ("amended", "replaced_by")
    }
    for group, labels in counts.items():
        for label, (tp, fp, fn) in labels.items():
            precision = tp / (tp + fp) if tp + fp else 1.0
            recall = tp / (tp + fn) if tp + fn else 1.0
            print(f"{group}: {label}: precision {precision:.1%} ({tp}/{tp + fp}), "
                  f"recall {recall:.1%} ({tp}/{tp + fn})")  # fmt: skip
    sets = sorted(p.stem for p in REALDATA.glob("*.json")) if args.all_sets else ["TSP"]
    cards, pairs, reworded, replaced = stress(sets)
    print(f"stress ({', '.join(sets)}): {cards} card pairs, {pairs} removed/added ruling pairs: "
          f"{reworded} false rewordings, {replaced} false replacements")  # fmt: skip


if __name__ == "__main__":
    main()
