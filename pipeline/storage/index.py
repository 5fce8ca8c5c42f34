"""A derived index of the sightings parts: a card's read opens a few parts, not every run's.

Each version folder may hold INDEX, one small file with a row per stored row of every
sightings part (carry.py): its run and row number, its file's columns, its position, its
card, its carried columns, and for a row written in full its *origin*: the first row of an
unbroken chain of runs, each run's row equal in content to the one in the run before. A
card's read takes the positions of its sightings from the index and the content of each
from its origin's part alone: bases and the runs that amended the card, a dozen a year.

The index is derived: written with the version by the commit that writes a part (or
rebuilt from the parts when the version before has none), never needed. The file lists
the size and modification time of each part it summarises; a reader uses it only for the
parts that still match (and whose rows' origins do), and reads the others themselves. A
dataset without it reads the same sightings, more slowly.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.columns import Column, Mask, replace_column
from pipeline.errors import StoreError
from pipeline.keys import codes
from pipeline.schema import CARRY_COLUMNS, FILE_COLUMNS, PARTITION_KEY
from pipeline.storage import layout
from pipeline.storage.carry import Content, content_columns, kept_in_full, occurrence_keys

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping
    from pathlib import Path

INDEX = "sightings-index"  # a folder of segments, each of SPAN runs
SPAN = 32
# A file's code and a position in one int64 key, as carry.py keys them.
_SHIFT = 40
_FORMAT_KEY = b"pipeline.sightings_index"
_FORMAT = b"1"
_PARTS_KEY = b"pipeline.sightings_index.parts"  # {run: [size, mtime_ns]} of each part
_OWN = ("row", "origin_run", "origin_row")
# The columns of a sightings part that its index rows keep.
_KEPT = (PARTITION_KEY, *FILE_COLUMNS, "position", "card", *CARRY_COLUMNS)
# The columns a Content may look at for the index to answer it.
INDEXED = frozenset({"card"})


def schema() -> pa.Schema:
    """The index's columns: the parts' own (as stored) and the row, its origin's run and row."""
    stored = layout.stored_schema("sightings")
    own = [pa.field(name, pa.int64()) for name in _OWN]
    return pa.schema([*(stored.field(name) for name in _KEPT), *own])


@dataclass(frozen=True, slots=True)
class Index:
    """An index as read: ROWS of the parts of RUNS, each unchanged since it was indexed."""

    rows: pa.Table
    runs: frozenset[int]
    parts: dict[int, list[int]]


def _stat(path: Path) -> list[int] | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return [found.st_size, found.st_mtime_ns]


def segment_path(folder: Path, segment: int) -> Path:
    """Where segment SEGMENT of the index of the version FOLDER lives."""
    return folder / INDEX / f"{segment:06d}.parquet"


def segment_ids(folder: Path) -> list[int]:
    """The segments of the index of the version FOLDER, in order (none: it has no index)."""
    return layout.segment_ids(folder, INDEX)


def _segment_of(run: int) -> int:
    return run // SPAN


def _parts_of(path: Path) -> dict[int, list[int]] | None:
    """The parts a segment file summarises, from its footer alone (None: not our format)."""
    try:
        meta = pq.read_schema(path).metadata or {}
        if meta.get(_FORMAT_KEY) != _FORMAT:
            return None  # written by another version of this module: not ours to read
        return {int(run): stat for run, stat in json.loads(meta[_PARTS_KEY]).items()}
    except (OSError, KeyError, ValueError, pa.ArrowInvalid) as exc:
        msg = f"{path}: not a readable index ({exc}); delete it, the next run rebuilds it"
        raise StoreError(msg) from exc


def _rows(path: Path) -> pa.Table:
    try:
        with layout.native_file(path) as source:
            table = pq.ParquetFile(source, read_dictionary=["source_path", "card"]).read()
        return table.select(schema().names).cast(schema())
    except (OSError, KeyError, ValueError, pa.ArrowInvalid) as exc:
        msg = f"{path}: not a readable index ({exc}); delete it, the next run rebuilds it"
        raise StoreError(msg) from exc


