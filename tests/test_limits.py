"""Hostile files (issue 16): each limit, regular files only, budgets, dead workers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest
from conftest import RAW, SEEDS
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import executor, ingest, parsers, scan
from pipeline.errors import InputError, UsageError
from pipeline.limits import MAX_NUMBER, Limits
from pipeline.models import FileReport, FileStatus, ParsedDocument, RawDocument, SourceHints
from pipeline.parsers._json import check_limits
from pipeline.read import InputFile
from pipeline.scan import ScanJob, scan_batch

if TYPE_CHECKING:
    from pathlib import Path

SEED = "001_ca7dd0badab20c1e.txt"  # Rift Bolt, 13 rulings
SEED_RULINGS = 13


def _ruling(comment: str, extra: str = "") -> str:
    return (
        '{"object": "ruling", "oracle_id": "5c6a5d0b", "source": "wotc", '
        f'"published_at": "2024-02-02", "comment": "{comment}"{extra}}}'
    )


def _scryfall(data: str) -> bytes:
    return f'{{"object": "list", "has_more": false, "data": {data}}}'.encode()


def _rule(text: str, extra: str = "") -> str:
    return f'{{"date": "2024-02-02", "text": "{text}"{extra}}}'


def _mtgjson(rulings: str) -> bytes:
    cards = f'[{{"name": "Rift Bolt", "rulings": {rulings}}}]'
    return f'{{"meta": {{"version": "5"}}, "data": {{"code": "TSP", "cards": {cards}}}}}'.encode()


def _gatherer(cells: str, wrap: int = 0) -> bytes:
    row = (
        '<tr><td id="r_ctl0{n}_rulingDate">2/2/2024</td><td id="r_ctl0{n}_rulingText">{t}</td></tr>'
    )
    rows = "".join(row.format(n=n, t=text) for n, text in enumerate(cells.split("|")))
    return (
        '<html><body><span id="h_SubContentHeader_subtitleDisplay">Rift Bolt</span>\n'
        + "<div>\n" * wrap
        + f"<table>{rows}</table>"
        + "</div>\n" * wrap
        + "</body></html>"
    ).encode()


# The table, a few hundred KB each; the 50 MB ruling is a 300 KB one under a lower cap.
TABLE: dict[str, tuple[bytes, str]] = {
    "deep-array.json": (b"[" * 200_000 + b"]" * 200_000, "PIPELINE_MAX_DEPTH"),
    "scryfall-deep-data.json": (
        _scryfall("[" * 100_000 + "]" * 100_000),
        "PIPELINE_MAX_DEPTH",
    ),
    "mtgjson-deep-rulings.json": (_mtgjson("[" * 50_000 + "]" * 50_000), "PIPELINE_MAX_DEPTH"),
    "long-ruling.json": (
        _scryfall(f"[{_ruling('x' * 300_000)}]"),
        "a JSON string of 300,000 bytes, over the limit of 100,000 (PIPELINE_MAX_STRING",
    ),
    "deep-object.json": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "PIPELINE_MAX_DEPTH"),
    "deep.html": (_gatherer("Deep.", wrap=60_000), "PIPELINE_MAX_HTML_DEPTH"),
    "long-number.json": (
        _scryfall("[" + _ruling("A.", ', "n": ' + "9" * 100_000) + "]"),
        f"a JSON number of more than {MAX_NUMBER:,} characters",
    ),
}
LOWER = Limits(string=100_000)


def _raw(tmp_path: Path, files: dict[str, bytes]) -> Path:
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / SEED, raw / SEED)
    for name, data in files.items():
        (raw / name).write_bytes(data)
    return raw


@pytest.mark.parametrize("name", list(TABLE))
def test_each_hostile_file_is_rejected_beside_the_seed(tmp_path: Path, name: str) -> None:
    """Each file of the issue's table is rejected naming its limit; the seed is stored."""
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
    data = _scryfall(f"[{_ruling('A short ruling.')}, {_ruling('y' * 60_000)}]")
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


