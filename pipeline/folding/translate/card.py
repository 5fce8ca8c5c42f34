"""The decision within one card: which of its few English rulings a translation is.

A translation of a card's ruling translates one of that card's English rulings (or a
version of one): the candidates are few, and what survives translation where the lexicon
fails (sentences and length, symbols, numbers, brackets, pauses) tells them apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from rapidfuzz import fuzz, process

from pipeline.folding.translate.features import mark_similarity, shape_similarity

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

    from pipeline.folding.translate.features import Marks
    from pipeline.folding.translate.index import EnglishIndex

# Two English texts this similar (rapidfuzz ratio of the folded texts) are taken as versions
# of one ruling ("… not when it's exiled" / "… not when the card is exiled"): either is the
# right original, so the margin is measured against the best candidate outside them.
VERSION_SIMILARITY = 80.0
# A text of another card this similar to the card's own winner (but not a version of it) is
# the same ruling worded for that card, which a set repeats across its cards: it is no
# rival to the card's own (benchmarks/translate_eval.py --hand: 38 of 44 right instead of
# 35, still none wrong, and no more false links with the original absent; 50 let one in).
NEAR_DUPLICATE = 70.0
# A card's own winner needs this coverage score (the dataset's MIN_SCORE is 0.45): its
# rulings are its translations' likeliest originals, and its lead is weighed by form.
CARD_MIN_SCORE = 0.35
# Its lead (weighed by form) over another card's ruling: the lead over the card's other
# rulings is MIN_MARGIN as anywhere, but another card's ruling is a less likely original.
OTHER_CARD_MARGIN = 0.04
# The rule holds only for a winner whose form fits the translation: every mark the same, and
# a shape_similarity of at least this (as many sentences, a like length). On the hand set,
# the card's other rulings it linked with the original absent all failed one or the other.
FORM_FIT = 0.8
# A card's own winner by the card rule among the card's texts alone, scoring this much, is
# linked without ranking the translation among every English text: the rule's lead over
# other cards' texts (OTHER_CARD_MARGIN) is not asked. Measured with the lead asked: at
# 0.75 no link of the hand set, the MTGJSON held-out sets or benchmarks/translate_dumps.py
# changes but one right one more there; at 0.6 five more links there are wrong.
SURE_SCORE = 0.75
# The pairs of texts whose ratio an index keeps (similar_texts): their translations come
# card by card, so the pairs of the last few cards are all it needs.
_RATIOS_KEPT = 1 << 16


class Choice(NamedTuple):
    """A card's own ruling a translation is linked to (a hash), score, margin, versions."""

    original: str
    score: float
    margin: float
    # The original first, then its versions (the dates decide between them).
    versions: tuple[str, ...]


def choose(
    ranked: Sequence[tuple[int, float]],
    index: EnglishIndex,
    *,
    own: Collection[int],
    shape: tuple[int, float],
    printed: Marks,
    similar: Callable[[int], tuple[set[int], set[int]]],
    min_margin: float,
) -> Choice | None:
    """The card's own ruling a translation translates, or None when the card's rule is unsure.

    The best of the card's own candidates by score weighed by form and marks (the same
    symbols, numbers, brackets, pauses: PRINTED is the translation's features.marks) is
    linked when its score is at least CARD_MIN_SCORE, its form fits (FORM_FIT), and it
    leads the card's other rulings by MIN_MARGIN and other cards' by OTHER_CARD_MARGIN on
    those weighed scores. Its
    versions (SIMILAR gives them, and near-duplicates) are no rivals; a version whose marks
    fit the translation less is not its version either: "you won't gain 4 life" is not
    what "you won't gain any life" translates, whatever the dates say.
    """
    if max((value for i, value in ranked if i in own), default=0.0) < CARD_MIN_SCORE:
        return None  # whichever own text wins by form, its score is below the floor
    weighed: dict[int, float] = {}
    values = dict(ranked)

    def formed(i: int, beat: float = -1.0) -> float:
        # A candidate's score weighed by form and marks, once; or, when its score weighed
        # by form alone (which the marks only lower) cannot beat BEAT, that.
        found = weighed.get(i)
        if found is None:
            form = shape_similarity(shape, index.shape(i))
            if values[i] * form <= beat:
                return values[i] * form
            found = weighed[i] = values[i] * (form * mark_similarity(printed, index.marks(i)))
        return found

    best, lead = _card_best(ranked, own, formed, index.hashes)
    if best < 0 or lead <= 0:
        return None
    score = values[best]
    fit = mark_similarity(printed, index.marks(best))
    form = shape_similarity(shape, index.shape(best))
    if score < CARD_MIN_SCORE or fit < 1 or form < FORM_FIT:
        return None
    versions, near = similar(best)
    weight = version_weights(versions, best, printed, index)
    kept = {i for i in versions if weight(i) >= 1}

    def margin(own_rival: float, other_rival: float) -> float:
        return min(lead - own_rival, lead - other_rival + min_margin - OTHER_CARD_MARGIN)

    rivals = _rivals(
        ranked, own, kept | {best}, near, formed, lost=lambda *r: margin(*r) < min_margin
    )
    if margin(*rivals) < min_margin:
        return None
    original = index.hashes[best]
    others = sorted({index.hashes[i] for i in kept} - {original})
    return Choice(original, round(score, 4), round(margin(*rivals), 4), (original, *others))


