"""`pipeline update`: fetch from the stand-in, then ingest what changed, with batch exit codes.

The stand-in serves the three sources as they are published today: Scryfall's bulk files
as gzipped JSON Lines, MTGJSON's AllPrintings.json.xz, the rules as text. Tests about one
source's failure use the old index form (`download_uri`, JSON arrays) a mirror may still
serve, which is read as well.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from conftest import rows, unstamped
from standin import RULES_2025, StandIn, closed_port, serving

from pipeline.cli import cli
from pipeline.storage import lock

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    """The stand-in server, shut down after the test."""
    yield from serving()


def _update(raw: Path, out: Path, roots: dict[str, str], *sources: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [
        "update", *sources, "--raw", str(raw), "--out", str(out),
        "--scryfall-api", roots["scryfall"], "--mtgjson-api", roots["mtgjson"],
        "--comprules-page", roots["comprules"], "--pause", "0", "--timeout", "2",
        "--retries", "0", "--workers", "1",
    ])  # fmt: skip
    return result.exit_code, unstamped(result.stdout), unstamped(result.stderr)


def _changelog(out: Path) -> str:
    return CliRunner().invoke(cli, ["changelog", "--out", str(out)]).stdout


@pytest.mark.slow
def test_update_stores_then_skips_then_shows_a_new_release(
    stand_in: StandIn, tmp_path: Path
) -> None:
    """Run 1 stores; a night with nothing new records no run; a new release is run 2."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    roots = stand_in.upstreams()
    code, stdout, stderr = _update(raw, out, roots)
    assert (code, stderr) == (0, "")
    assert "scryfall: scryfall/rulings.jsonl.gz new (" in stdout
    assert "scryfall: .catalog/scryfall-oracle-cards.jsonl.gz new (" in stdout
    assert "mtgjson: mtgjson/AllPrintings.json.xz new (" in stdout
    assert "\nrun 1: stored\n" in stdout
    assert "  files read      4" in stdout  # the oracle cards among them: a card source
    cards = {r["source_path"]: r["cards"] for r in rows(out, "files")}
    by_source = {(r["source"], r["card"]) for r in rows(out, "card_versions")}
    assert by_source == {("scryfall", "Deathrite Shaman"), ("mtgjson", "Rift Bolt")}
    assert (
        cards[".catalog/scryfall-oracle-cards.jsonl.gz"],
        cards["mtgjson/AllPrintings.json.xz"],
    ) == (1, 1)
    sightings = rows(out, "sightings")
    # The catalog fetched into raw/.catalog/ named the Scryfall rulings' card.
    assert {(r["card"], r["source"]) for r in sightings if r["layout"] == "scryfall"} == {
        ("Deathrite Shaman", "scryfall/wotc"),
        ("Deathrite Shaman", "scryfall/scryfall"),
    }
    by_layout = {r["layout"] for r in sightings}
    assert by_layout == {"scryfall", "mtgjson", "comprehensive_rules"}
    assert {r["source_path"] for r in sightings if r["layout"] == "mtgjson"} == {
        "mtgjson/AllPrintings.json.xz"
    }
    assert {r["fetched_at"] for r in sightings} == {
        e["fetched_at"]
        for e in json.loads((raw / ".fetch.json").read_text())["files"]
        if not e["path"].startswith(".catalog/")
    }
    first_changelog = _changelog(out)

    code, stdout, _ = _update(raw, out, roots)
    assert code == 0
    assert stdout.endswith("no run: nothing new (4 files unchanged since they were stored)\n")
    assert len(rows(out, "runs")) == 1
    assert _changelog(out) == first_changelog

    stand_in.rules_page(["MagicCompRules 20240206.txt", "MagicCompRules 20250606.txt"])
    stand_in.serve("/rules/MagicCompRules 20250606.txt", RULES_2025)
    code, stdout, _ = _update(raw, out, roots)
    assert code == 0
    assert "comprules: comprules/MagicCompRules-20250606.txt new (" in stdout
    assert "\nrun 2: stored\n" in stdout
    changes = [(c["new_rule_id"], c["change"]) for c in rows(out, "changes") if c["run"] == 2]
    assert changes == [("702.62a", "amended")]


