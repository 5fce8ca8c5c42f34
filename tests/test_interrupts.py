"""Interrupts held through a block that must not be left half done (interrupts.held)."""

from __future__ import annotations

import ast
import pickle
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from pipeline import interrupts
from pipeline.limits import Limits
from pipeline.reading import executor

if TYPE_CHECKING:
    import threading


def _held_block(steps: list[str]) -> None:
    """A held block that receives SIGINT, then goes on; STEPS records how far it went."""
    with interrupts.held():
        signal.raise_signal(signal.SIGINT)
        steps.append("the rest of the block")
    steps.append("past the block")


def test_a_signal_in_a_held_block_stops_the_run_when_the_block_ends() -> None:
    """Under a guard, SIGINT in the block is Interrupted, raised once the block is done."""
    steps: list[str] = []
    with interrupts.guarded(), pytest.raises(interrupts.Interrupted) as caught:
        _held_block(steps)
    assert steps == ["the rest of the block"]
    assert caught.value.signum == signal.SIGINT


def test_without_a_guard_a_held_signal_is_pythons_own_keyboard_interrupt() -> None:
    """Outside a guard the handler in force before the block takes it: KeyboardInterrupt."""
    steps: list[str] = []
    with pytest.raises(KeyboardInterrupt) as caught:
        _held_block(steps)
    assert steps == ["the rest of the block"]
    assert not isinstance(caught.value, interrupts.Interrupted)


def test_a_signal_held_in_a_block_that_fails_is_not_lost() -> None:
    """The block's own error comes second: the interrupt is raised, the error its context."""

    def failing_block() -> None:
        with interrupts.held():
            signal.raise_signal(signal.SIGINT)
            raise ValueError

    with interrupts.guarded(), pytest.raises(interrupts.Interrupted) as caught:
        failing_block()
    assert isinstance(caught.value.__context__, ValueError)


def test_a_signal_held_after_the_commit_point_is_recorded_not_raised() -> None:
    """After committing() a held signal reaches the guard, which records it."""
    with interrupts.guarded() as guard:
        interrupts.committing()
        with interrupts.held():
            signal.raise_signal(signal.SIGTERM)
        assert guard.after_commit == [signal.SIGTERM]


def test_the_handlers_in_force_before_a_held_block_are_in_force_after_it() -> None:
    """The block sets its own handlers and gives the earlier ones back."""
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    with interrupts.held():
        assert signal.getsignal(signal.SIGINT) is not before[signal.SIGINT]
    assert {signum: signal.getsignal(signum) for signum in before} == before


def test_a_held_block_is_told_of_a_signal_as_it_comes() -> None:
    """MEANWHILE runs when the signal comes, inside the block: it can hurry the block along."""
    steps: list[str] = []

    def block() -> None:
        with interrupts.held(lambda: steps.append("told")):
            steps.append("before")
            signal.raise_signal(signal.SIGINT)
            steps.append("after")

    with pytest.raises(KeyboardInterrupt):
        block()
    assert steps == ["before", "told", "after"]


def test_interrupted_crosses_from_a_worker_process_whole() -> None:
    """A worker's Interrupted comes back to the run as a pickle: the same signal."""
    again = pickle.loads(pickle.dumps(interrupts.Interrupted(signal.SIGTERM)))  # noqa: S301 - its own bytes
    assert isinstance(again, interrupts.Interrupted)
    assert again.signum == signal.SIGTERM


def _dispositions() -> tuple[object, object]:
    """The SIGINT and SIGTERM handlers of the process that calls it."""
    return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)


def test_a_reading_worker_leaves_sigint_to_the_run_and_dies_of_sigterm() -> None:
    """Forked from a guarded run, a worker of the reading pool ignores SIGINT; SIGTERM kills it."""
    with interrupts.guarded():
        pool = executor._new_pool(1, Limits())
        with pool:
            found = pool.submit(_dispositions).result()
    assert found == (signal.SIG_IGN, signal.SIG_DFL)


def test_an_abandoned_pool_has_ended_when_the_run_goes_on() -> None:
    """_abandon returns with the pool's workers gone and its manager thread ended.

    A manager thread left running raced the interpreter's exit, which writes to that
    thread's pipe as the thread closes it: "Exception ignored ... Bad file descriptor" and a
    traceback after the one-line error of a run stopped by Ctrl-C.
    """
    pool = executor._new_pool(2, Limits())
    busy = pool.submit(time.sleep, 60)
    # CPython's own attributes (typeshed takes the thread for its wakeup pipe).
    manager = cast("threading.Thread | None", pool._executor_manager_thread)
    workers = list(pool._processes.values())
    assert manager is not None
    assert workers
    executor._abandon(pool)
    assert not manager.is_alive()
    assert not [worker for worker in workers if worker.is_alive()]
    assert busy.done()


def test_every_process_pool_of_the_package_sets_its_workers_signals() -> None:
    """Each ProcessPoolExecutor names an initializer that calls interrupts.in_worker().

    A pool forked without it would hand its workers the run's guard (see above).
    """
    package = Path(interrupts.__file__).parent
    pools = 0
    for path in sorted(package.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if "ProcessPoolExecutor" not in source:  # parsing every module took 10 s under coverage
            continue
        tree = ast.parse(source)
        calls = {
            node.name: {
                ast.unparse(call.func) for call in ast.walk(node) if isinstance(call, ast.Call)
            }
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
                "ProcessPoolExecutor"
            ):
                pools += 1
                named = {k.arg: ast.unparse(k.value) for k in node.keywords}
                setup = named.get("initializer", "")
                assert setup == "interrupts.in_worker" or "interrupts.in_worker" in calls.get(
                    setup, set()
                ), f"{path.relative_to(package)}:{node.lineno}: initializer {setup or 'none'}"
    assert pools >= 4  # reading, language detection, English terms, linking
