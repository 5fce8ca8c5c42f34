"""A daily job for a month: each run should cost what its input costs, not the history.

`python benchmarks/daily.py --days 30` writes one Scryfall bulk rulings file (120,000
rulings), ingests it, then each day rewrites it at the same path with 0.2% of its rulings
reworded, 0.1% added and 0.02% removed (seeded) and ingests it into the same dataset, each
day in a fresh process, as `pipeline ingest` would (the file read in a worker process,
translations linked; peak RSS is the larger of the main process's and the worker's). It
prints each day's time, peak RSS, dataset size and growth, the slopes, and whether issue
18's targets hold; then the time and memory of a run adding 1,000 rulings of new cards to a
1,000,000-ruling dataset. Asserts nothing: figures are read.

A daily job's runs are a day apart, so a superseded version is long past its retention
(commit.RETAIN_SECONDS, one hour) when the next run commits; these runs are seconds apart,
so they run with PIPELINE_RETAIN_SECONDS=0 to keep on disk what a daily job would keep.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.compute as pc
import pyarrow.parquet as pq
from corpus import generate, mtgjson_set, scryfall_bulk
from measure import Figures, disk_bytes, job, profile_child, run_child
from timed import ingest_as_cli, ingest_unlinked

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

AMENDED, ADDED, REMOVED = 0.002, 0.001, 0.0002  # shares of the rulings changed each day
# What a daily job keeps on disk: the version in force and the one before (see above).
DAILY_ENV = {"PIPELINE_RETAIN_SECONDS": "0"}
MIB = 2**20
# The daily job's targets: day 30 / day 1 time, peak RSS spread and ceiling, MiB a day.
TIME_RATIO, RSS_SPREAD, RSS_CEILING, GROWTH_CEILING = 1.25, 0.10, 600.0, 10.0
STEADY_CEILING = 2.0  # the carried sightings' target: MiB a day once the first daily run is past
SMALL_SECONDS, SMALL_RSS = 2.0, 500.0
_ENDS = 5  # days at each end whose median times are compared


@dataclass(frozen=True, slots=True)
class Day:
    """One day's run: its figures, the dataset's size after it, and the changes it found."""

    day: int
    figures: Figures
    size: int
    changes: dict[str, int]


def amend(items: list[dict[str, str]], day: int) -> None:
    """Change ITEMS in place as day DAY's bulk file would: reworded, added, removed rulings."""
    rng = random.Random(day)
    count = len(items)
    for index in rng.sample(range(count), round(count * AMENDED)):
        items[index]["comment"] += f" This ruling was revised on day {day}."
    for n in range(round(count * ADDED)):
        # A new ruling for a card that has some, next to them as in Scryfall's file.
        at = rng.randrange(len(items))
        text = f"Added on day {day} ({n}): the permanent's controller {rng.choice(_VERBS)}."
        items.insert(at + 1, {**items[at], "comment": text})
    for _ in range(max(1, round(count * REMOVED))):
        items.pop(rng.randrange(len(items)))


_VERBS = [
    "chooses the order of the triggers",
    "may pay the cost any number of times",
    "reveals the card as it enters",
    "gets priority first after it resolves",
    "can't respond to this action",
]


def _changes(out: Path, run: int) -> dict[str, int]:
    """How many changes of each kind run RUN found (its part of the changes table)."""
    part = out / "changes" / f"run={run}" / "part-0.parquet"
    if not part.exists():
        return {}
    counts = pc.value_counts(pq.read_table(part, columns=["change"])["change"])
    kinds, numbers = counts.field("values").to_pylist(), counts.field("counts").to_numpy()
    return {str(kind): int(number) for kind, number in zip(kinds, numbers, strict=True)}


def _slope(values: list[float]) -> float:
    """The least-squares slope of VALUES against their index."""
    n = len(values)
    if n < 2:  # noqa: PLR2004 - a line needs two points
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    spread = sum((x - mean_x) ** 2 for x in range(n))
    return sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values)) / spread


