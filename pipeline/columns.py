"""Arrow column types and the small helpers every stage uses: lists, lookups, replacements."""

from __future__ import annotations

import mmap
from typing import TYPE_CHECKING, Any, TypeAlias, cast, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from numpy.typing import NDArray

Column: TypeAlias = "pa.Array[Any] | pa.ChunkedArray[Any]"
"""An Arrow column of any type: one array, or a table's chunked one."""

Dictionary: TypeAlias = "pa.DictionaryArray[Any, Any]"
"""A dictionary-encoded Arrow array: integer indices into an array of values."""

Mask: TypeAlias = "pa.BooleanArray | pa.ChunkedArray[pa.BooleanScalar]"
"""A boolean Arrow column: which rows a filter keeps."""


def distinct_texts(column: Column) -> list[str]:
    """The distinct values of a text column, plain or dictionary-encoded."""
    if pa.types.is_dictionary(column.type):
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        seen: dict[str, None] = {}
        for chunk in chunks:
            assert isinstance(chunk, pa.DictionaryArray)  # a dictionary column's chunks are
            seen.update(dict.fromkeys(strings(chunk.dictionary)))
        return list(seen)
    return strings(pc.unique(column))


def in_order(column: pa.Array[Any]) -> tuple[list[str], NDArray[np.int64]]:
    """A string array's distinct values in Python's order, and each value's place among them.

    Only the distinct values are sorted, in Python: Python's order of strings (by code
    point) is the one the values are kept in.
    """
    encoded: Any = pc.dictionary_encode(column)
    distinct = [str(value) for value in encoded.dictionary.to_pylist()]
    order = sorted(range(len(distinct)), key=distinct.__getitem__)
    rank = np.zeros(len(distinct), dtype=np.int64)
    rank[order] = np.arange(len(distinct), dtype=np.int64)
    indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return [distinct[n] for n in order], rank[indices]


