"""Crash-safe commits: every table of a run appears at once, or none does.

The rewritten tables (layout.VERSIONED) of each version live in `.versions/NNNNNN/`; a
symbolic link `.current` names the version in force, and each `NAME.parquet` (or `NAME/`
for the segmented `rulings` and `state`) is a link to `.current/NAME.parquet` (`.current/NAME`).
A commit builds the next version beside the current one (tables and segments it does not
rewrite are hard links to the current files) with the run's parts of the
append-only tables staged inside it, moves each part to its final place
(`sightings/run=42/part-0.parquet`, one rename each), then switches `.current` with one
atomic rename: the commit point. A crash before the switch leaves the previous version in
force, and the next run removes the parts of runs that version does not know; after it, the
new one. Temporary names start with a dot and do not end in `.parquet`.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import interrupts
from pipeline.columns import nulls, replace_column, used_only
from pipeline.errors import StoreError
from pipeline.limits import quiet_setting
from pipeline.schema import PARTITION_KEY, TABLES, in_memory, on_disk, with_metadata, written
from pipeline.storage import index, manifest
from pipeline.storage.kinds import Storage, kind_of, kinds, stored_as
from pipeline.storage.layout import (
    CURRENT,
    VERSIONED,
    VERSIONS,
    legacy,
    native_file,
    part_path,
    part_runs,
    segment_ids,
    segment_path,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, MutableMapping, Sequence

    from pipeline.storage.segments import Cut

# A superseded version stays this long for the readers that pinned it (Dataset, or a path
# under .versions/); the one just before the version in force is always kept.
RETAIN_SECONDS = quiet_setting("PIPELINE_RETAIN_SECONDS", 3600)
# Columns with few distinct values, stored dictionary-encoded.
_DICTIONARY_COLUMNS = [
    "card",
    "card_printed",
    "lang",
    "kind",
    "layout",
    "source",
    "source_path",
    "status",
    "card_origin",
    "encoding",
    "date_printed",
    "source_sha256",
]
ROW_GROUP = 100_000


def commit(
    out: Path,
    tables: MutableMapping[str, pa.Table],
    parts: MutableMapping[tuple[str, int], pa.Table] | None = None,
    segments: MutableMapping[str, dict[int, Cut | None]] | None = None,
    *,
    reindex: bool = False,
    retain: float | None = None,
) -> None:
    """Make TABLES (and the other tables as they are) and PARTS the next version, at once.

    TABLES maps rewritten one-file tables to their new contents; PARTS maps (table, run) to
    the rows of a new part of an append-only table; SEGMENTS maps a segmented table to its
    rewritten segments (segments.split; None: the segment goes), the others staying as
    they are. Each segment is gathered as it is written. REINDEX makes the sightings
    index anew from the parts, not trusting the current one (a repair). RETAIN replaces
    RETAIN_SECONDS for the versions this commit supersedes (recover).

    TABLES, PARTS and SEGMENTS are handed over: each entry is taken out as it is written,
    so a table the caller holds nowhere else is freed then, not at the end of the commit
    (a first ingest of a million rulings held some 490 MiB of them through the sightings
    index's stage, the run's peak).
    """
    parts = {} if parts is None else parts
    segments = {} if segments is None else segments
    segmented = stored_as(Storage.SEGMENTS)
    if set(tables) & set(segmented):
        msg = f"commit() takes {', '.join(segmented)} as segments (segments.split)"
        raise ValueError(msg)
    new_parts = sorted(parts)  # the parts' tables go as they are written, not their names
    try:
        current = _initialise(out)
        number = int(current.name) + 1
        staging = out / VERSIONS / f"{number:06d}.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        # The new parts are written on a second thread while this one writes the rest:
        # Parquet encoding and compression let go of the interpreter, so two cores work.
        side = _PartsWriter(staging, parts)
        staged_all = False
        try:
            side.start()
            for name in sorted(VERSIONED):
                _checkpoint()
                target = staging / f"{name}.parquet"
                if kind_of(name).segmented:
                    _stage_segments(current, staging, name, segments.pop(name, {}))
                elif name in tables:
                    _write_durable(target, tables.pop(name), name)
                else:
                    _link_or_copy(current / f"{name}.parquet", target)
            staged_all = True
        finally:
            side.finish(stop=not staged_all)  # its error, if any, is raised here
        _stage_index(out, current, staging, new_parts, reindex=reindex)
        staged = {(name, run): staging / _staged(name, run) for name, run in new_parts}
        _write_bytes(staging / manifest.FILE, manifest.build(out, current, staging, number, staged))
        _fsync(staging)
        _checkpoint()
        version = staging.rename(out / VERSIONS / f"{number:06d}")
        _fsync(out / VERSIONS)
        _checkpoint()
        for name, run in new_parts:
            _publish(version / _staged(name, run), part_path(out, name, run))
            _checkpoint()
        interrupts.committing()  # an interrupt from here on finds the run stored
        _switch(out, version)
        _checkpoint()
        recover(out, retain=retain)
    except OSError as exc:
        msg = f"{out}: cannot write the dataset ({exc}); the version before this run stays in force"
        raise StoreError(msg) from exc


class _PartsWriter:
    """The new parts of the append-only tables, staged on a thread of their own.

    No thread of a commit outlives it: one left writing after an interrupt went on filling
    a staging folder that the next commit clears and fills again (and counted the crash
    tests' steps in a later run). So the thread is started whole or not at all, and waited
    for to its end, whatever interrupt comes meanwhile (interrupts.held); a commit that
    fails first stops it at its next part.
    """

    def __init__(self, staging: Path, parts: MutableMapping[tuple[str, int], pa.Table]) -> None:
        self._stopping = threading.Event()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(
            target=self._write, args=(staging, parts), name="commit-parts"
        )

    def start(self) -> None:
        """Start writing."""
        with interrupts.held():
            self._thread.start()

    def finish(self, *, stop: bool) -> None:
        """Wait for the end of the writing, STOP: at the next part; raise its error if not STOP.

        With STOP the commit is failing already: its own error is the one to tell. An
        interrupt while it waits stops the writing at the next part too, and is taken then.
        """
        if stop:
            self._stopping.set()
        with interrupts.held(self._stopping.set):
            if self._thread.ident is not None:  # started
                self._thread.join()
        if self._failure is not None and not stop:
            raise self._failure

    def _write(self, staging: Path, parts: MutableMapping[tuple[str, int], pa.Table]) -> None:
        """Stage PARTS, one file each, each taken out of PARTS, until stopped."""
        try:
            for name, run in sorted(parts):
                if self._stopping.is_set():
                    return
                _checkpoint()
                _write_durable(staging / _staged(name, run), parts.pop((name, run)), name)
        except BaseException as exc:  # noqa: BLE001 - raised again on the committing thread
            self._failure = exc


def _stage_index(
    out: Path,
    current: Path,
    staging: Path,
    parts: Sequence[tuple[str, int]],
    *,
    reindex: bool = False,
) -> None:
    """Stage the sightings index (index.py) of the version: CURRENT's, with the new PARTS.

    REINDEX indexes every part afresh: STAGING, which has no index yet, stands for CURRENT.
    """
    staged = {run: staging / _staged(name, run) for name, run in parts if kind_of(name).indexed}
    if reindex:
        found = index.following(out, staging, staged)
    elif staged:
        found = index.following(out, current, staged)
    else:
        found = ({}, index.segment_ids(current))
    if found is None or not (found[0] or found[1]):
        return
    written, linked = found
    (staging / index.INDEX).mkdir()
    for seg in linked:  # the same parts: the same segment
        _link_or_copy(index.segment_path(current, seg), index.segment_path(staging, seg))
    for seg, table in sorted(written.items()):
        _checkpoint()
        index.write(index.segment_path(staging, seg), table)
        _checkpoint()  # written, not yet durable
        _fsync(index.segment_path(staging, seg))
    _fsync(staging / index.INDEX)


def _stage_segments(
    current: Path, staging: Path, name: str, rewritten: Mapping[int, Cut | None]
) -> None:
    """Stage segmented table NAME: REWRITTEN segments written, CURRENT's others linked.

    A table left without segments gets one empty segment, 0, so readers always find a
    file; it goes once the table has rows.
    """
    (staging / name).mkdir()
    written = {seg: cut for seg, cut in rewritten.items() if cut is not None}
    kept = [seg for seg in segment_ids(current, name) if seg not in rewritten]
    if (
        written
        and 0 in kept
        and not pq.ParquetFile(segment_path(current, name, 0)).metadata.num_rows
    ):
        kept.remove(0)
    for seg in kept:
        _link_or_copy(segment_path(current, name, seg), segment_path(staging, name, seg))
    if not kept and not written:
        _write_durable(segment_path(staging, name, 0), in_memory(name).empty_table(), name)
    for seg, cut in sorted(written.items()):
        _checkpoint()
        # A row group gathered at a time: a segment is never whole in memory.
        _write_row_groups(segment_path(staging, name, seg), cut.row_groups(ROW_GROUP), name)
    _fsync(staging / name)


def _staged(name: str, run: int) -> str:
    return f".{name}-{run}.part"


def _publish(staged: Path, final: Path) -> None:
    """Move a staged part to its final place: it appears whole, by one rename."""
    folder = final.parent
    if not folder.is_dir():
        folder.mkdir(parents=True)
        _fsync(folder.parent)
    staged.replace(final)
    _fsync(folder)


def recover(out: Path, *, retain: float | None = None) -> None:
    """Drop what an interrupted commit left, and keep the links to the version in force.

    Parts of runs the version in force does not know (a commit that never switched) are
    removed, as are all parts while the version in force still keeps its append-only
    tables as single files (an interrupted upgrade from schema version 3). Superseded
    versions go once they have been superseded for RETAIN seconds (default:
    RETAIN_SECONDS), except the last one.
    """
    versions = out / VERSIONS
    if not (out / CURRENT).is_symlink():
        return
    (out / f"{CURRENT}.tmp").unlink(missing_ok=True)
    in_force = (out / CURRENT).resolve()
    for name in TABLES:
        if (in_force / f"{name}.parquet").is_file():
            _ensure_link(out, f"{name}.parquet")
        elif (out / f"{name}.parquet").is_symlink():
            (out / f"{name}.parquet").unlink()  # a table the version no longer keeps
    for name in stored_as(Storage.SEGMENTS):
        if (in_force / name).is_dir():
            _ensure_link(out, name)
        elif (out / name).is_symlink():
            (out / name).unlink()
    _drop_unknown_parts(out, in_force)
    _retire_versions(versions, in_force.name, RETAIN_SECONDS if retain is None else retain)


def _drop_unknown_parts(out: Path, in_force: Path) -> None:
    partitioned = stored_as(Storage.PARTS)
    if legacy(out, in_force):
        for name in partitioned:
            shutil.rmtree(out / name, ignore_errors=True)
        return
    runs = pq.read_table(in_force / "runs.parquet", columns=[PARTITION_KEY])[PARTITION_KEY]
    last = pc.max(runs).as_py() or 0
    for name in partitioned:
        for run in part_runs(out, name):
            if run > last:
                shutil.rmtree(part_path(out, name, run).parent)


def _retire_versions(versions: Path, in_force: str, retain: float) -> None:
    numbered = sorted(p.name for p in versions.iterdir() if p.name.isdigit())
    at = numbered.index(in_force)
    now = time.time()
    keep = {in_force, *numbered[max(0, at - 1) : at]}
    for older, newer in itertools.pairwise(numbered[: at + 1]):
        if now - (versions / newer).stat().st_mtime < retain:
            keep.add(older)  # superseded only lately: a reader may still be on it
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
        in_force = current.resolve()
        for name in VERSIONED:  # a version written before the table existed
            if not (in_force / f"{name}.parquet").exists() and not (in_force / name).is_dir():
                return _adopt(out, in_force)
        return in_force
    _check_adoptable(out)
    return _adopt(out, out)


def _check_adoptable(out: Path) -> None:
    """Refuse to adopt OUT if that would lose what it holds (a StoreError naming why).

    A copy made without the hidden `.current` and `.versions` (`cp -r normalized/*`) keeps
    the tables' links, leading nowhere, and the runs' parts: adopted, its tables would be
    empty, and the parts of every run they do not know would be removed as a crashed
    commit's. Nothing is written.
    """
    entries = [*(f"{name}.parquet" for name in TABLES), *stored_as(Storage.SEGMENTS), CURRENT]
    dangling = sorted(e for e in entries if (out / e).is_symlink() and not (out / e).exists())
    if dangling:
        msg = (
            f"{out}: {', '.join(dangling)} link to a version that is not there (a copy made "
            f"without the hidden {CURRENT} and {VERSIONS}?): nothing written; copy the "
            "dataset with its links (cp -a) or restore them"
        )
        raise StoreError(msg)
    runs = out / "runs.parquet"
    known = (
        set(pq.read_table(runs, columns=[PARTITION_KEY])[PARTITION_KEY].to_pylist())
        if (runs.is_file())
        else set()
    )
    for name in stored_as(Storage.PARTS):
        unknown = sorted(set(part_runs(out, name)) - known)
        if unknown:
            msg = (
                f"{out}: {name}/ holds the parts of runs {', '.join(map(str, unknown))}, "
                "which no runs.parquet here records: nothing written, nothing removed; "
                "restore the dataset's runs.parquet or its hidden versions"
            )
            raise StoreError(msg)


def _adopt(out: Path, folder: Path) -> Path:
    """A new version holding FOLDER's table files, and empty tables for those it lacks."""
    versions = out / VERSIONS
    numbered = (
        [int(p.name) for p in versions.iterdir() if p.name.isdigit()] if versions.is_dir() else []
    )
    name_of = f"{max(numbered, default=-1) + 1:06d}"
    staging = versions / f"{name_of}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for kind in kinds():
        name = kind.name
        found = folder / f"{name}.parquet"
        target = staging / f"{name}.parquet"
        if kind.segmented and ((folder / name).is_dir() or not found.is_file()):
            _stage_segments(folder, staging, name, {})  # its segments linked, or one empty
        elif found.is_file():
            _link_or_copy(found.resolve(), target)
        elif kind.versioned:
            _write_durable(target, in_memory(name).empty_table(), name)
    for seg in index.segment_ids(folder):  # the same parts: the same index (a newer table)
        (staging / index.INDEX).mkdir(exist_ok=True)
        _link_or_copy(index.segment_path(folder, seg), index.segment_path(staging, seg))
    _fsync(staging)
    version = staging.rename(versions / name_of)
    current = out / CURRENT
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


def _ensure_link(out: Path, entry: str) -> None:
    """Make ENTRY (`NAME.parquet` or `NAME`) the link to `.current/ENTRY`.

    It replaces an older plain file; a plain folder (a copy made without keeping links)
    is moved aside first, its files being those of a version already adopted.
    """
    final = out / entry
    target = Path(CURRENT) / entry
    if final.is_symlink() and final.readlink() == target:
        return
    if final.is_dir() and not final.is_symlink():
        shutil.rmtree(final)
    temporary = out / f".{entry}.link"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(target)
    temporary.replace(final)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)  # a file system without hard links


