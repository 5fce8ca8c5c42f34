"""A year of nightly runs: what the dataset weighs and how fast it answers after 365 of them.

`python benchmarks/year.py` writes one MTGJSON set file (10,000 rulings, every text
distinct, ten a card), ingests it, then on each of 365 days rewrites it with 0.2% of its
rulings reworded, 0.1% added and 0.02% removed (as benchmarks/daily.py does) and ingests it
into the same dataset, in this process to keep the year short. It prints the dataset's size
and the sightings parts' share of it, a run's time at the start and the end of the year,
then, after the year, the median of five reads each: one card's sightings and its history
(API), the same card in the DuckDB view, every sighting counted in DuckDB, and the latest
run's changelog with the parts it read. Asserts nothing: figures are read.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

# A daily job's runs are a day apart, past the retention of a superseded version.
os.environ["PIPELINE_RETAIN_SECONDS"] = "0"

from corpus import mtgjson_set
from daily import ADDED, AMENDED, REMOVED
from measure import disk_bytes

from pipeline import ingest, open_dataset
from pipeline.publishing.dataset import load_changeset
from pipeline.schema import PARTITIONED
from pipeline.storage import layout

if TYPE_CHECKING:
    from collections.abc import Callable

MIB = 2**20


def amend(document: dict[str, Any], day: int) -> None:
    """Change the set file DOCUMENT in place as day DAY's build would."""
    rng = random.Random(day)
    cards = document["data"]["cards"]
    places = [(c, r) for c, card in enumerate(cards) for r in range(len(card["rulings"]))]
    for c, r in rng.sample(places, round(len(places) * AMENDED)):
        cards[c]["rulings"][r]["text"] += f" Revised on day {day}."
    for n in range(round(len(places) * ADDED)):
        card = rng.choice(cards)
        card["rulings"].append({"date": "2026-01-01", "text": f"Added on day {day} ({n})."})
    for _ in range(max(1, round(len(places) * REMOVED))):
        card = rng.choice([c for c in cards if len(c["rulings"]) > 1])
        card["rulings"].pop(rng.randrange(len(card["rulings"])))


def distinct(document: dict[str, Any]) -> None:
    """Make every ruling text of DOCUMENT distinct, as a real file's nearly all are."""
    for card in document["data"]["cards"]:
        for n, ruling in enumerate(card["rulings"]):
            ruling["text"] += f" ({card['name']}, ruling {n + 1}.)"


def median_seconds(call: Callable[[], object], runs: int = 5) -> float:
    """The median wall time of RUNS calls of CALL."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def parts_read_by(call: Callable[[], object]) -> list[str]:
    """The part files of partitioned tables that CALL reads."""
    seen: list[str] = []
    original = layout.read_file  # counted, not changed

    def counting(path: Path, name: str, **options: Any) -> Any:  # noqa: ANN401
        if name in PARTITIONED:
            seen.append(f"{path.parent.parent.name}/{path.parent.name}")
        return original(path, name, **options)

    layout.read_file = counting
    try:
        call()
    finally:
        layout.read_file = original
    return seen


def main() -> None:
    """Run the year and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=int, default=365, help="daily runs after the first")
    parser.add_argument("--rulings", type=int, default=10_000, help="rulings in the set file")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument(
        "--reuse", action="store_true", help="only measure the reads of the year left in --work"
    )
    args = parser.parse_args()
    if args.reuse and args.work is None:
        parser.error("--reuse needs --work, the folder of a year already run")
    work = args.work or Path(tempfile.mkdtemp(prefix="year-"))
    out = work / "out"
    if not args.reuse:
        run_year(work, args.days, args.rulings)
    measure_reads(out)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    sys.stdout.flush()


def run_year(work: Path, days: int, rulings: int) -> None:
    """Write the set file in WORK and ingest it on each of DAYS days; print the figures."""
    raw, out = work / "raw", work / "out"
    shutil.rmtree(work, ignore_errors=True)
    path = raw / "SYN.json"
    mtgjson_set(path, rulings)
    document = json.loads(path.read_text("utf-8"))
    distinct(document)
    times = []
    for day in range(days + 1):
        if day:
            amend(document, day)
        path.write_text(json.dumps(document), "utf-8")
        start = time.perf_counter()
        ingest([raw], out=out)
        times.append(time.perf_counter() - start)
        if day in {1, days} or day % 30 == 0:
            print(f"day {day:>3}: {times[-1]:.2f} s, dataset {disk_bytes(out) / MIB:.1f} MiB",
                  flush=True)  # fmt: skip
    parts = sum(p.stat().st_size for p in (out / "sightings").glob("*/*.parquet"))
    size = disk_bytes(out)
    print(f"after {days} days: dataset {size / MIB:.1f} MiB, sightings parts "
          f"{parts / MIB:.1f} MiB ({parts / MIB / max(days, 1):.3f} MiB a day)")  # fmt: skip
    if len(times) > 20:  # noqa: PLR2004 - ten days at each end
        print(
            f"a run's time, median of days 1-10 / of the last 10: "
            f"{statistics.median(times[1:11]):.2f} / {statistics.median(times[-10:]):.2f} s"
        )


def measure_reads(out: Path) -> None:
    """Print the read times of the dataset in OUT, median of five each."""
    dataset = open_dataset(out)
    card = "New 123"
    rows = len(dataset.sightings(card=card))
    print(f"{card}: {rows:,} sightings; reads, median of five:")
    print(f"  sightings(card=…)      {median_seconds(lambda: dataset.sightings(card=card)):.3f} s")
    print(f"  history(card)          {median_seconds(lambda: dataset.history(card)):.3f} s")
    connection = dataset.duckdb()
    query = f"SELECT count(*) FROM sightings WHERE card = '{card}'"  # noqa: S608 - ours
    print(
        f"  DuckDB, the card       {median_seconds(lambda: connection.sql(query).fetchall()):.3f} s"
    )
    total = connection.sql("SELECT count(*) FROM sightings").fetchall()[0][0]
    counted = median_seconds(lambda: connection.sql("SELECT count(*) FROM sightings").fetchall())
    print(f"  DuckDB, all {total:,} sightings counted  {counted:.3f} s")
    read = parts_read_by(lambda: load_changeset(out))
    changelog = median_seconds(lambda: load_changeset(out))
    print(f"  the last run's changelog  {changelog:.3f} s, parts read: {', '.join(read) or 'none'}")


if __name__ == "__main__":
    main()
