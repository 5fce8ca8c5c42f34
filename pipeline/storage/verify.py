"""Check a dataset: the version in force against its manifest, and the invariants of its format.

docs/format.md §9 lists the invariants. check() returns the faults it finds as plain
records, each naming a file (relative to the dataset folder) and what is wrong with it;
an empty list is a sound dataset. It reads, never writes, and takes no lock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.errors import StoreError
from pipeline.keys import codes, first_rows
from pipeline.schema import LOGGED, PARTITION_KEY, RULING_KEY, TABLES
from pipeline.storage import index, layout, manifest, store, texts
from pipeline.storage.kinds import Storage, kind_of, stored_as

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

_VERSION_TARGET = re.compile(rf"{re.escape(layout.VERSIONS)}/([0-9]{{6}})")
_PLACES = pa.schema([pa.field("source_path", pa.string()), TABLES["sightings"].field("position")])
_ONE_FILE = stored_as(Storage.FILE)
_SEGMENTED = stored_as(Storage.SEGMENTS)
_PARTITIONED = sorted(stored_as(Storage.PARTS))  # faults named in the order of the names


@dataclass(frozen=True, slots=True)
class Fault:
    """What is wrong (PROBLEM) with a file or link (PATH, relative to the dataset folder)."""

    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


@dataclass(frozen=True, slots=True)
class Report:
    """What check() found: the version in force, its last run, files checked, and FAULTS."""

    version: str
    last_run: int
    files: int
    faults: list[Fault]


def check(out: Path) -> Report:
    """Check the dataset in OUT (see the module's docstring)."""
    faults: list[Fault] = []
    current = out / layout.CURRENT
    target = current.readlink().as_posix() if current.is_symlink() else None
    if target is None or not _VERSION_TARGET.fullmatch(target) or not current.resolve().is_dir():
        problem = "not a link to an existing .versions/NNNNNN folder"
        return Report("", 0, 0, [Fault(layout.CURRENT, problem)])
    version = out / target  # not resolved: every path named relative to OUT
    faults += _links(out, version)
    listed = _against_manifest(out, version, faults)
    try:
        last = manifest.last_run(version)
    except (OSError, pa.ArrowInvalid) as exc:  # nothing else can be checked without L
        faults.append(Fault(_rel(out, version / "runs.parquet"), f"does not read ({exc})"))
        return Report(version.name, 0, listed, faults)
    for name in _PARTITIONED:
        faults += [
            Fault(_rel(out, layout.part_path(out, name, run)), f"part of run {run} > L = {last}")
            for run in layout.part_runs(out, name)
            if run > last
        ]
    checks: list[Callable[[Path, Path, int], list[Fault]]] = [
        _runs,
        _segments,
        _rulings_keys,
        _logs,
        _carried,
        _index,
        _leftovers,
    ]
    for each in checks:
        try:
            faults += each(out, version, last)
        except StoreError as exc:  # a file that does not read: named by the exception
            faults.append(Fault(_rel(out, version), f"not checked by {each.__name__}: {exc}"))
    return Report(version.name, last, listed, faults)


def _rel(out: Path, path: Path) -> str:
    try:
        return path.relative_to(out).as_posix()
    except ValueError:
        return path.as_posix()


def _links(out: Path, version: Path) -> list[Fault]:
    """§9, 2-3: each table of the version, and its top-level link."""
    faults = [
        Fault(_rel(out, version / f"{name}.parquet"), "missing")
        for name in _ONE_FILE
        if not (version / f"{name}.parquet").is_file()
    ]
    faults += [
        Fault(_rel(out, version / name), "no segment")
        for name in _SEGMENTED
        if not layout.segment_ids(version, name)
    ]
    for entry in [*(f"{name}.parquet" for name in _ONE_FILE), *_SEGMENTED]:
        link = out / entry
        if not link.is_symlink() or link.readlink().as_posix() != f"{layout.CURRENT}/{entry}":
            faults.append(Fault(entry, f"not a link to {layout.CURRENT}/{entry}"))
    return faults


def _against_manifest(out: Path, version: Path, faults: list[Fault]) -> int:
    """Every file the manifest lists, against its entry; files it does not list. How many."""
    where = _rel(out, version / manifest.FILE)
    try:
        found = manifest.read(version)
    except StoreError as exc:
        faults.append(Fault(where, str(exc).removeprefix(f"{version / manifest.FILE}: ")))
        return 0
    if found is None:
        faults.append(Fault(where, "missing (written before manifests: the next commit adds it)"))
        return 0
    if found.version != int(version.name):
        faults.append(Fault(where, f"names version {found.version}, not {int(version.name)}"))
    faults += [fault for entry in found.files.values() if (fault := entry_fault(out, entry))]
    prefix = _rel(out, version) + "/"
    faults += [
        Fault(prefix + name, "not in the manifest")
        for name in manifest.version_files(version)
        if prefix + name not in found.files
    ]
    for name in _PARTITIONED:
        for run in layout.part_runs(out, name):
            relative = _rel(out, layout.part_path(out, name, run))
            if run <= found.last_run and relative not in found.files:
                faults.append(Fault(relative, "not in the manifest"))
    return len(found.files)


def entry_fault(out: Path, entry: manifest.Entry) -> Fault | None:
    """What is wrong with the file of ENTRY, if anything: presence, bytes, sha256, rows."""
    path = out / entry.path
    if not path.is_file():
        return Fault(entry.path, "missing")
    size = path.stat().st_size
    if size != entry.bytes:
        return Fault(entry.path, f"{size} bytes, the manifest says {entry.bytes}")
    if manifest.describe_hash(path) != entry.sha256:
        return Fault(entry.path, "sha256 differs from the manifest's")
    try:
        rows = pq.read_metadata(path).num_rows
    except (OSError, pa.ArrowInvalid) as exc:
        return Fault(entry.path, f"does not read as Parquet ({exc})")
    if rows != entry.rows:
        return Fault(entry.path, f"{rows} rows, the manifest says {entry.rows}")
    return None


def _runs(out: Path, version: Path, last: int) -> list[Fault]:
    """§9, 7-8: runs 1 … L; every file's, part's, state row's and card's run among them."""
    faults = []
    stored = store.read_table(out, "runs", base=version)[PARTITION_KEY].to_pylist()
    runs = [int(r) for r in stored if r is not None]
    if sorted(runs) != list(range(1, last + 1)):
        faults.append(Fault(_rel(out, version / "runs.parquet"), f"runs {runs} are not 1 … {last}"))
    known = set(runs)
    for name in ("files", "state", "cards"):
        table = store.read_table(out, name, base=version)
        present = {int(r) for r in pc.unique(table[PARTITION_KEY]).to_pylist() if r is not None}
        unknown = sorted(present - known)
        if unknown:
            where = _rel(out, layout.path_of(version, name))
            faults.append(Fault(where, f"rows of unknown runs {unknown}"))
    return faults


def _segments(out: Path, version: Path, last: int) -> list[Fault]:
    """§9, 9-10: a group in one segment number, the same in both tables; keys unique."""
    del last
    faults = []
    where: dict[str, dict[str | None, int]] = {}
    for name in _SEGMENTED:
        seen: dict[str | None, int] = {}
        for seg, table in layout.read_segments(
            version, name, layout.segment_ids(version, name)
        ).items():
            for group in pc.unique(table["card"].cast(pa.string())).to_pylist():
                if group in seen:
                    path = _rel(out, layout.segment_path(version, name, seg))
                    faults.append(Fault(path, f"card {group!r} also in segment {seen[group]}"))
                seen[group] = seg
            if name == "rulings":
                keys = table.select(list(RULING_KEY)).cast(
                    pa.schema([pa.field(c, pa.string()) for c in RULING_KEY])
                )
                counted = keys.group_by(list(RULING_KEY)).aggregate([([], "count_all")])
                if (pc.max(counted["count_all"]).as_py() or 0) > 1:
                    path = _rel(out, layout.segment_path(version, name, seg))
                    faults.append(Fault(path, "two rulings rows share a key"))
        where[name] = seen
    for group, seg in where["state"].items():
        other = where["rulings"].get(group)
        if other is not None and other != seg:
            path = _rel(out, layout.segment_path(version, "state", seg))
            faults.append(Fault(path, f"card {group!r} is in rulings segment {other}"))
    return faults


def _rulings_keys(out: Path, version: Path, last: int) -> list[Fault]:
    """§9, 14-15 (in part): each rulings key has a sighting; each left-out text its ruling."""
    rulings = store.read_table(out, "rulings", base=version).select(list(RULING_KEY))
    keyed: set[int] = set()
    faults = []
    for part in store.iter_parts(out, "sightings", base=version, upto=last):
        rows = texts.ruling_rows(part.select(list(RULING_KEY)), rulings)
        keyed.update(int(r) for r in pc.unique(rows.drop_null()).to_pylist() if r is not None)
        if part.num_rows and part["text"].null_count:  # §9, 15: their ruling is not there
            run = int(part[PARTITION_KEY][0].as_py())
            lost = part["text"].null_count
            problem = f"no ruling holds the text of {lost} sightings of run {run} (left out)"
            faults.append(Fault(_rel(out, version / "rulings"), problem))
    missing = rulings.num_rows - len(keyed)
    if missing:
        first = next(i for i in range(rulings.num_rows) if i not in keyed)
        card = rulings["card"][first].as_py()
        problem = f"{missing} rulings keys have no sightings (the first of card {card!r})"
        faults.append(Fault(_rel(out, version / "rulings"), problem))
    return faults


def _logs(out: Path, version: Path, last: int) -> list[Fault]:
    """§9, 18 (but cards): rulings' texts as ruling_texts logged them, names as names_learned.

    A dataset whose rulings are of a version before the logs (not yet upgraded) has none.
    """
    if (layout.segments_version(out, "rulings", base=version) or LOGGED) < LOGGED:
        return []
    faults = []
    key = list(RULING_KEY)
    logged = store.read_table(out, "ruling_texts", base=version, upto=last)
    logged = logged.take(pc.sort_indices(logged, sort_keys=[(PARTITION_KEY, "descending")]))
    latest = logged.take(first_rows(logged, key)).select([*key, "text"])
    rulings = store.read_table(out, "rulings", base=version).select([*key, "text"])
    mine, theirs = codes([rulings, latest], [*key, "text"])
    unlogged = pc.invert(pc.is_in(mine, value_set=theirs))
    count = int(pc.sum(unlogged.cast(pa.int64())).as_py() or 0)
    if count:
        card = rulings.filter(unlogged)["card"][0].as_py()
        problem = (
            f"{count} rulings whose text ruling_texts does not log (the first of card {card!r})"
        )
        faults.append(Fault(_rel(out, version / "rulings"), problem))
    names = store.read_table(out, "names", base=version).cast(TABLES["names"])
    learned = store.read_table(out, "names_learned", base=version, upto=last)
    learned = learned.rename_columns({PARTITION_KEY: "first_run"}).select(names.column_names)
    if sorted(map(tuple, _rows(names))) != sorted(map(tuple, _rows(learned.cast(names.schema)))):
        problem = "not the rows names_learned logged (names_learned's parts, run as first_run)"
        faults.append(Fault(_rel(out, version / "names.parquet"), problem))
    return faults


def _rows(table: pa.Table) -> list[list[object]]:
    return [list(row.values()) for row in table.to_pylist()]


def _carried(out: Path, version: Path, last: int) -> list[Fault]:
    """§9, 11-12: each carried row's base rows exist, in full, once each."""
    del version
    faults = []
    full: dict[int, pa.Table] = {}
    for run in layout.part_runs(out, "sightings"):
        if run > last:
            continue
        stored = layout.read_part(layout.part_path(out, "sightings", run), run)
        whole = pc.is_null(stored["carried"])
        full[run] = stored.filter(whole).select(["source_path", "position"])
        carried = stored.filter(pc.invert(whole))
        path = _rel(out, layout.part_path(out, "sightings", run))
        faults += [Fault(path, problem) for problem in _part_rows(stored, carried)]
        for base_run in pc.unique(carried["base_run"]).to_pylist():
            rows = carried.filter(pc.equal(carried["base_run"], pa.scalar(base_run, pa.int64())))
            if base_run is None or not 1 <= base_run < run or base_run not in full:
                faults.append(Fault(path, f"carried rows from run {base_run}, not a run before"))
                continue
            counts = rows["carried"].to_numpy()
            starts = np.repeat(rows["base_position"].to_numpy(), counts)
            offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
            needed = pa.table(
                {
                    "source_path": rows["source_path"]
                    .cast(pa.string())
                    .combine_chunks()
                    .take(pa.array(np.repeat(np.arange(rows.num_rows), counts), pa.int64())),
                    "position": pa.array(starts + offsets, pa.int64()),
                }
            )
            base = full[base_run].cast(_PLACES)
            found = needed.join(base, ["source_path", "position"], join_type="left anti")
            # An inner join (Table.join is a left outer one by default): a base row twice is
            # a fault, a base part's rows of other files are none.
            matched = base.join(needed, ["source_path", "position"], join_type="inner")
            if found.num_rows or matched.num_rows != len(needed):
                problem = (
                    f"{found.num_rows} carried sightings without their base row in run {base_run}"
                )
                faults.append(Fault(path, problem))
    return faults


def _part_rows(stored: pa.Table, carried: pa.Table) -> list[str]:
    """§9, 11 and 13 for one sightings part STORED (CARRIED: its carried rows)."""
    problems = []
    order = pc.sort_indices(
        stored.select(["source_path", "position"]).cast(_PLACES),
        [("source_path", "ascending"), ("position", "ascending")],
    )
    if order.to_pylist() != list(range(stored.num_rows)):
        problems.append("rows not in (source_path, position) order")
    whole = stored.filter(pc.is_null(stored["carried"]))
    half = pc.or_(pc.is_valid(whole["base_run"]), pc.is_valid(whole["base_position"]))
    incomplete = pc.or_(pc.is_null(carried["base_run"]), pc.is_null(carried["base_position"]))
    if pc.any(half).as_py() or pc.any(incomplete).as_py():
        problems.append("carry columns set in part: all three or none")
    if carried.num_rows and (pc.min(carried["carried"]).as_py() or 0) < 1:
        problems.append("a carried row standing for fewer than one sighting")
    return problems


def _leftovers(out: Path, version: Path, last: int) -> list[Fault]:
    """§9, 5: no temporary name left, no version above the one in force, no stray entry."""
    del last
    faults = [
        Fault(name, "a temporary name left (a commit at work, or a crash not yet recovered)")
        for name in sorted(p.name for p in out.iterdir())
        if name.startswith(".") and name.endswith((".tmp", ".link"))
    ]
    for entry in sorted((out / layout.VERSIONS).iterdir()):
        relative = _rel(out, entry)
        if not (entry.name.isdigit() and len(entry.name) == len(version.name)):
            faults.append(Fault(relative, "not a version (a commit at work, or a crash)"))
        elif entry.name > version.name:
            faults.append(Fault(relative, "a version above the one in force (not committed)"))
    hidden = [p for p in version.rglob(".*") if p.name != "."]
    faults += [Fault(_rel(out, p), "a temporary name left in the version") for p in hidden]
    return faults


def _index(out: Path, version: Path, last: int) -> list[Fault]:
    """§9, 16-17: the sightings index agrees with the parts it lists as unchanged."""
    del last
    return [
        Fault(
            _rel(out, index.segment_path(version, run // index.SPAN)),
            f"rows of run {run} differ from its part",
        )
        for run in index.disagreeing(version, out)
    ]


def file_fault(out: Path, relative: str, table: str, run: int | None = None) -> Fault | None:
    """What is wrong with the file RELATIVE of table TABLE (RUN: a part), if anything.

    Against the manifest of the version in force when it has one, then read whole, as a
    table of this schema (migrated).
    """
    version = out / layout.VERSIONS / layout.pinned(out).name
    path = out / relative
    found = manifest.read(version)
    entry = found.files.get(relative) if found is not None else None
    if entry is not None and (fault := entry_fault(out, entry)) is not None:
        return fault
    if not path.is_file():
        return Fault(relative, "missing")
    try:
        if run is None:
            store.read_table(out, table, base=path.parent)
        elif kind_of(table).carries:  # as stored: its carried rows' bases may be what is bad
            layout.read_file(path, table, run=run, raw=True)
        else:
            list(store.iter_parts(out, table, base=version, runs=[run]))
    except StoreError as exc:
        return Fault(relative, str(exc).removeprefix(f"{path}: "))
    return None


def primary_faults(out: Path) -> list[Fault]:
    """The faults of the files nothing rebuilds: runs, files, and the parts of runs 1 … L."""
    version = out / layout.VERSIONS / layout.pinned(out).name
    checked = [(_rel(out, version / f"{name}.parquet"), name, None) for name in ("runs", "files")]
    faults = [fault for args in checked if (fault := file_fault(out, *args))]
    if faults:
        return faults
    last = manifest.last_run(version)
    listed = manifest.read(version)
    for name in _PARTITIONED:
        runs = set(layout.part_runs(out, name))
        if listed is not None:
            runs |= {run for table, run in manifest.parts_listed(listed) if table == name}
        for run in sorted(r for r in runs if r <= last):
            relative = _rel(out, layout.part_path(out, name, run))
            if (fault := file_fault(out, relative, name, run)) is not None:
                faults.append(fault)
    return faults
