"""Segments: `rulings` and `state` kept as files of whole cards, rewritten a few at a time.

Every row of either table belongs to a group: its card, or one group for all rows without
a card (rules text, rulings known by an oracle id alone). A group lives in one segment of
both tables, so a run that reads some cards loads and rewrites only the segments holding
them: a ruling's `current` flag and a card's last snapshots are settled inside them. New
cards join the newest segment while it holds fewer than TARGET_ROWS rulings, then start
new ones; a segment grown past twice that is split. The assignment depends only on the
runs' inputs, so it is deterministic; readers see the segments' rows put back in the
tables' order (store.read_table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Column, listed, strings, true_count, used_only, whole
from pipeline.limits import quiet_setting

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

# Rulings a segment aims at: a run reading one card rewrites at most about this many.
TARGET_ROWS = quiet_setting("PIPELINE_SEGMENT_ROWS", 50_000)
NO_CARD = "\x00"  # the group of the rows without a card: no card name holds this character


def groups(table: pa.Table) -> pa.ChunkedArray[Any]:
    """The group of each row of TABLE: its card, or NO_CARD."""
    return table["card"].cast(pa.string()).fill_null(pa.scalar(NO_CARD))


@dataclass(frozen=True, slots=True)
class Layout:
    """Which groups each segment holds, and how many rulings."""

    members: Mapping[int, pa.Array[Any]] = field(default_factory=dict)  # segment -> distinct groups
    rows: Mapping[int, int] = field(default_factory=dict)

    @staticmethod
    def of(segments: Mapping[int, pa.Table]) -> Layout:
        """The layout of rulings SEGMENTS (each needs its `card` column only)."""
        members = {seg: whole(pc.unique(groups(table))) for seg, table in segments.items()}
        return Layout(members, {seg: table.num_rows for seg, table in segments.items()})


@dataclass(frozen=True, slots=True)
class Plan:
    """The segments a run loads, and where its new groups go."""

    load: tuple[int, ...]
    home: Mapping[str, int]  # each loaded group's segment
    open: int  # the segment new groups fill first
    next_id: int  # the first unused segment number


def plan(layout: Layout, wanted: Column) -> Plan:
    """The segments holding any of the groups WANTED, and the one that new groups fill.

    The newest segment is loaded too when WANTED has groups no segment holds and it has
    room: new cards fill it up to TARGET_ROWS rather than each run starting a small one.
    """
    wanted = pc.unique(wanted)
    load = {seg for seg, held in layout.members.items() if pc.any(pc.is_in(held, wanted)).as_py()}
    everything = [held.cast(pa.string()) for held in layout.members.values()]
    held_any = pa.concat_arrays(everything) if everything else pa.array([], pa.string())
    fresh = true_count(pc.invert(pc.is_in(wanted, value_set=held_any)))
    newest = max(layout.members, default=0)
    next_id = newest + 1
    open_segment = next_id
    if fresh and layout.members and layout.rows[newest] < TARGET_ROWS:
        load.add(newest)
        open_segment = newest
    home = {str(group): seg for seg in sorted(load) for group in layout.members[seg].to_pylist()}
    return Plan(tuple(sorted(load)), home, open_segment, next_id)


@dataclass(frozen=True, slots=True)
class Cut:
    """One segment of a table: its rows, gathered only when the commit writes them.

    Gathered all at once, the segments of a large run were a second copy of `rulings` and
    `state` (about 550 MiB of a first ingest of a million rulings); the commit gathers
    them a row group at a time (row_groups).
    """

    source: pa.Table
    rows: Column  # indices into SOURCE, in the segment's order

    @property
    def num_rows(self) -> int:
        """How many rows the segment holds."""
        return len(self.rows)

    def table(self) -> pa.Table:
        """The segment's rows, each dictionary column holding only the values they use."""
        return _compacted(self.source.take(self.rows))

    def row_groups(self, size: int) -> Iterator[pa.Table]:
        """The segment's rows, SIZE at a time, each gathered only when it is asked for.

        Their dictionary columns keep the whole table's dictionary: the commit's writer
        cuts each row group's to the values it uses (as it does the rows of table()).
        """
        for start in range(0, self.num_rows, size):
            yield self.source.take(self.rows.slice(start, size))


