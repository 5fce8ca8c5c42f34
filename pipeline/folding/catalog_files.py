"""The catalog files of a run as card sources: read when they changed, reported as files.

`pipeline fetch` keeps Scryfall's oracle cards in `raw/.catalog/`: the run's catalog (names,
oracle ids) and a card source. A catalog file is recorded in files.parquet as any input is
(`.catalog/NAME`, its layout, 0 rulings, its cards), so a later run skips it while its
bytes are unchanged and reads its cards again when they change. Its as-of date: its own
(MTGJSON's meta.date), the manifest's fetched_at, a date in its path, its mtime.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from pipeline.errors import InputError, UsageError
from pipeline.folding import card_files
from pipeline.models import FileReport, FileStatus
from pipeline.reading import read
from pipeline.reading.asof import resolve_as_of
from pipeline.reading.unchanged import stored_readings

if TYPE_CHECKING:
    from pathlib import Path

    import pyarrow as pa

    from pipeline.limits import Limits
    from pipeline.models import SourceHints


def catalog_reports(
    found: list[tuple[str, Path]],
    files: pa.Table,
    hints: dict[str, SourceHints],
    *,
    limits: Limits,
    today: dt.date | None = None,
    rehash: bool = False,
) -> list[FileReport]:
    """A report per catalog file FOUND ((name, path) pairs): skipped, stored or rejected.

    FILES is files.parquet (what earlier runs read); HINTS the manifest's rows by name.
    """
    stored = stored_readings(files)
    reports = []
    for name, path in found:
        known = stored.get((name, ""))
        try:
            stat = path.stat()
            size, mtime = stat.st_size, stat.st_mtime_ns
            if known is not None and not rehash and known[1:] == (size, mtime):
                sha = known[0]  # as make does: the same size and time, the same file
            else:
                sha = read.sha256_file(read.InputFile(str(path), name), path.parent.parent)
        except (OSError, InputError) as exc:
            reason = f"unreadable: {exc}"
            reports.append(FileReport(name, None, FileStatus.REJECTED, reason=reason))
            continue
        if known is not None and known[0] == sha:
            reports.append(FileReport(name, sha, FileStatus.SKIPPED, size=size, mtime_ns=mtime))
            continue
        try:
            seen = card_files.described(path, limits)
        except UsageError as exc:
            reason = str(exc).removeprefix(f"{path}: ")
            reports.append(FileReport(name, sha, FileStatus.REJECTED, reason=reason))
            continue
        hint = hints.get(name)
        day = today or dt.datetime.now(tz=dt.UTC).date()
        as_of = resolve_as_of(seen.as_of, hint.fetched_at if hint else None, name, mtime, today=day)
        reports.append(
            FileReport(
                name,
                sha,
                FileStatus.STORED,
                layout=seen.layout,
                size=size,
                mtime_ns=mtime,
                as_of=as_of.date if as_of else None,
                as_of_origin=as_of.origin if as_of else None,
                cards=tuple(seen.cards),
            )
        )
    return reports
