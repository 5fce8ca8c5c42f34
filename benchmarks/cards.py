"""The card facts of the 22 MTGJSON set files and of an AllPrintings-sized file: time, memory.

`python benchmarks/cards.py` measures, each in fresh child processes (--runs, median):
- `catalog 22 files`: card_files.facts() of each of ../shared/realdata's 22 set files, the
  records folded across the files (reading.cards.fold): 8,164 card objects, 5,698 cards;
- `catalog AllPrintings`: the same of one v5 AllPrintings.json made in a temporary folder
  from the 22 sets repeated --copies times (the copies' codes suffixed 2, 3, …: the same
  cards printed again), 10 copies by default: 81,640 card objects;
- `parser 22 files, cards` / `… no cards`: the MTGJSON parser over the 22 files, every
  ruling read, with ParsedDocument.cards filled and with the noting of cards left out:
  what filling the cards adds to reading the files.
Seconds are wall-clock; peak is the child's peak RSS (VmHWM), `base` its RSS once the
modules are imported, before the clock starts. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from peak import own_peak_mib, rss_mib

HERE = Path(__file__).resolve().parent
SETS = HERE.parent.parent / "shared" / "realdata" / "mtgjson-2022"


def build(sets: list[Path], path: Path, copies: int) -> int:
    """Write a v5 AllPrintings of SETS, each COPIES times, to PATH; return its card objects."""
    count = 0
    with path.open("wb") as out:
        for n, (copy, set_path) in enumerate((c, p) for c in range(copies) for p in sets):
            built = json.loads(set_path.read_bytes())
            code = built["data"]["code"] + (str(copy + 1) if copy else "")
            built["data"]["code"] = code
            count += len(built["data"]["cards"])
            data = json.dumps(built["data"], ensure_ascii=False).encode()
            piece = (
                b", " if n else b'{"meta": ' + json.dumps(built["meta"]).encode() + b', "data": {'
            )
            out.write(piece + json.dumps(code).encode() + b": " + data)
        out.write(b"}}")
    return count


def child(mode: str, paths: list[Path]) -> dict[str, Any]:
    """Run one measurement in this process: MODE over PATHS."""
    from pipeline.folding import card_files  # noqa: PLC0415 - imported before the clock
    from pipeline.limits import Limits  # noqa: PLC0415
    from pipeline.models import SourceHints  # noqa: PLC0415
    from pipeline.reading.cards import fold  # noqa: PLC0415
    from pipeline.reading.parsers import mtgjson, parse  # noqa: PLC0415
    from pipeline.reading.read import to_document  # noqa: PLC0415

    if mode == "parser-no-cards":  # the cards go by unnoted
        mtgjson._noting = lambda group, _info, _folder: iter(group)  # type: ignore[assignment]  # noqa: SLF001
    base = rss_mib()
    start = time.perf_counter()
    if mode == "catalog":
        limits = Limits()
        cards = fold(f for path in paths for f in card_files.facts(path, limits))
        records, count = 0, len(cards)
    else:
        count, records = 0, 0
        for path in paths:
            parsed = parse(to_document(path.name, path.read_bytes(), SourceHints()))
            records += sum(1 for _ in parsed.rulings)
            count += len(parsed.cards)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak": own_peak_mib(), "base": base, "cards": count}


def measure(mode: str, paths: list[Path], runs: int) -> dict[str, Any]:
    """The medians of RUNS fresh children running MODE over PATHS."""
    found = []
    for _ in range(runs):
        args = [sys.executable, __file__, "--child", mode, *map(str, paths)]
        done = subprocess.run(args, capture_output=True, text=True, check=True)  # noqa: S603
        found.append(json.loads(done.stdout.splitlines()[-1]))
    return {key: statistics.median(f[key] for f in found) for key in found[0]}


def main() -> None:
    """Build the AllPrintings file, measure each input, print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="children per row (median)")
    parser.add_argument("--copies", type=int, default=10, help="each set this many times")
    parser.add_argument("--sets", type=Path, default=SETS, help="the folder of set files")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        mode, *paths = options.child
        print(json.dumps(child(mode, [Path(p) for p in paths])))
        return
    sets = sorted(options.sets.glob("*.json"))
    rows = [
        (
            "catalog 22 files",
            "catalog",
            sets,
            sum(len(json.loads(p.read_bytes())["data"]["cards"]) for p in sets),
        ),
        ("parser 22 files, cards", "parser", sets, None),
        ("parser 22 files, no cards", "parser-no-cards", sets, None),
    ]
    with tempfile.TemporaryDirectory() as folder:
        whole = Path(folder) / "AllPrintings.json"
        objects = build(sets, whole, options.copies)
        size = whole.stat().st_size / 2**20
        rows.append((f"catalog AllPrintings ({size:,.0f} MiB)", "catalog", [whole], objects))
        print(f"median of {options.runs} runs; peak and base RSS in MiB")
        print(f"{'input':<34} {'objects':>8} {'cards':>7} {'seconds':>8} {'peak':>7} {'base':>6}")
        for name, mode, paths, count in rows:
            got = measure(mode, paths, options.runs)
            shown = f"{count:,}" if count is not None else "-"
            print(
                f"{name:<34} {shown:>8} {got['cards']:>7,} {got['seconds']:>8.2f}"
                f" {got['peak']:>7.0f} {got['base']:>6.0f}"
            )


if __name__ == "__main__":
    main()
