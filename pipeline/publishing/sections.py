"""The Comprehensive Rules' chapters and sections, as the rules index arranges them.

The dataset keeps the numbered rules, not the book's headings ("7. Additional Rules",
"702. Keyword Abilities"). A section's title is taken from the cross-references of the
rules and glossary entries in force ("See rule 702, “Keyword Abilities.”"), the form most
of them give; every chapter opens with a section titled "General" (100, 200, ...); the
few sections no text names keep a title from the book, else their number alone. The nine
chapters have kept their titles since the 2009 renumbering.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

CHAPTERS = {
    "1": "Game Concepts",
    "2": "Parts of a Card",
    "3": "Card Types",
    "4": "Zones",
    "5": "Turn Structure",
    "6": "Spells, Abilities, and Effects",
    "7": "Additional Rules",
    "8": "Multiplayer Rules",
    "9": "Casual Variants",
}
# Sections no cross-reference names with its title (releases of 2023-2024).
_BOOK = {
    "101": "The Magic Golden Rules",
    "107": "Numbers and Symbols",
    "616": "Interaction of Replacement and/or Prevention Effects",
}
_NAMED = re.compile(r"\b(?:[Rr]ules?|[Ss]ections?) (\d{3}),? \u201c([^\u201d]+?)[,.;]?\u201d")


def section_of(number: str) -> str:
    """The three-digit section a rule number is in: 702 for 702.62a."""
    return number.split(".", 1)[0]


def section_titles(numbers: Iterable[str], texts: Iterable[str]) -> dict[str, str]:
    """Each section of the rule NUMBERS with its title as TEXTS name it ("" if none does)."""
    named: dict[str, Counter[str]] = defaultdict(Counter)
    for text in texts:
        for match in _NAMED.finditer(text):
            named[match.group(1)][match.group(2).strip()] += 1
    found = {}
    for section in sorted({section_of(n) for n in numbers}):
        if named.get(section):
            # The most frequent form; of equals, the shortest ("Planechase", not "Planechase;").
            found[section] = min(named[section].items(), key=lambda i: (-i[1], len(i[0]), i[0]))[0]
        elif section.endswith("00"):
            found[section] = "General"
        else:
            found[section] = _BOOK.get(section, "")
    return found


@dataclass(frozen=True, slots=True)
class Listed:
    """A rule (or glossary entry) as an index lists it: its text cut short, its last change."""

    number: str
    text: str
    mark: str | None  # its latest change: "amended", "added", "renumbered", ...
    release: str | None  # the key of the release that made it


@dataclass(frozen=True, slots=True)
class Section:
    """A three-digit section of the rules, with its rules."""

    number: str
    title: str
    rules: tuple[Listed, ...]

    @property
    def changed(self) -> int:
        """How many of its rules bear a change mark."""
        return sum(1 for r in self.rules if r.mark)


@dataclass(frozen=True, slots=True)
class Chapter:
    """One of the nine chapters, with its sections."""

    number: str
    title: str
    sections: tuple[Section, ...]


def chapters(
    rules: dict[str, str],
    titles: dict[str, str],
    marks: dict[str, tuple[str, str]],
    short: Callable[[str], str],
) -> tuple[Chapter, ...]:
    """RULES (number -> text, in the book's order) arranged by chapter and section.

    TITLES are the sections' (section_titles); MARKS each rule's latest change and release.
    """
    by_section: dict[str, list[Listed]] = defaultdict(list)
    for number, text in rules.items():
        mark, release = marks.get(number, (None, None))
        by_section[section_of(number)].append(Listed(number, short(text), mark, release))
    by_chapter: dict[str, list[Section]] = defaultdict(list)
    for number in sorted(by_section):
        section = Section(number, titles.get(number, ""), tuple(by_section[number]))
        by_chapter[number[0]].append(section)
    return tuple(
        Chapter(n, CHAPTERS.get(n, ""), tuple(sections)) for n, sections in by_chapter.items()
    )
