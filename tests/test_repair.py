"""Stripped mana symbols: re-keyed when the dataset holds the ruling, flagged otherwise."""

from __future__ import annotations

import datetime as dt

from pipeline.models import Kind, Layout, Sighting
from pipeline.normalize import has_symbol_gap, text_hash
from pipeline.repair import repair

FULL = "If the card has {X} in its mana cost, you must choose 0 as the value of X."
STRIPPED = "If the card has \u00a0 in its mana cost, you must choose 0 as the value of X."


def _sighting(text: str, position: int = 0) -> Sighting:
    return Sighting(
        source_path="a.txt",
        source_sha256="0" * 64,
        source="a.txt",
        layout=Layout.PLAIN,
        position=position,
        date_printed="2024-02-02",
        text_hash=text_hash(text),
        text=text,
        card="Rift Bolt",
        card_printed="Rift Bolt",
        card_origin=None,
        effective_date=dt.date(2024, 2, 2),
        kind=Kind.RULING,
        date_ambiguous=False,
        symbol_gap=has_symbol_gap(text),
    )


def test_stripped_copy_takes_the_known_rulings_key() -> None:
    """A stripped copy of a stored ruling is keyed as that ruling; the repair is recorded."""
    [out], warnings = repair([_sighting(STRIPPED)], [FULL])
    assert out.text_hash == text_hash(FULL)
    assert out.ruling_text == FULL
    assert out.text == STRIPPED  # what was read is kept
    assert out.repaired_from == text_hash(STRIPPED)
    assert out.symbol_gap
    assert warnings == []


def test_matches_within_the_same_batch_in_any_order() -> None:
    """The symbol version may come later in the same run."""
    for batch in (
        [_sighting(STRIPPED), _sighting(FULL, 1)],
        [_sighting(FULL), _sighting(STRIPPED, 1)],
    ):
        out, _ = repair(batch, [])
        assert {s.text_hash for s in out} == {text_hash(FULL)}


def test_single_space_copy_is_repaired_when_matched() -> None:
    """A copy whose gap collapsed to one space is still recognised by its skeleton."""
    one_space = "If the card has in its mana cost, you must choose 0 as the value of X."
    [out], _ = repair([_sighting(one_space)], [FULL])
    assert out.text_hash == text_hash(FULL)
    assert not out.symbol_gap


def test_unmatched_gap_is_stored_as_read_with_its_flag() -> None:
    """Without a ruling to match, the stripped text is its own ruling, flagged."""
    [out], warnings = repair([_sighting(STRIPPED)], ["Some other {T} ruling."])
    assert out.text_hash == text_hash(STRIPPED)
    assert out.repaired_from is None
    assert out.symbol_gap
    assert warnings == []


def test_several_candidates_are_not_guessed() -> None:
    """{X} and {2} both fit the gap: no repair, and a warning says why."""
    other = FULL.replace("{X}", "{2}")
    [out], warnings = repair([_sighting(STRIPPED)], [FULL, other])
    assert out.text_hash == text_hash(STRIPPED)
    assert warnings == ["a.txt #0: a stripped symbol matches 2 different rulings; stored as read"]


def test_texts_without_gaps_are_untouched() -> None:
    """Ordinary rulings pass through unchanged."""
    plain = _sighting("Cards exiled with suspend are exiled face up.")
    assert repair([plain], [FULL]) == ([plain], [])
