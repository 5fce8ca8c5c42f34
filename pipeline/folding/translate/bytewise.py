"""terms.english_terms() of many English texts at once, on their bytes: no Python per text or word.

An English ruling is ASCII, or ASCII but for curly quotes, dashes, bullets and the minus
sign, nearly always (all but 3% of the all-distinct benchmark's, all but 14 of the 16,870
of the real dumps'). Those few characters (_INERT) are neither letters, digits nor spaces,
NFKC and lower case leave them as they are, and no feature but a symbol can hold one: each
is made one byte past ASCII. Then a byte is a character, NFKC leaves the text as it is
(`features.prepare`), and `str.lower()` is ASCII's: the texts are one byte array, a NUL
before each and after the last, and what each of `features`' patterns matches (leftmost,
greedy, lookarounds) is worked out by the numpy passes of the code-point pass
(`points.py`: its text, its classes, which are `re`'s own, and its patterns' functions
serve bytes as well), on a byte a character instead of four. A text holding any other
character, NUL, or one of those inside a symbol's braces, is left to english_terms().

A word feature is at most five lower-case letters: it is packed into an integer, big end
first and padded with zeros, whose order is the words' order as strings, and a text's
words are counted as integers; only each distinct feature of a chunk becomes a string. The
anchors (symbols, numbers, capitalised words) are few, and made Arrow strings. The terms,
counts and names are those english_terms() gives, text by text (tests/test_bytewise.py
compares them on real texts and on random ones made of the patterns' edge cases).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import in_order
from pipeline.folding.translate.features import ANCHOR, MIN_NAME, STEM

# The code-point pass's classes, texts and patterns' functions: they serve bytes as well.
from pipeline.folding.translate.points import (
    _WORD,
    _capitalised,
    _numbers,
    _replace,
    _Rows,
    _rows,
    _shape,
    _shifted,
    _symbols,
    _Text,
    _text_marks,
    tables,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from numpy.typing import NDArray

    # Runs a function over chunks of texts, as `map` (or a process pool's map) does.
    Mapper = Callable[
        [Callable[[Sequence[str]], "_Found"], Iterable[Sequence[str]]], Iterable["_Found"]
    ]

# Before each text and after the last: no character of one.
_SEP = 0
# About this many bytes of text are taken at a time: their arrays stay in cache-sized steps.
_CHUNK_BYTES = 1 << 22
# A span's first L bytes of the STEM packed: _MASKS[L].
_MASKS = np.asarray(
    [((1 << (8 * n)) - 1) << (8 * (STEM - n)) for n in range(STEM + 1)], dtype=np.int64
)
# A chunk's word entry is its row above its packed word.
_ROW = 8 * STEM


class Shapes(NamedTuple):
    """features.shape(text, "en") and features.marks(text) of each text taken, as columns.

    The marks as entries (ROWS[k], KEYS[k], COUNTS[k]), KEYS an Arrow string array, a
    text's entries in the order features.marks() adds them to its dict.
    """

    sentences: NDArray[np.int64]
    lengths: NDArray[np.float64]
    rows: NDArray[np.int64]
    keys: pa.StringArray
    counts: NDArray[np.int64]


class Taken(NamedTuple):
    """english_terms() of each text taken, column-wise (terms.TermTable without hashes).

    Text N's terms are VOCABULARY[IDS[OFFSETS[N]:OFFSETS[N + 1]]], in order (VOCABULARY is
    sorted), with their COUNTS and whether each is a name (NAMED).
    """

    offsets: NDArray[np.int64]
    vocabulary: list[str]
    ids: NDArray[np.int64]
    counts: NDArray[np.int64]
    named: NDArray[np.bool_]


class _Entries(NamedTuple):
    """(text, term) entries of one kind, by text then term: words or anchors.

    Rows and counts in 32 bits: a chunk's word entries are the largest arrays taken.
    """

    rows: NDArray[np.int32]
    # A word's: packed (_packed); an anchor's: its spelling's index.
    terms: NDArray[np.int64]
    counts: NDArray[np.int32]
    named: NDArray[np.bool_]


class _Found(NamedTuple):
    """A chunk's word and anchor entries, and its anchors' spellings."""

    words: _Entries
    anchors: _Entries
    spelt: pa.StringArray


# Characters past ASCII taken here, as the bytes 0x80 on (_bytes_of), when they are what
# _inert() asks.
_INERT = "\u2018\u2019\u201c\u201d\u2013\u2014\u2022\u2212\u00ab\u00bb"


@cache
def _inert() -> dict[int, int]:
    """_INERT's characters, each as its byte, the ones no feature can hold but as printed.

    Neither a letter, a digit nor a space; the same in NFKC and in lower case. (Each of
    _INERT is; a character that would not be is left out, so its texts go one by one.)
    """
    found = [
        char
        for char in _INERT
        if not re.fullmatch(r"[\w\s]", char)
        and unicodedata.normalize("NFKC", char) == char == char.lower()
    ]
    return {ord(char): 0x80 + n for n, char in enumerate(found)}


def _bytes_of(texts: Sequence[str]) -> NDArray[np.uint8]:
    """TEXTS as one byte a character, a NUL before each and after the last."""
    joined = ("\x00" + "\x00".join(texts) + "\x00").translate(_inert())
    return np.frombuffer(joined.encode("latin-1"), dtype=np.uint8)


@cache
def _classes() -> NDArray[np.uint16]:
    """Each byte's classes: its character's in the code-point pass's table (`re`'s own).

    The separator has none (the patterns' functions ask the text's separator itself).
    """
    table = tables().flags
    flags = np.zeros(256, dtype=np.uint16)
    flags[:128] = table[:128]
    for code, byte in _inert().items():
        flags[byte] = table[code]
    flags[_SEP] = 0
    return flags


@cache
def _lower() -> NDArray[np.uint8]:
    table = np.arange(256, dtype=np.uint8)
    table[ord("A") : ord("Z") + 1] += ord("a") - ord("A")
    return table


def fast(texts: Sequence[str]) -> NDArray[np.bool_]:
    """Which of TEXTS are taken here.

    Those of ASCII and _inert() characters, without NUL (the separator), and without one
    of _inert() where a symbol may hold it (within eight characters after "{": a symbol's
    spelling is made of its bytes).
    """
    column = pa.array(texts, pa.string())
    ascii_ = _flags(pc.string_is_ascii(column))
    taken = ascii_ & ~_flags(pc.match_substring(column, "\x00"))
    # The regular expressions only for the texts past ASCII (one in three of the real ones;
    # the first refuses NUL too).
    wider = np.flatnonzero(~ascii_)
    if len(wider):
        some = column.take(wider)
        inert = "".join(map(chr, _inert()))
        other = _flags(pc.match_substring_regex(some, f"[^\\x{{01}}-\\x{{7f}}{inert}]"))
        braced = _flags(pc.match_substring_regex(some, f"\\{{[^{{}}\\s]{{0,7}}[{inert}]"))
        taken[wider] = ~(other | braced)
    return taken


def _flags(column: Any) -> NDArray[np.bool_]:  # noqa: ANN401 - an Arrow boolean array
    """A boolean Arrow array as numpy."""
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.bool_)


def shaped(texts: Sequence[str]) -> NDArray[np.bool_]:
    """Which of TEXTS shapes() takes: fast() ones without a pause (". . .").

    features.shape() and marks() make a pause one character (not ASCII) first.
    """
    found = fast(texts)
    paused = pc.match_substring(pa.array(texts, pa.string()), ". .")
    found &= ~np.asarray(paused.to_numpy(zero_copy_only=False), dtype=np.bool_)
    return found


def shapes(texts: Sequence[str]) -> Shapes:
    """features.shape(text, "en") and features.marks(text) of TEXTS, all of which shaped() takes.

    Without a pause, a text is its own "paused" text, so what features._shape and
    features._marks find in that is found in the text itself.
    """
    text = _bytes(_bytes_of(texts))
    size = len(texts)
    sentences, lengths = _shape(text, text.sep(), size)
    rows, keys, counts = _text_marks(text, _Rows(["en"] * size, np.zeros(size, np.bool_)))
    return Shapes(sentences, lengths, rows, keys, counts)


def english_terms(texts: Sequence[str], mapper: Mapper = map) -> Taken:
    """terms.english_terms() of each of TEXTS, all of which fast() takes, column-wise.

    The texts are taken a chunk at a time, the chunks by MAPPER (as `map`: a pool's runs
    them on its processes).
    """
    if not texts:
        return Taken(
            np.zeros(1, np.int64),
            [],
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0, np.bool_),
        )
    sizes = np.fromiter(map(len, texts), np.int64, len(texts)) + 1
    # Chunks of about _CHUNK_BYTES, each holding one text at least.
    firsts = np.searchsorted(np.cumsum(sizes), np.arange(0, int(sizes.sum()), _CHUNK_BYTES))
    edges = [*np.unique(firsts).tolist(), len(texts)]
    # Each chunk's words, its rows its own (their arrays are the largest: they are put in
    # place chunk by chunk, never joined), and the anchors of all.
    words: list[tuple[int, int, _Entries]] = []
    anchors: list[_Entries] = []
    spelt: list[pa.StringArray] = []
    bounds = list(itertools.pairwise(edges))
    chunks = [texts[start:end] for start, end in bounds]
    for (start, end), found in zip(bounds, mapper(_chunk, chunks), strict=True):
        # A chunk's anchors are numbered among its spellings: among all of them here.
        before = sum(map(len, spelt))
        words.append((start, end, found.words))
        anchors.append(
            found.anchors._replace(
                rows=found.anchors.rows + start, terms=found.anchors.terms + before
            )
        )
        spelt.append(found.spelt)
    # One vocabulary: the words in order (as packed), then the anchors in order.
    distinct_words = np.unique(np.concatenate([np.unique(part.terms) for *_, part in words]))
    spellings, places = in_order(pa.concat_arrays(spelt))
    anchor = _joined(anchors)
    anchor = anchor._replace(terms=len(distinct_words) + places[anchor.terms])
    # Each text's terms in order: its words (by code, so in order), then its anchors (whose
    # ids are all higher, put in order), each entry put in its place.
    by_id = np.lexsort((anchor.terms, anchor.rows))
    anchor = _Entries(
        anchor.rows[by_id], anchor.terms[by_id], anchor.counts[by_id], anchor.named[by_id]
    )
    held = np.zeros(len(texts), dtype=np.int64)
    for start, end, part in words:
        held[start:end] = np.bincount(part.rows, minlength=end - start)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(held + np.bincount(anchor.rows, minlength=len(texts)), out=offsets[1:])
    ids = np.empty(int(offsets[-1]), dtype=np.int64)
    counts = np.empty(len(ids), dtype=np.int64)
    named = np.empty(len(ids), dtype=np.bool_)
    # An entry's place: its row's first, plus how many of its kind come before it in the
    # row (and, for an anchor, the row's words).
    shift = offsets[:-1] - (np.cumsum(held) - held)
    done = 0
    for start, _, part in words:
        at = done + np.arange(len(part.rows)) + shift[start + part.rows]
        ids[at] = np.searchsorted(distinct_words, part.terms)
        counts[at], named[at] = part.counts, part.named
        done += len(part.rows)
    del words
    anchor_held = offsets[1:] - offsets[:-1] - held
    anchor_at = (
        np.arange(len(anchor.rows))
        + (offsets[:-1] + held - (np.cumsum(anchor_held) - anchor_held))[anchor.rows]
    )
    ids[anchor_at], counts[anchor_at], named[anchor_at] = anchor.terms, anchor.counts, anchor.named
    return Taken(offsets, _spelling(distinct_words) + spellings, ids, counts, named)


def _joined(parts: Sequence[_Entries]) -> _Entries:
    """PARTS' entries one after the other."""
    return _Entries(*(np.concatenate(column) for column in zip(*parts, strict=True)))


