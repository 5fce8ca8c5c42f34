"""Snapshots over the stored sightings: each run's changes, current rulings, a card's history."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.diff import Change, ChangeType, Version, compare, group_id
from pipeline.merge import lookup, strings
from pipeline.schema import CHANGES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

_NULL = "\x00"  # stands for a null card or date in composite keys, so nulls compare equal
_SEP = "\x1f"
# Rows of changes.parquet: by card (unknown last), source, change type, rule, date, text.
# Typed Any: the stubs do not know pyarrow's per-key null placement.
_FIRST_KEYS = ["card", "source", "text_hash", "effective_date", "rule_id"]
_CHANGES_ORDER: Any = [
    ("card", "ascending", "at_end"),
    ("source", "ascending", "at_end"),
    ("_rank", "ascending", "at_end"),
    ("_rule", "ascending", "at_start"),
    ("_date", "ascending", "at_start"),
    ("_hash", "ascending", "at_end"),
]


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


def run_changes(before: pa.Table, new: pa.Table, run: int) -> pa.Table:
    """Compare each (card, source) a run read with the last snapshot of it before the run.

    BEFORE holds the sightings of earlier runs, NEW those of the run; the result is the
    run's rows of changes.parquet. A (card, source) the run did not read is not compared:
    a card absent from a run is not removed. A (card, source) never read before is all
    first sightings, built column-wise without comparing anything.
    """
    keys = snapshot_key(new)
    earlier = before.filter(pc.is_in(snapshot_key(before), value_set=pc.unique(keys)))
    earlier = earlier.append_column("_snap", snapshot_key(earlier))
    known = pc.is_in(keys, value_set=pc.unique(earlier["_snap"]))
    latest = earlier.group_by("_snap").aggregate([("run", "max")])
    last_run = dict(zip(latest["_snap"].to_pylist(), latest["run_max"].to_pylist(), strict=True))
    old = _versions(earlier, lambda snap, run: run == last_run[snap])
    fresh = _versions(new.append_column("_snap", keys).filter(known), lambda _snap, _run: True)
    changes: list[Change] = []
    for snap, (card, source, versions) in sorted(fresh.items()):
        changes += compare(old[snap][2], versions, card=card, source=source)
    compared = changes_table(changes, run)
    first = _first_sightings(new.select(_FIRST_KEYS).filter(pc.invert(known)), run)
    table = pa.concat_tables([compared, first])
    rank = lookup(table["change"], {t.value: f"{n}" for n, t in enumerate(ChangeType)})
    order = pc.sort_indices(
        table.append_column("_rank", rank)
        .append_column("_rule", pc.coalesce(table["new_rule_id"], table["old_rule_id"]))
        .append_column("_date", pc.coalesce(table["new_date"], table["old_date"]))
        .append_column("_hash", pc.coalesce(table["new_text_hash"], table["old_text_hash"])),
        sort_keys=_CHANGES_ORDER,
    )
    return table.take(order)


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


def _first_sightings(new: pa.Table, run: int) -> pa.Table:
    """Changes rows for (card, source) snapshots read for the first time: all added.

    Their texts are not repeated here (a first ingest would store every text twice):
    `new_text` is null and the text is the ruling's, by `new_text_hash`.
    """
    distinct = new.group_by(_FIRST_KEYS, use_threads=False).aggregate([])
    # An addition's group depends on its text and rule number only: one id per distinct pair.
    pairs = _joined(distinct, ["text_hash", "rule_id"])
    ids = {}
    for pair in strings(pc.unique(pairs)):
        text_hash, rule_id = pair.split(_SEP)
        side = (text_hash, None, None if rule_id == _NULL else rule_id)
        ids[pair] = group_id(ChangeType.ADDED, None, side)
    groups = lookup(pairs, ids)
    count = distinct.num_rows
    nothing = pa.nulls(count, pa.string())
    columns: dict[str, Any] = {
        "run": pa.array([run] * count, pa.int64()),
        "card": distinct["card"],
        "source": distinct["source"],
        "change": pa.array([ChangeType.ADDED.value] * count, pa.string()),
        "old_text_hash": nothing,
        "new_text_hash": distinct["text_hash"],
        "old_date": pa.nulls(count, pa.date32()),
        "new_date": distinct["effective_date"],
        "old_rule_id": nothing,
        "new_rule_id": distinct["rule_id"],
        "similarity": pa.nulls(count, pa.float64()),
        "rule_change": pa.array([False] * count),
        "silent": pa.array([False] * count),
        "first_seen": pa.array([True] * count),
        "group": groups,
        "old_text": nothing,
        "new_text": nothing,
    }
    return pa.table(columns).cast(CHANGES)


def with_current(rulings: pa.Table, sightings: pa.Table) -> pa.Table:
    """Add `current`: the ruling is in the latest snapshot of a (card, source) that read it."""
    slim = sightings.select(["run", "card", "source", "text_hash", "effective_date"])
    snaps = snapshot_key(slim)
    latest = slim.append_column("_snap", snaps).group_by("_snap").aggregate([("run", "max")])
    wanted = pc.take(latest["run_max"], pc.index_in(snaps, value_set=latest["_snap"]))
    in_latest = slim.filter(pc.equal(slim["run"], wanted))
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
