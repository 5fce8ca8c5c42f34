"""What a downloaded file must pass before it replaces the previous one in raw/.

The published checksum where there is one; the announced size; and the format, judged by
the name the file will have: a gzip or xz stream decodes to its end, JSON parses (streamed,
in bounded memory), JSON Lines parse on their first and last lines, a Comprehensive Rules
text has its "These rules are effective as of" line.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import json
import lzma
import re
import zlib
from typing import IO, TYPE_CHECKING, NamedTuple, cast

import ijson

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

_CHUNK = 1024 * 1024
_RELEASE = re.compile(r"These rules are (?:effective|current) as of")
_RULES_HEAD = 64 * 1024  # the date line is printed under the title
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class VerifyError(ValueError):
    """A downloaded file that is not what it should be; the message says why."""


class Verified(NamedTuple):
    """A file that passed: its sha256 and size."""

    sha256: str
    size: int


class _Hashing:
    """A binary reader that hashes and counts what is read through it."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.sha = hashlib.sha256()
        self.size = 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.sha.update(data)
        self.size += len(data)
        return data

    def drain(self) -> None:
        while self.read(_CHUNK):
            pass


def verify(
    path: Path, name: str, *, sha256: str | None = None, size: int | None = None
) -> Verified:
    """Check the file at PATH, to be stored as NAME; raise VerifyError naming what is wrong."""
    with path.open("rb") as handle:
        reader = _Hashing(handle)
        try:
            _check_format(reader, name)
        except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError, ijson.JSONError) as exc:
            raise VerifyError(_reason(exc, name)) from exc
        reader.drain()
    found = Verified(reader.sha.hexdigest(), reader.size)
    if size is not None and found.size != size:
        msg = f"{found.size:,} bytes where the server announced {size:,}"
        raise VerifyError(msg)
    if sha256 is not None and found.sha256 != sha256.lower():
        msg = f"sha256 {found.sha256} is not the published {sha256.lower()}"
        raise VerifyError(msg)
    return found


def _check_format(reader: _Hashing, name: str) -> None:
    if name.endswith(".jsonl.gz"):
        with gzip.GzipFile(fileobj=cast("IO[bytes]", reader), mode="rb") as stream:
            _check_lines(stream)
    elif name.endswith(".json.gz"):
        with gzip.GzipFile(fileobj=cast("IO[bytes]", reader), mode="rb") as stream:
            _check_json(stream)
    elif name.endswith(".json.xz"):
        _check_xz_json(reader)
    elif name.endswith(".json"):
        _check_json(reader)
    elif name.endswith(".txt"):
        _check_rules(reader.read(_RULES_HEAD))


def _check_json(stream: object) -> None:
    """One JSON value, well formed to its end (ijson: a stream, not the whole in memory)."""
    events = 0
    for _ in ijson.parse(stream):
        events += 1
    if not events:
        msg = "empty"
        raise VerifyError(msg)


def _check_lines(stream: Iterable[bytes]) -> None:
    """JSON Lines: the first and the last line are each a JSON object."""
    first = last = None
    for line in stream:
        if line.strip():
            if first is None:
                first = line
            last = line
    if first is None or last is None:
        msg = "no JSON line"
        raise VerifyError(msg)
    for which, line in (("first", first), ("last", last)):
        try:
            value = json.loads(line)
        except ValueError as exc:
            msg = f"its {which} line is not JSON ({exc})"
            raise VerifyError(msg) from exc
        if not isinstance(value, dict):
            msg = f"its {which} line is not a JSON object"
            raise VerifyError(msg)


def _check_xz_json(reader: _Hashing) -> None:
    """An xz stream that decodes to its end mark, holding a JSON object."""
    decoder = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    head = tail = b""
    while chunk := reader.read(_CHUNK):
        if decoder.eof:
            msg = "data after the end of the xz stream"
            raise VerifyError(msg)
        out = decoder.decompress(chunk)
        if out:
            head = head or out[:64]
            tail = (tail + out)[-64:]
    if not decoder.eof:
        msg = "the xz stream ends before its end mark (a cut download)"
        raise VerifyError(msg)
    if not head.lstrip().startswith(b"{") or not tail.rstrip().endswith(b"}"):
        msg = "the xz stream does not hold a JSON object"
        raise VerifyError(msg)


def _check_rules(head: bytes) -> None:
    """A Comprehensive Rules text says, under its title, as of when its rules hold."""
    text = _decode(head)
    if "Comprehensive Rules" not in text or _RELEASE.search(text) is None:
        msg = "not a Comprehensive Rules text (no 'These rules are effective as of' line)"
        raise VerifyError(msg)


def _decode(data: bytes) -> str:
    """Text in the encodings the rules come in: UTF-8/16/32 with a BOM, UTF-16, cp1252."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    if data[1:200:2].count(0) > 50:  # noqa: PLR2004 - mostly-Latin UTF-16 without a BOM
        return data.decode("utf-16-le", errors="replace")
    if data[0:200:2].count(0) > 50:  # noqa: PLR2004
        return data.decode("utf-16-be", errors="replace")
    return data.decode("utf-8", errors="replace")  # cp1252's ASCII reads the same


def _reason(exc: BaseException, name: str) -> str:
    if isinstance(exc, VerifyError):
        return str(exc)
    kind = "gzip" if name.endswith(".gz") else "xz" if name.endswith(".xz") else "JSON"
    if isinstance(exc, EOFError):
        return f"the {kind} stream ends early (a cut download)"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"not valid {kind}: {text}"
