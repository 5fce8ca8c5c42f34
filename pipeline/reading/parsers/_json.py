"""Helpers the JSON layouts share: sniffing a document's top level, streaming its items.

Every reader opens a fresh stream of the document (RawDocument.open), so a document of any
size, compressed or not, is read in bounded memory; each stream is looked over for the
JSON limits (Look) a chunk ahead of the parser. JSON Lines are read line by line.
"""

from __future__ import annotations

import codecs
import io
import itertools
import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any, BinaryIO

import ijson

from pipeline.decoding.look import Checked, check_limits, line_limit
from pipeline.errors import InputError
from pipeline.limits import MAX_NUMBER, over
from pipeline.reading.parsers import _surrogates as surrogates
from pipeline.reading.parsers._surrogates import Repaired

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pipeline.limits import Limits
    from pipeline.models import RawDocument

__all__ = [
    "check_limits",
    "events",
    "first_record",
    "is_json",
    "is_json_lines",
    "items",
    "kvitems",
    "line_limit",
    "records",
    "scalar_before",
    "top_level",
]

_SNIFF_EVENTS = 12


def is_json(data: bytes) -> bool:
    """Tell whether bytes look like a JSON document: an object or array at the top."""
    head = data[:64].removeprefix(codecs.BOM_UTF8).lstrip()
    return head[:1] in {b"{", b"["}


def stream(doc: RawDocument) -> Repaired:
    """A fresh stream of the JSON document, past a UTF-8 BOM, looked over for the limits.

    A document held in memory was looked over whole when it was made (read.to_document):
    its streams are not looked at again. Lone surrogate escapes are replaced as it is read.
    """
    if doc.opener is None:
        return Repaired(io.BytesIO(doc.data.removeprefix(codecs.BOM_UTF8)))
    return Repaired(Checked(doc.open(), doc.path, doc.limits))


def events(doc: RawDocument) -> Iterator[tuple[str, str, Any]]:
    """The (prefix, event, value) of each ijson event of DOC; broken JSON just ends them."""
    with stream(doc) as source:
        try:
            yield from ijson.parse(source, use_float=True)
        except ijson.JSONError:
            return  # a truncated or broken document: the parser reports it when it reads


@lru_cache(maxsize=4)  # detection and parsing ask about the same document in turn
def top_level(doc: RawDocument) -> tuple[str, dict[str, Any]]:
    """Peek at the start of a JSON document without reading it all.

    Returns ('map', {first top-level keys: scalar values or None}) or
    ('array', {keys and scalar values of its first item}). Callers must not change the dict.
    """
    kind = ""
    seen: dict[str, Any] = {}
    scalars = {"string", "number", "boolean", "null"}
    for prefix, event, value in itertools.islice(events(doc), _SNIFF_EVENTS):
        if not kind:
            kind = {"start_map": "map", "start_array": "array"}.get(event, "scalar")
            continue
        parent, key = ("", prefix) if kind == "map" else ("item", prefix[len("item.") :])
        if event == "map_key" and prefix == parent:
            seen[value] = None
        elif event in scalars and key in seen and prefix in {key, f"item.{key}"}:
            seen[key] = value
    return kind, seen


def scalar_before(doc: RawDocument, prefix: str, stop_key: str) -> Any:  # noqa: ANN401 - JSON
    """The scalar at PREFIX, if it comes before the top-level key STOP_KEY; else None.

    Reads only the head of the document: MTGJSON's `meta` precedes its large `data`.
    """
    scalars = {"string", "number", "boolean"}
    for where, event, value in events(doc):
        if where == prefix and event in scalars:
            return value
        if where == "" and event == "map_key" and value == stop_key:
            return None
    return None


def items(doc: RawDocument, prefix: str, warnings: list[str] | None = None) -> Any:  # noqa: ANN401 - JSON values
    """Stream the values under PREFIX; broken JSON raises InputError naming the document.

    Lone surrogate escapes replaced on the way are counted in a warning added to WARNINGS
    once the values have all been read.
    """
    with stream(doc) as source:
        try:
            yield from ijson.items(source, prefix, use_float=True)
        except ijson.JSONError as exc:
            raise InputError(doc.path, f"invalid JSON: {exc}") from exc
        if source.replaced and warnings is not None:
            warnings.append(surrogates.warning(source.replaced))


def kvitems(doc: RawDocument, prefix: str, warnings: list[str] | None = None) -> Any:  # noqa: ANN401 - JSON values
    """Stream the (key, value) pairs of the object at PREFIX; broken JSON raises InputError.

    WARNINGS as in items().
    """
    with stream(doc) as source:
        try:
            yield from ijson.kvitems(source, prefix, use_float=True)
        except ijson.JSONError as exc:
            raise InputError(doc.path, f"invalid JSON: {exc}") from exc
        if source.replaced and warnings is not None:
            warnings.append(surrogates.warning(source.replaced))


def is_json_lines(source: BinaryIO, limits: Limits) -> bool:
    """Tell whether a stream holds JSON Lines: its first line a whole object, the next an object.

    SOURCE is read from where it is to the start of its second non-blank line.
    """
    limit = line_limit(limits)
    first = _next_line(source, limit).removeprefix(codecs.BOM_UTF8)
    second = _next_line(source, limit)
    if not first.endswith(b"\n") or not second.lstrip().startswith(b"{"):
        return False  # one line (a minified document), or a first line longer than the limit
    try:
        return isinstance(json.loads(first), dict)
    except (ValueError, RecursionError):
        return False


def _next_line(source: BinaryIO, limit: int) -> bytes:
    """The next line that is not blank (at most LIMIT bytes), or b"" at the end."""
    while (line := source.readline(limit)) and not line.strip():
        pass
    return line


def records(doc: RawDocument, warnings: list[str]) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each line of JSON Lines; a line that is no JSON is a warning.

    A line past a JSON limit rejects the document, as in a JSON document: it is no
    download's slip but a hostile file.
    """
    limits = doc.limits
    limit = line_limit(limits)
    with doc.open() as source:
        for number, raw in enumerate(iter(lambda: source.readline(limit + 1), b""), start=1):
            line = (raw.removeprefix(codecs.BOM_UTF8) if number == 1 else raw).strip()
            if len(raw) > limit:
                found = f"line {number} is longer than {limit:,} bytes, four times a string's"
                raise InputError(doc.path, over("string", found, limits.string))
            if not line:
                continue
            _check_line(line, number, doc.path, limits)
            line, replaced = surrogates.repaired(line)
            if replaced:
                warnings.append(surrogates.warning(replaced, f"line {number}: "))
            try:
                value = json.loads(line)
            except ValueError as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                warnings.append(f"line {number} is not JSON ({reason}); skipped")
                continue
            yield number, value


def _check_line(line: bytes, number: int, path: str, limits: Limits) -> None:
    """The JSON limits on one line; a short line with few brackets cannot pass them."""
    brackets = line.count(b"[") + line.count(b"{")
    if len(line) <= min(limits.string, MAX_NUMBER) and brackets <= limits.depth:
        return
    try:
        check_limits(line, path, limits)
    except InputError as exc:
        raise InputError(path, f"line {number}: {exc.reason}") from exc


@lru_cache(maxsize=4)
def first_record(doc: RawDocument) -> dict[str, Any]:
    """The first object of JSON Lines ({} if the first line is none): what detection reads."""
    for _, value in records(doc, []):
        return value if isinstance(value, dict) else {}
    return {}
