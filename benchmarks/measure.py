"""Timing a piece of pipeline code in a fresh child process: its seconds and peak memory.

Each measurement starts a new interpreter so that its peak resident memory (RSS) is its
own; the imports are made before the clock starts, so the figures are the pipeline's work.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Imports are made before the clock starts: the figures are the pipeline's work. pandas is
# among them: pyarrow imports it (0.2 s) the first time it converts a Python list.
# The package first, as in the command line: it chooses Arrow's allocator before pyarrow
# loads (pipeline/allocator.py), which importing pandas first would do.
SETUP = (
    "from pipeline import ingest, models\nimport pandas\n"
    "from pipeline.publishing import dataset, render\nfrom pipeline.reading import read"
)
# The throughput figures put off linking translations: the synthetic corpus holds 10% made-up
# foreign rulings, each linked among every English ruling (bench.py times that apart).
INGEST = "ingest([Path({raw!r})], out=Path({out!r}), link_translations=False)"
LINKED = "ingest([Path({raw!r})], out=Path({out!r}))"
# What `pipeline ingest` runs: every file read in a worker process (isolated: a hostile file
# costs its worker), translations linked. A daily job is this command.
AS_CLI = "ingest([Path({raw!r})], out=Path({out!r}), isolate=True)"
# A child's own peak RSS in MiB, as code for its script. VmHWM (Linux) is its own high-water
# mark; ru_maxrss is not: Linux carries it across exec, so a child reports at least the RSS
# its parent had when starting it (a daily.py holding its bulk file: some 460 MiB).
OWN_PEAK = """
def own_peak_mib():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""
# Run inside a child process: prints the seconds and peak RSS (MiB) of what it timed.
_CHILD = """
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
{setup}
{own_peak}
start = time.perf_counter()
{body}
seconds = time.perf_counter() - start
own = own_peak_mib()
workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({{"seconds": seconds, "own_mb": own, "workers_mb": workers}}))
"""
# The same body under cProfile, while a thread samples the RSS and the pipeline function
# the main thread is in: the report says where the time goes and where memory peaks.
_PROFILED = """
import cProfile, io, pstats, sys, threading, time
from pathlib import Path
sys.path.insert(0, {root!r})
{setup}
samples, done = [], threading.Event()
main = threading.main_thread().ident

def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0

def sample():
    while not done.wait(0.02):
        frame, where = sys._current_frames().get(main), "?"
        while frame is not None:
            if "/pipeline/" in frame.f_code.co_filename:
                name = Path(frame.f_code.co_filename).stem
                where = f"{{name}}.{{frame.f_code.co_name}}:{{frame.f_lineno}}"
                break
            frame = frame.f_back
        samples.append((rss_mb(), where))

sampler = threading.Thread(target=sample, daemon=True)
profile = cProfile.Profile()
sampler.start()
profile.enable()
{body}
profile.disable()
done.set()
sampler.join()
text = io.StringIO()
pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats({top})
print(text.getvalue())
peaks = {{}}
for rss, where in samples:
    peaks[where] = max(rss, peaks.get(where, 0.0))
print("main-process RSS peak (MiB) while in, sampled every 20 ms:")
for where, rss in sorted(peaks.items(), key=lambda item: -item[1])[:{top}]:
    print(f"  {{rss:8.0f}}  {{where}}")
"""


@dataclass(frozen=True, slots=True)
class Figures:
    """What one child process measured: seconds, peak RSS of itself and of its workers."""

    seconds: float
    own_mb: float
    workers_mb: float

    @property
    def rss_mb(self) -> float:
        """The larger of the two peaks: what the machine had to hold at most in one process."""
        return max(self.own_mb, self.workers_mb)


def _environment(extra: dict[str, str] | None) -> dict[str, str]:
    return {**os.environ, **(extra or {})}


def _run(code: str, env: dict[str, str] | None, what: str) -> str:
    """Run CODE in a fresh interpreter (ENV added to its environment); its standard output."""
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env=_environment(env),
    )
    if done.returncode != 0:
        msg = f"the {what} child failed (exit {done.returncode}):\n{done.stderr[-3000:]}"
        raise RuntimeError(msg)
    return done.stdout


def run_child(body: str, env: dict[str, str] | None = None) -> Figures:
    """Run BODY once in a fresh process (ENV added to its environment) and return its figures."""
    code = _CHILD.format(root=str(HERE.parent), setup=SETUP, own_peak=OWN_PEAK, body=body)
    figures = json.loads(_run(code, env, "measured").strip().splitlines()[-1])
    return Figures(figures["seconds"], figures["own_mb"], figures["workers_mb"])


def measure(body: str, runs: int, prepare: str | None = None) -> tuple[float, float]:
    """Median seconds and the largest peak RSS (MiB) of BODY over RUNS fresh processes.

    PREPARE, a folder, is removed before each run.
    """
    seconds, rss = [], []
    for _ in range(runs):
        if prepare is not None:
            shutil.rmtree(prepare, ignore_errors=True)
        figures = run_child(body)
        seconds.append(figures.seconds)
        rss.append(figures.rss_mb)
    return statistics.median(seconds), max(rss)


def profile_child(body: str, env: dict[str, str] | None = None, top: int = 15) -> str:
    """Run BODY once under cProfile in a fresh process; its TOP cumulative entries and RSS peaks."""
    code = _PROFILED.format(root=str(HERE.parent), setup=SETUP, body=body, top=top)
    return _run(code, env, "profiled")


def disk_bytes(folder: Path) -> int:
    """Bytes of all regular files under FOLDER, each hard-linked file counted once."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, _, names in os.walk(folder):
        for name in names:
            info = Path(root, name).lstat()
            if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            total += info.st_size
    return total
