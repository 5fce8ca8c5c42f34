"""The translations table of real texts, row for row and bit for bit, against a golden file.

Linking is made faster step by step; each step must give the same table: the same rows in
the same order, the same originals and methods, the same scores and margins to float
equality. The input is real: 91 cards of the 22 MTGJSON 2022 set files (their English
printed text and rulings, their printed translations, a third of them of no known card)
and the 140 hand-translated rulings.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
from typing import Any

import pyarrow as pa
import pytest
from conftest import EXPECTED, FIXTURES

from pipeline.folding.translate import translations_table
from pipeline.text.normalize import text_hash

link_module = importlib.import_module("pipeline.folding.translate.link")

_SAMPLE = FIXTURES / "language" / "linking-sample.jsonl"
_HAND = FIXTURES / "language" / "hand-translations.jsonl"
_GOLDEN = EXPECTED / "translations-linked.jsonl"


def _rulings() -> pa.Table:
    """The sample's texts and the hand set's as a rulings table (LINK_COLUMNS)."""
    rows = [json.loads(line) for line in _SAMPLE.read_text(encoding="utf-8").splitlines()]
    for item in (json.loads(line) for line in _HAND.read_text(encoding="utf-8").splitlines()):
        rows.append({"card": item["card"], "lang": "en", "text": item["english"], "date": None})
        rows.append({"card": item["card"], "lang": item["lang"], "text": item["text"]})
    return pa.table(
        {
            "text_hash": [text_hash(row["text"]) for row in rows],
            "card": pa.array([row["card"] for row in rows], pa.string()),
            "lang": [row["lang"] for row in rows],
            "text": [row["text"] for row in rows],
            "current": [True] * len(rows),
            "effective_date": pa.array(
                [dt.date.fromisoformat(d) if (d := row.get("date")) else None for row in rows],
                pa.date32(),
            ),
            "first_run": pa.array([1] * len(rows), pa.int64()),
        }
    )


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "two-workers"])
def test_translations_of_real_texts_are_the_golden_ones(
    workers: int, monkeypatch: pytest.MonkeyPatch, *, update_golden: bool
) -> None:
    """translations_table() of the real sample equals the golden rows exactly, on 1 or 2 workers.

    The golden rows were written by the linker before its speed-ups (commit 34a0537);
    `--update-golden` rewrites them (read the diff before committing: a changed link is
    a changed result, not a speed-up).
    """
    monkeypatch.setattr(link_module, "PARALLEL_MIN", 1)  # so two workers are forked
    found: list[dict[str, Any]] = translations_table(_rulings(), workers=workers).to_pylist()
    if update_golden and workers == 1:
        lines = (json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in found)
        _GOLDEN.write_text("".join(lines), encoding="utf-8")
    expected = [json.loads(line) for line in _GOLDEN.read_text(encoding="utf-8").splitlines()]
    assert len(found) == len(expected) == 951
    for row, want in zip(found, expected, strict=True):
        assert row == want  # floats compared exactly: JSON keeps a float's every bit
    methods = {row["method"] for row in found}
    assert {"card", "dataset", "unsure"} <= methods
