"""features.traits() of many texts at once: one pass of each pattern over a language's texts.

The texts of a language are joined by SEP into one string; NFKC, lower case and every
pattern of `features` run once over it (in C: the same `re` patterns and `str` methods, so
the same features as text by text), and each feature found is given its text's row by the
separators before it (numpy). Stemming and slicing are Arrow kernels on whole columns. No
Python runs per text but a C-level `map` of `len(str.strip())` and the marks' dicts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.folding.translate import features as F  # noqa: N812 - its patterns, as F._NAME
from pipeline.folding.translate.features import ANCHOR, LENGTH_RATIO, MIN_NAME, STEM

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from pipeline.folding.translate.features import Marks

# An Arrow string array (pyarrow's stubs type its kernels by concrete array class).
Column = Any
# Joins a language's texts. Whitespace to the patterns (so no lookbehind sees through it,
# and a sentence end before it is one before the end), no feature, unchanged by NFKC and
# lower case, a starter NFKC composes with nothing. Doubled: `_CAPITALISED` looks two
# characters back. A text that holds its character is taken alone (features.traits).
SEP = "\x1e\x1e"
_SEP_CHAR = "\x1e"


def _with_sep(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """PATTERN, or a separator first: findall() then tells which text each match is in."""
    return re.compile(f"{SEP}|(?:{pattern.pattern})", pattern.flags)


# features' patterns that start with a lookbehind (or an alternation), each written to
# start with the character it must match, the lookbehind moved after it: the same matches
# (tests/test_translate.py), found two to three times faster (the engine skips to that
# character instead of trying the lookbehind at every position).
NUMBER = re.compile(r"\d(?<![A-Za-z0-9.]\d)\d*(?:\.\d+[a-z]?)?(?!\d)")  # features._NUMBER
CAPITALISED = re.compile(  # features._CAPITALISED
    r"[A-Z](?<=[^\s.!?:;(\"\u201e\u201c\u00ab\u300c]\s[A-Z])[a-z]+"
)
SENTENCE_END = re.compile(  # features._SENTENCE_END
    r"[\u3002\uff01\uff1f.!?](?:(?<=[\u3002\uff01\uff1f])|(?=\s|$))"
)
_SYMBOLS = _with_sep(F._SYMBOL)  # noqa: SLF001 - the very patterns the one-text path uses
_NUMBERS = _with_sep(NUMBER)
_LATIN_WORDS = _with_sep(F._LATIN_WORD)  # noqa: SLF001
_CAPITALS = _with_sep(CAPITALISED)
_WORDS = _with_sep(F._WORD)  # noqa: SLF001
_HANGULS = _with_sep(F._HANGUL)  # noqa: SLF001
_ENDS = _with_sep(SENTENCE_END)
_BRACKETS = re.compile(f"{SEP}|\\(")
_PAUSES = re.compile(f"{SEP}|\u2026|\\.\\.\\.")
_PAUSED = _with_sep(F._PAUSE)  # noqa: SLF001
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF))  # features._CJK's


class MarkList(Sequence["Marks"]):
    """Each text's marks (features.marks) held as columns; a text's dict made when asked.

    Entry K is mark NAMES[CODES[K]] held COUNTS[K] times by text ROWS[K]; rows ascending,
    each text's entries in the order features.marks() adds them (its dict's order).
    """

    def __init__(
        self,
        size: int,
        rows: NDArray[np.int64],
        codes: NDArray[np.int64],
        counts: NDArray[np.int64],
        names: list[str],
    ) -> None:
        self.size, self.rows, self.codes, self.counts, self.names = size, rows, codes, counts, names

    @classmethod
    def of(
        cls, size: int, rows: NDArray[np.int64], keys: Column, counts: NDArray[np.int64]
    ) -> MarkList:
        """The marks of SIZE texts given as entries (ROWS[k], KEYS[k], COUNTS[k]).

        KEYS is an Arrow string array.

        Entries of one text and mark are added up, in the order of the first: the entries
        of a text in the order its dict adds them, the texts in any order.
        """
        encoded: Column = pc.dictionary_encode(keys)
        codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        names: list[str] = encoded.dictionary.to_pylist()
        width = max(1, len(names))
        order = np.argsort(rows, kind="stable")
        keys_in_order = rows[order] * width + codes[order]
        distinct, first, inverse = np.unique(keys_in_order, return_index=True, return_inverse=True)
        summed = np.bincount(inverse, weights=counts[order], minlength=len(distinct))
        placed = np.argsort(first, kind="stable")
        found_rows, found_codes = np.divmod(distinct[placed], width)
        return cls(size, found_rows, found_codes, summed[placed].astype(np.int64), names)

    @classmethod
    def joined(cls, parts: Sequence[MarkList]) -> MarkList:
        """PARTS' texts one after another, as one MarkList."""
        ids: dict[str, int] = {}
        rows, codes, at = [], [], 0
        for part in parts:
            mapped = np.fromiter(
                (ids.setdefault(name, len(ids)) for name in part.names), np.int64, len(part.names)
            )
            rows.append(part.rows + at)
            codes.append(mapped[part.codes])
            at += part.size
        empty = np.zeros(0, dtype=np.int64)
        return cls(
            at,
            np.concatenate([empty, *rows]),
            np.concatenate([empty, *codes]),
            np.concatenate([empty, *(part.counts for part in parts)]),
            list(ids),
        )

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, at: int) -> Marks: ...

    @overload
    def __getitem__(self, at: slice) -> MarkList: ...

    def __getitem__(self, at: int | slice) -> Marks | MarkList:
        if isinstance(at, slice):
            start, end, _ = at.indices(self.size)
            first, last = np.searchsorted(self.rows, [start, end]).tolist()
            return MarkList(
                max(0, end - start),
                self.rows[first:last] - start,
                self.codes[first:last],
                self.counts[first:last],
                self.names,
            )
        row = at + self.size if at < 0 else at
        if not 0 <= row < self.size:
            raise IndexError(at)
        first, last = np.searchsorted(self.rows, [row, row + 1]).tolist()
        names = self.names
        return {
            names[code]: count
            for code, count in zip(
                self.codes[first:last].tolist(), self.counts[first:last].tolist(), strict=True
            )
        }


