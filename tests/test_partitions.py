"""The append-only layout: parts per run, the state, upgrades from version 3, readers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections import Counter
from typing import TYPE_CHECKING

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES, RAW, rows, table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import ingest, open_dataset
from pipeline.diffing.history import run_changes, state_from_sightings, with_current
from pipeline.ingest import upgrade
from pipeline.schema import TABLES
from pipeline.storage import layout, lock, store

if TYPE_CHECKING:
    from collections.abc import Callable
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


def _v3_columns(name: str) -> list[str]:
    """The columns version 3 had; `group` of changes left out: merges were regrouped later."""
    names = pq.read_schema(V3 / f"{name}.parquet").names
    return [n for n in TABLES[name].names if n in names and (name, n) != ("changes", "group")]


def _v3_rows(name: str) -> list[dict[str, object]]:
    return pq.read_table(V3 / f"{name}.parquet").select(_v3_columns(name)).to_pylist()


def _as_v3(records: list[dict[str, object]], name: str) -> list[dict[str, object]]:
    """RECORDS with only the columns version 3 had."""
    kept = _v3_columns(name)
    return [{k: r[k] for k in kept} for r in records]


def _comparable(records: list[dict[str, object]], name: str) -> list[dict[str, object]]:
    drop = {"runs": {"started_at", "finished_at", "inputs"}, "files": {"size", "mtime_ns"}}
    return [{k: v for k, v in r.items() if k not in drop.get(name, ())} for r in records]


@pytest.mark.parametrize("name", ["rulings", "sightings", "changes"])
def test_runs_give_what_version_3_gave(tmp_path: Path, name: str) -> None:
    """The same three runs store the rows the version-3 store did, `current` included."""
    out = tmp_path / "out"
    _replay(tmp_path / "raw", out)
    assert _as_v3(rows(out, name), name) == _v3_rows(name)


@pytest.mark.slow
def test_a_version_3_dataset_is_upgraded(tmp_path: Path) -> None:
    """A version-3 folder becomes parts per run and a state; no row changes, none is lost."""
    out, raw = tmp_path / "out", tmp_path / "raw"
    shutil.copytree(V3, out)
    raw.mkdir()
    with lock.writer_lock(out):
        upgrade(out)
    assert not (out / "sightings.parquet").exists()
    assert not (out / "changes.parquet").exists()
    assert layout.part_runs(out, "sightings") == layout.part_runs(out, "changes") == [1, 2, 3]
    assert layout.outdated(out) == []
    for name in ("rulings", "sightings", "changes", "files", "runs"):
        mine = _comparable(_as_v3(rows(out, name), name), name)
        assert mine == _comparable(_v3_rows(name), name), name
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
    assert rows(out, "rulings") == rows(fresh, "rulings")
    for name in ("changes", "sightings"):  # the run after the upgrade: the same rows
        assert store.read_table(out, name, runs=[4]).equals(store.read_table(fresh, name, runs=[4]))
    # Runs before the upgrade had no as-of dates: only the state's dates, and where they
    # came from, may differ.
    undated = ["as_of", "as_of_origin"]
    assert (
        table(out, "state")
        .drop_columns(undated)
        .equals(table(fresh, "state").drop_columns(undated))
    )


@pytest.mark.slow
def test_an_interrupted_upgrade_is_done_again(tmp_path: Path) -> None:
    """A kill at any write step of the upgrade leaves version 3 readable; the next run ends it."""
    env = dict(os.environ)
    (tmp_path / "raw").mkdir()
    killed = 0
    for n in range(1, 80):
        out = tmp_path / f"up-{n}"
        shutil.copytree(V3, out)
        command = [sys.executable, "-m", "pipeline", "ingest", str(tmp_path / "raw"), "--out"]
        env["PIPELINE_CRASH_AT"] = str(n)
        done = subprocess.run([*command, str(out)], env=env, capture_output=True, check=False)
        upgraded = not layout.legacy(out)  # the kill came after the upgrade's switch
        if done.returncode != 0:
            assert done.returncode == -9, done.stderr
            assert store.open_version(out).table("sightings").num_rows == 49
            ingest([tmp_path / "raw"], out=out)
            killed += 1
        assert _as_v3(rows(out, "sightings"), "sightings") == _v3_rows("sightings")
        assert layout.part_runs(out, "sightings") == [1, 2, 3]
        if upgraded:
            break
    assert killed >= 10  # the upgrade's steps: its tables, each part and its move, the switch


_EDITS = st.lists(
    st.tuples(st.sampled_from(["drop", "redate", "reword", "add"]), st.integers(0, 12)),
    max_size=3,
)


@pytest.mark.slow
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
        # run_changes() leaves `as_of` to run_history(); every file here is of one day.
        assert (
            mine.drop_columns(["as_of"]).to_pylist() == expected.drop_columns(["as_of"]).to_pylist()
        ), number
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


_WRITER = """
import sys
import threading
from pathlib import Path
from pipeline import ingest
raw, out, runs = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
for n in range(runs):
    body = "".join(f"2024-05-0{d}\\n\\nRuling {d} of card {n}.\\n\\n" for d in (1, 2, 3))
    (raw / f"new{n:02d}.txt").write_text(f"Card {n}\\n\\n" + body, encoding="utf-8")
    ingest([raw], out=out, workers=1)
