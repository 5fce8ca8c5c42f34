"""Pure text features shared by the lexicon builder and the linker: words, n-grams, anchors."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

# Languages with a learned lexicon, as the `lang` codes of the rulings table.
LANGUAGES = ("de", "es", "fr", "it", "ja", "ko", "pt", "ru", "zh")
# Anchors are language-free tokens that a translation keeps as printed; the lexicon maps
# each to itself. They start with a character no word feature can start with.
ANCHOR = "\u00a7"
_SYMBOL = re.compile(r"\{[^{}\s]{1,8}\}")
# Rule numbers (702.62a) and plain numbers, after NFKC has made full-width digits ASCII;
# in Japanese and Chinese a number touches the word before it (カード2枚).
_NUMBER = re.compile(r"(?<![A-Za-z0-9.])\d+(?:\.\d+[a-z]?)?(?!\d)")
_LATIN_WORD = re.compile(r"[a-z\u00c0-\u024f]+(?:'[a-z]+)?", re.IGNORECASE)
_CAPITALISED = re.compile(r"(?<=[^\s.!?:;(\"\u201e\u201c\u00ab\u300c]\s)[A-Z][a-z]+")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
# _WORD's matches cut to their first STEM letters by a group: the same words, no slicing
# in Python (in English, a word of one letter matches the second branch and gives "").
_STEMS = re.compile(r"([^\W\d_]{1,5})[^\W\d_]*")
_STEMS_EN = re.compile(r"([^\W\d_]{2,5})[^\W\d_]*|[^\W\d_]")
_HANGUL = re.compile(r"[\uac00-\ud7a3]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+")
# Word features keep a prefix: cheap stemming that puts "exiled", "exiles" and "exile"
# (or "wirken", "wirkst") together, measured against full words by the evaluation script.
STEM = 5
# Shorter capitalised words ("If", "As") are sentence words more often than names.
MIN_NAME = 3
_NON_LATIN = frozenset({"ja", "ko", "ru", "zh"})
# A sentence ends at an ideographic full stop, or at an ASCII one before a space or the
# end; a pause (". . .") is made one character first.
_PAUSE = re.compile(r"\.(?: \.)+")
_SENTENCE_END = re.compile(r"[\u3002\uff01\uff1f]|[.!?](?=\s|$)")
# A translation's length in characters over its English original's (the median over the
# card texts of the dev sets, MID and STX): a text of each language would be its length
# over this in English.
LENGTH_RATIO = {
    "en": 1.0,
    "de": 1.26,
    "es": 1.17,
    "fr": 1.26,
    "it": 1.16,
    "pt": 1.15,
    "ru": 1.17,
    "ja": 0.61,
    "ko": 0.62,
    "zh": 0.36,
}


# A text's marks (marks()): each mark it holds, how many times.
Marks = dict[str, int]
# What each mark one text has and the other lacks costs (mark_similarity): translators print
# symbols, numbers, brackets and pauses as they are, so a missing one is strong evidence.
MARK_COST = 0.6


def prepare(text: str) -> str:
    """The text features are taken from: NFKC (full-width digits and brackets made plain)."""
    return unicodedata.normalize("NFKC", text)


class _Split(NamedTuple):
    """A prepared text's symbols as printed, the text without them, and its numbers."""

    symbols: list[str]
    plain: str
    numbers: list[str]


def _split(text: str) -> _Split:
    symbols = _SYMBOL.findall(text)
    plain = _SYMBOL.sub(" ", text) if symbols else text
    return _Split(symbols, plain, _NUMBER.findall(plain))


def anchors(text: str, lang: str) -> list[str]:
    """Language-free tokens of a prepared text: symbols, numbers, rule numbers, Latin names."""
    return _anchors(_split(text), lang)


def _anchors(split: _Split, lang: str, printed: list[str] | None = None) -> list[str]:
    # PRINTED: the names found in the plain text already, if they were.
    found = [ANCHOR + symbol.lower() for symbol in split.symbols]
    found += [ANCHOR + "#" + number for number in split.numbers]
    # Card names stay in Latin script: every Latin word of a non-Latin text, and in English
    # or a Latin-script language the capitalised words that do not start a sentence.
    if printed is None:
        plain = split.plain
        printed = _LATIN_WORD.findall(plain) if lang in _NON_LATIN else _CAPITALISED.findall(plain)
    found += [ANCHOR + "@" + name.lower() for name in printed if len(name) >= MIN_NAME]
    return found


def words(text: str, lang: str) -> list[str]:
    """Lexical features of a prepared text in LANG (English is "en")."""
    return _words(_split(text), lang)


def _words(split: _Split, lang: str) -> list[str]:
    plain = (_NUMBER.sub(" ", split.plain) if split.numbers else split.plain).lower()
    if lang == "ko":
        return _korean(plain)
    if lang in {"ja", "zh"}:
        return _bigrams(plain)
    # Each word's first STEM letters, from the pattern itself (English: words of two
    # letters or more; a one-letter word gives "", dropped).
    if lang == "en":
        return list(filter(None, _STEMS_EN.findall(plain)))
    return _STEMS.findall(plain)


def _korean(text: str) -> list[str]:
    # Particles and endings are suffixes of a space-separated word (유예를, 유예의): its
    # first two syllables and the word without its last syllable survive them.
    found: list[str] = []
    for word in _HANGUL.findall(text):
        found.append(word[:2])
        if len(word) > 2:  # noqa: PLR2004 - one syllable longer than the two-syllable prefix
            found.append(word[:-1])
    return found


