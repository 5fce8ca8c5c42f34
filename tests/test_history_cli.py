"""`pipeline history`: what became of each version of a card's rulings and of a rule.

Built from real files: seed 001 (Rift Bolt's rulings after the 2024-02-02 suspend change) with
the 2022 MTGJSON TSP file and the 2023-11-17 Comprehensive Rules, then a night later an MTGJSON
build of 2024-02-06 that carries the seed's English rulings, with the 2024-02-06 rules.
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from conftest import REALDATA, ROOT

from pipeline.cli import cli
from pipeline.ingest import ingest
from pipeline.text.words import counted

if TYPE_CHECKING:
    from pathlib import Path

SEED = ROOT / "raw" / "001_ca7dd0badab20c1e.txt"
TSP = REALDATA / "mtgjson-2022" / "TSP.json"
RULES = REALDATA / "comprules"
CARDS = "Cards exiled with suspend are exiled face up."
pytestmark = pytest.mark.skipif(not TSP.is_file(), reason="needs ../shared/realdata")


def _history(out: Path, *args: str) -> list[str]:
    result = CliRunner().invoke(cli, ["history", *args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def _english_2024() -> list[dict[str, str]]:
    """The seed's English rulings (dated 02/02/2024) as MTGJSON rulings."""
    blocks = SEED.read_text("utf-8").split("\n\n")
    pairs = zip(blocks[1::2], blocks[2::2], strict=False)
    return [{"date": "2024-02-02", "text": t.strip()} for d, t in pairs if d == "02/02/2024"]


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The histories of Rift Bolt after each run, and of rules 702.62a and 702.62b."""
    base = tmp_path_factory.mktemp("history")
    raw, out = base / "raw", base / "normalized"
    raw.mkdir()
    shutil.copy(SEED, raw / "rift-bolt.txt")
    manifest = "path,card,source,fetched_at,date_order\nrift-bolt.txt,,,2024-02-05,\n"
    (raw / "manifest.csv").write_text(manifest, "utf-8")
    shutil.copy(TSP, raw / "TSP.json")
    shutil.copy(RULES / "2023-11-17.txt", raw / "MagicCompRules 20231117.txt")
    ingest([raw], out=out)
    found = {"before": _history(out, "Rift Bolt")}
    build = json.loads(TSP.read_text("utf-8"))
    build["meta"] = {"date": "2024-02-06", "version": "5.2.2+20240206"}
    [rift_bolt] = [c for c in build["data"]["cards"] if c["name"] == "Rift Bolt"]
    rift_bolt["rulings"] = _english_2024()
    (raw / "TSP.json").write_text(json.dumps(build), "utf-8")
    (raw / "MagicCompRules 20231117.txt").unlink()
    shutil.copy(RULES / "2024-02-06.txt", raw / "MagicCompRules 20240206.txt")
    ingest([raw], out=out)
    found["after"] = _history(out, "Rift Bolt")
    found["702.62a"] = _history(out, "--rule", "702.62a")
    found["702.62b"] = _history(out, "--rule", "702.62b")
    return found


def _numbered(lines: list[str], number: int) -> list[str]:
    """Version NUMBER's line and the lines under it (what became of it)."""
    start = next(n for n, line in enumerate(lines) if line.lstrip().startswith(f"#{number} "))
    end = start + 1
    while end < len(lines) and not lines[end].lstrip().startswith("#"):
        end += 1
    return lines[start:end]


def test_a_staler_source_is_named(histories: dict[str, list[str]]) -> None:
    """Before the update MTGJSON's 2022 wordings are only staler, the seed's in force."""
    lines = histories["before"]
    assert lines[0] == "Rift Bolt: 28 versions (13 in force, 15 only in a staler source)"
    assert _numbered(lines, 13) == [
        "#13  2021-06-18  since 2022-04-25 (run 1), only in a staler source  [mtgjson]  " + CARDS
    ]
    assert _numbered(lines, 27) == [
        "#27  2024-02-02  since 2024-02-05 (run 1), in force                 [rift-bolt.txt]  "
        + CARDS
    ]


