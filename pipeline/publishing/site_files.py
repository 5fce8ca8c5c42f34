"""The site folder's files, written and removed only inside it, never through a link.

A page path comes from the build or from the manifest an earlier build left beside the
folder (`.NAME.site.json`), which anyone who can write there can edit: it is trusted for
nothing outside the folder. A path that is absolute, has a `..` or an empty part, or meets
a symbolic link on its way is refused. The folder is walked one component at a time from
a descriptor of it (O_NOFOLLOW), so a link put in place between a check and a write is not
followed either.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePathError(Exception):
    """A page path that would leave the site folder or go through a link."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path!r}: {reason}")
        self.path, self.reason = path, reason


def unsafe(path: object) -> str | None:
    """Why PATH is no page path inside a folder (absolute, `..`, empty parts), or None."""
    if not isinstance(path, str) or not path:
        return "not a path"
    if "\0" in path:
        return "holds a NUL byte"
    if path.startswith("/"):
        return "an absolute path"
    parts = path.split("/")
    if ".." in parts:
        return "leaves the site folder (`..`)"
    if any(part in {"", "."} for part in parts):
        return "not a plain relative path"
    return None


class SiteFolder:
    """The site folder, open: pages are written and removed relative to its descriptor."""

    def __init__(self, folder: Path) -> None:
        """Open FOLDER (itself may be a link: the user named it)."""
        self._fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def __enter__(self) -> Self:
        """The open folder."""
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Close the folder."""
        os.close(self._fd)

    def write(self, path: str, content: bytes) -> bool:
        """Write CONTENT to PATH unless it holds those bytes already; whether it wrote.

        A temporary file (created exclusively, beside the page), then a rename over it: a
        link where the page is is replaced, never written through. UnsafePathError if PATH
        leaves the folder; OSError if it cannot be written.
        """
        name, parent = self._parent(path, create=True)
        try:
            if _holds(parent, name, content):
                return False
            temporary = f".{name}.{os.getpid()}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=parent)  # left by a build of this pid that died
            fd = os.open(temporary, flags, 0o644, dir_fd=parent)
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(content)
                os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=parent)
                raise
            return True
        finally:
            os.close(parent)

    def remove(self, path: str) -> None:
        """Remove the page at PATH if it is there; a link there is refused, not followed.

        UnsafePathError if PATH leaves the folder or is a link; OSError if it cannot be removed.
        """
        try:
            name, parent = self._parent(path, create=False)
        except (FileNotFoundError, NotADirectoryError):
            return  # its folder is gone (or a file): so is the page
        try:
            try:
                found = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                return
            if stat.S_ISLNK(found.st_mode):
                raise UnsafePathError(path, "a symbolic link: not removed")
            os.unlink(name, dir_fd=parent)
        finally:
            os.close(parent)

    def _parent(self, path: str, *, create: bool) -> tuple[str, int]:
        """PATH's last part and a descriptor of its folder, reached without following links."""
        reason = unsafe(path)
        if reason is not None:
            raise UnsafePathError(path, reason)
        *folders, name = path.split("/")
        fd = os.dup(self._fd)
        try:
            for depth, part in enumerate(folders, start=1):
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=fd)
                try:
                    inner = os.open(part, _DIRECTORY, dir_fd=fd)
                except OSError as exc:  # a link is ENOTDIR with O_DIRECTORY, ELOOP without
                    if exc.errno in {errno.ELOOP, errno.ENOTDIR} and _is_link(fd, part):
                        where = "/".join(folders[:depth])
                        reason = f"{where} is a symbolic link: not followed"
                        raise UnsafePathError(path, reason) from exc
                    raise
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return name, fd


def _holds(parent: int, name: str, content: bytes) -> bool:
    """Whether the regular file NAME in PARENT holds CONTENT (a link or FIFO never does)."""
    try:
        found = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return False
    if not stat.S_ISREG(found.st_mode) or found.st_size != len(content):
        return False
    try:
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent
        )
    except OSError:
        return False
    with os.fdopen(fd, "rb") as file:
        return file.read(len(content) + 1) == content


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False
