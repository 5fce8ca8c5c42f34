"""Printed dates: the forms recognised and per-document day/month inference."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.models import DateOrder
from pipeline.text.dates import infer_order, needs_order, parse_date


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        ("2024-02-02", dt.date(2024, 2, 2)),
        ("2024/2/3", dt.date(2024, 2, 3)),
        ("  2023-10-13 ", dt.date(2023, 10, 13)),
        ("February 2, 2024", dt.date(2024, 2, 2)),
        ("Feb. 3, 2024", dt.date(2024, 2, 3)),
        ("3 February 2024", dt.date(2024, 2, 3)),
        ("2. Februar 2024", dt.date(2024, 2, 2)),
        ("3 de febrero de 2024", dt.date(2024, 2, 3)),
        ("3 février 2024", dt.date(2024, 2, 3)),
        ("2024년 2월 3일", dt.date(2024, 2, 3)),
        ("2024年2月3日", dt.date(2024, 2, 3)),
    ],
)
def test_unambiguous_forms(printed: str, expected: dt.date) -> None:
    """Year-first and named-month dates need no document context."""
    date = parse_date(printed)
    assert date is not None
    assert date.resolve(None) == expected


@pytest.mark.parametrize(
    "text",
    ["Rift Bolt", "2024", "13 Ravnica 2024", "Cards exiled on 2024-02-02 stay.", "02/02/24", ""],
)
def test_non_dates(text: str) -> None:
    """Lines that are not exactly one date are not dates."""
    assert parse_date(text) is None


def test_numeric_dates_depend_on_order() -> None:
    """07/06/2013 is 7 June day-first and 6 July month-first; 02/02/2024 is both."""
    date = parse_date("07/06/2013")
    assert date is not None
    assert date.resolve(DateOrder.DMY) == dt.date(2013, 6, 7)
    assert date.resolve(DateOrder.MDY) == dt.date(2013, 7, 6)
    assert date.resolve(None) is None
    same = parse_date("02.02.2024")
    assert same is not None
    assert same.resolve(None) == dt.date(2024, 2, 2)


@pytest.mark.parametrize("printed", ["31/02/2024", "00/01/2024", "2024-13-01", "1/1/0000"])
def test_impossible_dates_resolve_to_none(printed: str) -> None:
    """A date that does not exist resolves to None rather than raising."""
    date = parse_date(printed)
    assert date is not None
    assert date.resolve(DateOrder.DMY) is None


@pytest.mark.parametrize(
    ("printed", "order", "conflict"),
    [
        (["19/03/2021", "07/06/2013"], DateOrder.DMY, False),
        (["03/19/2021", "07/06/2013"], DateOrder.MDY, False),
        (["02/02/2024", "07/06/2013"], None, False),
        (["19/03/2021", "03/19/2021"], None, True),
        (["2024-02-02"], None, False),
    ],
    ids=["day-first", "month-first", "undecided", "conflict", "iso-only"],
)
def test_infer_order(printed: list[str], order: DateOrder | None, *, conflict: bool) -> None:
    """A field over 12 decides the order for the whole document."""
    dates = [d for p in printed if (d := parse_date(p)) is not None]
    assert infer_order(dates) == (order, conflict)


def test_needs_order_only_when_fields_differ() -> None:
    """Equal fields read the same either way, so they need no order."""
    assert not needs_order([d for p in ["02/02/2024", "2024-01-05"] if (d := parse_date(p))])
    assert needs_order([d for p in ["07/06/2013"] if (d := parse_date(p))])
