"""Sightings carried by reference: a re-read stores what changed, readers see every sighting."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES, RAW, REALDATA
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import ingest, open_dataset
from pipeline.errors import StoreError
from pipeline.publishing.dataset import load_changeset
from pipeline.schema import CARRY_COLUMNS, TABLES
from pipeline.storage import carry, layout, store

if TYPE_CHECKING:
    from pathlib import Path

TSP = REALDATA / "mtgjson-2022" / "TSP.json"
needs_realdata = pytest.mark.skipif(not TSP.is_file(), reason="needs ../shared/realdata")
V5 = FIXTURES / "dataset-v5"  # three runs written by the version-5 code (fixtures README)
# The day dataset-v5 was written, its files' as-of date (from their mtime): a replay today
# must date its files that day too, each write a second later than the last.
_V5_DAY = itertools.count(1796299200 * 10**9, 10**9)  # 2026-12-03 12:00 UTC


_COLUMNS = [
    ("run", pa.int64()),
    ("source_path", pa.string()),
    ("source_sha256", pa.string()),
    ("position", pa.int64()),
    ("text_hash", pa.dictionary(pa.int32(), pa.string())),
    ("card", pa.string()),
]


def _part(run: int, files: dict[str, list[str]], sha: str) -> pa.Table:
    """A run's sightings as ingest hands them to carry: one row a ruling, in file order."""
    rows = [
        {"run": run, "source_path": path, "source_sha256": f"{sha}-{path}", "position": n,
         "text_hash": text, "card": text[:1] or None}
        for path, texts in sorted(files.items()) for n, text in enumerate(texts)
    ]  # fmt: skip
    schema = pa.schema([pa.field(name, kind) for name, kind in _COLUMNS])
    return pa.Table.from_pylist(rows, schema=schema)


def _stored(table: pa.Table) -> pa.Table:
    """TABLE as a part written in full is read back: every carry column null."""
    return carry.by_reference(table, table.slice(0, 0))


def _plain(table: pa.Table) -> list[dict[str, Any]]:
    """TABLE's rows in the columns of _part(), the text hashes as plain strings."""
    schema = pa.schema([pa.field(n, pa.string() if n == "text_hash" else k) for n, k in _COLUMNS])
    return table.select(schema.names).cast(schema).to_pylist()


_TEXTS = st.sampled_from(["a1", "a2", "b1", "b2", "c1", "", "a1"])
_EDIT = st.tuples(st.sampled_from(["keep", "amend", "insert", "drop"]), _TEXTS)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    base=st.dictionaries(st.sampled_from(["x.json", "y.json"]), st.lists(_TEXTS, max_size=40),
                         min_size=1),
    edits=st.lists(_EDIT, max_size=60),
)  # fmt: skip
def test_carried_rows_expand_to_the_sightings_they_stand_for(
    base: dict[str, list[str]], edits: list[tuple[str, str]]
) -> None:
    """Any edit of a file's rulings: what is stored expands to exactly the run's sightings.

    Repeated texts in a file, files that vanish or appear, empty and null cards included;
    a content filter (by card) gives the same rows as filtering the sightings themselves.
    """
    new_files = {}
    for path, texts in base.items():
        edited = list(texts)
        for n, (edit, text) in enumerate(edits):
            at = n % (len(edited) + 1)
            if edit == "amend" and at < len(edited):
                edited[at] = text + "!"
            elif edit == "insert":
                edited.insert(at, text)
            elif edit == "drop" and at < len(edited):
                edited.pop(at)
        new_files[path] = edited
    new_files["z.json"] = ["a1"]  # a file the base does not have
    old, new = _stored(_part(1, base, "old")), _part(2, new_files, "new")
    stored = carry.by_reference(new, old)
    assert _plain(carry.expanded(stored, {1: old})) == _plain(new)
    wanted = pa.scalar("a", pa.string())
    only_a = carry.expanded(stored, {1: old}, content=lambda t: pc.equal(t["card"], wanted))
    assert _plain(only_a) == _plain(new.filter(pc.equal(new["card"], wanted)))
    carried = stored.filter(pc.is_valid(stored["carried"]))
    in_full = stored.num_rows - carried.num_rows
    assert int(pc.sum(carried["carried"]).as_py() or 0) + in_full == new.num_rows