def _bigrams(text: str) -> list[str]:
    found: list[str] = []
    for run in _CJK.findall(text):
        if len(run) == 1:
            found.append(run)
        found += [run[i : i + 2] for i in range(len(run) - 1)]
    return found


def features(text: str, lang: str) -> tuple[list[str], list[str]]:
    """Word features and anchors of TEXT in LANG."""
    split = _split(prepare(text))
    return _words(split, lang), _anchors(split, lang)


def names(text: str) -> set[str]:
    """Features of the capitalised words inside sentences of an English prepared text.

    These are mostly card names, which a translation may print translated: they can
    confirm a match but their absence proves nothing.
    """
    return _names(_CAPITALISED.findall(text))


def _names(capitalised: list[str]) -> set[str]:
    found = {ANCHOR + "@" + name.lower() for name in capitalised if len(name) >= MIN_NAME}
    found |= {name.lower()[:STEM] for name in capitalised}
    return found


def english(text: str) -> tuple[list[str], list[str], set[str]]:
    """words(), anchors() and names() of a prepared English text, each pattern run once.

    The text's capitalised words are found once when it holds no symbol (its plain text,
    where anchors look for them, is then the text itself, where names do).
    """
    split = _split(text)
    capitalised = _CAPITALISED.findall(split.plain)
    printed = capitalised if not split.symbols else _CAPITALISED.findall(text)
    return _words(split, "en"), _anchors(split, "en", capitalised), _names(printed)


def printed_names(found: list[str], card: str | None) -> frozenset[str]:
    """The words of CARD's name (lowered) that a translation prints, FOUND being its anchors.

    A translation that prints its card's English name ("Si vous copiez Dead…", "Thalia의
    능력은") translates a ruling that prints it: another card's ruling without it is that
    ruling worded for another card ("… copy Boom, the copy is also Boom").
    """
    if not card:
        return frozenset()
    name = {word.lower() for word in _WORD.findall(card) if len(word) >= MIN_NAME}
    return frozenset(a[2:] for a in found if a.startswith(_NAME) and a[2:] in name)


def prints_names(english: str, names: frozenset[str]) -> bool:
    """Whether the English text ENGLISH prints every word of NAMES (printed_names)."""
    return not names or names <= {word.lower() for word in _WORD.findall(english)}


_NAME = ANCHOR + "@"


def shape(text: str, lang: str) -> tuple[int, float]:
    """What the form of a text keeps through translation: sentences, and length in English."""
    return _shape(_PAUSE.sub("\u2026", prepare(text)), lang)


def _shape(paused: str, lang: str) -> tuple[int, float]:
    # PAUSED: prepared, its pauses made one character (a pause neither starts nor ends in
    # a space, so stripping before or after is the same).
    paused = paused.strip()
    sentences = max(1, len(_SENTENCE_END.findall(paused)))
    return sentences, len(paused) / LENGTH_RATIO.get(lang, 1.0)


def marks(text: str) -> Marks:
    """What a translator prints as it is: symbols, numbers, parentheses, pauses (an ellipsis).

    Counted as printed (after NFKC, so full-width brackets and digits are plain); unlike
    anchors, the brackets and the pause of a sentence ("search . . . for glory") count.
    Only marks the text holds are keys.
    """
    return _marks(_split(_PAUSE.sub("\u2026", prepare(text))))


def _marks(split: _Split) -> Marks:
    # SPLIT: of the prepared text, its pauses made one character.
    found: Marks = {}
    for symbol in split.symbols:
        symbol = symbol.lower()  # noqa: PLW2901 - counted as lowered
        found[symbol] = found.get(symbol, 0) + 1
    for number in split.numbers:
        number = "#" + number  # noqa: PLW2901 - counted with its mark
        found[number] = found.get(number, 0) + 1
    plain = split.plain
    brackets = plain.count("(")
    if brackets:
        found["("] = brackets
    if "\u2026" in plain or "..." in plain:
        found["\u2026"] = 1
    return found


class Traits(NamedTuple):
    """All a translation's features the linker uses, taken from one prepared text."""

    words: list[str]
    anchors: list[str]
    shape: tuple[int, float]
    marks: Marks


def traits(text: str, lang: str) -> Traits:
    """features(), shape() and marks() of TEXT in LANG, at the cost of one."""
    prepared = prepare(text)
    split = _split(prepared)
    paused = _PAUSE.sub("\u2026", prepared)
    # A pause changes what a number may touch: the marks are then of the text it is in.
    pauses = split if paused == prepared else _split(paused)
    return Traits(_words(split, lang), _anchors(split, lang), _shape(paused, lang), _marks(pauses))


def mark_similarity(translation: Marks, english: Marks) -> float:
    """How alike the marks of a translation and an English text are (0-1], 1 when the same.

    Each mark one has and the other lacks costs a share (MARK_COST), but a number of the
    translation may be a word in English ("two" is 2体, "single" is 1つ): only the
    English numbers must be printed in the translation.
    """
    if translation == english:
        return 1.0
    printed, known = translation.get, english.get
    missing = extra = 0
    for mark, count in english.items():
        missing += max(0, count - printed(mark, 0))
    for mark, count in translation.items():
        if mark[0] != "#":
            extra += max(0, count - known(mark, 0))
    return float(MARK_COST ** (missing + extra))


def shape_similarity(first: tuple[int, float], second: tuple[int, float]) -> float:
    """How alike two shapes are (0-1]: as many sentences, and lengths near each other."""
    sentences = 0.8 ** abs(first[0] - second[0])
    one, other = first[1] or 1.0, second[1] or 1.0
    short, long = (one, other) if one <= other else (other, one)
    return float(sentences * (short / long) ** 0.5)
