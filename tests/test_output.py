"""`changelog -o`: a regular file replaced whole, a FIFO, device or /dev/stdout written in place."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from conftest import RAW, SEEDS

from pipeline import ingest
from pipeline.cli import cli

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of one seed."""
    out = tmp_path_factory.mktemp("output") / "normalized"
    ingest([RAW / SEEDS[0]], out=out)
    return out


@pytest.fixture(scope="module")
def text(dataset: Path) -> str:
    """The changelog as printed on standard output."""
    result = CliRunner().invoke(cli, ["changelog", "--out", str(dataset)])
    assert result.exit_code == 0
    assert result.stdout.startswith("# ")
    return result.stdout


def _changelog(dataset: Path, target: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["changelog", "--out", str(dataset), "-o", str(target)])
    return result.exit_code, result.stderr


def _device(tmp_path: Path, name: str, minor: int) -> Path:
    """A character device of the memory driver (3: null, 7: full) made in TMP_PATH."""
    path = tmp_path / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("device nodes cannot be made here (not root, or no CAP_MKNOD)")
    return path


def test_a_fifo_is_written_in_place(dataset: Path, text: str, tmp_path: Path) -> None:
    """-o a FIFO: a reader on it gets the changelog; the FIFO stays a FIFO."""
    fifo = tmp_path / "changes.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with fifo.open("rb") as pipe:
            got.append(pipe.read())

    reader = threading.Thread(target=read, daemon=True)  # blocks for good if nothing writes
    reader.start()
    code, stderr = _changelog(dataset, fifo)
    reader.join(timeout=10)
    assert (code, stderr) == (0, "")
    assert got == [text.encode("utf-8")]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_device_is_written_in_place(dataset: Path, tmp_path: Path) -> None:
    """-o a null device, or a link to /dev/null: exit 0, the node and the link unreplaced."""
    link = tmp_path / "null-link"
    link.symlink_to("/dev/null")
    code, stderr = _changelog(dataset, link)
    assert (code, stderr) == (0, "")
    assert link.is_symlink()
    assert str(link.readlink()) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # noqa: PTH116 - the system's node
    null = _device(tmp_path, "null", 3)
    code, stderr = _changelog(dataset, null)
    assert (code, stderr) == (0, "")
    assert stat.S_ISCHR(null.lstat().st_mode)


def test_a_full_device_is_an_error_and_stays(dataset: Path, tmp_path: Path) -> None:
    """-o a device that refuses the bytes (/dev/full's kind): exit 1 and why; not replaced."""
    full = _device(tmp_path, "full", 7)
    code, stderr = _changelog(dataset, full)
    assert (code, stderr) == (1, f"Error: {full}: cannot write (No space left on device)\n")
    assert stat.S_ISCHR(full.lstat().st_mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["w", "a"], ids=["truncated", "appended"])
def test_a_link_to_standard_output_writes_there(
    dataset: Path, text: str, tmp_path: Path, mode: str
) -> None:
    """-o a link to /proc/self/fd/1: the changelog goes to standard output, the link stays.

    Standard output a file opened for appending (`>> log`): what it held is kept.
    """
    link = tmp_path / "stdout-link"
    link.symlink_to("/proc/self/fd/1")
    log, before = tmp_path / "log", "before\n" if mode == "a" else ""
    log.write_text(before, encoding="utf-8")
    command = [sys.executable, "-m", "pipeline", "changelog", "--out", str(dataset)]
    with log.open(mode, encoding="utf-8") as stdout:
        done = subprocess.run(
            [*command, "-o", str(link)], stdout=stdout, stderr=subprocess.PIPE, text=True,
            check=False,
        )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert log.read_text(encoding="utf-8") == before + text
    assert link.is_symlink()


def test_a_link_to_a_regular_file_replaces_the_file_and_keeps_the_link(
    dataset: Path, text: str, tmp_path: Path
) -> None:
    """-o a link to a file: the file replaced whole (a reader keeps the old one), the link kept."""
    target = tmp_path / "published" / "changes.md"
    target.parent.mkdir()
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "changes.md"
    link.symlink_to(target)
    with target.open(encoding="utf-8") as before:
        code, stderr = _changelog(dataset, link)
        assert before.read() == "old\n"
    assert (code, stderr) == (0, "")
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == text
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["changes.md"]


def test_a_regular_file_is_replaced_whole(dataset: Path, text: str, tmp_path: Path) -> None:
    """-o a regular file: a new file renamed over it, its mode kept; no temporary file left."""
    target = tmp_path / "changes.md"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o600)
    old = target.stat().st_ino
    code, stderr = _changelog(dataset, target)
    assert (code, stderr) == (0, "")
    assert target.read_text(encoding="utf-8") == text
    assert target.stat().st_ino != old
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["changes.md"]


def test_a_link_to_nothing_is_refused(dataset: Path, tmp_path: Path) -> None:
    """-o a dangling link: a usage error naming it; no file made, the link kept."""
    link = tmp_path / "changes.md"
    link.symlink_to(tmp_path / "gone" / "changes.md")
    code, stderr = _changelog(dataset, link)
    assert (code, stderr) == (
        2,
        f"Error: {link}: a symbolic link to nothing; give -o the file itself\n",
    )
    assert link.is_symlink()
    assert not (tmp_path / "gone").exists()