def test_an_unchanged_file_is_one_row_and_a_changed_one_costs_its_change() -> None:
    """Re-read unchanged, a file is one carried row; one amendment splits it around itself."""
    texts = [f"t{n}" for n in range(50)]
    old = _stored(_part(1, {"x.json": texts}, "old"))
    same = carry.by_reference(_part(2, {"x.json": texts}, "new"), old)
    assert same.select(["position", *CARRY_COLUMNS]).to_pylist() == [
        {"position": 0, "carried": 50, "base_run": 1, "base_position": 0}
    ]
    assert same["text_hash"].to_pylist() == [None]  # the content is the base's
    assert same["source_sha256"].to_pylist() == ["new-x.json"]  # the file's own columns kept
    amended = [*texts[:20], "t20 reworded", *texts[21:]]
    one = carry.by_reference(_part(2, {"x.json": amended}, "new"), old)
    assert one.select(["position", "text_hash", *CARRY_COLUMNS]).to_pylist() == [
        {"position": 0, "text_hash": None, "carried": 20, "base_run": 1, "base_position": 0},
        {"position": 20, "text_hash": "t20 reworded", "carried": None, "base_run": None,
         "base_position": None},
        {"position": 21, "text_hash": None, "carried": 29, "base_run": 1, "base_position": 21},
    ]  # fmt: skip


def test_a_file_mostly_changed_is_written_in_full_and_becomes_the_base() -> None:
    """Past carry.REBASE_SHARE of rows not found in the base, no row of the file is carried."""
    texts = [f"t{n}" for n in range(20)]
    old = _stored(_part(1, {"x.json": texts, "y.json": texts}, "old"))
    changed = [f"new {t}" if n % 4 == 0 else t for n, t in enumerate(texts)]  # 25%
    stored = carry.by_reference(_part(2, {"x.json": changed, "y.json": texts}, "new"), old)
    per_file = {
        path: stored.filter(pc.equal(stored["source_path"], pa.scalar(path)))["carried"].to_pylist()
        for path in ("x.json", "y.json")
    }
    assert per_file == {"x.json": [None] * 20, "y.json": [20]}


def test_a_missing_base_part_is_an_error_naming_it(tmp_path: Path) -> None:
    """A part whose base is gone stops the read with the path to restore, never fewer rows."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    shutil.copytree(RAW, raw)
    ingest([raw], out=out)
    seed = next(raw.glob("003_*.txt"))
    seed.write_text(seed.read_text("utf-8") + "\n", "utf-8")  # read again, the same rulings
    ingest([raw], out=out)
    assert pq.read_table(layout.part_path(out, "sightings", 2))["carried"].to_pylist() != [None]
    shutil.rmtree(layout.part_path(out, "sightings", 1).parent)
    with pytest.raises(StoreError, match=r"run=1/part-0\.parquet: missing.*restore"):
        open_dataset(out).sightings()


def _daily(raw: Path, out: Path, days: int = 3) -> None:
    """A daily job on real files: the seeds and TSP.json, reworded and extended each day."""
    shutil.copytree(RAW, raw)
    shutil.copy(TSP, raw / "TSP.json")
    ingest([raw], out=out)
    document = json.loads(TSP.read_text("utf-8"))
    for day in range(1, days + 1):
        for n, card in enumerate(document["data"]["cards"]):
            rulings = card.get("rulings", [])
            if rulings and n % 40 == day:
                rulings[0]["text"] += f" (Reworded on day {day}.)"
            if rulings and n % 50 == day:
                rulings.insert(0, {"date": "2024-02-02", "text": f"Day {day}'s new ruling."})
            if len(rulings) > 1 and n % 60 == day:
                rulings.pop()
        (raw / "TSP.json").write_text(json.dumps(document), "utf-8")
        seed = next(raw.glob("001_*.txt"))
        seed.write_text(seed.read_text("utf-8") + "\n", "utf-8")
        ingest([raw], out=out)


def _everything(out: Path, card: str = "Rift Bolt") -> dict[str, Any]:
    dataset = open_dataset(out)
    connection = dataset.duckdb()
    return {
        "api": dataset.sightings().astype(str).to_dict("records"),
        "duckdb": connection.sql("SELECT * FROM sightings").to_arrow_table().to_pylist(),
        "store": store.read_table(out, "sightings").cast(TABLES["sightings"]).to_pylist(),
        "history": dataset.history(card).astype(str).to_dict("records"),
        "card": dataset.sightings(card=card).astype(str).to_dict("records"),
    }


@pytest.mark.slow
@needs_realdata
def test_every_sighting_reads_back_as_the_full_layout_gives_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Days of re-reads of real files: carried, every reader gives what full parts give.

    The API, the DuckDB view, the store, a card's history and its sightings are the same
    row for row whether each part holds every sighting or carries what repeats; and the
    parts of the re-reads hold a few rows each instead of every ruling of TSP.json again.
    """
    _daily(tmp_path / "raw", tmp_path / "carried")
    carried = _everything(tmp_path / "carried")
    monkeypatch.setattr(carry, "REBASE_SHARE", -1.0)  # every file written in full
    _daily(tmp_path / "raw-full", tmp_path / "full")
    full = _everything(tmp_path / "full")
    for reader in full:
        assert carried[reader] == full[reader], reader
    of_card = [r for r in carried["store"] if r["card"] == "Rift Bolt"]
    assert len(carried["card"]) == len(of_card) > 4 * 10  # TSP's ten a day, and the seeds'
    assert len({row["run"] for row in carried["duckdb"]}) == 4
    for run in (2, 3, 4):
        stored = pq.read_table(layout.part_path(tmp_path / "carried", "sightings", run))
        sightings = [r for r in carried["store"] if r["run"] == run]
        assert stored.num_rows < len(sightings) / 10, run
        whole = pq.read_table(layout.part_path(tmp_path / "full", "sightings", run))
        assert whole.num_rows == len(sightings)


