"""What each table is on disk: one description per table, built once from schema.py.

A table is stored one of three ways: one file rewritten by each run (`files.parquet`), a
folder of segments of whole cards of which a run rewrites some (`rulings/000003.parquet`,
segments.py), or a Hive-partitioned folder of immutable parts, one per run
(`sightings/run=42/part-0.parquet`). Code asks `kind_of(name).partitioned`, or loops over
`kinds()` or the tables `stored_as(Storage.PARTS)`, rather than listing table names;
schema.py stays the one place that says which table is which.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pipeline.schema import ENCODED_IN_MEMORY, PARTITIONED, ROW_ORDER, SEGMENTED, TABLES


class Storage(enum.Enum):
    """How a table's rows are kept in the dataset folder."""

    FILE = "file"  # NAME.parquet, rewritten by a run
    SEGMENTS = "segments"  # NAME/NNNNNN.parquet, a run rewrites those it changes
    PARTS = "parts"  # NAME/run=N/part-0.parquet, one immutable part per run


@dataclass(frozen=True, slots=True)
class TableKind:
    """How table NAME is stored, and what its files leave out that a reader puts back.

    CARRIES: its parts hold carried rows (carry.py), expanded from the parts of earlier
    runs. RULING_TEXTS: its rows leave out a text equal to their ruling's (texts.py).
    INDEXED: its parts have the derived index a card's read goes through (index.py).
    ORDER: its rows' order (schema.ROW_ORDER: the columns, and those whose nulls come
    first), kept across its segments. ENCODED: its columns held dictionary-encoded.
    """

    name: str
    storage: Storage
    carries: bool = False
    ruling_texts: bool = False
    indexed: bool = False
    order: tuple[list[str], list[str]] | None = None
    encoded: frozenset[str] = frozenset()

    @property
    def partitioned(self) -> bool:
        """Whether the table only grows, a part per run."""
        return self.storage is Storage.PARTS

    @property
    def segmented(self) -> bool:
        """Whether the table is a folder of segments in each version."""
        return self.storage is Storage.SEGMENTS

    @property
    def versioned(self) -> bool:
        """Whether each version holds the table (a file or segments), rewritten by a run."""
        return self.storage is not Storage.PARTS


def _kind(name: str) -> TableKind:
    if name in PARTITIONED:
        storage = Storage.PARTS
    elif name in SEGMENTED:
        storage = Storage.SEGMENTS
    else:
        storage = Storage.FILE
    # Only sightings parts carry rows and leave texts to their rulings (part.py writes
    # them), and only they are indexed (index.py).
    sightings = name == "sightings"
    return TableKind(
        name,
        storage,
        carries=sightings,
        ruling_texts=sightings,
        indexed=sightings,
        order=ROW_ORDER.get(name),
        encoded=ENCODED_IN_MEMORY.get(name, frozenset()),
    )


KINDS: dict[str, TableKind] = {name: _kind(name) for name in TABLES}


def kinds() -> tuple[TableKind, ...]:
    """Every table's description, in schema.TABLES's order."""
    return tuple(KINDS.values())


def stored_as(storage: Storage) -> list[str]:
    """The names of the tables kept as STORAGE, in schema.TABLES's order."""
    return [kind.name for kind in KINDS.values() if kind.storage is storage]


def kind_of(name: str) -> TableKind:
    """The description of table NAME (a KeyError for a name schema.TABLES lacks)."""
    return KINDS[name]