# Fault injection for the crash tests: with PIPELINE_CRASH_AT=N in the environment, the
# process kills itself (SIGKILL, as a power cut would stop it) at its Nth write step; with
# PIPELINE_INTERRUPT_AT=N it sends itself SIGINT there (as Ctrl-C or a job's stop would).
_CRASH_AT = quiet_setting("PIPELINE_CRASH_AT", 0)
_INTERRUPT_AT = quiet_setting("PIPELINE_INTERRUPT_AT", 0)
_steps = 0
_counting = threading.Lock()  # parts are written on a second thread: each step counts once


def _checkpoint() -> None:
    global _steps  # noqa: PLW0603 - one counter per process, for fault injection only
    with _counting:
        _steps += 1
        step = _steps
    if step == _CRASH_AT:
        os.kill(os.getpid(), signal.SIGKILL)
    if step == _INTERRUPT_AT:
        # To the main thread, as a terminal's Ctrl-C reaches it: sent from the parts' thread
        # to the process, it could be taken by that thread and handled late.
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def _write_durable(path: Path, table: pa.Table, name: str) -> None:
    """Write TABLE as table NAME a row group at a time, then make it durable."""
    starts = range(0, table.num_rows, ROW_GROUP)
    _write_row_groups(path, (table.slice(start, ROW_GROUP) for start in starts), name)


