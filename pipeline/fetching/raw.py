"""The raw folder as the fetchers keep it: files put in place whole, their state, the manifest.

A file is downloaded to a hidden temporary name beside its target (`.rulings.jsonl.gz.part`:
the reader passes over hidden names) and put in place by one `os.replace` once verified.
`.fetch.json` keeps, per file, what the next run needs to ask "only if changed" (URL, ETag,
Last-Modified) and what proves it (size, sha256, fetch time). `manifest.csv` gets a row per
fetched file with its `fetched_at`, the reader's as-of date for files that carry none.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath

STATE_NAME = ".fetch.json"
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


def write_atomic(path: Path, data: bytes) -> None:
    """Write DATA to PATH through a hidden temporary file beside it and one os.replace."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temp.open("wb") as handle:
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
            return {e["path"]: Entry(**e) for e in data["files"]}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError):
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
        old = [e.path for e in self.entries.values()
               if (e.source, e.item) == same and e.path != entry.path]  # fmt: skip
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
