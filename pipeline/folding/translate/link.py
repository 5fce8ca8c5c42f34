"""Linking a translated ruling to the English ruling it translates: an index and a decision."""

from __future__ import annotations

import math
import multiprocessing as mp
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from rapidfuzz import fuzz

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
# Two English texts this similar (rapidfuzz ratio of the folded texts) are taken as versions
# of one ruling ("… not when it's exiled" / "… not when the card is exiled"): either is the
# right original, so the margin is measured against the best candidate outside them.
VERSION_SIMILARITY = 80.0
# How many of the best-scoring candidates are compared for versions and the margin.
SHORTLIST = 20
# Fewer texts than this are ranked in the calling process: forking costs more than it saves.
PARALLEL_MIN = 2_000
# Texts a worker ranks per task.
_CHUNK = 256
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
        self.required = [
            sum(self.weights[term] for term in terms - optional)
            for terms, optional in zip(self.terms, self.optional, strict=True)
        ]
        self._folded: dict[int, str] = {}
        self._shapes: dict[int, tuple[int, float]] = {}

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
        query = _translated_bag(text, lang, lexicon)
        weights = {t: w * self.idf.get(t, self.unseen_idf) for t, w in query.items()}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        hits = [(self.postings[t], w) for t, w in weights.items() if t in self.postings]
        if not hits or norm == 0:
            return np.zeros(len(self.hashes))
        docs = np.concatenate([posting[0] for posting, _ in hits])
        values = np.concatenate([posting[1] * (w / norm) for posting, w in hits])
        scores: NDArray[np.float64] = np.bincount(
            docs, weights=values, minlength=len(self.hashes)
        ).astype(np.float64)
        return scores


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
    """A translation's best English candidates (index positions, best first) and its terms.

    TERMS are Query.items: what travels back from a worker (the Query is rebuilt where a
    card's own texts must be scored as well).
    """

    ranked: tuple[tuple[int, float], ...]
    terms: tuple[tuple[dict[str, float], float], ...]
    # The translation's sentences and length in English (features.shape).
    shape: tuple[int, float] = (1, 0.0)


def rank(text: str, lang: str, index: EnglishIndex, lexicon: Lexicon) -> Ranking:
    """Shortlist by cosine over the inverted index, then order by coverage."""
    if len(index) == 0 or lang not in lexicon:
        return Ranking((), ())
    cosine = index.scores(text, lang, lexicon)
    count = min(SHORTLIST, len(cosine))
    shortlist = np.argpartition(-cosine, count - 1)[:count].tolist()
    terms = index.weigh(_foreign_terms(text, lang, lexicon))
    scored = [(i, index.coverage(i, terms)) for i in shortlist]
    return Ranking(tuple(_ordered(scored, index)), tuple(terms.items), shape(text, lang))


def rank_many(
    texts: Sequence[tuple[str, str]], index: EnglishIndex, lexicon: Lexicon, workers: int = 1
) -> list[Ranking]:
    """rank() of each (text, lang) of TEXTS, in order; on WORKERS processes when it pays.

    The workers are forked, so they share the index and lexicon as they are; where fork is
    not available (or for fewer than PARALLEL_MIN texts) the texts are ranked here. The
    rankings are the same either way.
    """
    if workers <= 1 or len(texts) < PARALLEL_MIN or "fork" not in mp.get_all_start_methods():
        return [rank(text, lang, index, lexicon) for text, lang in texts]
    chunks = [texts[i : i + _CHUNK] for i in range(0, len(texts), _CHUNK)]
    global _SHARED  # noqa: PLW0603 - what the forked workers inherit
    _SHARED = (index, lexicon)
    try:
        with ProcessPoolExecutor(min(workers, len(chunks)), mp.get_context("fork")) as pool:
            return [ranking for part in pool.map(_rank_chunk, chunks) for ranking in part]
    finally:
        _SHARED = None


def _rank_chunk(texts: Sequence[tuple[str, str]]) -> list[Ranking]:
    if _SHARED is None:
        msg = "_rank_chunk runs in a worker forked by rank_many()"
        raise RuntimeError(msg)
    index, lexicon = _SHARED
    return [rank(text, lang, index, lexicon) for text, lang in texts]


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
) -> Link:
    """The link a ranking supports, with the card's own English texts (CARD_ORIGINALS) in it.

    The card's own texts are always scored, shortlisted or not; a version of the winner that
    the card holds is preferred as the original. The method says where the original was
    found: among the card's own English rulings ("card") or the whole dataset ("dataset");
    "unsure" when there is no link.
    """
    if not ranking.ranked:
        return Link(None, 0.0, 0.0, "no-candidates")
    seen = {i for i, _ in ranking.ranked}
    own = [index.position[h] for h in card_originals if h in index.position]
    unseen = sorted(set(own) - seen)
    extra: list[tuple[int, float]] = []
    if unseen:  # the card's own texts outside the shortlist are scored as well
        terms = Query(list(ranking.terms))
        extra = [(i, index.coverage(i, terms)) for i in unseen]
    ranked = _ordered([*ranking.ranked, *extra], index)
    best, score = ranked[0]
    versions = _versions(best, ranked, index)
    rival = next((value for i, value in ranked[1:] if i not in versions), 0.0)
    if set(own) & (versions | {best}):
        # The winner is the card's own (or a version of it). The form of a text survives
        # translation where its words may not (as many sentences, a like length): the lead
        # is measured on scores weighed by it, so a text of another card that the words
        # find close but that has another form does not make a right link unsure when
        # more English is read.
        def formed(i: int, value: float) -> float:
            return value * shape_similarity(ranking.shape, index.shape(i))

        formed_rival = max(
            (formed(i, value) for i, value in ranked if i not in versions and i != best),
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


def _versions(best: int, ranked: Sequence[tuple[int, float]], index: EnglishIndex) -> set[int]:
    """The candidates of RANKED (after the first) that are versions of BEST's text."""
    best_text = index.folded(best)
    return {
        i for i, _ in ranked[1:] if fuzz.ratio(best_text, index.folded(i)) >= VERSION_SIMILARITY
    }


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
    ranking = rank(text, lang, index, lexicon)
    return decide(ranking, index, card_originals, min_score=min_score, min_margin=min_margin)
