"""Comprehensive Rules releases (.txt): numbered rules and the glossary, dated by the release."""

from __future__ import annotations

import re

from pipeline.models import Kind, Layout, ParsedDocument, ParsedRuling, RawDocument
from pipeline.parsers._text import lines_of

LAYOUT = Layout.COMPREHENSIVE_RULES
SOURCE = "comprehensive_rules"
_EFFECTIVE = re.compile(r"These rules are effective as of (?P<date>.+?)\.?\s*$", re.MULTILINE)
# "100.1. These Magic rules ...", "702.62a Suspend is ...": a sub-rule, numbered or lettered.
_RULE = re.compile(r"^(?P<id>\d{3}\.\d+[a-z]?)\.?\s+(?P<text>\S.*)$")
_CONTINUATION = re.compile(r"^(Example|Note):")


def detect(doc: RawDocument) -> bool:
    """A release opens with its title and says when it takes effect."""
    head = doc.text[:4096]
    return "Comprehensive Rules" in head and _EFFECTIVE.search(head) is not None


def parse(doc: RawDocument) -> ParsedDocument:
    """One row per numbered rule (examples joined to it), then one per glossary entry."""
    lines = lines_of(doc.text)
    effective = next(
        (m.group("date") for line in lines[:40] if (m := _EFFECTIVE.search(line))), None
    )
    warnings: list[str] = []
    if effective is None:
        warnings.append("no 'These rules are effective as of' line: rules left undated")
    rules: list[tuple[str, list[str]]] = []
    glossary_at = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped == "Glossary" and rules:
            glossary_at = i + 1
            break
        match = _RULE.match(stripped)
        if match is not None:
            rules.append((match.group("id"), [match.group("text")]))
        elif rules and _CONTINUATION.match(stripped):
            rules[-1][1].append(stripped)
    rulings = [
        ParsedRuling(n, " ".join(parts), effective, Kind.RULE, rule_id=rule_id, lang="en")
        for n, (rule_id, parts) in enumerate(rules)
    ]
    if glossary_at is not None:
        for term, text in _glossary(lines[glossary_at:]):
            rulings.append(ParsedRuling(len(rulings), text, effective, Kind.GLOSSARY,
                                        rule_id=term, lang="en"))  # fmt: skip
    return ParsedDocument(LAYOUT, "Comprehensive Rules", tuple(rulings), warnings, source=SOURCE)


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
