"""Translation links on real texts as a user's first ingest makes them, judged right or wrong.

The 110,387 texts of the 22 MTGJSON 2022 set files (`make bench`'s "real texts in 10
languages": printed and flavour texts in ten languages, English rulings, the seeds) are
written as plain dumps, five texts to a card (langeval.write_dumps) and ingested with
translations linked. MTGJSON pairs each card's English printed and flavour text with its
translations, so each link can be judged: right when its original is an English text that
the translation's text is paired with, wrong when it is another. Prints the links by method,
right and wrong. About a minute; `--work DIR` keeps the dumps and the dataset there.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import tempfile
from pathlib import Path

from langeval import MTGJSON, labelled_set, set_names, write_dumps

from pipeline import ingest, open_dataset
from pipeline.text.normalize import text_hash


def originals() -> dict[str, set[str]]:
    """Each translated text's hash: the hashes of the English texts MTGJSON pairs it with."""
    found: dict[str, set[str]] = collections.defaultdict(set)
    for path in sorted(MTGJSON.glob("*.json")):
        for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]:
            for field in ("text", "flavorText"):
                if card.get(field):
                    for foreign in card.get("foreignData", ()):
                        if foreign.get(field):
                            found[text_hash(foreign[field])].add(text_hash(card[field]))
    return found


def main() -> int:
    """Write, ingest and judge; print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, help="folder for the dumps and the dataset")
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="translate-dumps-"))
    raw, out = work / "raw", work / "normalized"
    if not raw.exists():
        write_dumps(labelled_set(set_names("all")), raw)
    shutil.rmtree(out, ignore_errors=True)
    ingest([raw], out=out)
    links = open_dataset(out).translations()
    linked = links[links["original_text_hash"].notna()]
    truth = originals()
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for text, original, method in zip(
        linked["text_hash"], linked["original_text_hash"], linked["method"], strict=True
    ):
        known = truth.get(text)
        verdict = "unknown" if known is None else "right" if original in known else "wrong"
        counts[method, verdict] += 1
    print(f"{len(links):,} translations, {len(linked):,} linked")
    print("| method | right | wrong | unknown |")
    print("| --- | --- | --- | --- |")
    for method in sorted({m for m, _ in counts}):
        row = [counts[method, v] for v in ("right", "wrong", "unknown")]
        print(f"| {method} | {row[0]:,} | {row[1]:,} | {row[2]:,} |")
    right, wrong = (sum(n for (_, v), n in counts.items() if v == k) for k in ("right", "wrong"))
    print(f"| all | {right:,} | {wrong:,} ({wrong / max(1, right + wrong):.1%} of judged) | |")
    if options.work is None:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
