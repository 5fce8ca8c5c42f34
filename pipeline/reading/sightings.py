"""A run's sightings as Arrow: the rows the workers build, pooled texts, as-of dates."""

from __future__ import annotations

import ctypes
import operator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import (
    as_dictionary,
    encoded,
    listed,
    lookup,
    nulls,
    replace_column,
    strings,
)
from pipeline.models import Sighting
from pipeline.schema import SIGHTINGS
from pipeline.text.normalize import clean, has_symbol_gap, hash_clean

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Sequence

RULING_TEXT = "ruling_text"
# Sightings in flight: `lang` stays null until assign_languages() fills it.
_BATCH = SIGHTINGS.set(SIGHTINGS.get_field_index("lang"), pa.field("lang", pa.string()))
_BY_FILE_AND_POSITION = operator.attrgetter("source_path", "position")
# Raw text -> (clean text, its hash, whether it shows a stripped-symbol gap), kept for the
# life of the process: the same rulings recur across the batches a worker is given.
_TEXTS: dict[str, tuple[str, str, bool]] = {}
_TEXTS_LIMIT = 50_000


def sightings_table(sightings: Sequence[Sighting], run: int) -> pa.Table:
    """Arrow rows of SIGHTINGS for RUN, ordered by source path and position.

    Texts are cleaned, hashed and checked for stripped-symbol gaps once per distinct text:
    the same rulings recur across cards and files.
    """
    ordered = sorted(sightings, key=_BY_FILE_AND_POSITION)
    values = zip(*ordered, strict=True) if ordered else [() for _ in Sighting._fields]
    columns: dict[str, Any] = dict(zip(Sighting._fields, values, strict=True))
    known = _TEXTS
    if len(known) > _TEXTS_LIMIT:
        known.clear()
    for raw in dict.fromkeys(columns["text"]):
        if raw not in known:
            cleaned = clean(raw)
            known[raw] = (cleaned, hash_clean(cleaned), has_symbol_gap(raw))
    texts = [known[raw] for raw in columns["text"]]
    columns["text"] = [text for text, _, _ in texts]
    columns["text_hash"] = [text_hash for _, text_hash, _ in texts]
    columns["symbol_gap"] = [gap for _, _, gap in texts]
    columns["repaired_from"] = [None] * len(ordered)
    columns["run"] = [run] * len(ordered)
    columns["as_of"] = [None] * len(ordered)  # the file's, once every file is read (dated())
    return pa.table(columns, schema=_BATCH)


def undeclared_texts(table: pa.Table) -> list[str]:
    """The distinct texts of TABLE's rows whose source declared no language."""
    return strings(pc.unique(table["text"].filter(pc.is_null(table["lang"]))))


