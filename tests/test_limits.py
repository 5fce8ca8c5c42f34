"""Hostile files: each limit, regular files only, budgets, dead workers."""

from __future__ import annotations

import gzip
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Self

import pytest
from conftest import RAW, SEEDS, data_files, rows
from dask import distributed
from distributed.scheduler import KilledWorker
from layouts import gatherer, mtgjson, ruling, scryfall

from pipeline import ingest
from pipeline.errors import UsageError
from pipeline.limits import MAX_NUMBER, Limits
from pipeline.models import FileStatus, ParsedDocument, RawDocument
from pipeline.reading import executor, parsers, read, scan
from pipeline.reading.source import Source

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import pyarrow as pa

    from pipeline.reading.scan import ScanJob

SEED = "001_ca7dd0badab20c1e.txt"  # Rift Bolt, 13 rulings
SEED_RULINGS = 13
CRASHED = "the reader crashed on this file (its worker process died: killed or out of memory)"
# The hostile files, a few hundred KB each; the 50 MB ruling is a 300 KB one under a lower cap.
TABLE: dict[str, tuple[bytes, str]] = {
    "deep-array.json": (b"[" * 200_000 + b"]" * 200_000, "PIPELINE_MAX_DEPTH"),
    "scryfall-deep-data.json": (
        scryfall("[" * 100_000 + "]" * 100_000),
        "PIPELINE_MAX_DEPTH",
    ),
    "mtgjson-deep-rulings.json": (mtgjson("[" * 50_000 + "]" * 50_000), "PIPELINE_MAX_DEPTH"),
    "long-ruling.json": (
        scryfall(f"[{ruling('x' * 300_000)}]"),
        "a JSON string of 300,000 bytes, over the limit of 100,000 (PIPELINE_MAX_STRING",
    ),
    "deep-object.json": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "PIPELINE_MAX_DEPTH"),
    "deep.html": (gatherer("Deep.", wrap=60_000), "PIPELINE_MAX_HTML_DEPTH"),
    "long-number.json": (
        scryfall("[" + ruling("A.", ', "n": ' + "9" * 100_000) + "]"),
        f"a JSON number of more than {MAX_NUMBER:,} characters",
    ),
}
LOWER = Limits(string=100_000)
OUT_OF_MEMORY = (
    "reading needed more memory than its budget, over the limit of 2,147,483,648 "
    "(PIPELINE_FILE_MEMORY raises it)"
)


def _raw(tmp_path: Path, files: dict[str, bytes]) -> Path:
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / SEED, raw / SEED)
    for name, data in files.items():
        (raw / name).write_bytes(data)
    return raw


@pytest.mark.parametrize("name", list(TABLE))
def test_each_hostile_file_is_rejected_beside_the_seed(tmp_path: Path, name: str) -> None:
    """Each hostile file is rejected naming its limit; the seed is stored."""
    data, reason = TABLE[name]
    raw = _raw(tmp_path, {name: data})
    report = ingest([raw], out=tmp_path / "out", limits=LOWER)
    [rejected] = report.rejected
    assert rejected.source_path == name
    assert rejected.reason is not None
    assert reason in rejected.reason
    assert report.rulings_read == SEED_RULINGS


def test_special_files_are_not_opened(tmp_path: Path) -> None:
    """A FIFO, a socket and a link to a FIFO are rejected from their metadata; the run ends."""
    raw = _raw(tmp_path, {})
    os.mkfifo(raw / "pipe.txt")
    (raw / "link.txt").symlink_to(raw / "pipe.txt")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(raw / "sock.txt"))
        report = ingest([raw], out=tmp_path / "out")
    assert {f.source_path: f.reason for f in report.rejected} == {
        "link.txt": "a named pipe (FIFO), not a regular file: not read",
        "pipe.txt": "a named pipe (FIFO), not a regular file: not read",
        "sock.txt": "a socket, not a regular file: not read",
    }
    assert report.rulings_read == SEED_RULINGS


