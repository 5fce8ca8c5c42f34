"""A card catalog: English names, oracle ids and localized names, and what they settle."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline import read
from pipeline.errors import InputError, UsageError
from pipeline.merge import lookup, replace_column, strings
from pipeline.models import CardOrigin, Kind, SourceHints
from pipeline.parsers import mtgjson
from pipeline.parsers._json import items, top_level

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

_WORD = re.compile(r"[^\W\d_][\w'\-]*")
# A mention in an example ("such as from Meddling Mage's ability") names another card.
_EXAMPLE = re.compile(
    r"(such as|like|for example|e\.g\.|for instance)[\s(]*(from\s+)?$", re.IGNORECASE
)


@dataclass(slots=True)
class Catalog:
    """Names and ids of the cards in one or more catalog files."""

    english: dict[str, str] = field(default_factory=dict)  # casefolded name -> English name
    oracle_of: dict[str, str] = field(default_factory=dict)  # English name -> oracle id
    name_of: dict[str, str] = field(default_factory=dict)  # oracle id -> English name
    by_first_word: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def add(self, name: str, oracle_id: str | None, localized: Iterable[str] = ()) -> None:
        """Record a card by its English name, with its oracle id and localized names."""
        self.english.setdefault(name.casefold(), name)
        for local in localized:
            self.english.setdefault(local.casefold(), name)
        if oracle_id:
            self.oracle_of.setdefault(name, oracle_id)
            self.name_of.setdefault(oracle_id, name)
        first = _WORD.match(name)
        if first is not None:
            self.by_first_word[first.group()].add(name)

    def mentions(self, text: str) -> set[str]:
        """English card names TEXT mentions as itself, not in an example or parentheses."""
        found: set[str] = set()
        for match in _WORD.finditer(text):
            word = match.group()
            for name in self.by_first_word.get(word, set()) | self.by_first_word.get(
                word.removesuffix("'s"), set()
            ):
                start = match.start()
                end = start + len(name)
                if text.startswith(name, start) and not text[end : end + 1].isalnum():
                    before = text[:start]
                    if before.count("(") <= before.count(")") and not _EXAMPLE.search(before[-30:]):
                        found.add(name)
        return found


def load_catalog(paths: Iterable[Path]) -> Catalog:
    """Read MTGJSON (set, AllPrintings, AtomicCards) or Scryfall cards JSON files."""
    catalog = Catalog()
    for path in paths:
        try:
            doc = read.to_document(str(path), path.read_bytes(), SourceHints())
            for name, oracle, local in _cards(doc):
                catalog.add(name, oracle, local)
        except (OSError, InputError) as exc:
            msg = f"{path}: cannot read the catalog ({exc})"
            raise UsageError(msg) from exc
    return catalog


def _cards(doc: Any) -> Iterator[tuple[str, str | None, list[str]]]:  # noqa: ANN401
    if mtgjson.detect(doc):
        for card in mtgjson.cards(doc):
            name = card.get("name")
            if isinstance(name, str):
                foreign = card.get("foreignData") or []
                local = [
                    f["name"]
                    for f in foreign
                    if isinstance(f, dict) and isinstance(f.get("name"), str)
                ]
                yield name, mtgjson.oracle_id(card), local
        return
    kind, keys = top_level(doc.data) if doc.data else ("", {})
    prefix = "data.item" if kind == "map" and keys.get("object") == "list" else "item"
    if kind not in {"map", "array"}:
        raise InputError(doc.path, "not MTGJSON nor Scryfall cards JSON")
    for card in items(doc.data, prefix, doc.path):
        if isinstance(card, dict) and isinstance(card.get("name"), str):
            local = [card["printed_name"]] if isinstance(card.get("printed_name"), str) else []
            oracle = card.get("oracle_id")
            yield card["name"], oracle if isinstance(oracle, str) else None, local


def apply_catalog(table: pa.Table, catalog: Catalog | None) -> tuple[pa.Table, list[str]]:
    """Settle cards with the catalog: English names, oracle ids, and inferred cards.

    Without a catalog only the rows that name no card but an oracle id are reported.
    """
    warnings: list[str] = []
    if catalog is not None and table.num_rows:
        table = _inferred(table, catalog, warnings)
        cards = {c for c in table["card"].to_pylist() if c}
        english = {
            c: catalog.english[c.casefold()] for c in cards if c.casefold() in catalog.english
        }
        table = replace_column(
            table, "card", pc.coalesce(lookup(table["card"], english), table["card"])
        )
        by_oracle = lookup(table["oracle_id"], catalog.name_of)
        named = pc.and_(pc.is_null(table["card"]), pc.is_valid(by_oracle))
        table = replace_column(
            table, "card_origin", pc.if_else(named, CardOrigin.DATA.value, table["card_origin"])
        )
        table = replace_column(table, "card", pc.coalesce(table["card"], by_oracle))
        oracle = lookup(table["card"], catalog.oracle_of)
        table = replace_column(table, "oracle_id", pc.coalesce(table["oracle_id"], oracle))
    no_card = pc.is_null(table["card"])
    orphans = table.filter(pc.and_(no_card, pc.is_valid(table["oracle_id"])))
    warnings += [
        f"{path}: {count} rulings name only an oracle id; card left empty, oracle id kept "
        "(pass --catalog with a Scryfall or MTGJSON file to name them)"
        for path, count in sorted(Counter(strings(orphans["source_path"])).items())
    ]
    unnamed = pc.and_(pc.and_(no_card, pc.is_null(table["oracle_id"])), _is_ruling(table))
    for path in sorted(set(strings(table.filter(unnamed)["source_path"]))):
        warnings.append(
            f"{path}: no card: the title is not a card name and no manifest or catalog names one"
        )
    return table, warnings


def _is_ruling(table: pa.Table) -> Any:  # noqa: ANN401 - an Arrow boolean array
    return pc.equal(table["kind"], pa.scalar(Kind.RULING.value))


def _inferred(table: pa.Table, catalog: Catalog, warnings: list[str]) -> pa.Table:
    """Give documents with no card the one catalog card their rulings mention."""
    unknown = pc.and_(pc.is_null(table["card"]), _is_ruling(table))
    if not pc.any(unknown).as_py():
        return table
    texts: dict[str, list[str]] = defaultdict(list)
    for path, text in zip(strings(table.filter(unknown)["source_path"]),
                          strings(table.filter(unknown)["text"]), strict=True):  # fmt: skip
        texts[path].append(text)
    found: dict[str, str] = {}
    for path, ruling_texts in sorted(texts.items()):
        names = set().union(*(catalog.mentions(t) for t in ruling_texts))
        if len(names) == 1:
            found[path] = names.pop()
        elif names:
            several = ", ".join(sorted(names))
            warnings.append(f"{path}: rulings mention several catalog cards ({several}); no guess")
    if not found:
        return table
    guess = pc.if_else(unknown, lookup(table["source_path"], found), pa.scalar(None, pa.string()))
    hit = pc.is_valid(guess)
    table = replace_column(
        table, "card_origin", pc.if_else(hit, CardOrigin.INFERRED.value, table["card_origin"])
    )
    table = replace_column(table, "card_printed", pc.coalesce(table["card_printed"], guess))
    return replace_column(table, "card", pc.coalesce(table["card"], guess))
