"""Translations linked to their English originals: features, lexicon, linker, table."""

from __future__ import annotations

import datetime as dt
import importlib
import itertools
import json
import os
import random
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES, RAW, REALDATA
from rapidfuzz import fuzz

from pipeline import open_dataset
from pipeline.errors import StoreError
from pipeline.folding.translate import EnglishIndex, link, translations_table
from pipeline.folding.translate.card import VERSION_SIMILARITY
from pipeline.folding.translate.features import (
    ANCHOR,
    features,
    mark_similarity,
    marks,
    printed_names,
    prints_names,
    shape,
    shape_similarity,
    traits,
)
from pipeline.folding.translate.index import foreign_terms
from pipeline.folding.translate.lexicon import Lexicon, dumps, learn_model1, loads, shipped
from pipeline.folding.translate.link import decide, rank
from pipeline.folding.translate.parallel import TEST_SETS, read_pairs
from pipeline.ingest import ingest
from pipeline.publishing.dataset import load_changeset
from pipeline.publishing.render import render_markdown
from pipeline.text.normalize import fold, text_hash

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pipeline.folding.translate.index import Queries

# The module, not the function the package exports under its name.
link_module = importlib.import_module("pipeline.folding.translate.link")

SPELL_TARGETS = (
    "If the spell requires any targets, those targets are chosen when the spell is finally "
    "cast, not when {}."
)
# The six seed translations (their openings) and the English rulings they translate; the
# Korean target ruling exists in two wordings, either is its original.
SEED_LINKS = [
    ("유예를 가진 카드를 추방하는 것은", ("Exiling a card with suspend isn't casting that card.",)),
    ("유예의 첫 번째 격발능력", ("If the first triggered ability of suspend (the one that",)),
    (
        "주문이 목표를 요구한다면",
        (
            SPELL_TARGETS.format("it's exiled"),
            SPELL_TARGETS.format("the card is exiled"),
        ),
    ),
    ("Falls sich ein Effekt auf eine", ('If an effect refers to a "suspended card,"',)),
    ("Du kannst eine Karte auf deiner Hand", ("You can exile a card in your hand using suspend",)),
    (
        "Eine Karte mit Aussetzen ins Exil",
        ("Exiling a card with suspend isn't casting that card.",),
    ),
]
# Real printed card texts (MTGJSON, PLC and MH2) about suspend cards: close in words to the
# seeds' suspend rulings, yet translations of none of them.
UNRELATED = [
    (
        "de",
        (
            "Für jede getappte bleibende Karte außer Ländern, die ein Gegner deiner Wahl "
            "kontrolliert, durchsuche die Bibliothek dieses Spielers nach einer Karte mit "
            "demselben Namen wie diese bleibende Karte und bringe sie unter deiner Kontrolle ins "
            "Spiel. Dieser Spieler mischt dann seine Bibliothek. Aussetzen 3 {1}{U}{U}"
        ),
    ),
    (
        "ko",
        (
            "유예 3—{R}{R} 당신이 소유한 모든 지속물을 당신의 서고에 섞어넣은 후, 그만큼 "
            "당신의 서고 맨 위 카드를 공개한다. 이런 식으로 공개된 마법진이 아닌 모든 지속물 "
            "카드를 전장에 놓고, 마법진 카드들에 대해 똑같이 한 후, 나머지를 무작위 순서로 "
            "당신의 서고 맨 밑에 놓는다."
        ),
    ),
    (
        "ko",
        (
            "{T}: 원하는 색의 마나 한 개를 추가한다. 유예 2—{G} (이 카드를 당신의 손에서 "
            "발동하는 대신, {G}를 지불하여 이 카드에 시간 카운터 두 개를 올려놓고 추방할 수 "
            "있다. 당신의 유지단 시작에, 시간 카운터 한 개를 제거한다. 마지막 카운터가 제거됐을 "
            "때, 마나 비용을 지불하지 않고 이 카드를 발동한다. 이 카드는 신속을 가진다.)"
        ),
    ),
    ("ko", "비행, 경계"),
]


@pytest.fixture(scope="module")
def seed_rulings(tmp_path_factory: pytest.TempPathFactory) -> pa.Table:
    """The rulings table of the shipped seeds, ingested by the pipeline."""
    out = tmp_path_factory.mktemp("translate") / "normalized"
    ingest([RAW], out=out, workers=1)
    return pq.read_table(out / "rulings")


def _texts(rulings: pa.Table) -> dict[str, str]:
    """Each text_hash of a rulings table and its text."""
    return {
        row["text_hash"]: row["text"] for row in rulings.select(["text_hash", "text"]).to_pylist()
    }


def test_seed_translations_link_to_their_english_rulings(seed_rulings: pa.Table) -> None:
    """Each of the six seed translations links to the English ruling it translates."""
    texts = _texts(seed_rulings)
    rows = translations_table(seed_rulings).to_pylist()
    assert len(rows) == len(SEED_LINKS)
    for opening, originals in SEED_LINKS:
        (row,) = [r for r in rows if texts[r["text_hash"]].startswith(opening)]
        assert row["original_text_hash"] is not None, opening
        assert texts[row["original_text_hash"]].startswith(originals), opening
        assert row["method"] == "dataset"  # none is among its own card's English rulings
        assert row["original_current"] is True
        assert 0 < row["score"] <= 1
        assert row["margin"] > 0


