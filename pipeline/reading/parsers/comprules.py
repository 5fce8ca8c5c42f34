"""Comprehensive Rules releases (.txt): numbered rules and the glossary, dated by the release.

Every era since 2003 has the same shape: a title, the release date, a table of contents, the
numbered rules, the glossary, the credits. What changed: releases before 2009 say "These
rules are current as of …" (later ones "effective as of …"), and both eras continue some
rules and glossary entries on indented lines.
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
_RULE = re.compile(r"^(?P<id>\d{3}\.\d+[a-z]?)\.?\s+(?P<text>\S.*)$")
_CONTINUATION = re.compile(r"^(Example|Note):")
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
    rulings = [
        ParsedRuling(n, " ".join(parts), effective, Kind.RULE, rule_id=rule_id, lang="en")
        for n, (rule_id, parts) in enumerate(rules)
    ]
    if glossary_at is not None:
        for term, text in _glossary(lines[glossary_at:]):
            rulings.append(ParsedRuling(len(rulings), text, effective, Kind.GLOSSARY,
                                        rule_id=term, lang="en"))  # fmt: skip
    return ParsedDocument(
        LAYOUT, "Comprehensive Rules", tuple(rulings), warnings, source=SOURCE, as_of=as_of
    )


def _rules(lines: list[str]) -> tuple[list[tuple[str, list[str]]], int | None]:
    """The numbered rules with their parts, and the index of the glossary's first line.

    A rule goes on over "Example:" lines and over indented lines right under it; a section
    heading ("101. Starting the Game") ends it.
    """
    rules: list[tuple[str, list[str]]] = []
    open_rule = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped == "Glossary" and rules:
            return rules, i + 1
        if not stripped:
            continue
        match = _RULE.match(stripped)
        if match is not None:
            rules.append((match.group("id"), [match.group("text")]))
            open_rule = True
        elif rules and (_CONTINUATION.match(stripped) or (open_rule and line[0] in " \t")):
            rules[-1][1].append(stripped)
        else:
            open_rule = False
    return rules, None


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
