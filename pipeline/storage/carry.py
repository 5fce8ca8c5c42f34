"""Sightings carried by reference: a re-read costs what changed in the file, not the file.

A daily job reads the same bulk file every day, and nearly all of its sightings repeat the
day before's but for the file's own columns (its sha256, fetch time, as-of date: FILE_COLUMNS)
and their positions. A sightings part writes each run of such rows as one *carried* row:
`carried` sightings of one file from `position` on whose other columns are those of the
sightings of the same file in run `base_run` from `base_position` on. The rows of a base are
always written in full, so one look at the base expands a part (store.iter_parts does it, and
the DuckDB view); a file is written in full again, and becomes the base of the runs after,
when more than REBASE_SHARE of its rows would be.

Its functions are pure: by_reference() is given the base rows, expanded() the base parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Column, Mask, encoded, false_if_null, replace_column, used_only
from pipeline.errors import StoreError
from pipeline.keys import codes
from pipeline.schema import CARRY_COLUMNS, FILE_COLUMNS, PARTITION_KEY

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from numpy.typing import NDArray

# A file is written in full when more than this share of its rows would be written in full
# anyway: the rows that differ from its base grow with every amendment since the base.
REBASE_SHARE = 0.1
# Positions are below 2**40 (a trillion rulings a file), so a file's code and a position fit
# one int64 key.
_SHIFT = 40
_NOT_CONTENT = {*FILE_COLUMNS, *CARRY_COLUMNS, "position", PARTITION_KEY}


@dataclass(frozen=True, slots=True)
class Content:
    """A filter of sightings by their content columns COLUMNS alone (store.read_table).

    Called on a table, it gives KEEP's mask; the columns let a reader fetch those alone.
    """

    columns: tuple[str, ...]
    keep: Callable[[pa.Table], Mask]

    def __call__(self, table: pa.Table) -> Mask:
        """Which rows of TABLE to keep."""
        return self.keep(table)


def of_cards(cards: Collection[str]) -> Content:
    """The sightings of CARDS (names as stored)."""
    wanted = pa.array(sorted(cards), pa.string())
    return Content(("card",), lambda table: pc.is_in(table["card"], value_set=wanted))


def content_columns(table: pa.Table) -> list[str]:
    """The columns of TABLE that a carried row takes from its base: all but the file's."""
    return [name for name in table.column_names if name not in _NOT_CONTENT]


def kept_in_full(rows: pa.Table, content: Callable[[pa.Table], Mask]) -> tuple[Mask, Mask]:
    """Which ROWS are written in full and kept by CONTENT, and which are carried rows.

    ROWS are a part's rows as stored, or the index's rows of parts (index.py): a read cut
    to both (selection.py, index.cuts) holds what expanded() needs to give CONTENT's rows.
    """
    accepted = false_if_null(content(rows))
    carried = pc.is_valid(rows["carried"])
    return pc.and_(accepted, pc.invert(carried)), carried


def by_reference(new: pa.Table, base: pa.Table) -> pa.Table:
    """NEW, one run's sightings, with each stretch that repeats BASE written as a carried row.

    BASE holds the rows written in full of each file's base run, with their `run`; NEW's
    rows are in file and position order. Rows are matched on their file and every content
    column (the k-th of equal rows to the k-th), and consecutive matches of consecutive
    positions make one carried row. The result has NEW's columns and CARRY_COLUMNS, its
    rows in NEW's order, each carried row in the place of its first sighting.
    """
    explicit = _with_carry_columns(new)
    if not new.num_rows or not base.num_rows:
        return explicit
    content = content_columns(new)
    names = ["source_path", *content]
    new_keys, base_keys = occurrence_keys(codes([new, base.select(new.column_names)], names))
    found = pc.index_in(pa.array(new_keys), value_set=pa.array(base_keys))
    matched = found.is_valid().to_numpy(zero_copy_only=False)
    at = found.fill_null(0).to_numpy().astype(np.int64)
    base_run = _numbers(base[PARTITION_KEY])[at]
    base_position = _numbers(base["position"])[at]
    matched &= _files_worth_carrying(new, base, matched)
    position = _numbers(new["position"])
    same_file = _same_file(new)
    follows = np.zeros(new.num_rows, dtype=bool)
    follows[1:] = (
        matched[1:]
        & matched[:-1]
        & same_file[1:]
        & (position[1:] == position[:-1] + 1)
        & (base_position[1:] == base_position[:-1] + 1)
        & (base_run[1:] == base_run[:-1])
    )
    starts = matched & ~follows
    if not starts.any():
        return explicit
    kept = ~matched | starts  # the rows written: in full, or one per stretch
    first = np.flatnonzero(starts)
    # A stretch runs from its first row up to the next row that does not follow the one before.
    stop = np.append(np.flatnonzero(~follows), new.num_rows)
    length = stop[np.searchsorted(stop, first, side="right")] - first
    table = explicit.filter(pa.array(kept))
    carried_at = np.flatnonzero(starts[kept])
    size = table.num_rows
    for name, values in (
        ("carried", length),
        ("base_run", base_run[first]),
        ("base_position", base_position[first]),
    ):
        column = np.zeros(size, dtype=np.int64)
        column[carried_at] = values
        mask = np.ones(size, dtype=bool)
        mask[carried_at] = False
        table = replace_column(table, name, pa.array(column, pa.int64(), mask=mask))
    return _nulled(table, content, pa.array(starts[kept]))


