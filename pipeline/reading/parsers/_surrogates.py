r"""Lone UTF-16 surrogate escapes in JSON (`"\udc00"`), replaced before a parser sees them.

JSON allows `\udXXX` escapes that pair into nothing; yajl turns one into bytes that are no
UTF-8, and the whole document failed to decode, every ruling of it lost for one character
(Python's json makes a string that no Parquet column can hold). Each lone one becomes
`\ufffd`, the replacement character; pairs and escaped backslashes are left alone.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol, Self

if TYPE_CHECKING:
    from types import TracebackType


class Readable(Protocol):
    """A binary stream as ijson reads it."""

    def read(self, size: int = -1, /) -> bytes:
        """Up to SIZE bytes."""
        ...

    def close(self) -> None:
        """Close it."""
        ...


# Every escape from the left, so that each backslash is read as JSON reads it (`\\udc00` is
# an escaped backslash, then text): a surrogate pair, a lone surrogate, or any other escape
# (`\n`, `\\`, the start of `\u00e9`); a backslash that ends the bytes is an escape cut short.
_ESCAPE = re.compile(
    rb"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[dD][89a-fA-F][0-9a-fA-F]{2}|.|\Z)",
    re.DOTALL,
)
_SURROGATE = re.compile(rb"\\u[dD]")
_LONE = len(rb"\udc00")
_PAIR = 2 * _LONE
REPLACEMENT = rb"\ufffd"


def repaired(data: bytes) -> tuple[bytes, int]:
    r"""DATA with each lone surrogate escape replaced by `\ufffd`, and how many there were."""
    if _SURROGATE.search(data) is None:  # nearly every document (a regex: `in` twice is slower)
        return data, 0
    count = 0

    def one(match: re.Match[bytes]) -> bytes:
        nonlocal count
        if len(match[0]) != _LONE:
            return match[0]
        count += 1
        return REPLACEMENT

    return _ESCAPE.sub(one, data), count


def warning(count: int, where: str = "") -> str:
    """The warning for COUNT lone surrogates replaced (WHERE: `line 3: `, or nothing)."""
    escapes = "escape" if count == 1 else "escapes"
    return (
        f"{where}{count:,} lone UTF-16 surrogate {escapes} (such as \\udc00) replaced with U+FFFD"
    )


class Repaired:
    """A binary stream whose lone surrogate escapes are replaced as it is read."""

    def __init__(self, source: Readable) -> None:
        """Read from SOURCE; `replaced` counts the escapes replaced so far."""
        self._source, self._held, self.replaced = source, b"", 0

    def read(self, size: int = -1) -> bytes:
        """Up to about SIZE bytes, repaired; an escape cut by the source's chunk waits."""
        while True:
            chunk = self._source.read(size)
            data = self._held + chunk
            if not chunk:
                self._held = b""
                return self._repair(data)
            cut = _cut(data)
            self._held = data[cut:]
            if cut:
                return self._repair(data[:cut])

    def _repair(self, data: bytes) -> bytes:
        data, count = repaired(data)
        self.replaced += count
        return data

    def close(self) -> None:
        """Close the source."""
        self._source.close()

    def __enter__(self) -> Self:
        """The stream."""
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Close the source."""
        self.close()


def _cut(data: bytes) -> int:
    """Where DATA may be cut with no escape across: before the first that starts late.

    An escape is at most 12 bytes (a pair): one that starts in the last 11 may be cut
    short, or be the first half of a pair. DATA starts where an escape may start.
    """
    late = len(data) - _PAIR + 1
    if data.find(b"\\", max(0, late)) < 0:
        return len(data)
    for escape in _ESCAPE.finditer(data, _boundary(data, max(0, late))):
        if escape.start() >= late:
            return escape.start()
    return len(data)


def _boundary(data: bytes, before: int) -> int:
    """A place at or before BEFORE that no escape spans: no backslash in the 12 bytes before.

    Found walking back from backslash to backslash, so that escapes are read from there,
    not from DATA's start (a chunk of 64 KiB holds thousands in some files).
    """
    end = before
    while end > 0:
        last = data.rfind(b"\\", max(0, end - _PAIR), end)
        if last < 0:
            return end
        end = last
    return 0
