"""A raw file's documents: the file itself (decompressed), or each member of a zip archive.

What a file is comes from its content, never its name: its first bytes tell a compression
(magic bytes), the first bytes of its content JSON, JSON Lines or text. JSON is streamed
(from the file, or through the decompressor) as often as its parser opens it; text is held
whole, as its parsers need it, up to the text cap and the memory budget.
"""

from __future__ import annotations

import codecs
import zipfile
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, BinaryIO

from pipeline.errors import InputError
from pipeline.limits import Limits, over
from pipeline.models import RawDocument, SourceHints
from pipeline.reading import compressed, read
from pipeline.reading.compressed import Compression
from pipeline.reading.parsers._json import is_json, is_json_lines
from pipeline.reading.source import Source, check_name

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

# An uncompressed file up to this size is read whole, once, and parsed from memory; larger
# JSON is streamed from the file, so its size says nothing of the memory it needs.
_WHOLE = 1 << 24
_HEAD = 1 << 16  # the content's first bytes, looked at to tell what it is
_READ = 1 << 20


def opened(file: read.InputFile, root: Path) -> Source:
    """The raw FILE under ROOT, open (a context manager); InputError if it cannot be."""
    return read.opened(file, root)


def documents(
    source: Source, hints: SourceHints, limits: Limits
) -> Iterator[RawDocument | InputError]:
    """The documents of one open raw file, in order: itself, or each member of a zip.

    A file that cannot be read as a whole raises InputError; a zip member that cannot be
    read is given as its InputError, and the members after it are still read.
    """
    head = source.head(64)
    kind = compressed.sniff(head)
    if kind is None:
        yield _plain(source, head, hints, limits)
    elif kind is Compression.ZIP:
        yield from _members(source, hints, limits)
    else:
        name = source.name

        def opener() -> BinaryIO:
            return compressed.inflate(kind, source.stream(), name, source.size, limits)

        plain = compressed.plain_name(name, kind)
        yield _document(
            name, plain=plain, sha=source.sha256, opener=opener, hints=hints, limits=limits
        )


def _plain(source: Source, head: bytes, hints: SourceHints, limits: Limits) -> RawDocument:
    """An uncompressed file (HEAD, its first bytes): read whole, or if large JSON streamed.

    Text is held whole, so a text file past the text cap is refused from its size, before
    a byte of it is read; one that runs out of memory while decoded is refused alone.
    """
    json = is_json(head)
    if source.size > min(_WHOLE, limits.memory) and json:
        return _streamed(
            source.name,
            plain="",
            sha=source.sha256,
            opener=source.stream,
            hints=hints,
            limits=limits,
        )
    if not json and source.size > limits.text:
        found = f"a text file of {source.size:,} bytes (text is read whole)"
        raise InputError(source.name, over("text", found, limits.text))
    with _held_in_memory(source.name, limits):
        data = source.read_all(limits)  # refused past the memory budget, unread
        return read.to_document(source.name, data, hints, limits, source.sha256)


@contextmanager
def _held_in_memory(path: str, limits: Limits) -> Iterator[None]:
    """Turn a MemoryError while a document is read whole into that document's InputError."""
    try:
        yield
    except MemoryError:
        found = "reading needed more memory than its budget"
        raise InputError(path, over("memory", found, limits.memory)) from None


def _document(
    path: str,
    *,
    plain: str,
    sha: str,
    opener: Callable[[], BinaryIO],
    hints: SourceHints,
    limits: Limits,
) -> RawDocument:
    """A decompressed content: JSON streamed through the decompressor, text held whole."""
    with opener() as stream:
        head = stream.read(_HEAD)
    nested = compressed.sniff(head)
    if nested is not None:
        raise InputError(path, f"{nested} data inside a compressed file: decompress it first")
    if is_json(head):
        return _streamed(path, plain=plain, sha=sha, opener=opener, hints=hints, limits=limits)
    # Text is small (a dump, a rules release) and its parsers need it whole: up to the caps.
    with _held_in_memory(path, limits):
        return read.to_document(path, _whole(opener, path, limits), hints, limits, sha, plain=plain)


def _streamed(
    path: str,
    *,
    plain: str,
    sha: str,
    opener: Callable[[], BinaryIO],
    hints: SourceHints,
    limits: Limits,
) -> RawDocument:
    with opener() as stream:
        starts = stream.read(64).removeprefix(codecs.BOM_UTF8).lstrip()[:1]
    lines = False
    if starts == b"{":
        with opener() as stream:
            lines = is_json_lines(stream, limits)
    return RawDocument(
        path, sha, "", "utf-8", hints, (), b"", limits, opener=opener, lines=lines, name=plain
    )


def _whole(opener: Callable[[], BinaryIO], path: str, limits: Limits) -> bytes:
    """A decompressed text, refused once it grows past the text cap or the memory budget."""
    chunks, size = [], 0
    with opener() as stream:
        while chunk := stream.read(_READ):
            size += len(chunk)
            if size > limits.text:
                found = f"a compressed text expanding past {limits.text:,} bytes"
                found += " (text is read whole)"
                raise InputError(path, over("text", found, limits.text))
            if size > limits.memory:
                found = f"a compressed text expanding past {limits.memory:,} bytes, its budget"
                raise InputError(path, over("memory", found, limits.memory))
            chunks.append(chunk)
    return b"".join(chunks)


def _members(
    source: Source, hints: SourceHints, limits: Limits
) -> Iterator[RawDocument | InputError]:
    """Each member of a zip archive, named `archive.zip/member`, sorted by name."""
    name, sha = source.name, source.sha256
    try:
        archive = zipfile.ZipFile(source.stream())
        infos = sorted((i for i in archive.infolist() if _is_document(i)), key=_member_name)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise InputError(name, f"a truncated or corrupt zip archive ({exc})") from exc
    if not infos:
        raise InputError(name, "a zip archive holding no documents")
    for info in infos:
        path = f"{name}/{info.filename}"
        try:
            _check_member(path, info)
            opener = _member(archive, info, path, min(info.compress_size, source.size), limits)
            yield _document(path, plain=path, sha=sha, opener=opener, hints=hints, limits=limits)
        except InputError as exc:
            yield exc


def _check_member(path: str, info: zipfile.ZipInfo) -> None:
    """Refuse a member named with a control character, or by a path out of its archive."""
    check_name(path)
    pure = PurePosixPath(info.filename)
    if pure.is_absolute() or ".." in pure.parts:
        raise InputError(path, "a member path that leaves its archive: not read")


def _member_name(info: zipfile.ZipInfo) -> str:
    return info.filename


def _is_document(info: zipfile.ZipInfo) -> bool:
    """A file, not a folder nor hidden (`.DS_Store`, `__MACOSX/` resource forks)."""
    parts = PurePosixPath(info.filename).parts
    return not info.is_dir() and not any(p.startswith(".") or p == "__MACOSX" for p in parts)


def _member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str, stored: int, limits: Limits
) -> Callable[[], BinaryIO]:
    """The opener of one member: a fresh decompressing stream each time, capped."""

    def opener() -> BinaryIO:
        try:
            member = archive.open(info)
        except (NotImplementedError, RuntimeError, zipfile.BadZipFile, OSError) as exc:
            raise InputError(path, f"a zip member that cannot be read ({exc})") from exc
        return compressed.capped(member, path, Compression.ZIP, stored, limits)  # type: ignore[arg-type]

    return opener
