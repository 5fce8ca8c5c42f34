"""Hostile input, concurrent writers, determinism, schema versions, fuzzing the file stage."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES, RAW, SEEDS, data_files
from conftest import rows as read_rows
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import ingest
from pipeline.models import FileStatus, SourceHints
from pipeline.reading.read import InputFile
from pipeline.reading.scan import ScanJob, scan_batch
from pipeline.schema import SCHEMA_VERSION, VERSION_KEY, in_memory
from pipeline.storage import layout, store

if TYPE_CHECKING:
    from pathlib import Path

GATHERER_ROW = (
    '<tr><td id="r_ctl00_rulingDate">2/2/2024</td><td id="r_ctl00_rulingText">{}</td></tr>'
)


def _gatherer(cell: str, wrap: int = 0) -> str:
    opening, closing = "<div>" * wrap, "</div>" * wrap
    return (
        '<html><body><span id="h_SubContentHeader_subtitleDisplay">Rift Bolt</span>'
        f"{opening}<table>{GATHERER_ROW.format(cell)}</table>{closing}</body></html>"
    )


HOSTILE: dict[str, bytes] = {
    "empty.txt": b"",
    "image.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10",
    "invalid-utf8.txt": b"Rift Bolt\n\n2024-01-01\n\nCaf\xc3 \x81 \x8d.\n",
    "utf16-no-bom.txt": "Rift Bolt\n\n2024-01-01\n\nA ruling.\n".encode("utf-16-le"),
    "cp1252.txt": "Rift Bolt\n\n2024-01-01\n\nIt isn\u2019t cast.\n".encode("cp1252"),
    "feb-31.txt": b"Rift Bolt\n\n19/03/2021\n\nA.\n\n31/02/2024\n\nB.\n",
    "year-0.txt": b"Rift Bolt\n\n0000-01-01\n\nA ruling of year zero.\n",
    "future.txt": b"Rift Bolt\n\n2999-01-01\n\nA ruling from the future.\n",
    "one-line.txt": b"x" * 10_000_000,
    "nested.html": _gatherer("Deep ruling.", wrap=5_000).encode(),
    "script.html": _gatherer("Kept.<script>alert('not a ruling')</script> Also kept.").encode(),
    "wrong-shape.json": b'{"cards": [{"name": 1}]}',
    "new\nline.txt": b"Rift Bolt\n\n2024-01-01\n\nA ruling.\n",
}
REJECTED = {
    "empty.txt": "empty file",
    "image.png": "binary file (control bytes in the first 8 KiB), not text",
    "invalid-utf8.txt": "undecodable: neither UTF-8 nor cp1252 (byte 0x81)",
    "one-line.txt": "a line of 10,000,000 characters: not a ruling dump (at most 1,000,000)",
    "wrong-shape.json": "JSON of an unknown shape: not MTGJSON nor Scryfall rulings",
    "new\nline.txt": "the file name holds a line break or control character",
    "link.txt": "the file (or a link to it) lies outside the raw root",
    "manifest.csv:3": "path '../../etc/passwd' escapes the raw root; row ignored",
}
WARNED = {
    "utf16-no-bom.txt": "no byte-order mark; decoded as utf-16-le from its zero bytes",
    "cp1252.txt": "not UTF-8; decoded as cp1252",
    "feb-31.txt": "invalid date '31/02/2024': kept as printed, date left empty",
    "year-0.txt": "invalid date '0000-01-01': kept as printed, date left empty",
    "future.txt": "date '2999-01-01' is in the future; kept",
}


@pytest.fixture
def hostile(raw_copy: Path, tmp_path: Path) -> Path:
    """The seeds and every kind of hostile input in one raw folder."""
    for name, data in HOSTILE.items():
        (raw_copy / name).write_bytes(data)
    secret = tmp_path / "secret.txt"
    secret.write_text("Card\n\n2024-01-01\n\nSecret.\n", encoding="utf-8")
    (raw_copy / "link.txt").symlink_to(secret)
    manifest = raw_copy / "manifest.csv"
    manifest.write_text(
        manifest.read_text(encoding="utf-8") + "../../etc/passwd,Nope,,,\n", encoding="utf-8"
    )
    return raw_copy


def test_hostile_inputs_are_named_and_the_rest_stored(hostile: Path, out: Path) -> None:
    """Each hostile input has its reason; every seed and every readable file is stored."""
    report = ingest([hostile], out=out)
    assert {f.source_path: f.reason for f in report.rejected} == REJECTED
    stored = {f.source_path for f in report.files if f.status is FileStatus.STORED}
    assert set(SEEDS) <= stored
    assert {*WARNED, "script.html", "nested.html"} <= stored
    for name, warning in WARNED.items():
        assert f"{name}: {warning}" in report.warnings
    rows = read_rows(out, "sightings")
    texts = {r["source_path"]: r["text"] for r in rows}
    assert texts["script.html"] == "Kept. Also kept."
    assert texts["nested.html"] == "Deep ruling."
    assert {str(r["effective_date"]) for r in rows if r["source_path"] == "future.txt"} == {
        "2999-01-01"
    }


@pytest.mark.slow
def test_hostile_run_through_the_cli(hostile: Path, out: Path) -> None:
    """From the command line: exit 3, no traceback, --strict stores nothing and exits 1."""
    command = [sys.executable, "-m", "pipeline", "ingest", str(hostile), "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 3
    assert "Traceback" not in done.stdout + done.stderr
    assert "  'new\\nline.txt': the file name holds a line break or control character" in (
        done.stdout
    )
    strict_out = out.parent / "strict"
    strict = [*command[:-1], str(strict_out), "--strict"]
    done = subprocess.run(strict, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert not strict_out.exists() or not data_files(strict_out)


def test_identical_runs_write_identical_bytes(raw_copy: Path, tmp_path: Path) -> None:
    """Two runs of the same inputs into fresh folders: byte-identical data files."""
    for name in ("a", "b"):
        ingest([raw_copy], out=tmp_path / name)
    one, two = data_files(tmp_path / "a"), data_files(tmp_path / "b")
    one.pop("runs.parquet")
    two.pop("runs.parquet")
    assert one == two
    assert {"sightings/run=1/part-0.parquet", "changes/run=1/part-0.parquet"} <= set(one)


def test_older_schema_is_migrated(raw_copy: Path, out: Path) -> None:
    """A version-1 dataset is read, and rewritten as the current version.

    Version 1 had no fetched_at; its first datasets had no rule numbers in their changes;
    sightings and changes were single files (the layout of versions 1 to 3).
    """
    shutil.copytree(FIXTURES / "dataset-v3", out)
    for path in out.glob("*.parquet"):
        table = pq.read_table(path)
        for column in ("fetched_at", "old_rule_id", "new_rule_id", "size", "mtime_ns"):
            if column in table.column_names:
                table = table.drop_columns([column])
        pq.write_table(table.replace_schema_metadata({VERSION_KEY: b"1"}), path)
    assert sorted(layout.outdated(out)) == ["files", "runs"]
    assert layout.legacy(out) == ["changes", "sightings"]
    assert layout.unsegmented(out) == ["rulings"]  # cut into segments by the upgrade
    report = ingest([raw_copy], out=out)
    assert report.run == 4
    assert layout.outdated(out) == []
    assert layout.legacy(out) == []
    assert layout.unsegmented(out) == []
    for path in [*out.glob("*.parquet"), *out.glob("rulings/*.parquet")]:
        assert pq.read_schema(path).metadata[VERSION_KEY] == str(SCHEMA_VERSION).encode()
    sightings = store.read_table(out, "sightings")
    assert sightings.num_rows == 49 + report.rulings_read
    assert sightings.filter(pc.less(sightings["run"], pa.scalar(4)))["fetched_at"].null_count == 49
    changes = store.read_table(out, "changes", runs=[1, 2, 3])
    assert changes["new_rule_id"].null_count == changes.num_rows


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=600), name=st.sampled_from(["a.txt", "b.json", "c.html"]))
def test_file_stage_never_raises(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, name: str
) -> None:
    """Any bytes at all: the file stage stores or rejects them, and raises nothing."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / name).write_bytes(data)
    job = ScanJob(root, InputFile(str(root / name), name), SourceHints(), None, None, 1)
    [result] = scan_batch([job]).results
    assert result.report.status in {FileStatus.STORED, FileStatus.REJECTED}
    if result.report.status is FileStatus.REJECTED:
        assert result.report.reason


