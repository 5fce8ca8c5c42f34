"""The English texts' terms a run keeps for the next one: a cache beside the dataset.

Linking translations indexes every English ruling of the dataset, and taking each text's
terms was most of that index (about 0.55 s of a 2 s daily run on a 150,000-ruling
dataset). Terms never change for a text, so a run keeps those of the texts it indexed in
`.cache/english-terms.parquet` and the next run takes from it the texts it knows. It is a
cache, not the dataset: never part of a version, rewritten whole by the run that indexes
another set of texts (so it holds the dataset's English texts, no more), written beside
and then moved over the old one; one that is missing, of another terms version or
unreadable is rebuilt from the texts, and the links are the same either way.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.columns import in_order
from pipeline.folding.translate.terms import TERMS_VERSION, TermTable
from pipeline.storage.layout import native_file

if TYPE_CHECKING:
    from pathlib import Path

CACHE = ".cache"
FILE = "english-terms.parquet"
_VERSION_KEY = b"pipeline.terms_version"


class KeptTerms:
    """The terms kept in dataset folder OUT (translate.table.TermStore)."""

    def __init__(self, out: Path) -> None:
        self.path = out / CACHE / FILE

    def load(self) -> TermTable | None:
        """The kept terms, or None when there are none this version can use."""
        if not self.path.is_file():
            return None
        try:
            with native_file(self.path) as source:
                table = pq.read_table(source)
            metadata = table.schema.metadata or {}
            if metadata.get(_VERSION_KEY) != str(TERMS_VERSION).encode():
                return None
            terms: Any = table["terms"].combine_chunks()
            offsets = terms.offsets.to_numpy().astype(np.int64)
            offsets -= offsets[0]
            # The distinct terms in order, and each row's as their ids (a term repeats for
            # every text that holds it): the file's dictionary put in order.
            values = terms.flatten()
            if pa.types.is_dictionary(values.type):
                vocabulary, places = in_order(values.dictionary)
                ids = places[values.indices.to_numpy(zero_copy_only=False).astype(np.int64)]
            else:
                vocabulary, ids = in_order(values)
            hashes = [str(text_hash) for text_hash in table["text_hash"].to_pylist()]
            counts: Any = table["counts"].combine_chunks()
            named: Any = table["named"].combine_chunks()
            count = counts.flatten().to_numpy().astype(np.int64)
            flags = named.flatten().to_numpy(zero_copy_only=False).astype(np.bool_)
        except (OSError, pa.ArrowException, KeyError, ValueError):
            return None  # unreadable: the run takes the terms from the texts again
        if (
            len(offsets) != len(hashes) + 1
            or not len(count) == len(flags) == len(ids) == offsets[-1]
        ):
            return None
        return TermTable(hashes, offsets, vocabulary, ids, count, flags)

    def save(self, terms: TermTable) -> None:
        """Keep TERMS in place of the terms kept before; a write that fails keeps nothing."""
        offsets = pa.array(terms.offsets, pa.int32())
        table = pa.table(
            {
                "text_hash": pa.array(terms.hashes, pa.string()),
                # Each term spelt once (the Parquet file's dictionary), its rows as indices.
                "terms": pa.ListArray.from_arrays(
                    offsets,
                    pa.DictionaryArray.from_arrays(
                        pa.array(terms.ids, pa.int32()), pa.array(terms.vocabulary, pa.string())
                    ),
                ),
                "counts": pa.ListArray.from_arrays(offsets, pa.array(terms.counts, pa.int32())),
                "named": pa.ListArray.from_arrays(offsets, pa.array(terms.named, pa.bool_())),
            }
        ).replace_schema_metadata({_VERSION_KEY: str(TERMS_VERSION).encode()})
        partial = self.path.with_name(f".{FILE}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(exist_ok=True)
            # What a killed run left half-written (the writer lock keeps others out).
            for left in self.path.parent.iterdir():
                if left.name.startswith(f".{FILE}.") and left.name.endswith(".tmp"):
                    left.unlink(missing_ok=True)
            with native_file(partial, "wb") as sink:
                pq.write_table(table, sink)
            partial.replace(self.path)
        except OSError:
            pass  # a cache the run could not write (a full disk): the next run rebuilds it
        finally:
            partial.unlink(missing_ok=True)
