"""The dataset folder: reading its tables (migrated), one writer at a time.

Writing is commit.py's: versions switched at once.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING

import filelock
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import LockBusyError, StoreError
from pipeline.schema import (
    ENCODED_IN_MEMORY,
    MIGRATIONS,
    SCHEMA_VERSION,
    TABLES,
    VERSION_KEY,
    in_memory,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

LOCK = ".lock"


def path_of(out: Path, name: str) -> Path:
    """The final path of table NAME in the dataset folder."""
    return out / f"{name}.parquet"


@contextmanager
def writer_lock(out: Path, wait: float = 0) -> Iterator[None]:
    """Hold the dataset's writer lock; an OS lock, so a killed holder releases it."""
    out.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(out / LOCK)
    try:
        lock.acquire(timeout=wait)
    except filelock.Timeout as exc:
        msg = (
            f"{out}: another ingest is writing this dataset; "
            f"try again later or pass --wait SECONDS (waited {wait:g} s)"
        )
        raise LockBusyError(msg) from exc
    try:
        yield
    finally:
        lock.release()


def read_table(out: Path, name: str) -> pa.Table:
    """Read table NAME, migrated to the current schema; empty if the dataset lacks it.

    Some string columns come dictionary-encoded (schema.in_memory).
    """
    schema = TABLES[name]
    path = path_of(out, name)
    if not path.exists():
        return in_memory(name).empty_table()
    try:
        # ParquetFile rather than read_table: the latter imports pyarrow.dataset (and pandas).
        handle = pq.ParquetFile(path)
        encoded = [c for c in handle.schema_arrow.names if c in ENCODED_IN_MEMORY.get(name, ())]
        if encoded:  # read straight into dictionaries, never as plain strings
            handle = pq.ParquetFile(path, read_dictionary=encoded)
        table = handle.read()
    except (OSError, pa.ArrowInvalid) as exc:
        msg = f"{path}: not a readable Parquet file ({exc}); restore it from a backup"
        raise StoreError(msg) from exc
    version = _version(path, table.schema)
    for step in range(version, SCHEMA_VERSION):
        table = MIGRATIONS[step](name, table)
    try:
        return table.select(schema.names).cast(in_memory(name))
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        msg = f"{path}: does not match schema version {version} ({exc}); restore it from a backup"
        raise StoreError(msg) from exc


def outdated(out: Path) -> list[str]:
    """Tables written by an older schema version: the next commit rewrites them."""
    stale = []
    for name in TABLES:
        path = path_of(out, name)
        if path.exists() and _version(path, pq.read_schema(path)) < SCHEMA_VERSION:
            stale.append(name)
    return stale


def _version(path: Path, schema: pa.Schema) -> int:
    raw = (schema.metadata or {}).get(VERSION_KEY)
    if raw is None:
        msg = f"{path}: not written by this pipeline (no schema version in its metadata)"
        raise StoreError(msg)
    version = int(raw)
    if version > SCHEMA_VERSION:
        msg = (
            f"{path}: written by schema version {version}, newer than this pipeline's "
            f"{SCHEMA_VERSION}; upgrade the pipeline"
        )
        raise StoreError(msg)
    return version
