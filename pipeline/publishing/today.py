"""Today's rulings of a card across its sources: its freshest source's, the rest marked.

`rulings.current` is per (card, source): a card read from a 2021 MTGJSON file and a 2024
dump has both wordings current. An analyst counting a card's rulings today wants the
freshest source's (by as-of date), with the texts only a staler source still carries
marked as such. The API's `rulings(today=True)` and its DuckDB view `rulings_today` both
read it from here.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import listed
from pipeline.schema import RULING_KEY

_KEY = RULING_KEY
_CARD = RULING_KEY.index("card")
_OLDEST = dt.date.min  # a source without an as-of date counts as the stalest


def _rows(table: pa.Table, names: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """TABLE's columns NAMES as tuples (dictionary-encoded strings decoded, nulls None)."""
    return list(zip(*(listed(table[name]) for name in names), strict=True))


def source_dates(state: pa.Table) -> dict[tuple[Any, str], dt.date | None]:
    """The as-of date of the latest version of each (card, source) STATE holds (None: undated)."""
    found: dict[tuple[Any, str], dt.date | None] = {}
    for card, source, day in _rows(state, ("card", "source", "as_of")):
        known = found.get((card, source))
        found[card, source] = day if known is None else max(known, day or known)
    return found


def stale_keys(state: pa.Table) -> set[tuple[Any, ...]]:
    """The current ruling keys that only a staler source of their card still carries.

    A card's freshest sources are those whose latest as-of date is the card's latest; a key
    carried by any of them is fresh, whatever the staler sources also say.
    """
    as_of = {snap: day or _OLDEST for snap, day in source_dates(state).items()}
    rows = _rows(state, (*_KEY, "source", "as_of"))
    latest: dict[Any, dt.date] = defaultdict(lambda: _OLDEST)
    for (card, _source), day in as_of.items():
        latest[card] = max(latest[card], day)
    fresh: set[tuple[Any, ...]] = set()
    seen: set[tuple[Any, ...]] = set()
    for *key, source, _day in rows:
        seen.add(tuple(key))
        if as_of[key[_CARD], source] == latest[key[_CARD]]:
            fresh.add(tuple(key))
    return seen - fresh


def rulings_today(rulings: pa.Table, state: pa.Table) -> pa.Table:
    """The current rulings with `stale_source`: true when only a staler source carries one."""
    current = rulings.filter(pc.field("current"))
    stale = stale_keys(state)
    marks = [key in stale for key in _rows(current, _KEY)]
    column = pa.field("stale_source", pa.bool_(), nullable=False)
    return current.append_column(column, pa.array(marks, pa.bool_()))


__all__ = ["rulings_today", "source_dates", "stale_keys"]
