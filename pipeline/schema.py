"""The explicit Arrow schemas of the dataset's files: the contract notebooks rely on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Column, false_if_null

if TYPE_CHECKING:
    from collections.abc import Callable

SCHEMA_VERSION = 9
VERSION_KEY = b"pipeline.schema_version"
TABLE_KEY = b"pipeline.table"


def make_schema(fields: list[pa.Field[Any]]) -> pa.Schema:
    """An Arrow schema from a list of fields (typed for mypy: the stubs want one type)."""
    return pa.schema(fields)


_KEY_FIELDS: list[pa.Field[Any]] = [
    pa.field("text_hash", pa.string(), nullable=False),
    pa.field("card", pa.string()),
    pa.field("effective_date", pa.date32()),
]

# What tells rulings apart: a rule's or glossary term's number is part of its identity, so a
# text under two numbers is two rows (card rulings have none). Null parts compare equal.
RULING_KEY = ("text_hash", "card", "effective_date", "rule_id")
RULES_BY_NUMBER = 7  # the first schema version whose rulings' key holds the rule number
IN_FORCE = 8  # the first whose `current` weighs a card's sources (source_current: each's own)
LOGGED = 9  # the first whose runs log what they learned (texts, names, cards) in parts

RULINGS = make_schema(
    [
        *_KEY_FIELDS,
        pa.field("card_printed", pa.string()),
        pa.field("oracle_id", pa.string()),
        pa.field("rule_id", pa.string()),
        pa.field("text", pa.string(), nullable=False),
        pa.field("lang", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("first_run", pa.int64(), nullable=False),
        pa.field("last_run", pa.int64(), nullable=False),
        pa.field("sightings", pa.int64(), nullable=False),
        pa.field("current", pa.bool_(), nullable=False),
        pa.field("source_current", pa.bool_(), nullable=False),
    ]
)

SIGHTINGS = make_schema(
    [
        pa.field("run", pa.int64(), nullable=False),
        pa.field("source_path", pa.string(), nullable=False),
        pa.field("source_sha256", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("fetched_at", pa.string()),
        pa.field("as_of", pa.date32()),
        pa.field("layout", pa.string(), nullable=False),
        pa.field("position", pa.int64(), nullable=False),
        pa.field("date_printed", pa.string()),
        *_KEY_FIELDS,
        pa.field("text", pa.string()),  # null: the text of the ruling it is keyed to
        pa.field("card_printed", pa.string()),
        pa.field("card_origin", pa.string()),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("lang", pa.string(), nullable=False),
        pa.field("oracle_id", pa.string()),
        pa.field("rule_id", pa.string()),
        pa.field("set_code", pa.string()),  # the set whose printing gave it (MTGJSON)
        pa.field("set_released", pa.date32()),  # that set's release date
        pa.field("date_ambiguous", pa.bool_(), nullable=False),
        pa.field("symbol_gap", pa.bool_(), nullable=False),
        pa.field("repaired_from", pa.string()),
    ]
)

FILES = make_schema(
    [
        pa.field("run", pa.int64(), nullable=False),
        pa.field("source_path", pa.string(), nullable=False),
        pa.field("source_sha256", pa.string()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("reason", pa.string()),
        pa.field("layout", pa.string()),
        pa.field("encoding", pa.string()),
        pa.field("rulings", pa.int64(), nullable=False),
        pa.field("warnings", pa.list_(pa.string()), nullable=False),
        pa.field("context", pa.string(), nullable=False),
        pa.field("size", pa.int64()),
        pa.field("mtime_ns", pa.int64()),
        pa.field("as_of", pa.date32()),
        pa.field("as_of_origin", pa.string()),
        pa.field("cards", pa.int64()),  # cards the file described; null: not asked (before 9)
    ]
)

RUNS = make_schema(
    [
        pa.field("run", pa.int64(), nullable=False),
        pa.field("started_at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("finished_at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("inputs", pa.list_(pa.string()), nullable=False),
        pa.field("files_read", pa.int64(), nullable=False),
        pa.field("files_skipped", pa.int64(), nullable=False),
        pa.field("files_rejected", pa.int64(), nullable=False),
        pa.field("rulings_read", pa.int64(), nullable=False),
        pa.field("new_keys", pa.int64(), nullable=False),
        pa.field("duplicates", pa.int64(), nullable=False),
        pa.field("warnings", pa.int64(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("rule_changes", pa.int64()),  # null: a run before version 6
    ]
)

CHANGES = make_schema(
    [
        pa.field("run", pa.int64(), nullable=False),
        pa.field("as_of", pa.date32()),
        pa.field("card", pa.string()),
        pa.field("oracle_id", pa.string()),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("change", pa.string(), nullable=False),
        pa.field("old_text_hash", pa.string()),
        pa.field("new_text_hash", pa.string()),
        pa.field("old_date", pa.date32()),
        pa.field("new_date", pa.date32()),
        pa.field("old_rule_id", pa.string()),
        pa.field("new_rule_id", pa.string()),
        pa.field("similarity", pa.float64()),
        pa.field("rule_change", pa.bool_(), nullable=False),
        pa.field("silent", pa.bool_(), nullable=False),
        pa.field("first_seen", pa.bool_(), nullable=False),
        pa.field("group", pa.string(), nullable=False),
        pa.field("old_text", pa.string()),
        pa.field("new_text", pa.string()),
        pa.field("match", pa.string()),
        pa.field("replaced_by", pa.string()),
    ]
)

# The last snapshot of each (card, source): what the next run's diff compares with, and
# what `rulings.current` is computed from. Sized by the current data, never by the runs.
STATE = make_schema(
    [
        pa.field("card", pa.string()),
        pa.field("oracle_id", pa.string()),
        pa.field("source", pa.string(), nullable=False),
        pa.field("run", pa.int64(), nullable=False),
        pa.field("as_of", pa.date32()),
        pa.field("as_of_origin", pa.string()),  # null: not known (a version before 8)
        pa.field("source_path", pa.string(), nullable=False),
        pa.field("position", pa.int64(), nullable=False),
        pa.field("text_hash", pa.string(), nullable=False),
        pa.field("effective_date", pa.date32()),
        pa.field("rule_id", pa.string()),
        pa.field("text", pa.string(), nullable=False),
    ]
)

# Each non-English ruling of a card beside the English ruling it translates
# (pipeline.folding.translate).
TRANSLATIONS = make_schema(
    [
        pa.field("text_hash", pa.string(), nullable=False),
        pa.field("card", pa.string()),
        pa.field("lang", pa.string(), nullable=False),
        pa.field("original_text_hash", pa.string()),
        pa.field("score", pa.float64(), nullable=False),
        pa.field("margin", pa.float64(), nullable=False),
        pa.field("original_current", pa.bool_()),
        pa.field("method", pa.string(), nullable=False),
    ]
)

# Cards' printed names in other languages, learned from the files read (MTGJSON
# foreignData): what a translated title is re-keyed by (pipeline.folding.names).
NAMES = make_schema(
    [
        pa.field("name", pa.string(), nullable=False),
        pa.field("lang", pa.string(), nullable=False),
        pa.field("card", pa.string(), nullable=False),
        pa.field("oracle_id", pa.string()),
        pa.field("first_run", pa.int64(), nullable=False),
    ]
)

# The text each ruling key was first stored with, or changed to, by a run: the rulings
# table's texts kept where nothing rewrites them (a sighting leaves its ruling's text out).
RULING_TEXTS = make_schema(
    [
        pa.field("run", pa.int64(), nullable=False),
        *_KEY_FIELDS,
        pa.field("rule_id", pa.string()),
        pa.field("text", pa.string(), nullable=False),
    ]
)

# The translated names each run learned (the rows it added to `names`).
NAMES_LEARNED = make_schema(
    [
        pa.field("run", pa.int64(), nullable=False),
        *(NAMES.field(name) for name in ("name", "lang", "card", "oracle_id")),
    ]
)

CARD_FACE = pa.struct(
    [
        pa.field("name", pa.string()),
        pa.field("mana_cost", pa.string()),
        pa.field("type_line", pa.string()),
        pa.field("oracle_text", pa.string()),
        pa.field("power", pa.string()),
        pa.field("toughness", pa.string()),
        pa.field("loyalty", pa.string()),
        pa.field("defense", pa.string()),
    ]
)
LEGALITY = pa.struct([pa.field("format", pa.string()), pa.field("status", pa.string())])
PRINTING = pa.struct([pa.field("set_code", pa.string()), pa.field("released", pa.date32())])
_STRINGS = pa.list_(pa.string())

# What a card source said of a card: one row per (card, source) whenever it differs from
# the version in force in that source at its date (pipeline/diffing/oracle.py). The
# columns after `source_path` are the card's own.
_CARD_FIELDS: list[pa.Field[Any]] = [
    pa.field("card", pa.string(), nullable=False),
    pa.field("oracle_id", pa.string()),
    pa.field("layout", pa.string()),
    pa.field("faces", pa.list_(CARD_FACE), nullable=False),
    pa.field("oracle_text", pa.string()),  # the faces' texts, "\n//\n" between faces
    pa.field("oracle_hash", pa.string(), nullable=False),  # of the faces' names and texts
    pa.field("type_line", pa.string()),
    pa.field("mana_cost", pa.string()),
    pa.field("mana_value", pa.float64()),
    pa.field("supertypes", _STRINGS, nullable=False),
    pa.field("types", _STRINGS, nullable=False),
    pa.field("subtypes", _STRINGS, nullable=False),
    pa.field("colors", _STRINGS, nullable=False),
    pa.field("color_identity", _STRINGS, nullable=False),
    pa.field("keywords", _STRINGS, nullable=False),
    pa.field("power", pa.string()),
    pa.field("toughness", pa.string()),
    pa.field("loyalty", pa.string()),
    pa.field("defense", pa.string()),
    pa.field("legalities", pa.list_(LEGALITY), nullable=False),
    pa.field("legal_in", _STRINGS, nullable=False),  # the formats whose status is "legal"
    pa.field("printings", pa.list_(PRINTING), nullable=False),
    pa.field("first_printed", pa.date32()),
    pa.field("last_printed", pa.date32()),
    pa.field("facts_hash", pa.string(), nullable=False),  # of every column from `layout` on
]
CARD_VERSIONS = make_schema(
    [
        pa.field("run", pa.int64(), nullable=False),
        pa.field("as_of", pa.date32()),
        pa.field("source", pa.string(), nullable=False),
        pa.field("source_path", pa.string(), nullable=False),
        *_CARD_FIELDS,
    ]
)
# One row per card: the latest version of its freshest source (CARD_VERSIONS), with when
# its Oracle text, as that source gives it, was first seen.
CARDS = make_schema(
    [
        *_CARD_FIELDS,
        pa.field("source", pa.string(), nullable=False),
        pa.field("source_path", pa.string(), nullable=False),
        pa.field("as_of", pa.date32()),
        pa.field("run", pa.int64(), nullable=False),  # the run that stored this version
        pa.field("oracle_since", pa.date32()),  # as_of of the first version with this text
        pa.field("oracle_versions", pa.int64(), nullable=False),  # distinct texts, in order
    ]
)

# A sightings part may write a run of sightings that repeat an earlier run's as one row
# (storage/carry.py): `carried` sightings from `position` on, equal but for the columns of
# their file (FILE_COLUMNS) to those of run `base_run` from `base_position` on. Such a
# row leaves every other column null. Readers expand it; only the files hold these columns.
CARRY_COLUMNS = ("carried", "base_run", "base_position")
FILE_COLUMNS = ("source_path", "source_sha256", "source", "fetched_at", "as_of", "layout")

TABLES: dict[str, pa.Schema] = {
    "rulings": RULINGS,
    "sightings": SIGHTINGS,
    "files": FILES,
    "runs": RUNS,
    "changes": CHANGES,
    "state": STATE,
    "translations": TRANSLATIONS,
    "names": NAMES,
    "cards": CARDS,
    "ruling_texts": RULING_TEXTS,
    "names_learned": NAMES_LEARNED,
    "card_versions": CARD_VERSIONS,
}
# Append-only tables: a Hive-partitioned folder, one part per run
# (`sightings/run=42/part-0.parquet`), whose files hold every column but `run`: readers
# take it from the folder name. The others are one file each, rewritten by a run.
PARTITIONED = frozenset({"sightings", "changes", "ruling_texts", "names_learned", "card_versions"})
PARTITION_KEY = "run"
# Rewritten tables kept as a folder of segments of whole cards (segments.py):
# `rulings/000003.parquet`. The others are one file each.
SEGMENTED = ("rulings", "state")
# The order of the rows of these two tables: the columns, and those whose nulls come first.
ROW_ORDER: dict[str, tuple[list[str], list[str]]] = {
    "rulings": (["card", "effective_date", "text_hash", "rule_id"], []),
    "state": (
        ["card", "source", "source_path", "position"],
        ["card", "source", "source_path", "position"],
    ),
}


def with_metadata(name: str, schema: pa.Schema) -> pa.Schema:
    """Attach the table name and schema version that readers and migrations check."""
    return schema.with_metadata(
        {VERSION_KEY: str(SCHEMA_VERSION).encode(), TABLE_KEY: name.encode()}
    )


def _v1_to_v2(name: str, table: pa.Table) -> pa.Table:
    """Version 2 keeps the manifest's `fetched_at` on each sighting; older rows lack it.

    The first version-1 datasets also lack the rule numbers of their changes (added before
    the version was first raised): they come back empty.
    """
    missing = {"sightings": ["fetched_at"], "changes": ["old_rule_id", "new_rule_id"]}
    for column in missing.get(name, []):
        if column not in table.column_names:
            table = table.append_column(column, pa.nulls(table.num_rows, pa.string()))
    return table


def _v2_to_v3(name: str, table: pa.Table) -> pa.Table:
    """Version 3 keeps each file's size and modification time, to skip it without reading."""
    if name != "files" or "size" in table.column_names:
        return table
    for column in ("size", "mtime_ns"):
        table = table.append_column(column, pa.nulls(table.num_rows, pa.int64()))
    return table


