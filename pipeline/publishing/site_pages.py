"""What each page of the site says, as plain frozen records: the templates only lay it out.

A page's record is a pure function of the data it shows, so its repr is the digest of
its inputs (page_digest): equal records give equal pages, and a rebuild renders only the
pages whose record changed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pipeline.diffing.diff import ChangeType
from pipeline.publishing.dataset import original_fates
from pipeline.publishing.sections import CHAPTERS

if TYPE_CHECKING:
    from pipeline.diffing.history import HistoryEntry
    from pipeline.publishing.site_data import SiteData, Thread
    from pipeline.publishing.site_oracle import Oracle

_NO_DATE = dt.date.min


def page_digest(record: object) -> str:
    """A short digest of what a page shows (its record's repr: dates, texts, tuples)."""
    return hashlib.sha256(repr(record).encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class Source:
    """One source of a card, with the as-of date of its latest version."""

    name: str
    as_of: dt.date | None
    freshest: bool


@dataclass(frozen=True, slots=True)
class Current:
    """One of a card's rulings today, with every source that still carries it."""

    text: str
    lang: str
    date: dt.date | None  # as the freshest source carrying it dates it
    sources: tuple[tuple[str, dt.date | None], ...]  # (source, its date there)
    fresh: bool  # a freshest source carries it
    since: dt.date | None  # the as-of date of the version it first came in
    since_run: int
    amended: str | None = None  # the text it amended, where the last run made it so
    latest: bool = False  # it came in (new or amended) with the card's latest change

    @property
    def where(self) -> str:
        """The sources that carry it, each with its date there where that differs."""
        return "; ".join(
            source if date == self.date else f"{source} (dated {date or 'undated'})"
            for source, date in self.sources
        )


@dataclass(frozen=True, slots=True)
class Earlier:
    """A version of a ruling that its source no longer carries, and what became of it."""

    text: str
    lang: str
    date: dt.date | None
    source: str  # the sources that carried it, "; " between them
    since: dt.date | None
    since_run: int
    until: dt.date | None
    until_run: int
    fate: str  # amended, removed, replaced, redated, gone
    now: str | None  # an amendment's new text, or the ruling that replaced it
    now_date: dt.date | None
    text_hash: str = ""


@dataclass(frozen=True, slots=True)
class Translated:
    """One of a card's translations, beside the English ruling it translates."""

    text: str
    lang: str
    source: str
    date: dt.date | None
    original: str | None
    current: bool | None  # whether the English original is current (None: no original)
    fate: str | None  # when the original went ("amended (as of …, run 3)")


@dataclass(frozen=True, slots=True)
class CardPage:
    """Everything a card's page shows."""

    name: str
    slug: str
    sources: tuple[Source, ...]
    current: tuple[Current, ...]
    earlier: tuple[Earlier, ...]
    threads: tuple[Thread, ...]
    translations: tuple[Translated, ...]
    cited: tuple[str, ...]
    links: tuple[tuple[str, str | None], ...]  # the cards and rules it links, and where
    redated: tuple[Earlier, ...] = ()  # versions only re-dated, folded into one line
    last_run: int = 0  # the latest run that changed the card (0: none since first seen)
    oracle: Oracle | None = None  # its Oracle text and history, where the dataset has the card

    @property
    def fresh(self) -> tuple[Current, ...]:
        """The rulings a freshest source carries: today's."""
        return tuple(c for c in self.current if c.fresh)

    @property
    def stale_only(self) -> tuple[Current, ...]:
        """The rulings only a staler source still carries."""
        return tuple(c for c in self.current if not c.fresh)


def card_context(data: SiteData, name: str) -> str:
    """A digest of what a card's page takes from outside its own history.

    Its Oracle text and history, its sources' as-of dates, its translations' rows, the
    rule-change groups it is in (their cards and the rule changes that explain them), the
    rules it cites that have a page, and the pages of the cards it links: what a run that
    does not change the card's rulings may still change on its page.
    """
    threads = [data.threads[g] for g in data.card_threads.get(name, ())]
    linked = sorted({c for t in threads for c, _ in t.cards if c})
    return page_digest(
        (
            data.slug_of.get(name),
            data.freshness.get(name),
            sorted(data.in_force.get(name, ()), key=repr),
            data.translations.get(name),
            threads,
            [(c, data.slug_of.get(c)) for c in linked],
            [(r, r in data.rules) for r in data.cited.get(name, ())],
            data.oracle.get(name),
        )
    )


def card_page(
    data: SiteData,
    name: str,
    history: list[HistoryEntry],
    events: list[dict[str, Any]],
    langs: dict[tuple[str, str], str],
) -> CardPage:
    """The record of card NAME's page, from its HISTORY, its change EVENTS and LANGS."""
    sources = tuple(Source(s, d, fresh) for s, d, fresh in data.freshness.get(name, ()))
    sources = tuple(sorted(sources, key=lambda s: s.as_of or _NO_DATE, reverse=True))
    freshest = {s.name for s in sources if s.freshest}
    in_force = data.in_force.get(name, frozenset())
    linked = {r["text_hash"]: r for r in data.translations.get(name, ())}
    fates = original_fates(events, {r["original_text_hash"] for r in linked.values()} - {None})
    current: dict[str, list[HistoryEntry]] = defaultdict(list)
    earlier, translated = [], []
    for entry in history:
        lang = langs.get((name, entry.text_hash), "und")
        if entry.disappeared is not None:
            earlier.append(_earlier(entry, lang, events, data.texts))
        elif entry.text_hash in linked:
            translated.append(_translated(entry, lang, linked[entry.text_hash], data, fates))
        else:
            current[entry.text_hash].append(entry)
    # "New" is of the card's own latest change, not of the dataset's last run: a run that
    # leaves the card alone leaves its page alone (card_context need not hold the run).
    last = max((e["run"] for e in events), default=0)
    amended = {
        (e["new_text_hash"], e["run"]): e["old_text"]
        for e in events
        if e["change"] == ChangeType.AMENDED.value and e["run"] == last
    }
    rulings = [
        _current(held, langs.get((name, h), "und"), freshest, in_force, (last, amended))
        for h, held in current.items()
    ]
    rulings.sort(key=lambda c: (not c.fresh, c.date or _NO_DATE, c.text))
    earlier = _one_per_ruling(earlier)
    redated = sorted(
        (e for e in earlier if e.fate == ChangeType.REDATED.value),
        key=lambda e: (e.until or _NO_DATE, e.until_run, e.text),
        reverse=True,
    )
    earlier = [e for e in earlier if e.fate != ChangeType.REDATED.value]
    earlier.sort(key=lambda e: (e.source, e.text, e.date or _NO_DATE))
    earlier.sort(key=lambda e: (e.until or _NO_DATE, e.until_run), reverse=True)  # newest first
    threads = tuple(data.threads[g] for g in data.card_threads.get(name, ()))
    threads = tuple(
        sorted(threads, key=lambda t: (t.updated or _NO_DATE, t.group.group), reverse=True)
    )
    cited = data.cited.get(name, ())  # from every version of its rulings
    others = sorted({c for t in threads for c, _ in t.cards if c and c != name})
    links = (
        *((c, data.slug_of.get(c)) for c in others),
        *((r, data.rule_files.get(r)) for r in cited),
    )
    return CardPage(
        name,
        data.slug_of[name],
        sources,
        tuple(rulings),
        tuple(earlier),
        threads,
        tuple(sorted(translated, key=lambda t: (t.lang, t.date or _NO_DATE, t.text))),
        cited,
        links,
        tuple(redated),
        last,
        data.oracle.get(name),
    )


def _current(
    held: list[HistoryEntry],
    lang: str,
    freshest: set[str],
    in_force: frozenset[tuple[str, dt.date | None]],
    last: tuple[int, dict[tuple[str, int], str]],
) -> Current:
    """One ruling today, from its current entries (one per source that carries it).

    It is fresh when in force (IN_FORCE holds the card's keys that are); the date shown is
    a freshest source's (FRESHEST), where one carries it. LAST is the card's latest change's
    run (0: none) and the texts its amendments replaced, by (new text hash, run).
    """
    by_source = sorted({(e.source, e.effective_date) for e in held})
    fresh = [e for e in held if e.source in freshest]
    shown = max(fresh or held, key=lambda e: (e.as_of or _NO_DATE, e.effective_date or _NO_DATE))
    first = min(held, key=lambda e: (e.as_of or _NO_DATE, e.appeared))
    now = any((e.text_hash, e.effective_date) in in_force for e in held)
    run, amended = last
    return Current(
        shown.text,
        lang,
        shown.effective_date,
        tuple(by_source),
        now,
        first.as_of,
        first.appeared,
        amended.get((shown.text_hash, run)) if first.appeared == run else None,
        bool(run) and first.appeared == run,
    )


def _earlier(
    entry: HistoryEntry, lang: str, events: list[dict[str, Any]], texts: dict[str, str]
) -> Earlier:
    """A gone version, with the change that ended it (the run it went in, else the first)."""
    ends = [
        e
        for e in events
        if (e["source"], e["old_text_hash"], e["old_date"])
        == (entry.source, entry.text_hash, entry.effective_date)
    ]
    end = next((e for e in ends if e["run"] == entry.disappeared), ends[0] if ends else None)
    fate, now, now_date = "gone", None, None
    if end is not None:
        fate, now_date = end["change"], end["new_date"]
        now = end["new_text"]
        if end["change"] == ChangeType.REMOVED.value and end["replaced_by"]:
            fate, now = "replaced", texts.get(end["replaced_by"])
    return Earlier(
        entry.text,
        lang,
        entry.effective_date,
        entry.source,
        entry.as_of,
        entry.appeared,
        entry.gone_as_of,
        entry.disappeared or 0,
        fate,
        now,
        now_date,
        entry.text_hash,
    )


def _one_per_ruling(earlier: list[Earlier]) -> list[Earlier]:
    """The gone versions, one per ruling that went the same way in the same run.

    Two sources that print one ruling two ways (curly and straight quotes) and drop it in
    one run show it once, naming both; the wording shown is the least, so rebuilds agree.
    """
    alike: dict[tuple[object, ...], list[Earlier]] = defaultdict(list)
    for e in earlier:
        alike[(e.text_hash, e.date, e.fate, e.now, e.now_date, e.until_run)].append(e)
    merged = []
    for versions in alike.values():
        first = min(versions, key=lambda e: (e.since or _NO_DATE, e.since_run, e.text))
        sources = "; ".join(sorted({e.source for e in versions}))
        merged.append(replace(first, source=sources, text=min(e.text for e in versions)))
    return merged


def _translated(
    entry: HistoryEntry, lang: str, link: dict[str, Any], data: SiteData, fates: dict[str, str]
) -> Translated:
    original = link["original_text_hash"]
    fate = None
    if original is not None and link["original_current"] is False:
        fate = fates.get(original, "not current")
    return Translated(
        entry.text,
        lang if lang != "und" else link["lang"],
        entry.source,
        entry.effective_date,
        data.texts.get(original) if original else None,
        None if original is None else bool(link["original_current"]),
        fate,
    )


@dataclass(frozen=True, slots=True)
class RuleVersion:
    """One version of a rule's text, in the releases that held it."""

    text: str
    previous: str | None  # the text it amended (for a word diff), if it came as an amendment
    date: dt.date | None
    source: str
    since: dt.date | None
    since_run: int
    until: dt.date | None
    until_run: int | None
    current: bool


@dataclass(frozen=True, slots=True)
class RuleEvent:
    """A change of a rule: amended, renumbered (from or to another number), added, removed."""

    what: str
    run: int
    as_of: dt.date | None
    other: str | None  # the number it was renumbered from or to

    @property
    def release(self) -> str:
        """The key of the release page that lists it (site_releases.Release.key)."""
        return self.as_of.isoformat() if self.as_of else f"run-{self.run}"


@dataclass(frozen=True, slots=True)
class RulePage:
    """Everything a rule's page shows."""

    rule_id: str
    title: str | None  # its section's title (702.62a: Suspend)
    section: str | None
    versions: tuple[RuleVersion, ...]
    changes: tuple[RuleEvent, ...]
    explains: tuple[Thread, ...]
    citing: tuple[str, ...]
    links: tuple[tuple[str, str | None], ...]
    chapter: tuple[str, str] | None = None  # ("7", "Additional Rules")
    part: tuple[str, str] | None = None  # its three-digit section: ("702", "Keyword Abilities")


def rule_context(data: SiteData, rule_id: str, citing: tuple[str, ...]) -> str:
    """A digest of what a rule's page takes from outside the rules' own history."""
    explains = explaining(data, rule_id)
    return page_digest(
        (data.rule_files.get(rule_id), explains, [(c, data.slug_of.get(c)) for c in citing])
    )


def explaining(data: SiteData, rule_id: str) -> tuple[Thread, ...]:
    """The rule-change groups of card rulings a change of RULE_ID explains."""
    found = [
        t
        for t in data.threads.values()
        if any(e.split(" ", 1)[0] == rule_id for e in t.group.explained_by)
    ]
    return tuple(sorted(found, key=lambda t: (t.updated or _NO_DATE, t.group.group), reverse=True))


def rule_page(
    data: SiteData,
    rule_id: str,
    history: list[HistoryEntry],
    changes: list[dict[str, Any]],
    citing: tuple[str, ...],
) -> RulePage:
    """The record of rule RULE_ID's page, from its HISTORY, its CHANGES and the cards CITING it."""
    amended = {
        (r["new_text_hash"], r["run"]): r["old_text"]
        for r in changes
        if r["change"] == ChangeType.AMENDED.value and r["new_rule_id"] == rule_id
    }
    versions = [
        RuleVersion(
            entry.text,
            amended.get((entry.text_hash, entry.appeared)),
            entry.effective_date,
            entry.source,
            entry.as_of,
            entry.appeared,
            entry.gone_as_of,
            entry.disappeared,
            entry.disappeared is None,
        )
        for entry in history
    ]
    events = []
    for row in changes:
        what, other = row["change"], None
        if row["change"] == ChangeType.RENUMBERED.value:
            to_here = row["new_rule_id"] == rule_id
            what = "renumbered from" if to_here else "renumbered to"
            other = row["old_rule_id"] if to_here else row["new_rule_id"]
        events.append(RuleEvent(what, row["run"], row["as_of"], other))
    section = _section(rule_id)
    title = data.titles.get(section or rule_id)
    explains = explaining(data, rule_id)
    linked = [r for r in (section, *(e.other for e in events)) if r]
    links = (
        *((r, data.rule_files.get(r)) for r in linked),
        *((c, data.slug_of.get(c)) for c in citing),
    )
    part = rule_id.split(".", 1)[0] if rule_id[:1].isdigit() else None
    return RulePage(
        rule_id,
        title,
        section if section != rule_id else None,
        tuple(versions),
        tuple(events),
        explains,
        citing,
        links,
        (part[0], CHAPTERS.get(part[0], "")) if part else None,
        (part, data.sections.get(part, "")) if part else None,
    )


def _section(rule_id: str) -> str | None:
    """The section a rule is under: 702.62 for 702.62a (None for a section, a glossary term)."""
    if not rule_id[:1].isdigit():
        return None
    head = rule_id.rstrip("abcdefghijklmnopqrstuvwxyz")
    return head if head != rule_id else None
