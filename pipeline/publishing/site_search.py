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
words of the rulings in force, of the cards' Oracle texts today, and of the current rules and
glossary entries.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import as_dictionary, strings
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
    if text.isascii():  # most texts: nothing to decompose, no marks, no curly quotes
        return text.lower()
    text = unicodedata.normalize("NFKD", text.lower().replace("ß", "ss").replace("æ", "ae"))
    return text.translate(_UNMARKED).replace("\u2019", "'").replace("\u2018", "'")


class _Unmarked(dict[int, int | None]):
    """A translation table dropping the marks (Unicode category M), filled as chars are met."""

    def __missing__(self, code: int) -> int | None:
        found = None if unicodedata.category(chr(code)).startswith("M") else code
        self[code] = found
        return found


_UNMARKED = _Unmarked()


def words(text: str, shortest: int) -> set[str]:
    """The folded words of TEXT worth indexing."""
    return {
        w
        for w in set(_WORD.findall(fold(text)))
        if len(w) >= shortest and w not in _STOP and not w.isdigit()
    }


def shard(word: str) -> str:
    """The file a word is in: its first two letters, else its first letter's Unicode block."""
    head = word[:2]
    return head if _ASCII_KEY.fullmatch(head) else f"u{ord(word[0]) >> 8:x}"


@dataclass(frozen=True, slots=True)
class Documents:
    """What the index is made of: each document, and its names and texts as numbers in a pool.

    A text many cards share (a ruling repeated on every printing) is in the pool once, so
    it is folded and split into words once; the digest is of the pool and the numbers.
    """

    docs: list[list[str]]  # [kind, label, file] ([kind, label] where the file is the number)
    names: list[tuple[int, ...]]  # each document's names, as positions in the pool
    texts: list[tuple[int, ...]]  # each document's texts, likewise
    pool: list[str]

    def digest(self) -> str:
        """A digest of everything the index's files are made of."""
        digest = hashlib.sha256()
        for part in (self.pool, self.docs, self.names, self.texts):
            digest.update(json.dumps(part, ensure_ascii=False).encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        return digest.hexdigest()[:24]


class _Pool:
    """Distinct strings, numbered in the order they are first met."""

    def __init__(self) -> None:
        self.number: dict[str, int] = {}

    def add(self, texts: Iterable[str]) -> tuple[int, ...]:
        """The numbers of TEXTS, each once, in order."""
        number = self.number
        return tuple(dict.fromkeys(number.setdefault(t, len(number)) for t in texts))

    def extend(self, distinct: list[str]) -> int:
        """Add DISTINCT (strings not in the pool yet); the number of the first."""
        first = len(self.number)
        self.number.update(zip(distinct, range(first, first + len(distinct)), strict=True))
        return first


def search_documents(data: SiteData) -> Documents:
    """The documents a search finds, in order: cards, sections, rules, glossary entries."""
    pool = _Pool()
    docs: list[list[str]] = []
    names: list[tuple[int, ...]] = []
    texts: list[tuple[int, ...]] = []

    def add(kind: str, label: str, file: str, named: list[str], said: tuple[int, ...]) -> None:
        docs.append([kind, label, file] if file else [kind, label])
        names.append(pool.add(named))
        texts.append(said)

    card_names, card_texts = _card_words(data, pool)
    for row in data.cards:
        known = sorted(card_names.get(row.name, set()) - {row.name})
        said = tuple(dict.fromkeys(card_texts.get(row.name, ())))
        add("c", row.name, row.slug, [row.name, *known], said)
    for number, heading in data.sections.items():
        add("s", f"{number}. {heading}".rstrip(". "), "", [heading], ())
    for number, text in data.rules.items():
        title = data.titles.get(number.rstrip("abcdefghijklmnopqrstuvwxyz"))
        file = data.rule_files[number]
        label = f"{number} {title}" if title else number
        add("r", label, "" if file == number else file, [title or ""], pool.add([text]))
    for term, text in data.glossary.items():
        add("g", term, data.glossary_files[term], [term], pool.add([text]))
    return Documents(docs, names, texts, list(pool.number))


def index_files(documents: Documents) -> dict[str, bytes]:
    """The documents' file, then a file per shard of words."""
    files = {"search/docs.js": _script("docs", documents.docs)}
    by_shard: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: {"n": {}, "t": {}})
    for field, refs, shortest in (
        ("n", documents.names, _SHORTEST_NAME),
        ("t", documents.texts, _SHORTEST_TEXT),
    ):
        found = _postings(_inverted(documents.pool, refs, shortest), len(documents.docs))
        for w, postings in found.items():
            by_shard[shard(w)][field][w] = postings
    for key in sorted(by_shard):
        files[f"search/w-{key}.js"] = _script("words", key, by_shard[key])
    return files


