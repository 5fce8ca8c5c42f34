"""The terms of English texts, the part of the translation index that is worth keeping.

Taking a text's terms (words, anchors, names) is most of building the index, and a text's
terms never change; the weights, which depend on every text, are arrays computed from them
at once. A `TermTable` holds the terms of many texts column-wise, so a run can keep it
(pipeline.storage.terms) and the next one take only the texts it has not seen.
"""

from __future__ import annotations

import multiprocessing as mp
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from pipeline.folding.translate.features import english, prepare

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import NDArray

# Raised whenever what english_terms() gives for a text changes: a kept table of another
# version is not used.
TERMS_VERSION = 1


class TermTable(NamedTuple):
    """The terms of texts by hash (sorted), column-wise.

    Text N's terms are TERMS[OFFSETS[N]:OFFSETS[N + 1]], distinct and sorted, with how
    often the text holds each (COUNTS) and whether it is one of its names (NAMED: capitalised
    words inside sentences, which a translation may print translated).
    """

    hashes: list[str]
    offsets: NDArray[np.int64]
    terms: list[str]
    counts: NDArray[np.int64]
    named: NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.hashes)


class TermStore(Protocol):
    """Where the terms of a run's English texts are kept for the next run."""

    def load(self) -> TermTable | None:
        """The terms kept, if any."""

    def save(self, terms: TermTable) -> None:
        """Keep TERMS in place of those kept."""


def english_terms(text: str) -> tuple[list[str], list[int], list[bool]]:
    """An English text's distinct terms (sorted), their counts, and which are names."""
    found, anchored, named = english(prepare(text))
    bag = Counter(found + anchored)
    terms = sorted(bag)
    return terms, [bag[term] for term in terms], [term in named for term in terms]


def term_table(
    texts: Mapping[str, str], known: TermTable | None = None, workers: int = 1
) -> TermTable:
    """The terms of TEXTS ({hash: text}), taken from KNOWN where it holds the hash.

    The texts KNOWN lacks are taken on WORKERS forked processes when they are many
    (PARALLEL_MIN): taking a text's terms is most of building an index.
    """
    hashes = sorted(texts)
    where = {text_hash: n for n, text_hash in enumerate(known.hashes)} if known else {}
    new = [text_hash for text_hash in hashes if text_hash not in where]
    made = _taken([texts[text_hash] for text_hash in new], workers)
    made_at = {text_hash: n for n, text_hash in enumerate(new)}
    terms: list[str] = []
    counts: list[NDArray[np.int64]] = []
    named: list[NDArray[np.bool_]] = []
    offsets = [0]
    for text_hash in hashes:
        row = where.get(text_hash)
        table, at = (
            (known, row) if known is not None and row is not None else (made, made_at[text_hash])
        )
        start, end = int(table.offsets[at]), int(table.offsets[at + 1])
        terms += table.terms[start:end]
        counts.append(table.counts[start:end])
        named.append(table.named[start:end])
        offsets.append(len(terms))
    return TermTable(
        hashes,
        np.asarray(offsets, dtype=np.int64),
        terms,
        np.concatenate([np.zeros(0, np.int64), *counts]),
        np.concatenate([np.zeros(0, np.bool_), *named]),
    )


# Fewer new texts than this are taken in the calling process: forking costs more.
PARALLEL_MIN = 20_000


def _taken(texts: Sequence[str], workers: int) -> TermTable:
    """english_terms() of each of TEXTS as a TermTable (no hashes), on WORKERS processes.

    One string object per distinct term, however many texts hold it: the table holds a
    term row for every (text, term), most of them repeats.
    """
    if workers <= 1 or len(texts) < PARALLEL_MIN or "fork" not in mp.get_all_start_methods():
        parts = [_terms_of(texts)]
    else:
        size = -(-len(texts) // (4 * workers))
        chunks = [texts[at : at + size] for at in range(0, len(texts), size)]
        with ProcessPoolExecutor(min(workers, len(chunks)), mp.get_context("fork")) as pool:
            parts = list(pool.map(_terms_of, chunks))
    canonical: dict[str, str] = {}
    terms: list[str] = []
    lengths = []
    for joined, part_lengths, _, _ in parts:
        found = joined.split("\n") if joined else []
        terms += map(canonical.setdefault, found, found)
        lengths.append(part_lengths)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.concatenate([np.zeros(0, np.int64), *lengths]), out=offsets[1:])
    return TermTable(
        [],
        offsets,
        terms,
        np.concatenate([np.zeros(0, np.int64), *(part[2] for part in parts)]),
        np.concatenate([np.zeros(0, np.bool_), *(part[3] for part in parts)]),
    )


def _terms_of(
    texts: Sequence[str],
) -> tuple[str, NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """english_terms() of TEXTS, packed to travel from a worker.

    The terms joined by newlines (no term holds one), each text's number of terms, the
    counts, whether each is a name.
    """
    terms: list[str] = []
    counts: list[int] = []
    named: list[bool] = []
    lengths = []
    for text in texts:
        mine = english_terms(text)
        terms += mine[0]
        counts += mine[1]
        named += mine[2]
        lengths.append(len(mine[0]))
    return (
        "\n".join(terms),
        np.asarray(lengths, dtype=np.int64),
        np.asarray(counts, dtype=np.int64),
        np.asarray(named, dtype=np.bool_),
    )
