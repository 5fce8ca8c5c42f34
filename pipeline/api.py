"""The Python API for analysts: the dataset as pandas DataFrames, or as DuckDB views."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import store
from pipeline.dataset import load_history, require_dataset
from pipeline.schema import TABLES

if TYPE_CHECKING:
    import duckdb


def _frame(table: pa.Table) -> pd.DataFrame:
    """A DataFrame with pyarrow-backed dtypes: strings stay strings, dates stay dates."""
    return table.to_pandas(types_mapper=pd.ArrowDtype)


class Dataset:
    """A dataset folder written by `pipeline ingest`, opened read-only."""

    def __init__(self, path: str | Path = "normalized") -> None:
        self.path = Path(path)
        require_dataset(self.path)
        for name in TABLES:  # fail now, with the file's name, not half way through a notebook
            store.read_table(self.path, name).schema  # noqa: B018 - read to validate

    def __repr__(self) -> str:
        return f"Dataset({str(self.path)!r})"

    def _table(self, name: str) -> pa.Table:
        # Plain strings for analysts (the stages hold `text` dictionary-encoded).
        return store.read_table(self.path, name).cast(TABLES[name])

    def rulings(
        self,
        *,
        current_only: bool = True,
        card: str | None = None,
        lang: str | None = None,
        kind: str | None = None,
    ) -> pd.DataFrame:
        """One row per ruling key; by default only today's rulings (`current`)."""
        table = self._table("rulings")
        conditions = [
            (current_only, pc.field("current")),
            (card is not None, pc.field("card") == card),
            (lang is not None, pc.field("lang") == lang),
            (kind is not None, pc.field("kind") == kind),
        ]
        for wanted, condition in conditions:
            if wanted:
                table = table.filter(condition)
        return _frame(table)

    def sightings(self) -> pd.DataFrame:
        """Every ruling read, in every run."""
        return _frame(self._table("sightings"))

    def changes(
        self,
        *,
        run: int | None = None,
        since: dt.date | str | None = None,
        rule_changes_only: bool = False,
    ) -> pd.DataFrame:
        """Changes of one run, of the runs started since a date, or of all runs."""
        table = self._table("changes")
        if run is not None:
            table = table.filter(pc.field("run") == run)
        if since is not None:
            day = dt.date.fromisoformat(since) if isinstance(since, str) else since
            runs = self._table("runs")
            chosen = [r["run"] for r in runs.to_pylist() if r["started_at"].date() >= day]
            table = table.filter(pc.is_in(table["run"], value_set=pa.array(chosen, pa.int64())))
        if rule_changes_only:
            table = table.filter(pc.field("rule_change"))
        return _frame(table)

    def history(self, card: str) -> pd.DataFrame:
        """Every version of every ruling of CARD, oldest first, with when it came and went."""
        entries = [asdict(e) for e in load_history(self.path, card)]
        return pd.DataFrame(entries).convert_dtypes(dtype_backend="pyarrow")

    def runs(self) -> pd.DataFrame:
        """One row per run: when, what it read, what it found."""
        return _frame(self._table("runs"))

    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with views rulings, sightings, changes, runs, files."""
        try:
            import duckdb  # noqa: PLC0415 - an optional extra
        except ImportError as exc:
            msg = "Dataset.duckdb() needs DuckDB: pip install '.[analysis]'"
            raise ImportError(msg) from exc
        connection = duckdb.connect()
        for name in TABLES:
            path = store.path_of(self.path, name)
            if path.exists():
                quoted = str(path).replace("'", "''")
                # The view name is one of our table names and the path is quoted: no injection.
                view = f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{quoted}')"  # noqa: S608
                connection.execute(view)
        return connection


def open_dataset(path: str | Path = "normalized") -> Dataset:
    """Open the dataset in PATH; a missing or foreign folder raises a UsageError or StoreError."""
    return Dataset(path)


__all__ = ["Dataset", "open_dataset"]