class Traits(NamedTuple):
    """features.traits() of a batch of texts, as flat columns (rows are the texts' order)."""

    size: int
    # Each word feature and its row, rows in order and each row's in the text's order.
    word_rows: NDArray[np.int64]
    words: Column
    # The same for anchors.
    anchor_rows: NDArray[np.int64]
    anchors: Column
    # features.shape: sentences, length in English.
    sentences: NDArray[np.int64]
    lengths: NDArray[np.float64]
    # features.marks of each text: a list of dicts, or a MarkList (points.traits).
    marks: Sequence[Marks]
    # Each word feature's rank in its language's lexicon (EnglishIndex.ranked), -1 where it
    # holds none; None until looked up.
    word_ranks: NDArray[np.int64] | None = None

    def rows(self, start: int, end: int) -> Traits:
        """The traits of texts START to END, as rows 0 to END - START."""
        words = np.searchsorted(self.word_rows, [start, end])
        anchors = np.searchsorted(self.anchor_rows, [start, end])
        ranks = self.word_ranks
        return Traits(
            end - start,
            self.word_rows[words[0] : words[1]] - start,
            self.words.slice(words[0], words[1] - words[0]),
            self.anchor_rows[anchors[0] : anchors[1]] - start,
            self.anchors.slice(anchors[0], anchors[1] - anchors[0]),
            self.sentences[start:end],
            self.lengths[start:end],
            self.marks[start:end],
            None if ranks is None else ranks[words[0] : words[1]],
        )

    def shape(self, row: int) -> tuple[int, float]:
        """The shape of text ROW (features.shape)."""
        return int(self.sentences[row]), float(self.lengths[row])

    def anchors_of(self) -> list[list[str]]:
        """Each text's anchors, in order."""
        found: list[list[str]] = [[] for _ in range(self.size)]
        for row, anchor in zip(self.anchor_rows.tolist(), self.anchors.to_pylist(), strict=True):
            found[row].append(anchor)
        return found

    def words_of(self) -> list[list[str]]:
        """Each text's word features, in order."""
        found: list[list[str]] = [[] for _ in range(self.size)]
        for row, word in zip(self.word_rows.tolist(), self.words.to_pylist(), strict=True):
            found[row].append(word)
        return found


