"""The decisions of a batch of translations at once: the card rule and decide(), as arrays.

`card.choose()` and `link.decide()` define the decision for one translation and one card in
plain Python; here the same decisions are made for every (translation, card) of a batch, a
*unit*, by numpy passes over all their candidates at once. A unit's candidates are the English
texts it is decided among (its shortlist and its card's own texts, or its card's own texts
alone), each with its coverage score, grouped by unit and ordered as the one-text code walks
them: best score first, equal scores by position (hash order).

The one-text code walks each ranking in score order and stops early; every walk stops only
where nothing left can change its answer (a weighed score is never more than its score), so
taking the maximum over all the candidates gives the same answer. Every float is computed
with the operations, operands and order of the one-text code, so the scores and margins are
the same bits: the powers through tables and `pow` made by Python itself, rounding by
Python's `round`.
"""

from __future__ import annotations

import weakref
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pyarrow as pa
from rapidfuzz import fuzz, process

from pipeline.folding.translate import bytewise
from pipeline.folding.translate.batch import MarkList
from pipeline.folding.translate.card import (
    CARD_MIN_SCORE,
    FORM_FIT,
    NEAR_DUPLICATE,
    OTHER_CARD_MARGIN,
    VERSION_SIMILARITY,
)
from pipeline.folding.translate.features import MARK_COST, marks, shape
from pipeline.folding.translate.terms import expand
from pipeline.text.normalize import fold

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from numpy.typing import NDArray

    from pipeline.folding.translate.batch import Traits
    from pipeline.folding.translate.features import Marks
    from pipeline.folding.translate.index import EnglishIndex

# A version of the winner scoring this much less is no version left to the dates (link.py).
ALIKE_GAP = 0.05
# Methods of a verdict (Verdicts.method).
UNSURE, CARD, DATASET = 0, 1, 2


class Candidates(NamedTuple):
    """The candidates of a batch's units, grouped by unit, best score first (then position).

    Unit U's are rows starts[U] to starts[U + 1]: the English text (doc), its coverage score
    (value) and whether it is one of the unit's card's own (own).
    """

    units: int
    starts: NDArray[np.int64]
    unit: NDArray[np.int64]
    doc: NDArray[np.int64]
    value: NDArray[np.float64]
    own: NDArray[np.bool_]


def candidates(
    units: int,
    unit: NDArray[np.int64],
    doc: NDArray[np.int64],
    value: NDArray[np.float64],
    own: NDArray[np.bool_],
) -> Candidates:
    """The candidates (unit, doc, value, own), each unit's in the order its ranking walks them."""
    order = np.lexsort((doc, -value, unit))
    unit = unit[order]
    starts = np.searchsorted(unit, np.arange(units + 1, dtype=np.int64)).astype(np.int64)
    return Candidates(units, starts, unit, doc[order], value[order], own[order])


class Fits(NamedTuple):
    """Each candidate's fit to its unit's translation: form (shape_similarity), marks."""

    form: NDArray[np.float64]
    mark: NDArray[np.float64]


def fits(
    found: Candidates, unit_text: NDArray[np.int64], featured: Traits, index: EnglishIndex
) -> Fits:
    """features.shape_similarity and mark_similarity of each candidate and its translation.

    UNIT_TEXT is each unit's translation, a row of FEATURED; the English texts' shapes and
    marks are the index's (taken once per text, _English).
    """
    text = unit_text[found.unit]
    english = _english(index)
    english.take(found.doc)
    return Fits(
        _shape_similarity(
            featured.sentences[text],
            featured.lengths[text],
            english.sentences[found.doc],
            english.lengths[found.doc],
        ),
        _mark_similarity(text, featured.marks, found.doc, english),
    )


