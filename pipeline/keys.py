"""Integer codes for composite row keys: rows with equal keys get equal codes.

Comparing (card, source) or (text_hash, card, effective_date) across a million rows by
joining the parts into strings costs a hundred bytes a row; a code costs eight. Nulls are a
value like any other here: two rows with no card have the same card.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from collections.abc import Sequence


def codes(tables: Sequence[pa.Table], names: Sequence[str]) -> list[Any]:
    """One int64 code per row of each of TABLES, equal where the columns NAMES are equal.

    Codes are comparable across the tables given together, and only across those. The
    columns are read chunk by chunk, never copied whole.
    """
    if not names:
        msg = "codes() needs at least one column name"
        raise ValueError(msg)
    sizes = [table.num_rows for table in tables]
    combined: Any = None
    for name in names:
        kind = tables[0].schema.field(name).type
        parts = [chunk for table in tables for chunk in table[name].cast(kind).chunks]
        ids = _dense(pa.chunked_array(parts, type=kind))
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


def _dense(values: Any) -> Any:  # noqa: ANN401 - a chunked Arrow array in, int64 ids out
    """0, 1, 2… in order of first appearance, one per distinct value; null is one of them.

    The chunks of a chunked column share one dictionary once encoded, so their indices
    agree with each other.
    """
    encoded = pc.dictionary_encode(values)
    chunks = encoded.chunks
    if not chunks:
        return pa.chunked_array([], pa.int64())
    missing = len(chunks[0].dictionary)
    indices = pa.chunked_array([chunk.indices for chunk in chunks], pa.int32())
    return pc.fill_null(indices, pa.scalar(missing, pa.int32())).cast(pa.int64())
