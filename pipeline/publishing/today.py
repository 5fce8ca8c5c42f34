"""A card's rulings today, for every reader: in force, or only a staler source's.

`rulings.current` is in force today, weighed across each card's sources when a run
commits (pipeline/diffing/in_force.py); `source_current` is each (card, source)'s own
latest word. The API's `rulings(today=True)` and its DuckDB view `rulings_today` hold every
ruling some source still carries, with `stale_source` true where only a staler source
does: what a site shows as "may be out of date".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Mask, false_if_null, replace_column
from pipeline.diffing.history import origins_from_files
from pipeline.diffing.in_force import in_force
from pipeline.schema import IN_FORCE
from pipeline.storage import layout

if TYPE_CHECKING:
    from collections.abc import Callable

    from pipeline.storage.store import Version


def weighed_rulings(version: Version, card: str | None = None) -> pa.Table:
    """VERSION's rulings, `current` weighed across sources even if a version before 8 wrote them.

    A run upgrades such a dataset before it reads anything; until then its readers weigh
    the sources as they read, so every reader tells the same "today". CARD: that card's
    rulings alone (a card's sources are weighed among themselves, so the same flags).
    """
    mine = None if card is None else _of_card(card)
    rulings = version.table("rulings", where=mine)
    kept_as = layout.segments_version(version.out, "rulings", base=version.base)
    if kept_as is None or kept_as >= IN_FORCE:
        return rulings
    state = origins_from_files(version.table("state", where=mine), version.table("files"))
    current, source_current = in_force(rulings, state)
    rulings = replace_column(rulings, "source_current", source_current)
    return replace_column(rulings, "current", current)


def _of_card(card: str) -> Callable[[pa.Table], Mask]:
    """A read filter keeping the rows of CARD."""
    return lambda table: false_if_null(pc.equal(table["card"], pa.scalar(card)))


def rulings_today(rulings: pa.Table) -> pa.Table:
    """The rulings some source still carries, with `stale_source`: no freshest source does."""
    carried = rulings.filter(pc.field("source_current"))
    column = pa.field("stale_source", pa.bool_(), nullable=False)
    return carried.append_column(column, pc.invert(carried["current"]))


__all__ = ["rulings_today", "weighed_rulings"]
