"""translations_table(): every non-English ruling beside the English ruling it translates."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import replace_column
from pipeline.folding.translate.lexicon import Lexicon, shipped
from pipeline.folding.translate.link import EnglishIndex, Link, decide, rank_many
from pipeline.keys import codes
from pipeline.schema import TRANSLATIONS, make_schema

ENGLISH = "en"
# Languages whose rows get no translation row: English itself, and "und" (undetermined:
# it may well be English, and no lexicon fits it).
NOT_TRANSLATIONS = frozenset({ENGLISH, "und"})
TRANSLATIONS_SCHEMA = TRANSLATIONS


def translations_table(
    rulings: pa.Table, lexicon: Lexicon | None = None, *, workers: int = 1
) -> pa.Table:
    """One row per non-English (text_hash, card): its English original, or null when unsure.

    RULINGS needs the columns text_hash, card, lang, text, current, effective_date and
    first_run. Every English text of the table (any card, any version, current or not) is a
    candidate; the card's own English rulings are preferred (see
    pipeline.folding.translate.link.decide). Among versions of the original, which the words cannot
    tell apart, the original is the latest one not dated after the translation (else the
    earliest): a translation made before an English rewording links to the old wording,
    and shows as out of date. `original_current`
    tells whether the original is current for that card, or, when the card never held it
    in English, for any card; null without an original. Rows sorted by card (nulls last),
    lang, text_hash. Texts are ranked on WORKERS processes (rank_many).
    """
    lexicon = shipped() if lexicon is None else lexicon
    data = _read(rulings)
    index = EnglishIndex(data.english)
    translations = sorted(data.translations.items(), key=_order)
    texts: dict[str, tuple[str, str]] = {}  # one ranking per text, whatever card it is on
    for (text_hash, _), (lang, text) in translations:
        if lang in lexicon:
            texts.setdefault(text_hash, (text, lang))
    rankings = dict(zip(texts, rank_many(list(texts.values()), index, lexicon, workers),
                        strict=True))  # fmt: skip
    rows: list[dict[str, object]] = []
    for (text_hash, card), (lang, _) in translations:
        own = data.own.get(card, set())
        if lang not in lexicon:
            result = Link(None, 0.0, 0.0, "no-lexicon")
        else:
            result = decide(rankings[text_hash], index, own)
        original = result.original
        if len(result.versions) > 1:
            original = _dated_version(result.versions, text_hash, card, own, data.seen)
        current = None
        if original is not None:
            current = (
                (original, card) in data.current
                if original in own
                else (original, _ANY) in data.current
            )
        rows.append(
            {
                "text_hash": text_hash,
                "card": card,
                "lang": lang,
                "original_text_hash": original,
                "score": result.score,
                "margin": result.margin,
                "original_current": current,
                "method": result.method,
            }
        )
    return pa.Table.from_pylist(rows, schema=TRANSLATIONS_SCHEMA)


class _Inputs(NamedTuple):
    """What the table needs from the rulings, gathered in one pass."""

    english: dict[str, str]  # text_hash -> text
    own: dict[str | None, set[str]]  # card -> its English text hashes
    current: set[tuple[str, str | None]]  # (English text_hash, card or _ANY) held current
    translations: dict[tuple[str, str | None], tuple[str, str]]  # (hash, card) -> lang, text
    seen: dict[tuple[str, str | None], _When]  # (hash, card or _ANY) -> first seen


def _read(rulings: pa.Table) -> _Inputs:
    """English texts, each card's own, current ones, translations and first sightings."""
    names = ["text_hash", "card", "lang", "text", "current", "effective_date", "first_run"]
    data = _Inputs({}, defaultdict(set), set(), {}, {})
    for row in rulings.select(names).to_pylist():
        text_hash, card, lang = row["text_hash"], row["card"], row["lang"]
        when = _When(row["effective_date"], row["first_run"])
        for key in ((text_hash, card), (text_hash, _ANY)):
            data.seen[key] = min(data.seen.get(key, when), when, key=_sort_key)
        if lang == ENGLISH:
            data.english.setdefault(text_hash, row["text"])
            data.own[card].add(text_hash)
            if row["current"]:
                data.current.update({(text_hash, card), (text_hash, _ANY)})
        elif lang not in NOT_TRANSLATIONS:
            data.translations.setdefault((text_hash, card), (lang, row["text"]))
    return data


class _When(NamedTuple):
    """When a text was first seen: its earliest date (null: undated) and first run."""

    date: dt.date | None
    run: int


# The card None stands for "unknown card"; this key stands for "any card".
_ANY = "\x00any"


def _sort_key(when: _When) -> tuple[dt.date, int]:
    return (when.date or dt.date.min, when.run)


def _not_after(first: _When, second: _When) -> bool:
    # Dates decide when both texts have one; the run that first read them otherwise.
    if first.date is not None and second.date is not None:
        return first.date <= second.date
    return first.run <= second.run


