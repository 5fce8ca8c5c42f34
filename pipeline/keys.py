"""Integer codes for composite row keys: rows with equal keys get equal codes.

Comparing (card, source) or (text_hash, card, effective_date) across a million rows by
joining the parts into strings costs a hundred bytes a row; a code costs eight. Nulls are a
value like any other here: two rows with no card have the same card. Codes also keep the
order of the keys (column by column, nulls last), so sorting by the code sorts by the key.

Rows of equal codes are grouped by a stable sort (Groups), not by Arrow's hash group_by:
for a million distinct keys that one holds 120 to 250 MiB outside Arrow's memory pool, kept
by the process after the call, where a sort needs a few arrays of eight bytes a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Column, Dictionary, Mask, chunked, false_if_null

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

# Past this the codes so far are renumbered 0, 1, 2… before the next column is folded in:
# a renumbered code times a column's width stays below rows squared, far from 2**63.
_LIMIT = 2**40


def codes(
    tables: Sequence[pa.Table], names: Sequence[str], nulls_first: Collection[str] = ()
) -> list[pa.ChunkedArray[Any]]:
    """One int64 code per row of each of TABLES, equal where the columns NAMES are equal.

    Codes are comparable across the tables given together, and only across those; their
    order is that of the keys, NAMES in turn, each ascending with nulls last (first for the
    columns in NULLS_FIRST). The columns are read chunk by chunk, never copied whole.
    """
    if not names:
        msg = "codes() needs at least one column name"
        raise ValueError(msg)
    sizes = [table.num_rows for table in tables]
    combined: pa.ChunkedArray[Any] | None = None
    span = 1  # combined codes lie in [0, span)
    for name in names:
        # Dictionary-encoded columns stay so (their dictionaries are merged, never decoded).
        kinds = [table.schema.field(name).type for table in tables]
        kind = next((k for k in kinds if pa.types.is_dictionary(k)), kinds[0])
        column = chunked([c for table in tables for c in table[name].cast(kind).chunks], kind)
        ids, width = _dense(column, nulls_first=name in nulls_first)
        if combined is None:
            combined, span = ids, width
            continue
        if span * width >= _LIMIT:  # renumber the codes so far 0, 1, 2… to make room
            combined, span = _renumbered(combined)
        combined = pc.add(pc.multiply(combined, pa.scalar(width, pa.int64())), ids)
        span *= width
    assert combined is not None  # NAMES is not empty
    out, start = [], 0
    for size in sizes:
        out.append(combined.slice(start, size))
        start += size
    return out


def first_rows(table: pa.Table, names: Sequence[str], where: Mask | None = None) -> pa.Array[Any]:
    """The index of the first row of each distinct key NAMES of TABLE, ascending.

    WHERE, a boolean mask, limits the rows looked at.
    """
    [keys] = codes([table], names)
    rows = np.arange(table.num_rows, dtype=np.int64)
    if where is not None:
        chosen = _numbers(false_if_null(where)).astype(bool)
        keys, rows = _numbers(keys)[chosen], rows[chosen]
    return pa.array(np.sort(rows[Groups.of(keys).firsts]), pa.int64())


@dataclass(frozen=True, slots=True)
class Groups:
    """The rows of each distinct code, found by a stable sort of the codes.

    ORDER lists the row numbers sorted by code (equal codes in row order); the group of
    the n-th distinct code, in ascending code order, is ORDER[STARTS[n]:STARTS[n + 1]].
    """

    order: np.ndarray
    starts: np.ndarray

    @staticmethod
    def of(keys: Column | np.ndarray) -> Groups:
        """Group the rows of KEYS, integer codes without nulls."""
        values = _numbers(keys)
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        change = np.empty(len(ordered), dtype=bool)
        change[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=change[1:])
        return Groups(order, np.flatnonzero(change))

    @property
    def firsts(self) -> np.ndarray:
        """Each group's first row (its smallest row number), groups in code order."""
        rows: np.ndarray = self.order[self.starts]
        return rows

    def reduce(self, values: Column | np.ndarray, how: np.ufunc) -> np.ndarray:
        """HOW (np.minimum, np.maximum, np.add) over each group's VALUES, in code order."""
        ordered = _numbers(values)[self.order]
        reduced: np.ndarray = how.reduceat(ordered, self.starts) if len(ordered) else ordered
        return reduced


def _numbers(column: Column | np.ndarray) -> np.ndarray:
    """The values of COLUMN (integers, dates or booleans, no nulls; Arrow or NumPy)."""
    if isinstance(column, np.ndarray):
        return column
    if column.null_count:
        msg = "cannot group or reduce a column with nulls"
        raise ValueError(msg)
    if pa.types.is_date32(column.type):  # days since 1970, reduced as integers
        column = column.cast(pa.int32())
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    values: np.ndarray = column.to_numpy(zero_copy_only=False)
    return values


def _renumbered(codes: pa.ChunkedArray[Any]) -> tuple[pa.ChunkedArray[Any], int]:
    """The same int64 codes as 0, 1, 2… in their order, and how many distinct there are."""
    ranks = pc.rank(codes.combine_chunks(), sort_keys="ascending", tiebreaker="dense")
    dense = pc.subtract(ranks, pa.scalar(1, ranks.type)).cast(pa.int64())
    return pa.chunked_array([dense]), int(pc.max(ranks).as_py() or 0)


def _dense(
    values: pa.ChunkedArray[Any], *, nulls_first: bool = False
) -> tuple[pa.ChunkedArray[Any], int]:
    """Ids in the order of the distinct values, and how many ids there can be.

    Nulls share one id, the last or the first. The chunks of a chunked column share one
    dictionary once encoded (or unified, if they came encoded), so their indices agree;
    ranking the dictionary places each value.
    """
    if pa.types.is_dictionary(values.type):
        encoded = pa.Table.from_arrays([values], ["values"]).unify_dictionaries()["values"]
    else:
        encoded = pc.dictionary_encode(values)
    chunks = cast("list[Dictionary]", encoded.chunks)  # the stubs know no dictionary chunks
    if not chunks:
        return pa.chunked_array([], pa.int64()), 1
    dictionary = chunks[0].dictionary
    ranks = pc.rank(dictionary, sort_keys="ascending")  # 1, 2, 3…: the values are distinct
    places = (ranks if nulls_first else pc.subtract(ranks, 1)).cast(pa.int64())
    # The place of a null goes after the values' (index len(dictionary)): each row's id is
    # then one take of int64s, where a take, a fill and a cast made three arrays a row.
    null_place = pa.array([0 if nulls_first else len(dictionary)], pa.int64())
    null_index = pa.scalar(len(dictionary), pa.int32())
    indices = pa.chunked_array(
        [chunk.indices.fill_null(null_index) for chunk in chunks], pa.int32()
    )
    # Chunked indices take a chunked array; the stubs give the kind of the data taken from.
    filled = cast("pa.ChunkedArray[Any]", pc.take(pa.concat_arrays([places, null_place]), indices))
    return filled, len(dictionary) + 1