@pytest.mark.parametrize(
    ("lang", "text"), UNRELATED, ids=["de-card", "ko-card", "ko-suspend", "ko-short"]
)
def test_unrelated_texts_do_not_link(seed_rulings: pa.Table, lang: str, text: str) -> None:
    """A translation of none of the candidates links to none of them."""
    english = [row for row in seed_rulings.to_pylist() if row["lang"] == "en"]
    index = EnglishIndex({row["text_hash"]: row["text"] for row in english})
    result = link(text, lang, (), index)
    assert result.original is None
    assert result.method == "unsure"


KOREAN_TARGETS = (
    "주문이 목표를 요구한다면, 그 목표들은 그 주문이 추방될 때가 아니라 "
    "최종적으로 발동될 때 선택된다."
)
OTHER_RULINGS = [
    "Cards exiled with suspend are exiled face up.",
    (
        "Exiling a card with suspend isn't casting that card. This action doesn't use the "
        "stack and can't be responded to."
    ),
    (
        "The mana value of a spell cast without paying its mana cost is determined by its mana "
        "cost, even though that cost wasn't paid."
    ),
]


def _rulings(
    rows: list[tuple[str | None, str, str, bool]], dates: dict[str, dt.date] | None = None
) -> pa.Table:
    """A rulings table of (card, lang, text, current) rows, dated by text from DATES, run 1."""
    dates = dates or {}
    return pa.table(
        {
            "text_hash": [text_hash(text) for _, _, text, _ in rows],
            "card": [card for card, _, _, _ in rows],
            "lang": [lang for _, lang, _, _ in rows],
            "text": [text for _, _, text, _ in rows],
            "current": [current for *_, current in rows],
            "effective_date": pa.array([dates.get(text) for _, _, text, _ in rows], pa.date32()),
            "first_run": [1] * len(rows),
        }
    )


def _stale_case() -> list[tuple[str | None, str, str, bool]]:
    """Rift Bolt's Korean ruling, its English original amended since, other rulings around."""
    return [
        ("Rift Bolt", "en", SPELL_TARGETS.format("the card is exiled"), False),
        ("Rift Bolt", "en", SPELL_TARGETS.format("it's exiled"), True),
        ("Rift Bolt", "ko", KOREAN_TARGETS, True),
        ("Lotus Bloom", "en", SPELL_TARGETS.format("the card is exiled"), True),
        *[("Lotus Bloom", "en", text, True) for text in OTHER_RULINGS],
    ]


def test_a_version_the_card_holds_is_preferred_and_its_currency_is_the_cards() -> None:
    """Of two wordings, the card's own is the original, current or not as the card has it."""
    table = translations_table(_rulings(_stale_case()))
    (row,) = table.to_pylist()
    assert row["card"] == "Rift Bolt"
    assert row["original_text_hash"] in {
        text_hash(SPELL_TARGETS.format("the card is exiled")),
        text_hash(SPELL_TARGETS.format("it's exiled")),
    }
    assert row["method"] == "card"
    expected = row["original_text_hash"] == text_hash(SPELL_TARGETS.format("it's exiled"))
    assert row["original_current"] is expected


def test_an_amended_original_makes_the_translation_stale() -> None:
    """When the card's English original is no longer current, original_current is false."""
    rows = [r for r in _stale_case() if r[0] != "Rift Bolt" or r[1] == "ko"]
    rows.append(("Rift Bolt", "en", SPELL_TARGETS.format("the card is exiled"), False))
    rows.append(("Rift Bolt", "en", "Rift Bolt's suspend cost is {R}.", True))
    (row,) = translations_table(_rulings(rows)).to_pylist()
    assert row["original_text_hash"] == text_hash(SPELL_TARGETS.format("the card is exiled"))
    assert row["method"] == "card"
    assert row["original_current"] is False


def test_an_original_found_elsewhere_is_current_if_current_anywhere() -> None:
    """An original from another card is current when some card holds it current."""
    rows = [r for r in _stale_case() if r[0] != "Rift Bolt" or r[1] == "ko"]
    rows.append(("Rift Bolt", "en", "Rift Bolt's suspend cost is {R}.", True))
    (row,) = translations_table(_rulings(rows)).to_pylist()
    assert row["original_text_hash"] == text_hash(SPELL_TARGETS.format("the card is exiled"))
    assert row["method"] == "dataset"
    assert row["original_current"] is True


