"""Re-key rulings whose mana symbols a scraper stripped to the same ruling with its symbols."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import pyarrow.compute as pc

from pipeline.merge import lookup, replace_column, strings
from pipeline.normalize import SYMBOL_PATTERN, skeleton, text_hash

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pyarrow as pa


def repair_map(
    stripped: dict[str, str], known_texts: Iterable[str]
) -> tuple[dict[str, tuple[str, str]], dict[str, int]]:
    """Match texts without symbols to the one ruling with symbols they are a stripped copy of.

    STRIPPED maps the hash of each text without symbols to the text; KNOWN_TEXTS are texts
    with symbols (from the dataset and the run). A text whose skeleton equals that of
    exactly one known text maps to (its hash, its text). Returns that map, and for texts
    that match several rulings, how many.
    """
    index: dict[str, set[str]] = defaultdict(set)
    for text in known_texts:
        index[skeleton(text)].add(text)
    repaired: dict[str, tuple[str, str]] = {}
    unsure: dict[str, int] = {}
    for old_hash, text in stripped.items():
        candidates = {text_hash(t): t for t in index.get(skeleton(text), ())}
        if len(candidates) == 1:
            [(new_hash, new_text)] = candidates.items()
            repaired[old_hash] = (new_hash, new_text)
        elif candidates:
            unsure[old_hash] = len(candidates)
    return repaired, unsure


def repair(table: pa.Table, known_texts: Iterable[str]) -> tuple[pa.Table, list[str]]:
    """Re-key the sightings in TABLE that are stripped copies of a ruling with symbols.

    Their `text_hash` becomes the ruling's, `repaired_from` keeps the hash they were read
    with and `ruling_text` the ruling's text; `text` stays as read. A gap that matches
    several rulings is stored as read, with a warning.
    """
    has_symbols = pc.match_substring_regex(table["text"], SYMBOL_PATTERN)
    with_symbols = table.filter(has_symbols)
    without = table.filter(pc.invert(has_symbols))
    firsts = without.group_by("text_hash", use_threads=False).aggregate(
        [("text", "first"), ("source_path", "first"), ("position", "first")]
    )
    hashes = strings(firsts["text_hash"])
    stripped = dict(zip(hashes, strings(firsts["text_first"]), strict=True))
    repaired, unsure = repair_map(stripped, [*known_texts, *strings(with_symbols["text"])])
    where = zip(
        hashes,
        strings(firsts["source_path_first"]),
        firsts["position_first"].to_pylist(),
        strict=True,
    )
    warnings = [
        f"{path} #{position}: a stripped symbol matches {unsure[h]} different rulings; "
        "stored as read"
        for h, path, position in where
        if h in unsure
    ]
    if not repaired:
        return table, warnings
    hit = pc.is_valid(lookup(table["text_hash"], {h: h for h in repaired}))
    table = replace_column(
        table, "repaired_from", pc.if_else(hit, table["text_hash"], table["repaired_from"])
    )
    new_text = lookup(table["text_hash"], {h: text for h, (_, text) in repaired.items()})
    new_hash = lookup(table["text_hash"], {h: new for h, (new, _) in repaired.items()})
    table = replace_column(table, "ruling_text", pc.coalesce(new_text, table["ruling_text"]))
    return replace_column(table, "text_hash", pc.coalesce(new_hash, table["text_hash"])), warnings
