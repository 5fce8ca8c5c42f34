"""The English side of linking: every English text as terms, and translations scored in batches.

`EnglishIndex` holds the English texts as IDF-weighted unit vectors (a sparse matrix, one
row per term) and as the sorted term ids coverage needs (from their `TermTable`);
`Queries` are a batch of translations mapped through the lexicon into the index's term ids
once, as flat arrays;
`EnglishIndex.shortlists()` ranks a batch by cosine and `EnglishIndex.coverage_many()`
re-scores (translation, candidate) pairs, each in a few numpy passes over the whole batch.
`Query` and `EnglishIndex.coverage()` score one pair in plain Python: the definition the
batched passes are tested against.

The lexicon's entries as the index's term ids are kept in entries.py, and the batched
passes of shortlists() and coverage_many() are in scoring.py.
"""

from __future__ import annotations

import math
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow as pa

from pipeline.folding.translate.entries import Options, _Entries
from pipeline.folding.translate.features import ANCHOR, features, marks, shape
from pipeline.folding.translate.scoring import (
    _covered,
    _lists,
    _merged,
    _parts,
    _Reach,
    _reach,
    _text_rows,
    _Top,
    _top,
)
from pipeline.folding.translate.terms import TermTable, expand, term_table
from pipeline.text.normalize import fold

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import NDArray
    from scipy import sparse

    from pipeline.folding.translate.batch import Column, Traits
    from pipeline.folding.translate.features import Marks
    from pipeline.folding.translate.lexicon import Lexicon

# Options (a lexicon entry's English features) is entries.py's; importable from here as before.
__all__ = ["EnglishIndex", "Options", "Queries", "Query", "foreign_terms"]

# Cutting the index to a batch's terms costs about as much as multiplying the entries it
# leaves out by this many queries (scipy 1.17: 6-8 ns an entry cut, 0.2 ns a product; set
# between the card texts, where cutting saves a third, and 101,630 distinct English texts
# of a small vocabulary, where it doubles the time).
_CUT_COST = 24
# The cosines shortlists() holds at once (texts by queries): the texts are taken in blocks of
# as many rows, so memory stays bounded however many queries share a product.
_COSINE_CELLS = 1 << 22


