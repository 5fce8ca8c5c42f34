"""Compressed files: what their first bytes say they are, and their content as a stream.

xz, gzip, bzip2 and zstd files are decompressed as they are read, never whole into memory
nor onto disk, under three caps that stop a decompression bomb: the bytes one stream may
expand to, how many times its stored size, and the seconds it may take. A truncated or
corrupt stream is an InputError naming what the decompressor found. The reader opens stored
files with it, `pipeline fetch` verifies downloads and undoes a Content-Encoding with it.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import time
import zipfile
import zlib
from enum import StrEnum
from typing import TYPE_CHECKING, BinaryIO

import zstandard

from pipeline.errors import InputError
from pipeline.limits import over

if TYPE_CHECKING:
    from collections.abc import Callable

    from pipeline.limits import Limits


class Compression(StrEnum):
    """The compressed containers read, by the name their reasons give them."""

    GZIP = "gzip"
    XZ = "xz"
    BZIP2 = "bzip2"
    ZSTD = "zstd"
    ZIP = "zip"


# Magic bytes, as each format's specification gives them; bzip2's block or end-of-stream
# magic is checked too, as "BZh9" alone also begins some text.
_MAGIC = (
    (b"\x1f\x8b\x08", Compression.GZIP),  # RFC 1952, deflate
    (b"\xfd7zXZ\x00", Compression.XZ),
    (b"\x28\xb5\x2f\xfd", Compression.ZSTD),  # RFC 8878 frame magic
    (b"PK\x03\x04", Compression.ZIP),  # a local file header
    (b"PK\x05\x06", Compression.ZIP),  # an empty archive's end of central directory
)
_BZIP2_BLOCKS = (b"1AY&SY", b"\x17rE8P\x90")
SUFFIXES = {
    Compression.GZIP: (".gz", ".gzip"),
    Compression.XZ: (".xz",),
    Compression.BZIP2: (".bz2",),
    Compression.ZSTD: (".zst", ".zstd"),
    Compression.ZIP: (".zip",),
}
# Under this many bytes expanded, no stream is refused for its ratio: a small file of
# repeated lines may compress a few hundred times without being anyone's bomb.
_RATIO_FLOOR = 1 << 20
# zstd input fed at once: its blocks may expand up to 32,768 times, so a few KiB in is at
# most some 64 MiB out before the caps are checked again.
_ZSTD_INPUT = 2048
# What the decompressors raise on a truncated or corrupt stream (EOFError: ended early).
_BROKEN = (EOFError, OSError, lzma.LZMAError, zlib.error, zipfile.BadZipFile, zstandard.ZstdError)


def sniff(head: bytes) -> Compression | None:
    """The compression HEAD, a file's first bytes, begins, if any."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head[:3] == b"BZh" and head[3:4] in b"123456789" and head[4:10] in _BZIP2_BLOCKS:
        return Compression.BZIP2
    return None


def plain_name(name: str, kind: Compression) -> str:
    """NAME without the suffix of its compression (`seed.txt.gz` -> `seed.txt`), if it has one."""
    for suffix in SUFFIXES[kind]:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def inflate(
    kind: Compression, source: BinaryIO, name: str, stored: int | None, limits: Limits
) -> BinaryIO:
    """The decompressed content of SOURCE (a stream of NAME's STORED bytes), buffered, capped.

    STORED None (a body still arriving): the ratio is of the bytes read from SOURCE so far.
    """
    if kind is Compression.ZIP:
        msg = "a zip file is an archive: its members are read one by one (documents.py)"
        raise ValueError(msg)
    if stored is None:
        counted = _Counted(source)
        inner = _DECOMPRESSORS[kind](counted)  # type: ignore[arg-type]  # read() is enough
        return capped(inner, name, kind, counted.size, limits)
    return capped(_DECOMPRESSORS[kind](source), name, kind, stored, limits)


class _Counted:
    """A binary stream that counts the bytes read from it."""

    def __init__(self, source: BinaryIO) -> None:
        self._source, self.read_so_far = source, 0

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size)
        self.read_so_far += len(data)
        return data

    def size(self) -> int:
        return self.read_so_far

    def close(self) -> None:
        self._source.close()


