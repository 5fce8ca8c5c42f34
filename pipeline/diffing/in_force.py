"""What is in force today: of each card's rulings, those its freshest sources carry.

Each (card, source) has its latest snapshot in the state, and each ruling of it is
`source_current`. Sources disagree (a 2022 MTGJSON file and a 2024 dump of the same card
carry both suspend wordings), so a card's rulings in force today, `current`, are those that
a freshest source of the card carries, in each language apart: a German dump says nothing
of the English rulings, and the English rulings of a newer source do not retire the only
Korean ones.

Freshness is what a source states, never when a file was copied: a snapshot's evidence is
the latest of its stated as-of date (the document's own date, the manifest's `fetched_at`,
a date in its path) and the newest ruling date it carries (a dump holding 2024-02-02
rulings was saved on or after that day). A file's modification time is the weakest
evidence: it orders only sources of which none states anything. Equal evidence makes
both sources freshest.

Rows without a card are compared by their oracle id; numbered rules and glossary entries
(no card, no oracle id) form one group, so the latest release's rules are in force and an
older release's are not; any other row without a card (an excerpt of unnumbered rules, a
ruling of no known card) is its own source's alone: nothing tells what it is weighed against.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Column, Mask, false_if_null, filled, whole
from pipeline.keys import Groups, codes
from pipeline.models import AsOfOrigin

KEY = ["text_hash", "card", "effective_date", "rule_id"]
# A row's snapshot as key columns (snapshot_keys): which of card, oracle id or neither names
# it, the card, the oracle id.
SNAPSHOT_KEYS = ["_named_by", "_card", "_oracle"]
_BY_ORACLE, _BY_CARD, _BY_NEITHER = 0, 1, 2
STATED = frozenset({AsOfOrigin.DOCUMENT.value, AsOfOrigin.MANIFEST.value, AsOfOrigin.PATH.value})
# A stated date outranks every modification time: its score is this much higher.
_STATED_RANK = 1 << 40
_NONE = -(1 << 41)  # a snapshot with no date at all: the stalest


def evidence(state: pa.Table) -> np.ndarray:
    """The freshness score of each STATE row's snapshot: higher is fresher.

    A snapshot with a stated date or a dated ruling scores the latest of those (plus a
    rank above every modification time); one with a modification time alone, that day.
    """
    snaps_and_sources = snapshot_keys(state).append_column("source", state["source"])
    [snaps] = codes([snaps_and_sources], [*SNAPSHOT_KEYS, "source"])
    groups = Groups.of(snaps)
    days = state["as_of"].cast(pa.date32()).cast(pa.int32())
    origin = state["as_of_origin"].cast(pa.string())
    said = false_if_null(pc.is_in(origin, value_set=pa.array(sorted(STATED))))
    stated_day: Column = pc.if_else(said, days, pa.scalar(None, pa.int32()))
    ruled = state["effective_date"].cast(pa.date32()).cast(pa.int32())
    stated = pc.max_element_wise(stated_day, ruled)  # nulls skipped
    stated_max = groups.reduce(_filled(stated), np.maximum)
    weak_max = groups.reduce(_filled(days), np.maximum)
    score = np.where(stated_max > _NONE, stated_max + _STATED_RANK, weak_max)
    per_row = np.empty(state.num_rows, dtype=np.int64)
    sizes = np.diff(np.append(groups.starts, state.num_rows))
    per_row[groups.order] = np.repeat(score, sizes)
    return per_row


def in_force(rulings: pa.Table, state: pa.Table) -> tuple[Mask, Mask]:
    """Per RULINGS row: (`current`, `source_current`), both boolean arrays.

    `source_current`: the ruling is in the latest snapshot of a (card, source), as STATE
    holds them; `current`: a freshest source of its card carries it, in its language.
    RULINGS needs the key and `lang`; STATE the key, `oracle_id`, `source`, `as_of` and
    `as_of_origin`.
    """
    ruling_keys, state_keys, fresh = _fresh_rows(rulings, state)
    source_current = pc.is_in(ruling_keys, value_set=pc.unique(state_keys))
    fresh_keys = pc.unique(whole(state_keys).filter(fresh))
    return pc.is_in(ruling_keys, value_set=fresh_keys), source_current


def freshest_sources(rulings: pa.Table, state: pa.Table) -> set[tuple[str | None, str | None]]:
    """The (card, source) pairs of STATE that are a freshest source of their card."""
    _, _, fresh = _fresh_rows(rulings, state)
    chosen = state.select(["card", "source"]).filter(fresh)
    cards, sources = (chosen[name].cast(pa.string()).to_pylist() for name in ("card", "source"))
    return set(zip(cards, sources, strict=True))


def _fresh_rows(rulings: pa.Table, state: pa.Table) -> tuple[Column, Column, Mask]:
    """The rulings' key codes, the state's, and which state rows a freshest source holds."""
    ruling_keys, state_keys = codes([rulings.select(KEY), state.select(KEY)], KEY)
    if not state.num_rows:
        return ruling_keys, state_keys, pa.array([], pa.bool_())
    where = pc.index_in(state_keys, value_set=ruling_keys)
    langs: Column = pc.take(rulings["lang"].cast(pa.string()), where)
    langs = filled(langs, pa.scalar("und"))
    groups = _groups(state).append_column("lang", langs)
    [group_codes] = codes([groups], groups.column_names)
    score = evidence(state)
    grouped = Groups.of(group_codes)
    best = np.empty(state.num_rows, dtype=np.int64)
    sizes = np.diff(np.append(grouped.starts, state.num_rows))
    best[grouped.order] = np.repeat(grouped.reduce(score, np.maximum), sizes)
    return ruling_keys, state_keys, pa.array(score == best)


def _filled(days: Column) -> np.ndarray:  # int32 with nulls
    """DAYS as int64, a null as the stalest score."""
    days = filled(days.cast(pa.int64()), pa.scalar(_NONE, pa.int64()))
    return np.asarray(days.to_numpy(zero_copy_only=False))


def snapshot_keys(table: pa.Table) -> pa.Table:
    """Each row's snapshot as key columns (SNAPSHOT_KEYS): its card, else its oracle id.

    Rows of neither have no snapshot (a null one). For keys.codes(): the columns compare
    and order as the card's name would, else the oracle id behind a prefix sorting before
    every name (rows named by their oracle id first, by it; then by their card; those of
    neither last), without that text made for every row (a million rows' were some 100
    MiB at once). TABLE needs `card` and `oracle_id`, plain or dictionary-encoded.
    """
    card, oracle = table["card"], table["oracle_id"]
    has_card = pc.is_valid(card)
    by_oracle = pc.and_(pc.invert(has_card), pc.is_valid(oracle))
    named_by = pc.if_else(
        by_oracle,
        pa.scalar(_BY_ORACLE, pa.int8()),
        pc.if_else(has_card, pa.scalar(_BY_CARD, pa.int8()), pa.scalar(_BY_NEITHER, pa.int8())),
    )
    oracle_only = pc.if_else(by_oracle, oracle, pa.scalar(None, oracle.type))
    return pa.Table.from_arrays([named_by, card, oracle_only], names=SNAPSHOT_KEYS)


def _groups(state: pa.Table) -> pa.Table:
    """The group each STATE row's freshness is weighed in (its card; see the module).

    As key columns: the row's snapshot; for a row of none, whether it is a numbered rule
    (the rules are one group) and, if not, its source (each source's rows are their own).
    """
    keys = snapshot_keys(state)
    unnamed = pc.equal(keys["_named_by"], pa.scalar(_BY_NEITHER, pa.int8()))
    numbered = pc.is_valid(state["rule_id"])
    rule = pc.if_else(unnamed, numbered, pa.scalar(None, pa.bool_()))
    own = pc.and_(unnamed, pc.invert(numbered))
    source = state["source"]
    keys = keys.append_column("_rule", rule)
    return keys.append_column("_source", pc.if_else(own, source, pa.scalar(None, source.type)))


__all__ = ["SNAPSHOT_KEYS", "STATED", "evidence", "freshest_sources", "in_force", "snapshot_keys"]
