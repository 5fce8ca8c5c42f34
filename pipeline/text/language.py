"""Language of a ruling as ISO 639-1: deterministic, never raises.

Answers only in the ten languages Magic is printed in (en, de, fr, it, es, pt, ja, ko, ru,
zh: Simplified and Traditional Chinese are both `zh`) or `und`. Scripts settle Korean,
Japanese, Russian and most Chinese; character n-gram profiles of real printed card texts
(`pipeline/text/data/profiles.tsv`, built by `benchmarks/langprofile.py`) score the six Latin
languages, and Han-only texts between Japanese and Chinese; langdetect, seeded, breaks the
ties the profiles leave. `benchmarks/langeval.py` measures it on real labelled text.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from langdetect import DetectorFactory, detect_langs
from langdetect.lang_detect_exception import LangDetectException

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

UNDETERMINED = "und"
LATIN = ("en", "de", "fr", "it", "es", "pt")
HAN_ONLY = ("ja", "zh")
# langdetect's per-call random walk is reproducible only with a fixed seed.
DetectorFactory.seed = 0

# What carries no language: mana and tap symbols ({T}, {W/B}, {3}); digits, +1/+1 and rule
# numbers fall out with everything that is not a letter.
_SYMBOLS = re.compile(r"\{[^}]*\}")
# Words in the letters of the six Latin languages (an explicit class: twice as fast as \w).
_WORD = re.compile(
    r"[a-z\u00df-\u00f6\u00f8-\u00ff\u0153]+(?:'[a-z\u00df-\u00f6\u00f8-\u00ff\u0153]+)*"
)
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Han runs with the punctuation the two languages write differently (the ideographic comma
# in Japanese, the full-width comma in Chinese, the brackets of quotations).
_HAN_RUN = re.compile(r"[\u3000-\u3003\u300c-\u300f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff0c]+")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_FOREIGN = re.compile(
    r"[\u0400-\u04ff\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    r"\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff\uff66-\uff9f]"
)
_NOT_FOREIGN = re.compile(
    r"[^\u0400-\u04ff\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    r"\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff\uff66-\uff9f]+"
)
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")
# A CJK or Cyrillic character says about as much as a few Latin letters: an English ruling
# quoting a Japanese name stays English, a Korean one quoting an English name stays Korean.
_SCRIPT_WEIGHT = 3
_MAX_KANJI_ONLY = 12
# Short English answers that are whole rulings; two letters say nothing in other languages.
_SHORT_ENGLISH = frozenset({"yes", "no", "ok"})
_MIN_LETTERS = 3
# Below this margin (natural log-likelihood between the best two languages) the profiles
# are unsure and langdetect decides (see docs/translations.md for how it was chosen).
MIN_MARGIN = 3.0


def _load() -> dict[str, dict[str, tuple[float, ...]]]:
    """The profiles as log-probabilities: per table, each n-gram's value per language."""
    counts: dict[str, dict[str, list[int]]] = {"latin": {}, "han": {}}
    path = resources.files("pipeline.text") / "data" / "profiles.tsv"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            table, gram, *values = line.split("\t")
            counts[table][gram] = list(map(int, values))
    return {table: _log_probabilities(grams) for table, grams in counts.items()}


def _log_probabilities(grams: dict[str, list[int]]) -> dict[str, tuple[float, ...]]:
    """Additively smoothed log P(gram | language), one tuple per gram."""
    width = len(next(iter(grams.values())))
    smoothing = 0.5 * len(grams)
    denominators = [
        math.log(sum(values[i] for values in grams.values()) + smoothing) for i in range(width)
    ]
    # Counts are small integers: each distinct one's logarithm is taken once.
    logs = {v: math.log(v + 0.5) for v in {v for values in grams.values() for v in values}}
    return {
        gram: tuple(map(operator.sub, map(logs.__getitem__, values), denominators))
        for gram, values in grams.items()
    }


_ZERO_LATIN = (0.0,) * len(LATIN)


