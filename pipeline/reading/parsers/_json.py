"""Helpers the JSON layouts share: sniffing the top level and streaming items."""

from __future__ import annotations

import codecs
import io
import itertools
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import ijson
import numpy as np

from pipeline.errors import InputError
from pipeline.limits import MAX_NUMBER, over

if TYPE_CHECKING:
    from pipeline.limits import Limits

_SNIFF_EVENTS = 12


def is_json(data: bytes) -> bool:
    """Tell whether bytes look like a JSON document: an object or array at the top."""
    head = data[:64].removeprefix(codecs.BOM_UTF8).lstrip()
    return head[:1] in {b"{", b"["}


def stream(data: bytes) -> io.BytesIO:
    """A file object over the JSON bytes, past a UTF-8 BOM."""
    return io.BytesIO(data.removeprefix(codecs.BOM_UTF8))


@lru_cache(maxsize=1)  # detection and parsing ask about the same document in turn
def top_level(data: bytes) -> tuple[str, dict[str, Any]]:
    """Peek at the start of a JSON document without reading it all.

    Returns ('map', {first top-level keys: scalar values or None}) or
    ('array', {keys and scalar values of its first item}). Callers must not change the dict.
    """
    kind = ""
    seen: dict[str, Any] = {}
    scalars = {"string", "number", "boolean", "null"}
    try:
        for prefix, event, value in itertools.islice(ijson.parse(stream(data)), _SNIFF_EVENTS):
            if not kind:
                kind = {"start_map": "map", "start_array": "array"}.get(event, "scalar")
                continue
            parent, key = ("", prefix) if kind == "map" else ("item", prefix[len("item.") :])
            if event == "map_key" and prefix == parent:
                seen[value] = None
            elif event in scalars and key in seen and prefix in {key, f"item.{key}"}:
                seen[key] = value
    except ijson.JSONError:
        pass  # a truncated or broken document: the parser reports it when it reads
    return kind, seen


def scalar_before(data: bytes, prefix: str, stop_key: str) -> Any:  # noqa: ANN401 - JSON
    """The scalar at PREFIX, if it comes before the top-level key STOP_KEY; else None.

    Reads only the head of the document: MTGJSON's `meta` precedes its large `data`.
    """
    scalars = {"string", "number", "boolean"}
    try:
        for where, event, value in ijson.parse(stream(data)):
            if where == prefix and event in scalars:
                return value
            if where == "" and event == "map_key" and value == stop_key:
                return None
    except ijson.JSONError:
        return None  # the parser reports a broken document when it reads it
    return None


def items(data: bytes, prefix: str, path: str) -> Any:  # noqa: ANN401 - JSON values
    """Stream the values under PREFIX; broken JSON raises InputError naming PATH."""
    try:
        yield from ijson.items(stream(data), prefix, use_float=True)
    except ijson.JSONError as exc:
        raise InputError(path, f"invalid JSON: {exc}") from exc


def kvitems(data: bytes, prefix: str, path: str) -> Any:  # noqa: ANN401 - JSON values
    """Stream the (key, value) pairs of the object at PREFIX; broken JSON raises InputError."""
    try:
        yield from ijson.kvitems(stream(data), prefix, use_float=True)
    except ijson.JSONError as exc:
        raise InputError(path, f"invalid JSON: {exc}") from exc


# The bytes that shape a JSON document: the depth is read from these alone.
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_STEPS = np.zeros(256, np.int32)
_STEPS[[ord("["), ord("{")]] = 1
_STEPS[[ord("]"), ord("}")]] = -1
_CHUNK = 1 << 22  # structure bytes looked at at once: the check's memory stays a few times this
_DIGITS = b"-+.0123456789eE"
# Characters a JSON number is made of become 1, the rest 0: a long number is a long run of 1.
_NUMERIC = bytes(1 if b in _DIGITS else 0 for b in range(256))
_RUN = b"\x01" * (MAX_NUMBER + 1)


def check_limits(data: bytes, path: str, limits: Limits) -> None:
    """Refuse JSON nested too deeply or holding a too long string or number, before parsing.

    ijson keeps a path string per open level (memory quadratic in the depth) and builds
    every string whole, so the bytes are looked over first. The depth is counted on the
    quotes and brackets alone; strings and numbers are measured exactly only where a
    quick look finds a stretch long enough to hold one over its limit.
    """
    body = data
    if b"\\" in data:  # one byte is found fast; most files have no escape at all
        for escape in (b"\\\\", b'\\"'):  # in this order: an escaped backslash ends no string
            body = body.replace(escape, b"")
    if _deeper(body, limits.depth):
        raise InputError(path, over("depth", "JSON nested too deeply", limits.depth))
    half = max(limits.string // 2, 1)  # a longer string holds a whole aligned half without quotes
    if any(body.find(b'"', at, at + half) < 0 for at in range(0, len(body) - half + 1, half)):
        longest = _longest_string(body)
        if longest > limits.string:
            found = f"a JSON string of {longest:,} bytes"
            raise InputError(path, over("string", found, limits.string))
    block = MAX_NUMBER // 2
    if any(not body[at : at + block].strip(_DIGITS) for at in range(0, len(body), block)):
        _check_numbers(body, path)


def _deeper(body: bytes, depth: int) -> bool:
    """Tell whether brackets outside strings nest deeper than DEPTH (escapes removed)."""
    if body.count(b"[") + body.count(b"{") <= depth:
        return False  # too few brackets, counted in strings too, to open DEPTH + 1 levels
    level, inside = 0, 0  # inside: 1 where a string is open at the chunk's start
    for start in range(0, len(body), _CHUNK):
        # Chunk by chunk: translate() allocates as much as its input before it shrinks.
        marks = np.frombuffer(
            body[start : start + _CHUNK].translate(None, _NOT_STRUCTURE), np.uint8
        )
        quotes = marks == ord('"')
        before = np.cumsum(quotes, dtype=np.int32) - quotes + inside  # quotes before each mark
        steps = _STEPS[marks[(before & 1) == 0]]  # quotes themselves step by 0
        if steps.size:
            levels = np.cumsum(steps) + level
            if int(levels.max()) > depth:
                return True
            level = int(levels[-1])
        inside = (inside + int(quotes.sum())) % 2
    return False


def _longest_string(body: bytes) -> int:
    """Bytes in the longest string of BODY (escapes removed), an unclosed one to the end."""
    marks = np.flatnonzero(np.frombuffer(body, np.uint8) == ord('"'))
    pairs = len(marks) // 2
    closed = marks[1 : 2 * pairs : 2] - marks[: 2 * pairs : 2] - 1
    longest = int(closed.max()) if pairs else 0
    return max(longest, len(body) - int(marks[-1]) - 1) if len(marks) % 2 else longest


def _check_numbers(body: bytes, path: str) -> None:
    """Refuse a number longer than MAX_NUMBER characters (digits inside strings are text)."""
    counted, quotes, at = 0, 0, 0
    while (found := _find_run(body, at)) >= 0:
        quotes += body.count(b'"', counted, found)
        counted = found
        if quotes % 2 == 0:
            found_text = f"a JSON number of more than {MAX_NUMBER:,} characters"
            raise InputError(path, f"{found_text}: not a ruling dump's data")
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
