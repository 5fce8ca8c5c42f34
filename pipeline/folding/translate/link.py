"""Linking a translated ruling to the English ruling it translates: ranking and a decision."""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from pipeline import interrupts
from pipeline.folding.translate import decisions
from pipeline.folding.translate.card import SURE_SCORE, choose, similar_texts, version_weights
from pipeline.folding.translate.features import (
    marks,
    printed_names,
    prints_names,
    shape,
    shape_similarity,
)
from pipeline.folding.translate.lexicon import Lexicon, shipped
from pipeline.folding.translate.points import tables as _point_tables
from pipeline.folding.translate.points import traits as batch_traits
from pipeline.folding.translate.terms import expand
from pipeline.folding.translate.units import Units, units_of

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Sequence

    from numpy.typing import NDArray

    from pipeline.folding.translate.batch import Traits
    from pipeline.folding.translate.features import Marks
    from pipeline.folding.translate.index import EnglishIndex, Queries

# A link needs a coverage score of at least MIN_SCORE and a lead of MIN_MARGIN over the best
# candidate that is not a version of it. Tuned on the dev sets (benchmarks/translate_eval.py
# --sweep) and on rulings: card texts score higher than rulings (whose words the card texts
# the lexicon learned from use less), so the margin carries most of the decision.
MIN_SCORE = 0.45
MIN_MARGIN = 0.12
# A version of the winner scoring this much less is one the translation's words tell from
# it: not left to the dates to choose (benchmarks/translate_dumps.py, the 110,387 real texts:
# 13,515 links right and 1,088 wrong without it, 14,283 and 320 with it; same margins).
ALIKE_GAP = 0.05
# How many of the best-scoring candidates are compared for versions and the margin.
SHORTLIST = 20
# Fewer texts than this are ranked in the calling process: forking costs more than it saves.
PARALLEL_MIN = 2_000
# Texts a worker ranks per task, at most: a task's features are taken at once (batch.traits),
# a fixed cost per language that 256 texts a task paid 215 times on the 60,892 real card
# texts (14.4 s of CPU where 2,048 took 12.4 s). Fewer when the tasks would not give each
# worker four.
_CHUNK = 2_048
# Scores one batch of translations holds against every English text (rank_batch): the
# batch is as many translations as keep it under this, so memory stays bounded.
_BATCH_CELLS = 1 << 22
# Texts whose shortlists _link_batch takes at once, at most (those of whole steps, unless a
# step alone ranks more): a product of the index with their queries costs per entry of the
# index more than per query, up to where their columns leave the cache. The 7,555
# translations among 101,546 distinct English texts (a step ranks about 8 of its 41):
# their shortlists took 5.0 s a step at a time, 2.3 s at 64, 1.7 at 128, 1.55 at 256, 1.45
# at 512; the 22,078 dumps (a step of 248 ranks about 233) took 1.2 times as long at 466.
_RANKED = 256
# The index and lexicon link_many() hands to its forked workers.
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


