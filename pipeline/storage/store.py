"""The dataset folder: reading its tables (migrated), one writer at a time.

Two kinds of table. `rulings`, `files`, `runs`, `state` and `translations` are rewritten by
a run: `files`, `runs` and `translations` are one file each, `NAME.parquet`, a link to
`.current/NAME.parquet`; `rulings` and `state` are folders of segments of whole cards,
`NAME/` a link to `.current/NAME/` (segments.py says which a run rewrites). `.current` links
to the version in force under `.versions/`. `sightings` and `changes` only grow: a
Hive-partitioned folder with one immutable part per run, `sightings/run=42/part-0.parquet`.
A reader that pins a version (`pinned()`) reads its files from that version's folder and
the parts of its runs alone.
Writing is commit.py's: versions switched at once.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack

import filelock
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.columns import (
    Column,
    Mask,
    as_dictionary,
    encoded,
    false_if_null,
    replace_column,
    used_only,
)
from pipeline.errors import LockBusyError, StoreError, UsageError
from pipeline.keys import codes
from pipeline.reading.read import escaped
from pipeline.schema import (
    CARRY_COLUMNS,
    ENCODED_IN_MEMORY,
    FILE_COLUMNS,
    MIGRATIONS,
    PARTITION_KEY,
    PARTITIONED,
    ROW_ORDER,
    RULING_KEY,
    SCHEMA_VERSION,
    SEGMENTED,
    TABLES,
    VERSION_KEY,
    in_memory,
    written,
)
from pipeline.storage import index
from pipeline.storage.carry import Content, expanded

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
    from pathlib import Path

LOCK = ".lock"
VERSIONS = ".versions"
CURRENT = ".current"
PART = "part-0.parquet"
# The tables rewritten by each run: one file, or a folder of segments, per version.
VERSIONED = tuple(name for name in TABLES if name not in PARTITIONED)
# A sighting's left-out text is that of the ruling of its key: rulings of one hash (of the
# folded text) may print it differently (straight or curly apostrophes).
_KEY = list(RULING_KEY)
_RUN_FOLDER = re.compile(rf"{PARTITION_KEY}=([1-9][0-9]*)")


def path_of(out: Path, name: str) -> Path:
    """The final path of table NAME in the dataset folder (a folder for all but three)."""
    if name in PARTITIONED or name in SEGMENTED:
        return out / name
    return out / f"{name}.parquet"


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
    return {seg: _read_file(segment_path(folder, name, seg), name) for seg in segments}


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
    names, nulls_first = ROW_ORDER[name]
    [order] = codes([table], names, nulls_first=nulls_first)
    return table.take(pc.sort_indices(order))


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
    return [name for name in sorted(PARTITIONED) if (folder / f"{name}.parquet").is_file()]


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


def read_table(
    out: Path,
    name: str,
    *,
    base: Path | None = None,
    runs: Iterable[int] | None = None,
    upto: int | None = None,
    where: Callable[[pa.Table], Mask] | None = None,
    content: Callable[[pa.Table], Mask] | None = None,
) -> pa.Table:
    """Read table NAME, migrated to the current schema; empty if the dataset lacks it.

    BASE is a pinned version folder (default: the links in OUT). For a partitioned table,
    RUNS chooses the parts, UPTO drops those of later runs (a pinned reader's horizon), and
    WHERE filters each part as it is read, so a selection never holds the whole table.
    CONTENT is a filter like WHERE that looks only at columns a carried sighting takes from
    its base (carry.content_columns: not the file's, the position or the run), so that it
    is tried on the base before the carried rows are expanded: the fast way to select
    cards. Some string columns come dictionary-encoded (schema.in_memory).
    """
    if name == "sightings" and content is not None and not legacy(out, base):
        wanted = None if runs is None else set(runs)
        chosen = [run for run in part_runs(out, name) if _chosen(run, wanted, upto)]
        return _selected_sightings(out, base, chosen, content, where)
    if name in PARTITIONED and not legacy(out, base):
        parts = iter_parts(out, name, base=base, runs=runs, upto=upto, where=where, content=content)
        return pa.concat_tables([in_memory(name).empty_table(), *parts])
    where = _both(content, where)
    folder = out if base is None else base
    if name in SEGMENTED and base is None:
        folder = pinned(out)  # one version for all the segments
    if name in SEGMENTED and (folder / name).is_dir():
        segments = list(read_segments(folder, name, segment_ids(folder, name)).values())
        table = pa.concat_tables([in_memory(name).empty_table(), *segments])
        table = ordered(table, name) if len(segments) > 1 else table
        return table.filter(where(table)) if where is not None and table.num_rows else table
    table = _read_file(folder / f"{name}.parquet", name)
    if name in PARTITIONED and (runs is not None or upto is not None):  # one file of all runs
        wanted = None if runs is None else set(runs)
        present = {int(r) for r in pc.unique(table[PARTITION_KEY]).to_pylist() if r is not None}
        keep = sorted(r for r in present if _chosen(r, wanted, upto))
        table = table.filter(pc.is_in(table[PARTITION_KEY], pa.array(keep, pa.int64())))
    if where is not None and table.num_rows:
        table = table.filter(where(table))
    if name == "sightings" and table["text"].null_count:
        table = with_ruling_texts(table, read_table(out, "rulings", base=folder))
    return table


def _selected_sightings(
    out: Path,
    base: Path | None,
    runs: list[int],
    content: Callable[[pa.Table], Mask],
    where: Callable[[pa.Table], Mask] | None,
) -> pa.Table:
    """The sightings of RUNS that CONTENT (and WHERE) keep, expanded in one pass.

    A card's sightings are a few rows of each of many parts: each part is read (two at a
    time: Parquet decoding lets go of the interpreter) and cut to its carried rows and the
    rows written in full that CONTENT keeps, which are also the base rows the carried ones
    may name; then all are expanded, and their texts put back, at once.
    """
    cut = _Cut(out, content)
    wholes: list[pa.Table] = [_stored_schema("sightings").empty_table()]
    kept: list[pa.Table] = [wholes[0]]
    complete = set(runs)  # the runs whose rows written in full and kept are all in `wholes`
    found = _indexed(out, base, runs, content)
    if found is not None:
        whole, rows, answered, also = found
        wholes.append(whole)
        kept.append(rows)
        runs = [run for run in runs if run not in answered]
        complete |= also
    with ThreadPoolExecutor(max_workers=2) as pool:
        for whole, rows in pool.map(cut, runs):
            wholes.append(whole)
            kept.append(rows)
    rows = pa.concat_tables(kept)
    rows = rows.take(pc.sort_indices(rows[PARTITION_KEY]))  # stable: each run's rows in order
    selected = pa.concat_tables(wholes)
    bases = {}
    for run in {int(r) for r in pc.unique(rows["base_run"].drop_null()).to_pylist() if r}:
        held = selected.filter(pc.equal(selected[PARTITION_KEY], pa.scalar(run, pa.int64())))
        bases[run] = held if run in complete else cut(run)[0]  # a base before the runs chosen
    table = expanded(rows, bases, content).cast(in_memory("sightings"))
    if where is not None and table.num_rows:
        table = table.filter(where(table))
    if table["text"].null_count:
        table = with_ruling_texts(table, read_table(out, "rulings", base=base or pinned(out)))
    return table


def _indexed(
    out: Path, base: Path | None, runs: list[int], content: Callable[[pa.Table], Mask]
) -> tuple[pa.Table, pa.Table, set[int], set[int]] | None:
    """What the version's sightings index (index.py) tells of RUNS, or None if nothing.

    The rows written in full that CONTENT keeps and the rows kept or carried, as _Cut cuts
    them, of the runs answered; and the runs of whose rows written in full all kept are in
    the first table (the runs answered and the bases their rows name that the index holds).
    """
    if not isinstance(content, Content) or not set(content.columns) <= index.INDEXED:
        return None
    found = index.load(base or pinned(out), out)
    if found is None:
        return None
    answered = [run for run in runs if run in found.runs]
    if not answered:
        return None
    whole, rows = index.cuts(found, out, answered, content)
    named = {int(r) for r in pc.unique(rows["base_run"].drop_null()).to_pylist() if r}
    return whole, rows, set(answered), set(answered) | (named & found.runs)


class _Cut:
    """A part's rows that a content filter keeps and its carried rows, as stored.

    A carry.Content names the columns it looks at: the part is first read in those and the
    carried rows' own, and read whole only if some row written in full is kept.
    """

    def __init__(self, out: Path, content: Callable[[pa.Table], Mask]) -> None:
        self.out, self.content, self.reader = out, content, _Bases(out)
        self.light: set[str] | None = None
        if isinstance(content, Content):
            self.light = {*FILE_COLUMNS, "position", *CARRY_COLUMNS, *content.columns}

    def __call__(self, run: int) -> tuple[pa.Table, pa.Table]:
        """Run RUN's rows kept and written in full, and those kept or carried."""
        path = part_path(self.out, "sightings", run)
        if not path.exists():
            empty = _stored_schema("sightings").empty_table()
            return empty, empty
        stored = _read_file(path, "sightings", run=run, raw=True, columns=self.light)
        accepted = false_if_null(self.content(stored))
        carried = pc.is_valid(stored["carried"])
        whole = pc.and_(accepted, pc.invert(carried))
        if self.light is not None:
            stored = self.reader.read(run) if pc.any(whole).as_py() else _with_columns(stored)
        return stored.filter(whole), stored.filter(pc.or_(accepted, carried))


def _with_columns(stored: pa.Table) -> pa.Table:
    """STORED, some columns of a part as stored, with the others null (the part's schema)."""
    schema = _stored_schema("sightings")
    return pa.table(
        [
            stored[f.name] if f.name in stored.column_names else pa.nulls(stored.num_rows, f.type)
            for f in schema
        ],
        schema=schema,
    )


def _both(
    first: Callable[[pa.Table], Mask] | None, second: Callable[[pa.Table], Mask] | None
) -> Callable[[pa.Table], Mask] | None:
    """One filter of the rows FIRST and SECOND both keep (either may be None)."""
    if first is None or second is None:
        return first or second
    return lambda table: pc.and_kleene(first(table), second(table))


def iter_parts(
    out: Path,
    name: str,
    *,
    base: Path | None = None,
    runs: Iterable[int] | None = None,
    upto: int | None = None,
    where: Callable[[pa.Table], Mask] | None = None,
    content: Callable[[pa.Table], Mask] | None = None,
    rulings: pa.Table | None = None,
) -> Iterator[pa.Table]:
    """The parts of partitioned table NAME, one table per run, in run order (see read_table).

    RULINGS gives the texts sightings leave out (default: the version's rulings table).
    """
    wanted = None if runs is None else set(runs)
    bases = _Bases(out)
    for run in part_runs(out, name):
        if _chosen(run, wanted, upto):
            if name == "sightings":  # carried rows expanded (carry.py)
                stored = _read_file(part_path(out, name, run), name, run=run, raw=True)
                table = expanded(stored, bases.of(stored), content).cast(in_memory(name))
            else:
                path = part_path(out, name, run)
                if isinstance(content, Content):  # its columns first: most parts have none
                    some = _read_file(path, name, run=run, columns=content.columns)
                    if not pc.any(false_if_null(content(some))).as_py():
                        continue
                table = _read_file(path, name, run=run)
                if content is not None and table.num_rows:
                    table = table.filter(content(table))
            if where is not None and table.num_rows:
                table = table.filter(where(table))
            if name == "sightings" and table["text"].null_count:  # left out on disk
                if rulings is None:
                    rulings = read_table(out, "rulings", base=base or pinned(out))
                table = with_ruling_texts(table, rulings)
            yield table


class _Bases:
    """The parts of the runs a sightings part carries rows from, as stored: kept while used."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.held: dict[int, pa.Table] = {}

    def of(self, stored: pa.Table) -> dict[int, pa.Table]:
        """The base parts of STORED, a part as stored; those no longer used are let go."""
        runs = {int(r) for r in pc.unique(stored["base_run"].drop_null()).to_pylist() if r}
        self.held = {
            run: self.held[run] if run in self.held else self.read(run) for run in sorted(runs)
        }
        return self.held

    def read(self, run: int) -> pa.Table:
        """Run RUN's sightings part as stored."""
        path = part_path(self.out, "sightings", run)
        if not path.exists():
            msg = f"{path}: missing, though later runs carry its rows; restore it from a backup"
            raise StoreError(msg)
        return _read_file(path, "sightings", run=run, raw=True)


def base_rows(out: Path, latest: Mapping[str, int]) -> pa.Table:
    """The rows written in full that a new part may carry, of each file of LATEST.

    LATEST maps a file's path to the last run that stored its sightings. A file's base is
    that run, or the one run its rows there are carried from (carry.py), whose rows of the
    file are all written in full.
    """
    reader = _Bases(out)
    by_run: dict[int, list[str]] = {}
    for path, run in sorted(latest.items()):
        by_run.setdefault(run, []).append(path)
    bases: dict[int, list[str]] = {}
    for run, paths in sorted(by_run.items()):
        if not part_path(out, "sightings", run).exists():
            continue
        last = _of_files(reader.read(run), paths)
        carried = last.filter(pc.is_valid(last["base_run"])).select(["source_path", "base_run"])
        carried_from = {str(r["source_path"]): int(r["base_run"]) for r in carried.to_pylist()}
        for path in paths:
            bases.setdefault(carried_from.get(path, run), []).append(path)
    found = [_stored_schema("sightings").empty_table()]
    for run, paths in sorted(bases.items()):
        rows = _of_files(reader.read(run), paths)
        found.append(rows.filter(pc.is_null(rows["carried"])))
    return pa.concat_tables(found)


def _of_files(table: pa.Table, paths: list[str]) -> pa.Table:
    """The rows of TABLE whose `source_path` is one of PATHS."""
    return table.filter(pc.is_in(table["source_path"], value_set=pa.array(paths, pa.string())))


def read_part(path: Path, run: int, columns: Collection[str] | None = None) -> pa.Table:
    """Run RUN's sightings part at PATH, as stored (with its carried rows), migrated.

    COLUMNS reads only those (and `run`): for a part of this schema version alone, which no
    migration needs to see whole.
    """
    return _read_file(path, "sightings", run=run, raw=True, columns=columns)


def stored_schema(name: str) -> pa.Schema:
    """A part of partitioned table NAME as stored (schema.written()), with its `run`."""
    return _stored_schema(name)


def _stored_schema(name: str) -> pa.Schema:
    """A part of partitioned table NAME as stored (schema.written()), with its `run`."""
    return written(name).insert(0, TABLES[name].field(PARTITION_KEY))


def _chosen(run: int, wanted: set[int] | None, upto: int | None) -> bool:
    return (wanted is None or run in wanted) and (upto is None or run <= upto)


def _read_file(
    path: Path,
    name: str,
    *,
    run: int | None = None,
    raw: bool = False,
    columns: Collection[str] | None = None,
) -> pa.Table:
    """One Parquet file of table NAME, migrated; RUN is a part's run, taken from its folder.

    RAW keeps a part's rows as stored (with carried rows, schema.written()); COLUMNS reads
    only those (and `run`).
    """
    target = _stored_schema(name) if raw else in_memory(name)
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
            encoded = [c for c in names if c in ENCODED_IN_MEMORY.get(name, ())]
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
        if name in SEGMENTED:  # upgraded by ingest.upgrade(), not by the next commit
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
    return [name for name in SEGMENTED if (folder / f"{name}.parquet").is_file()]


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


def without_ruling_texts(sightings: pa.Table, rulings: pa.Table) -> pa.Table:
    """SIGHTINGS with `text` null where it is the text of the ruling the row is keyed to.

    A re-read of an unchanged ruling then costs its key and position, not its text again;
    store.read_table() puts the texts back (see with_ruling_texts).
    """
    read = as_dictionary(sightings["text"])
    ruling = as_dictionary(rulings["text"])
    ruling_ids = pc.take(ruling.indices, _ruling_rows(sightings, rulings)).cast(pa.int64())
    # Each distinct (text read, ruling text) pair is compared once, as strings; rows by ids.
    width = pa.scalar(len(ruling.dictionary), pa.int64())
    pairs = pc.add(pc.multiply(read.indices.cast(pa.int64()), width), ruling_ids)
    distinct = pc.unique(pairs.drop_null())
    read_of = pc.divide(distinct, width)  # integer division
    ruling_of = pc.subtract(distinct, pc.multiply(read_of, width))
    equal = pc.equal(read.dictionary.take(read_of), ruling.dictionary.take(ruling_of))
    same = false_if_null(pc.take(equal, pc.index_in(pairs, value_set=distinct)))
    kept = pc.if_else(same, pa.scalar(None, read.indices.type), read.indices)
    text = used_only(encoded(kept, read.dictionary))
    return replace_column(sightings, "text", text.cast(sightings.schema.field("text").type))


def with_ruling_texts(sightings: pa.Table, rulings: pa.Table) -> pa.Table:
    """SIGHTINGS with each null `text` taken from the ruling the row is keyed to.

    A rule of a version-6 dataset not yet upgraded (ingest.upgrade) may be keyed to no
    row: it takes the text of a ruling of its text hash.
    """
    if not sightings["text"].null_count:
        return sightings
    texts = _ruling_texts(sightings, rulings)
    filled = pc.coalesce(sightings["text"].cast(pa.string()), texts)
    return replace_column(sightings, "text", filled.cast(sightings.schema.field("text").type))


def _ruling_texts(sightings: pa.Table, rulings: pa.Table) -> Column:
    """The text of the ruling each row of SIGHTINGS is keyed to (else one of its hash).

    Of many rulings only those of SIGHTINGS' text hashes are keyed, and only the texts
    taken are decoded: a card's sightings in one part are a few rows among every ruling.
    """
    if sightings.num_rows * 4 < rulings.num_rows:  # the keys decoded: no dictionary merged
        hashes = pc.unique(sightings["text_hash"].cast(pa.string()))
        rulings = rulings.filter(pc.is_in(rulings["text_hash"], value_set=hashes))
        plain = pa.schema([TABLES["rulings"].field(name) for name in _KEY])
        keys = [t.select(_KEY).cast(plain) for t in (sightings, rulings)]
        rows = _ruling_rows(*keys)
    else:
        rows = _ruling_rows(sightings, rulings)
    texts = pc.take(rulings["text"], rows).cast(pa.string())
    unkeyed = pc.and_(pc.is_null(sightings["text"]), pc.is_null(texts))
    if pc.any(unkeyed).as_py():  # rules of a dataset not yet keyed by their number
        by_hash = pc.index_in(
            sightings["text_hash"].cast(pa.string()),
            value_set=rulings["text_hash"].cast(pa.string()),
        )
        texts = pc.coalesce(texts, pc.take(rulings["text"], by_hash).cast(pa.string()))
    return texts


def ruling_rows(sightings: pa.Table, rulings: pa.Table) -> Column:
    """The row of RULINGS each row of SIGHTINGS is keyed to (null if none is)."""
    return _ruling_rows(sightings, rulings)


def _ruling_rows(sightings: pa.Table, rulings: pa.Table) -> Column:
    """The row of RULINGS each row of SIGHTINGS is keyed to (null if none is)."""
    sighting_codes, ruling_codes = codes([sightings.select(_KEY), rulings.select(_KEY)], _KEY)
    return pc.index_in(sighting_codes, value_set=ruling_codes)


class ReadOptions(TypedDict, total=False):
    """The options of read_table a pinned Version passes on (its own base and horizon aside)."""

    runs: Iterable[int] | None
    where: Callable[[pa.Table], Mask] | None
    content: Callable[[pa.Table], Mask] | None


@dataclass(frozen=True, slots=True)
class Version:
    """One version of a dataset, pinned: every read sees the same run, whatever commits next.

    `base` holds its rewritten tables; of the append-only ones only the parts of runs up
    to `last_run` belong to it (a part may appear a moment before its run's switch).
    """

    out: Path
    base: Path
    last_run: int

    def table(self, name: str, **options: Unpack[ReadOptions]) -> pa.Table:
        """Table NAME of this version (see read_table for OPTIONS)."""
        return read_table(self.out, name, base=self.base, upto=self.last_run, **options)

    def parts(self, name: str, **options: Unpack[ReadOptions]) -> Iterator[pa.Table]:
        """The parts of partitioned table NAME of this version, one per run."""
        if legacy(self.out, self.base):
            yield self.table(name, **options)
            return
        yield from iter_parts(self.out, name, base=self.base, upto=self.last_run, **options)


def open_version(out: Path) -> Version:
    """Pin the version in force of the dataset in OUT."""
    check_folder_name(out)
    base = pinned(out)
    runs = _read_file(base / "runs.parquet", "runs")[PARTITION_KEY]  # one file in every version
    return Version(out, base, int(pc.max(runs).as_py() or 0))
