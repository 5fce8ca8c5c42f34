"""Cards in the dataset: card_versions, the cards table, Oracle changes, the version-8 upgrade."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from conftest import FIXTURES, RAW

from pipeline import ingest, open_dataset
from pipeline.rebuild import repair
from pipeline.storage import layout, store, verify

if TYPE_CHECKING:
    from pathlib import Path

BUILD_2022 = FIXTURES / "raw" / "mtgjson-tsp-cards-2022.json"
BUILD_2025 = FIXTURES / "raw" / "mtgjson-tsp-cards-2025.json"
RIFT_BOLT_ID = "2b8afa9f-4236-4c02-a8d5-3c145caecfd6"


def _cards_of(path: Path) -> dict[str, dict[str, Any]]:
    """The card objects of an MTGJSON set file by name, read with plain json."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return {card["name"]: card for card in data["cards"]}


def _rows(out: Path, name: str) -> list[dict[str, Any]]:
    return store.open_version(out).table(name).to_pylist()


def _ingest(tmp_path: Path, out: Path, *builds: Path) -> list[int]:
    """Each build as `TSP.json` of one raw folder, one run each: the runs."""
    raw = tmp_path / "raw"
    raw.mkdir(exist_ok=True)
    runs = []
    for build in builds:
        shutil.copy(build, raw / "TSP.json")
        runs.append(ingest([raw], out=out).run)
    return runs


def test_cards_rows_follow_the_file(tmp_path: Path, out: Path) -> None:
    """One row per card, its columns as the MTGJSON objects give them."""
    _ingest(tmp_path, out, BUILD_2022)
    expected = _cards_of(BUILD_2022)
    release = json.loads(BUILD_2022.read_text(encoding="utf-8"))["data"]["releaseDate"]
    cards = {row["card"]: row for row in _rows(out, "cards")}
    assert sorted(cards) == sorted(expected)
    for name, card in expected.items():
        row = cards[name]
        assert row["oracle_id"] == card["identifiers"]["scryfallOracleId"]
        assert row["oracle_text"] == card["text"]
        assert row["mana_cost"] == card.get("manaCost")  # Ancestral Vision has none
        assert row["mana_value"] == card["manaValue"]
        assert row["types"] == card["types"]
        assert row["subtypes"] == card["subtypes"]
        assert row["colors"] == sorted(card["colors"])
        assert sorted(row["legal_in"]) == sorted(
            f for f, status in card["legalities"].items() if status.lower() == "legal"
        )
        printings = {p["set_code"]: p["released"] for p in row["printings"]}
        assert set(printings) == set(card["printings"])
        assert printings["TSP"] == dt.date.fromisoformat(release)
        assert (row["source"], row["source_path"], row["as_of"]) == (
            "mtgjson",
            "TSP.json",
            dt.date(2022, 4, 25),
        )
        assert (row["oracle_since"], row["oracle_versions"]) == (dt.date(2022, 4, 25), 1)
    assert cards["Amrou Seekers"]["power"] == "2"


def test_a_second_build_records_its_oracle_changes(tmp_path: Path, out: Path) -> None:
    """The 2025 build's rewordings: one Oracle change per card, new versions, the new text."""
    first, second = _ingest(tmp_path, out, BUILD_2022, BUILD_2025)
    versions = _rows(out, "card_versions")
    assert sorted((v["run"], v["card"]) for v in versions) == [
        (first, "Amrou Seekers"),
        (first, "Ancestral Vision"),
        (first, "Rift Bolt"),
        (second, "Amrou Seekers"),
        (second, "Ancestral Vision"),
        (second, "Rift Bolt"),
    ]
    changes = [c for c in _rows(out, "changes") if c["kind"] == "oracle"]
    assert [(c["run"], c["card"], c["change"]) for c in changes] == [
        (second, "Amrou Seekers", "amended"),
        (second, "Ancestral Vision", "amended"),
        (second, "Rift Bolt", "amended"),
    ]
    amrou = changes[0]
    assert "Amrou Seekers can't be blocked" in amrou["old_text"]
    assert "This creature can't be blocked" in amrou["new_text"]
    assert (amrou["old_date"], amrou["new_date"]) == (dt.date(2022, 4, 25), dt.date(2025, 8, 18))
    assert (
        amrou["oracle_id"]
        == _cards_of(BUILD_2022)["Amrou Seekers"]["identifiers"]["scryfallOracleId"]
    )
    cards = {row["card"]: row for row in _rows(out, "cards")}
    bolt = cards["Rift Bolt"]
    assert bolt["oracle_text"] == _cards_of(BUILD_2025)["Rift Bolt"]["text"]
    assert (bolt["oracle_since"], bolt["oracle_versions"]) == (dt.date(2025, 8, 18), 2)


