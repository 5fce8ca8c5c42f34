"""Compare two snapshots of one card's rulings from one source: plain data out."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz import fuzz, process

from pipeline.diffing.likeness import Texts
from pipeline.text.normalize import fold, has_symbols, skeleton_of_folded

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable, Iterable

# Removed and added rulings of the same card pair as one amendment at this fuzz.ratio
# (0-100, Indel similarity of the folded texts) or above. On the 2024 suspend rewrite the
# real amendments score 83-99 and the unrelated removed/added pairs at most 51 (see
# tests/test_diff.py), so 70 sits in the middle of the gap.
AMEND_THRESHOLD = 70.0
# The rest pair as rewordings by the mean of their self-folded character similarity and their
# weighted shared words (likeness.py) at WORDS_THRESHOLD or above, when neither is under
# LENGTH_RATIO of the other's length in words. A removed ruling that reads inside an added one
# (partial ratio at REPLACE_THRESHOLD or above, at least REPLACE_LENGTH_RATIO of its length in
# words) is replaced by it. Chosen on the labelled real pairs of tests/fixtures/diff-labels.json
# and on unrelated rulings of real cards (docs/history.md, "How rulings are paired"): at 40
# the quoted 2025 rewordings pair (40.5-61.3), every one of one card's real versions does (10
# of 10), and 10 of 235 cross-card comparisons get a false amendment; at 36 twice as many
# false ones do, at 46 three of the ten are missed. Between two cards' look-alike rulings true
# and false rewordings overlap: no threshold separates them.
WORDS_THRESHOLD = 40.0
LENGTH_RATIO = 0.5
# Before rewordings, a ruling whose sentences are all, in order, sentences of the other (cut
# down to its first statement, or grown by an example) pairs as an amendment when the kept
# sentences hold at least KEPT_WORDS words: a shared "You don't draw a card." says little.
KEPT_WORDS = 6
REPLACE_THRESHOLD = 58.0
REPLACE_LENGTH_RATIO = 0.35  # a one-line ruling "inside" a long one is mostly a chance match
# And the added ruling holds at least REPLACE_WORDS of the removed one's words (weighted by
# rarity, 0-100): characters alone let "The cards are exiled face up." read inside "If you
# control multiple copies of Chaos Channeler, each one tracks the cards it has exiled
# separately." (72.4). The suspend merge's removed rulings score 52.9 and 53.9; unrelated rulings
# of two cards of one set (docs/history.md's stress set over every MTGJSON 2022 file) 23 at the
# median, 35-40 at the 90th percentile.
REPLACE_WORDS = 45.0
_BLOCK = 256  # removed texts scored against the added ones at a time (a float64 row each)
# A rule's number ("702.62a"); any other rule_id is a glossary entry's term ("Modular").
_RULE_NUMBER = re.compile(r"\d+(?:\.\d+[a-z]*)?")


class ChangeType(StrEnum):
    """How a ruling differs between two snapshots (in the order changelogs list them)."""

    AMENDED = "amended"
    REMOVED = "removed"
    ADDED = "added"
    REDATED = "redated"
    RENUMBERED = "renumbered"  # a rule whose text moved to another number


class Match(StrEnum):
    """How a removed ruling was tied to an added one."""

    RULE = "rule"  # the same rule number
    CHARACTERS = "characters"  # character similarity of the folded texts
    SENTENCES = "sentences"  # one's sentences are a run of the other's: cut down or grown
    WORDS = "words"  # self-references folded, words and characters together
    CONTAINED = "contained"  # the removed ruling reads inside the added one: replaced


@dataclass(frozen=True, slots=True)
class Version:
    """One ruling as a snapshot holds it; its identity is its text hash, date and rule number."""

    text_hash: str
    effective_date: dt.date | None
    text: str = field(compare=False)
    rule_id: str | None = None

    def sort_key(self) -> tuple[tuple[int, ...], str, bool, dt.date | None, str]:
        """By rule number (numerically), then undated first, by date, by hash."""
        number = tuple(int(p) for p in re.findall(r"\d+", self.rule_id or ""))
        return (
            number,
            self.rule_id or "",
            self.effective_date is not None,
            self.effective_date,
            self.text_hash,
        )


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the last known and the new snapshot of a (card, source)."""

    card: str | None
    source: str
    change: ChangeType
    old: Version | None
    new: Version | None
    similarity: float | None
    rule_change: bool
    silent: bool
    first_seen: bool
    match: Match | None = None
    replaced_by: Version | None = None  # the added ruling that carries a removed one

    @property
    def group(self) -> str:
        """The same change of the same words on many cards is one group (see group_id).

        A replacement is one group with the rulings it replaced, on every card: its removed
        and added rows share the id of the added text.
        """
        old, new = self.old, self.new
        if self.match is Match.CONTAINED:
            carrier = self.replaced_by or new
            if carrier is not None:
                side = (carrier.text_hash, None, carrier.rule_id)
                return group_id(ChangeType.REMOVED, None, side)
        return group_id(
            self.change,
            (old.text_hash, old.effective_date, old.rule_id) if old else None,
            (new.text_hash, new.effective_date, new.rule_id) if new else None,
        )