class _Profiles(NamedTuple):
    """The profiles ready to score with, loaded on the first text (not at import)."""

    han: dict[str, tuple[float, ...]]
    # The Latin profile as matrix rows, found by the n-gram's code (gram_code) in a sorted
    # array; the last row, all zeros, stands for unknown n-grams.
    latin_codes: np.ndarray[Any, np.dtype[np.int64]]
    latin_rows: np.ndarray[Any, np.dtype[np.intp]]
    latin_matrix: np.ndarray[Any, np.dtype[np.float64]]


# An n-gram of up to three characters as one integer: each code point takes 21 bits.
# No letter is code point 0, so the codes of 1-, 2- and 3-grams never meet, and the letters
# latin_words() keeps are far below 2**20, so a 3-gram's code stays under 2**63.
_BITS = 21


def gram_code(gram: str) -> int:
    """The integer the Latin profile knows GRAM by: its code points, 21 bits each."""
    code = 0
    for char in gram:
        code = (code << _BITS) | ord(char)
    return code


@lru_cache(maxsize=1)
def _profiles() -> _Profiles:
    """Load the profiles once per process: a command that detects nothing never pays it."""
    tables = _load()
    latin = tables["latin"]
    codes = np.fromiter(map(gram_code, latin), dtype=np.int64, count=len(latin))
    order = np.argsort(codes)
    matrix = np.array([*latin.values(), _ZERO_LATIN], dtype=np.float64)
    return _Profiles(tables["han"], codes[order], order, matrix)


# Bounds on the memory of the word scores and of the answers of this process (a worker
# meets the same ruling in many batches), not on correctness: they are recomputed.
_MAX_WORDS = 500_000
_MAX_TEXTS = 200_000
_SETTLED: dict[str, str | None] = {}
# Languages detected on worker processes for this run's texts; assign_languages() reads them.
_REMEMBERED: dict[str, str] = {}


def latin_words(text: str) -> list[str]:
    """TEXT's words, lower case, symbols such as {T} removed: what the Latin profiles read."""
    if "{" in text:
        text = _SYMBOLS.sub(" ", text)
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def word_grams(word: str) -> list[str]:
    """The character 1- to 3-grams of WORD with its boundaries, as the profiles hold them."""
    padded = f" {word} "
    pairs = list(map(operator.add, padded, padded[1:]))
    return [*word, *pairs, *map(operator.add, pairs, padded[2:])]


def han_grams(text: str) -> list[str]:
    """The Han characters of TEXT and their pairs within each run of Han characters."""
    grams: list[str] = []
    for run in _HAN_RUN.findall(text):
        grams.extend(run)
        grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return grams


def detect_language(text: str, declared: str | None = None) -> str:
    """Return the language code of TEXT; DECLARED (a source's own word) wins if given."""
    if declared:
        return declared
    known = _REMEMBERED.get(text)
    return known if known is not None else _detect(text)


def remember(languages: Mapping[str, str]) -> None:
    """Keep languages detected elsewhere (worker processes), so none is detected twice."""
    _REMEMBERED.update(languages)


def remembered() -> Mapping[str, str]:
    """The languages kept by remember(), by text (read only)."""
    return MappingProxyType(_REMEMBERED)


def forget() -> None:
    """Drop the remembered languages: the run that needed them is over."""
    _REMEMBERED.clear()


@lru_cache(maxsize=65536)
def _detect(text: str) -> str:
    return decide(text)


def decide(text: str) -> str:
    """The language of TEXT by script, then by the profiles, then by langdetect."""
    settled = settle(text)
    return settled if settled is not None else tie_break(text)


def settle(text: str) -> str | None:
    """The language TEXT's script or the profiles settle; None when only langdetect can say."""
    return settle_many([text])[0]


def settle_many(texts: Sequence[str]) -> list[str | None]:
    """Settle each of TEXTS as settle() does; Latin texts are scored together, in numpy.

    Cheap enough for every text: detect_many() runs it on worker processes during a run.
    """
    settled = _SETTLED
    if len(settled) > _MAX_TEXTS:  # a bound on memory: answers are recomputed
        settled.clear()
    new = [text for text in dict.fromkeys(texts) if text not in settled]
    answers = list(map(_by_script, new))
    latin = [i for i, answer in enumerate(answers) if answer is None]
    if latin:
        for i, answer in zip(latin, _latin_many([new[i] for i in latin]), strict=True):
            answers[i] = answer
    settled.update(zip(new, answers, strict=True))
    return list(map(settled.__getitem__, texts))


