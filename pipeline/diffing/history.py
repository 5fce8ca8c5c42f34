"""Snapshots over the stored sightings: each run's changes, current rulings, a card's history."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import (
    Column,
    Dictionary,
    Mask,
    chunked,
    false_if_null,
    filled,
    kept,
    listed,
    lookup,
    nulls,
    replace_column,
    used_only,
    whole,
)
from pipeline.diffing.diff import (
    Change,
    ChangeType,
    Version,
    addition_group_ids,
    compare,
)
from pipeline.diffing.in_force import SNAPSHOT_KEYS, in_force, snapshot_keys
from pipeline.keys import Groups, codes, first_rows
from pipeline.schema import CHANGES, ROW_ORDER, in_memory, kinds_of
from pipeline.text.words import counted

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

_NULL = "\x00"  # sorts a null card first, as snapshots are compared in that order
_FIRST_KEYS = ["card", "source", "text_hash", "effective_date", "rule_id"]
SNAPSHOT = ["card", "source"]
_VERSION_COLUMNS = ["run", "card", "source", "text_hash", "effective_date", "text", "rule_id"]
_UNPACKED = ["_snap", "card", "source", "text_hash", "effective_date", "text", "rule_id"]
_IDENTITY = ["_snap", "text_hash", "effective_date", "rule_id"]  # a version, as diff.Version
# Rows of changes.parquet: by card (unknown last), source, change type, rule, date, text;
# unnumbered and undated changes come first.
_CHANGES_ORDER = ["card", "source", "_rank", "_rule", "_date", "_hash"]
_NULLS_FIRST = frozenset({"_rule", "_date"})
_HELD = in_memory("changes")
_STATE_ORDER, _STATE_NULLS_FIRST = ROW_ORDER["state"]


def run_changes(before: pa.Table, new: pa.Table, run: int) -> pa.Table:
    """Compare each (card, source) a run read with the last snapshot of it before the run.

    BEFORE holds the last snapshot of each (card, source) (the state; every earlier sighting
    does as well: the latest run of each snapshot is taken), NEW those of the run; the result is the
    run's rows of changes.parquet. A (card, source) the run did not read is not compared:
    a card absent from a run is not removed. A (card, source) never read before is all
    first sightings, built column-wise without comparing anything.
    """
    before_snaps, new_snaps = snapshot_codes([before, new])
    wanted = pc.is_in(before_snaps, value_set=pc.unique(new_snaps))
    earlier = kept(before.select(_VERSION_COLUMNS), wanted)
    earlier = earlier.append_column("_snap", kept(before_snaps, wanted))
    known = pc.is_in(new_snaps, value_set=pc.unique(earlier["_snap"]))
    last = kept(earlier, pc.equal(earlier["run"], _latest_runs(earlier)))
    fresh = kept(new.select(_VERSION_COLUMNS).append_column("_snap", new_snaps), known)
    differ = _differing(last, fresh)
    old = _versions(kept(last, pc.is_in(last["_snap"], value_set=differ)))
    read = _versions(kept(fresh, pc.is_in(fresh["_snap"], value_set=differ)))
    changes: list[Change] = []
    for snap, (card, source, versions) in sorted(read.items(), key=_by_card_and_source):
        changes += compare(old[snap][2], versions, card=card, source=source)
    additions = first_rows(new, _FIRST_KEYS, where=pc.invert(known))
    return _described(_in_order(changes_table(changes, run), new, additions, run), [new, before])


def snapshot_codes(tables: list[pa.Table]) -> list[pa.ChunkedArray[Any]]:
    """Integer codes of each row's snapshot, comparable across TABLES.

    A snapshot is a (card, source). A row with no card but an oracle id (Scryfall rulings
    read without a catalog) belongs to that oracle id's card: a bulk file is one snapshot
    per card, not one of every ruling, and a file of other cards removes nothing.
    """
    keyed = [snapshot_keys(table).append_column("source", table["source"]) for table in tables]
    return codes(keyed, [*SNAPSHOT_KEYS, "source"])


_BATCH_ROWS = 8192  # rows turned into Python objects at a time


def run_history(state: pa.Table, new: pa.Table, run: int) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The run's changes, the state after it, and the sightings it read too late to compare.

    A (card, source) may come in several versions in one run (files of other as-of dates,
    such as the releases of an archive): they are compared in as-of order, each with the
    one before, as if each had been read in a run of its own, and only the latest goes into
    the state. A version older than the one the state holds is history: its sightings are
    kept, but it is neither compared nor current. Changes carry the as-of date of the
    version that showed them.
    """
    state_snaps, new_snaps = snapshot_codes([state, new])
    day = _days(new["as_of"])
    known, stored_day = _per_snapshot(state_snaps, _days(state["as_of"]), "max")
    seen_day = pc.take(stored_day, pc.index_in(new_snaps, value_set=known))
    late = false_if_null(pc.less(day, seen_day))
    on_time = pc.invert(late)
    current, snaps, day = kept(new, on_time), kept(new_snaps, on_time), kept(day, on_time)
    snap_ids, first_day = _per_snapshot(snaps, day, "min")
    _, last_day = _per_snapshot(snaps, day, "max")
    several = pc.is_in(snaps, value_set=snap_ids.filter(pc.not_equal(first_day, last_day)))
    single = kept(current, pc.invert(several))
    parts = [_with_as_of(run_changes(state, single, run), single)] if single.num_rows else []
    latest = [as_state(single, state.schema)]
    if pc.any(several).as_py():
        versions, version_days = current.filter(several), day.filter(several)
        before = state.filter(pc.is_in(state_snaps, value_set=pc.unique(snaps.filter(several))))
        for version_day in pc.unique(version_days).sort().to_pylist():
            level = versions.filter(pc.equal(version_days, pa.scalar(version_day, pa.date32())))
            parts.append(_with_as_of(run_changes(before, level, run), level))
            before = next_state(before, level)
        latest.append(before)  # each version's latest snapshot
    changes = pa.concat_tables([_HELD.empty_table(), *parts])
    if len(parts) > 1:  # one part is in order already, and its copy would double the peak
        [order] = codes([changes], ["card", "source", "as_of"])
        changes = changes.take(pc.sort_indices(order))  # a stable sort: each part's order stays
    del parts
    return changes, next_state(state, pa.concat_tables(latest)), new.filter(late)