Side = tuple[str, "dt.date | None", "str | None"]  # (text_hash, date, rule_id)


def group_id(change: ChangeType, old: Side | None, new: Side | None) -> str:
    """A stable id shared by the same change on many cards.

    Amendments group by old and new text, removals and additions by their text,
    re-datings by text and both dates; rule changes also by their rule numbers.
    """
    parts: list[object] = [change, old and old[0], new and new[0]]
    if change is ChangeType.REDATED and old is not None and new is not None:
        parts += [old[1], new[1]]
    if (old and old[2]) or (new and new[2]):
        parts += [old and old[2], new and new[2]]
    return hashlib.sha256(repr([str(p) for p in parts]).encode()).hexdigest()[:16]


def addition_group_ids(sides: Iterable[tuple[str, str | None]]) -> list[str]:
    """group_id() of the addition of each (text hash, rule number) of SIDES.

    The same ids, with the text that group_id() hashes written out directly: a first
    ingest asks for one per ruling it reads.
    """
    sha256, none = hashlib.sha256, repr(str(None))
    head = f"[{str(ChangeType.ADDED)!r}, {none}, "
    return [
        sha256(
            (
                f"{head}{text_hash!r}, {none}, {rule!r}]" if rule else f"{head}{text_hash!r}]"
            ).encode()
        ).hexdigest()[:16]
        for text_hash, rule in sides
    ]