class _English:
    """What the decisions ask of an index's English texts, each text's taken once, as arrays.

    Its shape (features.shape) and marks (features.marks, numbered), taken together for
    every candidate; its folded text (normalize.fold), taken for the versions' ratios.
    """

    def __init__(self, index: EnglishIndex) -> None:
        size = len(index)
        self._index = index
        # Which texts' shape and marks are taken.
        self.known = np.zeros(size, dtype=np.bool_)
        self.sentences = np.zeros(size, dtype=np.int64)
        self.lengths = np.zeros(size, dtype=np.float64)
        self.folded = np.empty(size, dtype=object)
        self.is_folded = np.zeros(size, dtype=np.bool_)
        # Every mark met, numbered; and the marks of the texts taken, a table by text.
        self.ids = _Numbering()
        # How many marks each text taken holds: new texts' marks merge into the table.
        self._held = np.zeros(size, dtype=np.int64)
        nothing = np.zeros(0, np.int64)
        self.marks = _MarkTable(np.zeros(size + 1, np.int64), nothing, nothing, nothing)

    def take(self, docs: NDArray[np.int64]) -> None:
        """Take the texts of DOCS not taken yet."""
        new = np.unique(docs[~self.known[docs]])
        if not len(new):
            return
        # Taken here once, not through the index's own caches (dicts a text each, which the
        # one-text path fills): these arrays are all the decisions read.
        texts = [self._index.texts[d] for d in new.tolist()]
        sentences, lengths, table = _shaped(texts, self.ids)
        self.sentences[new], self.lengths[new] = sentences, lengths
        # NEW ascending, each one's keys ascending: the new keys are sorted, and merge in.
        added = (np.repeat(new, np.diff(table.starts)) << 32) | table.keys
        held = self.marks
        at = np.searchsorted(held.known, added)
        self._held[new] = np.diff(table.starts)
        starts = np.zeros(len(self._held) + 1, dtype=np.int64)
        np.cumsum(self._held, out=starts[1:])
        self.marks = _MarkTable(
            starts,
            np.insert(held.keys, at, table.keys),
            np.insert(held.counts, at, table.counts),
            np.insert(held.known, at, added),
        )
        self.known[new] = True

    def fold(self, docs: NDArray[np.int64]) -> NDArray[np.object_]:
        """The folded texts of DOCS, each text folded once (only the versions' ratios ask)."""
        new = np.unique(docs[~self.is_folded[docs]])
        if len(new):
            self.folded[new] = [fold(self._index.texts[d]) for d in new.tolist()]
            self.is_folded[new] = True
        found: NDArray[np.object_] = self.folded[docs]
        return found


def _shaped(
    texts: list[str], ids: _Numbering
) -> tuple[NDArray[np.int64], NDArray[np.float64], _MarkTable]:
    """features.shape(text, "en") of each of TEXTS, and their marks as a table (IDS numbering).

    Most at once on their bytes (bytewise.shapes), the others one by one.
    """
    quick = bytewise.shaped(texts)
    fast, slow = np.flatnonzero(quick), np.flatnonzero(~quick)
    found = bytewise.shapes([texts[n] for n in fast.tolist()])
    sentences = np.zeros(len(texts), dtype=np.int64)
    lengths = np.zeros(len(texts), dtype=np.float64)
    sentences[fast], lengths[fast] = found.sentences, found.lengths
    alone = [texts[n] for n in slow.tolist()]
    for n, (count, length) in zip(
        slow.tolist(), (shape(text, "en") for text in alone), strict=True
    ):
        sentences[n], lengths[n] = count, length
    held = [marks(text) for text in alone]
    listed = MarkList.of(
        len(texts),
        np.concatenate([fast[found.rows], np.repeat(slow, np.fromiter(map(len, held), np.int64))]),
        pa.concat_arrays([found.keys, pa.array([k for one in held for k in one], pa.string())]),
        np.concatenate(
            [found.counts, np.asarray([c for one in held for c in one.values()], np.int64)]
        ),
    )
    every = np.arange(len(texts), dtype=np.int64)
    return sentences, lengths, _listed_marks(listed, every, ids, once=True)


_ENGLISH: weakref.WeakKeyDictionary[EnglishIndex, _English] = weakref.WeakKeyDictionary()


