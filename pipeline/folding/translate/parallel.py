"""Parallel card texts of MTGJSON set files: English beside each printed translation."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from pipeline.errors import InputError
from pipeline.reading.parsers.mtgjson import LANGUAGES as MTGJSON_LANGUAGES

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

# Sets kept out of the lexicon: DEV tunes the linker's thresholds, TEST is reported.
DEV_SETS = ("MID", "STX")
TEST_SETS = ("KHM", "NEO", "PLC", "VOW")


class Pair(NamedTuple):
    """One card's English text and its printed translation."""

    set_code: str
    lang: str
    english: str
    foreign: str


def read_pairs(paths: Iterable[Path]) -> list[Pair]:
    """Every (English, translation) card text of the set files, in file and card order."""
    found: list[Pair] = []
    for path in sorted(paths):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))["data"]
            set_code = str(data["code"])
            cards = data["cards"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            reason = f"not an MTGJSON set file ({type(error).__name__}: {error})"
            raise InputError(str(path), reason) from error
        for card in cards:
            english = card.get("text")
            if not english:
                continue
            for foreign in card.get("foreignData", ()):
                lang = MTGJSON_LANGUAGES.get(foreign.get("language", ""))
                if lang and foreign.get("text"):
                    found.append(Pair(set_code, lang, english, foreign["text"]))
    return found
