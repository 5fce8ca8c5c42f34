"""Re-key rulings whose mana symbols a scraper stripped to the same ruling with its symbols."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import TYPE_CHECKING

from pipeline.normalize import has_symbols, skeleton, text_hash

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pipeline.models import Sighting


def symbol_index(texts: Iterable[str]) -> dict[str, set[str]]:
    """Map the skeleton of every text that holds symbols to those texts."""
    index: dict[str, set[str]] = defaultdict(set)
    for text in texts:
        if has_symbols(text):
            index[skeleton(text)].add(text)
    return index


def repair(
    sightings: list[Sighting], known_texts: Iterable[str]
) -> tuple[list[Sighting], list[str]]:
    """Re-key stripped copies to the one ruling with symbols they match; report the rest.

    KNOWN_TEXTS are the texts the dataset already holds. A sighting without symbols whose
    skeleton equals that of exactly one known or newly read text with symbols is that
    ruling: it takes its hash and text (`ruling_text`) and keeps the hash it was read with
    in `repaired_from`. A gap with no match, or with several, is stored as read and flagged.
    """
    index = symbol_index([*known_texts, *(s.text for s in sightings)])
    by_hash: dict[str, str] = {}
    for candidates in index.values():
        for text in candidates:
            by_hash.setdefault(text_hash(text), text)
    out: list[Sighting] = []
    warnings: list[str] = []
    for sighting in sightings:
        if has_symbols(sighting.text):
            out.append(sighting)
            continue
        hashes = {text_hash(t) for t in index.get(skeleton(sighting.text), ())}
        if len(hashes) == 1:
            (new_hash,) = hashes
            out.append(
                dataclasses.replace(
                    sighting,
                    text_hash=new_hash,
                    ruling_text=by_hash[new_hash],
                    repaired_from=sighting.text_hash,
                )
            )
            continue
        if len(hashes) > 1:
            warnings.append(
                f"{sighting.source_path} #{sighting.position}: a stripped symbol matches "
                f"{len(hashes)} different rulings; stored as read"
            )
        out.append(sighting)
    return out, warnings