def _english(index: EnglishIndex) -> _English:
    """The index's _English, made once."""
    found = _ENGLISH.get(index)
    if found is None:
        found = _ENGLISH[index] = _English(index)
    return found


def _shape_similarity(
    first_sentences: NDArray[np.int64],
    first_lengths: NDArray[np.float64],
    second_sentences: NDArray[np.int64],
    second_lengths: NDArray[np.float64],
) -> NDArray[np.float64]:
    """features.shape_similarity of each pair, in its operations: 0.8 ** k * (short/long) ** 0.5."""
    apart = np.abs(first_sentences - second_sentences)
    sentences = _powers(0.8, int(apart.max(initial=0)))[apart]
    one = np.where(first_lengths == 0, 1.0, first_lengths)
    other = np.where(second_lengths == 0, 1.0, second_lengths)
    ratio = np.minimum(one, other) / np.maximum(one, other)
    # Python's float power (C's pow), not numpy's, whose loops may round otherwise.
    distinct, at = np.unique(ratio, return_inverse=True)
    roots = np.fromiter(map(pow, distinct.tolist(), repeat(0.5)), np.float64, len(distinct))
    return np.asarray(sentences * roots[at], dtype=np.float64)


def _powers(base: float, most: int) -> NDArray[np.float64]:
    """BASE ** k for k = 0 to MOST, each as Python computes it."""
    return np.fromiter((base**k for k in range(most + 1)), np.float64, most + 1)


class _Numbering:
    """Every mark met, numbered in the order met, and which are numbers ("#12")."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._numbers: list[bool] = []
        self._last: tuple[list[str], NDArray[np.int64]] | None = None

    def of(self, names: Iterable[str]) -> NDArray[np.int64]:
        """The number of each of NAMES (new ones numbered)."""
        ids, numbers, found = self._ids, self._numbers, []
        for name in names:
            at = ids.get(name)
            if at is None:
                at = ids[name] = len(ids)
                numbers.append(name[0] == "#")
            found.append(at)
        return np.asarray(found, dtype=np.int64)

    def of_list(self, names: list[str]) -> NDArray[np.int64]:
        """of(NAMES), NAMES being a MarkList's: the last list asked is answered again."""
        last = self._last
        if last is None or last[0] is not names:
            last = self._last = (names, self.of(names))
        return last[1]

    def numbers(self) -> NDArray[np.bool_]:
        """Whether each mark, by its number, is a number."""
        return np.asarray(self._numbers, dtype=np.bool_)


class _MarkTable(NamedTuple):
    """Marks of several texts: text T's are rows starts[T] to starts[T + 1], keys ascending.

    KNOWN is each row's (text, mark) as text << 32 | mark: ascending, for lookups.
    """

    starts: NDArray[np.int64]
    keys: NDArray[np.int64]
    counts: NDArray[np.int64]
    known: NDArray[np.int64]


def _table(
    starts: NDArray[np.int64], keys: NDArray[np.int64], counts: NDArray[np.int64]
) -> _MarkTable:
    """A _MarkTable of rows given by STARTS, KEYS (ascending in each text) and COUNTS."""
    held = np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(starts))
    return _MarkTable(starts, keys, counts, (held << 32) | keys)


def _mark_table(marks: Sequence[Marks], ids: _Numbering) -> _MarkTable:
    """MARKS as a table, each mark numbered by IDS (new marks added to it)."""
    lengths = np.fromiter(map(len, marks), np.int64, len(marks))
    keys = ids.of(mark for found in marks for mark in found)
    counts = np.fromiter(
        (count for found in marks for count in found.values()), np.int64, len(keys)
    )
    row = np.repeat(np.arange(len(marks), dtype=np.int64), lengths)
    order = np.lexsort((keys, row))
    starts = np.zeros(len(marks) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    return _table(starts, keys[order], counts[order])


def _listed_marks(
    marks: MarkList, texts: NDArray[np.int64], ids: _Numbering, *, once: bool = False
) -> _MarkTable:
    """The marks of TEXTS (ascending) of MARKS as a table, each mark numbered by IDS.

    ONCE: MARKS is asked once (its numbers are not kept for the next call, which would
    forget the list asked before).
    """
    numbered = ids.of(marks.names) if once else ids.of_list(marks.names)
    wanted = np.zeros(marks.size, dtype=np.bool_)
    wanted[texts] = True
    held = wanted[marks.rows]
    rows = np.searchsorted(texts, marks.rows[held])
    keys = numbered[marks.codes[held]]
    order = np.lexsort((keys, rows))
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=len(texts)), out=starts[1:])
    return _table(starts, keys[order], marks.counts[held][order])


