"""Schema version 7: rules keyed by number, sightings' sets, changes' kinds and oracle ids."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pytest

from pipeline import ingest, open_dataset
from pipeline.storage import layout, store

FIXTURES = Path(__file__).parent / "fixtures"
RAW = Path(__file__).parent.parent / "raw"
EXCERPTS = FIXTURES / "raw" / "comprules"
# Two seeds-and-rules runs written by the version-6 code (fixtures README).
V6 = FIXTURES / "dataset-v6"
RELEASES = Path(__file__).parent.parent.parent / "shared" / "realdata" / "comprules"
RIFT_BOLT = FIXTURES / "raw" / "mtgjson-tsp-rift-bolt.json"
SHARED = "In a two-player Brawl game, each player\u2019s starting life total is 25."


def _release(raw: Path, source: Path, *, seeds: bool = False) -> None:
    """RAW holds SOURCE as `comprules.txt` (the same path each run), and the seeds if SEEDS."""
    raw.mkdir(exist_ok=True)
    shutil.copy(source, raw / "comprules.txt")
    if seeds:
        for seed in sorted(RAW.glob("0*.txt")):
            shutil.copy(seed, raw)
        shutil.copy(RAW / "manifest.csv", raw)


def _rules(out: Path, *, current_only: bool = True) -> pd.DataFrame:
    table = open_dataset(out).rulings(current_only=current_only)
    return table[table["kind"] != "ruling"].reset_index(drop=True)


def test_a_text_under_two_numbers_is_two_rules(tmp_path: Path) -> None:
    """103.4d and 903.12f share their words; each is a row, numbered as the release numbers it."""
    _release(tmp_path / "raw", EXCERPTS / "2023-11-17-excerpt.txt")
    ingest([tmp_path / "raw"], out=tmp_path / "out")
    rules = _rules(tmp_path / "out")
    shared = rules[rules["text"].str.startswith(SHARED)]
    assert sorted(shared["rule_id"]) == ["103.4d", "903.12f"]
    assert len(set(shared["text_hash"])) == 1
    assert sorted(rules["rule_id"]) == ["103.4d", "719.1", "903.12f", "Brawl"]


def test_a_rule_s_number_is_the_one_in_force(tmp_path: Path) -> None:
    """The 2024 release moves 719.1's words to 720.1 and gives 719.1 new ones."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    _release(raw, EXCERPTS / "2023-11-17-excerpt.txt")
    ingest([raw], out=out)
    _release(raw, EXCERPTS / "2024-02-06-excerpt.txt")
    ingest([raw], out=out)
    rules = _rules(out)
    assert rules["rule_id"].is_unique
    by_number = dict(zip(rules["rule_id"], rules["text"], strict=True))
    assert by_number["719.1"].startswith("Each Case card\u2019s illustration")
    assert by_number["720.1"].startswith("Some cards allow a player to control another player")
    # The older number stays, no longer current, in the row of its own key.
    history = _rules(out, current_only=False)
    older = history[(history["rule_id"] == "719.1") & ~history["current"]]
    assert older["text"].str.startswith("Some cards allow a player").tolist() == [True]
    changes = open_dataset(out).changes()
    moved = changes[changes["change"] == "renumbered"]
    assert moved[["old_rule_id", "new_rule_id", "kind"]].to_dict("records") == [
        {"old_rule_id": "719.1", "new_rule_id": "720.1", "kind": "rule"}
    ]
    assert set(changes["kind"]) == {"rule", "glossary"}


