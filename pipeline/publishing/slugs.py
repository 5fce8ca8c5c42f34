"""File names for the site's pages: readable, stable, and never two cards in one file.

A card's page is named from its name folded to lowercase ASCII words joined by hyphens
("Rift Bolt" -> rift-bolt, "Lim-Dûl's Vault" -> lim-dul-s-vault). Names that fold alike
(another case, another accent, other punctuation) would share a file on every file
system, and case-insensitive ones fold more: each of them gets a short hash of its own
name appended instead (lim-dul-s-vault-3fa2b1), so which card has which file depends on
the names alone, never on the order they were read in.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

_NOT_WORD = re.compile(r"[^a-z0-9]+")
_APOSTROPHES = re.compile("['\u2019\u02bc]")  # "Urza's" is urzas, not urza-s
_LONGEST = 80  # characters of the readable part: file systems cap a name at 255 bytes
_HASH = 6  # hex digits of the suffix: a clash among 16.7 million per readable name
# Names Windows reserves for devices, whatever the extension: such a page gets the hash.
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10))}
)
# Letters that NFKD does not take apart into an ASCII letter and marks (U+0131 is the dotless i).
_SPELLED = str.maketrans(
    {
        "æ": "ae",
        "œ": "oe",
        "ø": "o",
        "ß": "ss",
        "ð": "d",
        "þ": "th",
        "ł": "l",
        "đ": "d",
        "\u0131": "i",
    }
)


def readable(name: str) -> str:
    """NAME folded to lowercase ASCII words joined by hyphens ("" if none is left)."""
    lowered = unicodedata.normalize("NFKD", name.casefold().translate(_SPELLED))
    lowered = _APOSTROPHES.sub("", lowered)
    ascii_only = lowered.encode("ascii", "ignore").decode("ascii")
    return _NOT_WORD.sub("-", ascii_only).strip("-")[:_LONGEST].strip("-")


def hashed(name: str, digits: int = _HASH) -> str:
    """The short hash that tells NAME's page from those of names that fold alike."""
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:digits]


def slugs(names: Iterable[str]) -> dict[str, str]:
    """Each name's file name (without .html): readable, with a hash where names clash.

    A name whose readable form is empty or a reserved device name, or is shared with
    another name, is suffixed with its own hash; the rest are their readable form.
    """
    by_form: dict[str, list[str]] = defaultdict(list)
    for name in sorted(set(names)):
        by_form[readable(name)].append(name)
    found = {}
    for form, alike in by_form.items():
        for name in alike:
            plain = len(alike) == 1 and form and form not in _RESERVED
            found[name] = form if plain else _suffixed(form, name, _HASH)
    # A readable form can be another name's suffixed one ("Rift Bolt 1a2b3c"), and two
    # suffixes can clash: those names take the whole hash.
    users: dict[str, list[str]] = defaultdict(list)
    for name, slug in found.items():
        users[slug].append(name)
    for alike in users.values():
        if len(alike) > 1:
            for name in alike:
                found[name] = _suffixed(readable(name), name, 64)
    return found


def _suffixed(form: str, name: str, digits: int) -> str:
    return f"{form or 'card'}-{hashed(name, digits)}"