def _described(changes: pa.Table, known: list[pa.Table]) -> pa.Table:
    """CHANGES with their kind, from their rule numbers, and their card's oracle id.

    The oracle id is the first KNOWN gives the card (the run's sightings, then the earlier
    ones): a change of no card has none.
    """
    rule_ids = pc.coalesce(changes["new_rule_id"], changes["old_rule_id"])
    field = _HELD.field("kind")
    changes = changes.set_column(
        _HELD.get_field_index("kind"), field, kinds_of(rule_ids).cast(field.type)
    )
    if not changes.num_rows:
        return changes
    named = [t.select(["card", "oracle_id"]) for t in known]
    named = [kept(t, pc.and_(pc.is_valid(t["card"]), pc.is_valid(t["oracle_id"]))) for t in named]
    oracle: dict[str, str] = {}
    for table in named:
        firsts = table.take(first_rows(table, ["card"]))
        for card, found in zip(listed(firsts["card"]), listed(firsts["oracle_id"]), strict=True):
            oracle.setdefault(card, found)
    ids = lookup(changes["card"].cast(pa.string()), oracle) if oracle else None
    if ids is None:
        return changes
    return replace_column(changes, "oracle_id", ids.cast(_HELD.field("oracle_id").type))


_NO_DATE = dt.date.min  # an undated version (read before as-of dates were kept) comes first


def _days(column: Column) -> Column:  # date32 in and out
    return filled(column, pa.scalar(_NO_DATE, pa.date32()))


def _per_snapshot(snaps: Column, days: Column, how: Literal["min", "max"]) -> tuple[Column, Column]:
    """Each snapshot code once, with the min or max (HOW) of DAYS over its rows."""
    groups = Groups.of(snaps)
    reduced = groups.reduce(days, np.minimum if how == "min" else np.maximum)
    return snaps.take(pa.array(groups.firsts)), pa.array(reduced, pa.int32()).cast(pa.date32())