def _write_row_groups(path: Path, groups: Iterable[pa.Table], name: str) -> None:
    """Write GROUPS, the rows of table NAME a row group each, to PATH; make it durable.

    Columns the stages hold dictionary-encoded are written as they are (Parquet stores a
    dictionary page and indices either way), so nothing is decoded to be encoded again.
    The Arrow schema is not stored: readers take the Parquet types, which are those of
    schema.TABLES, plain strings; the schema version goes in the key-value metadata.
    """
    schema, kind = written(name), kind_of(name)
    columns = [c for c in schema.names if c in kind.encoded or c in _DICTIONARY_COLUMNS]
    with native_file(path, "wb") as handle:  # Arrow's own file: see layout.native_file
        writer = pq.ParquetWriter(
            handle,
            schema,
            compression="zstd",
            use_dictionary=columns,  # type: ignore[arg-type]  # the stubs omit the list form
            store_schema=False,
        )
        try:
            for rows in groups:
                writer.write_table(_as_written(rows, name, schema))
            metadata = with_metadata(name, on_disk(name)).metadata or {}
            writer.add_key_value_metadata({k.decode(): v.decode() for k, v in metadata.items()})
        finally:  # closed before its file is, even when a write fails or is interrupted
            writer.close()
    _checkpoint()  # written, not yet durable
    _fsync(path)


