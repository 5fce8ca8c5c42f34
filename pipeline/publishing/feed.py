"""The site's Atom feed (RFC 4287) and the home page's latest changes, ids that never change.

An entry per rule-change group of card rulings, per substantive change of the
Comprehensive Rules (its title names the rule), per release (its figures), and per group
of Oracle edits a run found (its title names the edit and how many cards it made).
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pipeline.publishing.render import title
from pipeline.publishing.templating import Links, render

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pipeline.publishing.changelog import OracleEdit
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
    """One item of the latest changes: a ruling change, a release, a rule change, Oracle edits.

    A group of Oracle edits comes with the run that found it.
    """

    day: dt.date
    thread: Thread | None = None
    release: Release | None = None
    change: RuleChange | None = None
    oracle: OracleEdit | None = None
    run: int = 0
    more: int = 0  # the run's groups of Oracle edits left out after this one (home page)


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
    for run in data.runs:
        edits = run.changeset.oracle
        for n, e in enumerate(reversed(edits)):  # most cards first, once reversed below
            day = e.new_date or started[run.run]
            items.append(((day, run.run, 3, f"{n:06d}"), Latest(day, oracle=e, run=run.run)))
    return [item for _, item in sorted(items, key=lambda i: i[0], reverse=True)]


def on_home(items: list[Latest], count: int, oracle: int) -> list[Latest]:
    """The first COUNT of ITEMS, at most ORACLE groups of Oracle edits of each run.

    A run that reworded hundreds of cards would fill the home page alone: the last group
    shown of such a run says how many more its page lists.
    """
    groups: dict[int, int] = {}
    for item in items:
        if item.oracle is not None:
            groups[item.run] = groups.get(item.run, 0) + 1
    shown: list[Latest] = []
    seen: dict[int, int] = {}
    for item in items:
        if item.oracle is not None:
            seen[item.run] = seen.get(item.run, 0) + 1
            if seen[item.run] > oracle:
                continue
            if seen[item.run] == oracle:
                item = replace(item, more=groups[item.run] - oracle)  # noqa: PLW2901 - marked
        shown.append(item)
        if len(shown) == count:
            break
    return shown


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
        if item.oracle is not None:
            entries.append(_oracle_entry(item, links))
            continue
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


def oracle_title(edit: OracleEdit) -> str:
    """A group of Oracle edits in words: the edit, and the card or how many cards it made."""
    words = "; ".join(
        f"\u201c{before}\u201d \u2192 \u201c{after}\u201d" for before, after in edit.edits
    )
    cards = edit.cards[0] if len(edit.cards) == 1 else f"{len(edit.cards)} cards"
    return f"Oracle text of {cards}: {short(words)}"


def _oracle_entry(item: Latest, links: Links) -> Entry:
    """One group of Oracle edits of a run: its id the run and the edits, never the build."""
    edit = item.oracle
    assert edit is not None
    named = ", ".join(edit.cards[:_NAMED]) + (" and more" if len(edit.cards) > _NAMED else "")
    return Entry(
        id=f"urn:uuid:{uuid.uuid5(_ATOM_NAMESPACE, f'oracle:{item.run}:{edit.key}')}",
        title=oracle_title(edit),
        updated=_atom_time(item.day),
        href=f"runs/{item.run}.html#o-{edit.key}",
        summary=f"{oracle_title(edit)}; on {named}, in run {item.run}.",
        html=render("feed_oracle.html", edit=edit, run=item.run, links=links).strip(),
    )
