"""One writer at a time: the dataset folder's writer lock, and the check of its name."""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import TYPE_CHECKING

import filelock

from pipeline.errors import LockBusyError, StoreError, UsageError
from pipeline.reading.read import escaped
from pipeline.storage.layout import LOCK

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def check_folder_name(out: Path) -> None:
    """Raise a UsageError if OUT cannot name a dataset: Arrow opens files by UTF-8 path."""
    try:
        str(out).encode("utf-8")
    except UnicodeEncodeError:
        shown = escaped(str(out))
        msg = f"{shown}: the dataset folder's name is not valid UTF-8; choose another --out"
        raise UsageError(msg) from None


@contextmanager
def writer_lock(out: Path, wait: float = 0) -> Iterator[None]:
    """Hold the dataset's writer lock; an OS lock, so a killed holder releases it."""
    check_folder_name(out)
    lock = filelock.FileLock(out / LOCK)
    try:
        out.mkdir(parents=True, exist_ok=True)
        lockable(out)
        lock.acquire(timeout=wait)
    except filelock.Timeout as exc:
        msg = (
            f"{out}: another ingest is writing this dataset; "
            f"try again later or pass --wait SECONDS (waited {wait:g} s)"
        )
        raise LockBusyError(msg) from exc
    except OSError as exc:
        why = exc.strerror or str(exc)
        msg = f"{out}: cannot write the dataset ({why}); the version before this run stays in force"
        raise StoreError(msg) from exc
    try:
        yield
    finally:
        lock.release()


def lockable(out: Path) -> None:
    """Make the lock file of the folder OUT if it is missing, never through a link.

    The lock library takes a lock file it cannot create (`--out /proc`) for one another
    process holds: the run would be "busy", which a cron wrapper reads as "try again later".
    Here such a folder is a StoreError saying why. A folder not made yet passes: the writer
    makes it (and says so if it cannot).
    """
    if not out.is_dir():
        return
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        os.close(os.open(out / LOCK, flags, 0o644))
    except OSError as exc:
        why = exc.strerror or str(exc)
        msg = (
            f"{escaped(str(out))}: cannot make the dataset's writer lock {LOCK} there ({why}): "
            "not a folder a dataset can be written in; give --out another folder"
        )
        raise StoreError(msg) from exc