def _with_as_of(changes: pa.Table, read: pa.Table) -> pa.Table:
    """CHANGES with the as-of date of the version of their (card, source) in READ."""
    firsts = read.select([*SNAPSHOT, "as_of"]).take(first_rows(read, SNAPSHOT))
    change_snaps, read_snaps = codes([changes, firsts], SNAPSHOT)
    dates = pc.take(firsts["as_of"], pc.index_in(change_snaps, value_set=read_snaps))
    return replace_column(changes, "as_of", dates)


Snapshot = tuple[str | None, str, list[Version]]


def _by_card_and_source(item: tuple[int, Snapshot]) -> tuple[str, str]:
    card, source, _ = item[1]
    return (_NULL if card is None else card, source)


def _latest_runs(rows: pa.Table) -> pa.Array[Any]:  # int64
    """For each row of ROWS, the latest run of its snapshot (`_snap`) among ROWS."""
    groups = Groups.of(rows["_snap"])
    latest = groups.reduce(rows["run"], np.maximum)
    sizes = np.diff(np.append(groups.starts, rows.num_rows))
    per_row = np.empty(rows.num_rows, dtype=np.int64)
    per_row[groups.order] = np.repeat(latest, sizes)
    return pa.array(per_row)


def _differing(before: pa.Table, after: pa.Table) -> Column:  # int64
    """The snapshots (`_snap`) whose sets of versions differ between BEFORE and AFTER.

    Versions compare as diff.Version does, by text hash, date and rule number. compare()
    finds nothing in a snapshot read again as it was, so its rulings need not become
    Python objects: a daily run re-reads nearly all of them unchanged.
    """
    ours, theirs = codes([before, after], _IDENTITY)
    only_ours = pc.invert(pc.is_in(ours, value_set=pc.unique(theirs)))
    only_theirs = pc.invert(pc.is_in(theirs, value_set=pc.unique(ours)))
    snaps = [before["_snap"].filter(only_ours), after["_snap"].filter(only_theirs)]
    return pc.unique(pa.chunked_array([c for s in snaps for c in s.chunks], pa.int64()))


def _versions(table: pa.Table) -> dict[int, Snapshot]:
    """The versions of each snapshot (`_snap`) in TABLE.

    Read a batch at a time, column by column: a dictionary column's values become Python
    strings once, shared by every row that holds them, not once per row, and only the
    values the rows use (a filtered column keeps its whole dictionary).
    """
    table = table.unify_dictionaries()
    columns: dict[str, Any] = {}
    for name in _UNPACKED:
        column: Column = table[name]
        if pa.types.is_dictionary(column.type):
            column = used_only(whole(column))
        columns[name] = column
    shared = {
        name: column.dictionary.to_pylist()
        for name, column in columns.items()
        if pa.types.is_dictionary(column.type)
    }
    out: dict[int, Snapshot] = {}
    for batch in pa.table(columns).to_batches(max_chunksize=_BATCH_ROWS):
        values = []
        for name in _UNPACKED:
            part = batch.column(name)
            if name in shared:
                assert isinstance(part, pa.DictionaryArray)  # as the shared names' columns are
                strings = shared[name]
                values.append([None if i is None else strings[i] for i in part.indices.to_pylist()])
            else:
                values.append(part.to_pylist())
        for snap, card, source, text_hash, date, text, rule_id in zip(*values, strict=True):
            entry = out.setdefault(snap, (card, source, []))
            entry[2].append(Version(text_hash, date, text, rule_id))
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
            "match": c.match.value if c.match else None,
            "replaced_by": c.replaced_by.text_hash if c.replaced_by else None,
            "old_text": c.old.text if c.old else None,
            "new_text": c.new.text if c.new else None,
        }
        for c in changes
    ]
    return pa.Table.from_pylist(rows, schema=CHANGES)


