"""The decision within one card: which of its few English rulings a translation is.

A translation of a card's ruling translates one of that card's English rulings (or a
version of one): the candidates are few, and what survives translation where the lexicon
fails (sentences and length, symbols, numbers, brackets, pauses) tells them apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from pipeline.folding.translate.features import mark_similarity, marks, shape_similarity

if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Callable, Collection, Sequence

    from pipeline.folding.translate.link import EnglishIndex

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


class Choice(NamedTuple):
    """A card's own ruling a translation is linked to: score, margin, its versions."""

    original: int
    score: float
    margin: float
    versions: tuple[int, ...]


def formed_scores(
    ranked: Sequence[tuple[int, float]],
    index: EnglishIndex,
    shape: tuple[int, float],
    printed: Counter[str] | None,
) -> dict[int, float]:
    """Each candidate's score weighed by how alike its form and marks are to the translation's."""
    found: dict[int, float] = {}
    for i, value in ranked:
        weight = shape_similarity(shape, index.shape(i))
        if printed is not None:
            weight *= mark_similarity(printed, marks(index.texts[i]))
        found[i] = value * weight
    return found


def choose(
    ranked: Sequence[tuple[int, float]],
    index: EnglishIndex,
    *,
    own: Collection[int],
    shape: tuple[int, float],
    text: str,
    similar: Callable[[int], tuple[set[int], set[int]]],
    min_margin: float,
) -> Choice | None:
    """The card's own ruling that TEXT translates, or None when the card's rule is unsure.

    The best of the card's own candidates by score weighed by form and marks (the same
    symbols, numbers, brackets, pauses: features.marks) is linked when its score is at
    least CARD_MIN_SCORE, its form fits (FORM_FIT), and it leads the card's other rulings
    by MIN_MARGIN and other cards' by OTHER_CARD_MARGIN on those weighed scores. Its
    versions (SIMILAR gives them, and near-duplicates) are no rivals; a version whose marks
    fit the translation less is not its version either: "you won't gain 4 life" is not
    what "you won't gain any life" translates, whatever the dates say.
    """
    printed = marks(text)
    formed = formed_scores(ranked, index, shape, printed)
    mine = sorted((i for i, _ in ranked if i in own), key=lambda i: (-formed[i], index.hashes[i]))
    if not mine or formed[mine[0]] <= 0:
        return None
    best = mine[0]
    versions, near = similar(best)
    fit = mark_similarity(printed, marks(index.texts[best]))
    kept = {i for i in versions if mark_similarity(printed, marks(index.texts[i])) >= fit}
    own_rival = max((formed[i] for i in mine[1:] if i not in kept), default=0.0)
    other_rival = max(
        (formed[i] for i, _ in ranked if i not in own and i not in kept and i not in near),
        default=0.0,
    )
    lead = formed[best]
    margin = min(lead - own_rival, lead - other_rival + min_margin - OTHER_CARD_MARGIN)
    score = dict(ranked)[best]
    form = shape_similarity(shape, index.shape(best))
    if score < CARD_MIN_SCORE or margin < min_margin or fit < 1 or form < FORM_FIT:
        return None
    return Choice(best, score, margin, tuple(sorted(kept)))
