"""What a site is made of: one pinned version of the dataset, read once, then page by page.

The tables every build needs (rulings, translations, state, runs and every run's changes)
are read whole, in Arrow; the sightings, which grow with every run, only for the cards and
rules whose pages are to be made (SiteData.iter_histories, rule_histories) and for the
runs a rebuild has not seen (touched).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Mask, strings
from pipeline.diffing.history import HistoryEntry, history_of, is_rule_change
from pipeline.folding.merge import known_languages
from pipeline.folding.names import renamed
from pipeline.publishing.changelog import (
    Changeset,
    Group,
    changeset,
    numbered_kinds,
    stale_translations,
)
from pipeline.publishing.dataset import (
    cards_sightings,
    english_of,
    require_dataset,
    rule_histories,
    rule_titles,
    translated_names,
)
from pipeline.publishing.sections import section_titles
from pipeline.publishing.site_oracle import Oracle, oracle_cards
from pipeline.publishing.site_tables import (
    citations,
    current_counts,
    freshness,
    glossary_files,
    in_force_keys,
    languages_of,
    late_rows,
    latest_versions,
    needed_texts,
    plain_rows,
    plain_table,
    rule_files,
    rule_texts,
    text_column,
)
from pipeline.publishing.slugs import slugs
from pipeline.publishing.titles import release_titles
from pipeline.publishing.today import weighed_rulings
from pipeline.schema import TABLES, in_memory
from pipeline.storage import store

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Iterator, Mapping
    from pathlib import Path

_HISTORY = ["run", "card", "source", "text_hash", "effective_date", "as_of", "text", "rule_id"]
_TITLE = 60  # characters: a section title is a few words
_RULINGS = [
    "text_hash",
    "card",
    "card_printed",
    "effective_date",
    "rule_id",
    "text",
    "lang",
    "kind",
    "current",
]


@dataclass(frozen=True, slots=True)
class CardRow:
    """A card as the index lists it."""

    name: str
    slug: str
    rulings: int  # its rulings in force today, as its page counts them (translations apart)
    langs: tuple[str, ...]  # the languages of its current rulings
    rule_change: bool  # some run changed its rulings with a rule change
    stale: bool  # some translation of its rulings translates an English ruling gone since


@dataclass(frozen=True, slots=True)
class Run:
    """One run as its page shows it: the run record and its changeset."""

    run: int
    started_at: dt.datetime
    status: str
    files_read: int
    files_skipped: int
    files_rejected: int
    rulings_read: int
    new_keys: int
    inputs: tuple[str, ...]  # the files it read, as the dataset names them (source_path)
    changeset: Changeset
    rejected: tuple[str, ...] = ()  # the files it rejected, named so


@dataclass(frozen=True, slots=True)
class Thread:
    """One group of changes followed over every run that showed it (a feed entry)."""

    group: Group  # as the latest run that showed it grouped it
    runs: tuple[int, ...]
    cards: tuple[tuple[str | None, str], ...]  # over all those runs

    @property
    def updated(self) -> dt.date | None:
        """The data's date of its latest showing: the as-of date, else its ruling's date."""
        return self.group.when


@dataclass(frozen=True, slots=True)
class SiteData:
    """The tables of one version, read and arranged for the pages."""

    version: store.Version
    runs: tuple[Run, ...]
    cards: tuple[CardRow, ...]
    slug_of: dict[str, str]
    rules: dict[str, str]  # each rule number held, with its current (else latest) text
    rule_files: dict[str, str]  # each rule number's page file name (without .html)
    glossary: dict[str, str]  # each glossary term held, with its current (else latest) text
    glossary_files: dict[str, str]  # each glossary term's page file name (without .html)
    sections: dict[str, str]  # each three-digit section of the rules with its title ("" if unknown)
    titles: dict[str, str]  # section numbers to titles: 702.62 -> Suspend
    threads: dict[str, Thread]  # the rule-change groups of card rulings, by group id
    card_threads: dict[str, tuple[str, ...]]  # each card's rule-change groups
    translations: dict[str, tuple[dict[str, Any], ...]]  # each card's translation rows
    # card -> (source, as of, freshest); its rulings in force as (text hash, date)
    freshness: dict[str, tuple[tuple[str, dt.date | None, bool], ...]]
    in_force: dict[str, frozenset[tuple[str, dt.date | None]]]
    cited: dict[str, tuple[str, ...]]  # card -> rule numbers its rulings cite
    texts: dict[str, str]  # the texts of originals, translations and replacements, by hash
    events: pa.Table  # every run's changes but first sightings, plain types
    rulings: pa.Table  # every ruling, rule and glossary entry, weighed (today.py)
    translated_names: Mapping[str, str]  # each translated name with its card's English name
    oracle: dict[str, Oracle] = field(default_factory=dict)  # each card's Oracle, where known

    def iter_histories(
        self, cards: set[str]
    ) -> Iterator[tuple[str, list[HistoryEntry], dict[tuple[str, str], str]]]:
        """Each of CARDS (by name) with every version of its rulings and their languages.

        One pass over the sightings picks the cards' rows; they are sorted by card in
        Arrow and become Python rows one card at a time, so a full build of 30,000 cards
        never holds every sighting as Python objects at once.
        """
        if not cards:
            return
        sightings = cards_sightings(self.version, cards).select([*_HISTORY, "lang"])
        order = pc.sort_indices(text_column(sightings, "card"))
        sightings = plain_table(sightings.take(order)).combine_chunks()
        names = strings(sightings["card"])
        start = 0
        while start < len(names):
            name, end = names[start], start
            while end < len(names) and names[end] == name:
                end += 1
            rows = sightings.slice(start, end - start).to_pylist()
            yield name, history_of(rows), {(name, r["text_hash"]): r["lang"] for r in rows}
            start = end

    def card_events(self, cards: set[str]) -> dict[str, list[dict[str, Any]]]:
        """The changes (not first sightings) of CARDS in every run, in run order."""
        wanted = pa.array(sorted(cards), pa.string())
        found: dict[str, list[dict[str, Any]]] = defaultdict(list)
        mine = self.events.filter(pc.is_in(self.events["card"], value_set=wanted))
        for row in mine.to_pylist():
            found[row["card"]].append(row)
        return found

    def rule_histories(self, kind: str = "rule") -> dict[str, list[HistoryEntry]]:
        """Every version of every numbered rule (glossary entry: KIND), by number (term)."""
        return rule_histories(self.version, kind)

    def touched(self, since: int) -> tuple[set[str], bool]:
        """The cards whose history runs after SINCE may have changed, and whether rules did.

        A card's history changes only with a change of it (first sightings included) or a
        sighting older than the state's (a late version, read but not compared); a card
        read again as it was changes nothing but its source's as-of date, which the
        pages' other inputs hold (freshness).
        """
        runs = [r.run for r in self.runs if r.run > since]
        if not runs:
            return set(), False
        changes = renamed(
            self.version.table("changes", runs=runs).select(["card"]), english_of(self.version)
        )
        cards = set(strings(pc.unique(text_column(changes, "card")).drop_null()))
        latest = latest_versions(self.version.table("state"))
        rules = []

        def late(part: pa.Table) -> Mask:
            # Each part is filtered as it is read: a run that read every card again keeps
            # only its late rows, and only theirs get their texts back.
            rules.append(pc.any(pc.equal(text_column(part, "kind"), pa.scalar("rule"))).as_py())
            return late_rows(part, latest)

        read = self.version.table("sightings", runs=runs, where=late)
        return cards | set(strings(pc.unique(text_column(read, "card")).drop_null())), any(rules)


def load_site(out: Path) -> SiteData:
    """Read the version in force of the dataset in OUT, arranged for a site's pages."""
    require_dataset(out)
    version = store.open_version(out)
    rulings = weighed_rulings(version).select(_RULINGS)
    parts = list(version.parts("changes"))
    later: list[pa.Table] = [p.filter(pc.invert(p["first_seen"])) for p in parts]
    events = pa.concat_tables([in_memory("changes").empty_table(), *later])
    english = english_of(version)
    events = renamed(events.cast(TABLES["changes"]), english)
    translations = plain_rows(version.table("translations"), TABLES["translations"].names)
    texts = needed_texts(rulings, events, translations)
    runs = _runs(
        version, parts, rulings=rulings, events=events, translations=translations, texts=texts
    )
    slug_of = slugs(strings(pc.unique(text_column(rulings, "card")).drop_null()))
    threads, card_threads = _threads(runs)
    by_card: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in translations:
        if row["card"] is not None:
            by_card[row["card"]].append(row)
    stale = {c for c, rows in by_card.items() if any(r["original_current"] is False for r in rows)}
    ruled = set(strings(events.filter(events["rule_change"])["card"].drop_null()))
    counts = current_counts(rulings, {r["text_hash"] for r in translations})
    cards = tuple(
        CardRow(name, slug_of[name], *counts.get(name, (0, ())), name in ruled, name in stale)
        for name in sorted(slug_of)
    )
    rules = rule_texts(rulings)
    glossary = rule_texts(rulings, "glossary")
    return SiteData(
        version=version,
        runs=tuple(runs),
        cards=cards,
        slug_of=slug_of,
        rules=rules,
        rule_files=rule_files(rules),
        glossary=glossary,
        glossary_files=glossary_files(glossary),
        sections=section_titles(rules, [*rules.values(), *glossary.values()]),
        titles={n: t for n, t in rule_titles(rulings).items() if _is_title(t)},
        threads=threads,
        card_threads=card_threads,
        translations={card: tuple(rows) for card, rows in by_card.items()},
        freshness=freshness(rulings, version.table("state")),
        in_force=in_force_keys(rulings),
        cited=citations(rulings),
        texts=texts,
        events=events,
        rulings=rulings,
        translated_names=translated_names(version),
        oracle=oracle_cards(version, slug_of),
    )


