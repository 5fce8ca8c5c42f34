"""The Comprehensive Rules: the page's link to the current release as text, downloaded.

Wizards' rules page links each release as PDF, TXT and DOCX, the TXT named like
`MagicCompRules 20240206.txt` (the space URL-encoded). Each release is kept under its own
name (`comprules/MagicCompRules-20240206.txt`): the reader dates a release by its text and
compares it with the last one stored, so a new release shows its changes, and a rebuild
from raw/ has every release fetched since.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin, urlsplit

from pipeline.fetching.client import FetchError
from pipeline.fetching.job import ACCEPT_HTML, ACCEPT_TEXT, Job

if TYPE_CHECKING:
    from pipeline.fetching.client import Client

NAME = "comprules"
DEFAULT = "https://magic.wizards.com/en/rules"
_DATE = re.compile(r"(?<!\d)(\d{8})(?!\d)")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]


def plan(client: Client, page: str) -> list[Job]:
    """The newest .txt release the rules page links."""
    html = client.get(page, accept=ACCEPT_HTML).decode("utf-8", errors="replace")
    url = newest_release(html, page)
    name = stored_name(url)
    return [Job(NAME, name, f"comprules/{name}", url, ACCEPT_TEXT)]


def newest_release(html: str, page: str) -> str:
    """The absolute URL of the newest .txt the page links (by the date in its name)."""
    parser = _Links()
    parser.feed(html)
    parser.close()
    links = [urljoin(page, h.strip()) for h in parser.hrefs]
    texts = [u for u in links if unquote(urlsplit(u).path).lower().endswith(".txt")]
    if not texts:
        raise FetchError(page, "the page links no .txt release of the rules")

    def released(position_url: tuple[int, str]) -> tuple[str, int]:
        position, url = position_url
        found = _DATE.findall(unquote(urlsplit(url).path).rsplit("/", 1)[-1])
        return (found[-1] if found else "", position)

    return max(enumerate(texts), key=released)[1]


def stored_name(url: str) -> str:
    """The file name a release is kept under: `MagicCompRules 20240206.txt` → `…-20240206.txt`."""
    base = unquote(urlsplit(url).path).rsplit("/", 1)[-1]
    name = _UNSAFE.sub("-", base).strip("-.")
    return name if name.lower().endswith(".txt") else "MagicCompRules.txt"