class EnglishIndex:
    """English texts by hash, as IDF-weighted unit vectors and as the terms each holds."""

    def __init__(
        self, texts: Mapping[str, str], known: TermTable | None = None, workers: int = 1
    ) -> None:
        """Index TEXTS ({hash: text}); the terms of those KNOWN holds are taken from it.

        The others' terms are taken on WORKERS processes when they are many (term_table).
        """
        from scipy import sparse  # noqa: PLC0415 - imported by the runs that link, not by every command

        self.terms = term_table(texts, known, workers)
        self.hashes = self.terms.hashes  # sorted: a text's position is its hash order
        self.texts = [texts[text_hash] for text_hash in self.hashes]
        self.position = {text_hash: i for i, text_hash in enumerate(self.hashes)}
        total = len(self.hashes)
        # Every term a text holds, by id (terms sorted): the columns of the texts' vectors.
        self.names = self.terms.vocabulary
        self.vocabulary = {term: n for n, term in enumerate(self.names)}
        width = len(self.names)
        ids = self.terms.ids
        lengths = np.diff(self.terms.offsets)
        docs = np.repeat(np.arange(total, dtype=np.int64), lengths)
        # How many texts hold each term.
        held = np.bincount(ids, minlength=width)
        frequency = held.tolist()
        # math.log, not numpy's: the same bits on every machine.
        self.idf = {
            term: math.log((total + 1) / (df + 1)) + 1.0
            for term, df in zip(self.names, frequency, strict=True)
        }
        self.unseen_idf = math.log(total + 1) + 1.0
        idf = np.asarray([self.idf[term] for term in self.names], dtype=np.float64)
        weights = np.asarray([self.weight_of(term) for term in self.names], dtype=np.float64)
        # Each text's unit vector, and its total over the terms it must have covered (those
        # that are not names), each summed in term order.
        weighted = self.terms.counts * idf[ids]
        norms = np.sqrt(np.bincount(docs, weights=weighted * weighted, minlength=total))
        norms[norms == 0] = 1.0
        required = np.bincount(docs, weights=weights[ids] * ~self.terms.named, minlength=total)
        # The texts as rows of their unit vectors' terms, in order (a text's ids ascend), in
        # single precision: the cosines only shortlist. Indices in 32 bits where they fit:
        # a block of its rows (_text_rows) is made without scipy checking whether 64-bit
        # arrays would fit, and cut faster.
        small = np.int32 if max(len(ids), width) <= np.iinfo(np.int32).max else np.int64
        values: NDArray[np.float32] = (weighted / norms[docs]).astype(np.float32)
        self.vectors: sparse.csr_array[Any, tuple[int, int]] = sparse.csr_array(
            (values, ids.astype(small), np.asarray(self.terms.offsets).astype(small)),
            shape=(total, width),
        )
        self._held = held
        self._arrays = _Arrays(
            idf,
            weights,
            np.asarray(self.terms.offsets, dtype=np.int64),
            ids,
            self.terms.named,
            np.asarray(required, dtype=np.float64),
            lengths == 0,
        )
        self._folded: dict[int, str] = {}
        self._shapes: dict[int, tuple[int, float]] = {}
        self._marks: dict[int, Marks] = {}
        # (text, text): how alike the two are (card.similar_texts keeps them here).
        self.ratios: dict[tuple[int, int], float] = {}
        self._reach: tuple[Queries, _Reach] | None = None
        # The lexicon's entries as this index's term ids, per (lang, feature), once each.
        self._entries = _Entries(self)

    def __len__(self) -> int:
        return len(self.hashes)

    def weight_of(self, term: str) -> float:
        """TERM's weight in coverage: its IDF; an unseen term's or an anchor's, the most."""
        # An anchor (number, symbol, name) is printed as-is in every language: whether it
        # is there or not says more than any word, so it weighs as much as the rarest word.
        if term.startswith(ANCHOR):
            return self.unseen_idf
        return self.idf.get(term, self.unseen_idf)

    def weigh(self, foreign: list[dict[str, float]]) -> Query:
        """A translation's terms with their weights (their best translation's), once per text."""
        return Query(
            [(options, max(self.weight_of(term) for term in options)) for options in foreign]
        )

    def coverage(self, doc: int, query: Query) -> float:
        """How well English text DOC and a translation's weighed terms cover each other (0-1).

        The IDF-weighted share of the English terms that some foreign term translates to,
        times the share of the foreign terms (weighted by their best translation's IDF) that
        translate to some English term: a short text inside a long one scores low.
        """
        english = self.held(doc)
        if not english or not query.items:
            return 0.0
        # Only the English terms the translation can reach count, in the order of their
        # ids (so the sums add in one order, whatever the set's).
        common = sorted(english.keys() & query.reachable, key=self.vocabulary.__getitem__)
        # A foreign term's credit is the weight of the translation it found, relative to its
        # best one: a weak, chance co-occurrence covers little.
        credit: dict[int, float] = {}
        for term in common:
            for item, share in query.reach[term]:
                if share > credit.get(item, 0.0):
                    credit[item] = share
        foreign_hit = sum(query.items[item][1] * credit[item] for item in sorted(credit))
        english_total = self._arrays.required[doc] + sum(
            self.weight_of(term) for term in common if english[term]
        )
        english_hit = sum(self.weight_of(term) * query.best[term] for term in common)
        return math.sqrt((english_hit / english_total) * (foreign_hit / query.total))

    def folded(self, doc: int) -> str:
        """English text DOC folded (normalize.fold), computed once."""
        found = self._folded.get(doc)
        if found is None:
            found = self._folded[doc] = fold(self.texts[doc])
        return found

    def shape(self, doc: int) -> tuple[int, float]:
        """English text DOC's sentences and length (features.shape), computed once."""
        found = self._shapes.get(doc)
        if found is None:
            found = self._shapes[doc] = shape(self.texts[doc], "en")
        return found

    def marks(self, doc: int) -> Marks:
        """English text DOC's marks (features.marks), computed once."""
        found = self._marks.get(doc)
        if found is None:
            found = self._marks[doc] = marks(self.texts[doc])
        return found

    def arrays(self) -> _Arrays:
        """The index as arrays (coverage_many)."""
        return self._arrays

    def held(self, doc: int) -> dict[str, bool]:
        """The terms English text DOC holds, each with whether it is optional (a name)."""
        arrays = self._arrays
        first, last = arrays.doc_starts[doc], arrays.doc_starts[doc + 1]
        ids = arrays.doc_terms[first:last].tolist()
        return dict(
            zip((self.names[i] for i in ids), arrays.optional[first:last].tolist(), strict=True)
        )

    def queries(self, texts: Sequence[tuple[str, str]], lexicon: Lexicon) -> Queries:
        """Each (text, lang) of TEXTS mapped through LEXICON into this index's terms.

        A text's features are taken once, in Python (features.features); the rest is
        mapped(). A language the lexicon lacks gives an empty query.
        """
        return self.mapped([(lang, *features(text, lang)) for text, lang in texts], lexicon)

    def mapped(
        self, featured: Sequence[tuple[str, Sequence[str], Sequence[str]]], lexicon: Lexicon
    ) -> Queries:
        """queries() of texts given as (lang, word features, anchors): FEATURED.

        A text's items are its distinct features the lexicon holds, in sorted order, then
        its distinct anchors, sorted: the sums add in one order however the texts are
        batched. The lists are made flat columns, then mapped as mapped_traits() maps them.
        """
        names, codes = _codes([lang for lang, _, _ in featured])
        word_counts = np.fromiter(map(len, (w for _, w, _ in featured)), np.int64, len(featured))
        anchor_counts = np.fromiter(map(len, (a for _, _, a in featured)), np.int64, len(featured))
        rows = np.arange(len(featured), dtype=np.int64)
        word_rows = np.repeat(rows, word_counts)
        words = pa.array(list(chain.from_iterable(w for _, w, _ in featured)), pa.string())
        ranks = self._entries.ranks(names, lexicon, codes, (word_rows, words))
        anchors = pa.array(list(chain.from_iterable(a for _, _, a in featured)), pa.string())
        return self._mapped(
            len(featured),
            names,
            codes,
            lexicon,
            words=(word_rows, ranks),
            anchors=(np.repeat(rows, anchor_counts), anchors),
        )

    def ranked(self, traits: Traits, langs: Sequence[str], lexicon: Lexicon) -> Traits:
        """TRAITS with each word feature's rank in its language's lexicon (sorted features).

        One hash lookup of every word among the features of the batch's languages
        (_Entries.ranks), no Python per word or per language's words.
        """
        names, codes = _codes(langs)
        ranks = self._entries.ranks(names, lexicon, codes, (traits.word_rows, traits.words))
        return traits._replace(word_ranks=ranks)

    def mapped_traits(self, traits: Traits, langs: Sequence[str], lexicon: Lexicon) -> Queries:
        """mapped() of texts given as batch.traits() columns, in LANGS: the same queries.

        No Python per text: the word features are taken by their ranks (ranked()), each
        lexicon entry already made as arrays (_Entries.block), the anchors counted per
        text in numpy.
        """
        names, codes = _codes(langs)
        ranks = traits.word_ranks
        if ranks is None:
            ranks = self._entries.ranks(names, lexicon, codes, (traits.word_rows, traits.words))
        return self._mapped(
            traits.size,
            names,
            codes,
            lexicon,
            words=(traits.word_rows, ranks),
            anchors=(traits.anchor_rows, traits.anchors),
        )

    def _mapped(
        self,
        size: int,
        names: list[str],
        codes: NDArray[np.int64],
        lexicon: Lexicon,
        *,
        words: tuple[NDArray[np.int64], NDArray[np.int64]],
        anchors: tuple[NDArray[np.int64], Column],
    ) -> Queries:
        """The queries of SIZE texts in languages NAMES[CODES]: (rows, ranks) of their WORDS.

        ANCHORS are their anchors' rows and the anchors. Items: a text's words in the order
        of their ranks, then its anchors sorted.
        """
        entries = self._entries
        held = np.asarray([name in lexicon for name in names], dtype=np.bool_)
        base = np.asarray(
            [entries.block(name, lexicon[name]).base if name in lexicon else -1 for name in names],
            dtype=np.int64,
        )
        # Each language's place among the names sorted: the order entries are first made in.
        alphabetical = np.empty(len(names), dtype=np.int64)
        alphabetical[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        word_rows, ranks = words
        word_query, word_entry, word_count, word_fresh = entries.words(
            codes, base, alphabetical, word_rows, ranks
        )
        anchor_rows, anchor_tokens = anchors
        if not held[codes[anchor_rows]].all():  # only the texts of languages it holds
            kept = np.flatnonzero(held[codes[anchor_rows]])
            anchor_rows, anchor_tokens = anchor_rows[kept], anchor_tokens.take(kept)
        anchor_query, anchor_entry, anchor_count, anchor_fresh = entries.anchors(
            codes, anchor_rows, anchor_tokens
        )
        # The entries first used now, in the order the one-text path made them: words
        # (by language, then rank), then anchors as met.
        entries.made(np.concatenate([word_fresh, anchor_fresh]))
        query = np.concatenate([word_query, anchor_query])
        # Query by query (stable: a query's words, in rank order, before its anchors).
        order = np.argsort(query, kind="stable")
        return self._batch(
            size,
            query[order],
            np.concatenate([word_entry, anchor_entry])[order],
            np.concatenate([word_count, anchor_count])[order].astype(np.float64),
        )

    def _batch(
        self,
        size: int,
        item_query: NDArray[np.int64],
        item_entry: NDArray[np.int64],
        item_count: NDArray[np.float64],
    ) -> Queries:
        """The Queries of SIZE texts from their items (in query order): entries and counts."""
        from scipy import sparse  # noqa: PLC0415 - imported by the runs that link, not by every command

        table = self._entries.arrays()
        width = len(self.vocabulary)
        # Every item's options, items in order: its English terms, as cosine terms (past
        # the vocabulary: those no text holds, numbered as first made) and coverage options.
        owner, at = expand(table.bounds, item_entry)
        cover = table.cover_terms[at]
        terms = cover.copy()
        unheld = np.flatnonzero(cover < 0)
        terms[unheld] = width + table.numbers[table.codes[at[unheld]]]
        option_query = item_query[owner]
        # The cosine bags: each item's English terms at its count times their weight. The
        # rows are in order, so the compressed rows are the options as they are (what the
        # COO path gave), summed by scipy as before: the same bits.
        bags = sparse.csr_array(
            (
                item_count[owner] * table.bag_weights[at],
                terms,
                np.searchsorted(option_query, np.arange(size + 1, dtype=np.int64)),
            ),
            shape=(size, width + self._entries.extra),
            dtype=np.float64,
        )
        bags.sum_duplicates()
        bags.data *= self._entries.idf_past()[np.minimum(bags.indices, width)]
        row_of = np.repeat(np.arange(size, dtype=np.int64), np.diff(bags.indptr))
        norms = np.sqrt(np.bincount(row_of, weights=bags.data * bags.data, minlength=size))
        norms[norms == 0] = 1.0
        kept = bags.indices < width
        if kept.all():
            data, indices = bags.data / norms[row_of], bags.indices
            indptr = bags.indptr.astype(np.int64)
        else:
            rows_kept = row_of[kept]
            data, indices = bags.data[kept] / norms[rows_kept], bags.indices[kept]
            indptr = np.searchsorted(rows_kept, np.arange(size + 1))
        bags = sparse.csr_array((data, indices, indptr), shape=(size, width))
        # Coverage: each item's options the vocabulary holds, in item order.
        item_weight = table.weights[item_entry]
        held = np.flatnonzero(cover >= 0)
        option_item = owner[held]
        option_query = option_query[held]
        option_term = cover[held]
        option_share = table.cover_shares[at[held]]
        return Queries(
            size,
            bags,
            np.bincount(item_query, weights=item_weight, minlength=size).astype(np.float64),
            item_weight,
            option_item,
            option_query,
            option_term,
            option_share,
            _firsts(option_query * max(1, width) + option_term, option_share),
        )

    def shortlists(
        self,
        queries: Queries | Sequence[tuple[Queries, Sequence[int]]],
        count: int,
        rows: Sequence[int] | None = None,
    ) -> list[list[int]]:
        """The COUNT English texts of best cosine with each query (at ROWS), best first.

        QUERIES may be several batches, each with its rows: (queries, rows) pairs, whose
        shortlists come in turn. One product of the texts (rows, sparse) with the bags
        (columns, dense): it walks the index once for all of them, where a sparse product
        walks a term's texts once per query holding it, and the walk costs per entry of the
        index more than per query: the more queries a product holds, the less each costs.
        In single precision: the cosine only shortlists, coverage (in double) ranks the
        shortlist. The best are found by _best(), in blocks of texts (_COSINE_CELLS).
        """
        from scipy import sparse  # noqa: PLC0415 - imported by the runs that link, not by every command

        asked = [(queries, rows)] if isinstance(queries, Queries) else queries
        parts = [
            batch.bags
            if picked is None or list(picked) == list(range(batch.size))
            else batch.bags[np.asarray(picked, dtype=np.int64)]
            for batch, picked in asked
        ]
        # One under another: each row's entries as they are.
        bags = parts[0] if len(parts) == 1 else sparse.vstack(parts, format="csr")
        size = bags.shape[0]
        if not len(self) or not size:
            return [[] for _ in range(size)]
        by_text = self.vectors
        # Only the terms the bags hold: the others' products are 0, and each sum adds the
        # same products in the same (term) order, so the cosines are the same bits.
        terms, column = np.unique(bags.indices, return_inverse=True)
        # Cutting the texts to those terms walks every entry of the index: it pays when the
        # other terms hold many entries and the batch many queries (_CUT_COST), or when the
        # queries' columns over the whole vocabulary would hold more than _COSINE_CELLS:
        # they leave the cache (98,875 terms by 128 queries: each entry of the whole index
        # took 1.5 times as long as one of the cut index). Otherwise the whole index is
        # multiplied, the other terms' zeros adding exact zeros to every sum (the same bits).
        others = by_text.nnz - int(self._held[terms].sum())
        width = by_text.shape[1]
        whole = others * size < _CUT_COST * by_text.nnz and width * size <= _COSINE_CELLS
        columns = np.zeros((width if whole else len(terms), size), np.float32)
        at = terms[column] if whole else column
        columns[at, np.repeat(np.arange(size), np.diff(bags.indptr))] = bags.data
        # One row per English text, one column per query, made text by text (each text's
        # terms in order): its row of sums stays in cache, where term by term the sums of
        # every text were walked once per term. The same sums in the same order, whichever
        # block of texts a row is taken in. Each block's best of each query, then the best
        # of those: the best of all (_best's order is by value, then row).
        block = max(1, _COSINE_CELLS // size)
        found: list[_Top] = []
        for start in range(0, len(self), block):
            texts = _text_rows(by_text, start, min(len(self), start + block))
            cosine = (texts if whole else texts[:, terms]) @ columns
            best = _top(np.ascontiguousarray(cosine, dtype=np.float32), count)
            found.append(best._replace(rows=best.rows + start))
        return _lists(_merged(found, count) if len(found) > 1 else found[0], size)

    def coverage_many(
        self, queries: Queries, pair_query: NDArray[np.int64], pair_doc: NDArray[np.int64]
    ) -> NDArray[np.float64]:
        """coverage(pair_doc[k], query pair_query[k]) of every pair k, in a few passes.

        The same terms and credits as coverage(): a foreign term's credit is its best
        option the English text holds; an English term counts once, at its best share.
        The foreign hits add up in item order, the English ones in option order (_covered).
        """
        arrays = self.arrays()
        pairs = len(pair_query)
        if not pairs:
            return np.zeros(0)
        # A batch's options serve its sure links and its rankings: laid out once (the last
        # batch's).
        if self._reach is None or self._reach[0] is not queries:
            self._reach = (queries, _reach(queries, arrays, len(self.vocabulary)))
        reach = self._reach[1]
        parts = [
            _covered(reach, arrays, pair_query[start:end], pair_doc[start:end])
            for start, end in _parts(reach, pair_query)
        ]
        foreign_hit, english_hit, english_named = (
            np.concatenate(part) if len(parts) > 1 else part[0] for part in zip(*parts, strict=True)
        )
        english_total = arrays.required[pair_doc] + english_named
        total = queries.total[pair_query]
        valid = ~arrays.empty[pair_doc] & (total > 0) & (english_total > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.sqrt((english_hit / english_total) * (foreign_hit / total))
        return np.where(valid, scores, 0.0)


def _codes(langs: Sequence[str]) -> tuple[list[str], NDArray[np.int64]]:
    """The distinct LANGS in the order they first appear, and each one's number among them."""
    numbers: dict[str, int] = {}
    codes = np.fromiter(
        map(numbers.setdefault, langs, map(len, repeat(numbers, len(langs)))), np.int64, len(langs)
    )
    return list(numbers), codes


def _firsts(keys: NDArray[np.int64], shares: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Whether each option is the first of the highest SHARES among those of its KEYS.

    lexsort((-shares, keys))'s first of each key. One sort of the keys made distinct by
    their position (a plain sort of numbers, faster than a stable sort of the keys), and
    only keys held more than once compare shares (most are held once: each is its first).
    """
    size = len(keys)
    found = np.ones(size, dtype=np.bool_)
    if size < 2:  # noqa: PLR2004 - one option is its key's first
        return found
    if int(keys.max()) < np.iinfo(np.int64).max // size:
        ordered, order = np.divmod(np.sort(keys * size + np.arange(size, dtype=np.int64)), size)
    else:
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return found
    shared = np.zeros(size, dtype=np.bool_)
    shared[1:] = same
    shared[:-1] |= same
    at = np.flatnonzero(shared)
    options, held = order[at], ordered[at]
    change = np.ones(len(at), dtype=np.bool_)
    change[1:] = held[1:] != held[:-1]
    group = np.cumsum(change) - 1
    ranked = shares[options]
    best = np.maximum.reduceat(ranked, np.flatnonzero(change))
    top = np.flatnonzero(ranked == best[group])
    first = np.ones(len(top), dtype=np.bool_)
    first[1:] = group[top[1:]] != group[top[:-1]]
    found[options] = False
    found[options[top[first]]] = True
    return found


class _Arrays(NamedTuple):
    """An index as arrays: IDF and weights by term id, which text holds which term."""

    idf: NDArray[np.float64]
    weights: NDArray[np.float64]
    # The term ids each text holds, text by text (text N's are doc_terms[doc_starts[N]:
    # doc_starts[N + 1]], sorted); whether each is one of its optional ones (names); each
    # text's required total; the texts with no term.
    doc_starts: NDArray[np.int64]
    doc_terms: NDArray[np.int64]
    optional: NDArray[np.bool_]
    required: NDArray[np.float64]
    empty: NDArray[np.bool_]


class Queries(NamedTuple):
    """A batch of translations in an index's terms (EnglishIndex.queries)."""

    size: int
    # The cosine bags: one unit row per translation, over the vocabulary's ids.
    bags: sparse.csr_array
    # Each translation's total weight; each foreign term's (item's) weight.
    total: NDArray[np.float64]
    item_weight: NDArray[np.float64]
    # One row per (item, English term of the vocabulary it may stand for), in query order,
    # an item's options adjacent: its item, query, term id and share of the best weight.
    option_item: NDArray[np.int64]
    option_query: NDArray[np.int64]
    option_term: NDArray[np.int64]
    option_share: NDArray[np.float64]
    # Whether the option stands for its English term in its query: its best share (the
    # first such option of the query).
    option_first: NDArray[np.bool_]


class Query:
    """A translation's weighed terms, and for each English term the terms that reach it.

    ITEMS are (options, weight): the English terms a foreign term may stand for (with
    their share, best = 1) and its weight. The one-text form of Queries, for coverage().
    """

    __slots__ = ("best", "items", "reach", "reachable", "total")

    def __init__(self, items: list[tuple[dict[str, float], float]]) -> None:
        self.items = items
        self.total = sum(weight for _, weight in items)
        self.reach: dict[str, list[tuple[int, float]]] = {}
        self.best: dict[str, float] = {}
        for item, (options, _) in enumerate(items):
            for term, share in options.items():
                self.reach.setdefault(term, []).append((item, share))
                self.best[term] = max(self.best.get(term, 0.0), share)
        self.reachable = frozenset(self.reach)


def foreign_terms(text: str, lang: str, lexicon: Lexicon) -> list[dict[str, float]]:
    """Each distinct foreign feature of TEXT: the English terms it may stand for, best = 1."""
    table = lexicon.get(lang, {})
    word_features, anchor_features = features(text, lang)
    found = [
        {e: w / table[f][0][1] for e, w in table[f]}
        for f in sorted(set(word_features))
        if f in table
    ]
    return found + [{anchor: 1.0} for anchor in sorted(set(anchor_features))]
