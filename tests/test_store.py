"""The dataset folder: readers agree, commits are atomic, versions are checked, one writer."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import LockBusyError, StoreError, ingest, store
from pipeline.schema import TABLES, VERSION_KEY

if TYPE_CHECKING:
    from pathlib import Path

NAMES = sorted(TABLES)


@pytest.fixture
def dataset(raw_copy: Path, out: Path) -> Path:
    """A dataset built from the shipped raw folder."""
    ingest([raw_copy], out=out)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_pandas_duckdb_polars_read_the_same_rows(dataset: Path, name: str) -> None:
    """Each file reads as-is in pandas, DuckDB and Polars, with the same rows."""
    path = dataset / f"{name}.parquet"
    arrow = pq.read_table(path)
    frame = pd.read_parquet(path)
    polars = pl.read_parquet(path)
    relation = duckdb.sql(f"SELECT * FROM read_parquet('{path}')")  # noqa: S608 - a test path
    assert relation is not None
    duck = relation.to_arrow_table()
    assert len(frame) == polars.height == arrow.num_rows == duck.num_rows
    assert list(frame.columns) == polars.columns == duck.column_names == TABLES[name].names
    assert duck.to_pylist() == arrow.to_pylist()
    assert polars.to_arrow().to_pylist() == arrow.to_pylist()


def test_rulings_types(dataset: Path) -> None:
    """Dates are dates, runs are integers, the schema version is in the metadata."""
    table = pq.read_table(dataset / "rulings.parquet")
    assert table.schema.field("effective_date").type == pa.date32()
    assert table.schema.field("first_run").type == pa.int64()
    assert table.schema.metadata[VERSION_KEY] == b"1"
    dates = pd.read_parquet(dataset / "rulings.parquet")["effective_date"].dropna()
    assert isinstance(dates.iloc[0], dt.date)


def test_rulings_sorted_by_card_date_hash(dataset: Path) -> None:
    """Rows are ordered by card, then date, then hash; unknown cards and dates last."""
    rows = pq.read_table(dataset / "rulings.parquet").to_pylist()
    keys = [
        (r["card"] is None, r["card"] or "", r["effective_date"] is None,
         r["effective_date"] or dt.date.min, r["text_hash"])
        for r in rows
    ]  # fmt: skip
    assert keys == sorted(keys)


def test_failed_commit_leaves_the_old_dataset(
    dataset: Path, raw_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure while writing, before the journal, leaves every file as it was."""
    before = {p.name: p.read_bytes() for p in dataset.glob("*.parquet")}
    (raw_copy / "new.txt").write_text("Rift Bolt\n\n2024-05-05\n\nNew.\n", encoding="utf-8")
    real = store._write_durable

    def fail_on_sightings(path: Path, table: pa.Table) -> None:
        if "sightings" in path.name:
            msg = "disk full"
            raise OSError(msg)
        real(path, table)

    monkeypatch.setattr(store, "_write_durable", fail_on_sightings)
    with pytest.raises(StoreError, match=r"disk full.*nothing was changed"):
        ingest([raw_copy], out=dataset)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in dataset.glob("*.parquet")} == before
    assert sorted(p.name for p in dataset.iterdir()) == [".lock", *sorted(before)]
    report = ingest([raw_copy], out=dataset)
    assert (report.run, report.rulings_read) == (2, 1)


def test_failure_after_the_journal_is_completed_by_the_next_run(
    dataset: Path, raw_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the journal is durable the commit counts; the next run finishes it first."""
    (raw_copy / "new.txt").write_text("Rift Bolt\n\n2024-05-05\n\nNew.\n", encoding="utf-8")

    def fail(_path: Path) -> None:
        msg = "power cut"
        raise OSError(msg)

    monkeypatch.setattr(store, "_fsync_dir", fail)
    with pytest.raises(StoreError, match=r"power cut.*the next run completes"):
        ingest([raw_copy], out=dataset)
    monkeypatch.undo()
    report = ingest([raw_copy], out=dataset)
    assert (report.run, report.rulings_read) == (3, 0)
    assert [r["run"] for r in pq.read_table(dataset / "runs.parquet").to_pylist()] == [1, 2, 3]


def test_crash_after_journal_rolls_forward(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the journal is written, recovery completes the commit."""
    runs = store.read_table(dataset, "runs")
    extra = runs.slice(0, 1).set_column(0, "run", pa.array([7], pa.int64())).cast(runs.schema)
    monkeypatch.setattr(store, "recover", lambda _out: None)
    store.commit(dataset, {"runs": pa.concat_tables([runs, extra])})
    monkeypatch.undo()
    assert (dataset / store.JOURNAL).exists()
    assert pq.read_table(dataset / "runs.parquet").num_rows == 1  # not yet renamed
    store.recover(dataset)
    assert pq.read_table(dataset / "runs.parquet")["run"].to_pylist() == [1, 7]
    assert not (dataset / store.JOURNAL).exists()


def test_newer_schema_is_refused(dataset: Path) -> None:
    """A file from a newer schema version is refused with both versions named."""
    path = dataset / "runs.parquet"
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({VERSION_KEY: b"99"}), path)
    with pytest.raises(StoreError, match="schema version 99, newer than this pipeline's 1"):
        store.read_table(dataset, "runs")


def test_foreign_parquet_is_refused(tmp_path: Path) -> None:
    """A Parquet file this pipeline did not write is not taken for its dataset."""
    pq.write_table(pa.table({"a": [1]}), tmp_path / "rulings.parquet")
    with pytest.raises(StoreError, match="not written by this pipeline"):
        store.read_table(tmp_path, "rulings")


def test_second_writer_is_refused(dataset: Path, raw_copy: Path) -> None:
    """While one ingest holds the lock, another fails at once with a clear message."""
    with store.writer_lock(dataset), pytest.raises(LockBusyError, match="another ingest"):
        ingest([raw_copy], out=dataset)
