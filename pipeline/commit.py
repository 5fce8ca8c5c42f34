"""Crash-safe commits: every table of a run appears at once, or none does.

The folder holds each version of the dataset in `.versions/NNNNNN/` and a symbolic link
`.current` to the version in force; each `NAME.parquet` is a link to `.current/NAME.parquet`.
A commit builds the next version beside the current one (tables it does not rewrite are
hard links to the current files), then switches `.current` with one atomic rename. A crash
before that rename leaves the previous version in force; after it, the new one. Readers
(pandas, DuckDB, Polars) open `NAME.parquet` and never see a half-written file: temporary
names start with a dot and do not end in `.parquet`.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import StoreError
from pipeline.schema import ENCODED_IN_MEMORY, TABLES, in_memory, with_metadata
from pipeline.store import path_of

VERSIONS = ".versions"
CURRENT = ".current"
_KEEP = 2  # the version in force and the one before, for readers still on it
# Columns with few distinct values, stored dictionary-encoded.
_DICTIONARY_COLUMNS = [
    "card", "card_printed", "lang", "kind", "layout", "source", "source_path", "status",
    "card_origin", "encoding", "date_printed", "source_sha256",
]  # fmt: skip
ROW_GROUP = 100_000


def commit(out: Path, tables: dict[str, pa.Table]) -> None:
    """Make TABLES (and the other tables as they are) the dataset's next version, at once."""
    try:
        current = _initialise(out)
        number = int(current.name) + 1
        staging = out / VERSIONS / f"{number:06d}.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for name in sorted(TABLES):
            _checkpoint()
            target = staging / f"{name}.parquet"
            if name in tables:
                _write_durable(target, tables[name], name)
            else:
                _link_or_copy(current / f"{name}.parquet", target)
        _fsync(staging)
        _checkpoint()
        version = staging.rename(out / VERSIONS / f"{number:06d}")
        _fsync(out / VERSIONS)
        _checkpoint()
        _switch(out, version)
        _checkpoint()
        recover(out)
    except OSError as exc:
        msg = f"{out}: cannot write the dataset ({exc}); the version before this run stays in force"
        raise StoreError(msg) from exc


def recover(out: Path) -> None:
    """Drop what an interrupted commit left, and keep the links to the version in force."""
    versions = out / VERSIONS
    if not (out / CURRENT).is_symlink():
        return
    (out / f"{CURRENT}.tmp").unlink(missing_ok=True)
    for name in TABLES:
        _ensure_link(out, name)
    in_force = (out / CURRENT).resolve().name
    numbered = sorted(p.name for p in versions.iterdir() if p.name.isdigit())
    at = numbered.index(in_force)
    keep = set(numbered[max(0, at - _KEEP + 1) : at + 1])
    for path in versions.iterdir():
        if path.name not in keep:
            shutil.rmtree(path, ignore_errors=True)


def _initialise(out: Path) -> Path:
    """The version in force; on first use, a first version of the folder's tables.

    A new folder starts with empty tables. A folder whose tables are plain files (an older
    layout, or a copy made without keeping links) has them adopted as the first version.
    """
    current = out / CURRENT
    if current.is_symlink() and current.resolve().is_dir():
        recover(out)
        return current.resolve()
    versions = out / VERSIONS
    numbered = (
        [int(p.name) for p in versions.iterdir() if p.name.isdigit()] if versions.is_dir() else []
    )
    name_of = f"{max(numbered, default=-1) + 1:06d}"
    staging = versions / f"{name_of}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name, schema in TABLES.items():
        plain = path_of(out, name)
        target = staging / f"{name}.parquet"
        if plain.is_file():
            _link_or_copy(plain.resolve(), target)
        else:
            _write_durable(target, schema.empty_table(), name)
    _fsync(staging)
    version = staging.rename(versions / name_of)
    if current.is_dir() and not current.is_symlink():
        shutil.rmtree(current)  # a copied version, not a link
    _switch(out, version)
    recover(out)
    return version


def _switch(out: Path, version: Path) -> None:
    """Point `.current` at VERSION with one atomic rename."""
    link = out / f"{CURRENT}.tmp"
    link.unlink(missing_ok=True)
    link.symlink_to(Path(VERSIONS) / version.name)
    link.replace(out / CURRENT)
    _fsync(out)


def _ensure_link(out: Path, name: str) -> None:
    """Make NAME.parquet the link to `.current/NAME.parquet` (replacing an older plain file)."""
    final = path_of(out, name)
    target = Path(CURRENT) / final.name
    if final.is_symlink() and final.readlink() == target:
        return
    temporary = out / f".{final.name}.link"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(target)
    temporary.replace(final)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)  # a file system without hard links


# Fault injection for the crash tests: with PIPELINE_CRASH_AT=N in the environment, the
# process kills itself (SIGKILL, as a power cut would stop it) at its Nth write step.
_CRASH_AT = int(os.environ.get("PIPELINE_CRASH_AT", "0") or "0")
_steps = 0


def _checkpoint() -> None:
    global _steps  # noqa: PLW0603 - one counter per process, for fault injection only
    _steps += 1
    if _steps == _CRASH_AT:
        os.kill(os.getpid(), signal.SIGKILL)


def _write_durable(path: Path, table: pa.Table, name: str) -> None:
    """Write TABLE as table NAME a row group at a time, then make it durable.

    Columns the stages hold dictionary-encoded are written as they are (Parquet stores a
    dictionary page and indices either way), so nothing is decoded to be encoded again.
    The Arrow schema is not stored: readers take the Parquet types, which are those of
    schema.TABLES, plain strings; the schema version goes in the key-value metadata.
    """
    schema = in_memory(name)
    encoded = ENCODED_IN_MEMORY.get(name, frozenset())
    columns = [c for c in schema.names if c in encoded or c in _DICTIONARY_COLUMNS]
    with path.open("wb") as handle:
        writer = pq.ParquetWriter(
            handle,
            schema,
            compression="zstd",
            use_dictionary=columns,  # type: ignore[arg-type]  # the stubs omit the list form
            store_schema=False,
        )
        for start in range(0, table.num_rows, ROW_GROUP):
            writer.write_table(table.slice(start, ROW_GROUP).cast(schema))
        metadata = with_metadata(name, TABLES[name]).metadata or {}
        writer.add_key_value_metadata({k.decode(): v.decode() for k, v in metadata.items()})
        writer.close()
        handle.flush()
        _checkpoint()  # written, not yet durable
        os.fsync(handle.fileno())


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
