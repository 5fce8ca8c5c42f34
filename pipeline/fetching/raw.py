"""The raw folder as the fetchers keep it: files put in place whole, their state, the manifest.

A file is downloaded to a hidden temporary name beside its target (`.rulings.jsonl.gz.part`:
the reader passes over hidden names) and put in place by one `os.replace` once verified.
`.fetch.json` keeps, per file, what the next run needs to ask "only if changed" (URL, ETag,
Last-Modified) and what proves it (size, sha256, fetch time). `manifest.csv` gets a row per
fetched file with its `fetched_at`, the reader's as-of date for files that carry none.

Every temporary file is created anew (O_EXCL, O_NOFOLLOW): a link or a stale file where it
goes is removed, never written through. One job at a time writes the folder: `fetch` and
`update` hold `.fetch.lock` (an OS lock, released when its holder dies). The state is
trusted for nothing outside the folder: an entry whose path leaves it is dropped.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import fcntl
import io
import json
import os
import stat
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO

from pipeline.errors import LockBusyError, PipelineError

if TYPE_CHECKING:
    from collections.abc import Iterator

STATE_NAME = ".fetch.json"
LOCK_NAME = ".fetch.lock"
_CREATE = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_POLL = 0.2  # seconds between two tries of a busy lock
MANIFEST_NAME = "manifest.csv"  # the reader's manifest (pipeline.reading.read.MANIFEST_NAME)
_STATE_VERSION = 1
_COLUMNS = ["path", "card", "source", "fetched_at", "date_order"]


@dataclass(frozen=True, slots=True)
class Entry:
    """What the state keeps of one fetched file, by its path under raw/."""

    path: str
    source: str  # scryfall, mtgjson, comprules
    item: str  # which of the source's files: a newer one under another name replaces it
    url: str
    etag: str | None
    last_modified: str | None
    size: int
    sha256: str
    fetched_at: str  # when these bytes were downloaded (ISO, UTC)
    checked_at: str  # when the upstream last confirmed them
    extra: dict[str, str] = field(default_factory=dict)  # MTGJSON's version, Scryfall's updated_at


def create_new(path: Path) -> BinaryIO:
    """A new empty file at PATH, open to write and read: created here, never opened through.

    Whatever is at PATH already (a temporary file a killed run left, a link put there) is
    removed first without being followed; a folder there is an OSError naming it.
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "a folder where a temporary file goes", str(path))
        path.unlink()  # a link goes, not what it points to
    return os.fdopen(os.open(path, _CREATE, 0o644), "w+b")


def same_file(handle: BinaryIO, path: Path) -> bool:
    """Whether PATH is still the very file HANDLE has open (not a link, not another file)."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(handle.fileno())
    return stat.S_ISREG(found.st_mode) and (found.st_dev, found.st_ino) == (
        held.st_dev,
        held.st_ino,
    )


@contextlib.contextmanager
def locked(root: Path, wait: float = 0) -> Iterator[None]:
    """Hold the raw folder ROOT's lock; LockBusyError after WAIT seconds if another job has it."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        msg = f"{root}: cannot lock the raw folder ({LOCK_NAME}: {exc.strerror or exc})"
        raise PipelineError(msg) from exc
    try:
        until = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= until:
                    msg = (
                        f"{root}: another fetch or update is writing this raw folder; "
                        f"try again later or pass --wait SECONDS (waited {wait:g} s)"
                    )
                    raise LockBusyError(msg) from None
                time.sleep(min(_POLL, max(until - time.monotonic(), 0.01)))
        yield
    finally:
        os.close(fd)  # the lock goes with it


def inside(path: str) -> bool:
    """Whether PATH, from the state, names a file inside the raw folder."""
    pure = PurePosixPath(path)
    return bool(path) and not pure.is_absolute() and ".." not in pure.parts and "\\" not in path