def expanded(
    part: pa.Table,
    bases: Mapping[int, pa.Table],
    content: Callable[[pa.Table], Mask] | None = None,
) -> pa.Table:
    """PART, one run's rows as stored, as the sightings it stands for, in their order.

    BASES maps each run PART's carried rows name to that run's rows as stored. CONTENT, a
    filter of a table's rows by their content columns alone, keeps only the sightings it
    accepts (carried ones are judged by their base rows). The result leaves CARRY_COLUMNS out.
    """
    carried_mask = pc.is_valid(part["carried"]) if "carried" in part.column_names else None
    if carried_mask is None or not pc.any(carried_mask).as_py():
        plain = part.drop_columns([c for c in CARRY_COLUMNS if c in part.column_names])
        return plain.filter(content(plain)) if content is not None and plain.num_rows else plain
    order = np.arange(part.num_rows, dtype=np.int64) << 32
    pieces: list[pa.Table] = []
    keys: list[NDArray[np.int64]] = []
    explicit_mask = pc.invert(carried_mask)
    explicit = part.filter(explicit_mask).drop_columns(list(CARRY_COLUMNS))
    explicit_order = order[_array(explicit_mask)]
    if content is not None and explicit.num_rows:
        accepted = false_if_null(content(explicit))
        explicit_order = explicit_order[_array(accepted)]
        explicit = explicit.filter(accepted)
    pieces.append(explicit)
    keys.append(explicit_order)
    ranges = part.filter(carried_mask)
    range_order = order[_array(carried_mask)]
    range_runs = _numbers(ranges["base_run"])
    for run in sorted(set(range_runs.tolist())):
        chosen = range_runs == run
        table, key = _expand_from(
            ranges.filter(pa.array(chosen)),
            range_order[chosen],
            _base_rows(bases, run),
            content,
            run,
        )
        pieces.append(table)
        keys.append(key)
    whole = pa.concat_tables(
        [p.select(explicit.column_names).cast(explicit.schema) for p in pieces]
    )
    return whole.take(np.argsort(np.concatenate(keys), kind="stable"))


def _expand_from(
    ranges: pa.Table,
    order: NDArray[np.int64],
    base: pa.Table,
    content: Callable[[pa.Table], Mask] | None,
    run: int,
) -> tuple[pa.Table, NDArray[np.int64]]:
    """The sightings RANGES (carried rows of one base RUN) stand for, with their order keys."""
    if content is not None and base.num_rows:
        base = base.filter(content(base.drop_columns(list(CARRY_COLUMNS))))
    range_codes, base_codes = (
        _array(c) for c in codes([ranges, base.select(ranges.column_names)], ["source_path"])
    )
    start = _numbers(ranges["base_position"])
    length = _numbers(ranges["carried"])
    # Each carried row stands for the base rows of its file from its start on, as many as
    # it carries: of the base's rows sorted by (file, position), a slice.
    first = (range_codes << _SHIFT) + start
    keys = (base_codes << _SHIFT) + _numbers(base["position"])
    by_key = np.argsort(keys, kind="stable")
    ordered_keys = keys[by_key]
    low = np.searchsorted(ordered_keys, first, side="left")
    count = np.searchsorted(ordered_keys, first + length, side="left") - low
    if content is None and not np.array_equal(count, length):
        msg = (
            f"run {int(ranges[PARTITION_KEY][0].as_py())} carries rows of run {run} that its "
            "part does not hold; restore the dataset from a backup"
        )
        raise StoreError(msg)
    which = np.repeat(np.arange(len(count)), count)
    within = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count)
    rows = by_key[np.repeat(low, count) + within]
    offset = keys[rows] - first[which]
    table = base.take(rows).drop_columns(list(CARRY_COLUMNS))
    file_columns = ranges.take(which)
    for name in (*FILE_COLUMNS, PARTITION_KEY):
        if name in table.column_names:
            table = replace_column(table, name, file_columns[name])
    position = _numbers(ranges["position"])[which] + offset
    table = replace_column(table, "position", pa.array(position, pa.int64()))
    return table, order[which] + offset


