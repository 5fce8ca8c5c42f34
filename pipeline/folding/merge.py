"""Folding a run's sightings into the deduplicated rulings: keys, languages, rule dates."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Column, distinct_texts, listed, lookup, replace_column, strings, whole
from pipeline.keys import Groups, codes, first_rows
from pipeline.reading.sightings import RULING_TEXT
from pipeline.schema import ROW_ORDER, RULING_KEY, RULINGS, in_memory, make_schema
from pipeline.text.language import detect_language, remembered
from pipeline.text.normalize import SYMBOL_PATTERN

KEY = list(RULING_KEY)
# Rulings are ordered by these, ascending; nulls (unknown card, undated) sort last.
_ORDER, _ = ROW_ORDER["rulings"]
# The rulings columns merge_rulings() builds; `current` and `source_current` come from the
# snapshots.
MERGED = [name for name in RULINGS.names if name not in {"current", "source_current"}]
_MERGED_SCHEMA = pa.schema([in_memory("rulings").field(name) for name in MERGED])
_FIRST = ["card_printed", "oracle_id", "text", "lang", "kind"]
_COUNTERS = ["first_run", "last_run", "sightings"]


def merge_rulings(existing: pa.Table, sightings: pa.Table) -> pa.Table:
    """Fold new sightings into the rulings: one row per key (schema.RULING_KEY).

    Null key parts compare equal. Descriptive columns come from the earliest sighting
    (existing rows first, then new ones in source-path and position order), so the
    result does not depend on how the inputs were listed.
    """
    fresh = (
        sightings.select(KEY + _FIRST)
        .set_column(len(KEY) + _FIRST.index("text"), "text", sightings[RULING_TEXT])
        .append_column("first_run", sightings["run"])
        .append_column("last_run", sightings["run"])
        .append_column("sightings", pa.repeat(pa.scalar(1, pa.int64()), sightings.num_rows))
    )
    # The sightings' dictionary-encoded columns stay so until the rulings are gathered: only
    # the merged rows are decoded (a first ingest's million sightings were, three columns).
    held = pa.schema(
        [
            fresh.schema.field(f.name).with_nullable(f.nullable)
            if fresh.schema.field(f.name).type == pa.dictionary(pa.int32(), f.type)
            else f
            for f in _MERGED_SCHEMA
        ]
    )
    combined = fresh.select(MERGED).cast(held)
    if existing.num_rows:  # an empty chunk beside the sightings' would copy their texts
        combined = pa.concat_tables([existing.select(MERGED).cast(held), combined])
    # Integer codes of the keys sort as the keys do: each column is gathered once, from each
    # key's first row, in the rulings' order; the counters are reduced per key.
    [key_codes] = codes([combined], _ORDER)
    keys = Groups.of(key_codes)
    merged = combined.take(pa.array(keys.firsts))
    totals = (np.minimum, np.maximum, np.add)
    for name, how in zip(_COUNTERS, totals, strict=True):
        column = pa.array(keys.reduce(combined[name], how), _MERGED_SCHEMA.field(name).type)
        merged = replace_column(merged, name, column)
    return merged.cast(_MERGED_SCHEMA)


def rules_by_number(rulings: pa.Table, rule_sightings: pa.Table) -> pa.Table:
    """RULINGS with their rules and glossary terms folded again from RULE_SIGHTINGS.

    Before schema version 7 a rule's key left out its number, so a text under two numbers
    was one row, numbered as first seen. The numbered rows are dropped and folded afresh
    from every sighting of a number (each with the text of the row it was keyed to), one
    row per text and number; the card rulings stay as they were. `current` is dropped:
    history.with_current() computes it again.
    """
    fresh = rule_sightings.filter(pc.is_valid(rule_sightings["rule_id"]))
    # Each sighting's text is that of the row its version-6 key (no number) named.
    old_key = [name for name in KEY if name != "rule_id"]
    plain = make_schema([RULINGS.field(name) for name in old_key])
    ours, theirs = codes(
        [fresh.select(old_key).cast(plain), rulings.select(old_key).cast(plain)], old_key
    )
    rows = pc.index_in(ours, value_set=theirs)
    fresh = fresh.append_column(RULING_TEXT, pc.take(rulings["text"], rows).cast(pa.string()))
    kept = rulings.filter(pc.is_null(rulings["rule_id"]))
    return merge_rulings(kept, fresh)


def texts_with_symbols(rulings: pa.Table) -> list[str]:
    """The stored texts that hold a symbol such as {X}: what stripped copies can match."""
    texts = pa.array(distinct_texts(rulings["text"]), pa.string())
    return strings(texts.filter(pc.match_substring_regex(texts, SYMBOL_PATTERN)))


def known_languages(rulings: pa.Table) -> dict[str, str]:
    """Map each stored text hash to its language, so no text is detected twice."""
    chosen = rulings.select(["text_hash", "lang"]).take(first_rows(rulings, ["text_hash"]))
    pairs = zip(listed(chosen["text_hash"]), listed(chosen["lang"]), strict=True)
    return {str(h): str(lang) for h, lang in pairs}


def assign_languages(sightings: pa.Table, known: dict[str, str]) -> pa.Table:
    """Fill `lang` where the source declared none: once per distinct ruling text.

    KNOWN maps text hashes to the languages the dataset already holds; the languages the
    worker processes detected are looked up all at once, in Arrow; only a text neither
    gives is detected here.
    """
    firsts = first_rows(sightings, ["text_hash"], where=pc.is_null(sightings["lang"]))
    texts: Column = sightings[RULING_TEXT].take(firsts).cast(pa.string())
    text_hashes = sightings["text_hash"].take(firsts).cast(pa.string())
    detected = remembered()
    found = pc.coalesce(
        lookup(text_hashes, known) if known else pa.nulls(len(firsts), pa.string()),
        lookup(texts, detected) if detected else pa.nulls(len(firsts), pa.string()),
    )
    # One array each: replace_with_mask takes no chunked mask (texts of many chunks).
    texts, found = whole(texts), whole(found)
    missing = pc.is_null(found)
    if pc.any(missing).as_py():
        own = [detect_language(text) for text in strings(texts.filter(missing))]
        found = pc.replace_with_mask(found, missing, pa.array(own, pa.string()))
    at = pc.index_in(sightings["text_hash"], value_set=text_hashes)
    return replace_column(sightings, "lang", pc.coalesce(sightings["lang"], pc.take(found, at)))


def carry_rule_dates(sightings: pa.Table, rulings: pa.Table) -> pa.Table:
    """Give each rule the date of the first release that had its text.

    A release's date is not a per-rule date: a rule whose words did not change keeps
    the row it had, so a new release shows only its real changes.
    """
    shape = make_schema(
        [pa.field("text_hash", pa.string()), pa.field("effective_date", pa.date32())]
    )
    numbered = [
        t.filter(pc.is_valid(t["rule_id"])).select(shape.names).cast(shape)
        for t in (rulings, sightings)
    ]
    known = pa.concat_tables(numbered)
    known = known.filter(pc.is_valid(known["effective_date"]))
    if not known.num_rows:
        return sightings
    first = known.group_by("text_hash").aggregate([("effective_date", "min")])
    dates = dict(
        zip(strings(first["text_hash"]), first["effective_date_min"].to_pylist(), strict=True)
    )
    earliest = lookup(sightings["text_hash"], dates, pa.date32())
    carried = pc.if_else(pc.is_valid(sightings["rule_id"]), earliest, sightings["effective_date"])
    return replace_column(
        sightings, "effective_date", pc.coalesce(carried, sightings["effective_date"])
    )
