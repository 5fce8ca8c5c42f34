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
from collections import Counter
from itertools import chain, pairwise, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow.compute as pc

from pipeline.folding.translate.features import ANCHOR, features, marks, shape
from pipeline.folding.translate.terms import TermTable, term_table
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
# An entry not made yet (_Entries.words).
_UNMADE = -2
# The blocks of English texts whose best cosines bound a shortlist's lowest from below
# (_best): enough that a column's best texts are mostly in blocks of their own.
_BLOCKS = 256


class EnglishIndex:
    """English texts by hash, as IDF-weighted unit vectors and as the terms each holds."""

    def __init__(self, texts: Mapping[str, str], known: TermTable | None = None) -> None:
        """Index TEXTS ({hash: text}); the terms of those KNOWN holds are taken from it."""
        from scipy import sparse  # noqa: PLC0415 - imported by the runs that link, not by every command

        self.terms = term_table(texts, known)
        self.hashes = self.terms.hashes  # sorted: a text's position is its hash order
        self.texts = [texts[text_hash] for text_hash in self.hashes]
        self.position = {text_hash: i for i, text_hash in enumerate(self.hashes)}
        total = len(self.hashes)
        # Every term a text holds, by id (terms sorted): the rows of the cosine matrix.
        self.names = sorted(set(self.terms.terms))
        self.vocabulary = {term: n for n, term in enumerate(self.names)}
        width = len(self.names)
        ids = np.asarray([self.vocabulary[term] for term in self.terms.terms], dtype=np.int64)
        lengths = np.diff(self.terms.offsets)
        docs = np.repeat(np.arange(total, dtype=np.int64), lengths)
        frequency = np.bincount(ids, minlength=width).tolist()
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
        self.matrix = sparse.csr_array(
            (weighted / norms[docs], (ids, docs)), shape=(width, total), dtype=np.float64
        )
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
        self._by_text: sparse.csr_array | None = None
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
        batched. The word features of a language are looked up at once (_Entries.words),
        each lexicon entry turned into term ids the first time a text uses it.
        """
        entries = self._entries
        parts: list[tuple[NDArray[np.int64], ...]] = []
        by_lang: dict[str, list[int]] = {}
        for row, (lang, _, _) in enumerate(featured):
            if lang in lexicon:
                by_lang.setdefault(lang, []).append(row)
        for lang, rows in sorted(by_lang.items()):
            parts.append(entries.words(lang, lexicon[lang], rows, [featured[r][1] for r in rows]))
        anchor_query: list[int] = []
        anchor_entry: list[int] = []
        anchor_count: list[int] = []
        for rows in by_lang.values():
            for row in rows:
                found = featured[row][2]
                if not found:
                    continue
                for anchor, count in sorted(Counter(found).items()):
                    anchor_query.append(row)
                    anchor_entry.append(entries.anchor(anchor))
                    anchor_count.append(count)
        anchored = np.asarray(anchor_query, dtype=np.int64)
        parts.append(
            (
                anchored,
                np.asarray(anchor_entry, dtype=np.int64),
                np.asarray(anchor_count, dtype=np.int64),
                np.arange(len(anchored), dtype=np.int64),
                np.ones(len(anchored), dtype=np.int64),
            )
        )
        query, entry, counts, place, kind = (
            np.concatenate(column) for column in zip(*parts, strict=True)
        )
        # Query by query: its words (in their order), then its anchors.
        order = np.lexsort((place, kind, query))
        return self._batch(
            len(featured), query[order], entry[order], counts[order].astype(np.float64)
        )

    def ranked(self, traits: Traits, langs: Sequence[str], lexicon: Lexicon) -> Traits:
        """TRAITS with each word feature's rank in its language's lexicon (sorted features).

        Looked up once per distinct feature of a language (dictionary_encode).
        """
        names, codes = _codes(langs)
        word_lang = codes[traits.word_rows]
        ranks = np.full(len(traits.word_rows), -1, dtype=np.int64)
        for code, lang in enumerate(names):
            if lang not in lexicon:
                continue
            at = np.flatnonzero(word_lang == code)
            ranks[at] = self._entries.ranks(lang, lexicon[lang], traits.words.take(at))
        return traits._replace(word_ranks=ranks)

    def mapped_traits(self, traits: Traits, langs: Sequence[str], lexicon: Lexicon) -> Queries:
        """mapped() of texts given as batch.traits() columns, in LANGS: the same queries.

        No Python per text: each language's word features are looked up as the batch's
        distinct ones (dictionary_encode), the anchors counted per text in numpy.
        """
        entries = self._entries
        names, codes = _codes(langs)
        held = np.isin(codes, [n for n, name in enumerate(names) if name in lexicon])
        word_lang = codes[traits.word_rows]
        parts: list[tuple[NDArray[np.int64], ...]] = []
        ranks = traits.word_ranks
        if ranks is None:
            ranks = self.ranked(traits, langs, lexicon).word_ranks
            assert ranks is not None
        for code, lang in sorted(enumerate(names), key=itemgetter(1)):
            if lang in lexicon:
                at = np.flatnonzero(word_lang == code)
                parts.append(entries.found(lang, lexicon[lang], traits.word_rows[at], ranks[at]))
        anchor_rows = traits.anchor_rows
        kept = np.flatnonzero(held[anchor_rows]) if len(anchor_rows) else anchor_rows
        parts.append(entries.anchors(codes, held, anchor_rows[kept], traits.anchors.take(kept)))
        query, entry, counts, place, kind = (
            np.concatenate(column) for column in zip(*parts, strict=True)
        )
        order = np.lexsort((place, kind, query))
        return self._batch(
            traits.size, query[order], entry[order], counts[order].astype(np.float64)
        )

    def _batch(
        self,
        size: int,
        item_query: NDArray[np.int64],
        item_entry: NDArray[np.int64],
        item_count: NDArray[np.float64],
    ) -> Queries:
        from scipy import sparse  # noqa: PLC0415 - imported by the runs that link, not by every command

        table = self._entries.arrays()
        width = len(self.vocabulary)
        # The cosine bags: each item's English terms at its count times their weight.
        owner, at = _expand(table.bounds, item_entry)
        terms = table.terms[at]
        idf = np.concatenate(
            [self.arrays().idf, np.full(len(self._entries.extra), self.unseen_idf)]
        )
        bags = sparse.csr_array(
            (item_count[owner] * table.bag_weights[at], (item_query[owner], terms)),
            shape=(size, len(idf)),
            dtype=np.float64,
        )
        bags.sum_duplicates()
        bags.data *= idf[bags.indices]
        row_of = np.repeat(np.arange(size, dtype=np.int64), np.diff(bags.indptr))
        norms = np.sqrt(np.bincount(row_of, weights=bags.data * bags.data, minlength=size))
        norms[norms == 0] = 1.0
        kept = bags.indices < width
        rows_kept = row_of[kept]
        bags = sparse.csr_array(
            (
                bags.data[kept] / norms[rows_kept],
                bags.indices[kept],
                np.searchsorted(rows_kept, np.arange(size + 1)),
            ),
            shape=(size, width),
        )
        # Coverage: each item's options the vocabulary holds, in item order.
        item_weight = table.weights[item_entry]
        option_item, at = _expand(table.bounds, item_entry)
        held = table.cover_terms[at] >= 0
        option_item, at = option_item[held], at[held]
        option_query = item_query[option_item]
        option_term = table.cover_terms[at]
        option_share = table.cover_shares[at]
        # The option that stands for each English term a query reaches: its best share.
        order = np.lexsort((-option_share, option_term, option_query))
        change = np.ones(len(order), dtype=np.bool_)
        change[1:] = (np.diff(option_query[order]) != 0) | (np.diff(option_term[order]) != 0)
        option_first = np.zeros(len(order), dtype=np.bool_)
        option_first[order[change]] = True
        return Queries(
            size,
            bags,
            np.bincount(item_query, weights=item_weight, minlength=size).astype(np.float64),
            item_weight,
            option_item,
            option_query,
            option_term,
            option_share,
            option_first,
        )

    def shortlists(
        self, queries: Queries, count: int, rows: Sequence[int] | None = None
    ) -> list[list[int]]:
        """The COUNT English texts of best cosine with each query (at ROWS), best first.

        One product of the texts (rows, sparse) with the batch's bags (columns, dense): it
        walks the index once for the whole batch, where a sparse product walks a term's
        texts once per query holding it. In single precision: the cosine only shortlists,
        coverage (in double) ranks the shortlist. The best are found by _best().
        """
        every = rows is None or list(rows) == list(range(queries.size))
        bags = queries.bags if every else queries.bags[np.asarray(rows, dtype=np.int64)]
        size = bags.shape[0]
        if not len(self) or not size:
            return [[] for _ in range(size)]
        if self._by_text is None:
            # The texts as rows, each one's terms in order.
            by_text = self.matrix.T.tocsr().astype(np.float32)
            by_text.sort_indices()
            self._by_text = by_text
        # Only the terms the bags hold: the others' products are 0, and each sum adds the
        # same products in the same (term) order, so the cosines are the same bits.
        terms, column = np.unique(bags.indices, return_inverse=True)
        columns = np.zeros((len(terms), size), dtype=np.float32)
        columns[column, np.repeat(np.arange(size), np.diff(bags.indptr))] = bags.data
        # One row per English text, one column per query, made text by text (each text's
        # terms in order): its row of sums stays in cache, where term by term the sums of
        # every text were walked once per term. The same sums in the same order.
        cosine = self._by_text[:, terms] @ columns
        return _best(np.ascontiguousarray(cosine, dtype=np.float32), count)

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


class _Entries:
    """An index's lexicon entries (and anchors) as its term ids, each made once, as arrays.

    Entry N's options are rows bounds[N] to bounds[N + 1] of _EntryArrays: as cosine terms
    (terms, with their lexicon weights), and as coverage options (cover_terms, -1 where no
    text holds it, with their share of the best weight); its weight is that of its
    best-weighted option. English terms no text holds get ids past the vocabulary's: they
    count in a translation's norm, and match nothing.
    """

    def __init__(self, index: EnglishIndex) -> None:
        self._index = index
        # Each anchor's entry.
        self._anchors: dict[str, int] = {}
        # Per language, its lexicon table's features by rank (sorted), and each rank's entry
        # (_UNMADE until a text uses it, -1 when the lexicon gives it no option).
        self._ranks: dict[str, tuple[Mapping[str, Options], dict[str, int], NDArray[np.int64]]] = {}
        self._names: dict[str, list[str]] = {}
        self.extra: dict[str, int] = {}
        self._lists: tuple[list[int], list[float], list[int], list[float], list[float]] = (
            [],
            [],
            [],
            [],
            [],
        )
        self._bounds = [0]
        self._arrays = _EntryArrays(
            np.zeros(0, dtype=np.int64),
            np.zeros(0),
            np.zeros(0, dtype=np.int64),
            np.zeros(0),
            np.zeros(1, dtype=np.int64),
            np.zeros(0),
        )

    def words(
        self,
        lang: str,
        table: Mapping[str, Options],
        rows: Sequence[int],
        featured: Sequence[Sequence[str]],
    ) -> tuple[NDArray[np.int64], ...]:
        """The items of the word features FEATURED of ROWS, in LANG's lexicon TABLE.

        One item per (row, distinct feature TABLE holds), with its count: rows in order,
        each row's features in sorted order (their rank among TABLE's, sorted). Returned
        as (query, entry, count, place, kind 0) arrays, place being that rank.
        """
        ranks, made = self._ranked(lang, table)
        lengths = np.fromiter((len(words) for words in featured), np.int64, len(featured))
        # ranks.get(word, -1) of every word, called from C (map over two iterables).
        flat = np.fromiter(
            map(ranks.get, chain.from_iterable(featured), repeat(-1)), np.int64, int(lengths.sum())
        )
        row_of = np.repeat(np.asarray(rows, dtype=np.int64), lengths)
        return self._items(lang, table, made, row_of=row_of, flat=flat)

    def ranks(self, lang: str, table: Mapping[str, Options], tokens: Column) -> NDArray[np.int64]:
        """Each of TOKENS' rank among LANG's lexicon TABLE's features (sorted), or -1."""
        ranks, _ = self._ranked(lang, table)
        encoded = pc.dictionary_encode(tokens)
        distinct = encoded.dictionary.to_pylist()
        rank_of = np.fromiter(map(ranks.get, distinct, repeat(-1)), np.int64, len(distinct))
        indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        return rank_of[indices]

    def found(
        self,
        lang: str,
        table: Mapping[str, Options],
        row_of: NDArray[np.int64],
        flat: NDArray[np.int64],
    ) -> tuple[NDArray[np.int64], ...]:
        """words() of word features given as their rows and ranks (FLAT, ranks())."""
        _, made = self._ranked(lang, table)
        return self._items(lang, table, made, row_of=row_of, flat=flat)

    def anchors(
        self,
        codes: NDArray[np.int64],
        held: NDArray[np.bool_],
        row_of: NDArray[np.int64],
        tokens: Column,
    ) -> tuple[NDArray[np.int64], ...]:
        """The anchor items of a batch: one per (row, distinct anchor), with its count.

        Each row's anchors in sorted order (place: the anchor's rank among the batch's);
        entries made in the order mapped() meets the anchors (rows of a language in turn,
        in the order the languages first appear; each row's anchors sorted).
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
        # The order the one-text path met them: language of first appearance, row, anchor.
        # Languages in the order they first appear (codes are numbered so), then the rest.
        lang_order = np.where(held, codes, len(codes))
        met = np.lexsort((ranked, query, lang_order[query]))
        _, first = np.unique(ranked[met], return_index=True)
        entry_of = np.empty(len(distinct), dtype=np.int64)
        for at in np.sort(first).tolist():
            r = int(ranked[met[at]])
            entry_of[r] = self.anchor(distinct[ordered[r]])
        return (
            query,
            entry_of[ranked],
            counts.astype(np.int64),
            ranked,
            np.ones(len(query), dtype=np.int64),
        )

    def _items(
        self,
        lang: str,
        table: Mapping[str, Options],
        made: NDArray[np.int64],
        *,
        row_of: NDArray[np.int64],
        flat: NDArray[np.int64],
    ) -> tuple[NDArray[np.int64], ...]:
        """The items of word features of rows ROW_OF, ranked FLAT in LANG's TABLE (words())."""
        held = flat >= 0
        width = max(1, len(made))
        keys, counts = np.unique(row_of[held] * width + flat[held], return_counts=True)
        query, rank = np.divmod(keys, width)
        unmade = np.unique(rank[made[rank] == _UNMADE])
        if len(unmade):
            names = self._names[lang]
            for n in unmade.tolist():
                options = table.get(names[n])
                made[n] = self._add(options) if options else -1
        entry = made[rank]
        kept = entry >= 0
        return (
            query[kept],
            entry[kept],
            counts[kept],
            rank[kept],
            np.zeros(int(kept.sum()), np.int64),
        )

    def _ranked(
        self, lang: str, table: Mapping[str, Options]
    ) -> tuple[dict[str, int], NDArray[np.int64]]:
        """LANG's features by rank (TABLE's keys sorted), and each rank's entry so far."""
        found = self._ranks.get(lang)
        if found is None or found[0] is not table:
            names = sorted(table)
            found = self._ranks[lang] = (
                table,
                dict(zip(names, range(len(names)), strict=True)),
                np.full(len(names), _UNMADE, dtype=np.int64),
            )
            self._names[lang] = names
        return found[1], found[2]

    def anchor(self, anchor: str) -> int:
        """The entry of an anchor: itself, as printed."""
        known = self._anchors
        found = known.get(anchor)
        if found is None:
            found = known[anchor] = self._add(((anchor, 1.0),))
        return found

    def _add(self, options: Options) -> int:
        index = self._index
        bag_terms, bag_weights, cover_terms, cover_shares, weights = self._lists
        best = options[0][1]
        for english, weight in options:
            term = index.vocabulary.get(english)
            if term is None:
                term = self.extra.setdefault(english, len(index.vocabulary) + len(self.extra))
            bag_terms.append(term)
            bag_weights.append(weight)
            cover_terms.append(index.vocabulary.get(english, -1))
            cover_shares.append(weight / best)
        weights.append(max(index.weight_of(e) for e, _ in options))
        self._bounds.append(len(bag_terms))
        return len(weights) - 1

    def arrays(self) -> _EntryArrays:
        """The entries as arrays; those made since the last call are appended."""
        done = self._arrays
        if len(self._lists[4]) > len(done.weights):
            options, entries = len(done.terms), len(done.weights)
            bag_terms, bag_weights, cover_terms, cover_shares, weights = self._lists
            self._arrays = _EntryArrays(
                _appended(done.terms, bag_terms[options:], np.int64),
                _appended(done.bag_weights, bag_weights[options:], np.float64),
                _appended(done.cover_terms, cover_terms[options:], np.int64),
                _appended(done.cover_shares, cover_shares[options:], np.float64),
                _appended(done.bounds, self._bounds[entries + 1 :], np.int64),
                _appended(done.weights, weights[entries:], np.float64),
            )
        return self._arrays


