"""What a downloaded file must pass before it replaces the previous one in raw/.

First its bytes as they came: the announced size and the published checksum, so a file that
is not the one published is refused before anything is decoded. Then its format, judged by
the name the file will have, with the decoder and the caps the reader uses
(pipeline.decoding, pipeline.limits.Limits: expanded size, ratio, seconds, JSON depth,
string and number length, line length): a gzip or xz stream decodes to its end, JSON is
looked over and parses, JSON Lines have bounded lines and parse on their first and last,
a Comprehensive Rules text decodes whole, holds no NUL, and has its "as of" line.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import os
import re
import time
from pathlib import Path
from typing import BinaryIO, NamedTuple, cast

import ijson
import numpy as np

from pipeline.decoding.compressed import Compression, inflate, sniff
from pipeline.decoding.look import Checked, check_limits, line_limit
from pipeline.decoding.text import marked_encoding
from pipeline.errors import InputError
from pipeline.limits import Limits, over

_CHUNK = 1024 * 1024
_NEWLINE = ord("\n")
_COMPRESSED = {".gz": Compression.GZIP, ".xz": Compression.XZ}  # by the stored name's suffix
_RELEASE = re.compile(r"These rules are (?:effective|current) as of")
_RULES_HEAD = 64 * 1024  # the date line is printed under the title


class VerifyError(ValueError):
    """A downloaded file that is not what it should be; the message says why."""


class Verified(NamedTuple):
    """A file that passed: its sha256 and size."""

    sha256: str
    size: int


def verify(
    file: Path | BinaryIO,
    name: str,
    *,
    sha256: str | None = None,
    size: int | None = None,
    limits: Limits | None = None,
) -> Verified:
    """Check FILE (a path, or a file open to read), to be stored as NAME; raise VerifyError.

    The published SHA256 and the announced SIZE are checked on the bytes as they are, before
    anything is decoded; then the format, under LIMITS (default: Limits()).
    """
    if not isinstance(file, (str, os.PathLike)):
        return _verify(file, name, sha256, size, limits or Limits())
    with Path(file).open("rb") as handle:
        return _verify(handle, name, sha256, size, limits or Limits())


def _verify(
    handle: BinaryIO, name: str, sha256: str | None, size: int | None, limits: Limits
) -> Verified:
    found = _digest(handle)
    if size is not None and found.size != size:
        msg = f"{found.size:,} bytes where the server announced {size:,}"
        raise VerifyError(msg)
    if sha256 is not None and found.sha256 != sha256.lower():
        msg = f"sha256 {found.sha256} is not the published {sha256.lower()}"
        raise VerifyError(msg)
    handle.seek(0)
    timed = _Timed(handle, name, limits)
    try:
        _check_format(cast("BinaryIO", timed), name, found.size, limits)
    except InputError as exc:
        raise VerifyError(exc.reason) from exc
    except (ValueError, ijson.JSONError, RecursionError) as exc:
        raise VerifyError(_reason(exc)) from exc
    return found


def _digest(handle: BinaryIO) -> Verified:
    """The sha256 and size of HANDLE's bytes, read in chunks from the start, nothing decoded."""
    handle.seek(0)
    sha, size = hashlib.sha256(), 0
    while chunk := handle.read(_CHUNK):
        sha.update(chunk)
        size += len(chunk)
    return Verified(sha.hexdigest(), size)


class _Timed:
    """A binary reader that stops once the file's seconds (Limits.seconds) are spent."""

    def __init__(self, raw: BinaryIO, name: str, limits: Limits) -> None:
        self.raw, self.name, self.limits = raw, name, limits
        self.deadline = time.monotonic() + limits.seconds

    def read(self, n: int = -1) -> bytes:
        """At most N bytes (a chunk for N < 0: never the whole file at once)."""
        if time.monotonic() > self.deadline:
            found = "verifying took too long"
            raise InputError(self.name, over("seconds", found, self.limits.seconds))
        return self.raw.read(_CHUNK if n < 0 else n)

    def seek(self, offset: int) -> int:
        return self.raw.seek(offset)

    def close(self) -> None:
        """The file is closed by its owner."""


def _check_format(raw: BinaryIO, name: str, stored: int, limits: Limits) -> None:
    suffix = name[name.rfind(".") :]
    kind = _COMPRESSED.get(suffix)
    content = name.removesuffix(suffix) if kind is not None else name
    if kind is None:
        _check_content(raw, name, content, limits)
        return
    head = raw.read(8)
    if sniff(head) is not kind:
        msg = f"not {kind} data (it begins {head!r})"
        raise VerifyError(msg)
    raw.seek(0)
    with inflate(kind, raw, name, stored, limits) as stream:
        _check_content(stream, name, content, limits)  # each check reads to the end