class _Found(NamedTuple):
    rows: NDArray[np.int64]
    tokens: Any


def _found(pattern: re.Pattern[str], joined: str) -> _Found:
    """Every match of PATTERN (a _with_sep one) in JOINED, with the row of the text it is in."""
    tokens: Column = pa.array(pattern.findall(joined), pa.string())
    equal: Column = pc.equal(tokens, pa.scalar(SEP))
    sep = np.asarray(equal.to_numpy(zero_copy_only=False), dtype=np.bool_)
    rows = np.cumsum(sep)[~sep]
    return _Found(rows.astype(np.int64), tokens.filter(pa.array(~sep)))


def _lowered(tokens: Column) -> Column:
    """str.lower() of each token (tokens hold no newline): one call on them joined."""
    if not len(tokens):
        return tokens
    return pa.array("\n".join(tokens.to_pylist()).lower().split("\n"), pa.string())


def _prefixed(prefix: str, tokens: Column) -> Column:
    return pc.binary_join_element_wise(pa.scalar(prefix), tokens, "")


def _counts(rows: NDArray[np.int64], size: int) -> NDArray[np.int64]:
    return np.bincount(rows, minlength=size).astype(np.int64)


def traits(texts: Sequence[str], langs: Sequence[str]) -> Traits:
    """features.traits() of each (TEXTS[n], LANGS[n]), as columns; the same features."""
    size = len(texts)
    word_parts: list[tuple[NDArray[np.int64], Column]] = []
    anchor_parts: list[tuple[NDArray[np.int64], Column]] = []
    sentences = np.ones(size, dtype=np.int64)
    lengths = np.zeros(size, dtype=np.float64)
    mark_parts: list[tuple[NDArray[np.int64], list[str]]] = []
    bracket_count = np.zeros(size, dtype=np.int64)
    paused_any = np.zeros(size, dtype=np.bool_)
    codes = np.asarray(langs, dtype=object)
    alone = _alone(texts)
    for lang in sorted(set(langs)):
        rows = np.flatnonzero((codes == lang) & ~alone)
        if not len(rows):
            continue
        joined = SEP.join([texts[r] for r in rows.tolist()])
        paused = _language(
            F.prepare(joined),
            lang,
            rows,
            word_parts=word_parts,
            anchor_parts=anchor_parts,
            mark_parts=mark_parts,
        )
        ends = _found(_ENDS, paused)
        sentences[rows] = np.maximum(1, _counts(ends.rows, len(rows)))
        stripped = np.fromiter(map(len, map(str.strip, paused.split(SEP))), np.int64, len(rows))
        lengths[rows] = stripped / LENGTH_RATIO.get(lang, 1.0)
        plain = F._SYMBOL.sub(" ", paused)  # noqa: SLF001
        bracket_count[rows] = _counts(_found(_BRACKETS, plain).rows, len(rows))
        paused_any[rows] = _counts(_found(_PAUSES, plain).rows, len(rows)) > 0
    for row in np.flatnonzero(alone).tolist():
        one = F.traits(texts[row], langs[row])
        word_parts.append(
            (np.full(len(one.words), row, np.int64), pa.array(one.words, pa.string()))
        )
        anchor_parts.append(
            (np.full(len(one.anchors), row, np.int64), pa.array(one.anchors, pa.string()))
        )
        sentences[row], lengths[row] = one.shape
    marks = _marks(size, mark_parts, bracket_count, paused_any)
    for row in np.flatnonzero(alone).tolist():
        marks[row] = F.traits(texts[row], langs[row]).marks
    word_rows, words = _ordered(word_parts)
    anchor_rows, anchors = _ordered(anchor_parts)
    return Traits(size, word_rows, words, anchor_rows, anchors, sentences, lengths, marks)