def test_an_over_long_ruling_is_skipped_and_the_rest_stored(tmp_path: Path) -> None:
    """A ruling over the length limit is skipped with a warning; its file is stored."""
    data = scryfall(f"[{ruling('A short ruling.')}, {ruling('y' * 60_000)}]")
    raw = _raw(tmp_path, {"list.json": data})
    report = ingest([raw], out=tmp_path / "out")
    assert report.rejected == ()
    assert report.rulings_read == SEED_RULINGS + 1
    assert (
        "list.json: ruling 1 has 60,000 characters; skipped, over the limit of 50,000 "
        "(PIPELINE_MAX_RULING raises it)" in report.warnings
    )


def test_a_file_larger_than_the_memory_budget_is_not_read(tmp_path: Path) -> None:
    """A file bigger than its whole memory budget is refused before it is read."""
    raw = _raw(tmp_path, {})
    size = (raw / SEED).stat().st_size
    report = ingest([raw], out=tmp_path / "out", limits=Limits(memory=size - 1))
    [rejected] = report.rejected
    assert rejected.reason == (
        f"a file of {size:,} bytes, larger than its memory budget, over the limit of "
        f"{size - 1:,} (PIPELINE_FILE_MEMORY raises it)"
    )


def test_a_text_file_past_the_text_cap_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text file larger than PIPELINE_MAX_TEXT is refused from its size; the seed is stored."""
    raw = _raw(tmp_path, {"big.txt": _plain(2_000)})
    size = (raw / "big.txt").stat().st_size
    read_whole: list[str] = []
    read_all = Source.read_all

    def noted(self: Source, limits: Limits | None) -> bytes:
        read_whole.append(self.name)
        return read_all(self, limits)

    monkeypatch.setattr(Source, "read_all", noted)
    report = ingest([raw], out=tmp_path / "out", limits=Limits(text=size - 1))
    [rejected] = report.rejected
    assert rejected.source_path == "big.txt"
    assert rejected.reason == (
        f"a text file of {size:,} bytes (text is read whole), over the limit of {size - 1:,} "
        "(PIPELINE_MAX_TEXT raises it)"
    )
    assert read_whole == [SEED]
    assert report.rulings_read == SEED_RULINGS


def test_a_compressed_text_past_the_text_cap_is_refused(tmp_path: Path) -> None:
    """A compressed text is refused once it expands past PIPELINE_MAX_TEXT; the seed is stored."""
    raw = _raw(tmp_path, {"big.txt.gz": gzip.compress(_plain(40_000))})  # 2 MB of text
    report = ingest([raw], out=tmp_path / "out", limits=Limits(text=1 << 20))
    [rejected] = report.rejected
    assert rejected.source_path == "big.txt.gz"
    assert rejected.reason == (
        "a compressed text expanding past 1,048,576 bytes (text is read whole), over the limit "
        "of 1,048,576 (PIPELINE_MAX_TEXT raises it)"
    )
    assert report.rulings_read == SEED_RULINGS


@pytest.mark.parametrize("stage", ["decode", "read_all"])
def test_a_memory_error_while_reading_a_text_rejects_only_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    """Out of memory while one text is read or decoded: that file rejected, the others stored."""
    raw = _raw(tmp_path, {"big.txt": _plain(20)})
    owner = read if stage == "decode" else Source
    real = getattr(owner, stage)

    def failing(*args: Any) -> Any:
        named = [a.name if isinstance(a, Source) else a for a in args]
        if "big.txt" in named:
            raise MemoryError
        return real(*args)

    monkeypatch.setattr(owner, stage, failing)
    report = ingest([raw], out=tmp_path / "out")
    [rejected] = report.rejected
    assert (rejected.source_path, rejected.reason) == ("big.txt", OUT_OF_MEMORY)
    assert report.rulings_read == SEED_RULINGS


def test_a_batch_out_of_memory_in_its_worker_rejects_only_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker out of memory once a file is read (its batch's table): only that file rejected.

    The batch is read again file by file, and the other files are stored.
    """
    parent, compact = os.getpid(), scan._compact

    def failing(table: pa.Table) -> pa.Table:
        if os.getpid() != parent and "big.txt" in table["source_path"].to_pylist():
            raise MemoryError
        return compact(table)

    monkeypatch.setattr(scan, "_compact", failing)  # workers are forked: they inherit it
    raw = _raw(tmp_path, {"big.txt": _plain(20)})
    report = ingest([raw], out=tmp_path / "out", workers=1, isolate=True)
    assert [(f.source_path, f.reason) for f in report.rejected] == [("big.txt", OUT_OF_MEMORY)]
    assert report.rulings_read == SEED_RULINGS