def test_what_became_of_each_version(histories: dict[str, list[str]]) -> None:
    """After the update each 2022 version says how it went and which version it became."""
    lines = histories["after"]
    assert lines[0] == "Rift Bolt: 38 versions (23 in force, 15 earlier)"
    assert _numbered(lines, 13) == [
        "#13  2021-06-18  2022-04-25 (run 1) until 2024-02-06 (run 2)        [mtgjson]  " + CARDS,
        "     re-dated to 2024-02-02 (now #37)",
    ]
    assert _numbered(lines, 37) == [
        "#37  2024-02-02  since 2024-02-06 (run 2), in force                 [mtgjson]  " + CARDS
    ]
    fates = {n: _numbered(lines, n)[1] for n in range(1, 16)}
    assert fates == {
        1: "     removed",
        2: "     re-dated to 2024-02-02 (now #30)",
        3: "     re-dated to 2024-02-02 (now #31)",
        4: "     removed",
        5: "     re-dated to 2024-02-02 (now #32)",
        6: "     removed; replaced by #33, which carries its words",
        7: "     re-dated to 2024-02-02 (now #34)",
        8: "     re-dated to 2024-02-02 (now #35)",
        9: "     removed; replaced by #33, which carries its words",
        10: "     re-dated to 2024-02-02 (now #36)",
        11: "     removed",
        12: (
            "     amended into #29 (dated 2024-02-02, similarity 83.3%): … that [-causes-]"
            "{+gives+} you {+the option+} to … removed. [-If you cast a creature spell this way, "
            "it gains haste until you lose control of that creature (or, in rare cases, you lose "
            "control of the creature spell while it\u2019s on the stack).-]"
        ),
        13: "     re-dated to 2024-02-02 (now #37)",
        14: "     re-dated to 2024-02-02 (now #38)",
        15: "     removed",
    }
    assert _numbered(lines, 33)[0].startswith(
        "#33  2024-02-02  since 2024-02-06 (run 2), in force                 [mtgjson]  "
        "Due to a recent rules change to suspend,"
    )
    assert _numbered(lines, 16)[1] == (
        "     translates (removed (as of 2024-02-06, run 2)): If the spell requires any targets, "
        "those targets are chosen when the spell is finally cast, not when it\u2019s exiled."
    )


def test_a_rule_amended_between_two_releases(histories: dict[str, list[str]]) -> None:
    """702.62a: the 2023-11-17 text amended into the 2024-02-06 one, with the words changed."""
    lines = histories["702.62a"]
    assert lines[0] == "702.62a: 2 versions (1 current, 1 earlier)"
    assert lines[1].startswith(
        "#1  2023-11-17  2023-11-17 (run 1) until 2024-02-02 (run 2)        "
        "[comprehensive_rules]  Suspend is a keyword that represents three abilities."
    )
    assert lines[2] == (
        "    amended into #2 (dated 2024-02-02, similarity 99.3%): … exiled, {+you may+} play … "
        "you [-can\u2019t,-]{+don\u2019t,+} it …"
    )
    assert lines[3].startswith(
        "#2  2024-02-02  since 2024-02-02 (run 2), current                  [comprehensive_rules]"
    )
    assert len(lines) == 4


def test_one_version_is_one(histories: dict[str, list[str]]) -> None:
    """A rule both releases hold alike has "1 version", not "1 versions"."""
    assert histories["702.62b"][0] == "702.62b: 1 version (1 current)"


@pytest.mark.parametrize(
    ("count", "expected"),
    [(0, "0 entries"), (1, "1 entry"), (2, "2 entries"), (1234, "1234 entries")],
    ids=["none", "one", "two", "thousands"],
)
def test_counted(count: int, expected: str) -> None:
    """A count with its noun in the right number, an irregular plural given."""
    assert counted(count, "entry", "entries") == expected
    assert counted(count, "version") == expected.replace("entries", "versions").replace(
        "entry", "version"
    )
