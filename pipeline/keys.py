"""Integer codes for composite row keys: rows with equal keys get equal codes.

Comparing (card, source) or (text_hash, card, effective_date) across a million rows by
joining the parts into strings costs a hundred bytes a row; a code costs eight. Nulls are a
value like any other here: two rows with no card have the same card. Codes also keep the
order of the keys (column by column, nulls last), so sorting by the code sorts by the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence


def codes(
    tables: Sequence[pa.Table], names: Sequence[str], nulls_first: Collection[str] = ()
) -> list[Any]:
    """One int64 code per row of each of TABLES, equal where the columns NAMES are equal.

    Codes are comparable across the tables given together, and only across those; their
    order is that of the keys, NAMES in turn, each ascending with nulls last (first for the
    columns in NULLS_FIRST). The columns are read chunk by chunk, never copied whole.
    """
    if not names:
        msg = "codes() needs at least one column name"
        raise ValueError(msg)
    sizes = [table.num_rows for table in tables]
    combined: Any = None
    for name in names:
        # Dictionary-encoded columns stay so (their dictionaries are merged, never decoded).
        kinds: list[Any] = [table.schema.field(name).type for table in tables]
        kind: Any = next((k for k in kinds if pa.types.is_dictionary(k)), kinds[0])
        parts: list[Any] = [chunk for table in tables for chunk in table[name].cast(kind).chunks]
        column: Any = pa.chunked_array(parts, type=kind)
        ids = _dense(column, nulls_first=name in nulls_first)
        if combined is None:
            combined = ids
            continue
        width = (pc.max(ids).as_py() or 0) + 1
        # Both factors are below the row count, so the product fits easily in 64 bits.
        combined = _dense(pc.add(pc.multiply(combined, width), ids))
    out, start = [], 0
    for size in sizes:
        out.append(combined.slice(start, size))
        start += size
    return out


def _dense(values: Any, *, nulls_first: bool = False) -> Any:  # noqa: ANN401 - int64 ids out
    """Ids in the order of the distinct values; nulls (one id for all) last or first.

    The chunks of a chunked column share one dictionary once encoded (or unified, if they
    came encoded), so their indices agree; ranking the dictionary places each value.
    """
    if pa.types.is_dictionary(values.type):
        encoded: Any = pa.table({"values": values}).unify_dictionaries()["values"]
    else:
        encoded = pc.dictionary_encode(values)
    chunks: list[Any] = encoded.chunks
    if not chunks:
        return pa.chunked_array([], pa.int64())
    dictionary = chunks[0].dictionary
    ranks = pc.rank(dictionary, sort_keys="ascending")  # 1, 2, 3…: the values are distinct
    places = ranks if nulls_first else pc.subtract(ranks, 1)
    indices = pa.chunked_array([chunk.indices for chunk in chunks], pa.int32())
    ranked = pc.take(places, indices)
    null_place = 0 if nulls_first else len(dictionary)
    return pc.fill_null(ranked, pa.scalar(null_place, places.type)).cast(pa.int64())
