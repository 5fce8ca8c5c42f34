"""The site's Atom feed (RFC 4287) and the home page's latest changes, ids that never change.

An entry per rule-change group of card rulings, per substantive change of the
Comprehensive Rules (its title names the rule), and per release (its figures).
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pipeline.publishing.render import title
from pipeline.publishing.templating import Links, render

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pipeline.publishing.site_data import SiteData, Thread
    from pipeline.publishing.site_releases import Release, RuleChange

_SHORT = 90
_NAMED = 5  # cards named in a feed entry's summary
_ATOM_NAMESPACE = uuid.UUID("1b1e0d34-5a33-5c1f-9a53-6d74672d7369")  # ours: uuid5 ids under it


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of the feed: one rule-change group."""

    id: str
    title: str
    updated: str
    href: str
    summary: str
    html: str


def short(text: str) -> str:
    """TEXT cut to about ninety characters, with an ellipsis where it was cut."""
    return text if len(text) <= _SHORT else text[: _SHORT - 1].rstrip() + "\u2026"


def newest(threads: Iterable[Thread], data: SiteData) -> list[Thread]:
    """Rule-change groups, newest first: by their data's date, then their latest run."""
    started = {r.run: r.started_at.date() for r in data.runs}

    def newest(t: Thread) -> tuple[dt.date, int, str]:
        return (t.updated or started[t.runs[-1]], t.runs[-1], t.group.group)

    return sorted(threads, key=newest, reverse=True)


def _atom_time(day: dt.date) -> str:
    return f"{day.isoformat()}T00:00:00Z"


@dataclass(frozen=True, slots=True)
class Latest:
    """One item of the latest changes: a ruling change, a release, or a rule change in one."""

    day: dt.date
    thread: Thread | None = None
    release: Release | None = None
    change: RuleChange | None = None


def latest(data: SiteData, threads: list[Thread], releases: Iterable[Release]) -> list[Latest]:
    """Ruling changes and rules changes together, newest first; a release before its changes."""
    started = {r.run: r.started_at.date() for r in data.runs}
    items: list[tuple[tuple[dt.date, int, int, str], Latest]] = []
    for t in threads:
        day = t.updated or started[t.runs[-1]]
        items.append(((day, t.runs[-1], 0, t.group.group), Latest(day, thread=t)))
    for r in releases:
        day = r.as_of or started[r.runs[-1]]
        items.append(((day, r.runs[-1], 2, ""), Latest(day, release=r)))
        for n, c in enumerate(reversed(r.changes)):  # reversed: the order is newest first
            items.append(((day, r.runs[-1], 1, f"{n:06d}"), Latest(day, release=r, change=c)))
    return [item for _, item in sorted(items, key=lambda i: i[0], reverse=True)]


def feed(data: SiteData, items: list[Latest], links: Links) -> dict[str, Any]:
    """The feed's id, time and entries (ITEMS, newest first), ids that never change.

    An entry's id is a UUID of its group id (a release's: of its key), which hashes what
    the group is (the change and its texts): the same change keeps its id in every build
    and every later run.
    `updated` is the data's date (the as-of date of the version that showed it).
    """
    started = {r.run: r.started_at.date() for r in data.runs}
    entries = []
    for item in items:
        if item.thread is None:
            entries.append(_rules_entry(item, links))
            continue
        t = item.thread
        g = t.group
        named = [c for c, _ in t.cards if c]
        cards = ", ".join(named[:_NAMED]) + (" and more" if len(named) > _NAMED else "")
        runs = ", ".join(map(str, t.runs))
        entries.append(
            Entry(
                id=f"urn:uuid:{uuid.uuid5(_ATOM_NAMESPACE, 'group:' + g.group)}",
                title=f"{title(g)}: {short(g.text)}",
                updated=_atom_time(t.updated or started[t.runs[-1]]),
                href=f"runs/{t.runs[-1]}.html#g-{g.group}",
                summary=f"{title(g)} on {cards or 'no known card'}, in run(s) {runs}.",
                html=render("feed_entry.html", thread=t, links=links).strip(),
            )
        )
    first = data.runs[0].started_at.isoformat() if data.runs else ""
    latest = data.runs[-1].started_at.date() if data.runs else dt.date(1970, 1, 1)
    newest = max((e.updated for e in entries), default=_atom_time(latest))
    feed_id = f"urn:uuid:{uuid.uuid5(_ATOM_NAMESPACE, 'feed:' + first)}"
    return {"id": feed_id, "updated": newest, "entries": entries}


def _rules_entry(item: Latest, links: Links) -> Entry:
    """A release's entry (its figures), or one of its substantive rule changes'."""
    release, change = item.release, item.change
    assert release is not None
    href = f"releases/{release.key}.html"
    if change is None:
        return Entry(
            id=f"urn:uuid:{uuid.uuid5(_ATOM_NAMESPACE, 'release:' + release.key)}",
            title=f"{release.title}: {release.summary}",
            updated=_atom_time(item.day),
            href=href,
            summary=f"{release.title}: {release.summary}.",
            html=render("feed_release.html", release=release, change=None, links=links).strip(),
        )
    return Entry(
        id=f"urn:uuid:{uuid.uuid5(_ATOM_NAMESPACE, 'rule:' + change.group.group)}",
        title=f"{change.headline}: {short(change.group.text)}",
        updated=_atom_time(item.day),
        href=f"{href}#g-{change.group.group}",
        summary=f"{change.headline}, in the {release.title}.",
        html=render("feed_release.html", release=release, change=change, links=links).strip(),
    )