def compare(
    before: Iterable[Version] | None,
    after: Iterable[Version],
    *,
    card: str | None,
    source: str,
) -> list[Change]:
    """List what changed from BEFORE (None: never read) to AFTER; unchanged rulings are left out.

    Same text and date: unchanged. Same text, other date: re-dated; other rule number:
    renumbered. Rules that kept their number but not their words are amended. The remaining
    removed and added rulings are paired, most similar first, as amendments when they reach
    AMEND_THRESHOLD (a glossary entry is never paired with a rule, in any pass: pairable());
    then, among card rulings, a removed ruling that reads inside an added
    one is replaced by it when that one carries two or more (a merge); a ruling cut down to
    some of its sentences, or grown by some, is amended; the rest pair, best first, as
    rewordings at WORDS_THRESHOLD; a removed ruling left that reads inside an added
    one is replaced by it. An amendment that kept its date is silent. Amendments and
    removals are rule changes, and so are additions that come with them.
    """
    new = sorted(set(after), key=Version.sort_key)
    if before is None:
        return [_change(card, source, ChangeType.ADDED, new=v, first_seen=True) for v in new]
    old = sorted(set(before), key=Version.sort_key)
    common = set(old) & set(new)
    gone = [v for v in old if v not in common]
    came = [v for v in new if v not in common]
    forms = _Forms()
    _, gone, came = forms.pair(gone, came, same_place=True)  # a repaired copy: no change
    moved, gone, came = forms.pair(gone, came, same_place=False)
    same_number, gone, came = _pair_by_number(gone, came)
    amended, gone, came = _greedy(gone, came, forms.similar(gone, came, AMEND_THRESHOLD))
    matched = {(a, b): Match.CHARACTERS for a, b, _ in amended}
    matched |= {(a, b): Match.RULE for a, b, _ in same_number}
    # Rewordings and replacements are looked for among card rulings; rules pair by number.
    rules_gone, gone = _split(gone)
    rules_came, came = _split(came)
    texts = Texts([v.text for v in (*gone, *came)], card)
    merged, gone, came = _replacements(gone, came, texts, merges_only=True)
    kept, gone, came = _pair(gone, came, _kept(texts), KEPT_WORDS)
    matched |= {(a, b): Match.SENTENCES for a, b, _ in kept}
    reworded, gone, came = _pair(gone, came, _reworded(texts), WORDS_THRESHOLD)
    matched |= {(a, b): Match.WORDS for a, b, _ in reworded}
    replaced, gone, came = _replacements(gone, came, texts, merges_only=False)
    replaced |= merged
    gone, came = [*rules_gone, *gone], [*rules_came, *came]
    amended = sorted(
        [
            (a, b, similarity(a.text, b.text))
            for a, b, _ in (*amended, *same_number, *kept, *reworded)
        ],
        key=lambda pair: pair[0].sort_key(),
    )
    changes = [
        _change(
            card,
            source,
            ChangeType.RENUMBERED if a.rule_id != b.rule_id else ChangeType.REDATED,
            old=a,
            new=b,
            similarity=score,
        )
        for a, b, score in moved
    ]
    changes += [
        _change(
            card,
            source,
            ChangeType.AMENDED,
            old=a,
            new=b,
            similarity=score,
            rule_change=True,
            silent=a.effective_date == b.effective_date,
            match=matched[a, b],
        )
        for a, b, score in amended
    ]
    gone = sorted([*gone, *replaced], key=Version.sort_key)
    carriers = set(replaced.values())
    came = sorted([*came, *carriers], key=Version.sort_key)
    changes += [
        _change(
            card,
            source,
            ChangeType.REMOVED,
            old=v,
            rule_change=True,
            match=Match.CONTAINED if v in replaced else None,
            replaced_by=replaced.get(v),
        )
        for v in gone
    ]
    structural = bool(amended or gone)
    changes += [
        _change(
            card,
            source,
            ChangeType.ADDED,
            new=v,
            rule_change=structural,
            match=Match.CONTAINED if v in carriers else None,
        )
        for v in came
    ]
    return changes


def _split(versions: list[Version]) -> tuple[list[Version], list[Version]]:
    """(rules, rulings) of VERSIONS, each in their order."""
    return [v for v in versions if v.rule_id], [v for v in versions if not v.rule_id]


def _reworded(texts: Texts) -> Callable[[Version, Version], float]:
    """The rewording score of a pair: 0 when one is far shorter than the other."""

    def score(a: Version, b: Version) -> float:
        if texts.length_ratio(a.text, b.text) < LENGTH_RATIO:
            return 0.0
        return (texts.characters(a.text, b.text) + texts.words(a.text, b.text)) / 2

    return score


def _kept(texts: Texts) -> Callable[[Version, Version], float]:
    """The words a pair's texts keep in common sentences (0 unless one is a run of the other)."""
    return lambda a, b: float(texts.kept_sentences(a.text, b.text))


def _replacements(
    gone: list[Version], came: list[Version], texts: Texts, *, merges_only: bool
) -> tuple[dict[Version, Version], list[Version], list[Version]]:
    """Removed rulings that read inside an added one, mapped to it (the best, ties by order).

    With MERGES_ONLY, only added rulings that carry two removed ones or more: a merge is
    no rewording, so these are taken out before rewordings are paired.
    """
    best: dict[Version, Version] = {}
    for a in gone:
        scores = [
            (texts.contained(a.text, b.text), -j)
            for j, b in enumerate(came)
            if texts.length_ratio(a.text, b.text) >= REPLACE_LENGTH_RATIO
            and texts.covered(a.text, b.text) >= REPLACE_WORDS
        ]
        top = max(scores, default=(0.0, 0))
        if top[0] >= REPLACE_THRESHOLD:
            best[a] = came[-top[1]]
    if merges_only:
        carried = list(best.values())
        best = {a: b for a, b in best.items() if carried.count(b) > 1}
    carriers = set(best.values())
    return best, [v for v in gone if v not in best], [v for v in came if v not in carriers]


