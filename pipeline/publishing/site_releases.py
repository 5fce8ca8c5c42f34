"""The Comprehensive Rules releases as the site tells them: what each changed, and why it matters.

A release is the set of rule and glossary changes the runs showed with one as-of date (the
release's effective date; the run, where the dataset kept no as-of date). Its changes are
sorted as a judge reads an update bulletin: the substantive ones first (amended, added,
removed), each with the card rulings it explains and the cards whose rulings cite it; then,
folded into short lists, the renumberings and the amendments that only moved a
cross-reference ("see rule 726" -> "see rule 727").
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.diffing.diff import ChangeType
from pipeline.publishing.site_pages import explaining
from pipeline.publishing.site_tables import rule_order
from pipeline.text.normalize import fold

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pipeline.publishing.changelog import Group
    from pipeline.publishing.site_data import SiteData, Thread

NUMBERED = re.compile(r"\d{3}\.\d+[a-z]?")  # a rule's number; a glossary entry's is its term
# A rule or section number inside a text, as a cross-reference names it.
_REFERENCE = re.compile(r"(?<![\w.])\d{3}(?:\.\d+[a-z]?)?(?![\w])")
_CITING = 12  # the cards named beside a change; the rule's page names them all
_ORDER = {ChangeType.AMENDED: 0, ChangeType.ADDED: 1, ChangeType.REMOVED: 2}


@dataclass(frozen=True, slots=True)
class RuleChange:
    """One change of a rule or glossary entry in a release, with what it explains."""

    group: Group
    number: str  # the rule's number (its new one) or the glossary entry's term
    glossary: bool
    folded: str | None  # None: substantive; "renumbered" or "references" (only those moved)
    title: str | None  # the rule's section title (702.62a: Suspend)
    explains: tuple[Thread, ...]  # the card ruling changes it explains
    citing: tuple[str, ...]  # cards whose rulings cite the rule (the first _CITING)
    citing_more: int  # how many more cite it

    @property
    def old_number(self) -> str | None:
        """The number it had before, where a renumbering moved it."""
        old = self.group.old_rule_id
        return old if old and old != self.number else None

    @property
    def what(self) -> str:
        """What happened to it: "amended", "renumbered from 720.1a and amended"."""
        what = {
            ChangeType.AMENDED: "amended",
            ChangeType.ADDED: "added",
            ChangeType.REMOVED: "removed",
            ChangeType.RENUMBERED: "renumbered",
            ChangeType.REDATED: "re-dated",
        }[self.group.change]
        if self.group.change is ChangeType.AMENDED and self.old_number:
            what = "renumbered and amended"
        return what

    @property
    def headline(self) -> str:
        """What happened, in a few words: "Rule 702.62a (Suspend) amended"."""
        kind = "Glossary entry" if self.glossary else "Rule"
        titled = f" ({self.title})" if self.title else ""
        return f"{kind} {self.number}{titled} {self.what}"


@dataclass(frozen=True, slots=True)
class Release:
    """One release's changes, the substantive first; its page's file name."""

    key: str  # 2024-02-02, or run-3 where the runs kept no as-of date
    as_of: dt.date | None
    runs: tuple[int, ...]
    changes: tuple[RuleChange, ...]  # substantive: amended, added, removed (rules, glossary)
    renumbered: tuple[RuleChange, ...]
    references: tuple[RuleChange, ...]  # amendments that only moved a cross-reference

    @property
    def summary(self) -> str:
        """Its figures in one line: "12 amended, 43 added, 100 renumbered, 30 references"."""
        counts: dict[str, int] = {}
        for c in self.changes:
            word = c.what.rsplit(" ", 1)[-1]
            counts[word] = counts.get(word, 0) + 1
        parts = [f"{n} {w}" for w, n in sorted(counts.items(), key=lambda i: _WORDS.index(i[0]))]
        if self.renumbered:
            parts.append(f"{len(self.renumbered)} renumbered only")
        if self.references:
            parts.append(f"{len(self.references)} with only a cross-reference updated")
        return ", ".join(parts) or "no changes"

    @property
    def title(self) -> str:
        """The page's title: "Comprehensive Rules as of 2024-02-02"."""
        return f"Comprehensive Rules as of {self.as_of}" if self.as_of else f"Rules of {self.key}"


_WORDS = ["amended", "added", "removed", "re-dated", "renumbered"]


def references_only(old: str | None, new: str | None) -> bool:
    """Whether OLD and NEW differ only in the rule numbers they name (and typography)."""
    if not old or not new:
        return False
    return _REFERENCE.sub("#", fold(old)) == _REFERENCE.sub("#", fold(new))


def releases(data: SiteData, citing: dict[str, list[str]]) -> tuple[Release, ...]:
    """Every release the runs showed changes of, oldest first (CITING: rule -> cards)."""
    by_key: dict[str, tuple[dt.date | None, list[int], list[Group]]] = {}
    for run in data.runs:
        for g in run.changeset.groups:
            if not g.is_rule:
                continue
            key = g.as_of.isoformat() if g.as_of else f"run-{run.run}"
            as_of, runs, groups = by_key.setdefault(key, (g.as_of, [], []))
            if run.run not in runs:
                runs.append(run.run)
            groups.append(g)
    found = []
    for key, (as_of, runs, groups) in by_key.items():
        changes = [_change(data, g, citing) for g in groups]
        found.append(
            Release(
                key,
                as_of,
                tuple(runs),
                _sorted(c for c in changes if c.folded is None),
                _sorted(c for c in changes if c.folded == "renumbered"),
                _sorted(c for c in changes if c.folded == "references"),
            )
        )
    return tuple(sorted(found, key=lambda r: (r.as_of or dt.date.min, r.runs)))


def _sorted(changes: Iterable[RuleChange]) -> tuple[RuleChange, ...]:
    return tuple(
        sorted(
            changes,
            key=lambda c: (
                c.glossary,
                _ORDER.get(c.group.change, 3),
                rule_order(c.number) if not c.glossary else (c.number.casefold(),),
                c.group.group,
            ),
        )
    )


def _change(data: SiteData, g: Group, citing: dict[str, list[str]]) -> RuleChange:
    number = g.new_rule_id or g.old_rule_id or ""
    folded = None
    if g.change is ChangeType.RENUMBERED:
        folded = "renumbered"
    elif g.change is ChangeType.AMENDED and references_only(g.old_text, g.new_text):
        folded = "references"
    numbered = bool(NUMBERED.fullmatch(number))
    section = number.rstrip("abcdefghijklmnopqrstuvwxyz") if numbered else None
    cards = citing.get(number, []) if numbered else []
    return RuleChange(
        g,
        number,
        not numbered,
        folded,
        data.titles.get(section) if section else None,
        explaining(data, number) if numbered else (),
        tuple(cards[:_CITING]),
        max(len(cards) - _CITING, 0),
    )


def change_marks(found: Iterable[Release]) -> dict[str, tuple[str, str]]:
    """Each rule number and glossary term with its latest change and that release's key."""
    marks: dict[str, tuple[str, str]] = {}
    for release in found:
        for c in (*release.changes, *release.renumbered, *release.references):
            what = "reference updated" if c.folded == "references" else c.what
            marks[c.number] = (what, release.key)
    return marks
