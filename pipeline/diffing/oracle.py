"""Cards and their Oracle text as a history: what each card source said, and what changed.

A run hands on the cards its files describe (CardFacts, one per card and document). They
are kept as versions per (card, source), the way rulings are: a version is written when
it differs from the version in force in that source at its date, so reading the same
cards again writes nothing. Two sources are never compared with each other (their lists
of formats differ); the `cards` table shows each card as its freshest source has it.

An Oracle change is a new version whose faces (name, mana cost, type line, rules text,
power, toughness, loyalty, defense) differ from the version before it in its source. Its
group is the set of its edits (oracle_text.edits): the same edit made to many cards is
one group, as the same change of many cards' rulings is.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import fuzz

from pipeline.diffing.oracle_text import FACE_SEPARATOR, edits, rendered
from pipeline.schema import CARD_VERSIONS, CARDS, CHANGES
from pipeline.text.normalize import fold

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pipeline.models import CardFace, CardFacts

KIND = "oracle"
_FACE_KEYS = (
    "name",
    "mana_cost",
    "type_line",
    "oracle_text",
    "power",
    "toughness",
    "loyalty",
    "defense",
)


@dataclass(frozen=True, slots=True)
class Reading:
    """A card as one document of a run gave it."""

    facts: CardFacts
    source: str  # "mtgjson", "scryfall"
    source_path: str
    as_of: dt.date | None


@dataclass(frozen=True, slots=True)
class OracleRun:
    """What a run's readings make: new versions, the changes among them, the cards table."""

    versions: pa.Table  # rows of card_versions for this run (may be empty)
    changes: pa.Table  # rows of changes (kind "oracle") for this run
    cards: pa.Table  # the whole cards table after the run


def _face_dict(face: CardFace) -> dict[str, Any]:
    return {key: getattr(face, key) for key in _FACE_KEYS}


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()


def card_row(facts: CardFacts) -> dict[str, Any]:
    """The columns of card_versions that are the card's own (from `card` to `facts_hash`)."""
    faces = [_face_dict(face) for face in facts.faces]
    first = faces[0] if faces else {}
    printed = [day for _, day in facts.printings if day is not None]
    row: dict[str, Any] = {
        "card": facts.name,
        "oracle_id": facts.oracle_id,
        "layout": facts.layout,
        "faces": faces,
        "oracle_text": _joined(f["oracle_text"] for f in faces),
        "oracle_hash": _digest([[f[k] for k in _FACE_KEYS] for f in faces]),
        "type_line": _joined((f["type_line"] for f in faces), " // "),
        "mana_cost": _joined((f["mana_cost"] for f in faces), " // "),
        "mana_value": facts.mana_value,
        "supertypes": list(facts.supertypes),
        "types": list(facts.types),
        "subtypes": list(facts.subtypes),
        "colors": list(facts.colors),
        "color_identity": list(facts.color_identity),
        "keywords": list(facts.keywords),
        "power": first.get("power"),
        "toughness": first.get("toughness"),
        "loyalty": first.get("loyalty"),
        "defense": first.get("defense"),
        "legalities": [{"format": f, "status": s} for f, s in facts.legalities],
        "legal_in": [f for f, s in facts.legalities if s == "legal"],
        "printings": [{"set_code": code, "released": day} for code, day in facts.printings],
        "first_printed": min(printed, default=None),
        "last_printed": max(printed, default=None),
    }
    row["facts_hash"] = _digest([row[key] for key in list(row)[2:]])
    return row


def _joined(parts: Iterable[str | None], separator: str = FACE_SEPARATOR) -> str | None:
    kept = [p for p in parts if p]
    return separator.join(kept) if kept else None


def card_key(oracle_id: str | None, name: str) -> str:
    """What one card is known by: its oracle id, else its English name."""
    return oracle_id or f"name:{name}"


def _with_dates(facts: CardFacts, known: dict[str, dt.date]) -> CardFacts:
    """FACTS with the release dates of its printings that KNOWN has and it lacks."""
    if all(day is not None for _, day in facts.printings):
        return facts
    filled = tuple(sorted((code, day or known.get(code)) for code, day in facts.printings))
    return facts._replace(printings=_sorted_printings(filled))


