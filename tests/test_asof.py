"""A document's as-of date: the document, the manifest, the path, the modification time."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from typing import TYPE_CHECKING

import pytest
from conftest import FIXTURES

from pipeline import ingest
from pipeline.models import AsOfOrigin
from pipeline.reading.asof import AsOf, date_in_path, fetched_date, resolve_as_of

if TYPE_CHECKING:
    from pathlib import Path

TODAY = dt.date(2026, 11, 30)
DOC = dt.date(2022, 4, 25)
MTIME = dt.datetime(2024, 3, 1, 12, tzinfo=dt.UTC)
MTIME_NS = int(MTIME.timestamp()) * 1_000_000_000


@pytest.mark.parametrize(
    ("document", "fetched_at", "path", "expected"),
    [
        (DOC, "2025-01-02", "2025-08-18/TSP.json", AsOf(DOC, AsOfOrigin.DOCUMENT)),
        (None, "2025-01-02", "2025-08-18/TSP.json", AsOf(dt.date(2025, 1, 2), AsOfOrigin.MANIFEST)),
        (None, None, "2025-08-18/TSP.json", AsOf(dt.date(2025, 8, 18), AsOfOrigin.PATH)),
        (None, None, "dumps/TSP-20250818.json", AsOf(dt.date(2025, 8, 18), AsOfOrigin.PATH)),
        (None, "last Tuesday", "2025-08-18/a.txt", AsOf(dt.date(2025, 8, 18), AsOfOrigin.PATH)),
        (None, None, "TSP.json", AsOf(MTIME.date(), AsOfOrigin.MTIME)),
    ],
    ids=["document", "manifest", "path-iso", "path-compact", "bad-fetched-at", "mtime"],
)
def test_resolve_takes_the_first_source_that_gives_a_date(
    document: dt.date | None, fetched_at: str | None, path: str, expected: AsOf
) -> None:
    """Document, then manifest, then path, then modification time."""
    assert resolve_as_of(document, fetched_at, path, MTIME_NS, today=TODAY) == expected


def test_resolve_without_any_source_is_none() -> None:
    """No document date, fetched_at, path date nor mtime: no as-of date."""
    assert resolve_as_of(None, None, "a.txt", None, today=TODAY) is None


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("2024/2025-08-18/TSP.json", dt.date(2025, 8, 18)),  # the deepest date is the file's
        ("2025-08-18/TSP-20250101.json", dt.date(2025, 1, 1)),
        ("2025-08-18/card-12345678.txt", dt.date(2025, 8, 18)),  # no date: passed over
        ("20251332/a.txt", None),  # month 13
        ("1990-01-01/a.txt", None),  # before the first Magic set
        ("2099-01-01/a.txt", None),  # after today
        ("2026-12-01/a.txt", dt.date(2026, 12, 1)),  # a day ahead of UTC: another zone
        ("2025081812/a.txt", None),  # ten digits are not a date
        ("v2/TSP.json", None),
    ],
)
def test_date_in_path(path: str, expected: dt.date | None) -> None:
    """The last real calendar date in the path between 1993-08-05 and today (+1 day)."""
    assert date_in_path(path, today=TODAY) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-08-18", dt.date(2025, 8, 18)),
        ("2025-08-18T23:30:00", dt.date(2025, 8, 18)),  # no zone: the day as written
        ("2025-08-18T23:30:00-02:00", dt.date(2025, 8, 19)),  # a zone: the UTC day
        ("2025-08-18T10:00:00Z", dt.date(2025, 8, 18)),
        ("18/08/2025", None),
        ("", None),
        (None, None),
    ],
)
def test_fetched_date(text: str | None, expected: dt.date | None) -> None:
    """The manifest's fetched_at is read as an ISO date or date-time."""
    assert fetched_date(text) == expected


def test_each_stored_file_reports_its_as_of(tmp_path: Path) -> None:
    """Through the per-file stage: each file's as-of date and origin on its report."""
    raw = tmp_path / "raw"
    (raw / "2025-08-18").mkdir(parents=True)
    shutil.copy(FIXTURES / "raw" / "mtgjson-tsp-rift-bolt.json", raw / "2025-08-18" / "TSP.json")
    for name in ("in-path.txt", "fetched.txt", "bad-fetched.txt", "plain.txt"):
        folder = raw / "2025-08-18" if name == "in-path.txt" else raw
        shutil.copy(FIXTURES / "raw" / "mtgjson-tsp" / "rift-bolt.txt", folder / name)
    for name in ("plain.txt", "bad-fetched.txt"):
        os.utime(raw / name, ns=(MTIME_NS, MTIME_NS))
    (raw / "manifest.csv").write_text(
        "path,fetched_at\nfetched.txt,2025-01-02T08:00:00Z\nbad-fetched.txt,yesterday\n",
        encoding="utf-8",
    )
    report = ingest([raw], out=tmp_path / "out")
    assert {f.source_path: (f.as_of, f.as_of_origin) for f in report.files} == {
        "2025-08-18/TSP.json": (dt.date(2022, 4, 25), AsOfOrigin.DOCUMENT),
        "2025-08-18/in-path.txt": (dt.date(2025, 8, 18), AsOfOrigin.PATH),
        "fetched.txt": (dt.date(2025, 1, 2), AsOfOrigin.MANIFEST),
        "bad-fetched.txt": (MTIME.date(), AsOfOrigin.MTIME),
        "plain.txt": (MTIME.date(), AsOfOrigin.MTIME),
    }
    assert (
        "bad-fetched.txt: fetched_at 'yesterday' is not an ISO date: not used as the as-of date"
        in report.warnings
    )
