"""The per-file stage: raw bytes to Arrow batches of sightings, or a rejection.

Pure and picklable, so a process pool or a Dask cluster can run it on many files at once.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from pipeline import read
from pipeline.errors import InputError
from pipeline.extract import extract
from pipeline.merge import sightings_table
from pipeline.models import DateOrder, FileReport, FileStatus, Kind, SourceHints
from pipeline.parsers import parse

if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path

# Sightings are turned into Arrow in chunks, so a file of a million rulings never lives
# as a million Python objects.
CHUNK = 20_000


@dataclass(frozen=True, slots=True)
class ScanJob:
    """One raw file to read, with everything that decides its rows."""

    root: Path
    file: read.InputFile
    hints: SourceHints
    date_order: DateOrder | None
    today: dt.date | None
    run: int

    @property
    def context(self) -> str:
        """What besides the bytes decides the rows: a changed hint means a re-read."""
        order = self.hints.date_order or self.date_order
        return json.dumps(
            {
                "card": self.hints.card,
                "source": self.hints.source,
                "date_order": order and order.value,
            },
            sort_keys=True,
        )


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What reading one file gave: its report, its sightings, whether its dates stayed open."""

    report: FileReport
    sightings: pa.Table | None
    ambiguous: bool


def scan(job: ScanJob, done: frozenset[tuple[str, str, str]]) -> ScanResult:
    """Read, parse and extract one file; a bad file becomes a rejected report.

    DONE holds the (path, sha256, context) of files stored before: those are skipped.
    """
    name, context, sha = job.file.name, job.context, None
    try:
        data = read.read_bytes(job.file, job.root)
        sha = read.sha256_bytes(data)
        if (name, sha, context) in done:
            skipped = FileReport(name, sha, FileStatus.SKIPPED, context=context)
            return ScanResult(skipped, None, ambiguous=False)
        doc = read.to_document(name, data, job.hints)
        parsed = parse(doc)
        found = extract(doc, parsed, date_order=job.date_order, today=job.today)
        chunks = []
        while chunk := list(itertools.islice(found.sightings, CHUNK)):
            chunks.append(sightings_table(chunk, job.run))
    except InputError as exc:
        report = FileReport(name, sha, FileStatus.REJECTED, reason=exc.reason, context=context)
        return ScanResult(report, None, ambiguous=False)
    if not chunks and not parsed.may_be_empty:
        reason = f"no rulings found ({parsed.layout} layout)"
        report = FileReport(name, sha, FileStatus.REJECTED, reason=reason, context=context)
        return ScanResult(report, None, ambiguous=False)
    report = FileReport(
        source_path=name,
        source_sha256=sha,
        status=FileStatus.STORED,
        layout=parsed.layout,
        encoding=doc.encoding,
        rulings=found.count,
        rules=found.kinds[Kind.RULE],
        warnings=(*doc.warnings, *found.warnings),
        context=context,
    )
    table = pa.concat_tables(chunks) if chunks else None
    return ScanResult(report, table, ambiguous=found.ambiguous)
