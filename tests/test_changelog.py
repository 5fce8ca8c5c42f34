"""History across runs: the seed scenario, goldens, grouping, and the report commands."""

from __future__ import annotations

import json
import re
import shutil
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from conftest import EXPECTED, FIXTURES, RAW
from conftest import rows as read_rows

from pipeline import ingest
from pipeline.cli import cli
from pipeline.publishing.dataset import load_changeset
from pipeline.publishing.render import render_json, render_markdown
from pipeline.publishing.render_html import render_html

if TYPE_CHECKING:
    from pathlib import Path

SEED_2023 = RAW / "003_4e428d287bba6602.txt"
SEED_2024 = RAW / "000_3c6244a5804b91f0.txt"
TSP = FIXTURES / "raw" / "mtgjson-tsp"


def _two_runs(tmp_path: Path, first: list[Path], second: list[Path], card: str | None) -> Path:
    """Ingest FIRST then SECOND into one dataset, each file as the same dump path(s)."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    for files in (first, second):
        shutil.rmtree(raw, ignore_errors=True)
        raw.mkdir()
        for n, path in enumerate(files):
            shutil.copy(path, raw / f"dump{n}.txt")
        if card:
            (raw / "manifest.csv").write_text(f"path,card\ndump0.txt,{card}\n", encoding="utf-8")
        ingest([raw], out=out)
    return out


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    """Run 1: seed 003 (2023) as The Tenth Doctor; run 2: seed 000 (2024) of the same card."""
    return _two_runs(tmp_path, [SEED_2023], [SEED_2024], "The Tenth Doctor")


def _changes(out: Path, run: int) -> list[tuple[str, bool, bool, str]]:
    rows = read_rows(out, "changes")
    return [
        (r["change"], r["rule_change"], r["silent"], (r["old_text"] or r["new_text"] or "")[:40])
        for r in rows
        if r["run"] == run
    ]


def test_seed_scenario_changes(scenario: Path) -> None:
    """The 2024 suspend rewrite of one card, classified ruling by ruling."""
    changes = _changes(scenario, 2)
    assert ("amended", True, True, "To time travel, look at each permanent y") in changes
    assert ("amended", True, False, "Suspend is a keyword that represents thr") in changes
    removals = (
        "As the second triggered ability resolves",
        "If you can't cast the card, perhaps beca",
        "You are never forced to activate mana ab",
    )
    for removed in removals:
        assert ("removed", True, False, removed[:40]) in changes
    added = {text for kind, _, _, text in changes if kind == "added"}
    assert added == {
        "Due to a recent rules change to suspend,",
        "Any land cards exiled with The Tenth Doc",
        "If an effect instructs you to choose a c",
        'Neither "Time" nor "Lord" are creature t',
        "Unlike other creature types in Magic tha",
    }
    redated = [c for c in changes if c[0] == "redated"]
    assert len(redated) == 10
    assert not any(rule for _, rule, _, _ in redated)
    suspend = next(
        r for r in read_rows(scenario, "changes")
        if r["change"] == "amended" and r["old_text"].startswith("Suspend")
    )  # fmt: skip
    assert "causes you to cast the card" in suspend["old_text"]
    assert "gives you the option to cast the card" in suspend["new_text"]


def test_first_run_is_first_seen_only(scenario: Path) -> None:
    """Run 1 reports the card as first seen, with no rule change."""
    rows = [r for r in read_rows(scenario, "changes") if r["run"] == 1]
    assert len(rows) == 17
    assert all(r["first_seen"] and not r["rule_change"] for r in rows)


def test_current_marks_the_latest_snapshot(scenario: Path) -> None:
    """Only rulings of the latest snapshot of their (card, source) are current."""
    rulings = read_rows(scenario, "rulings")
    current = [r for r in rulings if r["current"]]
    assert len(current) == 19
    assert all(r["last_run"] == 2 for r in current)
    assert all(r["last_run"] == 1 for r in rulings if not r["current"])


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_seed_scenario_golden(scenario: Path, fmt: str, *, update_golden: bool) -> None:
    """The rendered changelog of run 2, as a person read it."""
    cs = load_changeset(scenario)
    text = render_markdown(cs) if fmt == "md" else render_json(cs)
    golden = EXPECTED / f"seed-scenario.{fmt}"
    if update_golden:
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_json_is_the_same_changeset(scenario: Path) -> None:
    """The JSON rendering carries the groups and counts the Markdown shows."""
    data = json.loads(render_json(load_changeset(scenario)))
    assert data["counts"] == {
        "amended": 3,
        "removed": 3,
        "added": 5,
        "redated": 10,
        "renumbered": 0,
    }
    assert data["runs"] == [2]
    suspend = next(g for g in data["groups"] if (g["old_text"] or "").startswith("Suspend"))
    assert {"op": "-", "text": "causes"} in suspend["diff"]
    assert {"op": "+", "text": "gives"} in suspend["diff"]


def test_straightened_apostrophes_are_no_change(tmp_path: Path) -> None:
    """Real MTGJSON rulings with curly apostrophes, re-read with straight ones: no change."""
    straight = tmp_path / "straight"
    straight.mkdir()
    for path in sorted(TSP.glob("*.txt")):
        text = path.read_text(encoding="utf-8").replace("\u2019", "'").replace("\u201c", '"')
        (straight / path.name).write_text(text.replace("\u201d", '"'), encoding="utf-8")
    out = _two_runs(tmp_path, sorted(TSP.glob("*.txt")), sorted(straight.glob("*.txt")), None)
    assert _changes(out, 2) == []
    runs = read_rows(out, "runs")
    assert runs[1]["rulings_read"] == 33
    assert runs[1]["new_keys"] == 0


def test_same_amendment_on_many_cards_is_one_group(tmp_path: Path) -> None:
    """The suspend rewrite on two cards is one group listing both cards."""
    new = tmp_path / "new"
    new.mkdir()
    for path in sorted(TSP.glob("*.txt")):
        text = path.read_text(encoding="utf-8").replace(
            "causes you to cast", "gives you the option to cast"
        )
        (new / path.name).write_text(text, encoding="utf-8")
    out = _two_runs(tmp_path, sorted(TSP.glob("*.txt")), sorted(new.glob("*.txt")), None)
    cs = load_changeset(out)
    [group] = cs.groups
    assert group.change.value == "amended"
    assert group.silent
    assert [card for card, _ in group.cards] == ["Ancestral Vision", "Rift Bolt"]
    assert "### Amended silently (same date), dated 2021-06-18" in render_markdown(cs)


def test_ruling_cut_to_its_first_sentence_is_one_amendment(tmp_path: Path) -> None:
    """A later cleanup keeps a ruling's first sentence: amended by sentences, in every format."""
    first = "You can exile a card in your hand using suspend any time you could cast that card."
    new = tmp_path / "new"
    new.mkdir()
    for path in sorted(TSP.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").split("\n")
        (new / path.name).write_text(
            "\n".join(first if line.startswith(first) else line for line in lines),
            encoding="utf-8",
        )
    out = _two_runs(tmp_path, sorted(TSP.glob("*.txt")), sorted(new.glob("*.txt")), None)
    cs = load_changeset(out)
    [group] = cs.groups
    assert (group.change.value, group.match) == ("amended", "sentences")
    assert [card for card, _ in group.cards] == ["Ancestral Vision", "Rift Bolt"]
    assert group.new_text == first
    how = "the same sentences with some dropped or added"
    assert how in render_markdown(cs)
    assert how in render_html(cs)
    [entry] = json.loads(render_json(cs))["groups"]
    assert entry["match"] == "sentences"


def test_absent_card_is_not_removed(tmp_path: Path) -> None:
    """A run that does not read a card says nothing about it."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    shutil.copytree(TSP, raw)
    ingest([raw], out=out)
    shutil.copy(SEED_2024, raw / "doctor.txt")
    (raw / "manifest.csv").write_text("path,card\ndoctor.txt,The Tenth Doctor\n", encoding="utf-8")
    ingest([raw], out=out)
    assert {c[0] for c in _changes(out, 2)} == {"added"}
    assert all(r["first_seen"] for r in read_rows(out, "changes"))


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_changelog_command(scenario: Path, tmp_path: Path) -> None:
    """Default latest run; --run picks one; -o writes a file; --format json."""
    code, stdout, _ = _cli("changelog", "--out", str(scenario))
    assert code == 0
    assert stdout.startswith("# Ruling changes: run 2\n")
    code, stdout, _ = _cli("changelog", "--out", str(scenario), "--run", "1")
    assert "17 rulings first seen on 1 card(s)" in stdout
    target = tmp_path / "c.json"
    code, _, _ = _cli("changelog", "--out", str(scenario), "--format", "json", "-o", str(target))
    assert code == 0
    assert json.loads(target.read_text(encoding="utf-8"))["runs"] == [2]
    code, stdout, _ = _cli("changelog", "--out", str(scenario), "--since", "2000-01-01")
    assert stdout.startswith("# Ruling changes: run 1, 2\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run", "9"], "there is no run 9 (runs: 1-2)"),
        (["--run", "1", "--since", "2024-01-01"], "--run and --since exclude each other"),
    ],
)
def test_changelog_usage_errors(scenario: Path, args: list[str], message: str) -> None:
    """Bad selections exit 2 with one Error: line."""
    code, _, stderr = _cli("changelog", "--out", str(scenario), *args)
    assert code == 2
    assert stderr.startswith("Error: ")
    assert message in stderr


def test_reports_on_a_missing_dataset(tmp_path: Path) -> None:
    """Changelog and history on a folder without a dataset say so."""
    for command in (["changelog"], ["history", "X"]):
        code, _, stderr = _cli(*command, "--out", str(tmp_path))
        assert code == 2
        assert "no dataset here" in stderr


def test_history_command(scenario: Path) -> None:
    """Every version of the card, with the run it appeared and the run it went."""
    code, stdout, _ = _cli("history", "The Tenth Doctor", "--out", str(scenario))
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0] == "The Tenth Doctor: 35 versions"
    gone = [line for line in lines if re.search(r"\(run 1\) until \S+ \(run 2\)", line)]
    assert len(gone) == 16
    assert any("each card you own in exile" in line for line in gone)
    kept = [line for line in lines if re.search(r"since \S+ \(run 1\), current", line)]
    assert len(kept) == 1
    assert "Time counters are usually found" in kept[0]
    code, _, stderr = _cli("history", "tenth doctor", "--out", str(scenario))
    assert code == 2
    assert "did you mean The Tenth Doctor?" in stderr
