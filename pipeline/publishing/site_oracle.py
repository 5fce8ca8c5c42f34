"""A card page's Oracle block: the card's Oracle text today, where it comes from, its history.

Read from `cards` (the freshest source's latest version of each card) and, for the cards
whose source gave more than one Oracle text, from `card_versions` (oracle_history): each
earlier text with the dates it was in force. Only the cards the site has a page for.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import strings
from pipeline.diffing.oracle import oracle_history
from pipeline.diffing.oracle_text import rendered

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Iterable

    from pipeline.storage import store

SOURCE_NAMES = {"mtgjson": "MTGJSON", "scryfall": "Scryfall"}
_CARD_COLUMNS = (
    "card",
    "faces",
    "source",
    "source_path",
    "as_of",
    "oracle_since",
    "oracle_versions",
)
_VERSION_COLUMNS = (
    "run",
    "as_of",
    "source",
    "source_path",
    "card",
    "oracle_id",
    "faces",
    "oracle_text",
    "oracle_hash",
    "type_line",
)


@dataclass(frozen=True, slots=True)
class Face:
    """One face of a card as its Oracle gives it."""

    name: str
    mana_cost: str | None
    type_line: str | None
    text: str | None  # its rules text, line breaks kept
    stats: str | None  # "2/2", "Loyalty: 3", "Defense: 4"


@dataclass(frozen=True, slots=True)
class OracleText:
    """One Oracle text of a card, and the dates its source gave it (until None: today's)."""

    faces: tuple[Face, ...]
    rendered: str  # the faces as one text, for a word diff (diffing.oracle.rendered)
    since: dt.date | None
    until: dt.date | None
    since_run: int


@dataclass(frozen=True, slots=True)
class Oracle:
    """A card's Oracle: today's text, its source, and its earlier texts, oldest first."""

    source: str  # as a reader names it: MTGJSON, Scryfall
    source_path: str  # relative to the raw root it was read from
    as_of: dt.date | None
    current: OracleText
    earlier: tuple[OracleText, ...] = ()

    @property
    def steps(self) -> tuple[tuple[OracleText, OracleText], ...]:
        """Each earlier text with the text that followed it, newest first."""
        texts = (*self.earlier, self.current)
        return tuple(reversed(tuple(pairwise(texts))))


def face(row: dict[str, Any]) -> Face:
    """A face struct of `cards` (schema.CARD_FACE) as the page shows it."""
    stats = None
    if row.get("power") is not None or row.get("toughness") is not None:
        stats = f"{row.get('power') or ''}/{row.get('toughness') or ''}"
    elif row.get("loyalty"):
        stats = f"Loyalty: {row['loyalty']}"
    elif row.get("defense"):
        stats = f"Defense: {row['defense']}"
    return Face(
        row.get("name") or "",
        row.get("mana_cost"),
        row.get("type_line"),
        row.get("oracle_text"),
        stats,
    )


def _text(
    faces: list[dict[str, Any]], since: dt.date | None, until: dt.date | None, run: int
) -> OracleText:
    return OracleText(tuple(face(f) for f in faces), rendered(faces), since, until, run)


def oracle_cards(version: store.Version, names: Iterable[str]) -> dict[str, Oracle]:
    """The Oracle of each card of NAMES (the site's card names) that `cards` holds.

    A card is found by its name, else by its first face's ("Dusk // Dawn" under "Dusk").
    """
    cards = version.table("cards")
    if not cards.num_rows:
        return {}
    wanted = set(names)
    rows: dict[str, dict[str, Any]] = {}
    for row in cards.select(list(_CARD_COLUMNS)).to_pylist():
        faces = row["faces"] or []
        for name in (row["card"], faces[0]["name"] if faces else None):
            if name in wanted and name not in rows:
                rows[name] = row
                break
    histories = _histories(version, [r for r in rows.values() if (r["oracle_versions"] or 0) > 1])
    found = {}
    for name, row in sorted(rows.items()):
        texts = histories.get((row["card"], row["source"]), [])
        current = _text(row["faces"] or [], row["oracle_since"], None, 0)
        if texts and texts[-1].rendered == current.rendered:
            current, earlier = texts[-1], tuple(texts[:-1])
        else:
            earlier = ()
        found[name] = Oracle(
            SOURCE_NAMES.get(row["source"], row["source"]),
            row["source_path"],
            row["as_of"],
            current,
            earlier,
        )
    return found


def _histories(
    version: store.Version, rows: list[dict[str, Any]]
) -> dict[tuple[str, str], list[OracleText]]:
    """Each (card, source) of ROWS with its Oracle texts in turn, oldest first."""
    if not rows:
        return {}
    versions = version.table("card_versions")
    versions = versions.filter(
        pc.is_in(versions["card"], value_set=pa.array(sorted({r["card"] for r in rows})))
    ).select(list(_VERSION_COLUMNS))
    history = oracle_history(versions)
    found: dict[tuple[str, str], list[OracleText]] = {}
    cards, sources = strings(history["card"]), strings(history["source"])
    for card, source, entry in zip(cards, sources, history.to_pylist(), strict=True):
        text = _text(entry["faces"] or [], entry["since"], entry["until"], entry["since_run"])
        found.setdefault((card, source), []).append(text)
    return found
