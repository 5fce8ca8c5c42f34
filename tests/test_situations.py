"""Hostile situations around the files: odd names, a folder that refuses, a file still growing.

Each ends in one clear line and the right exit code; what the rest of the batch holds is
stored, and nothing is half-read.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

import filelock
import pytest
from click.testing import CliRunner
from conftest import RAW, SEEDS, rows

from pipeline import ingest, interrupts
from pipeline.cli import cli
from pipeline.errors import InputError
from pipeline.models import FileStatus
from pipeline.publishing.dataset import load_history
from pipeline.reading import read
from pipeline.storage import commit

if TYPE_CHECKING:
    from pathlib import Path

    import pyarrow as pa

SEED = "003_4e428d287bba6602.txt"  # a bullet dump of 17 rulings, no card named


def _command(*args: str | bytes) -> list[str | bytes]:
    return [sys.executable, "-m", "pipeline", *args]


def _raw_with(tmp_path: Path, *names: bytes) -> Path:
    """The seeds, and SEED copied under each of NAMES (bytes: any the file system takes)."""
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    for name in names:
        target = os.path.join(os.fsencode(raw), name)  # noqa: PTH118 - bytes paths
        os.makedirs(os.path.dirname(target), exist_ok=True)  # noqa: PTH103, PTH120
        shutil.copyfile(raw / SEED, target)
    return raw


@pytest.mark.slow
def test_file_and_folder_names_that_are_not_utf8_are_stored_escaped(tmp_path: Path) -> None:
    r"""A name Python can only hold with surrogates is stored as \xNN escapes; the rest too."""
    raw = _raw_with(tmp_path, b"\xff\xfe.txt", b"dir-\xff/inner.txt")
    out = tmp_path / "out"
    done = subprocess.run(
        _command("ingest", os.fsencode(raw), "--out", str(out)), capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    paths = {r["source_path"] for r in rows(out, "sightings")}
    assert paths == {*SEEDS, "\\xff\\xfe.txt", "dir-\\xff/inner.txt"}
    assert "\\xff\\xfe.txt: no card" in done.stdout.decode()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [b"history", b"\xff\xfe"],
            "Error: the card name '\\xff\\xfe' is not valid UTF-8: no card can have it",
        ),
        (
            [b"ingest", b"IN", b"--out", b"ds_\xff"],
            "Error: ds_\\xff: the dataset folder's name is not valid UTF-8; choose another --out",
        ),
        (
            [b"stats", b"--out", b"ds_\xff"],
            "Error: ds_\\xff: the dataset folder's name is not valid UTF-8; choose another --out",
        ),
    ],
    ids=["history-card", "ingest-out", "stats-out"],
)
def test_arguments_that_are_not_utf8_are_usage_errors(
    tmp_path: Path, args: list[bytes], message: str
) -> None:
    """Bytes no name can hold in a card or dataset argument: exit 2 and one line, escaped."""
    out = tmp_path / "normalized"
    ingest([RAW / SEEDS[0]], out=out)
    argv = [os.fsencode(RAW) if a == b"IN" else a for a in args]
    if b"history" in argv:
        argv += [b"--out", os.fsencode(out)]
    done = subprocess.run(_command(*argv), capture_output=True, check=False, cwd=tmp_path)
    assert (done.returncode, done.stderr.decode()) == (2, message + "\n")


def test_a_dataset_folder_that_refuses_the_lock_is_a_store_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock file cannot be made (a folder the user may not write): exit 1, one line."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(filelock.FileLock, "acquire", refuse)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["ingest", str(RAW), "--out", str(out)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {out}: cannot write the dataset (Permission denied); "
        "the version before this run stays in force\n"
    )


def test_a_file_that_grows_after_it_was_listed_is_refused(tmp_path: Path) -> None:
    """Listed, then written to before it is read: refused whole, and read again next time."""
    raw = tmp_path / "raw"
    raw.mkdir()
    dump = raw / "growing.txt"
    dump.write_bytes((RAW / SEED).read_bytes()[:2000])
    [(root, [file])] = read.discover([raw], None)
    with dump.open("ab") as handle:
        handle.write(b"more rulings")
    with pytest.raises(InputError, match=r"changed while read \(still being written\? bytes 2,000"):
        read.read_bytes(file, root)


def test_a_file_that_changes_while_it_is_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its size or time differs after the read from before it: refused as changed."""
    dump = tmp_path / "dump.txt"
    dump.write_bytes((RAW / SEED).read_bytes())
    [(root, [file])] = read.discover([dump], None)
    real = os.fstat
    calls: list[int] = []

    def fstat(fd: int) -> os.stat_result:
        calls.append(fd)
        found = real(fd)
        if len(calls) < 2:  # the look before reading
            return found
        fields = list(found)
        fields[8] += 1  # st_mtime: another write came in while the bytes were read
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", fstat)
    with pytest.raises(InputError, match="changed while read"):
        read.read_bytes(file, root)


