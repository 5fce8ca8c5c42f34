"""The decisions of a batch one translation at a time: the definition decisions.py is tested on.

`link_step()` links a batch as link.py did before its decisions were made on arrays: the card
rule among each card's own texts (`card.choose`, here `_sure`), then `link.decide()` of each
ranking, a Python call per translation and card. It is slower and gives the same links, scores
and margins: tests put it in place of `link._link_step` and compare (tests/test_translate_batch.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pipeline.folding.translate.card import SURE_SCORE, choose, similar_texts
from pipeline.folding.translate.features import printed_names
from pipeline.folding.translate.link import _NOTHING, Link, _ordered, _rankings, decide
from pipeline.folding.translate.units import asked_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pipeline.folding.translate.batch import Traits
    from pipeline.folding.translate.features import Marks
    from pipeline.folding.translate.index import EnglishIndex
    from pipeline.folding.translate.lexicon import Lexicon
    from pipeline.folding.translate.units import Asked, Units


def link_step(
    batch: Units,
    featured: Traits,
    index: EnglishIndex,
    lexicon: Lexicon,
    *,
    min_score: float,
    min_margin: float,
    later: object = None,  # noqa: ARG001 - link._link_step's: each text is ranked here, now
) -> list[Link]:
    """link._link_step() one translation and one card at a time: each unit's link, in order."""
    texts = asked_of(batch, index)
    found = _link_texts(texts, featured, index, lexicon, min_score=min_score, min_margin=min_margin)
    return [link for links in found for link in links]


def _link_texts(
    texts: Sequence[Asked],
    featured: Traits,
    index: EnglishIndex,
    lexicon: Lexicon,
    *,
    min_score: float,
    min_margin: float,
) -> list[list[Link]]:
    """Link TEXTS, mapped through the lexicon once: first on their cards' own texts alone.

    FEATURED are their features (batch.traits, with their lexicon ranks). A translation
    that the card rule (card.choose) links to one of its card's own English texts among
    those alone, at a score of SURE_SCORE or more, is linked without ranking it among
    every English text (for each of its cards); the others are ranked (_rankings) and
    decided (decide()) as ever.
    """
    owns = [
        [[index.position[h] for h in originals if h in index.position] for originals in cards]
        for _, _, cards, _ in texts
    ]
    mine = [sorted({i for own in per_card for i in own}) for per_card in owns]
    known = [n for n, (_, lang, *_) in enumerate(texts) if lang in lexicon] if len(index) else []
    found: list[list[Link] | None] = [None] * len(texts)
    # The queries' rows are the texts' (those of a language without a lexicon are empty).
    langs = [lang for _, lang, *_ in texts]
    queries = index.mapped_traits(featured, langs, lexicon) if known else None
    if queries is not None:
        sure = [n for n in known if owns[n] and all(owns[n])]
        pair_query = np.repeat(np.asarray(sure, dtype=np.int64), [len(mine[n]) for n in sure])
        pair_doc = np.asarray([i for n in sure for i in mine[n]], dtype=np.int64)
        scores = iter(index.coverage_many(queries, pair_query, pair_doc).tolist())
        for n in sure:
            value = {i: next(scores) for i in mine[n]}
            form, printed = featured.shape(n), featured.marks[n]
            sure_links = [
                _sure(form, printed, own, value, index, min_margin=min_margin) for own in owns[n]
            ]
            if None not in sure_links:
                found[n] = [link for link in sure_links if link is not None]
        rest = [n for n in known if found[n] is None]
        asked = [(*texts[n][:2], mine[n]) for n in rest]
        shapes = [featured.shape(n) for n in rest]
        rankings = _rankings(queries, rest, asked, shapes, index)
        anchored = featured.anchors_of()
        for n, ranking in zip(rest, rankings, strict=True):
            _, _, cards, names = texts[n]
            found[n] = [
                decide(
                    ranking,
                    index,
                    originals,
                    min_score=min_score,
                    min_margin=min_margin,
                    printed=featured.marks[n],
                    names=printed_names(anchored[n], card),
                )
                for originals, card in zip(cards, names or [None] * len(cards), strict=True)
            ]
    return [
        links if links is not None else [decide(_NOTHING, index, c) for c in texts[n][2]]
        for n, links in enumerate(found)
    ]


def _sure(
    form: tuple[int, float],
    printed: Marks,
    own: Sequence[int],
    value: dict[int, float],
    index: EnglishIndex,
    *,
    min_margin: float,
) -> Link | None:
    """The card rule's link among the card's OWN texts alone (their coverage in VALUE).

    FORM and PRINTED are the translation's shape and marks (features.traits).
    None unless its score is SURE_SCORE or more. Its margin is its lead over the card's
    other texts: other cards' texts are not asked (see SURE_SCORE).
    """
    ranked = _ordered((i, value[i]) for i in set(own))
    if ranked[0][1] < SURE_SCORE:
        return None

    def similar(i: int) -> tuple[set[int], set[int]]:
        return similar_texts(i, [j for j, _ in ranked if j != i], index)

    chosen = choose(
        ranked,
        index,
        own=set(own),
        shape=form,
        printed=printed,
        similar=similar,
        min_margin=min_margin,
    )
    if chosen is None or chosen.score < SURE_SCORE:
        return None
    return Link(*chosen[:3], "card", chosen.versions)
