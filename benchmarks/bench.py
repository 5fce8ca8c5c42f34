"""Speed and memory figures of the pipeline on a synthetic corpus: `make bench`.

Each figure is the median of several runs, each run in a fresh process so that its peak
resident memory (RSS, the process and its workers) is its own. Prints a table; asserts
nothing: these machines are noisy, so figures are read, not tested.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from corpus import generate, scryfall_bulk
from daily import report_days, report_small, run_days, small_run
from langeval import MTGJSON, labelled_set, set_names, write_card_dumps, write_dumps
from measure import job, measure, run_child
from timed import (
    changelog,
    ingest_as_cli,
    ingest_linked,
    ingest_unlinked,
    langdetect_each,
    read_floor,
)


def _rate(rulings: int, seconds: float) -> str:
    return f"{seconds:.2f} s, {rulings / seconds:,.0f} rulings/s"


def _side_by_side(raw: Path, out: Path, texts: int, runs: int) -> str:
    """A first ingest of RAW with translations linked (the default) and with them put off."""
    figures = []
    for ingest in (ingest_linked, ingest_unlinked):
        seconds, rss = measure(job(ingest, str(raw), str(out)), runs, prepare=out)
        figures.append(f"{seconds:.2f} s, {texts / seconds:,.0f} texts/s, peak RSS {rss:.0f} MiB")
    return f"linked {figures[0]}; unlinked {figures[1]}"


def _linked(work: Path, rulings: int, runs: int, *, distinct: bool = False) -> tuple[str, str]:
    """The multilingual issue's synthetic case: a first ingest, a tenth of it translated.

    DISTINCT: no two rulings share a text (all new rulings: every English text is one more
    candidate, and the index to build holds about 100,000 of them).
    """
    name = "distinct" if distinct else "linked"
    raw = work / f"raw-{name}"
    if not raw.exists():
        generate(raw, rulings, seed=4, distinct=distinct)
    figure = _side_by_side(raw, work / f"out-{name}", rulings, runs)
    label = "all distinct, " if distinct else ""
    return f"{rulings:,} rulings, {label}a tenth translated", figure


def _mixed_day(work: Path, out: Path, runs: int) -> tuple[str, str]:
    """A daily run as the command makes it, into a copy of the first ingest's dataset.

    1,000 rulings of the corpus's mix (10% translated, rules excerpts of no card among
    them), each new translation linked among all of the dataset's English rulings.
    """
    raw, day = work / "raw-day", work / "out-day"
    if not raw.exists():
        generate(raw, 1_000, seed=8)
    figures = []
    for _ in range(runs):
        shutil.rmtree(day, ignore_errors=True)
        shutil.copytree(out, day, symlinks=True)
        figures.append(run_child(job(ingest_as_cli, str(raw), str(day))))
    seconds = statistics.median(f.seconds for f in figures)
    rss = statistics.median(f.rss_mb for f in figures)
    return "1,000 mixed rulings into that dataset", f"{seconds:.2f} s, peak RSS {rss:.0f} MiB"


def _real_files(work: Path, runs: int) -> tuple[str, str]:
    """../shared/realdata as it is, as the command ingests it: rules releases 2004 to 2024."""
    out, files = work / "out-realdata", sum(1 for p in MTGJSON.parent.rglob("*") if p.is_file())
    seconds, rss = measure(job(ingest_as_cli, str(MTGJSON.parent), str(out)), runs, out)
    return f"the {files} files of ../shared/realdata", f"{seconds:.2f} s, peak RSS {rss:.0f} MiB"


def _real_languages(work: Path, runs: int) -> tuple[str, str]:
    """The worst case for language detection and linking: real texts in ten languages, all new.

    The multilingual issue's real case too: the foreignData texts beside the English card texts and
    rulings of ../shared/realdata's set files, linked and not.
    """
    texts, raw = labelled_set(set_names("all")), work / "raw-languages"
    if not raw.exists():
        write_dumps(texts, raw)
    figure = _side_by_side(raw, work / "out-languages", len(texts), runs)
    return f"{len(texts):,} real texts in 10 languages, all new", figure


def _real_cards(work: Path, runs: int) -> tuple[str, str]:
    """The same sets' printed texts a card to a file: every translation has its original."""
    raw = work / "raw-cards"
    shutil.rmtree(raw, ignore_errors=True)
    files, texts = write_card_dumps(set_names("all"), raw)
    figure = _side_by_side(raw, work / "out-cards", texts, runs)
    return f"{texts:,} real card texts, a card to each of {files:,} files", figure