def _codes(langs: Sequence[str]) -> tuple[list[str], NDArray[np.int64]]:
    """The distinct LANGS in the order they first appear, and each one's number among them."""
    numbers: dict[str, int] = {}
    codes = np.fromiter(
        map(numbers.setdefault, langs, map(len, repeat(numbers, len(langs)))), np.int64, len(langs)
    )
    return list(numbers), codes


def _appended(array: NDArray[Any], tail: Sequence[float], dtype: type) -> NDArray[Any]:
    return np.concatenate([array, np.asarray(tail, dtype=dtype)])


class _EntryArrays(NamedTuple):
    """_Entries as arrays: each option is a cosine term and a coverage option at once."""

    terms: NDArray[np.int64]
    bag_weights: NDArray[np.float64]
    cover_terms: NDArray[np.int64]
    cover_shares: NDArray[np.float64]
    # Where each entry's options begin, and where the last ends.
    bounds: NDArray[np.int64]
    weights: NDArray[np.float64]


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
    owner, at = _expand(arrays.doc_starts, docs)
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


def _best(cosine: NDArray[np.float32], count: int) -> list[list[int]]:
    """Each column's COUNT rows of highest value above 0, highest first (then lowest row).

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
    values = cosine[rows, columns]
    order = np.lexsort((rows, -values, columns))
    rows, columns = rows[order], columns[order]
    starts = np.searchsorted(columns, np.arange(queries + 1))
    return [rows[start : min(end, start + count)].tolist() for start, end in pairwise(starts)]


def _expand(
    bounds: NDArray[np.int64], pair_query: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each pair's copy of its query's rows: (pair of each row, row)."""
    starts, counts = bounds[pair_query], bounds[pair_query + 1] - bounds[pair_query]
    owner = np.repeat(np.arange(len(pair_query), dtype=np.int64), counts)
    before = np.cumsum(counts) - counts
    rows = np.repeat(starts - before, counts) + np.arange(counts.sum(), dtype=np.int64)
    return owner, rows


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
