"""Stripped mana symbols: re-keyed when the dataset holds the ruling, flagged otherwise."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline.columns import replace_column
from pipeline.folding.repair import repair
from pipeline.models import Kind, Layout, Sighting
from pipeline.reading.sightings import RULING_TEXT, TextPool, sightings_table
from pipeline.text.normalize import clean, text_hash

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
        text=text,
        card="Rift Bolt",
        card_printed="Rift Bolt",
        card_origin=None,
        effective_date=dt.date(2024, 2, 2),
        kind=Kind.RULING,
    )


def _table(sightings: list[Sighting]) -> pa.Table:
    """Sightings as ingest holds them: texts pooled, with the ruling_text column."""
    pool = TextPool()
    return pool.decode(pool.encode(sightings_table(sightings, run=1)))


def _repair(texts: list[str], known: list[str]) -> tuple[list[dict[str, object]], list[str]]:
    table = _table([_sighting(t, i) for i, t in enumerate(texts)])
    repaired, warnings = repair(table, known)
    return repaired.to_pylist(), warnings


def test_stripped_copy_takes_the_known_rulings_key() -> None:
    """A stripped copy of a stored ruling is keyed as that ruling; the repair is recorded."""
    [row], warnings = _repair([STRIPPED], [FULL])
    assert row["text_hash"] == text_hash(FULL)
    assert row[RULING_TEXT] == FULL
    assert row["text"] == clean(STRIPPED)  # what was read is kept (white space cleaned)
    assert row["repaired_from"] == text_hash(STRIPPED)
    assert row["symbol_gap"]
    assert warnings == []


def test_matches_within_the_same_batch_in_any_order() -> None:
    """The symbol version may come later in the same run."""
    for batch in ([STRIPPED, FULL], [FULL, STRIPPED]):
        rows, _ = _repair(batch, [])
        assert {r["text_hash"] for r in rows} == {text_hash(FULL)}


def test_single_space_copy_is_repaired_when_matched() -> None:
    """A copy whose gap collapsed to one space is still recognised by its skeleton."""
    one_space = "If the card has in its mana cost, you must choose 0 as the value of X."
    [row], _ = _repair([one_space], [FULL])
    assert row["text_hash"] == text_hash(FULL)
    assert not row["symbol_gap"]


def test_unmatched_gap_is_stored_as_read_with_its_flag() -> None:
    """Without a ruling to match, the stripped text is its own ruling, flagged."""
    [row], warnings = _repair([STRIPPED], ["Some other {T} ruling."])
    assert row["text_hash"] == text_hash(STRIPPED)
    assert row["repaired_from"] is None
    assert row["symbol_gap"]
    assert warnings == []


def test_several_candidates_are_not_guessed() -> None:
    """{X} and {2} both fit the gap: no repair, and a warning says why."""
    [row], warnings = _repair([STRIPPED], [FULL, FULL.replace("{X}", "{2}")])
    assert row["text_hash"] == text_hash(STRIPPED)
    assert warnings == ["a.txt #0: a stripped symbol matches 2 different rulings; stored as read"]


def test_texts_without_gaps_are_untouched() -> None:
    """Ordinary rulings pass through unchanged."""
    table = _table([_sighting("Cards exiled with suspend are exiled face up.")])
    assert repair(table, [FULL]) == (table, [])


def test_text_pool_keeps_each_text_with_its_own_hash() -> None:
    """Texts and hashes share the pool's ids across batches, even for a text no row holds."""
    pool = TextPool()
    first = sightings_table([_sighting("Alpha.", 0), _sighting("Beta.", 1)], run=1)
    second = sightings_table([_sighting("Gamma.", 0), _sighting("Alpha.", 1)], run=1)
    # Encoded as workers send batches, then sliced: "Gamma." stays in the dictionary only.
    encoded = replace_column(second, "text", pc.dictionary_encode(second["text"]))
    sliced = encoded.slice(1)
    table = pool.decode(pa.concat_tables([pool.encode(first), pool.encode(sliced)]))
    rows = table.select(["text", "text_hash"]).to_pylist()
    assert [row["text"] for row in rows] == ["Alpha.", "Beta.", "Alpha."]
    assert all(row["text_hash"] == text_hash(row["text"]) for row in rows)
    hashes: Any = table["text_hash"].combine_chunks()
    assert hashes.dictionary.to_pylist() == [text_hash(t) for t in ("Alpha.", "Beta.", "Gamma.")]


# Prints the ruling text a stripped copy is given when two known texts fold to one hash.
_TWIN_SCRIPT = """
from pipeline.folding.repair import repair
from tests.test_repair import _repair
curly = "If the card\u2019s cost has {X}, choose 0 as the value of X."
straight = "If the card's cost has {X}, choose 0 as the value of X."
[row], _ = _repair(["If the card's cost has   , choose 0 as the value of X."], [curly, straight])
print(row["ruling_text"])
"""


@pytest.mark.slow
def test_twin_known_texts_give_the_same_ruling_text_in_every_process() -> None:
    """Known texts that differ only in their quotes: the one kept does not hang on set order.

    Sets of strings iterate in an order that changes with each process's hash seed.
    """
    answers = set()
    for seed in ("1", "2", "3", "4", "5", "6"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _TWIN_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        answers.add(done.stdout.strip())
    assert len(answers) == 1
    assert "{X}" in answers.pop()