def _alone(texts: Sequence[str]) -> NDArray[np.bool_]:
    """The texts that hold the separator's character: taken one by one."""
    found = np.zeros(len(texts), dtype=np.bool_)
    if _SEP_CHAR in "".join(texts):
        found[[n for n, text in enumerate(texts) if _SEP_CHAR in text]] = True
    return found


def _language(
    prepared: str,
    lang: str,
    rows: NDArray[np.int64],
    *,
    word_parts: list[tuple[NDArray[np.int64], Column]],
    anchor_parts: list[tuple[NDArray[np.int64], Column]],
    mark_parts: list[tuple[NDArray[np.int64], list[str]]],
) -> str:
    """Word features, anchors, marks' symbols and numbers of a language's PREPARED texts.

    Returns the texts with their pauses made one character (features.marks).
    """
    symbols = _found(_SYMBOLS, prepared)
    plain = F._SYMBOL.sub(" ", prepared)  # noqa: SLF001
    numbers = _found(_NUMBERS, plain)
    # Card names: every Latin word of a non-Latin text, capitalised words inside sentences.
    non_latin = lang in F._NON_LATIN  # noqa: SLF001
    names = _found(_LATIN_WORDS if non_latin else _CAPITALS, plain)
    long_enough = pc.greater_equal(pc.utf8_length(names.tokens), pa.scalar(MIN_NAME))
    names = _Found(
        names.rows[np.asarray(long_enough.to_numpy(zero_copy_only=False), dtype=np.bool_)],
        names.tokens.filter(long_enough),
    )
    # Anchors: symbols, numbers, then names, each kind in text order (features._anchors).
    for found, made in (
        (symbols, _prefixed(ANCHOR, _lowered(symbols.tokens))),
        (numbers, _prefixed(ANCHOR + "#", numbers.tokens)),
        (names, _prefixed(ANCHOR + "@", _lowered(names.tokens))),
    ):
        anchor_parts.append((rows[found.rows], made))
    lowered = NUMBER.sub(" ", plain).lower()
    word_parts.append(_words(lowered, lang, rows))
    # The marks are of the text with its pauses made one character (features.marks): a
    # pause changes what a number may touch, so the texts with one are taken again.
    paused = F._PAUSE.sub("\u2026", prepared)  # noqa: SLF001
    mark_parts.append((rows[symbols.rows], _lowered(symbols.tokens).to_pylist()))
    numbered = [rows[numbers.rows], numbers.tokens]
    again = np.unique(_found(_PAUSED, prepared).rows)
    if len(again):
        texts = paused.split(SEP)
        part = SEP.join([texts[r] for r in again.tolist()])
        symbols = _found(_SYMBOLS, part)
        redone = _found(_NUMBERS, F._SYMBOL.sub(" ", part))  # noqa: SLF001
        # Their symbols and numbers stand for those found above.
        kept = ~np.isin(numbers.rows, again)
        numbered = [
            np.concatenate([rows[numbers.rows[kept]], rows[again[redone.rows]]]),
            pa.concat_arrays([numbers.tokens.filter(pa.array(kept)), redone.tokens]),
        ]
        kept = ~np.isin(mark_parts[-1][0], rows[again])
        mark_parts[-1] = (
            np.concatenate([mark_parts[-1][0][kept], rows[again[symbols.rows]]]),
            [k for k, keep in zip(mark_parts[-1][1], kept.tolist(), strict=True) if keep]
            + _lowered(symbols.tokens).to_pylist(),
        )
    mark_parts.append((numbered[0], ["#" + n for n in numbered[1].to_pylist()]))
    return paused


