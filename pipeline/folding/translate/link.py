"""Linking a translated ruling to the English ruling it translates: an index and a decision."""

from __future__ import annotations

import math
import multiprocessing as mp
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from scipy import sparse

from pipeline.folding.translate.card import choose, similar_texts
from pipeline.folding.translate.features import (
    ANCHOR,
    anchors,
    features,
    names,
    prepare,
    shape,
    shape_similarity,
    words,
)
from pipeline.folding.translate.lexicon import Lexicon, shipped
from pipeline.text.normalize import fold

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence

    from numpy.typing import NDArray

# A link needs a coverage score of at least MIN_SCORE and a lead of MIN_MARGIN over the best
# candidate that is not a version of it. Tuned on the dev sets (benchmarks/translate_eval.py
# --sweep) and on rulings: card texts score higher than rulings (whose words the card texts
# the lexicon learned from use less), so the margin carries most of the decision.
MIN_SCORE = 0.45
MIN_MARGIN = 0.12
# How many of the best-scoring candidates are compared for versions and the margin.
SHORTLIST = 20
# Fewer texts than this are ranked in the calling process: forking costs more than it saves.
PARALLEL_MIN = 2_000
# Texts a worker ranks per task.
_CHUNK = 256
# Scores one batch of translations holds against every English text (rank_batch): the
# batch is as many translations as keep it under this, so memory stays bounded.
_BATCH_CELLS = 1 << 20
# The index and lexicon rank_many() hands to its forked workers.
_SHARED: tuple[EnglishIndex, Lexicon] | None = None


class Link(NamedTuple):
    """The English original of a translation, or none (original is None) when unsure."""

    original: str | None
    score: float
    margin: float
    method: str
    # The original's versions among the candidates (the original first): the words cannot
    # tell them apart, their dates can (see pipeline.folding.translate.table).
    versions: tuple[str, ...] = ()


