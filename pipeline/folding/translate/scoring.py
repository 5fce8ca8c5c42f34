"""An English index's batch scoring: cosine shortlists and coverage, a batch in a few passes.

EnglishIndex.shortlists() multiplies the texts by a batch's bags in blocks of texts and
keeps each query's best of each block (`_top`: exact, without sorting every row), then the
best of those (`_merged`); EnglishIndex.coverage_many() lays a batch's options out once
(`_reach`) and scores its (query, text) pairs in parts (`_parts`, `_covered`). The
functions are plain numpy on the index's and the batch's arrays: index.py keeps the
index, the queries and the methods that call them.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from pipeline.folding.translate.terms import expand

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray
    from scipy import sparse

    from pipeline.folding.translate.index import Queries, _Arrays


# The blocks of English texts whose best cosines bound a shortlist's lowest from below
# (_best): enough that a column's best texts are mostly in blocks of their own.
_BLOCKS = 256


class _Reach(NamedTuple):
    """A batch's options as coverage_many() reads them (_reach), made once a batch.

    COLUMN numbers the terms the options reach, in term order (every other term is the
    last column, WIDTH - 1, which no option has). Each option's column, item, CREDIT (its
    item's weight times its share) and, for the option that stands for its term in its
    query (option_first), HIT (the term's weight times its share) and WEIGHT (the term's):
    0 for the other options, which add nothing. Query Q's options are rows BOUNDS[Q] to
    BOUNDS[Q + 1], COUNTS[Q] of them.
    """

    width: int
    column: NDArray[np.int64]
    option_column: NDArray[np.int32]
    option_item: NDArray[np.int32]
    credit: NDArray[np.float64]
    hit: NDArray[np.float64]
    weight: NDArray[np.float64]
    bounds: NDArray[np.int64]
    counts: NDArray[np.int64]
    # Whether each item's options come in order of credit, highest first.
    descending: bool


# coverage_many() takes its pairs in parts whose table of texts by columns (_covered) holds
# at most this many cells (bytes), and whose pairs' queries have about as many options at
# most: the part's arrays stay small, and in int32.
_HELD_CELLS = 1 << 22
# An optional term (a name) in that table; a required one is 1, a term not held 0.
_NAMED = 2


def _reach(queries: Queries, arrays: _Arrays, vocabulary: int) -> _Reach:
    """The options of QUERIES laid out for coverage_many(), the terms numbered in columns.

    The columns are the terms the options reach, not every term of the VOCABULARY: a
    batch's translations reach a part of it.
    """
    term = queries.option_term
    reached = np.zeros(max(1, vocabulary), dtype=np.bool_)
    reached[term] = True
    column = np.cumsum(reached) - 1
    width = int(column[-1]) + 2
    column[~reached] = width - 1
    weight = np.where(queries.option_first, arrays.weights[term], 0.0)
    bounds = np.searchsorted(queries.option_query, np.arange(queries.size + 1))
    item = queries.option_item
    credit = queries.item_weight[item] * queries.option_share
    rising = (item[1:] == item[:-1]) & (credit[1:] > credit[:-1])
    return _Reach(
        width,
        column,
        column[term].astype(np.int32),
        item.astype(np.int32),
        credit,
        weight * queries.option_share,
        weight,
        bounds,
        np.diff(bounds),
        not rising.any(),
    )


def _parts(reach: _Reach, pair_query: NDArray[np.int64]) -> list[tuple[int, int]]:
    """The parts coverage_many() takes PAIR_QUERY's pairs in (_HELD_CELLS): (start, end)."""
    pairs = len(pair_query)
    ends = np.cumsum(reach.counts[pair_query])
    if pairs * reach.width <= _HELD_CELLS and (not pairs or ends[-1] <= _HELD_CELLS):
        return [(0, pairs)]
    by_docs = np.arange(0, pairs, max(1, _HELD_CELLS // reach.width))
    by_slots = np.searchsorted(ends, np.arange(_HELD_CELLS, int(ends[-1]), _HELD_CELLS))
    starts = np.union1d(by_docs, by_slots).tolist()
    return list(pairwise([*starts, pairs]))


def _covered(
    reach: _Reach,
    arrays: _Arrays,
    pair_query: NDArray[np.int64],
    pair_doc: NDArray[np.int64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Each pair's foreign hit, English hit and English optional total (coverage()'s sums).

    Each pair's query's options, in order, looked up in a table of the terms its English
    text holds: the options found come out in the order coverage_many() adds them, pair
    by pair, with no sort. In int32: the table and the pairs' options are small
    (_parts).
    """
    pairs = len(pair_query)
    width = reach.width
    # The pairs' texts by the batch's columns: 0 where the text lacks the term, 1 where it
    # holds it, _NAMED where it holds it as an optional one (a name).
    docs, doc_row = np.unique(pair_doc, return_inverse=True)
    owner, at = expand(arrays.doc_starts, docs)
    held = np.zeros(len(docs) * width, dtype=np.int8)
    held[owner * width + reach.column[arrays.doc_terms[at]]] = 1 + arrays.optional[at]
    # A slot per (pair, option of its query), pair by pair, each pair's options in order:
    # slot S is option row S + its pair's shift.
    counts = reach.counts[pair_query]
    ends = np.cumsum(counts)
    shift = reach.bounds[pair_query] - (ends - counts)
    rows = np.repeat(shift.astype(np.int32), counts)
    rows += np.arange(len(rows), dtype=np.int32)
    cells = np.repeat((doc_row * width).astype(np.int32), counts)
    cells += reach.option_column[rows]
    found = held[cells]
    hit = np.flatnonzero(found != 0)  # nonzero() of bools: several times faster than of int8
    # Each pair's first option found, and how many it found.
    first = np.searchsorted(hit, ends - counts)
    per = np.diff(first, append=len(hit))
    owner = np.repeat(np.arange(pairs), per)
    rows, found = rows[hit], found[hit]
    # A foreign term's credit: its best option found (options of an item are adjacent),
    # the first found where each item's options come best first (as a lexicon lists
    # them). Its weight times its best share is its best weight times share: rounding
    # keeps order.
    items = reach.option_item[rows]
    change = np.ones(len(rows), dtype=np.bool_)
    np.not_equal(items[1:], items[:-1], out=change[1:])
    change[first[per > 0]] = True
    starts = np.flatnonzero(change)
    if reach.descending or not len(starts):
        credit = reach.credit[rows[starts]]
    else:
        credit = np.maximum.reduceat(reach.credit[rows], starts)
    foreign_hit = np.bincount(owner[starts], weights=credit, minlength=pairs)
    # An English term reached: once per pair, at the best share that reaches it (the
    # others add 0, which leaves a sum as it is).
    english_hit = np.bincount(owner, weights=reach.hit[rows], minlength=pairs)
    named = np.flatnonzero(found == _NAMED)
    english_named = np.bincount(owner[named], weights=reach.weight[rows[named]], minlength=pairs)
    return (
        foreign_hit.astype(np.float64, copy=False),
        english_hit.astype(np.float64, copy=False),
        english_named.astype(np.float64, copy=False),
    )


class _Top(NamedTuple):
    """Each query's best texts, query by query, each one's best first (then lowest row)."""

    rows: NDArray[np.int64]
    columns: NDArray[np.int64]
    values: NDArray[np.float32]


def _best(cosine: NDArray[np.float32], count: int) -> list[list[int]]:
    """Each column's COUNT rows of highest value above 0, highest first (then lowest row)."""
    return _lists(_top(cosine, count), cosine.shape[1])


def _top(cosine: NDArray[np.float32], count: int) -> _Top:
    """_best() of COSINE as flat columns, with the values: at most COUNT rows a column.

    Exact, without sorting or partitioning every row: the rows fall in _BLOCKS blocks (row
    N in block N modulo their number), and the COUNT-th highest of a column's block maxima
    is at most its COUNT-th highest value (they are COUNT values of distinct rows). So the
    rows at or above it hold the column's COUNT best, and there are few of them: a
    column's best rows are mostly in blocks of their own. A text of cosine 0 shares no
    term with the translation: its coverage would be 0 too.
    """
    texts, queries = cosine.shape
    if texts > count:
        blocks = min(texts, max(count, _BLOCKS))
        # Whole rounds of BLOCKS rows in one maximum over the rounds; the rows past the
        # last round go to the first blocks.
        full = texts // blocks * blocks
        maxima = cosine[:full].reshape(-1, blocks * queries).max(axis=0).reshape(blocks, queries)
        tail = texts - full
        np.maximum(maxima[:tail], cosine[full:], out=maxima[:tail])
        floor = np.partition(maxima, blocks - count, axis=0)[blocks - count]
    else:
        floor = np.zeros(queries, dtype=cosine.dtype)
    # At or above the floor, and above 0, in one pass (tiny: the least positive normal).
    floor = np.maximum(floor, np.finfo(cosine.dtype).tiny)
    rows, columns = np.divmod(np.flatnonzero(cosine >= floor), queries)
    return _firsts_of(_Top(rows, columns, cosine[rows, columns]), count)


def _merged(parts: Sequence[_Top], count: int) -> _Top:
    """The best COUNT of each column among PARTS' (each _top() of a block of rows)."""
    return _firsts_of(_Top(*(np.concatenate(column) for column in zip(*parts, strict=True))), count)


def _firsts_of(found: _Top, count: int) -> _Top:
    """FOUND (any order) column by column, each one's best first, then lowest row: COUNT."""
    order = np.lexsort((found.rows, -found.values, found.columns))
    rows, columns, values = found.rows[order], found.columns[order], found.values[order]
    # Each row's place in its column: only the first COUNT are kept.
    change = np.ones(len(columns), dtype=np.bool_)
    np.not_equal(columns[1:], columns[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    place = np.arange(len(columns)) - np.repeat(starts, np.diff(starts, append=len(columns)))
    kept = np.flatnonzero(place < count)
    return _Top(rows[kept], columns[kept], values[kept])


def _lists(found: _Top, queries: int) -> list[list[int]]:
    """Each of QUERIES columns' rows of FOUND (_firsts_of()'s), as lists."""
    starts = np.searchsorted(found.columns, np.arange(queries + 1))
    rows = found.rows
    return [rows[start:end].tolist() for start, end in pairwise(starts)]


def _text_rows(texts: sparse.csr_array, start: int, end: int) -> sparse.csr_array:
    """Rows START to END of TEXTS, made of slices of its arrays (scipy's row slice costs more)."""
    from scipy import sparse  # noqa: PLC0415 - imported by the runs that link, not by every command

    first, last = int(texts.indptr[start]), int(texts.indptr[end])
    return sparse.csr_array(
        (texts.data[first:last], texts.indices[first:last], texts.indptr[start : end + 1] - first),
        shape=(end - start, texts.shape[1]),
    )
