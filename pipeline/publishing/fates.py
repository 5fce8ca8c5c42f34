"""What became of each version of a history: in force, staler, or the change that ended it.

`pipeline history` says it in the words of the site's card and rule pages: a version its
source still carries is "in force" (a freshest source of its card carries it), "only in a
staler source", or, for a rule, "current"; a version its source dropped was "amended" into
another version (with the similarity of the two), "re-dated" to another date, "replaced"
by a version that carries its words, "renumbered" to another rule, "removed", or, where no
change row tells, "no longer carried". Computing (fates) and rendering (history_lines) are
apart, as the changelog's are. A card's Oracle texts follow its rulings (oracle_lines): each
text each card source gave it, and the words each later text changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pipeline.diffing.diff import ChangeType
from pipeline.publishing.render import word_diff
from pipeline.text.words import counted

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Iterable

    from pipeline.diffing.history import HistoryEntry


class Became(StrEnum):
    """What became of a version (the site's words)."""

    IN_FORCE = "in force"
    STALER = "only in a staler source"
    CURRENT = "current"  # a rule of the latest release
    AMENDED = "amended"
    REDATED = "re-dated"
    REPLACED = "replaced"
    RENUMBERED = "renumbered"
    REMOVED = "removed"
    GONE = "no longer carried"


_STILL = frozenset({Became.IN_FORCE, Became.STALER, Became.CURRENT})
# The change types that end a version, and what they make of it.
_ENDED = {
    ChangeType.AMENDED.value: Became.AMENDED,
    ChangeType.REDATED.value: Became.REDATED,
    ChangeType.REMOVED.value: Became.REMOVED,
    ChangeType.RENUMBERED.value: Became.RENUMBERED,
}


@dataclass(frozen=True, slots=True)
class OracleVersion:
    """One Oracle text one card source gave a card, from its first date to the next text's."""

    source: str
    text: str  # the rendered faces (diffing.oracle.rendered)
    since: dt.date | None
    since_run: int
    until: dt.date | None = None
    until_run: int | None = None  # None: its source still gives it
    in_force: bool = True  # of a text its source still gives: the card's freshest source's
    similarity: float | None = None  # to the text before it in its source, 0-100


@dataclass(frozen=True, slots=True)
class Fate:
    """What became of one version, and the version it became, where one did."""

    became: Became
    into: int | None = None  # the index, in the history, of the version it became
    date: dt.date | None = None  # the date it was re-dated or amended to
    similarity: float | None = None  # an amendment's, 0-100
    rule: str | None = None  # the number a rule was renumbered to
    diff: tuple[tuple[str, str], ...] = ()  # an amendment's changed words (render.word_diff)

    @property
    def still(self) -> bool:
        """Whether its source still carries the version."""
        return self.became in _STILL


def fates(entries: list[HistoryEntry], changes: Iterable[dict[str, Any]]) -> list[Fate]:
    """What became of each of ENTRIES (one history, in its order), from its CHANGES.

    CHANGES are the rows of changes.parquet of the history's card or rule. A version its
    source dropped is ended by the change of the run it went in (the first that names it,
    where none of that run does); the version it became is the one of its source, with
    the new text and date, that came in that run (else the first such).
    """
    ends: dict[tuple[str, str, dt.date | None], list[dict[str, Any]]] = {}
    for row in changes:
        if row["change"] in _ENDED and row["old_text_hash"] is not None:
            key = (row["source"], row["old_text_hash"], row["old_date"])
            ends.setdefault(key, []).append(row)
    return [_fate(entry, entries, ends) for entry in entries]


def _fate(
    entry: HistoryEntry,
    entries: list[HistoryEntry],
    ends: dict[tuple[str, str, dt.date | None], list[dict[str, Any]]],
) -> Fate:
    if entry.disappeared is None:
        return Fate(_still(entry))
    rows = ends.get((entry.source, entry.text_hash, entry.effective_date), [])
    end = next((r for r in rows if r["run"] == entry.disappeared), rows[0] if rows else None)
    if end is None:
        return Fate(Became.GONE)
    became = _ENDED[end["change"]]
    if became is Became.RENUMBERED:
        return Fate(became, rule=end["new_rule_id"])
    if became is Became.REMOVED:
        carrier = end["replaced_by"]
        into = _version(entries, entry.source, carrier, None, end["run"]) if carrier else None
        return Fate(Became.REPLACED, into=into) if carrier else Fate(became)
    into = _version(entries, entry.source, end["new_text_hash"], end["new_date"], end["run"])
    if became is Became.REDATED:
        return Fate(became, into=into, date=end["new_date"])
    diff = tuple(word_diff(entry.text, entries[into].text)) if into is not None else ()
    return Fate(became, into=into, date=end["new_date"], similarity=end["similarity"], diff=diff)


def _still(entry: HistoryEntry) -> Became:
    """What a version its source still carries is: in force, staler, or (a rule) current."""
    if entry.in_force is None:
        return Became.CURRENT
    return Became.IN_FORCE if entry.in_force else Became.STALER


def _version(
    entries: list[HistoryEntry], source: str, text_hash: str, date: object, run: int
) -> int | None:
    """The index of SOURCE's version TEXT_HASH (of DATE, unless None) that came in RUN.

    Else the first such version of any run; None where the history holds none.
    """
    found = [
        n
        for n, e in enumerate(entries)
        if (e.source, e.text_hash) == (source, text_hash)
        and (date is None or date == e.effective_date)
    ]
    return next((n for n in found if entries[n].appeared == run), found[0] if found else None)


def history_lines(name: str, entries: list[HistoryEntry], ended: list[Fate]) -> list[str]:
    """The lines `pipeline history` prints: a count, then each version and what became of it.

    Versions are numbered from 1 in the order of ENTRIES (oldest first), and a fate names
    the version it became by that number.
    """
    if not entries:
        return [f"{name}: no rulings"]
    still = [f.became for f in ended if f.still]
    parts = [f"{still.count(b):,} {b}" for b in Became if b in _STILL and b in still]
    gone = len(ended) - len(still)
    parts += [f"{gone:,} earlier"] if gone else []
    lines = [
        f"{name}: {counted(len(entries), 'version')}" + (f" ({', '.join(parts)})" if parts else "")
    ]
    width = len(f"#{len(entries)}")
    for n, (e, fate) in enumerate(zip(entries, ended, strict=True), start=1):
        came = f"{e.as_of} (run {e.appeared})" if e.as_of else f"run {e.appeared}"
        if e.disappeared is None:
            span = f"since {came}, {fate.became}"
        else:
            went = (
                f"{e.gone_as_of} (run {e.disappeared})" if e.gone_as_of else f"run {e.disappeared}"
            )
            span = f"{came} until {went}"
        date = str(e.effective_date or "undated")
        lines.append(f"{f'#{n}':>{width}}  {date:<10}  {span:<49}  [{e.source}]  {e.text}")
        indent = " " * (width + 2)
        if not fate.still:
            lines.append(f"{indent}{_ended(fate)}")
        if e.translates:
            lines.append(f"{indent}translates ({e.translates_fate}): {e.translates}")
    return lines


def _ended(fate: Fate) -> str:
    """How a version went, in words: "amended into #16 (similarity 83.3%): ..."."""
    into = f" #{fate.into + 1}" if fate.into is not None else ""
    if fate.became is Became.REDATED:
        return f"re-dated to {fate.date or 'undated'}" + (f" (now{into})" if into else "")
    if fate.became is Became.REPLACED:
        carrier = into or " a ruling not in this history"
        return f"removed; replaced by{carrier}, which carries its words"
    if fate.became is Became.RENUMBERED:
        return f"renumbered to {fate.rule}"
    if fate.became is Became.AMENDED:
        similarity = f", similarity {fate.similarity:.1f}%" if fate.similarity is not None else ""
        dated = f"dated {fate.date or 'undated'}"
        changed = _changed_words(fate.diff)
        return f"amended into{into or ' a text not in this history'} ({dated}{similarity})" + (
            f": {changed}" if changed else ""
        )
    return str(fate.became)


def _changed_words(diff: tuple[tuple[str, str], ...]) -> str:
    """The words an amendment changed, marked as `git diff --word-diff` does: [-old-]{+new+}.

    Each change keeps a word of the text on either side; the rest is an ellipsis.
    """
    if all(op == "=" for op, _ in diff):
        return ""
    marks = {"-": "[-{}-]", "+": "{{+{}+}}"}
    out = ""
    for n, (op, words) in enumerate(diff):
        if op != "=":
            glue = "" if op == "+" and out.endswith("-]") else " "
            out += glue + marks[op].format(words)
            continue
        kept = words.split()
        head = kept[:1] if n > 0 else []  # the word after the change before
        tail = kept[-1:] if n < len(diff) - 1 else []  # the word before the next change
        if len(kept) > len(head) + len(tail) + 1:
            kept = [*head, "…", *tail]
        out += " " + " ".join(kept)
    return out.strip()


def oracle_lines(versions: list[OracleVersion]) -> list[str]:
    """The Oracle part of `pipeline history`: a count, each text, and the words each changed.

    Versions are numbered from 1 in the order of VERSIONS (by source, oldest first); a text's
    lines are joined by " · " so that each version is one line, as a ruling's is. None: [].
    """
    if not versions:
        return []
    sources = ", ".join(dict.fromkeys(v.source for v in versions))
    lines = ["", f"Oracle text: {counted(len(versions), 'version')} ({sources})"]
    width = len(f"#{len(versions)}")
    for n, version in enumerate(versions, start=1):
        came = _dated(version.since, version.since_run)
        if version.until_run is None:
            still = Became.IN_FORCE if version.in_force else Became.STALER
            span = f"since {came}, {still}"
        else:
            span = f"{came} until {_dated(version.until, version.until_run)}"
        text = " \u00b7 ".join(version.text.split("\n"))
        lines.append(f"{f'#{n}':>{width}}  {span:<49}  [{version.source}]  {text}")
        before = versions[n - 2] if n > 1 else None
        if before is not None and before.source == version.source:
            similarity = (
                f" (similarity {version.similarity:.1f}%)" if version.similarity is not None else ""
            )
            changed = _changed_words(tuple(word_diff(before.text, version.text)))
            lines.append(f"{' ' * (width + 2)}amended from #{n - 1}{similarity}: {changed}")
    return lines


def _dated(day: dt.date | None, run: int) -> str:
    return f"{day} (run {run})" if day else f"run {run}"
