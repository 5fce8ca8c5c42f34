"""Caps on what one input file may hold and cost, so a hostile file costs only its rejection.

The caps sit far above the real data (see README, "Limits") and are raised with environment
variables; the run reads them once and hands them to every worker with its jobs.
"""

from __future__ import annotations

import os
import resource
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from pipeline.errors import InputError, UsageError

if TYPE_CHECKING:
    from collections.abc import Generator
    from types import FrameType

# A JSON number longer than this is no count or date (real ones have at most 8 characters),
# and yajl's time grows with the square of a number's length (10 million digits: 5 s).
MAX_NUMBER = 16_384
# A worker past its CPU budget by this factor (a reader stuck in C code, where the timer
# cannot interrupt it) is stopped by the kernel: its files are then "crashed".
_CPU_SLACK = 2


@dataclass(frozen=True, slots=True)
class Limits:
    """The caps of one run; each field is set by the environment variable in its metadata."""

    depth: int = 64  # PIPELINE_MAX_DEPTH: JSON nesting levels (real files: 7)
    html_depth: int = 10_000  # PIPELINE_MAX_HTML_DEPTH: HTML nesting levels (real pages: 25)
    string: int = 1 << 20  # PIPELINE_MAX_STRING: bytes of one JSON string (real: 1,166)
    ruling: int = 50_000  # PIPELINE_MAX_RULING: characters of one ruling (real: 3,865)
    memory: int = 2 << 30  # PIPELINE_FILE_MEMORY: bytes a worker may grow by for one file
    seconds: float = 300.0  # PIPELINE_FILE_SECONDS: seconds to read one file
    # A compressed file's content is never held whole: these stop a decompression bomb.
    expanded: int = 8 << 30  # PIPELINE_MAX_EXPANDED: bytes one compressed stream expands to
    ratio: int = 200  # PIPELINE_MAX_RATIO: times its stored size it expands to (real: 8.6)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Limits:
        """The caps, each from its environment variable where set; a bad value is a usage error."""
        env = os.environ if environ is None else environ
        values: dict[str, float] = {}
        for spec in fields(cls):
            name = ENV[spec.name]
            raw = env.get(name, "").strip()
            if not raw:
                continue
            try:
                value = float(raw) if spec.name == "seconds" else int(raw.replace("_", ""))
            except ValueError:
                value = 0
            if value <= 0:
                msg = f"{name} must be a positive number, got {raw!r}"
                raise UsageError(msg)
            values[spec.name] = value
        return cls(**values)  # type: ignore[arg-type]  # each value has its field's type


ENV = {
    "depth": "PIPELINE_MAX_DEPTH",
    "html_depth": "PIPELINE_MAX_HTML_DEPTH",
    "string": "PIPELINE_MAX_STRING",
    "ruling": "PIPELINE_MAX_RULING",
    "memory": "PIPELINE_FILE_MEMORY",
    "seconds": "PIPELINE_FILE_SECONDS",
    "expanded": "PIPELINE_MAX_EXPANDED",
    "ratio": "PIPELINE_MAX_RATIO",
}
# Set in worker processes only: there a file may be interrupted and its memory capped.
_IN_WORKER = threading.Event()


def over(limit: str, found: str, cap: float) -> str:
    """The reason a file or item is refused: what was found, the cap, and how to raise it."""
    shown = f"{cap:,}" if isinstance(cap, int) else f"{cap:g}"
    return f"{found}, over the limit of {shown} ({ENV[limit]} raises it)"


def worker_setup(limits: Limits) -> None:
    """In a worker process: cap its address space and CPU time, allow per-file timers.

    The address space may grow by the memory budget above what the worker holds once its
    modules are loaded; past it, allocations fail with MemoryError, which rejects the file.
    """
    _IN_WORKER.set()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a worker stopped by a limit leaves no core
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _address_space() + limits.memory
    if hard == resource.RLIM_INFINITY or cap < hard:
        resource.setrlimit(resource.RLIMIT_AS, (cap if soft == resource.RLIM_INFINITY
                                                else min(soft, cap), hard))  # fmt: skip
    signal.signal(signal.SIGALRM, _alarm)


def _address_space() -> int:
    """Bytes of address space this process uses now (VmSize)."""
    with open("/proc/self/statm", encoding="ascii") as statm:  # noqa: PTH123 - a proc file
        pages = int(statm.read().split()[0])
    return pages * resource.getpagesize()


class OverTimeError(InputError):
    """A file that took longer than its time budget."""


_CURRENT: list[tuple[str, float]] = []  # the file being read by this worker, and its budget


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    name, seconds = _CURRENT[-1] if _CURRENT else ("?", 0.0)
    raise OverTimeError(name, over("seconds", "reading took too long", seconds))


@contextmanager
def budget(limits: Limits, name: str) -> Generator[None]:
    """Read one file within the time budget; outside a worker's main thread, no budget."""
    if not _IN_WORKER.is_set() or threading.current_thread() is not threading.main_thread():
        yield
        return
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + limits.seconds * _CPU_SLACK) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or cpu < hard:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
    _CURRENT.append((name, limits.seconds))
    signal.setitimer(signal.ITIMER_REAL, limits.seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _CURRENT.pop()
