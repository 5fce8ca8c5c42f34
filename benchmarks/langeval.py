"""Language identification on real labelled text: accuracy per language and texts/s.

The labelled set is built from the MTGJSON 2022 set files in ../shared/realdata (each card's
printed `foreignData` texts and flavour texts with their language; English card texts and
rulings) and from the seeds' golden rows. Every text is cleaned as the pipeline cleans it,
texts are kept once (first seen, sets in name order), and nothing is random, so the figures
are the same on every run.

    python benchmarks/langeval.py                 # held-out sets, default detector
    python benchmarks/langeval.py --sets all --detector langdetect
    python benchmarks/langeval.py --write-sample tests/fixtures/language/sample.jsonl
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.text.language import DETECTORS, detect_many, tie_break  # noqa: E402 - after the path is set
from pipeline.text.normalize import clean  # noqa: E402 - after the path is set

REALDATA = ROOT.parent / "shared" / "realdata"
MTGJSON = REALDATA / "mtgjson-2022"
EXPECTED = ROOT / "tests" / "fixtures" / "expected"
# MTGJSON's language names; both Chinese scripts are answered as `zh`.
LANGUAGES = {
    "English": "en",
    "German": "de",
    "French": "fr",
    "Italian": "it",
    "Spanish": "es",
    "Portuguese (Brazil)": "pt",
    "Japanese": "ja",
    "Korean": "ko",
    "Russian": "ru",
    "Chinese Simplified": "zh",
    "Chinese Traditional": "zh",
}
ORDER = ["en", "de", "fr", "it", "es", "pt", "ja", "ko", "ru", "zh"]
# Sets never looked at while choosing the detector's word lists and thresholds, nor used to
# build its n-gram profiles: the figures quoted in docs/translations.md are these, unless said
# otherwise.
HELD_OUT = ("AFR", "MH2", "NEO", "PLC", "TSP", "VOW")


class Labelled(NamedTuple):
    """One real text and the language it was printed in."""

    text: str
    lang: str
    origin: str


def set_names(which: str) -> list[str]:
    """The set codes WHICH names: `held-out`, `train` (the rest), `all` or a comma list."""
    every = sorted(path.stem for path in MTGJSON.glob("*.json"))
    if which == "all":
        return every
    if which == "held-out":
        return [code for code in every if code in HELD_OUT]
    if which == "train":
        return [code for code in every if code not in HELD_OUT]
    return which.split(",")


def mtgjson_texts(code: str) -> list[Labelled]:
    """Printed texts of one set file: English card texts and rulings, then foreignData."""
    cards = json.loads((MTGJSON / f"{code}.json").read_text(encoding="utf-8"))["data"]["cards"]
    found: list[Labelled] = []
    for card in cards:
        found.extend(
            Labelled(clean(raw), "en", f"{code}/card")
            for raw in (card.get("text"), card.get("flavorText"))
            if raw
        )
        found.extend(
            Labelled(clean(r["text"]), "en", f"{code}/ruling") for r in card.get("rulings", ())
        )
        for foreign in card.get("foreignData", ()):
            lang = LANGUAGES.get(foreign.get("language", ""))
            if lang is None:  # Phyrexian: printed, but no language of ours
                continue
            found.extend(
                Labelled(clean(raw), lang, f"{code}/foreign")
                for raw in (foreign.get("text"), foreign.get("flavorText"))
                if raw
            )
    return found


def seed_texts() -> list[Labelled]:
    """The seeds' ruling texts with the languages their golden rows (read by hand) give."""
    found = []
    for path in sorted(EXPECTED.glob("0*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["kind"] == "ruling":
                found.append(Labelled(row["text"], row["lang"], f"seed/{path.stem[:3]}"))
    return found


def labelled_set(codes: list[str], *, seeds: bool = True) -> list[Labelled]:
    """The evaluation set: each distinct text once, in a fixed order."""
    seen: set[str] = set()
    found: list[Labelled] = []
    for item in [*(seed_texts() if seeds else []), *(t for c in codes for t in mtgjson_texts(c))]:
        if item.text and item.text not in seen:
            seen.add(item.text)
            found.append(item)
    return found


def report(items: list[Labelled], detector: str, *, show: int) -> None:
    """Print right / wrong / und per language, the confusions, and texts/s."""
    texts = [item.text for item in items]
    tie_break("warm up")  # langdetect loads its profiles once per process, not per text
    start = time.perf_counter()
    answers = detect_many(texts, detector=detector)
    seconds = time.perf_counter() - start
    per: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    confusions: collections.Counter[tuple[str, str]] = collections.Counter()
    misses: list[tuple[Labelled, str]] = []
    for item, answer in zip(items, answers, strict=True):
        verdict = "right" if answer == item.lang else "und" if answer == "und" else "wrong"
        per[item.lang][verdict] += 1
        if verdict != "right":
            confusions[item.lang, answer] += 1
            misses.append((item, answer))
    print(f"detector {detector}: {len(items):,} texts, {len(items) / seconds:,.0f} texts/s")
    print("| lang | texts | right | wrong | und |")
    print("| --- | ---: | ---: | ---: | ---: |")
    total: collections.Counter[str] = collections.Counter()
    for lang in [*ORDER, *sorted(set(per) - set(ORDER))]:
        counts = per.get(lang)
        if not counts:
            continue
        total.update(counts)
        print(_row(lang, counts))
    print(_row("all", total))
    print("confusions:", ", ".join(f"{a}→{b} {n}" for (a, b), n in confusions.most_common(20)))
    for item, answer in misses[:show]:
        print(f"  {item.lang}→{answer} [{item.origin}] {item.text[:110]!r}")


def _row(lang: str, counts: collections.Counter[str]) -> str:
    n = sum(counts.values())
    cells = [f"{100 * counts[v] / n:.2f}% ({counts[v]})" for v in ("right", "wrong", "und")]
    return f"| {lang} | {n:,} | {' | '.join(cells)} |"


def write_sample(items: list[Labelled], path: Path, per_language: int) -> None:
    """Write a fixed sample: every Nth text of each language, PER_LANGUAGE at most."""
    by_lang: dict[str, list[Labelled]] = collections.defaultdict(list)
    for item in items:
        by_lang[item.lang].append(item)
    chosen = []
    for lang in ORDER:
        pool = by_lang[lang]
        step = max(1, len(pool) // per_language)
        chosen.extend(pool[::step][:per_language])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for item in chosen:
            out.write(json.dumps(item._asdict(), ensure_ascii=False) + "\n")
    print(f"wrote {len(chosen)} texts to {path}")


def write_dumps(items: list[Labelled], folder: Path, per_file: int = 5) -> int:
    """Write ITEMS as plain dumps, PER_FILE texts a card, dates DD/MM/YYYY; return files."""
    folder.mkdir(parents=True, exist_ok=True)
    files = 0
    for start in range(0, len(items), per_file):
        blocks = [
            f"{1 + (start + i) % 28:02d}/{1 + i % 12:02d}/2021\n\n{item.text}"
            for i, item in enumerate(items[start : start + per_file])
        ]
        card = f"Card {start // per_file:06d}"
        path = folder / f"{start // per_file // 1000:03d}" / f"{card}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(card + "\n\n" + "\n\n".join(blocks) + "\n", encoding="utf-8")
        files += 1
    return files


def write_card_dumps(codes: list[str], folder: Path) -> tuple[int, int]:
    """Write a plain dump per card of the set files CODES; return the files and texts written.

    Each holds the card's English printed text, then its translations (each text once, in
    the first card that prints it), dates DD/MM/YYYY: dumps as a site publishes them, a card
    to a file. Every translation is then of a card that holds its English original, so each
    one is ranked (write_dumps's cards are made up: only the translations sharing a file
    with their English text have one).
    """
    seen: set[str] = set()
    files = texts = 0
    for code in codes:
        cards = json.loads((MTGJSON / f"{code}.json").read_text(encoding="utf-8"))["data"]["cards"]
        for card in cards:
            printed = [card.get("text")]
            printed += [
                f.get("text") for f in card.get("foreignData", ()) if f.get("language") in LANGUAGES
            ]
            found = [
                text for text in (clean(raw) for raw in printed if raw) if text and text not in seen
            ]
            if not found:
                continue
            seen.update(found)
            blocks = [
                f"{1 + (files + i) % 28:02d}/{1 + i % 12:02d}/2021\n\n{text}"
                for i, text in enumerate(found)
            ]
            path = folder / f"{files // 1000:03d}" / f"{files:06d}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(card["name"] + "\n\n" + "\n\n".join(blocks) + "\n", encoding="utf-8")
            files += 1
            texts += len(found)
    return files, texts


def end_to_end(items: list[Labelled], workers: int | None) -> None:
    """Ingest ITEMS as plain dumps into a new dataset: texts/s, and the stored languages."""
    from pipeline.ingest import ingest  # noqa: PLC0415 - only this mode needs the pipeline

    with tempfile.TemporaryDirectory(prefix="langeval-") as scratch:
        raw, out = Path(scratch) / "raw", Path(scratch) / "out"
        files = write_dumps(items, raw)
        start = time.perf_counter()
        ingest([raw], out=out, workers=workers, link_translations=False)
        seconds = time.perf_counter() - start
        rulings = pq.read_table(out / "rulings", columns=["text", "lang"])
    stored = dict(zip(rulings["text"].to_pylist(), rulings["lang"].to_pylist(), strict=True))
    right = sum(stored.get(item.text) == item.lang for item in items)
    und = sum(stored.get(item.text) == "und" for item in items)
    print(
        f"ingest of {files:,} plain dumps, {len(items):,} texts, every text new: "
        f"{seconds:.2f} s, {len(items) / seconds:,.0f} texts/s; stored languages "
        f"{100 * right / len(items):.2f}% right, {100 * und / len(items):.2f}% und"
    )


def main() -> None:
    """Build the labelled set and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="held-out", help="held-out, train, all or A,B,C")
    parser.add_argument("--detector", default="default", choices=sorted(DETECTORS))
    parser.add_argument("--show", type=int, default=0, help="print this many misses")
    parser.add_argument("--write-sample", type=Path, help="write a labelled sample here")
    parser.add_argument("--per-language", type=int, default=200)
    parser.add_argument("--ingest", action="store_true", help="time an end-to-end ingest")
    parser.add_argument("--workers", type=int, help="worker processes for --ingest")
    args = parser.parse_args()
    items = labelled_set(set_names(args.sets))
    if args.ingest:
        end_to_end(items, args.workers)
        return
    if args.write_sample:
        write_sample(items, args.write_sample, args.per_language)
        return
    report(items, args.detector, show=args.show)


if __name__ == "__main__":
    main()