def _v3_to_v4(name: str, table: pa.Table) -> pa.Table:
    """Version 4: as-of dates, how changes were paired, replacements, parts per run.

    Each document's as-of date is kept, each change says how its rulings were paired
    (`match`) and what replaced a removal, and sightings and changes are split by run.
    Older rows have no as-of date; older changes were paired by characters alone, and no
    removal was told as replaced. commit.py and ingest.upgrade() move the files.
    """
    missing = {
        "sightings": ["as_of"],
        "changes": ["as_of"],
        "files": ["as_of", "as_of_origin"],
    }
    for column in missing.get(name, []):
        if column not in table.column_names:
            kind = pa.string() if column == "as_of_origin" else pa.date32()
            table = table.append_column(column, pa.nulls(table.num_rows, kind))
    if name != "changes" or "match" in table.column_names:
        return table
    table = table.append_column(
        "match",
        pc.if_else(
            pc.equal(table["change"].cast(pa.string()), pa.scalar("amended")),
            pc.if_else(
                pc.is_valid(table["old_rule_id"]), pa.scalar("rule"), pa.scalar("characters")
            ),
            pa.scalar(None, pa.string()),
        ),
    )
    return table.append_column("replaced_by", pa.nulls(table.num_rows, pa.string()))


def _v4_to_v5(name: str, table: pa.Table) -> pa.Table:  # noqa: ARG001 - the same for all
    """Version 5 keeps rulings and state as segments of whole cards; no column changed.

    ingest.upgrade() cuts the single files of version 4 into segments.
    """
    return table


