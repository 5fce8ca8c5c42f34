"""The JSON look: nesting, strings and numbers measured before the parser is given the bytes.

ijson keeps a path string per open level (memory quadratic in the depth), builds every
string whole, and yajl's time grows with the square of a number's length, so each chunk of
a JSON stream is looked over before the parser reads it. The look keeps a few counters
between chunks (the level, whether a string is open and how long it is, the number that
ended the chunk), so a stream of any size is looked at with the memory of one chunk.
"""

from __future__ import annotations

import codecs
import io
from typing import TYPE_CHECKING, NoReturn

import numpy as np

from pipeline.errors import InputError
from pipeline.limits import MAX_NUMBER, over

if TYPE_CHECKING:
    from typing import BinaryIO

    from pipeline.limits import Limits

# The bytes that shape a JSON document: the depth is read from these alone.
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_STEPS = np.zeros(256, np.int32)
_STEPS[[ord("["), ord("{")]] = 1
_STEPS[[ord("]"), ord("}")]] = -1
_CHUNK = 1 << 22  # bytes of a whole document looked at at once by check_limits()
READ = 1 << 20  # bytes a checked stream reads from its source at once, once under way
# Its first read: a peek at the top level needs a few hundred bytes, not a whole READ.
_FIRST_READ = 1 << 16
_DIGITS = b"-+.0123456789eE"
# Characters a JSON number is made of become 1, the rest 0: a long number is a long run of 1.
_NUMERIC = bytes(1 if b in _DIGITS else 0 for b in range(256))
_RUN = b"\x01" * (MAX_NUMBER + 1)
_QUOTE = ord('"')


class Look:
    """The look over one JSON stream, fed chunk by chunk; a chunk past a limit raises.

    Strings are measured without their escapes (an escaped quote or backslash counts for
    nothing), as before the look was cut in chunks.
    """

    def __init__(self, path: str, limits: Limits) -> None:
        """Look at the stream of PATH under LIMITS."""
        self.path, self.limits = path, limits
        self.level = 0  # brackets open outside strings
        self.inside = False  # a string is open where the bytes seen end
        self.open_length = 0  # its bytes so far
        self.digits = 0  # number characters ending the bytes seen
        self._backslash = b""  # a lone backslash ending a chunk escapes the next one's first byte

    @property
    def overlong(self) -> bool:
        """Whether the string open at the end of the bytes seen is already past its limit."""
        return self.inside and self.open_length > self.limits.string

    def feed(self, chunk: bytes) -> None:
        """Look at the next CHUNK of the stream."""
        data = self._backslash + chunk
        run = len(data) - len(data.rstrip(b"\\"))
        # A run of backslashes starts an escape: its pairs are escaped backslashes, and an
        # odd last one escapes what comes next, so it waits for the next chunk.
        self._backslash = b"\\" if run % 2 else b""
        self._look(data[:-1] if run % 2 else data)

    def finish(self) -> None:
        """The stream has ended: a string still open is measured to the end."""
        if self._backslash:
            self._backslash = b""
            self._look(b"\\")
        if self.overlong:
            self._long_string(self.open_length)

    def _look(self, data: bytes) -> None:
        body = data
        if b"\\" in data:  # one byte is found fast; most chunks have no escape at all
            for escape in (b"\\\\", b'\\"'):  # in this order: an escaped backslash ends no string
                body = body.replace(escape, b"")
        inside = self.inside
        self._depth(body, inside=inside)
        self._strings(body, inside=inside)
        self._numbers(body, inside=inside)

    def _depth(self, body: bytes, *, inside: bool) -> None:
        """Refuse brackets outside strings nesting deeper than the limit."""
        marks = np.frombuffer(body.translate(None, _NOT_STRUCTURE), np.uint8)
        quotes = marks == _QUOTE
        before = np.cumsum(quotes, dtype=np.int64) - quotes + int(inside)  # quotes before each
        steps = _STEPS[marks[(before & 1) == 0]]  # quotes themselves step by 0
        if steps.size:
            levels = np.cumsum(steps) + self.level
            if int(levels.max()) > self.limits.depth:
                found = "JSON nested too deeply"
                raise InputError(self.path, over("depth", found, self.limits.depth))
            self.level = int(levels[-1])

    def _strings(self, body: bytes, *, inside: bool) -> None:
        """Measure the strings closed in BODY, and the one left open at its end."""
        quotes = np.flatnonzero(np.frombuffer(body, np.uint8) == _QUOTE)
        if inside:
            if not quotes.size:
                self.open_length += len(body)
                return
            closed = self.open_length + int(quotes[0])
            if closed > self.limits.string:
                self._long_string(closed)
            quotes = quotes[1:]
        opened, closing = quotes[0::2], quotes[1::2]
        if closing.size:
            longest = int((closing - opened[: closing.size] - 1).max())
            if longest > self.limits.string:
                self._long_string(longest)
        self.inside = opened.size > closing.size
        self.open_length = len(body) - int(opened[-1]) - 1 if self.inside else 0

    def _long_string(self, length: int) -> NoReturn:
        found = f"a JSON string of {length:,} bytes"
        raise InputError(self.path, over("string", found, self.limits.string))

    def _numbers(self, body: bytes, *, inside: bool) -> None:
        """Refuse a number longer than MAX_NUMBER characters (digits inside strings are text)."""
        lead = len(body) - len(body.lstrip(_DIGITS))
        if self.digits + lead > MAX_NUMBER and not inside:  # a number the chunks cut in two
            _long_number(self.path)
        if lead == len(body):
            self.digits += lead
            return
        block = MAX_NUMBER // 2  # a longer number holds a whole aligned block of its characters
        if any(not body[at : at + block].strip(_DIGITS) for at in range(0, len(body), block)):
            _check_numbers(body, self.path, inside=inside)
        self.digits = len(body) - len(body.rstrip(_DIGITS))


