"""Interrupts around a commit: before its switch they stop the run, after it they wait.

A run stopped by SIGINT or SIGTERM before the commit point stored nothing, and says so.
One stopped after it stored its run, and must say that instead: a batch job that is told
"nothing stored" of a run that was would ingest the same files again, and report their
changes twice. So the command line guards a run (guarded()), and the commit calls
committing() just before its switch: from then on an interrupt is only recorded, and the
command reports the stored run and ends with its own exit code.

The run alone takes them: its worker processes leave SIGINT to it and end on SIGTERM
(in_worker()); and a block that must not be left half done (a thread started, or waited
for) holds them until it ends (held()).
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import FrameType

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal before its commit point: nothing was stored."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    def __reduce__(self) -> tuple[type[Interrupted], tuple[int]]:
        """Pickled by its number (a worker's result crosses to the run as a pickle)."""
        return (Interrupted, (self.signum,))


@dataclass(slots=True)
class Guard:
    """What happened to a guarded run: the signals that came after its commit point."""

    after_commit: list[int] = field(default_factory=list)
    _committing: bool = False

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        """Stop the run before the commit point; record the signal after it."""
        if self._committing:
            self.after_commit.append(signum)
            return
        raise Interrupted(signum)


_GUARDS: list[Guard] = []


@contextmanager
def guarded() -> Iterator[Guard]:
    """Guard a run on the main thread: SIGINT and SIGTERM raise Interrupted until commit."""
    guard = Guard()
    if threading.current_thread() is not threading.main_thread():
        yield guard
        return
    previous = {signum: signal.signal(signum, guard.handle) for signum in _SIGNALS}
    _GUARDS.append(guard)
    try:
        yield guard
    finally:
        _GUARDS.remove(guard)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def committing() -> None:
    """Mark the commit point as reached: interrupts from now on no longer stop the run."""
    for guard in _GUARDS:
        guard._committing = True  # noqa: SLF001 - the one place that sets it


@contextmanager
def held(meanwhile: Callable[[], object] | None = None) -> Iterator[None]:
    """Hold SIGINT and SIGTERM in the block: the first that came is taken when it ends.

    For a block that must not be left half done, such as starting a thread (an interrupt
    inside Thread.start() leaves the thread running, unknown to whoever would wait for
    it) or waiting for one to end. When the block ends the signal is raised again, to the
    handler that was in force before it (a guard's, Python's own), as if it came then;
    MEANWHILE, if given, is called as each comes (to hurry the block to its end). Off the
    main thread, where no handler can be set, the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        came.append(signum)
        if meanwhile is not None:
            meanwhile()

    previous = {signum: signal.signal(signum, hold) for signum in _SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if came:  # also when the block failed: the interrupt is what the run was told
            signal.raise_signal(came[0])


def in_worker() -> None:
    """Set a run's worker process's signals: SIGINT is the run's to take, SIGTERM ends it.

    A worker forked from a guarded run inherits the guard's handler. Ctrl-C in a terminal
    reaches every process of the group: a worker that raised Interrupted then, idle or in
    a task, broke its pool while the run was stopping (a whole group's SIGINT during the
    reading once left the run waiting for good on a worker blocked writing its result). So
    a worker ignores SIGINT, and the run, which takes it, shuts its pools down; SIGTERM
    ends a worker at once, as a pool's terminate() expects.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