def as_dictionary(column: Column) -> Dictionary:
    """A text column as one dictionary array (encoding it if it is plain)."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    combined = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    dictionary = combined.cast(pa.dictionary(pa.int32(), pa.string()))
    assert isinstance(dictionary, pa.DictionaryArray)  # the stubs' cast knows only Array
    return dictionary


def strings(column: Column) -> list[str]:
    """A string column without nulls as a Python list."""
    return [str(value) for value in listed(column)]


def listed(column: Column) -> list[Any]:
    """COLUMN's values as a Python list, nulls as None.

    A dictionary-encoded column is decoded first: listing it directly makes an Arrow scalar
    per row, about fifteen times slower (measured on 3,000 ruling texts).
    """
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    values: list[Any] = column.to_pylist()
    return values


def lookup(keys: Column, mapping: Mapping[str, Any], kind: pa.DataType | None = None) -> Column:
    """Map an Arrow string column through MAPPING; keys it lacks become null."""
    at = pc.index_in(keys, value_set=pa.array(list(mapping), pa.string()))
    return pc.take(pa.array(list(mapping.values()), kind or pa.string()), at)


def replace_column(table: pa.Table, name: str, values: Column) -> pa.Table:
    """TABLE with column NAME replaced by VALUES (any Arrow array)."""
    return table.set_column(table.schema.get_field_index(name), name, values)


@overload
def kept(rows: pa.Table, mask: Mask) -> pa.Table: ...
@overload
def kept(rows: Column, mask: Mask) -> Column: ...
def kept(rows: pa.Table | Column, mask: Mask) -> pa.Table | Column:
    """ROWS where MASK is true: ROWS itself when it holds everywhere (a filter copies)."""
    everywhere = mask.null_count == 0 and pc.all(mask).as_py() is not False
    return rows if everywhere else rows.filter(mask)


def encoded(indices: Column, dictionary: pa.Array[Any]) -> Dictionary:
    """A DictionaryArray of INDICES (an array or a chunked one) over DICTIONARY.

    pa.DictionaryArray.from_arrays converts chunked indices through Python objects, a
    value at a time: 94 ms for 150,000 rows, against 0.2 ms once they are one array.
    """
    if isinstance(indices, pa.ChunkedArray):
        indices = indices.combine_chunks()
    return pa.DictionaryArray.from_arrays(indices, dictionary)


def used_only(column: pa.Array[Any]) -> Dictionary:
    """COLUMN with a dictionary of the values its indices use (integers hashed, not texts).

    A filtered or mostly null column keeps its whole dictionary; Parquet would store it all.
    """
    assert isinstance(column, pa.DictionaryArray)  # a dictionary column, combined
    used = pc.unique(column.indices.drop_null())
    if (
        len(used) == len(column.dictionary)
        and pc.all(pc.equal(used, pa.array(range(len(used)), used.type))).as_py() is not False
    ):
        # Every value used, first used in order (a column compacted before, as a segment
        # is when the commit writes it): the same column, not a copy of its dictionary.
        return column
    indices = pc.index_in(column.indices, value_set=used).cast(column.indices.type)
    return encoded(indices, column.dictionary.take(used))


def nulls(count: int, kind: pa.DataType) -> pa.Array[Any]:
    """COUNT nulls of type KIND that hold no memory until something writes to them.

    pa.nulls() writes the zeros of its buffers: a column of a million nulls is 4 to 8 MiB
    of the process's memory. These buffers are fresh anonymous pages, which the system
    gives only when written, and nothing writes an Arrow buffer once made; a read of one
    maps the shared page of zeros. A null column of a kind this does not lay out (a list,
    a struct) comes from pa.nulls().
    """
    if pa.types.is_dictionary(kind) and _fixed_width(kind.index_type):
        indices: list[pa.Buffer | None] = [
            _zeros((count + 7) // 8),
            _zeros(count * kind.index_type.bit_width // 8),
        ]
        empty = pa.array([], kind.value_type)
        return pa.DictionaryArray.from_buffers(kind, count, indices, empty, null_count=count)
    if pa.types.is_string(kind) or pa.types.is_binary(kind):
        offsets: list[pa.Buffer | None] = [
            _zeros((count + 7) // 8),
            _zeros((count + 1) * 4),
            _zeros(0),
        ]
        return pa.Array.from_buffers(kind, count, offsets, null_count=count)
    if _fixed_width(kind):
        values: list[pa.Buffer | None] = [
            _zeros((count + 7) // 8),
            _zeros((count * kind.bit_width + 7) // 8),
        ]
        return pa.Array.from_buffers(kind, count, values, null_count=count)
    # The stubs overload pa.nulls() type by type, with none for a DataType not yet known.
    made: pa.Array[Any] = pa.nulls(count, kind)  # type: ignore[call-overload]
    return made


def _fixed_width(kind: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_temporal(kind)
    )


def _zeros(size: int) -> pa.Buffer:
    """SIZE bytes of zeros: an anonymous mapping of its own, freed with the buffer."""
    return pa.py_buffer(mmap.mmap(-1, max(size, 1)))[:size]


def chunked(chunks: Iterable[pa.Array[Any]], kind: pa.DataType) -> pa.ChunkedArray[Any]:
    """CHUNKS as one chunked array of type KIND (which an empty one needs)."""
    # The stubs overload chunked_array type by type, with none for a DataType not yet known.
    out: pa.ChunkedArray[Any] = pa.chunked_array(chunks, kind)  # type: ignore[call-overload]
    return out


def whole(column: Column) -> pa.Array[Any]:
    """COLUMN as one array (a chunked one's chunks combined)."""
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def filled(column: Column, value: pa.Scalar[Any]) -> Column:
    """COLUMN with its nulls VALUE."""
    out = pc.fill_null(column, value)
    assert not isinstance(out, pa.Scalar)  # a column in, a column out
    return out


def true_count(mask: Mask) -> int:
    """How many rows MASK keeps (a null keeps none)."""
    # The stubs' sum takes numbers only; Arrow counts a boolean column's trues.
    return int(pc.sum(mask).as_py() or 0)  # type: ignore[type-var]


def false_if_null(mask: Mask) -> Mask:
    """MASK with its nulls false: a comparison with a null keeps no row."""
    out = pc.fill_null(mask, pa.scalar(value=False))
    assert not isinstance(out, pa.Scalar)  # an array in, an array out
    return out


def joined(*parts: Column | pa.Scalar[Any], separator: str) -> Column:
    """PARTS (string columns or scalars) joined row by row with SEPARATOR; null if any is."""
    return _join(*parts, separator)


# The stubs type binary_join_element_wise's separator as one more column, not a str.
_join = cast("Callable[..., Column]", pc.binary_join_element_wise)