def _by_script(text: str) -> str | None:
    """The language TEXT's script decides, or None for a text in Latin letters."""
    if text.isascii() or _FOREIGN.search(text) is None:
        return None
    latin = len(_LATIN_LETTER.findall(text))
    if latin and len(_NOT_FOREIGN.sub("", text)) * _SCRIPT_WEIGHT < latin:
        return None  # Latin text quoting a name in another script
    if _HANGUL.search(text):
        return "ko"
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return _han_only(text)
    return "ru"


def _han_only(text: str) -> str:
    """Japanese or Chinese for a text in Han characters without kana.

    Chinese unless the profiles are sure: Japanese without kana is a keyword line (in the
    real data never over ten characters), and those are all the Han profiles decide.
    """
    if next(itertools.islice(_HAN.finditer(text), _MAX_KANJI_ONLY, None), None) is not None:
        return "zh"  # more than _MAX_KANJI_ONLY Han characters (counted no further)
    best, margin = _best(han_grams(text), _profiles().han, HAN_ONLY, (0.0, 0.0))
    return "ja" if best == "ja" and margin >= MIN_MARGIN else "zh"


def _latin_many(texts: list[str]) -> list[str | None]:
    """One of the six Latin languages for each text by the profiles; None where unsure.

    A text's score is the sum of its words' rows; summed per text by one numpy call.
    """
    words = [latin_words(text) for text in texts]
    counts = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    rows = _rows_of(list(itertools.chain.from_iterable(words)))
    scores = np.zeros((len(texts), len(LATIN)))
    spoken = counts > 0
    if len(rows):
        starts = (np.cumsum(counts) - counts)[spoken]
        scores[spoken] = np.add.reduceat(_WORDS.matrix[rows], starts, axis=0)
    best = scores.argmax(axis=1)
    top_two = np.partition(scores, -2, axis=1)
    margins = top_two[:, -1] - top_two[:, -2]
    answers: list[str | None] = []
    for text_words, language, margin in zip(words, best.tolist(), margins.tolist(), strict=True):
        if len(text_words) < _MIN_LETTERS and sum(map(len, text_words)) < _MIN_LETTERS:
            short = text_words and text_words[0] in _SHORT_ENGLISH
            answers.append("en" if short else UNDETERMINED)
        else:
            answers.append(LATIN[language] if margin >= MIN_MARGIN else None)
    return answers


class _WordRows:
    """Each word seen so far and its log-likelihood per Latin language, as matrix rows.

    Words recur across texts, so each is scored from its n-grams once per process.
    """

    def __init__(self) -> None:
        self.row_of: dict[str, int] = {}
        self.matrix = np.zeros((0, len(LATIN)))

    def rows(self, words: list[str]) -> np.ndarray[Any, np.dtype[np.intp]]:
        """The row of each of WORDS, scoring the new ones."""
        row_of = self.row_of
        if len(row_of) > _MAX_WORDS:  # a bound on memory: rows are recomputed
            self.__init__()  # type: ignore[misc]
            row_of = self.row_of
        found = map(row_of.get, words, itertools.repeat(-1))  # -1: a word not seen yet
        rows = np.fromiter(found, dtype=np.intp, count=len(words))
        missing = rows < 0
        if missing.any():
            unseen = list(itertools.compress(words, missing))
            new = list(dict.fromkeys(unseen))
            self.matrix = np.concatenate([self.matrix, _word_scores(new)])
            row_of.update(zip(new, range(len(row_of), len(row_of) + len(new)), strict=True))
            rows[missing] = np.fromiter(map(row_of.__getitem__, unseen), np.intp, len(unseen))
        return rows


