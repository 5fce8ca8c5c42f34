"""A Changeset as one self-contained HTML page: filters, word diffs and a month timeline.

No network and no external assets: styles, script and the SVG timeline are inline, and
every text from the data is escaped (templates/changelog.html, autoescaped), so a ruling
that contains markup is shown, not run. The site's run pages render the same groups.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.diffing.diff import ChangeType
from pipeline.publishing.render import change_counts, oracle_summary
from pipeline.publishing.templating import NO_LINKS, Links, render

if TYPE_CHECKING:
    from pipeline.publishing.changelog import Changeset

_BAR_AREA = 880
_BAR_HEIGHT = 120
_LABEL_EVERY_MONTH = 24  # up to two years of months are each labelled; beyond, the Januaries
_WIDEST = 40  # a month's bar at most: a few months are narrow bars, not the whole width


def render_html(cs: Changeset, links: Links = NO_LINKS) -> str:
    """The changeset as a page for publishers (card names linked where LINKS says)."""
    cards = sorted({c for g in cs.groups for c, _ in g.cards if c})
    langs = sorted({g.lang for g in cs.groups if g.lang})
    changes = [t.value for t in ChangeType if any(g.change is t for g in cs.groups)]
    filters = [
        ("f-card", "Card", cards),
        ("f-lang", "Language", langs),
        ("f-change", "Change", changes),
    ]
    return render(
        "changelog.html",
        cs=cs,
        runs=run_names(cs),
        counts=summary(cs),
        bars=timeline(cs),
        filters=filters,
        links=links,
    )


def run_names(cs: Changeset) -> str:
    """The changeset's runs, "2" or "1, 2" ("none" without a run)."""
    return ", ".join(str(r) for r in cs.runs) or "none"


def summary(cs: Changeset) -> str:
    """The changeset's figures in one line: its changes, then its first sightings."""
    oracle = oracle_summary(cs) if cs.oracle else ""
    return "; ".join(filter(None, [change_counts(cs), cs.first_seen_summary(), oracle]))


@dataclass(frozen=True, slots=True)
class Bar:
    """One month of the timeline: where its bar goes, and what it counts."""

    x: str
    y: str
    width: str
    height: str
    label: str
    count: int
    labelled: bool


@dataclass(frozen=True, slots=True)
class Timeline:
    """The timeline's bars and the drawing's size."""

    bars: tuple[Bar, ...]
    top: int
    width: int = _BAR_AREA + 60  # the drawing's: the bars' and their axis's
    height: int = _BAR_HEIGHT + 34
    axis: int = _BAR_HEIGHT + 24


def timeline(cs: Changeset) -> Timeline | None:
    """Card-level changes per month of their as-of date (when the data showed them).

    A change is counted in the month of the version that showed it, not of its ruling's
    own date: a release of 2024-02 that renumbers rules of 2023-11 draws one bar, 2024-02.
    """
    months: Counter[str] = Counter()
    for g in cs.groups:
        if g.when is not None:
            months[g.when.strftime("%Y-%m")] += g.changes + g.added
    if not months:
        return None
    first, last = min(months), max(months)
    span: list[str] = []
    year, month = int(first[:4]), int(first[5:])
    while f"{year:04d}-{month:02d}" <= last:
        span.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)  # noqa: PLR2004
    width = min(max(_BAR_AREA / len(span), 2), _WIDEST)
    top = max(months.values())
    bars = []
    for n, label in enumerate(span):
        height = _BAR_HEIGHT * months.get(label, 0) / top
        x = 40 + n * width
        bars.append(
            Bar(
                f"{x:.1f}",
                f"{10 + _BAR_HEIGHT - height:.1f}",
                f"{max(width - 1, 1):.1f}",
                f"{height:.1f}",
                label,
                months.get(label, 0),
                len(span) <= _LABEL_EVERY_MONTH or label.endswith("-01"),
            )
        )
    return Timeline(tuple(bars), top, width=int(40 + width * len(span) + 60))
