"""The segments of `rulings` and `state` that hold a run's cards, loaded (segments.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from pipeline.folding.names import aliases, renamed
from pipeline.schema import in_memory
from pipeline.storage import layout, segments
from pipeline.storage.kinds import Storage, stored_as
from pipeline.storage.segments import groups

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class Loaded:
    """The segments of `rulings` and `state` holding the cards a run read (segments.py)."""

    base: Path  # the version they were read from
    plan: segments.Plan
    rulings: pa.Table
    state: pa.Table
    english: Mapping[str, str]  # translated names to English ones (folding.names)
    renames: bool = False  # the loaded segments held cards stored under translated names

    def other_rulings(self, names: Sequence[str]) -> list[pa.Table]:
        """The rulings of the segments not loaded, in the columns NAMES, a table a segment.

        Each segment is read whole, kept only in those columns, and let go.
        """
        others = [
            seg for seg in layout.segment_ids(self.base, "rulings") if seg not in self.plan.load
        ]
        return [
            layout.read_segments(self.base, "rulings", [seg])[seg].select(names) for seg in others
        ]


def load(out: Path, sightings: pa.Table, english: Mapping[str, str]) -> Loaded:
    """Load the segments that hold the cards of SIGHTINGS, a run's rows once named.

    Cards stored under a translated name ENGLISH knows are loaded too, with their
    English names', and re-keyed: each card lives in one segment.
    """
    base = layout.pinned(out)
    placed = segments.Layout.of(layout.read_layout(base))
    stored = {str(c) for held in placed.members.values() for c in held.to_pylist()}
    moved = aliases(stored, english)
    wanted = pa.concat_arrays(
        [
            groups(sightings).combine_chunks(),
            pa.array(sorted({*moved, *moved.values()}), pa.string()),
        ]
    )
    chosen = segments.plan(placed, wanted)
    tables = {
        name: pa.concat_tables(
            [in_memory(name).empty_table(), *layout.read_segments(base, name, chosen.load).values()]
        )
        for name in stored_as(Storage.SEGMENTS)
    }
    if moved:
        tables = {name: renamed(table, english) for name, table in tables.items()}
    # Each table as read is let go once put in order (a copy of it): the rulings as read
    # were held while the state was ordered, a daily run's peak of the load (every segment).
    rulings = layout.ordered(tables.pop("rulings"), "rulings")
    state = layout.ordered(tables.pop("state"), "state")
    return Loaded(base, chosen, rulings, state, english, renames=bool(moved))
