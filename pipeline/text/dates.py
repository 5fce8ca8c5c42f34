"""Recognising printed dates and resolving their day/month order per document."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from pipeline.models import DateOrder

_MONTHS = {
    # English
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
    # German
    "januar": 1,
    "jänner": 1,
    "februar": 2,
    "märz": 3,
    "mai": 5,
    "juni": 6,
    "juli": 7,
    "oktober": 10,
    "dezember": 12,
    # French
    "janvier": 1,
    "février": 2,
    "mars": 3,
    "avril": 4,
    "juin": 6,
    "juillet": 7,
    "août": 8,
    "septembre": 9,
    "octobre": 10,
    "novembre": 11,
    "décembre": 12,
    # Spanish, Italian, Portuguese
    "enero": 1,
    "febrero": 2,
    "marzo": 3,
    "abril": 4,
    "mayo": 5,
    "junio": 6,
    "julio": 7,
    "agosto": 8,
    "septiembre": 9,
    "octubre": 10,
    "noviembre": 11,
    "diciembre": 12,
    "gennaio": 1,
    "febbraio": 2,
    "aprile": 4,
    "maggio": 5,
    "giugno": 6,
    "luglio": 7,
    "settembre": 9,
    "ottobre": 10,
    "dicembre": 12,
    "janeiro": 1,
    "fevereiro": 2,
    "março": 3,
    "maio": 5,
    "junho": 6,
    "julho": 7,
    "setembro": 9,
    "outubro": 10,
    "dezembro": 12,
}
_MONTH_WORD = r"(?P<mon>[^\W\d_]{3,10})\.?"
_PATTERNS = (
    # 2024-02-02, 2024/02/02, 2024.02.02: year first is always year-month-day.
    re.compile(r"(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})"),
    # 02/02/2024, 2.2.2024, 02-02-2024: the order is the document's.
    re.compile(r"(?P<a>\d{1,2})[/.-](?P<b>\d{1,2})[/.-](?P<y>\d{4})"),
    # 2024년 2월 2일, 2024年2月2日
    re.compile(r"(?P<y>\d{4})\s*[년年]\s*(?P<m>\d{1,2})\s*[월月]\s*(?P<d>\d{1,2})\s*[일日]"),
    # February 2, 2024
    re.compile(_MONTH_WORD + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})"),
    # 2 February 2024, 2. Februar 2024, 2 de febrero de 2024
    re.compile(
        r"(?P<d>\d{1,2})(?:\.|st|nd|rd|th|er)?\s+(?:de\s+)?"
        + _MONTH_WORD
        + r"\s+(?:de\s+)?(?P<y>\d{4})"
    ),
)
_MAX_FIELD = 12
_LONGEST = 60  # no printed date, with its surrounding space and punctuation, is longer
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class PrintedDate:
    """A date as printed: year, and two numeric fields whose order may be unknown."""

    printed: str
    year: int
    first: int
    second: int
    order: DateOrder | None  # None: numeric day/month whose order the document decides

    def resolve(self, order: DateOrder | None) -> dt.date | None:
        """Return the date in the given order, or None if the order is unknown."""
        use = self.order or order
        if use is None and self.first == self.second:
            use = DateOrder.DMY  # 02/02/2024 reads the same either way
        if use is None:
            return None
        day, month = (
            (self.first, self.second) if use is DateOrder.DMY else (self.second, self.first)
        )
        try:
            return dt.date(self.year, month, day)
        except ValueError:
            return None


def parse_date(text: str) -> PrintedDate | None:
    """Recognise TEXT as exactly one date (surrounding punctuation allowed), else None."""
    if len(text) > _LONGEST or not _DIGIT.search(text):
        return None  # the common case, a line of ruling text, decided without normalising
    return _parse_short(text)


# Dumps print the same few thousand dates over and over; the answer is immutable.
@lru_cache(maxsize=65536)
def _parse_short(text: str) -> PrintedDate | None:
    stripped = unicodedata.normalize("NFC", text).strip().strip(":\u2013\u2014-").strip()
    if not stripped:
        return None
    for pattern in _PATTERNS:
        match = pattern.fullmatch(stripped)
        if match is None:
            continue
        groups = match.groupdict()
        year = int(groups["y"])
        if "a" in groups:
            return PrintedDate(stripped, year, int(groups["a"]), int(groups["b"]), None)
        month = _MONTHS.get(groups["mon"].lower()) if "mon" in groups else int(groups["m"])
        if month is None:
            return None
        return PrintedDate(stripped, year, int(groups["d"]), month, DateOrder.DMY)
    return None


def infer_order(dates: list[PrintedDate]) -> tuple[DateOrder | None, bool]:
    """Infer a document's day/month order from its numeric dates.

    Returns (order, conflict). The order is None when no date decides it; conflict is
    True when some dates can only be day-first and others only month-first.
    """
    numeric = [d for d in dates if d.order is None]
    day_first = any(d.first > _MAX_FIELD for d in numeric)
    month_first = any(d.second > _MAX_FIELD for d in numeric)
    if day_first and month_first:
        return None, True
    if day_first:
        return DateOrder.DMY, False
    if month_first:
        return DateOrder.MDY, False
    return None, False


def needs_order(dates: list[PrintedDate]) -> bool:
    """Tell whether some numeric date reads differently day-first and month-first."""
    return any(d.order is None and d.first != d.second for d in dates)
