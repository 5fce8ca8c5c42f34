"""The manifest of a version: every file it is made of, with rows, bytes and a checksum.

`.versions/NNNNNN/manifest.json` lists the files of the version (one-file tables, segments,
the sightings index) and every part of the append-only tables of runs 1 … L, each by its
path relative to the dataset folder. A commit writes it inside the staged version, before
the rename and the switch, so it appears with the version it describes. Entries of files
the commit did not write (a hard link to the previous version's file, or a part of an
earlier run) are carried from the previous manifest; only the files written are hashed.
Sorted, without times of its own: identical files give identical bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.errors import StoreError
from pipeline.schema import PARTITION_KEY, SCHEMA_VERSION
from pipeline.storage.kinds import Storage, stored_as
from pipeline.storage.layout import VERSIONS, part_path

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

FILE = "manifest.json"
FORMAT = 1  # the manifest's own layout, apart from the tables' schema version
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Entry:
    """One file of a version: PATH relative to the dataset folder, its ROWS, BYTES, SHA256."""

    path: str
    rows: int
    bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Manifest:
    """A version's manifest as read."""

    version: int
    schema_version: int
    last_run: int
    files: dict[str, Entry]


def describe(path: Path, relative: str) -> Entry:
    """The entry of the file at PATH, read whole once (its rows from its footer)."""
    digest = describe_hash(path)
    rows = pq.read_metadata(path).num_rows
    return Entry(relative, rows, path.stat().st_size, digest)


def describe_hash(path: Path) -> str:
    """The sha256 of the file at PATH, in hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def read(version: Path) -> Manifest | None:
    """The manifest of the version folder VERSION; None if it has none (written before).

    A manifest that is there but does not parse is a StoreError naming it.
    """
    path = version / FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = {
            str(e["path"]): Entry(str(e["path"]), int(e["rows"]), int(e["bytes"]), str(e["sha256"]))
            for e in data["files"]
        }
        return Manifest(
            int(data["version"]), int(data["schema_version"]), int(data["last_run"]), files
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        msg = f"{path}: not a readable manifest ({exc})"
        raise StoreError(msg) from exc


def _previous(current: Path) -> Manifest | None:
    try:
        return read(current)
    except StoreError:
        return None  # a damaged manifest: every file is hashed again


def version_files(version: Path) -> list[str]:
    """The files of the version folder VERSION, relative to it, sorted (no hidden names)."""
    found: list[str] = []
    for root, folders, names in os.walk(version):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        found.extend(
            (Path(root) / name).relative_to(version).as_posix()
            for name in names
            if name.endswith(".parquet") and not name.startswith(".")
        )
    return sorted(found)


def last_run(version: Path) -> int:
    """L: the last run the version's runs.parquet records (0 if none)."""
    runs = pq.read_table(version / "runs.parquet", columns=[PARTITION_KEY])[PARTITION_KEY]
    return int(pc.max(runs).as_py() or 0) if len(runs) else 0


def build(
    out: Path, current: Path, staging: Path, number: int, staged: Mapping[tuple[str, int], Path]
) -> bytes:
    """The manifest of version NUMBER, staged in STAGING after CURRENT, as JSON bytes.

    STAGED maps each new part (table, run) to its staged file. A file of STAGING that is
    the same file as CURRENT's under the same name, and every part CURRENT's manifest
    lists, keep their entries; the others are hashed.
    """
    previous = _previous(current)
    known = previous.files if previous is not None else {}
    prefix, before = f"{VERSIONS}/{number:06d}/", f"{VERSIONS}/{current.name}/"
    entries: list[Entry] = []
    for name in version_files(staging):
        old = known.get(before + name)
        if old is not None and _same(current / name, staging / name):
            entries.append(Entry(prefix + name, old.rows, old.bytes, old.sha256))
        else:
            entries.append(describe(staging / name, prefix + name))
    last = last_run(staging)
    for table in sorted(stored_as(Storage.PARTS)):
        for run in range(1, last + 1):
            relative = _relative(out, part_path(out, table, run))
            if (table, run) in staged:
                entries.append(describe(staged[(table, run)], relative))
            elif relative in known:
                entries.append(known[relative])
            elif part_path(out, table, run).is_file():
                entries.append(describe(part_path(out, table, run), relative))
    return dump(Manifest(number, SCHEMA_VERSION, last, {e.path: e for e in entries}))


def dump(manifest: Manifest) -> bytes:
    """MANIFEST as the JSON bytes kept on disk: keys and files sorted, one file a line."""
    lines = ",\n".join(
        "    " + json.dumps({"path": e.path, "rows": e.rows, "bytes": e.bytes, "sha256": e.sha256})
        for e in sorted(manifest.files.values(), key=lambda e: e.path)
    )
    head = (
        f'{{\n  "format": {FORMAT},\n  "version": {manifest.version},\n'
        f'  "schema_version": {manifest.schema_version},\n  "last_run": {manifest.last_run},\n'
    )
    return (head + f'  "files": [\n{lines}\n  ]\n}}\n').encode()


def _same(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _relative(out: Path, path: Path) -> str:
    return path.relative_to(out).as_posix()


def parts_listed(manifest: Manifest) -> Iterable[tuple[str, int]]:
    """The (table, run) of each part MANIFEST lists."""
    partitioned = stored_as(Storage.PARTS)
    for path in manifest.files:
        head, _, rest = path.partition(f"/{PARTITION_KEY}=")
        if head in partitioned and rest.endswith("/part-0.parquet"):
            yield head, int(rest.split("/", 1)[0])