@pytest.mark.slow
@pytest.mark.skipif(not RELEASES.is_dir(), reason="needs ../shared/realdata")
def test_the_rules_in_force_are_the_release_s(tmp_path: Path) -> None:
    """Two real releases: the current rules and terms are those of the later one, one each."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    _release(raw, RELEASES / "2023-11-17.txt")
    ingest([raw], out=out)
    _release(raw, RELEASES / "2024-02-06.txt")
    report = ingest([raw], out=out)
    rules = _rules(out)
    numbered = rules[rules["kind"] == "rule"]
    [release] = [f for f in report.files if f.rules]
    assert len(numbered) == release.rules == 2937  # the run summary's count, the table's
    assert (rules["kind"] == "glossary").sum() == 673
    assert rules["rule_id"].is_unique
    state = store.read_table(out, "state").to_pandas()
    assert set(numbered["rule_id"]) == set(state["rule_id"].dropna()) - set(
        rules.loc[rules["kind"] == "glossary", "rule_id"]
    )
    connection = open_dataset(out).duckdb()
    counts = connection.sql(
        "SELECT kind, count(*), count(DISTINCT rule_id) FROM rulings WHERE current "
        "AND kind <> 'ruling' GROUP BY kind ORDER BY kind"
    ).fetchall()
    assert counts == [("glossary", 673, 673), ("rule", 2937, 2937)]


def test_a_version_6_dataset_is_read_then_upgraded(tmp_path: Path) -> None:
    """Before its next run a version-6 dataset reads as it did; after it, as version 7 writes it.

    dataset-v6 holds two runs: the seeds with the 2023 excerpt, then the 2024 excerpt. The
    version-6 key merged 103.4d and 903.12f into one row; the upgrade folds them apart.
    """
    old = tmp_path / "v6"
    shutil.copytree(V6, old, symlinks=True)
    dataset = open_dataset(old)
    sightings = dataset.sightings()
    assert sightings["text"].notna().all()  # left-out texts found by their hash alone
    assert sightings["set_code"].isna().all()
    kinds = dataset.changes().groupby("kind")["run"].count().to_dict()
    assert (
        kinds
        == dataset.duckdb()
        .sql("SELECT kind, count(*) FROM changes GROUP BY kind")
        .df()
        .set_index("kind")["count_star()"]
        .to_dict()
    )
    assert set(kinds) == {"ruling", "rule", "glossary"}
    assert dataset.changes()["oracle_id"].isna().all()
    before = _rules(old)
    assert len(before[before["text"].str.startswith(SHARED)]) == 1  # as version 6 keyed it

    raw = tmp_path / "raw"
    _release(raw, EXCERPTS / "2024-02-06-excerpt.txt", seeds=True)
    ingest([raw], out=old)  # nothing new: the upgrade alone
    fresh = tmp_path / "fresh"
    _release(raw, EXCERPTS / "2023-11-17-excerpt.txt", seeds=True)
    ingest([raw], out=fresh)
    _release(raw, EXCERPTS / "2024-02-06-excerpt.txt", seeds=True)
    ingest([raw], out=fresh)
    ingest([raw], out=fresh)
    mine, theirs = open_dataset(old), open_dataset(fresh)
    pd.testing.assert_frame_equal(
        mine.rulings(current_only=False), theirs.rulings(current_only=False)
    )
    assert layout.segments_version(old, "rulings") == layout.segments_version(fresh, "rulings")
    shared = _rules(old)
    assert sorted(shared.loc[shared["text"].str.startswith(SHARED), "rule_id"]) == [
        "103.4d",
        "903.12f",
    ]
    columns = ["run", "source_path", "position", "text_hash", "rule_id", "text"]
    pd.testing.assert_frame_equal(mine.sightings()[columns], theirs.sightings()[columns])


def _rift_bolt(shape: str) -> object:
    """The Rift Bolt set file in SHAPE, with TSP's real release date."""
    data = json.loads(RIFT_BOLT.read_text("utf-8"))
    tsp = {**data["data"], "releaseDate": "2006-10-06"}
    if shape == "v5 set":
        return {**data, "data": tsp}
    if shape == "v5 AllPrintings":
        return {"meta": data["meta"], "data": {"TSP": tsp}}
    # v4: the set object bare or in AllSets, its cards without setCode, ids on the card.
    cards = [
        {k: v for k, v in c.items() if k not in {"setCode", "identifiers"}}
        | {"scryfallOracleId": c["identifiers"]["scryfallOracleId"]}
        for c in tsp["cards"]
    ]
    # v4 sorts its keys: baseSetSize, cards, code, meta, …, releaseDate.
    bare = {"baseSetSize": 301, "cards": cards, "code": "TSP", "meta": data["meta"],
            "releaseDate": "2006-10-06"}  # fmt: skip
    if shape == "v4 set":
        return bare
    if shape == "v4 AllSets":
        return {"TSP": bare}
    atomic = {k: v for k, v in tsp["cards"][0].items() if k != "setCode"}  # of no one printing
    return {"meta": data["meta"], "data": {"Rift Bolt": [atomic]}}  # AtomicCards


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ("v5 set", ("TSP", "2006-10-06")),
        ("v5 AllPrintings", ("TSP", "2006-10-06")),
        ("v4 set", ("TSP", "2006-10-06")),
        ("v4 AllSets", ("TSP", "2006-10-06")),
        ("AtomicCards", (None, None)),
    ],
)
def test_sightings_name_their_set(
    tmp_path: Path, shape: str, expected: tuple[str | None, str | None]
) -> None:
    """Each MTGJSON shape that gives a set gives its code and release date to its rulings."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "tsp.json").write_text(json.dumps(_rift_bolt(shape)), "utf-8")
    ingest([raw], out=tmp_path / "out")
    dataset = open_dataset(tmp_path / "out")
    sightings = dataset.sightings()
    assert len(sightings) == 15
    found = {
        (None if pd.isna(code) else code, None if pd.isna(day) else day.isoformat())
        for code, day in zip(sightings["set_code"], sightings["set_released"], strict=True)
    }
    assert found == {expected}
    per_year = (
        dataset.duckdb()
        .sql("SELECT year(set_released) AS y, count(*) AS n FROM sightings GROUP BY y")
        .fetchall()
    )
    assert per_year == [(2006 if expected[0] else None, 15)]


def test_changes_carry_their_card_s_oracle_id(tmp_path: Path) -> None:
    """Rift Bolt's changes name its oracle id; the seeds' card rulings have none to give."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RIFT_BOLT, raw / "tsp.json")
    ingest([raw], out=tmp_path / "out")
    changes = open_dataset(tmp_path / "out").changes()
    assert set(changes["oracle_id"]) == {"2b8afa9f-4236-4c02-a8d5-3c145caecfd6"}
    assert set(changes["kind"]) == {"ruling"}
    stored = store.read_table(tmp_path / "out", "changes")
    assert pc.all(pc.is_valid(stored["kind"])).as_py()