class Ranking(NamedTuple):
    """A translation's best English candidates (index positions, best first), and more.

    Only numbers: what decide() needs of a text's ranking, made in the worker that decides.
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
    """Shortlist by cosine over the index, then order by coverage."""
    return rank_batch([(text, lang, own)], index, lexicon)[0]


def rank_batch(
    texts: Sequence[tuple[str, str, Sequence[int]]], index: EnglishIndex, lexicon: Lexicon
) -> list[Ranking]:
    """rank() of each (text, lang, own) of TEXTS, many at once; OWN are scored as well.

    The cosines of a batch are one matrix, the shortlists one pass over it, and every
    (translation, candidate) coverage one pass of coverage_many(): the same rankings as
    one text at a time, without a Python loop per candidate.
    """
    if len(index) == 0:
        return [_NOTHING for _ in texts]
    found: list[Ranking] = []
    for start, end in _steps(len(texts), index):
        found += _rank_batch(texts[start:end], index, lexicon)
    return found


def _steps(count: int, index: EnglishIndex) -> list[tuple[int, int]]:
    """Batches of COUNT texts whose matrices (texts or terms by queries) hold _BATCH_CELLS."""
    step = max(1, min(count, _BATCH_CELLS // max(1, len(index), len(index.vocabulary))))
    return [(start, min(count, start + step)) for start in range(0, count, step)]


def _rank_batch(
    texts: Sequence[tuple[str, str, Sequence[int]]], index: EnglishIndex, lexicon: Lexicon
) -> list[Ranking]:
    known = [n for n, (_, lang, _) in enumerate(texts) if lang in lexicon]
    found = [_NOTHING for _ in texts]
    if not known:
        return found
    queries = index.queries([texts[n][:2] for n in known], lexicon)
    asked = [texts[n] for n in known]
    shapes = [shape(text, lang) for text, lang, _ in asked]
    rankings = _rankings(queries, list(range(len(known))), asked, shapes, index)
    for n, ranking in zip(known, rankings, strict=True):
        found[n] = ranking
    return found


def _rankings(
    queries: Queries,
    rows: Sequence[int],
    texts: Sequence[tuple[str, str, Sequence[int]]],
    shapes: Sequence[tuple[int, float]],
    index: EnglishIndex,
) -> list[Ranking]:
    """The rankings of the queries at ROWS of QUERIES, whose (text, lang, own) are TEXTS.

    SHAPES are the texts' features.shape.
    """
    if not rows:
        return []
    shortlists = index.shortlists(queries, SHORTLIST, rows)
    owns = [
        sorted(set(own) - set(listed))
        for listed, (_, _, own) in zip(shortlists, texts, strict=True)
    ]
    listed_counts = np.fromiter(map(len, shortlists), np.int64, len(shortlists))
    own_counts = np.fromiter(map(len, owns), np.int64, len(owns))
    counts = np.stack([listed_counts, own_counts], axis=1).reshape(-1)
    pair_query = np.repeat(np.repeat(np.asarray(rows, dtype=np.int64), 2), counts)
    pair_doc = np.fromiter(
        chain.from_iterable(chain.from_iterable(zip(shortlists, owns, strict=True))),
        np.int64,
        int(counts.sum()),
    )
    scores = index.coverage_many(queries, pair_query, pair_doc)
    # Each shortlist best first, equal scores by position (_ordered's order), in one sort
    # of the batch; the own texts it left out stay in position order.
    part = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    order = np.lexsort((pair_doc, np.where(part % 2 == 0, -scores, 0.0), part))
    docs, values = pair_doc[order].tolist(), scores[order].tolist()
    found = []
    at = 0
    for listed, own, form in zip(listed_counts.tolist(), own_counts.tolist(), shapes, strict=True):
        middle, end = at + listed, at + listed + own
        found.append(
            Ranking(
                tuple(zip(docs[at:middle], values[at:middle], strict=True)),
                form,
                tuple(zip(docs[middle:end], values[middle:end], strict=True)),
            )
        )
        at = end
    return found


def link_many(batch: Units, index: EnglishIndex, lexicon: Lexicon, workers: int = 1) -> list[Link]:
    """The link of each unit of BATCH (each translation on each of its cards), in order.

    Each text is ranked once, with the own texts of all its cards scored, and decided
    once per card (decide()), on WORKERS processes when it pays: the workers are forked,
    so they share the index and lexicon as they are, and only slices of the batch's
    columns go to them and the links come back. Where fork is not available (or for
    fewer than PARALLEL_MIN texts) the texts are linked here. The links are the same
    either way.
    """
    count = len(batch.texts)
    if workers <= 1 or count < PARALLEL_MIN or "fork" not in mp.get_all_start_methods():
        return _link_batch(batch, index, lexicon)
    size = max(1, min(_CHUNK, -(-count // (4 * workers))))
    chunks = [batch.slice(i, min(count, i + size)) for i in range(0, count, size)]
    global _SHARED  # noqa: PLW0603 - what the forked workers inherit
    _SHARED = (index, lexicon)
    _point_tables()  # made once, before the fork, for every worker
    try:
        with ProcessPoolExecutor(
            min(workers, len(chunks)), mp.get_context("fork"), initializer=interrupts.in_worker
        ) as pool:
            return [link for part in pool.map(_link_chunk, chunks) for link in part]
    finally:
        _SHARED = None


def _link_batch(
    batch: Units,
    index: EnglishIndex,
    lexicon: Lexicon,
    *,
    min_score: float = MIN_SCORE,
    min_margin: float = MIN_MARGIN,
) -> list[Link]:
    """The link of each unit of BATCH, step by step (_link_step).

    The features of all its texts are taken at once (points.traits), and their word
    features looked up in the lexicon once (EnglishIndex.ranked); each step takes its rows.
    The texts a step leaves to rank wait for those of the next steps (_Later): their
    shortlists are taken up to _RANKED at once.
    """
    langs = batch.langs
    featured = index.ranked(batch_traits(batch.texts, langs), langs, lexicon)
    later = _Later(min_score=min_score, min_margin=min_margin)
    made: list[list[Link | None]] = [
        _link_step(
            batch.slice(start, end),
            featured.rows(start, end),
            index,
            lexicon,
            min_score=min_score,
            min_margin=min_margin,
            later=later,
        )
        for start, end in _steps(len(batch.texts), index)
    ]
    later.rank()
    # A text of a language without a lexicon, or with no English text to link to.
    nothing = Link(None, 0.0, 0.0, "unsure" if len(index) else "no-candidates")
    return [link or nothing for links in made for link in links]


def _link_step(
    batch: Units,
    featured: Traits,
    index: EnglishIndex,
    lexicon: Lexicon,
    *,
    min_score: float,  # noqa: ARG001 - LATER's; the signature of reference.link_step, put in its place
    min_margin: float,
    later: _Later,
) -> list[Link | None]:
    """The links of the units of BATCH, its texts mapped through the lexicon once.

    FEATURED are their features (batch.traits, with their lexicon ranks). A translation
    that the card rule (card.choose) links to one of its card's own English texts among
    those alone, at a score of SURE_SCORE or more, is linked without ranking it among
    every English text (for each of its cards); the others are left to LATER, whose rank()
    ranks them and decides as decide() defines it, filling in their links. Both decisions
    are made for many texts at once (pipeline.folding.translate.decisions). A link left
    None has none to make: a language without a lexicon, or no English text.
    """
    langs = batch.langs
    known = [n for n, lang in enumerate(langs) if lang in lexicon] if len(index) else []
    if not known:
        return [None] * batch.size
    units = _Units(batch, index)
    queries = index.mapped_traits(featured, langs, lexicon)
    step = _Step(batch, units, queries, featured, index, [None] * units.size)
    held = np.zeros(len(langs), dtype=np.bool_)
    held[known] = True
    sure = _sure_links(step, held & units.every_card_owns, min_margin=min_margin)
    later.add(step, np.flatnonzero(held & ~sure))
    return step.made


class _Later:
    """Texts of steps in turn left to rank, ranked up to _RANKED at once (rank()).

    Their shortlists are one product of the index with all their queries
    (EnglishIndex.shortlists), a walk of the index for them all; then each step's texts
    are decided (_ranked_links).
    """

    def __init__(self, *, min_score: float, min_margin: float) -> None:
        self._waiting: list[tuple[_Step, NDArray[np.int64]]] = []
        self._count = 0
        self._min_score = min_score
        self._min_margin = min_margin

    def add(self, step: _Step, rows: NDArray[np.int64]) -> None:
        """Texts ROWS of STEP are to rank: ranked now if the next step's would pass _RANKED.

        Those waiting are ranked first if with ROWS they would be more than _RANKED: past
        it, a product's queries cost each no less, or more (the dumps': 1.2 times as much
        at 466 as at 233). And they are ranked now if the next step, ranking as many as
        this one, would pass it: this step's options are still laid out for coverage
        (coverage_many() keeps the last batch's), where ranked after the next step's sure
        links they would be laid out again (0.4 ms a step of 557 card texts).
        """
        if not len(rows):
            return
        if self._count and self._count + len(rows) > _RANKED:
            self.rank()
        self._waiting.append((step, rows))
        self._count += len(rows)
        if self._count + len(rows) > _RANKED:
            self.rank()

    def rank(self) -> None:
        """Rank and link the texts waiting."""
        waiting, self._waiting, self._count = self._waiting, [], 0
        if not waiting:
            return
        index = waiting[0][0].english
        listed = index.shortlists(
            [(step.queries, rows.tolist()) for step, rows in waiting], SHORTLIST
        )
        at = 0
        for step, rows in waiting:
            _ranked_links(
                step,
                rows,
                listed=listed[at : at + len(rows)],
                min_score=self._min_score,
                min_margin=self._min_margin,
            )
            at += len(rows)


class _Units:
    """A step's units as the decisions use them: each card's own English texts as (unit, doc)."""

    def __init__(self, batch: Units, index: EnglishIndex) -> None:
        self.size = batch.size
        self.text = batch.unit_text
        self.starts = batch.text_starts()
        # Each unit's own texts (unit, doc), units in order, docs ascending.
        self.own_unit = batch.own_unit()
        self.own_doc = batch.own_docs
        self.every_card_owns = batch.every_card_owns()
        # Each unit's card name (None where not known).
        self.names = batch.names
        self.width = max(1, len(index))

    def mine(self, rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Each text of ROWS with the own texts of all its cards, distinct: (text, doc)."""
        wanted = np.zeros(len(self.starts) - 1, dtype=np.bool_)
        wanted[rows] = True
        units = wanted[self.text[self.own_unit]]
        keys = np.unique(self.text[self.own_unit[units]] * self.width + self.own_doc[units])
        return np.divmod(keys, self.width)


class _Step(NamedTuple):
    """A batch being linked, and each of its units' links (made as they are decided)."""

    batch: Units
    units: _Units
    queries: Queries
    featured: Traits
    english: EnglishIndex
    made: list[Link | None]


def _sure_links(step: _Step, sure: NDArray[np.bool_], *, min_margin: float) -> NDArray[np.bool_]:
    """Which texts of SURE the card rule links among their cards' own texts alone.

    Each unit of those texts is chosen as card.choose() among its card's own texts; a text
    is sure when every one of its units links at a score of SURE_SCORE or more, and then
    its units' links are made.
    """
    units, index = step.units, step.english
    rows = np.flatnonzero(sure)
    if not len(rows):
        return sure
    pair_text, pair_doc = units.mine(rows)
    scores = index.coverage_many(step.queries, pair_text, pair_doc)
    keys = pair_text * units.width + pair_doc
    asked = sure[units.text[units.own_unit]]
    unit, doc = units.own_unit[asked], units.own_doc[asked]
    value = scores[np.searchsorted(keys, units.text[unit] * units.width + doc)]
    found = decisions.candidates(units.size, unit, doc, value, np.ones(len(unit), np.bool_))
    fit = decisions.fits(found, units.text, step.featured, index)
    wanted = sure[units.text]
    chosen = decisions.choose(found, fit, index, min_margin=min_margin, asked=wanted)
    verdicts = decisions.card_verdicts(chosen)
    # The card's best text alone must score SURE_SCORE, and so must the rule's winner.
    has = np.flatnonzero(np.diff(found.starts) > 0)
    top = np.zeros(units.size, dtype=np.float64)
    top[has] = found.value[found.starts[has]]
    scored = verdicts.score >= SURE_SCORE
    ok = wanted & (top >= SURE_SCORE) & chosen.linked & scored
    failed = np.bincount(units.text[~ok], minlength=len(sure))
    surely: NDArray[np.bool_] = sure & (failed == 0)
    _made(step, found, verdicts, np.flatnonzero(surely[units.text]))
    return surely


def _ranked_links(
    step: _Step,
    rows: NDArray[np.int64],
    *,
    listed: Sequence[Sequence[int]],
    min_score: float,
    min_margin: float,
) -> None:
    """Link texts ROWS ranked among every English text: decide() of each of their units.

    A unit's candidates are its text's shortlist (LISTED: SHORTLIST by cosine, each text's
    of ROWS) and its card's own texts, each scored by coverage once per text.
    """
    if not len(rows):
        return
    units, index = step.units, step.english
    width = units.width
    counts = np.fromiter(map(len, listed), np.int64, len(listed))
    list_text = np.repeat(rows, counts)
    list_doc = np.fromiter(chain.from_iterable(listed), np.int64, int(counts.sum()))
    list_keys = np.sort(list_text * width + list_doc)
    mine_text, mine_doc = units.mine(rows)
    unseen = ~_held(list_keys, mine_text * width + mine_doc)
    pair_text = np.concatenate([list_text, mine_text[unseen]])
    pair_doc = np.concatenate([list_doc, mine_doc[unseen]])
    keys = pair_text * width + pair_doc
    order = np.argsort(keys)
    keys, scores = keys[order], index.coverage_many(step.queries, pair_text, pair_doc)[order]
    # Each unit's candidates: its text's shortlist, and its own texts the shortlist lacks.
    texts = len(units.starts) - 1
    wanted = np.zeros(texts, dtype=np.bool_)
    wanted[rows] = True
    asked = np.flatnonzero(wanted[units.text])
    list_starts = np.zeros(texts + 1, dtype=np.int64)
    np.cumsum(np.bincount(list_text, minlength=texts), out=list_starts[1:])
    owner, at = expand(list_starts, units.text[asked])
    own = wanted[units.text[units.own_unit]]
    own_unit, own_doc = units.own_unit[own], units.own_doc[own]
    unlisted = ~_held(list_keys, units.text[own_unit] * width + own_doc)
    unit = np.concatenate([asked[owner], own_unit[unlisted]])
    doc = np.concatenate([list_doc[at], own_doc[unlisted]])
    # Units ascending, each one's docs ascending: the own texts' keys are sorted.
    mine = _held(units.own_unit * width + units.own_doc, unit * width + doc)
    value = scores[np.searchsorted(keys, units.text[unit] * width + doc)]
    found = decisions.candidates(units.size, unit, doc, value, mine)
    fit = decisions.fits(found, units.text, step.featured, index)
    anchors = _Anchors(step.featured)

    def named(unit: int, doc: int) -> bool:
        names = printed_names(anchors.of(int(units.text[unit])), units.names[unit])
        return prints_names(index.folded(doc), names)

    verdicts = decisions.decide(
        found, fit, index, min_score=min_score, min_margin=min_margin, named=named
    )
    _made(step, found, verdicts, asked)


def _held(known: NDArray[np.int64], keys: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Whether each of KEYS is among KNOWN (sorted)."""
    if not len(known):
        return np.zeros(len(keys), dtype=np.bool_)
    at = np.minimum(np.searchsorted(known, keys), len(known) - 1)
    found: NDArray[np.bool_] = known[at] == keys
    return found


def _made(
    step: _Step, found: decisions.Candidates, verdicts: decisions.Verdicts, asked: NDArray[np.int64]
) -> None:
    """The Links of units ASKED (step.made), from their VERDICTS among their candidates FOUND."""
    hashes = step.english.hashes
    linked = asked[verdicts.method[asked] != decisions.UNSURE]
    original = np.full(step.units.size, -1, dtype=np.int64)
    original[linked] = found.doc[verdicts.original[linked]]
    # The versions beside each original, by position (hash order).
    rows = np.flatnonzero(verdicts.versions & (found.doc != original[found.unit]))
    rows = rows[np.lexsort((found.doc[rows], found.unit[rows]))]
    versions: dict[int, list[str]] = {}
    for u, d in zip(found.unit[rows].tolist(), found.doc[rows].tolist(), strict=True):
        versions.setdefault(u, []).append(hashes[d])
    method = verdicts.method.tolist()
    score, margin, made = verdicts.score.tolist(), verdicts.margin.tolist(), step.made
    for u in asked.tolist():
        if method[u] == decisions.UNSURE:
            made[u] = Link(None, score[u], margin[u], "unsure")
        else:
            text = hashes[original[u]]
            made[u] = Link(
                text, score[u], margin[u], _METHODS[method[u]], (text, *versions.get(u, ()))
            )


_METHODS = {decisions.CARD: "card", decisions.DATASET: "dataset"}


class _Anchors:
    """A batch's anchors, text by text, taken when asked."""

    def __init__(self, featured: Traits) -> None:
        self._featured = featured

    def of(self, row: int) -> list[str]:
        """Text ROW's anchors, in order."""
        featured = self._featured
        first, last = np.searchsorted(featured.anchor_rows, [row, row + 1]).tolist()
        return [str(a) for a in featured.anchors.slice(first, last - first).to_pylist()]


def _link_chunk(batch: Units) -> list[Link]:
    if _SHARED is None:
        msg = "_link_chunk runs in a worker forked by link_many()"
        raise RuntimeError(msg)
    index, lexicon = _SHARED
    return _link_batch(batch, index, lexicon)


def _ordered(scored: Iterable[tuple[int, float]]) -> list[tuple[int, float]]:
    # Best first; equal scores in hash order, so the answer never depends on input order:
    # an index's positions are in hash order (EnglishIndex.hashes is sorted), so by
    # position, then (a stable sort) by score.
    found = sorted(scored)
    found.sort(key=itemgetter(1), reverse=True)
    return found


def decide(
    ranking: Ranking,
    index: EnglishIndex,
    card_originals: Collection[str],
    *,
    min_score: float = MIN_SCORE,
    min_margin: float = MIN_MARGIN,
    text: str | None = None,
    printed: Marks | None = None,
    names: frozenset[str] = frozenset(),
) -> Link:
    """The link a ranking supports, with the card's own English texts (CARD_ORIGINALS) in it.

    The card's own texts are always scored, shortlisted or not (RANKING is rank()'s given
    their positions); a version of the winner that
    the card holds is preferred as the original. The method says where the original was
    found: among the card's own English rulings ("card") or the whole dataset ("dataset");
    "unsure" when there is no link. TEXT, the translation, lets its marks (features.marks)
    weigh a card's own winner's lead; PRINTED, when given, are those marks. NAMES are the
    words of the card's name that the translation prints (features.printed_names): a
    winner of another card that does not print them all is no link.
    """
    if not ranking.ranked and not ranking.own:
        # No English text shares a term with it: unsure, unless there is no English text.
        return Link(None, 0.0, 0.0, "unsure" if len(index) else "no-candidates")
    own = [index.position[h] for h in card_originals if h in index.position]
    ranked = _with_own(ranking, own)
    best, score = ranked[0]
    # Each candidate's versions and near-duplicates, taken when asked: when the card rule
    # links (choose()), the winner's are asked only if it is the rule's winner too.
    found: dict[int, tuple[set[int], set[int]]] = {}

    def similar(i: int) -> tuple[set[int], set[int]]:
        if i not in found:
            found[i] = similar_texts(i, [j for j, _ in ranked if j != i], index)
        return found[i]

    if printed is None and text is not None:
        printed = marks(text)
    own_set = set(own)
    if printed is not None and own_set:
        chosen = choose(
            ranked,
            index,
            own=own_set,
            shape=ranking.shape,
            printed=printed,
            similar=similar,
            min_margin=min_margin,
        )
        if chosen is not None:
            return Link(*chosen[:3], "card", chosen.versions)
    versions, near = similar(best)
    # A version of the winner that prints other numbers or symbols than the translation
    # is another ruling to it: a rival, weaker by how much worse its marks fit.
    weight = version_weights(versions, best, printed, index)
    versions = {i for i in versions if weight(i) >= 1}
    # Only the versions the words cannot tell from the winner are left to the dates to
    # choose between: one the translation's words cover clearly less is not what it says.
    alike = {i for i, value in ranked if i in versions and value >= score - ALIKE_GAP}
    if own_set & (versions | {best}):
        # The winner is the card's own (or a version of it). The form of a text survives
        # translation where its words may not (as many sentences, a like length): the lead
        # is measured on scores weighed by it, so a text of another card that the words
        # find close but that has another form does not make a right link unsure when
        # more English is read.
        def formed(i: int) -> float:
            return shape_similarity(ranking.shape, index.shape(i)) * weight(i)

        kin = {i for i, _ in ranked if i not in own_set and i in near}
        formed_rival = _rival(ranked, versions | kin | {best}, formed)
        rival = score - (score * formed(best) - formed_rival)
    else:
        rival = _rival(ranked[1:], versions, weight)
    original = _original(best, ranked, alike, card_originals, index)
    score, margin = round(score, 4), round(score - rival, 4)
    method = "card" if original in card_originals else "dataset"
    # Another card's ruling that lacks the card's name the translation prints is that
    # ruling worded for the other card: no link, as under the thresholds.
    named = method == "card" or prints_names(index.folded(index.position[original]), names)
    if score < min_score or margin < min_margin or not named:
        return Link(None, score, margin, "unsure")
    others = tuple(index.hashes[i] for i, _ in ranked if i in alike or i == best)
    return Link(original, score, margin, method, (original, *sorted(set(others) - {original})))


def _original(
    best: int,
    ranked: Sequence[tuple[int, float]],
    alike: Collection[int],
    card_originals: Collection[str],
    index: EnglishIndex,
) -> str:
    """The winner, or the best of its alike versions the card holds if it does not."""
    original = index.hashes[best]
    if original not in card_originals:
        own_versions = [i for i, _ in ranked if i in alike and index.hashes[i] in card_originals]
        if own_versions:
            original = index.hashes[own_versions[0]]
    return original


def _rival(
    ranked: Sequence[tuple[int, float]], skip: Collection[int], weight: Callable[[int], float]
) -> float:
    """The best score of RANKED (best first) outside SKIP, each times its WEIGHT (0-1].

    Walked in score order until no weighed score can beat the best found: the weights
    are taken for a few candidates, not the shortlist.
    """
    found = 0.0
    for i, value in ranked:
        if value <= found:
            break
        if i not in skip:
            found = max(found, value * weight(i))
    return found


def _with_own(ranking: Ranking, own: Sequence[int]) -> list[tuple[int, float]]:
    """The ranking's shortlist with the card's own texts it left out, best first."""
    unseen = sorted(set(own) - {i for i, _ in ranking.ranked})
    if not unseen:
        return list(ranking.ranked)  # in order already (_rank_batch)
    scored = dict(ranking.own)
    if not set(unseen) <= scored.keys():
        msg = "decide() needs a ranking that scored the card's own texts (rank(…, own))"
        raise ValueError(msg)
    return _ordered([*ranking.ranked, *((i, scored[i]) for i in unseen)])


def link(
    text: str,
    lang: str,
    card_originals: Collection[str],
    index: EnglishIndex,
    lexicon: Lexicon | None = None,
    *,
    min_score: float = MIN_SCORE,
    min_margin: float = MIN_MARGIN,
    card: str | None = None,
) -> Link:
    """The English text of INDEX that TEXT (in LANG) translates, or no link when unsure.

    CARD_ORIGINALS are the hashes of the card's own English rulings (every version); the
    rest of the index is the fallback (see decide()). CARD is the card's name, if known.
    """
    lexicon = shipped() if lexicon is None else lexicon
    if lang not in lexicon:
        return Link(None, 0.0, 0.0, "no-lexicon")
    batch = units_of([(text, lang, [card_originals], [card])], index)
    return _link_batch(batch, index, lexicon, min_score=min_score, min_margin=min_margin)[0]
