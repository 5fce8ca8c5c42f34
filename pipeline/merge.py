"""Pure table stages: sightings to Arrow, and folding them into the deduplicated rulings."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.schema import RULINGS, SIGHTINGS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pipeline.models import Sighting

KEY = ["text_hash", "card", "effective_date"]
# Nulls (unknown card, undated) sort last.
RULINGS_ORDER = [(name, "ascending", "at_end") for name in ("card", "effective_date", "text_hash")]
RULING_TEXT = "ruling_text"
# The rulings columns merge_rulings() builds; `current` is added from the snapshots.
MERGED = [name for name in RULINGS.names if name != "current"]
_MERGED_SCHEMA = pa.schema([RULINGS.field(name) for name in MERGED])
_FIRST = ["card_printed", "oracle_id", "rule_id", "text", "lang", "kind"]


def sightings_table(sightings: Sequence[Sighting], run: int) -> pa.Table:
    """Arrow rows of SIGHTINGS for RUN, ordered by source path and position.

    The extra last column `ruling_text` is the text of the ruling each sighting is keyed
    to (it differs from the text read where a stripped symbol was repaired); it feeds
    merge_rulings() and is not stored.
    """
    ordered = sorted(sightings, key=lambda s: (s.source_path, s.position))
    columns: dict[str, list[object]] = {name: [] for name in SIGHTINGS.names}
    for s in ordered:
        for name in SIGHTINGS.names:
            columns[name].append(run if name == "run" else getattr(s, name))
    table = pa.table(columns, schema=SIGHTINGS)
    ruling_text = pa.array([s.ruling_text or s.text for s in ordered], pa.string())
    return table.append_column(RULING_TEXT, ruling_text)


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
        .append_column("sightings", pa.array([1] * sightings.num_rows, pa.int64()))
    )
    combined = pa.concat_tables(
        [existing.select(MERGED).cast(_MERGED_SCHEMA), fresh.select(MERGED).cast(_MERGED_SCHEMA)]
    )
    grouped = combined.group_by(KEY, use_threads=False).aggregate(
        [(name, "first") for name in _FIRST]
        + [("first_run", "min"), ("last_run", "max"), ("sightings", "sum")]
    )
    renamed = grouped.rename_columns([_strip_suffix(n) for n in grouped.column_names])
    ordered = renamed.select(MERGED).cast(_MERGED_SCHEMA)
    # The stubs lag pyarrow: they do not know the per-key null placement.
    order = pc.sort_indices(ordered, sort_keys=RULINGS_ORDER)  # type: ignore[arg-type]
    return ordered.take(order)


def _strip_suffix(name: str) -> str:
    for suffix in ("_first", "_min", "_max", "_sum"):
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def texts_with_symbols(rulings: pa.Table) -> list[str]:
    """The stored texts that hold a symbol such as {X}: what stripped copies can match."""
    texts = rulings["text"]
    mask = pc.match_substring_regex(texts, r"\{[^{}\s]{1,8}\}")
    return [t for t in pc.filter(texts, mask).to_pylist() if t is not None]


def known_languages(rulings: pa.Table) -> dict[str, str]:
    """Map each stored text hash to its language, so no text is detected twice."""
    table = rulings.select(["text_hash", "lang"]).group_by("text_hash", use_threads=False)
    firsts = table.aggregate([("lang", "first")])
    pairs = zip(firsts["text_hash"].to_pylist(), firsts["lang_first"].to_pylist(), strict=True)
    return {str(h): str(lang) for h, lang in pairs}