LOCK_HOLDER = """
import sys, time
from pathlib import Path
from pipeline.storage import lock
with lock.writer_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    if float(sys.argv[2]) < 0:  # hold until told to let go
        sys.stdin.readline()
    else:
        time.sleep(float(sys.argv[2]))
"""


def _hold_lock(out: Path, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(out), str(seconds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    return holder


def _cli_ingest(raw: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pipeline", "ingest", str(raw), "--out", str(out), *extra]
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_second_writer_exits_or_waits(raw_copy: Path, out: Path) -> None:
    """While another process writes: exit 4 at once, or wait for it with --wait.

    The holder keeps the lock until it is told to let go, however slowly the commands
    start on a loaded machine.
    """
    command = [sys.executable, "-m", "pipeline", "ingest", str(raw_copy), "--out", str(out)]
    with _hold_lock(out, -1) as holder:
        busy = _cli_ingest(raw_copy, out)
        assert busy.returncode == 4
        assert "another ingest is writing this dataset" in busy.stderr
        with subprocess.Popen(
            [*command, "--wait", "120"], stderr=subprocess.PIPE, text=True
        ) as waiting:
            time.sleep(1.0)
            assert waiting.poll() is None  # still waiting: the lock is held
            assert holder.stdin is not None
            holder.stdin.write("go\n")
            holder.stdin.close()
            holder.wait()
            _, errors = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, errors
    assert pq.read_table(out / "runs.parquet").num_rows == 1


@pytest.mark.slow
def test_lock_of_a_killed_holder_is_free(raw_copy: Path, out: Path) -> None:
    """A holder killed with SIGKILL leaves no lock behind."""
    with _hold_lock(out, 60.0) as holder:
        holder.kill()
        holder.wait()
    done = _cli_ingest(raw_copy, out)
    assert done.returncode == 0, done.stderr


def test_read_keeps_types(raw_copy: Path, out: Path) -> None:
    """Tables read back have the files' types, with the in-memory dictionaries."""
    ingest([raw_copy], out=out)
    before = {p.stem: pq.read_schema(p) for p in out.glob("*.parquet")}
    for name, schema in before.items():
        table = store.read_table(out, name)
        assert table.schema.equals(in_memory(name), check_metadata=False), name
        decoded = table.cast(schema.remove_metadata())
        assert decoded.schema.equals(schema, check_metadata=False), name
    assert isinstance(store.read_table(out, "rulings"), pa.Table)


def test_many_files_in_one_folder_keep_their_order(tmp_path: Path) -> None:
    """Files are read in path order whatever order the folder lists them in."""
    raw = tmp_path / "raw"
    raw.mkdir()
    names = [f"{n:03d}.txt" for n in range(30)]
    for name in reversed(names):
        shutil.copy(RAW / SEEDS[1], raw / name)
        os.utime(raw / name, (time.time(), time.time()))
    report = ingest([raw], out=tmp_path / "out")
    assert [f.source_path for f in report.files] == names
