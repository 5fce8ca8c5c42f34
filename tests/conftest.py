"""Shared fixtures: the seed dumps, a scratch dataset folder, golden-file support."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "raw"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXPECTED = FIXTURES / "expected"
SEEDS = sorted(p.name for p in RAW.glob("0*.txt"))
# The real public files of ../shared/realdata, where this checkout sits beside them.
REALDATA = ROOT.parent / "shared" / "realdata"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add --update-golden: rewrite golden files from the current outputs."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/fixtures/expected from current outputs; read them before committing",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether this session rewrites golden files instead of comparing with them."""
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def raw_copy(tmp_path: Path) -> Path:
    """A writable copy of the shipped raw/ folder (five seeds and their manifest)."""
    target = tmp_path / "raw"
    shutil.copytree(RAW, target)
    return target


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An empty dataset folder."""
    return tmp_path / "normalized"
