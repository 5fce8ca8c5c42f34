"""Re-key rulings whose mana symbols a scraper stripped to the same ruling with its symbols."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import (
    Column,
    Dictionary,
    as_dictionary,
    encoded,
    lookup,
    replace_column,
    strings,
    used_only,
)
from pipeline.reading.sightings import RULING_TEXT
from pipeline.schema import make_schema
from pipeline.text.normalize import SYMBOL_PATTERN, fold, skeleton_of_folded

if TYPE_CHECKING:
    from collections.abc import Iterable


def repair_map(
    stripped_hashes: Iterable[str], index: dict[str, dict[str, str]]
) -> tuple[dict[str, tuple[str, str]], dict[str, int]]:
    """Match texts without symbols to the one ruling with symbols they are a stripped copy of.

    STRIPPED_HASHES are the text hashes of texts without symbols; INDEX holds the texts
    with symbols (from the dataset and the run) by skeleton (by_skeleton). The skeleton of
    a text without symbols is its folded text, so its text hash is the hash of its
    skeleton: only the texts with symbols need a skeleton computed. Returns {stripped hash:
    (ruling hash, ruling text)} for texts that match exactly one ruling, and for those that
    match several, how many.
    """
    repaired: dict[str, tuple[str, str]] = {}
    unsure: dict[str, int] = {}
    for old_hash in stripped_hashes:
        candidates = index.get(old_hash, {})
        if len(candidates) == 1:
            [(new_hash, new_text)] = candidates.items()
            repaired[old_hash] = (new_hash, new_text)
        elif candidates:
            unsure[old_hash] = len(candidates)
    return repaired, unsure


def by_skeleton(texts: Iterable[str]) -> dict[str, dict[str, str]]:
    """TEXTS by the hash of their skeleton, then by their own text hash (each folded once).

    Two texts with one hash (curly and straight quotes) keep the one given last.
    """
    index: dict[str, dict[str, str]] = defaultdict(dict)
    for text in texts:
        folded = fold(text)
        own = hashlib.sha256(folded.encode("utf-8")).hexdigest()
        index[hashlib.sha256(skeleton_of_folded(folded).encode("utf-8")).hexdigest()][own] = text
    return index


def repair(table: pa.Table, known_texts: Iterable[str]) -> tuple[pa.Table, list[str]]:
    """Re-key the sightings in TABLE that are stripped copies of a ruling with symbols.

    Their `text_hash` becomes the ruling's, `repaired_from` keeps the hash they were read
    with and `ruling_text` the ruling's text; `text` stays as read. A gap that matches
    several rulings is stored as read, with a warning.
    """
    # Texts are looked at once each (the column's distinct values), never row by row.
    values = used_only(as_dictionary(table["text"])).dictionary
    symbol_texts = strings(values.filter(pc.match_substring_regex(values, SYMBOL_PATTERN)))
    known = {*known_texts, *symbol_texts}
    if not known:
        return table, []
    index = by_skeleton(sorted(known))  # sorted: the same text kept whatever the set's order
    # A text with symbols is nobody's stripped copy: its hash is one of the index's own.
    symbol_hashes = pa.array([own for texts in index.values() for own in texts], pa.string())
    hashes = pc.unique(table["text_hash"])
    plain = hashes.filter(pc.invert(pc.is_in(hashes, value_set=symbol_hashes)))
    repaired, unsure = repair_map(strings(plain), index)
    places = table.select(["text_hash", "source_path", "position"])
    doubtful = places.filter(
        pc.is_in(places["text_hash"], value_set=pa.array(list(unsure), pa.string()))
    )
    plain_text = [pa.field(name, pa.string()) for name in ("text_hash", "source_path")]
    doubtful = doubtful.cast(make_schema([*plain_text, places.field(2)]))
    firsts = doubtful.group_by("text_hash", use_threads=False).aggregate(
        [("source_path", "first"), ("position", "first")]
    )
    where = zip(
        strings(firsts["text_hash"]),
        strings(firsts["source_path_first"]),
        firsts["position_first"].to_pylist(),
        strict=True,
    )
    warnings = [
        f"{path} #{position}: a stripped symbol matches {unsure[h]} different rulings; "
        "stored as read"
        for h, path, position in where
    ]
    if not repaired:
        return table, warnings
    hit = pc.is_valid(lookup(table["text_hash"], {h: h for h in repaired}))
    table = replace_column(
        table, "repaired_from", pc.if_else(hit, table["text_hash"], table["repaired_from"])
    )
    table = replace_column(table, RULING_TEXT, _with_texts(table, repaired))
    new_hash = lookup(table["text_hash"], {h: new for h, (new, _) in repaired.items()})
    renamed: Column = pc.coalesce(new_hash, table["text_hash"])
    return replace_column(table, "text_hash", pc.dictionary_encode(renamed)), warnings


def _with_texts(table: pa.Table, repaired: dict[str, tuple[str, str]]) -> Dictionary:
    """The ruling_text column with the repaired rows pointing at their rulings' texts.

    A ruling's text the column's dictionary holds already (read with its symbols in the
    same run) keeps its place; only the others are added. A dictionary holding a text
    twice splits its rows in two groups (keys.codes), and the Parquet writer stores one in
    plain pages after a dictionary page whose tail is uninitialized memory.
    """
    column = as_dictionary(table[RULING_TEXT])
    texts = list(dict.fromkeys(text for _, text in repaired.values()))
    # Each text's first place in the dictionary, if any: the dictionary hashed once.
    held = pc.index_in(column.dictionary, value_set=pa.array(texts, pa.string()))
    first = pc.index_in(pa.array(range(len(texts)), pa.int32()), value_set=held).to_pylist()
    added = [text for text, place in zip(texts, first, strict=True) if place is None]
    dictionary = pa.concat_arrays([column.dictionary, pa.array(added, pa.string())])
    place_of = dict(zip(added, range(len(column.dictionary), len(dictionary)), strict=True))
    place_of |= {text: place for text, place in zip(texts, first, strict=True) if place is not None}
    extra = {h: str(place_of[text]) for h, (_, text) in repaired.items()}
    at = pc.cast(lookup(table["text_hash"], extra), pa.int32())
    indices = pc.coalesce(at, column.indices)
    return encoded(indices, dictionary)
