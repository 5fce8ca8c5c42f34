"""A card catalog: English names, oracle ids and localized names, and what they settle."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Mask, listed, lookup, replace_column, strings
from pipeline.errors import UsageError
from pipeline.folding import card_files
from pipeline.folding.infer import NameIndex, Verdict, describe, evidence, infer
from pipeline.folding.names import unresolved
from pipeline.limits import Limits
from pipeline.models import CardOrigin, FileReport, FileStatus, Kind
from pipeline.text.normalize import card_key, card_name
from pipeline.text.words import counted

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

# The folder of a raw root whose files are card catalogs, not inputs (hidden: the reader
# passes over it); `pipeline fetch` keeps Scryfall's oracle cards there.
CATALOG_FOLDER = ".catalog"
_LOWER_WORD = re.compile(r"\b[a-z]+\b")
_LISTED = 5  # candidates named in a warning


@dataclass(slots=True)
class Catalog:
    """Names and ids of the cards in one or more catalog files."""

    english: dict[str, str] = field(default_factory=dict)  # card_key(name) -> English name
    # card_key(localized name) -> the English names it stands for, where two or more:
    # such a name names no card (it is not in ENGLISH once the catalog is loaded).
    shared: dict[str, set[str]] = field(default_factory=dict)
    oracle_of: dict[str, str] = field(default_factory=dict)  # English name -> oracle id
    name_of: dict[str, str] = field(default_factory=dict)  # oracle id -> English name
    index: NameIndex = field(default_factory=NameIndex)  # English and face names, for inference
    _texts: set[str] = field(default_factory=set)  # rules texts whose words were counted
    _own: set[str] = field(default_factory=set)  # the keys of English names
    # English names as spelt: one that is itself a catalog name is never re-spelt as another
    # whose key it shares ("STRASSE" and "Straße" fold alike).
    names: set[str] = field(default_factory=set)

    def add(
        self,
        name: str,
        oracle_id: str | None,
        localized: Iterable[str] = (),
        faces: Iterable[str] = (),
        *,
        legendary: bool = False,
    ) -> None:
        """Record a card by its English name, with its oracle id, localized and face names."""
        name = card_name(name)  # spelt as every stored name is
        key = card_key(name)
        self.names.add(name)
        if key not in self._own:  # an English name is that card's, whatever it translates
            self._own.add(key)
            self.english[key] = name
            self.shared.pop(key, None)
        for local in localized:
            local_key = card_key(local)
            if local_key in self._own:
                continue
            held = self.english.setdefault(local_key, name)
            if held != name:
                self.shared.setdefault(local_key, {held}).add(name)
        if oracle_id:
            self.oracle_of.setdefault(name, oracle_id)
            self.name_of.setdefault(oracle_id, name)
        for surface in (name, *faces):
            self.index.add(surface, name)
            short = _short_name(surface, legendary=legendary)
            if short:
                self.index.add(short, name, alias=True)

    def settle(self) -> None:
        """Forget the localized names that stand for two or more cards: they name none."""
        for key in self.shared:
            self.english.pop(key, None)

    def describe(self, terms: Iterable[str], text: str | None) -> None:
        """Note a card's keywords and types, and the ordinary words of its rules text."""
        self.index.terms.update(t.casefold() for t in terms)
        if text and text not in self._texts:
            self._texts.add(text)
            self.index.ordinary.update(_LOWER_WORD.findall(text))


def _short_name(name: str, *, legendary: bool) -> str | None:
    """What rulings call a legendary person: "Klothys" for "Klothys, God of Destiny"."""
    if "//" in name:
        return None
    if "," in name:
        return name.split(",", 1)[0].strip() or None
    first, _, rest = name.partition(" ")
    # "Basri" for "Basri Ket"; "The Tenth Doctor" and "Chandra's Regulator" are written out.
    return first if legendary and rest and first.isalpha() and first != "The" else None


def load_catalog(paths: Iterable[Path], limits: Limits | None = None) -> Catalog:
    """Read card catalog files: MTGJSON or Scryfall cards (see card_files.ACCEPTED).

    A file of no known shape, or one that cannot be read, is a UsageError naming it. The
    files are read under LIMITS (default: from the environment, as inputs are).
    """
    catalog = Catalog()
    limits = limits or Limits.from_env()
    for path in paths:
        for entry in card_files.entries(path, limits):
            # Rulings shorten the names of legendary creatures and planeswalkers.
            legendary = "Legendary" in entry.terms and bool(
                {"Creature", "Planeswalker"} & set(entry.terms)
            )
            catalog.add(entry.name, entry.oracle, entry.localized, entry.faces, legendary=legendary)
            catalog.describe(entry.terms, entry.text)
    catalog.settle()
    return catalog


def apply_catalog(table: pa.Table, catalog: Catalog | None) -> tuple[pa.Table, list[str]]:
    """Settle cards with the catalog: English names, oracle ids, and inferred cards.

    Without a catalog only the rows that name no card but an oracle id are reported.
    """
    warnings: list[str] = []
    if catalog is not None and table.num_rows:
        shared = {key: tuple(sorted(cards)) for key, cards in catalog.shared.items()}
        table = _by_oracle_where_shared(table, catalog, shared)
        warnings += unresolved(table, shared)
        table = _inferred(table, catalog, warnings)
        cards = {c for c in table["card"].to_pylist() if c}
        english = {
            c: catalog.english[card_key(c)]
            for c in cards
            if c not in catalog.names and card_key(c) in catalog.english
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
        f"{path}: {counted(count, 'ruling')} {'names' if count == 1 else 'name'} only an oracle "
        "id; card left empty, oracle id kept "
        "(pass --catalog with a Scryfall or MTGJSON file to name them)"
        for path, count in sorted(Counter(strings(orphans["source_path"])).items())
    ]
    unnamed = pc.and_(pc.and_(no_card, pc.is_null(table["oracle_id"])), _is_ruling(table))
    for path in sorted(set(strings(table.filter(unnamed)["source_path"]))):
        warnings.append(
            f"{path}: no card: the title is not a card name and no manifest or catalog names one"
        )
    return table, warnings