def _runs(
    version: store.Version,
    parts: list[pa.Table],
    *,
    rulings: pa.Table,
    events: pa.Table,
    translations: list[dict[str, Any]],
    texts: dict[str, str],
) -> list[Run]:
    """Each run with its changeset, as `pipeline changelog --run N` computes it."""
    titles, kinds = release_titles(version, rulings), numbered_kinds(rulings)
    langs = known_languages(languages_of(rulings, events))
    rules_changed = events.filter(is_rule_change(events))
    linked = pa.Table.from_pylist(translations, schema=TABLES["translations"])
    held = {int(p["run"][0].as_py()): p for p in parts if p.num_rows}
    empty = in_memory("changes").empty_table()
    read = _files_read(version)
    runs = []
    for r in sorted(version.table("runs").to_pylist(), key=lambda r: r["run"]):
        part = held.get(r["run"], empty)
        cs = changeset(part, [r["run"]], titles, langs, rules_changed, kinds=kinds)
        if translations:
            cs = replace(cs, stale=stale_translations(part, linked, texts))
        runs.append(
            Run(
                run=r["run"],
                started_at=r["started_at"],
                status=r["status"],
                files_read=r["files_read"],
                files_skipped=r["files_skipped"],
                files_rejected=r["files_rejected"],
                rulings_read=r["rulings_read"],
                new_keys=r["new_keys"],
                inputs=read.get((r["run"], "stored"), ()),
                changeset=cs,
                rejected=read.get((r["run"], "rejected"), ()),
            )
        )
    return runs