def run_days(work: Path, days: int, rulings: int) -> Iterator[Day]:
    """Ingest a bulk file on day 0, then an amended copy of it on each of DAYS days."""
    bulk, out = work / "raw-daily" / "rulings.json", work / "out-daily"
    shutil.rmtree(out, ignore_errors=True)
    scryfall_bulk(bulk, rulings, distinct=True)  # random hashes, as in a real file
    items = json.loads(bulk.read_text(encoding="utf-8"))
    daily = job(ingest_as_cli, str(bulk.parent), str(out))
    for day in range(days + 1):
        if day:
            amend(items, day)
            bulk.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
        figures = run_child(daily, env=DAILY_ENV)
        yield Day(day, figures, disk_bytes(out), _changes(out, day + 1))


def report_days(days: Iterable[Day]) -> None:
    """Print the table of DAYS as they come, then the slopes and the targets."""
    print("day  time (s)  RSS main / workers (MiB)  dataset (MiB)  growth (MiB)  changes")
    before = None
    history: list[Day] = []
    for d in days:
        history.append(d)
        growth = "" if before is None else f"{(d.size - before) / MIB:+.2f}"
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(d.changes.items()))
        f = d.figures
        print(f"{d.day:>3}  {f.seconds:>8.2f}  {f.own_mb:>11.0f} / {f.workers_mb:<11.0f}"
              f"  {d.size / MIB:>13.1f}  {growth:>12}  {kinds}", flush=True)  # fmt: skip
        before = d.size
    daily = history[1:]  # day 0 is a first ingest, not a daily run
    if not daily:
        return
    times = [d.figures.seconds for d in daily]
    rss = [d.figures.rss_mb for d in daily]
    sizes = [d.size / MIB for d in daily]
    growths = [(b.size - a.size) / MIB for a, b in itertools.pairwise(history)]
    ratio = times[-1] / times[0]
    spread = max(rss) / min(rss) - 1
    peak = max(d.figures.rss_mb for d in history)
    print(f"slopes over days 1-{daily[-1].day} (least squares): time {_slope(times):+.3f} s/day,"
          f" peak RSS {_slope(rss):+.2f} MiB/day,"
          f" dataset {_slope(sizes):+.2f} MiB/day")  # fmt: skip
    print(f"day {daily[-1].day} time / day 1 time: {ratio:.2f}")
    if len(times) >= 2 * _ENDS:  # one day's time moves by 20% or more: the ends' medians too
        first, last = statistics.median(times[:_ENDS]), statistics.median(times[-_ENDS:])
        print(f"median of the last {_ENDS} days / of the first {_ENDS}: "
              f"{last:.2f} / {first:.2f} s = {last / first:.2f}")  # fmt: skip
    _target(f"day {daily[-1].day}'s time within {TIME_RATIO}x of day 1's", ratio <= TIME_RATIO)
    _target(
        f"peak RSS flat: days 1-{daily[-1].day} within {RSS_SPREAD:.0%} "
        f"({min(rss):.0f}-{max(rss):.0f} MiB, {spread:.1%})",
        spread <= RSS_SPREAD,
    )
    _target(f"peak RSS <= {RSS_CEILING:.0f} MiB every day ({peak:.0f} MiB)", peak <= RSS_CEILING)
    largest = max(range(len(growths)), key=growths.__getitem__)
    _target(
        f"dataset growth <= {GROWTH_CEILING:.0f} MiB a day, day 1 included (largest "
        f"{growths[largest]:.2f} MiB, day {largest + 1})",
        max(growths) <= GROWTH_CEILING,
    )
    if len(growths) > 1:
        # Day 1 also keeps day 0's version of the rewritten tables (the one before the
        # version in force); from day 2 on the dataset grows by what a day brings.
        steady = statistics.median(growths[1:])
        print(f"MiB a day, days 2-{daily[-1].day} (median): {steady:.2f}"
              f" (mean {statistics.mean(growths[1:]):.2f}; day 1 {growths[0]:+.2f}, with"
              " the version kept before the one in force)")  # fmt: skip
        _target(f"the dataset grows <= {STEADY_CEILING:.0f} MiB a day", steady <= STEADY_CEILING)