def _dated_version(
    versions: tuple[str, ...],
    translation: str,
    card: str | None,
    own: set[str],
    seen: dict[tuple[str, str | None], _When],
) -> str:
    """Of the versions (the card's own if it has any), the one the translation was made from."""
    candidates = [v for v in versions if v in own] or list(versions)

    def when(text_hash: str) -> _When:
        return seen.get((text_hash, card)) or seen[text_hash, _ANY]

    made = when(translation)
    before = [v for v in candidates if _not_after(when(v), made)]
    if before:
        return max(before, key=lambda v: (_sort_key(when(v)), v))
    return min(candidates, key=lambda v: (_sort_key(when(v)), v))


def _order(item: tuple[tuple[str, str | None], tuple[str, str]]) -> tuple[bool, str, str, str]:
    (text_hash, card), (lang, _) = item
    return (card is None, card or "", lang, text_hash)


def has_work(old: pa.Table, rulings: pa.Table, cards: Any) -> bool:  # noqa: ANN401
    """Whether update_translations(OLD, …) would change anything, RULINGS holding CARDS.

    It does when translations are stored (their originals' flags may move) or when a card
    read holds a ruling that is not English: without either, the table stays empty.
    """
    if old.num_rows:
        return True
    lang = rulings["lang"].cast(pa.string())
    foreign = pc.invert(pc.is_in(lang, value_set=pa.array(sorted(NOT_TRANSLATIONS))))
    read = pc.is_in(rulings["card"].cast(pa.string()), value_set=cards)
    return bool(pc.any(pc.and_(foreign, read)).as_py())


def update_translations(
    old: pa.Table,
    rulings: pa.Table,
    cards: Any,  # noqa: ANN401 - an Arrow string array
    run: int,
    lexicon: Lexicon | None = None,
    *,
    workers: int = 1,
) -> pa.Table:
    """The translations after RUN, which read CARDS, from the RULINGS after it (`current`).

    A translation of those cards is linked (among every English ruling) when it is new, or
    when its card gained an English ruling in this run (it may be the translation's
    original, read after it); the others keep their links. Every row's
    `original_current` follows the rulings' `current`: a translation whose original this
    run amended or removed is out of date without being read again. OLD is the table
    before the run; WORKERS processes rank the texts to link.
    """
    lang = rulings["lang"].cast(pa.string())
    card = rulings["card"].cast(pa.string())
    english = pc.equal(lang, pa.scalar(ENGLISH))
    foreign = pc.invert(pc.is_in(lang, value_set=pa.array(sorted(NOT_TRANSLATIONS))))
    new_english = pc.and_(english, pc.equal(rulings["first_run"], pa.scalar(run, pa.int64())))
    gained = pc.unique(card.filter(new_english))
    pairs = pa.Table.from_arrays([rulings["text_hash"].cast(pa.string()), card], ["h", "c"])
    known = pa.Table.from_arrays([old["text_hash"], old["card"]], ["h", "c"])
    ruling_pairs, old_pairs = codes([pairs, known], ["h", "c"])
    fresh = pc.invert(pc.is_in(ruling_pairs, value_set=old_pairs))
    relink = pc.and_(
        pc.and_(foreign, pc.is_in(card, value_set=cards)),
        pc.or_(fresh, pc.is_in(card, value_set=gained)),
    )
    tables = [old.filter(pc.invert(pc.is_in(old_pairs, value_set=ruling_pairs.filter(relink))))]
    if pc.any(relink).as_py():
        linked = rulings.filter(pc.or_(english, relink))
        tables.append(translations_table(linked, lexicon, workers=workers))
    table = pa.concat_tables([TRANSLATIONS.empty_table(), *(t.cast(TRANSLATIONS) for t in tables)])
    [order] = codes([table], ["card", "lang", "text_hash"])
    return with_original_current(table.take(pc.sort_indices(order)), rulings)


_FLAGS = make_schema(
    [
        pa.field("text_hash", pa.string()),
        pa.field("card", pa.string()),
        pa.field("current", pa.bool_()),
    ]
)


def with_original_current(table: pa.Table, rulings: pa.Table) -> pa.Table:
    """TABLE with `original_current` as translations_table() tells it, from RULINGS' flags.

    The original is current for the card when the card held it in English; else whether
    any card holds it current. Null without an original.
    """
    if not table.num_rows:
        return table
    english = rulings.filter(pc.equal(rulings["lang"].cast(pa.string()), pa.scalar(ENGLISH)))
    english = english.select(["text_hash", "card", "current"]).cast(_FLAGS)
    live = english.filter(english["current"])
    originals = pa.Table.from_arrays(
        [table["original_text_hash"], table["card"]], names=["text_hash", "card"]
    )
    wanted, held, held_live = codes(
        [originals, english.select(["text_hash", "card"]), live.select(["text_hash", "card"])],
        ["text_hash", "card"],
    )
    own = pc.is_in(wanted, value_set=held)
    current_own = pc.is_in(wanted, value_set=held_live)
    current_any = pc.is_in(table["original_text_hash"], value_set=live["text_hash"])
    flags = pc.if_else(own, current_own, current_any)
    flags = pc.if_else(pc.is_null(table["original_text_hash"]), pa.scalar(None, pa.bool_()), flags)
    return replace_column(table, "original_current", flags)
