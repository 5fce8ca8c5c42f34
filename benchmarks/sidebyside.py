"""Two (or more) checkouts' first ingest of one raw folder, side by side, runs interleaved.

`python benchmarks/sidebyside.py RAW TREE... --runs 7` ingests RAW into a new dataset once per
run and per TREE (a checkout's root: a git worktree of another commit, say), each time in a
fresh child process, alternating the trees so that a machine whose speed drifts weighs on
all of them alike. It prints each run, then per tree the medians: wall seconds, the scan
(until the last batch is read) and what follows it, CPU seconds of the main process and of
its worker processes, and peak RSS. Translation linking is put off, as in bench.py.

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

from measure import OWN_PEAK

# Run in a child process with a tree's root first on sys.path; prints one JSON line.
_CHILD = (
    """
import inspect, json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
"""
    + OWN_PEAK
    + """
import pipeline.ingest
ingest_module = sys.modules["pipeline.ingest"]
executor = ingest_module.executor
scanned = []
original = executor.run

def run(*args, **kwargs):
    yield from original(*args, **kwargs)
    scanned.append(time.perf_counter())

executor.run = run
# Checkouts older than the option linked no translations on a first ingest anyway.
options = {"link_translations": False}
parameters = inspect.signature(ingest_module.ingest).parameters
if "link_translations" not in parameters and "options" not in parameters:  # keywords: options
    options = {}
start, cpu = time.perf_counter(), time.process_time()
ingest_module.ingest([Path(sys.argv[2])], out=Path(sys.argv[3]), **options)
wall, main_cpu = time.perf_counter() - start, time.process_time() - cpu
scan_end = scanned[0] if scanned else time.perf_counter()
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "wall": wall,
    "scan": scan_end - start,
    "after": wall - (scan_end - start),
    "main_cpu": main_cpu,
    "workers_cpu": children.ru_utime + children.ru_stime,
    "rss_mib": own_peak_mib(),
}))
"""
)
_FIGURES = ("wall", "scan", "after", "main_cpu", "workers_cpu", "rss_mib")


def measure(tree: Path, raw: Path, python: str) -> dict[str, float]:
    """One first ingest of RAW by the code in TREE, in a child process."""
    with tempfile.TemporaryDirectory(prefix="sidebyside-") as scratch:
        done = subprocess.run(  # noqa: S603 - the interpreter given and our own script
            [python, "-c", _CHILD, str(tree), str(raw), str(Path(scratch) / "out")],
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
        f"{figures['workers_cpu']:6.2f} s  peak {figures['rss_mib']:5.0f} MiB"
    )


def main() -> None:
    """Measure each tree --runs times, interleaved; print the runs and the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("raw", type=Path, help="the folder of raw files to ingest")
    parser.add_argument("trees", type=Path, nargs="+", help="checkouts to compare")
    parser.add_argument("--runs", type=int, default=5, help="runs per tree (default 5)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter to use")
    args = parser.parse_args()
    width = max(len(str(tree)) for tree in args.trees)
    runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in args.trees}
    for n in range(args.runs):
        for tree in args.trees:
            figures = measure(tree.resolve(), args.raw.resolve(), args.python)
            runs[tree].append(figures)
            print(_line(f"run {n + 1} {tree!s:{width}}", figures), flush=True)
    print(f"medians of {args.runs} runs:")
    for tree, measured in runs.items():
        medians = {name: statistics.median(f[name] for f in measured) for name in _FIGURES}
        print(_line(f"  {tree!s:{width}}", medians))
    if len(args.trees) > 1:
        first = statistics.median(f["wall"] for f in runs[args.trees[0]])
        for tree in args.trees[1:]:
            ratio = statistics.median(f["wall"] for f in runs[tree]) / first
            print(f"{tree} / {args.trees[0]}: {ratio:.3f} (median wall over median wall)")


if __name__ == "__main__":
    main()
