"""Pure text functions: cleaning, folding, hashing, stripped-symbol detection, card titles."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
    }
)
# str.translate looks every character up in a dict: only texts holding one of these pay that.
_CURLY = re.compile("[" + "".join(map(chr, _QUOTES)) + "]")
_INVISIBLE = ("\u200b", "\ufeff")  # zero-width space, byte-order mark
# Control characters, C0 (but tab and line feed), DEL and C1: a terminal's escapes (\x1b[31m),
# a bell, a form feed. No published text holds one; white space among them is split away.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NO_BREAK = ("\u00a0", "\u2007", "\u202f")
SYMBOL_PATTERN = r"\{[^{}\s]{1,8}\}"
_SYMBOL = re.compile(SYMBOL_PATTERN)
_NO_BREAK_ANY = re.compile("[" + "".join(_NO_BREAK) + "]")
# A gap a stripped symbol leaves: two or more blanks, or a non-breaking one, between
# words, but not the double space some writers put after a full stop.
_GAP = re.compile(
    r"(?<![.!?:;)\"'\u201d\u2019])(?:[ \t]{2,}|[ \t]*[" + "".join(_NO_BREAK) + r"][ \t]*)(?=\S)"
)

GENERIC_TITLES = frozenset(
    {
        "card rulings",
        "rulings",
        "ruling",
        "rulings and notes",
        "notes",
        "card notes",
        "search",
        "search results",
        "rules",
        "comprehensive rules",
        "faq",
        "errata",
        "release notes",
        "oracle",
        "gatherer",
        "card",
        "cards",
        "untitled",
        "glossary",
        "keywords",
        "regeln",
        "entscheidungen",
        "urteile",
        "hinweise",
        "règles",
        "décisions",
        "reglas",
        "regole",
        "regras",
        "판정",
        "룰링",
        "규칙",
        "裁定",
        "ルール",
        "правила",
        "решения",
    }
)
_TITLE_AFFIXES = re.compile(
    r"^(?:(?:card\s+)?rulings?\s+(?:for|of|on)\s+|rulings?:\s*)(?P<a>.+)$"
    r"|^(?P<b>.+?)\s*(?:[-\u2013\u2014:]\s*)?(?:card\s+)?rulings?$",
    re.IGNORECASE,
)


def clean(text: str) -> str:
    """Readable text: NFC, invisible and control characters dropped, blank runs as one space."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
        for invisible in _INVISIBLE:  # str.replace, not translate: C speed on any text
            if invisible in text:
                text = text.replace(invisible, "")
    # str.split() splits on exactly the characters \s matches, and is several times faster.
    cleaned = " ".join(text.split())
    if not cleaned.isprintable():  # a control or format character: a rare text pays the regex
        cleaned = " ".join(CONTROL.sub("", cleaned).split())
    return cleaned


def printable(text: str) -> str:
    """TEXT without control characters but tab and line feed: what is published."""
    return CONTROL.sub("", text)


def fold(text: str) -> str:
    """The form that is hashed: clean text with curly quotes and apostrophes straightened."""
    return clean(_straight(unicodedata.normalize("NFC", text)))


def text_hash(text: str) -> str:
    """Lowercase hex sha256 of the folded text: the ruling's identity across typography."""
    return hashlib.sha256(fold(text).encode("utf-8")).hexdigest()


def hash_clean(cleaned: str) -> str:
    """text_hash() of a text that clean() already gave: the hot path skips cleaning twice."""
    return hashlib.sha256(_straight(cleaned).encode("utf-8")).hexdigest()


def _straight(text: str) -> str:
    if text.isascii() or _CURLY.search(text) is None:
        return text
    return text.translate(_QUOTES)


def has_symbols(text: str) -> bool:
    """Tell whether the text holds a mana or tap symbol such as {X}, {2} or {G/P}."""
    return _SYMBOL.search(text) is not None


def skeleton(text: str) -> str:
    """Folded text with symbols removed: what a scraper that strips symbols would leave."""
    return skeleton_of_folded(fold(text))


def skeleton_of_folded(folded: str) -> str:
    """skeleton() of a text that fold() already gave."""
    return " ".join(_SYMBOL.sub(" ", folded).split())  # split(): the blanks \s matches


def has_symbol_gap(raw: str) -> bool:
    """Tell whether raw text shows the gap a stripped symbol leaves ("has   in its cost")."""
    if "  " not in raw and "\t" not in raw and (raw.isascii() or not _NO_BREAK_ANY.search(raw)):
        return False  # the common case, without the look-behind regex
    return _GAP.search(raw.strip()) is not None


# Oracle spells the ligature out ("Aether Vial", "Aetherling") since 2016; older printings,
# Gatherer pages and dumps still carry "Æther Vial".
_LIGATURES = str.maketrans({"\u00c6": "Ae", "\u00e6": "ae"})


@lru_cache(maxsize=65_536)
def card_name(name: str) -> str:
    """A card's name as stored: folded as ruling texts are, and the ligature spelled out.

    "Lim-Dûl\u2019s Vault" (a curly apostrophe, or a decomposed û) and "Lim-Dûl's Vault" are one
    card; so are "Æther Vial" and "Aether Vial". The name as printed is kept apart.
    """
    folded = fold(name)
    return folded if folded.isascii() else folded.translate(_LIGATURES)


def card_key(name: str) -> str:
    """The form two spellings of one card name share, for looking a name up."""
    return card_name(name).casefold()


def card_from_title(title: str | None) -> str | None:
    """Return the card name a document title names, or None for a generic heading."""
    if title is None:
        return None
    name = clean(title)
    if name.casefold() in GENERIC_TITLES:
        return None
    match = _TITLE_AFFIXES.match(name)
    if match is not None:
        name = (match.group("a") or match.group("b") or "").strip()
    if not name or name.casefold() in GENERIC_TITLES:
        return None
    if len(name) > 60 or name[-1] in ".!?;" or len(name.split()) > 8:  # noqa: PLR2004
        return None  # a sentence, not a card name
    return name
