"""Rewordings and replacements: the labelled real pairs, the quoted 2025 texts, suspend."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES, REALDATA

from pipeline.diffing.diff import Change, ChangeType, Match, Version, compare
from pipeline.diffing.likeness import OTHER, SELF, self_folded
from pipeline.schema import CHANGES, VERSION_KEY
from pipeline.storage import store
from pipeline.text.normalize import fold, text_hash

if TYPE_CHECKING:
    from pathlib import Path

LABELS = json.loads((FIXTURES / "diff-labels.json").read_text(encoding="utf-8"))["cases"]
CASES = {case["name"]: case for case in LABELS}
D1, D2 = dt.date(2021, 3, 19), dt.date(2025, 1, 1)


def snapshot(texts: list[str], date: dt.date) -> list[Version]:
    """One (card, source) snapshot holding TEXTS, all dated DATE."""
    return [Version(text_hash(t), date, t) for t in texts]


def run(case: dict[str, Any]) -> list[Change]:
    """compare() of a labelled case's old and new rulings."""
    old, new = snapshot(case["old"], D1), snapshot(case["new"], D2)
    return compare(old, new, card=case["card"], source="s")


def found(changes: list[Change]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (old, new) folded texts paired as amended, and as removed and replaced by."""
    amended = {
        (fold(c.old.text), fold(c.new.text))
        for c in changes
        if c.change is ChangeType.AMENDED and c.old and c.new
    }
    replaced = {(fold(c.old.text), fold(c.replaced_by.text)) for c in changes
                if c.old and c.replaced_by}  # fmt: skip
    return amended, replaced


def labelled(case: dict[str, Any], label: str) -> set[tuple[str, str]]:
    """The case's pairs carrying LABEL, folded."""
    return {(fold(a), fold(b)) for a, b in case[label]}


def scores(*groups: str) -> dict[str, tuple[int, int, int]]:
    """(true positives, false positives, false negatives) of each label over GROUPS (all)."""
    counts = {"amended": [0, 0, 0], "replaced_by": [0, 0, 0]}
    for case in LABELS:
        if groups and case["part"] not in groups:
            continue
        for label, got in zip(("amended", "replaced_by"), found(run(case)), strict=True):
            want = labelled(case, label)
            counts[label][0] += len(got & want)
            counts[label][1] += len(got - want)
            counts[label][2] += len(want - got)
    return {label: (tp, fp, fn) for label, (tp, fp, fn) in counts.items()}


def test_labelled_set_floors() -> None:
    """Today's figures on the labelled set do not fall (docs/history.md, rulings paired)."""
    counts = scores()
    tp, fp, _ = counts["amended"]
    assert tp >= 57  # of the 59 labelled rewordings
    assert fp <= 7  # precision 57/64, all in the two-era cases
    tp, fp, _ = counts["replaced_by"]
    assert tp >= 8  # of 12
    assert fp <= 1
    tp, fp, _ = scores("engine copies")["amended"]
    assert tp >= 26  # of 27
    assert fp == 0


def test_same_card_versions_meet_issue_bar() -> None:
    """The pairing bar: amendments at 98% precision and 95% recall on one card's real versions.

    The bar's set: the 2025 texts quoted when it was set, the seed 003 -> 000 scenario, the
    seeds against the real files of ../shared.
    """
    tp, fp, fn = scores("same card")["amended"]
    assert tp / (tp + fp) >= 0.98
    assert tp / (tp + fn) >= 0.95
    # And with the engine copies: every real version of one card that this repository holds.
    tp, fp, fn = scores("same card", "engine copies")["amended"]
    assert tp / (tp + fp) >= 0.98
    assert tp / (tp + fn) >= 0.95


@pytest.mark.xfail(strict=True, reason="the two-era stand-ins hold 7 false amendments (docs)")
def test_whole_labelled_set_meets_issue_bar() -> None:
    """The same bar over every case, the two-era stand-ins and engine copies included."""
    tp, fp, fn = scores()["amended"]
    assert tp / (tp + fp) >= 0.98
    assert tp / (tp + fn) >= 0.95


@pytest.mark.parametrize(
    "name", ["phantom-wurm-2022-2025", "dread-return-2022-2025"], ids=["phantom-wurm", "dread"]
)
def test_rewordings_in_new_words_are_amendments(name: str) -> None:
    """The quoted 2025 rewordings pair one to one, found by their words."""
    changes = run(CASES[name])
    amended, _ = found(changes)
    assert amended == labelled(CASES[name], "amended")
    assert {c.match for c in changes if c.change is ChangeType.AMENDED} == {Match.WORDS}
    assert all(c.rule_change for c in changes if c.change is not ChangeType.REDATED)


def test_unrelated_removal_and_addition_stay_apart() -> None:
    """Coal Stoker: a ruling dropped and an unrelated one added are not paired."""
    changes = run(CASES["coal-stoker-2022-2025"])
    assert [
        (c.change, c.replaced_by, c.match) for c in changes if c.change is not ChangeType.REDATED
    ] == [
        (ChangeType.REMOVED, None, None),
        (ChangeType.ADDED, None, None),
    ]


def test_merge_names_its_replacement() -> None:
    """Two suspend rulings folded into one: both removed, replaced by it, in one group."""
    changes = run(CASES["tenth-doctor-2023-2024"])
    replaced = [c for c in changes if c.replaced_by is not None]
    [carrier] = [c for c in changes if c.change is ChangeType.ADDED and c.match is Match.CONTAINED]
    assert len(replaced) == 2
    assert {c.change for c in replaced} == {ChangeType.REMOVED}
    assert {c.replaced_by for c in replaced} == {carrier.new}
    assert carrier.new is not None
    assert carrier.new.text.startswith("Due to a recent rules change to suspend")
    assert {c.group for c in [*replaced, carrier]} == {carrier.group}
    # The mana-abilities ruling was dropped with no replacement.
    [dropped] = [c for c in changes if c.change is ChangeType.REMOVED and c.replaced_by is None]
    assert dropped.old is not None
    assert dropped.old.text.startswith("You are never forced")


def test_short_ruling_inside_a_long_one_is_no_rewording() -> None:
    """Length sanity: a one-sentence ruling that a long one now holds is replaced, not amended."""
    short = (
        "If you can't cast the card, perhaps because there are no legal targets available, it "
        "remains exiled with no time counters on it, and it's no longer suspended."
    )
    long = (
        "Due to a recent rules change to suspend, you are no longer required to cast the "
        "suspended card as the second triggered ability of suspend resolves. Instead, as the "
        "second triggered ability resolves, you may cast the card. Timing permissions based on "
        "the card's type are ignored. If you don't cast the card, it remains exiled with no "
        "time counters on it, and it's no longer suspended."
    )
    [removed, added] = compare(snapshot([short], D1), snapshot([long], D2), card="C", source="s")
    assert (removed.change, added.change) == (ChangeType.REMOVED, ChangeType.ADDED)
    assert removed.replaced_by == added.new


def test_self_references_fold_to_one_token() -> None:
    """The card's name, its short name and "this creature" read the same."""
    card = "Teferi, Mage of Zhalfir"
    texts = [
        "Teferi, Mage of Zhalfir's ability affects cards in your hand.",
        "Teferi's ability affects cards in your hand.",
        "This creature's ability affects cards in your hand.",
    ]
    assert len({self_folded(t, card) for t in texts}) == 1
    assert self_folded(texts[0], card).startswith(SELF)
    assert "it's" in self_folded("If it's exiled, it stays.", None)


def test_cards_of_others_are_not_self_references() -> None:
    """Another card's name is not the card's: it folds to its own token, examples alike."""
    assert self_folded("Unlike Rift Bolt, it can't.", "Phantom Wurm") == (
        f"unlike {OTHER}, {SELF} can't."
    )
    assert (
        self_folded(
            "You can cast it by some other means, like with Fist of Suns or Mind's Desire.", "X"
        )
        == f"you can cast {SELF} by some other means, like with {OTHER} or {OTHER}."
    )
    thalia = "(such as from Thalia, Guardian of Thraben)."
    assert self_folded(thalia, "X") == f"(such as from {OTHER})."


def test_capitalised_words_that_are_no_card_names_stay() -> None:
    """A sentence's first words and one capitalised word alone (a subtype) are left as written."""
    assert self_folded("Abilities that Slivers grant are cumulative.", "X") == (
        "abilities that slivers grant are cumulative."
    )
    assert self_folded("If an Aura or Equipment leaves. Each Saga counts.", "X") == (
        "if an aura or equipment leaves. each saga counts."
    )


CUMULATIVE = "Abilities that Slivers grant, as well as power/toughness boosts, are cumulative."
EXAMPLE = (
    " However, for some abilities, like flying, having more than one instance of the ability "
    "doesn't provide any additional benefit."
)


def test_ruling_cut_down_to_its_first_sentence_is_amended() -> None:
    """Wizards' later cleanups drop a ruling's example: the same ruling, amended by sentences."""
    changes = compare(
        snapshot([CUMULATIVE + EXAMPLE], D1), snapshot([CUMULATIVE], D2), card="C", source="s"
    )
    [amended] = changes
    assert (amended.change, amended.match) == (ChangeType.AMENDED, Match.SENTENCES)
    # And the other way: a ruling grown by a sentence.
    [grown] = compare(
        snapshot([CUMULATIVE], D1), snapshot([CUMULATIVE + EXAMPLE], D2), card="C", source="s"
    )
    assert (grown.change, grown.match) == (ChangeType.AMENDED, Match.SENTENCES)


def test_a_short_shared_sentence_pairs_nothing() -> None:
    """Two rulings that share only "You don't draw a card." are not one ruling cut down."""
    old = "If the target is illegal, the spell doesn't resolve. You don't draw a card."
    new = "You don't draw a card."
    changes = compare(snapshot([old], D1), snapshot([new], D2), card="C", source="s")
    assert [(c.change, c.match) for c in changes] == [
        (ChangeType.REMOVED, None),
        (ChangeType.ADDED, None),
    ]


def test_ruling_condensed_sentence_by_sentence_is_amended() -> None:
    """Rona's four sentences cut to two, each reworded (87 and 64): one ruling, amended.

    Its words alone (41.6 at 47% of the length) do not pair it; one reworded sentence alone,
    or two that each share little, pair nothing.
    """
    [case] = [c for c in LABELS if c["card"] == "Rona, Disciple of Gix"]
    [(old, new), _] = case["amended"]
    changes = compare(snapshot([old], D1), snapshot([new], D2), card=case["card"], source="s")
    assert [(c.change, c.match) for c in changes] == [(ChangeType.AMENDED, Match.SENTENCES)]
    first = new.split(". ", 1)[0]  # the first sentence alone, without the reworded second
    alone = compare(snapshot([old], D1), snapshot([first + "."], D2), card=case["card"], source="s")
    assert [c.change for c in alone] == [ChangeType.REMOVED, ChangeType.ADDED]
    other = "If Rona leaves the battlefield, the cards stay. Its controller may reveal them."
    apart = compare(snapshot([old], D1), snapshot([other], D2), card=case["card"], source="s")
    assert [c.change for c in apart] == [ChangeType.REMOVED, ChangeType.ADDED]


def test_a_ruling_whose_letters_read_inside_another_is_not_replaced_by_it() -> None:
    """Real rulings of Chaos Channeler (AFR): 72.4 by partial ratio, but few shared words."""
    old = "The cards are exiled face up."
    new = (
        "If you control multiple copies of Chaos Channeler, each one tracks the cards it has "
        "exiled separately."
    )
    changes = compare(snapshot([old], D1), snapshot([new], D2), card="Chaos Channeler", source="s")
    assert [(c.change, c.replaced_by) for c in changes] == [
        (ChangeType.REMOVED, None),
        (ChangeType.ADDED, None),
    ]


SUSPEND_2021 = "Suspend is a keyword that represents three abilities."
SUSPEND_2024 = (
    "Suspend is a keyword that represents three abilities. The first is a static ability that "
    "allows you to exile the card from your hand with the specified number of time counters "
    "(the number before the dash) on it by paying its suspend cost (listed after the dash). "
    "The second is a triggered ability that removes a time counter from the suspended card at "
    "the beginning of each of your upkeeps. The third is a triggered ability that gives you "
    "the option to cast the card when the last time counter is removed."
)
RULES_CHANGE = CASES["tenth-doctor-2023-2024"]["replaced_by"][0][1]
GONE_2024 = ("As the second triggered ability resolves", "If you can", "You are never forced")


@pytest.mark.skipif(not (REALDATA / "mtgjson-2022").is_dir(), reason="needs ../shared/realdata")
def test_suspend_change_is_one_group_on_27_cards() -> None:
    """The 2024 suspend change on every real Time Spiral card: one amendment group, one merge."""
    data = json.loads((REALDATA / "mtgjson-2022" / "TSP.json").read_text(encoding="utf-8"))
    groups: dict[tuple[ChangeType, Match | None], set[str]] = {}
    cards = 0
    for card in data["data"]["cards"]:
        texts = [r["text"] for r in card.get("rulings", [])]
        if not any(t.startswith(SUSPEND_2021) for t in texts):
            continue
        cards += 1
        new = [SUSPEND_2024 if t.startswith(SUSPEND_2021) else t for t in texts]
        new = [t for t in new if not fold(t).startswith(GONE_2024)] + [RULES_CHANGE]
        old_snap, new_snap = snapshot(texts, D1), snapshot(new, D1)
        for c in compare(old_snap, new_snap, card=card["name"], source="mtgjson"):
            groups.setdefault((c.change, c.match), set()).add(c.group)
    assert cards == 27
    assert len(groups[ChangeType.AMENDED, Match.CHARACTERS]) == 1
    assert len(groups[ChangeType.REMOVED, Match.CONTAINED]) == 1
    assert groups[ChangeType.ADDED, Match.CONTAINED] == groups[ChangeType.REMOVED, Match.CONTAINED]
    assert (ChangeType.AMENDED, Match.WORDS) not in groups


def test_version_3_changes_are_migrated(tmp_path: Path) -> None:
    """A changes table written before `match` and `replaced_by` reads with both filled in."""
    rows = [
        {"run": 2, "source": "s", "change": "amended", "rule_change": True, "silent": False,
         "first_seen": False, "group": "g1", "old_rule_id": None},
        {"run": 2, "source": "s", "change": "removed", "rule_change": True, "silent": False,
         "first_seen": False, "group": "g2", "old_rule_id": None},
    ]  # fmt: skip
    old_schema = CHANGES
    for later in ("match", "replaced_by", "kind", "oracle_id"):  # versions 4 and 7
        old_schema = old_schema.remove(old_schema.get_field_index(later))
    table = pa.Table.from_pylist(rows, schema=old_schema)
    pq.write_table(table.replace_schema_metadata({VERSION_KEY: b"3"}), tmp_path / "changes.parquet")
    migrated = store.read_table(tmp_path, "changes")
    assert migrated["match"].to_pylist() == ["characters", None]
    assert migrated["replaced_by"].null_count == 2
    assert migrated["kind"].to_pylist() == ["ruling", "ruling"]  # no rule numbers