class _Forms:
    """Each text's forms the exact and character passes compare (folded, skeleton, symbols), once.

    Two texts are one ruling when their folded texts are equal, or when one is a
    stripped-symbol copy of the other: a ruling stored before its symbol version was known
    keeps the hash of its stripped text, and when a later run repairs it the two are one
    ruling, not an amendment. Two texts that both hold symbols and differ in them ({X} and
    {2}) are different rulings.

    compare()'s exact passes once scored every removed version against every added one,
    folding both texts each time: 24 s of a 25 s ingest of ../shared/realdata (its
    Comprehensive Rules releases read in one run).
    """

    def __init__(self) -> None:
        self._known: dict[str, tuple[str, str, bool]] = {}

    def similar(
        self, gone: list[Version], came: list[Version], threshold: float
    ) -> list[tuple[float, int, int]]:
        """(similarity(), i, j) of each pair of GONE[i] and CAME[j] at THRESHOLD or above.

        The Indel ratios of a block of removed texts against every added one at a time, in
        C: the rules releases of ../shared/realdata, read in one run, compare 2 million pairs.
        """
        if not gone or not came:
            return []
        theirs = [self._of(b.text)[0] for b in came]
        found: list[tuple[float, int, int]] = []
        for start in range(0, len(gone), _BLOCK):
            ours = [self._of(a.text)[0] for a in gone[start : start + _BLOCK]]
            # Exactly fuzz.ratio's floats, on every core; the cutoff leaves room for the rounding.
            matrix = process.cdist(
                ours,
                theirs,
                scorer=fuzz.ratio,
                dtype=np.float64,
                score_cutoff=threshold - 1,
                workers=-1,
            )
            for i, j in zip(*np.nonzero(matrix), strict=True):
                score = round(float(matrix[i, j]), 1)
                if score >= threshold and pairable(gone[start + int(i)], came[int(j)]):
                    found.append((score, start + int(i), int(j)))
        return found

    def _of(self, text: str) -> tuple[str, str, bool]:
        forms = self._known.get(text)
        if forms is None:
            folded = fold(text)
            forms = (folded, skeleton_of_folded(folded), has_symbols(text))
            self._known[text] = forms
        return forms

    def pair(
        self, gone: list[Version], came: list[Version], *, same_place: bool
    ) -> tuple[list[tuple[Version, Version, float]], list[Version], list[Version]]:
        """Pair versions of one ruling as _pair(GONE, CAME, score, 100.0) would, by look-ups.

        SCORE would be 100 for texts of one ruling (SAME_PLACE: with the same date and
        rule number too), else 0.

        The same pairs: each old version in turn takes the first new one left that is
        the same ruling, which is the order _pair's sort gives scores that are all 100.
        Scoring and sorting every pair grows with the product of the two sides: the rules
        releases of ../shared/realdata, read in one run, made 806,726 pairs.
        """
        by_fold: dict[tuple[object, str], list[int]] = {}
        by_skeleton: dict[tuple[object, str], list[int]] = {}
        for j, b in enumerate(came):
            place = (b.effective_date, b.rule_id) if same_place else None
            folded, skeleton, _ = self._of(b.text)
            by_fold.setdefault((place, folded), []).append(j)
            by_skeleton.setdefault((place, skeleton), []).append(j)
        used: set[int] = set()
        pairs: list[tuple[Version, Version, float]] = []
        left_old: list[Version] = []
        for a in gone:
            place = (a.effective_date, a.rule_id) if same_place else None
            folded, skeleton, symbols = self._of(a.text)
            candidates = [
                *by_fold.get((place, folded), ()),
                *(
                    j
                    for j in by_skeleton.get((place, skeleton), ())
                    if not (symbols and self._of(came[j].text)[2])
                ),
            ]
            first = min(
                (j for j in candidates if j not in used and pairable(a, came[j])), default=None
            )
            if first is None:
                left_old.append(a)
                continue
            used.add(first)
            pairs.append((a, came[first], 100.0))
        return pairs, left_old, [b for j, b in enumerate(came) if j not in used]


