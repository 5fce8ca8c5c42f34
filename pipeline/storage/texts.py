"""The texts a sightings part leaves out: a row's text equal to that of its ruling.

A re-read of an unchanged ruling then costs its key and position, not its text again. The
writer nulls such texts (without_ruling_texts, part.py); a reader puts them back from the
version's rulings (with_ruling_texts, store.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import (
    as_dictionary,
    encoded,
    false_if_null,
    replace_column,
    used_only,
)
from pipeline.keys import codes
from pipeline.schema import RULING_KEY, TABLES

if TYPE_CHECKING:
    from pipeline.columns import Column

# A sighting's left-out text is that of the ruling of its key: rulings of one hash (of the
# folded text) may print it differently (straight or curly apostrophes).
_KEY = list(RULING_KEY)


def without_ruling_texts(sightings: pa.Table, rulings: pa.Table) -> pa.Table:
    """SIGHTINGS with `text` null where it is the text of the ruling the row is keyed to.

    A re-read of an unchanged ruling then costs its key and position, not its text again;
    store.read_table() puts the texts back (see with_ruling_texts).
    """
    read = as_dictionary(sightings["text"])
    ruling = as_dictionary(rulings["text"])
    ruling_ids = pc.take(ruling.indices, ruling_rows(sightings, rulings)).cast(pa.int64())
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
        rows = ruling_rows(*keys)
    else:
        rows = ruling_rows(sightings, rulings)
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
    sighting_codes, ruling_codes = codes([sightings.select(_KEY), rulings.select(_KEY)], _KEY)
    return pc.index_in(sighting_codes, value_set=ruling_codes)
