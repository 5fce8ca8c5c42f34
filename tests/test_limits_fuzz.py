"""Fuzzing the JSON, HTML and text readers past each limit, and the JSON look's escapes."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layouts import gatherer, mtgjson, rule, ruling, scryfall

from pipeline.errors import InputError
from pipeline.limits import MAX_NUMBER, Limits
from pipeline.models import FileReport, FileStatus, SourceHints
from pipeline.reading.parsers._json import check_limits
from pipeline.reading.parsers._look import Look
from pipeline.reading.read import InputFile
from pipeline.reading.scan import ScanJob, scan_batch

LOOK = Limits(depth=8, string=2 * MAX_NUMBER)


@pytest.mark.parametrize(
    ("data", "refused"),
    [
        (b'["[[[[[[[[[[[[", "]]]]]]]]]]"]', False),
        (b'["\\"[[[[[[[[[[[[", 1]', False),
        (b'["\\\\", [[[[[[[[[[[[1]]]]]]]]]]]]]', True),
        (b'["\\\\\\"[[[[[[[[[[[["]', False),
        (b"[[[[[[[[[1]]]]]]]]]", True),
        (b"[[[[[[[[1]]]]]]]]", False),
        (b'{"a": "' + b"x" * (LOOK.string + 1) + b'"}', True),
        (b'{"a": "' + b"x" * LOOK.string + b'"}', False),
        (b'["' + b"x" * (LOOK.string + 1), True),
        (b'["' + b"9" * (MAX_NUMBER + 1) + b'"]', False),
        (b"[" + b"9" * (MAX_NUMBER + 1) + b"]", True),
    ],
    ids=[
        "brackets-in-strings",
        "escaped-quote",
        "escaped-backslash-then-deep",
        "backslash-and-quote-escaped",
        "nine-levels",
        "eight-levels",
        "long-string",
        "string-at-cap",
        "unclosed-string",
        "digits-in-a-string",
        "long-number",
    ],
)
def test_json_look_counts_only_what_parsing_would(data: bytes, refused: bool) -> None:  # noqa: FBT001
    """Brackets and digits inside strings (escapes included) count for nothing."""
    try:
        check_limits(data, "x.json", LOOK)
    except InputError:
        assert refused
    else:
        assert not refused


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b"a", b"9", b"9" * 40,
                                    b"x" * 30, b"9" * (MAX_NUMBER // 3)]), max_size=40),
    cuts=st.lists(st.integers(1, 9), min_size=1, max_size=8),
)  # fmt: skip
def test_json_look_is_the_same_whatever_the_chunks(parts: list[bytes], cuts: list[int]) -> None:
    """A stream looked at in chunks cut anywhere is refused or not as the whole of it is.

    Cuts fall inside escapes, numbers and strings: the look carries them over.
    """
    data, limits = b"".join(parts), Limits(depth=6, string=40)
    look, at, steps = Look("x.json", limits), 0, itertools.cycle(cuts)
    try:
        while at < len(data):
            step = next(steps)
            look.feed(data[at : at + step])
            at += step
        look.finish()
    except InputError:
        chunked = True
    else:
        chunked = False
    try:
        check_limits(data, "x.json", limits)
    except InputError:
        assert chunked
    else:
        assert not chunked


SMALL = Limits(depth=8, html_depth=300, string=200, ruling=100)
_SHORT = "A short ruling."


@st.composite
def _json_case(draw: st.DrawFn) -> tuple[bytes, str | None]:
    """A Scryfall or MTGJSON file around the limits, and the limit it must be refused by."""
    nesting, length = draw(st.integers(0, 12)), draw(st.integers(1, 400))
    digits = draw(st.sampled_from([1, 8, MAX_NUMBER + 1, 3 * MAX_NUMBER]))  # yajl takes 18
    extra = ', "x": ' + "[" * nesting + "9" * digits + "]" * nesting
    of_mtgjson = draw(st.booleans())
    one = rule if of_mtgjson else ruling
    rulings = f"[{one(_SHORT)}, {one('z' * length, extra)}]"
    data = mtgjson(rulings) if of_mtgjson else scryfall(rulings)
    depth = (6 if of_mtgjson else 3) + nesting  # levels opened down to the nested value
    if depth > SMALL.depth:
        return data, "PIPELINE_MAX_DEPTH"
    if length > SMALL.string:
        return data, "PIPELINE_MAX_STRING"
    if digits > MAX_NUMBER:
        return data, "JSON number"
    return data, None


@settings(max_examples=60, deadline=None)
@given(case=_json_case())
def test_json_reader_fuzzed_past_each_limit(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[bytes, str | None]
) -> None:
    """JSON past a limit is rejected naming it; within them, an over-long ruling is skipped."""
    data, limit = case
    report, rows = _scan_one(tmp_path_factory, "f.json", data)
    if limit is not None:
        assert report.status is FileStatus.REJECTED
        assert limit in (report.reason or "")
        return
    assert report.status is FileStatus.STORED, report.reason
    skipped = [w for w in report.warnings if "PIPELINE_MAX_RULING" in w]
    assert rows == 2 - len(skipped)  # the over-long ruling is the second one, at position 1
    assert all(w.startswith("ruling 1 has ") for w in skipped)


@settings(max_examples=40, deadline=None)
@given(wrap=st.integers(0, 400), length=st.integers(1, 200))
def test_html_reader_fuzzed_past_each_limit(
    tmp_path_factory: pytest.TempPathFactory, wrap: int, length: int
) -> None:
    """HTML nested past its limit is rejected naming it; a ruling past its length is skipped."""
    report, rows = _scan_one(tmp_path_factory, "p.html", gatherer(f"{_SHORT}|{'w' * length}", wrap))
    if report.status is FileStatus.REJECTED:
        assert "PIPELINE_MAX_HTML_DEPTH" in (report.reason or "")
        assert wrap > SMALL.html_depth - 10  # html, body, table, tr, td around the cells
        return
    assert wrap <= SMALL.html_depth
    assert rows == (1 if length > SMALL.ruling else 2)
    assert any("PIPELINE_MAX_RULING" in w for w in report.warnings) == (length > SMALL.ruling)


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 300), min_size=1, max_size=5))
def test_text_reader_fuzzed_past_each_limit(
    tmp_path_factory: pytest.TempPathFactory, lengths: list[int]
) -> None:
    """A text dump keeps every ruling within the length limit and skips each one past it."""
    blocks = "".join(f"2024-02-02\n\n{'v' * n}\n\n" for n in lengths)
    report, rows = _scan_one(tmp_path_factory, "t.txt", f"Rift Bolt\n\n{blocks}".encode())
    kept = sum(n <= SMALL.ruling for n in lengths)
    if not kept:
        assert report.status is FileStatus.REJECTED
        return
    assert report.status is FileStatus.STORED
    assert rows == kept
    skipped = [w for w in report.warnings if "PIPELINE_MAX_RULING" in w]
    assert len(skipped) == len(lengths) - kept


def _scan_one(factory: pytest.TempPathFactory, name: str, data: bytes) -> tuple[FileReport, int]:
    root = factory.mktemp("fuzz")
    (root / name).write_bytes(data)
    job = ScanJob(root, InputFile(str(root / name), name), SourceHints(), None, None, 1, SMALL)
    batch = scan_batch([job])
    [result] = batch.results
    rows = batch.sightings.num_rows if batch.sightings is not None else 0
    assert json.dumps(result.report.reason)  # a reason is plain text, never an object
    return result.report, rows
