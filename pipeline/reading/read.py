"""Bytes to text: finding raw files, decoding them, and reading the manifest."""

from __future__ import annotations

import codecs
import csv
import errno
import hashlib
import io
import os
import re
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

from pipeline.decoding.text import marked_encoding
from pipeline.errors import InputError, UsageError
from pipeline.limits import Limits
from pipeline.models import DateOrder, RawDocument, SourceHints
from pipeline.reading.parsers._json import check_limits, is_json, is_json_lines, line_limit
from pipeline.reading.source import Source

if TYPE_CHECKING:
    from collections.abc import Iterator

MANIFEST_NAME = "manifest.csv"
MANIFEST_COLUMNS = frozenset({"path", "card", "source", "fetched_at", "date_order"})
# A manifest is read whole in the run's own process: a row a file, so 64 MiB is a million
# files and more (the fetched raw/ folder's manifest: a few hundred bytes).
MANIFEST_MAX = 64 << 20
# Files that describe the raw folder rather than hold rulings.
_IGNORED_NAMES = frozenset({MANIFEST_NAME, "README.md", "README.txt", ".gitkeep"})
# Control characters that never appear in a text dump (tab, LF, CR and FF are allowed).
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0e-\x1f]")
_CONTROL_NAME = re.compile(r"[\x00-\x1f\x7f]")
_NEXT_OBJECT = re.compile(rb"\s*\{")  # after a first line: a second one, an object


class InputFile(NamedTuple):
    """A raw file to ingest: where it is, the name it is stored under, its size and mtime.

    Size and modification time are read when the file is found (None if it could not be
    stat-ed: reading it reports why). They are taken before the bytes are read, so a file
    that changes in between is recorded with the older figures and hashed next time.
    """

    path: str
    name: str
    link: bool = False  # a symbolic link: where it leads is checked before reading
    size: int | None = None
    mtime_ns: int | None = None
    problem: str | None = None  # why it cannot be read, found while listing its folder


def escaped(name: str) -> str:
    r"""NAME as stored and printed: bytes that are not UTF-8 written as \xNN escapes.

    Python hands over such bytes of a file name as lone surrogates, which no Parquet
    string, terminal or log can hold. The escape is readable and always the same.
    """
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file system gave: escape it as it is
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def shown(name: str) -> str:
    """A file name as printed on one line: quoted and escaped if it holds a control character."""
    return repr(name) if _CONTROL_NAME.search(name) else escaped(name)