def test_a_build_read_again_writes_no_card_rows(tmp_path: Path, out: Path) -> None:
    """A later build whose cards are unchanged (a new date only): no card_versions part."""
    later = tmp_path / "later.json"
    data = json.loads(BUILD_2025.read_text(encoding="utf-8"))
    data["meta"]["date"] = "2025-08-19"
    later.write_text(json.dumps(data), encoding="utf-8")
    runs = _ingest(tmp_path, out, BUILD_2025, later)
    assert runs == [1, 2]
    assert layout.part_runs(out, "card_versions") == [1]
    assert not [c for c in _rows(out, "changes") if c["kind"] == "oracle"]


def test_an_older_build_read_later_changes_nothing_in_force(tmp_path: Path, out: Path) -> None:
    """The 2022 build read after the 2025 one: kept as history, the cards stay as in 2025."""
    _ingest(tmp_path, out, BUILD_2025, BUILD_2022)
    cards = {row["card"]: row for row in _rows(out, "cards")}
    assert cards["Rift Bolt"]["as_of"] == dt.date(2025, 8, 18)
    assert cards["Rift Bolt"]["oracle_text"].startswith("This spell deals 3 damage")
    assert len(_rows(out, "card_versions")) == 6


def test_the_api_joins_rulings_to_cards(tmp_path: Path, out: Path) -> None:
    """ds.cards() and the DuckDB view: the rulings of cards legal in a format, by oracle id."""
    _ingest(tmp_path, out, BUILD_2022)
    ds = open_dataset(out)
    cards = ds.cards()
    assert set(cards["card"]) == {"Amrou Seekers", "Ancestral Vision", "Rift Bolt"}
    con = ds.duckdb()
    legal = con.execute(
        "SELECT DISTINCT r.card FROM rulings r JOIN cards c ON r.oracle_id = c.oracle_id "
        "WHERE list_contains(c.legal_in, 'vintage') ORDER BY 1"
    ).fetchall()
    assert legal == [("Ancestral Vision",), ("Rift Bolt",)]  # Amrou Seekers has no rulings


def test_a_version_8_dataset_is_upgraded(tmp_path: Path) -> None:
    """Texts and names logged under run 1; TSP.json read again once, for its cards alone."""
    out = tmp_path / "v8"
    shutil.copytree(FIXTURES / "dataset-v8", out, symlinks=True)
    before = store.open_version(out).table("rulings")
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(BUILD_2022, raw / "TSP.json")
    shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw / "rift-bolt.txt")
    report = ingest([raw], out=out)
    assert report.run == 2
    assert [(f.source_path, f.status.value) for f in report.files] == [
        ("TSP.json", "stored"),
        ("rift-bolt.txt", "skipped"),
    ]
    assert report.new_keys == 0
    texts = store.open_version(out).table("ruling_texts")
    assert texts.num_rows == before.num_rows
    assert set(texts["run"].to_pylist()) == {1}
    learned = sorted(tuple(r.values()) for r in _rows(out, "names_learned"))
    names = _rows(out, "names")
    assert len(names) == 24
    assert learned == sorted((1, r["name"], r["lang"], r["card"], r["oracle_id"]) for r in names)
    assert {row["card"] for row in _rows(out, "cards")} == set(_cards_of(BUILD_2022))
    assert verify.check(out).faults == []
    again = ingest([raw], out=out)
    assert not again.stored  # read once: its cards are known now