def test_a_source_down_stores_the_rest_and_exits_3(stand_in: StandIn, tmp_path: Path) -> None:
    """Scryfall refuses connections: its failure line, the rules stored, exit 3."""
    roots = stand_in.upstreams(jsonl=False) | {"scryfall": closed_port()}
    code, stdout, stderr = _update(
        tmp_path / "raw", tmp_path / "out", roots, "scryfall", "comprules"
    )
    assert code == 3
    assert stderr == (
        f"Error: scryfall: {roots['scryfall']}/bulk-data: cannot connect: Connection refused "
        "(gave up after 1 attempt)\n"
    )
    assert "\nrun 1: stored\n" in stdout


def test_every_source_down_ingests_nothing_and_exits_1(tmp_path: Path) -> None:
    """Nothing fetched: nothing ingested, exit 1, and no dataset made."""
    down = closed_port()
    roots = {"scryfall": down, "mtgjson": down, "comprules": down}
    code, stdout, stderr = _update(tmp_path / "raw", tmp_path / "out", roots)
    assert code == 1
    assert len(stderr.splitlines()) == 3
    assert stdout.endswith("nothing ingested: no source could be fetched\n")
    assert not (tmp_path / "out").exists()


def test_every_input_rejected_exits_5(stand_in: StandIn, tmp_path: Path) -> None:
    """Well-formed JSON the reader has no layout for: fetched, rejected, nothing stored.

    The oracle cards are a card source too (raw/.catalog): served unusable as well.
    """
    roots = stand_in.upstreams(jsonl=False)
    stand_in.serve("/files/rulings-20260819.json", b'{"rulings": "elsewhere"}')
    stand_in.serve("/files/oracle-cards-20260819.json", b'{"cards": "elsewhere"}')
    code, stdout, _ = _update(tmp_path / "raw", tmp_path / "out", roots, "scryfall")
    assert code == 5
    assert "\nrun 1: NOT stored (every input was rejected)\n" in stdout
    assert "  scryfall/rulings.json: " in stdout


def test_a_file_rejected_again_is_no_new_run(stand_in: StandIn, tmp_path: Path) -> None:
    """A night that reads nothing anew records no run, but a rejection still says exit 3."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    roots = stand_in.upstreams(jsonl=False)
    stand_in.serve("/files/rulings-20260819.json", b'{"rulings": "elsewhere"}')
    code, stdout, _ = _update(raw, out, roots, "scryfall", "comprules")
    assert code == 3
    assert "\nrun 1: stored\n" in stdout
    code, stdout, _ = _update(raw, out, roots, "scryfall", "comprules")
    assert code == 3
    # The comprules release and the oracle cards (a card source) unchanged, the rulings not read.
    assert "\nno run: nothing new (2 files unchanged since they were stored)\nrejected:\n" in stdout
    assert "  scryfall/rulings.json: " in stdout
    assert len(rows(out, "runs")) == 1


def test_a_busy_dataset_exits_4_with_the_files_fetched(stand_in: StandIn, tmp_path: Path) -> None:
    """Another ingest holds the lock: the fetch is done and kept, the ingest waits for tomorrow."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    roots = stand_in.upstreams(jsonl=False)
    with lock.writer_lock(out):
        code, stdout, stderr = _update(raw, out, roots, "comprules")
    assert code == 4
    assert "another ingest is writing this dataset" in stderr
    assert "comprules: comprules/MagicCompRules-20240206.txt new (" in stdout
    assert (raw / "comprules" / "MagicCompRules-20240206.txt").is_file()
    code, stdout, _ = _update(raw, out, roots, "comprules")
    assert code == 0
    assert "\nrun 1: stored\n" in stdout  # the file fetched last time, read now