def _is_title(text: str) -> bool:
    """Whether a section number's text is a title ("Suspend"), not a rule (722.1's sentence)."""
    return len(text) <= _TITLE and not text.rstrip().endswith((".", ":", ")"))


def _files_read(version: store.Version) -> dict[tuple[int, str], tuple[str, ...]]:
    """The files of each (run, status), by their source_path: relative to their raw root.

    Never the run's `inputs` (the paths it was given), which are the building machine's.
    """
    files = version.table("files").select(["run", "source_path", "status"])
    found: dict[tuple[int, str], list[str]] = defaultdict(list)
    for row in files.to_pylist():
        found[(row["run"], row["status"])].append(row["source_path"])
    return {key: tuple(sorted(paths)) for key, paths in found.items()}


def _threads(runs: list[Run]) -> tuple[dict[str, Thread], dict[str, tuple[str, ...]]]:
    """The rule-change groups of card rulings over all runs, and each card's."""
    threads: dict[str, Thread] = {}
    for run in runs:
        for g in run.changeset.groups:
            if g.is_rule or not g.rule_change:
                continue
            known = threads.get(g.group)
            cards = set(g.cards) | set(known.cards if known else ())
            ordered = tuple(sorted(cards, key=lambda c: (c[0] is None, c[0] or "", c[1])))
            threads[g.group] = Thread(g, (*(known.runs if known else ()), run.run), ordered)
    per_card: dict[str, list[str]] = defaultdict(list)
    for group_id, thread in sorted(threads.items()):
        for card in dict.fromkeys(c for c, _ in thread.cards if c is not None):
            per_card[card].append(group_id)
    return threads, {card: tuple(ids) for card, ids in per_card.items()}