def test_repair_rebuilds_the_cards(tmp_path: Path, out: Path) -> None:
    """cards.parquet deleted: repair makes it again from card_versions, row for row."""
    _ingest(tmp_path, out, BUILD_2022, BUILD_2025)
    want = _rows(out, "cards")
    (layout.pinned(out) / "cards.parquet").unlink()
    assert "cards.parquet" in " ".join(f.path for f in verify.check(out).faults)
    repair(out)
    assert _rows(out, "cards") == want


@pytest.mark.parametrize("build", [BUILD_2022, BUILD_2025])
def test_cards_are_counted_per_file(tmp_path: Path, out: Path, build: Path) -> None:
    """files.cards: how many cards the file described."""
    _ingest(tmp_path, out, build)
    files = store.open_version(out).table("files")
    assert files.filter(pc.equal(files["source_path"], pa.scalar("TSP.json")))[
        "cards"
    ].to_pylist() == [3]


def test_a_catalog_is_a_card_source(tmp_path: Path, out: Path) -> None:
    """raw/.catalog's oracle cards: recorded as a file, its cards stored, skipped unchanged."""
    raw = tmp_path / "raw"
    (raw / ".catalog").mkdir(parents=True)
    shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw)
    oracle = FIXTURES / "cards" / "scryfall-oracle-cards.json"
    shutil.copy(oracle, raw / ".catalog")
    first = ingest([raw], out=out)
    name = ".catalog/scryfall-oracle-cards.json"
    [row] = [r for r in first.files if r.source_path == name]
    assert (row.status.value, row.layout, len(row.cards)) == ("stored", "scryfall", 6)
    expected = {c["name"] for c in json.loads(oracle.read_text(encoding="utf-8"))}
    cards = _rows(out, "cards")
    assert {c["card"] for c in cards} == expected
    assert {c["source"] for c in cards} == {"scryfall"}
    assert not ingest([raw], out=out).stored  # nothing new: no run
    data = json.loads(oracle.read_text(encoding="utf-8"))
    [drake] = [card for card in data if card["name"] == "Crackling Drake"]
    drake["oracle_text"] += " (reworded)"
    (raw / ".catalog" / oracle.name).write_text(json.dumps(data), encoding="utf-8")
    changed = ingest([raw], out=out)
    assert changed.stored
    versions = _rows(out, "card_versions")
    assert [r["card"] for r in versions if r["run"] == changed.run] == ["Crackling Drake"]
    [amended] = [c for c in _rows(out, "changes") if c["kind"] == "oracle"]
    assert (amended["card"], amended["run"]) == ("Crackling Drake", changed.run)
    assert "(reworded)" in amended["new_text"]
    assert "(reworded)" not in amended["old_text"]


def test_printed_text_is_no_oracle_change(tmp_path: Path, out: Path) -> None:
    """A later build whose flavour, printed text and translations changed: no Oracle change."""
    later = tmp_path / "later.json"
    data = json.loads(BUILD_2022.read_text(encoding="utf-8"))
    data["meta"]["date"] = "2023-01-01"
    for card in data["data"]["cards"]:
        card["flavorText"] = "Reprinted with new flavour."
        card["originalText"] = "Printed words, not Oracle."
        for foreign in card.get("foreignData", []):
            foreign["text"] = "Übersetzt, nicht Oracle."
    later.write_text(json.dumps(data), encoding="utf-8")
    _ingest(tmp_path, out, BUILD_2022, later)
    assert layout.part_runs(out, "card_versions") == [1]
    assert not [c for c in _rows(out, "changes") if c["kind"] == "oracle"]
