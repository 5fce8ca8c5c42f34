"""The site's inputs taken from the dataset's tables, in Arrow, then as plain Python values."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Column, Mask, false_if_null, joined, strings
from pipeline.diffing.in_force import freshest_sources
from pipeline.publishing.slugs import slugs
from pipeline.publishing.templating import rule_numbers

if TYPE_CHECKING:
    import datetime as dt

_RULE_FILE = re.compile(r"[0-9a-z][0-9a-z.]*")  # a rule number fit to name its page's file
# Arrow's regular expressions (RE2) look neither behind nor ahead: this loose pattern
# picks the rulings that may cite a rule, templating.RULE_NUMBER the numbers.
_MAY_CITE = r"[1-9]\d\d\.\d"


def plain_table(table: pa.Table) -> pa.Table:
    """TABLE with its dictionary-encoded columns decoded (listing those is slow)."""
    fields = [table.schema.field(c) for c in table.column_names]
    plain = [
        f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in fields
    ]
    return table.cast(pa.schema(plain))


def plain_rows(table: pa.Table, columns: list[str]) -> list[dict[str, Any]]:
    """TABLE's COLUMNS as Python rows, dictionary-encoded strings decoded first (faster)."""
    return plain_table(table.select(columns)).to_pylist()


def text_column(table: pa.Table, name: str) -> Column:
    """Column NAME of TABLE as plain strings."""
    return table[name].cast(pa.string())


def rule_order(rule_id: str) -> tuple[object, ...]:
    """Rule numbers in the book's order: 100.2 before 100.10, 702.62 before 702.62a."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", rule_id))


def latest_versions(state: pa.Table) -> pa.Table:
    """Each (card, source) of STATE as one key, with the as-of date of its latest version."""
    held = pa.Table.from_arrays([_snapshot_key(state), state["as_of"]], names=["key", "held"])
    return held.group_by("key", use_threads=False).aggregate([("held", "max")])


def late_rows(read: pa.Table, latest: pa.Table) -> Mask:
    """Which sightings of READ are of a version older than the latest one (latest_versions).

    A card's rows only: a row of no card is no card's page.
    """
    at = pc.index_in(_snapshot_key(read), value_set=latest["key"])
    return false_if_null(pc.less(read["as_of"], pc.take(latest["held_max"], at)))


def _snapshot_key(table: pa.Table) -> Column:  # null without a card
    return joined(text_column(table, "card"), text_column(table, "source"), separator="\x00")


def needed_texts(
    rulings: pa.Table, events: pa.Table, translations: list[dict[str, Any]]
) -> dict[str, str]:
    """The texts the pages name by hash: translations, their originals, replacements."""
    wanted = {h for r in translations for h in (r["text_hash"], r["original_text_hash"]) if h}
    wanted |= set(strings(events["replaced_by"].drop_null()))
    wanted |= set(strings(events["old_text_hash"].drop_null()))
    if not wanted:
        return {}
    picked = pa.array(sorted(wanted), pa.string())
    rows = rulings.filter(pc.is_in(text_column(rulings, "text_hash"), value_set=picked))
    return dict(zip(strings(rows["text_hash"]), strings(rows["text"]), strict=True))


def languages_of(rulings: pa.Table, events: pa.Table) -> pa.Table:
    """The rulings whose texts EVENTS name: what the changesets' languages are looked up in."""
    hashes = {
        *strings(events["old_text_hash"].drop_null()),
        *strings(events["new_text_hash"].drop_null()),
    }
    picked = pa.array(sorted(hashes), pa.string())
    return rulings.filter(pc.is_in(text_column(rulings, "text_hash"), value_set=picked))