"""


def _rulings_readers(out: Path) -> dict[str, Callable[[], int]]:
    """Ways to count the rows of the rulings' segments: by the folder the link resolves to."""
    link = out / "rulings"

    def with_duckdb() -> int:
        pattern = f"{os.path.realpath(link)}/*.parquet"
        query = f"SELECT count(*) FROM read_parquet('{pattern}')"  # noqa: S608
        [(found,)] = duckdb.connect().execute(query).fetchall()
        return int(found)

    return {
        "pandas": lambda: len(pd.read_parquet(os.path.realpath(link))),
        "pyarrow": lambda: pq.read_table(os.path.realpath(link)).num_rows,
        "duckdb": with_duckdb,
        "polars": lambda: pl.read_parquet(f"{os.path.realpath(link)}/*.parquet").height,
        "dataset": lambda: len(open_dataset(out).rulings(current_only=False)),
    }


def _sightings_readers(out: Path) -> dict[str, Callable[[], list[int]]]:
    """Ways to read the run of every sighting from the folder of parts."""
    folder = out / "sightings"

    def with_duckdb() -> list[int]:
        pattern = f"{folder}/*/*.parquet"
        query = f"SELECT run FROM read_parquet('{pattern}', hive_partitioning = true)"  # noqa: S608
        return [int(run) for (run,) in duckdb.connect().execute(query).fetchall()]

    return {
        "pandas": lambda: [int(r) for r in pd.read_parquet(folder)["run"]],
        "pyarrow": lambda: [int(str(r)) for r in pq.read_table(folder)["run"].to_pylist()],
        "duckdb": with_duckdb,
        "polars": lambda: [int(r) for r in pl.scan_parquet(folder).collect()["run"]],
        "dataset": lambda: [int(r) for r in open_dataset(out).sightings()["run"]],
    }


@pytest.mark.slow
def test_readers_during_commits(tmp_path: Path) -> None:
    """Readers in a loop while runs commit: no error, and every read is one whole version.

    As docs/dataset.md tells readers: a rewritten table by the path its link resolves to (or an
    open file, or DuckDB, which opens it once), or through open_dataset(); the folders of
    parts as they are. Polars and pyarrow open a path more than once: through the link, a
    commit in between makes them read two versions' bytes.
    """
    raw, out, runs = tmp_path / "raw", tmp_path / "out", 12
    raw.mkdir()
    shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw)
    ingest([raw], out=out)  # run 1: 13 rulings; each later run adds 3
    counts = {13 + 3 * n for n in range(runs + 1)}
    # Segments of about 20 rulings: each commit rewrites one, links the others, adds more.
    env = {**os.environ, "PIPELINE_SEGMENT_ROWS": "20"}
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(raw), str(out), str(runs)],
        stderr=subprocess.PIPE,
        env=env,
    )  # its output is read only if it fails
    rulings, sightings = _rulings_readers(out), _sightings_readers(out)
    errors: list[str] = []
    reads = dict.fromkeys(rulings, 0)

    def loop(name: str) -> None:
        while writer.poll() is None:
            try:
                count, per_run = rulings[name](), Counter(sightings[name]())
            except Exception as exc:  # noqa: BLE001 - any failure of a reader is the finding
                errors.append(f"{name}: {exc!r}")
                continue
            reads[name] += 1
            if count not in counts:
                errors.append(f"{name}: {count} rulings, not the count of a version")
            if per_run != {run: (13 if run == 1 else 3) for run in per_run}:
                errors.append(f"{name}: parts not whole: {dict(per_run)}")

    threads = [threading.Thread(target=loop, args=(name,)) for name in rulings]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert writer.wait() == 0
    assert writer.stderr is not None
    writer.stderr.close()
    assert errors == []
    assert all(reads.values()), reads
    assert len(open_dataset(out).rulings(current_only=False)) == max(counts)
    assert len(layout.segment_ids(out, "rulings")) > 1
