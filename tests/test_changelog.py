"""History across runs: the seed scenario, goldens, grouping, and the report commands."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from click.testing import CliRunner
from conftest import EXPECTED, FIXTURES, RAW
from conftest import rows as read_rows

from pipeline import ingest
from pipeline.cli import cli
from pipeline.publishing.changelog import changeset
from pipeline.publishing.dataset import load_changeset
from pipeline.publishing.render import render_json, render_markdown
from pipeline.publishing.render_html import render_html
from pipeline.schema import CHANGES

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
    assert "17 rulings first seen on 1 card" in stdout
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
    assert lines[0] == "The Tenth Doctor: 35 versions (19 in force, 16 earlier)"
    gone = [line for line in lines if re.search(r"\(run 1\) until \S+ \(run 2\)", line)]
    assert len(gone) == 16
    assert any("each card you own in exile" in line for line in gone)
    assert (
        "     amended into #21 (dated 2023-10-13, similarity 98.5%): … each {+suspended+} card …"
        in lines
    )
    kept = [line for line in lines if re.search(r"since \S+ \(run 1\), in force", line)]
    assert len(kept) == 1
    assert "Time counters are usually found" in kept[0]
    code, _, stderr = _cli("history", "tenth doctor", "--out", str(scenario))
    assert code == 2
    assert "did you mean The Tenth Doctor?" in stderr


def _change(**fields: object) -> dict[str, object]:
    """One row of changes.parquet: a ruling change of run 2 unless FIELDS say otherwise."""
    row: dict[str, object] = dict.fromkeys(CHANGES.names)
    row.update(run=2, source="src", rule_change=False, silent=False, first_seen=False)
    row.update(fields)
    return row


def _table(*rows: dict[str, object]) -> pa.Table:
    return pa.Table.from_pylist(list(rows), schema=CHANGES)


def test_timeline_counts_changes_by_their_as_of_month() -> None:
    """A change is drawn in the month the data showed it, not in its ruling's own month.

    A renumbered rule keeps its 2023-11-17 date and an amended ruling its 2013 date; the
    2024-02-02 release showed both: one bar, 2024-02, of two.
    """
    as_of = dt.date(2024, 2, 2)
    rows = _table(
        _change(change="renumbered", old_rule_id="701.34d", new_rule_id="701.34e",
                old_date=dt.date(2023, 11, 17), new_date=dt.date(2023, 11, 17),
                old_text_hash="a", new_text_hash="a", old_text="Manifest.", new_text="Manifest.",
                group="g1", card=None, as_of=as_of),
        _change(change="amended", card="Rift Bolt", old_date=dt.date(2013, 6, 7),
                new_date=dt.date(2013, 6, 7), old_text_hash="b", new_text_hash="c",
                old_text="Old words.", new_text="New words.", group="g2", as_of=as_of,
                similarity=80.0, rule_change=True, silent=True, match="characters"),
    )  # fmt: skip
    cs = changeset(rows, [2])
    assert [g.when for g in cs.groups] == [as_of, as_of]
    bars = re.findall(r"<title>(\d{4}-\d{2}): (\d+)</title>", render_html(cs))
    assert bars == [("2024-02", "2")]


def test_renumbered_rules_say_the_release_that_renumbered_them() -> None:
    """A renumbering says "as of 2024-02-02" (the release), not the rule's own 2023-11-17."""
    rows = _table(
        _change(change="renumbered", old_rule_id="701.34d", new_rule_id="701.34e",
                old_date=dt.date(2023, 11, 17), new_date=dt.date(2023, 11, 17),
                old_text_hash="a", new_text_hash="a", old_text="Manifest.", new_text="Manifest.",
                group="g1", card=None, as_of=dt.date(2024, 2, 2)),
        _change(change="amended", old_rule_id="702.62a", new_rule_id="702.62a",
                old_date=dt.date(2023, 11, 17), new_date=dt.date(2024, 2, 2),
                old_text_hash="b", new_text_hash="c", old_text="Play it.", new_text="You may.",
                group="g2", card=None, as_of=dt.date(2024, 2, 2), similarity=70.0),
    )  # fmt: skip
    cs = changeset(rows, [2])
    markdown, html = render_markdown(cs), render_html(cs)
    assert "### 701.34d \u2192 701.34e: renumbered, as of 2024-02-02" in markdown
    assert "### 702.62a: amended, effective 2024-02-02" in markdown
    assert "renumbered, effective" not in markdown
    assert "Rule 701.34d \u2192 701.34e: renumbered, as of 2024-02-02" in html
    assert "2023-11-17" not in html.split("<h3>Rule 701.34d", 1)[1].split("</h3>")[0]


def test_first_sightings_count_rulings_on_cards_apart_from_rules() -> None:
    """Rulings on cards, rulings of no known card, rules and glossary entries: as stats counts."""
    first = {"first_seen": True, "change": "added", "run": 1, "group": "g"}
    rows = _table(
        *(_change(card="Rift Bolt", new_text_hash=f"r{n}", **first) for n in range(3)),
        *(_change(card=None, new_text_hash=f"n{n}", **first) for n in range(2)),
        *(_change(card=None, source="cr", new_text_hash=f"u{n}", new_rule_id=f"100.{n}", **first)
          for n in range(4)),
        _change(card=None, source="cr", new_text_hash="gl", new_rule_id="Suspend", **first),
    )  # fmt: skip
    cs = changeset(rows, [1], kinds={"gl": "glossary"})
    summary = "5 rulings first seen on 1 card, 2 of no known card; 4 rules, 1 glossary entry"
    assert cs.first_seen_summary() == f"{summary} first seen"
    assert cs.first_seen == (("Rift Bolt", "src", 3), (None, "src", 2))
    assert cs.first_seen_rules == (("cr", "rule", 4), ("cr", "glossary", 1))
    markdown = render_markdown(cs)
    assert f"{summary} first seen" in markdown
    assert "- cr: 4 rules\n- cr: 1 glossary entry" in markdown
    assert "(no card) (cr)" not in markdown
    assert json.loads(render_json(cs))["first_seen_rules"] == [
        {"source": "cr", "kind": "rule", "count": 4},
        {"source": "cr", "kind": "glossary", "count": 1},
    ]
    assert f"{summary} first seen" in render_html(cs)


def test_a_removed_ruling_printed_two_ways_is_listed_once() -> None:
    """Sources drop one ruling (one key) printed with curly and straight quotes: listed once."""
    removed = {"change": "removed", "card": "Rift Bolt", "old_text_hash": "k", "group": "g",
               "old_date": dt.date(2021, 6, 18), "match": "contained", "replaced_by": "n",
               "rule_change": True, "as_of": dt.date(2024, 2, 2)}  # fmt: skip
    rows = _table(
        _change(source="mtgjson", old_text="It isn\u2019t exiled.", **removed),
        _change(source="scryfall", old_text="It isn't exiled.", **removed),
        _change(source="dump", old_text="It isn't exiled.", **removed),
        _change(change="added", card="Rift Bolt", new_text_hash="n", new_text="New. It isn't.",
                new_date=dt.date(2024, 2, 2), group="g", match="contained", source="mtgjson"),
    )  # fmt: skip
    [group] = changeset(rows, [2]).groups
    assert group.replaced == ("It isn't exiled.",)  # the wording two of its three rows print
    assert group.changes == 3
    assert render_markdown(changeset(rows, [2])).count("exiled.") == 1