def current_counts(
    rulings: pa.Table, translated: set[str]
) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Each card's number of rulings in force and the languages of its current rulings.

    The number is what its page counts under "Rulings today": each ruling once, however
    many dates its sources give it, and not the TRANSLATED ones (text hashes), which its
    page shows beside the English ruling they translate.
    """
    today = rulings.filter(pc.and_(rulings["current"], pc.is_valid(rulings["card"])))
    langs: dict[str, set[str]] = defaultdict(set)
    rulings_of: dict[str, set[str]] = defaultdict(set)
    for row in plain_rows(today, ["card", "lang", "text_hash"]):
        langs[row["card"]].add(row["lang"])
        if row["text_hash"] not in translated:
            rulings_of[row["card"]].add(row["text_hash"])
    return {
        card: (len(rulings_of.get(card, ())), tuple(sorted(found))) for card, found in langs.items()
    }


def rule_texts(rulings: pa.Table, kind: str = "rule") -> dict[str, str]:
    """Each rule number (glossary term: KIND) with its current text (else its latest row's).

    Rules in the book's order; glossary terms alphabetically (rule_order sorts them so).
    """
    rows = rulings.filter(pc.equal(text_column(rulings, "kind"), pa.scalar(kind)))
    found: dict[str, tuple[bool, str]] = {}
    for row in plain_rows(rows, ["rule_id", "text", "current"]):
        rule = row["rule_id"]
        if rule and (row["current"] or not found.get(rule, (False, ""))[0]):
            found[rule] = (row["current"], row["text"])
    return {rule: found[rule][1] for rule in sorted(found, key=rule_order)}


def glossary_files(terms: dict[str, str]) -> dict[str, str]:
    """Each glossary entry's page file name: a slug of its term (day-and-night)."""
    return slugs(terms)


def rule_files(rules: dict[str, str]) -> dict[str, str]:
    """Each rule's page file name: its number (702.62a), else a slug of it."""
    named = {r: r for r in rules if _RULE_FILE.fullmatch(r)}
    others = slugs(r for r in rules if r not in named)
    return {**named, **{r: f"rule-{s}" for r, s in others.items()}}


def freshness(
    rulings: pa.Table, state: pa.Table
) -> dict[str, tuple[tuple[str, dt.date | None, bool], ...]]:
    """Each card's sources: the as-of date of its latest version, and whether it is freshest.

    A freshest source is one whose rulings are in force (diffing/in_force.py: stated dates
    outrank modification times); RULINGS needs the key, `lang` and `kind`.
    """
    freshest = freshest_sources(rulings, state)
    found: dict[str, list[tuple[str, dt.date | None, bool]]] = defaultdict(list)
    for (card, source), day in source_dates(state).items():
        if card is not None:
            found[card].append((source, day, (card, source) in freshest))
    return {card: tuple(sorted(rows)) for card, rows in found.items()}


def in_force_keys(rulings: pa.Table) -> dict[str, frozenset[tuple[str, dt.date | None]]]:
    """Each card's rulings in force today, as (text_hash, effective_date)."""
    today = rulings.filter(pc.and_(rulings["current"], pc.is_valid(rulings["card"])))
    found: dict[str, set[tuple[str, dt.date | None]]] = defaultdict(set)
    for row in plain_rows(today, ["card", "text_hash", "effective_date"]):
        found[row["card"]].add((row["text_hash"], row["effective_date"]))
    return {card: frozenset(keys) for card, keys in found.items()}


def source_dates(state: pa.Table) -> dict[tuple[Any, str], dt.date | None]:
    """The as-of date of the latest version of each (card, source) STATE holds (None: undated)."""
    found: dict[tuple[Any, str], dt.date | None] = {}
    for row in plain_rows(state, ["card", "source", "as_of"]):
        card, source, day = row["card"], row["source"], row["as_of"]
        known = found.get((card, source))
        found[card, source] = day if known is None else max(known, day or known)
    return found


def citations(rulings: pa.Table) -> dict[str, tuple[str, ...]]:
    """The rule numbers each card's rulings (of every version) cite."""
    maybe = pc.match_substring_regex(text_column(rulings, "text"), _MAY_CITE)
    mine = rulings.filter(pc.and_(pc.is_valid(rulings["card"]), maybe))
    found: dict[str, dict[str, None]] = defaultdict(dict)
    for row in plain_rows(mine, ["card", "text"]):
        found[row["card"]].update(dict.fromkeys(rule_numbers(row["text"])))
    return {card: tuple(sorted(numbers, key=rule_order)) for card, numbers in found.items()}
