"""Datasets of an older layout: read as they are, written as this version keeps them.

What the upgrade computes (the state from the sightings, the rules folded by number, the
`current` flags) is the work of folding and diffing, which come after storage: ingest.py's
upgrade() asks them, between read_outdated() and write_upgraded() here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.schema import IN_FORCE, LOGGED, PARTITION_KEY, RULES_BY_NUMBER, TABLES
from pipeline.storage import commit, layout, segments, store
from pipeline.storage.carry import Content
from pipeline.storage.kinds import Storage, stored_as

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class Outdated:
    """A dataset of an older layout, read as its upgrade needs it."""

    parts: dict[tuple[str, int], pa.Table]  # single-file sightings and changes, cut by run
    state: pa.Table | None  # as stored; None when none was kept (version 3 and before)
    sightings: pa.Table  # then every sighting, to build it from; else an empty table
    files: pa.Table
    rulings: pa.Table  # without their `current` flags, to be weighed again
    rules: pa.Table | None  # the sightings of rules, when rules are to be keyed by number


def read_outdated(out: Path) -> Outdated | None:
    """The dataset in OUT as its upgrade needs it; None when it is of this layout.

    Schema version 3 and before kept sightings and changes as single files: they become
    one part per run, and the state of the last snapshots is to be built from the
    sightings. Version 4 kept rulings and state as single files: they become segments.
    Before version 7 a rule's key left out its number: the rules are to be folded again
    from their sightings, one row per text and number. Before version 8 `current` was per
    (card, source): it is to be weighed again across each card's sources, the state's
    as-of origins taken from files.parquet. Before version 9 no run logged the texts and
    names it learned: each ruling's text and each name go to the part of the run that first
    stored it (ruling_texts, names_learned).
    """
    split_tables, partitioned = layout.unsegmented(out), layout.legacy(out)
    version = layout.segments_version(out, "rulings")
    unnumbered = version is not None and version < RULES_BY_NUMBER
    unweighed = version is not None and version < IN_FORCE
    unlogged = version is not None and version < LOGGED
    if not split_tables and not partitioned and not unweighed and not unlogged:
        return None
    parts: dict[tuple[str, int], pa.Table] = {}
    sightings, state, rules = pa.table({}), None, None
    if partitioned:
        sightings = store.read_table(out, "sightings")
        changes = store.read_table(out, "changes")
        for name, table in (("sightings", sightings), ("changes", changes)):
            for run in sorted(
                {int(r) for r in pc.unique(table["run"]).to_pylist() if r is not None}
            ):
                parts[(name, run)] = table.filter(
                    pc.equal(table["run"], pa.scalar(run, pa.int64()))
                )
    else:
        state = store.read_table(out, "state")
    files = store.read_table(out, "files")
    rulings = store.read_table(out, "rulings").drop_columns(["current", "source_current"])
    if unlogged or split_tables or partitioned:
        names = store.read_table(out, "names").rename_columns({"first_run": PARTITION_KEY})
        parts.update(logged("ruling_texts", rulings.rename_columns({"first_run": PARTITION_KEY})))
        parts.update(logged("names_learned", names))
    if unnumbered or split_tables:  # rules keyed by their text alone until version 7
        numbered = Content(("rule_id",), lambda table: pc.is_valid(table["rule_id"]))
        rules = store.read_table(out, "sightings", content=numbered)
    return Outdated(parts, state, sightings, files, rulings, rules)


def logged(name: str, table: pa.Table) -> dict[tuple[str, int], pa.Table]:
    """The rows of TABLE as the parts of table NAME, one per run of its `run` column."""
    table = table.select(TABLES[name].names)
    runs = sorted({int(r) for r in pc.unique(table[PARTITION_KEY]).to_pylist() if r is not None})
    return {
        (name, run): table.filter(pc.equal(table[PARTITION_KEY], pa.scalar(run, pa.int64())))
        for run in runs
    }


def write_upgraded(out: Path, outdated: Outdated, *, rulings: pa.Table, state: pa.Table) -> None:
    """Commit OUTDATED in this layout: RULINGS and STATE as made anew, in whole segments.

    The other tables are migrated as read.
    """
    tables = {name: store.read_table(out, name) for name in stored_as(Storage.FILE)}
    whole = segments.plan(segments.Layout(), pa.array([], pa.string()))
    rewritten = segments.split({"rulings": rulings, "state": state}, whole)
    commit.commit(out, tables, outdated.parts, rewritten)
