"""Archives: several versions of a document in one run are history, in as-of order."""

from __future__ import annotations

import datetime as dt
import shutil
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from conftest import RAW, REALDATA, rows

from pipeline import ingest
from pipeline.reading.asof import undated

if TYPE_CHECKING:
    from pathlib import Path

RULES = REALDATA / "comprules"
SEED_2013 = RAW / "001_ca7dd0badab20c1e.txt"  # Rift Bolt, dates day first, three Korean
VERSIONS = {
    "2021-03-19": "Rift Bolt\n\n19/03/2021\n\nCards exiled with suspend are exiled face up.\n",
    "2023-06-01": (
        "Rift Bolt\n\n19/03/2021\n\nCards exiled with suspend are exiled face up.\n\n"
        "01/06/2023\n\nIf the first triggered ability of suspend is countered, the card stays.\n"
    ),
    "2024-02-02": (
        "Rift Bolt\n\n02/02/2024\n\nCards exiled with suspend are exiled face up, always.\n"
    ),
}


def _change_key(row: dict[str, object]) -> tuple[object, ...]:
    names = ("as_of", "card", "source", "change", "old_text_hash", "new_text_hash", "old_date",
             "new_date", "old_rule_id", "new_rule_id", "first_seen", "group")  # fmt: skip
    return tuple(row[name] for name in names)


def _same_history(one: Path, many: Path) -> None:
    """One run over an archive and one run per version tell the same history."""
    assert Counter(map(_change_key, rows(one, "changes"))) == Counter(
        map(_change_key, rows(many, "changes"))
    )
    wanted = ("text_hash", "card", "effective_date", "current")
    ruled = [[{k: r[k] for k in wanted} for r in rows(out, "rulings")] for out in (one, many)]
    assert ruled[0] == ruled[1]


@pytest.mark.parametrize(
    "order",
    [["2021-03-19", "2023-06-01", "2024-02-02"], ["2024-02-02", "2021-03-19", "2023-06-01"]],
)
def test_dated_folders_in_one_run_are_history(tmp_path: Path, order: list[str]) -> None:
    """Dumps of one card in three dated folders: one run gives what three runs in order do."""
    archive = tmp_path / "archive"
    for day in order:  # the order the folders are made in, not their dates, varies
        (archive / day).mkdir(parents=True)
        (archive / day / "rift-bolt.txt").write_text(VERSIONS[day], encoding="utf-8")
    ingest([archive], out=tmp_path / "one")
    for day in sorted(VERSIONS):
        single = tmp_path / f"raw-{day}"
        (single / day).mkdir(parents=True)
        (single / day / "rift-bolt.txt").write_text(VERSIONS[day], encoding="utf-8")
        ingest([single], out=tmp_path / "many")
    _same_history(tmp_path / "one", tmp_path / "many")
    changes = [(r["as_of"], r["change"]) for r in rows(tmp_path / "one", "changes")]
    assert changes == [
        (dt.date(2021, 3, 19), "added"),
        (dt.date(2023, 6, 1), "added"),
        (dt.date(2024, 2, 2), "amended"),
        (dt.date(2024, 2, 2), "removed"),
    ]
    current = [r["text"] for r in rows(tmp_path / "one", "rulings") if r["current"]]
    assert current == ["Cards exiled with suspend are exiled face up, always."]
    assert {r["source"] for r in rows(tmp_path / "one", "sightings")} == {"rift-bolt.txt"}


def test_an_older_version_read_later_is_history(tmp_path: Path) -> None:
    """A version older than the stored one is kept, but never current and never compared."""
    newer, older = tmp_path / "newer" / "2024-02-02", tmp_path / "older" / "2021-03-19"
    for folder, day in ((newer, "2024-02-02"), (older, "2021-03-19")):
        folder.mkdir(parents=True)
        (folder / "rift-bolt.txt").write_text(VERSIONS[day], encoding="utf-8")
    out = tmp_path / "out"
    ingest([newer.parent], out=out)
    report = ingest([older.parent], out=out)
    assert report.warnings == (
        (
            "2021-03-19/rift-bolt.txt: as of 2021-03-19, older than the version already stored "
            "of 1 card (Rift Bolt): kept as history, not compared, not current"
        ),
    )
    assert [r["run"] for r in rows(out, "changes")] == [1]
    current = {r["text"]: r["current"] for r in rows(out, "rulings")}
    assert current == {
        "Cards exiled with suspend are exiled face up, always.": True,
        "Cards exiled with suspend are exiled face up.": False,
    }
    assert {r["run"] for r in rows(out, "sightings")} == {1, 2}


@pytest.mark.slow
@pytest.mark.skipif(not RULES.is_dir(), reason="../shared/realdata is not beside this checkout")
def test_rules_releases_in_one_run_are_runs_in_order(tmp_path: Path) -> None:
    """Comprehensive Rules releases in one run: the changes and rules of one run each.

    The last two releases, the suspend change between them; all four give the same 4,416
    changes either way (measured: 79 s in one run, 86 s in four), too slow for every test run.
    """
    releases = sorted(RULES.glob("*.txt"))[-2:]
    one = tmp_path / "one"
    one.mkdir()
    for release in reversed(releases):
        shutil.copy(release, one)
    ingest([one], out=tmp_path / "dataset-one")
    for release in releases:
        single = tmp_path / release.stem
        single.mkdir()
        shutil.copy(release, single)
        ingest([single], out=tmp_path / "dataset-many")
    _same_history(tmp_path / "dataset-one", tmp_path / "dataset-many")
    suspend = [
        (r["as_of"], r["change"])
        for r in rows(tmp_path / "dataset-one", "changes")
        if "702.62a" in (r["old_rule_id"], r["new_rule_id"]) and not r["first_seen"]
    ]
    assert suspend == [(dt.date(2024, 2, 2), "amended")]  # the release says "effective as of
    # February 2, 2024": the file is named for the day it was published, 2024-02-06


@pytest.mark.parametrize(
    ("path", "document"),
    [
        ("2025-08-18/TSP.json", "TSP.json"),
        ("raw/20250818/rift-bolt.txt", "raw/rift-bolt.txt"),
        ("rift-bolt-2024-02-02.txt", "rift-bolt.txt"),
        ("rift-bolt_20240202.txt", "rift-bolt.txt"),
        ("2024-02-02.txt", "2024-02-02.txt"),
        ("000_3c6244a5804b91f0.txt", "000_3c6244a5804b91f0.txt"),
    ],
)
def test_a_document_is_named_without_its_dates(path: str, document: str) -> None:
    """Versions of one dump share a source: their path less the dates in it."""
    assert undated(path) == document
