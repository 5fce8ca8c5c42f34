"""Which encoding a text's first bytes say: a byte-order mark, or UTF-16's zero bytes.

The reader decodes a stored text by it and `pipeline fetch` verifies a downloaded one by it,
so both take a file for the same encoding. None: no mark, no UTF-16; the reader then tries
UTF-8, else cp1252.
"""

from __future__ import annotations

import codecs
from typing import NamedTuple

_BOMS = (  # UTF-32 first: its little-endian mark starts with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),  # a codec that also drops the mark if it is read again
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_SAMPLE = 4096  # bytes looked at for UTF-16's zero bytes


class Marked(NamedTuple):
    """An encoding, the length of the mark that said it (0: guessed from zero bytes)."""

    encoding: str
    mark: int


def marked_encoding(head: bytes) -> Marked | None:
    """The encoding HEAD's byte-order mark says, or its zero bytes (mostly-Latin UTF-16)."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return Marked(encoding, len(bom))
    sample = head[:_SAMPLE]
    if len(sample) < 4 or len(sample) % 2:  # noqa: PLR2004 - two code units at least
        return None
    even, odd, half = sample[0::2].count(0), sample[1::2].count(0), len(sample) // 2
    if odd > half * 0.6 and even == 0:
        return Marked("utf-16-le", 0)
    if even > half * 0.6 and odd == 0:
        return Marked("utf-16-be", 0)
    return None
