"""What is in force today: a card's freshest sources, by what they state, language by language."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from collections import Counter
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, RAW, REALDATA

import pipeline
from pipeline import ingest
from pipeline.cli import cli
from pipeline.diffing.in_force import freshest_sources, in_force
from pipeline.publishing.dataset import load_history
from pipeline.schema import SCHEMA_VERSION, STATE, VERSION_KEY
from pipeline.storage import layout

if TYPE_CHECKING:
    from pathlib import Path

OLD, NEW = dt.date(2022, 4, 25), dt.date(2024, 2, 6)
_RULINGS = pa.schema([STATE.field(n) for n in ("text_hash", "card", "effective_date", "rule_id")]
                     + [pa.field("lang", pa.string())])  # fmt: skip
Row = tuple[str | None, str, dt.date | None, str | None, str]  # card, source, as_of, origin, hash


def _tables(rows: list[Row], **extra: Any) -> tuple[pa.Table, pa.Table]:
    """The rulings and state of ROWS; EXTRA gives some hashes a language, number or date."""
    langs, numbers = extra.get("langs", {}), extra.get("numbers", {})
    dates, oracles = extra.get("dates", {}), extra.get("oracles", {})
    state = pa.Table.from_pylist(
        [
            {"card": card, "oracle_id": oracles.get(text), "source": source, "run": 1,
             "as_of": as_of, "as_of_origin": origin, "source_path": source, "position": i,
             "text_hash": text, "effective_date": dates.get(text),
             "rule_id": numbers.get(text), "text": text}
            for i, (card, source, as_of, origin, text) in enumerate(rows)
        ],
        schema=STATE,
    )  # fmt: skip
    keys = sorted({(r[0], r[4]) for r in rows}, key=repr)
    rulings = pa.Table.from_pylist(
        [
            {"text_hash": text, "card": card, "effective_date": dates.get(text),
             "rule_id": numbers.get(text), "lang": langs.get(text, "en")}
            for card, text in keys
        ],
        schema=_RULINGS,
    )  # fmt: skip
    return rulings, state


def _flags(rows: list[Row], **extra: Any) -> dict[str, tuple[bool | None, bool | None]]:
    """Each text hash's (current, source_current)."""
    rulings, state = _tables(rows, **extra)
    current, source_current = in_force(rulings, state)
    hashes = [str(h) for h in rulings["text_hash"].to_pylist()]
    pairs = zip(current.to_pylist(), source_current.to_pylist(), strict=True)
    return dict(zip(hashes, pairs, strict=True))


def test_only_a_freshest_source_carries_what_is_in_force() -> None:
    """A text the freshest source carries is in force; one only the older source has is not."""
    flags = _flags([
        ("Rift Bolt", "mtgjson", OLD, "document", "shared"),
        ("Rift Bolt", "mtgjson", OLD, "document", "old-wording"),
        ("Rift Bolt", "dump", NEW, "manifest", "shared"),
        ("Rift Bolt", "dump", NEW, "manifest", "new-wording"),
        ("Other", "undated", None, None, "alone"),  # its only source: in force, dated or not
    ])  # fmt: skip
    assert flags == {
        "shared": (True, True),
        "old-wording": (False, True),  # its source's latest word, but not today's
        "new-wording": (True, True),
        "alone": (True, True),
    }


def test_an_undated_source_counts_as_the_stalest() -> None:
    """Beside a dated source, a source without an as-of date is the staler one."""
    flags = _flags([("X", "undated", None, None, "a"), ("X", "dated", OLD, "path", "b")])
    assert flags == {"a": (False, True), "b": (True, True)}


def test_a_modification_time_never_outranks_a_stated_date() -> None:
    """A dump copied today (its mtime) is not fresher than a build that states its day."""
    today = dt.date(2026, 12, 4)
    flags = _flags([
        ("Rift Bolt", "dump", today, "mtime", "dump-text"),
        ("Rift Bolt", "mtgjson", dt.date(2025, 8, 18), "document", "build-text"),
    ], dates={"dump-text": dt.date(2024, 2, 2)})  # fmt: skip
    assert flags == {"dump-text": (False, True), "build-text": (True, True)}