@pytest.mark.slow
def test_a_text_past_the_text_cap_through_the_cli(tmp_path: Path) -> None:
    """The command line: the file named with its size, the cap and its variable; exit 3."""
    raw = _raw(tmp_path, {"big.txt": _plain(2_000)})
    size = (raw / "big.txt").stat().st_size
    out = tmp_path / "out"
    command = [sys.executable, "-m", "pipeline", "ingest", str(raw), "--out", str(out)]
    env = {**os.environ, "PIPELINE_MAX_TEXT": str(size - 1)}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 3, done.stderr
    assert (
        f"\n  big.txt: a text file of {size:,} bytes (text is read whole), over the limit of "
        f"{size - 1:,} (PIPELINE_MAX_TEXT raises it)\n"
    ) in done.stdout
    assert len(rows(out, "sightings")) == SEED_RULINGS


def _plain(rulings: int) -> bytes:
    blocks = "".join(f"2024-02-0{n % 9 + 1}\n\nRuling number {n} of a long dump.\n\n" for n in
                     range(rulings))  # fmt: skip
    return f"Rift Bolt\n\n{blocks}".encode()


@pytest.mark.slow
def test_a_file_past_its_memory_budget_is_rejected_in_its_worker(tmp_path: Path) -> None:
    """In a worker, a file whose reading outgrows the budget is rejected; the seed is stored."""
    raw = _raw(tmp_path, {"huge.txt": _plain(300_000)})  # 14 MB: its rows need far more
    limits = Limits(memory=(raw / "huge.txt").stat().st_size + (8 << 20))
    report = ingest([raw], out=tmp_path / "out", limits=limits, isolate=True)
    [rejected] = report.rejected
    assert rejected.source_path == "huge.txt"
    assert rejected.reason is not None
    assert "reading needed more memory than its budget" in rejected.reason
    assert report.rulings_read == SEED_RULINGS


@pytest.mark.slow
def test_a_file_past_its_time_budget_is_rejected_in_its_worker(tmp_path: Path) -> None:
    """In a worker, a file read for longer than its budget is rejected; the seed is stored."""
    raw = _raw(tmp_path, {"slow.txt": _plain(200_000)})  # some seconds to read
    report = ingest([raw], out=tmp_path / "out", limits=Limits(seconds=0.5), isolate=True)
    assert {f.source_path: f.reason for f in report.rejected} == {
        "slow.txt": "reading took too long, over the limit of 0.5 (PIPELINE_FILE_SECONDS raises it)"
    }
    assert report.rulings_read == SEED_RULINGS


@pytest.mark.slow
def test_each_file_has_its_own_time_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files read one after the other in one worker, each within its budget, are all stored.

    Together they take longer than one file's budget: the worker's one timer is set again for
    each file it finds still being read, never for the batch.
    """
    parent, parse = os.getpid(), parsers.parse

    def slow_parse(doc: RawDocument) -> ParsedDocument:
        if os.getpid() != parent:
            time.sleep(0.4)
        return parse(doc)

    monkeypatch.setattr(scan, "parse", slow_parse)  # workers are forked: they inherit it
    seed = (RAW / SEED).read_bytes()
    raw = _raw(tmp_path, {f"copy-{n}.txt": seed for n in range(3)})
    report = ingest(
        [raw], out=tmp_path / "out", limits=Limits(seconds=1.0), workers=1, isolate=True
    )
    assert report.rejected == ()
    assert report.count(FileStatus.STORED) == 4


@pytest.mark.slow
def test_a_dead_worker_fails_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed while reading one file: that file is "crashed", every other stored."""
    parent, parse = os.getpid(), parsers.parse

    def killing_parse(doc: RawDocument) -> ParsedDocument:
        if os.getpid() != parent and doc.path == "killer.txt":
            os.kill(os.getpid(), signal.SIGKILL)
        return parse(doc)

    monkeypatch.setattr(scan, "parse", killing_parse)  # workers are forked: they inherit it
    monkeypatch.setattr(executor, "BATCH_FILES", 2)
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    (raw / "killer.txt").write_bytes((raw / SEED).read_bytes())
    report = ingest([raw], out=tmp_path / "out", workers=2, isolate=True)
    assert {f.source_path: f.reason for f in report.rejected} == {"killer.txt": CRASHED}
    stored = {f.source_path for f in report.files if f.status is FileStatus.STORED}
    assert stored == set(SEEDS)
    alone = ingest([RAW], out=tmp_path / "alone")
    assert report.rulings_read == alone.rulings_read


