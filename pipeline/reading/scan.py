"""The per-file stage: a raw file's documents to Arrow batches of sightings, or rejections.

Pure and picklable, so a process pool or a Dask cluster can run it on many files at once.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import replace_column
from pipeline.errors import InputError
from pipeline.limits import Limits, OverTimeError, budget, over
from pipeline.models import (
    DateOrder,
    FileReport,
    FileStatus,
    Kind,
    RawDocument,
    Sighting,
    SourceHints,
)
from pipeline.reading import documents, read
from pipeline.reading.asof import fetched_date, resolve_as_of
from pipeline.reading.extract import extract
from pipeline.reading.parsers import parse
from pipeline.reading.sightings import sightings_table
from pipeline.schema import ENCODED_IN_MEMORY

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

# Sightings are turned into Arrow in chunks, so a file of a million rulings never lives
# as a million Python objects.
CHUNK = 20_000


class ScanJob(NamedTuple):
    """One raw file to read, with everything that decides its rows."""

    root: Path
    file: read.InputFile
    hints: SourceHints
    date_order: DateOrder | None
    today: dt.date | None
    run: int
    limits: Limits = Limits()

    @property
    def context(self) -> str:
        """What besides the bytes decides the rows: a changed hint means a re-read."""
        return _context(self.hints, self.hints.date_order or self.date_order)


@lru_cache(maxsize=1024)
def _context(hints: SourceHints, order: DateOrder | None) -> str:
    fields = {"card": hints.card, "source": hints.source, "date_order": order and order.value}
    return json.dumps(fields, sort_keys=True)


class ScanResult(NamedTuple):
    """What reading one input file gave: a report per document, and those whose dates stayed open.

    A file is one document; a zip archive one per member (`archive.zip/member`), unless
    the archive itself cannot be read.
    """

    reports: tuple[FileReport, ...]
    ambiguous: tuple[str, ...] = ()

    @property
    def report(self) -> FileReport:
        """The report of the file's (first) document."""
        return self.reports[0]


@dataclass(frozen=True, slots=True)
class ScanBatch:
    """What reading some files gave: one result per file, and their sightings."""

    results: list[ScanResult]
    sightings: pa.Table | None


def scan_batch(jobs: Sequence[ScanJob]) -> ScanBatch:
    """Read a batch of files into one Arrow table: the unit a worker process is given.

    Sightings become Arrow a chunk at a time, across the batch's small files.
    """
    results: list[ScanResult] = []
    pending: list[Sighting] = []
    tables: list[pa.Table] = []
    for job in jobs:
        result, found = _scan(job)
        results.append(result)
        for rows in found:
            if isinstance(rows, pa.Table):  # a large file's chunk: keep the files in order
                if pending:
                    tables.append(sightings_table(pending, job.run))
                    pending = []
                tables.append(rows)
                continue
            pending.extend(rows)
            if len(pending) >= CHUNK:
                tables.append(sightings_table(pending, job.run))
                pending = []
    if pending:
        tables.append(sightings_table(pending, jobs[-1].run))
    return ScanBatch(results, _compact(pa.concat_tables(tables)) if tables else None)


def _compact(table: pa.Table) -> pa.Table:
    """The batch as it travels back and is held: texts, paths, hashes… dictionary-encoded.

    Each encoded column is one chunk. Encoding a chunked column gives every chunk the same
    dictionary, which a pickle writes out once per chunk and unpickles as that many copies:
    a bulk file read in 7 chunks crossed to the main process with 7 copies of its texts.
    """
    for name in ENCODED_IN_MEMORY["sightings"]:
        table = replace_column(table, name, pc.dictionary_encode(table[name]).combine_chunks())
    return table


def _scan(job: ScanJob) -> tuple[ScanResult, list[list[Sighting] | pa.Table]]:
    """Read one file's documents; a document that cannot be read becomes a rejected report.

    A file that cannot be opened (or an archive whose directory cannot be read, or one
    past its time budget) is one rejected report and adds no rows.
    """
    name, context, limits = job.file.name, job.context, job.limits
    results: list[_Read] = []
    source = None
    try:
        with budget(limits, name), documents.opened(job.file, job.root) as source:
            results.extend(
                _read(job, doc) for doc in documents.documents(source, job.hints, limits)
            )
            source.check_unchanged()  # a file still being written is read again next run
    except InputError as exc:
        sha = source.known_sha256 if source is not None else None
        report = FileReport(name, sha, FileStatus.REJECTED, reason=exc.reason, context=context)
        return ScanResult((report,)), []
    except MemoryError:
        # Out of memory outside a document's parse (opening, hashing, an archive's
        # directory): the file is rejected, what it built dropped, and the batch goes on.
        results.clear()
        return out_of_memory(job, source.known_sha256 if source is not None else None), []
    reports = tuple(r.report for r in results)
    ambiguous = tuple(r.report.source_path for r in results if r.ambiguous)
    return ScanResult(reports, ambiguous), [rows for r in results for rows in r.rows]


