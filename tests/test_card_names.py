"""One card, one name: translated titles resolved by the names MTGJSON files give."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from pipeline import ingest, open_dataset
from pipeline.folding.names import english_names, learned, renamed
from pipeline.models import LocalName, RawDocument
from pipeline.publishing.site import build_site
from pipeline.reading.parsers import parse
from pipeline.schema import NAMES
from pipeline.storage import store

FIXTURES = Path(__file__).parent / "fixtures"
RAW = Path(__file__).parent.parent / "raw"
RIFT_BOLT = FIXTURES / "raw" / "mtgjson-tsp-rift-bolt.json"
PLC = Path(__file__).parent.parent.parent / "shared" / "realdata" / "mtgjson-2022" / "PLC.json"
GERMAN = "Entladung aus dem Zeitriss"  # Rift Bolt's German name in the real TSP file
ORACLE = "2b8afa9f-4236-4c02-a8d5-3c145caecfd6"


def _german_dump(raw: Path) -> None:
    """A dump titled with Rift Bolt's German name: one ruling of the real file, in German."""
    raw.mkdir(exist_ok=True)
    text = f"{GERMAN}\n\n2021-03-19\n\nDie Karte wird mit Zeitmarken ins Exil geschickt.\n"
    (raw / "zeitriss.txt").write_text(text, "utf-8")


def test_a_translated_title_is_re_keyed_when_a_later_run_learns_it(tmp_path: Path) -> None:
    """Run 1 stores the German dump under its title; run 2 reads the MTGJSON file naming it."""
    out = tmp_path / "out"
    _german_dump(tmp_path / "first")
    ingest([tmp_path / "first"], out=out)
    assert set(open_dataset(out).rulings()["card"]) == {GERMAN}
    (tmp_path / "second").mkdir()
    shutil.copy(RIFT_BOLT, tmp_path / "second" / "tsp.json")
    ingest([tmp_path / "second"], out=out)
    dataset = open_dataset(out)
    rulings = dataset.rulings()
    assert set(rulings["card"]) == {"Rift Bolt"}
    assert set(rulings.loc[rulings["lang"] == "de", "card_printed"]) == {GERMAN}
    state = store.read_table(out, "state")
    assert set(state["card"].to_pylist()) == {"Rift Bolt"}
    # Parts are kept as written; every reader gives the English name.
    stored = store.read_table(out, "sightings", runs=[1])
    assert set(stored["card"].cast(pa.string()).to_pylist()) == {GERMAN}
    mine = dataset.sightings(card="Rift Bolt")
    assert mine.groupby("run").size().to_dict() == {1: 1, 2: 15}
    assert set(dataset.sightings()["card"]) == {"Rift Bolt"}
    duck = dataset.duckdb()
    assert duck.sql("SELECT DISTINCT card FROM sightings").fetchall() == [("Rift Bolt",)]
    assert duck.sql("SELECT DISTINCT card FROM changes").fetchall() == [("Rift Bolt",)]
    assert set(dataset.changes()["card"]) == {"Rift Bolt"}
    assert set(dataset.translations()["card"]) == {"Rift Bolt"}  # the German ruling's row
    assert any(e["appeared"] == 1 for e in dataset.history("Rift Bolt").to_dict("records"))
    pd.testing.assert_frame_equal(dataset.history(GERMAN), dataset.history("Rift Bolt"))
    names = (
        dataset.duckdb().sql("SELECT name, card, oracle_id FROM names WHERE lang = 'de'").fetchall()
    )
    assert (GERMAN, "Rift Bolt", ORACLE) in names


def test_a_translated_title_read_with_its_names_is_stored_in_english(tmp_path: Path) -> None:
    """The dump and the file that names its card in one run: one card from the start."""
    raw = tmp_path / "raw"
    _german_dump(raw)
    shutil.copy(RIFT_BOLT, raw / "tsp.json")
    ingest([raw], out=tmp_path / "out")
    sightings = store.read_table(tmp_path / "out", "sightings")
    assert set(sightings["card"].cast(pa.string()).to_pylist()) == {"Rift Bolt"}


