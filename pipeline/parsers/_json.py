"""Helpers the JSON layouts share: sniffing the top level and streaming items."""

from __future__ import annotations

import codecs
import io
import itertools
from functools import lru_cache
from typing import Any

import ijson

from pipeline.errors import InputError

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
