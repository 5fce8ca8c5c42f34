"""Cards' translated names, learned from the files read: one card, one name.

MTGJSON prints each card's name in every language it was printed in (foreignData). A run
keeps those names (`names.parquet`), so that a ruling filed under a translated title, such
as a German Gatherer page of "Dichotomagie", is stored under the English "Dichotomancy",
and a card stored under a translated name before its English name was known is re-keyed
by the run that learns it. A translated name that two cards share, or that is itself a
card's English name, names no card.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import listed, lookup, replace_column
from pipeline.schema import NAMES
from pipeline.text.normalize import card_key, card_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from pipeline.models import LocalName


def learned(stored: pa.Table, found: Iterable[LocalName], run: int) -> pa.Table:
    """STORED names with those FOUND by RUN that it lacks, by (name, language), sorted."""
    known = {(n, lang) for n, lang in zip(listed(stored["name"]), listed(stored["lang"]),
                                          strict=True)}  # fmt: skip
    fresh: dict[tuple[str, str], LocalName] = {}
    for local in found:
        name = card_name(local.name)
        if (name, local.lang) not in known:
            fresh.setdefault((name, local.lang), local._replace(name=name))
    if not fresh:
        return stored
    rows = [
        {"name": name, "lang": lang, "card": card_name(local.card),
         "oracle_id": local.oracle_id, "first_run": run}
        for (name, lang), local in fresh.items()
    ]  # fmt: skip
    table = pa.concat_tables([stored.cast(NAMES), pa.Table.from_pylist(rows, schema=NAMES)])
    order = pc.sort_indices(table, sort_keys=[("name", "ascending"), ("lang", "ascending")])
    return table.take(order)


def english_names(names: pa.Table) -> dict[str, str]:
    """card_key(translated name) -> the English name it stands for, where that is certain."""
    cards = {card_key(c) for c in listed(names["card"])}
    meanings: dict[str, set[str]] = defaultdict(set)
    for name, card in zip(listed(names["name"]), listed(names["card"]), strict=True):
        meanings[card_key(name)].add(card)
    return {
        key: next(iter(found))
        for key, found in meanings.items()
        if len(found) == 1 and key not in cards
    }


def aliases(cards: Iterable[str], english: Mapping[str, str]) -> dict[str, str]:
    """Of CARDS, those stored under a translated name, each with its English name."""
    return {card: english[card_key(card)] for card in cards if card_key(card) in english}


def renamed(table: pa.Table, english: Mapping[str, str]) -> pa.Table:
    """TABLE with each card stored under a translated name given its English name."""
    if not english or not table.num_rows:
        return table
    column = table["card"]
    distinct: Any = pc.unique(column.cast(pa.string())).drop_null()
    found = aliases(listed(distinct), english)
    if not found:
        return table
    names = lookup(column.cast(pa.string()), found)
    card = pc.coalesce(names, column.cast(pa.string())).cast(column.type)
    return replace_column(table, "card", card)


__all__ = ["aliases", "english_names", "learned", "renamed"]
