"""Where the per-file stage runs: in this process, a local process pool, or a Dask cluster.

Every executor gives the same batches in the same order, so the dataset does not depend on
where it was computed. The store step stays in this process: one writer.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from itertools import islice
from typing import TYPE_CHECKING, Self, TypeVar

import pyarrow as pa

from pipeline import interrupts
from pipeline.errors import UsageError
from pipeline.limits import Limits, worker_setup
from pipeline.reading.scan import ScanBatch, ScanJob, crashed, out_of_memory, scan_batch
from pipeline.text.language import detect_many

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
    from types import TracebackType

# Files per task: large enough to amortise the hand-over, small enough to balance.
BATCH_FILES = 256
# The per-file stage makes many short-lived objects and no reference cycles worth chasing:
# the collector's youngest generation runs every this many allocations (Python's: 700).
_GC_THRESHOLD = 20_000
EXECUTORS = ("local", "dask")
# Batches submitted ahead of the one awaited, per worker: enough to keep every worker busy
# while the main process, sharing the cores, takes the batches in order. With two a worker,
# on 2 cores, a worker that had read its batches waited for the main process to take the
# one before them (the 22,078 real dumps: scan 3.46 s against 2.96 s with four, medians of
# 9); the 1M corpus's peak RSS is the same with four (845 and 838 MiB).
_AHEAD = 4
# Texts per language-detection task: a few milliseconds of hand-over against 20 to 40 ms
# of detection. Fewer texts than this in a whole run are detected in the main process.
DETECT_TEXTS = 2_000
# Detection processes run this much nicer than the run: the scan, which the stages after it
# wait for, has the cores first, and detection takes what the scan leaves and the core left
# idle after it (see LanguageJobs).
_DETECTION_NICENESS = 10
# Seconds between a worker's looks at whether its run is still there, and its exit status
# when it is not (the run is gone: no one reads it).
_WATCH = 0.5
_ORPHANED = 70
# The most a stopping run waits for an abandoned pool's manager thread: it ends as soon as
# it sees the terminated workers gone (milliseconds), so this bounds only a stuck one.
_MANAGER_SECONDS = 5.0
T = TypeVar("T")


def batches(jobs: Sequence[T], size: int = BATCH_FILES) -> list[Sequence[T]]:
    """Cut the job list into consecutive batches."""
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]


def run(
    jobs: Sequence[ScanJob],
    *,
    workers: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    progress: Callable[[int], None] | None = None,
    isolate: bool = False,
) -> Iterator[ScanBatch]:
    """Scan JOBS batch by batch, in order; PROGRESS is told how many files each batch held.

    Locally, one batch or one worker is read in this process unless ISOLATE is set; worker
    processes read each file within its memory and time budget, and a worker that dies
    fails only the file it was reading.
    """
    parts = batches(jobs, BATCH_FILES)
    task = scan_batch
    limits = jobs[0].limits if jobs else Limits()
    if executor == "dask":
        results: Iterator[ScanBatch] = _dask(task, parts, scheduler)
    elif executor != "local":
        msg = f"unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}"
        raise UsageError(msg)
    elif not isolate and ((workers or os.cpu_count() or 1) <= 1 or len(parts) <= 1):
        results = map(task, parts)
    else:
        results = _pool(task, parts, workers or os.cpu_count() or 1, limits)
    for part, batch in zip(parts, results, strict=True):
        if progress is not None:
            progress(len(part))
        yield batch


@contextmanager
def quiet_gc() -> Generator[None]:
    """Collect garbage less often, and never walk the objects that exist on entry.

    The objects already alive (modules, the caller's data) are frozen out of collections;
    the caller's collector settings come back on exit.
    """
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(_GC_THRESHOLD, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


@contextmanager
def returning_pool() -> Generator[None]:
    """Allocate Arrow memory from jemalloc for the run, where pyarrow is built with it.

    A run builds and drops tables of hundreds of megabytes; jemalloc gives freed pages back
    to the system where mimalloc (pyarrow's default) keeps more of them. Measured on the
    1M-ruling benchmark corpus, two runs each: peak RSS 780 MiB with jemalloc, 890 to 920
    MiB with mimalloc. ARROW_DEFAULT_MEMORY_POOL, when set, is the user's choice.
    """
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        yield
        return
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc
        yield
        return
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pool)
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def _worker_setup(limits: Limits, parent: int) -> None:
    """In each worker: what quiet_gc() does, for the life of the process; the file budget.

    The worker ends as soon as PARENT, the run that started it, is gone; SIGINT is the
    run's (interrupts.in_worker).
    """
    interrupts.in_worker()
    _exit_with(parent)  # before the budget: the watcher's stack is not the file's
    gc.freeze()
    gc.set_threshold(_GC_THRESHOLD, *gc.get_threshold()[1:])
    worker_setup(limits)


def _exit_with(parent: int) -> None:
    """End this process within _WATCH seconds of PARENT's end (a kill -9 of the run).

    A worker whose run is killed is given to another parent: it would read its file to
    the end and then wait for work that never comes, for good. A thread notes the change
    of parent, or (a worker started by a fork server) that PARENT is gone.
    """
    started_by = os.getppid()

    def watch() -> None:
        while os.getppid() == started_by and _alive(parent):
            time.sleep(_WATCH)
        os._exit(_ORPHANED)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _pool(
    task: Callable[[Sequence[ScanJob]], ScanBatch],
    parts: list[Sequence[ScanJob]],
    workers: int,
    limits: Limits,
) -> Iterator[ScanBatch]:
    """The batches read by a process pool, in order, whatever worker dies on the way.

    A dead worker breaks the pool and every batch not yet returned: the first of those is
    read again one file per task, so that only the file that kills its reader again is
    rejected, and a new pool takes the batches after it. A batch whose worker ran out of
    memory outside any one file's read is read again the same way.

    At most _AHEAD batches a worker are in flight: a future keeps its batch until it is
    dropped, and a whole run's batches held that way were most of a large run's memory.
    """
    done = 0
    while done < len(parts):
        count = min(workers, len(parts) - done)
        with _ended(_new_pool(count, limits)) as pool:
            upcoming = iter(parts[done:])
            ahead = deque(pool.submit(task, part) for part in islice(upcoming, _AHEAD * count))
            while ahead:
                try:
                    batch = ahead.popleft().result()
                except (BrokenProcessPool, MemoryError):
                    break  # a dead worker, or a batch too large for one: read it file by file
                ahead.extend(pool.submit(task, part) for part in islice(upcoming, 1))
                done += 1
                yield batch
        if done < len(parts):
            yield _file_by_file(task, parts[done], limits)
            done += 1


@contextmanager
def _ended(pool: ProcessPoolExecutor) -> Generator[ProcessPoolExecutor]:
    """POOL for the block, shut down after it; its workers stopped at once if the block fails.

    A run that stops (an interrupt, an error) waits for no file: a worker reading a large
    one held Ctrl-C up for as long as the read takes (7 s of a 296 MB bulk file; up to the
    file budget, PIPELINE_FILE_SECONDS).
    """
    try:
        yield pool
    except BaseException:
        _abandon(pool)
        raise
    finally:
        pool.shutdown()


def _abandon(pool: ProcessPoolExecutor) -> None:
    """Stop POOL's workers now, their tasks unfinished (by SIGTERM: interrupts.in_worker).

    Returns once the pool's manager thread has seen them end and closed its pipes. Left
    running, it raced the interpreter's exit, which wakes every pool's manager through
    that pipe: the run's one-line error was followed by "Exception ignored ... Bad file
    descriptor" and a traceback (2 of 20 runs of a Ctrl-C under two CPU hogs).
    """
    # The thread, like the processes below, only the pool's own attributes hold (CPython's).
    manager = getattr(pool, "_executor_manager_thread", None)
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14 on
    if terminate is not None:
        terminate()
    else:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
    if manager is not None:
        manager.join(_MANAGER_SECONDS)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone, or its pid another user's now
        return False
    return True


def _new_pool(workers: int, limits: Limits) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        max_workers=workers, initializer=_worker_setup, initargs=(limits, os.getpid())
    )


def _lower_priority(parent: int) -> None:
    """In each detection process: yield the CPU to the scan, take what it leaves idle.

    The process ends as soon as PARENT, the run that started it, is gone; SIGINT is the
    run's (interrupts.in_worker).
    """
    interrupts.in_worker()
    _exit_with(parent)
    with contextlib.suppress(OSError):
        os.nice(_DETECTION_NICENESS)


def _file_by_file(
    task: Callable[[Sequence[ScanJob]], ScanBatch], part: Sequence[ScanJob], limits: Limits
) -> ScanBatch:
    """Read a batch one file per task in one worker; a file that kills it is "crashed"."""
    results, tables = [], []
    pool = _new_pool(1, limits)
    try:
        for job in part:
            try:
                batch = pool.submit(task, [job]).result()
            except BrokenProcessPool:
                results.append(crashed(job))
                pool.shutdown()
                pool = _new_pool(1, limits)
                continue
            except MemoryError:  # the file's rows outgrew the budget once it was read
                results.append(out_of_memory(job))
                continue
            results.extend(batch.results)
            if batch.sightings is not None:
                tables.append(batch.sightings)
    except BaseException:
        _abandon(pool)  # the run is stopping: it waits for no file (_ended)
        raise
    finally:
        pool.shutdown()
    return ScanBatch(results, pa.concat_tables(tables) if tables else None)


def _dask(
    task: Callable[[Sequence[ScanJob]], ScanBatch],
    parts: list[Sequence[ScanJob]],
    scheduler: str | None,
) -> Iterator[ScanBatch]:
    try:
        from dask.distributed import Client, LocalCluster  # noqa: PLC0415 - an optional extra
        from distributed.scheduler import KilledWorker  # noqa: PLC0415 - the same extra
    except ImportError as exc:
        msg = "--executor dask needs the dask extra: pip install '.[dask]'"
        raise UsageError(msg) from exc
    cluster = None if scheduler else LocalCluster(processes=True, dashboard_address=None)
    with Client(scheduler or cluster) as client:
        futures = deque(client.map(task, parts, pure=False))
        for part in parts:
            future = futures.popleft()  # released once read: the cluster may drop its batch
            try:
                yield future.result()
            except KilledWorker:
                # The batch killed its workers: read it one file per task; only the files
                # that kill theirs again are "crashed".
                singles = [client.submit(task, [job], pure=False) for job in part]
                results, tables = [], []
                for job, single in zip(part, singles, strict=True):
                    try:
                        batch = single.result()
                    except KilledWorker:
                        results.append(crashed(job))
                        continue
                    results.extend(batch.results)
                    tables.extend([batch.sightings] if batch.sightings is not None else [])
                yield ScanBatch(results, pa.concat_tables(tables) if tables else None)
    if cluster is not None:
        cluster.close()


class LanguageJobs:
    """The languages of a run's undeclared texts, detected on worker processes as they come.

    The main process hands over each distinct text once, as the batches bring them: the
    scanning workers would each meet most of the texts that recur across files (a text
    settled twice, once per worker). WORKERS - 1 processes (none for 1 worker) detect
    DETECT_TEXTS texts a task, at a lower priority than the scan: they take the CPU the
    scan leaves, then the core left idle while the main process makes the run's history.
    When the main process needs the languages, it detects the texts left after the last
    whole task and takes back the tasks not started yet, from the last one, while the
    processes finish theirs. So a run of one batch of files and fewer texts starts no
    process, and a detection process that dies costs only time: its texts are detected here.
    """

    def __init__(self, workers: int) -> None:
        """Detect on WORKERS - 1 processes, started by start() or the first whole task."""
        self._workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._seen: set[str] = set()
        self._waiting: list[str] = []
        self._tasks: list[tuple[list[str], Future[list[str]]]] = []

    def __enter__(self) -> Self:
        """Start nothing yet (see start())."""
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Stop the detection processes, dropping what they had not started.

        When the run is stopping (KIND: an exception) they are stopped at once (_ended).
        """
        if self._pool is not None:
            if kind is not None:
                _abandon(self._pool)
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def start(self, files: int) -> None:
        """Start the detection processes now if FILES to scan make more than one batch.

        Now, while this process is small: a process forked later shares the pages this one
        holds by then, and each page either side writes afterwards is copied.
        """
        if files > BATCH_FILES and self._workers > 1:
            self._running()

    def _running(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=max(1, self._workers - 1),
                initializer=_lower_priority,
                initargs=(os.getpid(),),
            )
        return self._pool

    def submit(self, texts: Iterable[str]) -> None:
        """Detect those of TEXTS not handed over before."""
        new = [text for text in dict.fromkeys(texts) if text not in self._seen]
        self._seen.update(new)
        self._waiting.extend(new)
        if self._workers <= 1:
            return
        while len(self._waiting) >= DETECT_TEXTS:
            chunk, self._waiting = self._waiting[:DETECT_TEXTS], self._waiting[DETECT_TEXTS:]
            try:
                self._tasks.append((chunk, self._running().submit(detect_many, chunk)))
            except BrokenProcessPool:  # a process died: the rest is detected here
                self._waiting = [*chunk, *self._waiting]
                self._workers = 1
                break

    def results(self) -> dict[str, str]:
        """The language of every text submitted, in the order submitted.

        The tasks no process has started are taken back and detected here, while the
        processes finish theirs: this process has nothing else to do until then.
        """
        tasks = self._tasks
        last = detect_many(self._waiting)
        answers: list[list[str]] = [[] for _ in tasks]
        # tasks[here:] are taken back, from the last one, while the processes work from the
        # first on; the first task that cannot be cancelled has started, as have those before.
        here = len(tasks)
        while here and tasks[here - 1][1].cancel():
            here -= 1
            answers[here] = detect_many(tasks[here][0])
        for n, (chunk, task) in enumerate(tasks[:here]):
            try:
                answers[n] = task.result()
            except BrokenProcessPool:
                answers[n] = detect_many(chunk)
        found: dict[str, str] = {}
        for (chunk, _), got in zip(tasks, answers, strict=True):
            found.update(zip(chunk, got, strict=True))
        found.update(zip(self._waiting, last, strict=True))
        # Every text handed over is answered: the set of them goes (a Python copy of each
        # undeclared text, kept to the end of the run), and a text submitted from now on is
        # detected and answered anew.
        self._tasks, self._waiting, self._seen = [], [], set()
        return found
