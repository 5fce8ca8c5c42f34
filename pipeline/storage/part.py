"""A run's sightings part: its sightings as sightings/run=N/ holds them on disk.

A row keeps its text only where it differs from its ruling's (texts.without_ruling_texts),
and the rows that repeat a file's last reading are carried by reference (carry.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import kept
from pipeline.keys import codes
from pipeline.models import FileStatus
from pipeline.reading.sightings import RULING_TEXT
from pipeline.schema import PARTITION_KEY, RULING_KEY, in_memory
from pipeline.storage import selection, store, texts
from pipeline.storage.carry import by_reference

if TYPE_CHECKING:
    from pathlib import Path

SIGHTINGS = in_memory("sightings")
# The same before the languages are detected: `lang` may still be null.
UNDETECTED = SIGHTINGS.set(
    SIGHTINGS.get_field_index("lang"), pa.field("lang", SIGHTINGS.field("lang").type)
)


def as_stored(sightings: pa.Table, schema: pa.Schema = SIGHTINGS) -> pa.Table:
    """A run's folded sightings as the sightings table holds them (in SCHEMA)."""
    return sightings.drop_columns([RULING_TEXT]).cast(schema)


def sightings_part(out: Path, base: Path, sightings: pa.Table, rulings: pa.Table) -> pa.Table:
    """What a run writes of SIGHTINGS, its folded sightings: its part of the sightings table.

    RULINGS are the rulings once the run is merged in (a row equal to its ruling's text
    leaves it to the ruling); BASE is the version the run read, whose last reading of
    each file the rows that repeat it are carried from.
    """
    return _carried(out, base, texts.without_ruling_texts(as_stored(sightings), rulings))


def texts_part(before: pa.Table, after: pa.Table, run: int) -> pa.Table:
    """The run's part of ruling_texts: each ruling of AFTER whose key and text BEFORE lacks.

    BEFORE and AFTER are the rulings of the same segments before and after RUN.
    """
    names = [*RULING_KEY, "text"]
    fresh = after  # every ruling, when the segments held none before (a first ingest's)
    if before.num_rows:
        old, new = codes([before.select(names), after.select(names)], names)
        # kept(): no copy of AFTER when all of it is new (the part shares its columns).
        fresh = kept(after, pc.invert(pc.is_in(new, value_set=pc.unique(old))))
    run_column = pa.repeat(pa.scalar(run, pa.int64()), fresh.num_rows)
    return fresh.select(names).add_column(0, PARTITION_KEY, run_column)


def _carried(out: Path, base: Path, part: pa.Table) -> pa.Table:
    """PART, a run's sightings, with what repeats each file's last reading carried (carry.py)."""
    files = store.read_table(out, "files", base=base)
    read = pc.and_(
        pc.equal(files["status"], pa.scalar(FileStatus.STORED.value)),
        pc.greater(files["rulings"], pa.scalar(0)),
    )
    last = files.filter(read).group_by("source_path").aggregate([("run", "max")])
    paths = pc.unique(part["source_path"].cast(pa.string()))
    last = last.filter(pc.is_in(last["source_path"], value_set=paths))
    if not last.num_rows:
        return part
    runs = last["run_max"].to_pylist()
    latest = {
        str(p): int(r or 0) for p, r in zip(last["source_path"].to_pylist(), runs, strict=True)
    }
    return by_reference(part, selection.base_rows(out, latest))
