"""Pure table stages: sightings to Arrow, and folding them into the deduplicated rulings."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.keys import codes, first_rows
from pipeline.language import detect_language
from pipeline.models import Sighting
from pipeline.normalize import SYMBOL_PATTERN, clean, has_symbol_gap, hash_clean
from pipeline.schema import ROW_ORDER, RULINGS, SIGHTINGS, in_memory, make_schema

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Sequence

KEY = ["text_hash", "card", "effective_date"]
# Rulings are ordered by these, ascending; nulls (unknown card, undated) sort last.
_ORDER, _ = ROW_ORDER["rulings"]
RULING_TEXT = "ruling_text"
# The rulings columns merge_rulings() builds; `current` is added from the snapshots.
MERGED = [name for name in RULINGS.names if name != "current"]
_MERGED_SCHEMA = pa.schema([in_memory("rulings").field(name) for name in MERGED])
# Sightings in flight: `lang` stays null until assign_languages() fills it.
_BATCH = SIGHTINGS.set(SIGHTINGS.get_field_index("lang"), pa.field("lang", pa.string()))
_BY_FILE_AND_POSITION = operator.attrgetter("source_path", "position")
_FIRST = ["card_printed", "oracle_id", "rule_id", "text", "lang", "kind"]
_COUNTERS = ["first_run", "last_run", "sightings"]
# Raw text -> (clean text, its hash, whether it shows a stripped-symbol gap), kept for the
# life of the process: the same rulings recur across the batches a worker is given.
_TEXTS: dict[str, tuple[str, str, bool]] = {}
_TEXTS_LIMIT = 50_000


def sightings_table(sightings: Sequence[Sighting], run: int) -> pa.Table:
    """Arrow rows of SIGHTINGS for RUN, ordered by source path and position.

    Texts are cleaned, hashed and checked for stripped-symbol gaps once per distinct text:
    the same rulings recur across cards and files.
    """
    ordered = sorted(sightings, key=_BY_FILE_AND_POSITION)
    values = zip(*ordered, strict=True) if ordered else [() for _ in Sighting._fields]
    columns: dict[str, Any] = dict(zip(Sighting._fields, values, strict=True))
    known = _TEXTS
    if len(known) > _TEXTS_LIMIT:
        known.clear()
    for raw in dict.fromkeys(columns["text"]):
        if raw not in known:
            cleaned = clean(raw)
            known[raw] = (cleaned, hash_clean(cleaned), has_symbol_gap(raw))
    texts = [known[raw] for raw in columns["text"]]
    columns["text"] = [text for text, _, _ in texts]
    columns["text_hash"] = [text_hash for _, text_hash, _ in texts]
    columns["symbol_gap"] = [gap for _, _, gap in texts]
    columns["repaired_from"] = [None] * len(ordered)
    columns["run"] = [run] * len(ordered)
    columns["as_of"] = [None] * len(ordered)  # the file's, once every file is read (dated())
    return pa.table(columns, schema=_BATCH)


class TextPool:
    """Distinct texts of a run and their hashes, so that its sightings hold each once.

    Each text (and its hash, a function of it) gets an id; `text` and `text_hash` become
    two dictionary arrays over the same ids. Batches are encoded as they arrive, so their
    string columns are freed batch by batch.
    """

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._hashes: list[str] = []

    def encode(self, batch: pa.Table) -> pa.Table:
        """BATCH with `text` and `text_hash` as ids into the pool (int32).

        A dictionary-encoded text column (as batches come from the workers) costs one
        lookup per distinct text of the batch, not one per row.
        """
        ids = self._ids
        column = as_dictionary(batch["text"])
        texts = strings(column.dictionary)
        local = [ids.setdefault(text, len(ids)) for text in texts]
        if len(ids) > len(self._hashes):
            # The hash of each new text, from the first row that holds it (computed for a
            # text no row holds, which a sliced column's dictionary may keep).
            count = len(column.dictionary)
            first = pc.index_in(pa.array(range(count), pa.int32()), value_set=column.indices)
            hashes = pc.take(batch["text_hash"], first).to_pylist()
            for pooled, text, text_hash in zip(local, texts, hashes, strict=True):
                if pooled == len(self._hashes):
                    self._hashes.append(text_hash or hash_clean(text))
        found = pc.take(pa.array(local, pa.int32()), column.indices)
        return replace_column(replace_column(batch, "text", found), "text_hash", found)

    def decode(self, table: pa.Table) -> pa.Table:
        """TABLE (from encode) with `text` and `text_hash` dictionary-encoded over the pool.

        It gains `ruling_text`: the text of the ruling each sighting is keyed to, the text
        read until repair() re-keys a stripped copy. It feeds merge_rulings() and is not
        stored.
        """
        ids = table["text"].combine_chunks() if table.num_rows else pa.array([], pa.int32())
        text = pa.DictionaryArray.from_arrays(ids, pa.array(list(self._ids), pa.string()))
        hashes = pa.DictionaryArray.from_arrays(ids, pa.array(self._hashes, pa.string()))
        table = replace_column(replace_column(table, "text", text), "text_hash", hashes)
        return table.append_column(RULING_TEXT, text)


def dated(sightings: pa.Table, as_of: dict[str, dt.date]) -> pa.Table:
    """SIGHTINGS with `as_of`: the as-of date of the file each row was read from."""
    found = lookup(sightings["source_path"], as_of, pa.date32())
    return replace_column(sightings, "as_of", found)


def distinct_texts(column: Any) -> list[str]:  # noqa: ANN401 - an Arrow string column
    """The distinct values of a text column, plain or dictionary-encoded."""
    if pa.types.is_dictionary(column.type):
        seen: dict[str, None] = {}
        for chunk in column.chunks:
            seen.update(dict.fromkeys(strings(chunk.dictionary)))
        return list(seen)
    return strings(pc.unique(column))


def as_dictionary(column: Any) -> Any:  # noqa: ANN401 - Arrow in, a DictionaryArray out
    """A text column as one dictionary array (encoding it if it is plain)."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    combined = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return combined.cast(pa.dictionary(pa.int32(), pa.string()))