def load(folder: Path, out: Path, segments: Collection[int] | None = None) -> Index | None:
    """The index of the version FOLDER of the dataset OUT, its stale runs left out (or None).

    SEGMENTS reads only those of its segments.
    """
    ids = segment_ids(folder)
    listed = [_parts_of(segment_path(folder, seg)) for seg in ids]
    if not ids or any(found is None for found in listed):
        return None
    every = {run: stat for found in listed for run, stat in (found or {}).items()}
    unchanged = {
        run for run, stat in every.items() if _stat(layout.part_path(out, "sightings", run)) == stat
    }
    parts: dict[int, list[int]] = {}
    chosen = []
    for seg, found in zip(ids, listed, strict=True):
        if segments is None or seg in segments:
            parts.update(found or {})
            chosen.append(segment_path(folder, seg))
    with ThreadPoolExecutor(max_workers=2) as pool:  # decoding lets go of the interpreter
        table = pa.concat_tables([schema().empty_table(), *pool.map(_rows, chosen)])
    valid = set(parts) & unchanged
    if len(unchanged) < len(every):
        # A row whose origin's part changed cannot be told from the index: its run is read.
        origins = pc.is_in(table["origin_run"], value_set=pa.array(sorted(unchanged), pa.int64()))
        broken = table.filter(pc.and_(pc.is_valid(table["origin_run"]), pc.invert(origins)))
        valid -= set(pc.unique(broken[PARTITION_KEY]).to_pylist())
    if len(valid) < len(parts):
        table = table.filter(pc.is_in(table[PARTITION_KEY], pa.array(sorted(valid), pa.int64())))
    return Index(table, frozenset(valid), {run: parts[run] for run in valid})


def rows_of(stored: pa.Table, before: pa.Table | None, indexed: pa.Table | None) -> pa.Table:
    """The index rows of STORED, one run's part as stored.

    BEFORE is the part of the run before (as stored) and INDEXED its index rows: a row
    written in full equal in content to one of BEFORE's takes that one's origin.
    """
    size = stored.num_rows
    run = int(stored[PARTITION_KEY][0].as_py()) if size else 0
    row = np.arange(size, dtype=np.int64)
    explicit = pc.is_null(stored["carried"]).to_numpy(zero_copy_only=False)
    origin_run = np.full(size, run, dtype=np.int64)
    origin_row = row.copy()
    if before is not None and indexed is not None and before.num_rows and size:
        whole = pc.is_null(before["carried"])
        earlier = before.filter(whole)
        earlier_row = np.flatnonzero(whole.to_numpy(zero_copy_only=False))
        by_row = indexed.sort_by("row")
        names = ["source_path", *content_columns(stored)]
        mine, theirs = occurrence_keys(codes([stored, earlier.select(stored.column_names)], names))
        found = pc.index_in(pa.array(mine), value_set=pa.array(theirs))
        matched = found.is_valid().to_numpy(zero_copy_only=False) & explicit
        at = earlier_row[found.fill_null(0).to_numpy()[matched]]
        origin_run[matched] = by_row["origin_run"].to_numpy(zero_copy_only=False)[at]
        origin_row[matched] = by_row["origin_row"].to_numpy(zero_copy_only=False)[at]
    mask = ~explicit
    table = stored.select(list(_KEPT))
    table = table.append_column("row", pa.array(row, pa.int64()))
    table = table.append_column("origin_run", pa.array(origin_run, pa.int64(), mask=mask))
    table = table.append_column("origin_row", pa.array(origin_row, pa.int64(), mask=mask))
    return table.cast(schema())


def following(
    out: Path, current: Path, staged: Mapping[int, Path]
) -> tuple[dict[int, pa.Table], list[int]] | None:
    """The index of the version after CURRENT, whose new sightings parts are STAGED (by run).

    The segments to write, and those of CURRENT to keep as they are: a run rewrites the
    segment of its own run alone while CURRENT's index holds every part unchanged. Else
    the runs it holds unchanged are kept and the others (all, if it has none) indexed
    from their parts, every segment written. None: no part to index.
    """
    runs = sorted({*layout.part_runs(out, "sightings"), *staged})
    if not runs:
        return None
    ids = segment_ids(current)
    listed = {seg: _parts_of(segment_path(current, seg)) for seg in ids}
    indexed = {run: stat for found in listed.values() for run, stat in (found or {}).items()}
    stored = [run for run in runs if run not in staged]
    if (
        ids
        and all(found is not None for found in listed.values())
        and sorted(indexed) == stored
        and min(staged, default=0) > max(stored, default=0)
        and all(_stat(layout.part_path(out, "sightings", r)) == s for r, s in indexed.items())
    ):
        touched = {_segment_of(run) for run in staged}
        previous = {_segment_of(stored[-1])} if stored else set()
        old = load(current, out, touched | previous)
        table, parts = _indexed(out, [*stored[-1:], *sorted(staged)], staged, old)
        for seg in touched:
            parts.update(listed.get(seg) or {})
        link = [seg for seg in ids if seg not in touched]
    else:
        touched = {_segment_of(run) for run in runs}
        table, parts = _indexed(out, runs, staged, load(current, out))
        link = []
    written = {}
    for seg in sorted(touched):
        low, high = pa.scalar(seg * SPAN, pa.int64()), pa.scalar((seg + 1) * SPAN, pa.int64())
        rows = table.filter(
            pc.and_(
                pc.greater_equal(table[PARTITION_KEY], low), pc.less(table[PARTITION_KEY], high)
            )
        )
        held = {str(r): s for r, s in sorted(parts.items()) if _segment_of(r) == seg}
        meta = {_FORMAT_KEY: _FORMAT, _PARTS_KEY: json.dumps(held).encode()}
        written[seg] = rows.replace_schema_metadata(meta)
    return written, link


