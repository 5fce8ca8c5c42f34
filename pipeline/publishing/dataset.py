"""Reading the dataset back: which runs to report, their changeset, a card's history."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Mask, strings
from pipeline.diffing.history import (
    HistoryEntry,
    card_history,
    history_of,
    is_rule_change,
    source_versions,
)
from pipeline.diffing.oracle import KIND as ORACLE
from pipeline.diffing.oracle import oracle_history
from pipeline.diffing.oracle_text import rendered
from pipeline.errors import UsageError
from pipeline.folding.merge import known_languages
from pipeline.folding.names import aliases, english_names, renamed
from pipeline.publishing.changelog import (
    Changeset,
    changeset,
    numbered_kinds,
    stale_translations,
)
from pipeline.publishing.fates import Fate, OracleVersion, fates
from pipeline.publishing.titles import current_titles, release_titles
from pipeline.publishing.today import weighed_rulings
from pipeline.reading.read import escaped
from pipeline.schema import TABLES
from pipeline.storage import layout, lock, store
from pipeline.storage.carry import Content, of_cards
from pipeline.text.normalize import card_key, card_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path


def require_dataset(out: Path) -> None:
    """Raise a UsageError unless OUT holds a dataset this pipeline wrote."""
    lock.check_folder_name(out)
    if not layout.path_of(out, "runs").exists():
        msg = f"{out}: no dataset here (no runs.parquet); run `pipeline ingest` first or pass --out"
        raise UsageError(msg)


def select_runs(out: Path, *, run: int | None = None, since: dt.date | None = None) -> list[int]:
    """The runs a report covers: RUN, the runs started on or after SINCE, or the latest."""
    require_dataset(out)
    runs = store.open_version(out).table("runs")
    ids = [r for r in runs["run"].to_pylist() if isinstance(r, int)]
    if run is not None:
        if run not in ids:
            msg = f"{out}: there is no run {run} (runs: {_span(ids)})"
            raise UsageError(msg)
        return [run]
    if since is not None:
        started = [t for t in runs["started_at"].to_pylist() if isinstance(t, dt.datetime)]
        return [r for r, t in zip(ids, started, strict=True) if t.date() >= since]
    return [max(ids)] if ids else []


def _span(ids: list[int]) -> str:
    return f"{min(ids)}-{max(ids)}" if ids else "none"


def load_changeset(out: Path, *, run: int | None = None, since: dt.date | None = None) -> Changeset:
    """The changeset of the selected runs, linked to the rule changes that explain them."""
    runs = select_runs(out, run=run, since=since)
    version = store.open_version(out)
    rulings = version.table("rulings")
    changes = version.table("changes", runs=runs)
    rules = version.table("changes", runs=rule_runs(version), where=is_rule_change)
    titles, langs = release_titles(version, rulings), known_languages(rulings)
    found = changeset(changes, runs, titles, langs, rules, kinds=numbered_kinds(rulings))
    translations = version.table("translations")
    if not translations.num_rows:
        return found
    texts = dict(zip(strings(rulings["text_hash"]), strings(rulings["text"]), strict=True))
    return replace(found, stale=stale_translations(changes, translations, texts))


def explanations(version: store.Version, changes: pa.Table) -> dict[str, tuple[str, ...]]:
    """The rule changes that explain each group of CHANGES, by group id, as the changelog says.

    Only groups some rule change explains are listed (see changelog.changeset).
    """
    if not changes.num_rows:
        return {}
    rulings = version.table("rulings")
    rules = version.table("changes", runs=rule_runs(version), where=is_rule_change)
    runs = sorted({int(r) for r in pc.unique(changes["run"]).to_pylist() if r is not None})
    found = changeset(changes, runs, release_titles(version, rulings), None, rules)
    return {g.group: g.explained_by for g in found.groups if g.explained_by}


def rule_runs(version: store.Version) -> list[int]:
    """The runs of VERSION that changed rules, or may have (runs before schema version 6)."""
    runs = version.table("runs").select(["run", "rule_changes"]).to_pylist()
    return [r["run"] for r in runs if r["rule_changes"] is None or r["rule_changes"] > 0]


def rule_titles(rulings: pa.Table) -> dict[str, str]:
    """Titles of the numbered rule sections among RULINGS: {"702.62": "Suspend"}.

    A number's current title, else the one last read; the titles in force at a date, to
    explain a change, are release_titles()'.
    """
    return current_titles(rulings)


def load_history(out: Path, card: str, version: store.Version | None = None) -> list[HistoryEntry]:
    """Every version of every ruling of CARD (in VERSION, or the one in force).

    CARD is matched as card names are stored (card_name: quotes, Unicode forms, the
    ligature) and regardless of case, a translated name the runs learned as its English
    one's; a name that matches none gets suggestions.
    """
    require_dataset(out)
    version = version or store.open_version(out)
    return _card_history(out, card, version)[1]


def load_history_fates(
    out: Path, *, card: str | None = None, rule: str | None = None
) -> tuple[list[HistoryEntry], list[Fate]]:
    """The history of CARD or of rule RULE, with what became of each of its versions."""
    require_dataset(out)
    version = store.open_version(out)
    if rule is not None:
        entries = load_rule_history(out, rule, version)
        wanted = pa.scalar(rule.strip().lower())
        rows = version.table("changes", runs=rule_runs(version), where=is_rule_change)
        mine = pc.or_kleene(
            pc.equal(rows["old_rule_id"], wanted), pc.equal(rows["new_rule_id"], wanted)
        )
        return entries, fates(entries, rows.filter(mine).to_pylist())
    if card is None:
        msg = "give a CARD or --rule NUMBER"
        raise UsageError(msg)
    name, entries = _card_history(out, card, version)
    changes = version.table("changes", content=of_cards([name]))
    return entries, fates(entries, changes.to_pylist())


def load_oracle_versions(out: Path, card: str) -> list[OracleVersion]:
    """Each Oracle text each card source gave CARD, by source, oldest first; [] for no cards.

    CARD is matched as load_history matches it (its stored spelling, any case, a translated
    name); a text its source still gives is in force where that source is the cards table's.
    """
    require_dataset(out)
    version = store.open_version(out)
    cards = version.table("cards").select(["card", "source"])
    name = card_name(card)
    wanted = card_key(english_of(version).get(card_key(name), name))
    freshest = {
        row["card"]: row["source"] for row in cards.to_pylist() if card_key(row["card"]) == wanted
    }
    if not freshest:
        return []
    texts = oracle_history(version.table("card_versions", content=of_cards(freshest)))
    changes = version.table("changes", content=of_cards(freshest)).to_pylist()
    similarity = {
        (c["card"], c["source"], c["old_text_hash"], c["new_text_hash"]): c["similarity"]
        for c in changes
        if c["kind"] == ORACLE
    }
    found: list[OracleVersion] = []
    before: dict[str, Any] = {}
    for row in texts.to_pylist():
        key = (row["card"], row["source"])
        amended = (*key, before.get("oracle_hash"), row["oracle_hash"])
        if (before.get("card"), before.get("source")) == key:  # the next text of its source
            found[-1] = replace(found[-1], until=row["since"], until_run=row["since_run"])
        text = rendered(row["faces"])
        in_force = freshest[row["card"]] == row["source"]
        found.append(
            OracleVersion(row["source"], text, row["since"], row["since_run"], in_force=in_force)
        )
        if amended in similarity:
            found[-1] = replace(found[-1], similarity=similarity[amended])
        before = row
    return found


def _card_history(out: Path, card: str, version: store.Version) -> tuple[str, list[HistoryEntry]]:
    """The card CARD names, as stored, and its history; a UsageError if none matches.

    A card the card sources describe but no ruling names has an empty history.
    """
    try:
        card.encode("utf-8")
    except UnicodeEncodeError:
        msg = f"the card name '{escaped(card)}' is not valid UTF-8: no card can have it"
        raise UsageError(msg) from None
    name = card_name(card)
    name = english_of(version).get(card_key(name), name)  # a translated name: its card's
    entries = _history_of(version, name)
    if entries:
        return name, _in_force(_with_originals(entries, name, version), name, version)
    cards = version.table("rulings")["card"]
    names = sorted({c for c in pc.unique(cards).to_pylist() if c})
    wanted = card_key(card)
    same = [n for n in names if card_key(n) == wanted]
    if same:  # another case, or a spelling stored names fold alike
        entries = _with_originals(_history_of(version, same[0]), same[0], version)
        return same[0], _in_force(entries, same[0], version)
    described = [n for n in strings(version.table("cards")["card"]) if card_key(n) == wanted]
    if described:  # a card of the card sources without rulings: its Oracle texts alone
        return described[0], []
    close = [n for n in names if wanted in card_key(n)][:5]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    msg = f"no rulings of card {card!r} in {out}{hint}"
    raise UsageError(msg)


def load_rule_history(
    out: Path, rule_id: str, version: store.Version | None = None
) -> list[HistoryEntry]:
    """Every version of Comprehensive Rules rule RULE_ID (702.62a), oldest first.

    A rule is gone from the first later release of its source that does not hold it.
    """
    require_dataset(out)
    histories = rule_histories(version or store.open_version(out))
    wanted = rule_id.strip().lower()
    if wanted in histories:
        return histories[wanted]
    if not histories:
        msg = f"no Comprehensive Rules in {out}: ingest a release (MagicCompRules *.txt) first"
        raise UsageError(msg)
    section = re.match(r"\d+(?:\.\d+)?", wanted)
    close = sorted(r for r in histories if section and r.startswith(section.group()))[:5]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    msg = f"no rule {rule_id!r} in {out}{hint}"
    raise UsageError(msg)


def rule_histories(version: store.Version, kind: str = "rule") -> dict[str, list[HistoryEntry]]:
    """Every version of every numbered rule (or glossary entry: KIND), by number (or term).

    The sightings of rules are those of no card and of kind `rule`; each release of a
    source is a version of it, so a rule a release dropped is gone as of that release.
    """

    def rules(part: pa.Table) -> Mask:
        return pc.and_(pc.is_null(part["card"]), pc.equal(part["kind"], pa.scalar(kind)))

    sightings = version.table("sightings", content=Content(("card", "kind"), rules))
    sightings = sightings.select(_HISTORY_COLUMNS)
    rows = sightings.cast(pa.schema([TABLES["sightings"].field(c) for c in _HISTORY_COLUMNS]))
    found = rows.to_pylist()
    versions = source_versions(found)
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for row in found:
        if row["rule_id"]:
            by_rule.setdefault(row["rule_id"], []).append(row)
    return {rule: history_of(held, versions) for rule, held in by_rule.items()}


_HISTORY_COLUMNS = [
    "run",
    "card",
    "source",
    "text_hash",
    "effective_date",
    "as_of",
    "text",
    "rule_id",
]


def _history_of(version: store.Version, card: str) -> list[HistoryEntry]:
    sightings = card_sightings(version, card)
    return card_history(sightings, card)


def english_of(version: store.Version) -> Mapping[str, str]:
    """card_key(translated name) -> English name, as the runs learned them (folding.names)."""
    return _names_of(version)[0]


def translated_names(version: store.Version) -> Mapping[str, str]:
    """Each translated name the runs learned, as stored, with the English name it stands for."""
    return _names_of(version)[1]


def _names_of(version: store.Version) -> tuple[Mapping[str, str], Mapping[str, str]]:
    # A pinned version's names never change: read once, whatever reader asks. The file's
    # identity is part of the key: a folder removed and written again reuses version names.
    path = version.base / "names.parquet"
    found = path.stat() if path.exists() else None
    return _names_read(version, found and (found.st_ino, found.st_size, found.st_mtime_ns))


@lru_cache(maxsize=8)
def _names_read(
    version: store.Version,
    identity: tuple[int, int, int] | None,  # noqa: ARG001 - a cache key
) -> tuple[Mapping[str, str], Mapping[str, str]]:
    names = version.table("names")
    english = english_names(names)
    return MappingProxyType(english), MappingProxyType(aliases(strings(names["name"]), english))


def card_sightings(version: store.Version, card: str) -> pa.Table:
    """CARD's sightings, with those stored before a run learned a translated name was CARD's."""
    return cards_sightings(version, {card})


def cards_sightings(version: store.Version, cards: set[str]) -> pa.Table:
    """The sightings of CARDS, with those stored under a name since learned as theirs.

    Parts are never rewritten: a sighting keeps the card it was stored under, and is
    given its English name as it is read.
    """
    stored = {alias for alias, card in translated_names(version).items() if card in cards}
    sightings = version.table("sightings", content=of_cards(cards | stored))
    return renamed(sightings, english_of(version))


def _in_force(entries: list[HistoryEntry], card: str, version: store.Version) -> list[HistoryEntry]:
    """ENTRIES, each version its source still carries marked in force or not (across sources).

    A card read from a 2022 MTGJSON file and a 2024 dump has both suspend wordings still in
    their sources; only the freshest source's are in force (docs/dataset.md, "In force today").
    """
    rulings = weighed_rulings(version, card)
    mine = rulings.filter(rulings["current"])
    keys = set(zip(strings(mine["text_hash"]), mine["effective_date"].to_pylist(), strict=True))
    return [
        entry if entry.disappeared is not None
        else replace(entry, in_force=(entry.text_hash, entry.effective_date) in keys)
        for entry in entries
    ]  # fmt: skip


def _with_originals(
    entries: list[HistoryEntry], card: str, version: store.Version
) -> list[HistoryEntry]:
    """ENTRIES with, on each translation, the English ruling it translates and its fate."""
    translations = version.table("translations")
    translations = translations.filter(pc.equal(translations["card"], pa.scalar(card)))
    links = {
        row["text_hash"]: row
        for row in translations.to_pylist()
        if row["original_text_hash"] is not None
    }
    if not links:
        return entries
    rulings = version.table("rulings")
    wanted = pa.array(sorted({r["original_text_hash"] for r in links.values()}), pa.string())
    originals = rulings.filter(pc.is_in(rulings["text_hash"].cast(pa.string()), value_set=wanted))
    texts = dict(zip(strings(originals["text_hash"]), strings(originals["text"]), strict=True))
    changes = version.table("changes", content=of_cards([card]))
    fates = original_fates(changes.to_pylist(), set(strings(wanted)))
    out = []
    for entry in entries:
        link = links.get(entry.text_hash)
        if link is None:
            out.append(entry)
            continue
        original = link["original_text_hash"]
        fate = "current" if link["original_current"] else fates.get(original, "not current")
        out.append(replace(entry, translates=texts.get(original), translates_fate=fate))
    return out


def original_fates(changes: Iterable[dict[str, Any]], originals: set[str]) -> dict[str, str]:
    """How each of ORIGINALS (English text hashes) went, by the first of CHANGES ending it.

    "amended (as of 2024-02-02, run 2)", "removed (run 3)": CHANGES are a card's rows of
    changes.parquet, in run order.
    """
    fates: dict[str, str] = {}
    for row in changes:
        if row["change"] in {"amended", "removed"} and row["old_text_hash"] in originals:
            when = f"as of {row['as_of']}, " if row["as_of"] else ""
            fates.setdefault(row["old_text_hash"], f"{row['change']} ({when}run {row['run']})")
    return fates
