"""Crash safety: SIGKILL at every write step and at random moments, then check and recover.

Each kill must leave a dataset whose every file reads and which equals exactly the dataset
before the run or the one after it; the next run cleans up and succeeds. The kill points
tried are printed for the record (pytest -s, in one process: not under make test's -n).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import RAW, SEEDS

from pipeline import ingest
from pipeline.schema import PARTITIONED, SEGMENTED, TABLES, on_disk
from pipeline.storage import commit, layout, lock, store
from pipeline.storage.carry import of_cards

if TYPE_CHECKING:
    from pathlib import Path

# Each test kills dozens of ingests: the whole module is left out of make check.
pytestmark = pytest.mark.slow

FIRST, SECOND = SEEDS[:3], SEEDS[3:]
RANDOM_KILLS = 25


def _snapshot(out: Path, *, pinned: bool = True) -> dict[str, list[dict[str, object]]]:
    """Every table's rows; wall-clock columns of runs left out; an empty table is no table.

    PINNED reads as Dataset does (the version in force, and the parts of its runs);
    otherwise as a bare reader does: every file under the links, every part in the folders.
    """
    if not (out / "runs.parquet").exists():
        return {}
    version = store.open_version(out)
    tables = {}
    for name in TABLES:
        if pinned:
            table = version.table(name).cast(TABLES[name])
        elif name in PARTITIONED:
            table = pa.concat_tables(
                [pq.read_table(part) for part in sorted((out / name).glob(f"*/{layout.PART}"))]
                or [on_disk(name).empty_table()]
            )
        else:  # a file, or a folder of segments
            table = pq.read_table(layout.path_of(out, name))
        if name == "runs":
            table = table.drop_columns(["started_at", "finished_at"])
        if table.num_rows:
            tables[name] = table.to_pylist()
    if pinned and "sightings" in tables:  # a card's read, through the sightings index
        for card in sorted({str(row["card"]) for row in tables["sightings"] if row["card"]}):
            read = version.table("sightings", content=of_cards([card]))
            among = [row for row in tables["sightings"] if row["card"] == card]
            assert read.cast(TABLES["sightings"]).to_pylist() == among, card
    return tables


def _command(raw: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pipeline",
        "ingest",
        str(raw),
        "--out",
        str(out),
        "--workers",
        "1",
    ]


States = tuple[list[dict[str, list[dict[str, object]]]], list[dict[str, list[dict[str, object]]]]]


def _states(before: Path, after: Path) -> States:
    """What pinned and bare readers may see: the dataset before or after the run."""
    return (
        [_snapshot(before), _snapshot(after)],
        [_snapshot(before, pinned=False), _snapshot(after, pinned=False)],
    )


def _check(out: Path, states: States) -> None:
    """Readers see only whole tables, equal to one of the allowed states.

    A pinned reader sees one state at once; once the writer lock's next holder has
    recovered the folder, so does a reader of the bare files.
    """
    visible = [p.name for p in out.glob("*.parquet")]
    visible += [p.name for name in SEGMENTED for p in out.glob(f"{name}/*")]
    visible += [p.name for name in PARTITIONED for p in out.glob(f"{name}/*/*")]
    assert all(not name.startswith(".") for name in visible)
    assert _snapshot(out) in states[0]
    with lock.writer_lock(out):
        commit.recover(out)
    assert _snapshot(out, pinned=False) in states[1]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Raw folders and the datasets before and after each of two runs, made without crashes."""
    base = tmp_path_factory.mktemp("crash")
    first, full = base / "raw-first", base / "raw-full"
    for raw, names in ((first, FIRST), (full, [*FIRST, *SECOND])):
        raw.mkdir()
        shutil.copy(RAW / "manifest.csv", raw)
        for name in names:
            shutil.copy(RAW / name, raw)
    empty, one, two = base / "empty", base / "one", base / "two"
    empty.mkdir()
    ingest([first], out=one)
    shutil.copytree(one, two, symlinks=True)
    ingest([full], out=two)
    return {"empty": empty, "one": one, "two": two, "raw1": first, "raw2": full}


def _recover_and_finish(out: Path, raw: Path, final: Path) -> None:
    """The next run cleans up and succeeds; it ends where the uninterrupted run ended.

    A run killed after its switch had committed: the next one finds its files unchanged
    and records no run of its own; any other run is done again by the next.
    """
    committed = _snapshot(out) == _snapshot(final)
    report = ingest([raw], out=out)
    assert report.stored is not committed
    assert not list(out.glob(".*.tmp"))
    expected = _snapshot(final)
    got = _snapshot(out)
    for name in ("rulings", "sightings", "changes"):
        assert got[name] == expected[name], name


@pytest.mark.parametrize("step", ["first", "second"])
def test_kill_at_every_write_step(scenario: dict[str, Path], tmp_path: Path, step: str) -> None:
    """PIPELINE_CRASH_AT=N kills the run at its Nth write step, for every N."""
    before = scenario["empty"] if step == "first" else scenario["one"]
    after = scenario["one"] if step == "first" else scenario["two"]
    raw = scenario["raw1"] if step == "first" else scenario["raw2"]
    states = _states(before, after)
    killed = 0
    for n in range(1, 60):
        out = tmp_path / f"{step}-{n}"
        shutil.copytree(before, out, symlinks=True)
        env = {**os.environ, "PIPELINE_CRASH_AT": str(n)}
        done = subprocess.run(_command(raw, out), env=env, capture_output=True, check=False)
        if done.returncode != -signal.SIGKILL:
            assert done.returncode == 0, done.stderr
            break
        killed += 1
        _check(out, states)
        _recover_and_finish(out, raw, after)
    print(f"{step} run: killed at {killed} write steps, all survived")  # noqa: T201
    assert killed >= 12  # two per table and part, the rename, each part's move, the switch


def test_kill_at_random_moments(scenario: dict[str, Path], tmp_path: Path) -> None:
    """SIGKILL from outside after random delays across the run's whole length."""
    rng = random.Random(7)
    raw, before, after = scenario["raw2"], scenario["one"], scenario["two"]
    states = _states(before, after)
    probe = tmp_path / "probe"
    shutil.copytree(before, probe, symlinks=True)
    started = time.perf_counter()
    subprocess.run(_command(raw, probe), capture_output=True, check=True)
    length = time.perf_counter() - started
    for n in range(RANDOM_KILLS):
        out = tmp_path / f"random-{n}"
        shutil.copytree(before, out, symlinks=True)
        process = subprocess.Popen(
            _command(raw, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(0.3, 1.1) * length)
        process.send_signal(signal.SIGKILL)
        process.wait()
        _check(out, states)
        _recover_and_finish(out, raw, after)
    print(f"random kills: {RANDOM_KILLS} over a {length:.2f} s run, all survived")  # noqa: T201