def test_a_dump_still_being_written_stores_nothing_of_it_until_it_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run stores the other files and none of the growing one; the next stores it whole."""
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    whole = (RAW / SEED).read_bytes()
    growing = raw / "growing.txt"
    growing.write_bytes(whole[: len(whole) // 2])
    listed = read.discover

    def discover_then_write(*args: object, **kwargs: object) -> object:
        found = listed(*args, **kwargs)  # type: ignore[arg-type]
        growing.write_bytes(whole)  # the writer goes on after the listing
        return found

    monkeypatch.setattr(read, "discover", discover_then_write)
    out = tmp_path / "out"
    report = ingest([raw], out=out)
    [rejected] = report.rejected
    assert rejected.source_path == "growing.txt"
    assert (rejected.reason or "").startswith("changed while read")
    assert {r["source_path"] for r in rows(out, "sightings")} == set(SEEDS)
    monkeypatch.setattr(read, "discover", listed)
    again = ingest([raw], out=out)
    assert [f.status for f in again.files if f.source_path == "growing.txt"] == [FileStatus.STORED]
    texts = [r["text"] for r in rows(out, "sightings") if r["source_path"] == "growing.txt"]
    assert len(texts) == 17


def test_a_folder_path_past_the_system_limit_is_one_rejected_input(tmp_path: Path) -> None:
    """A folder nested past PATH_MAX is rejected with the reason; the rest is stored."""
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    fd = os.open(raw, os.O_RDONLY)
    for _ in range(os.pathconf(raw, "PC_PATH_MAX") // 200 + 2):  # each step made relative
        os.mkdir("d" * 200, dir_fd=fd)
        inner = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    out = tmp_path / "out"
    report = ingest([raw], out=out)
    reasons = {f.reason for f in report.rejected}
    assert reasons == {"cannot list the folder: its path is longer than the system allows"}
    assert {r["source_path"] for r in rows(out, "sightings")} == set(SEEDS)


@pytest.mark.slow
def test_an_interrupt_at_any_commit_step_exits_with_what_happened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT at each write step: before the switch exit 1 and nothing stored; after it, 0.

    Once the switch is reached, every later step finds the run stored, and says so.
    """
    before = tmp_path / "before"
    ingest([RAW / SEEDS[0]], out=before)
    outcomes = []
    for step in range(1, 60):
        out = tmp_path / f"at-{step}"
        shutil.copytree(before, out, symlinks=True)
        monkeypatch.setattr(commit, "_INTERRUPT_AT", step)
        monkeypatch.setattr(commit, "_steps", 0)
        result = CliRunner().invoke(cli, ["ingest", str(RAW), "--out", str(out)])
        runs = len(rows(out, "runs"))
        if result.exit_code == 1:
            assert result.stderr == (
                "Error: interrupted (SIGINT): nothing stored; the version before this run "
                "stays in force\n"
            )
            assert runs == 1
            outcomes.append("not stored")
            continue
        assert result.exit_code == 0, result.output
        assert runs == 2
        if result.stderr != "SIGINT came after run 2 was stored: it stays stored\n":
            assert result.stderr == ""  # past the last step: no interrupt at all
            break
        outcomes.append("stored")
    assert outcomes.count("not stored") >= 10
    assert outcomes.count("stored") >= 1
    assert outcomes == sorted(outcomes)  # "not stored" steps first, then "stored" ones


def test_an_interrupt_while_the_parts_are_written_stops_them_before_the_run_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT on the parts' first write: no further part is written, and no writer outlives the run.

    The commit waits for the parts' thread, stopped at its next part, before it says that
    nothing was stored: a thread left writing would fill the staging folder the next run
    clears and uses again.
    """
    finishing = threading.Event()
    finish, write = commit._PartsWriter.finish, commit._write_durable
    written: list[str] = []

    def finish_seen(self: commit._PartsWriter, *, stop: bool) -> None:
        finishing.set()
        finish(self, stop=stop)

    def interrupted_write(path: Path, table: pa.Table, name: str) -> None:
        if threading.current_thread().name == "commit-parts":
            if not written:  # the first part: Ctrl-C reaches the run meanwhile
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
                assert finishing.wait(30)  # the commit stops, and waits for this thread
            written.append(name)
        write(path, table, name)

    monkeypatch.setattr(commit._PartsWriter, "finish", finish_seen)
    monkeypatch.setattr(commit, "_write_durable", interrupted_write)
    out = tmp_path / "out"
    with interrupts.guarded(), pytest.raises(interrupts.Interrupted):
        ingest([RAW], out=out)
    assert len(written) == 1  # of the run's several parts, the first alone
    assert [t for t in threading.enumerate() if t.name == "commit-parts"] == []
    assert rows(out, "runs") == []  # nothing stored


# `pipeline ingest` whose reads take two minutes each, and a file made as one begins.
_SLOW_READS = """
import sys, time
from pathlib import Path
from pipeline.cli import cli
from pipeline.reading import executor

