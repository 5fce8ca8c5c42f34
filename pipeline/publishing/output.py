"""Where `-o FILE` writes: a regular file replaced whole, anything else written in place.

A regular file (or one a symbolic link leads to: the link is kept) is written to a
temporary file beside it, created exclusively, then renamed over it, so a reader sees the
old text or the new. A FIFO, a terminal or a device (`/dev/null`, `/dev/stdout` and the
links that lead there through `/proc`) is written in place, appended to, never replaced:
the device node, the pipe or the file behind a shell's `>>` stays what it was.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from pipeline.errors import PipelineError, UsageError
from pipeline.reading.read import escaped

# Links a path may pass through before it is taken for a loop (Linux's own bound).
_MAX_LINKS = 40
_PROC = Path("/proc")


def write_output(path: Path, text: str) -> None:
    """Write TEXT (UTF-8) to PATH, as the module says; PipelineError if it cannot be."""
    data = text.encode("utf-8")
    shown = escaped(str(path))
    try:
        target, in_place = _where(path)
        if in_place:
            _write_in_place(path, data)
        else:
            _replace(target, data)
    except OSError as exc:
        msg = f"{shown}: cannot write ({exc.strerror or exc})"
        raise PipelineError(msg) from exc


def _where(path: Path) -> tuple[Path, bool]:
    """The file to replace, or PATH and True when it is to be written in place.

    A link to nothing is refused: replacing it would drop the link, writing through it
    would make a file the link, not the user, names.
    """
    try:
        found = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            msg = f"{escaped(str(path))}: a symbolic link to nothing; give -o the file itself"
            raise UsageError(msg) from None
        return path, False
    if not stat.S_ISREG(found.st_mode):
        return path, True  # a FIFO, a terminal, a device: never replaced
    target = _followed(path)
    if target is None:
        return path, True  # a file open in some process, reached through /proc: appended to
    return target, False


def _followed(path: Path) -> Path | None:
    """The file PATH's links lead to, or None if they pass through /proc (/dev/stdout)."""
    here = Path(os.path.abspath(path))  # noqa: PTH100 - no link resolved yet
    for _ in range(_MAX_LINKS):
        folder = Path(os.path.realpath(here.parent))
        if folder == _PROC or _PROC in folder.parents:
            return None  # /proc/self/fd/1 and the like: magic links, no file to replace
        here = folder / here.name
        if not here.is_symlink():
            return here
        here = Path(os.path.abspath(folder / os.readlink(here)))  # noqa: PTH100, PTH115
    return None  # a loop would have failed os.stat: a chain this long is written in place


def _write_in_place(path: Path, data: bytes) -> None:
    """Append DATA to what PATH opens (a pipe, a device, a file behind /proc), unreplaced."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "wb") as file:
        file.write(data)


def _replace(path: Path, data: bytes) -> None:
    """Write DATA to a temporary file beside PATH, then rename it over PATH.

    The temporary file is created exclusively without following a link; it takes the
    mode of the file it replaces.
    """
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()  # left by a process of this pid that died
    fd = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            if mode is not None:
                os.fchmod(file.fileno(), mode)
            file.write(data)
        temporary.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
