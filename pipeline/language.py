"""Language of a ruling as ISO 639-1: deterministic, cached by text hash, never raises."""

from __future__ import annotations

import re
from functools import lru_cache

from langdetect import DetectorFactory, detect_langs
from langdetect.lang_detect_exception import LangDetectException

UNDETERMINED = "und"
# langdetect's per-call random walk is reproducible only with a fixed seed.
DetectorFactory.seed = 0

_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_WORD = re.compile(r"[^\W\d_]+(?:'[a-z]+)?")
# Frequent English words that are rare in the other languages rulings are printed in.
# langdetect misreads short English ("Yes." comes out French), so clear English is
# recognised here first; that is also much faster than a model call.
_ENGLISH = frozenset({
    "the", "of", "and", "to", "you", "that", "is", "it", "if", "with", "this", "for", "can",
    "be", "are", "its", "your", "any", "an", "as", "on", "or", "by", "from", "not", "when",
    "would", "each", "was", "has", "have", "will", "may", "they", "their", "there", "which",
    "but", "all", "no", "yes", "it's", "can't", "don't", "doesn't", "isn't", "won't", "that's",
    "you're", "you'll", "card", "cards", "spell", "player",
})  # fmt: skip
_MIN_ENGLISH_RATIO = 0.2
_MIN_LETTERS_FOR_MODEL = 20
_MIN_PROBABILITY = 0.8


def detect_language(text: str, declared: str | None = None) -> str:
    """Return the ISO 639-1 code of TEXT; DECLARED (a source's own word) wins if given."""
    if declared:
        return declared
    return _detect(text)


@lru_cache(maxsize=65536)
def _detect(text: str) -> str:  # noqa: PLR0911 - one early answer per script or test
    if _HANGUL.search(text):
        return "ko"
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    if not words:
        return UNDETERMINED
    english = sum(word in _ENGLISH for word in words)
    if english / len(words) >= _MIN_ENGLISH_RATIO:
        return "en"
    if sum(len(word) for word in words) < _MIN_LETTERS_FOR_MODEL:
        return UNDETERMINED  # too short for a statistical guess
    try:
        best = detect_langs(text)[0]
    except LangDetectException:
        return UNDETERMINED
    if best.prob < _MIN_PROBABILITY:
        return UNDETERMINED
    code: str = best.lang
    return code.split("-", maxsplit=1)[0]
