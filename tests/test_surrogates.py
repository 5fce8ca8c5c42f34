r"""A lone surrogate escape (`\udc00`) in JSON: that character replaced, the file stored."""

from __future__ import annotations

import gzip
import io
from typing import TYPE_CHECKING

import pytest
from conftest import rows
from layouts import mtgjson, rule, ruling, scryfall

from pipeline import ingest
from pipeline.reading.parsers._surrogates import Repaired, repaired

if TYPE_CHECKING:
    from pathlib import Path

BROKEN = r"Broken \udc00 ruling."
PAIRED = r"A fire \ud83d\udd25 and a backslash \\udc00 kept."
WARNING = "1 lone UTF-16 surrogate escape (such as \\udc00) replaced with U+FFFD"


def _rulings(data: bytes, name: str, tmp_path: Path) -> tuple[list[str], tuple[str, ...]]:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / name).write_bytes(data)
    report = ingest([raw], out=tmp_path / "out")
    assert report.rejected == ()
    return sorted(r["text"] for r in rows(tmp_path / "out", "sightings")), report.warnings


@pytest.mark.parametrize("name", ["list.json", "list.json.gz"], ids=["in-memory", "streamed"])
def test_a_lone_surrogate_is_replaced_and_the_file_stored(tmp_path: Path, name: str) -> None:
    """A Scryfall list: the lone escape becomes U+FFFD with a warning; pairs are kept."""
    data = scryfall(f"[{ruling('Fine ruling.')}, {ruling(BROKEN)}, {ruling(PAIRED)}]")
    texts, warnings = _rulings(gzip.compress(data) if name.endswith(".gz") else data, name,
                               tmp_path)  # fmt: skip
    assert texts == [
        "A fire \U0001f525 and a backslash \\udc00 kept.",
        "Broken \ufffd ruling.",
        "Fine ruling.",
    ]
    assert f"{name}: {WARNING}" in warnings


def test_a_lone_surrogate_in_an_mtgjson_file_is_replaced(tmp_path: Path) -> None:
    """An MTGJSON set file: the same repair, the same warning."""
    data = mtgjson(f"[{rule('Fine ruling.')}, {rule(BROKEN)}]")
    texts, warnings = _rulings(data, "TSP.json", tmp_path)
    assert texts == ["Broken \ufffd ruling.", "Fine ruling."]
    assert f"TSP.json: {WARNING}" in warnings


def test_a_lone_surrogate_in_json_lines_is_replaced_on_its_line(tmp_path: Path) -> None:
    """JSON Lines: the line named in the warning, the other lines stored as they are."""
    data = "\n".join([ruling("Fine ruling."), ruling(BROKEN), ruling("Another.")]).encode()
    texts, warnings = _rulings(data, "rulings.jsonl", tmp_path)
    assert texts == ["Another.", "Broken \ufffd ruling.", "Fine ruling."]
    assert f"rulings.jsonl: line 2: {WARNING}" in warnings


def test_escapes_are_judged_from_the_start_in_every_chunking() -> None:
    r"""Read a chunk at a time, of any size, the stream gives what the whole does.

    Escaped backslashes pair from the left: `\\\udc00` is a backslash, then an escape.
    """
    data = rb'["\udc00", "\\udc00", "\\\udc00", "\ud83d\ude00", "\ud83d", "\ude00\\", "x"]'
    whole, count = repaired(data)
    assert count == 4
    assert whole == (
        rb'["\ufffd", "\\udc00", "\\\ufffd", "\ud83d\ude00", "\ufffd", "\ufffd\\", "x"]'
    )
    for size in range(1, 16):
        stream, parts = Repaired(io.BytesIO(data)), []
        while part := stream.read(size):
            parts.append(part)
        assert (b"".join(parts), stream.replaced) == (whole, count), size
