"""What analysts read: today's rulings across sources, changes by as-of date, typed history."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pytest
from conftest import FIXTURES, RAW, REALDATA

import pipeline
from pipeline import ingest

if TYPE_CHECKING:
    from pathlib import Path

DAY = dt.date(2024, 2, 6)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A copy of the version-5 fixture (three runs of the seeds)."""
    out = tmp_path / "normalized"
    shutil.copytree(FIXTURES / "dataset-v5", out)
    return out


def test_rulings_today_in_pandas_and_duckdb(dataset: Path) -> None:
    """rulings(today=True) is what some source carries, with stale_source; the view agrees."""
    ds = pipeline.open_dataset(dataset)
    today = ds.rulings(today=True)
    assert len(today) == int(ds.rulings(current_only=False)["source_current"].sum())
    assert len(today[~today["stale_source"]]) == len(ds.rulings())
    assert today["stale_source"].dtype == pd.ArrowDtype(pa.bool_())
    counts = today.groupby("card")["stale_source"].size().to_dict()
    sql = "SELECT card, count(*) FROM rulings_today WHERE card IS NOT NULL GROUP BY card"
    assert dict(ds.duckdb().sql(sql).fetchall()) == counts


def test_changes_since_compares_the_as_of_date(dataset: Path) -> None:
    """since= filters by the changes' as-of date; started_since= by the runs' start."""
    ds = pipeline.open_dataset(dataset)
    every = ds.changes()
    latest = every["as_of"].max()
    assert len(ds.changes(since=latest)) == int((every["as_of"] == latest).sum())
    assert ds.changes(since=latest + dt.timedelta(days=1)).empty
    assert ds.changes(since=str(latest)).equals(ds.changes(since=latest))
    started = ds.runs()["started_at"].max().date()
    assert len(ds.changes(started_since=started)) >= len(ds.changes(run=ds.last_run))
    assert ds.changes(started_since=started + dt.timedelta(days=1)).empty


def test_history_is_typed(dataset: Path) -> None:
    """history() gives dates as Arrow dates and runs as int64, even in a column all null."""
    history = pipeline.open_dataset(dataset).history("Rift Bolt")
    assert not history.empty
    assert history["effective_date"].dtype == pd.ArrowDtype(pa.date32())
    assert history["as_of"].dtype == pd.ArrowDtype(pa.date32())
    assert history["disappeared"].dtype == pd.ArrowDtype(pa.int64())
    assert history["gone_as_of"].dtype == pd.ArrowDtype(pa.date32())


@pytest.mark.skipif(not REALDATA.is_dir(), reason="needs ../shared/realdata")
def test_rift_bolt_today_is_its_freshest_source(tmp_path: Path) -> None:
    """The seed dump and the 2022 MTGJSON file both read Rift Bolt: the older wording is marked."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    raw.mkdir()
    shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw / "rift-bolt.txt")
    shutil.copy(REALDATA / "mtgjson-2022" / "TSP.json", raw / "TSP.json")
    ingest([raw], out=out)
    ds = pipeline.open_dataset(out)
    today = ds.rulings(today=True, card="Rift Bolt")
    state = ds._version.table("state").to_pandas()  # the truth to compare with
    mine = state[state["card"] == "Rift Bolt"]
    fresh_texts = set(mine.loc[mine["source"] == "rift-bolt.txt", "text_hash"])  # its 2024 dates
    assert set(today.loc[~today["stale_source"], "text_hash"]) == fresh_texts
    assert set(ds.rulings(card="Rift Bolt")["text_hash"]) == fresh_texts  # the default: in force
    assert today["stale_source"].any()


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three runs: the seeds; the 22 MTGJSON files and the 2023-11-17 rules; 2024-02-06."""
    if not REALDATA.is_dir():
        pytest.skip("needs ../shared/realdata")
    root = tmp_path_factory.mktemp("three-runs")
    raw, out = root / "raw", root / "normalized"
    shutil.copytree(RAW, raw)
    ingest([raw], out=out)
    for path in sorted((REALDATA / "mtgjson-2022").glob("*.json")):
        shutil.copy(path, raw / path.name)
    shutil.copy(REALDATA / "comprules" / "2023-11-17.txt", raw / "comprules.txt")
    ingest([raw], out=out)
    shutil.copy(REALDATA / "comprules" / "2024-02-06.txt", raw / "comprules.txt")
    ingest([raw], out=out)
    return out


@pytest.mark.slow
def test_three_runs_today_counts_a_card_once(three_runs: Path) -> None:
    """Rift Bolt: the seed dump's 13 rulings today, the 2022 MTGJSON wordings marked stale."""
    ds = pipeline.open_dataset(three_runs)
    today = ds.rulings(today=True, card="Rift Bolt")
    assert len(ds.rulings(card="Rift Bolt")) == 13  # the seed's rulings, in force
    assert int((~today["stale_source"]).sum()) == 13
    assert today["stale_source"].any()
    sql = "SELECT count(*) FROM rulings_today WHERE card = 'Rift Bolt' AND NOT stale_source"
    assert ds.duckdb().sql(sql).fetchall() == [(13,)]


@pytest.mark.slow
def test_three_runs_changes_since_the_suspend_change(three_runs: Path) -> None:
    """since="2024-02-02" keeps the changes as of that day or later, not every run's."""
    ds = pipeline.open_dataset(three_runs)
    every = ds.changes()
    since = ds.changes(since="2024-02-02")
    assert 0 < len(since) < len(every)
    assert (since["as_of"] >= dt.date(2024, 2, 2)).all()
    assert len(ds.changes(run=3)) <= len(since)
    assert {"702.62a"} <= set(since["new_rule_id"].dropna())


