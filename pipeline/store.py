"""The dataset folder: reading its tables, one writer at a time, crash-safe commits."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from typing import TYPE_CHECKING

import filelock
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import LockBusyError, StoreError
from pipeline.schema import SCHEMA_VERSION, TABLES, VERSION_KEY, with_metadata

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

JOURNAL = ".commit.json"
LOCK = ".lock"
# Temporary files start with a dot and do not end in .parquet, so no reader's glob
# (pandas, DuckDB, Polars: *.parquet) ever picks one up.
_TMP_SUFFIX = ".parquet.tmp"
# Columns with few distinct values, stored dictionary-encoded.
_DICTIONARY_COLUMNS = [
    "card", "card_printed", "lang", "kind", "layout", "source", "source_path", "status",
    "card_origin", "encoding", "date_printed", "source_sha256",
]  # fmt: skip
ROW_GROUP = 100_000


def path_of(out: Path, name: str) -> Path:
    """The final path of table NAME in the dataset folder."""
    return out / f"{name}.parquet"


def _tmp_of(out: Path, name: str) -> Path:
    return out / f".{name}{_TMP_SUFFIX}"


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
    """Read table NAME, or an empty table if the dataset does not have it yet."""
    schema = TABLES[name]
    path = path_of(out, name)
    if not path.exists():
        return schema.empty_table()
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        msg = f"{path}: not a readable Parquet file ({exc}); restore it from a backup"
        raise StoreError(msg) from exc
    _check_version(path, table.schema)
    return table.select(schema.names).cast(schema)


def _check_version(path: Path, schema: pa.Schema) -> None:
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


def recover(out: Path) -> None:
    """Finish a commit a crash interrupted after its journal, or drop an unfinished one."""
    journal = out / JOURNAL
    if journal.exists():
        names = json.loads(journal.read_text(encoding="utf-8"))["tables"]
        for name in names:
            tmp = _tmp_of(out, name)
            if tmp.exists():
                tmp.replace(path_of(out, name))
        _fsync_dir(out)
        journal.unlink()
    for stray in out.glob(f".*{_TMP_SUFFIX}"):
        stray.unlink()
    for stray in out.glob(f"{JOURNAL}.tmp"):
        stray.unlink()


def commit(out: Path, tables: dict[str, pa.Table]) -> None:
    """Replace the given tables all together: after a crash, all or none are replaced.

    Each table is written to a hidden temporary file and flushed to disk; then a journal
    naming them is written atomically; then each is renamed over its final name. A crash
    before the journal leaves the old dataset (recover() drops the temporaries); a crash
    after it is rolled forward by recover().
    """
    out.mkdir(parents=True, exist_ok=True)
    try:
        for name, table in sorted(tables.items()):
            _write_durable(_tmp_of(out, name), table.cast(with_metadata(name, TABLES[name])))
    except OSError as exc:
        for name in tables:
            _tmp_of(out, name).unlink(missing_ok=True)
        msg = f"{out}: cannot write the dataset ({exc}); nothing was changed"
        raise StoreError(msg) from exc
    try:
        journal_tmp = out / f"{JOURNAL}.tmp"
        with journal_tmp.open("w", encoding="utf-8") as handle:
            json.dump({"tables": sorted(tables)}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        journal_tmp.replace(out / JOURNAL)
        _fsync_dir(out)
        recover(out)
    except OSError as exc:
        msg = f"{out}: the commit was interrupted ({exc}); the next run completes or drops it"
        raise StoreError(msg) from exc


def _write_durable(path: Path, table: pa.Table) -> None:
    columns = [c for c in _DICTIONARY_COLUMNS if c in table.column_names]
    with path.open("wb") as handle:
        pq.write_table(
            table,
            handle,
            compression="zstd",
            row_group_size=ROW_GROUP,
            use_dictionary=columns,  # type: ignore[arg-type]  # the stubs omit the list form
        )
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
