"""The linker's features and lexicon mapping taken for a whole batch: the same as text by text."""

from __future__ import annotations

import importlib
import json
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pytest
from conftest import FIXTURES, REALDATA

from pipeline.folding.translate import EnglishIndex, batch, reference
from pipeline.folding.translate import features as one_text
from pipeline.folding.translate.features import LANGUAGES, traits
from pipeline.folding.translate.lexicon import shipped
from pipeline.folding.translate.units import units_of
from pipeline.reading.parsers.mtgjson import LANGUAGES as MTGJSON_LANGUAGES
from pipeline.text.normalize import text_hash

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pipeline.folding.translate.lexicon import Lexicon

link_module = importlib.import_module("pipeline.folding.translate.link")

_SAMPLE = FIXTURES / "language" / "held-out-sample.jsonl"
_HAND = FIXTURES / "language" / "hand-translations.jsonl"
_MTGJSON = REALDATA / "mtgjson-2022"
# Texts where the patterns' edges are: symbols, rule numbers (702.62a, and a letter then a
# digit after one), full-width digits and letters, pauses beside numbers, names at a
# sentence's start or inside it, Korean particles, lone ideographs, case that changes length
# (İ) or depends on context (Σ), the separator's own character, nothing at all.
TRICKY = (
    "Tap {T}: add {G}. \uff30\uff41\uff59 \uff12 life, then 702.62a and 1.2a3 here. . . ok",
    "２枚のカード{T}を引く。Meddling Mageの能力。日",
    "유예를 {2} 카드 유예의 3개, Thalia의 능력은",
    "Σ İstanbul ΣΑΣ Foo Bar. Baz Qux! (1) (2)",
    " Leading Capital. . . and . . .5 and x. . .7 {. . .}",
    "a\x1eb {T} Card Name",
    "",
    "   ",
    "日本",
    "…...…",
    "{W/U}{10}{∞} 12.5 .5 5. x5 5x \uff15\uff10 \u2464",
)


def _texts() -> list[tuple[str, str]]:
    """The committed real texts in their languages, and every text in every language."""
    rows = [json.loads(line) for line in _SAMPLE.read_text(encoding="utf-8").splitlines()]
    found = [(row["text"], row["lang"]) for row in rows]
    found += [
        (text, lang)
        for text in (*TRICKY, *(t for t, _ in found[::100]))
        for lang in (*LANGUAGES, "en")
    ]
    return found


def test_batch_traits_are_each_texts_traits() -> None:
    """batch.traits() of 2,000 real texts and tricky ones equals features.traits() of each."""
    texts = _texts()
    assert {lang for _, lang in texts} >= set(LANGUAGES)
    found = batch.traits([text for text, _ in texts], [lang for _, lang in texts])
    words, anchors = found.words_of(), found.anchors_of()
    for row, (text, lang) in enumerate(texts):
        expected = traits(text, lang)
        assert (words[row], anchors[row]) == (expected.words, expected.anchors), (text, lang)
        assert found.shape(row) == expected.shape, (text, lang)
        assert list(found.marks[row].items()) == list(expected.marks.items()), (text, lang)


def test_the_faster_patterns_find_what_features_patterns_find() -> None:
    """Batch's patterns, the lookbehind after the first character, match the same."""
    joined = batch.SEP.join(text for text, _ in _texts())
    prepared = one_text.prepare(joined)
    for fast, slow in (
        (batch.NUMBER, one_text._NUMBER),
        (batch.CAPITALISED, one_text._CAPITALISED),
        (batch.SENTENCE_END, one_text._SENTENCE_END),
    ):
        for text in (joined, prepared, *TRICKY):
            spans = [m.span() for m in fast.finditer(text)]
            assert spans == [m.span() for m in slow.finditer(text)]


def _one_by_one(texts: Sequence[str], langs: Sequence[str]) -> batch.Traits:
    """batch.Traits made of features.traits() of each text: the previous path's features."""
    found = [traits(text, lang) for text, lang in zip(texts, langs, strict=True)]
    rows = np.arange(len(found), dtype=np.int64)
    return batch.Traits(
        len(found),
        np.repeat(rows, [len(t.words) for t in found]),
        pa.array(list(chain.from_iterable(t.words for t in found)), pa.string()),
        np.repeat(rows, [len(t.anchors) for t in found]),
        pa.array(list(chain.from_iterable(t.anchors for t in found)), pa.string()),
        np.asarray([t.shape[0] for t in found], dtype=np.int64),
        np.asarray([t.shape[1] for t in found], dtype=np.float64),
        [t.marks for t in found],
    )


