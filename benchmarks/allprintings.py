"""One build three ways: the 22 set files, one AllPrintings.json, one AllPrintings.json.xz.

`python benchmarks/allprintings.py` builds an AllPrintings.json from ../shared/realdata's 22
MTGJSON set files (their first meta, each set's data under its code, as MTGJSON builds it)
and its .xz (preset 6, xz's default), in a temporary folder, written a set at a time. Then
it times `pipeline ingest` on each of the three folders in fresh processes, as the command
runs it (every file read in a worker process; the peak RSS of the main process and of the
worker, printed apart; benchmarks/measure.py), and checks that the three datasets hold the
same rulings table. Prints a table; asserts nothing. `--copies 5` puts each set in five
times (the copies under other codes): an AllPrintings of some 250 MB, MTGJSON's size.
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.dataset as ds
from measure import Figures, job, run_child
from timed import ingest_as_cli

SETS = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata" / "mtgjson-2022"
MIB = 2**20


def build(sets: list[Path], folder: Path, copies: int) -> tuple[Path, Path, Path]:
    """The set files, AllPrintings.json and AllPrintings.json.xz of SETS in FOLDER.

    Each set is there COPIES times (the copies' codes suffixed 2, 3, …: the same cards and
    rulings under other sets). Written a set at a time: the build is never held whole.
    """
    many = folder / "sets"
    plain, packed = folder / "one" / "AllPrintings.json", folder / "xz" / "AllPrintings.json.xz"
    for made in (many, plain.parent, packed.parent):
        made.mkdir()
    with plain.open("wb") as out, lzma.open(packed, "wb", preset=6) as xz:
        targets: tuple[IO[bytes], ...] = (out, xz)
        for n, (copy, path) in enumerate((c, p) for c in range(copies) for p in sets):
            built = json.loads(path.read_bytes())
            code = built["data"]["code"] + (str(copy + 1) if copy else "")
            built["data"]["code"] = code
            data = json.dumps(built["data"], ensure_ascii=False).encode()
            meta = json.dumps(built["meta"]).encode()
            if copy:
                (many / f"{code}.json").write_bytes(
                    b'{"meta": ' + meta + b', "data": ' + data + b"}"
                )
            else:  # the real file, as it is
                shutil.copy(path, many / path.name)
            piece = b", " if n else b'{"meta": ' + meta + b', "data": {'
            piece += json.dumps(code).encode() + b": " + data
            for target in targets:
                target.write(piece)
        for target in targets:
            target.write(b"}}")
    return many, plain, packed


def rulings(out: Path) -> pa.Table:
    """The rulings table of the dataset in OUT, sorted by its key."""
    table = ds.dataset(out / "rulings", format="parquet").to_table()
    return table.sort_by([("text_hash", "ascending"), ("card", "ascending"),
                          ("effective_date", "ascending")])  # fmt: skip


def main() -> None:
    """Build the three inputs, time an ingest of each, print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1, help="runs per input (median time)")
    parser.add_argument("--sets", type=Path, default=SETS, help="the folder of set files")
    parser.add_argument(
        "--copies", type=int, default=1, help="each set this many times (5: some 250 MB)"
    )
    args = parser.parse_args()
    sets = sorted(args.sets.glob("*.json"))
    with tempfile.TemporaryDirectory(prefix="allprintings-") as temp:
        many, plain, packed = build(sets, Path(temp), args.copies)
        files = sorted(many.iterdir())
        inputs = {
            f"{len(files)} set files": (many, sum(p.stat().st_size for p in files)),
            "AllPrintings.json": (plain.parent, plain.stat().st_size),
            "AllPrintings.json.xz": (packed.parent, packed.stat().st_size),
        }
        print(f"{'input':<22}{'stored MiB':>11}{'seconds':>9}{'RSS MiB: main':>15}"
              f"{'worker':>8}{'rulings':>9}")  # fmt: skip
        tables = []
        for label, (raw, size) in inputs.items():
            out = Path(temp) / f"out-{raw.name}"
            runs: list[Figures] = []
            for _ in range(args.runs):
                shutil.rmtree(out, ignore_errors=True)
                runs.append(run_child(job(ingest_as_cli, str(raw), str(out))))
            seconds = statistics.median(f.seconds for f in runs)
            own, worker = max(f.own_mb for f in runs), max(f.workers_mb for f in runs)
            tables.append(rulings(out))
            print(f"{label:<22}{size / MIB:>11.1f}{seconds:>9.2f}{own:>15.0f}{worker:>8.0f}"
                  f"{len(tables[-1]):>9}")  # fmt: skip
        same = all(table.equals(tables[0]) for table in tables)
        print(f"the same rulings table from all three: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