def _indexed(
    out: Path, runs: list[int], staged: Mapping[int, Path], old: Index | None
) -> tuple[pa.Table, dict[int, list[int]]]:
    """The index rows of RUNS, OLD's kept where it holds them, and the parts they are of."""
    pieces: list[pa.Table] = []
    parts: dict[int, list[int]] = {}
    before: tuple[pa.Table | None, pa.Table | None] = (None, None)
    for run in runs:
        path = staged.get(run, layout.part_path(out, "sightings", run))
        if old is not None and run in old.runs and run not in staged:
            parts[run] = old.parts[run]
            before = (None, old.rows)  # the part is read only if the next run needs it
            continue
        stat = _stat(path)
        if stat is None:
            continue
        # A part this commit staged is read in the columns its index rows keep (the part's
        # other columns are for matching its rows with the run before's, below): the new
        # part's whole table is in memory beside it already.
        whole = run not in staged
        stored = layout.read_part(path, run, None if whole else _KEPT)
        held, indexed = before
        if indexed is not None:
            last = run_before(parts, run)
            indexed = indexed.filter(pc.equal(indexed[PARTITION_KEY], pa.scalar(last, pa.int64())))
            if not _same_files(stored, indexed):
                # Only a reading of the same file can repeat a row: a run of new files
                # needs the run before neither read nor matched (a set file added to a
                # million rulings read its part of a million rows).
                held, indexed = None, None
            if indexed is not None and held is None and indexed.num_rows:
                # The run before's part: staged by this commit too, or stored.
                held = layout.read_part(
                    staged.get(last, layout.part_path(out, "sightings", last)), last
                )
        if held is not None and indexed is not None and not whole:
            stored, whole = layout.read_part(path, run), True  # its rows are matched
        rows = rows_of(stored, held, indexed)
        pieces.append(rows)
        parts[run] = stat
        before = (stored if whole else None, rows)
    kept = [old.rows] if old is not None else []
    table = pa.concat_tables([schema().empty_table(), *kept, *pieces])
    if old is not None and old.runs and pieces and max(old.runs) > _first(pieces):  # re-indexed
        table = table.take(
            pc.sort_indices(table, [(PARTITION_KEY, "ascending"), ("row", "ascending")])
        )
    return table, parts


def _same_files(stored: pa.Table, indexed: pa.Table) -> bool:
    """Whether a part (STORED) holds a file that the index rows INDEXED hold."""
    if not stored.num_rows or not indexed.num_rows:
        return False
    paths = pc.unique(indexed["source_path"].cast(pa.string()))
    return bool(pc.any(pc.is_in(stored["source_path"].cast(pa.string()), value_set=paths)).as_py())


def _first(pieces: list[pa.Table]) -> int:
    """The first run of PIECES, index rows of runs in order."""
    return int(pieces[0][PARTITION_KEY][0].as_py()) if pieces[0].num_rows else 0


def run_before(parts: Mapping[int, list[int]], run: int) -> int:
    """The last run before RUN of PARTS (0 if none)."""
    return max((r for r in parts if r < run), default=0)


def write(path: Path, table: pa.Table) -> None:
    """Write the index TABLE to PATH (the caller makes it durable)."""
    with layout.native_file(path, "wb") as handle:
        pq.write_table(table, handle, compression="zstd", row_group_size=1 << 20)


def cuts(index: Index, out: Path, runs: list[int], content: Content) -> tuple[pa.Table, pa.Table]:
    """The rows of RUNS (all in INDEX) as selection._Cut cuts their parts, in run and row order.

    The first table holds the rows written in full that CONTENT keeps, of RUNS and of the
    runs their carried rows name; the second those of RUNS, and their carried rows.
    """
    chosen = pa.array(runs, pa.int64())
    rows = index.rows
    in_runs = pc.is_in(rows[PARTITION_KEY], value_set=chosen)
    in_full, carried = kept_in_full(rows, content)
    ranges = rows.filter(pc.and_(in_runs, carried))
    bases = pc.unique(ranges["base_run"]).cast(pa.int64())
    wanted = pc.and_(in_full, pc.or_(in_runs, pc.is_in(rows[PARTITION_KEY], value_set=bases)))
    kept_rows = rows.filter(wanted)
    # Those of bases the index does not hold are expanded from the parts themselves.
    held = pc.is_in(ranges["base_run"], value_set=pa.array(sorted(index.runs), pa.int64()))
    ranges = ranges.filter(pc.or_(pc.invert(held), _overlapping(ranges, kept_rows)))
    whole = _with_content(out, kept_rows)
    kept = pa.concat_tables(
        [whole.filter(pc.is_in(whole[PARTITION_KEY], value_set=chosen)), _as_stored(ranges)]
    )
    order = pc.sort_indices(kept, [(PARTITION_KEY, "ascending"), ("row", "ascending")])
    return whole.drop_columns(["row"]), kept.take(order).drop_columns(["row"])