def _mapped_one_by_one(
    self: EnglishIndex, traits: batch.Traits, langs: Sequence[str], lexicon: Lexicon
) -> Any:
    """EnglishIndex.mapped() of each text's lists: the previous path's lexicon mapping."""
    words, anchors = traits.words_of(), traits.anchors_of()
    featured = list(zip(langs, words, anchors, strict=True))
    return self.mapped(featured, lexicon)


def _linked(texts: list[Any], index: EnglishIndex) -> list[Any]:
    found: list[Any] = link_module._link_batch(units_of(texts, index), index, shipped())
    return found


@pytest.mark.slow
@pytest.mark.skipif(not _MTGJSON.is_dir(), reason="../shared/realdata is not beside this checkout")
def test_vectorised_links_are_the_per_text_links(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hand set and real card texts (KHM, STX) link as with everything taken text by text.

    The previous paths are put back by monkeypatching: features.traits() per text and
    EnglishIndex.mapped() of their lists, then also the decisions one text and card at a
    time (reference.link_step: card.choose() and link.decide() in Python); every link
    (original, score, margin, method, versions) is compared with the whole-batch path's.
    """
    items = [json.loads(line) for line in _HAND.read_text(encoding="utf-8").splitlines()]
    pool: dict[str, str] = {}
    own: dict[str, set[str]] = {}
    asked: list[Any] = []
    for code in ("KHM", "STX"):
        cards = json.loads((_MTGJSON / f"{code}.json").read_text(encoding="utf-8"))["data"]
        for card in cards["cards"]:
            for ruling in card.get("rulings", ()):
                pool[text_hash(ruling["text"])] = ruling["text"]
                own.setdefault(card["name"], set()).add(text_hash(ruling["text"]))
            if card.get("text"):
                pool[text_hash(card["text"])] = card["text"]
                own.setdefault(card["name"], set()).add(text_hash(card["text"]))
            for foreign in card.get("foreignData", ())[::2]:
                lang = MTGJSON_LANGUAGES.get(foreign.get("language", ""))
                if lang and foreign.get("text"):
                    asked.append((foreign["text"], lang, [own[card["name"]]], [card["name"]]))
    asked += [(i["text"], i["lang"], [own.get(i["card"], set())], [i["card"]]) for i in items]
    index = EnglishIndex(pool)
    vectorised = _linked(asked, index)
    monkeypatch.setattr(link_module, "batch_traits", _one_by_one)
    monkeypatch.setattr(EnglishIndex, "mapped_traits", _mapped_one_by_one)
    assert _linked(asked, EnglishIndex(pool)) == vectorised
    monkeypatch.setattr(link_module, "_link_step", reference.link_step)
    assert _linked(asked, EnglishIndex(pool)) == vectorised
    assert len(asked) == 3_219 + 140
    assert sum(link.original is not None for link in vectorised) > 1_000


def test_texts_ranked_many_steps_at_once_link_as_a_step_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The shortlists of several steps' texts in one product: the links of each step's alone.

    The held-out sample's translations, of no card (each is ranked among all), in steps of a
    few texts: ranked a step at a time (_RANKED 1), a few steps at once, or all at once.
    """
    rows = [json.loads(line) for line in _SAMPLE.read_text(encoding="utf-8").splitlines()]
    pool = {text_hash(row["text"]): row["text"] for row in rows if row["lang"] == "en"}
    asked: list[Any] = [
        (row["text"], row["lang"], [set()], [None]) for row in rows if row["lang"] != "en"
    ][:400]
    index = EnglishIndex(pool)
    monkeypatch.setattr(link_module, "_BATCH_CELLS", 16 * max(len(index), len(index.vocabulary)))
    found = []
    for ranked in (1, 50, 10_000):
        monkeypatch.setattr(link_module, "_RANKED", ranked)
        found.append(_linked(asked, index))
    assert found[0] == found[1] == found[2]
    assert sum(link.original is not None for link in found[0]) > 20
