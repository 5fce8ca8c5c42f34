"""Integer key codes: equal exactly where the keys are, ordered as the keys are."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import keys
from pipeline.columns import encoded, kept, listed, strings, used_only
from pipeline.keys import codes, first_rows

VALUES = st.one_of(st.none(), st.sampled_from(["", "a", "b", "ab", "Z", "\x00"]))
ROWS = st.lists(st.tuples(VALUES, VALUES, st.one_of(st.none(), st.integers(0, 3))), max_size=40)


def _table(rows: list[tuple[Any, ...]], *, encoded: bool = False) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [(), (), ()]
    first = pa.array(columns[0], pa.string())
    return pa.table({
        "a": first.dictionary_encode() if encoded else first,
        "b": pa.array(columns[1], pa.string()),
        "c": pa.array(columns[2], pa.int64()),
    })  # fmt: skip


def _order(row: tuple[Any, ...], nulls_first: frozenset[int] = frozenset()) -> tuple[Any, ...]:
    """What codes promise: each column ascending, nulls last (or first)."""
    return tuple(
        (0 if i in nulls_first else 2, "") if v is None else (1, v) for i, v in enumerate(row)
    )


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(left=ROWS, right=ROWS, encoded=st.booleans())
def test_codes_are_equal_and_ordered_as_the_keys(
    left: list[tuple[Any, ...]], right: list[tuple[Any, ...]], *, encoded: bool
) -> None:
    """Across two tables (one maybe dictionary-encoded), codes compare as the rows do."""
    ours, theirs = codes([_table(left, encoded=encoded), _table(right)], ["a", "b", "c"])
    rows = left + right
    found = listed(ours) + listed(theirs)
    for i, row in enumerate(rows):
        for j, other in enumerate(rows):
            assert (found[i] == found[j]) == (row == other)
            assert (found[i] < found[j]) == (_order(row) < _order(other))


@settings(max_examples=100, deadline=None)
@given(rows=ROWS)
def test_nulls_first_puts_null_before_every_value(rows: list[tuple[Any, ...]]) -> None:
    """A column in nulls_first orders its nulls before its values."""
    [found] = codes([_table(rows)], ["a", "b", "c"], nulls_first={"b"})
    values = listed(found)
    for i, row in enumerate(rows):
        for j, other in enumerate(rows):
            expected = _order(row, frozenset({1})) < _order(other, frozenset({1}))
            assert (values[i] < values[j]) == expected


def test_codes_are_renumbered_before_they_would_overflow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many wide columns fold into codes that stay exact (renumbered on the way)."""
    monkeypatch.setattr(keys, "_LIMIT", 16)
    names = [f"c{n}" for n in range(6)]
    rows = [tuple((n * (k + 3)) % 7 for k in range(6)) for n in range(50)]
    table = pa.table({name: [row[k] for row in rows] for k, name in enumerate(names)})
    [found] = codes([table], names)
    values = listed(found)
    assert sorted(range(50), key=values.__getitem__) == sorted(range(50), key=rows.__getitem__)
    assert len(set(values)) == len(set(rows))


def test_codes_need_a_column() -> None:
    """An empty key is a programming error, said plainly."""
    with pytest.raises(ValueError, match="at least one column"):
        codes([pa.table({"a": [1]})], [])


def test_first_rows_gives_each_keys_first_row_among_the_marked_ones() -> None:
    """One row index per distinct key, the earliest; rows the mask leaves out are not seen."""
    table = pa.table({"k": ["b", "a", None, "b", "a", None, "c"]})
    assert sorted(listed(first_rows(table, ["k"]))) == [0, 1, 2, 6]
    mask = pa.array([False, True, True, True, True, True, False])
    assert sorted(listed(first_rows(table, ["k"], where=mask))) == [1, 2, 3]


