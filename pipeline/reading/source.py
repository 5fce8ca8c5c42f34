"""A raw file as stored, open: checked to be a regular file, then read through streams.

One descriptor is opened per file; every stream over it reads at its own offset (pread),
so a parser may open the file as often as it needs (a peek at its head, then the whole)
and none of them disturbs another.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Self

from pipeline.errors import InputError
from pipeline.limits import over

if TYPE_CHECKING:
    from types import TracebackType

    from pipeline.limits import Limits

_CONTROL_NAME = re.compile(r"[\x00-\x1f\x7f]")
_READ = 1 << 20  # bytes hashed or buffered at once
_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def check_name(name: str) -> None:
    """Refuse a name holding a line break or control character (it would garble reports)."""
    if _CONTROL_NAME.search(name):
        raise InputError(repr(name), "the file name holds a line break or control character")


class Source:
    """One raw file, open for reading; a context manager that closes it."""

    def __init__(
        self,
        path: str,
        name: str,
        *,
        link: bool,
        root: Path,
        listed: tuple[int, int] | None = None,
        problem: str | None = None,
    ) -> None:
        """Open the file at PATH, named NAME; a LINK must lead inside ROOT.

        Only a regular file is opened: a FIFO, socket or device is refused from its metadata
        (a FIFO would block the run, a device never end). LISTED is the (size, mtime_ns)
        the file had when its folder was listed; PROBLEM, why it could not be listed.
        """
        check_name(name)
        if problem is not None:
            raise InputError(name, problem)
        self.name = name
        self._sha: str | None = None
        try:
            if link and not Path(path).resolve().is_relative_to(root.resolve()):
                raise InputError(name, "the file (or a link to it) lies outside the raw root")
            _check_regular(name, os.stat(path))  # noqa: PTH116 - a str from scandir
            # Not blocking: should the file have become a FIFO since, opening it returns at once.
            self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                raise InputError(name, "its path is longer than the system allows") from exc
            raise InputError(name, f"cannot read: {exc.strerror}") from exc
        try:
            status = os.fstat(self.fd)
            _check_regular(name, status)
        except BaseException:
            os.close(self.fd)
            raise
        self.size = status.st_size
        self._seen = [listed or (status.st_size, status.st_mtime_ns)]
        self._seen.append((status.st_size, status.st_mtime_ns))

    def check_unchanged(self) -> None:
        """Refuse the file if it changed since it was listed, or while it was read.

        A dump still being written reads as a cut-off file that parses: stored, its missing
        rulings would be reported as removed, and back as added on the next run. Refused,
        nothing of it is stored and the next run reads it whole. Called once it has been
        read to the end.
        """
        try:
            now = os.fstat(self.fd)
        except OSError as exc:
            raise InputError(self.name, f"cannot read: {exc.strerror}") from exc
        seen = [*self._seen, (now.st_size, now.st_mtime_ns)]
        if len(set(seen)) > 1:
            sizes = " -> ".join(f"{size:,}" for size in dict.fromkeys(size for size, _ in seen))
            reason = (
                f"changed while read (still being written? bytes {sizes}): "
                "not stored; the next run reads it again"
            )
            raise InputError(self.name, reason)

    def __enter__(self) -> Self:
        """The open file."""
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Close the file."""
        os.close(self.fd)

    def head(self, size: int) -> bytes:
        """The first SIZE bytes (fewer in a shorter file)."""
        return self._pread(size, 0)

    def stream(self) -> BinaryIO:
        """A fresh buffered stream over the whole file, seekable, from its first byte."""
        return io.BufferedReader(_At(self.fd, self.size, self.name), _READ)

    def read_all(self, limits: Limits | None) -> bytes:
        """The whole file; one larger than the memory budget of LIMITS is refused unread."""
        if limits is not None and self.size > limits.memory:
            found = f"a file of {self.size:,} bytes, larger than its memory budget"
            raise InputError(self.name, over("memory", found, limits.memory))
        parts, at = [], 0
        while at < self.size and (part := self._pread(self.size - at, at)):  # one read, mostly
            parts.append(part)
            at += len(part)
        data = b"".join(parts) if len(parts) != 1 else parts[0]
        if len(data) != self.size:
            self._seen.append((len(data), self._seen[-1][1]))
        self.check_unchanged()
        self._sha = self._sha or hashlib.sha256(data).hexdigest()
        return data

    @property
    def sha256(self) -> str:
        """The lowercase hex sha256 of the file as stored, hashed a chunk at a time."""
        if self._sha is None:
            digest = hashlib.sha256()
            with self.stream() as stream:
                while chunk := stream.read(_READ):
                    digest.update(chunk)
            self._sha = digest.hexdigest()
        return self._sha

    @property
    def known_sha256(self) -> str | None:
        """The sha256 if it has been computed (a rejected file's report gives it)."""
        return self._sha

    def _pread(self, size: int, offset: int) -> bytes:
        try:
            return os.pread(self.fd, size, offset)
        except OSError as exc:
            raise InputError(self.name, f"cannot read: {exc.strerror}") from exc


def _check_regular(name: str, status: os.stat_result) -> None:
    if not stat.S_ISREG(status.st_mode):
        kind = next((label for test, label in _KINDS if test(status.st_mode)), "not a file")
        raise InputError(name, f"{kind}, not a regular file: not read")


class _At(io.RawIOBase):
    """The bytes of an open file at this stream's own offset, up to the size it had."""

    def __init__(self, fd: int, size: int, name: str) -> None:
        super().__init__()
        self._fd, self._size, self._name, self._at = fd, size, name, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._at

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: self._size}[whence]
        self._at = max(0, base + offset)
        return self._at

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        wanted = min(len(buffer), max(0, self._size - self._at))
        if not wanted:
            return 0
        try:
            got = os.preadv(self._fd, [memoryview(buffer)[:wanted]], self._at)
        except OSError as exc:
            raise InputError(self._name, f"cannot read: {exc.strerror}") from exc
        self._at += got
        return got