def _by_oracle_where_shared(
    table: pa.Table, catalog: Catalog, shared: dict[str, tuple[str, ...]]
) -> pa.Table:
    """TABLE with a card titled by a name of several cards named by its oracle id, if known."""
    if not shared:
        return table
    cards = table["card"].cast(pa.string())
    distinct = listed(pc.unique(cards).drop_null())
    ambiguous = pa.array(sorted(c for c in distinct if card_key(c) in shared), pa.string())
    by_oracle = lookup(table["oracle_id"], catalog.name_of)
    decided = pc.and_(pc.is_in(cards, value_set=ambiguous), pc.is_valid(by_oracle))
    if not pc.any(decided).as_py():
        return table
    table = replace_column(table, "card", pc.if_else(decided, by_oracle, cards))
    origin = pc.if_else(decided, CardOrigin.DATA.value, table["card_origin"])
    return replace_column(table, "card_origin", origin)


def _is_ruling(table: pa.Table) -> Mask:
    return pc.equal(table["kind"], pa.scalar(Kind.RULING.value))


def _inferred(table: pa.Table, catalog: Catalog, warnings: list[str]) -> pa.Table:
    """Give documents with no card the catalog card their rulings refer to as themselves.

    A ruling whose oracle id the catalog knows is named by it (apply_catalog), so it is
    no document of unknown card: nothing is inferred, or warned, for it.
    """
    named = pc.is_valid(lookup(table["oracle_id"], catalog.name_of))
    unknown = pc.and_(pc.and_(pc.is_null(table["card"]), _is_ruling(table)), pc.invert(named))
    if not pc.any(unknown).as_py():
        return table
    texts: dict[str, list[str]] = defaultdict(list)
    for path, text in zip(
        strings(table.filter(unknown)["source_path"]),
        strings(table.filter(unknown)["text"]),
        strict=True,
    ):
        texts[path].append(text)
    found: dict[str, str] = {}
    for path, verdict in sorted(infer(texts, catalog.index).items()):
        found.update(_report(path, verdict, warnings))
    if not found:
        return table
    guess = pc.if_else(unknown, lookup(table["source_path"], found), pa.scalar(None, pa.string()))
    hit = pc.is_valid(guess)
    table = replace_column(
        table, "card_origin", pc.if_else(hit, CardOrigin.INFERRED.value, table["card_origin"])
    )
    table = replace_column(table, "card_printed", pc.coalesce(table["card_printed"], guess))
    return replace_column(table, "card", pc.coalesce(table["card"], guess))


def _report(path: str, verdict: Verdict, warnings: list[str]) -> dict[str, str]:
    """The warning that shows a reviewer the evidence (or its lack); the card, if chosen."""
    best = verdict.candidates[0]
    if verdict.card is not None:
        warnings.append(f"{path}: card {verdict.card} inferred from its rulings ({evidence(best)})")
        return {path: verdict.card}
    listed = "; ".join(describe(c) for c in verdict.candidates[:_LISTED])
    more = len(verdict.candidates) - _LISTED
    listed += f"; and {more} more" if more > 0 else ""
    reason = (
        "no clear margin between the candidates"
        if best.evidence
        else "no ruling refers to a catalog card as itself"
    )
    warnings.append(f"{path}: no card inferred ({reason}): {listed}")
    return {}


def found_catalogs(paths: Sequence[Path]) -> list[tuple[str, Path]]:
    """The catalog files in the `.catalog/` folder of each raw root (folder) in PATHS."""
    found = []
    for given in paths:
        folder = given / CATALOG_FOLDER
        if not given.is_dir() or not folder.is_dir():
            continue
        found += [
            (f"{CATALOG_FOLDER}/{path.name}", path)
            for path in sorted(folder.iterdir())
            if not path.name.startswith(".") and path.is_file()
        ]
    return found


def run_catalog(
    given: Catalog | None, files: Sequence[Path], found: list[tuple[str, Path]]
) -> tuple[Catalog | None, list[FileReport]]:
    """The run's catalog: GIVEN, else FILES and those FOUND; the found ones left out, rejected.

    A file of FILES that cannot be read stops the run (a usage error, as --catalog always
    did); a found one is left out and reported, as any unreadable input is.
    """
    if given is not None or not (files or found):
        return given, []
    try:
        return load_catalog([*files, *(path for _, path in found)]), []
    except UsageError:
        if not found:
            raise
    # Which found file is unreadable: each alone (only on this rare path).
    usable, rejected = [], []
    for name, path in found:
        try:
            load_catalog([path])
        except UsageError as exc:
            reason = str(exc).removeprefix(f"{path}: ")
            rejected.append(FileReport(name, None, FileStatus.REJECTED, reason=reason))
        else:
            usable.append(path)
    return (load_catalog([*files, *usable]) if files or usable else None), rejected
