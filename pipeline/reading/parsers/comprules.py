"""Comprehensive Rules releases (.txt): numbered rules and the glossary, dated by the release.

Every era since 2003 has the same shape: a title, the release date, a table of contents, the
numbered rules, the glossary, the credits. What changed: releases before 2009 say "These
rules are current as of …" (later ones "effective as of …"); the releases of 2003-10-01 to
2004-02-01 cut every line near 100 columns and go on, unindented, on the next lines (where
a cross-reference can open a line: "See rule" / "103.4. If a player ..."); later ones
continue some rules and glossary entries on indented lines.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pipeline.models import Kind, Layout, ParsedDocument, ParsedRuling, RawDocument
from pipeline.reading.parsers._text import lines_of
from pipeline.text.dates import parse_date

if TYPE_CHECKING:
    import datetime as dt

LAYOUT = Layout.COMPREHENSIVE_RULES
SOURCE = "comprehensive_rules"
_RELEASE = re.compile(
    r"These rules are (?:effective|current) as of (?P<date>.+?)\.?\s*$", re.MULTILINE
)
# "100.1. These Magic rules ...", "702.62a Suspend is ...": a sub-rule, numbered or lettered.
# The space after the number may be missing: "901.4.All plane and phenomenon cards ...".
_RULE = re.compile(r"^(?P<id>\d{3}\.\d+[a-z]?)(?:\.\s*|\s+)(?P<text>\S.*)$")
_CONTINUATION = re.compile(r"^(Example|Note):")
_SECTION = re.compile(r"^\d{1,3}\.\s+[A-Z]")  # "502. Keyword Abilities", "5. Additional Rules"
_ENDS_SENTENCE = re.compile(r"[.!?:][\"'\u201d\u2019)\]]*$")
# A number after these is a cross-reference: "See rule" / "103.4.", "rules 409.1b and" / "409.1f".
# Lower case: a heading ("5. Additional Rules") is no sentence going on.
_LEADS_TO_NUMBER = re.compile(
    r"(?:\b(?:rules?|see|and|or|to|through|in|of|under|also|from|by|sections?)|[,(\-\u2013\u2014/])$"
)
# A release's rules look cut when, of at least _JUDGED rules of _LONG_WORDS words or more,
# over _OPEN_SHARE end mid-sentence, or when _WHOLE rules or more average under _SHORT_MEAN
# characters.
_LONG_WORDS = 8
_JUDGED = 20
_OPEN_SHARE = 0.1
_WHOLE = 100
_SHORT_MEAN = 120
_HEAD_LINES = 40  # the release date is printed right under the title


def detect(doc: RawDocument) -> bool:
    """A release opens with its title and says as of when its rules hold."""
    head = doc.text[:4096]
    return "Comprehensive Rules" in head and _RELEASE.search(head) is not None


def release_date(lines: list[str]) -> tuple[str | None, dt.date | None]:
    """The release date as printed under the title, and as a date (None if unreadable)."""
    printed = next(
        (m.group("date") for line in lines[:_HEAD_LINES] if (m := _RELEASE.search(line))), None
    )
    token = parse_date(printed) if printed else None
    return printed, token.resolve(None) if token is not None else None


def parse(doc: RawDocument) -> ParsedDocument:
    """One row per numbered rule (examples and indented lines joined), then one per term."""
    lines = lines_of(doc.text)
    effective, as_of = release_date(lines)
    warnings: list[str] = []
    if effective is None:
        warnings.append("no 'These rules are effective as of' line: rules left undated")
    rules, glossary_at = _rules(lines)
    warnings += _cut_warnings(effective, [" ".join(parts) for _, parts in rules])
    rulings = [
        ParsedRuling(n, " ".join(parts), effective, Kind.RULE, rule_id=rule_id, lang="en")
        for n, (rule_id, parts) in enumerate(rules)
    ]
    if glossary_at is not None:
        for term, text in _glossary(lines[glossary_at:]):
            rulings.append(
                ParsedRuling(len(rulings), text, effective, Kind.GLOSSARY, rule_id=term, lang="en")
            )
    return ParsedDocument(
        LAYOUT, "Comprehensive Rules", tuple(rulings), warnings, source=SOURCE, as_of=as_of
    )


def _rules(lines: list[str]) -> tuple[list[tuple[str, list[str]]], int | None]:
    """The numbered rules with their parts, and the index of the glossary's first line.

    A rule goes on over "Example:" lines, over indented lines under it, and over the lines
    right under it (no blank line between), whatever their indentation: the 2003-2004
    releases cut every line near 100 columns. A line right under another that opens with a
    number goes on with that line when it continues the sentence the line above left open
    (_continues): with its rule, or with a heading's sentence, which is no rule ("215. This
    section is now empty. See rule 205.4c and rule" / "420.5e about legendary permanents.").
    A blank line then a line that is no rule's, a section heading ("502. Keyword
    Abilities") or the glossary end a rule.
    """
    rules: list[tuple[str, list[str]]] = []
    open_rule = False
    above = ""  # the line above, stripped; "" when it was blank
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped == "Glossary" and rules:
            return rules, i + 1
        if not stripped:
            above = ""
            continue
        match = _RULE.match(stripped)
        # Right under a line (a rule's, or a heading's sentence) a number may go on with it.
        if match is not None and not (
            above and rules and _continues(above, match["id"], rules[-1][0])
        ):
            rules.append((match["id"], [match["text"]]))
            open_rule = True
        elif rules and _goes_on(line, above, open_rule=open_rule):
            rules[-1][1].append(stripped)
        else:
            open_rule = False
        above = stripped
    return rules, None


def _goes_on(line: str, above: str, *, open_rule: bool) -> bool:
    """Whether LINE, which opens no rule, goes on with the last rule (ABOVE: the line above)."""
    stripped = line.strip()
    if _CONTINUATION.match(stripped):
        return True
    if not open_rule:
        return False
    return line[0] in " \t" or (bool(above) and not _heading(stripped, above))


def _continues(above: str, number: str, current: str) -> bool:
    """Whether a line opening with NUMBER, right under ABOVE in rule CURRENT, continues it.

    A cross-reference the wrap put at a line's start ("See rule" / "103.4. If a player")
    follows a word that leads to a number, or a comma; or it follows a line that ends
    mid-sentence and goes back from (or repeats) the rule it is in, which a new rule never
    does. A rule's title ("502.35. Modular") ends with no full stop, and its first rule
    (502.35a) follows it in order.
    """
    if _LEADS_TO_NUMBER.search(above):
        return True
    return _ENDS_SENTENCE.search(above) is None and _order(number) <= _order(current)


def _heading(stripped: str, above: str) -> bool:
    """A section heading ("502. Keyword Abilities") under a line that ends a sentence."""
    return _SECTION.match(stripped) is not None and _ENDS_SENTENCE.search(above) is not None


def _order(rule_id: str) -> tuple[int, int, str]:
    """A rule number's place: 502.35 < 502.35a < 502.36 < 503.1."""
    section, rest = rule_id.split(".", 1)
    digits = rest.rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(section), int(digits), rest[len(digits) :]


