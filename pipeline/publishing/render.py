"""Renderings of a Changeset: Markdown for people, JSON for programs."""

from __future__ import annotations

import difflib
import json
import re
from typing import TYPE_CHECKING

from pipeline.diffing.diff import ChangeType, Match
from pipeline.publishing.changelog import kind_count
from pipeline.text.normalize import fold, printable
from pipeline.text.words import counted

if TYPE_CHECKING:
    from pipeline.publishing.changelog import Changeset, Group

TITLES = {
    ChangeType.AMENDED: "Amended",
    ChangeType.REMOVED: "Removed",
    ChangeType.ADDED: "Added",
    ChangeType.REDATED: "Re-dated",
    ChangeType.RENUMBERED: "Renumbered",
}
# Characters Markdown would read as markup; an underscore only at a word's edge.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*~\[\]<>#|]|(?<![^\W_])_|_(?![^\W_]))")
_SHORT = 90


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """Word-level diff as (op, words) pieces: op is '=', '-' (removed) or '+' (added).

    Words are compared folded, so typography is no change: a curly apostrophe made straight
    shows as the same word, in its new spelling.
    """
    a, b = old.split(), new.split()
    folded = [fold(w) for w in a], [fold(w) for w in b]
    matcher = difflib.SequenceMatcher(None, *folded, autojunk=False)
    pieces: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pieces.append(("=", " ".join(b[j1:j2])))
            continue
        if i2 > i1:
            pieces.append(("-", " ".join(a[i1:i2])))
        if j2 > j1:
            pieces.append(("+", " ".join(b[j1:j2])))
    return pieces


