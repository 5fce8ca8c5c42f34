"""Words of the outputs people read: a count with its noun in the right number."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """COUNT with NOUN, singular for one: "1 version", "2 versions", "0 entries".

    PLURAL is the noun's plural where it is not NOUN + "s" ("entry", "entries").
    """
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
