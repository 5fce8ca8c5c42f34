"""`pipeline history CARD`: the card's Oracle texts after its rulings.

Built from the two MTGJSON builds of Time Spiral in tests/fixtures/raw (2022-04-25 and
2025-08-18): the second rewords Rift Bolt's and Amrou Seekers' self-references and the
suspend reminder text.
"""

from __future__ import annotations

import datetime as dt
import shutil
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, RAW

from pipeline.cli import cli
from pipeline.ingest import ingest
from pipeline.publishing.fates import OracleVersion, oracle_lines

if TYPE_CHECKING:
    from pathlib import Path

BUILD_2022 = FIXTURES / "raw" / "mtgjson-tsp-cards-2022.json"
BUILD_2025 = FIXTURES / "raw" / "mtgjson-tsp-cards-2025.json"
REMINDER = (
    "(Rather than cast this card from your hand, you may pay {R} and exile it with a time "
    "counter on it. At the beginning of your upkeep, remove a time counter. When "
)
BOLT_2022 = (
    "Rift Bolt {2}{R} · Sorcery · Rift Bolt deals 3 damage to any target. · Suspend 1—{R} "
    + REMINDER
    + "the last is removed, cast it without paying its mana cost.)"
)
BOLT_2025 = (
    "Rift Bolt {2}{R} · Sorcery · This spell deals 3 damage to any target. · Suspend 1—{R} "
    + REMINDER
    + "you remove the last, you may play it without paying its mana cost.)"
)


def _history(out: Path, card: str) -> list[str]:
    result = CliRunner().invoke(cli, ["history", card, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def _ingested(tmp_path: Path, *builds: Path) -> Path:
    """A dataset of BUILDS, each read as raw/TSP.json in a run of its own."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    raw.mkdir()
    for build in builds:
        shutil.copy(build, raw / "TSP.json")
        ingest([raw], out=out)
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dataset of the 2022 build, then the 2025 build."""
    return _ingested(tmp_path_factory.mktemp("oracle"), BUILD_2022, BUILD_2025)


def _oracle(lines: list[str]) -> list[str]:
    """The lines from the Oracle header on, checking the blank line before it."""
    start = next(n for n, line in enumerate(lines) if line.startswith("Oracle text:"))
    assert lines[start - 1] == ""
    return lines[start:]


def test_an_amended_oracle_text_follows_the_rulings(both: Path) -> None:
    """Rift Bolt: its 15 rulings, then its two Oracle texts and the words the second changed."""
    lines = _history(both, "Rift Bolt")
    assert lines[0] == "Rift Bolt: 15 versions (15 in force)"
    assert lines.index("") == 16
    assert _oracle(lines) == [
        "Oracle text: 2 versions (mtgjson)",
        "#1  2022-04-25 (run 1) until 2025-08-18 (run 2)        [mtgjson]  " + BOLT_2022,
        "#2  since 2025-08-18 (run 2), in force                 [mtgjson]  " + BOLT_2025,
        (
            "    amended from #1 (similarity 92.6%): … Sorcery [-Rift Bolt-]{+This spell+} deals … "
            "When {+you remove+} the [-last is removed, cast-]{+last, you may play+} it …"
        ),
    ]


def test_a_card_without_rulings_shows_its_oracle_texts(both: Path) -> None:
    """Amrou Seekers has no rulings: it says so, then the self-reference reworded."""
    assert _history(both, "amrou seekers") == [
        "amrou seekers: no rulings",
        "",
        "Oracle text: 2 versions (mtgjson)",
        (
            "#1  2022-04-25 (run 1) until 2025-08-18 (run 2)        [mtgjson]  "
            "Amrou Seekers {2}{W} · Creature — Kithkin Rebel · "
            "Amrou Seekers can't be blocked except by artifact creatures "
            "and/or white creatures. · 2/2"
        ),
        (
            "#2  since 2025-08-18 (run 2), in force                 [mtgjson]  "
            "Amrou Seekers {2}{W} · Creature — Kithkin Rebel · "
            "This creature can't be blocked except by artifact creatures "
            "and/or white creatures. · 2/2"
        ),
        (
            "    amended from #1 (similarity 92.5%): … Rebel [-Amrou Seekers-]{+This creature+} "
            "can't …"
        ),
    ]


def test_one_build_is_one_version(tmp_path: Path) -> None:
    """The 2022 build alone: one text, in force, nothing amended."""
    lines = _history(_ingested(tmp_path, BUILD_2022), "Rift Bolt")
    assert _oracle(lines) == [
        "Oracle text: 1 version (mtgjson)",
        "#1  since 2022-04-25 (run 1), in force                 [mtgjson]  " + BOLT_2022,
    ]


def test_no_card_rows_no_oracle_part(tmp_path: Path) -> None:
    """A dataset of a ruling seed alone has no card rows: the rulings and nothing after."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    raw.mkdir()
    shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw / "rift-bolt.txt")
    ingest([raw], out=out)
    lines = _history(out, "Rift Bolt")
    assert lines[0].startswith("Rift Bolt: ")
    assert "" not in lines
    assert not [line for line in lines if line.startswith("Oracle text")]


def test_a_staler_source_and_two_sources() -> None:
    """Versions are numbered across sources; only a source's own later text is amended."""
    day = dt.date(2024, 1, 1)
    versions = [
        OracleVersion("mtgjson", "Bolt\nOld words", day, 1, day, 2, in_force=False),
        OracleVersion("mtgjson", "Bolt\nNew words", day, 2, in_force=False, similarity=80.0),
        OracleVersion("scryfall", "Bolt\nNew words", day, 3),
    ]
    assert oracle_lines(versions) == [
        "",
        "Oracle text: 3 versions (mtgjson, scryfall)",
        "#1  2024-01-01 (run 1) until 2024-01-01 (run 2)        [mtgjson]  Bolt · Old words",
        "#2  since 2024-01-01 (run 2), only in a staler source  [mtgjson]  Bolt · New words",
        "    amended from #1 (similarity 80.0%): Bolt [-Old-]{+New+} words",
        "#3  since 2024-01-01 (run 3), in force                 [scryfall]  Bolt · New words",
    ]
    assert oracle_lines([]) == []
