"""The sightings index: a card's read opens a few parts, and reads what the parts say."""

from __future__ import annotations

import json
import os
import random
import shutil
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import ingest, open_dataset
from pipeline.errors import StoreError
from pipeline.schema import PARTITION_KEY
from pipeline.storage import commit, index, layout, store
from pipeline.storage.carry import of_cards

if TYPE_CHECKING:
    from pathlib import Path

# Forty daily runs behind most tests (the many_runs fixture): left out of make check.
pytestmark = pytest.mark.slow

CARDS = [f"Card {n}" for n in range(12)]


def _document(day: int, rng: random.Random, cards: dict[str, list[str]]) -> str:
    """Day DAY's set file: CARDS' rulings, some reworded, added or dropped (in place)."""
    for name, rulings in cards.items():
        roll = rng.random()
        if day and roll < 0.15 and rulings:
            at = rng.randrange(len(rulings))
            rulings[at] += f" Reworded on day {day}."
        elif day and roll < 0.2:
            rulings.insert(rng.randrange(len(rulings) + 1), f"{name}: added on day {day}.")
        elif day and roll < 0.22 and len(rulings) > 1:
            rulings.pop(rng.randrange(len(rulings)))
    data = {
        "meta": {"version": "5.2.0", "date": "2022-04-25"},
        "data": {"code": "SYN", "cards": [
            {"name": name, "rulings": [{"date": "2022-01-01", "text": t} for t in rulings]}
            for name, rulings in cards.items()
        ]},
    }  # fmt: skip
    return json.dumps(data)


def _year(raw: Path, out: Path, days: int, seed: int = 0) -> None:
    """DAYS daily re-reads of one set file, a few of its rulings changed each day."""
    rng = random.Random(seed)
    cards = {name: [f"{name}: ruling {n}." for n in range(8)] for name in CARDS}
    raw.mkdir(parents=True, exist_ok=True)
    for day in range(days + 1):
        (raw / "SYN.json").write_text(_document(day, rng, cards), "utf-8")
        ingest([raw], out=out)


def _card_reads(out: Path, cards: list[str]) -> dict[str, Any]:
    """Each card's sightings and history, and its rows among every sighting."""
    dataset = open_dataset(out)
    every = dataset.sightings()
    found = {}
    for card in cards:
        found[card] = (
            dataset.sightings(card=card).astype(str).to_dict("records"),
            every[every["card"] == card].reset_index(drop=True).astype(str).to_dict("records"),
            dataset.history(card).astype(str).to_dict("records"),
        )
    return found


def _without_index(out: Path) -> Path:
    """Move the version's index aside; the path it is kept at."""
    path = layout.pinned(out) / index.INDEX
    aside = path.with_name("aside")
    path.rename(aside)
    return aside


def _parts_read(out: Path, card: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sightings parts a card's read opens."""
    read: list[int] = []
    original = layout.read_file

    def watched(path: Path, name: str, **options: Any) -> Any:
        if name == "sightings":
            read.append(int(options.get("run") or 0))
        return original(path, name, **options)

    with monkeypatch.context() as patch:
        patch.setattr(layout, "read_file", watched)
        open_dataset(out).sightings(card=card)
    return read


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of forty daily runs, rebased a few times (carry.REBASE_SHARE)."""
    work = tmp_path_factory.mktemp("index")
    _year(work / "raw", work / "out", days=40)
    return work / "out"


def test_many_runs_read_the_same_with_the_index_and_without(
    many_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forty runs: a card's sightings and history equal its rows among all, index or not.

    With the index, the read opens the parts of the runs that wrote the card in full (bases
    and amendments), not one part a run.
    """
    out = tmp_path / "out"
    shutil.copytree(many_runs, out, symlinks=True)
    assert len(index.segment_ids(layout.pinned(out))) == 2  # forty runs, 32 a segment
    indexed = _card_reads(out, CARDS)
    for card, (mine, among_all, _) in indexed.items():
        assert mine == among_all, card
    runs = layout.part_runs(out, "sightings")
    opened = _parts_read(out, CARDS[3], monkeypatch)
    assert 0 < len(set(opened)) < len(runs) / 2
    _without_index(out)
    assert _card_reads(out, CARDS) == indexed
    assert len(_parts_read(out, CARDS[3], monkeypatch)) >= len(runs)


def test_a_part_changed_since_it_was_indexed_is_read_itself(
    many_runs: Path, tmp_path: Path
) -> None:
    """A part changed since it was indexed is read itself: the sightings are the parts'.

    Its size or time no longer match the index's: its run is read, as are the runs whose
    rows take their content from it.
    """
    out = tmp_path / "out"
    shutil.copytree(many_runs, out, symlinks=True)
    expected = _card_reads(out, CARDS[:4])
    runs = layout.part_runs(out, "sightings")
    for run in runs[5::17]:
        path = layout.part_path(out, "sightings", run)
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1))
    found = index.load(layout.pinned(out), out)
    assert found is not None
    assert not found.runs & set(runs[5::17])
    assert not set(found.rows["origin_run"].drop_null().to_pylist()) & set(runs[5::17])
    assert len(found.runs) > len(runs) / 2
    assert _card_reads(out, CARDS[:4]) == expected