def _base_rows(bases: Mapping[int, pa.Table], run: int) -> pa.Table:
    base = bases.get(run)
    if base is None:
        msg = f"rows are carried from run {run}, whose sightings part is missing; restore it"
        raise StoreError(msg)
    return base


def occurrence_keys(row_codes: list[pa.ChunkedArray[Any]]) -> list[NDArray[np.int64]]:
    """A key per row of each of the tables ROW_CODES are of, equal for the k-th of equal rows.

    Each key is its row's code and how many rows of its table before it have the same code.
    """
    values = [_array(c) for c in row_codes]
    _, dense = np.unique(np.concatenate(values), return_inverse=True)
    occurrences, parts, start = [], [], 0
    for part in values:
        ids = dense[start : start + len(part)].astype(np.int64)
        start += len(part)
        order = np.argsort(ids, kind="stable")
        ranked = ids[order]
        first = np.ones(len(ranked), dtype=bool)
        first[1:] = ranked[1:] != ranked[:-1]
        group_start = np.maximum.accumulate(np.where(first, np.arange(len(ranked)), 0))
        occurrence = np.empty(len(ranked), dtype=np.int64)
        occurrence[order] = np.arange(len(ranked)) - group_start
        occurrences.append(occurrence)
        parts.append(ids)
    width = max(int(o.max(initial=0)) for o in occurrences) + 1
    return [ids * width + occurrence for ids, occurrence in zip(parts, occurrences, strict=True)]


def _numbers(column: Column) -> NDArray[np.int64]:
    """An Arrow integer column without nulls as an int64 NumPy array."""
    return _array(column).astype(np.int64)


def _array(column: Column) -> NDArray[Any]:
    """An Arrow column without nulls (integers, booleans) as a NumPy array."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    values: NDArray[Any] = column.to_numpy(zero_copy_only=False)
    return values


def _same_file(table: pa.Table) -> NDArray[np.bool_]:
    """Whether each row has the same file columns as the row before it (the first: False)."""
    names = [name for name in FILE_COLUMNS if name in table.column_names]
    [file_codes] = codes([table], names)
    values = _array(file_codes)
    same = np.zeros(len(values), dtype=bool)
    same[1:] = values[1:] == values[:-1]
    return same


def _files_worth_carrying(
    new: pa.Table, base: pa.Table, matched: NDArray[np.bool_]
) -> NDArray[np.bool_]:
    """MATCHED, kept for the files whose rows are worth carrying and can be.

    Those are the files of which at most REBASE_SHARE of the rows are not matched, and
    whose positions, here and in the base, are each one row's: a carried row names its
    base rows by position.
    """
    path_codes, base_codes = (
        _array(c) for c in codes([new, base.select(new.column_names)], ["source_path"])
    )
    size = int(max(path_codes.max(initial=-1), base_codes.max(initial=-1))) + 1
    rows = np.bincount(path_codes, minlength=size)
    unmatched = np.bincount(path_codes, weights=~matched, minlength=size)
    worth = unmatched <= REBASE_SHARE * rows
    for table, table_codes in ((new, path_codes), (base, base_codes)):
        [place] = codes([table], ["source_path", "position"])
        places, counts = np.unique(_array(place), return_counts=True)
        if (counts > 1).any():  # mark the files of the positions seen twice
            first = np.flatnonzero(np.isin(_array(place), places[counts > 1]))
            worth[np.unique(table_codes[first])] = False
    kept: NDArray[np.bool_] = worth[path_codes]
    return kept


def _with_carry_columns(table: pa.Table) -> pa.Table:
    for name in CARRY_COLUMNS:
        if name not in table.column_names:
            table = table.append_column(name, pa.nulls(table.num_rows, pa.int64()))
    return table


def _nulled(table: pa.Table, columns: list[str], mask: Mask) -> pa.Table:
    """TABLE with COLUMNS null on the rows of MASK (dictionaries kept, cut to what is used)."""
    for name in columns:
        column = table[name].combine_chunks()
        if isinstance(column, pa.DictionaryArray):
            nulls = pa.scalar(None, column.indices.type)
            indices = pc.if_else(mask, nulls, column.indices)
            values = used_only(encoded(indices, column.dictionary))
        else:
            values = pc.if_else(mask, pa.scalar(None, column.type), column)
        table = replace_column(table, name, values)
    return table