def pairable(a: Version, b: Version) -> bool:
    """Whether A and B may be one ruling's versions: never a glossary entry and a rule.

    A release may hold one text as a term and as a rule (2004's glossary "Modular" and rule
    502.35a; 2009's "Teammate"), and a term leaving the glossary as a rule comes is no
    renumbering. Rows with no rule_id (card rulings) pair with either, as before.
    """
    if a.rule_id is None or b.rule_id is None:
        return True
    return bool(_RULE_NUMBER.fullmatch(a.rule_id)) == bool(_RULE_NUMBER.fullmatch(b.rule_id))


def _pair_by_number(
    gone: list[Version], came: list[Version]
) -> tuple[list[tuple[Version, Version, float]], list[Version], list[Version]]:
    """Rules that kept their number: _pair() with 100 for one rule number, 0 otherwise.

    Each old version in turn takes the first new one left with its number, the order
    _pair's sort gives scores that are all 100, by a look-up instead of every pair.
    """
    numbered: dict[str, list[int]] = {}
    for j, b in enumerate(came):
        if b.rule_id is not None:
            numbered.setdefault(b.rule_id, []).append(j)
    scored = [
        (100.0, i, j)
        for i, a in enumerate(gone)
        if a.rule_id is not None
        for j in numbered.get(a.rule_id, ())
    ]
    return _greedy(gone, came, scored)


def _pair(
    gone: list[Version],
    came: list[Version],
    score: Callable[[Version, Version], float],
    threshold: float,
) -> tuple[list[tuple[Version, Version, float]], list[Version], list[Version]]:
    """Pair old and new versions, best score first (ties by order), at THRESHOLD or above.

    Returns the pairs (ordered by the old version) and the versions left unpaired.
    """
    scored = [
        (value, i, j)
        for i, a in enumerate(gone)
        for j, b in enumerate(came)
        if (value := score(a, b)) >= threshold
    ]
    return _greedy(gone, came, scored)


def _greedy(
    gone: list[Version], came: list[Version], scored: list[tuple[float, int, int]]
) -> tuple[list[tuple[Version, Version, float]], list[Version], list[Version]]:
    """Pair by SCORED (score, i, j) entries, best first (ties by order), each version once."""
    used_old: dict[int, tuple[int, float]] = {}
    used_new: set[int] = set()
    for negative, i, j in sorted((-value, i, j) for value, i, j in scored):
        if i not in used_old and j not in used_new:
            used_old[i] = (j, -negative)
            used_new.add(j)
    pairs = [(gone[i], came[j], s) for i, (j, s) in sorted(used_old.items())]
    left_old = [v for i, v in enumerate(gone) if i not in used_old]
    left_new = [v for j, v in enumerate(came) if j not in used_new]
    return pairs, left_old, left_new


def _change(
    card: str | None,
    source: str,
    change: ChangeType,
    *,
    old: Version | None = None,
    new: Version | None = None,
    similarity: float | None = None,
    rule_change: bool = False,
    silent: bool = False,
    first_seen: bool = False,
    match: Match | None = None,
    replaced_by: Version | None = None,
) -> Change:
    return Change(
        card,
        source,
        change,
        old,
        new,
        similarity,
        rule_change,
        silent,
        first_seen,
        match,
        replaced_by,
    )


def similarity(a: str, b: str) -> float:
    """Similarity of two ruling texts, 0-100, ignoring typography."""
    return round(fuzz.ratio(fold(a), fold(b)), 1)


def apply(before: Iterable[Version], changes: Iterable[Change]) -> set[Version]:
    """Replay CHANGES on the snapshot BEFORE: the inverse of compare()."""
    snapshot = set(before)
    for change in changes:
        if change.old is not None:
            snapshot.discard(change.old)
        if change.new is not None:
            snapshot.add(change.new)
    return snapshot