def version_weights(
    versions: Collection[int], best: int, printed: Marks | None, index: EnglishIndex
) -> Callable[[int], float]:
    """Each candidate's weight as BEST's rival: below 1 for VERSIONS whose marks fit worse.

    Two texts alike in their words but not in their numbers or symbols ("+1/+2" and
    "+2/+2", "{1}{W}" and "{1}{G}") are two rulings to a translation that prints one of
    them: such a version of the winner is no version, and a rival weaker by how much worse
    its marks fit the translation's (PRINTED, features.marks) than the winner's. Every
    other candidate weighs 1, as every candidate does without PRINTED.
    """
    if printed is None or not versions:
        return lambda _: 1.0
    fit = mark_similarity(printed, index.marks(best))
    found = {i: min(1.0, mark_similarity(printed, index.marks(i)) / fit) for i in versions}
    return lambda i: found.get(i, 1.0)


def _card_best(
    ranked: Sequence[tuple[int, float]],
    own: Collection[int],
    formed: Callable[[int], float],
    hashes: Sequence[str],
) -> tuple[int, float]:
    """The card's best by weighed score (equal ones in hash order), and that score.

    Walked in score order until no weighed score can reach it (each is at most its score):
    the form of a few is weighed, not the whole shortlist's.
    """
    best, lead = -1, 0.0
    for i, value in ranked:
        if value < lead:
            break
        if i in own and (formed(i) > lead or (formed(i) == lead and hashes[i] < hashes[best])):
            best, lead = i, formed(i)
    return best, lead


def _rivals(
    ranked: Sequence[tuple[int, float]],
    own: Collection[int],
    skip: Collection[int],
    near: Collection[int],
    formed: Callable[[int, float], float],
    *,
    lost: Callable[[float, float], bool],
) -> tuple[float, float]:
    """The best weighed scores of the card's texts and of other cards' outside SKIP.

    A near-duplicate of the winner (NEAR) on another card is no rival: the same ruling
    worded for that card. FORMED(i, beat) is a candidate's weighed score, or a value no
    more than BEAT when that score cannot beat BEAT. Walked in score order, as _card_best,
    until neither can grow (no own text is left, or none left can beat the rivals found)
    or the rivals found already make the winner LOST (rivals only grow).
    """
    own_left = sum(1 for i, _ in ranked if i in own and i not in skip)
    own_rival = other_rival = 0.0
    for i, value in ranked:
        if value <= other_rival and (not own_left or value <= own_rival):
            break
        if i in skip:
            continue
        if i in own:
            own_left -= 1
            own_rival = max(own_rival, formed(i, own_rival)) if value > own_rival else own_rival
        elif i not in near and value > other_rival:
            other_rival = max(other_rival, formed(i, other_rival))
        if lost(own_rival, other_rival):
            break
    return own_rival, other_rival


def similar_texts(
    best: int, others: Sequence[int], index: EnglishIndex
) -> tuple[set[int], set[int]]:
    """The texts of OTHERS that are versions of BEST, and its near-duplicates."""
    if not others:
        return set(), set()
    # A card's translations share their winner and most of its rivals: each pair's ratio is
    # kept on the index (a bounded cache), the rest taken in one call for the row, in
    # doubles, as fuzz.ratio() answers one pair.
    kept = index.ratios
    if len(kept) > _RATIOS_KEPT:
        kept.clear()
    unknown = [i for i in others if (best, i) not in kept]
    if unknown:
        found = process.cdist(
            [index.folded(best)],
            [index.folded(i) for i in unknown],
            scorer=fuzz.ratio,
            dtype=np.float64,
            score_cutoff=NEAR_DUPLICATE,
        )[0].tolist()
        kept.update(zip(((best, i) for i in unknown), found, strict=True))
    pairs = [(i, kept[best, i]) for i in others]
    versions = {i for i, value in pairs if value >= VERSION_SIMILARITY}
    return versions, {i for i, value in pairs if value >= NEAR_DUPLICATE}
