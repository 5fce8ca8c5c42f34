"""`pipeline update`: fetch the sources into raw/, then ingest what changed as one run."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Unpack

from pipeline.fetching.fetch import SOURCES, FetchReport, fetch
from pipeline.fetching.raw import locked
from pipeline.ingest import IngestKeywords, IngestOptions, IngestReport, ingest
from pipeline.storage import lock

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from pipeline.fetching.client import Settings
    from pipeline.fetching.fetch import Upstreams


@dataclass(frozen=True, slots=True)
class UpdateReport:
    """The fetch, and the ingest after it (None when no source could be fetched)."""

    fetched: FetchReport
    ingested: IngestReport | None


def update(
    names: Sequence[str] = SOURCES,
    *,
    raw: Path,
    out: Path,
    upstreams: Upstreams | None = None,
    settings: Settings | None = None,
    fetched: Callable[[FetchReport], None] | None = None,
    options: IngestOptions | None = None,
    **keywords: Unpack[IngestKeywords],
) -> UpdateReport:
    """Fetch the sources NAMES into RAW, then ingest RAW into OUT.

    The ingest reads every file of RAW that changed since it was last stored (a fetch that
    brought nothing new leaves nothing to read), with the catalogs of `RAW/.catalog/`
    and the options' CATALOG_FILES; a run with nothing new is not recorded (unless
    RECORD_UNCHANGED). When every source failed, nothing is ingested. FETCHED is told the
    fetch's report before the ingest starts. OPTIONS and KEYWORDS are the ingest's, as
    ingest() takes them (see IngestOptions).

    RAW's lock is held from the fetch to the end of the ingest, so no other fetch replaces
    a file while it is read; OUT's as every ingest does. The options' WAIT is how long each
    may be waited for (LockBusyError after).
    """
    chosen = replace(options or IngestOptions(), **keywords)
    lock.lockable(out)  # a dataset folder that cannot be written fails before any fetch
    with locked(raw, chosen.wait):
        report = fetch(names, raw=raw, upstreams=upstreams, settings=settings, lock=False)
        if fetched is not None:
            fetched(report)
        if report.failed and len(report.failed) == len(report.sources):
            return UpdateReport(report, None)
        ingested = ingest([raw], out=out, options=chosen)
    return UpdateReport(report, ingested)
