"""The append-only layout: parts per run, the state, upgrades from version 3, readers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES, RAW, rows, table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import ingest, store
from pipeline.history import run_changes, state_from_sightings, with_current
from pipeline.ingest import upgrade
from pipeline.schema import TABLES

if TYPE_CHECKING:
    from pathlib import Path

V3 = FIXTURES / "dataset-v3"  # three runs written by the version-3 code (fixtures README)
SCENARIO = ["003_4e428d287bba6602.txt", "000_3c6244a5804b91f0.txt"]


def _replay(raw: Path, out: Path) -> None:
    """The three runs V3 was made of: seeds 003 and 000 as one dump, then 001 beside it."""
    for step, name in enumerate([*SCENARIO, SCENARIO[1]]):
        shutil.rmtree(raw, ignore_errors=True)
        raw.mkdir()
        shutil.copy(RAW / name, raw / "dump0.txt")
        (raw / "manifest.csv").write_text("path,card\ndump0.txt,The Tenth Doctor\n", "utf-8")
        if step == 2:
            shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw)
        ingest([raw], out=out)


def _v3_rows(name: str) -> list[dict[str, object]]:
    return pq.read_table(V3 / f"{name}.parquet").select(TABLES[name].names).to_pylist()


def _comparable(records: list[dict[str, object]], name: str) -> list[dict[str, object]]:
    drop = {"runs": {"started_at", "finished_at", "inputs"}, "files": {"size", "mtime_ns"}}
    return [{k: v for k, v in r.items() if k not in drop.get(name, ())} for r in records]


@pytest.mark.parametrize("name", ["rulings", "sightings", "changes"])
def test_runs_give_what_version_3_gave(tmp_path: Path, name: str) -> None:
    """The same three runs store the rows the version-3 store did, `current` included."""
    out = tmp_path / "out"
    _replay(tmp_path / "raw", out)
    assert rows(out, name) == _v3_rows(name)


def test_a_version_3_dataset_is_upgraded(tmp_path: Path) -> None:
    """A version-3 folder becomes parts per run and a state; no row changes, none is lost."""
    out, raw = tmp_path / "out", tmp_path / "raw"
    shutil.copytree(V3, out)
    raw.mkdir()
    with store.writer_lock(out):
        upgrade(out)
    assert not (out / "sightings.parquet").exists()
    assert not (out / "changes.parquet").exists()
    assert store.part_runs(out, "sightings") == store.part_runs(out, "changes") == [1, 2, 3]
    assert store.outdated(out) == []
    for name in ("rulings", "sightings", "changes", "files", "runs"):
        assert _comparable(rows(out, name), name) == _comparable(_v3_rows(name), name), name
    state = table(out, "state")
    everything = store.read_table(out, "sightings")
    assert state.equals(state_from_sightings(everything).cast(state.schema))
    # The next run compares with the upgraded state as it would have with the history.
    fresh = tmp_path / "fresh"
    _replay(tmp_path / "raw-fresh", fresh)
    for folder in (raw, tmp_path / "raw-fresh"):
        shutil.copy(RAW / SCENARIO[0], folder / "dump0.txt")  # The Tenth Doctor goes back
        (folder / "manifest.csv").write_text("path,card\ndump0.txt,The Tenth Doctor\n", "utf-8")
        shutil.copy(RAW / "002_389235662a8edeae.txt", folder)
    assert ingest([raw], out=out).run == 4
    ingest([tmp_path / "raw-fresh"], out=fresh)
    for name in ("rulings", "changes", "state", "sightings"):
        assert rows(out, name) == rows(fresh, name), name


def test_an_interrupted_upgrade_is_done_again(tmp_path: Path) -> None:
    """A kill at any write step of the upgrade leaves version 3 readable; the next run ends it."""
    env = dict(os.environ)
    (tmp_path / "raw").mkdir()
    finished = False
    for n in range(1, 40):
        out = tmp_path / f"up-{n}"
        shutil.copytree(V3, out)
        command = [sys.executable, "-m", "pipeline", "ingest", str(tmp_path / "raw"), "--out"]
        env["PIPELINE_CRASH_AT"] = str(n)
        done = subprocess.run([*command, str(out)], env=env, capture_output=True, check=False)
        if done.returncode == 0:
            finished = True
            break
        assert done.returncode == -9, done.stderr
        assert store.open_version(out).table("sightings").num_rows == 49
        ingest([tmp_path / "raw"], out=out)
        assert rows(out, "sightings") == _v3_rows("sightings")
        assert store.part_runs(out, "sightings") == [1, 2, 3]
    assert finished


_EDITS = st.lists(
    st.tuples(st.sampled_from(["drop", "redate", "reword", "add"]), st.integers(0, 12)),
    max_size=3,
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs=st.lists(st.tuples(st.sets(st.integers(0, 2)), _EDITS), min_size=1, max_size=4))
def test_state_stands_for_the_whole_history(
    tmp_path_factory: pytest.TempPathFactory,
    runs: list[tuple[set[int], list[tuple[str, int]]]],
) -> None:
    """Each run's changes and `current` flags are those the full history gives.

    The reference is the version-3 way: compare with the last snapshot found among every
    sighting of every earlier run, and flag what the latest snapshots hold.
    """
    base = tmp_path_factory.mktemp("history")
    out, raw = base / "out", base / "raw"
    seeds = sorted(p for p in RAW.glob("0*.txt"))[:3]
    for number, (chosen, edits) in enumerate(runs, start=1):
        shutil.rmtree(raw, ignore_errors=True)
        raw.mkdir()
        for index in sorted(chosen):
            text = _edited(seeds[index].read_text(encoding="utf-8"), edits)
            (raw / seeds[index].name).write_text(text, encoding="utf-8")
        before = store.read_table(out, "sightings")
        report = ingest([raw], out=out)
        new = store.read_table(out, "sightings", runs=[report.run])
        if not new.num_rows:
            continue
        expected = run_changes(before, new, report.run).cast(TABLES["changes"])
        stored = table(out, "changes")
        mine = stored.filter(pc.equal(stored["run"], pa.scalar(report.run, pa.int64())))
        assert mine.to_pylist() == expected.to_pylist(), number
        everything = store.read_table(out, "sightings")
        rulings = store.read_table(out, "rulings")
        reference = with_current(
            rulings.drop_columns(["current"]), state_from_sightings(everything)
        )
        assert rulings["current"].to_pylist() == reference["current"].to_pylist()


def _edited(text: str, edits: list[tuple[str, int]]) -> str:
    """TEXT with paragraphs dropped, re-dated, reworded or added (by paragraph number)."""
    blocks = text.split("\n\n")
    for action, at in edits:
        index = at % len(blocks)
        if action == "drop" and index > 0:
            del blocks[index]
        elif action == "redate":
            blocks[index] = blocks[index].replace("2021", "2022").replace("2013", "2014")
        elif action == "reword":
            blocks[index] = blocks[index].replace(" the ", " this ", 1)
        elif action == "add":
            blocks.append(f"2025-01-0{1 + at % 9}\n\nA ruling added in edit {at}.")
    return "\n\n".join(blocks) + "\n"