def _word_scores(words: list[str]) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Each word's log-likelihood per Latin language: the sum of its n-grams' rows.

    The n-grams of word_grams(), for all WORDS at once in numpy: the words are laid end to
    end, each with its two boundary spaces, as code points; each place starts a 1-gram
    (inside a word), a 2-gram and a 3-gram (when the padded word holds them).
    """
    if not words:
        return np.zeros((0, len(LATIN)))
    profiles = _profiles()
    spans = np.fromiter(map(len, words), dtype=np.int64, count=len(words)) + 2
    chars = np.frombuffer(
        (" " + "  ".join(words) + " ").encode("utf-32-le"), dtype=np.uint32
    ).astype(np.int64)
    owner = np.repeat(np.arange(len(words)), spans)  # the word of each place
    ends = np.cumsum(spans)
    left = ends[owner] - np.arange(len(chars))  # places left in its padded word, this one too
    following = np.append(chars[1:], 0)
    pairs = (chars << _BITS) | following
    triples = (pairs << _BITS) | np.append(chars[2:], [0, 0])
    inside = (left > 1) & (left < spans[owner])
    masks = (inside, left > 1, left > 2)  # noqa: PLR2004 - room for a 2-gram, a 3-gram
    every = zip((chars, pairs, triples), masks, strict=True)
    codes = np.concatenate([grams[mask] for grams, mask in every])
    owners = np.concatenate([owner[mask] for mask in masks])
    known = profiles.latin_codes
    at = np.minimum(np.searchsorted(known, codes), len(known) - 1)
    unknown = len(profiles.latin_matrix) - 1
    rows = np.where(known[at] == codes, profiles.latin_rows[at], unknown)
    matrix = profiles.latin_matrix
    return np.stack(
        [np.bincount(owners, matrix[rows, j], minlength=len(words)) for j in range(len(LATIN))],
        axis=1,
    )


_WORDS = _WordRows()
_rows_of = _WORDS.rows


def _best(
    grams: list[str],
    profile: dict[str, tuple[float, ...]],
    languages: tuple[str, ...],
    zero: tuple[float, ...],
) -> tuple[str, float]:
    """The best of LANGUAGES for GRAMS under PROFILE, and its margin over the second."""
    known = [profile[g] for g in grams if g in profile]
    scores = tuple(map(sum, zip(*known, strict=True))) if known else zero
    ranked = sorted(zip(scores, languages, strict=True), reverse=True)
    return ranked[0][1], ranked[0][0] - ranked[1][0]


@lru_cache(maxsize=1)
def _latin_factory() -> DetectorFactory:
    """A langdetect factory with the profiles of the six Latin languages only, loaded once.

    A tenth of the load time of all 55 profiles, and no answer outside our languages.
    """
    profiles = resources.files("langdetect") / "profiles"
    factory = DetectorFactory()
    factory.load_json_profile([(profiles / lang).read_text(encoding="utf-8") for lang in LATIN])
    return factory


def tie_break(text: str) -> str:
    """The Latin language langdetect (seeded) finds most probable for TEXT, or `und`."""
    detector = _latin_factory().create()
    detector.append(text)
    try:
        ranked = detector.get_probabilities()
    except LangDetectException:
        return UNDETERMINED
    if not ranked:
        return UNDETERMINED
    code: str = ranked[0].lang
    return code


def langdetect_language(text: str) -> str:
    """The previous detector, kept for comparison: scripts, then langdetect at 80%."""
    if _HANGUL.search(text):
        return "ko"
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    if sum(map(len, latin_words(text))) < 20:  # noqa: PLR2004 - its old floor of letters
        return UNDETERMINED
    try:
        best = detect_langs(text)[0]
    except LangDetectException:
        return UNDETERMINED
    code: str = best.lang.split("-", maxsplit=1)[0]
    return code if best.prob >= 0.8 else UNDETERMINED  # noqa: PLR2004 - its old threshold


DETECTORS: dict[str, Callable[[str], str]] = {
    "default": decide,
    "langdetect": langdetect_language,
}


def detect_many(texts: Sequence[str], detector: str = "default") -> list[str]:
    """The language of each of TEXTS by the named detector, uncached."""
    if detector != "default":
        return list(map(DETECTORS[detector], texts))
    settled = settle_many(texts)
    return [s if s is not None else tie_break(t) for s, t in zip(settled, texts, strict=True)]