def _in_order(compared: pa.Table, new: pa.Table, additions: Column, run: int) -> pa.Table:
    """The compared changes, and NEW's rows at ADDITIONS as added, in changelog order.

    Additions of snapshots read for the first time do not repeat their texts (a first
    ingest would store every text twice): `new_text` is null and the text is the ruling's,
    by `new_text_hash`. A first ingest makes as many of them as it reads rulings, so they
    are sorted by integer codes and each column is gathered once, straight from NEW.
    """
    count, known = len(additions), compared.num_rows
    rank = {t.value: n for n, t in enumerate(ChangeType)}
    ours: list[Column] = [
        compared["card"],
        compared["source"],
        lookup(compared["change"], rank, pa.int64()),
        pc.coalesce(compared["new_rule_id"], compared["old_rule_id"]),
        pc.coalesce(compared["new_date"], compared["old_date"]),
        pc.coalesce(compared["new_text_hash"], compared["old_text_hash"]),
    ]
    added_rank = pa.repeat(pa.scalar(rank[ChangeType.ADDED], pa.int64()), new.num_rows)
    theirs: list[Column] = [
        new["card"],
        new["source"],
        added_rank,
        new["rule_id"],
        new["effective_date"],
        new["text_hash"],
    ]
    keys = [pa.Table.from_arrays(columns, names=_CHANGES_ORDER) for columns in (ours, theirs)]
    compared_codes, new_codes = codes(keys, _CHANGES_ORDER, nulls_first=_NULLS_FIRST)
    both = pa.chunked_array([*compared_codes.chunks, *pc.take(new_codes, additions).chunks])
    order = pc.sort_indices(both).cast(pa.int64())
    # ORDER points into the compared rows, then the additions; WHERE into compared, then NEW.
    offset = pa.scalar(known, pa.int64())
    nth_added = pc.if_else(pc.greater_equal(order, offset), pc.subtract(order, offset), None)
    where = pc.coalesce(pc.add(pc.take(additions, nth_added), offset), order)

    def gathered(name: str, from_new: pa.ChunkedArray[Any]) -> Column:
        # NEW's columns may be dictionary-encoded: gathered as they are, never decoded whole.
        ours = compared[name].cast(from_new.type).chunks
        column = pc.take(pa.chunked_array([*ours, *from_new.chunks], from_new.type), where)
        return column.cast(_HELD.field(name).type)

    def constant(name: str, *, value: int | str | bool | None) -> Column:
        kind = _HELD.field(name).type
        if value is None and compared[name].null_count == known:
            return nulls(known + count, kind)  # a first ingest's: a million rows' each
        added = pa.repeat(pa.scalar(value, CHANGES.field(name).type), count).cast(kind)
        return pc.take(pa.chunked_array([*compared[name].cast(kind).chunks, added], kind), order)

    columns: dict[str, Any] = {
        "card": gathered("card", new["card"]),
        "source": gathered("source", new["source"]),
        "new_text_hash": gathered("new_text_hash", new["text_hash"]),
        "new_date": gathered("new_date", new["effective_date"]),
        "new_rule_id": gathered("new_rule_id", new["rule_id"]),
        "run": constant("run", value=run),
        "change": constant("change", value=ChangeType.ADDED.value),
        "rule_change": constant("rule_change", value=False),
        "silent": constant("silent", value=False),
        "first_seen": constant("first_seen", value=True),
    }
    groups = _addition_groups(new, additions)
    compared_groups = compared["group"].cast(groups.type).chunks
    columns["group"] = pc.take(chunked([*compared_groups, groups], groups.type), order)
    # The rest are empty for additions: old sides, similarity, texts.
    for name in CHANGES.names:
        if name not in columns:
            columns[name] = constant(name, value=None)
    return pa.Table.from_pydict(columns, schema=_HELD)


def _addition_groups(new: pa.Table, rows: Column) -> Dictionary:
    """The group of each addition at ROWS of NEW: one id per distinct (text, rule number)."""
    [pairs] = codes([new], ["text_hash", "rule_id"])
    pairs = pc.take(pairs, rows)
    firsts = pa.array(Groups.of(pairs).firsts)  # of each pair, its first place in ROWS
    sides = new.select(["text_hash", "rule_id"]).take(pc.take(rows, firsts))
    each = zip(listed(sides["text_hash"]), listed(sides["rule_id"]), strict=True)
    ids = addition_group_ids(each)
    at = pc.index_in(pairs, value_set=pc.take(pairs, firsts))
    return pa.DictionaryArray.from_arrays(whole(at), pa.array(ids, pa.string()))


