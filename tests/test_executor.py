"""The per-file stage gives the same dataset in this process, a process pool, or Dask."""

from __future__ import annotations

import ctypes
import gc
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest
from conftest import data_files, rows

from pipeline import ingest
from pipeline.errors import UsageError
from pipeline.limits import Limits
from pipeline.models import SourceHints
from pipeline.reading import executor, scan, sightings
from pipeline.reading.read import InputFile

if TYPE_CHECKING:
    from pathlib import Path

TABLES = ("rulings", "sightings", "changes")


def _many_files(raw: Path, count: int) -> None:
    for n in range(count):
        body = f"Card {n}\n\n2024-0{1 + n % 9}-1{n % 10}\n\nRuling {n % 7} of many.\n"
        (raw / f"f{n:03d}.txt").write_text(body, encoding="utf-8")


def _rows(out: Path) -> dict[str, list[dict[str, object]]]:
    return {name: rows(out, name) for name in TABLES}


@pytest.fixture
def corpus(raw_copy: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The seeds plus enough files for several batches (batches made small)."""
    _many_files(raw_copy, 40)
    monkeypatch.setattr(executor, "BATCH_FILES", 8)
    return raw_copy


def test_ingest_leaves_the_process_settings_as_they_were(corpus: Path, tmp_path: Path) -> None:
    """A notebook that calls ingest() gets its collector settings and Arrow pool back."""
    before = gc.get_threshold(), gc.get_freeze_count(), pa.default_memory_pool().backend_name
    ingest([corpus], out=tmp_path / "out", workers=2)
    after = gc.get_threshold(), gc.get_freeze_count(), pa.default_memory_pool().backend_name
    assert after == before


def test_the_run_allocates_from_jemalloc_where_pyarrow_has_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside a run the pool is jemalloc, unless ARROW_DEFAULT_MEMORY_POOL says otherwise."""
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow is built without jemalloc")
    with executor.returning_pool():
        assert pa.default_memory_pool().backend_name == "jemalloc"
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "system")
    outside = pa.default_memory_pool().backend_name
    with executor.returning_pool():
        assert pa.default_memory_pool().backend_name == outside


def _pool_after(imports: str, env: dict[str, str] | None = None) -> tuple[str, str | None]:
    """Arrow's default pool, and the variable naming it, in a new process after IMPORTS."""
    script = (
        f"{imports}\nimport os, pyarrow as pa\n"
        "print(pa.default_memory_pool().backend_name, os.environ.get('ARROW_DEFAULT_MEMORY_POOL'))"
    )
    environment = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**environment, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    backend, variable = done.stdout.split()
    return backend, None if variable == "None" else variable


@pytest.mark.slow
def test_importing_the_package_first_makes_jemalloc_arrows_default_pool() -> None:
    """On Linux with a jemalloc build, unless pyarrow came first or the user chose a pool."""
    if sys.platform != "linux":
        pytest.skip("the pool is chosen on Linux only")
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow is built without jemalloc")
    untouched, _ = _pool_after("import pyarrow")
    assert untouched != "jemalloc"  # else this test shows nothing
    # The variable is put back: the caller's other programs inherit no choice of ours.
    assert _pool_after("import pipeline") == ("jemalloc", None)
    assert _pool_after("import pyarrow, pipeline") == (untouched, None)
    chosen = {"ARROW_DEFAULT_MEMORY_POOL": "system"}
    assert _pool_after("import pipeline", chosen) == ("system", "system")


@pytest.mark.slow
def test_pool_matches_one_process(corpus: Path, tmp_path: Path) -> None:
    """Two worker processes and one give identical rows, in the same order."""
    ingest([corpus], out=tmp_path / "one", workers=1)
    ingest([corpus], out=tmp_path / "two", workers=2)
    assert _rows(tmp_path / "one") == _rows(tmp_path / "two")
    one, two = data_files(tmp_path / "one"), data_files(tmp_path / "two")
    assert [n for n in one if n.startswith(TABLES)] == [n for n in two if n.startswith(TABLES)]
    assert all(one[n] == two[n] for n in one if n.startswith(TABLES))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning")
def test_dask_matches_local(corpus: Path, tmp_path: Path) -> None:
    """A Dask cluster, given by its scheduler address, gives the local executor's rows."""
    distributed = pytest.importorskip("dask.distributed")
    ingest([corpus], out=tmp_path / "local", workers=1)
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        ingest(
            [corpus],
            out=tmp_path / "dask",
            executor_name="dask",
            scheduler=cluster.scheduler_address,
        )
    assert _rows(tmp_path / "local") == _rows(tmp_path / "dask")


def test_unknown_executor_is_a_usage_error(corpus: Path, tmp_path: Path) -> None:
    """An executor name the pipeline does not know stops the run with the names it knows."""
    with pytest.raises(UsageError, match="unknown executor 'spark'; use one of local, dask"):
        ingest([corpus], out=tmp_path / "x", executor_name="spark")


