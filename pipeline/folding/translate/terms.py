"""The terms of English texts, the part of the translation index that is worth keeping.

Taking a text's terms (words, anchors, names) is most of building the index, and a text's
terms never change; the weights, which depend on every text, are arrays computed from them
at once. A `TermTable` holds the terms of many texts column-wise, so a run can keep it
(pipeline.storage.terms) and the next one take only the texts it has not seen.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from pipeline.folding.translate.features import english, prepare

if TYPE_CHECKING:
    from collections.abc import Mapping

    from numpy.typing import NDArray

# Raised whenever what english_terms() gives for a text changes: a kept table of another
# version is not used.
TERMS_VERSION = 1


class TermTable(NamedTuple):
    """The terms of texts by hash (sorted), column-wise.

    Text N's terms are TERMS[OFFSETS[N]:OFFSETS[N + 1]], distinct and sorted, with how
    often the text holds each (COUNTS) and whether it is one of its names (NAMED: capitalised
    words inside sentences, which a translation may print translated).
    """

    hashes: list[str]
    offsets: NDArray[np.int64]
    terms: list[str]
    counts: NDArray[np.int64]
    named: NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.hashes)


class TermStore(Protocol):
    """Where the terms of a run's English texts are kept for the next run."""

    def load(self) -> TermTable | None:
        """The terms kept, if any."""

    def save(self, terms: TermTable) -> None:
        """Keep TERMS in place of those kept."""


def english_terms(text: str) -> tuple[list[str], list[int], list[bool]]:
    """An English text's distinct terms (sorted), their counts, and which are names."""
    found, anchored, named = english(prepare(text))
    bag = Counter(found + anchored)
    terms = sorted(bag)
    return terms, [bag[term] for term in terms], [term in named for term in terms]


def term_table(texts: Mapping[str, str], known: TermTable | None = None) -> TermTable:
    """The terms of TEXTS ({hash: text}), taken from KNOWN where it holds the hash."""
    hashes = sorted(texts)
    where = {text_hash: n for n, text_hash in enumerate(known.hashes)} if known else {}
    # One string object per distinct term, however many texts hold it: the table holds a
    # term row for every (text, term), most of them repeats.
    canonical: dict[str, str] = {}
    terms: list[str] = []
    counts: list[int] = []
    named: list[bool] = []
    offsets = [0]
    for text_hash in hashes:
        row = where.get(text_hash)
        if known is not None and row is not None:
            start, end = int(known.offsets[row]), int(known.offsets[row + 1])
            terms += known.terms[start:end]
            counts += known.counts[start:end].tolist()
            named += known.named[start:end].tolist()
        else:
            mine = english_terms(texts[text_hash])
            terms += [canonical.setdefault(term, term) for term in mine[0]]
            counts += mine[1]
            named += mine[2]
        offsets.append(len(terms))
    return TermTable(
        hashes,
        np.asarray(offsets, dtype=np.int64),
        terms,
        np.asarray(counts, dtype=np.int64),
        np.asarray(named, dtype=np.bool_),
    )
