"""The dataset folder's layout and the reading of its files, migrated: storage's bottom layer.

Where each table's files are (kinds.py says how each table is stored): a one-file table is
`NAME.parquet`, a link to `.current/NAME.parquet`; a segmented one `NAME/`, a link to
`.current/NAME/`; `.current` links to the version in force under `.versions/`. A
partitioned table is a Hive-partitioned folder with one immutable part per run,
`sightings/run=42/part-0.parquet`, beside the versions. A file read is migrated to the
current schema (schema.MIGRATIONS) and checked against it. What the files encode (carried
rows, texts left out, the index) is read by the modules above; versions by store.py.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.errors import StoreError
from pipeline.keys import codes
from pipeline.schema import (
    MIGRATIONS,
    PARTITION_KEY,
    SCHEMA_VERSION,
    TABLES,
    VERSION_KEY,
    in_memory,
    written,
)
from pipeline.storage.kinds import Storage, kind_of, kinds, stored_as

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable
    from pathlib import Path

LOCK = ".lock"
VERSIONS = ".versions"
CURRENT = ".current"
PART = "part-0.parquet"
# The tables rewritten by each run: one file, or a folder of segments, per version.
VERSIONED = tuple(kind.name for kind in kinds() if kind.versioned)
_PARTITIONED = sorted(stored_as(Storage.PARTS))
_SEGMENTED = stored_as(Storage.SEGMENTS)
_RUN_FOLDER = re.compile(rf"{PARTITION_KEY}=([1-9][0-9]*)")


def path_of(out: Path, name: str) -> Path:
    """The final path of table NAME in the dataset folder (a folder for all but three)."""
    if kind_of(name).storage is Storage.FILE:
        return out / f"{name}.parquet"
    return out / name


def segment_path(folder: Path, name: str, segment: int) -> Path:
    """Where segment SEGMENT of table NAME lives in a version FOLDER."""
    return folder / name / f"{segment:06d}.parquet"


def segment_ids(folder: Path, name: str) -> list[int]:
    """The segments of table NAME in the version FOLDER, in order (none: a single file)."""
    where = folder / name
    if not where.is_dir():
        return []
    # iterdir() lists the folder at once: a glob's open scandir() would be left unclosed by
    # an interrupt arriving while it runs (SIGINT from a commit's writer thread).
    return sorted(
        int(p.stem) for p in where.iterdir() if p.suffix == ".parquet" and p.stem.isdigit()
    )


def read_segments(folder: Path, name: str, segments: Iterable[int]) -> dict[int, pa.Table]:
    """Segments SEGMENTS of table NAME in the version FOLDER, each migrated."""
    return {seg: read_file(segment_path(folder, name, seg), name) for seg in segments}


def read_layout(folder: Path) -> dict[int, pa.Table]:
    """The `card` column of each segment of `rulings` in the version FOLDER: its layout."""
    found = {}
    for seg in segment_ids(folder, "rulings"):
        with native_file(segment_path(folder, "rulings", seg)) as source:
            found[seg] = pq.ParquetFile(source, read_dictionary=["card"]).read(columns=["card"])
    return found


def native_file(path: Path, mode: Literal["rb", "wb"] = "rb") -> pa.NativeFile:
    """PATH opened by Arrow itself, for reading (or for writing, MODE "wb").

    Never a Python file object: Arrow wraps what one returns in buffers that need the GIL
    to be freed, and its decoding threads drop the last of them a moment after a read
    returns. Read just before the interpreter exits, such a buffer was freed by a pool
    thread during finalization, which ended that thread mid-destructor: SIGABRT,
    "terminate called without an active exception", exit 134 instead of the command's code.
    Arrow's own file needs no GIL, so its threads can finish at any time.
    """
    return pa.OSFile(str(path), mode)


def ordered(table: pa.Table, name: str) -> pa.Table:
    """TABLE (`rulings` or `state`) in that table's row order (schema.ROW_ORDER)."""
    order = kind_of(name).order
    if order is None:
        msg = f"table {name} has no row order (schema.ROW_ORDER)"
        raise ValueError(msg)
    names, nulls_first = order
    [key] = codes([table], names, nulls_first=nulls_first)
    return table.take(pc.sort_indices(key))


def part_path(out: Path, name: str, run: int) -> Path:
    """Where run RUN's part of the partitioned table NAME lives."""
    return out / name / f"{PARTITION_KEY}={run}" / PART


def pinned(out: Path) -> Path:
    """The folder whose files are the dataset's version in force, resolved once.

    Reading the rewritten tables from it (not through the `NAME.parquet` links) keeps every
    read on one version, however many commits happen meanwhile; see commit.recover() for
    how long a superseded version is kept. A folder of plain files is its own version.
    """
    current = out / CURRENT
    return current.resolve() if current.is_symlink() else out


