"""Card inference by evidence, against the real 2022 MTGJSON catalog of ../shared/realdata."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest
from conftest import FIXTURES, RAW, REALDATA, rows

import pipeline
from pipeline import ingest
from pipeline.folding.catalog import Catalog, load_catalog
from pipeline.folding.infer import NameIndex, infer, name_weight

if TYPE_CHECKING:
    from pathlib import Path

SETS = REALDATA / "mtgjson-2022"
# The real set files, The Tenth Doctor (seed 000's card, from a later set), and the names of
# the full catalog that are common words ("X", "Oracle", "Fire // Ice", "Island", "Recall").
CATALOGS = [
    *sorted(SETS.glob("*.json")),
    FIXTURES / "catalog" / "who-the-tenth-doctor.json",
    FIXTURES / "catalog" / "common-words.json",
]
pytestmark = pytest.mark.skipif(not SETS.is_dir(), reason="../shared/realdata is not beside here")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """Every real set file together with the two hand-made ones (loaded once: about 2 s)."""
    return load_catalog(CATALOGS)


def _ingest(
    tmp_path: Path, seed: str, catalog: Catalog | None
) -> tuple[list[dict[str, object]], tuple[str, ...]]:
    raw = tmp_path / "raw"
    raw.mkdir(exist_ok=True)
    shutil.copy(RAW / seed, raw)
    out = tmp_path / ("with" if catalog else "without")
    report = ingest([raw], out=out, catalog=catalog)
    return rows(out, "sightings"), report.warnings


def test_the_catalog_holds_the_common_words(catalog: Catalog) -> None:
    """The catalog has names that are also ordinary words, and thousands more."""
    assert len(catalog.oracle_of) > 5000
    for name in ("Consider", "Suspend", "Opt", "X", "Oracle", "Fire // Ice", "The Tenth Doctor"):
        assert name in catalog.oracle_of


def test_seed_000_infers_the_tenth_doctor(tmp_path: Path, catalog: Catalog) -> None:
    """Seed 000 without its manifest: The Tenth Doctor, inferred, its evidence in a warning."""
    rows, warnings = _ingest(tmp_path, "000_3c6244a5804b91f0.txt", catalog)
    assert {(r["card"], r["card_origin"], r["oracle_id"]) for r in rows} == {
        ("The Tenth Doctor", "inferred", "synthetic-oracle-the-tenth-doctor")
    }
    note = (
        "000_3c6244a5804b91f0.txt: card The Tenth Doctor inferred from its rulings (possessive: "
        '"Any land cards exiled with The Tenth Doctor\'s first ability will remain in exile.")'
    )
    assert warnings == (note,)


def test_seed_003_gets_no_card_and_the_candidates(tmp_path: Path, catalog: Catalog) -> None:
    """Seed 003 never names its card: no card, and the candidates with why none is evidence."""
    rows, warnings = _ingest(tmp_path, "003_4e428d287bba6602.txt", catalog)
    assert {r["card"] for r in rows} == {None}
    [inference] = [w for w in warnings if "inferred" in w]
    assert inference.startswith(
        "003_4e428d287bba6602.txt: no card inferred (no ruling refers to a catalog card as "
        'itself): Consider (sentence start: "Consider its card type, '
    )
    for candidate in (
        'Suspend (keyword or type: "Suspend is a keyword',
        'Thalia, Guardian of Thraben (in parentheses: "You are never forced',
        'X (variable: "If the card has in its mana cost, you must choose 0 as the value of X',
    ):
        assert candidate in inference


@pytest.mark.parametrize("seed", ["001_ca7dd0badab20c1e.txt", "002_389235662a8edeae.txt"])
def test_seeds_naming_their_card_are_unchanged(tmp_path: Path, catalog: Catalog, seed: str) -> None:
    """Seeds 001 and 002 keep their title's card: same rows as without a catalog, English name."""
    with_catalog, warnings = _ingest(tmp_path, seed, catalog)
    without, _ = _ingest(tmp_path, seed, None)
    assert [(r["text_hash"], r["card_printed"], r["card_origin"]) for r in with_catalog] == [
        (r["text_hash"], r["card_printed"], r["card_origin"]) for r in without
    ]
    assert {r["card_origin"] for r in with_catalog} == {"title"}
    assert {r["card"] for r in with_catalog} <= {"Rift Bolt", "Dichotomancy"}
    assert not [w for w in warnings if "inferred" in w]