class EnglishIndex:
    """English texts by hash, as IDF-weighted unit vectors in an inverted index."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self.hashes = sorted(texts)
        self.texts = [texts[text_hash] for text_hash in self.hashes]
        self.position = {text_hash: i for i, text_hash in enumerate(self.hashes)}
        bags = [_english_bag(text) for text in self.texts]
        self.terms = [frozenset(bag) for bag in bags]
        self.optional = [frozenset(names(prepare(text))) for text in self.texts]
        frequency: Counter[str] = Counter()
        for bag in bags:
            frequency.update(bag.keys())
        total = len(bags)
        self.idf = {term: math.log((total + 1) / (df + 1)) + 1.0 for term, df in frequency.items()}
        self.unseen_idf = math.log(total + 1) + 1.0
        postings: dict[str, tuple[list[int], list[float]]] = defaultdict(lambda: ([], []))
        for doc, bag in enumerate(bags):
            weights = {term: count * self.idf[term] for term, count in bag.items()}
            norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
            for term, weight in weights.items():
                docs, values = postings[term]
                docs.append(doc)
                values.append(weight / norm)
        self.postings = {
            term: (np.asarray(docs, dtype=np.int64), np.asarray(values, dtype=np.float64))
            for term, (docs, values) in postings.items()
        }
        # Coverage weights, and each text's total over the terms it must have covered.
        self.weights = {term: self._weight(term) for term in frequency}
        # Summed in sorted order: a set's order changes with the process's hash seed, and
        # the last bits of a sum with it, which decided near-ties differently run to run.
        self.required = [
            sum(self.weights[term] for term in sorted(terms - optional))
            for terms, optional in zip(self.terms, self.optional, strict=True)
        ]
        self._folded: dict[int, str] = {}
        self._shapes: dict[int, tuple[int, float]] = {}
        self._arrays: _Arrays | None = None

    def __len__(self) -> int:
        return len(self.hashes)

    def _weight(self, term: str) -> float:
        # An anchor (number, symbol, name) is printed as-is in every language: whether it
        # is there or not says more than any word, so it weighs as much as the rarest word.
        if term.startswith(ANCHOR):
            return self.unseen_idf
        return self.idf.get(term, self.unseen_idf)

    def weigh(self, foreign: list[dict[str, float]]) -> Query:
        """A translation's terms with their weights (their best translation's), once per text."""
        return Query(
            [
                (options, max(self.weights.get(term, self._weight(term)) for term in options))
                for options in foreign
            ]
        )

    def coverage(self, doc: int, query: Query) -> float:
        """How well English text DOC and a translation's weighed terms cover each other (0-1).

        The IDF-weighted share of the English terms that some foreign term translates to,
        times the share of the foreign terms (weighted by their best translation's IDF) that
        translate to some English term: a short text inside a long one scores low.
        """
        english = self.terms[doc]
        if not english or not query.items:
            return 0.0
        # Only the English terms the translation can reach count, in the order it reaches
        # them (so the sums add in one order, whatever the set's).
        common = sorted(english & query.reachable, key=query.first.__getitem__)
        # A foreign term's credit is the weight of the translation it found, relative to its
        # best one: a weak, chance co-occurrence covers little.
        credit: dict[int, float] = {}
        for term in common:
            for item, share in query.reach[term]:
                if share > credit.get(item, 0.0):
                    credit[item] = share
        foreign_hit = sum(query.items[item][1] * credit[item] for item in sorted(credit))
        optional = self.optional[doc]
        english_total = self.required[doc] + sum(
            self.weights[term] for term in common if term in optional
        )
        english_hit = sum(self.weights[term] * query.best[term] for term in common)
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

    def scores(self, text: str, lang: str, lexicon: Lexicon) -> NDArray[np.float64]:
        """Cosine of TEXT (in LANG, translated through the lexicon) with every English text."""
        scores: NDArray[np.float64] = self.scores_many([_translated_bag(text, lang, lexicon)])[0]
        return scores

    def scores_many(self, bags: Sequence[Mapping[str, float]]) -> NDArray[np.float64]:
        """Cosine of each translated bag with every English text: one row per bag.

        One bincount for the whole batch; each text's sums add its terms in the bag's order,
        as scores() of one text always did, so a batch scores as texts one by one do.
        """
        postings = self.arrays().postings
        rows: list[int] = []
        terms: list[int] = []
        scales: list[float] = []
        for row, bag in enumerate(bags):
            weights = {t: w * self.idf.get(t, self.unseen_idf) for t, w in bag.items()}
            norm = math.sqrt(sum(w * w for w in weights.values()))
            if norm == 0:
                continue
            for term, weight in weights.items():
                found = postings.get(term)
                if found is not None:
                    rows.append(row)
                    terms.append(found)
                    scales.append(weight / norm)
        arrays = self.arrays()
        query = sparse.csr_array(
            (
                np.asarray(scales, dtype=np.float64),
                np.asarray(terms, dtype=np.int64),
                np.searchsorted(np.asarray(rows, dtype=np.int64), np.arange(len(bags) + 1)),
            ),
            shape=(len(bags), len(postings)),
        )
        # Each product adds a row's terms in the bag's order (its indices are left unsorted).
        product = query @ arrays.matrix
        return np.asarray(product.toarray(), dtype=np.float64)

    def arrays(self) -> _Arrays:
        """The index as arrays for coverage_many(), built once."""
        if self._arrays is None:
            names = sorted(self.weights)
            vocabulary = {term: n for n, term in enumerate(names)}
            keys: list[int] = []
            optional: list[bool] = []
            for doc, (terms, names_of_doc) in enumerate(
                zip(self.terms, self.optional, strict=True)
            ):
                ids = sorted(vocabulary[term] for term in terms)
                keys += [doc * len(names) + i for i in ids]
                optional += [names[i] in names_of_doc for i in ids]
            terms_of = list(self.postings)
            lengths = [len(self.postings[term][0]) for term in terms_of]
            matrix = sparse.csr_array(
                (
                    np.concatenate([np.zeros(0), *(self.postings[t][1] for t in terms_of)]),
                    np.concatenate(
                        [np.zeros(0, np.int64), *(self.postings[t][0] for t in terms_of)]
                    ),
                    np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                ),
                shape=(len(terms_of), len(self.hashes)),
            )
            self._arrays = _Arrays(
                {term: n for n, term in enumerate(terms_of)},
                matrix,
                vocabulary,
                np.asarray([self.weights[term] for term in names], dtype=np.float64),
                np.asarray(keys, dtype=np.int64),
                np.asarray(optional, dtype=np.bool_),
                np.asarray(self.required, dtype=np.float64),
                np.asarray([not terms for terms in self.terms], dtype=np.bool_),
            )
        return self._arrays

    def coverage_many(
        self, queries: Sequence[Query], pair_query: NDArray[np.int64], pair_doc: NDArray[np.int64]
    ) -> NDArray[np.float64]:
        """coverage(pair_doc[k], queries[pair_query[k]]) of every pair k, in one pass.

        The same sums in the same order as coverage() (so the same floats): each English
        term the translation reaches, in the order it reaches them; each foreign term's
        best credit, in item order.
        """
        arrays = self.arrays()
        packed = [query.packed(arrays.vocabulary) for query in queries]
        pairs = len(pair_query)
        docs = pair_doc.astype(np.int64) * len(arrays.vocabulary)
        foreign_hit = _foreign_hits(packed, pair_query, docs, arrays)
        terms, best, owner = _rows([(p.reach_term, p.reach_best) for p in packed], pair_query)
        found, at = _member(docs[owner] + terms, arrays.keys)
        weight = arrays.weights[terms]
        english_hit = np.bincount(owner, weights=weight * best * found, minlength=pairs)
        named = found & arrays.optional[at] if len(at) else found
        english_total = arrays.required[pair_doc] + np.bincount(
            owner, weights=weight * named, minlength=pairs
        )
        total = np.asarray([p.total for p in packed], dtype=np.float64)[pair_query]
        valid = ~arrays.empty[pair_doc] & (total > 0) & (english_total > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.sqrt((english_hit / english_total) * (foreign_hit / total))
        return np.where(valid, scores, 0.0)


class _Arrays(NamedTuple):
    """An index as arrays: term ids, which text holds which term (sorted keys), weights."""

    # The postings (cosine): each term's texts and values, flat, by term id.
    postings: dict[str, int]
    matrix: sparse.csr_array
    vocabulary: dict[str, int]
    weights: NDArray[np.float64]
    # doc * len(vocabulary) + term id of each term a text holds, sorted; whether the term
    # is one of its optional ones (names); each text's required total; texts with no term.
    keys: NDArray[np.int64]
    optional: NDArray[np.bool_]
    required: NDArray[np.float64]
    empty: NDArray[np.bool_]


class Packed(NamedTuple):
    """A Query as arrays of term ids (terms no English text holds left out)."""

    total: float
    item_weight: NDArray[np.float64]
    # One row per (foreign term, English term it may stand for), items in order.
    option_item: NDArray[np.int64]
    option_term: NDArray[np.int64]
    option_share: NDArray[np.float64]
    # The English terms the translation reaches, in the order it reaches them; best share.
    reach_term: NDArray[np.int64]
    reach_best: NDArray[np.float64]


def _rows(
    parts: Sequence[tuple[NDArray[np.int64], NDArray[np.float64]]], pair_query: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Each pair's copy of its query's rows: (ids, values, pair of each row)."""
    lengths = np.asarray([len(ids) for ids, _ in parts], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    ids = np.concatenate([ids for ids, _ in parts]) if parts else np.zeros(0, np.int64)
    values = np.concatenate([v for _, v in parts]) if parts else np.zeros(0)
    counts = lengths[pair_query]
    owner = np.repeat(np.arange(len(pair_query), dtype=np.int64), counts)
    before = np.cumsum(counts) - counts
    rows = np.repeat(starts[pair_query] - before, counts) + np.arange(counts.sum())
    return ids[rows].astype(np.int64), values[rows], owner


def _member(
    keys: NDArray[np.int64], held: NDArray[np.int64]
) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """Whether each key is in HELD (sorted), and where."""
    if not len(held):
        return np.zeros(len(keys), dtype=np.bool_), np.zeros(0, dtype=np.int64)
    at = np.minimum(np.searchsorted(held, keys), len(held) - 1)
    return held[at] == keys, at


def _foreign_hits(
    packed: Sequence[Packed],
    pair_query: NDArray[np.int64],
    docs: NDArray[np.int64],
    arrays: _Arrays,
) -> NDArray[np.float64]:
    """Each pair's foreign weight covered: items' weights times their best credit, summed."""
    pairs = len(pair_query)
    offsets = np.cumsum([0] + [len(p.item_weight) for p in packed[:-1]]).astype(np.int64)
    items, shares, owner = _rows(
        [
            (p.option_item + offset, p.option_share)
            for p, offset in zip(packed, offsets, strict=True)
        ],
        pair_query,
    )
    terms, _, _ = _rows([(p.option_term, p.option_share) for p in packed], pair_query)
    if not len(items):
        return np.zeros(pairs)
    found, _ = _member(docs[owner] + terms, arrays.keys)
    change = np.ones(len(items), dtype=np.bool_)
    change[1:] = (owner[1:] != owner[:-1]) | (items[1:] != items[:-1])
    starts = np.flatnonzero(change)
    credit = np.maximum.reduceat(shares * found, starts)
    weights = np.concatenate([p.item_weight for p in packed])[items[starts]]
    hits = np.bincount(owner[starts], weights=weights * credit, minlength=pairs)
    return np.asarray(hits, dtype=np.float64)


class Query:
    """A translation's weighed terms, and for each English term the terms that reach it.

    ITEMS are (options, weight): the English terms a foreign term may stand for (with
    their share, best = 1) and its weight. Indexed once per text, so that scoring a
    candidate walks only the English terms it shares with the translation.
    """

    __slots__ = ("best", "first", "items", "reach", "reachable", "total")

    def __init__(self, items: list[tuple[dict[str, float], float]]) -> None:
        self.items = items
        self.total = sum(weight for _, weight in items)
        self.reach: dict[str, list[tuple[int, float]]] = {}
        self.best: dict[str, float] = {}
        for item, (options, _) in enumerate(items):
            for term, share in options.items():
                self.reach.setdefault(term, []).append((item, share))
                self.best[term] = max(self.best.get(term, 0.0), share)
        self.first = {term: n for n, term in enumerate(self.reach)}
        self.reachable = frozenset(self.reach)

    def packed(self, vocabulary: Mapping[str, int]) -> Packed:
        """The query as arrays of VOCABULARY's term ids (EnglishIndex.coverage_many)."""
        option_rows = [
            (item, vocabulary[term], share)
            for item, (options, _) in enumerate(self.items)
            for term, share in options.items()
            if term in vocabulary
        ]
        reached = [(vocabulary[t], self.best[t]) for t in self.reach if t in vocabulary]
        items, terms, shares = zip(*option_rows, strict=True) if option_rows else ((), (), ())
        reach_terms, best = zip(*reached, strict=True) if reached else ((), ())
        return Packed(
            self.total,
            np.asarray([weight for _, weight in self.items], dtype=np.float64),
            np.asarray(items, dtype=np.int64),
            np.asarray(terms, dtype=np.int64),
            np.asarray(shares, dtype=np.float64),
            np.asarray(reach_terms, dtype=np.int64),
            np.asarray(best, dtype=np.float64),
        )


def _english_bag(text: str) -> Counter[str]:
    prepared = prepare(text)
    return Counter(words(prepared, "en") + anchors(prepared, "en"))


def _translated_bag(text: str, lang: str, lexicon: Lexicon) -> dict[str, float]:
    table = lexicon.get(lang, {})
    word_features, anchor_features = features(text, lang)
    bag: dict[str, float] = defaultdict(float)
    for feature, count in Counter(word_features).items():
        for english, weight in table.get(feature, ()):
            bag[english] += count * weight
    for anchor in anchor_features:
        bag[anchor] += 1.0
    return bag


def _foreign_terms(text: str, lang: str, lexicon: Lexicon) -> list[dict[str, float]]:
    """Each distinct foreign feature of TEXT: the English terms it may stand for, best = 1."""
    table = lexicon.get(lang, {})
    word_features, anchor_features = features(text, lang)
    found = [
        {e: w / table[f][0][1] for e, w in table[f]}
        for f in sorted(set(word_features))
        if f in table
    ]
    return found + [{anchor: 1.0} for anchor in sorted(set(anchor_features))]


class Ranking(NamedTuple):
    """A translation's best English candidates (index positions, best first), and more.

    Only numbers: what travels back from a worker, and what a run holds for each text.
    """

    ranked: tuple[tuple[int, float], ...]
    # The translation's sentences and length in English (features.shape).
    shape: tuple[int, float] = (1, 0.0)
    # Coverage of the candidates asked for beside the shortlist (rank_batch's OWN) that it
    # left out: decide() reads a card's own texts' scores here.
    own: tuple[tuple[int, float], ...] = ()


_NOTHING = Ranking(())


def rank(
    text: str, lang: str, index: EnglishIndex, lexicon: Lexicon, own: Sequence[int] = ()
) -> Ranking:
    """Shortlist by cosine over the inverted index, then order by coverage."""
    return rank_batch([(text, lang, own)], index, lexicon)[0]


def rank_batch(
    texts: Sequence[tuple[str, str, Sequence[int]]], index: EnglishIndex, lexicon: Lexicon
) -> list[Ranking]:
    """rank() of each (text, lang, own) of TEXTS, many at once; OWN are scored as well.

    The cosines of a batch are one matrix, the shortlists one argpartition, and every
    (translation, candidate) coverage one pass of coverage_many(): the same rankings as
    one text at a time, without a Python loop per candidate.
    """
    if len(index) == 0:
        return [_NOTHING for _ in texts]
    step = max(1, min(len(texts), _BATCH_CELLS // len(index)))
    found: list[Ranking] = []
    for start in range(0, len(texts), step):
        found += _rank_batch(texts[start : start + step], index, lexicon)
    return found


def _rank_batch(
    texts: Sequence[tuple[str, str, Sequence[int]]], index: EnglishIndex, lexicon: Lexicon
) -> list[Ranking]:
    known = [n for n, (_, lang, _) in enumerate(texts) if lang in lexicon]
    found = [_NOTHING for _ in texts]
    if not known:
        return found
    cosine = index.scores_many([_translated_bag(*texts[n][:2], lexicon) for n in known])
    count = min(SHORTLIST, cosine.shape[1])
    shortlists = np.argpartition(-cosine, count - 1, axis=1)[:, :count]
    queries = [index.weigh(_foreign_terms(*texts[n][:2], lexicon)) for n in known]
    candidates = []
    for row, n in enumerate(known):
        listed = shortlists[row].tolist()
        candidates.append((listed, sorted(set(texts[n][2]) - set(listed))))
    pair_query = np.asarray(
        [row for row, (a, b) in enumerate(candidates) for _ in range(len(a) + len(b))],
        dtype=np.int64,
    )
    pair_doc = np.asarray([i for a, b in candidates for i in (*a, *b)], dtype=np.int64)
    scores = index.coverage_many(queries, pair_query, pair_doc).tolist()
    at = 0
    for row, n in enumerate(known):
        listed, own = candidates[row]
        mine = scores[at : at + len(listed) + len(own)]
        at += len(listed) + len(own)
        text, lang, _ = texts[n]
        found[n] = Ranking(
            tuple(_ordered(zip(listed, mine[: len(listed)], strict=True), index)),
            shape(text, lang),
            tuple(zip(own, mine[len(listed) :], strict=True)),
        )
    return found


def rank_many(
    texts: Sequence[tuple[str, str, Sequence[int]]],
    index: EnglishIndex,
    lexicon: Lexicon,
    workers: int = 1,
) -> list[Ranking]:
    """rank() of each (text, lang, own) of TEXTS, in order; on WORKERS processes when it pays.

    The workers are forked, so they share the index and lexicon as they are; where fork is
    not available (or for fewer than PARALLEL_MIN texts) the texts are ranked here. The
    rankings are the same either way.
    """
    if workers <= 1 or len(texts) < PARALLEL_MIN or "fork" not in mp.get_all_start_methods():
        return rank_batch(texts, index, lexicon)
    chunks = [texts[i : i + _CHUNK] for i in range(0, len(texts), _CHUNK)]
    global _SHARED  # noqa: PLW0603 - what the forked workers inherit
    _SHARED = (index, lexicon)
    try:
        with ProcessPoolExecutor(min(workers, len(chunks)), mp.get_context("fork")) as pool:
            return [ranking for part in pool.map(_rank_chunk, chunks) for ranking in part]
    finally:
        _SHARED = None


def _rank_chunk(texts: Sequence[tuple[str, str, Sequence[int]]]) -> list[Ranking]:
    if _SHARED is None:
        msg = "_rank_chunk runs in a worker forked by rank_many()"
        raise RuntimeError(msg)
    index, lexicon = _SHARED
    return rank_batch(texts, index, lexicon)


def _ordered(scored: Iterable[tuple[int, float]], index: EnglishIndex) -> list[tuple[int, float]]:
    # Best first; equal scores in hash order, so the answer never depends on input order.
    return sorted(scored, key=lambda item: (-item[1], index.hashes[item[0]]))


def decide(
    ranking: Ranking,
    index: EnglishIndex,
    card_originals: Collection[str],
    *,
    min_score: float = MIN_SCORE,
    min_margin: float = MIN_MARGIN,
    text: str | None = None,
) -> Link:
    """The link a ranking supports, with the card's own English texts (CARD_ORIGINALS) in it.

    The card's own texts are always scored, shortlisted or not (RANKING is rank()'s given
    their positions); a version of the winner that
    the card holds is preferred as the original. The method says where the original was
    found: among the card's own English rulings ("card") or the whole dataset ("dataset");
    "unsure" when there is no link. TEXT, the translation, lets its marks (features.marks)
    weigh a card's own winner's lead.
    """
    if not ranking.ranked:
        return Link(None, 0.0, 0.0, "no-candidates")
    own = [index.position[h] for h in card_originals if h in index.position]
    ranked = _with_own(ranking, index, own)
    best, score = ranked[0]
    versions, near = similar_texts(best, [i for i, _ in ranked[1:]], index)

    def similar(i: int) -> tuple[set[int], set[int]]:
        return similar_texts(i, [j for j, _ in ranked if j != i], index)

    rival = next((value for i, value in ranked[1:] if i not in versions), 0.0)
    own_set = set(own)
    if text is not None and own_set:
        chosen = choose(
            ranked, index, own=own_set, shape=ranking.shape, text=text, similar=similar,
            min_margin=min_margin,
        )  # fmt: skip
        if chosen is not None:
            return Link(*chosen[:3], "card", chosen.versions)
    if own_set & (versions | {best}):
        # The winner is the card's own (or a version of it). The form of a text survives
        # translation where its words may not (as many sentences, a like length): the lead
        # is measured on scores weighed by it, so a text of another card that the words
        # find close but that has another form does not make a right link unsure when
        # more English is read.
        def formed(i: int, value: float) -> float:
            return value * shape_similarity(ranking.shape, index.shape(i))

        formed_rival = max(
            (
                formed(i, value)
                for i, value in ranked
                if i not in versions and i != best and (i in own_set or i not in near)
            ),
            default=0.0,
        )
        rival = score - (formed(best, score) - formed_rival)
    original = index.hashes[best]
    if original not in card_originals:
        own_versions = [i for i, _ in ranked if i in versions and index.hashes[i] in card_originals]
        if own_versions:
            original = index.hashes[own_versions[0]]
    score, margin = round(score, 4), round(score - rival, 4)
    if score < min_score or margin < min_margin:
        return Link(None, score, margin, "unsure")
    method = "card" if original in card_originals else "dataset"
    others = tuple(index.hashes[i] for i, _ in ranked if i in versions or i == best)
    return Link(original, score, margin, method, (original, *sorted(set(others) - {original})))


def _with_own(ranking: Ranking, index: EnglishIndex, own: Sequence[int]) -> list[tuple[int, float]]:
    """The ranking's shortlist with the card's own texts it left out, best first."""
    unseen = sorted(set(own) - {i for i, _ in ranking.ranked})
    scored = dict(ranking.own)
    if not set(unseen) <= scored.keys():
        msg = "decide() needs a ranking that scored the card's own texts (rank(…, own))"
        raise ValueError(msg)
    return _ordered([*ranking.ranked, *((i, scored[i]) for i in unseen)], index)


def link(
    text: str,
    lang: str,
    card_originals: Collection[str],
    index: EnglishIndex,
    lexicon: Lexicon | None = None,
    *,
    min_score: float = MIN_SCORE,
    min_margin: float = MIN_MARGIN,
) -> Link:
    """The English text of INDEX that TEXT (in LANG) translates, or no link when unsure.

    CARD_ORIGINALS are the hashes of the card's own English rulings (every version); the
    rest of the index is the fallback (see decide()).
    """
    lexicon = shipped() if lexicon is None else lexicon
    if lang not in lexicon:
        return Link(None, 0.0, 0.0, "no-lexicon")
    own = sorted(index.position[h] for h in card_originals if h in index.position)
    ranking = rank(text, lang, index, lexicon, own)
    return decide(
        ranking, index, card_originals, min_score=min_score, min_margin=min_margin, text=text
    )