def _inverted(pool: list[str], refs: list[tuple[int, ...]], shortest: int) -> dict[str, list[int]]:
    """Each word of the pool's strings REFS names, with the documents naming them, in order.

    Each string is split into words once, however many documents hold it; a word's
    documents are the union of its strings' documents.
    """
    holders: dict[int, list[int]] = defaultdict(list)  # a string of the pool -> documents
    for n, held in enumerate(refs):
        for i in held:
            holders[i].append(n)
    lists: dict[str, list[list[int]]] = defaultdict(list)
    for i, docs in holders.items():
        for w in words(pool[i], shortest):
            lists[w].append(docs)
    found = {}
    for w in sorted(lists):
        parts = lists[w]
        found[w] = parts[0] if len(parts) == 1 else sorted(set().union(*parts))
    return found


def _postings(index: dict[str, list[int]], size: int) -> dict[str, str]:
    """Each word's documents (sorted, distinct) as gaps in base 36, comma-separated ("0,3,1f").

    Whole-column: every word's gaps at once in numpy, written with a table of the base-36
    numerals up to SIZE, joined per word in Arrow.
    """
    if not index:
        return {}
    lengths = np.fromiter((len(v) for v in index.values()), np.int64, len(index))
    flat = np.fromiter(chain.from_iterable(index.values()), np.int64, int(lengths.sum()))
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    gaps = np.diff(flat, prepend=0)
    gaps[offsets[:-1]] = flat[offsets[:-1]]  # each word's first document: from 0
    numerals = pa.array([_base36(n) for n in range(size + 1)], pa.string())
    lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), numerals.take(gaps))
    joined = cast("pa.StringArray", pc.binary_join(lists, ","))  # a list array in: an array out
    return dict(zip(index, strings(joined), strict=True))


def _base36(n: int) -> str:
    digits = ""
    while True:
        n, rest = divmod(n, 36)
        digits = _BASE36[rest] + digits
        if not n:
            return digits


def _script(call: str, *values: object) -> bytes:
    """A script handing VALUES to the page: `siteSearch.words("su", {...});`."""
    payload = ",".join(
        json.dumps(v, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
        for v in values
    )
    return f"siteSearch.{call}({payload});\n".encode()


def _card_words(data: SiteData, pool: _Pool) -> tuple[dict[str, set[str]], dict[str, list[int]]]:
    """Each card's other names (printed, translated) and its texts: rulings in force, Oracle.

    The texts are numbers in POOL: the rulings' distinct texts are added to it whole (a
    ruling many printings repeat becomes a Python string once), then the Oracle texts.
    """
    rulings = data.rulings
    today = rulings.filter(pc.and_(rulings["current"], pc.is_valid(rulings["card"])))
    cards = strings(text_column(today, "card"))
    encoded = as_dictionary(text_column(today, "text"))
    first = pool.extend(strings(encoded.dictionary))
    texts: dict[str, list[int]] = defaultdict(list)
    for card, number in zip(cards, encoded.indices.to_numpy().tolist(), strict=True):
        texts[card].append(first + number)
    names: dict[str, set[str]] = defaultdict(set)
    english, printed = text_column(today, "card"), text_column(today, "card_printed")
    other = today.filter(pc.and_(pc.is_valid(printed), pc.not_equal(printed, english)))
    for name, printed_name in zip(
        strings(text_column(other, "card")),
        strings(text_column(other, "card_printed")),
        strict=True,
    ):
        if printed_name:
            names[name].add(printed_name)
    for name, card in data.translated_names.items():
        if card in data.slug_of:
            names[card].add(name)
    for card, oracle in data.oracle.items():
        texts[card].extend(pool.add(f.text for f in oracle.current.faces if f.text))
    return names, texts