def _sorted_printings(
    printings: Iterable[tuple[str, dt.date | None]],
) -> tuple[tuple[str, dt.date | None], ...]:
    return tuple(sorted(printings, key=lambda p: (p[0], p[1] or dt.date.min)))


def _folded(readings: list[Reading]) -> CardFacts:
    """One card's facts from the documents of one date: printings united, dates kept."""
    first = readings[0].facts
    dates: dict[str, dt.date | None] = {}
    for reading in readings:
        for code, day in reading.facts.printings:
            if dates.get(code) is None:
                dates[code] = day
    return first._replace(printings=_sorted_printings(dates.items()))


def oracle_run(stored: pa.Table, readings: Iterable[Reading], run: int) -> OracleRun:
    """Fold READINGS (this RUN's) into the versions STORED (card_versions, every run's).

    Returns the run's new versions, the Oracle changes among them, and the cards table.
    """
    chains = _chains(stored)
    names = _oracle_ids(stored, readings := list(readings))
    grouped: dict[tuple[str, str, dt.date | None], list[Reading]] = defaultdict(list)
    for reading in sorted(readings, key=lambda r: r.source_path):
        key = card_key(reading.facts.oracle_id or names.get(reading.facts.name), reading.facts.name)
        grouped[(key, reading.source, reading.as_of)].append(reading)
    new_rows: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    for key, source, as_of in sorted(grouped, key=_group_order):
        group = grouped[(key, source, as_of)]
        chain = chains.setdefault((key, source), [])
        before = _in_force(chain, as_of)
        known = {p["set_code"]: p["released"] for v in chain for p in v["printings"]}
        facts = _with_dates(_folded(group), {c: d for c, d in known.items() if d is not None})
        row = card_row(facts)
        if before is not None and before["facts_hash"] == row["facts_hash"]:
            continue  # read again: nothing new
        if row["oracle_id"] is None and not key.startswith("name:"):
            row["oracle_id"] = key  # a v3 card, known by the id another source gives
        row.update(run=run, as_of=as_of, source=source, source_path=group[0].source_path)
        new_rows.append(row)
        chain.append(row)
        chain.sort(key=_version_order)
        if before is not None and before["oracle_hash"] != row["oracle_hash"]:
            changes.append(_change(before, row, run))
    versions = pa.Table.from_pylist(new_rows, schema=CARD_VERSIONS)
    return OracleRun(versions, _changes_table(changes), cards_table(chains.values()))


def _group_order(key: tuple[str, str, dt.date | None]) -> tuple[str, str, dt.date]:
    return key[0], key[1], key[2] or dt.date.min


def _version_order(row: dict[str, Any]) -> tuple[dt.date, int]:
    return row["as_of"] or dt.date.min, row["run"]


def _in_force(chain: list[dict[str, Any]], as_of: dt.date | None) -> dict[str, Any] | None:
    """The version of CHAIN (ordered) in force at AS_OF: the latest not after it."""
    day = as_of or dt.date.min
    found = None
    for version in chain:
        if (version["as_of"] or dt.date.min) <= day:
            found = version
    return found