def _overlapping(ranges: pa.Table, rows: pa.Table) -> Mask:
    """Which carried RANGES stand for some of ROWS, index rows written in full.

    The others stand for sightings a content filter drops: they need not be expanded.
    """
    if not ranges.num_rows or not rows.num_rows:
        return pa.array(np.zeros(ranges.num_rows, dtype=bool), pa.bool_())
    base = ranges.select(["base_run", "source_path"]).rename_columns([PARTITION_KEY, "source_path"])
    range_codes, row_codes = (
        c.to_numpy(zero_copy_only=False).astype(np.int64)
        for c in codes(
            [base, rows.select([PARTITION_KEY, "source_path"])], [PARTITION_KEY, "source_path"]
        )
    )
    keys = np.sort((row_codes << _SHIFT) + rows["position"].to_numpy(zero_copy_only=False))
    start = (range_codes << _SHIFT) + ranges["base_position"].to_numpy(zero_copy_only=False)
    stop = start + ranges["carried"].to_numpy(zero_copy_only=False)
    return pa.array(np.searchsorted(keys, start) < np.searchsorted(keys, stop), pa.bool_())


def _with_content(out: Path, rows: pa.Table) -> pa.Table:
    """ROWS, index rows written in full, as stored: their content from their origins' parts."""
    schema = layout.stored_schema("sightings")
    origin_run = rows["origin_run"].to_numpy(zero_copy_only=False)
    origin_row = rows["origin_row"].to_numpy(zero_copy_only=False)
    runs = sorted(set(origin_run.tolist()))
    order = [np.flatnonzero(origin_run == run) for run in runs]

    def taken(at: int) -> pa.Table:
        part = layout.read_part(layout.part_path(out, "sightings", runs[at]), runs[at])
        return part.take(pa.array(origin_row[order[at]])).select(schema.names)

    # Two parts at a time: Parquet decoding lets go of the interpreter.
    with ThreadPoolExecutor(max_workers=2) as pool:
        pieces = list(pool.map(taken, range(len(runs))))
    table = pa.concat_tables([schema.empty_table(), *pieces])
    table = table.take(np.argsort(np.concatenate([np.zeros(0, np.int64), *order]), kind="stable"))
    for name in (PARTITION_KEY, *FILE_COLUMNS, "position"):
        table = replace_column(table, name, rows[name])
    return table.cast(schema).append_column("row", rows["row"])


def _as_stored(ranges: pa.Table) -> pa.Table:
    """RANGES, index rows of carried rows, as stored: every other column null."""
    schema = layout.stored_schema("sightings")
    columns: list[Column] = [
        ranges[f.name].cast(f.type)
        if f.name in ranges.column_names and f.name != "card"
        else pa.nulls(ranges.num_rows, f.type)
        for f in schema
    ]
    return pa.table(columns, schema=schema).append_column("row", ranges["row"])


def disagreeing(folder: Path, out: Path) -> list[int]:
    """The runs whose index rows in the version FOLDER differ from their parts (§9, 16-17).

    Runs whose part changed since it was indexed are left out: the index is not trusted for
    them (load), and reads take their parts. Each other run's rows are made again from the
    parts, as a commit that re-indexes everything would, and compared.
    """
    found = load(folder, out)
    if found is None or not found.runs:
        return []
    runs = sorted(found.parts)
    fresh, _ = _indexed(out, runs, {}, None)
    wrong = []
    for run in runs:
        at = pa.scalar(run, pa.int64())
        mine = found.rows.filter(pc.equal(found.rows[PARTITION_KEY], at))
        theirs = fresh.filter(pc.equal(fresh[PARTITION_KEY], at))
        if not _decoded(mine.sort_by("row")).equals(_decoded(theirs.sort_by("row"))):
            wrong.append(run)
    return wrong


def _decoded(table: pa.Table) -> pa.Table:
    """TABLE with plain strings: two dictionaries of the same values compare equal."""
    plain = [
        pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f
        for f in table.schema
    ]
    return table.cast(pa.schema(plain))
