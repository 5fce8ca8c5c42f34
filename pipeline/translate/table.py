"""translations_table(): every non-English ruling beside the English ruling it translates."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pyarrow as pa

from pipeline.translate.lexicon import Lexicon, shipped
from pipeline.translate.link import EnglishIndex, Link, Ranking, decide, rank

ENGLISH = "en"
# Languages whose rows get no translation row: English itself, and "und" (undetermined:
# it may well be English, and no lexicon fits it).
NOT_TRANSLATIONS = frozenset({ENGLISH, "und"})
_FIELDS: list[pa.Field[Any]] = [
    pa.field("text_hash", pa.string(), nullable=False),
    pa.field("card", pa.string()),
    pa.field("lang", pa.string(), nullable=False),
    pa.field("original_text_hash", pa.string()),
    pa.field("score", pa.float64(), nullable=False),
    pa.field("margin", pa.float64(), nullable=False),
    pa.field("original_current", pa.bool_()),
    pa.field("method", pa.string(), nullable=False),
]
TRANSLATIONS_SCHEMA = pa.schema(_FIELDS)


def translations_table(rulings: pa.Table, lexicon: Lexicon | None = None) -> pa.Table:
    """One row per non-English (text_hash, card): its English original, or null when unsure.

    RULINGS needs the columns text_hash, card, lang, text and current. Every English text
    of the table (any card, any version, current or not) is a candidate; the card's own
    English rulings are preferred (see pipeline.translate.link.decide). `original_current`
    tells whether the original is current for that card, or, when the card never held it
    in English, for any card; null without an original. Rows sorted by card (nulls last),
    lang, text_hash.
    """
    lexicon = shipped() if lexicon is None else lexicon
    columns = rulings.select(["text_hash", "card", "lang", "text", "current"]).to_pylist()
    english_texts: dict[str, str] = {}
    own: dict[str | None, set[str]] = defaultdict(set)
    current_for: set[tuple[str, str | None]] = set()
    current_anywhere: set[str] = set()
    translations: dict[tuple[str, str | None], tuple[str, str]] = {}
    for row in columns:
        if row["lang"] == ENGLISH:
            english_texts.setdefault(row["text_hash"], row["text"])
            own[row["card"]].add(row["text_hash"])
            if row["current"]:
                current_for.add((row["text_hash"], row["card"]))
                current_anywhere.add(row["text_hash"])
        elif row["lang"] not in NOT_TRANSLATIONS:
            translations.setdefault((row["text_hash"], row["card"]), (row["lang"], row["text"]))
    index = EnglishIndex(english_texts)
    rankings: dict[str, Ranking] = {}  # one ranking per text, whatever card it is on
    rows: list[dict[str, object]] = []
    for (text_hash, card), (lang, text) in sorted(translations.items(), key=_order):
        if lang not in lexicon:
            result = Link(None, 0.0, 0.0, "no-lexicon")
        else:
            if text_hash not in rankings:
                rankings[text_hash] = rank(text, lang, index, lexicon)
            result = decide(rankings[text_hash], index, own.get(card, set()))
        current = None
        if result.original is not None:
            if result.original in own.get(card, set()):
                current = (result.original, card) in current_for
            else:
                current = result.original in current_anywhere
        rows.append(
            {
                "text_hash": text_hash,
                "card": card,
                "lang": lang,
                "original_text_hash": result.original,
                "score": result.score,
                "margin": result.margin,
                "original_current": current,
                "method": result.method,
            }
        )
    return pa.Table.from_pylist(rows, schema=TRANSLATIONS_SCHEMA)


def _order(item: tuple[tuple[str, str | None], tuple[str, str]]) -> tuple[bool, str, str, str]:
    (text_hash, card), (lang, _) = item
    return (card is None, card or "", lang, text_hash)
