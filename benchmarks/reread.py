"""A re-read of real files: what a sightings part costs, carried and written in full.

`python benchmarks/reread.py` copies the 22 MTGJSON 2022 set files of ../shared/realdata,
ingests them, rewords every 300th ruling (about 0.3%, a day of the daily job), ingests them
again, and prints the second run's sightings part (rows, bytes) as this version writes it
and as it is with every file written in full (carry.REBASE_SHARE below zero). Both datasets
must hold the same number of sightings. Asserts nothing: figures are read.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

from pipeline import ingest
from pipeline.storage import carry, layout, store

SETS = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata" / "mtgjson-2022"
EVERY = 300


def reword(raw: Path) -> int:
    """Reword every EVERY-th ruling of the set files in RAW; how many were."""
    seen = changed = 0
    for path in sorted(raw.glob("*.json")):
        document = json.loads(path.read_text("utf-8"))
        for card in document["data"]["cards"]:
            for ruling in card.get("rulings", []):
                seen += 1
                if seen % EVERY == 0:
                    ruling["text"] += " (Revised.)"
                    changed += 1
        path.write_text(json.dumps(document), "utf-8")
    return changed


def two_runs(work: Path, share: float) -> tuple[int, int, int, int]:
    """Both runs into a dataset in WORK; the second part's rows and bytes, all sightings."""
    carry.REBASE_SHARE = share
    raw, out = work / "raw", work / "out"
    shutil.copytree(SETS, raw)
    ingest([raw], out=out, link_translations=False)
    changed = reword(raw)
    ingest([raw], out=out, link_translations=False)
    part = layout.part_path(out, "sightings", 2)
    rows = pq.read_metadata(part).num_rows
    return changed, rows, part.stat().st_size, store.read_table(out, "sightings").num_rows


def main() -> None:
    """Print the figures."""
    if not SETS.is_dir():
        sys.exit(f"{SETS}: not found (../shared/realdata)")
    with tempfile.TemporaryDirectory() as folder:
        carried = two_runs(Path(folder) / "carried", carry.REBASE_SHARE)
        full = two_runs(Path(folder) / "full", -1.0)
    print(f"22 real MTGJSON set files re-read, {carried[0]} rulings reworded:")
    for name, (_, rows, size, total) in (("carried", carried), ("in full", full)):
        print(f"  {name:<8} second part {rows:>6,} rows {size:>9,} bytes; {total:,} sightings")


if __name__ == "__main__":
    main()
