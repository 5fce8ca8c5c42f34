"""Snapshots over the stored sightings: each run's changes, current rulings, a card's history."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.diff import Change, ChangeType, Version, compare
from pipeline.schema import CHANGES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

_NULL = "\x00"  # stands for a null card or date in composite keys, so nulls compare equal
_SEP = "\x1f"
_ORDER = {t: n for n, t in enumerate(ChangeType)}


def _joined(table: pa.Table, names: list[str]) -> Any:  # noqa: ANN401 - the stubs lag pyarrow
    parts: list[Any] = [pc.cast(table[name], pa.string()) for name in names]
    return pc.binary_join_element_wise(
        *parts, _SEP, null_handling="replace", null_replacement=_NULL
    )


def snapshot_key(table: pa.Table) -> Any:  # noqa: ANN401
    """One string per row naming its (card, source) snapshot."""
    return _joined(table, ["card", "source"])


def ruling_key(table: pa.Table) -> Any:  # noqa: ANN401
    """One string per row naming its ruling key (text_hash, card, effective_date)."""
    return _joined(table, ["text_hash", "card", "effective_date"])


def run_changes(before: pa.Table, new: pa.Table) -> list[Change]:
    """Compare each (card, source) a run read with the last snapshot of it before the run.

    BEFORE holds the sightings of earlier runs, NEW those of the run. A (card, source) the
    run did not read is not compared: a card absent from a run is not removed.
    """
    keys = snapshot_key(new)
    read = pc.unique(keys)
    earlier = before.filter(pc.is_in(snapshot_key(before), value_set=read))
    earlier = earlier.append_column("_snap", snapshot_key(earlier))
    latest = earlier.group_by("_snap").aggregate([("run", "max")])
    last_run = dict(zip(latest["_snap"].to_pylist(), latest["run_max"].to_pylist(), strict=True))
    old = _versions(earlier, lambda snap, run: run == last_run[snap])
    fresh = _versions(new.append_column("_snap", keys), lambda _snap, _run: True)
    changes: list[Change] = []
    for snap, (card, source, versions) in sorted(fresh.items()):
        previous = old.get(snap)
        changes += compare(previous[2] if previous else None, versions, card=card, source=source)
    return sorted(changes, key=_change_order)


def _versions(
    table: pa.Table, keep: Callable[[str, int], bool]
) -> dict[str, tuple[str | None, str, list[Version]]]:
    out: dict[str, tuple[str | None, str, list[Version]]] = {}
    columns = ["_snap", "run", "card", "source", "text_hash", "effective_date", "text", "rule_id"]
    for row in table.select(columns).to_pylist():
        if not keep(row["_snap"], row["run"]):
            continue
        entry = out.setdefault(row["_snap"], (row["card"], row["source"], []))
        version = Version(row["text_hash"], row["effective_date"], row["text"], row["rule_id"])
        entry[2].append(version)
    return out


def _change_order(c: Change) -> tuple[object, ...]:
    version = c.old or c.new
    assert version is not None
    return (c.card is None, c.card or "", c.source, _ORDER[c.change], version.sort_key())


def changes_table(changes: Iterable[Change], run: int) -> pa.Table:
    """Arrow rows of changes.parquet for RUN."""
    rows = [
        {
            "run": run,
            "card": c.card,
            "source": c.source,
            "change": c.change.value,
            "old_text_hash": c.old.text_hash if c.old else None,
            "new_text_hash": c.new.text_hash if c.new else None,
            "old_date": c.old.effective_date if c.old else None,
            "new_date": c.new.effective_date if c.new else None,
            "old_rule_id": c.old.rule_id if c.old else None,
            "new_rule_id": c.new.rule_id if c.new else None,
            "similarity": c.similarity,
            "rule_change": c.rule_change,
            "silent": c.silent,
            "first_seen": c.first_seen,
            "group": c.group,
            "old_text": c.old.text if c.old else None,
            "new_text": c.new.text if c.new else None,
        }
        for c in changes
    ]
    return pa.Table.from_pylist(rows, schema=CHANGES)


def with_current(rulings: pa.Table, sightings: pa.Table) -> pa.Table:
    """Add `current`: the ruling is in the latest snapshot of a (card, source) that read it."""
    snaps = snapshot_key(sightings)
    latest = sightings.append_column("_snap", snaps).group_by("_snap").aggregate([("run", "max")])
    last = dict(zip(latest["_snap"].to_pylist(), latest["run_max"].to_pylist(), strict=True))
    wanted = pa.array([last[s] for s in snaps.to_pylist()], pa.int64())
    in_latest = sightings.filter(pc.equal(sightings["run"], wanted))
    flags = pc.is_in(ruling_key(rulings), value_set=pc.unique(ruling_key(in_latest)))
    return rulings.append_column("current", flags)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One version of one ruling of a card, in one source, with when it came and went."""

    source: str
    text_hash: str
    effective_date: dt.date | None
    text: str
    appeared: int
    disappeared: int | None  # the first run of its source that no longer had it


def card_history(sightings: pa.Table, card: str) -> list[HistoryEntry]:
    """Every version of every ruling of CARD, oldest first."""
    rows = sightings.filter(pc.field("card") == card).to_pylist()
    runs_of: dict[str, set[int]] = defaultdict(set)
    seen: dict[tuple[str, str, dt.date | None], list[int]] = defaultdict(list)
    texts: dict[tuple[str, str, dt.date | None], str] = {}
    for row in rows:
        runs_of[row["source"]].add(row["run"])
        key = (row["source"], row["text_hash"], row["effective_date"])
        seen[key].append(row["run"])
        texts.setdefault(key, row["text"])
    entries = []
    for (source, text_hash, date), runs in seen.items():
        later = [r for r in sorted(runs_of[source]) if r > max(runs)]
        entries.append(
            HistoryEntry(source, text_hash, date, texts[(source, text_hash, date)], min(runs),
                         later[0] if later else None)
        )  # fmt: skip
    return sorted(
        entries, key=lambda e: (e.appeared, e.source, e.effective_date or dt.date.min, e.text_hash)
    )