def capped(
    inner: io.BufferedIOBase | io.RawIOBase,
    name: str,
    kind: Compression,
    stored: int | Callable[[], int],
    limits: Limits,
) -> BinaryIO:
    """INNER, a decompressing stream of STORED bytes, buffered and counted against the caps."""
    return io.BufferedReader(_Capped(inner, name, kind, stored, limits), 1 << 16)


class _Capped(io.RawIOBase):
    """A decompressing stream that counts what it gives and stops at the caps."""

    def __init__(
        self,
        inner: io.BufferedIOBase | io.RawIOBase,
        name: str,
        kind: Compression,
        stored: int | Callable[[], int],
        limits: Limits,
    ) -> None:
        super().__init__()
        self._inner, self._name, self._kind, self._limits = inner, name, kind, limits
        self._stored, self._expanded = stored, 0
        self._deadline = time.monotonic() + limits.seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        try:
            got = self._inner.readinto(buffer) or 0
        except _BROKEN as exc:
            reason = f"a truncated or corrupt {self._kind} file ({str(exc) or type(exc).__name__})"
            raise InputError(self._name, reason) from exc
        self._expanded += got
        limits = self._limits
        stored = max(self._stored if isinstance(self._stored, int) else self._stored(), 1)
        if time.monotonic() > self._deadline:
            found = f"{self._kind} data still decompressing after {limits.seconds:g} s"
            raise InputError(self._name, over("seconds", found, limits.seconds))
        if self._expanded > limits.expanded:
            found = f"{self._kind} data expanding past {limits.expanded:,} bytes"
            raise InputError(self._name, over("expanded", found, limits.expanded))
        if self._expanded > max(_RATIO_FLOOR, limits.ratio * stored):
            found = (
                f"{self._kind} data of {stored:,} bytes expanding more than "
                f"{limits.ratio:,} times its size"
            )
            raise InputError(self._name, over("ratio", found, limits.ratio))
        return got

    def close(self) -> None:
        self._inner.close()
        super().close()


class _Zstd(io.RawIOBase):
    """A zstd stream of one or more frames; one cut short raises EOFError, as xz and gzip do.

    zstandard's own stream reader ends quietly at a truncated frame, so the frames are fed
    to a decompressor object, which tells when a frame is complete.
    """

    def __init__(self, source: BinaryIO) -> None:
        super().__init__()
        self._source = source
        self._decoder = zstandard.ZstdDecompressor().decompressobj()
        self._open = False  # a frame has begun and not ended
        self._out, self._at, self._done = b"", 0, False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while self._at >= len(self._out):
            if self._done:
                return 0
            self._out, self._at = self._more(), 0
        size = min(len(buffer), len(self._out) - self._at)
        buffer[:size] = self._out[self._at : self._at + size]
        self._at += size
        return size

    def _more(self) -> bytes:
        data = self._source.read(_ZSTD_INPUT)
        if not data:
            self._done = True
            if self._open:
                msg = "the zstd stream ended before its frame did"
                raise EOFError(msg)
            return b""
        out = [self._decoder.decompress(data)]
        self._open = True
        while self._decoder.eof:  # a frame ended: what follows it begins the next one
            rest = self._decoder.unused_data
            self._decoder = zstandard.ZstdDecompressor().decompressobj()
            self._open = bool(rest)
            if not rest:
                break
            out.append(self._decoder.decompress(rest))
        return b"".join(out)


# Each reads its stream as it is read, in small steps: never the whole file at once.
_DECOMPRESSORS: dict[Compression, Callable[[BinaryIO], io.BufferedIOBase | io.RawIOBase]] = {
    Compression.GZIP: lambda source: gzip.GzipFile(fileobj=source, mode="rb"),
    Compression.XZ: lzma.LZMAFile,
    Compression.BZIP2: bz2.BZ2File,
    Compression.ZSTD: _Zstd,
}
