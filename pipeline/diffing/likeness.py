"""How alike two rulings of one card are: the measures the diff pairs rulings by.

Rulings are compared as the same card would read them: with the card's own name and the
self-references Wizards now writes in its place ("this creature", "this card", "it") folded
to one token, the names of other cards given as examples ("like with Fist of Suns or Mind's
Desire") folded to another, by characters (rapidfuzz Indel ratio) and by words (the stems two
rulings share, weighted by how rare each is among real rulings), and by sentences (a ruling
cut down to some of its sentences, or grown by some). Texts are prepared once per comparison
(`Texts`), not once per pair.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from pipeline.text.normalize import fold

if TYPE_CHECKING:
    from collections.abc import Iterable

SELF = "\u00a7"  # the one token every self-reference becomes (a character no ruling holds)
OTHER = "\u00b6"  # the one token every other card's name becomes
# Another card named in passing: two or more capitalised words ("Fist of Suns", "Thalia,
# Guardian of Thraben", "Mind's Desire"), "of", "the"... between them, not first in a sentence
# (a ruling's first words are capitalised anyway). Examples change between versions of a
# ruling ("like Jaya's Immolating Inferno does" dropped), and as unseen words they would
# otherwise weigh the most. One capitalised word alone is left: "Aura", "Saga", "Wizards".
_CAPITALISED = r"[A-Z][\w'\u2019-]*"
_OTHER_NAME = re.compile(
    rf"(?<=[\w,;)\u201d\"] ){_CAPITALISED}(?:,? (?:(?:of|the|to|and|in|from) )*{_CAPITALISED})+"
)
_SELF_WORDS = (
    "this creature",
    "this card",
    "this spell",
    "this permanent",
    "this artifact",
    "this enchantment",
    "this land",
    "this planeswalker",
    "this battle",
    "this token",
)
_IT = re.compile(r"\bit\b(?!')")  # "it", not "it's" (a contraction, not a reference)
_WORD = re.compile(r"[\w\u00a7{}+/']+")
# Words too common in rulings to say anything about what two of them share.
_STOP_WORDS = (
    "a an and any are as be but by can can't do does doesn't don't for from has have if in "
    "is isn't it it's its no not of on or so that the their them there this to was will "
    "with won't you you're your"
)
_STOP = frozenset(_STOP_WORDS.split())
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SENTENCE_RATIO = 90.0  # two sentences this alike (Indel, 0-100) are the same sentence
# A ruling condensed sentence by sentence (Rona's four sentences cut to two, each reworded: 87
# and 64): two sentences or more, each at _CONDENSED_EACH or above, _CONDENSED_MEAN on average.
# On the labelled and stress sets, 50 each and 65 on average gave no false pairing; 40 and 50 did.
_CONDENSED_EACH = 55.0
_CONDENSED_MEAN = 70.0
_SUFFIXES = ("ing", "ed", "es", "en", "s", "e")
_COUNTS = "stem_counts.txt"
_STEM = 6  # stems are cut to this many letters: "chosen" and "choose" meet as "chos"


def self_folded(text: str, card: str | None) -> str:
    """TEXT folded, lowercased, with the card's name and self-references as one token.

    Other cards' names (two capitalised words or more, not first in a sentence) become OTHER.
    """
    out = fold(text)
    names = [card, card.split(",")[0]] if card else []
    # Longest first, so "Teferi, Mage of Zhalfir" goes before "Teferi".
    for name in sorted(set(names), key=len, reverse=True):
        out = re.sub(rf"\b{re.escape(name)}\b", SELF, out, flags=re.IGNORECASE)
    out = _OTHER_NAME.sub(OTHER, out).lower()
    for name in sorted(_SELF_WORDS, key=len, reverse=True):
        out = re.sub(rf"\b{re.escape(name)}\b", SELF, out)
    return _IT.sub(SELF, out)


def stem(word: str) -> str:
    """A crude stem: one common suffix off, cut to a few letters (enough to pair word forms)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:  # noqa: PLR2004 - a root
            return word[: -len(suffix)][:_STEM]
    return word[:_STEM]


