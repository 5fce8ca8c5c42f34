"""Text folding, hashing, stripped-symbol gaps and card titles."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.text import normalize
from pipeline.text.normalize import (
    card_from_title,
    clean,
    fold,
    has_symbol_gap,
    has_symbols,
    hash_clean,
    skeleton,
    text_hash,
)


@given(st.text())
def test_fold_is_idempotent(text: str) -> None:
    """Folding folded text changes nothing."""
    assert fold(fold(text)) == fold(text)


@given(st.text())
def test_clean_is_idempotent_and_hash_ignores_cleaning(text: str) -> None:
    """Cleaning is idempotent and never changes the hash; the hot path agrees."""
    assert clean(clean(text)) == clean(text)
    assert text_hash(clean(text)) == text_hash(text) == hash_clean(clean(text))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("isn\u2019t", "isn't"),
        ("\u201cSuspend.\u201d", '"Suspend."'),
        ("\u201eausgesetzte Karte\u201c", '"ausgesetzte Karte"'),
        ("face\u00a0up.", "face up."),
        ("  face \t\n up.  ", "face up."),
        ("Cafe\u0301", "Caf\u00e9"),
        ("zero\u200bwidth", "zerowidth"),
    ],
    ids=["apostrophe", "double-quotes", "german-quotes", "nbsp", "whitespace", "nfc", "zwsp"],
)
def test_typography_does_not_change_the_hash(a: str, b: str) -> None:
    """Typographic variants are one ruling."""
    assert text_hash(a) == text_hash(b)


def test_hash_is_sha256_of_folded_utf8() -> None:
    """The key is the lowercase hex sha256 of the folded text."""
    assert text_hash(" isn\u2019t\u00a0 so ") == hashlib.sha256(b"isn't so").hexdigest()
    assert text_hash("a") != text_hash("b")


def test_clean_keeps_readable_typography() -> None:
    """The stored text keeps curly quotes; only white space is cleaned."""
    assert clean(" isn\u2019t\u00a0 here ") == "isn\u2019t here"


@pytest.mark.parametrize(
    ("raw", "gap"),
    [
        ("If the card has \u00a0 in its mana cost", True),
        ("If the card has   in its mana cost", True),
        ("Add  to your mana pool.", True),
        ("If the card has {X} in its mana cost", False),
        ("It is exiled.  Then it returns.", False),
        ("  indented text with one space ", False),
        ("Erh\u00e4lt\u202f Lebenspunkte", True),
        ("Erh\u00e4lt 1 Lebenspunkt.", False),
    ],
    ids=[
        "nbsp",
        "spaces",
        "two-spaces",
        "with-symbol",
        "after-full-stop",
        "edges",
        "narrow-nbsp",
        "accents",
    ],
)
def test_symbol_gap(raw: str, *, gap: bool) -> None:
    """A gap between words is what a stripped symbol leaves; sentence spacing is not."""
    assert has_symbol_gap(raw) is gap


@given(st.text(alphabet=st.sampled_from(" \t\u00a0\u2007\u202f.a\u00e9{}"), max_size=30))
def test_symbol_gap_shortcut_answers_as_the_pattern(raw: str) -> None:
    """The quick look that skips the pattern never skips a text the pattern would flag."""
    assert has_symbol_gap(raw) is (normalize._GAP.search(raw.strip()) is not None)


def test_skeleton_matches_stripped_copies() -> None:
    """With its symbols removed, a ruling equals its stripped copies."""
    full = "If the card has {X} in its mana cost, pay {2}{G/P}."
    assert has_symbols(full)
    assert not has_symbols("If the card has in its mana cost, pay .")
    assert skeleton(full) == skeleton("If the card has \u00a0 in its mana cost, pay .")
    assert skeleton(full) == "If the card has in its mana cost, pay ."


@pytest.mark.parametrize(
    ("title", "card"),
    [
        ("Rift Bolt", "Rift Bolt"),
        ("Dichotomagie", "Dichotomagie"),
        ("  The Tenth Doctor ", "The Tenth Doctor"),
        ("Card Rulings", None),
        ("Rulings", None),
        ("SEARCH", None),
        ("Rulings for Rift Bolt", "Rift Bolt"),
        ("Rift Bolt - Rulings", "Rift Bolt"),
        ("Cards exiled with suspend are exiled face up.", None),
        (None, None),
    ],
)
def test_card_from_title(title: str | None, card: str | None) -> None:
    """A title names a card unless it is a generic heading or a sentence."""
    assert card_from_title(title) == card