def test_a_dataset_without_the_index_gets_one_from_its_next_run(
    many_runs: Path, tmp_path: Path
) -> None:
    """A dataset without an index (its file lost, or an older writer) gets one next run.

    The next run indexes every part; an index of another format is left unread.
    """
    out = tmp_path / "out"
    shutil.copytree(many_runs, out, symlinks=True)
    _without_index(out)
    raw = tmp_path / "raw"
    raw.mkdir()
    rng = random.Random(5)
    (raw / "SYN.json").write_text(_document(1, rng, {"Card 0": ["Card 0: ruling 0."]}), "utf-8")
    ingest([raw], out=out)
    found = index.load(layout.pinned(out), out)
    assert found is not None
    assert found.runs == set(layout.part_runs(out, "sightings"))
    expected = _card_reads(out, CARDS[:2])
    path = index.segment_path(layout.pinned(out), index.segment_ids(layout.pinned(out))[-1])
    table = pq.read_table(path)
    path.unlink()  # a hard link to the version before's
    pq.write_table(table.replace_schema_metadata({b"pipeline.sightings_index": b"0"}), path)
    assert index.load(layout.pinned(out), out) is None
    assert _card_reads(out, CARDS[:2]) == expected


def test_an_unreadable_index_is_an_error_saying_how_to_mend_it(
    many_runs: Path, tmp_path: Path
) -> None:
    """A damaged index stops a card's read with its path and the remedy."""
    out = tmp_path / "out"
    shutil.copytree(many_runs, out, symlinks=True)
    path = index.segment_path(layout.pinned(out), 0)
    path.unlink()
    path.write_bytes(b"not parquet")
    with pytest.raises(StoreError, match=r"000000\.parquet: not a readable index"):
        open_dataset(out).sightings(card=CARDS[0])


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    days=st.integers(1, 12),
    card=st.sampled_from(CARDS),
    touched=st.sets(st.integers(0, 12), max_size=3),
)
def test_any_days_of_edits_read_as_the_parts_say(
    tmp_path_factory: pytest.TempPathFactory, seed: int, days: int, card: str, touched: set[int]
) -> None:
    """Any days of rewordings, additions and removals: a card's read is its rows among all.

    The same for one run chosen, and with some parts changed since they were indexed.
    """
    work = tmp_path_factory.mktemp("any")
    out = work / "out"
    _year(work / "raw", out, days=days, seed=seed)
    runs = layout.part_runs(out, "sightings")
    for at in touched & set(range(len(runs))):  # parts the index no longer vouches for
        path = layout.part_path(out, "sightings", runs[at])
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1))
    dataset = open_dataset(out)
    every = dataset.sightings()
    mine = dataset.sightings(card=card).astype(str).to_dict("records")
    assert mine == every[every["card"] == card].reset_index(drop=True).astype(str).to_dict(
        "records"
    )
    last = runs[-1]
    chosen = store.read_table(out, "sightings", runs=[last], content=of_cards([card]))
    assert set(chosen[PARTITION_KEY].to_pylist()) <= {last}
    assert chosen.num_rows == int((every[every["run"] == last]["card"] == card).sum())


def test_a_version_adopted_for_a_newer_table_keeps_its_index(tmp_path: Path) -> None:
    """A version older than a table is adopted with it empty, and with its index linked.

    The reads then go through the index, and equal the parts'.
    """
    out = tmp_path / "out"
    _year(tmp_path / "raw", out, days=3)
    before = layout.pinned(out)
    segments = index.segment_ids(before)
    assert segments
    (before / "names.parquet").unlink()  # as a version-6 store left it
    commit.commit(out, {})
    after = layout.pinned(out)
    assert after != before
    assert (after / "names.parquet").is_file()
    assert index.segment_ids(after) == segments
    assert index.load(after, out) is not None
    for mine, every, _ in _card_reads(out, CARDS).values():
        assert mine == every


def test_a_run_of_new_files_does_not_read_the_run_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a reading of the same file can repeat a row: another file's run reads no part.

    Indexing a set file added to a million rulings read the million-row part before it.
    The new run's rows are their own origins, and read as without the index.
    """
    raw, other, out = tmp_path / "raw", tmp_path / "other", tmp_path / "out"
    _year(raw, out, days=1)
    last = layout.part_runs(out, "sightings")[-1]
    other.mkdir()
    cards = {f"New {n}": [f"New {n}: ruling."] for n in range(3)}
    (other / "NEW.json").write_text(_document(0, random.Random(0), cards), "utf-8")
    read: list[int] = []
    columns: list[Any] = []
    original = layout.read_part

    def watched(path: Path, run: int, wanted: Any = None) -> Any:
        read.append(run)
        columns.append(wanted)
        return original(path, run, wanted)

    with monkeypatch.context() as patch:
        patch.setattr(layout, "read_part", watched)
        ingest([other], out=out)
    assert read  # the new part itself
    assert last not in read  # the part of the run before, never needed
    # Nor the new part whole: only the columns its index rows keep (the rest is matching).
    assert columns == [index._KEPT]
    assert "text_hash" not in columns[0]
    assert layout.part_runs(out, "sightings")[-1] > last
    new = ["New 0", "New 2"]
    with_index = _card_reads(out, [*new, CARDS[0]])
    _without_index(out)
    assert _card_reads(out, [*new, CARDS[0]]) == with_index
    assert with_index["New 0"][0]  # its sightings are there