def _as_written(rows: pa.Table, name: str, schema: pa.Schema) -> pa.Table:
    """ROWS of table NAME as the writer takes them: in SCHEMA (schema.written())."""
    if kind_of(name).partitioned:  # the run is in the part's folder name, not in its file
        rows = rows.drop_columns([PARTITION_KEY])
    for field in schema:  # a sightings part none of whose rows is carried (carry.py)
        if field.name not in rows.column_names and field.nullable:
            rows = rows.append_column(field.name, nulls(rows.num_rows, field.type))
    return _own_dictionaries(rows.select(schema.names), schema).cast(schema)


def _write_bytes(path: Path, data: bytes) -> None:
    """Write DATA to PATH and make it durable (a step the crash tests kill at)."""
    path.write_bytes(data)
    _checkpoint()  # written, not yet durable
    _fsync(path)


def _own_dictionaries(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """TABLE with each dictionary column's dictionary cut to the values its rows use.

    A run's columns share the dictionary of all the run's texts and hashes; written as it
    is, a part of a few hundred changes carried every hash of the run (383 rows, 4 MB).
    A column SCHEMA writes as plain strings is only combined into one chunk: its rows'
    values are what the writer is given, and cutting a dictionary that the cast decodes
    next was one more copy of the texts a row group holds (35 MB of a 120,000-ruling bulk
    file's, beside the decoded ones).
    """
    for name in table.column_names:
        column = table[name]
        if pa.types.is_dictionary(column.type) and column.num_chunks:
            combined = column.combine_chunks()
            kept = pa.types.is_dictionary(schema.field(name).type)
            table = replace_column(table, name, used_only(combined) if kept else combined)
    return table


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