def _v5_to_v6(name: str, table: pa.Table) -> pa.Table:
    """Version 6 may keep a run of repeated sightings as one row (storage/carry.py).

    Older parts hold every sighting in full: none carries another run's rows. Each run
    also counts the changes of rules it found, so that a changelog reads the parts of the
    runs that have some; older runs' count is unknown (null), and their parts are read.
    """
    missing = {"sightings": CARRY_COLUMNS, "runs": ("rule_changes",)}.get(name, ())
    for column in missing:
        if column not in table.column_names:
            table = table.append_column(column, pa.nulls(table.num_rows, pa.int64()))
    return table


def _v6_to_v7(name: str, table: pa.Table) -> pa.Table:
    """Version 7: sightings say their set, changes their kind and card's oracle id.

    Older sightings name no set. An older change's kind follows from its rule numbers, as
    a new one's does; its oracle id is unknown. Rules are keyed by their number too from
    version 7: ingest.upgrade() folds the rulings' rules again.
    """
    if name == "sightings" and "set_code" not in table.column_names:
        table = table.append_column("set_code", pa.nulls(table.num_rows, pa.string()))
        table = table.append_column("set_released", pa.nulls(table.num_rows, pa.date32()))
    if name == "changes" and "kind" not in table.column_names:
        table = table.append_column("oracle_id", pa.nulls(table.num_rows, pa.string()))
        numbered = {"new_rule_id", "old_rule_id"} <= set(table.column_names)  # a column read?
        numbers = pc.coalesce(table["new_rule_id"], table["old_rule_id"]) if numbered else None
        kinds = pa.nulls(table.num_rows, pa.string()) if numbers is None else kinds_of(numbers)
        table = table.append_column("kind", kinds)
    return table


