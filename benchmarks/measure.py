"""Timing a piece of pipeline code in a fresh child process: its seconds and peak memory.

Each measurement starts a new interpreter (child.py) so that its peak resident memory (RSS)
is its own. What it runs is a function of timed.py, named with job(); the imports are made
before the clock starts, so the figures are the pipeline's work.
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
from typing import TYPE_CHECKING, ParamSpec

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = Path(__file__).resolve().parent
P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class Job:
    """What one child process runs and times: a function of timed.py and its arguments."""

    name: str
    call: str  # the arguments as JSON: {"args": [...], "kwargs": {...}}


def job(function: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> Job:
    """FUNCTION of timed.py with its arguments (str and int: they travel to the child as JSON)."""
    if function.__module__ != "timed":
        msg = f"a child runs a function of benchmarks/timed.py, not {function.__module__}"
        raise ValueError(msg)
    return Job(function.__name__, json.dumps({"args": args, "kwargs": kwargs}))


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
    # The pipeline of this checkout, not one installed elsewhere.
    path = [str(HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), **(extra or {})}


def _run(options: list[str], env: dict[str, str] | None, what: str) -> str:
    """The standard output of child.py run with OPTIONS in a fresh interpreter (ENV added)."""
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, str(HERE / "child.py"), *options],
        capture_output=True,
        text=True,
        check=False,
        env=_environment(env),
    )
    if done.returncode != 0:
        msg = f"the {what} child failed (exit {done.returncode}):\n{done.stderr[-3000:]}"
        raise RuntimeError(msg)
    return done.stdout


def run_child(timed: Job, env: dict[str, str] | None = None) -> Figures:
    """Run TIMED once in a fresh process (ENV added to its environment) and return its figures."""
    output = _run([timed.name, timed.call], env, "measured")
    figures = json.loads(output.strip().splitlines()[-1])
    return Figures(figures["seconds"], figures["own_mb"], figures["workers_mb"])


def measure(timed: Job, runs: int, prepare: Path | None = None) -> tuple[float, float]:
    """Median seconds and the largest peak RSS (MiB) of TIMED over RUNS fresh processes.

    PREPARE, a folder, is removed before each run.
    """
    seconds, rss = [], []
    for _ in range(runs):
        if prepare is not None:
            shutil.rmtree(prepare, ignore_errors=True)
        figures = run_child(timed)
        seconds.append(figures.seconds)
        rss.append(figures.rss_mb)
    return statistics.median(seconds), max(rss)


def profile_child(timed: Job, env: dict[str, str] | None = None, top: int = 15) -> str:
    """Run TIMED once under cProfile in a fresh process; its TOP cumulative entries, RSS peaks."""
    return _run([timed.name, timed.call, "--profile", str(top)], env, "profiled")


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