def split(tables: Mapping[str, pa.Table], chosen: Plan) -> dict[str, dict[int, Cut | None]]:
    """Each table of TABLES (the loaded segments after the run) cut back into segments.

    Groups keep their segment; new ones fill the open segment, then new segments of about
    TARGET_ROWS rulings each; a segment past twice that is cut in segments of whole
    groups. A loaded segment left without rows maps to None: the commit removes it.
    Rows keep their order within each segment.
    """
    sizes: dict[str, int] = {}
    for name, table in tables.items():  # rulings count; a group only state holds counts 0
        counts = pc.value_counts(groups(table))
        for group, count in zip(
            strings(counts.field("values")), listed(counts.field("counts")), strict=True
        ):
            sizes[group] = sizes.get(group, 0) + (count if name == "rulings" else 0)
    assign = _assign(sizes, chosen)
    names = list(assign)
    at = pa.array([assign[g] for g in names], pa.int64())
    value_set = pa.array(names, pa.string())
    out: dict[str, dict[int, Cut | None]] = {}
    for name, table in tables.items():
        segment_of = pc.take(at, pc.index_in(groups(table), value_set=value_set))
        order = pc.sort_indices(segment_of)  # stable: rows keep their order in a segment
        runs = pc.value_counts(segment_of)
        found: dict[int, Cut | None] = dict.fromkeys(chosen.load)
        start = 0
        ids, sizes_of = listed(runs.field("values")), listed(runs.field("counts"))
        for seg, count in sorted(zip(ids, sizes_of, strict=True)):
            found[seg] = Cut(table, order.slice(start, count))
            start += count
        out[name] = found
    return out


def _compacted(table: pa.Table) -> pa.Table:
    """TABLE with each dictionary column encoded afresh: only the values its rows use.

    A filtered column keeps the whole table's dictionary; written as it is, every segment
    would carry (and the writer scan) the dictionary of all of them.
    """
    columns = [
        used_only(column.combine_chunks()) if pa.types.is_dictionary(column.type) else column
        for column in table.columns
    ]
    return pa.table(columns, schema=table.schema)


def _assign(sizes: Mapping[str, int], chosen: Plan) -> dict[str, int]:
    """The segment of each group of SIZES (group -> rulings)."""
    assign: dict[str, int] = {}
    held: dict[int, list[str]] = {}
    fresh: list[str] = []
    for group in sorted(sizes):
        seg = chosen.home.get(group)
        if seg is None:
            fresh.append(group)
        else:
            held.setdefault(seg, []).append(group)
    next_id = chosen.next_id + (bool(fresh) and chosen.open == chosen.next_id)  # taken
    for seg, members in sorted(held.items()):
        small = sum(sizes[g] for g in members) <= 2 * TARGET_ROWS
        chunks = [members] if small else _chunks(members, sizes, 0)  # too big: cut it
        next_id = _place(chunks, seg, next_id, assign)
    filled = sum(sizes[g] for g, s in assign.items() if s == chosen.open)
    _place(_chunks(fresh, sizes, filled), chosen.open, next_id, assign)
    return assign


def _place(chunks: list[list[str]], first: int, next_id: int, assign: dict[str, int]) -> int:
    """Put the first of CHUNKS in segment FIRST, the others in new ones; the next free id."""
    for index, chunk in enumerate(chunks):
        target = first
        if index:
            target, next_id = next_id, next_id + 1
        assign.update(dict.fromkeys(chunk, target))
    return next_id


def _chunks(members: Iterable[str], sizes: Mapping[str, int], filled: int) -> list[list[str]]:
    """MEMBERS in runs of about TARGET_ROWS rulings; the first (maybe empty) tops up FILLED."""
    chunks: list[list[str]] = [[]]
    total = filled
    for group in members:
        if total >= TARGET_ROWS:
            chunks.append([])
            total = 0
        chunks[-1].append(group)
        total += sizes[group]
    return chunks
