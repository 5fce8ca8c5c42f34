"""Changesets: the changes of some runs, grouped, with the rule changes that explain them."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import false_if_null, strings
from pipeline.diffing.diff import ChangeType, Match
from pipeline.diffing.history import is_rule_change
from pipeline.diffing.oracle import KIND as ORACLE
from pipeline.diffing.oracle_text import edits
from pipeline.publishing.titles import title_at
from pipeline.text.words import counted

# A ruling change and a Comprehensive Rules change this close together, sharing a keyword,
# are linked: the 2024 suspend rulings (2024-02-02) and rule 702.62a (effective 2024-02-02).
LINK_WINDOW = dt.timedelta(days=45)
_KEYWORD_WORDS = 4


@dataclass(frozen=True, slots=True)
class Group:
    """One change, as it happened on one or more cards (or in the rules)."""

    group: str
    change: ChangeType
    rule_change: bool
    silent: bool
    old_text: str | None
    new_text: str | None
    old_date: dt.date | None
    new_date: dt.date | None
    old_rule_id: str | None
    new_rule_id: str | None
    similarity: float | None
    cards: tuple[tuple[str | None, str], ...]  # (card, source), sorted
    changes: int  # card-level changes in the group
    explained_by: tuple[str, ...] = ()  # rule changes that explain a ruling change
    lang: str | None = None  # the language of the text, where the dataset knows it
    match: str | None = None  # how an amendment's rulings were paired (diff.Match)
    replaced: tuple[str, ...] = ()  # a replacement: the removed texts NEW_TEXT now carries
    added: int = 0  # a replacement: the additions of NEW_TEXT it holds (beside `changes`)
    as_of: dt.date | None = None  # the as-of date of the (latest) version that showed it

    @property
    def is_replacement(self) -> bool:
        """Removed rulings shown with the added ruling that carries them."""
        return bool(self.replaced)

    @property
    def is_rule(self) -> bool:
        """A change of the Comprehensive Rules rather than of a card's rulings."""
        return self.old_rule_id is not None or self.new_rule_id is not None

    @property
    def date(self) -> dt.date | None:
        """When the change took effect: the new date, else the old one."""
        return self.new_date or self.old_date

    @property
    def when(self) -> dt.date | None:
        """When the data showed the change: its as-of date, else (older rows) its date."""
        return self.as_of or self.date

    @property
    def text(self) -> str:
        """The text the change is about: the new one, else the old one."""
        return self.new_text or self.old_text or ""


@dataclass(frozen=True, slots=True)
class StaleGroup:
    """Translations whose English original the runs amended or removed, grouped by it."""

    group: str  # the English change's group
    change: ChangeType
    original: str  # the English text they translate
    now: str | None  # what English says now (an amendment's or replacement's text)
    translations: tuple[tuple[str | None, str, str], ...]  # (card, lang, text)