class _Read(NamedTuple):
    """One document read: its report, whether its dates stayed open, its rows in chunks."""

    report: FileReport
    ambiguous: bool = False
    rows: list[list[Sighting] | pa.Table] = []  # noqa: RUF012 - never changed


def _read(job: ScanJob, doc: RawDocument | InputError) -> _Read:
    """Parse and extract one document; a bad one is rejected and the file's others go on.

    A document's rows are kept apart until it has been read to the end, so one that fails
    half way adds none. A large one is turned into Arrow chunk by chunk as it is read.
    """
    context, limits = job.context, job.limits
    if isinstance(doc, InputError):
        report = FileReport(doc.path, None, FileStatus.REJECTED, reason=doc.reason, context=context)
        return _Read(report)
    name, sha = doc.path, doc.sha256
    found: list[list[Sighting] | pa.Table] = []
    try:
        parsed = parse(doc)
        extraction = extract(doc, parsed, date_order=job.date_order, today=job.today, limits=limits)
        while chunk := list(itertools.islice(extraction.sightings, CHUNK)):
            found.append(chunk if len(chunk) < CHUNK else sightings_table(chunk, job.run))
    except OverTimeError:
        raise  # the file's budget is spent: the whole file is rejected
    except InputError as exc:
        report = FileReport(name, sha, FileStatus.REJECTED, reason=exc.reason, context=context)
        return _Read(report)
    except MemoryError:
        # Past the worker's address-space cap: what the document built is dropped with it.
        found.clear()
        reason = over("memory", "reading needed more memory than its budget", limits.memory)
        report = FileReport(name, sha, FileStatus.REJECTED, reason=reason, context=context)
        return _Read(report)
    except (ValueError, TypeError, KeyError, RecursionError, OverflowError) as exc:
        # A parser met input it did not foresee: the file is rejected, the batch goes on,
        # and the reason names the failure so that it can be reported and fixed.
        reason = f"unreadable: {type(exc).__name__}: {exc}"
        report = FileReport(name, sha, FileStatus.REJECTED, reason=reason, context=context)
        return _Read(report)
    if not found and not parsed.may_be_empty:
        reason = f"no rulings found ({parsed.layout} layout)"
        return _Read(FileReport(name, sha, FileStatus.REJECTED, reason=reason, context=context))
    warnings = [*doc.warnings, *extraction.warnings]
    fetched = job.hints.fetched_at
    if fetched and fetched_date(fetched) is None:
        warnings.append(f"fetched_at {fetched!r} is not an ISO date: not used as the as-of date")
    today = job.today or dt.datetime.now(tz=dt.UTC).date()
    as_of = resolve_as_of(parsed.as_of, fetched, name, job.file.mtime_ns, today=today)
    report = FileReport(
        source_path=name,
        source_sha256=sha,
        status=FileStatus.STORED,
        layout=parsed.layout,
        encoding=doc.encoding,
        rulings=extraction.count,
        rules=extraction.kinds[Kind.RULE],
        warnings=tuple(warnings),
        context=context,
        size=job.file.size,
        mtime_ns=job.file.mtime_ns,
        as_of=as_of.date if as_of else None,
        as_of_origin=as_of.origin if as_of else None,
        names=tuple(parsed.names),
        cards=tuple(parsed.cards),
    )
    return _Read(report, extraction.ambiguous, found)


def out_of_memory(job: ScanJob, sha: str | None = None) -> ScanResult:
    """The result of a file whose reading raised MemoryError: rejected, naming the budget."""
    reason = over("memory", "reading needed more memory than its budget", job.limits.memory)
    report = FileReport(job.file.name, sha, FileStatus.REJECTED, reason=reason, context=job.context)
    return ScanResult((report,))


def crashed(job: ScanJob) -> ScanResult:
    """The result of a file whose reader process died (killed, or out of memory)."""
    reason = "the reader crashed on this file (its worker process died: killed or out of memory)"
    report = FileReport(
        job.file.name, None, FileStatus.REJECTED, reason=reason, context=job.context
    )
    return ScanResult((report,))