def _long_number(path: str) -> NoReturn:
    found = f"a JSON number of more than {MAX_NUMBER:,} characters"
    raise InputError(path, f"{found}: not a ruling dump's data")


def _check_numbers(body: bytes, path: str, *, inside: bool) -> None:
    """Refuse a run of number characters past MAX_NUMBER outside strings in BODY."""
    counted, quotes, at = 0, int(inside), 0
    while (found := _find_run(body, at)) >= 0:
        quotes += body.count(b'"', counted, found)
        counted = found
        if quotes % 2 == 0:
            _long_number(path)
        at = body.find(b'"', found)  # the run is text: look again past its string
        if at < 0:
            return


def _find_run(body: bytes, at: int) -> int:
    """Where the first run of MAX_NUMBER + 1 number characters at or after AT starts, or -1."""
    for start in range(at, len(body), _CHUNK):
        window = body[start : start + _CHUNK + MAX_NUMBER].translate(_NUMERIC)
        found = window.find(_RUN)
        if found >= 0:
            return start + found
    return -1


def line_limit(limits: Limits) -> int:
    """The longest line of JSON Lines read: four times the longest string allowed."""
    return 4 * limits.string


def check_limits(data: bytes, path: str, limits: Limits) -> None:
    """Refuse JSON nested too deeply or holding a too long string or number, before parsing.

    The depth is counted on the quotes and brackets alone; strings are measured between
    their quotes, numbers where a stretch of their characters is long enough to hold one
    over its limit.
    """
    look = Look(path, limits)
    for start in range(0, len(data), _CHUNK):
        look.feed(data[start : start + _CHUNK])
    look.finish()


class Checked(io.RawIOBase):
    """A JSON stream, past a UTF-8 BOM, looked at (Look) a chunk ahead of whoever reads it.

    A string found past its limit is measured to its end without being handed on, so the
    reason gives its length and the parser never builds it.
    """

    def __init__(self, source: BinaryIO, path: str, limits: Limits) -> None:
        """Look at SOURCE, the stream of PATH, under LIMITS."""
        super().__init__()
        self._source, self._look = source, Look(path, limits)
        self._chunk, self._at, self._ended, self._first = b"", 0, False, True
        self._read = _FIRST_READ  # doubled at each read, up to READ

    def readable(self) -> bool:
        """A checked stream is read, never written."""
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        """Fill BUFFER with the next bytes looked at; 0 at the end."""
        if self._at >= len(self._chunk):
            self._chunk, self._at = self._next(), 0
        size = min(len(buffer), len(self._chunk) - self._at)
        buffer[:size] = self._chunk[self._at : self._at + size]
        self._at += size
        return size

    def _next(self) -> bytes:
        if self._ended:
            return b""
        chunk = self._source.read(self._read)
        self._read = min(2 * self._read, READ)
        if self._first:
            self._first = False
            chunk = chunk.removeprefix(codecs.BOM_UTF8) or self._source.read(self._read)
        if not chunk:
            self._ended = True
            self._look.finish()
            return b""
        self._look.feed(chunk)
        while self._look.overlong:  # measured to its end, never handed on
            more = self._source.read(READ)
            if not more:
                self._look.finish()
            self._look.feed(more)
        return chunk

    def close(self) -> None:
        """Close the source with the stream."""
        self._source.close()
        super().close()
