"""Typed records passed between the stages, and the enumerations they use."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from pipeline.limits import Limits

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable, Iterable


class Layout(StrEnum):
    """The raw layouts the parsers recognise."""

    PLAIN = "plain"
    BULLET = "bullet"
    RULES_EXCERPT = "rules_excerpt"
    GATHERER = "gatherer"
    MTGJSON = "mtgjson"
    SCRYFALL = "scryfall"
    COMPREHENSIVE_RULES = "comprehensive_rules"


class Kind(StrEnum):
    """What a row is: a card ruling or a rules paragraph."""

    RULING = "ruling"
    RULE = "rule"
    GLOSSARY = "glossary"


class DateOrder(StrEnum):
    """Order of day and month in a numeric date such as 07/06/2013."""

    DMY = "dmy"
    MDY = "mdy"


class FileStatus(StrEnum):
    """What a run did with one input file."""

    STORED = "stored"
    SKIPPED = "skipped"
    REJECTED = "rejected"


class CardOrigin(StrEnum):
    """Where a row's card name came from."""

    TITLE = "title"
    MANIFEST = "manifest"
    DATA = "data"  # the source names the card on each ruling (MTGJSON, Scryfall)
    INFERRED = "inferred"  # a catalog card name the rulings mention


class AsOfOrigin(StrEnum):
    """Where a document's as-of date came from, most trusted first."""

    DOCUMENT = "document"  # the document says so: MTGJSON meta.date, a rules release date
    MANIFEST = "manifest"  # the manifest's fetched_at
    PATH = "path"  # a date in the file's path
    MTIME = "mtime"  # the file's modification time


@dataclass(frozen=True, slots=True)
class SourceHints:
    """What the manifest (or the command line) says about one raw file."""

    card: str | None = None
    source: str | None = None
    fetched_at: str | None = None
    date_order: DateOrder | None = None


@dataclass(frozen=True, slots=True)
class RawDocument:
    """One raw document: a file, or a member of an archive, and how to read its content.

    A text layout's document holds its text with LF line ends. A JSON document's text is
    empty: its parsers stream it from `open()`, as often as they need (a peek at its top
    level, `meta` before `data`, then its items), from `data` or, for a large or compressed
    file, from OPENER, which gives a fresh stream of the content (decompressed) each time.
    """

    path: str  # the source_path: `seed.txt.gz`, `archive.zip/member.json`
    sha256: str  # of the file as stored (compressed bytes; an archive's, for its members)
    text: str
    encoding: str
    hints: SourceHints = field(default_factory=SourceHints)
    warnings: tuple[str, ...] = ()
    data: bytes = b""  # JSON held in memory: looked over for the limits when made
    limits: Limits = field(default_factory=Limits)  # the caps its parser reads it under
    opener: Callable[[], BinaryIO] | None = None
    lines: bool = False  # JSON Lines: one JSON object a line
    # The path its default source name comes from: PATH without a compression suffix, so
    # that `seed.txt.gz` holds versions of the dump `seed.txt` (empty: PATH itself).
    name: str = ""

    @property
    def streamed(self) -> bool:
        """Whether the document is JSON (or JSON Lines) read as a stream, not text."""
        return not self.text and (self.opener is not None or bool(self.data))

    def open(self) -> BinaryIO:
        """A fresh binary stream of the document's content, from its first byte."""
        return self.opener() if self.opener is not None else io.BytesIO(self.data)


class ParsedRuling(NamedTuple):
    """One ruling or rule as a parser found it, before normalisation.

    The optional fields are for sources that say more than a text dump: the card of each
    ruling (a file of many cards), its oracle id, a rule number, the language the source
    declares, a finer source name (Scryfall's wotc / scryfall), and the set of the printing
    (MTGJSON set files) with its release date. A named tuple, as
    `Sighting`: there is one per ruling read, and tuples are built several times faster
    than frozen dataclasses.
    """

    position: int
    text: str
    date_printed: str | None
    kind: Kind
    card: str | None = None
    oracle_id: str | None = None
    rule_id: str | None = None
    lang: str | None = None
    source: str | None = None
    set_code: str | None = None  # the set of the printing that gave it, and its release
    set_released: dt.date | None = None