def _check_content(stream: BinaryIO, name: str, content: str, limits: Limits) -> None:
    if content.endswith(".jsonl"):
        _check_lines(stream, name, limits)
    elif content.endswith(".json"):
        _check_json(stream, name, limits, parse=not name.endswith(".xz"))
    elif content.endswith(".txt"):
        _check_rules(stream)


def _check_json(stream: BinaryIO, name: str, limits: Limits, *, parse: bool) -> None:
    """One JSON value, looked over for the caps; parsed to its end, or (PARSE False) framed.

    AllPrintings (xz) is only framed, its first and last bytes those of an object: parsing
    its gigabyte of JSON would cost a minute, and the reader parses it anyway.
    """
    with io.BufferedReader(Checked(stream, name, limits), _CHUNK) as checked:
        if parse:
            if not sum(1 for _ in ijson.parse(checked)):
                msg = "empty"
                raise VerifyError(msg)
            return
        head = tail = b""
        while chunk := checked.read(_CHUNK):
            head = head or chunk[:64]
            tail = (tail + chunk)[-64:]
    if not head.lstrip().startswith(b"{") or not tail.rstrip().endswith(b"}"):
        msg = "it does not hold a JSON object"
        raise VerifyError(msg)


def _check_lines(stream: BinaryIO, name: str, limits: Limits) -> None:
    """JSON Lines: no line past the line limit; the first and the last line JSON objects.

    Read a chunk at a time, lines found with numpy: a stream of blank lines costs what its
    bytes do, not a Python step per line.
    """
    limit = line_limit(limits)
    first: bytes | None = None
    last = rest = b""
    while chunk := stream.read(_CHUNK):
        data = rest + chunk
        ends = np.flatnonzero(np.frombuffer(data, np.uint8) == _NEWLINE)
        cut = int(ends[-1]) + 1 if ends.size else 0
        starts = np.concatenate(([0], ends[:-1] + 1)) if ends.size else ends
        if ends.size and int((ends - starts).max()) > limit:
            _long_line(name, int((ends - starts).max()), limit)
        whole, rest = data[:cut], data[cut:]
        if len(rest) > limit:
            _long_line(name, len(rest), limit)
        if whole.strip():
            first = first if first is not None else whole.lstrip().split(b"\n", 1)[0]
            last = whole.rstrip().rsplit(b"\n", 1)[-1]
    if rest.strip():
        first = first if first is not None else rest.strip()
        last = rest.strip()
    if first is None:
        msg = "no JSON line"
        raise VerifyError(msg)
    for which, line in (("first", first), ("last", last)):
        check_limits(line, name, limits)
        try:
            value = json.loads(line)
        except ValueError as exc:
            msg = f"its {which} line is not JSON ({exc})"
            raise VerifyError(msg) from exc
        if not isinstance(value, dict):
            msg = f"its {which} line is not a JSON object"
            raise VerifyError(msg)


def _check_rules(stream: BinaryIO) -> None:
    """A Comprehensive Rules text: decodes whole, holds no NUL, says as of when its rules hold.

    Decoded as the reader does (a BOM, UTF-16 told by its zero bytes, else UTF-8, else
    cp1252), a chunk at a time; a hole of NUL bytes (a download spliced or cut) is refused.
    """
    marked = marked_encoding(stream.read(_RULES_HEAD))
    encoding = marked.encoding if marked is not None else None
    for tried in (encoding,) if encoding else ("utf-8", "cp1252"):
        try:
            head = _decoded(stream, tried)
        except UnicodeDecodeError as exc:
            if tried == "utf-8" and encoding is None:
                continue  # not UTF-8: cp1252, as the reader takes it
            msg = f"not text: undecodable as {tried} ({exc.reason})"
            raise VerifyError(msg) from exc
        if "Comprehensive Rules" not in head or _RELEASE.search(head) is None:
            msg = "not a Comprehensive Rules text (no 'These rules are effective as of' line)"
            raise VerifyError(msg)


def _decoded(stream: BinaryIO, encoding: str) -> str:
    """STREAM decoded whole as ENCODING, a chunk at a time; its first characters."""
    stream.seek(0)
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    head = ""
    while True:
        chunk = stream.read(_CHUNK)
        text = decoder.decode(chunk, final=not chunk)
        if "\0" in text:
            msg = "a NUL character in the text (a download with a hole, or no text)"
            raise VerifyError(msg)
        head += text[: _RULES_HEAD - len(head)]
        if not chunk:
            return head


def _long_line(name: str, length: int, limit: int) -> None:
    found = f"a JSON line of {length:,} bytes or more, over the line limit of {limit:,}"
    raise InputError(name, f"{found} (4 times PIPELINE_MAX_STRING, which raises it)")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, VerifyError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to parse"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"not valid JSON: {text}"
