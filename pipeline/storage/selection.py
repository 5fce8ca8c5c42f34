"""A selection of the sightings parts' rows: the cut of each part, through the index or not.

A card's sightings are a few rows of each of many parts. Each run's part is *cut* to the
rows written in full that a content filter keeps and its carried rows (carry.kept_in_full
says which): from the version's index (index.cuts) for the runs it answers, else from the
part itself (_Cut), two parts at a time. The rows cut are expanded at once (carry.py).
Bases also reads the base parts that carried rows name, for iter_parts and the writer.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import StoreError
from pipeline.schema import CARRY_COLUMNS, FILE_COLUMNS, PARTITION_KEY, in_memory
from pipeline.storage import index, layout
from pipeline.storage.carry import Content, expanded, kept_in_full

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from pipeline.columns import Mask


def selected(
    out: Path, folder: Path, runs: list[int], content: Callable[[pa.Table], Mask]
) -> pa.Table:
    """The sightings of RUNS that CONTENT keeps, expanded in one pass (texts left out).

    FOLDER is the version whose index is asked. Each part is cut to its carried rows and
    the rows written in full that CONTENT keeps, which are also the base rows the carried
    ones may name; then all are expanded at once.
    """
    cut = _Cut(out, content)
    wholes: list[pa.Table] = [layout.stored_schema("sightings").empty_table()]
    kept: list[pa.Table] = [wholes[0]]
    complete = set(runs)  # the runs whose rows written in full and kept are all in `wholes`
    found = _indexed(out, folder, runs, content)
    if found is not None:
        whole, rows, answered, also = found
        wholes.append(whole)
        kept.append(rows)
        runs = [run for run in runs if run not in answered]
        complete |= also
    # Two parts at a time: Parquet decoding lets go of the interpreter.
    with ThreadPoolExecutor(max_workers=2) as pool:
        for whole, rows in pool.map(cut, runs):
            wholes.append(whole)
            kept.append(rows)
    rows = pa.concat_tables(kept)
    rows = rows.take(pc.sort_indices(rows[PARTITION_KEY]))  # stable: each run's rows in order
    chosen = pa.concat_tables(wholes)
    bases = {}
    for run in {int(r) for r in pc.unique(rows["base_run"].drop_null()).to_pylist() if r}:
        held = chosen.filter(pc.equal(chosen[PARTITION_KEY], pa.scalar(run, pa.int64())))
        bases[run] = held if run in complete else cut(run)[0]  # a base before the runs chosen
    return expanded(rows, bases, content).cast(in_memory("sightings"))


def _indexed(
    out: Path, folder: Path, runs: list[int], content: Callable[[pa.Table], Mask]
) -> tuple[pa.Table, pa.Table, set[int], set[int]] | None:
    """What the sightings index (index.py) of the version FOLDER tells of RUNS, or None.

    The rows written in full that CONTENT keeps and the rows kept or carried, as _Cut cuts
    them, of the runs answered; and the runs of whose rows written in full all kept are in
    the first table (the runs answered and the bases their rows name that the index holds).
    """
    if not isinstance(content, Content) or not set(content.columns) <= index.INDEXED:
        return None
    found = index.load(folder, out)
    if found is None:
        return None
    answered = [run for run in runs if run in found.runs]
    if not answered:
        return None
    whole, rows = index.cuts(found, out, answered, content)
    named = {int(r) for r in pc.unique(rows["base_run"].drop_null()).to_pylist() if r}
    return whole, rows, set(answered), set(answered) | (named & found.runs)


class _Cut:
    """A part's rows that a content filter keeps and its carried rows, as stored.

    A carry.Content names the columns it looks at: the part is first read in those and the
    carried rows' own, and read whole only if some row written in full is kept.
    """

    def __init__(self, out: Path, content: Callable[[pa.Table], Mask]) -> None:
        self.out, self.content, self.reader = out, content, Bases(out)
        self.light: set[str] | None = None
        if isinstance(content, Content):
            self.light = {*FILE_COLUMNS, "position", *CARRY_COLUMNS, *content.columns}

    def __call__(self, run: int) -> tuple[pa.Table, pa.Table]:
        """Run RUN's rows kept and written in full, and those kept or carried."""
        path = layout.part_path(self.out, "sightings", run)
        if not path.exists():
            empty = layout.stored_schema("sightings").empty_table()
            return empty, empty
        stored = layout.read_part(path, run, self.light)
        whole, carried = kept_in_full(stored, self.content)
        if self.light is not None:
            stored = self.reader.read(run) if pc.any(whole).as_py() else _with_columns(stored)
        return stored.filter(whole), stored.filter(pc.or_(whole, carried))


def _with_columns(stored: pa.Table) -> pa.Table:
    """STORED, some columns of a part as stored, with the others null (the part's schema)."""
    schema = layout.stored_schema("sightings")
    return pa.table(
        [
            stored[f.name] if f.name in stored.column_names else pa.nulls(stored.num_rows, f.type)
            for f in schema
        ],
        schema=schema,
    )


class Bases:
    """The parts of the runs a sightings part carries rows from, as stored: kept while used."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.held: dict[int, pa.Table] = {}

    def of(self, stored: pa.Table) -> dict[int, pa.Table]:
        """The base parts of STORED, a part as stored; those no longer used are let go."""
        runs = {int(r) for r in pc.unique(stored["base_run"].drop_null()).to_pylist() if r}
        self.held = {
            run: self.held[run] if run in self.held else self.read(run) for run in sorted(runs)
        }
        return self.held

    def read(self, run: int) -> pa.Table:
        """Run RUN's sightings part as stored."""
        path = layout.part_path(self.out, "sightings", run)
        if not path.exists():
            msg = f"{path}: missing, though later runs carry its rows; restore it from a backup"
            raise StoreError(msg)
        return layout.read_part(path, run)


def base_rows(out: Path, latest: Mapping[str, int]) -> pa.Table:
    """The rows written in full that a new part may carry, of each file of LATEST.

    LATEST maps a file's path to the last run that stored its sightings. A file's base is
    that run, or the one run its rows there are carried from (carry.py), whose rows of the
    file are all written in full.
    """
    reader = Bases(out)
    by_run: dict[int, list[str]] = {}
    for path, run in sorted(latest.items()):
        by_run.setdefault(run, []).append(path)
    bases: dict[int, list[str]] = {}
    for run, paths in sorted(by_run.items()):
        if not layout.part_path(out, "sightings", run).exists():
            continue
        last = _of_files(reader.read(run), paths)
        carried = last.filter(pc.is_valid(last["base_run"])).select(["source_path", "base_run"])
        carried_from = {str(r["source_path"]): int(r["base_run"]) for r in carried.to_pylist()}
        for path in paths:
            bases.setdefault(carried_from.get(path, run), []).append(path)
    found = [layout.stored_schema("sightings").empty_table()]
    for run, paths in sorted(bases.items()):
        rows = _of_files(reader.read(run), paths)
        found.append(rows.filter(pc.is_null(rows["carried"])))
    return pa.concat_tables(found)


def _of_files(table: pa.Table, paths: list[str]) -> pa.Table:
    """The rows of TABLE whose `source_path` is one of PATHS."""
    return table.filter(pc.is_in(table["source_path"], value_set=pa.array(paths, pa.string())))
