"""Reading a dataset's tables, migrated, as one version: storage's top layer with commit.py.

Where each table's files are, and how one is read, is layout.py's; what a sightings part
encodes (carried rows, texts left to the rulings) carry.py's and texts.py's, and the
selection of a card's rows selection.py's (through index.py). Here a table is read whole
or in parts, from the links in the dataset folder or from a pinned version (`Version`):
its files from that version's folder and the parts of its runs alone.
Writing is commit.py's: versions switched at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, Unpack

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import false_if_null
from pipeline.errors import StoreError
from pipeline.schema import PARTITION_KEY, in_memory
from pipeline.storage import layout, manifest, selection
from pipeline.storage.carry import Content, expanded
from pipeline.storage.kinds import Storage, kind_of, stored_as
from pipeline.storage.lock import check_folder_name
from pipeline.storage.texts import with_ruling_texts

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator
    from pathlib import Path

    from pipeline.columns import Mask


def read_table(
    out: Path,
    name: str,
    *,
    base: Path | None = None,
    runs: Iterable[int] | None = None,
    upto: int | None = None,
    where: Callable[[pa.Table], Mask] | None = None,
    content: Callable[[pa.Table], Mask] | None = None,
    segments: Collection[int] | None = None,
) -> pa.Table:
    """Read table NAME, migrated to the current schema; empty if the dataset lacks it.

    BASE is a pinned version folder (default: the links in OUT). For a partitioned table,
    RUNS chooses the parts, UPTO drops those of later runs (a pinned reader's horizon), and
    WHERE filters each part as it is read, so a selection never holds the whole table.
    CONTENT is a filter like WHERE that looks only at columns a carried sighting takes from
    its base (carry.content_columns: not the file's, the position or the run), so that it
    is tried on the base before the carried rows are expanded: the fast way to select
    cards. SEGMENTS are the segments of a segmented table to read (default: those its
    folder holds; a pinned Version gives its manifest's). Some string columns come
    dictionary-encoded (schema.in_memory).
    """
    kind = kind_of(name)
    if kind.carries and content is not None and not layout.legacy(out, base):
        wanted = None if runs is None else set(runs)
        chosen = [run for run in layout.part_runs(out, name) if _chosen(run, wanted, upto)]
        table = selection.selected(out, base or layout.pinned(out), chosen, content)
        if where is not None and table.num_rows:
            table = table.filter(where(table))
        if table["text"].null_count:
            rulings = read_table(out, "rulings", base=base or layout.pinned(out))
            table = with_ruling_texts(table, rulings)
        return table
    if kind.partitioned and not layout.legacy(out, base):
        parts = iter_parts(out, name, base=base, runs=runs, upto=upto, where=where, content=content)
        return pa.concat_tables([in_memory(name).empty_table(), *parts])
    where = _both(content, where)
    folder = out if base is None else base
    if kind.segmented and base is None:
        folder = layout.pinned(out)  # one version for all the segments
    if kind.segmented and (folder / name).is_dir():
        ids = layout.segment_ids(folder, name) if segments is None else sorted(segments)
        pieces = list(layout.read_segments(folder, name, ids).values())
        table = pa.concat_tables([in_memory(name).empty_table(), *pieces])
        table = layout.ordered(table, name) if len(pieces) > 1 else table
        return table.filter(where(table)) if where is not None and table.num_rows else table
    table = layout.read_file(folder / f"{name}.parquet", name)
    if kind.partitioned and (runs is not None or upto is not None):  # one file of all runs
        wanted = None if runs is None else set(runs)
        present = {int(r) for r in pc.unique(table[PARTITION_KEY]).to_pylist() if r is not None}
        keep = sorted(r for r in present if _chosen(r, wanted, upto))
        table = table.filter(pc.is_in(table[PARTITION_KEY], pa.array(keep, pa.int64())))
    if where is not None and table.num_rows:
        table = table.filter(where(table))
    if kind.ruling_texts and table["text"].null_count:
        table = with_ruling_texts(table, read_table(out, "rulings", base=folder))
    return table


def _both(
    first: Callable[[pa.Table], Mask] | None, second: Callable[[pa.Table], Mask] | None
) -> Callable[[pa.Table], Mask] | None:
    """One filter of the rows FIRST and SECOND both keep (either may be None)."""
    if first is None or second is None:
        return first or second
    return lambda table: pc.and_kleene(first(table), second(table))


def iter_parts(
    out: Path,
    name: str,
    *,
    base: Path | None = None,
    runs: Iterable[int] | None = None,
    upto: int | None = None,
    where: Callable[[pa.Table], Mask] | None = None,
    content: Callable[[pa.Table], Mask] | None = None,
    rulings: pa.Table | None = None,
) -> Iterator[pa.Table]:
    """The parts of partitioned table NAME, one table per run, in run order (see read_table).

    RULINGS gives the texts sightings leave out (default: the version's rulings table).
    """
    kind = kind_of(name)
    wanted = None if runs is None else set(runs)
    bases = selection.Bases(out)
    for run in layout.part_runs(out, name):
        if _chosen(run, wanted, upto):
            path = layout.part_path(out, name, run)
            if kind.carries:  # carried rows expanded (carry.py)
                stored = layout.read_file(path, name, run=run, raw=True)
                table = expanded(stored, bases.of(stored), content).cast(in_memory(name))
            else:
                if isinstance(content, Content):  # its columns first: most parts have none
                    some = layout.read_file(path, name, run=run, columns=content.columns)
                    if not pc.any(false_if_null(content(some))).as_py():
                        continue
                table = layout.read_file(path, name, run=run)
                if content is not None and table.num_rows:
                    table = table.filter(content(table))
            if where is not None and table.num_rows:
                table = table.filter(where(table))
            if kind.ruling_texts and table["text"].null_count:  # left out on disk
                if rulings is None:
                    rulings = read_table(out, "rulings", base=base or layout.pinned(out))
                table = with_ruling_texts(table, rulings)
            yield table


def _chosen(run: int, wanted: set[int] | None, upto: int | None) -> bool:
    return (wanted is None or run in wanted) and (upto is None or run <= upto)


class ReadOptions(TypedDict, total=False):
    """The options of read_table a pinned Version passes on (its own base and horizon aside)."""

    runs: Iterable[int] | None
    where: Callable[[pa.Table], Mask] | None
    content: Callable[[pa.Table], Mask] | None


@dataclass(frozen=True, slots=True)
class Listing:
    """The files a version's manifest lists: each table's parts (runs) and segments."""

    parts: dict[str, frozenset[int]]
    segments: dict[str, frozenset[int]]

    @classmethod
    def of(cls, listed: manifest.Manifest, base: Path) -> Listing:
        """The listing of the manifest LISTED of the version folder BASE."""
        parts: dict[str, set[int]] = {}
        for table, run in manifest.parts_listed(listed):
            parts.setdefault(table, set()).add(run)
        segments: dict[str, set[int]] = {}
        segmented = stored_as(Storage.SEGMENTS)
        for path in listed.files:
            head, _, rest = path.partition(f"{layout.VERSIONS}/{base.name}/")
            table, _, file = rest.partition("/")
            if not head and table in segmented and file.removesuffix(".parquet").isdigit():
                segments.setdefault(table, set()).add(int(file.removesuffix(".parquet")))
        return cls(
            {t: frozenset(r) for t, r in parts.items()},
            {t: frozenset(s) for t, s in segments.items()},
        )


@dataclass(frozen=True, slots=True)
class Version:
    """One version of a dataset, pinned: every read sees the same run, whatever commits next.

    `base` holds its rewritten tables; of the append-only ones only the parts of runs up
    to `last_run` belong to it (a part may appear a moment before its run's switch). A
    version with a manifest (`listing`) is read from the files it lists, as Iceberg's
    readers trust theirs: a part or segment on disk that it does not list is not read, and
    one it lists that is gone is an error naming it. Older versions are read by listing
    their folders.
    """

    out: Path
    base: Path
    last_run: int
    # What the manifest lists follows from the version: it takes no part in equality.
    listing: Listing | None = field(default=None, compare=False)

    def table(self, name: str, **options: Unpack[ReadOptions]) -> pa.Table:
        """Table NAME of this version (see read_table for OPTIONS)."""
        options = self._listed(name, options)
        segments = None if self.listing is None else self.listing.segments.get(name, frozenset())
        if not kind_of(name).segmented:
            segments = None
        return read_table(
            self.out, name, base=self.base, upto=self.last_run, segments=segments, **options
        )

    def parts(self, name: str, **options: Unpack[ReadOptions]) -> Iterator[pa.Table]:
        """The parts of partitioned table NAME of this version, one per run."""
        if layout.legacy(self.out, self.base):
            yield self.table(name, **options)
            return
        options = self._listed(name, options)
        yield from iter_parts(self.out, name, base=self.base, upto=self.last_run, **options)

    def _listed(self, name: str, options: ReadOptions) -> ReadOptions:
        """OPTIONS with the runs of NAME's parts this version's manifest lists."""
        if self.listing is None or not kind_of(name).partitioned:
            return options
        listed = self.listing.parts.get(name, frozenset())
        wanted = options.get("runs")
        runs = sorted(listed if wanted is None else listed & set(wanted))
        missing = [r for r in runs if not layout.part_path(self.out, name, r).is_file()]
        if missing:
            path = layout.part_path(self.out, name, missing[0]).relative_to(self.out)
            msg = (
                f"{path.as_posix()}: missing, though the manifest of version "
                f"{self.base.name} lists it: restore it from a backup (pipeline verify names "
                "every fault)"
            )
            raise StoreError(msg)
        return {**options, "runs": runs}


def open_version(out: Path) -> Version:
    """Pin the version in force of the dataset in OUT (read by its manifest, if it has one)."""
    check_folder_name(out)
    base = layout.pinned(out)
    # runs.parquet is one file in every version.
    runs = layout.read_file(base / "runs.parquet", "runs")[PARTITION_KEY]
    listed = manifest.read(base)
    listing = None if listed is None else Listing.of(listed, base)
    return Version(out, base, int(pc.max(runs).as_py() or 0), listing)
