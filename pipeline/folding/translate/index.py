"""The English side of linking: every English text as terms, and translations scored in batches.

`EnglishIndex` holds the English texts as IDF-weighted unit vectors (a sparse matrix, one
row per term) and as the sorted term ids coverage needs (from their `TermTable`);
`Queries` are a batch of translations mapped through the lexicon into the index's term ids
once, as flat arrays;
`EnglishIndex.shortlists()` ranks a batch by cosine and `EnglishIndex.coverage_many()`
re-scores (translation, candidate) pairs, each in a few numpy passes over the whole batch.
`Query` and `EnglishIndex.coverage()` score one pair in plain Python: the definition the
batched passes are tested against.
"""

from __future__ import annotations

import math
from itertools import chain, pairwise, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.folding.translate.features import ANCHOR, features, marks, shape
from pipeline.folding.translate.terms import TermTable, expand, term_table
from pipeline.text.normalize import fold

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import NDArray
    from scipy import sparse

    from pipeline.folding.translate.batch import Column, Traits
    from pipeline.folding.translate.features import Marks
    from pipeline.folding.translate.lexicon import Lexicon

# A lexicon entry: the English features a foreign one may stand for, with their weights.
Options = tuple[tuple[str, float], ...]
# The scalar type of a growing column (_Growing).
_Scalar = TypeVar("_Scalar", bound=np.generic)
# Cutting the index to a batch's terms costs about as much as multiplying the entries it
# leaves out by this many queries (scipy 1.17: 6-8 ns an entry cut, 0.2 ns a product; set
# between the card texts, where cutting saves a third, and 101,630 distinct English texts
# of a small vocabulary, where it doubles the time).
_CUT_COST = 24
# The blocks of English texts whose best cosines bound a shortlist's lowest from below
# (_best): enough that a column's best texts are mostly in blocks of their own.
_BLOCKS = 256
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
