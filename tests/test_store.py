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
from conftest import FIXTURES, RAW, SEEDS, data_files, rows

from pipeline import LockBusyError, StoreError, ingest, open_dataset
from pipeline.schema import (
    CARRY_COLUMNS,
    PARTITIONED,
    SCHEMA_VERSION,
    SEGMENTED,
    TABLES,
    VERSION_KEY,
)
from pipeline.storage import commit, layout, lock, store


@pytest.fixture
def dataset(raw_copy: Path, out: Path) -> Path:
    """A dataset built from the shipped raw folder."""
    ingest([raw_copy], out=out)
    return out


@pytest.fixture
def logged(raw_copy: Path, out: Path) -> Path:
    """A dataset of the seeds and one MTGJSON card with its names: a part in every log."""
    shutil.copy(FIXTURES / "raw" / "mtgjson-tsp-rift-bolt.json", raw_copy)
    ingest([raw_copy], out=out)
    return out


@pytest.mark.parametrize("name", sorted(PARTITIONED))
def test_partitioned_tables_read_as_hive_folders(logged: Path, name: str) -> None:
    """Each append-only folder reads as-is in pyarrow, pandas, DuckDB and Polars, alike.

    Readers take `run` from the folder names (`run=1`): pyarrow and pandas as a
    dictionary (categorical) column, DuckDB and Polars as integers. A sighting's `text` is
    null on disk where it is the text of the ruling the row is keyed to, and its files hold
    the columns of carried rows (null: a first run carries nothing; tests/test_carry.py).
    """
    dataset = logged
    folder = dataset / name
    assert [p.relative_to(folder).as_posix() for p in folder.glob("*/*")] == [
        f"run=1/{layout.PART}"
    ]
    expected = rows(dataset, name)
    columns = TABLES[name].names
    if name == "sightings":
        columns = [*columns, *CARRY_COLUMNS]
        expected = [{**row, **dict.fromkeys(CARRY_COLUMNS)} for row in expected]
        texts = {(r["text_hash"], r["card"], r["effective_date"]): r["text"]
                 for r in rows(dataset, "rulings")}  # fmt: skip
        on_disk = pq.read_table(folder)["text"].to_pylist()
        for row, text in zip(expected, on_disk, strict=True):
            ruling_text = texts[(row["text_hash"], row["card"], row["effective_date"])]
            assert text == (None if row["text"] == ruling_text else row["text"])
            row["text"] = text
        kept = [r["repaired_from"] for r in expected if r["text"] is not None]
        assert len(kept) == 2  # the copies read without their {X}: re-keyed, texts kept
        assert all(kept)

    def plain(records: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{c: (int(str(r[c])) if c == "run" else r[c]) for c in columns} for r in records]

    arrow = pq.read_table(folder).to_pylist()
    frame = pd.read_parquet(folder, dtype_backend="pyarrow")
    polars = pl.scan_parquet(folder).collect().to_dicts()
    pattern = f"{folder}/*/*.parquet"
    relation = duckdb.sql(
        f"SELECT * FROM read_parquet('{pattern}', hive_partitioning = true)"  # noqa: S608
    )
    assert relation is not None
    duck = relation.to_arrow_table()
    assert set(frame.columns) == set(duck.column_names) == set(columns)
    assert len(frame) == len(expected)
    assert plain(arrow) == plain(polars) == plain(duck.to_pylist()) == expected
    assert duck.schema.field("run").type == pa.int64()


@pytest.mark.parametrize("name", sorted(layout.VERSIONED))
def test_pandas_duckdb_polars_read_the_same_rows(dataset: Path, name: str) -> None:
    """Each file reads as-is in pandas, DuckDB and Polars, with the same rows."""
    path = layout.path_of(dataset, name)  # a file, or a folder of segments
    files = path / "*.parquet" if path.is_dir() else path
    arrow = pq.read_table(path)
    frame = pd.read_parquet(path)
    polars = pl.read_parquet(files)
    relation = duckdb.sql(f"SELECT * FROM read_parquet('{files}')")  # noqa: S608 - a test path
    assert relation is not None
    duck = relation.to_arrow_table()
    assert len(frame) == polars.height == arrow.num_rows == duck.num_rows
    assert list(frame.columns) == polars.columns == duck.column_names == TABLES[name].names
    assert duck.to_pylist() == arrow.to_pylist()
    assert polars.to_arrow().to_pylist() == arrow.to_pylist()


def test_rulings_types(dataset: Path) -> None:
    """Dates are dates, runs are integers, the schema version is in the metadata."""
    [segment] = (dataset / "rulings").glob("*.parquet")
    table = pq.read_table(segment)
    assert table.schema.field("effective_date").type == pa.date32()
    assert table.schema.field("first_run").type == pa.int64()
    assert table.schema.metadata[VERSION_KEY] == str(SCHEMA_VERSION).encode()
    dates = pd.read_parquet(dataset / "rulings")["effective_date"].dropna()
    assert isinstance(dates.iloc[0], dt.date)


