"""Control characters in the data (a terminal's escapes, a bell, C1) reach no published output."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from conftest import rows
from hypothesis import given
from hypothesis import strategies as st
from layouts import ruling, scryfall

from pipeline import ingest
from pipeline.cli import cli
from pipeline.text.normalize import clean

if TYPE_CHECKING:
    from pathlib import Path

# C0 but tab and line feed, DEL, C1.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
PLAIN = "Red text, a bell, a form feed and C1 here."
RED = r"Red \u001b[31mtext\u001b[0m, a bell\u0007, a form\u000cfeed and C1 \u009b1m here."


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run 1, a Scryfall list; run 2, its first ruling amended with control characters.

    The source name of that ruling holds a terminal's escape in both.
    """
    root = tmp_path_factory.mktemp("controls")
    for run, first in enumerate([PLAIN, RED], start=1):
        raw = root / f"raw{run}"
        raw.mkdir()
        odd_source = ruling(first).replace('"wotc"', '"wotc\\u001b[2J"')
        (raw / "list.json").write_bytes(scryfall(f"[{odd_source}, {ruling('A plain one.')}]"))
        (raw / "manifest.csv").write_text("path,card\nlist.json,Rift Bolt\n", encoding="utf-8")
        ingest([raw], out=root / "normalized")
    return root / "normalized"


def test_stored_texts_hold_no_control_character(dataset: Path) -> None:
    """The ruling is stored without them: the escapes' printable rest kept, blanks as one."""
    texts = {r["text"] for r in rows(dataset, "sightings")}
    assert texts == {PLAIN, "A plain one.", "Red [31mtext[0m, a bell, a form feed and C1 1m here."}


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_the_changelog_holds_no_control_character(dataset: Path, fmt: str) -> None:
    """Markdown and HTML: none, not even from a source name; the texts are there."""
    result = CliRunner().invoke(cli, ["changelog", "--out", str(dataset), "--format", fmt])
    assert result.exit_code == 0
    assert CONTROL.findall(result.stdout) == []
    assert "[2J" in result.stdout
    assert "31mtext" in result.stdout
    assert "a bell, a form feed and C1" in result.stdout


@given(st.text())
def test_clean_leaves_no_control_character(text: str) -> None:
    """Whatever the text, its clean form has none, and cleaning it again changes nothing."""
    cleaned = clean(text)
    assert CONTROL.search(cleaned) is None
    assert clean(cleaned) == cleaned
