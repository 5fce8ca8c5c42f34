"""translations_table(): every non-English ruling beside the English ruling it translates."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import listed, replace_column, strings
from pipeline.folding.translate.index import EnglishIndex
from pipeline.folding.translate.lexicon import Lexicon, shipped
from pipeline.folding.translate.link import link_many
from pipeline.folding.translate.units import Units
from pipeline.keys import codes, first_rows
from pipeline.schema import TRANSLATIONS, make_schema

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from pipeline.folding.translate.terms import TermStore

ENGLISH = "en"
# The columns of the rulings table that update_translations() and translations_table() read.
LINK_COLUMNS = ("text_hash", "card", "lang", "text", "current", "effective_date", "first_run")
# Languages whose rows get no translation row: English itself, and "und" (undetermined:
# it may well be English, and no lexicon fits it).
NOT_TRANSLATIONS = frozenset({ENGLISH, "und"})
TRANSLATIONS_SCHEMA = TRANSLATIONS


def translations_table(
    rulings: pa.Table,
    lexicon: Lexicon | None = None,
    *,
    workers: int = 1,
    kept: TermStore | None = None,
) -> pa.Table:
    """One row per non-English (text_hash, card): its English original, or null when unsure.

    RULINGS needs the columns text_hash, card, lang, text, current, effective_date and
    first_run. Every English text of the table (any card, any version, current or not) is a
    candidate; the card's own English rulings are preferred (see
    pipeline.folding.translate.link.decide; rulings of no known card are no card's own).
    Among versions of the original, which the words cannot tell apart, the original is the
    latest one not dated after the translation (else the earliest): a translation made
    before an English rewording links to the old wording, and shows as out of date.
    `original_current` is with_original_current()'s. Rows sorted by card (nulls last),
    lang, text_hash. Texts are linked on WORKERS processes (link_many). The English texts'
    terms are taken from KEPT where it holds them, and kept there for the next run.

    Only what the decisions need goes through Python: each English text once, the
    translations, the English rulings of their cards, the sightings of versions.
    """
    lexicon = shipped() if lexicon is None else lexicon
    if pa.types.is_null(rulings.schema.field("card").type):  # no card at all
        rulings = replace_column(rulings, "card", rulings["card"].cast(pa.string()))
    lang = rulings["lang"].cast(pa.string())
    english: Any = pc.fill_null(pc.equal(lang, pa.scalar(ENGLISH)), pa.scalar(False))  # noqa: FBT003
    translations = _translations(rulings, lang)
    cards = pc.unique(translations["card"].drop_null())
    owned = _own(rulings, english, cards)
    # A ruling translates one of its card's own: while a known card holds none in English,
    # a link among the other cards' rulings is a guess (2 wrong in 88 links on the hand set
    # without the card, benchmarks/translate_eval.py --hand), so it is not ranked; the run
    # that reads the card's first English ruling links it (update_translations). Rulings of
    # no known card are linked among every English ruling, no card holds theirs. Nor is a
    # translation in a language with no lexicon ranked: only the others go through Python.
    linkable = pc.is_in(translations["lang"], value_set=pa.array(sorted(lexicon), pa.string()))
    has_english = pc.is_in(
        translations["card"], value_set=pa.array(sorted(c for c in owned if c), pa.string())
    )
    ranked = pc.and_(linkable, pc.or_(pc.is_null(translations["card"]), has_english))
    methods = pc.if_else(linkable, pa.scalar("no-candidates"), pa.scalar("no-lexicon"))
    rows = np.flatnonzero(np.asarray(ranked.to_numpy(zero_copy_only=False), dtype=bool))
    picked = translations.take(pa.array(rows, pa.int64()))
    index = (
        _index(_first_texts(rulings, english), kept, workers)
        if picked.num_rows
        else EnglishIndex({})
    )
    # One ranking per text, whatever card it is on; one decision per card it is on.
    batch, unit_of_row = _units(picked, rulings, english, index)
    decided = link_many(batch, index, lexicon, workers)
    links = [decided[u] for u in unit_of_row.tolist()]
    asked = list(zip(*(listed(picked[name]) for name in ("text_hash", "card")), strict=True))
    # First sightings decide between versions of an original: only theirs are looked up.
    dated = [
        (h, link) for (h, *_), link in zip(asked, links, strict=True) if len(link.versions) > 1
    ]
    seen = _seen(rulings, {text for h, link in dated for text in (h, *link.versions)})
    originals: list[str | None] = []
    for (text_hash, card, *_), result in zip(asked, links, strict=True):
        original = result.original
        if len(result.versions) > 1:
            own = owned.get(card, set())
            original = _dated_version(result.versions, text_hash, card, own, seen)
        originals.append(original)
    count = translations.num_rows
    column = _scattered(rows, count)
    columns: list[Any] = [
        translations["text_hash"],
        translations["card"],
        translations["lang"],
        column(originals, None, pa.string()),
        column([link.score for link in links], 0.0, pa.float64()),
        column([link.margin for link in links], 0.0, pa.float64()),
        pa.nulls(count, pa.bool_()),
        pc.if_else(ranked, column([link.method for link in links], "", pa.string()), methods),
    ]
    table = pa.Table.from_arrays(columns, names=TRANSLATIONS_SCHEMA.names)
    return with_original_current(table.cast(TRANSLATIONS_SCHEMA), rulings)


def _index(texts: dict[str, str], kept: TermStore | None, workers: int) -> EnglishIndex:
    """The index of TEXTS, with the terms KEPT by an earlier run, and kept for the next.

    The terms of the texts KEPT lacks are taken on WORKERS processes when they are many.
    """
    known = kept.load() if kept is not None else None
    index = EnglishIndex(texts, known, workers)
    if kept is not None and (known is None or known.hashes != index.terms.hashes):
        kept.save(index.terms)
    return index


def _units(
    picked: pa.Table,
    rulings: pa.Table,
    english: Any,  # noqa: ANN401 - an Arrow boolean column
    index: EnglishIndex,
) -> tuple[Units, NDArray[np.int64]]:
    """The translations PICKED (text_hash, card, lang, text) as Units, and each row's unit.

    Each distinct text once (in the order of its first row), its units in the order of its
    rows; a unit's own English texts are its card's English rulings in RULINGS (ENGLISH
    marks them) as INDEX's positions. Rulings of no known card are no card's own.
    """
    text_of_row = _codes(picked["text_hash"].combine_chunks())
    _, first_rows = np.unique(text_of_row, return_index=True)
    firsts = pa.array(first_rows, pa.int64())
    order = np.argsort(text_of_row, kind="stable")
    unit_of_row = np.empty(len(order), dtype=np.int64)
    unit_of_row[order] = np.arange(len(order), dtype=np.int64)
    unit_card = picked["card"].take(pa.array(order, pa.int64()))
    # Each card's English texts (card, position), distinct, sorted: a card's are adjacent.
    card = rulings["card"].cast(pa.string())
    theirs = pc.and_(english, pc.is_in(card, value_set=pc.unique(unit_card.drop_null())))
    mine = rulings.select(["text_hash"]).filter(theirs)["text_hash"].cast(pa.string())
    cards = pa.concat_arrays(
        [column.cast(pa.string()).combine_chunks() for column in (unit_card, card.filter(theirs))]
    )
    card_codes = _codes(cards)
    unit_codes, own_codes = card_codes[: len(order)], card_codes[len(order) :]
    found = pc.index_in(mine, value_set=pa.array(index.hashes, pa.string()))
    positions = np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)
    width = max(1, len(index))
    keys = np.unique(own_codes * width + positions)
    card_of, doc = np.divmod(keys, width)
    card_starts = np.searchsorted(card_of, np.arange(max(0, int(card_codes.max(initial=0))) + 2))
    held = np.maximum(unit_codes, 0)
    counts = np.where(unit_codes >= 0, card_starts[held + 1] - card_starts[held], 0)
    own_starts = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(counts, out=own_starts[1:])
    at = np.repeat(card_starts[held] - own_starts[:-1], counts) + np.arange(int(counts.sum()))
    units = Units(
        listed(picked["text"].take(firsts)),
        listed(picked["lang"].take(firsts)),
        text_of_row[order],
        unit_card.cast(pa.string()).to_pylist(),
        own_starts,
        doc[at],
    )
    return units, unit_of_row


def _codes(column: Any) -> NDArray[np.int64]:  # noqa: ANN401 - an Arrow array
    """Each value's number among COLUMN's values, in order of first appearance (null: -1)."""
    encoded = pc.dictionary_encode(column)
    return np.asarray(pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False), np.int64)


def _scattered(rows: Any, count: int) -> Any:  # noqa: ANN401
    """A maker of columns of COUNT rows: given values at ROWS, a default elsewhere."""
    where = np.full(count, -1, dtype=np.int64)
    where[rows] = np.arange(len(rows), dtype=np.int64)
    picks: Any = pa.array(where, pa.int64(), mask=where < 0)  # a null pick takes a null

    def column(values: list[Any], default: Any, kind: pa.DataType) -> Any:  # noqa: ANN401
        found = pa.array(values, kind).take(picks)
        return found if default is None else pc.fill_null(found, pa.scalar(default, kind))

    return column


def _first_texts(rulings: pa.Table, where: Any) -> dict[str, str]:  # noqa: ANN401
    """{text_hash: text} of the rows at WHERE, each hash's first row's text."""
    picked = rulings.select(["text_hash", "text"]).take(first_rows(rulings, ["text_hash"], where))
    hashes, texts = (picked[name].cast(pa.string()) for name in ("text_hash", "text"))
    return dict(zip(strings(hashes), strings(texts), strict=True))


def _translations(rulings: pa.Table, lang: Any) -> pa.Table:  # noqa: ANN401
    """text_hash, card, lang, text of the first row of each translated (text_hash, card).

    Every language but English and "und" is a translation (a null one too: it gets no
    link). Sorted by card (nulls last), lang, text_hash.
    """
    foreign = pc.invert(pc.is_in(lang, value_set=pa.array(sorted(NOT_TRANSLATIONS))))
    rows = first_rows(rulings, ["text_hash", "card"], foreign)
    picked = pa.table(
        [rulings[name].take(rows).cast(pa.string()) for name in ("text_hash", "card")]
        + [lang.take(rows), rulings["text"].take(rows).cast(pa.string())],
        names=["text_hash", "card", "lang", "text"],
    )
    order = pc.sort_indices(
        picked,
        sort_keys=[("card", "ascending"), ("lang", "ascending"), ("text_hash", "ascending")],
    )
    return picked.take(order)


def _own(rulings: pa.Table, english: Any, cards: Any) -> dict[str | None, set[str]]:  # noqa: ANN401
    """Each of CARDS' own English text hashes. Rulings of no known card are no card's own."""
    card = rulings["card"].cast(pa.string())
    mine = pc.and_(english, pc.is_in(card, value_set=cards))
    picked = pa.table([rulings["text_hash"].cast(pa.string()), card], names=["h", "c"])
    owned: dict[str | None, set[str]] = defaultdict(set)
    for text_hash, name in zip(*(strings(c) for c in picked.filter(mine).columns), strict=True):
        owned[name].add(text_hash)
    return owned


def _seen(rulings: pa.Table, hashes: set[str]) -> dict[tuple[str, str | None], _When]:
    """When each of HASHES was first seen, per card and for any card (_ANY), in any language."""
    if not hashes:
        return {}
    names = ["text_hash", "card", "effective_date", "first_run"]
    wanted = pc.is_in(
        rulings["text_hash"].cast(pa.string()), value_set=pa.array(sorted(hashes), pa.string())
    )
    seen: dict[tuple[str, str | None], _When] = {}
    for row in rulings.filter(wanted).select(names).to_pylist():
        when = _When(row["effective_date"], row["first_run"])
        for key in ((row["text_hash"], row["card"]), (row["text_hash"], _ANY)):
            seen[key] = min(seen.get(key, when), when, key=_sort_key)
    return seen


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
    kept: TermStore | None = None,
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
    # Rulings of no known card are nobody's own originals (translations_table): a new one
    # re-links nothing, as a new English ruling of another card does not.
    gained = pc.drop_null(pc.unique(card.filter(new_english)))
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
        linked = rulings.select(LINK_COLUMNS).filter(pc.or_(english, relink))
        tables.append(translations_table(linked, lexicon, workers=workers, kept=kept))
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

    The original is current for the card when the card held it in English; else (and for
    a translation of no known card) whether any card holds it current. Null without an
    original.
    """
    if not table.num_rows:
        return table
    # Only the rows of the originals matter: a run's few, among a million rulings.
    found = pc.unique(table["original_text_hash"].drop_null()).cast(pa.string())
    rulings = rulings.select(["text_hash", "card", "lang", "current"])
    rulings = rulings.filter(pc.is_in(rulings["text_hash"].cast(pa.string()), value_set=found))
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
    own = pc.and_(pc.is_valid(table["card"]), pc.is_in(wanted, value_set=held))
    current_own = pc.is_in(wanted, value_set=held_live)
    current_any = pc.is_in(table["original_text_hash"], value_set=live["text_hash"])
    flags = pc.if_else(own, current_own, current_any)
    flags = pc.if_else(pc.is_null(table["original_text_hash"]), pa.scalar(None, pa.bool_()), flags)
    return replace_column(table, "original_current", flags)
