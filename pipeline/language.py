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
# Frequent function words of the languages rulings are printed in, rare in the others.
# langdetect misreads short English ("Yes." comes out French) and costs milliseconds a
# call, so a text whose words clearly belong to one of these lists is settled here.
_FUNCTION_WORDS = {
    "en": frozenset({
        "the", "of", "and", "to", "you", "that", "is", "it", "if", "with", "this", "for",
        "can", "be", "are", "its", "your", "any", "an", "as", "on", "or", "by", "from", "not",
        "when", "would", "each", "was", "has", "have", "will", "may", "they", "their", "there",
        "which", "but", "all", "no", "yes", "it's", "can't", "don't", "doesn't", "isn't",
        "won't", "that's", "you're", "you'll", "card", "cards", "spell", "player",
    }),
    "de": frozenset({
        "der", "die", "das", "und", "ist", "nicht", "ein", "eine", "einer", "den", "dem", "des",
        "mit", "sich", "auf", "wenn", "du", "diese", "dieser", "wird", "werden", "kann", "zu",
        "im", "ins", "von", "karte", "oder", "auch", "sie", "bleibt", "kein", "keine",
    }),
    "fr": frozenset({
        "le", "la", "les", "des", "est", "une", "un", "et", "pas", "ne", "que", "qui", "dans",
        "du", "vous", "sur", "avec", "cette", "carte", "elle", "il", "si", "peut", "sont",
        "n'est", "d'une", "l'on", "plus", "sans", "au", "aux",
    }),
    "es": frozenset({
        "el", "los", "las", "una", "es", "y", "que", "del", "con", "por", "para", "si",
        "se", "su", "esa", "ese", "esta", "carta", "puede", "como", "pero", "hechizo",
    }),
    "it": frozenset({
        "il", "lo", "gli", "della", "di", "che", "è", "una", "non", "con", "per", "si", "carta",
        "questa", "quella", "puoi", "viene", "sono", "nel", "nella",
    }),
    "pt": frozenset({
        "o", "os", "as", "uma", "um", "é", "não", "com", "por", "para", "que", "se", "carta",
        "essa", "esse", "pode", "você", "seu", "sua", "do", "da", "dos", "das",
    }),
}  # fmt: skip


def _languages_of(lists: dict[str, frozenset[str]]) -> dict[str, tuple[str, ...]]:
    """Each function word and the languages whose list holds it: one lookup per word."""
    found: dict[str, tuple[str, ...]] = {}
    for lang, words in lists.items():
        for word in words:
            found[word] = (*found.get(word, ()), lang)
    return found


_LANGUAGES_OF = _languages_of(_FUNCTION_WORDS)
# A language is settled by its function words when they are this share of the words and
# at least twice as many as any other language's.
_MIN_SHARE = 0.2
_FEW_WORDS = 3
_MIN_LETTERS_FOR_MODEL = 20
_MIN_PROBABILITY = 0.8


def detect_language(text: str, declared: str | None = None) -> str:
    """Return the ISO 639-1 code of TEXT; DECLARED (a source's own word) wins if given."""
    if declared:
        return declared
    return _detect(text)


@lru_cache(maxsize=65536)
def _detect(text: str) -> str:
    quick = quick_language(text)
    if quick is not None:
        return quick
    try:
        best = detect_langs(text)[0]
    except LangDetectException:
        return UNDETERMINED
    if best.prob < _MIN_PROBABILITY:
        return UNDETERMINED
    code: str = best.lang
    return code.split("-", maxsplit=1)[0]


def quick_language(text: str) -> str | None:  # noqa: PLR0911 - one early answer per test
    """The language TEXT's script or function words settle, without the statistical model.

    `und` when the text is too short to tell; None when only the model can say.
    """
    if _HANGUL.search(text):
        return "ko"
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    if not words:
        return UNDETERMINED
    counts = dict.fromkeys(_FUNCTION_WORDS, 0)
    for word in words:
        for language in _LANGUAGES_OF.get(word, ()):
            counts[language] += 1
    (best, lang), (second, _) = sorted(((n, code) for code, n in counts.items()), reverse=True)[:2]
    # Rulings as short as "Yes." are English; one or two words are too few for the others.
    short = len(words) < _FEW_WORDS and lang != "en"
    if best / len(words) >= _MIN_SHARE and best >= 2 * second and not short:
        return lang
    if sum(len(word) for word in words) < _MIN_LETTERS_FOR_MODEL:
        return UNDETERMINED  # too short for a statistical guess
    return None
