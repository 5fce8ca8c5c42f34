"""The site's search index: prebuilt with the site, in small files a page loads on demand.

A static site has no server to ask, so the index is files (Pagefind's idea, without its
machinery): `search/docs.js` lists what can be found (cards, rules, sections, glossary
entries) as [kind, label, file]: the page is the kind's folder and the file (the
label's number where the file is left out); each `search/w-XX.js` holds the words that begin with
XX, each with the documents that hold it, names apart from texts. A search loads the list
and the one file per word typed, never the whole index. They are scripts that hand their
data to the page (`siteSearch.docs(...)`), not JSON fetched: a browser opens a script
from a site read off the disk (file://) where it refuses a fetch.

A word is folded as the page folds what is typed (lowercase, no accents, æ as ae):
card names (English, as printed, translated), rule numbers and section titles, and the
words of the rulings in force and of the current rules and glossary entries.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from typing import TYPE_CHECKING

import pyarrow.compute as pc

from pipeline.columns import strings
from pipeline.publishing.site_tables import text_column

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pipeline.publishing.site_data import SiteData

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_SHORTEST_TEXT = 3  # letters of a word of a text worth indexing
_SHORTEST_NAME = 2
_ASCII_KEY = re.compile(r"[a-z0-9]{2}")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
# Words so common in rulings and rules that a search for them finds everything.
_STOP = frozenset(
    {
        "the",
        "and",
        "that",
        "this",
        "with",
        "for",
        "you",
        "are",
        "its",
        "can",
        "any",
        "not",
        "but",
        "was",
        "has",
        "have",
        "from",
        "which",
        "when",
        "then",
        "than",
        "each",
        "into",
        "only",
        "one",
        "other",
        "it's",
        "they",
        "their",
        "them",
    }
)  # words of two letters or fewer are not indexed at all


def fold(text: str) -> str:
    """TEXT as the index and the page's script compare it (search.js's fold)."""
    text = unicodedata.normalize("NFKD", text.lower().replace("ß", "ss").replace("æ", "ae"))
    text = "".join(c for c in text if not unicodedata.category(c).startswith("M"))
    return text.replace("\u2019", "'").replace("\u2018", "'")


def words(text: str, shortest: int) -> set[str]:
    """The folded words of TEXT worth indexing."""
    return {
        w
        for w in _WORD.findall(fold(text))
        if len(w) >= shortest and w not in _STOP and not w.isdigit()
    }


def shard(word: str) -> str:
    """The file a word is in: its first two letters, else its first letter's Unicode block."""
    head = word[:2]
    return head if _ASCII_KEY.fullmatch(head) else f"u{ord(word[0]) >> 8:x}"


def _postings(ids: Iterable[int]) -> str:
    """Sorted document numbers as gaps in base 36, comma-separated ("0,3,1f")."""
    out, last = [], 0
    for n in sorted(set(ids)):
        gap, digits = n - last, ""
        last = n
        while True:
            gap, rest = divmod(gap, 36)
            digits = _BASE36[rest] + digits
            if not gap:
                break
        out.append(digits)
    return ",".join(out)


class _Index:
    """The documents and, for each folded word, the documents whose names or texts hold it."""

    def __init__(self) -> None:
        self.docs: list[list[str]] = []
        self.names: dict[str, set[int]] = defaultdict(set)
        self.texts: dict[str, set[int]] = defaultdict(set)

    def add(
        self, kind: str, label: str, file: str, named: Iterable[str], said: Iterable[str]
    ) -> None:
        """A document: its kind, label and file ("": the label's number), names and texts."""
        n = len(self.docs)
        self.docs.append([kind, label, file] if file else [kind, label])
        for name in named:
            for w in words(name, _SHORTEST_NAME):
                self.names[w].add(n)
        for text in said:
            for w in words(text, _SHORTEST_TEXT):
                self.texts[w].add(n)

    def files(self) -> dict[str, bytes]:
        """The documents' file, then a file per shard of words."""
        files = {"search/docs.js": _script("docs", self.docs)}
        by_shard: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: {"n": {}, "t": {}})
        for field, index in (("n", self.names), ("t", self.texts)):
            for w in sorted(index):
                by_shard[shard(w)][field][w] = _postings(index[w])
        for key in sorted(by_shard):
            files[f"search/w-{key}.js"] = _script("words", key, by_shard[key])
        return files


def search_files(data: SiteData) -> dict[str, bytes]:
    """The index's files, by path under the site folder: the documents, then a file per shard."""
    index = _Index()
    card_names, card_texts = _card_words(data)
    for row in data.cards:
        known = card_names.get(row.name, set())
        index.add("c", row.name, row.slug, {row.name, *known}, card_texts[row.name])
    for number, heading in data.sections.items():
        index.add("s", f"{number}. {heading}".rstrip(". "), "", [heading], [])
    for number, text in data.rules.items():
        title = data.titles.get(number.rstrip("abcdefghijklmnopqrstuvwxyz"))
        file = data.rule_files[number]
        label = f"{number} {title}" if title else number
        index.add("r", label, "" if file == number else file, [title or ""], [text])
    for term, text in data.glossary.items():
        index.add("g", term, data.glossary_files[term], [term], [text])
    return index.files()


def _script(call: str, *values: object) -> bytes:
    """A script handing VALUES to the page: `siteSearch.words("su", {...});`."""
    payload = ",".join(
        json.dumps(v, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
        for v in values
    )
    return f"siteSearch.{call}({payload});\n".encode()


def _card_words(data: SiteData) -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    """Each card's other names (printed, translated) and the texts of its rulings in force."""
    rulings = data.rulings
    today = rulings.filter(pc.and_(rulings["current"], pc.is_valid(rulings["card"])))
    cards = strings(text_column(today, "card"))
    texts: dict[str, list[str]] = defaultdict(list)
    for card, text in zip(cards, strings(text_column(today, "text")), strict=True):
        texts[card].append(text)
    names: dict[str, set[str]] = defaultdict(set)
    printed = text_column(today, "card_printed").to_pylist()
    for card, name in zip(cards, printed, strict=True):
        if name:
            names[card].add(name)
    for name, card in data.translated_names.items():
        if card in data.slug_of:
            names[card].add(name)
    return names, texts
