"""points.traits(): the features of many texts on their code points, the same as text by text."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from test_translate_batch import _texts

from pipeline.folding.translate import batch, points
from pipeline.folding.translate.features import LANGUAGES, traits

if TYPE_CHECKING:
    import pytest

# Where the code-point path differs from `re` or leaves a text to features.traits():
# characters Python's Unicode does not assign, past the plane, digits other than 0-9,
# apostrophes inside Latin names, letters the case-ignoring class holds, pauses side by side.
EDGES = (
    "Tap \u0378 here {T}.",
    "Draw a card \U0001f600 {2}.",
    "Pay \u0663 life, then 3.",
    "don'tÀx l'Été o'Neill's Ɐbc \u017ftop \u212a",
    ". .. . . . .5.5 x. 1.2.3 2a3 10.5b 7.x",
    "「Foo Bar」 «Baz Qux» (Quux Corge) \u201eGrault Garply\u201c",
    "{T}{T} {T } {123456789} {12345678} {{T}} {}",
    "  \u3000日本語の、カード。  ",
    "ΑΒΓ abc Ǆemal ǅx",
)


def test_points_traits_are_each_texts_traits() -> None:
    """points.traits() of 2,000 real texts and tricky ones equals features.traits() of each."""
    texts = _texts() + [(text, lang) for text in EDGES for lang in (*LANGUAGES, "en")]
    found = points.traits([text for text, _ in texts], [lang for _, lang in texts])
    words, anchors = found.words_of(), found.anchors_of()
    for row, (text, lang) in enumerate(texts):
        expected = traits(text, lang)
        assert (words[row], anchors[row]) == (expected.words, expected.anchors), (text, lang)
        assert found.shape(row) == expected.shape, (text, lang)
        assert list(found.marks[row].items()) == list(expected.marks.items()), (text, lang)


def test_points_traits_are_batch_traits_column_for_column(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same columns as batch.traits(), in any batch (one text, none, all, in steps)."""
    monkeypatch.setattr(points, "_STEP", 333)
    texts = _texts()
    for part in (texts, texts[:1], texts[:0], texts[7:300]):
        one = points.traits([t for t, _ in part], [lang for _, lang in part])
        other = batch.traits([t for t, _ in part], [lang for _, lang in part])
        assert one.size == other.size
        for name in ("word_rows", "anchor_rows", "sentences", "lengths"):
            assert np.array_equal(getattr(one, name), getattr(other, name)), name
        assert one.words.equals(other.words)
        assert one.anchors.equals(other.anchors)
        assert list(one.marks) == other.marks
