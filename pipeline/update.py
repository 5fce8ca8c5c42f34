"""`pipeline update`: fetch the sources into raw/, then ingest what changed as one run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.fetching.fetch import SOURCES, FetchReport, fetch
from pipeline.fetching.raw import locked
from pipeline.ingest import IngestReport, ingest
from pipeline.storage import store

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
    catalog_files: Sequence[Path] = (),
    wait: float = 0,
    workers: int | None = None,
    progress: Callable[[int], Callable[[int], None]] | None = None,
    fetched: Callable[[FetchReport], None] | None = None,
    isolate: bool = False,
) -> UpdateReport:
    """Fetch the sources NAMES into RAW, then ingest RAW into OUT.

    The ingest reads every file of RAW that changed since it was last stored (a fetch that
    brought nothing new leaves nothing to read), with the catalogs of `RAW/.catalog/`
    and CATALOG_FILES; a run with nothing new is not recorded. When every source failed,
    nothing is ingested. FETCHED is told the fetch's report before the ingest starts.

    RAW's lock is held from the fetch to the end of the ingest, so no other fetch replaces
    a file while it is read; OUT's as every ingest does. WAIT is how long each may be waited
    for (LockBusyError after).
    """
    store.lockable(out)  # a dataset folder that cannot be written fails before any fetch
    with locked(raw, wait):
        report = fetch(names, raw=raw, upstreams=upstreams, settings=settings, lock=False)
        if fetched is not None:
            fetched(report)
        if report.failed and len(report.failed) == len(report.sources):
            return UpdateReport(report, None)
        ingested = ingest(
            [raw],
            out=out,
            catalog_files=catalog_files,
            wait=wait,
            workers=workers,
            progress=progress,
            isolate=isolate,
            record_unchanged=False,
        )
    return UpdateReport(report, ingested)
