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

from pipeline import interrupts
from pipeline.folding.translate import bytewise
from pipeline.folding.translate.features import english, prepare

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import NDArray

# Raised whenever what english_terms() gives for a text changes: a kept table of another
# version is not used.
TERMS_VERSION = 1


class TermTable(NamedTuple):
    """The terms of texts by hash (sorted), column-wise.

    Text N's terms are VOCABULARY[IDS[OFFSETS[N]:OFFSETS[N + 1]]], distinct and in order
    (VOCABULARY is sorted, and holds only terms some text holds), with how often the text
    holds each (COUNTS) and whether it is one of its names (NAMED: capitalised words inside
    sentences, which a translation may print translated).
    """

    hashes: list[str]
    offsets: NDArray[np.int64]
    vocabulary: list[str]
    ids: NDArray[np.int64]
    counts: NDArray[np.int64]
    named: NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.hashes)

    def terms(self, row: int) -> list[str]:
        """Text ROW's terms, in order."""
        first, last = int(self.offsets[row]), int(self.offsets[row + 1])
        return [self.vocabulary[n] for n in self.ids[first:last].tolist()]


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

    The texts KNOWN lacks are taken at once on their bytes where bytewise.fast() says so
    (pipeline.folding.translate.bytewise), the others one by one, on WORKERS forked
    processes when they are many (PARALLEL_MIN).
    """
    hashes = sorted(texts)
    where = {text_hash: n for n, text_hash in enumerate(known.hashes)} if known else {}
    found = np.asarray([where.get(text_hash, -1) for text_hash in hashes], dtype=np.int64)
    new = np.flatnonzero(found < 0)
    made = _taken([texts[hashes[n]] for n in new.tolist()], workers)
    kept = np.flatnonzero(found >= 0)
    parts = [(made, np.arange(len(new), dtype=np.int64), new)]
    if known is not None:
        parts.append((_as_part(known), found[kept], kept))
    return _as_table(hashes, _placed(parts, len(hashes)))


# Terms of texts without hashes, rows in order (as TermTable): what bytewise gives.
_Part = bytewise.Taken


def _as_part(table: TermTable) -> _Part:
    return _Part(table.offsets, table.vocabulary, table.ids, table.counts, table.named)


def _as_table(hashes: list[str], part: _Part) -> TermTable:
    return TermTable(hashes, part.offsets, part.vocabulary, part.ids, part.counts, part.named)


def _placed(
    parts: Sequence[tuple[_Part, NDArray[np.int64], NDArray[np.int64]]], size: int
) -> _Part:
    """A part of SIZE rows: each (part, rows, places) puts its part's ROWS at PLACES.

    Their terms in one vocabulary, cut to the terms the rows hold. Each array is made once,
    in place (no part joined, then gathered).
    """
    parts = [placed for placed in parts if len(placed[1])]
    if len(parts) == 1 and _whole(*parts[0], size):
        return parts[0][0]
    lengths = np.zeros(size, dtype=np.int64)
    for part, rows, places in parts:
        lengths[places] = part.offsets[rows + 1] - part.offsets[rows]
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    vocabulary = sorted(set().union(*(part.vocabulary for part, _, _ in parts)))
    number = {term: n for n, term in enumerate(vocabulary)}
    ids = np.empty(int(offsets[-1]), dtype=np.int64)
    counts = np.empty(len(ids), dtype=np.int64)
    named = np.empty(len(ids), dtype=np.bool_)
    for part, rows, places in parts:
        numbers = np.fromiter(map(number.__getitem__, part.vocabulary), np.int64)
        if np.array_equal(rows, np.arange(len(part.offsets) - 1)):
            # Every row of the part in order (new texts): its arrays as they are, each
            # entry moved by how far its row moves.
            moved = offsets[places] - part.offsets[:-1]
            target = np.arange(len(part.ids)) + np.repeat(moved, np.diff(part.offsets))
            ids[target] = numbers[part.ids]
            counts[target], named[target] = part.counts, part.named
            continue
        _, source = expand(part.offsets, rows)
        _, target = expand(offsets, places)
        ids[target] = numbers[part.ids[source]]
        counts[target], named[target] = part.counts[source], part.named[source]
    held = np.zeros(len(vocabulary), dtype=np.bool_)
    held[ids] = True
    if not held.all():
        vocabulary = [vocabulary[n] for n in np.flatnonzero(held).tolist()]
        ids = (np.cumsum(held) - 1)[ids]
    return _Part(offsets, vocabulary, ids, counts, named)


def _whole(part: _Part, rows: NDArray[np.int64], places: NDArray[np.int64], size: int) -> bool:
    """Whether PART's ROWS at PLACES are all its rows, in order, and SIZE."""
    every = np.arange(size)
    return (
        len(part.offsets) == size + 1
        and np.array_equal(rows, every)
        and np.array_equal(places, every)
    )


def expand(
    bounds: NDArray[np.int64], pair_query: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each pair's copy of its query's rows: (pair of each row, row).

    Rows of a table whose entry N is rows BOUNDS[N] to BOUNDS[N + 1], for each N of
    PAIR_QUERY in turn.
    """
    starts, counts = bounds[pair_query], bounds[pair_query + 1] - bounds[pair_query]
    owner = np.repeat(np.arange(len(pair_query), dtype=np.int64), counts)
    before = np.cumsum(counts) - counts
    rows = np.repeat(starts - before, counts) + np.arange(counts.sum(), dtype=np.int64)
    return owner, rows


# Fewer texts than this are taken in the calling process: forking costs more.
PARALLEL_MIN = 20_000


def _taken(texts: Sequence[str], workers: int) -> _Part:
    """english_terms() of each of TEXTS, rows in order.

    Most at once on their bytes (bytewise), the others one by one; on WORKERS processes when
    they are many.
    """
    fast = bytewise.fast(texts) if texts else np.zeros(0, np.bool_)
    quick = np.flatnonzero(fast)
    slow = np.flatnonzero(~fast)
    ascii_ = [texts[n] for n in quick.tolist()]
    others = [texts[n] for n in slow.tolist()]
    if workers <= 1 or len(texts) < PARALLEL_MIN or "fork" not in mp.get_all_start_methods():
        parts = [bytewise.english_terms(ascii_), _terms_of(others)]
    else:
        # The chunks of both kinds on the workers: those of texts taken one by one first
        # (they take longest for their size), then those taken on their bytes.
        size = -(-len(others) // (4 * workers))
        chunks = [others[at : at + size] for at in range(0, len(others), size)]
        with ProcessPoolExecutor(
            workers, mp.get_context("fork"), initializer=interrupts.in_worker
        ) as pool:
            alone = pool.map(_terms_of, chunks)
            parts = [bytewise.english_terms(ascii_, pool.map), *alone]
    # Back in the order of TEXTS: those taken on their bytes were first.
    placed = [(parts[0], np.arange(len(quick), dtype=np.int64), quick)]
    done = 0
    for part in parts[1:]:
        count = len(part.offsets) - 1
        placed.append((part, np.arange(count, dtype=np.int64), slow[done : done + count]))
        done += count
    return _placed(placed, len(texts))


def _terms_of(texts: Sequence[str]) -> _Part:
    """english_terms() of TEXTS, one by one (packed to travel from a worker as arrays)."""
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
    vocabulary = sorted(set(terms))
    at = {term: n for n, term in enumerate(vocabulary)}
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=offsets[1:])
    return _Part(
        offsets,
        vocabulary,
        np.fromiter(map(at.__getitem__, terms), np.int64, len(terms)),
        np.asarray(counts, dtype=np.int64),
        np.asarray(named, dtype=np.bool_),
    )
