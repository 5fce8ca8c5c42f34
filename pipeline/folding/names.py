"""Cards' translated names, learned from the files read: one card, one name.

MTGJSON prints each card's name in every language it was printed in (foreignData). A run
keeps those names (`names.parquet`), so that a ruling filed under a translated title, such
as a German Gatherer page of "Dichotomagie", is stored under the English "Dichotomancy",
and a card stored under a translated name before its English name was known is re-keyed
by the run that learns it. A translated name that two cards share, or that is itself a
card's English name, names no card: a ruling filed under it stays under the name, and the
run says so, naming the cards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Column, false_if_null, joined, listed, lookup, replace_column
from pipeline.models import CardOrigin
from pipeline.schema import NAMES
from pipeline.text.normalize import card_key, card_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from pipeline.models import LocalName


def learned(stored: pa.Table, found: Iterable[LocalName], run: int) -> pa.Table:
    """STORED names with those FOUND by RUN that it lacks, by (name, language, card), sorted.

    Every card a name stands for is kept: "Mobilisierung" is German for Mobilization and
    for Portal's Mobilize, and such a name names no card (english_names).
    """
    fresh: dict[tuple[str, str, str], LocalName] = {}
    for local in found:
        fresh.setdefault((card_name(local.name), local.lang, card_name(local.card)), local)
    if not fresh:
        return stored
    rows = pa.table(
        {
            "name": [name for name, _, _ in fresh],
            "lang": [lang for _, lang, _ in fresh],
            "card": [card for _, _, card in fresh],
            "oracle_id": [local.oracle_id for local in fresh.values()],
            "first_run": pa.repeat(pa.scalar(run, pa.int64()), len(fresh)),
        },
        schema=NAMES,
    )
    rows = rows.filter(pc.invert(pc.is_in(_triples(rows), value_set=_triples(stored.cast(NAMES)))))
    if not rows.num_rows:
        return stored  # itself: nothing to write
    table = pa.concat_tables([stored.cast(NAMES), rows])
    order = ["name", "lang", "card"]
    return table.take(pc.sort_indices(table, sort_keys=[(name, "ascending") for name in order]))


def _triples(names: pa.Table) -> Column:
    """Each row's (name, language, card) as one string."""
    return joined(names["name"], names["lang"], names["card"], separator="\x00")


def english_names(names: pa.Table) -> dict[str, str]:
    """card_key(translated name) -> the English name it stands for, where that is certain.

    Names are stored as card_name() spells them, so a name's key is its casefold.
    """
    if not names.num_rows:
        return {}
    cards = names["card"].cast(pa.string()).combine_chunks()
    keys = pa.array([name.casefold() for name in listed(names["name"])], pa.string())
    grouped = pa.table({"key": keys, "card": cards}).group_by("key", use_threads=False)
    meanings = grouped.aggregate([("card", "count_distinct"), ("card", "min")])
    own = pa.array(sorted({c.casefold() for c in listed(pc.unique(cards))}), pa.string())
    certain = pc.and_(
        pc.equal(meanings["card_count_distinct"], pa.scalar(1, pa.int64())),
        pc.invert(pc.is_in(meanings["key"], value_set=own)),
    )
    chosen = meanings.filter(certain)
    return dict(zip(listed(chosen["key"]), listed(chosen["card_min"]), strict=True))


def shared_names(names: pa.Table) -> dict[str, tuple[str, ...]]:
    """card_key(translated name) -> the English cards it stands for, where it is two or more."""
    found: dict[str, set[str]] = {}
    for name, card in zip(listed(names["name"]), listed(names["card"]), strict=True):
        found.setdefault(name.casefold(), set()).add(card)
    own = {card.casefold() for cards in found.values() for card in cards}  # English names
    return {
        key: tuple(sorted(cards))
        for key, cards in found.items()
        if len(cards) > 1 and key not in own
    }


def unresolved(table: pa.Table, shared: Mapping[str, tuple[str, ...]]) -> list[str]:
    """A warning per file of TABLE titled by a name of several cards, naming them.

    A card the manifest names is the manifest's choice: no warning for it.
    """
    if not shared or not table.num_rows:
        return []
    origin = table["card_origin"].cast(pa.string())
    titled = false_if_null(pc.equal(origin, pa.scalar(CardOrigin.TITLE.value)))
    rows = table.select(["source_path", "card"]).filter(titled)
    pairs = {
        (path, card)
        for path, card in zip(listed(rows["source_path"]), listed(rows["card"]), strict=True)
        if card_key(card) in shared
    }
    return [
        f"{path}: the name {card!r} stands for {len(shared[card_key(card)])} cards "
        f"({', '.join(shared[card_key(card)])}): stored as printed, no card chosen "
        "(a manifest `card` or the rulings' oracle ids decide it)"
        for path, card in sorted(pairs)
    ]


def aliases(cards: Iterable[str], english: Mapping[str, str]) -> dict[str, str]:
    """Of CARDS, those stored under a translated name, each with its English name."""
    return {card: english[card_key(card)] for card in cards if card_key(card) in english}


def renamed(table: pa.Table, english: Mapping[str, str]) -> pa.Table:
    """TABLE with each card stored under a translated name given its English name."""
    if not english or not table.num_rows:
        return table
    column = table["card"]
    distinct = pc.unique(column.cast(pa.string())).drop_null()
    found = aliases(listed(distinct), english)
    if not found:
        return table
    names = lookup(column.cast(pa.string()), found)
    card = pc.coalesce(names, column.cast(pa.string())).cast(column.type)
    return replace_column(table, "card", card)


__all__ = ["aliases", "english_names", "learned", "renamed", "shared_names", "unresolved"]