def _arguments() -> argparse.Namespace:
    """The command line's options; --quick makes every size smaller."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rulings", type=int, default=150_000, help="first-ingest corpus size")
    parser.add_argument(
        "--linked", type=int, default=110_000, help="synthetic corpus linked and not"
    )
    parser.add_argument("--large", type=int, default=1_000_000, help="large corpus size")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--bulk", type=int, default=120_000, help="rulings in one bulk file")
    parser.add_argument("--naive-sample", type=int, default=2_000)
    # Ten days, while a daily run of the 120k bulk file costs about 6x the first ingest (as
    # measured on the partitioned store); the month is `make bench BENCH="--days 30"`.
    parser.add_argument("--days", type=int, default=10, help="days of the daily-job scenario")
    parser.add_argument(
        "--quick", action="store_true", help="a tenth of every size, one run, five days"
    )
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    if args.quick:
        args.rulings, args.large, args.bulk = args.rulings // 10, args.large // 10, args.bulk // 10
        args.linked //= 10
        args.runs, args.days = 1, min(args.days, 5)
    return args


def main() -> None:
    """Build the corpora, run every scenario, print the figures."""
    args = _arguments()
    work = args.work or Path(tempfile.mkdtemp(prefix="rulings-bench-"))
    raw, big, out, big_out = work / "raw", work / "raw-large", work / "out", work / "out-large"
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    started = time.perf_counter()
    files = generate(raw, args.rulings, seed=1) if not raw.exists() else len(list(raw.rglob("*.*")))
    large_files = (
        generate(big, args.large, seed=2) if not big.exists() else len(list(big.rglob("*.*")))
    )
    print(f"corpora: {files} files / {args.rulings} rulings; {large_files} files / {args.large}"
          f" rulings (written in {time.perf_counter() - started:.0f} s)")  # fmt: skip
    rows: list[tuple[str, str]] = []
    ingest_small = job(ingest_unlinked, str(raw), str(out))
    first, first_rss = measure(ingest_small, args.runs, prepare=out)
    rows.append(("first ingest", f"{_rate(args.rulings, first)}, peak RSS {first_rss:.0f} MiB"))
    rows.append(_linked(work, args.linked, args.runs))
    rows.append(_linked(work, args.linked, args.runs, distinct=True))
    again, again_rss = measure(ingest_small, args.runs)
    share = f"{100 * again / first:.1f}% of the first"
    rows.append(("unchanged re-ingest", f"{again:.2f} s = {share}, peak RSS {again_rss:.0f} MiB"))
    rows.append(_mixed_day(work, out, args.runs))
    floor, _ = measure(job(read_floor, str(raw)), args.runs)
    rows.append(("floor: read+decode+hash", _rate(args.rulings, floor)))
    # The rulings' texts: a sightings part leaves out each text its ruling holds.
    naive, _ = measure(job(langdetect_each, str(out / "rulings"), args.naive_sample), args.runs)
    speedup = (args.rulings / first) / (args.naive_sample / naive)
    naive_figure = f"{_rate(args.naive_sample, naive)}; first ingest is {speedup:.0f}x faster"
    rows.append(("naive: langdetect per ruling", naive_figure))
    ingest_large = job(ingest_unlinked, str(big), str(big_out))
    large, large_rss = measure(ingest_large, args.runs, prepare=big_out)
    rows.append(("large ingest", f"{_rate(args.large, large)}, peak RSS {large_rss:.0f} MiB"))
    log, log_rss = measure(job(changelog, str(big_out)), args.runs)
    rows.append(("changelog over the large dataset", f"{log:.2f} s, peak RSS {log_rss:.0f} MiB"))
    bulk, bulk_out = work / "raw-bulk" / "rulings.json", work / "out-bulk"
    if not bulk.exists():
        scryfall_bulk(bulk, args.bulk)
    size = bulk.stat().st_size / 2**20
    streamed, streamed_rss = measure(
        job(ingest_unlinked, str(bulk.parent), str(bulk_out)), args.runs, prepare=bulk_out
    )
    rows.append((f"one bulk file ({size:.0f} MiB)",
                 f"{_rate(args.bulk, streamed)}, peak RSS {streamed_rss:.0f} MiB"))  # fmt: skip
    if MTGJSON.is_dir():  # ../shared/realdata beside the checkout
        rows.append(_real_languages(work, args.runs))
        rows.append(_real_cards(work, args.runs))
        rows.append(_real_files(work, args.runs))
    width = max(len(name) for name, _ in rows)
    print(f"medians of {args.runs} runs:")
    for name, figure in rows:
        print(f"  {name:<{width}}  {figure}")
    _incremental(work, big_out, args)
    print(f"make bench: {time.perf_counter() - started:.0f} s in all")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


def _incremental(work: Path, big_out: Path, args: argparse.Namespace) -> None:
    """The store's figures: a small run on the large dataset, and the daily-job scenario."""
    print(f"small run on the large dataset ({args.large:,} rulings):")
    report_small(small_run(big_out, work), args.large)
    print(f"daily job: one {args.bulk:,}-ruling bulk file, amended, over {args.days} days:")
    report_days(run_days(work, args.days, args.bulk))


if __name__ == "__main__":
    main()