@dataclass(frozen=True, slots=True)
class OracleEdit:
    """Edits of Oracle texts (diffing.oracle.edits) made to the same cards, and those cards.

    EDITS are (before, after) words with the card's own name written "~" (edits made to
    exactly the same cards are one: the two halves of the new suspend reminder); EXAMPLE
    is the first card's change, OLD_TEXT to NEW_TEXT, to show them in real words.
    """

    edits: tuple[tuple[str, str], ...]
    cards: tuple[str, ...]
    example: str
    old_text: str
    new_text: str
    new_date: dt.date | None

    @property
    def key(self) -> str:
        """A short digest of the edits: one run's groups never share an edit, so never a key."""
        return hashlib.sha256(repr(self.edits).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Changeset:
    """What changed in some runs: groups of changes, and the cards first seen.

    FIRST_SEEN counts the rulings (kind `ruling`) of each (card, source) read for the first
    time, a null card for rulings of no known card; FIRST_SEEN_RULES the rules and glossary
    entries of each release read for the first time, as (source, kind, count).
    """

    runs: tuple[int, ...]
    groups: tuple[Group, ...]
    first_seen: tuple[tuple[str | None, str, int], ...]  # (card, source, rulings)
    stale: tuple[StaleGroup, ...] = ()  # "Translations now out of date"
    first_seen_rules: tuple[tuple[str, str, int], ...] = ()  # (source, kind, count)
    oracle: tuple[OracleEdit, ...] = ()  # "Oracle changes": most cards first
    oracle_cards: int = 0  # the cards whose Oracle changed

    def count(self, change: ChangeType) -> int:
        """How many card-level changes of this type the groups hold."""
        held = sum(g.changes for g in self.groups if g.change is change)
        return held + (sum(g.added for g in self.groups) if change is ChangeType.ADDED else 0)

    def first_seen_summary(self) -> str:
        """The first sightings in words: "17 rulings first seen on 1 card; 2898 rules, …".

        Counted as `pipeline stats` counts: rulings on cards apart from rules and glossary
        entries, and no card for the rulings of no known card.
        """
        parts = []
        if self.first_seen:
            rulings = sum(n for _, _, n in self.first_seen)
            cards = len({card for card, _, _ in self.first_seen if card is not None})
            carded = sum(n for card, _, n in self.first_seen if card is not None)
            parts.append(f"{counted(rulings, 'ruling')} first seen on {counted(cards, 'card')}")
            if carded < rulings:
                parts[-1] += f", {rulings - carded} of no known card"
        if self.first_seen_rules:
            kinds = {
                k: sum(n for _, kind, n in self.first_seen_rules if kind == k)
                for _, k, _ in self.first_seen_rules
            }
            shown = ", ".join(kind_count(kind, n) for kind, n in kinds.items())
            parts.append(f"{shown} first seen")
        return "; ".join(parts)


# How the changelogs name each kind of row that is not a card's ruling.
_KIND_WORDS = {"rule": "rules", "glossary": "glossary entries"}


_KIND_WORD = {"rule": "rule", "glossary": "glossary entry"}


def kind_words(kind: str) -> str:
    """The plural a changelog uses for rows of KIND: "rules", "glossary entries"."""
    return _KIND_WORDS.get(kind, kind)


def kind_count(kind: str, count: int) -> str:
    """COUNT rows of KIND in words: "1 rule", "2898 rules", "1 glossary entry"."""
    return counted(count, _KIND_WORD.get(kind, kind), _KIND_WORDS.get(kind, kind))


def changeset(
    changes: pa.Table,
    runs: list[int],
    rule_titles: dict[str, str] | None = None,
    langs: dict[str, str] | None = None,
    rule_rows: pa.Table | None = None,
    *,
    kinds: dict[str, str] | None = None,
) -> Changeset:
    """Gather the changes of RUNS into groups: the same change on many cards is one group.

    RULE_TITLES maps rule numbers such as 702.62 to their titles ("Suspend"; a RuleTitles
    gives each rule change its section's title in the release that made it): with them,
    each ruling change names the rule changes (of any run) that explain it; RULE_ROWS,
    when given, are those rule changes (see is_rule_change), else CHANGES holds them. LANGS
    maps text hashes to languages, for the groups' `lang`; KINDS the text hashes of
    numbered rows to their kind (`rule`, `glossary`; see numbered_kinds), for the count of
    first sightings (a numbered row not in it is a rule).
    """
    picked = changes.filter(pc.is_in(changes["run"], value_set=pa.array(runs, pa.int64())))
    is_oracle = false_if_null(pc.equal(picked["kind"].cast(pa.string()), pa.scalar(ORACLE)))
    oracle = picked.filter(is_oracle)
    picked = picked.filter(pc.invert(is_oracle))
    # First sightings are counted per (card, source), in Arrow: a first ingest has as many
    # of them as it read rulings, and the changelog only says how many each card had.
    seen_first = picked["first_seen"]
    firsts = picked.filter(seen_first)
    numbered = pc.is_valid(firsts["new_rule_id"])
    counts = (
        firsts.filter(pc.invert(numbered))
        .group_by(["card", "source"], use_threads=False)
        .aggregate([("run", "count")])
    )
    pairs = zip(counts["card"].to_pylist(), strings(counts["source"]), strict=True)
    first: dict[tuple[str | None, str], int] = {
        pair: int(n or 0) for pair, n in zip(pairs, counts["run_count"].to_pylist(), strict=True)
    }
    rules_first = _first_rules(firsts.filter(numbered), kinds or {})
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in picked.filter(pc.invert(seen_first)).to_pylist():
        grouped.setdefault(row["group"], []).append(row)
    rules = _rule_changes(changes if rule_rows is None else rule_rows, rule_titles or {})
    groups = [_explained(_group(members, langs or {}), rules) for members in grouped.values()]
    groups.sort(key=_group_order)
    seen = sorted(((c, s, n) for (c, s), n in first.items()), key=lambda t: _card_key(t[:2]))
    edits, cards = oracle_edits(oracle)
    return Changeset(tuple(sorted(runs)), tuple(groups), tuple(seen), (), rules_first, edits, cards)


def oracle_edits(changes: pa.Table) -> tuple[tuple[OracleEdit, ...], int]:
    """The Oracle CHANGES (kind oracle) as edits, most cards first; and how many cards.

    A card appears under each of its edits: the 2024 update reworded the self-references of
    some suspend cards as well as their reminder text.
    """
    found: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    cards = set()
    for row in sorted(changes.to_pylist(), key=lambda r: (r["card"] or "", r["source"])):
        cards.add(row["card"])
        names = str(row["card"] or "").split(" // ")
        for edit in edits(row["old_text"] or "", row["new_text"] or "", names):
            if not any(r["card"] == row["card"] for r in found[edit]):
                found[edit].append(row)
    together: dict[tuple[str, ...], list[tuple[str, str]]] = defaultdict(list)
    for edit, rows in found.items():
        together[tuple(str(r["card"]) for r in rows)].append(edit)
    made = []
    for named, made_together in together.items():
        rows = found[made_together[0]]
        made.append(
            OracleEdit(
                tuple(sorted(made_together)),
                named,
                named[0],
                rows[0]["old_text"] or "",
                rows[0]["new_text"] or "",
                max((r["new_date"] for r in rows if r["new_date"]), default=None),
            )
        )
    made.sort(key=lambda e: (-len(e.cards), e.edits))
    return tuple(made), len(cards)


def _first_rules(rows: pa.Table, kinds: dict[str, str]) -> tuple[tuple[str, str, int], ...]:
    """The first sightings of numbered rows (a release's rules), counted by (source, kind)."""
    found: Counter[tuple[str, str]] = Counter(
        (source, kinds.get(text_hash, "rule"))
        for source, text_hash in zip(
            strings(rows["source"]), strings(rows["new_text_hash"]), strict=True
        )
    )
    order = sorted(found.items(), key=lambda item: (item[0][0], item[0][1] != "rule", item[0][1]))
    return tuple((source, kind, n) for (source, kind), n in order)


def numbered_kinds(rulings: pa.Table) -> dict[str, str]:
    """The kind of each numbered row of RULINGS (a rule or a glossary entry), by text hash."""
    rows = rulings.select(["text_hash", "kind", "rule_id"])
    rows = rows.filter(pc.is_valid(rows["rule_id"]))
    return dict(zip(strings(rows["text_hash"]), strings(rows["kind"]), strict=True))


def stale_translations(
    changes: pa.Table, translations: pa.Table, texts: dict[str, str]
) -> tuple[StaleGroup, ...]:
    """The translations whose original CHANGES amended or removed, and that are not current.

    CHANGES are the runs' changes; TEXTS maps text hashes to texts (the rulings'). Grouped
    like the rule changes: one group per change of the English words, with every card's
    translations of them.
    """
    gone = {ChangeType.AMENDED.value, ChangeType.REMOVED.value}
    by_original: dict[str, dict[str, Any]] = {}
    for row in changes.filter(pc.invert(changes["first_seen"])).to_pylist():
        if row["change"] in gone and row["old_text_hash"]:
            by_original.setdefault(row["old_text_hash"], row)
    stale = translations.filter(pc.equal(translations["original_current"], pa.scalar(value=False)))
    members: dict[str, list[tuple[str | None, str, str]]] = {}
    for row in stale.to_pylist():
        change = by_original.get(row["original_text_hash"])
        if change is not None:
            text = texts.get(row["text_hash"], "")
            members.setdefault(row["original_text_hash"], []).append(
                (row["card"], row["lang"], text)
            )
    out = []
    for original, found in members.items():
        change = by_original[original]
        now = change["new_text"] or (texts.get(change["replaced_by"] or "") or None)
        english = change["old_text"] or texts.get(original, "")
        ordered = sorted(set(found), key=lambda t: (t[0] is None, t[0] or "", t[1], t[2]))
        out.append(
            StaleGroup(change["group"], ChangeType(change["change"]), english, now, tuple(ordered))
        )
    return tuple(sorted(out, key=lambda g: (g.original, g.group)))


def _group_order(g: Group) -> tuple[object, ...]:
    order = list(ChangeType)
    return (
        g.is_rule,
        not g.rule_change,
        order.index(g.change),
        _card_key(g.cards[0]),
        g.old_rule_id or g.new_rule_id or "",
        g.text,
        g.group,
    )


def _card_key(pair: tuple[str | None, str]) -> tuple[bool, str, str]:
    return (pair[0] is None, pair[0] or "", pair[1])


def _group(members: list[dict[str, Any]], langs: dict[str, str]) -> Group:
    if any(m["match"] == Match.CONTAINED.value for m in members):
        return _replacement(members, langs)
    head = members[0]
    cards = tuple(sorted({(m["card"], m["source"]) for m in members}, key=_card_key))
    return Group(
        group=head["group"],
        change=ChangeType(head["change"]),
        rule_change=any(m["rule_change"] for m in members),
        silent=all(m["silent"] for m in members),
        old_text=head["old_text"],
        new_text=head["new_text"],
        old_date=head["old_date"],
        new_date=head["new_date"],
        old_rule_id=head["old_rule_id"],
        new_rule_id=head["new_rule_id"],
        similarity=head["similarity"],
        cards=cards,
        changes=len(members),
        lang=langs.get(head["new_text_hash"] or head["old_text_hash"]),
        match=head["match"],
        as_of=_latest_as_of(members),
    )


def _latest_as_of(members: list[dict[str, Any]]) -> dt.date | None:
    dates = [m["as_of"] for m in members if m["as_of"] is not None]
    return max(dates) if dates else None


def _replacement(members: list[dict[str, Any]], langs: dict[str, str]) -> Group:
    """Removed rulings and the added one that carries them, on every card: one group."""
    removed = [m for m in members if m["change"] == ChangeType.REMOVED.value]
    carriers = [m for m in members if m["change"] == ChangeType.ADDED.value]
    head, carrier = (removed or members)[0], (carriers or [{}])[0]
    texts = _wordings(removed)
    return Group(
        group=head["group"],
        change=ChangeType.REMOVED,
        rule_change=True,
        silent=False,
        old_text=texts[0] if texts else None,
        new_text=carrier.get("new_text"),
        old_date=head["old_date"],
        new_date=carrier.get("new_date"),
        old_rule_id=None,
        new_rule_id=None,
        similarity=None,
        cards=tuple(sorted({(m["card"], m["source"]) for m in members}, key=_card_key)),
        changes=len(removed),
        lang=langs.get(carrier.get("new_text_hash") or head["old_text_hash"]),
        match=Match.CONTAINED.value,
        replaced=tuple(texts),
        added=len(carriers),
        as_of=_latest_as_of(members),
    )


def _wordings(removed: list[dict[str, Any]]) -> list[str]:
    """One wording of each removed ruling, by key: a ruling is listed once.

    Curly and straight quotes print one ruling (one key) two ways: the wording shown is the
    one most of its rows print (the least of those, for a tie).
    """
    printed: dict[str, Counter[str]] = defaultdict(Counter)
    for m in removed:
        if m["old_text"]:
            printed[m["old_text_hash"] or m["old_text"]][m["old_text"]] += 1
    shown = [min(c, key=lambda text: (-c[text], text)) for c in printed.values()]
    return sorted(shown)


@dataclass(frozen=True, slots=True)
class _RuleChange:
    rule_id: str
    change: str
    date: dt.date
    keyword: re.Pattern[str]


def _rule_changes(changes: pa.Table, titles: dict[str, str]) -> list[_RuleChange]:
    """Changes of keyword rules (702.62a under 702.62 "Suspend"), with their keyword.

    A release read for the first time changes nothing: its rules are first sightings.
    """
    found = []
    for row in changes.filter(is_rule_change(changes)).to_pylist():
        rule_id = row["new_rule_id"] or row["old_rule_id"]
        parent = re.match(r"\d{3}\.\d+", rule_id)
        date = row["new_date"] or row["old_date"]
        # The title in the release that made the change (titles.py): a number is reused.
        title = title_at(titles, parent.group(), row.get("as_of") or date) if parent else None
        if not title or not date or len(title.split()) > _KEYWORD_WORDS:
            continue
        if row["change"] != ChangeType.RENUMBERED.value:
            keyword = re.compile(rf"\b{re.escape(title)}\b", re.IGNORECASE)
            found.append(_RuleChange(rule_id, row["change"], date, keyword))
    return found


def _explained(group: Group, rules: list[_RuleChange]) -> Group:
    """Name the rule changes that share a keyword with a ruling change and fall near it."""
    date = group.date
    if group.is_rule or not group.rule_change or date is None:
        return group
    texts = " ".join([group.old_text or "", group.new_text or "", *group.replaced])
    links = sorted(
        {
            f"{r.rule_id} ({r.change}, effective {r.date})"
            for r in rules
            if abs(r.date - date) <= LINK_WINDOW and r.keyword.search(texts)
        }
    )
    return replace(group, explained_by=tuple(links)) if links else group