def legacy(out: Path, base: Path | None = None) -> list[str]:
    """Partitioned tables still kept as one file (schema version 3 and before)."""
    folder = pinned(out) if base is None else base
    return [name for name in _PARTITIONED if (folder / f"{name}.parquet").is_file()]


def part_runs(out: Path, name: str) -> list[int]:
    """The runs that have a part of partitioned table NAME, in order."""
    folder = out / name
    if not folder.is_dir():
        return []
    runs = []
    for entry in folder.iterdir():
        match = _RUN_FOLDER.fullmatch(entry.name)
        if match and (entry / PART).is_file():
            runs.append(int(match.group(1)))
    return sorted(runs)


def read_part(path: Path, run: int, columns: Collection[str] | None = None) -> pa.Table:
    """Run RUN's sightings part at PATH, as stored (with its carried rows), migrated.

    COLUMNS reads only those (and `run`): for a part of this schema version alone, which no
    migration needs to see whole.
    """
    return read_file(path, "sightings", run=run, raw=True, columns=columns)


def stored_schema(name: str) -> pa.Schema:
    """A part of partitioned table NAME as stored (schema.written()), with its `run`."""
    return written(name).insert(0, TABLES[name].field(PARTITION_KEY))


def read_file(
    path: Path,
    name: str,
    *,
    run: int | None = None,
    raw: bool = False,
    columns: Collection[str] | None = None,
) -> pa.Table:
    """One Parquet file of table NAME, migrated; RUN is a part's run, taken from its folder.

    Every read of a table's file comes here (tests count the parts a read opens by
    replacing this function: the modules above call it as `layout.read_file`).

    RAW keeps a part's rows as stored (with carried rows, schema.written()); COLUMNS reads
    only those (and `run`).
    """
    target = stored_schema(name) if raw else in_memory(name)
    if columns is not None:
        target = pa.schema([f for f in target if f.name in columns or f.name == PARTITION_KEY])
    if not path.exists():
        return target.empty_table()
    try:
        # ParquetFile rather than read_table: the latter imports pyarrow.dataset (and pandas).
        # One open file for both looks: a path opened twice may meet two versions.
        with native_file(path) as source:
            handle = pq.ParquetFile(source)
            names = handle.schema_arrow.names
            encoded = [c for c in names if c in kind_of(name).encoded]
            if encoded:  # read straight into dictionaries, never as plain strings
                # The footer already parsed is handed on: the file is not looked at again.
                handle = pq.ParquetFile(source, read_dictionary=encoded, metadata=handle.metadata)
            table = handle.read(
                columns=None if columns is None else [c for c in names if c in columns]
            )
    except (OSError, pa.ArrowInvalid) as exc:
        msg = f"{path}: not a readable Parquet file ({exc}); restore it from a backup"
        raise StoreError(msg) from exc
    version = _version(path, table.schema)
    if run is not None:
        runs = pa.repeat(pa.scalar(run, pa.int64()), table.num_rows)
        table = table.append_column(PARTITION_KEY, runs)
    for step in range(version, SCHEMA_VERSION):
        table = MIGRATIONS[step](name, table)
    try:
        return table.select(target.names).cast(target)
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        msg = f"{path}: does not match schema version {version} ({exc}); restore it from a backup"
        raise StoreError(msg) from exc


def outdated(out: Path) -> list[str]:
    """Rewritten tables written by an older schema version: the next commit rewrites them.

    Parts of partitioned tables are never rewritten: they are migrated as they are read.
    """
    stale = []
    for name in VERSIONED:
        path = path_of(out, name)
        if kind_of(name).segmented:  # upgraded by ingest.upgrade(), not by the next commit
            continue
        if path.exists() and _version(path, pq.read_schema(path)) < SCHEMA_VERSION:
            stale.append(name)
    return stale


def segments_version(out: Path, name: str, base: Path | None = None) -> int | None:
    """The oldest schema version of table NAME's segments in force (None: no segments).

    A run rewrites only the segments it changes, so versions may differ between them.
    BASE reads those of a pinned version instead.
    """
    folder = pinned(out) if base is None else base
    paths = [segment_path(folder, name, seg) for seg in segment_ids(folder, name)]
    return min((_version(path, pq.read_schema(path)) for path in paths), default=None)


def unsegmented(out: Path) -> list[str]:
    """Segmented tables still kept as one file (schema version 4 and before)."""
    folder = pinned(out)
    return [name for name in _SEGMENTED if (folder / f"{name}.parquet").is_file()]


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