def _counts_of(
    table: _MarkTable, rows: NDArray[np.int64], keys: NDArray[np.int64]
) -> NDArray[np.int64]:
    """How many of mark KEYS[k] text ROWS[k] of TABLE holds (0 when none)."""
    known = table.known
    if not len(known):
        return np.zeros(len(rows), dtype=np.int64)
    asked = (rows << 32) | keys
    at = np.minimum(np.searchsorted(known, asked), len(known) - 1)
    return np.where(known[at] == asked, table.counts[at], 0)


def _mark_similarity(
    text: NDArray[np.int64], text_marks: Sequence[Marks], doc: NDArray[np.int64], english: _English
) -> NDArray[np.float64]:
    """features.mark_similarity of each (translation TEXT[k], English text DOC[k]).

    MARK_COST to the power of the marks the English text has that the translation lacks
    (missing) and of the marks other than numbers the translation has that it lacks (extra).
    """
    ids = english.ids
    texts, text_at = np.unique(text, return_inverse=True)
    translations = (
        _listed_marks(text_marks, texts, ids)
        if isinstance(text_marks, MarkList)
        else _mark_table([text_marks[t] for t in texts.tolist()], ids)
    )
    numbers = ids.numbers()
    marks = english.marks
    pairs = len(text)
    owner, at = expand(marks.starts, doc)
    printed = _counts_of(translations, text_at[owner], marks.keys[at])
    missing = np.bincount(owner, weights=np.maximum(0, marks.counts[at] - printed), minlength=pairs)
    owner, at = expand(translations.starts, text_at)
    kept = ~numbers[translations.keys[at]]
    owner, at = owner[kept], at[kept]
    known = _counts_of(marks, doc[owner], translations.keys[at])
    extra = np.bincount(
        owner, weights=np.maximum(0, translations.counts[at] - known), minlength=pairs
    )
    cost = (missing + extra).astype(np.int64)
    return _powers(MARK_COST, int(cost.max(initial=0)))[cost]