def test_rulings_sorted_by_card_date_hash(dataset: Path) -> None:
    """Rows are ordered by card, then date, then hash; unknown cards and dates last."""
    rows = pq.read_table(dataset / "rulings").to_pylist()  # one segment here
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
    before = data_files(dataset)
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
    assert data_files(dataset) == before
    visible = sorted(p.name for p in dataset.iterdir() if not p.name.startswith("."))
    assert visible == sorted({name.split("/")[0] for name in before})
    report = ingest([raw_copy], out=dataset)
    assert (report.run, report.rulings_read) == (2, 1)
    assert not list((dataset / layout.VERSIONS).glob("*.tmp"))


def test_tables_are_links_to_the_version_in_force(
    dataset: Path, raw_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each table links to .current, which one rename switches; two versions are kept.

    With no retention time, a superseded version goes at the next commit but one.
    """
    monkeypatch.setattr(commit, "RETAIN_SECONDS", 0.0)
    for name in layout.VERSIONED:
        link = layout.path_of(dataset, name)  # a file, or a folder of segments
        assert link.is_symlink()
        assert link.readlink() == Path(layout.CURRENT) / link.name
    for n in range(3):
        (raw_copy / f"new{n}.txt").write_text(f"Card {n}\n\n2024-05-05\n\nNew {n}.\n", "utf-8")
        ingest([raw_copy], out=dataset)
    versions = sorted(p.name for p in (dataset / layout.VERSIONS).iterdir())
    assert versions == ["000003", "000004"]
    assert (dataset / layout.CURRENT).resolve().name == "000004"
    assert pq.read_table(dataset / "runs.parquet").num_rows == 4
    assert layout.part_runs(dataset, "sightings") == [1, 2, 3, 4]


def test_recent_versions_outlive_their_readers(dataset: Path, raw_copy: Path) -> None:
    """A version superseded within the retention time stays, and a pinned reader reads on."""
    pinned = open_dataset(dataset)
    before = pinned.rulings(current_only=False)
    for n in range(3):
        (raw_copy / f"new{n}.txt").write_text(f"Card {n}\n\n2024-05-05\n\nNew {n}.\n", "utf-8")
        ingest([raw_copy], out=dataset)
    versions = sorted(p.name for p in (dataset / layout.VERSIONS).iterdir())
    assert versions == ["000000", "000001", "000002", "000003", "000004"]
    assert pinned.last_run == 1
    assert pinned.rulings(current_only=False).equals(before)
    assert set(pinned.sightings()["run"]) == {1}
    assert open_dataset(dataset).last_run == 4


def test_a_dataset_of_plain_files_is_adopted(raw_copy: Path, out: Path) -> None:
    """Tables written as plain files (an older layout) become version 0, nothing lost."""
    ingest([raw_copy], out=out)
    plain = out.parent / "plain"
    plain.mkdir()
    for name in layout.VERSIONED:
        if name in SEGMENTED:
            shutil.copytree(out / name, plain / name)  # the segments the link leads to
        else:
            shutil.copyfile(out / f"{name}.parquet", plain / f"{name}.parquet")
    for name in PARTITIONED:
        if (out / name).is_dir():  # the seeds give no names, so no names_learned
            shutil.copytree(out / name, plain / name)
    (raw_copy / "new.txt").write_text("Card\n\n2024-05-05\n\nNew.\n", encoding="utf-8")
    report = ingest([raw_copy], out=plain)
    assert report.run == 2
    assert len(rows(plain, "sightings")) == 78
    assert layout.part_runs(plain, "sightings") == [1, 2]


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
    with lock.writer_lock(dataset), pytest.raises(LockBusyError, match="another ingest"):
        ingest([raw_copy], out=dataset)


def test_duckdb_views_give_every_sighting_its_text(dataset: Path) -> None:
    """The DuckDB view of the sightings puts back the texts the parts leave out."""
    ds = open_dataset(dataset)
    relation = ds.duckdb().sql("SELECT text FROM sightings")
    assert relation is not None
    texts = [text for (text,) in relation.fetchall()]
    assert texts == list(ds.sightings()["text"])
    assert None not in texts
    assert pq.read_table(dataset / "sightings")["text"].null_count == 75  # left out on disk


def test_a_part_holds_only_the_dictionary_values_its_rows_use(tmp_path: Path) -> None:
    """Rows sliced from a run's pool keep its whole dictionary in memory, never on disk."""
    pool = pa.array([f"{n:064x}" for n in range(5_000)]).dictionary_encode()
    filler = {pa.bool_(): False, pa.int64(): 2, pa.string(): "added"}
    row = {f.name: None if f.nullable else filler[f.type] for f in TABLES["changes"]}
    rows_ = [row] * 3
    table = pa.Table.from_pylist(rows_, schema=TABLES["changes"])
    hashes = pa.DictionaryArray.from_arrays(pa.array([7, 7, 4_321], pa.int32()), pool.dictionary)
    table = table.set_column(table.schema.get_field_index("new_text_hash"), "new_text_hash", hashes)
    path = tmp_path / "part.parquet"
    commit._write_durable(path, table, "changes")
    on_disk = pq.read_table(path, columns=["new_text_hash"], read_dictionary=["new_text_hash"])
    column = on_disk["new_text_hash"].combine_chunks()
    assert isinstance(column, pa.DictionaryArray)
    assert on_disk["new_text_hash"].to_pylist() == [f"{7:064x}", f"{7:064x}", f"{4_321:064x}"]
    assert len(column.dictionary) == 2
    assert path.stat().st_size < 10_000  # the pool's 5,000 hashes are 320 KB


def test_a_folder_where_no_lock_can_be_made_is_no_busy_dataset(raw_copy: Path) -> None:
    """ingest() into /proc fails with why, as a StoreError: never LockBusyError ("try later")."""
    with pytest.raises(StoreError, match=r"^/proc: cannot make the dataset's writer lock") as info:
        ingest([raw_copy], out=Path("/proc"))
    assert not isinstance(info.value, LockBusyError)


def test_a_copy_without_its_hidden_versions_is_refused_not_emptied(
    raw_copy: Path, out: Path
) -> None:
    """`cp -r normalized/* copy/` leaves links to nothing: the next run refuses, losing nothing.

    Adopted, the copy would have had empty tables, and every run's parts removed.
    """
    ingest([raw_copy], out=out)
    copy = out.parent / "copy"
    shutil.copytree(out, copy, symlinks=True, ignore=shutil.ignore_patterns(".*"))
    parts = sorted(p.relative_to(copy) for p in copy.rglob("part-0.parquet"))
    assert parts
    (raw_copy / "new.txt").write_text("Card\n\n2024-05-05\n\nNew.\n", encoding="utf-8")
    with pytest.raises(StoreError, match=r"link to a version that is not there .*cp -a"):
        ingest([raw_copy], out=copy)
    assert sorted(p.relative_to(copy) for p in copy.rglob("part-0.parquet")) == parts
    for link in ("rulings", "runs.parquet"):  # what was copied is left as it was
        assert (copy / link).is_symlink()
    assert not (copy / layout.VERSIONS).exists()


def test_parts_of_runs_no_table_records_are_not_adopted(raw_copy: Path, out: Path) -> None:
    """Plain tables beside parts of a run their runs.parquet lacks: refused, nothing removed."""
    ingest([raw_copy], out=out)
    plain = out.parent / "plain"
    shutil.copytree(out / "sightings", plain / "sightings")
    with pytest.raises(StoreError, match=r"sightings/ holds the parts of runs 1, which no runs"):
        ingest([raw_copy], out=plain)
    assert layout.part_runs(plain, "sightings") == [1]


@pytest.mark.parametrize(("retain", "kept"), [(0, 2), (3600, 5)])
def test_retain_sets_how_long_superseded_versions_stay(
    raw_copy: Path, out: Path, retain: int, kept: int
) -> None:
    """--retain 0 keeps the version in force and the one before; an hour keeps all five."""
    seeds = sorted(raw_copy.glob("0*.txt"))
    for seed in seeds[2:]:
        seed.rename(seed.with_suffix(".held"))
    for held in [None, *sorted(raw_copy.glob("*.held"))]:
        if held is not None:
            held.rename(held.with_suffix(".txt"))
        ingest([raw_copy], out=out, retain=retain)
    assert len(list((out / layout.VERSIONS).iterdir())) == kept


def test_texts_of_one_hash_are_stored_dictionary_encoded(tmp_path: Path, out: Path) -> None:
    """Rulings printed with straight and curly apostrophes share a hash, stored once a file.

    The run's pool gave `text_hash` one dictionary entry per text: a hash twice. Given such
    a dictionary, the Parquet writer falls back to plain pages after a dictionary page
    whose tail is uninitialized memory: every run wrote other bytes. Each column chunk
    with a dictionary page, in every version, holds dictionary-encoded pages.
    """
    raw = tmp_path / "raw"
    raw.mkdir()
    seed = (RAW / SEEDS[1]).read_text("utf-8")
    (raw / "a.txt").write_text(seed, "utf-8")
    (raw / "b.txt").write_text(seed.replace("'", "\u2019"), "utf-8")
    ingest([raw], out=out)
    sightings = pq.read_table(out / "sightings", columns=["text_hash"])
    assert sightings.num_rows == 2 * len(set(sightings["text_hash"].to_pylist()))
    files = sorted((out / layout.VERSIONS).rglob("*.parquet"))
    files += sorted(p for p in out.rglob("part-0.parquet") if layout.VERSIONS not in p.parts)
    fell_back = [f"{p.relative_to(out)}: {name}" for p in files for name in _fell_back(p)]
    assert fell_back == []


def _fell_back(path: Path) -> list[str]:
    """The columns of PATH with a dictionary page but plain data pages (in any row group)."""
    metadata = pq.ParquetFile(path).metadata
    chunks = (
        metadata.row_group(group).column(column)
        for group in range(metadata.num_row_groups)
        for column in range(metadata.num_columns)
    )
    return [
        chunk.path_in_schema
        for chunk in chunks
        if chunk.has_dictionary_page and "RLE_DICTIONARY" not in chunk.encodings
    ]
