"""The lexicon's entries in an English index's terms: each language's table mapped once, as arrays.

A translation is mapped through the lexicon (lexicon.py) into an index's term ids
(EnglishIndex.mapped): each foreign feature or anchor is an entry, each entry the English
terms it may stand for (its options). `_Entries` makes a language's whole table entries the
first time a batch holds the language, and an anchor the first time a batch holds it, in
columns that grow (`_Growing`): a batch's words are then found by their ranks in one hash
lookup, and its queries made from the entries' arrays (`_EntryArrays`), no Python per text.

Kept apart from index.py (the texts, their vectors, the queries): this is the mapping's
bookkeeping (which entry, which options, which terms no text holds), and it reads of the
index only its vocabulary, IDF and weights.
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.folding.translate.terms import expand

if TYPE_CHECKING:
    from collections.abc import Mapping

    from numpy.typing import NDArray

    from pipeline.folding.translate.batch import Column
    from pipeline.folding.translate.index import EnglishIndex
    from pipeline.folding.translate.lexicon import Lexicon


# A lexicon entry: the English features a foreign one may stand for, with their weights.
Options = tuple[tuple[str, float], ...]
# The scalar type of a growing column (_Growing).
_Scalar = TypeVar("_Scalar", bound=np.generic)


class _Block(NamedTuple):
    """A language's lexicon table as entries: feature N (its features sorted) is BASE + N."""

    table: Mapping[str, Options]
    # The table's features, sorted (an Arrow string array).
    names: Column
    base: int