def _plain(rulings: int) -> bytes:
    blocks = "".join(f"2024-02-0{n % 9 + 1}\n\nRuling number {n} of a long dump.\n\n" for n in
                     range(rulings))  # fmt: skip
    return f"Rift Bolt\n\n{blocks}".encode()


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


def test_a_file_past_its_time_budget_is_rejected_in_its_worker(tmp_path: Path) -> None:
    """In a worker, a file read for longer than its budget is rejected; the seed is stored."""
    raw = _raw(tmp_path, {"slow.txt": _plain(200_000)})  # some seconds to read
    report = ingest([raw], out=tmp_path / "out", limits=Limits(seconds=0.5), isolate=True)
    assert {f.source_path: f.reason for f in report.rejected} == {
        "slow.txt": "reading took too long, over the limit of 0.5 (PIPELINE_FILE_SECONDS raises it)"
    }
    assert report.rulings_read == SEED_RULINGS


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
    assert {f.source_path: f.reason for f in report.rejected} == {
        "killer.txt": "the reader crashed on this file (its worker process died: killed or out "
        "of memory)"
    }
    stored = {f.source_path for f in report.files if f.status is FileStatus.STORED}
    assert stored == set(SEEDS)
    alone = ingest([RAW], out=tmp_path / "alone")
    assert report.rulings_read == alone.rulings_read


LOOK = Limits(depth=8, string=2 * MAX_NUMBER)


@pytest.mark.parametrize(
    ("data", "refused"),
    [
        (b'["[[[[[[[[[[[[", "]]]]]]]]]]"]', False),
        (b'["\\"[[[[[[[[[[[[", 1]', False),
        (b'["\\\\", [[[[[[[[[[[[1]]]]]]]]]]]]]', True),
        (b'["\\\\\\"[[[[[[[[[[[["]', False),
        (b"[[[[[[[[[1]]]]]]]]]", True),
        (b"[[[[[[[[1]]]]]]]]", False),
        (b'{"a": "' + b"x" * (LOOK.string + 1) + b'"}', True),
        (b'{"a": "' + b"x" * LOOK.string + b'"}', False),
        (b'["' + b"x" * (LOOK.string + 1), True),
        (b'["' + b"9" * (MAX_NUMBER + 1) + b'"]', False),
        (b"[" + b"9" * (MAX_NUMBER + 1) + b"]", True),
    ],
    ids=[
        "brackets-in-strings",
        "escaped-quote",
        "escaped-backslash-then-deep",
        "backslash-and-quote-escaped",
        "nine-levels",
        "eight-levels",
        "long-string",
        "string-at-cap",
        "unclosed-string",
        "digits-in-a-string",
        "long-number",
    ],
)
def test_json_look_counts_only_what_parsing_would(data: bytes, refused: bool) -> None:  # noqa: FBT001
    """Brackets and digits inside strings (escapes included) count for nothing."""
    try:
        check_limits(data, "x.json", LOOK)
    except InputError:
        assert refused
    else:
        assert not refused