@pytest.mark.slow
def test_three_runs_rules_are_keyed_by_number(three_runs: Path) -> None:
    """719.1 is one current rule, the 2024 one; the current rules are the release's."""
    ds = pipeline.open_dataset(three_runs)
    every = ds.rulings(kind="rule")
    rules = every[every["rule_id"].notna()]  # seed 004 is an excerpt of unnumbered rules
    assert len(every) - len(rules) == 14
    assert len(rules) == 2937
    assert len(ds.rulings(kind="glossary")) == 673
    [case] = rules.loc[rules["rule_id"] == "719.1", "text"]
    assert case.startswith("Each Case card")
    state = (
        ds.duckdb()
        .sql(
            "SELECT count(*) FROM rulings AS r JOIN state AS s ON r.text_hash = s.text_hash "
            "AND r.rule_id = s.rule_id WHERE r.current AND r.kind = 'rule'"
        )
        .fetchall()
    )
    assert state == [(2937,)]  # every current rule's number is its number in the state


@pytest.mark.slow
def test_three_runs_one_card_one_name(three_runs: Path) -> None:
    """Seed 002's "Dichotomagie" is Dichotomancy once Planar Chaos is read."""
    ds = pipeline.open_dataset(three_runs)
    cards = set(ds.rulings(current_only=False)["card"].dropna())
    assert "Dichotomagie" not in cards
    today = ds.rulings(today=True, card="Dichotomancy")
    assert set(today["lang"]) == {"en", "de"}
    sql = "SELECT DISTINCT card FROM sightings WHERE card_printed = 'Dichotomagie'"
    assert ds.duckdb().sql(sql).fetchall() == [("Dichotomancy",)]


@pytest.mark.slow
def test_three_runs_translations_with_both_texts(three_runs: Path) -> None:
    """Each linked translation beside its original's text, the same in pandas and DuckDB."""
    ds = pipeline.open_dataset(three_runs)
    frame = ds.translations()
    linked = frame[frame["original_text_hash"].notna()]
    assert len(linked) > 0
    assert linked["original_text"].notna().all()
    assert frame["text"].notna().all()
    duck = (
        ds.duckdb()
        .sql("SELECT text_hash, original_text_hash, text, original_text FROM translation_texts")
        .df()
    )
    mine = frame[["text_hash", "original_text_hash", "text", "original_text"]]
    pd.testing.assert_frame_equal(
        mine.astype(object).where(mine.notna(), None).reset_index(drop=True),
        duck.astype(object).where(duck.notna(), None).reset_index(drop=True),
    )


@pytest.mark.slow
def test_three_runs_rulings_per_set_year(three_runs: Path) -> None:
    """Rulings read per set release year: pandas and DuckDB agree; every MTGJSON row has one."""
    ds = pipeline.open_dataset(three_runs)
    sightings = ds.sightings()
    mtgjson = sightings[(sightings["run"] == 2) & (sightings["layout"] == "mtgjson")]
    assert mtgjson["set_code"].notna().all()
    assert mtgjson["set_released"].notna().all()
    years = mtgjson.groupby(mtgjson["set_released"].map(lambda d: d.year)).size().to_dict()
    duck = (
        ds.duckdb()
        .sql(
            "SELECT year(set_released), count(*) FROM sightings "
            "WHERE run = 2 AND layout = 'mtgjson' GROUP BY 1 ORDER BY 1"
        )
        .fetchall()
    )
    assert duck == sorted(years.items())
    assert len(years) > 1


@pytest.mark.slow
def test_three_runs_changes_say_their_kind_and_oracle_id(three_runs: Path) -> None:
    """A rule change is of kind rule; an MTGJSON card's change carries the card's oracle id."""
    ds = pipeline.open_dataset(three_runs)
    changes = ds.changes()
    assert set(changes.loc[changes["new_rule_id"] == "702.62a", "kind"]) == {"rule"}
    mtgjson = changes[changes["source"] == "mtgjson"]
    assert mtgjson["oracle_id"].notna().all()
    assert changes.loc[changes["kind"] != "ruling", "card"].isna().all()


@pytest.mark.slow
def test_three_runs_cards_follow_the_22_files(three_runs: Path) -> None:
    """One row per distinct oracle id of the 22 files; columns as the files give them.

    Counted and read with plain json, apart from the pipeline: 5,698 oracle ids on the day
    this was written. The third run (rules only) wrote no card row.
    """
    ids: set[str] = set()
    by_id: dict[str, dict[str, Any]] = {}
    for path in sorted((REALDATA / "mtgjson-2022").glob("*.json")):
        for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]:
            oracle = card["identifiers"].get("scryfallOracleId")
            if oracle:
                ids.add(oracle)
                by_id.setdefault(oracle, card)
    ds = pipeline.open_dataset(three_runs)
    cards = ds.cards()
    assert len(cards) == len(ids) == 5698
    assert set(cards["oracle_id"]) == ids
    for row in cards.head(400).to_dict("records"):
        card = by_id[row["oracle_id"]]
        if card.get("side") or "//" in card["name"]:
            continue  # faces: tests/test_cards.py
        assert row["card"] == card["name"]
        text = row["oracle_text"]
        assert (None if pd.isna(text) else text) == card.get("text")
        assert list(row["types"]) == sorted(card["types"])
        assert row["mana_value"] == card["manaValue"]
        legal = sorted(f for f, s in card["legalities"].items() if s.lower() == "legal")
        assert sorted(row["legal_in"]) == legal
    versions = ds.duckdb().sql("SELECT DISTINCT run FROM card_versions").fetchall()
    assert versions == [(2,)]
    modern = ds.cards(legal_in="modern")
    assert 0 < len(modern) < len(cards)
