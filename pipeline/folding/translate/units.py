"""The translations of a linking batch, column-wise: each text once, and one unit per card it is on.

A translation is ranked once per text and decided once per (text, card), a *unit*: its card's
own English texts are preferred (pipeline.folding.translate.link). `Units` holds a batch as
arrays, so that a batch is sliced, sent to a worker and decided without a Python object per
text or per English original.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from numpy.typing import NDArray

    from pipeline.folding.translate.index import EnglishIndex

# A text to link given one by one: its words, language, the English texts (hashes) of each
# card it is on (one decision each; a text of no known card has an empty collection), and
# those cards' names (None for no known card), one for each, or none at all.
Asked = tuple[str, str, "Sequence[Collection[str]]", "Sequence[str | None]"]


class Units(NamedTuple):
    """Texts to link and their units, in columns.

    Text N is TEXTS[N] in LANGS[N]; unit U is text UNIT_TEXT[U] (ascending) on the card named
    NAMES[U] (None: no known card), whose own English texts are the index positions
    OWN_DOCS[OWN_STARTS[U]:OWN_STARTS[U + 1]] (distinct, ascending).
    """

    texts: list[str]
    langs: list[str]
    unit_text: NDArray[np.int64]
    names: list[str | None]
    own_starts: NDArray[np.int64]
    own_docs: NDArray[np.int64]

    @property
    def size(self) -> int:
        """How many units."""
        return len(self.unit_text)

    def text_starts(self) -> NDArray[np.int64]:
        """Where each text's units begin, and where the last ends."""
        found = np.searchsorted(self.unit_text, np.arange(len(self.texts) + 1))
        return np.asarray(found, dtype=np.int64)

    def own_unit(self) -> NDArray[np.int64]:
        """The unit of each of OWN_DOCS."""
        return np.repeat(np.arange(self.size, dtype=np.int64), np.diff(self.own_starts))

    def every_card_owns(self) -> NDArray[np.bool_]:
        """Whether each text has a unit, and every unit of it an own English text."""
        owning = np.bincount(
            self.unit_text[np.diff(self.own_starts) > 0], minlength=len(self.texts)
        )
        held = np.bincount(self.unit_text, minlength=len(self.texts))
        found: NDArray[np.bool_] = (owning == held) & (held > 0)
        return found

    def slice(self, start: int, end: int) -> Units:
        """Texts START to END (as texts 0 to END - START) and their units."""
        first, last = (int(at) for at in np.searchsorted(self.unit_text, [start, end]))
        own_first, own_last = int(self.own_starts[first]), int(self.own_starts[last])
        return Units(
            self.texts[start:end],
            self.langs[start:end],
            self.unit_text[first:last] - start,
            self.names[first:last],
            self.own_starts[first : last + 1] - own_first,
            self.own_docs[own_first:own_last],
        )


def units_of(asked: Sequence[Asked], index: EnglishIndex) -> Units:
    """ASKED as Units: each card's originals as the positions INDEX gives them (others left)."""
    position = index.position
    owns = [
        sorted({position[h] for h in originals if h in position})
        for _, _, cards, _ in asked
        for originals in cards
    ]
    counts = [len(cards) for _, _, cards, _ in asked]
    own_starts = np.zeros(len(owns) + 1, dtype=np.int64)
    np.cumsum([len(own) for own in owns], out=own_starts[1:])
    return Units(
        [text for text, *_ in asked],
        [lang for _, lang, *_ in asked],
        np.repeat(np.arange(len(asked), dtype=np.int64), counts),
        [names[c] if names else None for _, _, cards, names in asked for c in range(len(cards))],
        own_starts,
        np.asarray([doc for own in owns for doc in own], dtype=np.int64),
    )


def asked_of(units: Units, index: EnglishIndex) -> list[Asked]:
    """UNITS as one Asked per text, each card's originals as hashes (units_of's inverse)."""
    starts = units.text_starts().tolist()
    own_starts = units.own_starts.tolist()
    docs = units.own_docs.tolist()
    found: list[Asked] = []
    for n, (text, lang) in enumerate(zip(units.texts, units.langs, strict=True)):
        mine = range(starts[n], starts[n + 1])
        cards = [{index.hashes[d] for d in docs[own_starts[u] : own_starts[u + 1]]} for u in mine]
        found.append((text, lang, cards, [units.names[u] for u in mine]))
    return found