def test_a_translation_of_no_card_scores_its_shortlist_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rulings of no known card are no card's own: the shortlist alone is re-scored.

    Scoring every card-less English ruling for each card-less translation made a daily run
    that read one rules excerpt re-link them all, each against them all: 35 s for 1,000
    rulings on a 150,000-ruling dataset.
    """
    rows: list[tuple[str | None, str, str, bool]] = [
        (None, "en", f"Rule 702.{n}a: the ability number {n} works.", True) for n in range(60)
    ]
    rows.append((None, "en", SPELL_TARGETS.format("it's exiled"), True))
    rows.append((None, "ko", KOREAN_TARGETS, True))
    scored: list[int] = []
    coverage_many = EnglishIndex.coverage_many

    def counted(self: EnglishIndex, queries: Queries, pair_query: Any, pair_doc: Any) -> Any:
        scored.extend(pair_doc.tolist())
        return coverage_many(self, queries, pair_query, pair_doc)

    monkeypatch.setattr(EnglishIndex, "coverage_many", counted)
    (row,) = translations_table(_rulings(rows)).to_pylist()
    assert row["original_text_hash"] == text_hash(SPELL_TARGETS.format("it's exiled"))
    assert row["method"] == "dataset"
    assert row["original_current"] is True
    assert 0 < len(scored) <= link_module.SHORTLIST  # not the 61 English rulings of no card


def test_a_card_without_english_rulings_is_not_ranked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A known card with no English ruling holds no original: its translation costs nothing.

    Its original is on another card all the same; the card's first English ruling re-links
    it (update_translations).
    """
    rows = [r for r in _stale_case() if r[0] != "Rift Bolt" or r[1] == "ko"]

    def refused(texts: Sequence[object], *_: object) -> list[object]:
        assert not texts, "a translation of a card without English rulings was linked"
        return []

    # Every text asked is linked through _link_step (sure on its card or ranked among all).
    monkeypatch.setattr(link_module, "_link_step", refused)
    (row,) = translations_table(_rulings(rows)).to_pylist()
    assert row["original_text_hash"] is None
    assert row["method"] == "no-candidates"


# Card texts and translations of them (the German "Ein Spieler…" covers its original less).
_CARD_TEXTS = {
    "Murder Hole": "Destroy target creature. It can't be regenerated.",
    "Deep Study": "Draw two cards.",
    "Mind Rot Jr.": "Target player discards a card.",
    "Healer": "When this creature enters, you gain 3 life.",
}
_CARD_TRANSLATIONS = [
    ("Murder Hole", "de", "Zerstöre eine Kreatur deiner Wahl. Sie kann nicht regeneriert werden."),
    ("Deep Study", "fr", "Piochez deux cartes."),
    ("Mind Rot Jr.", "de", "Ein Spieler deiner Wahl wirft eine Karte ab."),
    ("Healer", "es", "Cuando esta criatura entre, ganas 3 vidas."),
]


def test_a_translation_sure_on_its_card_s_own_text_is_not_ranked_among_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A translation its card's own text makes sure is linked without ranking it among all.

    The card rule links it to the card's text at SURE_SCORE or more among the card's texts
    alone; ranked among every English text, it links to the same text at the same score.
    """
    rows: list[tuple[str | None, str, str, bool]] = [
        (card, "en", text, True) for card, text in _CARD_TEXTS.items()
    ]
    rows += [(card, lang, text, True) for card, lang, text in _CARD_TRANSLATIONS]
    ranked: list[str] = []
    rankings = link_module._ranked_links

    def spy(step: Any, rows: Any, **options: Any) -> None:
        ranked.extend(step.batch.texts[n] for n in rows.tolist())
        rankings(step, rows, **options)

    monkeypatch.setattr(link_module, "_ranked_links", spy)
    sure = translations_table(_rulings(rows)).to_pylist()
    assert ranked == ["Ein Spieler deiner Wahl wirft eine Karte ab."]
    ranked.clear()
    monkeypatch.setattr(link_module, "SURE_SCORE", 2.0)  # none is sure: every text is ranked
    every = translations_table(_rulings(rows)).to_pylist()
    assert len(ranked) == len(_CARD_TRANSLATIONS)
    for mine, theirs in zip(sure, every, strict=True):
        assert mine["original_text_hash"] == text_hash(_CARD_TEXTS[mine["card"]])
        assert (mine["original_text_hash"], mine["method"]) == (
            theirs["original_text_hash"],
            theirs["method"],
        )
        assert mine["score"] == theirs["score"]


def test_batches_hold_no_more_cells_than_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of translations times the index's texts, or its terms, stays under the cap.

    A few long English texts hold many terms: the batch is bounded by those too.
    """
    long_text = " ".join(f"word{n:04d}" for n in range(3000)).replace("0", "o")
    index = EnglishIndex(
        {text_hash(long_text): long_text, text_hash("Draw a card."): "Draw a card."}
    )
    monkeypatch.setattr(link_module, "_BATCH_CELLS", 1 << 16)
    steps = link_module._steps(10_000, index)
    assert steps[0][0] == 0
    assert steps[-1][1] == 10_000
    assert all(end == start for (_, end), (start, _) in itertools.pairwise(steps))
    widest = max(end - start for start, end in steps)
    assert widest * max(len(index), len(index.vocabulary)) <= 1 << 16
    assert len(index.vocabulary) > len(index)