def _v7_to_v8(name: str, table: pa.Table) -> pa.Table:
    """Version 8: `current` is in force today across a card's sources; the state knows origins.

    A version-7 `current` was per (card, source): it becomes `source_current`, and stays
    `current` until ingest.upgrade() weighs the card's sources (in one commit before the
    next run; the API weighs them as it reads until then). Older state rows do not say
    where their as-of date came from: the upgrade takes it from files.parquet.
    """
    if name == "rulings" and "source_current" not in table.column_names:
        table = table.append_column("source_current", table["current"])
    if name == "state" and "as_of_origin" not in table.column_names:
        at = table.schema.get_field_index("as_of") + 1
        table = table.add_column(at, "as_of_origin", pa.nulls(table.num_rows, pa.string()))
    return table


def _v8_to_v9(name: str, table: pa.Table) -> pa.Table:
    """Version 9: runs log what they learn in parts; files say how many cards they gave.

    The new tables (ruling_texts, names_learned, card_versions, cards) did not exist: an
    upgrade writes the first two from `rulings` and `names` (storage/upgrade.py); cards are
    learned as card sources are read again (a file of a card layout whose `cards` is null
    is read again, once). Older files rows asked no card: `cards` null.
    """
    if name == "files" and "cards" not in table.column_names:
        table = table.append_column("cards", pa.nulls(table.num_rows, pa.int64()))
    return table


