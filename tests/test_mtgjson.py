"""MTGJSON as a nightly job reads it: sets without rulings, cards sharing a name, a build."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, REALDATA

from pipeline import ingest
from pipeline.cli import cli
from pipeline.models import AsOfOrigin, FileStatus, SourceHints
from pipeline.reading.parsers import parse
from pipeline.reading.read import to_document
from pipeline.text.normalize import text_hash

if TYPE_CHECKING:
    from pathlib import Path

NO_RULINGS = FIXTURES / "raw" / "mtgjson-tsp-no-rulings.json"
SHARED_NAME = FIXTURES / "raw" / "mtgjson-shared-name.json"
BUILD = REALDATA / "mtgjson-2022"


def test_a_set_without_rulings_is_stored_and_exits_0(tmp_path: Path) -> None:
    """A set file whose cards carry no rulings is stored with 0 rulings beside a set with some."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(NO_RULINGS, raw / "TSP-none.json")
    shutil.copy(SHARED_NAME, raw / "XUS.json")
    result = CliRunner().invoke(cli, ["ingest", str(raw), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.stdout
    files = pq.read_table(tmp_path / "out" / "files.parquet").to_pylist()
    assert {(f["source_path"], f["status"], f["rulings"]) for f in files} == {
        ("TSP-none.json", "stored", 0),
        ("XUS.json", "stored", 3),
    }


def test_cards_sharing_a_name_keep_their_rulings() -> None:
    """Variants of one name each keep their own rulings; a reprint adds nothing."""
    doc = to_document(SHARED_NAME.name, SHARED_NAME.read_bytes(), SourceHints())
    parsed = parse(doc)
    rows = [(r.card, r.text.split(":")[0], r.position) for r in parsed.rulings]
    assert rows == [
        ("Sly Spy", "Synthetic ruling shared by every variant of this name.", 0),
        ("Sly Spy", "Synthetic ruling of variant A", 1),
        ("Sly Spy", "Synthetic ruling of variant B", 2),
    ]
    assert parsed.as_of == dt.date(2025, 8, 18)
    assert not parsed.warnings


def test_meta_date_that_is_no_date_is_reported() -> None:
    """A `meta.date` that does not read as a date is named in a warning, and not used."""
    data = b'{"meta": {"date": "April 2022"}, "data": {"cards": []}}'
    parsed = parse(to_document("x.json", data, SourceHints()))
    assert list(parsed.rulings) == []
    assert parsed.as_of is None
    assert parsed.warnings == [
        "meta.date 'April 2022' is not a date: the file's date is not used",
        "no cards found: stored with 0 rulings",
    ]


@pytest.mark.slow
@pytest.mark.skipif(not BUILD.is_dir(), reason="../shared/realdata is not beside this checkout")
def test_a_whole_build_loses_no_ruling(tmp_path: Path) -> None:
    """Every set file of the 2022 build: all stored, every distinct (card, ruling) a key."""
    expected: set[tuple[str, str, str]] = set()
    for path in BUILD.glob("*.json"):
        for card in json.loads(path.read_bytes())["data"]["cards"]:
            for ruling in card.get("rulings") or ():
                if ruling["text"].strip():  # one empty ruling text (STX) is skipped, reported
                    expected.add((card["name"], text_hash(ruling["text"]), ruling["date"]))
    report = ingest([BUILD], out=tmp_path / "out")
    assert not report.rejected
    assert {(f.status, f.as_of, f.as_of_origin) for f in report.files} == {
        (FileStatus.STORED, dt.date(2022, 4, 25), AsOfOrigin.DOCUMENT)
    }
    rulings = pq.read_table(tmp_path / "out" / "rulings").to_pylist()
    stored = {(r["card"], r["text_hash"], str(r["effective_date"])) for r in rulings}
    assert stored == expected