class TextPool:
    """Distinct texts of a run and their hashes, so that its sightings hold each once.

    Each text gets an id, and each distinct hash one too: texts printed differently (a
    straight or a curly apostrophe) share the hash of their folded text. `text` becomes a
    dictionary array over the texts, `text_hash` one over the distinct hashes: a dictionary
    holding a value twice would split its rows in two groups (keys.codes ranks the values
    of one dictionary), and the Parquet writer, given one, falls back to plain pages after
    a dictionary page whose tail is uninitialized memory (different bytes on every run).
    Batches are encoded as they arrive (add), so their string columns are freed batch by
    batch, and kept until collect().
    """

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._hash_ids: dict[str, int] = {}  # each distinct hash, by first text pooled
        self._hash_of: list[int] = []  # text id -> hash id
        self.batches: list[pa.Table] = []

    def add(self, batch: pa.Table) -> None:
        """Encode BATCH and keep it for collect()."""
        self.batches.append(self.encode(batch))

    def collect(self) -> pa.Table:
        """Every batch added, decoded as one table; the pool lets go of the batches.

        Batches from worker processes hold their columns in the buffers they were
        unpickled from, in the C heap; once copied into one table they are freed, and the
        heap's free pages are given back (trim_heap). The pool is spent then: its texts
        and hashes as Python strings go too (the table holds them), which were kept to
        the end of the run (80 MiB of a 120,000-ruling bulk file of distinct texts).
        """
        table = self.decode(pa.concat_tables(self.batches))
        self.batches = []
        self._ids, self._hash_ids, self._hash_of = {}, {}, []
        trim_heap()
        return table

    def encode(self, batch: pa.Table) -> pa.Table:
        """BATCH with `text` and `text_hash` as ids into the pool (int32).

        A dictionary-encoded text column (as batches come from the workers) costs one
        lookup per distinct text of the batch, not one per row.
        """
        ids = self._ids
        column = as_dictionary(batch["text"])
        texts = strings(column.dictionary)
        local = [ids.setdefault(text, len(ids)) for text in texts]
        if len(ids) > len(self._hash_of):
            # The hash of each new text, from the first row that holds it (computed for a
            # text no row holds, which a sliced column's dictionary may keep).
            count = len(column.dictionary)
            first = pc.index_in(pa.array(range(count), pa.int32()), value_set=column.indices)
            hashes = listed(pc.take(batch["text_hash"], first))
            hash_ids = self._hash_ids
            for pooled, text, text_hash in zip(local, texts, hashes, strict=True):
                if pooled == len(self._hash_of):
                    hashed = text_hash or hash_clean(text)
                    self._hash_of.append(hash_ids.setdefault(hashed, len(hash_ids)))
        found = pc.take(pa.array(local, pa.int32()), column.indices)
        return replace_column(replace_column(batch, "text", found), "text_hash", found)

    def decode(self, table: pa.Table) -> pa.Table:
        """TABLE (from encode) with `text` and `text_hash` dictionary-encoded over the pool.

        It gains `ruling_text`: the text of the ruling each sighting is keyed to, the text
        read until repair() re-keys a stripped copy. It feeds merge_rulings() and is not
        stored.
        """
        # One chunk a column: an operation over columns chunked apart slices them all to
        # common bounds, and each slice of a pooled column would carry the whole pool. A
        # column of nulls alone (no file gave a set, a fetch time) holds no memory.
        table = table.combine_chunks()
        for at, column in enumerate(table.columns):
            if table.num_rows and column.null_count == table.num_rows:
                table = table.set_column(at, table.field(at), nulls(table.num_rows, column.type))
        ids = table["text"].combine_chunks() if table.num_rows else pa.array([], pa.int32())
        text = pa.DictionaryArray.from_arrays(ids, pa.array(list(self._ids), pa.string()))
        hash_ids = pc.take(pa.array(self._hash_of, pa.int32()), ids)
        hashes = encoded(hash_ids, pa.array(list(self._hash_ids), pa.string()))
        table = replace_column(replace_column(table, "text", text), "text_hash", hashes)
        return table.append_column(RULING_TEXT, text)


def trim_heap() -> None:
    """Give the C heap's free pages back to the system, where the C library is glibc.

    Pages freed among live allocations stay with the process until trimmed. On the
    1M-ruling benchmark corpus the pooled batches left about 100 MiB of them, carried
    through the rest of the run (its peak RSS went from 1,070 to 980 MiB once trimmed).
    Elsewhere this does nothing.
    """
    try:
        own = ctypes.CDLL(None)  # the C library the process runs on
    except (OSError, TypeError):  # a platform without one to open this way (Windows)
        return
    trim = getattr(own, "malloc_trim", None)
    if trim is not None:
        trim(0)


def dated(sightings: pa.Table, as_of: dict[str, dt.date]) -> pa.Table:
    """SIGHTINGS with `as_of`: the as-of date of the file each row was read from."""
    found = lookup(sightings["source_path"], as_of, pa.date32())
    return replace_column(sightings, "as_of", found)