def test_limits_come_from_the_environment() -> None:
    """Each limit has its variable; a value that is not a positive number is a usage error."""
    limits = Limits.from_env({"PIPELINE_MAX_DEPTH": "100", "PIPELINE_FILE_SECONDS": "2.5"})
    assert limits == Limits(depth=100, seconds=2.5)
    with pytest.raises(UsageError, match="PIPELINE_MAX_RULING must be a positive number"):
        Limits.from_env({"PIPELINE_MAX_RULING": "lots"})


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
    assert pq.read_table(out / "sightings.parquet").num_rows == SEED_RULINGS
    strict = tmp_path / "strict"
    command[-1] = str(strict)
    done = subprocess.run([*command, "--strict"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert not list(strict.glob("*.parquet"))
    bad = {**os.environ, "PIPELINE_MAX_DEPTH": "-1"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=bad)
    assert done.returncode == 2
    assert done.stderr == "Error: PIPELINE_MAX_DEPTH must be a positive number, got '-1'\n"


# Small limits, so that the fuzzer crosses each of them with small documents.
SMALL = Limits(depth=8, html_depth=300, string=200, ruling=100)
_SHORT = "A short ruling."


@st.composite
def _json_case(draw: st.DrawFn) -> tuple[bytes, str | None]:
    """A Scryfall or MTGJSON file around the limits, and the limit it must be refused by."""
    nesting, length = draw(st.integers(0, 12)), draw(st.integers(1, 400))
    digits = draw(st.sampled_from([1, 8, MAX_NUMBER + 1, 3 * MAX_NUMBER]))  # yajl takes 18
    extra = ', "x": ' + "[" * nesting + "9" * digits + "]" * nesting
    mtgjson = draw(st.booleans())
    one = _rule if mtgjson else _ruling
    rulings = f"[{one(_SHORT)}, {one('z' * length, extra)}]"
    data = _mtgjson(rulings) if mtgjson else _scryfall(rulings)
    depth = (6 if mtgjson else 3) + nesting  # levels opened down to the nested value
    if depth > SMALL.depth:
        return data, "PIPELINE_MAX_DEPTH"
    if length > SMALL.string:
        return data, "PIPELINE_MAX_STRING"
    if digits > MAX_NUMBER:
        return data, "JSON number"
    return data, None


@settings(max_examples=60, deadline=None)
@given(case=_json_case())
def test_json_reader_fuzzed_past_each_limit(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[bytes, str | None]
) -> None:
    """JSON past a limit is rejected naming it; within them, an over-long ruling is skipped."""
    data, limit = case
    report, rows = _scan_one(tmp_path_factory, "f.json", data)
    if limit is not None:
        assert report.status is FileStatus.REJECTED
        assert limit in (report.reason or "")
        return
    assert report.status is FileStatus.STORED, report.reason
    skipped = [w for w in report.warnings if "PIPELINE_MAX_RULING" in w]
    assert rows == 2 - len(skipped)  # the over-long ruling is the second one, at position 1
    assert all(w.startswith("ruling 1 has ") for w in skipped)


@settings(max_examples=40, deadline=None)
@given(wrap=st.integers(0, 400), length=st.integers(1, 200))
def test_html_reader_fuzzed_past_each_limit(
    tmp_path_factory: pytest.TempPathFactory, wrap: int, length: int
) -> None:
    """HTML nested past its limit is rejected naming it; a ruling past its length is skipped."""
    report, rows = _scan_one(
        tmp_path_factory, "p.html", _gatherer(f"{_SHORT}|{'w' * length}", wrap)
    )
    if report.status is FileStatus.REJECTED:
        assert "PIPELINE_MAX_HTML_DEPTH" in (report.reason or "")
        assert wrap > SMALL.html_depth - 10  # html, body, table, tr, td around the cells
        return
    assert wrap <= SMALL.html_depth
    assert rows == (1 if length > SMALL.ruling else 2)
    assert any("PIPELINE_MAX_RULING" in w for w in report.warnings) == (length > SMALL.ruling)


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 300), min_size=1, max_size=5))
def test_text_reader_fuzzed_past_each_limit(
    tmp_path_factory: pytest.TempPathFactory, lengths: list[int]
) -> None:
    """A text dump keeps every ruling within the length limit and skips each one past it."""
    blocks = "".join(f"2024-02-02\n\n{'v' * n}\n\n" for n in lengths)
    report, rows = _scan_one(tmp_path_factory, "t.txt", f"Rift Bolt\n\n{blocks}".encode())
    kept = sum(n <= SMALL.ruling for n in lengths)
    if not kept:
        assert report.status is FileStatus.REJECTED
        return
    assert report.status is FileStatus.STORED
    assert rows == kept
    skipped = [w for w in report.warnings if "PIPELINE_MAX_RULING" in w]
    assert len(skipped) == len(lengths) - kept


def _scan_one(factory: pytest.TempPathFactory, name: str, data: bytes) -> tuple[FileReport, int]:
    root = factory.mktemp("fuzz")
    (root / name).write_bytes(data)
    job = ScanJob(root, InputFile(str(root / name), name), SourceHints(), None, None, 1, SMALL)
    batch = scan_batch([job])
    [result] = batch.results
    rows = batch.sightings.num_rows if batch.sightings is not None else 0
    assert json.dumps(result.report.reason)  # a reason is plain text, never an object
    return result.report, rows