def _md(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _short(text: str) -> str:
    return text if len(text) <= _SHORT else text[: _SHORT - 1].rstrip() + "\u2026"


def _cards_md(cards: tuple[tuple[str | None, str], ...]) -> str:
    return ", ".join(f"{_md(card or '(no card)')} ({_md(source)})" for card, source in cards)


def render_markdown(cs: Changeset) -> str:
    """The changeset for people: rule changes first, grouped, with word-level diffs."""
    runs = ", ".join(str(r) for r in cs.runs) or "none"
    oracle = oracle_summary(cs) if cs.oracle else ""
    counts = "; ".join(filter(None, [change_counts(cs), cs.first_seen_summary(), oracle]))
    out = [f"# Ruling changes: run {runs}", "", counts or "No changes.", ""]
    rulings = [g for g in cs.groups if not g.is_rule and g.change is not ChangeType.REDATED]
    sections = [
        ("Rule changes", [g for g in rulings if g.rule_change], _group_md),
        ("Other additions", [g for g in rulings if not g.rule_change], _group_md),
        ("Comprehensive Rules", [g for g in cs.groups if g.is_rule], _rule_md),
    ]
    for title, groups, render in sections:
        if groups:
            out += [f"## {title}", ""]
            for g in groups:
                out += render(g)
    out += _oracle_md(cs)
    redated = [g for g in cs.groups if g.change is ChangeType.REDATED and not g.is_rule]
    if redated:
        out += ["## Re-dated (same words, new date)", ""]
        out += [
            f"- {g.old_date} \u2192 {g.new_date}: {_md(_short(g.text))} ({_cards_md(g.cards)})"
            for g in redated
        ]
        out.append("")
    if cs.stale:
        out += ["## Translations now out of date", ""]
        for stale in cs.stale:
            out += [f"### {TITLES[stale.change]}: {_md(_short(stale.original))}", ""]
            if stale.now:
                out += [f"Now: {_md(stale.now)}", ""]
            out += [
                f"- {_md(lang)}, {_md(card or '(no card)')}: {_md(text)}"
                for card, lang, text in stale.translations
            ]
            out.append("")
    if cs.first_seen or cs.first_seen_rules:
        out += ["## First seen", ""]
        out += [f"- {_cards_md(((c, s),))}: {counted(n, 'ruling')}" for c, s, n in cs.first_seen]
        out += [f"- {_md(s)}: {kind_count(k, n)}" for s, k, n in cs.first_seen_rules]
        out.append("")
    return printable("\n".join(out))  # a control character in a name or date: dropped


def oracle_summary(cs: Changeset) -> str:
    """The Oracle changes in words: "3 cards' Oracle text changed, in 3 edits"."""
    cards = "1 card's" if cs.oracle_cards == 1 else f"{cs.oracle_cards} cards'"
    edits = "1 group of edits" if len(cs.oracle) == 1 else f"{len(cs.oracle)} groups of edits"
    return f"{cards} Oracle text changed ({edits}; a card is listed under each of its edits)"


def _oracle_md(cs: Changeset) -> list[str]:
    if not cs.oracle:
        return []
    out = ["## Oracle changes", ""]
    marks = {"=": "{}", "-": "~~{}~~", "+": "**{}**"}
    for edit in cs.oracle:
        count = "1 card" if len(edit.cards) == 1 else f"{len(edit.cards)} cards"
        shown = "; ".join(f"{_md(a)} \u2192 {_md(b)}" for a, b in edit.edits)
        out += [f"### {shown} ({count})", ""]
        pieces = word_diff(edit.old_text, edit.new_text)
        diff = " ".join(marks[op].format(_md(words)) for op, words in pieces)
        out += [f"{_md(edit.example)}: {diff}", "", f"Cards: {', '.join(map(_md, edit.cards))}", ""]
    return out


def change_counts(cs: Changeset) -> str:
    """The card-level changes of each type in words: "3 amended, 3 removed, 5 added"."""
    return ", ".join(f"{cs.count(t)} {TITLES[t].lower()}" for t in ChangeType if cs.count(t))


def rule_when(g: Group) -> str:
    """When a rule change took effect; a renumbering by the release that renumbered it.

    A renumbered rule keeps its text and its date (the release that first held it), so
    its date says nothing of the renumbering: the as-of date of the release that showed
    it does.
    """
    if g.change is ChangeType.RENUMBERED and g.as_of is not None:
        return f"as of {g.as_of}"
    return f"effective {g.date}"


def _body_md(g: Group) -> list[str]:
    if g.change is ChangeType.AMENDED and g.old_text and g.new_text:
        marks = {"=": "{}", "-": "~~{}~~", "+": "**{}**"}
        pieces = word_diff(g.old_text, g.new_text)
        diff = " ".join(marks[op].format(_md(words)) for op, words in pieces)
        return [f"> {diff}", "", f"Similarity {g.similarity:.1f}%{paired(g)}.", ""]
    if g.is_replacement:
        lines = ["Removed:", ""]
        for text in g.replaced:
            lines += [f"> {_md(text)}", ""]
        return [*lines, "Replaced by:", "", f"> {_md(g.new_text or '')}", ""]
    return [f"> {_md(g.text)}", ""]


_HOW = {
    Match.WORDS.value: ", a rewording found by its words",
    Match.SENTENCES.value: ", the same sentences with some dropped or added",
}


def paired(g: Group) -> str:
    """How an amendment was found, when not by its characters alone."""
    return _HOW.get(g.match or "", "")


def title(g: Group) -> str:
    """The heading word(s) of a group: its change, and how."""
    if g.is_replacement:
        return "Replaced"
    return TITLES[g.change] + (" silently (same date)" if g.silent else "")


def _group_md(g: Group) -> list[str]:
    moved = f"dated {g.date}"
    if (g.change is ChangeType.AMENDED or g.is_replacement) and g.old_date != g.new_date:
        moved = f"{g.old_date} \u2192 {g.new_date}"
    lines = [f"### {title(g)}, {moved}", "", f"Cards: {_cards_md(g.cards)}", ""]
    if g.explained_by:
        lines += [f"Explained by Comprehensive Rules {', '.join(g.explained_by)}.", ""]
    return lines + _body_md(g)


def _rule_md(g: Group) -> list[str]:
    old, new = g.old_rule_id, g.new_rule_id
    number = f"{old} \u2192 {new}" if old and new and old != new else (new or old)
    return [
        f"### {_md(str(number))}: {TITLES[g.change].lower()}, {rule_when(g)}",
        "",
        *_body_md(g),
    ]


def render_json(cs: Changeset) -> str:
    """The same changeset as data, for programs."""
    groups = []
    for g in cs.groups:
        diff = None
        if g.old_text and g.new_text and g.change is ChangeType.AMENDED:
            diff = [{"op": op, "text": t} for op, t in word_diff(g.old_text, g.new_text)]
        groups.append(
            {
                "group": g.group,
                "change": g.change.value,
                "rule_change": g.rule_change,
                "silent": g.silent,
                "old_text": g.old_text,
                "new_text": g.new_text,
                "old_date": g.old_date and g.old_date.isoformat(),
                "new_date": g.new_date and g.new_date.isoformat(),
                "old_rule_id": g.old_rule_id,
                "new_rule_id": g.new_rule_id,
                "similarity": g.similarity,
                "changes": g.changes,
                "cards": [{"card": c, "source": s} for c, s in g.cards],
                "explained_by": list(g.explained_by),
                "diff": diff,
                "match": g.match,
                "replaced": list(g.replaced),
                "added": g.added,
            }
        )
    data = {
        "runs": list(cs.runs),
        "counts": {t.value: cs.count(t) for t in ChangeType},
        "groups": groups,
        "first_seen": [{"card": c, "source": s, "rulings": n} for c, s, n in cs.first_seen],
        "first_seen_rules": [
            {"source": s, "kind": k, "count": n} for s, k, n in cs.first_seen_rules
        ],
        "oracle": [
            {
                "edits": [{"before": a, "after": b} for a, b in e.edits],
                "cards": list(e.cards),
                "example": e.example,
                "old_text": e.old_text,
                "new_text": e.new_text,
                "new_date": e.new_date and e.new_date.isoformat(),
            }
            for e in cs.oracle
        ],
        "oracle_cards": cs.oracle_cards,
        "stale_translations": [
            {
                "group": s.group,
                "change": s.change.value,
                "original": s.original,
                "now": s.now,
                "translations": [{"card": c, "lang": la, "text": t} for c, la, t in s.translations],
            }
            for s in cs.stale
        ],
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
