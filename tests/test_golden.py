"""Each seed dump, ingested alone, gives exactly the rows in its golden file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import EXPECTED, RAW, SEEDS
from conftest import table as read_table

from pipeline import ingest

# Run-specific columns are left out so the golden files hold only what the seed decides.
_COLUMNS = [
    "position", "date_printed", "effective_date", "card", "card_printed", "card_origin",
    "kind", "lang", "layout", "date_ambiguous", "symbol_gap", "repaired_from", "text_hash",
    "text",
]  # fmt: skip


def _rows(seed: str, tmp_path: Path) -> list[dict[str, object]]:
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / seed, raw / seed)
    shutil.copy(RAW / "manifest.csv", raw / "manifest.csv")
    ingest([raw], out=tmp_path / "out")
    table = read_table(tmp_path / "out", "sightings").select(_COLUMNS)
    return [
        {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
        for row in table.to_pylist()
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_matches_golden(seed: str, tmp_path: Path, *, update_golden: bool) -> None:
    """The rows read from a seed are the ones a person checked line by line."""
    rows = _rows(seed, tmp_path)
    golden = EXPECTED / f"{Path(seed).stem}.jsonl"
    lines = [json.dumps(row, ensure_ascii=False, sort_keys=True) for row in rows]
    if update_golden:
        golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert golden.read_text(encoding="utf-8").splitlines() == lines


@pytest.mark.parametrize(
    ("seed", "rows", "langs", "card"),
    [
        ("000_3c6244a5804b91f0.txt", 19, {"en": 19}, "The Tenth Doctor"),
        ("001_ca7dd0badab20c1e.txt", 13, {"en": 10, "ko": 3}, "Rift Bolt"),
        ("002_389235662a8edeae.txt", 14, {"en": 11, "de": 3}, "Dichotomagie"),
        ("003_4e428d287bba6602.txt", 17, {"en": 17}, None),
        ("004_e3d798cbdd5ef25d.txt", 14, {"en": 14}, None),
    ],
    ids=["000-plain-iso", "001-plain-dmy-korean", "002-german", "003-bullet", "004-rules"],
)
def test_seed_counts(
    seed: str, rows: int, langs: dict[str, int], card: str | None, tmp_path: Path
) -> None:
    """Row counts, languages and card of each seed are those the specification names."""
    found = _rows(seed, tmp_path)
    assert len(found) == rows
    counts: dict[str, int] = {}
    for row in found:
        counts[str(row["lang"])] = counts.get(str(row["lang"]), 0) + 1
    assert counts == langs
    assert {row["card"] for row in found} == {card}


def test_seed_001_dates_are_day_first(tmp_path: Path) -> None:
    """19/03/2021 makes the document day-first, so 07/06/2013 is 7 June."""
    found = _rows("001_ca7dd0badab20c1e.txt", tmp_path)
    dates = {row["date_printed"]: row["effective_date"] for row in found}
    assert dates == {
        "02/02/2024": "2024-02-02",
        "19/03/2021": "2021-03-19",
        "07/06/2013": "2013-06-07",
    }


def test_seed_004_is_rules_without_dates(tmp_path: Path) -> None:
    """The rules excerpt gives undated rows of kind rule; its headings are not rows."""
    found = _rows("004_e3d798cbdd5ef25d.txt", tmp_path)
    assert {row["kind"] for row in found} == {"rule"}
    assert {row["effective_date"] for row in found} == {None}
    assert not {"Search", "Suspend"} & {row["text"] for row in found}
