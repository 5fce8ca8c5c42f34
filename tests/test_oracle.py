"""diffing/oracle.py: card versions per source, Oracle changes and their edits, as plain data."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from pipeline.diffing.oracle import Reading, oracle_run
from pipeline.diffing.oracle_text import edits
from pipeline.models import CardFace, CardFacts
from pipeline.schema import CARD_VERSIONS

BUILD = dt.date(2022, 4, 25)


def _bolt(text: str, *, legal: str = "legal") -> CardFacts:
    face = CardFace("Rift Bolt", "{2}{R}", "Sorcery", text)
    return CardFacts(
        "Rift Bolt",
        "rift-id",
        "normal",
        (face,),
        types=("Sorcery",),
        legalities=(("modern", legal),),
    )


def _read(facts: CardFacts, day: dt.date, source: str = "mtgjson") -> Reading:
    return Reading(facts, source, f"{source}-{day}.json", day)


def test_self_references_reworded_are_one_edit_wherever_they_stand() -> None:
    """A name opening a sentence, ending one, before a colon or a possessive: ("~", "this ~")."""
    pairs = [
        ("Amrou Seekers can't be blocked.", "This creature can't be blocked.", "Amrou Seekers"),
        ("Untap Brass Gnat.", "Untap this creature.", "Brass Gnat"),
        ("Remove counters from Calciform Pools: Add X.", "Remove counters from this land: Add X.",
         "Calciform Pools"),
        ("Ixidron's power is 2.", "This creature's power is 2.", "Ixidron"),
    ]  # fmt: skip
    assert {tuple(edits(old, new, [name])) for old, new, name in pairs} == {(("~", "this ~"),)}


def test_the_suspend_reminder_is_not_a_self_reference() -> None:
    """The 2024 reminder text: its own edits, with no self-reference among them."""
    old = "When the last is removed, cast it without paying its mana cost."
    new = "When you remove the last, you may play it without paying its mana cost."
    found = edits(old, new, ["Rift Bolt"])
    assert ("~", "this ~") not in found
    assert ("cast it", "you may play it") in found


def test_the_same_facts_read_again_write_nothing() -> None:
    """A later document of the same card, nothing changed: no version, no change."""
    first = oracle_run(CARD_VERSIONS.empty_table(), [_read(_bolt("Deal 3."), BUILD)], 1)
    again = oracle_run(first.versions, [_read(_bolt("Deal 3."), dt.date(2025, 1, 1))], 2)
    assert (again.versions.num_rows, again.changes.num_rows) == (0, 0)
    assert again.cards.to_pylist() == first.cards.to_pylist()


def test_a_legality_change_is_a_version_but_no_oracle_change() -> None:
    """Banned in modern: a new version of the card's facts; its Oracle text is unchanged."""
    first = oracle_run(CARD_VERSIONS.empty_table(), [_read(_bolt("Deal 3."), BUILD)], 1)
    banned = _read(_bolt("Deal 3.", legal="banned"), dt.date(2025, 1, 1))
    second = oracle_run(first.versions, [banned], 2)
    assert second.versions.num_rows == 1
    assert second.changes.num_rows == 0
    [card] = second.cards.to_pylist()
    assert (card["legal_in"], card["oracle_versions"], card["oracle_since"]) == ([], 1, BUILD)


def test_an_errata_reverted_is_two_changes() -> None:
    """A -> B -> A: the third reading differs from the version in force (B), so it is kept."""
    stored = CARD_VERSIONS.empty_table()
    texts = ["Deal 3.", "Deal 2.", "Deal 3."]
    changes = []
    for run, text in enumerate(texts, start=1):
        made = oracle_run(stored, [_read(_bolt(text), dt.date(2020 + run, 1, 1))], run)
        stored = pa.concat_tables([stored, made.versions])
        changes += made.changes.to_pylist()
    assert [(c["run"], c["change"]) for c in changes] == [(2, "amended"), (3, "amended")]
    [card] = made.cards.to_pylist()
    assert (card["oracle_text"], card["oracle_versions"]) == ("Deal 3.", 3)


def test_sources_are_their_own_histories() -> None:
    """Scryfall saying otherwise than MTGJSON is no change; the fresher speaks for the card."""
    mtgjson = _read(_bolt("Deal 3."), BUILD)
    scryfall = _read(_bolt("Deal 3 damage."), dt.date(2022, 5, 1), "scryfall")
    made = oracle_run(CARD_VERSIONS.empty_table(), [mtgjson, scryfall], 1)
    assert made.versions.num_rows == 2
    assert made.changes.num_rows == 0
    [card] = made.cards.to_pylist()
    assert (card["source"], card["oracle_text"]) == ("scryfall", "Deal 3 damage.")