def late_warnings(late: pa.Table) -> list[str]:
    """One warning per file whose version is older than the one stored of its cards."""
    firsts = late.select(["source_path", "as_of", *SNAPSHOT]).take(
        first_rows(late, ["source_path", *SNAPSHOT])
    )
    cards: dict[tuple[str, object], list[str]] = {}
    for row in firsts.to_pylist():
        cards.setdefault((row["source_path"], row["as_of"]), []).append(row["card"] or "(no card)")
    return [
        f"{path}: as of {as_of}, older than the version already stored of "
        f"{counted(len(names), 'card')} ({_first_names(names)}): kept as history, not compared, "
        "not current"
        for (path, as_of), names in cards.items()
    ]


def _first_names(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (", …" if len(names) > shown else "")


def with_current(rulings: pa.Table, state: pa.Table) -> pa.Table:
    """Add `current` (in force today, across the card's sources) and `source_current`.

    `source_current`: the ruling is in the latest snapshot of a (card, source) that read
    it, which STATE holds (see next_state); `current`: a freshest source of its card
    carries it (in_force.py).
    """
    current, source_current = in_force(rulings, state)
    return rulings.append_column("current", current).append_column("source_current", source_current)


def next_state(state: pa.Table, new: pa.Table) -> pa.Table:
    """The last snapshot of each (card, source) once NEW, a run's sightings, is added.

    A snapshot the run read replaces the one STATE held; the others stay as they were.
    Rows are ordered by card, source, path and position (nulls first), whatever came when.
    """
    state_snaps, new_snaps = snapshot_codes([state, new])
    old = kept(state, pc.invert(pc.is_in(state_snaps, value_set=pc.unique(new_snaps))))
    fresh = as_state(new, old.schema)
    # Without an empty chunk of OLD beside them, NEW's texts keep their dictionary: ordered
    # across two chunks they were copied into one of both (the run's every text again).
    return _state_order(pa.concat_tables([old, fresh]) if old.num_rows else fresh)


def state_from_sightings(sightings: pa.Table) -> pa.Table:
    """The state of a dataset whose every sighting is at hand (an upgrade from version 3)."""
    [snaps] = snapshot_codes([sightings])
    groups = Groups.of(snaps)
    latest = pa.array(groups.reduce(sightings["run"], np.maximum))
    wanted = pc.take(latest, pc.index_in(snaps, value_set=snaps.take(pa.array(groups.firsts))))
    rows = sightings.filter(pc.equal(sightings["run"], wanted))
    return _state_order(as_state(rows, in_memory("state")))


def as_state(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """Sightings (or state) ROWS as state rows in SCHEMA.

    Sightings do not hold their file's as-of origin: it comes null, and the run that read
    them fills it in (with_origins).
    """
    columns = [
        rows[name]
        if name in rows.column_names
        else pa.nulls(rows.num_rows, schema.field(name).type)
        for name in schema.names
    ]
    return pa.Table.from_arrays(columns, names=schema.names).cast(schema)


def origins_from_files(state: pa.Table, files: pa.Table) -> pa.Table:
    """STATE with the as-of origin FILES recorded for the file and run of each row.

    For a dataset of a version before 8, whose state did not keep it; a row whose file
    has no such record keeps a null origin (the weakest evidence, as a modification time).
    """
    files = files.filter(pc.is_valid(files["as_of_origin"]))
    where = ["run", "source_path"]
    ours, theirs = codes([state.select(where), files.select(where)], where)
    found = pc.take(files["as_of_origin"].cast(pa.string()), pc.index_in(ours, value_set=theirs))
    column = pc.coalesce(state["as_of_origin"].cast(pa.string()), found)
    return replace_column(state, "as_of_origin", column)


def with_origins(state: pa.Table, run: int, origins: Mapping[str, str]) -> pa.Table:
    """STATE with the as-of origin of the rows RUN read, from ORIGINS (by source path)."""
    mine = pc.equal(state["run"], pa.scalar(run, pa.int64()))
    found = lookup(state["source_path"].cast(pa.string()), origins, pa.string())
    column = pc.if_else(mine, found, state["as_of_origin"].cast(pa.string()))
    return replace_column(state, "as_of_origin", column)


def _state_order(state: pa.Table) -> pa.Table:
    [order] = codes([state], _STATE_ORDER, nulls_first=_STATE_NULLS_FIRST)
    return state.take(pc.sort_indices(order))


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One version of one ruling of a card, in one source, with when it came and went.

    A source's versions are ordered by as-of date, then run: an archive read in one run
    still shows its releases one after the other.
    """

    source: str
    text_hash: str
    effective_date: dt.date | None
    text: str
    appeared: int
    disappeared: int | None  # the run of the first later version of its source without it
    as_of: dt.date | None = None  # the as-of date of the version it first appeared in
    gone_as_of: dt.date | None = None  # the as-of date of that later version
    translates: str | None = None  # a translation's English original
    translates_fate: str | None = None  # "current", or when the original was amended or removed
    # Of a version its source still carries: whether it is in force today, across the card's
    # sources (diffing/in_force.py); None where that was not weighed.
    in_force: bool | None = None


_VersionKey = tuple[dt.date, int]
_HISTORY_COLUMNS = ["source", "text_hash", "effective_date", "as_of", "run", "text"]


def card_history(sightings: pa.Table, card: str) -> list[HistoryEntry]:
    """Every version of every ruling of CARD, oldest first."""
    # Only the columns history_of() looks at become Python objects: a year's runs are
    # thousands of a card's sightings.
    rows = sightings.filter(pc.field("card") == card).select(_HISTORY_COLUMNS)
    return history_of(rows.to_pylist())


def source_versions(rows: Iterable[dict[str, Any]]) -> dict[str, set[_VersionKey]]:
    """The versions, (as-of date, run), of each source that sightings ROWS were read in."""
    versions: dict[str, set[_VersionKey]] = defaultdict(set)
    for row in rows:
        versions[row["source"]].add((row["as_of"] or _NO_DATE, row["run"]))
    return versions


def history_of(
    rows: list[dict[str, Any]], versions: dict[str, set[_VersionKey]] | None = None
) -> list[HistoryEntry]:
    """Every version of the rulings among sightings ROWS, oldest first.

    ROWS are the sightings of one snapshot's rulings: a card's, or a rule's. VERSIONS are
    the versions of each source they were read in (default: those ROWS show): a ruling is
    gone from the first later version of its source without it. A card absent from a run
    is not gone from it, so a card's rows are their own versions; a rule is one of a
    release's, so a rule's history takes the versions of all of the release's rules
    (source_versions): a rule a release dropped is gone as of that release.
    """
    versions_of = source_versions(rows) if versions is None else versions
    seen: dict[tuple[str, str, dt.date | None], list[_VersionKey]] = defaultdict(list)
    texts: dict[tuple[str, str, dt.date | None], str] = {}
    for row in rows:
        key = (row["source"], row["text_hash"], row["effective_date"])
        seen[key].append((row["as_of"] or _NO_DATE, row["run"]))
        texts.setdefault(key, row["text"])
    entries = []
    for (source, text_hash, date), held in seen.items():
        first, last = min(held), max(held)
        later = [v for v in sorted(versions_of.get(source, ())) if v > last]
        gone = later[0] if later else None
        entries.append(
            HistoryEntry(
                source,
                text_hash,
                date,
                texts[(source, text_hash, date)],
                first[1],
                gone[1] if gone else None,
                _dated(first[0]),
                _dated(gone[0]) if gone else None,
            )
        )
    return sorted(entries, key=_entry_order)


def _entry_order(e: HistoryEntry) -> tuple[object, ...]:
    return (e.as_of or _NO_DATE, e.appeared, e.source, e.effective_date or _NO_DATE, e.text_hash)


def _dated(day: dt.date) -> dt.date | None:
    return None if day == _NO_DATE else day


def is_rule_change(changes: pa.Table) -> Mask:
    """Which CHANGES are changes of numbered rules (not first sightings of a release)."""
    rule_ids = pc.coalesce(changes["new_rule_id"], changes["old_rule_id"])
    first_seen: Mask = changes["first_seen"]
    return pc.and_(pc.is_valid(rule_ids), pc.invert(first_seen))
