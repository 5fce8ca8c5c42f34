"""One card, one name: translated titles resolved by the names MTGJSON files give."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from pipeline import ingest, open_dataset
from pipeline.folding.catalog import load_catalog
from pipeline.folding.names import english_names, learned, renamed
from pipeline.models import LocalName, RawDocument
from pipeline.publishing.site import build_site
from pipeline.reading.parsers import parse
from pipeline.schema import NAMES
from pipeline.storage import store

FIXTURES = Path(__file__).parent / "fixtures"
RAW = Path(__file__).parent.parent / "raw"
RIFT_BOLT = FIXTURES / "raw" / "mtgjson-tsp-rift-bolt.json"
MTGJSON_2022 = Path(__file__).parent.parent.parent / "shared" / "realdata" / "mtgjson-2022"
PLC = MTGJSON_2022 / "PLC.json"
TSP = MTGJSON_2022 / "TSP.json"
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
    """A name already known keeps its first run; new ones join in (name, language, card) order.

    A second card of a known name is kept beside the first: the name stands for both.
    """
    first = _names(("Zeitriss", "de", "Rift Bolt"))
    found = [LocalName("Éclair de faille", "fr", "Rift Bolt"), LocalName("Zeitriss", "de", "X")]
    both = learned(first, found, run=2)
    assert both.select(["name", "card", "first_run"]).to_pylist() == [
        {"name": "Zeitriss", "card": "Rift Bolt", "first_run": 1},
        {"name": "Zeitriss", "card": "X", "first_run": 2},
        {"name": "Éclair de faille", "card": "Rift Bolt", "first_run": 2},
    ]
    assert english_names(both) == {"éclair de faille": "Rift Bolt"}
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


@pytest.mark.skipif(not TSP.is_file(), reason="needs ../shared/realdata")
def test_a_printed_name_of_two_cards_is_stored_as_printed_and_said(tmp_path: Path) -> None:
    """Italian "Eliminare" is Cancel and Wipe Away in the real TSP file: no card is chosen.

    The dump holds a ruling of neither card's own, so nothing in it decides; the run says
    so, naming both, and a ruling filed under a name of one card is still resolved.
    """
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(TSP, raw / "TSP.json")
    (raw / "eliminare.txt").write_text(
        "Eliminare\n\n2021-03-19\n\nLa magia viene neutralizzata.\n", "utf-8"
    )
    _german_dump(raw)
    report = ingest([raw], out=tmp_path / "out")
    said = [w for w in report.warnings if "'Eliminare'" in w]
    assert len(said) == 1
    assert "eliminare.txt" in said[0]
    assert "Cancel, Wipe Away" in said[0]
    dataset = open_dataset(tmp_path / "out")
    assert set(dataset.rulings(lang="it")["card"]) == {"Eliminare"}
    assert set(dataset.rulings(card="Rift Bolt", lang="de")["card_printed"]) == {GERMAN}
    names = dataset.duckdb().sql("SELECT card FROM names WHERE name = 'Eliminare' AND lang = 'it'")
    assert sorted(row[0] for row in names.fetchall()) == ["Cancel", "Wipe Away"]


def test_a_catalog_name_of_two_cards_names_neither(tmp_path: Path) -> None:
    """An AtomicCards catalog where "Eliminare" is Cancel and Wipe Away: no card is chosen.

    The real Italian names of the two TSP cards; an English name stays its own card's.
    """
    cards = {
        "Cancel": [{"name": "Cancel", "identifiers": {"scryfallOracleId": "oracle-cancel"},
                    "foreignData": [{"language": "Italian", "name": "Eliminare"}]}],
        "Wipe Away": [{"name": "Wipe Away", "identifiers": {"scryfallOracleId": "oracle-wipe"},
                       "foreignData": [{"language": "Italian", "name": "Eliminare"},
                                       {"language": "German", "name": "Cancel"}]}],
    }  # fmt: skip
    path = tmp_path / "AtomicCards.json"
    path.write_text(json.dumps({"meta": {"date": "2022-04-25"}, "data": cards}), "utf-8")
    catalog = load_catalog([path])
    assert catalog.shared == {"eliminare": {"Cancel", "Wipe Away"}}
    assert "eliminare" not in catalog.english
    assert catalog.english["cancel"] == "Cancel"  # its own name, though German for Wipe Away
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "eliminare.txt").write_text("Eliminare\n\n2021-03-19\n\nLa magia.\n", "utf-8")
    report = ingest([raw], out=tmp_path / "out", catalog=catalog)
    said = (
        "eliminare.txt: the name 'Eliminare' stands for 2 cards (Cancel, Wipe Away): stored as "
        "printed, no card chosen (a manifest `card` or the rulings' oracle ids decide it)"
    )
    assert [w for w in report.warnings if "'Eliminare'" in w] == [said]
    assert set(open_dataset(tmp_path / "out").rulings()["card"]) == {"Eliminare"}


def test_a_catalog_name_stays_itself_beside_its_case_twin(tmp_path: Path) -> None:
    """Catalog cards "STRASSE" and "Straße" fold alike: neither is stored as the other."""
    cards = {
        name: [{"name": name, "identifiers": {"scryfallOracleId": f"oracle-{i}"}}]
        for i, name in enumerate(("Straße", "STRASSE"))
    }
    path = tmp_path / "AtomicCards.json"
    path.write_text(json.dumps({"meta": {"date": "2022-04-25"}, "data": cards}), "utf-8")
    catalog = load_catalog([path])
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "manifest.csv").write_text("path,card\nupper.txt,STRASSE\nlower.txt,Straße\n", "utf-8")
    for name in ("upper", "lower"):
        (raw / f"{name}.txt").write_text(f"{name}\n\n2021-03-19\n\nA ruling of {name}.\n", "utf-8")
    ingest([raw], out=tmp_path / "out", catalog=catalog)
    rulings = open_dataset(tmp_path / "out").rulings()
    assert dict(zip(rulings["text"], rulings["card"], strict=True)) == {
        "A ruling of upper.": "STRASSE",
        "A ruling of lower.": "Straße",
    }
    assert dict(zip(rulings["card"], rulings["oracle_id"], strict=True)) == {
        "Straße": "oracle-0",
        "STRASSE": "oracle-1",
    }
