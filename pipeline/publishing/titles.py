"""Section titles of the Comprehensive Rules, release by release: what 702.62 was called when.

A section's number is reused over the years: with every release of an archive read, 702.62
was "Aura Swap" in some and is "Suspend" since. A rule change is explained by the ruling
changes that name its section's title in the release that made it (changelog.changeset),
never by the last title the number was seen with.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Literal

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Mask, strings
from pipeline.storage.carry import Content

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Mapping

    from pipeline.storage import store

SECTION = r"^\d{3}\.\d+$"  # a section's number (702.62), whose rules are 702.62a, ...


class RuleTitles(dict[str, str]):
    """Section numbers to titles, as the latest release holding each has them; and at() a date.

    A dict, so that whatever reads the titles alone reads these; RELEASES maps each
    release's as-of date to the titles of its sections.
    """

    def __init__(
        self, releases: Mapping[dt.date, Mapping[str, str]], latest: Mapping[str, str] | None = None
    ) -> None:
        self._dates = sorted(releases)
        self._titles = [dict(releases[date]) for date in self._dates]
        merged = dict(latest or {})
        for titles in self._titles:
            merged.update(titles)
        super().__init__(merged)

    def at(self, number: str, when: dt.date) -> str | None:
        """NUMBER's title in the latest release on or before WHEN that has it (None: none).

        Without releases (a dataset whose sightings name no as-of date): its only title.
        """
        if not self._dates:
            return self.get(number)
        for titles in reversed(self._titles[: bisect_right(self._dates, when)]):
            if number in titles:
                return titles[number]
        return None


def title_at(titles: Mapping[str, str], number: str, when: dt.date | None) -> str | None:
    """NUMBER's title at WHEN, where TITLES know their releases (RuleTitles); else its title."""
    if isinstance(titles, RuleTitles) and when is not None:
        return titles.at(number, when)
    return titles.get(number)


def release_titles(version: store.Version, rulings: pa.Table) -> RuleTitles:
    """The titles of the sections each release of VERSION held, by its as-of date.

    RULINGS are VERSION's rulings (the texts of the titles). Where no sighting has an
    as-of date (runs before the as-of dates were kept), each number's current title stands.
    """

    def sections(part: pa.Table) -> Mask:
        numbers = part["rule_id"].cast(pa.string())
        numbered = pc.and_(pc.is_null(part["card"]), pc.equal(part["kind"], pa.scalar("rule")))
        return pc.and_(numbered, pc.match_substring_regex(numbers, SECTION))  # null: dropped

    seen = version.table("sightings", content=Content(("card", "kind", "rule_id"), sections))
    titled = _sections(rulings)
    texts = dict(zip(strings(titled["text_hash"]), strings(titled["text"]), strict=True))
    releases: dict[dt.date, dict[str, str]] = {}
    for as_of, number, text_hash in zip(
        seen["as_of"].to_pylist(),
        strings(seen["rule_id"]),
        strings(seen["text_hash"]),
        strict=True,
    ):
        if as_of is not None and text_hash in texts:
            releases.setdefault(as_of, {})[number] = texts[text_hash]
    return RuleTitles(releases, current_titles(rulings))


def current_titles(rulings: pa.Table) -> dict[str, str]:
    """Titles of the numbered rule sections among RULINGS: {"702.62": "Suspend"}.

    Where a number had several, the current one, else the one last read (as far as the
    columns RULINGS holds tell: a site reads `current` alone).
    """
    sections = _sections(rulings)
    order: list[tuple[str, Literal["ascending"]]] = [
        (c, "ascending") for c in ("current", "last_run") if c in sections.column_names
    ]
    if order:
        sections = sections.take(pc.sort_indices(sections, sort_keys=order))
    return dict(zip(strings(sections["rule_id"]), strings(sections["text"]), strict=True))


def _sections(rulings: pa.Table) -> pa.Table:
    """The rows of RULINGS that title a section (702.62 "Suspend")."""
    wanted = ("rule_id", "text", "text_hash", "current", "last_run")
    rows = rulings.select([c for c in wanted if c in rulings.column_names])
    return rows.filter(pc.match_substring_regex(rows["rule_id"], SECTION))  # null: dropped
