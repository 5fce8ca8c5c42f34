"""A card's Oracle as text, and the edits between two Oracle texts of one card.

An edit is words removed and added with the card's own names written "~" and "this
creature", "this spell" … written "this ~", and the word after it (the word before, at the
end): the 2024 rewording of self-references ("Amrou Seekers can't be blocked" -> "This
creature can't be blocked", "untap Brass Gnat." -> "untap this creature.") is one edit,
("~", "this ~"), on every card it was made to.
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Any

from pipeline.text.normalize import fold

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

FACE_SEPARATOR = "\n//\n"
SELF = "~"  # the card's own name in an edit
_THIS = re.compile(r"\bthis (?:[a-z]+)\b", re.IGNORECASE)
# An edit's words: the card's own name, a word, or one mark of punctuation (so that "~." and
# "~:" are "~" followed by a mark: the same self-reference wherever it ends a sentence).
_MARK_AFTER_SPACE = re.compile(r" ([,.;:!?)'])")
_WORD = re.compile(r"~|\w[\w'\-]*|[^\w\s]")  # texts are folded first: apostrophes straight


def rendered(faces: Sequence[dict[str, Any]]) -> str:
    """A card's Oracle as text: each face's cost, type line, rules text and numbers."""
    shown = []
    for face in faces:
        head = " ".join(p for p in (face.get("name"), face.get("mana_cost")) if p)
        lines = [head, face.get("type_line") or "", face.get("oracle_text") or ""]
        if face.get("power") is not None or face.get("toughness") is not None:
            lines.append(f"{face.get('power') or ''}/{face.get('toughness') or ''}")
        lines += [f"{k.capitalize()}: {face[k]}" for k in ("loyalty", "defense") if face.get(k)]
        shown.append("\n".join(line for line in lines if line))
    return FACE_SEPARATOR.join(shown)


def edits(old: str, new: str, names: Iterable[str]) -> list[tuple[str, str]]:
    """The word edits from OLD to NEW as (before, after), the card's NAMES written as SELF.

    "this creature", "this spell" … are written "this ~" too, and each edit keeps the word
    after it (the word before, at the end), so that "Amrou Seekers can't" -> "This creature
    can't" and "Rift Bolt deals" -> "This spell deals" are the one edit ("~", "this ~").
    """
    a, b = (_generic(text, names) for text in (old, new))
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    found = set()
    for tag, *ends in matcher.get_opcodes():
        if tag == "equal":
            continue
        i1, i2, j1, j2 = ends
        if i2 < len(a) and j2 < len(b):  # the word after, which both texts share
            i2, j2 = i2 + 1, j2 + 1
        elif i1 > 0 and j1 > 0:  # at the end: the word before
            i1, j1 = i1 - 1, j1 - 1
        found.add((_spoken(a[i1:i2]), _spoken(b[j1:j2])))
    return sorted(found)


def _spoken(words: list[str]) -> str:
    """WORDS as text: marks of punctuation against the word before them."""
    return _MARK_AFTER_SPACE.sub(r"\1", " ".join(words))


def _generic(text: str, names: Iterable[str]) -> list[str]:
    out = fold(text)
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        out = re.sub(rf"\b{re.escape(fold(name))}\b", SELF, out, flags=re.IGNORECASE)
    out = _THIS.sub(f"this {SELF}", out)
    return _WORD.findall(out.lower())
