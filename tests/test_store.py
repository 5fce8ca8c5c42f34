"""The dataset folder: readers agree, commits are atomic, versions are checked, one writer."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import LockBusyError, StoreError, commit, ingest, store
from pipeline.schema import SCHEMA_VERSION, TABLES, VERSION_KEY

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
    assert table.schema.metadata[VERSION_KEY] == str(SCHEMA_VERSION).encode()
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
    """A failure while writing the next version leaves the version in force untouched."""
    before = {p.name: p.read_bytes() for p in dataset.glob("*.parquet")}
    (raw_copy / "new.txt").write_text("Rift Bolt\n\n2024-05-05\n\nNew.\n", encoding="utf-8")
    real = commit._write_durable

    def fail_on_sightings(path: Path, table: pa.Table, name: str) -> None:
        if "sightings" in path.name:
            msg = "disk full"
            raise OSError(msg)
        real(path, table, name)

    monkeypatch.setattr(commit, "_write_durable", fail_on_sightings)
    with pytest.raises(StoreError, match=r"disk full.*the version before this run stays"):
        ingest([raw_copy], out=dataset)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in dataset.glob("*.parquet")} == before
    visible = sorted(p.name for p in dataset.iterdir() if not p.name.startswith("."))
    assert visible == sorted(before)
    report = ingest([raw_copy], out=dataset)
    assert (report.run, report.rulings_read) == (2, 1)
    assert not list((dataset / commit.VERSIONS).glob("*.tmp"))


def test_tables_are_links_to_the_version_in_force(dataset: Path, raw_copy: Path) -> None:
    """Each table links to .current, which one rename switches; two versions are kept."""
    for name in TABLES:
        link = dataset / f"{name}.parquet"
        assert link.is_symlink()
        assert link.readlink() == Path(commit.CURRENT) / link.name
    for n in range(3):
        (raw_copy / f"new{n}.txt").write_text(f"Card {n}\n\n2024-05-05\n\nNew {n}.\n", "utf-8")
        ingest([raw_copy], out=dataset)
    versions = sorted(p.name for p in (dataset / commit.VERSIONS).iterdir())
    assert versions == ["000003", "000004"]
    assert (dataset / commit.CURRENT).resolve().name == "000004"
    assert pq.read_table(dataset / "runs.parquet").num_rows == 4


def test_a_dataset_of_plain_files_is_adopted(raw_copy: Path, out: Path) -> None:
    """Tables written as plain files (an older layout) become version 0, nothing lost."""
    ingest([raw_copy], out=out)
    plain = out.parent / "plain"
    plain.mkdir()
    for name in TABLES:
        shutil.copyfile(out / f"{name}.parquet", plain / f"{name}.parquet")
    (raw_copy / "new.txt").write_text("Card\n\n2024-05-05\n\nNew.\n", encoding="utf-8")
    report = ingest([raw_copy], out=plain)
    assert report.run == 2
    assert pq.read_table(plain / "sightings.parquet").num_rows == 78


def test_newer_schema_is_refused(dataset: Path) -> None:
    """A file from a newer schema version is refused with both versions named."""
    path = dataset / "runs.parquet"
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({VERSION_KEY: b"99"}), path)
    newer = f"schema version 99, newer than this pipeline's {SCHEMA_VERSION}"
    with pytest.raises(StoreError, match=newer):
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