def sha256_bytes(data: bytes) -> str:
    """Return the lowercase hex sha256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


def discover(paths: list[Path], manifest: Path | None) -> list[tuple[Path, list[InputFile]]]:
    """List the files under each PATH, as (raw root, files named relative to it).

    Folders are walked without following links to folders; hidden files and folders,
    READMEs and the manifest are not inputs.
    """
    found: list[tuple[Path, list[InputFile]]] = []
    skip = manifest.resolve() if manifest is not None else None
    for given in paths:
        if not given.exists() and not given.is_symlink():
            msg = f"{given}: no such file or folder"
            raise UsageError(msg)
        if not given.is_dir():
            size, mtime_ns = _size_and_mtime(given)
            name = escaped(given.name)
            file = InputFile(str(given), name, given.is_symlink(), size, mtime_ns)
            found.append((given.parent, [file]))
            continue
        inputs = _distinct(list(_walk(str(given), "", skip)))
        found.append((given, sorted(inputs, key=lambda f: f.name)))
    return found


def _distinct(inputs: list[InputFile]) -> list[InputFile]:
    """INPUTS, a file whose escaped name another file has in full rejected with the reason.

    Two files must never be stored under one name: each run would take one for the other.
    """
    taken = Counter(f.name for f in inputs)
    marked = []
    for file in inputs:
        if taken[file.name] > 1 and escaped(file.path) != file.path:
            why = "its name is not UTF-8, and escaped it is another file's name: rename one"
            file = file._replace(problem=why)  # noqa: PLW2901 - the file, marked
        marked.append(file)
    return marked


def _walk(folder: str, prefix: str, skip: Path | None) -> Iterator[InputFile]:
    """The files under FOLDER, named PREFIX + their path below it; links to folders ignored.

    A folder that cannot be listed (no permission, a path longer than the system allows)
    is one rejected input, named after the folder; the rest of the walk goes on.
    """
    try:
        with os.scandir(folder) as entries:
            listed = list(entries)
    except OSError as exc:
        yield InputFile(folder, prefix.rstrip("/") or ".", problem=_unlisted(exc))
        return
    for entry in listed:
        name = escaped(entry.name)
        if name.startswith("."):
            continue
        link = entry.is_symlink()
        if _is_dir(entry):
            if not link:
                yield from _walk(entry.path, f"{prefix}{name}/", skip)
            continue
        if name in _IGNORED_NAMES:
            continue
        if skip is not None and name == skip.name and Path(entry.path).resolve() == skip:
            continue
        try:
            stat = entry.stat()
        except OSError:
            yield InputFile(entry.path, prefix + name, link)
            continue
        yield InputFile(entry.path, prefix + name, link, stat.st_size, stat.st_mtime_ns)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # cannot be told: reading it as a file will say why
        return False


def _unlisted(exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return "cannot list the folder: its path is longer than the system allows"
    return f"cannot list the folder: {exc.strerror}"


def _size_and_mtime(path: Path) -> tuple[int | None, int | None]:
    try:
        stat = path.stat()
    except OSError:
        return None, None
    return stat.st_size, stat.st_mtime_ns


def read_manifest(path: Path) -> tuple[dict[str, SourceHints], list[tuple[str, str]]]:
    """Read a manifest CSV into hints keyed by path relative to the raw root.

    A malformed manifest (unreadable, no `path` column, unknown columns) is a usage error.
    A bad row is skipped and returned as (where, reason), for the run report.
    """
    reader = csv.DictReader(io.StringIO(_manifest_text(path)))
    columns = set(reader.fieldnames or ())
    if "path" not in columns:
        msg = f"{path}: a manifest needs a 'path' column (found: {sorted(columns)})"
        raise UsageError(msg)
    unknown = columns - MANIFEST_COLUMNS
    if unknown:
        known = sorted(MANIFEST_COLUMNS)
        msg = f"{path}: unknown manifest columns {sorted(unknown)}; known: {known}"
        raise UsageError(msg)
    hints: dict[str, SourceHints] = {}
    problems: list[tuple[str, str]] = []
    for line, row in enumerate(reader, start=2):
        rel = (row.get("path") or "").strip()
        order = (row.get("date_order") or "").strip().lower() or None
        where = f"{path.name}:{line}"
        pure = PurePosixPath(rel.replace("\\", "/"))
        if not rel or pure.is_absolute() or ".." in pure.parts:
            problems.append((where, f"path {rel!r} escapes the raw root; row ignored"))
            continue
        if order is not None and order not in {o.value for o in DateOrder}:
            problems.append((where, f"date_order must be dmy or mdy, got {order!r}; row ignored"))
            continue
        hints[pure.as_posix()] = SourceHints(
            card=(row.get("card") or "").strip() or None,
            source=(row.get("source") or "").strip() or None,
            fetched_at=(row.get("fetched_at") or "").strip() or None,
            date_order=DateOrder(order) if order else None,
        )
    return hints, problems


def manifest_for(
    root: Path, manifest: Path | None
) -> tuple[dict[str, SourceHints], list[tuple[str, str]]]:
    """The hints of the files of ROOT: from MANIFEST if given, else ROOT's own manifest.csv."""
    if manifest is not None:
        return read_manifest(manifest)
    default = root / MANIFEST_NAME
    return read_manifest(default) if default.is_file() else ({}, [])


def _manifest_text(path: Path) -> str:
    """The manifest's text; a UsageError if it is no regular file, too large, or unreadable."""
    if not path.is_file():  # a FIFO given as the manifest would block the run
        msg = f"{path}: the manifest is not a regular file"
        raise UsageError(msg)
    try:
        size = path.stat().st_size
        if size > MANIFEST_MAX:  # read whole, in this process: refused before it is read
            msg = f"{path}: a manifest of {size:,} bytes, over the limit of {MANIFEST_MAX:,}"
            raise UsageError(msg)
        return decode(path.read_bytes(), str(path))[0]
    except MemoryError:
        msg = f"{path}: the manifest does not fit in memory"
        raise UsageError(msg) from None
    except OSError as exc:
        msg = f"{path}: cannot read the manifest ({exc.strerror})"
        raise UsageError(msg) from exc
    except InputError as exc:
        raise UsageError(str(exc)) from exc


