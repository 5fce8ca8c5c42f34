"""English texts' terms taken on their bytes (bytewise) are english_terms()' to the term."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pipeline.folding.translate import bytewise
from pipeline.folding.translate.features import marks, shape
from pipeline.folding.translate.terms import english_terms

if TYPE_CHECKING:
    import pytest

FIXTURES = Path(__file__).parent / "fixtures"
# What features' patterns turn on: symbols and braces, numbers and rule numbers with a
# letter, sentence ends before capitals, brackets and quotes, every kind of ASCII space.
PIECES = [
    "{T}",
    "{2}{U}",
    "{10}",
    "{abcdefghi}",
    "{a b}",
    "{",
    "}",
    "{{X}}",
    "{X}Abc",
    " {X} Abc",
    "702.62a",
    "702.62ab",
    "702.62a5",
    "1.5",
    ".5",
    "5.",
    "a5",
    "5a",
    "1.2.3",
    "12",
    "x1",
    "Rift Bolt",
    "McDonald",
    "If",
    "As",
    "Abc",
    "ABC",
    "aB",
    " Ab",
    ". Ab",
    "! Ab",
    "( Ab",
    '" Ab',
    "x Ab",
    "x  Ab",
    "x\tAb",
    "x\x0bAb",
    "x\x1cAb",
    "x\x1fAb",
    "\nAb",
    "I",
    "a",
    "suspend",
    "exiled",
    "exiles",
    "creature",
    "can't",
    "it's",
    "don't",
    " ",
    "  ",
    ".",
    ",",
    ";",
    ":",
    "?",
    "!",
    "(",
    ")",
    "'",
    '"',
    "-",
    "_",
    "x_y",
    "\x7f",
    "\x01",
    "~",
    "...",
    "..",
    ". .",
    "((",
    "(1)",
    "? ",
    "!\n",
    ".\t",
    "end.",
    "\u2019",
    "it\u2019s",
    "\u2014",
    " \u2014 ",
    "\u201cAb\u201d",
    "x \u201cAb",
    "\u00abAb\u00bb",
    "\u2022 ",
    "\u2212",
    "\u22121",
    "\u2013",
    "\u2018",
]


def _same(texts: list[str]) -> None:
    """Each text's terms, counts and names as english_terms() gives them."""
    assert bytewise.fast(texts).all()
    found = bytewise.english_terms(texts)
    assert found.vocabulary == sorted(set(found.vocabulary))
    for n, text in enumerate(texts):
        first, last = int(found.offsets[n]), int(found.offsets[n + 1])
        terms = [found.vocabulary[i] for i in found.ids[first:last].tolist()]
        assert (terms, found.counts[first:last].tolist(), found.named[first:last].tolist()) == (
            english_terms(text)
        ), text


def _shaped(texts: list[str]) -> None:
    """Each text's shape and marks as features.shape() and features.marks() give them.

    A mark's entries add up (as MarkList.of adds them), in the order of the first.
    """
    found = bytewise.shapes(texts)
    held: list[dict[str, int]] = [{} for _ in texts]
    for row, key, count in zip(
        found.rows.tolist(), found.keys.to_pylist(), found.counts.tolist(), strict=True
    ):
        held[row][key] = held[row].get(key, 0) + count
    for n, text in enumerate(texts):
        assert (int(found.sentences[n]), float(found.lengths[n])) == shape(text, "en"), text
        assert list(held[n].items()) == list(marks(text).items()), text


def _random(count: int, seed: int) -> list[str]:
    generator = random.Random(seed)
    return [
        "".join(generator.choice(PIECES) for _ in range(generator.randint(0, 30)))
        for _ in range(count)
    ]


def test_random_texts_of_the_patterns_edges() -> None:
    """Texts made of the pieces every pattern of features turns on, in random orders.

    Those with a curly quote or dash where a symbol might hold it are left out.
    """
    texts = ["", " ", "{T}", "Ab", " Ab", "a", *_random(3_000, 62)]
    taken = bytewise.fast(texts)
    assert taken.sum() > 2_000
    _same([text for text, ok in zip(texts, taken, strict=True) if ok])


def test_shapes_and_marks_of_random_texts() -> None:
    """The same texts' shapes and marks, those with a pause (". . .") left to features."""
    texts = ["", " ", "{T}", "a.", "(", "...", *_random(3_000, 63)]
    taken = bytewise.shaped(texts)
    assert taken.sum() > 1_000
    assert not taken[[". ." in text for text in texts]].any()
    _shaped([text for text, ok in zip(texts, taken, strict=True) if ok])


def test_real_english_texts() -> None:
    """The ASCII texts of the language fixtures: English card texts and rulings.

    And some Italian, Spanish and French ones: any ASCII text gives english_terms()' terms.
    """
    texts: set[str] = set()
    for name in ("hand-translations", "linking-sample", "held-out-sample"):
        lines = (FIXTURES / "language" / f"{name}.jsonl").read_text("utf-8").splitlines()
        for line in map(json.loads, lines):
            texts |= {line["text"], line.get("english", "")}
    english = sorted(text for text in texts if bytewise.fast([text])[0])
    assert len(english) > 500
    _same(english)


def test_chunks_make_one_vocabulary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts taken in many chunks give the table taken in one."""
    texts = [f"If {{T}} Rift Bolt {n} is exiled, Card{n % 7} is cast. 70{n}.1a" for n in range(50)]
    whole = bytewise.english_terms(texts)
    monkeypatch.setattr(bytewise, "_CHUNK_BYTES", 64)
    chunked = bytewise.english_terms(texts)
    assert whole.vocabulary == chunked.vocabulary
    for one, other in zip(whole[2:], chunked[2:], strict=True):
        assert np.array_equal(one, other)
    _same(texts)


def test_what_is_taken_on_bytes() -> None:
    """ASCII, curly quotes and dashes; no other character, no NUL, no quote in braces."""
    texts = {
        "plain": True,
        "caf\u00e9": False,
        "a\x00b": False,
        "\u2014": True,
        "": True,
        "it\u2019s {T}": True,
        "{T\u2019}": False,
        "{1234567\u2019}": False,  # eight inside: a symbol
        "{12345678\u2019}": True,  # nine: none
        "\u2026": False,
    }
    assert bytewise.fast(list(texts)).tolist() == list(texts.values())