def _target(name: str, held: bool) -> None:  # noqa: FBT001 - a verdict, printed
    print(f"  {'holds ' if held else 'MISSED'}  {name}")


def small_run(big_out: Path, work: Path, added: int = 1_000) -> Figures:
    """Time one run adding ADDED rulings of new cards to the dataset in BIG_OUT.

    An MTGJSON set file, whose rulings name their cards: Scryfall rulings without a catalog
    have no card, and all of them form one snapshot (a daily run of them would compare every
    ruling with every other).
    """
    extra = work / f"raw-extra-{time.time_ns()}"
    mtgjson_set(extra / "set.json", added, prefix=f"Extra {extra.name[-6:]}")
    try:
        return run_child(job(ingest_as_cli, str(extra), str(big_out)), env=DAILY_ENV)
    finally:
        shutil.rmtree(extra, ignore_errors=True)


def report_small(figures: Figures, large: int, added: int = 1_000) -> None:
    """Print the small run's figures and its targets."""
    print(f"{added:,} new rulings into a {large:,}-ruling dataset: {figures.seconds:.2f} s, "
          f"peak RSS {figures.own_mb:.0f} / {figures.workers_mb:.0f} MiB"
          " (main / workers)")  # fmt: skip
    _target(f"<= {SMALL_SECONDS:.0f} s", figures.seconds <= SMALL_SECONDS)
    _target(f"<= {SMALL_RSS:.0f} MiB", figures.rss_mb <= SMALL_RSS)


def build_large(work: Path, large: int) -> Path:
    """Write the LARGE-ruling corpus (as bench.py does) and ingest it once; its dataset."""
    raw, out = work / "raw-large", work / "out-large"
    if not raw.exists():
        generate(raw, large, seed=2)
    shutil.rmtree(out, ignore_errors=True)
    built = run_child(job(ingest_unlinked, str(raw), str(out)), env=DAILY_ENV)
    print(f"{large:,}-ruling dataset built in {built.seconds:.1f} s, "
          f"{disk_bytes(out) / MIB:.0f} MiB on disk")  # fmt: skip
    return out


def main() -> None:
    """Command line: the daily scenario, the small run on a large dataset, a profile."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=int, default=30, help="daily runs after the first")
    parser.add_argument("--rulings", type=int, default=120_000, help="rulings in the bulk file")
    parser.add_argument("--large", type=int, default=1_000_000, help="large dataset (0: skip)")
    parser.add_argument("--profile", action="store_true", help="profile one more day")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="rulings-daily-"))
    started = time.perf_counter()
    print(f"daily job: {args.rulings:,}-ruling bulk file, {args.days} days after the first")
    report_days(run_days(work, args.days, args.rulings))
    if args.profile:
        print_profile(work, args.days + 1)
    if args.large:
        report_small(small_run(build_large(work, args.large), work), args.large)
    print(f"({time.perf_counter() - started:.0f} s in all)")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


def print_profile(work: Path, day: int) -> None:
    """Profile one more daily run (day DAY) of the dataset run_days() left in WORK."""
    bulk, out = work / "raw-daily" / "rulings.json", work / "out-daily"
    items = json.loads(bulk.read_text(encoding="utf-8"))
    amend(items, day)
    bulk.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    print(f"profile of day {day} (main process; the workers are not profiled):")
    sys.stdout.write(profile_child(job(ingest_as_cli, str(bulk.parent), str(out)), DAILY_ENV))


if __name__ == "__main__":
    main()