def test_batches_keep_order() -> None:
    """Batches are consecutive slices of the job list."""
    assert executor.batches(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]


def _mark(part: list[Path]) -> list[Path]:
    """A task that leaves a file for each part it was given: which parts were started."""
    for path in part:
        path.touch()
    return part


@pytest.mark.slow
def test_the_pool_holds_only_a_few_batches_ahead(tmp_path: Path) -> None:
    """Batches are submitted as earlier ones are taken: a future keeps its batch alive."""
    parts = [[tmp_path / f"part-{n:02d}"] for n in range(20)]
    batches: Any = executor._pool(_mark, parts, 1, Limits())  # type: ignore[arg-type]
    assert next(batches) == parts[0]
    allowed = [f"part-{n:02d}" for n in range(executor._AHEAD + 1)]  # submitted so far
    deadline = time.monotonic() + 30
    while len(list(tmp_path.iterdir())) < len(allowed) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # room for a worker that was given more to start it
    assert sorted(path.name for path in tmp_path.iterdir()) == allowed
    assert list(batches) == parts[1:]  # the rest, in order


def test_trim_heap_trims_where_it_can_and_is_quiet_where_it_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """malloc_trim(0) where the C library has it; nothing where there is none to open."""
    calls: list[int] = []

    class GlibcLike:
        def malloc_trim(self, pad: int) -> int:
            calls.append(pad)
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda _name: GlibcLike())
    sightings.trim_heap()
    assert calls == [0]
    monkeypatch.setattr(ctypes, "CDLL", lambda _name: object())  # no malloc_trim
    sightings.trim_heap()

    def unopenable(_name: None) -> None:
        raise TypeError

    monkeypatch.setattr(ctypes, "CDLL", unopenable)
    sightings.trim_heap()
    assert calls == [0]


def test_a_file_read_in_chunks_crosses_to_the_main_process_with_its_texts_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large file becomes Arrow chunk by chunk; its batch still pickles each text once.

    Encoding a chunked column gives every chunk the same dictionary, and a pickle writes a
    dictionary out once per chunk: a bulk file of 7 chunks crossed with 7 copies of its texts.
    """
    monkeypatch.setattr(scan, "CHUNK", 50)
    texts = [f"Ruling {n}: the controller of this permanent chooses a target." for n in range(3)]
    items = [
        {"object": "ruling", "oracle_id": f"oracle-{n // 7}", "source": "wotc",
         "published_at": "2024-02-02", "comment": texts[n % 3]}
        for n in range(300)
    ]  # fmt: skip
    (tmp_path / "rulings.json").write_text(json.dumps(items), encoding="utf-8")
    job = scan.ScanJob(
        tmp_path, InputFile(str(tmp_path / "rulings.json"), "rulings.json"), SourceHints(),
        None, None, 1,
    )  # fmt: skip
    table = scan.scan_batch([job]).sightings
    assert table is not None
    crossed = pickle.dumps(table)
    assert crossed.count(texts[0].encode()) == 1
    back = pickle.loads(crossed)  # noqa: S301 - bytes this test made
    assert back["text"].to_pylist() == [item["comment"] for item in items]


# Ingests argv[1] into argv[2], its worker noting its pid in argv[3], then sleeping on its file.
_SLOW_RUN = """
import os, sys, time
from pathlib import Path
from pipeline import ingest
from pipeline.reading import parsers, scan
parent, parse = os.getpid(), parsers.parse
def slow_parse(doc):
    if os.getpid() != parent:
        Path(sys.argv[3]).write_text(str(os.getpid()))
        time.sleep(120)
    return parse(doc)
scan.parse = slow_parse
ingest([Path(sys.argv[1])], out=Path(sys.argv[2]), isolate=True, workers=1)
"""


def _running(pid: int) -> bool:
    """Whether PID is a process that has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as status:  # noqa: PTH123 - a proc file
            return status.read().rsplit(")", 1)[1].split()[0] not in {"Z", "X"}
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_a_worker_ends_soon_after_its_run_is_killed(tmp_path: Path) -> None:
    """A run killed (-9) while its worker reads a file: the worker is gone within seconds."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "slow.txt").write_text("Rift Bolt\n\n2024-02-02\n\nA ruling.\n", encoding="utf-8")
    noted = tmp_path / "worker.pid"
    run = subprocess.Popen(
        [sys.executable, "-c", _SLOW_RUN, str(raw), str(tmp_path / "out"), str(noted)]
    )
    deadline = time.monotonic() + 60
    while not (noted.exists() and noted.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    worker = int(noted.read_text())
    run.kill()
    run.wait()
    killed = time.monotonic()
    try:
        while _running(worker) and time.monotonic() < killed + 10:
            time.sleep(0.05)
        assert not _running(worker), "the worker outlived its run by 10 s"
    finally:
        if _running(worker):
            os.kill(worker, signal.SIGKILL)