def test_batched_scoring_equals_one_by_one(
    seed_rulings: pa.Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rank_batch() ranks as rank() alone; coverage_many() scores as coverage() defines it."""
    english = [row for row in seed_rulings.to_pylist() if row["lang"] == "en"]
    index = EnglishIndex({row["text_hash"]: row["text"] for row in english})
    lexicon = shipped()
    foreign = [(r["text"], r["lang"]) for r in seed_rulings.to_pylist() if r["lang"] != "en"]
    texts = [(text, lang, (0, 3)) for text, lang in [*foreign, *UNRELATED, ("Ok.", "nl")]]
    alone = [link_module.rank(t, lang, index, lexicon, own) for t, lang, own in texts]
    # A fresh index, the texts two at a time: its lexicon entries are made batch by batch.
    fresh = EnglishIndex({row["text_hash"]: row["text"] for row in english})
    monkeypatch.setattr(link_module, "_BATCH_CELLS", 2 * len(fresh))
    assert link_module.rank_batch(texts, fresh, lexicon) == alone
    assert all(len(ranking.ranked) == link_module.SHORTLIST for ranking in alone[: len(foreign)])
    one_by_one = [index.weigh(foreign_terms(t, lang, lexicon)) for t, lang in foreign]
    pairs = [(q, doc) for q in range(len(foreign)) for doc in range(len(index))]
    scores = index.coverage_many(
        index.queries(foreign, lexicon),
        np.asarray([q for q, _ in pairs]),
        np.asarray([d for _, d in pairs]),
    )
    expected = [index.coverage(doc, one_by_one[q]) for q, doc in pairs]
    # The same terms and credits; the sums may add in another order.
    assert scores.tolist() == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert max(scores) > 0.45
    assert sum(score > 0 for score in expected) > len(pairs) / 4


def test_queries_follow_the_lexicon_asked_and_sorted_features() -> None:
    """A second lexicon for a language is read as itself; items are in sorted order.

    An index's entries were kept by language alone: a query through another lexicon of the
    same language reached what the first lexicon said.
    """
    index = EnglishIndex({"a": "Exile target card.", "b": "Draw a card."})
    first: Lexicon = {"de": {"karte": (("card", 1.0),), "ziel": (("targe", 1.0),)}}
    second: Lexicon = {"de": {"karte": (("draw", 0.5),), "ziel": (("targe", 1.0),)}}

    def reached(lexicon: Lexicon) -> list[str]:
        queries = index.queries([("Ziel Karte Karte §", "de")], lexicon)
        return [index.names[term] for term in queries.option_term.tolist()]

    assert reached(first) == ["card", "targe"]  # karte before ziel
    assert reached(second) == ["draw", "targe"]
    assert reached(first) == ["card", "targe"]
    # Each feature counts as often as the text holds it: "karte" twice.
    bags = index.queries([("Karte Karte Ziel", "de")], first).bags.toarray()[0]
    card, target = bags[index.vocabulary["card"]], bags[index.vocabulary["targe"]]
    assert card / target == pytest.approx(2 * index.idf["card"] / index.idf["targe"])


_REQUIRED = """
import json, sys
from pipeline.folding.translate import EnglishIndex
texts = json.loads(sys.argv[1])
print(json.dumps(EnglishIndex({str(n): t for n, t in enumerate(texts)}).arrays().required.tolist()))
"""


@pytest.mark.slow
def test_scores_do_not_depend_on_the_hash_seed(seed_rulings: pa.Table) -> None:
    """Two processes with other hash seeds weigh every English text alike, to the last bit.

    A sum over a set of strings had the order of the process's hash seed: near-ties went
    one way or the other from run to run.
    """
    texts = [r["text"] for r in seed_rulings.to_pylist() if r["lang"] == "en"]
    found = {
        subprocess.run(
            [sys.executable, "-c", _REQUIRED, json.dumps(texts)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(found) == 1


def test_table_rows_do_not_depend_on_input_order() -> None:
    """Shuffled rulings give the same table, rows sorted by card, lang, text_hash."""
    rows = [*_stale_case(), ("Lotus Bloom", "ko", KOREAN_TARGETS, True), (None, "ko", "비행", True)]
    expected = translations_table(_rulings(rows))
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    assert translations_table(_rulings(shuffled)).equals(expected)
    assert expected["card"].to_pylist() == ["Lotus Bloom", "Rift Bolt", None]


def test_languages_without_a_lexicon_and_undetermined_texts() -> None:
    """A language with no lexicon gets a row without a link; "und" and English get none."""
    rows = [
        *_stale_case(),
        ("Rift Bolt", "nl", "Als de spreuk doelen vereist, worden die gekozen.", True),
        ("Rift Bolt", "und", "Ok.", True),
    ]
    table = translations_table(_rulings(rows))
    assert table["lang"].to_pylist() == ["ko", "nl"]
    nl = table.to_pylist()[1]
    assert nl["original_text_hash"] is None
    assert nl["original_current"] is None
    assert nl["method"] == "no-lexicon"


def test_no_english_candidates_means_no_link() -> None:
    """A translation in a dataset without English rulings is kept, unlinked."""
    (row,) = translations_table(_rulings([("Rift Bolt", "ko", KOREAN_TARGETS, True)])).to_pylist()
    assert row["original_text_hash"] is None
    assert row["method"] == "no-candidates"


def test_korean_particles_and_full_width_digits_give_shared_features() -> None:
    """유예를 and 유예의 share a feature; full-width and ASCII 2 are one anchor; names too."""
    first, _ = features("유예를 가진 카드", "ko")
    second, _ = features("유예의 첫 번째", "ko")
    assert set(first) & set(second) == {"유예"}
    _, wide = features("カード２枚", "ja")
    _, narrow = features("two 2", "en")
    assert ANCHOR + "#2" in set(wide) & set(narrow)
    _, names = features("(Meddling Mage의 능력처럼)", "ko")
    assert {ANCHOR + "@meddling", ANCHOR + "@mage"} <= set(names)


def test_model1_learns_word_translations_from_parallel_lines() -> None:
    """On a toy corpus, each German word's best English word is its translation."""
    aligned = [
        ("the dog sleeps", "der hund schläft"),
        ("the cat sleeps", "die katze schläft"),
        ("a dog barks", "ein hund bellt"),
        ("a cat eats", "eine katze frisst"),
        ("the dog eats", "der hund frisst"),
        ("the cat barks", "die katze bellt"),
    ]
    table = learn_model1(aligned, "de")
    assert table["hund"][0][0] == "dog"
    assert table["katze"][0][0] == "cat"
    assert table["bellt"][0][0] == "barks"


def test_lexicon_file_round_trips_and_is_deterministic() -> None:
    """dumps() gives the same bytes every time, and loads() reads back what was dumped."""
    lexicon: Lexicon = {"de": {"hund": (("dog", 0.9), ("the", 0.1))}}
    assert dumps(lexicon) == dumps(lexicon)
    assert loads(dumps(lexicon), "x") == lexicon


def test_a_damaged_lexicon_file_is_named() -> None:
    """A lexicon file that is not gzip'd JSON of the format raises StoreError naming it."""
    with pytest.raises(StoreError, match=r"^lex\.gz: not a lexicon file"):
        loads(b"not gzip", "lex.gz")


def test_shipped_lexicon_covers_every_language() -> None:
    """The packaged lexicon holds the nine languages of MTGJSON's printed translations."""
    assert sorted(shipped()) == ["de", "es", "fr", "it", "ja", "ko", "pt", "ru", "zh"]


def test_a_loaded_lexicon_holds_each_english_feature_and_weight_once() -> None:
    """The languages' options share their English features and weights, one object each."""
    options = [o for table in shipped().values() for found in table.values() for o in found]
    features, weights = [e for e, _ in options], [w for _, w in options]
    assert len(options) > 10 * len(set(features))
    assert len({id(e) for e in features}) == len(set(features))
    assert len({id(w) for w in weights}) == len(set(weights))


@pytest.mark.skipif(not (REALDATA / "mtgjson-2022").is_dir(), reason="no ../shared/realdata")
def test_held_out_card_texts_link_to_their_english_text() -> None:
    """Korean card texts of a held-out set: at least 90% linked, no more than 1% wrong."""
    assert "NEO" in TEST_SETS
    pairs = [p for p in read_pairs([REALDATA / "mtgjson-2022" / "NEO.json"]) if p.lang == "ko"]
    index = EnglishIndex({text_hash(p.english): p.english for p in pairs})
    results = [(link(p.foreign, "ko", (), index), text_hash(p.english)) for p in pairs]
    linked = [(r.original, right) for r, right in results if r.original is not None]
    wrong = [pair for pair in linked if pair[0] != pair[1]]
    assert len(linked) >= 0.9 * len(pairs)
    assert len(wrong) <= 0.01 * len(linked)


@pytest.mark.skipif(not (REALDATA / "mtgjson-2022").is_dir(), reason="no ../shared/realdata")
def test_texts_ranked_in_forked_workers_give_the_same_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Real NEO card texts in every language: linked on two processes as on one."""
    pairs = read_pairs([REALDATA / "mtgjson-2022" / "NEO.json"])[:600]
    rows: list[tuple[str | None, str, str, bool]]
    rows = [(text_hash(p.english)[:8], "en", p.english, True) for p in pairs]
    rows += [(text_hash(p.english)[:8], p.lang, p.foreign, True) for p in pairs]
    rulings = _rulings(rows)
    alone = translations_table(rulings)
    monkeypatch.setattr(link_module, "PARALLEL_MIN", 0)
    monkeypatch.setattr(link_module, "_CHUNK", 50)
    pooled = translations_table(rulings, workers=2)
    assert pooled.num_rows > 300
    assert pooled.equals(alone)
    assert link_module._SHARED is None  # the workers' index is let go


@pytest.mark.parametrize(
    ("translated", "expected", "stale"),
    [
        (dt.date(2013, 6, 7), "the card is exiled", "stale"),
        (dt.date(2024, 3, 1), "it's exiled", "current"),
    ],
    ids=["before-rewording", "after-rewording"],
)
def test_the_version_a_translation_was_made_from_decides_staleness(
    translated: dt.date, expected: str, stale: str
) -> None:
    """Of two wordings, the latest not dated after the translation is its original."""
    old, new = SPELL_TARGETS.format("the card is exiled"), SPELL_TARGETS.format("it's exiled")
    rows: list[tuple[str | None, str, str, bool]] = [
        ("Rift Bolt", "en", old, False),
        ("Rift Bolt", "en", new, True),
        ("Rift Bolt", "ko", KOREAN_TARGETS, True),
        *[("Lotus Bloom", "en", text, True) for text in OTHER_RULINGS],
    ]
    dates = {old: dt.date(2010, 1, 1), new: dt.date(2024, 2, 2), KOREAN_TARGETS: translated}
    (row,) = translations_table(_rulings(rows, dates)).to_pylist()
    assert row["original_text_hash"] == text_hash(SPELL_TARGETS.format(expected))
    assert row["original_current"] is (stale == "current")
    assert row["method"] == "card"


@pytest.mark.parametrize(
    ("translation", "right", "alike"),
    [
        # The words tell them apart: "with flying" is not in the translation.
        ("消滅目標生物。", "Destroy target creature.", "Destroy target creature with flying."),
        # The marks tell them apart: the translation prints +2/+2.
        (
            "目標生物得+2/+2直到回合結束。",
            "Target creature gets +2/+2 until end of turn.",
            "Target creature gets +1/+1 until end of turn.",
        ),
    ],
    ids=["words", "marks"],
)
def test_a_version_the_translation_tells_apart_is_not_chosen_by_date(
    translation: str, right: str, alike: str
) -> None:
    """Real MTGJSON texts: two English texts alike enough to be versions of one ruling.

    The dates would choose the other (the latest not dated after the translation); the
    translation's words or numbers say which it is, and that one is its original.
    """
    rows: list[tuple[str | None, str, str, bool]] = [
        ("Murder", "en", right, True),
        ("Plummet", "en", alike, True),
        (None, "zh", translation, True),
        *[("Lotus Bloom", "en", text, True) for text in OTHER_RULINGS],
    ]
    dates = {right: dt.date(2019, 1, 1), alike: dt.date(2021, 1, 1)}
    dates[translation] = dt.date(2022, 1, 1)
    (row,) = translations_table(_rulings(rows, dates)).to_pylist()
    assert row["original_text_hash"] == text_hash(right)
    assert row["method"] == "dataset"


_KOREAN = (  # seed 001's, which translates the 2013 wording
    "주문이 목표를 요구한다면, 그 목표들은 그 주문이 추방될 때가 아니라 "
    "최종적으로 발동될 때 선택된다."
)
_TARGETS_2013 = (
    "If the spell requires any targets, those targets are chosen when the spell is finally "
    "cast, not when the card is exiled."
)
_TARGETS_2024 = (
    "If the spell requires any targets, those targets are chosen when the spell is finally "
    "cast, not when it's exiled."
)


def test_an_amended_original_makes_its_translation_stale(tmp_path: Path) -> None:
    """English amended in a later run: its Korean translation, not read again, is stale."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    english = raw / "rift-bolt-en.txt"
    english.write_text(f"Rift Bolt\n\n2013-06-07\n\n{_TARGETS_2013}\n", encoding="utf-8")
    korean = f"Rift Bolt\n\n2013-06-07\n\n{_KOREAN}\n"
    (raw / "rift-bolt-ko.txt").write_text(korean, encoding="utf-8")
    ingest([raw], out=out)
    [before] = open_dataset(out).translations(card="Rift Bolt").to_dict("records")
    assert before["lang"] == "ko"
    assert before["original_current"]
    english.write_text(f"Rift Bolt\n\n2024-02-02\n\n{_TARGETS_2024}\n", encoding="utf-8")
    ingest([raw], out=out)
    dataset = open_dataset(out)
    [after] = dataset.translations(card="Rift Bolt").to_dict("records")
    assert after["original_text_hash"] == before["original_text_hash"]
    assert not after["original_current"]
    assert len(dataset.translations(stale_only=True)) == 1
    changelog = render_markdown(load_changeset(out))
    assert "## Translations now out of date" in changelog
    assert f"- ko, Rift Bolt: {_KOREAN}" in changelog
    assert f"Now: {_TARGETS_2024}" in changelog
    history = dataset.history("Rift Bolt").to_dict("records")
    [line] = [h for h in history if h["translates"]]
    assert line["translates"] == _TARGETS_2013
    assert line["translates_fate"].startswith("amended (")


_SUSPEND_KO = "유예를 가진 카드를 추방하는 것은"
_TSP = REALDATA / "mtgjson-2022" / "TSP.json"


@pytest.mark.skipif(not _TSP.is_file(), reason="../shared/realdata is not beside this checkout")
def test_a_link_stays_when_a_later_run_adds_more_english(tmp_path: Path) -> None:
    """Seed 001's Korean suspend ruling stays linked after a run adds the TSP set file.

    The set file holds its English original among hundreds of other rulings: more English
    text read may sharpen a link, never undo it.
    """
    out = tmp_path / "normalized"
    ingest([RAW], out=out, workers=1)

    def suspend_link() -> dict[Any, Any]:
        dataset = open_dataset(out)
        texts = _texts(pq.read_table(out / "rulings"))
        rows = dataset.translations(card="Rift Bolt").to_dict("records")
        (row,) = [r for r in rows if texts[r["text_hash"]].startswith(_SUSPEND_KO)]
        assert row["original_text_hash"] is not None
        assert texts[row["original_text_hash"]].startswith("Exiling a card with suspend")
        return row

    before = suspend_link()
    (tmp_path / "tsp").mkdir()
    (tmp_path / "tsp" / "TSP.json").write_bytes(_TSP.read_bytes())
    ingest([tmp_path / "tsp"], out=out, workers=1)
    after = suspend_link()
    assert after["original_text_hash"] == before["original_text_hash"]
    assert after["method"] == "card"  # TSP gave Rift Bolt its English rulings
    history = open_dataset(out).history("Rift Bolt").to_dict("records")
    assert any(str(h["translates"]).startswith("Exiling a card with suspend") for h in history)


def test_the_shape_of_a_text_counts_sentences_not_pauses() -> None:
    """Full stops end sentences in any script; ". . ." does not; length is in English."""
    english = shape("You won't gain life. You'll still search . . . for glory.", "en")
    japanese = shape("表面には三角形が1つある。裏面には三角形が2つある。", "ja")
    assert english[0] == japanese[0] == 2
    assert shape_similarity(english, english) == 1.0
    assert shape_similarity(english, shape("Eine Zeile.", "de")) < 0.5


_HAND = FIXTURES / "language" / "hand-translations.jsonl"
_KHM = REALDATA / "mtgjson-2022" / "KHM.json"


def _hand_pool() -> tuple[list[dict[str, str]], EnglishIndex, dict[str, set[str]]]:
    """The hand translations, and the English rulings of the set files they name, by card."""
    items = [json.loads(line) for line in _HAND.read_text(encoding="utf-8").splitlines()]
    own: dict[str, set[str]] = {}
    pool: dict[str, str] = {}
    for code in sorted({item["set"] for item in items}):
        path = REALDATA / "mtgjson-2022" / f"{code}.json"
        for card in json.loads(path.read_text(encoding="utf-8"))["data"]["cards"]:
            for ruling in card.get("rulings", ()):
                pool[text_hash(ruling["text"])] = ruling["text"]
                own.setdefault(card["name"], set()).add(text_hash(ruling["text"]))
    return items, EnglishIndex(pool), own


def _absent_pool() -> tuple[list[dict[str, str]], EnglishIndex, dict[str, set[str]]]:
    """_hand_pool() without the originals: the pool, and each card's rulings, lack them."""
    items, index, own = _hand_pool()
    originals = {text_hash(item["english"]) for item in items}
    absent = EnglishIndex(
        {h: index.texts[i] for h, i in index.position.items() if h not in originals}
    )
    return items, absent, {card: hashes - originals for card, hashes in own.items()}


@pytest.mark.skipif(not _KHM.is_file(), reason="../shared/realdata is not beside this checkout")
def test_hand_translated_rulings_link_right_or_not_at_all() -> None:
    """Hand translations of real rulings, among their sets' rulings: none links wrong.

    A link to another wording of the original that the card holds is a version (the dates
    decide between them in the table), not a wrong link.
    """
    items, index, own = _hand_pool()
    assert {item["lang"] for item in items} == {"de", "es", "fr", "it", "ja", "ko"}
    assert len(items) >= 100
    assert len({item["english"] for item in items}) >= 25
    results = [link(i["text"], i["lang"], own[i["card"]], index) for i in items]
    right = [r.original == text_hash(i["english"]) for i, r in zip(items, results, strict=True)]
    wrong = [
        (item["english"], result.original)
        for item, result, ok in zip(items, results, right, strict=True)
        if result.original and not ok and text_hash(item["english"]) not in result.versions
    ]
    assert not wrong
    assert sum(right) >= 0.85 * len(items)


@pytest.mark.slow
@pytest.mark.skipif(not _KHM.is_file(), reason="../shared/realdata is not beside this checkout")
def test_the_rule_within_a_card_links_what_the_score_alone_leaves_unsure() -> None:
    """A card's own ruling that leads its others by form and marks links below MIN_SCORE.

    Without the translation's text (its marks), decide() keeps the rule for any winner;
    with it, more of the hand translations link, all of them right.
    """
    items, index, own = _hand_pool()
    lexicon = shipped()
    before = after = 0
    for item in items:
        mine = sorted(index.position[h] for h in own[item["card"]])
        ranking = rank(item["text"], item["lang"], index, lexicon, mine)
        right = text_hash(item["english"])
        plain = decide(ranking, index, own[item["card"]])
        marked = decide(ranking, index, own[item["card"]], text=item["text"])
        assert marked.original in {None, right} or right in marked.versions
        before += plain.original == right
        after += marked.original == right
        if plain.original == right:  # the rule within a card undoes no right link
            assert marked.original == right
        if marked.original == right and plain.original is None:
            assert marked.method == "card"
    assert after > before


@pytest.mark.skipif(not _KHM.is_file(), reason="../shared/realdata is not beside this checkout")
def test_a_card_s_other_ruling_does_not_link_when_the_original_is_absent() -> None:
    """With its original removed, a translation links to none of the card's other rulings.

    The card's rulings that the rule within a card would link (close in words, with the
    original gone) differ in form or marks: "search . . . for glory" has a pause that
    "You'll still perform the search" lacks.
    """
    items, absent, own = _absent_pool()
    false = []
    for item in items:
        result = link(item["text"], item["lang"], own[item["card"]], absent)
        if result.method == "card":
            false.append((item["english"], absent.texts[absent.position[str(result.original)]]))
    # A newer wording of an absent original is a version of it, not a false link.
    false = [(a, b) for a, b in false if fuzz.ratio(fold(a), fold(b)) < VERSION_SIMILARITY]
    assert not false


@pytest.mark.slow
@pytest.mark.skipif(not _KHM.is_file(), reason="../shared/realdata is not beside this checkout")
def test_another_card_s_ruling_without_the_name_the_translation_prints_is_no_link() -> None:
    """A translation printing its card's name ("… copiez Dead …") is not "… copy Boom …".

    With the original absent, the card's name tells apart what the words do not: such
    translations linked to that ruling worded for another card, and no longer do. The rule
    only takes links away, and none of another card's ruling that prints the name.
    """
    items, absent, own = _absent_pool()
    dropped = []
    for item in items:
        mine = own[item["card"]]
        anonymous = link(item["text"], item["lang"], mine, absent)
        named = link(item["text"], item["lang"], mine, absent, card=item["card"])
        assert named.original in {None, anonymous.original}
        if anonymous.method == "dataset" and named.original is None:
            dropped.append((item["card"], absent.texts[absent.position[str(anonymous.original)]]))
        names = printed_names(traits(item["text"], item["lang"]).anchors, item["card"])
        if named.method == "dataset":
            assert prints_names(absent.folded(absent.position[str(named.original)]), names)
    assert any(card == "Dead // Gone" and "Boom" in text for card, text in dropped)


def test_the_card_names_a_translation_prints() -> None:
    """Its Latin anchors that are words of its card's name (three letters or more)."""
    found = traits("Si vous copiez Dead, la copie est aussi Dead, et non Gone.", "fr").anchors
    assert printed_names(found, "Dead // Gone") == {"dead", "gone"}
    assert printed_names(found, None) == frozenset()
    korean = traits("Thalia의 능력은 모든 주문에 영향을 준다.", "ko").anchors
    assert printed_names(korean, "Thalia, Guardian of Thraben") == {"thalia"}
    assert prints_names("Thalia's ability affects each spell.", frozenset({"thalia"}))
    assert not prints_names("If you copy Boom, the copy is also Boom.", frozenset({"dead"}))
    assert prints_names("Any text.", frozenset())


def test_marks_are_what_a_translator_prints_as_it_is() -> None:
    """Symbols, numbers, brackets and pauses; a number may be a word in English."""
    english = marks("Pay {S}. You'll still search . . . for glory (1) (2).")
    # Full-width brackets and digits are plain after NFKC; an ellipsis is a pause.
    japanese = "{S}を支払う。それでも\uff08\uff11\uff09\uff08\uff12\uff09\u2026栄光を探す。"
    assert english == marks(japanese)
    assert mark_similarity(english, english) == 1.0
    assert mark_similarity(marks("Du erhältst 4 Leben."), marks("You won't gain any life.")) == 1.0
    assert mark_similarity(marks("Du erhältst kein Leben."), marks("You won't gain 4 life.")) < 1
    assert mark_similarity(marks("Eine Zeile (mit Klammer)."), marks("A line.")) < 1


def test_traits_are_the_features_shape_and_marks_of_a_text() -> None:
    """traits() takes in one pass what features(), shape() and marks() take each.

    Pauses next to numbers (". . .3" is no decimal point), symbols, full-width digits,
    brackets and names, in a Latin, a Korean and a Japanese text.
    """
    texts = [
        ("Zahle {2}{W}. Suche . . .3 Karten (oder 702.62a) für Serra Angel . . . ", "de"),
        ("{T}: 카드 2장을 뽑는다... (Meddling Mage처럼)", "ko"),
        ("カード\uff12枚を引く。{G}{G}\u3002それから. . . 1体", "ja"),
        ("Kein Zeichen hier.", "fr"),
    ]
    for text, lang in texts:
        found = traits(text, lang)
        assert (found.words, found.anchors) == features(text, lang)
        assert found.shape == shape(text, lang)
        assert found.marks == marks(text)
    # The number after a pause is a mark, though no anchor (it touches a full stop).
    after_pause = traits(texts[0][0], "de")
    assert "#3" in after_pause.marks
    assert ANCHOR + "#3" not in after_pause.anchors


@pytest.mark.skipif(not _KHM.is_file(), reason="../shared/realdata is not beside this checkout")
def test_a_translation_of_an_older_wording_links_to_it_and_is_stale() -> None:
    """Marks tell wordings apart that the words cannot: "any life" is not "4 life".

    Invoke the Divine holds two wordings (2018, 2021); a translation of the 2018 one, dated
    after both, links to the 2018 wording (the dates alone would pick 2021's) and is stale.
    """
    lines = _HAND.read_text(encoding="utf-8").splitlines()
    items = [item for item in map(json.loads, lines) if item["card"] == "Invoke the Divine"]
    (card,) = (
        card
        for card in json.loads(_KHM.read_text(encoding="utf-8"))["data"]["cards"]
        if card["name"] == "Invoke the Divine"
    )
    wordings = {ruling["text"]: dt.date.fromisoformat(ruling["date"]) for ruling in card["rulings"]}
    (old,) = {item["english"] for item in items}
    (new,) = set(wordings) - {old}
    assert wordings[old] < wordings[new]
    rows: list[tuple[str | None, str, str, bool]] = [
        ("Invoke the Divine", "en", old, False),
        ("Invoke the Divine", "en", new, True),
        *[("Invoke the Divine", item["lang"], item["text"], True) for item in items],
    ]
    dates = {**wordings, **{item["text"]: dt.date(2022, 1, 1) for item in items}}
    table = translations_table(_rulings(rows, dates)).to_pylist()
    assert len(table) == len(items) == 4
    linked = [row for row in table if row["original_text_hash"] is not None]
    assert len(linked) >= 3
    assert {row["original_text_hash"] for row in linked} == {text_hash(old)}
    assert not any(row["original_current"] for row in linked)