class LocalName(NamedTuple):
    """A card's printed name in another language, as a source pairs it with the English one."""

    name: str  # as printed: "Dichotomagie"
    lang: str  # ISO 639-1, as `lang` columns hold it
    card: str  # the English name: "Dichotomancy"
    oracle_id: str | None = None


class CardFace(NamedTuple):
    """One face of a card as its Oracle gives it (a single-faced card has one)."""

    name: str
    mana_cost: str | None = None
    type_line: str | None = None
    oracle_text: str | None = None  # None: the face has no rules text (a vanilla creature)
    power: str | None = None  # as printed: "*", "1+*", "3"
    toughness: str | None = None
    loyalty: str | None = None
    defense: str | None = None


class CardFacts(NamedTuple):
    """What a card source says of one card: its Oracle and what analysts join on.

    One per card and document (a card's printings in a file are folded into one: PRINTINGS
    names every set code with its release date). Tuples are sorted so that equal facts
    compare equal whatever order the source listed them in.
    """

    name: str  # the English name, faces joined by " // " as rulings name split cards
    oracle_id: str | None
    layout: str | None  # normal, split, transform, adventure, …
    faces: tuple[CardFace, ...]
    supertypes: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    subtypes: tuple[str, ...] = ()
    mana_value: float | None = None
    colors: tuple[str, ...] = ()  # of W, U, B, R, G; sorted alphabetically, as every list
    color_identity: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    legalities: tuple[tuple[str, str], ...] = ()  # (format, "legal"/"banned"/"restricted"/…)
    printings: tuple[tuple[str, dt.date | None], ...] = ()  # (set code, its release date)


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """What a parser returns for one document.

    `rulings` is a tuple for text layouts and a lazy iterator for streamed JSON; `warnings`
    may grow while a lazy iterator is consumed. `date_order` is the layout's own convention
    (Gatherer prints month first); `source` the layout's stable source name (its format).
    """

    layout: Layout
    title: str | None
    rulings: Iterable[ParsedRuling]
    warnings: list[str] = field(default_factory=list)
    date_order: DateOrder | None = None
    source: str | None = None
    may_be_empty: bool = False  # a card page with no rulings is a page, not an error
    as_of: dt.date | None = None  # the date the document says it is a version of
    # The cards' translated names the document gives (MTGJSON foreignData); may grow while
    # a lazy `rulings` is consumed, as `warnings` may.
    names: list[LocalName] = field(default_factory=list)
    # The cards the document describes (MTGJSON cards, Scryfall card objects), one per
    # card; may grow while a lazy `rulings` is consumed, as `names` may.
    cards: list[CardFacts] = field(default_factory=list)


class Sighting(NamedTuple):
    """One ruling read from one document, before its text is cleaned and hashed.

    `text` is the paragraph as the parser found it; sightings_table() cleans and hashes
    each distinct text once and makes the row of sightings.parquet.
    """

    source_path: str
    source_sha256: str
    source: str
    layout: Layout
    position: int
    date_printed: str | None
    text: str
    card: str | None
    card_printed: str | None
    card_origin: CardOrigin | None
    effective_date: dt.date | None
    kind: Kind
    date_ambiguous: bool = False
    lang: str | None = None
    oracle_id: str | None = None
    rule_id: str | None = None
    fetched_at: str | None = None
    set_code: str | None = None
    set_released: dt.date | None = None


class FileReport(NamedTuple):
    """How one input file fared in a run: a row of files.parquet."""

    source_path: str
    source_sha256: str | None
    status: FileStatus
    reason: str | None = None
    layout: Layout | None = None
    encoding: str | None = None
    rulings: int = 0
    warnings: tuple[str, ...] = ()
    context: str = ""
    rules: int = 0  # rows of kind rule: a Comprehensive Rules release's numbered rules
    size: int | None = None  # the file's size and modification time when it was read
    mtime_ns: int | None = None
    as_of: dt.date | None = None  # the version's date (pipeline.reading.asof), for stored files
    as_of_origin: AsOfOrigin | None = None
    names: tuple[LocalName, ...] = ()  # translated card names the file gives (not stored here)
    cards: tuple[CardFacts, ...] = ()  # the cards the file describes (card_versions keeps them)