def test_first_rows_come_ascending_and_a_null_mask_leaves_a_row_out() -> None:
    """The rows are in table order (callers build messages from them), nulls in WHERE skip."""
    table = pa.table({"k": ["c", "a", "c", "b", "a"]})
    assert first_rows(table, ["k"]).to_pylist() == [0, 1, 3]
    mask = pa.chunked_array([[None, True], [True, True, None]], pa.bool_())
    assert first_rows(table, ["k"], where=mask).to_pylist() == [1, 2, 3]


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 10**12)), max_size=60),
    split=st.integers(0, 60),
)
def test_groups_reduce_each_code_as_a_dictionary_would(
    pairs: list[tuple[int, int]], split: int
) -> None:
    """Per code, in code order: its first row, and the min, max and sum of its values."""
    codes_in = [code for code, _ in pairs]
    values = [value for _, value in pairs]
    chunked = pa.chunked_array([codes_in[:split], codes_in[split:]] if pairs else [], pa.int64())
    found = keys.Groups.of(chunked)
    expected: dict[int, list[int]] = {}
    for row, code in enumerate(codes_in):
        expected.setdefault(code, []).append(row)
    in_order = sorted(expected)
    assert found.firsts.tolist() == [expected[code][0] for code in in_order]
    column = pa.array(values, pa.int64())
    for how, reference in ((np.minimum, min), (np.maximum, max), (np.add, sum)):
        assert found.reduce(column, how).tolist() == [
            reference(values[row] for row in expected[code]) for code in in_order
        ]


def test_groups_reduce_dates_and_refuse_nulls() -> None:
    """Dates are reduced as days; a null has no place in a group and is said so."""
    found = keys.Groups.of(pa.array([1, 0, 1], pa.int64()))
    days = pa.array([dt.date(2024, 2, 2), dt.date(2003, 1, 1), dt.date(2020, 5, 5)])
    reduced = pa.array(found.reduce(days, np.maximum), pa.int32()).cast(pa.date32())
    assert reduced.to_pylist() == [dt.date(2003, 1, 1), dt.date(2024, 2, 2)]
    with pytest.raises(ValueError, match="nulls"):
        keys.Groups.of(pa.array([1, None], pa.int64()))


def test_kept_returns_the_rows_themselves_when_the_mask_keeps_them_all() -> None:
    """No copy where nothing is dropped; a filter where something is (nulls drop)."""
    table = pa.table({"a": [1, 2, 3]})
    assert kept(table, pa.array([True, True, True])) is table
    assert kept(table, pa.array([True, None, True]))["a"].to_pylist() == [1, 3]
    assert kept(table["a"], pa.chunked_array([[True], [False, True]])).to_pylist() == [1, 3]


def test_listed_decodes_dictionary_columns_with_their_nulls() -> None:
    """Listing a dictionary column gives its values, whatever its chunks (decoded first)."""
    plain = pa.array(["b", None, "a", "b"])
    encoded = plain.dictionary_encode()
    chunked = pa.chunked_array([encoded.slice(0, 2), encoded.slice(2)])
    assert listed(encoded) == ["b", None, "a", "b"]
    assert listed(chunked) == ["b", None, "a", "b"]
    assert listed(pa.array([3, None])) == [3, None]
    assert strings(pa.array(["x", "y"]).dictionary_encode()) == ["x", "y"]


def test_encoded_takes_chunked_indices_with_their_nulls() -> None:
    """Indices in several chunks give the same dictionary array as the same indices in one."""
    dictionary = pa.array(["a", "b", "c"])
    chunked = pa.chunked_array([pa.array([2, None], pa.int32()), pa.array([0, 2], pa.int32())])
    column = encoded(chunked, dictionary)
    assert isinstance(column, pa.DictionaryArray)
    assert listed(column) == ["c", None, "a", "c"]
    assert column.equals(encoded(chunked.combine_chunks(), dictionary))
    assert used_only(column).dictionary.to_pylist() == ["c", "a"]
