"""Two (or more) checkouts' first ingest of one raw folder, side by side, runs interleaved.

`python benchmarks/sidebyside.py RAW TREE... --runs 7` ingests RAW into a new dataset once per
run and per TREE (a checkout's root: a git worktree of another commit, say), each time in a
fresh child process, alternating the trees so that a machine whose speed drifts weighs on
all of them alike. It prints each run, then per tree the medians: wall seconds, the scan
(until the last batch is read) and what follows it, CPU seconds of the main process and of
its worker processes, and peak RSS. Translation linking is put off, as in bench.py; with
--linked each tree also ingests with it (the command's default), the two alternating, and
each tree's linked/unlinked ratios are printed (wall time, CPU, peak RSS).

Single runs on a shared 2-core machine move by 15% or more; compare medians of runs made in
the same minutes, never figures of different sessions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# The child: one first ingest by a tree's code, its figures as one JSON line.
CHILD = Path(__file__).resolve().parent / "checkout_ingest.py"
_FIGURES = ("wall", "scan", "after", "main_cpu", "workers_cpu", "rss_mib", "workers_rss_mib")


def measure(tree: Path, raw: Path, python: str, *, linked: bool = False) -> dict[str, float]:
    """One first ingest of RAW by the code in TREE, in a child process (LINKED: linking)."""
    with tempfile.TemporaryDirectory(prefix="sidebyside-") as scratch:
        command = [python, str(CHILD), str(tree), str(raw), str(Path(scratch) / "out")]
        done = subprocess.run(  # noqa: S603 - the interpreter given and our own script
            command + (["--linked"] if linked else []),
            capture_output=True,
            text=True,
            check=False,
            cwd=scratch,
        )
    if done.returncode:
        sys.exit(f"{tree}: the ingest failed:\n{done.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _line(label: str, figures: dict[str, float]) -> str:
    return (
        f"{label}  wall {figures['wall']:6.2f} s  scan {figures['scan']:6.2f}  "
        f"after {figures['after']:5.2f}  CPU main {figures['main_cpu']:5.2f} + workers "
        f"{figures['workers_cpu']:6.2f} s  peak {figures['rss_mib']:5.0f} MiB (workers "
        f"{figures.get('workers_rss_mib', 0.0):4.0f})"
    )


def main() -> None:
    """Measure each tree --runs times, interleaved; print the runs and the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("raw", type=Path, help="the folder of raw files to ingest")
    parser.add_argument("trees", type=Path, nargs="+", help="checkouts to compare")
    parser.add_argument("--runs", type=int, default=5, help="runs per tree (default 5)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter to use")
    parser.add_argument(
        "--linked", action="store_true", help="each tree linked and unlinked, alternating"
    )
    args = parser.parse_args()
    modes = [
        (tree, linked)
        for tree in args.trees
        for linked in ((True, False) if args.linked else (False,))
    ]
    labels = {mode: f"{mode[0]!s}{' linked' if mode[1] else ''}" for mode in modes}
    width = max(map(len, labels.values()))
    runs: dict[tuple[Path, bool], list[dict[str, float]]] = {mode: [] for mode in modes}
    for n in range(args.runs):
        for mode in modes:
            figures = measure(mode[0].resolve(), args.raw.resolve(), args.python, linked=mode[1])
            runs[mode].append(figures)
            print(_line(f"run {n + 1} {labels[mode]:{width}}", figures), flush=True)
    print(f"medians of {args.runs} runs:")
    medians = {
        mode: {name: statistics.median(f[name] for f in measured) for name in _FIGURES}
        for mode, measured in runs.items()
    }
    for mode, figures in medians.items():
        print(_line(f"  {labels[mode]:{width}}", figures))
    if args.linked:
        for tree in args.trees:
            on, off = medians[tree, True], medians[tree, False]
            cpu = (on["main_cpu"] + on["workers_cpu"]) / (off["main_cpu"] + off["workers_cpu"])
            print(
                f"{tree} linked / unlinked: wall {on['wall'] / off['wall']:.2f}, CPU {cpu:.2f}, "
                f"peak RSS {on['rss_mib'] / off['rss_mib']:.2f}"
            )
    if len(args.trees) > 1:
        for linked in sorted({mode[1] for mode in modes}, reverse=True):
            first = medians[args.trees[0], linked]["wall"]
            for tree in args.trees[1:]:
                ratio = medians[tree, linked]["wall"] / first
                kind = "linked" if linked else "unlinked"
                print(
                    f"{tree} / {args.trees[0]}, {kind}: {ratio:.3f} (median wall over median wall)"
                )


if __name__ == "__main__":
    main()