def _words(lowered: str, lang: str, rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], Column]:
    """features._words of a language's joined texts, already prepared, plain and lowered."""
    if lang == "ko":
        found = _found(_HANGULS, lowered)
        first: Column = pc.utf8_slice_codeunits(found.tokens, 0, 2)
        length = np.asarray(pc.utf8_length(found.tokens).to_numpy(zero_copy_only=False))
        rest = pc.utf8_slice_codeunits(found.tokens, 0, -1)
        # Each word's two syllables, then (when longer) itself without its last.
        order = np.argsort(
            np.concatenate([np.arange(len(length)) * 2, np.arange(len(length)) * 2 + 1]),
            kind="stable",
        )
        tokens = pa.concat_arrays([first, rest]).take(order)
        word_rows = np.concatenate([found.rows, found.rows])[order]
        kept = np.concatenate([np.ones(len(length), bool), length > 2])[order]  # noqa: PLR2004
        return rows[word_rows[kept]], tokens.filter(pa.array(kept))
    if lang in {"ja", "zh"}:
        return _bigrams(lowered, rows)
    found = _found(_WORDS, lowered)
    tokens = pc.utf8_slice_codeunits(found.tokens, 0, STEM)
    if lang != "en":
        return rows[found.rows], tokens
    kept = np.asarray(
        pc.greater(pc.utf8_length(found.tokens), pa.scalar(1)).to_numpy(zero_copy_only=False)
    )
    return rows[found.rows[kept]], tokens.filter(pa.array(kept))


def _bigrams(lowered: str, rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], Column]:
    """features._bigrams of joined texts: on their code points (runs of features._CJK)."""
    points = np.frombuffer(lowered.encode("utf-32-le"), dtype=np.uint32)
    cjk = np.zeros(len(points) + 1, dtype=np.bool_)  # one past the end: no run goes on
    for low, high in _CJK_RANGES:
        cjk[:-1] |= (points >= low) & (points <= high)
    row_of = np.cumsum(points == ord(_SEP_CHAR)) // len(SEP)
    before = np.concatenate([[False], cjk[:-2]])
    after = cjk[1:]
    here = cjk[:-1]
    starts = np.flatnonzero(here & (after | ~before))  # a bigram's start, or a lone character
    second = np.where(after[starts], points[np.minimum(starts + 1, len(points) - 1)], 0)
    pairs = np.stack([points[starts], second], axis=1).astype(np.uint32).copy()
    tokens = pairs.view("<U2").reshape(-1)
    return rows[row_of[starts]], pa.array(tokens, pa.string())


def _ordered(parts: Sequence[tuple[NDArray[np.int64], Column]]) -> tuple[NDArray[np.int64], Column]:
    """PARTS' (rows, tokens) as one column, rows in order, each row's in the order of PARTS.

    A row's tokens are in one part, or (anchors) in parts added in the order of its kinds.
    """
    if not parts:
        return np.zeros(0, dtype=np.int64), pa.array([], pa.string())
    rows = np.concatenate([r for r, _ in parts])
    tokens = pa.concat_arrays([t.cast(pa.string()) for _, t in parts])
    order = np.argsort(rows, kind="stable")
    return rows[order], tokens.take(order)


def _marks(
    size: int,
    parts: Sequence[tuple[NDArray[np.int64], list[str]]],
    brackets: NDArray[np.int64],
    paused: NDArray[np.bool_],
) -> list[Marks]:
    """features._marks of each text: symbols, numbers (PARTS, by language), brackets, pause."""
    found: list[Marks] = [{} for _ in range(size)]
    # Symbols before numbers in each text, as features._marks counts them.
    for rows, keys in [*parts[0::2], *parts[1::2]]:
        for row, key in zip(rows.tolist(), keys, strict=True):
            marks = found[row]
            marks[key] = marks.get(key, 0) + 1
    for row in np.flatnonzero(brackets).tolist():
        found[row]["("] = int(brackets[row])
    for row in np.flatnonzero(paused).tolist():
        found[row]["\u2026"] = 1
    return found
