"""Fuzzing what surrounds the files: their names, their folders' names, the settings.

The sibling of test_limits_fuzz.py, which fuzzes what files hold. Whatever the name, a
file is stored or rejected with a reason, the run ends, and every name it stores or
prints is valid UTF-8 on one line; whatever a variable holds, the run gets a usable
value or a usage error naming the variable.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from conftest import RAW, rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import ingest
from pipeline.errors import UsageError
from pipeline.limits import ENV, OTHER_SETTINGS, RANGES, Limits
from pipeline.models import FileStatus
from pipeline.reading import read

SEED = RAW / "003_4e428d287bba6602.txt"
_NOT_INPUTS = {b"manifest.csv", b"README.md", b"README.txt"}  # the raw folder's own files
# Any byte but the separator and NUL; some names are then not UTF-8, some hold line breaks.
_NAME_BYTES = st.binary(min_size=1, max_size=40).map(lambda b: b.replace(b"/", b"_"))
NAMES = _NAME_BYTES.map(lambda b: b.replace(b"\x00", b"0")).filter(lambda b: b not in {b".", b".."})


def _make(raw: Path, parts: list[bytes]) -> None:
    """SEED at raw/PARTS[0]/…/PARTS[-1], folders made on the way."""
    target = os.path.join(os.fsencode(raw), *parts)  # noqa: PTH118 - bytes paths
    os.makedirs(os.path.dirname(target), exist_ok=True)  # noqa: PTH103, PTH120
    shutil.copyfile(SEED, target)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(NAMES, min_size=1, max_size=3), min_size=1, max_size=3))
def test_any_file_or_folder_name_is_stored_or_rejected_with_a_reason(
    paths: list[list[bytes]],
) -> None:
    """Each file under fuzzed names is stored (named in UTF-8) or rejected with a reason."""
    with tempfile.TemporaryDirectory() as scratch:
        raw, out = Path(scratch) / "raw", Path(scratch) / "out"
        raw.mkdir()
        made = set()
        for parts in paths:
            try:
                _make(raw, parts)
            except (FileExistsError, NotADirectoryError, IsADirectoryError):
                continue  # a name already taken by a folder or a file
            if not any(p.startswith(b".") for p in parts) and parts[-1] not in _NOT_INPUTS:
                made.add("/".join(read.escaped(os.fsdecode(p)) for p in parts))
        report = ingest([raw], out=out)
        for file in report.files:
            file.source_path.encode("utf-8")  # storable and printable
            if file.status is FileStatus.REJECTED:
                assert file.reason
        assert made <= {f.source_path for f in report.files}
        for row in rows(out, "files"):
            row["source_path"].encode("utf-8")
        for name in (read.shown(f.source_path) for f in report.files):
            assert "\n" not in name


VARIABLES = sorted([*ENV.values(), *OTHER_SETTINGS])
VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(min_value=-(1 << 70), max_value=1 << 70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        ["inf", "-inf", "nan", "1e9", "0x10", "1_000", " 7 ", "\u0663", "\uff11\uff12", "3.0"]
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(VARIABLES), VALUES)
def test_any_setting_is_a_usable_value_or_a_usage_error(variable: str, value: str) -> None:
    """A value is accepted within its range, in ASCII digits, or refused naming its variable."""
    try:
        limits = Limits.from_env({variable: value})
    except UsageError as exc:
        refused = str(exc)
    else:
        refused = ""
    if refused:
        assert refused.startswith(f"{variable} must be ")
        assert refused.endswith(f", got {value.strip()!r}")
        return
    stripped = value.strip()
    if not stripped or variable in OTHER_SETTINGS:
        return
    assert stripped.isascii()
    field = next(name for name, env in ENV.items() if env == variable)
    low, high = RANGES[field]
    found = getattr(limits, field)
    assert low <= found <= high
    if field == "seconds":  # the timer the workers set takes it
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_VIRTUAL, found)
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