class _Future:
    """A Dask future run at once here: a part holding killer.txt kills its workers."""

    def __init__(self, task: Callable[[list[ScanJob]], object], part: list[ScanJob]) -> None:
        self.task, self.part = task, part

    def result(self) -> object:
        if any(job.file.name == "killer.txt" for job in self.part):
            # No worker state exists without a cluster: the exception is all the executor sees.
            raise KilledWorker(task="scan", last_worker=None, allowed_failures=3)  # type: ignore[arg-type]
        return self.task(self.part)


class _Client:
    """Just what the Dask executor asks of distributed.Client, without a cluster."""

    def __init__(self, _address: object) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        pass

    def map(
        self, task: Callable[[list[ScanJob]], object], parts: list[list[ScanJob]], **_: object
    ) -> list[_Future]:
        return [_Future(task, list(part)) for part in parts]

    def submit(
        self, task: Callable[[list[ScanJob]], object], part: list[ScanJob], **_: object
    ) -> _Future:
        return _Future(task, part)


def test_a_killed_dask_batch_fails_only_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Dask, a batch whose workers are killed is read one file per task; one is "crashed"."""
    monkeypatch.setattr(distributed, "Client", _Client)
    monkeypatch.setattr(executor, "BATCH_FILES", 2)
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    (raw / "killer.txt").write_bytes((raw / SEED).read_bytes())
    report = ingest([raw], out=tmp_path / "out", executor_name="dask", scheduler="tcp://fake")
    assert [(f.source_path, f.reason) for f in report.rejected] == [("killer.txt", CRASHED)]
    stored = {f.source_path for f in report.files if f.status is FileStatus.STORED}
    assert stored == set(SEEDS)


def test_limits_come_from_the_environment() -> None:
    """Each limit has its variable; a value that is not a number in its range is a usage error."""
    limits = Limits.from_env({"PIPELINE_MAX_DEPTH": "100", "PIPELINE_FILE_SECONDS": "2.5"})
    assert limits == Limits(depth=100, seconds=2.5)
    whole = "PIPELINE_MAX_RULING must be a whole number in ASCII digits from 1 to "
    with pytest.raises(UsageError, match=whole):
        Limits.from_env({"PIPELINE_MAX_RULING": "lots"})


@pytest.mark.slow
def test_the_table_through_the_cli(tmp_path: Path) -> None:
    """Every file of the table and a FIFO beside the seed: exit 3, each named, no traceback.

    With --strict nothing is stored (exit 1); a bad limit variable is a usage error (exit 2).
    """
    raw = _raw(tmp_path, {name: data for name, (data, _) in TABLE.items()})
    os.mkfifo(raw / "pipe.txt")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "pipeline", "ingest", str(raw), "--out", str(out)]
    env = {**os.environ, "PIPELINE_MAX_STRING": "100000"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    for name in [*TABLE, "pipe.txt"]:
        assert f"\n  {name}: " in done.stdout
    assert len(rows(out, "sightings")) == SEED_RULINGS
    strict = tmp_path / "strict"
    command[-1] = str(strict)
    done = subprocess.run([*command, "--strict"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert not data_files(strict)
    bad = {**os.environ, "PIPELINE_MAX_DEPTH": "-1"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=bad)
    assert done.returncode == 2
    assert done.stderr == (
        "Error: PIPELINE_MAX_DEPTH must be a whole number in ASCII digits from 1 to 100,000, "
        "got '-1'\n"
    )


# Small limits, so that the fuzzer crosses each of them with small documents.