def _replay_v5(raw: Path, out: Path) -> None:
    """The three runs dataset-v5 was made of (tests/test_partitions.py's), then a fourth."""
    scenario = ["003_4e428d287bba6602.txt", "000_3c6244a5804b91f0.txt", "000_3c6244a5804b91f0.txt"]
    for step, name in enumerate(scenario):
        _dump(raw, name, with_001=step == 2)
        ingest([raw], out=out)


def _dump(raw: Path, name: str, *, with_001: bool, edit: bool = False) -> None:
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir()
    text = (RAW / name).read_text("utf-8")
    (raw / "dump0.txt").write_text(text + ("\n" if edit else ""), "utf-8")
    (raw / "manifest.csv").write_text("path,card\ndump0.txt,The Tenth Doctor\n", "utf-8")
    if with_001:
        shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw)
    for path in raw.iterdir():
        stamp = next(_V5_DAY)
        os.utime(path, ns=(stamp, stamp))


@pytest.mark.slow
def test_a_version_5_dataset_carries_from_its_old_parts(tmp_path: Path) -> None:
    """After the upgrade, a re-read carries from a part the version-5 store wrote.

    The sightings, and the DuckDB view over old and new parts together, equal those of the
    same four runs written by this version from the start.
    """
    old = tmp_path / "v5"
    shutil.copytree(V5, old)
    _dump(tmp_path / "raw", "000_3c6244a5804b91f0.txt", with_001=True, edit=True)
    ingest([tmp_path / "raw"], out=old)
    fourth = pq.read_table(layout.part_path(old, "sightings", 4))
    assert pq.read_table(layout.part_path(old, "sightings", 3)).schema.names[-1] != "base_position"
    # Seed 000's dump, last read by run 2, carried but for the one ruling that run 3's seed
    # 001 repairs (its {X} restored: tests/test_repair.py).
    assert fourth.select(["position", "carried", "base_run"]).to_pylist() == [
        {"position": 0, "carried": 10, "base_run": 2},
        {"position": 10, "carried": None, "base_run": None},
        {"position": 11, "carried": 8, "base_run": 2},
    ]
    fresh = tmp_path / "fresh"
    _replay_v5(tmp_path / "raw", fresh)
    _dump(tmp_path / "raw", "000_3c6244a5804b91f0.txt", with_001=True, edit=True)
    ingest([tmp_path / "raw"], out=fresh)
    # Runs of version 5 did not count their rule changes: a changelog reads their parts.
    assert open_dataset(old)._version.table("runs")["rule_changes"].to_pylist() == [
        None, None, None, 0,
    ]  # fmt: skip
    assert load_changeset(old).runs == load_changeset(fresh).runs == (4,)
    mine, theirs = _everything(old, "The Tenth Doctor"), _everything(fresh, "The Tenth Doctor")
    assert len(mine["card"]) > 19 * 2  # seed 000's rulings at least twice
    for reader in ("duckdb", "store", "card", "history"):
        assert mine[reader] == theirs[reader], reader


def test_the_changelog_reads_the_parts_of_its_run_and_of_the_runs_that_changed_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changelog of the last run opens its own part and those of runs with rule changes.

    Runs count the rule changes they found (`runs.rule_changes`): here run 2, which reads
    the 2008 release of the rules where run 1 read the 2004 one; the rule changes that may
    explain a later run's ruling changes are looked up in those runs' parts alone.
    """
    raw, out = tmp_path / "raw", tmp_path / "out"
    shutil.copytree(RAW, raw)
    rules = FIXTURES / "raw" / "comprules"
    shutil.copy(rules / "2004-10-01-excerpt.txt", raw / "MagicCompRules.txt")
    ingest([raw], out=out)
    shutil.copy(rules / "2008-10-01-excerpt.txt", raw / "MagicCompRules.txt")
    ingest([raw], out=out)
    for n in range(2):
        seed = next(raw.glob("001_*.txt"))
        seed.write_text(seed.read_text("utf-8") + "\n" * (n + 1), "utf-8")
        ingest([raw], out=out)
    counts = open_dataset(out).runs()["rule_changes"].tolist()
    assert counts[1] > 0
    assert [counts[0], *counts[2:]] == [0, 0, 0]
    read: list[str] = []
    original = layout.read_file

    def watched(path: Path, name: str, **options: Any) -> pa.Table:
        if name == "changes":
            read.append(path.parent.name)
        return original(path, name, **options)

    monkeypatch.setattr(layout, "read_file", watched)
    load_changeset(out)
    assert sorted(read) == ["run=2", "run=4"]
