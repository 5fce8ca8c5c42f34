"""Unchanged files: those stored before with the same bytes and hints are not read again."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import false_if_null
from pipeline.errors import InputError
from pipeline.models import FileReport, FileStatus, Layout
from pipeline.reading import read
from pipeline.reading.scan import ScanResult

if TYPE_CHECKING:
    from pipeline.reading.scan import ScanJob

# The layouts of inputs that describe cards (ParsedDocument.cards): Scryfall's card lists
# are catalogs, not inputs (its inputs are rulings), and were never recorded before 9.
CARD_LAYOUTS = (Layout.MTGJSON.value,)
# (path, context) -> (sha256, size, mtime_ns) of a file's latest stored reading.
_Readings = dict[tuple[str, str], tuple[str, int | None, int | None]]


def skip_unchanged(
    jobs: list[ScanJob], files: pa.Table, *, rehash: bool
) -> tuple[dict[int, ScanResult], list[int]]:
    """Which of JOBS are files FILES (files.parquet) stored with the same bytes and hints.

    A file whose size and modification time are those recorded is taken as unchanged
    without being read (REHASH reads and hashes it all the same); any other file stored
    before is hashed and compared. A zip archive is known by its members' rows
    (`archive.zip/member`), which carry the archive's hash, size and time. Returns the
    skipped files' results by job index, and the indexes of the jobs to scan.
    """
    stored = stored_readings(files)
    results: dict[int, ScanResult] = {}
    todo: list[int] = []
    archives = _archives(stored, {(job.file.name, job.context) for job in jobs})
    for index, job in enumerate(jobs):
        name, context = job.file.name, job.context
        known = stored.get((name, context)) or archives.get((name, context))
        if known is None:
            todo.append(index)  # never stored: nothing to compare, no need to read it here
            continue
        sha, size, mtime_ns = known
        file = job.file
        same = (
            not rehash and file.size is not None and (size, mtime_ns) == (file.size, file.mtime_ns)
        )
        try:
            if not same and read.sha256_file(file, job.root) != sha:
                todo.append(index)
                continue
        except InputError:
            todo.append(index)  # the scan reports why
            continue
        skipped = FileReport(
            name, sha, FileStatus.SKIPPED, context=context, size=file.size, mtime_ns=file.mtime_ns
        )
        results[index] = ScanResult((skipped,))
    return results, todo


def _archives(stored: _Readings, names: set[tuple[str, str]]) -> _Readings:
    """(archive, context) -> its recorded reading, from the rows of its members.

    NAMES are the run's files: a member row `a.zip/b/c.json` is a member of `a.zip` when
    that is one of them (a folder `a.zip` would hold files of its own name instead). Members
    whose readings disagree (read in different runs) make the archive be hashed again.
    """
    found: dict[tuple[str, str], tuple[str, int | None, int | None] | None] = {}
    for (path, context), reading in stored.items():
        for cut in (i for i, char in enumerate(path) if char == "/"):
            key = (path[:cut], context)
            if key in names and key not in stored:
                found[key] = reading if found.get(key, reading) == reading else None
                break
    return {key: reading for key, reading in found.items() if reading is not None}


def stored_readings(files: pa.Table) -> _Readings:
    """(path, context) -> (sha256, size, mtime_ns) of each file's latest stored reading.

    A card source read before its cards were asked for (files.cards null, a version before
    9) is no stored reading: it is read again, once, for its cards.
    """
    # A mask, not an expression: expressions load pyarrow.dataset (and pandas) on first use.
    stored = files.filter(pc.equal(files["status"], pa.scalar(FileStatus.STORED.value)))
    unasked = pc.and_(
        pc.is_in(stored["layout"], value_set=pa.array(CARD_LAYOUTS, pa.string())),
        pc.is_null(stored["cards"]),
    )
    stored = stored.filter(pc.invert(false_if_null(unasked)))
    names = ("source_path", "context", "source_sha256", "size", "mtime_ns")
    columns = [stored[name].to_pylist() for name in names]
    return {(p, c): (s, n, m) for p, c, s, n, m in zip(*columns, strict=True)}