class _Entries:
    """An index's lexicon entries (and anchors) as its term ids, as arrays.

    Entry N's options are rows bounds[N] to bounds[N + 1] of the option columns: as cosine
    terms (their lexicon weights), and as coverage options (cover_terms, -1 where no text
    holds it, with their share of the best weight); its weight is that of its best-weighted
    option. A language's table is made entries at once, the first time a batch holds the
    language (_Block: a feature's entry is its rank, no Python per feature); an anchor
    when a batch first holds it. English terms no text holds get ids past the vocabulary's,
    numbered in the order the entries holding them are first used (made()): they count in
    a translation's norm, in that order, and match nothing.
    """

    def __init__(self, index: EnglishIndex) -> None:
        self._index = index
        # Each language's table (the last asked), and the features of those tables: their
        # union, and each table's ranks by union position (_union).
        self._blocks: dict[str, _Block] = {}
        self._features: tuple[list[_Block], Column, NDArray[np.int64]] | None = None
        # Each anchor's entry.
        self._anchors: dict[str, int] = {}
        # Each English term no text holds: its code, and each code's number past the
        # vocabulary (-1 until an entry first used holds it); how many are numbered.
        self._codes: dict[str, int] = {}
        self._numbers = _Growing(np.int64)
        self.extra = 0
        # Entries: where each one's options begin (and the last ends), its weight, whether
        # a batch used it yet. Options: term id or -1, code or -1, weight, share of the best.
        self._bounds = _Growing(np.int64)
        self._bounds.extend(np.zeros(1, dtype=np.int64))
        self._weights = _Growing(np.float64)
        self._used = _Growing(np.bool_)
        self._cover_terms = _Growing(np.int64)
        self._option_codes = _Growing(np.int64)
        self._bag_weights = _Growing(np.float64)
        self._cover_shares = _Growing(np.float64)
        self._idf_past: NDArray[np.float64] | None = None
        # Whether some entry has no option (a lexicon feature with none).
        self._empty = False

    def block(self, lang: str, table: Mapping[str, Options]) -> _Block:
        """LANG's lexicon TABLE as entries, made the first time it is asked for."""
        found = self._blocks.get(lang)
        if found is None or found.table is not table:
            names = sorted(table)
            options = list(map(table.__getitem__, names))
            flat = list(chain.from_iterable(options))
            base = self._add(
                np.fromiter(map(len, options), np.int64, len(options)),
                list(map(itemgetter(0), flat)),
                np.fromiter(map(itemgetter(1), flat), np.float64, len(flat)),
            )
            found = self._blocks[lang] = _Block(table, pa.array(names, pa.string()), base)
        return found

    def ranks(
        self,
        names: list[str],
        lexicon: Lexicon,
        codes: NDArray[np.int64],
        rows: tuple[NDArray[np.int64], Column],
    ) -> NDArray[np.int64]:
        """Each token's rank among its language's features, or -1: ROWS (row, token) pairs.

        Row R's language is NAMES[CODES[R]]. One hash lookup of every token among the union
        of the languages' features (Arrow's index_in), then a language's rank of each union
        position (a table, numpy). The word columns are millions long: they are taken in
        32 bits until the ranks, so that the lookup makes few arrays of them.
        """
        word_rows, tokens = rows
        held = [self.block(name, lexicon[name]) for name in names if name in lexicon]
        blocks, union, table = self._union()
        # Each language's row of the table; a language the lexicon lacks, the last (-1s).
        row = np.full(len(names), len(blocks), dtype=np.int64)
        number = {id(block): n for n, block in enumerate(blocks)}
        row[[n for n, name in enumerate(names) if name in lexicon]] = [
            number[id(block)] for block in held
        ]
        indexed: Column = pc.index_in(tokens, value_set=union)
        found: Column = pc.fill_null(indexed, len(union))
        # The table's cells number fewer than 2**31 (its rows are the languages).
        at: NDArray[np.int32] = (row[codes] * table.shape[1]).astype(np.int32)[word_rows]
        at += np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int32)
        ranks: NDArray[np.int64] = np.take(table, at)
        return ranks

    def _union(self) -> tuple[list[_Block], Column, NDArray[np.int64]]:
        """The languages' tables made so far, their features (a union), and their ranks.

        The table has a row per block and a last one, and a column per feature and a last
        one (a token none holds): each block's rank of each feature, -1 where it has none.
        Made again only when a language is added (or its table replaced).
        """
        blocks = list(self._blocks.values())
        known = self._features
        if known is not None and [id(block) for block in known[0]] == list(map(id, blocks)):
            return known
        # One dictionary_encode of the tables' features end to end: its indices are each
        # feature's position in the union, in block order, each block's in rank order.
        lengths = np.asarray([len(block.names) for block in blocks], dtype=np.int64)
        encoded = pc.dictionary_encode(
            pa.concat_arrays([block.names for block in blocks] or [pa.array([], pa.string())])
        )
        union = encoded.dictionary
        position = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        block = np.repeat(np.arange(len(blocks), dtype=np.int64), lengths)
        rank = np.arange(len(position), dtype=np.int64) - np.repeat(
            np.cumsum(lengths) - lengths, lengths
        )
        table = np.full((len(blocks) + 1, len(union) + 1), -1, dtype=np.int64)
        table[block, position] = rank
        self._features = (blocks, union, table)
        return self._features

    def words(
        self,
        codes: NDArray[np.int64],
        base: NDArray[np.int64],
        alphabetical: NDArray[np.int64],
        row_of: NDArray[np.int64],
        ranks: NDArray[np.int64],
    ) -> tuple[NDArray[np.int64], ...]:
        """The items of word features of rows ROW_OF, ranked RANKS in their language's table.

        One item per (row, distinct feature its table holds options for), with its count,
        rows in order and each row's in rank order; the language of row R is CODES[R], its
        entries start at BASE[code]. Returned as (query, entry, count, the entries used for
        the first time in the order they are made: by language (ALPHABETICAL), then rank).
        """
        lang = codes[row_of]
        held = np.flatnonzero((ranks >= 0) & (base[lang] >= 0))
        entry = base[lang[held]] + ranks[held]
        width = max(1, len(self._weights.view))
        keys, counts = np.unique(row_of[held] * width + entry, return_counts=True)
        query, entry = np.divmod(keys, width)
        if self._empty:  # an entry of no option gives no item
            bounds = self._bounds.view
            kept = np.flatnonzero(bounds[entry + 1] > bounds[entry])
            query, entry, counts = query[kept], entry[kept], counts[kept]
        fresh = np.flatnonzero(~self._used.view[entry])
        if len(fresh):
            first = np.unique(alphabetical[codes[query[fresh]]] * width + entry[fresh]) % width
        else:
            first = fresh
        return query, entry, counts.astype(np.int64), first

    def anchors(
        self,
        codes: NDArray[np.int64],
        row_of: NDArray[np.int64],
        tokens: Column,
    ) -> tuple[NDArray[np.int64], ...]:
        """The anchor items of a batch: one per (row, distinct anchor), with its count.

        Each row's anchors in sorted order. An anchor met for the first time is made an
        entry, in the order the one-text path met them (rows of a language in turn, in the
        order the languages first appear; each row's anchors sorted). Returned as words().
        """
        encoded = pc.dictionary_encode(tokens)
        distinct = encoded.dictionary.to_pylist()
        ordered = sorted(range(len(distinct)), key=distinct.__getitem__)
        rank = np.empty(len(distinct), dtype=np.int64)
        rank[ordered] = np.arange(len(distinct), dtype=np.int64)
        indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        width = max(1, len(distinct))
        keys, counts = np.unique(row_of * width + rank[indices], return_counts=True)
        query, ranked = np.divmod(keys, width)
        anchors = list(map(distinct.__getitem__, ordered))
        entry_of = np.fromiter(map(self._anchors.get, anchors, repeat(-1)), np.int64, len(anchors))
        first = np.zeros(0, dtype=np.int64)
        if (entry_of < 0).any():
            # Languages in the order they first appear (codes are numbered so; ROW_OF are
            # rows of languages the lexicon holds), then rows, then anchors: each new anchor
            # where it is first met.
            met = np.lexsort((ranked, query, codes[query]))
            _, at = np.unique(ranked[met], return_index=True)
            new = ranked[met[np.sort(at)]]
            new = new[entry_of[new] < 0]
            made = list(map(anchors.__getitem__, new.tolist()))
            ones = np.ones(len(made), dtype=np.int64)
            start = self._add(ones, made, ones.astype(np.float64))
            first = np.arange(start, start + len(made), dtype=np.int64)
            entry_of[new] = first
            self._anchors.update(zip(made, first.tolist(), strict=True))
        return query, entry_of[ranked], counts.astype(np.int64), first

    def _add(
        self, counts: NDArray[np.int64], english: list[str], weights: NDArray[np.float64]
    ) -> int:
        """Entries of COUNTS options each (ENGLISH terms, WEIGHTS, in turn): the first's number.

        An entry's shares are its weights over its first (best) one's; its weight is the
        highest of its terms' (weight_of: an unseen term's where no text holds it).
        """
        index = self._index
        cover = np.fromiter(map(index.vocabulary.get, english, repeat(-1)), np.int64, len(english))
        codes = np.full(len(english), -1, dtype=np.int64)
        unheld = np.flatnonzero(cover < 0)
        if len(unheld):
            known = self._codes
            before = len(known)
            terms = list(map(english.__getitem__, unheld.tolist()))
            codes[unheld] = np.fromiter(
                map(known.setdefault, terms, map(len, repeat(known, len(terms)))),
                np.int64,
                len(terms),
            )
            self._numbers.extend(np.full(len(known) - before, -1, dtype=np.int64))
        held = np.flatnonzero(counts > 0)
        self._empty |= len(held) < len(counts)
        starts = (np.cumsum(counts) - counts)[held]
        option_weight = np.full(len(english), index.unseen_idf, dtype=np.float64)
        found = np.flatnonzero(cover >= 0)
        option_weight[found] = index.arrays().weights[cover[found]]
        entry_weight = np.zeros(len(counts), dtype=np.float64)
        if len(held):
            entry_weight[held] = np.maximum.reduceat(option_weight, starts)
        first = len(self._weights.view)
        self._bounds.extend(self._bounds.view[-1] + np.cumsum(counts))
        self._weights.extend(entry_weight)
        self._used.extend(np.zeros(len(counts), dtype=np.bool_))
        self._cover_terms.extend(cover)
        self._option_codes.extend(codes)
        self._bag_weights.extend(weights)
        self._cover_shares.extend(weights / np.repeat(weights[starts], counts[held]))
        return first

    def made(self, entries: NDArray[np.int64]) -> None:
        """ENTRIES are used (in this order): number the terms past the vocabulary they hold.

        Each term no text holds is numbered the first time an entry holding it is used, in
        the order of the entries and of their options: as the one-text path numbered them.
        """
        used = self._used.view
        fresh = entries[~used[entries]]
        if not len(fresh):
            return
        used[fresh] = True
        _, at = expand(self._bounds.view, fresh)
        codes = self._option_codes.view[at]
        numbers = self._numbers.view
        codes = codes[codes >= 0]
        codes = codes[numbers[codes] < 0]
        if len(codes):
            distinct, first = np.unique(codes, return_index=True)
            numbered = distinct[np.argsort(first)]
            numbers[numbered] = np.arange(self.extra, self.extra + len(numbered))
            self.extra += len(numbered)

    def arrays(self) -> _EntryArrays:
        """The entries as arrays (views: good until entries are added)."""
        return _EntryArrays(
            self._bounds.view,
            self._weights.view,
            self._cover_terms.view,
            self._option_codes.view,
            self._numbers.view,
            self._bag_weights.view,
            self._cover_shares.view,
        )

    def idf_past(self) -> NDArray[np.float64]:
        """The index's IDF by term id, and past the last the unseen terms' (no text's)."""
        if self._idf_past is None:
            self._idf_past = np.append(self._index.arrays().idf, self._index.unseen_idf)
        return self._idf_past


