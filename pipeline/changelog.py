"""Changesets read from changes.parquet, and their Markdown and JSON renderings."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.diff import ChangeType

if TYPE_CHECKING:
    import datetime as dt

_TITLES = {
    ChangeType.AMENDED: "Amended",
    ChangeType.REMOVED: "Removed",
    ChangeType.ADDED: "Added",
    ChangeType.REDATED: "Re-dated",
}
_ORDER = [ChangeType.AMENDED, ChangeType.REMOVED, ChangeType.ADDED, ChangeType.REDATED]
# Characters Markdown would read as markup; an underscore only at a word's edge.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*~\[\]<>#|]|(?<![^\W_])_|_(?![^\W_]))")


@dataclass(frozen=True, slots=True)
class Group:
    """One change, as it happened on one or more cards."""

    group: str
    change: ChangeType
    rule_change: bool
    silent: bool
    old_text: str | None
    new_text: str | None
    old_date: dt.date | None
    new_date: dt.date | None
    similarity: float | None
    cards: tuple[tuple[str | None, str], ...]  # (card, source), sorted
    changes: int  # card-level changes in the group


@dataclass(frozen=True, slots=True)
class Changeset:
    """What changed in some runs: groups of changes, and the cards first seen."""

    runs: tuple[int, ...]
    groups: tuple[Group, ...]
    first_seen: tuple[tuple[str | None, str, int], ...]  # (card, source, rulings)

    def count(self, change: ChangeType) -> int:
        """How many card-level changes of this type the groups hold."""
        return sum(g.changes for g in self.groups if g.change is change)


def changeset(changes: pa.Table, runs: list[int]) -> Changeset:
    """Gather the changes of RUNS into groups: the same change on many cards is one group."""
    selected = pc.is_in(changes["run"], value_set=pa.array(runs, pa.int64()))
    rows = changes.filter(selected).to_pylist()
    first: dict[tuple[str | None, str], int] = {}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["first_seen"]:
            key = (row["card"], row["source"])
            first[key] = first.get(key, 0) + 1
        else:
            grouped.setdefault(row["group"], []).append(row)
    groups = [_group(members) for members in grouped.values()]
    groups.sort(key=lambda g: (not g.rule_change, _ORDER.index(g.change), _card_key(g.cards[0]),
                               g.old_text or g.new_text or "", g.group))  # fmt: skip
    seen = sorted(((c, s, n) for (c, s), n in first.items()), key=lambda t: _card_key(t[:2]))
    return Changeset(tuple(sorted(runs)), tuple(groups), tuple(seen))


def _card_key(pair: tuple[str | None, str]) -> tuple[bool, str, str]:
    return (pair[0] is None, pair[0] or "", pair[1])


def _group(members: list[dict[str, Any]]) -> Group:
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
        similarity=head["similarity"],
        cards=cards,
        changes=len(members),
    )


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """Word-level diff as (op, words) pieces: op is '=', '-' (removed) or '+' (added)."""
    a, b = old.split(), new.split()
    pieces: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            pieces.append(("=", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            pieces.append(("-", " ".join(a[i1:i2])))
        if j2 > j1:
            pieces.append(("+", " ".join(b[j1:j2])))
    return pieces


def _md(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _cards_md(cards: tuple[tuple[str | None, str], ...]) -> str:
    return ", ".join(f"{_md(card or '(no card)')} ({_md(source)})" for card, source in cards)


def render_markdown(cs: Changeset) -> str:
    """The changeset for people: rule changes first, grouped, with word-level diffs."""
    runs = ", ".join(str(r) for r in cs.runs) or "none"
    out = [f"# Ruling changes: run {runs}", ""]
    counts = ", ".join(f"{cs.count(t)} {_TITLES[t].lower()}" for t in _ORDER)
    if cs.first_seen:
        first = sum(n for _, _, n in cs.first_seen)
        counts += f"; {first} rulings first seen on {len(cs.first_seen)} card(s)"
    out += [counts, ""]
    rule = [g for g in cs.groups if g.rule_change]
    other = [g for g in cs.groups if not g.rule_change and g.change is not ChangeType.REDATED]
    redated = [g for g in cs.groups if g.change is ChangeType.REDATED]
    if rule:
        out += ["## Rule changes", ""]
        for g in rule:
            out += _group_md(g)
    if other:
        out += ["## Other additions", ""]
        for g in other:
            out += _group_md(g)
    if redated:
        out += ["## Re-dated (same words, new date)", ""]
        out += [
            f"- {g.old_date} \u2192 {g.new_date}: {_md(_short(g.new_text or ''))} "
            f"({_cards_md(g.cards)})"
            for g in redated
        ]
        out.append("")
    if cs.first_seen:
        out += ["## First seen", ""]
        out += [f"- {_cards_md(((c, s),))}: {n} ruling(s)" for c, s, n in cs.first_seen]
        out.append("")
    if not cs.groups and not cs.first_seen:
        out += ["No changes.", ""]
    return "\n".join(out)


def _group_md(g: Group) -> list[str]:
    title = _TITLES[g.change] + (" silently (same date)" if g.silent else "")
    moved = f"{g.old_date} \u2192 {g.new_date}" if g.old_date != g.new_date else ""
    dates = {
        ChangeType.AMENDED: moved or f"dated {g.old_date}",
        ChangeType.REMOVED: f"dated {g.old_date}",
        ChangeType.ADDED: f"dated {g.new_date}",
    }.get(g.change, "")
    lines = [f"### {title}, {dates}", "", f"Cards: {_cards_md(g.cards)}", ""]
    if g.change is ChangeType.AMENDED and g.old_text and g.new_text:
        marks = {"=": "{}", "-": "~~{}~~", "+": "**{}**"}
        diff = " ".join(
            marks[op].format(_md(words)) for op, words in word_diff(g.old_text, g.new_text)
        )
        lines += [f"> {diff}", "", f"Similarity {g.similarity:.1f}%.", ""]
    else:
        lines += [f"> {_md(g.old_text or g.new_text or '')}", ""]
    return lines


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def render_json(cs: Changeset) -> str:
    """The same changeset as data, for programs."""

    def date(value: dt.date | None) -> str | None:
        return value.isoformat() if value else None

    data = {
        "runs": list(cs.runs),
        "counts": {t.value: cs.count(t) for t in _ORDER},
        "groups": [
            {
                "group": g.group,
                "change": g.change.value,
                "rule_change": g.rule_change,
                "silent": g.silent,
                "old_text": g.old_text,
                "new_text": g.new_text,
                "old_date": date(g.old_date),
                "new_date": date(g.new_date),
                "similarity": g.similarity,
                "cards": [{"card": c, "source": s} for c, s in g.cards],
                "changes": g.changes,
                "diff": [{"op": op, "text": t} for op, t in word_diff(g.old_text, g.new_text)]
                if g.old_text and g.new_text and g.change is ChangeType.AMENDED
                else None,
            }
            for g in cs.groups
        ],
        "first_seen": [{"card": c, "source": s, "rulings": n} for c, s, n in cs.first_seen],
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