def _group_max(
    groups: int, group: NDArray[np.int64], values: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The largest of VALUES per group, 0.0 where a group has none (or none above 0)."""
    found = np.zeros(groups, dtype=np.float64)
    np.maximum.at(found, group, values)
    return found


def _first(groups: int, group: NDArray[np.int64], where: NDArray[np.bool_]) -> NDArray[np.int64]:
    """The first row of each group (rows grouped in order) where WHERE holds; -1 where none."""
    rows = np.flatnonzero(where)
    found = np.full(groups, -1, dtype=np.int64)
    firsts, at = np.unique(group[rows], return_index=True)
    found[firsts] = rows[at]
    return found


def similarities(
    index: EnglishIndex, first: NDArray[np.int64], second: NDArray[np.int64]
) -> NDArray[np.float64]:
    """card.similar_texts' ratio of each (FIRST[k], SECOND[k]) pair of English texts.

    0 below NEAR_DUPLICATE; each distinct pair taken once, in one call.
    """
    if not len(first):
        return np.zeros(0, dtype=np.float64)
    width = len(index)
    pairs, at = np.unique(first * width + second, return_inverse=True)
    ones, others = np.divmod(pairs, width)
    english = _english(index)
    found = process.cpdist(
        english.fold(ones).tolist(),
        english.fold(others).tolist(),
        scorer=fuzz.ratio,
        dtype=np.float64,
        score_cutoff=NEAR_DUPLICATE,
    )
    return np.asarray(found, dtype=np.float64)[at]


class Chosen(NamedTuple):
    """card.choose() of each unit, as arrays.

    Whether it links, its winner (a candidate row), its score and margin (not rounded), and
    which candidates are the winner's versions.
    """

    linked: NDArray[np.bool_]
    best: NDArray[np.int64]
    score: NDArray[np.float64]
    margin: NDArray[np.float64]
    versions: NDArray[np.bool_]


def choose(
    found: Candidates,
    fit: Fits,
    index: EnglishIndex,
    *,
    min_margin: float,
    asked: NDArray[np.bool_],
) -> Chosen:
    """card.choose() of every unit where ASKED holds (the others do not link), at once."""
    units, unit = found.units, found.unit
    if not len(unit):
        nothing = np.zeros(units, dtype=np.float64)
        return Chosen(np.zeros(units, np.bool_), np.full(units, -1), nothing, nothing, asked[:0])
    own = found.own & asked[unit]
    # A unit whose own candidates all score under the floor: the rule is unsure.
    floor = _group_max(units, unit[own], found.value[own])
    formed = found.value * (fit.form * fit.mark)
    # The card's best by weighed score, equal ones by position: the first of a sort.
    rows = np.flatnonzero(own)
    order = rows[np.lexsort((found.doc[rows], -formed[rows], unit[rows]))]
    best = np.full(units, -1, dtype=np.int64)
    firsts, at = np.unique(unit[order], return_index=True)
    best[firsts] = order[at]
    has = best >= 0
    lead = np.where(has, formed[best], 0.0)
    score = np.where(has, found.value[best], 0.0)
    linked = (
        asked
        & (floor >= CARD_MIN_SCORE)
        & has
        & (lead > 0)
        & (score >= CARD_MIN_SCORE)
        & (np.where(has, fit.mark[best], 0.0) >= 1)
        & (np.where(has, fit.form[best], 0.0) >= FORM_FIT)
    )
    # The winner's versions and near-duplicates among the unit's other candidates.
    others = linked[unit] & (np.arange(len(unit)) != best[unit])
    ratio = np.zeros(len(unit), dtype=np.float64)
    ratio[others] = similarities(index, found.doc[best[unit[others]]], found.doc[others])
    # A version whose marks fit the translation less than the winner's (whose fit is 1
    # here) is no version: a rival (card.version_weights).
    versions = others & (ratio >= VERSION_SIMILARITY) & (np.minimum(1.0, fit.mark / 1.0) >= 1)
    near = others & (ratio >= NEAR_DUPLICATE)
    rival = others & ~versions
    own_rival = _group_max(units, unit[rival & found.own], formed[rival & found.own])
    other = rival & ~found.own & ~near
    other_rival = _group_max(units, unit[other], formed[other])
    margin = np.minimum(lead - own_rival, lead - other_rival + min_margin - OTHER_CARD_MARGIN)
    linked &= margin >= min_margin
    versions &= linked[unit]
    return Chosen(linked, best, score, margin, versions)


class Verdicts(NamedTuple):
    """link.decide() of each unit, as arrays.

    Its original (a candidate row, -1 for none), the rounded score and margin, the method
    (UNSURE, CARD, DATASET), and which candidates are versions of the original (the original
    among them) that the dates choose between.
    """

    original: NDArray[np.int64]
    score: NDArray[np.float64]
    margin: NDArray[np.float64]
    method: NDArray[np.int64]
    versions: NDArray[np.bool_]


def card_verdicts(found: Chosen) -> Verdicts:
    """The verdicts of the card rule's choices: a link where it links, unsure elsewhere."""
    return Verdicts(
        np.where(found.linked, found.best, -1),
        rounded(found.score, found.linked),
        rounded(found.margin, found.linked),
        np.where(found.linked, CARD, UNSURE),
        found.versions,
    )


def rounded(values: NDArray[np.float64], where: NDArray[np.bool_]) -> NDArray[np.float64]:
    """VALUES, those WHERE holds as Python's round(value, 4) gives them (numpy's may differ)."""
    found = np.array(values, dtype=np.float64)
    at = np.flatnonzero(where)
    found[at] = np.fromiter(map(round, values[at].tolist(), repeat(4)), np.float64, len(at))
    return found


def decide(
    found: Candidates,
    fit: Fits,
    index: EnglishIndex,
    *,
    min_score: float,
    min_margin: float,
    named: Callable[[int, int], bool],
) -> Verdicts:
    """link.decide() of every unit of FOUND (a unit with no candidate is unsure).

    NAMED(unit, doc) tells whether the English text DOC prints the words of the unit's card
    name that its translation prints (features.prints_names); asked only of a winner of
    another card that would link.
    """
    units, unit = found.units, found.unit
    if not len(unit):
        zeros = np.zeros(units, dtype=np.float64)
        nothing = np.zeros(0, dtype=np.bool_)
        return Verdicts(np.full(units, -1), zeros, zeros, np.zeros(units, np.int64), nothing)
    chosen = choose(found, fit, index, min_margin=min_margin, asked=np.ones(units, dtype=np.bool_))
    has = np.diff(found.starts) > 0
    top = np.where(has, found.starts[:-1], -1)
    # The winner's versions and near-duplicates, for the units the card rule leaves.
    left = has & ~chosen.linked
    others = left[unit] & (np.arange(len(unit)) != top[unit])
    ratio = np.zeros(len(unit), dtype=np.float64)
    ratio[others] = similarities(index, found.doc[top[unit[others]]], found.doc[others])
    # card.version_weights: a version's weight as the winner's rival.
    fit_top = np.where(has, fit.mark[np.maximum(top, 0)], 1.0)
    weight = np.ones(len(unit), dtype=np.float64)
    version = others & (ratio >= VERSION_SIMILARITY)
    weight[version] = np.minimum(1.0, fit.mark[version] / fit_top[unit[version]])
    version &= weight >= 1
    near = others & (ratio >= NEAR_DUPLICATE)
    score = np.where(has, found.value[np.maximum(top, 0)], 0.0)
    alike = version & (found.value >= score[unit] - ALIKE_GAP)
    # Whether the winner or one of its versions is the card's own: the lead is weighed by form.
    mine = _group_max(units, unit[version & found.own], np.ones(int((version & found.own).sum())))
    top_own = has & found.own[np.maximum(top, 0)]
    by_form = left & ((mine > 0) | top_own)
    formed = fit.form * weight
    skip = version | (near & ~found.own) | ~others
    weighed = by_form[unit] & ~skip
    formed_rival = _group_max(units, unit[weighed], found.value[weighed] * formed[weighed])
    plain = left[unit] & ~by_form[unit] & others & ~version
    plain_rival = _group_max(units, unit[plain], found.value[plain] * weight[plain])
    formed_top = np.where(has, formed[np.maximum(top, 0)], 0.0)
    rival = np.where(by_form, score - (score * formed_top - formed_rival), plain_rival)
    # The original: the winner, or the best of its alike versions the card holds.
    own_alike = _first(units, unit, alike & found.own)
    original = np.where(
        has & ~top_own & (own_alike >= 0),
        own_alike,
        top,
    )
    scores, margins = rounded(score, left), rounded(score - rival, left)
    method = np.where(left, np.where(found.own[np.maximum(original, 0)], CARD, DATASET), UNSURE)
    links = left & (scores >= min_score) & (margins >= min_margin)
    for u in np.flatnonzero(links & (method == DATASET)).tolist():
        links[u] = named(u, int(found.doc[original[u]]))
    versions = (alike | (np.arange(len(unit)) == top[unit])) & links[unit]
    # The card rule's links, then the rest.
    card = card_verdicts(chosen)
    is_chosen = chosen.linked
    return Verdicts(
        np.where(is_chosen, chosen.best, np.where(links, original, -1)),
        np.where(is_chosen, card.score, scores),
        np.where(is_chosen, card.margin, margins),
        np.where(is_chosen, CARD, np.where(links, method, UNSURE)),
        chosen.versions | versions,
    )