def merge_rulings(existing: pa.Table, sightings: pa.Table) -> pa.Table:
    """Fold new sightings into the rulings: one row per (text_hash, card, effective_date).

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
    combined = pa.concat_tables(
        [existing.select(MERGED).cast(_MERGED_SCHEMA), fresh.select(MERGED).cast(_MERGED_SCHEMA)]
    )
    # Group integer codes of the keys, with the counters; codes sort as the keys do, so
    # every column is then gathered once, from each key's first row, in the rulings' order.
    [key_codes] = codes([combined], _ORDER)
    counters = combined.select(_COUNTERS).append_column("_key", key_codes)
    counters = counters.append_column("_row", pa.array(range(combined.num_rows), pa.int64()))
    grouped = counters.group_by("_key", use_threads=False).aggregate(
        [("_row", "min"), ("first_run", "min"), ("last_run", "max"), ("sightings", "sum")]
    )
    order = pc.sort_indices(grouped["_key"])
    merged = combined.take(pc.take(grouped["_row_min"], order))
    totals = ("first_run_min", "last_run_max", "sightings_sum")
    for name, total in zip(_COUNTERS, totals, strict=True):
        merged = replace_column(merged, name, pc.take(grouped[total], order))
    return merged


def texts_with_symbols(rulings: pa.Table) -> list[str]:
    """The stored texts that hold a symbol such as {X}: what stripped copies can match."""
    texts = pa.array(distinct_texts(rulings["text"]), pa.string())
    return strings(texts.filter(pc.match_substring_regex(texts, SYMBOL_PATTERN)))


def known_languages(rulings: pa.Table) -> dict[str, str]:
    """Map each stored text hash to its language, so no text is detected twice."""
    chosen = rulings.select(["text_hash", "lang"]).take(first_rows(rulings, ["text_hash"]))
    pairs = zip(chosen["text_hash"].to_pylist(), chosen["lang"].to_pylist(), strict=True)
    return {str(h): str(lang) for h, lang in pairs}


def assign_languages(sightings: pa.Table, known: dict[str, str]) -> pa.Table:
    """Fill `lang` where the source declared none: once per distinct ruling text.

    KNOWN maps text hashes to the languages the dataset already holds.
    """
    firsts = first_rows(sightings, ["text_hash"], where=pc.is_null(sightings["lang"]))
    texts = sightings[RULING_TEXT].take(firsts)
    text_hashes = sightings["text_hash"].take(firsts)
    langs = dict(known)
    for text_hash, text in zip(strings(text_hashes), strings(texts), strict=True):
        if text_hash not in langs:
            langs[text_hash] = detect_language(text)
    found = lookup(sightings["text_hash"], langs)
    return replace_column(sightings, "lang", pc.coalesce(sightings["lang"], found))


def strings(column: Any) -> list[str]:  # noqa: ANN401 - any Arrow string column
    """A string column without nulls as a Python list."""
    return [str(value) for value in column.to_pylist()]


def lookup(keys: Any, mapping: dict[str, Any], kind: pa.DataType | None = None) -> Any:  # noqa: ANN401
    """Map an Arrow string column through MAPPING; keys it lacks become null."""
    at = pc.index_in(keys, value_set=pa.array(list(mapping), pa.string()))
    return pc.take(pa.array(list(mapping.values()), kind or pa.string()), at)


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


def replace_column(table: pa.Table, name: str, values: Any) -> pa.Table:  # noqa: ANN401
    """TABLE with column NAME replaced by VALUES (any Arrow array)."""
    return table.set_column(table.schema.get_field_index(name), name, values)
