"""Gatherer card pages (HTML): rulings in rulingDate / rulingText cells, dates M/D/YYYY."""

from __future__ import annotations

import re
import warnings
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlparse

from lxml import etree
from lxml import html as lxml_html

from pipeline.errors import InputError
from pipeline.limits import over
from pipeline.models import DateOrder, Kind, Layout, ParsedDocument, ParsedRuling, RawDocument

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

LAYOUT = Layout.GATHERER
SOURCE = "gatherer"
_MARKERS = ("rulingText", "subtitleDisplay", "gatherer.wizards.com")
_CELL = re.compile(r"_(ctl\d+)_ruling(Date|Text)$")
_HEADER = re.compile(r"SubContentHeader_subtitleDisplay$")
# Only the elements that carry the card name and the rulings are built into a tree.
_STRAINED = ["span", "td"]
_CELLS = "//td[contains(@id, '_ruling')]"
# Elements that never hold others: they open no level.
_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    }
)
_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)[^>]*?(/?)>")
_SKIPPED = frozenset({"script", "style", "noscript", "template"})
_HEADERS = "//span[contains(@id, 'SubContentHeader_subtitleDisplay')]"
_WORDS = {
    "white": "W",
    "blue": "U",
    "black": "B",
    "red": "R",
    "green": "G",
    "colorless": "C",
    "variable colorless": "X",
    "snow": "S",
    "tap": "T",
    "untap": "Q",
    "energy": "E",
    "two": "2",
    "phyrexian": "P",
    "half": "H",
}


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


def parse(doc: RawDocument) -> ParsedDocument:
    """The page's card name and its rulings, paired by the repeater row they sit in.

    lxml reads the page (7.5 times faster than BeautifulSoup on the real pages); BeautifulSoup on
    Python's HTML parser is the fallback for markup lxml gives up on.
    """
    try:
        found = _with_lxml(doc.text)
        if found is None:  # lxml reads 255 levels; a deeper page is measured before the fallback
            if _deeper(doc.text, doc.limits.html_depth):
                cap = doc.limits.html_depth
                raise InputError(doc.path, over("html_depth", "HTML nested too deeply", cap))
            found = _with_soup(doc.text)
        cells, headers = found
    except RecursionError as exc:
        raise InputError(doc.path, "HTML nested too deeply to read") from exc
    card = next((h for h in headers if h), None)
    rows: dict[str, dict[str, str]] = {}
    for cell_id, text in cells:
        match = _CELL.search(cell_id)
        if match is not None:
            rows.setdefault(match.group(1), {})[match.group(2)] = text
    problems: list[str] = []
    rulings: list[ParsedRuling] = []
    for row, parts in rows.items():
        text = parts.get("Text", "").strip()
        if not text:
            problems.append(f"ruling row {row} has no text; skipped")
            continue
        date = parts.get("Date", "").strip() or None
        rulings.append(ParsedRuling(len(rulings), text, date, Kind.RULING, card=card))
    return ParsedDocument(
        LAYOUT,
        card,
        tuple(rulings),
        problems,
        date_order=DateOrder.MDY,
        source=SOURCE,
        may_be_empty=True,
    )


Cells = tuple[list[tuple[str, str]], list[str]]  # ((cell id, text)...), (card headers)


def _with_lxml(text: str) -> Cells | None:
    """The ruling cells and card headers, read by lxml; None where lxml gives up."""
    parser = lxml_html.HTMLParser(encoding="utf-8")
    try:
        tree = lxml_html.fromstring(text.encode("utf-8"), parser=parser)
    except (etree.ParserError, ValueError):
        return None
    if any(error.level_name == "FATAL" for error in parser.error_log):
        return None  # libxml2 dropped part of the page (nesting deeper than 256, say)
    cells = [(str(c.get("id")), _element_text(c)) for c in _elements(tree, _CELLS)]
    return cells, [" ".join(h.text_content().split()) for h in _elements(tree, _HEADERS)]


def _deeper(text: str, depth: int) -> bool:
    """Tell whether open tags nest deeper than DEPTH (void and self-closed tags open none).

    An estimate, counted on the tags as written: BeautifulSoup's time grows with the square
    of the nesting, so a page is measured before it is handed over.
    """
    level = 0
    for match in _TAG.finditer(text):
        closing, name, self_closed = match.groups()
        if closing:
            level = max(level - 1, 0)
        elif not self_closed and name.lower() not in _VOID:
            level += 1
            if level > depth:
                return True
    return False


def _with_soup(text: str) -> Cells:
    """The same, read by BeautifulSoup on Python's HTML parser: slower, with no depth limit."""
    soup = _soup(text)
    cells = [(str(c.get("id")), _tag_text(c)) for c in soup.find_all("td", id=_CELL)]
    return cells, [h.get_text(" ", strip=True) for h in soup.find_all("span", id=_HEADER)]


def _elements(tree: lxml_html.HtmlElement, path: str) -> list[lxml_html.HtmlElement]:
    found = tree.xpath(path)
    return (
        [e for e in found if isinstance(e, lxml_html.HtmlElement)]
        if isinstance(found, list)
        else []
    )


def _element_text(element: etree._Element) -> str:
    """An lxml cell's text, with symbol images as tokens and links as their text."""
    parts = [element.text or ""]
    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in _SKIPPED:
            pass  # a script or style is code, not ruling text
        elif tag == "img":
            parts.append(symbol(child.get("alt"), child.get("src")))
        elif tag == "br":
            parts.append(" ")
        elif tag:
            parts.append(_element_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _soup(text: str) -> BeautifulSoup:
    # Imported here, for the rare page lxml gives up on: bs4 is a fifth of the command's start.
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning  # noqa: PLC0415
    from bs4.filter import SoupStrainer  # noqa: PLC0415

    with warnings.catch_warnings():
        # Gatherer serves XHTML with an XML declaration; it is HTML all the same.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        return BeautifulSoup(text, "html.parser", parse_only=SoupStrainer(_STRAINED))


def _tag_text(cell: Tag) -> str:
    """A BeautifulSoup cell's text, with symbol images as tokens and links as their text."""
    for img in cell.find_all("img"):
        alt, src = img.get("alt"), img.get("src")
        img.replace_with(
            symbol(alt if isinstance(alt, str) else None, src if isinstance(src, str) else None)
        )
    for br in cell.find_all("br"):
        br.replace_with(" ")
    for code in cell.find_all(list(_SKIPPED)):
        code.decompose()
    return cell.get_text()