def write_atomic(path: Path, data: bytes) -> None:
    """Write DATA to PATH through a hidden temporary file beside it and one os.replace."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with create_new(temp) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        temp.replace(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


class RawFolder:
    """The raw root the fetchers write: targets, their temporary files, state and manifest."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.entries = self._load()

    def _load(self) -> dict[str, Entry]:
        path = self.root / STATE_NAME
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            entries = [Entry(**e) for e in data["files"]]
            return {e.path: e for e in entries if inside(e.path)}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            # An unreadable state costs one full download per file, never a wrong answer.
            return {}

    def known(self, path: str, url: str) -> Entry | None:
        """The entry of PATH if it was fetched from URL and the file is still as stored."""
        entry = self.entries.get(path)
        if entry is None or entry.url != url:
            return None
        try:
            size = (self.root / path).stat().st_size
        except OSError:
            return None
        return entry if size == entry.size else None

    def temp_for(self, path: str) -> Path:
        """The hidden temporary file a download of PATH streams into (folders made)."""
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        return target.with_name(f".{target.name}.part")

    def place(self, temp: Path, entry: Entry) -> list[str]:
        """Put a verified TEMP in place as ENTRY's file; record it. Returns paths superseded.

        An older file of the same source and item under another name (a format that
        changed, `rulings.json` to `rulings.jsonl.gz`) is removed with its rows. The
        manifest is made first, so that one it cannot update stops before anything moves.
        """
        same = (entry.source, entry.item)
        old = [
            e.path
            for e in self.entries.values()
            if (e.source, e.item) == same and e.path != entry.path
        ]
        manifest = self.root / MANIFEST_NAME
        rows = manifest_bytes(manifest, {entry.path: entry.fetched_at}, set(old))
        temp.replace(self.root / entry.path)
        for path in old:
            with contextlib.suppress(FileNotFoundError):
                (self.root / path).unlink()
            del self.entries[path]
        self.entries[entry.path] = entry
        self._save()
        write_atomic(manifest, rows)
        return old

    def confirm(self, path: str, checked_at: str, **changes: object) -> None:
        """Note that the upstream confirmed PATH unchanged at CHECKED_AT (and any CHANGES)."""
        self.entries[path] = replace(self.entries[path], checked_at=checked_at, **changes)  # type: ignore[arg-type]
        self._save()

    def _save(self) -> None:
        files = [asdict(self.entries[p]) for p in sorted(self.entries)]
        data = {"version": _STATE_VERSION, "files": files}
        text = json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        write_atomic(self.root / STATE_NAME, text.encode("utf-8"))


def _key(path: str) -> str:
    return PurePosixPath(path.strip().replace("\\", "/")).as_posix()


def manifest_bytes(manifest: Path, fetched: dict[str, str], dropped: set[str]) -> bytes:
    """MANIFEST with `fetched_at` set in the rows of FETCHED (path -> time), DROPPED gone.

    Other rows and columns stay as they are; a manifest without `path` or `fetched_at`
    columns gets them. Raises ValueError for a manifest that is not UTF-8 CSV.
    """
    try:
        text = manifest.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        text = ""
    except UnicodeDecodeError as exc:
        msg = f"{manifest}: not UTF-8, not updated ({exc.reason})"
        raise ValueError(msg) from exc
    reader = csv.DictReader(io.StringIO(text))
    columns = list(reader.fieldnames or _COLUMNS)
    if text.strip() and "path" not in columns:
        msg = f"{manifest}: no 'path' column, not updated"
        raise ValueError(msg)
    columns += [c for c in ("path", "fetched_at") if c not in columns]
    rows: list[dict[str, str]] = []
    left = dict(fetched)
    for row in reader:
        key = _key(row.get("path") or "")
        if key in dropped:
            continue
        if key in left:
            row["fetched_at"] = left.pop(key)
        rows.append(row)
    rows += [{"path": path, "fetched_at": when} for path, when in sorted(left.items())]
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\n", restval="")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")