@pytest.mark.parametrize(
    ("sentence", "found"),
    [
        ("Consider its card type and any effects.", ("Consider", "sentence start")),
        ("Suspend is a keyword that represents three abilities.", ("Suspend", "keyword or type")),
        ("You may pay its suspend cost.", None),
        ("You must choose 0 as the value of X.", ("X", "variable")),
        ("Those cards have updated Oracle card text.", ("Oracle", "game term")),
        ("Check the Oracle text of the card.", ("Oracle", "game term")),
        ("Opt is a fine first spell.", ("Opt", "sentence start")),
        ("You may opt to cast it.", None),
        ('Spells with "Fire" in their names are red.', ("Fire // Ice", "quoted")),
        ("Fire spreads quickly.", ("Fire // Ice", "sentence start")),
        ("Tap an untapped Island you control.", ("Island", "keyword or type")),
        ("Recall that damage wears off.", ("Recall", "sentence start")),
        ("Any instant (such as Opt) will do.", ("Opt", "in parentheses")),
        ("Cast an instant such as Opt or Fire.", ("Opt", "example")),
        ("For example, you may cast Consider.", ("Consider", "example")),
        ("You may cast a spell like Opt this way.", ("Opt", "example")),
        # Real rulings (THB, RNA) that name other cards or a game variant.
        (
            (
                "Abilities that trigger when a creature enters, such as that of Mentor of the "
                "Meek, see the token enter as a 0/0 creature."
            ),
            ("Mentor of the Meek", "example"),
        ),
        (
            (
                "In a Two-Headed Giant game, Klothys\u2019s last ability causes the opposing "
                "team to lose 4 life."
            ),
            ("Two-Headed Giant", "game term"),
        ),
    ],
    ids=lambda v: v[:24] if isinstance(v, str) else None,
)
def test_common_words_are_no_evidence(
    catalog: Catalog, sentence: str, found: tuple[str, str] | None
) -> None:
    """Card names that are common words, used as such, are found but are no evidence."""
    mentions = catalog.index.mentions(sentence)
    assert [(m.card, m.kind) for m in mentions][:1] == ([found] if found else [])


@pytest.mark.parametrize(
    ("sentence", "found"),
    [
        ("Any land exiled with The Tenth Doctor's ability stays.", "possessive"),
        ("If Opt's controller draws, nothing else happens.", "possessive"),
        ("Any card exiled with Rift Bolt stays exiled.", "exiled with"),
        ("If Fire is countered, nothing happens.", "subject"),
        ("As Rift Bolt deals damage, count it.", "subject"),
        ("When The Tenth Doctor enters, you may time travel.", "subject"),
        ("Then you may cast Rift Bolt again.", "full name"),
        ("Then you may cast Opt again.", "mention"),
    ],
)
def test_self_references_are_evidence(catalog: Catalog, sentence: str, found: str) -> None:
    """Possessives, "exiled with", a name as subject, a full multi-word name."""
    [mention] = catalog.index.mentions(sentence)
    assert mention.kind == found
    assert mention.sentence == sentence


def test_a_document_of_common_words_gets_no_card(catalog: Catalog) -> None:
    """Every common-word name used as a word: candidates, but no card."""
    texts = {
        "a.txt": [
            "Consider its card type. Suspend is a keyword.",
            "Choose 0 as the value of X. Check the Oracle text.",
            "Opt is optional. Fire spreads. Recall that damage wears off.",
        ]
    }
    verdict = infer(texts, catalog.index)["a.txt"]
    assert verdict.card is None
    assert {c.card for c in verdict.candidates} == {
        "Consider", "Suspend", "X", "Oracle", "Opt", "Fire // Ice", "Recall",
    }  # fmt: skip
    assert all(not c.evidence for c in verdict.candidates)


def test_one_self_reference_among_common_words_is_chosen(catalog: Catalog) -> None:
    """One card referred to as itself beside common-word names used as words: that card."""
    texts = {"a.txt": ["Consider its card type.", "If Rift Bolt is countered, Opt is unaffected."]}
    verdict = infer(texts, catalog.index)["a.txt"]
    assert verdict.card == "Rift Bolt"
    assert [(m.kind, m.sentence) for m in verdict.candidates[0].evidence] == [
        ("subject", "If Rift Bolt is countered, Opt is unaffected.")
    ]


def test_two_cards_with_evidence_and_no_margin_are_not_guessed(catalog: Catalog) -> None:
    """Evidence for two cards of similar weight: no card, both named."""
    texts = {"a.txt": ["Rift Bolt deals 3 damage.", "The copy of Dichotomancy's ability resolves."]}
    verdict = infer(texts, catalog.index)["a.txt"]
    assert verdict.card is None
    assert [c.card for c in verdict.candidates] == ["Rift Bolt", "Dichotomancy"]


def test_a_clear_margin_is_chosen(catalog: Catalog) -> None:
    """Repeated evidence for one card outweighs a single weak one for another."""
    texts = {
        "a.txt": [
            "Rift Bolt deals 3 damage.",
            "Any card exiled with Rift Bolt stays.",
            "If Opt is countered, you draw nothing.",
        ]
    }
    assert infer(texts, catalog.index)["a.txt"].card == "Rift Bolt"