def stems_of(folded: str) -> frozenset[str]:
    """The stems of the words of a self-folded text, common words left out."""
    return frozenset(stem(w) for w in _WORD.findall(folded) if w not in _STOP)


@cache
def _rarity() -> defaultdict[str, float]:
    """Inverse document frequency of each stem over real rulings (stem_counts.txt).

    A stem the table does not hold is rarer than any it does.
    """
    lines = files("pipeline.diffing").joinpath(_COUNTS).read_text(encoding="utf-8").split()
    documents = int(lines[0])
    counts = {stem: int(n) for stem, n in (item.rsplit(":", 1) for item in lines[1:])}
    unseen = math.log((documents + 1) / 0.5)
    rarity: defaultdict[str, float] = defaultdict(lambda: unseen)
    rarity.update({s: math.log((documents + 1) / (n + 0.5)) for s, n in counts.items()})
    return rarity


class Texts:
    """The rulings of one comparison, prepared once: folded texts, words, stems, rarity."""

    def __init__(self, texts: Iterable[str], card: str | None) -> None:
        """Prepare TEXTS (every ruling compared, old and new) of CARD."""
        self._folded = {t: self_folded(t, card) for t in dict.fromkeys(texts)}
        self._words = {t: _WORD.findall(f) for t, f in self._folded.items()}
        self._stems = {t: stems_of(f) for t, f in self._folded.items()}
        self._sentences = {t: _SENTENCE_END.split(f.strip()) for t, f in self._folded.items()}

    def characters(self, a: str, b: str) -> float:
        """Indel similarity (0-100) of the self-folded texts."""
        return fuzz.ratio(self._folded[a], self._folded[b])

    def words(self, a: str, b: str) -> float:
        """Weighted Dice (0-100) of the stems A and B share, rare stems weighing more."""
        rarity = _rarity()
        shared = sum(rarity[s] for s in self._stems[a] & self._stems[b])
        total = sum(rarity[s] for s in self._stems[a]) + sum(rarity[s] for s in self._stems[b])
        return 200 * shared / total if total else 0.0

    def covered(self, part: str, whole: str) -> float:
        """How much of PART's words WHOLE holds (0-100): PART's stems weighted by rarity."""
        rarity = _rarity()
        total = sum(rarity[s] for s in self._stems[part])
        held = sum(rarity[s] for s in self._stems[part] & self._stems[whole])
        return 100 * held / total if total else 0.0

    def length_ratio(self, a: str, b: str) -> float:
        """The shorter text's word count over the longer's (1: same length)."""
        na, nb = len(self._words[a]), len(self._words[b])
        return min(na, nb) / max(na, nb) if max(na, nb) else 1.0

    def contained(self, part: str, whole: str) -> float:
        """How well PART reads inside WHOLE (rapidfuzz partial ratio); 0 when PART is longer."""
        small, big = self._folded[part], self._folded[whole]
        return fuzz.partial_ratio(small, big) if len(small) <= len(big) else 0.0

    def kept_sentences(self, a: str, b: str) -> int:
        """Words of the shorter text when all its sentences are a run of the longer's, else 0.

        A ruling cut down to its first statement ("... are cumulative. However, for some
        abilities, like flying, ..." -> "... are cumulative.") or grown by an example keeps
        its other sentences as they were (each at _SENTENCE_RATIO or above, in order). A ruling
        of two sentences or more may also have been condensed from more, each sentence reworded
        (the _CONDENSED_ figures).
        """
        short, long = sorted((self._sentences[a], self._sentences[b]), key=len)
        if len(short) == len(long):
            return 0
        n = len(short)
        for start in range(len(long) - n + 1):
            scores = [fuzz.ratio(x, y) for x, y in zip(short, long[start : start + n], strict=True)]
            kept = min(scores) >= _SENTENCE_RATIO
            condensed = (
                n > 1 and min(scores) >= _CONDENSED_EACH and sum(scores) >= _CONDENSED_MEAN * n
            )
            if kept or condensed:
                return sum(len(_WORD.findall(x)) for x in short)
        return 0