def read_bytes(file: InputFile, root: Path, limits: Limits | None = None) -> bytes:
    """Read one raw file's bytes; raise InputError if it escapes the root or cannot be read.

    Only a regular file is opened: a FIFO, socket or device is refused from its metadata
    (a FIFO would block the run, a device never end). A file larger than the memory
    budget of LIMITS is refused unread.
    """
    with opened(file, root) as source:
        return source.read_all(limits)


def opened(file: InputFile, root: Path) -> Source:
    """The raw FILE under ROOT, open (a context manager); InputError if it cannot be.

    The file is checked against the size and mtime it had when it was listed, and again
    once read (Source.check_unchanged).
    """
    listed = None if file.size is None or file.mtime_ns is None else (file.size, file.mtime_ns)
    return Source(
        file.path, file.name, link=file.link, root=root, listed=listed, problem=file.problem
    )


def sha256_file(file: InputFile, root: Path) -> str:
    """The sha256 of one raw file as stored, read a chunk at a time (any size)."""
    with opened(file, root) as source:
        return source.sha256


def to_document(
    name: str,
    data: bytes,
    hints: SourceHints,
    limits: Limits | None = None,
    sha: str | None = None,
    *,
    plain: str = "",
) -> RawDocument:
    """Decode a raw file's bytes into a document; raise InputError if they are not text.

    JSON stays bytes (its parsers stream it); JSON past the nesting, string or number limits
    of LIMITS (default: Limits()) is refused. JSON in another encoding is re-encoded as
    UTF-8, and JSON Lines are told from a JSON document by their lines. SHA, the bytes'
    sha256 where the caller has it, is not computed again. PLAIN is the path the document
    is named by, if not NAME (a compressed file's name without its suffix).
    """
    sha = sha or sha256_bytes(data)
    limits = limits or Limits()
    if is_json(data):
        lines = _looked(data, name, limits)
        return RawDocument(name, sha, "", "utf-8", hints, (), data, limits, lines=lines, name=plain)
    text, encoding, warnings = decode(data, name)
    if text.lstrip()[:1] in {"{", "["}:
        data = text.encode("utf-8")
        lines = _looked(data, name, limits)
        return RawDocument(
            name, sha, "", encoding, hints, warnings, data, limits, lines=lines, name=plain
        )
    return RawDocument(name, sha, text, encoding, hints, warnings, data, limits, name=plain)


def _looked(data: bytes, name: str, limits: Limits) -> bool:
    """Whether JSON bytes are JSON Lines; JSON past a limit raises InputError.

    One JSON document is looked over whole, here, once; JSON Lines a line at a time as
    they are read (a broken line would mislead a look at the whole).
    """
    body = data.removeprefix(codecs.BOM_UTF8)
    end = body.find(b"\n", 0, line_limit(limits))  # a minified document is one line: not read
    lines = (
        body.lstrip()[:1] == b"{"
        and end >= 0
        and _NEXT_OBJECT.match(body, end) is not None
        and is_json_lines(io.BytesIO(body), limits)
    )
    if not lines:
        check_limits(data, name, limits)
    return lines


def decode(data: bytes, name: str) -> tuple[str, str, tuple[str, ...]]:
    """Decode raw bytes to text with LF line ends; return (text, encoding, warnings)."""
    if not data.strip():
        raise InputError(name, "empty file")
    marked = marked_encoding(data)
    if marked is not None:
        encoding, mark = marked
        text = _decode_as(data[mark:], encoding, name)
        if mark:
            return text, encoding.removesuffix("-sig"), ()
        return text, encoding, (f"no byte-order mark; decoded as {encoding} from its zero bytes",)
    if _CONTROL_BYTES.search(data, 0, 8192):
        raise InputError(name, "binary file (control bytes in the first 8 KiB), not text")
    try:
        return _lines(data.decode("utf-8")), "utf-8", ()
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError as exc:
        reason = f"undecodable: neither UTF-8 nor cp1252 (byte {exc.object[exc.start]:#04x})"
        raise InputError(name, reason) from exc
    return _lines(text), "cp1252", ("not UTF-8; decoded as cp1252",)


def _decode_as(data: bytes, encoding: str, name: str) -> str:
    try:
        return _lines(data.decode(encoding))
    except UnicodeDecodeError as exc:
        raise InputError(name, f"undecodable as {encoding}: {exc.reason}") from exc


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")