def test_longer_rarer_names_weigh_more(catalog: Catalog) -> None:
    """Three words over two over one; an ordinary word or keyword weighs half a rare word."""
    index = catalog.index

    def weight(card: str, words: int) -> float:
        return name_weight(card, words, index, set())

    assert weight("The Tenth Doctor", 3) > weight("Rift Bolt", 2) > weight("Dichotomancy", 1)
    assert weight("Suspend", 1) < weight("Dichotomancy", 1)
    assert name_weight("Consider", 1, index, {"consider"}) < weight("Consider", 1)


def test_face_names_name_their_card() -> None:
    """A face name ("Fire") is a name of its card ("Fire // Ice"); longest match wins."""
    index = NameIndex()
    index.add("Fire // Ice", "Fire // Ice")
    index.add("Fire", "Fire // Ice")
    index.add("Ice", "Fire // Ice")
    index.add("Rift", "Rift")
    index.add("Rift Bolt", "Rift Bolt")
    assert [(m.card, m.words) for m in index.mentions("Cast Fire // Ice or Rift Bolt.")] == [
        ("Fire // Ice", 2),
        ("Rift Bolt", 2),
    ]
    assert [m.card for m in index.mentions("If Ice is countered, Rift stays.")] == [
        "Fire // Ice",
        "Rift",
    ]


def test_short_names_of_legendary_cards(catalog: Catalog) -> None:
    """Klothys's names Klothys, God of Destiny; Teferi's names no card (there are three)."""
    mentions = catalog.index.mentions(
        "In a Two-Headed Giant game, Klothys\u2019s last ability causes the opposing team to "
        "lose 4 life. Teferi\u2019s first ability resolves."
    )
    assert [(m.card, m.kind) for m in mentions] == [
        ("Two-Headed Giant", "game term"),
        ("Klothys, God of Destiny", "possessive"),
    ]


def test_short_names_shared_by_two_cards_name_neither() -> None:
    """A short name of two cards is no name; a full name keeps its node over a short one."""
    catalog = Catalog()
    catalog.add("Basri Ket", None, legendary=True)
    catalog.add("Basri, Devoted Paladin", None, legendary=True)
    catalog.add("Rift", None)
    catalog.add("Rift, the Bolt", None, legendary=True)
    assert catalog.index.mentions("Basri's ability resolves.") == []
    assert [m.card for m in catalog.index.mentions("Then Rift deals 3 damage.")] == ["Rift"]


def test_set_files_tokens_are_not_cards() -> None:
    """A set file's `tokens` and `sealedProduct` lists are not AtomicCards entries."""
    catalog = load_catalog([SETS / "THB.json"])
    assert catalog.index.mentions("Then the tokens leave the battlefield.") == []
    assert not {"tokens", "sealedproduct"} & catalog.english.keys()


def test_scryfall_catalog_gives_faces_keywords_and_types(tmp_path: Path) -> None:
    """Scryfall cards: face names from card_faces, keywords and type-line words as terms."""
    path = tmp_path / "cards.json"
    path.write_text(
        '[{"object":"card","name":"Fire // Ice","oracle_id":"o-1","type_line":"Instant // '
        'Instant","card_faces":[{"name":"Fire"},{"name":"Ice"}]},'
        '{"object":"card","name":"Suspend","oracle_id":"o-2","keywords":["Suspend"],'
        '"type_line":"Instant","oracle_text":"Exile target creature."}]',
        encoding="utf-8",
    )
    index = load_catalog([path]).index
    assert [(m.card, m.kind) for m in index.mentions("If Ice is countered, Fire is not.")] == [
        ("Fire // Ice", "subject"),
        ("Fire // Ice", "subject"),
    ]
    assert [m.kind for m in index.mentions("Then the Suspend card is exiled.")] == [
        "keyword or type"
    ]
    assert {"suspend", "instant"} <= index.terms
    assert index.ordinary == {"target", "creature"}  # "Exile" opens its sentence


def test_rulings_named_by_their_oracle_id_are_not_inferred(tmp_path: Path) -> None:
    """Scryfall rulings with the oracle cards: each is named by its id, and none is "not inferred".

    The inference used to run before the oracle ids named the cards: it warned "no card
    inferred" for a bulk file whose every ruling then got its card.
    """
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(FIXTURES / "raw" / "scryfall" / "rulings-single.json", raw / "rulings.json")
    report = ingest(
        [raw],
        out=tmp_path / "out",
        catalog=load_catalog([FIXTURES / "catalog" / "scryfall-cards.json"]),
    )
    assert not [w for w in report.warnings if "inferred" in w]
    rulings = pipeline.open_dataset(tmp_path / "out").rulings()
    assert set(rulings["card"]) == {"Deathrite Shaman"}
