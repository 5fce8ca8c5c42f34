"""Rulings and state as segments of whole cards: a run rewrites the segments of its cards."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES, RAW, SEEDS, data_files, rows, table

from pipeline import ingest
from pipeline.columns import whole
from pipeline.ingest import upgrade
from pipeline.schema import SEGMENTED
from pipeline.storage import layout, lock, segments

if TYPE_CHECKING:
    from pathlib import Path

V4 = FIXTURES / "dataset-v4"  # three runs written by the version-4 code (fixtures README)


def _runs(raw: Path, out: Path) -> None:
    """Four runs: the seeds, a new ruling of Rift Bolt, two new cards, a card reworded."""
    shutil.copytree(RAW, raw)
    ingest([raw], out=out)
    (raw / "bolt.txt").write_text("Rift Bolt\n\n2024-05-05\n\nA new ruling.\n", "utf-8")
    ingest([raw], out=out)
    for n in (1, 2):
        body = f"Card {n}\n\n2024-05-0{n}\n\nRuling of card {n}.\n\n2024-05-07\n\nAnother.\n"
        (raw / f"card{n}.txt").write_text(body, "utf-8")
    ingest([raw], out=out)
    (raw / "bolt.txt").write_text("Rift Bolt\n\n2024-05-05\n\nA reworded ruling.\n", "utf-8")
    ingest([raw], out=out)


def _cards(out: Path, segment: int) -> set[str | None]:
    path = layout.segment_path(out, "rulings", segment)
    return set(pq.read_table(path, columns=["card"])["card"].to_pylist())


@pytest.mark.slow
def test_segments_hold_the_rows_one_file_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs into small segments give the rows, `current` flags and changes of one segment."""
    _runs(tmp_path / "raw-one", tmp_path / "one")
    monkeypatch.setattr(segments, "TARGET_ROWS", 4)
    _runs(tmp_path / "raw-many", tmp_path / "many")
    assert len(layout.segment_ids(tmp_path / "one", "rulings")) == 1
    many = layout.segment_ids(tmp_path / "many", "rulings")
    assert len(many) > 3
    assert layout.segment_ids(tmp_path / "many", "state") == many
    for name in ("rulings", "state", "sightings", "changes", "translations"):
        assert rows(tmp_path / "many", name) == rows(tmp_path / "one", name), name
    # Each card, and the rows without one, in one segment of both tables.
    seen: dict[object, int] = {}
    for seg in many:
        for name in SEGMENTED:
            cards = pq.read_table(layout.segment_path(tmp_path / "many", name, seg))["card"]
            for card in set(cards.to_pylist()):
                assert seen.setdefault(card, seg) == seg, (name, card)


def test_a_run_rewrites_only_the_segments_of_its_cards(
    raw_copy: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new ruling of one card rewrites its segment; new cards fill the newest one."""
    monkeypatch.setattr(segments, "TARGET_ROWS", 10)
    ingest([raw_copy], out=out)
    before = data_files(out)
    [bolt] = [s for s in layout.segment_ids(out, "rulings") if "Rift Bolt" in _cards(out, s)]
    (raw_copy / "bolt.txt").write_text("Rift Bolt\n\n2024-05-05\n\nA new ruling.\n", "utf-8")
    ingest([raw_copy], out=out)
    after = data_files(out)
    changed = {name for name in after if after[name] != before.get(name)}
    segment = layout.segment_path(out, "rulings", bolt).name
    assert {n for n in changed if n.split("/")[0] in SEGMENTED} == {
        f"rulings/{segment}",
        f"state/{segment}",
    }
    # Unchanged segments are the same files, linked into the new version.
    newest = max(layout.segment_ids(out, "rulings"))
    untouched = layout.segment_path(out, "rulings", newest)
    assert untouched.resolve().stat().st_nlink >= 2
    # A new card goes to the newest segment while it has room, else to a new one.
    rulings_before = pq.read_metadata(untouched).num_rows
    (raw_copy / "new.txt").write_text("New Card\n\n2024-05-05\n\nIts ruling.\n", "utf-8")
    ingest([raw_copy], out=out)
    ids = layout.segment_ids(out, "rulings")
    home = next(s for s in ids if "New Card" in _cards(out, s))
    assert home == (newest if rulings_before < segments.TARGET_ROWS else newest + 1)


def test_a_grown_segment_is_split() -> None:
    """A segment past twice the target is cut into segments of whole cards, in order."""
    cards = [f"Card {n:02d}" for n in range(30) for _ in range(5)]
    rulings = pa.table({"card": pa.array(cards, pa.string()), "n": range(len(cards))})
    state = rulings.slice(0, 60)
    layout = segments.Layout({3: whole(pc.unique(rulings["card"]))}, {3: 150})
    plan = segments.plan(layout, pa.array(["Card 00"]))
    old_target = segments.TARGET_ROWS
    try:
        segments.TARGET_ROWS = 50
        cut = segments.split({"rulings": rulings, "state": state}, plan)
    finally:
        segments.TARGET_ROWS = old_target
    parts = {seg: c.table() for seg, c in cut["rulings"].items() if c is not None}
    assert sorted(parts) == [3, 4, 5]  # the first keeps its number, the others are new
    assert [t.num_rows for t in parts.values()] == [50, 50, 50]
    assert pa.concat_tables([parts[s] for s in sorted(parts)]).equals(rulings)
    assert sum(c.num_rows for c in cut["state"].values() if c is not None) == 60


def test_a_version_4_dataset_is_upgraded(tmp_path: Path) -> None:
    """Version 4's single rulings and state files become segments; no row changes.

    But one: the state learns where each as-of date came from, from files.parquet (version 8).
    """
    out = tmp_path / "out"
    shutil.copytree(V4, out)
    expected = {name: rows(out, name) for name in ("rulings", "state", "sightings", "changes")}
    assert layout.unsegmented(out) == ["rulings", "state"]
    with lock.writer_lock(out):
        upgrade(out)
    assert layout.unsegmented(out) == []
    assert not (out / "rulings.parquet").exists()
    assert layout.segment_ids(out, "rulings") == layout.segment_ids(out, "state") == [1]
    origins = {(f["run"], f["source_path"]): f["as_of_origin"] for f in rows(out, "files")}
    state = rows(out, "state")
    assert [origins[r["run"], r["source_path"]] for r in state] == [
        r.pop("as_of_origin") for r in state
    ]
    assert state == [{k: v for k, v in r.items() if k != "as_of_origin"} for r in expected["state"]]
    for name, before in expected.items():
        if name != "state":
            assert rows(out, name) == before, name
    # The next run reads the upgraded store as it would have read the single files.
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / SEEDS[2], raw)
    report = ingest([raw], out=out)
    assert report.run == 4
    assert table(out, "rulings").num_rows == len(expected["rulings"]) + report.new_keys