def _chains(stored: pa.Table) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The stored versions of each (card, source), in order of date, then run."""
    chains: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in stored.to_pylist():
        chains[(card_key(row["oracle_id"], row["card"]), row["source"])].append(row)
    for chain in chains.values():
        chain.sort(key=_version_order)
    return chains


def _oracle_ids(stored: pa.Table, readings: list[Reading]) -> dict[str, str]:
    """English name -> oracle id, where some reading or version pairs them (v3 gives none)."""
    found: dict[str, str] = {}
    if stored.num_rows:
        known = stored.select(["card", "oracle_id"]).filter(pc.is_valid(stored["oracle_id"]))
        found.update(zip(*(known[c].to_pylist() for c in ("card", "oracle_id")), strict=True))
    for reading in readings:
        if reading.facts.oracle_id:
            found.setdefault(reading.facts.name, reading.facts.oracle_id)
    return found


def _names(row: dict[str, Any]) -> list[str]:
    names = [row["card"], *(face["name"] for face in row["faces"])]
    return names + [n.split(",")[0] for n in names if n and "," in n]


def _change(before: dict[str, Any], after: dict[str, Any], run: int) -> dict[str, Any]:
    old, new = rendered(before["faces"]), rendered(after["faces"])
    group = _digest([KIND, edits(old, new, _names(after) + _names(before))])[:16]
    return {
        "run": run,
        "as_of": after["as_of"],
        "card": after["card"],
        "oracle_id": after["oracle_id"],
        "kind": KIND,
        "source": after["source"],
        "change": "amended",
        "old_text_hash": before["oracle_hash"],
        "new_text_hash": after["oracle_hash"],
        "old_date": before["as_of"],
        "new_date": after["as_of"],
        "similarity": round(fuzz.ratio(fold(old), fold(new)), 2),
        "rule_change": False,
        "silent": False,
        "first_seen": False,
        "group": group,
        "old_text": old,
        "new_text": new,
        "match": None,
    }


def _changes_table(rows: list[dict[str, Any]]) -> pa.Table:
    rows.sort(key=lambda r: (r["card"], r["source"], r["new_date"] or dt.date.min))
    return pa.Table.from_pylist(rows, schema=CHANGES)


def cards_table(chains: Iterable[list[dict[str, Any]]]) -> pa.Table:
    """One row per card: the latest version of its freshest source (by date, then run).

    `oracle_since` is the date of the first version of that source's unbroken run of its
    current Oracle text; `oracle_versions` counts that source's Oracle texts in turn.
    """
    best: dict[str, tuple[tuple[dt.date, int, str], list[dict[str, Any]]]] = {}
    for chain in chains:
        if not chain:
            continue
        latest = chain[-1]
        order = (*_version_order(latest), latest["source"])
        key = card_key(latest["oracle_id"], latest["card"])
        if key not in best or order > best[key][0]:
            best[key] = (order, chain)
    rows = []
    for _, chain in sorted(best.values(), key=lambda item: _cards_order(item[1][-1])):
        latest = dict(chain[-1])
        since, texts, previous = latest["as_of"], 0, None
        for version in chain:
            if version["oracle_hash"] != previous:
                texts += 1
                previous = version["oracle_hash"]
                since = version["as_of"]
        latest.update(oracle_since=since, oracle_versions=texts)
        rows.append(latest)
    return pa.Table.from_pylist(rows, schema=CARDS)


def _cards_order(row: dict[str, Any]) -> tuple[str, str]:
    return row["card"], row["oracle_id"] or ""


def cards_from_versions(versions: pa.Table) -> pa.Table:
    """The cards table made from card_versions alone (a repair, an upgrade)."""
    return cards_table(_chains(versions).values())


def oracle_history(versions: pa.Table) -> pa.Table:
    """Each Oracle text of each (card, source) of VERSIONS (card_versions rows), in turn."""
    rows = []
    for chain in _chains(versions).values():
        texts: list[dict[str, Any]] = []
        for version in chain:
            if texts and texts[-1]["oracle_hash"] == version["oracle_hash"]:
                continue
            if texts:
                texts[-1]["until"] = version["as_of"]
            texts.append({key: version[key] for key in _HISTORY.names if key in version})
            texts[-1].update(since=version["as_of"], until=None, since_run=version["run"])
        rows += texts
    rows.sort(key=lambda r: (r["card"], r["source"], r["since"] or dt.date.min))
    return pa.Table.from_pylist(rows, schema=_HISTORY)


_HISTORY = pa.schema(
    [
        CARDS.field("card"),
        CARDS.field("oracle_id"),
        pa.field("source", pa.string()),
        pa.field("since", pa.date32()),
        pa.field("until", pa.date32()),
        pa.field("since_run", pa.int64()),
        pa.field("source_path", pa.string()),
        CARDS.field("faces"),
        CARDS.field("oracle_text"),
        CARDS.field("oracle_hash"),
        CARDS.field("type_line"),
    ]
)