class _Growing(Generic[_Scalar]):
    """A column that grows at its end, its capacity doubled when full: O(1) per value."""

    __slots__ = ("_data", "_size")

    def __init__(self, dtype: type[_Scalar]) -> None:
        self._data: NDArray[_Scalar] = np.zeros(64, dtype=dtype)
        self._size = 0

    @property
    def view(self) -> NDArray[_Scalar]:
        """The values so far (a view: writes go to the column)."""
        return self._data[: self._size]

    def extend(self, values: NDArray[_Scalar]) -> None:
        """Append VALUES."""
        end = self._size + len(values)
        if end > len(self._data):
            grown = np.zeros(max(end, 2 * len(self._data)), dtype=self._data.dtype)
            grown[: self._size] = self._data[: self._size]
            self._data = grown
        self._data[self._size : end] = values
        self._size = end


class _EntryArrays(NamedTuple):
    """_Entries as arrays: each option is a cosine term and a coverage option at once."""

    # Where each entry's options begin, and where the last ends; each entry's weight.
    bounds: NDArray[np.int64]
    weights: NDArray[np.float64]
    # Each option's term id (-1: no text holds it), code (-1: a text does), the number past
    # the vocabulary of each code, each option's lexicon weight and share of the best.
    cover_terms: NDArray[np.int64]
    codes: NDArray[np.int64]
    numbers: NDArray[np.int64]
    bag_weights: NDArray[np.float64]
    cover_shares: NDArray[np.float64]
