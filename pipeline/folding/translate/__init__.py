"""Translations linked to their English originals: a learned lexicon, an index, a table.

`translations_table(rulings)` is the entry point; `link()` decides one text. The lexicon
ships as `lexicon.json.gz`, rebuilt by `python -m pipeline.folding.translate.build`.
"""

from __future__ import annotations

from pipeline.folding.translate.index import EnglishIndex
from pipeline.folding.translate.link import Link, link
from pipeline.folding.translate.table import (
    LINK_COLUMNS,
    TRANSLATIONS_SCHEMA,
    has_work,
    translations_table,
    update_translations,
)

__all__ = [
    "LINK_COLUMNS",
    "TRANSLATIONS_SCHEMA",
    "EnglishIndex",
    "Link",
    "has_work",
    "link",
    "translations_table",
    "update_translations",
]