def _spelling(codes: NDArray[np.int64]) -> list[str]:
    """The words packed as CODES (_packed), as strings."""
    shifted = (codes << (8 * (8 - STEM))).astype(">u8")
    spelt: list[str] = np.frombuffer(shifted.tobytes(), dtype="S8").astype("U8").tolist()
    return spelt


def _bytes(data: NDArray[np.uint8]) -> _Text:
    return _Text(data, _classes()[data], _SEP)


def _chunk(texts: Sequence[str]) -> _Found:
    """The word and anchor entries of TEXTS (a chunk), and the anchors' spellings.

    As features.english() finds them; an anchor entry's term is its spelling's index.
    """
    text = _bytes(_bytes_of(texts))
    # Symbols are found in the text; the rest in its plain text, each symbol one space.
    symbol_starts, symbol_ends = _symbols(text)
    plain = _replace(text, symbol_starts, symbol_ends, ord(" "))
    plain_sep = plain.sep()
    number_starts, number_ends = _numbers(plain)
    capital_starts, capital_ends = _capitalised(plain)
    # A text's names are its capitalised words as printed, symbols and all.
    printed = text if len(symbol_starts) else plain
    name_starts, name_ends = (
        _capitalised(text) if len(symbol_starts) else (capital_starts, capital_ends)
    )
    # Words: letter runs of two or more of the plain text without its numbers (only a
    # number's last letter, as in 702.62a, is a letter), their first STEM letters.
    letter = plain.has(_WORD)
    letter[number_ends - 1] = False
    word_starts = np.flatnonzero(letter & ~_shifted(letter, -1))
    word_ends = np.flatnonzero(letter & ~_shifted(letter, 1)) + 1
    long = word_ends - word_starts >= 2  # noqa: PLR2004 - features._STEMS_EN drops a one-letter word
    word_starts, word_ends = word_starts[long], word_ends[long]
    word_rows = _rows(plain_sep, word_starts)
    lowered = _lowered(plain.points)
    word_codes = _packed(lowered, word_starts, word_ends)
    # Anchors: symbols (lower case), numbers, capitalised words of MIN_NAME letters or more.
    named = capital_ends - capital_starts >= MIN_NAME
    anchor_rows = np.concatenate(
        [
            _rows(text.sep(), symbol_starts),
            _rows(plain_sep, number_starts),
            _rows(plain_sep, capital_starts[named]),
        ]
    )
    anchors = pa.concat_arrays(
        [
            _spans(text.points, symbol_starts, symbol_ends, ANCHOR, lower=True),
            _spans(plain.points, number_starts, number_ends, ANCHOR + "#"),
            _spans(
                plain.points, capital_starts[named], capital_ends[named], ANCHOR + "@", lower=True
            ),
        ]
    )
    # Each text's distinct words (packed) and anchors (their distinct spellings' indices).
    encoded: Any = pc.dictionary_encode(anchors)
    spelt: pa.StringArray = encoded.dictionary
    width = max(1, len(spelt))
    indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    word_keys, word_counts = np.unique((word_rows << _ROW) | word_codes, return_counts=True)
    anchor_keys, anchor_counts = np.unique(anchor_rows * width + indices, return_counts=True)
    # Which are names: each name's first STEM letters, and the name itself from MIN_NAME.
    name_rows = _rows(printed.sep(), name_starts)
    name_words = (name_rows << _ROW) | _packed(
        _lowered(text.points) if len(symbol_starts) else lowered, name_starts, name_ends
    )
    long_names = name_ends - name_starts >= MIN_NAME
    names = _spans(
        printed.points, name_starts[long_names], name_ends[long_names], ANCHOR + "@", lower=True
    )
    spelling = np.asarray(
        pc.index_in(names, value_set=spelt).fill_null(-1).to_numpy(zero_copy_only=False),
        dtype=np.int64,
    )
    known = spelling >= 0
    name_anchors = name_rows[long_names][known] * width + spelling[known]
    return _Found(
        _Entries(
            (word_keys >> _ROW).astype(np.int32),
            word_keys & ((1 << _ROW) - 1),
            word_counts.astype(np.int32),
            np.isin(word_keys, name_words),
        ),
        _Entries(
            (anchor_keys // width).astype(np.int32),
            anchor_keys % width,
            anchor_counts.astype(np.int32),
            np.isin(anchor_keys, name_anchors),
        ),
        spelt,
    )


def _packed(
    lowered: NDArray[np.uint8], starts: NDArray[np.int64], ends: NDArray[np.int64]
) -> NDArray[np.int64]:
    """The first STEM bytes of each span [STARTS, ENDS) of LOWERED, packed big end first.

    LOWERED is the bytes in lower case, and eight zeros past them (_lowered).
    """
    # The eight bytes from each position as one big-endian integer (a view, no copy).
    windows = np.ndarray((len(lowered) - 8,), dtype=">i8", buffer=lowered, strides=(1,))
    head: NDArray[np.int64] = windows[starts].astype(np.int64) >> (8 * (8 - STEM))
    # A span starts with a letter (ASCII): the top bit is not set, the shift brings no sign.
    packed: NDArray[np.int64] = head & _MASKS[np.minimum(ends - starts, STEM)]
    return packed


def _lowered(data: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """DATA in lower case, and eight zeros past it (for _packed's windows)."""
    lowered = np.zeros(len(data) + 8, dtype=np.uint8)
    lowered[: len(data)] = _lower()[data]
    return lowered


def _spans(
    data: NDArray[np.uint8],
    starts: NDArray[np.int64],
    ends: NDArray[np.int64],
    prefix: str,
    *,
    lower: bool = False,
) -> pa.StringArray:
    """PREFIX and each span [STARTS, ENDS) of DATA, as an Arrow string column.

    The spans are ASCII: fast() leaves out a text whose symbol might hold an _inert() byte.
    """
    head = np.frombuffer(prefix.encode("utf-8"), dtype=np.uint8)
    lengths = ends - starts
    sizes = lengths + len(head)
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    out[(offsets[:-1, None] + np.arange(len(head), dtype=np.int64)).reshape(-1)] = np.tile(
        head, len(starts)
    )
    total = int(lengths.sum())
    before = np.cumsum(lengths) - lengths
    step = np.arange(total, dtype=np.int64) - np.repeat(before, lengths)
    chars = data[np.repeat(starts, lengths) + step]
    out[np.repeat(offsets[:-1] + len(head), lengths) + step] = _lower()[chars] if lower else chars
    return pa.StringArray.from_buffers(
        len(starts), pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(out.tobytes())
    )
