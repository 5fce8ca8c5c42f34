"""A document's "as of" date: the day the version it holds was current.

The document's own word wins (MTGJSON `meta.date`, a Comprehensive Rules release date), then
the manifest's `fetched_at`, then a date in the file's path (`raw/2025-08-18/TSP.json`,
`TSP-20250818.json`), then the file's modification time. Pure: the caller gives today.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import NamedTuple

from pipeline.models import AsOfOrigin

# Nothing about Magic rulings predates the first set (Alpha, 1993-08-05): an earlier "date"
# in a path is a number that looks like one.
FIRST_DAY = dt.date(1993, 8, 5)
# A path date may be a day ahead of today's UTC date when it was written in another zone.
_SLACK = dt.timedelta(days=1)
_PATH_DATE = re.compile(
    r"(?<!\d)(?:(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"  # 2025-08-18
    r"|(?P<cy>\d{4})(?P<cm>\d{2})(?P<cd>\d{2}))(?!\d)"  # 20250818
)


class AsOf(NamedTuple):
    """A document's as-of date and where it came from."""

    date: dt.date
    origin: AsOfOrigin


def resolve_as_of(
    document: dt.date | None,
    fetched_at: str | None,
    path: str,
    mtime_ns: int | None,
    *,
    today: dt.date,
) -> AsOf | None:
    """The as-of date of one file, from the first of its four sources that gives one."""
    if document is not None:
        return AsOf(document, AsOfOrigin.DOCUMENT)
    fetched = fetched_date(fetched_at)
    if fetched is not None:
        return AsOf(fetched, AsOfOrigin.MANIFEST)
    in_path = date_in_path(path, today=today)
    if in_path is not None:
        return AsOf(in_path, AsOfOrigin.PATH)
    if mtime_ns is not None:
        return AsOf(dt.datetime.fromtimestamp(mtime_ns / 1e9, tz=dt.UTC).date(), AsOfOrigin.MTIME)
    return None


def fetched_date(fetched_at: str | None) -> dt.date | None:
    """The day of a manifest's `fetched_at` (ISO date or date-time; UTC if it has a zone)."""
    if not fetched_at or not fetched_at.strip():
        return None
    try:
        moment = dt.datetime.fromisoformat(fetched_at.strip())
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    return moment.date()


def date_in_path(path: str, *, today: dt.date) -> dt.date | None:
    """The last real date in PATH between Magic's first set and today, if any.

    The last one is the closest to the file (`2025/2025-08-18/TSP.json`); a number that is no
    calendar date or lies out of bounds (`TSP-12345678.json`, `20991231`) is passed over.
    """
    for match in reversed(list(_PATH_DATE.finditer(path))):
        y, m, d = (
            (match["y"], match["m"], match["d"])
            if match["y"]
            else (match["cy"], match["cm"], match["cd"])
        )
        try:
            found = dt.date(int(y), int(m), int(d))
        except ValueError:
            continue
        if FIRST_DAY <= found <= today + _SLACK:
            return found
    return None


# A date with the separator before it, or a whole folder that is a date: what is cut from a
# path to name the document it is a version of.
_DATED_PART = re.compile(
    r"(?:(?<=/)|^)(?:\d{4}-\d{2}-\d{2}|\d{8})(?:/|$)"  # a folder named by its date
    r"|[-_. ]?(?<!\d)(?:\d{4}-\d{2}-\d{2}|\d{8})(?!\d)"  # a date inside a name
)


def undated(path: str) -> str:
    """PATH without the dates that tell one version of a document from another.

    `2025-08-18/rift-bolt.txt` and `2024-02-02/rift-bolt.txt` are versions of one dump,
    `rift-bolt.txt`, and so are `rift-bolt-20250818.txt` and `rift-bolt_2024-02-02.txt`.
    A name that is nothing but a date (`2024-02-02.txt`) is kept: it names no document.
    """
    cut = _DATED_PART.sub("", path).strip("/")
    name = cut.rsplit("/", 1)[-1]
    return path if not name or name.startswith(".") else cut