begun = Path(sys.argv.pop(1))
read = executor.scan_batch

def slow(jobs):
    begun.touch()
    time.sleep(120)
    return read(jobs)

executor.scan_batch = slow
cli()
"""


def test_ctrl_c_in_a_terminal_while_files_are_read_stops_the_run_with_one_line(
    tmp_path: Path,
) -> None:
    """SIGINT to the whole process group (a terminal's Ctrl-C) mid-read: exit 1, one line, now.

    The reading workers got it too: each raised Interrupted, which could not cross back to
    the run, and the run waited for good on a worker blocked writing its result (4 runs of
    8 on the real dumps corpus), or printed the workers' tracebacks. The run alone takes it,
    and waits for no read to end (a large file's held it up for as long as the read took).
    """
    begun, out = tmp_path / "begun", tmp_path / "out"
    command = [sys.executable, "-c", _SLOW_READS, str(begun), "ingest", str(RAW), "--out", str(out)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as run:
        for _ in range(600):
            if begun.exists() or run.poll() is not None:
                break
            time.sleep(0.1)
        assert begun.exists(), "no batch was read"
        os.killpg(run.pid, signal.SIGINT)
        try:
            _, stderr = run.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
            pytest.fail("the run did not end within 20 s of Ctrl-C")
    assert (run.returncode, stderr) == (
        1,
        "Error: interrupted (SIGINT): nothing stored; the version before this run stays in force\n",
    )


def test_a_part_that_cannot_be_written_is_a_store_error_and_nothing_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts' thread fails (a full disk): its error is the run's, one line; no run stored."""
    write = commit._write_durable

    def full_disk(path: Path, table: pa.Table, name: str) -> None:
        if threading.current_thread().name == "commit-parts":
            raise OSError(28, "No space left on device")
        write(path, table, name)

    monkeypatch.setattr(commit, "_write_durable", full_disk)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["ingest", str(RAW), "--out", str(out)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {out}: cannot write the dataset ([Errno 28] No space left on device); "
        "the version before this run stays in force\n"
    )
    assert rows(out, "runs") == []
    assert [t for t in threading.enumerate() if t.name == "commit-parts"] == []


@pytest.mark.parametrize(
    ("variable", "value", "shown"),
    [
        ("PIPELINE_FILE_SECONDS", "inf", "a number in ASCII digits from 0.001 to 604,800"),
        ("PIPELINE_FILE_SECONDS", "nan", "a number in ASCII digits from 0.001 to 604,800"),
        ("PIPELINE_FILE_SECONDS", "1e300", "a number in ASCII digits from 0.001 to 604,800"),
        (
            "PIPELINE_FILE_MEMORY",
            "9223372036854775807",
            "a whole number in ASCII digits from 1,048,576 to 17,592,186,044,416",
        ),
        ("PIPELINE_MAX_DEPTH", "1e9", "a whole number in ASCII digits from 1 to 100,000"),
        ("PIPELINE_MAX_DEPTH", "\u0663", "a whole number in ASCII digits from 1 to 100,000"),
        ("PIPELINE_MAX_DEPTH", "3.0", "a whole number in ASCII digits from 1 to 100,000"),
        ("PIPELINE_SEGMENT_ROWS", "lots", "a whole number in ASCII digits from 1 to"),
        ("PIPELINE_RETAIN_SECONDS", "-5", "a whole number in ASCII digits from 0 to"),
    ],
    ids=[
        "seconds-inf",
        "seconds-nan",
        "seconds-huge",
        "memory-int64",
        "depth-exponent",
        "depth-arabic-digit",
        "depth-decimal",
        "segment-rows-word",
        "retain-negative",
    ],
)
def test_a_setting_out_of_its_range_stops_the_run_naming_it(
    tmp_path: Path, variable: str, value: str, shown: str
) -> None:
    """One rule for every variable: ASCII digits within its range; else exit 2, one line."""
    env = {**os.environ, variable: value}
    command = _command("ingest", str(RAW), "--out", str(tmp_path / "out"))
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 2
    assert done.stderr.startswith(f"Error: {variable} must be {shown}")
    assert done.stderr.endswith(f", got {value!r}\n")
    assert done.stderr.count("\n") == 1


@pytest.mark.slow
def test_the_largest_settings_read_files_as_the_defaults_do(tmp_path: Path) -> None:
    """Every cap at the top of its range is one the system calls accept: the seeds store."""
    env = {
        **os.environ,
        "PIPELINE_FILE_SECONDS": "604800",
        "PIPELINE_FILE_MEMORY": str(1 << 44),
        "PIPELINE_MAX_DEPTH": "100000",
    }
    out = tmp_path / "out"
    command = _command("ingest", str(RAW), "--out", str(out))
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {r["source_path"] for r in rows(out, "sightings")} == set(SEEDS)


def _titled(raw: Path, name: str, title: str) -> None:
    """SEED with its first line replaced by TITLE, as RAW/NAME."""
    body = (RAW / SEED).read_text(encoding="utf-8").split("\n", 1)[1]
    (raw / name).write_text(f"{title}\n{body}", encoding="utf-8")


def test_card_names_that_fold_alike_are_one_card(tmp_path: Path) -> None:
    """Curly and straight apostrophes, decomposed letters, the ligature: one card each."""
    raw = tmp_path / "raw"
    raw.mkdir()
    _titled(raw, "a.txt", "Lim-D\u00fbl\u2019s Vault")
    _titled(raw, "b.txt", "Lim-Du\u0302l's Vault")
    _titled(raw, "c.txt", "\u00c6ther Vial")
    _titled(raw, "d.txt", "Aether Vial")
    out = tmp_path / "out"
    ingest([raw], out=out)
    found = {(r["source_path"], r["card"], r["card_printed"]) for r in rows(out, "sightings")}
    assert found == {
        ("a.txt", "Lim-D\u00fbl's Vault", "Lim-D\u00fbl\u2019s Vault"),
        ("b.txt", "Lim-D\u00fbl's Vault", "Lim-D\u00fbl's Vault"),  # printed, in NFC
        ("c.txt", "Aether Vial", "\u00c6ther Vial"),
        ("d.txt", "Aether Vial", "Aether Vial"),
    }
    history = load_history(out, "lim-du\u0302l\u2019s vault")
    assert sorted({e.source for e in history}) == ["a.txt", "b.txt"]
    assert len(history) == 34  # the same 17 texts in each of two sources
    assert {e.source for e in load_history(out, "\u00c6THER VIAL")} == {"c.txt", "d.txt"}


def test_a_history_query_near_a_name_gets_suggestions_on_folded_names(tmp_path: Path) -> None:
    """A decomposed, curly-quoted part of a name finds the card in the suggestions."""
    raw = tmp_path / "raw"
    raw.mkdir()
    _titled(raw, "a.txt", "Lim-D\u00fbl\u2019s Vault")
    out = tmp_path / "out"
    ingest([raw], out=out)
    result = CliRunner().invoke(cli, ["history", "du\u0302l\u2019s", "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: no rulings of card 'du\u0302l\u2019s' in {out}; "
        "did you mean Lim-D\u00fbl's Vault?\n"
    )


def test_stats_prints_a_rejected_name_with_a_line_break_escaped(tmp_path: Path) -> None:
    """The name is one quoted, escaped line in stats, as in ingest's summary."""
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    shutil.copyfile(raw / SEED, raw / "two\nlines.txt")
    out = tmp_path / "out"
    ingest([raw], out=out)
    result = CliRunner().invoke(cli, ["stats", "--out", str(out)])
    assert result.exit_code == 0
    reason = "the file name holds a line break or control character"
    assert f"\n  'two\\nlines.txt': {reason}" in result.stdout


def test_an_escaped_name_that_is_another_files_name_is_rejected(tmp_path: Path) -> None:
    r"""b"\xff.txt" escapes to "\xff.txt", a real name beside it: that one is stored, not both."""
    raw = _raw_with(tmp_path, b"\xff.txt", b"\\xff.txt")
    report = ingest([raw], out=tmp_path / "out")
    [rejected] = report.rejected
    assert rejected.source_path == "\\xff.txt"
    assert rejected.reason == (
        "its name is not UTF-8, and escaped it is another file's name: rename one"
    )
    stored = [f.source_path for f in report.files if f.status is FileStatus.STORED]
    assert stored.count("\\xff.txt") == 1


@pytest.mark.slow
def test_a_changelog_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    """-o into a folder that does not exist: exit 1, the file and the reason, no traceback."""
    out = tmp_path / "out"
    ingest([RAW / SEEDS[0]], out=out)
    target = tmp_path / "missing" / "changes.md"
    command = _command("changelog", "--out", str(out), "-o", str(target))
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (
        1,
        f"Error: {target}: cannot write (No such file or directory)\n",
    )


def test_a_catalog_of_no_known_shape_is_a_usage_error(tmp_path: Path) -> None:
    """--catalog naming a file that holds no cards: exit 2 and one line."""
    command = _command(
        "ingest", str(RAW / SEED), "--catalog", str(RAW / SEED), "--out", str(tmp_path / "o")
    )
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith(f"Error: {RAW / SEED}: not a card catalog of a known shape")
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists()  # refused before anything was written
