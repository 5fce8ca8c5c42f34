"""features.traits() of many texts at once, on their code points: no Python per text or match.

The texts are one Arrow column: NFKC is Arrow's (`utf8_normalize`), and the rest runs on
the code points of all the texts at once as a numpy array, a separator (no character) before
each text. What each of `features`' patterns matches is found by numpy passes over that
array: a character's classes come from a table made by Python's own `re` and `str` over
every character of the Basic Multilingual Plane, so they are `re`'s classes exactly, and
each pattern's matches (leftmost, greedy, lookarounds) are worked out from its neighbours.
Lower case is Python's, by a table of each character's `str.lower()`. The few texts where
that is not exact are taken one by one (features.traits): those holding a character
Python's Unicode does not assign (Arrow's NFKC may know it), one outside the plane, a
digit other than 0-9, one whose lower case is longer (İ) or depends on its neighbours (Σ).
Tokens become Arrow strings from the code points in one encoding of them all.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, partial
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.folding.translate import features as F  # noqa: N812 - its patterns, as F._WORD
from pipeline.folding.translate.batch import MarkList, Traits, _ordered
from pipeline.folding.translate.features import ANCHOR, LENGTH_RATIO, MIN_NAME, STEM

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from numpy.typing import NDArray

    from pipeline.folding.translate.batch import Column

# Code points are kept as indices into the class tables: the plane's characters as they
# are, SEP (before each text, and after the last) and OUTSIDE (any character past the plane).
_PLANE = 0x10000
SEP = _PLANE
_OUTSIDE = _PLANE + 1
# Class bits (_Tables.flags).
_WORD = 1 << 0  # features._WORD: [^\W\d_]
_DIGIT = 1 << 1  # 0-9
_SPACE = 1 << 2  # \s
_LATIN = 1 << 3  # features._LATIN_WORD's first class, case ignored
_LATIN_TAIL = 1 << 4  # its [a-z] after an apostrophe, case ignored
_UPPER = 1 << 5  # A-Z
_LOWER = 1 << 6  # a-z
_NOT_BEFORE = 1 << 7  # what features._CAPITALISED's lookbehind excludes two characters back
_HANGUL = 1 << 8
_CJK = 1 << 9
_ALNUM_DOT = 1 << 10  # A-Za-z0-9 and ".", features._NUMBER's lookbehind
_ALONE = 1 << 11  # a text holding it (after NFKC) is taken one by one
_UNASSIGNED = 1 << 12  # not a character of Python's Unicode: a text holding it, the same
_ENDS = frozenset(map(ord, "\u3002\uff01\uff1f"))
_ELLIPSIS = 0x2026
# Texts taken at a time (traits).
_STEP = 2_048
# Surrogates: never in UTF-8 text, and refused by RE2 in a class.
_SURROGATES = range(0xD800, 0xE000)


class _Tables(NamedTuple):
    flags: NDArray[np.uint16]
    lower: NDArray[np.int32]
    utf8: NDArray[np.int32]


@cache
def tables() -> _Tables:
    """Each character's classes, lower case and UTF-8 length, by Python's `re` and `str`."""
    chars = "".join(map(chr, range(_PLANE)))
    flags = np.zeros(_PLANE + 2, dtype=np.uint16)

    def mark(pattern: str, bit: int, flags_: int = 0) -> None:
        for match in re.finditer(f"(?:{pattern})+", chars, flags_):
            flags[match.start() : match.end()] |= bit

    mark(F._WORD.pattern, _WORD)  # noqa: SLF001 - the very patterns the one-text path uses
    mark("[0-9]", _DIGIT)
    mark(r"\s", _SPACE)
    mark("[a-z\u00c0-\u024f]", _LATIN, re.IGNORECASE)
    mark("[a-z]", _LATIN_TAIL, re.IGNORECASE)
    mark("[A-Z]", _UPPER)
    mark("[a-z]", _LOWER)
    mark('[\\s.!?:;("\u201e\u201c\u00ab\u300c]', _NOT_BEFORE)
    mark(F._HANGUL.pattern[:-1], _HANGUL)  # noqa: SLF001
    mark(F._CJK.pattern[:-1], _CJK)  # noqa: SLF001
    mark("[A-Za-z0-9.]", _ALNUM_DOT)
    # Exactly what the one-text path does: a digit other than 0-9, or a character whose
    # lower case is not one character of its own, is taken there.
    mark(r"(?![0-9])\d", _ALONE)
    lowered = [c.lower() for c in chars]
    lower = np.arange(_PLANE + 2, dtype=np.int32)
    for n, low in enumerate(lowered):
        if len(low) != 1:
            flags[n] |= _ALONE
        elif low != chars[n]:
            lower[n] = ord(low)
    flags[0x03A3] |= _ALONE  # Σ: lower case by its neighbours (final sigma)
    unassigned = [n for n in range(_PLANE) if unicodedata.category(chars[n]) in {"Cn", "Cs"}]
    flags[unassigned] |= _ALONE | _UNASSIGNED
    flags[_OUTSIDE] = _ALONE | _UNASSIGNED
    utf8 = np.ones(_PLANE + 2, dtype=np.int32)
    utf8[0x80:0x800] = 2
    utf8[0x800:_PLANE] = 3
    return _Tables(flags, lower, utf8)


def _points(column: Column) -> NDArray[np.int32]:
    """A string column's code points (as table indices), a SEP before each text and at the end."""
    size = len(column)
    buffers = column.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32)[column.offset : column.offset + size + 1]
    first, last = int(offsets[0]), int(offsets[-1])
    data = buffers[2]
    raw = b"" if data is None else memoryview(data)[first:last]
    points = np.frombuffer(bytes(raw).decode("utf-8").encode("utf-32-le"), dtype=np.int32)
    counted: Column = pc.utf8_length(column)
    lengths = np.asarray(counted.to_numpy(zero_copy_only=False), dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    if len(points) and int(points.max()) >= _PLANE:
        points = np.where(points >= _PLANE, _OUTSIDE, points).astype(np.int32)
    found = np.insert(points, starts, np.int32(SEP))
    return np.append(found, np.int32(SEP))


@cache
def _unassigned() -> str:
    """An RE2 class of what Python's Unicode does not assign, and of what is past the plane."""
    flags = tables().flags[:_PLANE]
    held = np.flatnonzero(flags & _UNASSIGNED)
    if not len(held):
        return "[\\x{10000}-\\x{10FFFF}]"
    breaks = np.flatnonzero(np.diff(held) != 1)
    firsts = np.concatenate([[held[0]], held[breaks + 1]])
    lasts = np.concatenate([held[breaks], [held[-1]]])
    ranges = [(int(a), int(b)) for a, b in zip(firsts, lasts, strict=True) if a not in _SURROGATES]
    spelt = "".join(f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)
    return f"[{spelt}\\x{{10000}}-\\x{{10FFFF}}]"


class _Text(NamedTuple):
    """Characters (SEPARATOR-separated texts) and their classes.

    Code points here (SEP); bytes in pipeline.folding.translate.bytewise, whose separator
    is NUL: the patterns' functions below serve both.
    """

    # Code points (int32) or bytes (uint8).
    points: NDArray[Any]
    flags: NDArray[np.uint16]
    separator: int = SEP

    def has(self, bit: int) -> NDArray[np.bool_]:
        found: NDArray[np.bool_] = (self.flags & bit) != 0
        return found

    def sep(self) -> NDArray[np.int64]:
        return np.flatnonzero(self.points == self.separator)


def _text(points: NDArray[np.int32]) -> _Text:
    return _Text(points, tables().flags[points])


def _shifted(mask: NDArray[np.bool_], by: int) -> NDArray[np.bool_]:
    """MASK at each position's BY-th neighbour (BY < 0: before), False past the ends."""
    found = np.zeros_like(mask)
    if by > 0:
        found[:-by] = mask[by:]
    else:
        found[-by:] = mask[:by]
    return found


def _next(mask: NDArray[np.bool_], at: NDArray[np.int64]) -> NDArray[np.int64]:
    """The first position at or after each of AT where MASK holds (it holds at the end)."""
    where = np.flatnonzero(mask)
    return where[np.searchsorted(where, at)]


def _end(mask: NDArray[np.bool_], at: NDArray[np.int64]) -> NDArray[np.int64]:
    """_next(~MASK, AT): the end of the run of MASK each of AT is in (itself if none).

    Found among the runs' ends, fewer than the positions outside MASK.
    """
    ends = np.flatnonzero(mask & ~_shifted(mask, 1)) + 1
    if not len(ends):
        return at
    found = ends[np.minimum(np.searchsorted(ends, at, side="right"), len(ends) - 1)]
    return np.where(mask[at], found, at)


def _replace(text: _Text, starts: NDArray[np.int64], ends: NDArray[np.int64], by: int) -> _Text:
    """TEXT with each span [STARTS, ENDS) (apart, in order) made the one character BY."""
    if not len(starts):
        return text
    dropped = ends - starts - 1
    before = np.cumsum(dropped) - dropped
    at = np.repeat(starts + 1 - before, dropped) + np.arange(int(dropped.sum()), dtype=np.int64)
    points = text.points.copy()
    points[starts] = by
    flags = text.flags.copy()
    flags[starts] = tables().flags[by]
    return text._replace(points=np.delete(points, at), flags=np.delete(flags, at))


def _symbols(text: _Text) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """features._SYMBOL's matches: { then 1 to 8 characters but braces and spaces, then }."""
    points = text.points
    opening = np.flatnonzero(points == ord("{"))
    stop = (
        (points == ord("{")) | (points == ord("}")) | text.has(_SPACE) | (points == text.separator)
    )
    close = _next(stop, opening + 1)
    held = (points[close] == ord("}")) & (close - opening >= 2) & (close - opening <= 9)  # noqa: PLR2004
    return opening[held], close[held] + 1


def _numbers(text: _Text) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """features._NUMBER's matches (only 0-9 are digits here: texts with others go alone)."""
    digit = text.has(_DIGIT)
    starts = np.flatnonzero(digit & ~_shifted(text.has(_ALNUM_DOT), -1))
    ends = _end(digit, starts)
    points = text.points
    size = len(points)
    # A fraction: "." and digits, then a lower-case letter not before a digit.
    dot = (points[ends] == ord(".")) & digit[np.minimum(ends + 1, size - 1)]
    fraction = _end(digit, np.minimum(ends + 1, size - 1))
    after = np.minimum(fraction + 1, size - 1)
    letter = text.has(_LOWER)[fraction] & ~digit[after]
    ends = np.where(dot, np.where(letter, fraction + 1, fraction), ends)
    return starts, ends


def _runs(mask: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The maximal runs of MASK: their starts and ends."""
    starts = np.flatnonzero(mask & ~_shifted(mask, -1))
    return starts, _end(mask, starts)


def _capitalised(text: _Text) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """features._CAPITALISED's matches: [A-Z][a-z]+ after a space after no end of sentence."""
    lower = text.has(_LOWER)
    before = ~text.has(_NOT_BEFORE) & (text.points != text.separator)
    starts = np.flatnonzero(
        text.has(_UPPER)
        & _shifted(lower, 1)
        & _shifted(text.has(_SPACE), -1)
        & _shifted(before, -2)
    )
    return starts, _end(lower, starts + 1)


def _latin_words(text: _Text) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """features._LATIN_WORD's matches where no apostrophe follows one: runs of its letters.

    Also where one does (a letter, ', a letter of [a-z]): the texts taken one by one, as a
    match there decides where the next one starts.
    """
    latin = text.has(_LATIN)
    starts, ends = _runs(latin)
    quoted = (text.points == ord("'")) & _shifted(latin, -1) & _shifted(text.has(_LATIN_TAIL), 1)
    return starts, ends, np.flatnonzero(quoted)


def _pauses(text: _Text) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """features._PAUSE's matches: "." then one or more " .", greedy."""
    points = text.points
    dot = points == ord(".")
    linked = dot & _shifted(points == ord(" "), 1) & _shifted(dot, 2)
    starts = np.flatnonzero(linked & ~_shifted(linked, -2))
    if not len(starts):
        return starts, starts
    # Each chain runs every second position: its links are a run of its parity's positions.
    ends = np.empty(len(starts), dtype=np.int64)
    for parity in (0, 1):
        chained = linked[parity::2]
        mine = starts % 2 == parity
        at = (starts[mine] - parity) // 2
        last = _end(chained, at)
        ends[mine] = last * 2 + parity + 1
    return starts, ends


def _rows(sep: NDArray[np.int64], starts: NDArray[np.int64]) -> NDArray[np.int64]:
    """The text each position of STARTS is in (SEP: the separators' positions)."""
    return np.searchsorted(sep, starts, side="right") - 1


def _strings(
    points: NDArray[np.int32],
    starts: NDArray[np.int64],
    ends: NDArray[np.int64],
    *,
    lower: bool = False,
) -> Column:
    """The spans [STARTS, ENDS) of POINTS (characters of the plane) as an Arrow string column.

    LOWER: in lower case (str.lower() of each character).
    """
    table = tables()
    lengths = ends - starts
    total = int(lengths.sum())
    before = np.cumsum(lengths) - lengths
    at = np.repeat(starts - before, lengths) + np.arange(total, dtype=np.int64)
    chars = table.lower[points[at]] if lower else points[at]
    data = chars.astype("<u4").tobytes().decode("utf-32-le").encode("utf-8")
    # Every span holds a character: each one's bytes are a sum from its first.
    sizes = np.add.reduceat(table.utf8[chars], before) if total else np.zeros(0, np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return pa.StringArray.from_buffers(
        len(starts), pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(data)
    )


class _Rows:
    """The texts' languages, and which are taken one by one (features.traits)."""

    def __init__(self, langs: Sequence[str], alone: NDArray[np.bool_]) -> None:
        self.names = sorted(set(langs))
        self.codes = np.searchsorted(self.names, np.asarray(langs, dtype=object)).astype(np.int64)
        self.alone = alone

    def of(self, rows: NDArray[np.int64], wanted: Collection[str]) -> NDArray[np.bool_]:
        """Whether each of ROWS is a text in a language of WANTED."""
        held = np.asarray([name in wanted for name in self.names], dtype=np.bool_)
        return held[self.codes[rows]] if len(self.names) else np.zeros(len(rows), np.bool_)

    def kept(self, rows: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Whether each of ROWS is taken here."""
        return ~self.alone[rows]


def traits(texts: Sequence[str], langs: Sequence[str]) -> Traits:
    """features.traits() of each (TEXTS[n], LANGS[n]), as columns: the same features.

    Taken _STEP texts at a time: the arrays of a step's code points stay small (the
    54,768 real card translations at once took 2.3 to 2.8 s, a step at a time 1.4 s).
    """
    if len(texts) <= _STEP:
        return _traits(texts, langs)
    steps = [
        _traits(texts[start : start + _STEP], langs[start : start + _STEP])
        for start in range(0, len(texts), _STEP)
    ]
    starts = np.cumsum([0, *(step.size for step in steps)])
    return Traits(
        len(texts),
        np.concatenate([s.word_rows + at for s, at in zip(steps, starts, strict=False)]),
        pa.concat_arrays([step.words for step in steps]),
        np.concatenate([s.anchor_rows + at for s, at in zip(steps, starts, strict=False)]),
        pa.concat_arrays([step.anchors for step in steps]),
        np.concatenate([step.sentences for step in steps]),
        np.concatenate([step.lengths for step in steps]),
        MarkList.joined([cast("MarkList", step.marks) for step in steps]),
    )


def _traits(texts: Sequence[str], langs: Sequence[str]) -> Traits:
    size = len(texts)
    column = pa.array(texts, pa.string())
    prepared = _nfkc(texts, column)
    text = _text(_points(prepared))
    alone = np.asarray(
        pc.match_substring_regex(column, _unassigned()).to_numpy(zero_copy_only=False),
        dtype=np.bool_,
    )
    bad = np.flatnonzero(text.has(_ALONE))
    if len(bad):
        alone[_rows(text.sep(), bad)] = True
    rows = _Rows(langs, alone)
    # Anchors: symbols, numbers and names of the text without its symbols (features._split).
    anchor_parts, unnumbered = _anchors(text, rows)
    # Words: of the text without its numbers either, lower case (features._words).
    word_parts = [_words(_text(tables().lower[unnumbered]), rows)]
    # Shape and marks: of the text with its pauses made one character.
    pause_starts, pause_ends = _pauses(text)
    paused = _replace(text, pause_starts, pause_ends, _ELLIPSIS)
    sentences, lengths = _shape(paused, paused.sep(), size)
    ratios = np.asarray([LENGTH_RATIO.get(name, 1.0) for name in rows.names])
    lengths /= ratios[rows.codes] if size else 1.0
    mark_rows, mark_keys, mark_counts = _text_marks(paused, rows)
    mark_parts = [(mark_rows, mark_keys, mark_counts)]
    for row in np.flatnonzero(alone).tolist():
        one = F.traits(texts[row], langs[row])
        word_parts.append(
            (np.full(len(one.words), row, np.int64), pa.array(one.words, pa.string()))
        )
        anchor_parts.append(
            (np.full(len(one.anchors), row, np.int64), pa.array(one.anchors, pa.string()))
        )
        sentences[row], lengths[row] = one.shape
        mark_parts.append(
            (
                np.full(len(one.marks), row, np.int64),
                pa.array(list(one.marks), pa.string()),
                np.asarray(list(one.marks.values()), dtype=np.int64),
            )
        )
    word_rows, words = _ordered(word_parts)
    anchor_rows, anchors = _ordered(anchor_parts)
    marks = MarkList.of(
        size,
        np.concatenate([part[0] for part in mark_parts]),
        pa.concat_arrays([part[1] for part in mark_parts]),
        np.concatenate([part[2] for part in mark_parts]),
    )
    return Traits(size, word_rows, words, anchor_rows, anchors, sentences, lengths, marks)


def _nfkc(texts: Sequence[str], column: Column) -> Column:
    """COLUMN (TEXTS) in NFKC: Arrow's, of the texts Python's quick check does not find so.

    Most texts are (seven in ten of the real card translations): they are left as they
    are. A text Python finds in NFKC is in NFKC in every later Unicode version too (the
    standard's stability policy), so Arrow's newer tables would leave it as well.
    """
    quick = partial(unicodedata.is_normalized, "NFKC")
    normal = np.fromiter(map(quick, texts), np.bool_, len(texts))
    if normal.all():
        return column
    redone = pa.array(np.flatnonzero(~normal), pa.int64())
    normalized = getattr(pc, "utf8_normalize")(column.take(redone), "NFKC")  # noqa: B009 - not in pyarrow's stubs
    return pc.replace_with_mask(column, pa.array(~normal), normalized)


def _anchors(
    text: _Text, rows: _Rows
) -> tuple[list[tuple[NDArray[np.int64], Column]], NDArray[np.int32]]:
    """features._anchors of every text (symbols, numbers, names), and the text for words.

    The latter is without its symbols and numbers (features._words). Marks the texts
    where a Latin word goes on past an apostrophe as taken one by one.
    """
    sep = text.sep()
    symbol_starts, symbol_ends = _symbols(text)
    symbol_rows = _rows(sep, symbol_starts)
    plain = _replace(text, symbol_starts, symbol_ends, ord(" "))
    plain_sep = plain.sep()
    number_starts, number_ends = _numbers(plain)
    number_rows = _rows(plain_sep, number_starts)
    non_latin = F._NON_LATIN  # noqa: SLF001
    latin_starts, latin_ends, quoted = _latin_words(plain)
    quoted_rows = _rows(plain_sep, quoted)
    rows.alone[quoted_rows[rows.of(quoted_rows, non_latin)]] = True
    name_parts = []
    for (starts, ends), wanted in (
        ((latin_starts, latin_ends), True),
        (_capitalised(plain), False),
    ):
        found = _rows(plain_sep, starts)
        mine = (rows.of(found, non_latin) == wanted) & (ends - starts >= MIN_NAME)
        name_parts.append((starts[mine], ends[mine], found[mine]))
    name_starts, name_ends, name_rows = (
        np.concatenate(part) for part in zip(*name_parts, strict=True)
    )
    order = np.argsort(name_starts, kind="stable")
    parts: list[tuple[NDArray[np.int64], Column]] = []
    for found, made in (
        (symbol_rows, _prefixed(ANCHOR, text.points, symbol_starts, symbol_ends, lower=True)),
        (number_rows, _prefixed(ANCHOR + "#", plain.points, number_starts, number_ends)),
        (
            name_rows[order],
            _prefixed(ANCHOR + "@", plain.points, name_starts[order], name_ends[order], lower=True),
        ),
    ):
        keep = rows.kept(found)
        parts.append((found[keep], made.filter(pa.array(keep))))
    return parts, _replace(plain, number_starts, number_ends, ord(" ")).points


def _text_marks(paused: _Text, rows: _Rows) -> tuple[NDArray[np.int64], Column, NDArray[np.int64]]:
    """features._marks of every text, PAUSED (its pauses made one character), as entries.

    (row, mark, count) in the order features._marks adds them to a text's dict: symbols,
    numbers, brackets, the pause; the texts taken one by one hold none.
    """
    size = len(rows.alone)
    starts, ends = _symbols(paused)
    symbol_rows = _rows(paused.sep(), starts)
    plain = _replace(paused, starts, ends, ord(" "))
    plain_sep = plain.sep()
    number_starts, number_ends = _numbers(plain)
    parts: list[tuple[NDArray[np.int64], Column]] = []
    for found, made in (
        (symbol_rows, _prefixed("", paused.points, starts, ends, lower=True)),
        (_rows(plain_sep, number_starts), _prefixed("#", plain.points, number_starts, number_ends)),
    ):
        keep = rows.kept(found)
        parts.append((found[keep], made.filter(pa.array(keep)).cast(pa.string())))
    points = plain.points
    dot = points == ord(".")
    brackets = np.bincount(_rows(plain_sep, np.flatnonzero(points == ord("("))), minlength=size)
    ellipsis = (points == _ELLIPSIS) | (dot & _shifted(dot, 1) & _shifted(dot, 2))
    paused_any = np.bincount(_rows(plain_sep, np.flatnonzero(ellipsis)), minlength=size) > 0
    brackets[rows.alone] = 0
    paused_any[rows.alone] = False
    bracketed = np.flatnonzero(brackets)
    pausing = np.flatnonzero(paused_any)
    entries = np.concatenate([parts[0][0], parts[1][0], bracketed, pausing])
    keys = pa.concat_arrays(
        [
            parts[0][1],
            parts[1][1],
            pa.array(["("] * len(bracketed), pa.string()),
            pa.array(["\u2026"] * len(pausing), pa.string()),
        ]
    )
    counts = np.ones(len(entries), dtype=np.int64)
    counts[len(entries) - len(pausing) - len(bracketed) : len(entries) - len(pausing)] = brackets[
        bracketed
    ]
    return entries.astype(np.int64), keys, counts


def _prefixed(
    prefix: str,
    points: NDArray[np.int32],
    starts: NDArray[np.int64],
    ends: NDArray[np.int64],
    *,
    lower: bool = False,
) -> Column:
    found = _strings(points, starts, ends, lower=lower)
    return pc.binary_join_element_wise(pa.scalar(prefix), found, "") if prefix else found


def _shape(
    paused: _Text, sep: NDArray[np.int64], size: int
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """features._shape of each text: sentences (at least one) and length stripped."""
    points = paused.points
    end_char = np.isin(points, list(_ENDS))
    stop = np.isin(points, [ord("."), ord("!"), ord("?")])
    after = _shifted(paused.has(_SPACE) | (points == paused.separator), 1)
    ends = np.flatnonzero(end_char | (stop & after))
    sentences = np.maximum(1, np.bincount(_rows(sep, ends), minlength=size)[:size])
    solid = np.flatnonzero(~paused.has(_SPACE) & (points != paused.separator))
    first_at = np.searchsorted(solid, sep[:-1])
    last_at = np.searchsorted(solid, sep[1:]) - 1
    solid = np.append(solid, len(points))
    has = first_at <= last_at
    lengths = np.where(has, solid[np.maximum(last_at, 0)] - solid[first_at] + 1, 0)
    return sentences.astype(np.int64), lengths.astype(np.float64)


def _words(text: _Text, texts: _Rows) -> tuple[NDArray[np.int64], Column]:
    """features._words of every text at once: its language's kind of word, in text order."""
    sep = text.sep()
    parts = []
    starts, ends = _runs(text.has(_WORD))
    rows = _rows(sep, starts)
    other = ~texts.of(rows, {"ko", "ja", "zh"})
    english = texts.of(rows, {"en"})
    mine = other & (~english | (ends - starts > 1))
    parts.append((starts[mine], np.minimum(ends, starts + STEM)[mine], np.zeros(int(mine.sum()))))
    starts, ends = _runs(text.has(_HANGUL))
    mine = texts.of(_rows(sep, starts), {"ko"})
    starts, ends = starts[mine], ends[mine]
    parts.append((starts, np.minimum(ends, starts + 2), np.zeros(len(starts))))
    longer = ends - starts > 2  # noqa: PLR2004
    parts.append((starts[longer], ends[longer] - 1, np.ones(int(longer.sum()))))
    cjk = text.has(_CJK)
    after = _shifted(cjk, 1)
    starts = np.flatnonzero(cjk & (after | ~_shifted(cjk, -1)))
    mine = texts.of(_rows(sep, starts), {"ja", "zh"})
    starts = starts[mine]
    parts.append((starts, starts + 1 + after[starts], np.zeros(len(starts))))
    all_starts, all_ends, second = (np.concatenate(p) for p in zip(*parts, strict=True))
    order = np.lexsort((second, all_starts))
    all_starts, all_ends = all_starts[order], all_ends[order]
    rows = _rows(sep, all_starts)
    keep = texts.kept(rows)
    return rows[keep], _strings(text.points, all_starts[keep], all_ends[keep])