_RULE_NUMBER = r"^\d{3}(\.\d+[a-z]*)?\.?$"  # 702, 702.62, 702.62a; glossary terms are words


def kinds_of(rule_ids: Column) -> Column:
    """Each row's kind from its rule number: a rule, a glossary term, or (none) a ruling."""
    numbers = rule_ids.cast(pa.string())
    rule = false_if_null(pc.match_substring_regex(numbers, _RULE_NUMBER))
    named = pc.if_else(rule, pa.scalar("rule"), pa.scalar("glossary"))
    kinds: Column = pc.if_else(pc.is_valid(numbers), named, pa.scalar("ruling"))
    return kinds


# MIGRATIONS[n] turns a table of schema version n into one of version n + 1.
MIGRATIONS: dict[int, Callable[[str, pa.Table], pa.Table]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
    5: _v5_to_v6,
    6: _v6_to_v7,
    7: _v7_to_v8,
    8: _v8_to_v9,
}


# In memory, the long `text` columns are dictionary-encoded: the same rulings recur across
# cards, files and runs, so a million rows hold far fewer distinct texts. So are the
# sightings' columns that repeat per file (path, sha256), per text (text_hash) or take few
# values; keys are compared by integer codes (keys.py), which read dictionaries as they
# are. On disk all are plain strings (Parquet dictionary-encodes them by page itself).
ENCODED_STRING = pa.dictionary(pa.int32(), pa.string())
ENCODED_IN_MEMORY: dict[str, frozenset[str]] = {
    "rulings": frozenset({"text", "text_hash"}),
    "changes": frozenset({"change", "group", "new_text_hash", "old_text_hash"}),
    "state": frozenset(
        {"card", "oracle_id", "source", "source_path", "text", "text_hash", "rule_id"}
    ),
    "sightings": frozenset(
        {
            "text",
            "source_path",
            "source_sha256",
            "fetched_at",
            "layout",
            "date_printed",
            "card_printed",
            "card_origin",
            "kind",
            "oracle_id",
            "text_hash",
            "card",
            "source",
        }
    ),
}


def on_disk(name: str) -> pa.Schema:
    """Table NAME's schema in its files: a partitioned table's files leave out `run`.

    A sightings part also holds the columns of carried rows (CARRY_COLUMNS), whose other
    columns but their file's and the position are null.
    """
    schema = TABLES[name]
    if name in PARTITIONED:
        schema = schema.remove(schema.get_field_index(PARTITION_KEY))
    if name == "sightings":
        kept = {*FILE_COLUMNS, "position"}
        fields = [f if f.name in kept else f.with_nullable(nullable=True) for f in schema]
        schema = make_schema([*fields, *(pa.field(c, pa.int64()) for c in CARRY_COLUMNS)])
    return schema


def written(name: str) -> pa.Schema:
    """Table NAME's columns as a writer takes them: on_disk(), with the in-memory encodings."""
    schema = on_disk(name)
    for column in ENCODED_IN_MEMORY.get(name, ()):
        index = schema.get_field_index(column)
        schema = schema.set(index, schema.field(index).with_type(ENCODED_STRING))
    return schema


def in_memory(name: str) -> pa.Schema:
    """Table NAME's schema as the stages hold it: some string columns dictionary-encoded."""
    schema = TABLES[name]
    for column in ENCODED_IN_MEMORY.get(name, ()):
        index = schema.get_field_index(column)
        schema = schema.set(index, schema.field(index).with_type(ENCODED_STRING))
    return schema
