"""Gatherer card pages (HTML): rulings in rulingDate / rulingText cells, dates M/D/YYYY."""

from __future__ import annotations

import re
import warnings
from urllib.parse import parse_qs, urlparse

from bs4 import BeautifulSoup, Tag, XMLParsedAsHTMLWarning
from bs4.filter import SoupStrainer

from pipeline.models import DateOrder, Kind, Layout, ParsedDocument, ParsedRuling, RawDocument

LAYOUT = Layout.GATHERER
SOURCE = "gatherer"
_MARKERS = ("rulingText", "subtitleDisplay", "gatherer.wizards.com")
_CELL = re.compile(r"_(ctl\d+)_ruling(Date|Text)$")
_HEADER = re.compile(r"SubContentHeader_subtitleDisplay$")
# Only the elements that carry the card name and the rulings are built into a tree.
_STRAINER = SoupStrainer(["span", "td", "div"])
_WORDS = {
    "white": "W", "blue": "U", "black": "B", "red": "R", "green": "G", "colorless": "C",
    "variable colorless": "X", "snow": "S", "tap": "T", "untap": "Q", "energy": "E",
    "two": "2", "phyrexian": "P", "half": "H",
}  # fmt: skip


def detect(doc: RawDocument) -> bool:
    """A Gatherer page is HTML that names Gatherer's card-page elements."""
    head = doc.text[:2048].lower()
    return ("<html" in head or "<!doctype html" in head) and any(m in doc.text for m in _MARKERS)


def symbol(alt: str | None, src: str | None) -> str:  # noqa: PLR0911 - one return per form
    """A mana symbol image as a Scryfall-style token: {X}, {G}, {2}, {T}, {G/W}, {G/P}."""
    words = (alt or "").strip().lower()
    if words.isdigit() or words in {"x", "y", "z"}:
        return "{" + words.upper() + "}"
    if words in _WORDS:
        return "{" + _WORDS[words] + "}"
    parts = [p for p in re.split(r"\s+or\s+|\s+", words) if p]
    if words.startswith("phyrexian ") and parts[1:] and parts[-1] in _WORDS:
        return "{" + _WORDS[parts[-1]] + "/P}"
    if " or " in words and all(p in _WORDS or p.isdigit() for p in parts):
        return "{" + "/".join(_WORDS.get(p, p) for p in parts) + "}"
    name = parse_qs(urlparse(src or "").query).get("name", [""])[0].upper()
    if name in {"TAP", "UNTAP"}:
        return "{T}" if name == "TAP" else "{Q}"
    if name.isdigit() or len(name) == 1:
        return "{" + name + "}"
    if len(name) == len("WU"):  # hybrid or Phyrexian: "WU", "2W", "GP"
        return "{" + "/".join(name) + "}"
    return f"{{{alt or '?'}}}"


def _cell_text(cell: Tag) -> str:
    for img in cell.find_all("img"):
        alt, src = img.get("alt"), img.get("src")
        img.replace_with(symbol(alt if isinstance(alt, str) else None,
                                src if isinstance(src, str) else None))  # fmt: skip
    for br in cell.find_all("br"):
        br.replace_with(" ")
    return cell.get_text()


def _card_name(soup: BeautifulSoup) -> str | None:
    header = soup.find("span", id=_HEADER)
    if header is not None and header.get_text(strip=True):
        return header.get_text(" ", strip=True)
    for label in soup.find_all("div", class_="label"):
        if label.get_text(strip=True).startswith("Card Name"):
            value = label.find_next_sibling("div", class_="value")
            if value is not None:
                return value.get_text(" ", strip=True)
    return None


def parse(doc: RawDocument) -> ParsedDocument:
    """The page's card name and its rulings, paired by the repeater row they sit in."""
    with warnings.catch_warnings():
        # Gatherer serves XHTML with an XML declaration; it is HTML all the same.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(doc.text, "lxml", parse_only=_STRAINER)
    rows: dict[str, dict[str, str]] = {}
    for cell in soup.find_all("td", id=_CELL):
        match = _CELL.search(str(cell.get("id")))
        if match is not None:
            rows.setdefault(match.group(1), {})[match.group(2)] = _cell_text(cell)
    problems: list[str] = []
    rulings: list[ParsedRuling] = []
    card = _card_name(soup)
    for row, cells in rows.items():
        text = cells.get("Text", "").strip()
        if not text:
            problems.append(f"ruling row {row} has no text; skipped")
            continue
        date = cells.get("Date", "").strip() or None
        rulings.append(ParsedRuling(len(rulings), text, date, Kind.RULING, card=card))
    return ParsedDocument(LAYOUT, card, tuple(rulings), problems,
                          date_order=DateOrder.MDY, source=SOURCE, may_be_empty=True)  # fmt: skip