def test_the_newest_ruling_date_is_stated_evidence() -> None:
    """A dump holding 2024-02-02 rulings was saved on or after that day: fresher than 2022."""
    flags = _flags([
        ("Rift Bolt", "dump", dt.date(2026, 12, 4), "mtime", "dump-text"),
        ("Rift Bolt", "mtgjson", OLD, "document", "build-text"),
    ], dates={"dump-text": dt.date(2024, 2, 2)})  # fmt: skip
    assert flags == {"dump-text": (True, True), "build-text": (False, True)}


def test_modification_times_order_sources_that_state_nothing() -> None:
    """Of two dumps with no date but their files', the later file is the fresher."""
    flags = _flags([("X", "a", OLD, "mtime", "a-text"), ("X", "b", NEW, "mtime", "b-text")])
    assert flags == {"a-text": (False, True), "b-text": (True, True)}


def test_languages_are_weighed_apart() -> None:
    """A newer German dump retires no English ruling; a newer English one keeps the Korean."""
    flags = _flags([
        ("Rift Bolt", "mtgjson", OLD, "document", "english"),
        ("Rift Bolt", "german-dump", NEW, "manifest", "german"),
        ("Rift Bolt", "mixed", OLD, "document", "korean"),
        ("Rift Bolt", "english-dump", NEW, "manifest", "english-new"),
    ], langs={"german": "de", "korean": "ko"})  # fmt: skip
    assert flags == {
        "english": (False, True),  # the newer English dump is the freshest in English
        "german": (True, True),
        "korean": (True, True),  # the only Korean source
        "english-new": (True, True),
    }


def test_rows_without_a_card() -> None:
    """Numbered rules are weighed as one group, oracle ids as cards, other card-less rows alone."""
    flags = _flags([
        (None, "comprules", NEW, "document", "release-rule"),
        (None, "old-release", OLD, "document", "old-rule"),
        (None, "excerpt", dt.date(2026, 12, 4), "mtime", "excerpt-rule"),
        (None, "bulk-old", OLD, "manifest", "oracle-old"),
        (None, "bulk-new", NEW, "manifest", "oracle-new"),
        (None, "dump-a", OLD, "path", "unknown-a"),
        (None, "dump-b", NEW, "path", "unknown-b"),
    ], numbers={"release-rule": "702.62a", "old-rule": "702.61a"},
       oracles={"oracle-old": "o-1", "oracle-new": "o-1"})  # fmt: skip
    assert flags == {
        "release-rule": (True, True),
        "old-rule": (False, True),  # an older release's
        "excerpt-rule": (True, True),  # unnumbered: nothing to weigh it against
        "oracle-old": (False, True),
        "oracle-new": (True, True),
        "unknown-a": (True, True),  # of no known card: nothing to weigh it against
        "unknown-b": (True, True),
    }


def test_freshest_sources_are_named_per_card() -> None:
    """The site marks the sources whose rulings are in force."""
    rulings, state = _tables([
        ("X", "old", OLD, "document", "a"), ("X", "new", NEW, "document", "b"),
    ])  # fmt: skip
    assert freshest_sources(rulings, state) == {("X", "new")}


def _copy_now(source: Path, target: Path) -> None:
    """Copy SOURCE as a user would today: the copy's modification time is now."""
    shutil.copyfile(source, target)
    os.utime(target)


@pytest.mark.skipif(not REALDATA.is_dir(), reason="needs ../shared/realdata")
def test_today_holds_one_wording_of_rift_bolt(tmp_path: Path) -> None:
    """Seed 001 (2024-02-02 rulings) beside the 2022 TSP file: the default "today" is the seed's.

    Before version 8 the default `current` was per source: both suspend wordings came back
    (25 English rows) and `pipeline stats` counted every ruling current.
    """
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    raw.mkdir()
    _copy_now(RAW / "001_ca7dd0badab20c1e.txt", raw / "rift-bolt.txt")
    shutil.copy(REALDATA / "mtgjson-2022" / "TSP.json", raw / "TSP.json")
    ingest([raw], out=out)
    ds = pipeline.open_dataset(out)
    english = ds.rulings(card="Rift Bolt", lang="en")
    assert len(english) == 10
    assert not english["text"].str.contains("causes you to cast").any()
    sql = "SELECT count(*) FROM rulings WHERE current AND card = 'Rift Bolt' AND lang = 'en'"
    assert ds.duckdb().sql(sql).fetchall() == [(10,)]
    shown = CliRunner().invoke(cli, ["stats", "--out", str(out), "--json"])
    figures = json.loads(shown.output)["rulings"]
    assert figures["stale_source"] == 15  # MTGJSON's 2022 Rift Bolt rulings
    assert figures["current"] + figures["stale_source"] + figures["historical"] == figures["total"]
    history = CliRunner().invoke(cli, ["history", "Rift Bolt", "--out", str(out)]).output
    history = history.split("\nOracle text:")[0]  # the rulings' versions, not the card's
    marks = [
        re.search(r"\), (in force|only in a staler source) +\[(\S+)\]", line)
        for line in history.splitlines()
    ]
    assert Counter((m[2], m[1]) for m in marks if m) == {
        ("mtgjson", "only in a staler source"): 15,  # still in its source, not in force
        ("rift-bolt.txt", "in force"): 13,  # the 2024 English wording and the Korean rulings
    }


