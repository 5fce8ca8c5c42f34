"""Caps on what one input file may hold and cost, so a hostile file costs only its rejection.

The caps sit far above the real data (see docs/sources.md, "Limits") and are raised with environment
variables; the run reads them once and hands them to every worker with its jobs.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from pipeline.errors import InputError, UsageError

if TYPE_CHECKING:
    from collections.abc import Generator, Mapping
    from types import FrameType

# A JSON number longer than this is no count or date (real ones have at most 8 characters),
# and yajl's time grows with the square of a number's length (10 million digits: 5 s).
MAX_NUMBER = 16_384
# A worker past its CPU budget by this factor, to one more (a reader stuck in C code, where
# the timer cannot interrupt it), is stopped by the kernel: its files are then "crashed".
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
    # Text is held whole, decoded, to be parsed: its str alone may take four times its bytes.
    text: int = 256 << 20  # PIPELINE_MAX_TEXT: bytes of one text document (real: 1,707,002)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The caps, each from its environment variable where set; a bad value is a usage error.

        The project's other variables (OTHER_SETTINGS) are checked too, so that a run
        stops at once with the variable's name rather than half way.
        """
        env = os.environ if environ is None else environ
        values: dict[str, float] = {}
        for spec in fields(cls):
            low, high = RANGES[spec.name]
            value = setting(ENV[spec.name], None, low, high, environ=env)
            if value is not None:
                values[spec.name] = value
        for name, (low, high) in OTHER_SETTINGS.items():
            setting(name, None, low, high, environ=env)
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
    "text": "PIPELINE_MAX_TEXT",
}
# The values each cap may take. The upper bounds keep every cap a number the system calls
# that enforce it accept (setitimer, setrlimit) and far above any real file; seconds may
# have a decimal part, the rest are whole numbers.
RANGES: dict[str, tuple[float, float]] = {
    "depth": (1, 100_000),
    "html_depth": (1, 10_000_000),
    "string": (1, 1 << 40),
    "ruling": (1, 1 << 40),
    "memory": (1 << 20, 1 << 44),
    "seconds": (0.001, 7 * 24 * 3600),
    "expanded": (1, 1 << 50),
    "ratio": (1, 1_000_000),
    "text": (1, 1 << 40),
}
# Knobs of the store read when their module loads (tests and benchmarks set them).
OTHER_SETTINGS: dict[str, tuple[float, float]] = {
    "PIPELINE_SEGMENT_ROWS": (1, 1 << 40),
    "PIPELINE_RETAIN_SECONDS": (0, 10 * 365 * 24 * 3600),
    "PIPELINE_CRASH_AT": (0, 1 << 31),
    "PIPELINE_INTERRUPT_AT": (0, 1 << 31),
}
_WHOLE = re.compile(r"[0-9]+")  # ASCII digits only: no "٣", no "1e9", no "inf"
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+")


def setting(
    name: str,
    default: float | None,
    low: float,
    high: float,
    *,
    environ: Mapping[str, str] | None = None,
) -> Any:  # noqa: ANN401 - an int, a float where the range is one, or DEFAULT
    """The number in environment variable NAME, or DEFAULT if it is unset or blank.

    One rule for every variable: ASCII digits (a decimal part only where LOW or HIGH has
    one), between LOW and HIGH; anything else is a UsageError naming the variable.
    """
    env = os.environ if environ is None else environ
    raw = env.get(name, "").strip()
    if not raw:
        return default
    decimal = isinstance(low, float) or isinstance(high, float)
    value: float | None = None
    if (_DECIMAL if decimal else _WHOLE).fullmatch(raw):
        value = float(raw) if decimal else int(raw)
    if value is None or not low <= value <= high:
        kind = "a number" if decimal else "a whole number"
        msg = f"{name} must be {kind} in ASCII digits from {low:,} to {high:,}, got {raw!r}"
        raise UsageError(msg)
    return value


def quiet_setting(name: str, default: float) -> Any:  # noqa: ANN401 - as setting()
    """NAME's value as setting() reads it, or DEFAULT when it is not valid.

    For values read as a module loads: a bad one must not break the import; the run
    reports it as a usage error when it starts (Limits.from_env checks OTHER_SETTINGS).
    """
    low, high = OTHER_SETTINGS[name]
    try:
        return setting(name, default, low, high)
    except UsageError:
        return default


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
        resource.setrlimit(
            resource.RLIMIT_AS, (cap if soft == resource.RLIM_INFINITY else min(soft, cap), hard)
        )
    signal.signal(signal.SIGALRM, _alarm)


def _address_space() -> int:
    """Bytes of address space this process uses now (VmSize)."""
    with open("/proc/self/statm", encoding="ascii") as statm:  # noqa: PTH123 - a proc file
        pages = int(statm.read().split()[0])
    return pages * resource.getpagesize()


class OverTimeError(InputError):
    """A file that took longer than its time budget."""


# The file this worker is reading: its name, its budget, and when it is up (monotonic).
_CURRENT: list[tuple[str, float, float]] = []
# Whether this worker's timer is set. One timer serves file after file: each file's start is
# noted in Python, and the timer, when it rings, either rejects the file past its deadline or
# is set again for the file being read: no system call per file, where there were five (two
# timers, the CPU cap) for dumps read in about 180 microseconds each (the 22,078 real dumps:
# the workers' CPU 4.07 to 4.33 s before, 3.98 to 4.15 s after, four runs each).
_ARMED: list[bool] = [False]


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    _ARMED[0] = False
    if not _CURRENT:
        return  # between files: the next file sets the timer again
    name, seconds, deadline = _CURRENT[-1]
    left = deadline - time.monotonic()
    if left <= 0:
        raise OverTimeError(name, over("seconds", "reading took too long", seconds))
    _arm(left, seconds)


def _arm(delay: float, seconds: float) -> None:
    """Ring the timer in DELAY seconds; cap CPU time at what a file of SECONDS may need.

    The cap is set again each time the timer is, at most SECONDS apart while files are read,
    so a file that starts before the next setting has at least _CPU_SLACK times its budget.
    """
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + seconds * (_CPU_SLACK + 1)) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or cpu < hard:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
    _ARMED[0] = True
    signal.setitimer(signal.ITIMER_REAL, delay)


@contextmanager
def budget(limits: Limits, name: str) -> Generator[None]:
    """Read one file within the time budget; outside a worker's main thread, no budget."""
    if not _IN_WORKER.is_set() or threading.current_thread() is not threading.main_thread():
        yield
        return
    _CURRENT.append((name, limits.seconds, time.monotonic() + limits.seconds))
    if not _ARMED[0]:
        _arm(limits.seconds, limits.seconds)
    try:
        yield
    finally:
        _CURRENT.pop()