@pytest.mark.skipif(not PLC.is_file(), reason="needs ../shared/realdata")
def test_dichotomagie_is_dichotomancy_once_planar_chaos_is_read(tmp_path: Path) -> None:
    """Seed 002 (a German title) then the real Planar Chaos file: the seed's card is re-keyed."""
    out, first, second = tmp_path / "out", tmp_path / "first", tmp_path / "second"
    shutil.copytree(RAW, first)
    ingest([first], out=out)
    second.mkdir()
    shutil.copy(PLC, second / "PLC.json")
    ingest([second], out=out)
    dataset = open_dataset(out)
    cards = set(dataset.rulings()["card"].dropna())
    assert "Dichotomagie" not in cards
    assert "Dichotomancy" in cards
    seed = dataset.sightings(card="Dichotomancy")
    assert seed.groupby("run").size().to_dict() == {1: 14, 2: 16}
    pandas = dataset.rulings(card="Dichotomancy")
    duck = (
        dataset.duckdb()
        .sql("SELECT count(*) FROM rulings WHERE current AND card = 'Dichotomancy'")
        .fetchall()
    )
    assert duck == [(len(pandas),)]


def _names(*rows: tuple[str, str, str]) -> pa.Table:
    found = [LocalName(name, lang, card) for name, lang, card in rows]
    return learned(NAMES.empty_table(), found, run=1)


def test_a_name_two_cards_share_or_an_english_name_names_no_card() -> None:
    """Only a translated name that stands for one card, and is no card's own, is resolved."""
    names = _names(
        ("Dichotomagie", "de", "Dichotomancy"),
        ("Zauber", "de", "Spell A"),
        ("Zauber", "fr", "Spell B"),  # two cards: no answer
        ("Island", "de", "Insel"),  # an English card's own name: never re-keyed
        ("Insel", "en", "Island"),
    )
    english = english_names(names)
    assert english == {"dichotomagie": "Dichotomancy"}
    table = pa.table({"card": ["Dichotomagie", "Zauber", "Island", None]})
    assert renamed(table, english)["card"].to_pylist() == ["Dichotomancy", "Zauber", "Island", None]


def test_names_are_learned_once_and_kept_sorted() -> None:
    """A name already known keeps its first run; new ones join in (name, language) order."""
    first = _names(("Zeitriss", "de", "Rift Bolt"))
    found = [LocalName("Éclair de faille", "fr", "Rift Bolt"), LocalName("Zeitriss", "de", "X")]
    both = learned(first, found, run=2)
    assert both.select(["name", "card", "first_run"]).to_pylist() == [
        {"name": "Zeitriss", "card": "Rift Bolt", "first_run": 1},
        {"name": "Éclair de faille", "card": "Rift Bolt", "first_run": 2},
    ]
    assert learned(both, found, run=3) is both  # nothing new: nothing to write


def test_the_mtgjson_parser_gives_each_translated_name_once() -> None:
    """Rift Bolt's foreignData: one name a language, the English name and oracle id with it."""
    data = RIFT_BOLT.read_bytes()
    parsed = parse(RawDocument("tsp.json", "0" * 64, "", "utf-8", data=data))
    assert len(list(parsed.rulings)) == 15
    foreign = json.loads(data)["data"]["cards"][0]["foreignData"]
    assert len(parsed.names) == len({(f["name"], f["language"]) for f in foreign})
    assert LocalName(GERMAN, "de", "Rift Bolt", ORACLE) in parsed.names
    assert all(local.card == "Rift Bolt" and local.name != "Rift Bolt" for local in parsed.names)


def test_the_site_shows_one_card_with_the_sightings_of_both_names(tmp_path: Path) -> None:
    """After the re-keying the site has Rift Bolt's page, with the German ruling's first run."""
    out = tmp_path / "out"
    _german_dump(tmp_path / "first")
    ingest([tmp_path / "first"], out=out)
    (tmp_path / "second").mkdir()
    shutil.copy(RIFT_BOLT, tmp_path / "second" / "tsp.json")
    ingest([tmp_path / "second"], out=out)
    build_site(out, tmp_path / "site")
    pages = sorted(p.name for p in (tmp_path / "site" / "cards").glob("*.html"))
    assert pages == ["rift-bolt.html"]  # no page of the German name
    page = (tmp_path / "site" / "cards" / "rift-bolt.html").read_text("utf-8")
    assert "Die Karte wird mit Zeitmarken ins Exil geschickt." in page