def _cut_warnings(effective: str | None, texts: list[str]) -> list[str]:
    """A warning naming the release when its rules look cut (see docs/sources.md).

    Read whole, a release's rules of eight words or more end a sentence (all but 0 to 4
    of some 650 to 2,660 in the releases of ../shared/realdata) and average 250 to 275
    characters; cut to their first lines, most end mid-sentence and average under 100.
    """
    long = [t for t in texts if len(t.split()) >= _LONG_WORDS]
    open_ = sum(_ENDS_SENTENCE.search(t) is None for t in long)
    mean = sum(map(len, texts)) / len(texts) if texts else 0.0
    cut = len(long) >= _JUDGED and open_ > _OPEN_SHARE * len(long)
    short = len(texts) >= _WHOLE and mean < _SHORT_MEAN
    if not (cut or short):
        return []
    name = f"the release of {effective}" if effective else "an undated release"
    return [
        (
            f"{name}: {open_} of {len(long)} rules of {_LONG_WORDS} words or more end"
            f" mid-sentence and the {len(texts)} rules average {mean:.0f} characters (read"
            " whole, releases end all but a few and average 250-275): its rules may be cut"
            " to their first lines"
        )
    ]


def _glossary(lines: list[str]) -> list[tuple[str, str]]:
    """Glossary entries: a term line, its definition lines, a blank line; up to Credits."""
    entries: list[tuple[str, str]] = []
    block: list[str] = []
    for line in [*lines, ""]:
        stripped = line.strip()
        if stripped == "Credits":
            break
        if stripped:
            block.append(stripped)
            continue
        if len(block) >= 2:  # noqa: PLR2004 - a term and at least one line of definition
            entries.append((block[0], " ".join(block[1:])))
        block = []
    return entries