def _build_2025(tmp_path: Path) -> Path:
    """The Rift Bolt cut of the TSP file as a build that states 2025-08-18."""
    build = json.loads((FIXTURES / "raw" / "mtgjson-tsp-rift-bolt.json").read_text("utf-8"))
    build["meta"] = {"date": "2025-08-18", "version": "5.2.2+20250818"}
    path = tmp_path / "TSP.json"
    path.write_text(json.dumps(build), "utf-8")
    return path


def test_a_dump_copied_today_is_not_the_freshest_source(tmp_path: Path) -> None:
    """Seed 001 copied now beside a build of 2025-08-18: the build's rulings stay in force."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    raw.mkdir()
    _copy_now(RAW / "001_ca7dd0badab20c1e.txt", raw / "rift-bolt.txt")
    shutil.move(_build_2025(tmp_path), raw / "TSP.json")
    ingest([raw], out=out)
    today = pipeline.open_dataset(out).rulings(today=True, card="Rift Bolt")
    build = today[today["source_current"] & (today["lang"] == "en")]
    stale = set(build.loc[build["stale_source"], "text"])
    assert len(build) - len(stale) == 15  # every ruling of the build, none "may be out of date"
    assert len(stale) == 10  # the dump's English rulings: it states no date past 2024-02-02
    assert (today.loc[today["lang"] == "ko", "stale_source"] == False).all()  # noqa: E712


def _rift_bolt_as_built(ds: pipeline.Dataset) -> None:
    """The build's 15 rulings and the dump's 3 Korean ones in force, the dump's 10 English not."""
    assert len(ds.rulings(card="Rift Bolt", lang="en")) == 15, "the build's rulings are in force"
    assert len(ds.rulings(card="Rift Bolt", lang="ko")) == 3
    assert int(ds.rulings(current_only=False)["source_current"].sum()) == 28


def test_a_version_7_dataset_is_weighed_as_read_and_upgraded(tmp_path: Path) -> None:
    """The version-7 fixture held every MTGJSON ruling "stale": read, then upgraded, it is right.

    It was written by the version-7 store from seed 001 as `rift-bolt.txt` (modification
    time 2026-12-01) beside the Rift Bolt cut of TSP stating 2025-08-18.
    """
    out = tmp_path / "normalized"
    shutil.copytree(FIXTURES / "dataset-v7", out, symlinks=True)
    _rift_bolt_as_built(pipeline.open_dataset(out))  # weighed as read
    marks = Counter((e.source, e.in_force) for e in load_history(out, "Rift Bolt"))
    assert marks == {
        ("mtgjson", True): 15,
        ("rift-bolt.txt", True): 3,
        ("rift-bolt.txt", False): 10,
    }
    (tmp_path / "next").mkdir()
    ingest([_build_2025(tmp_path / "next")], out=out)  # the upgrade, then a run
    segment = next(layout.path_of(layout.pinned(out), "rulings").glob("*.parquet"))
    assert pq.read_schema(segment).metadata[VERSION_KEY] == str(SCHEMA_VERSION).encode()
    ds = pipeline.open_dataset(out)
    origins = {
        (r["source_path"], r["as_of_origin"]) for r in ds._version.table("state").to_pylist()
    }
    assert origins == {("TSP.json", "document"), ("rift-bolt.txt", "mtime")}
    _rift_bolt_as_built(ds)
