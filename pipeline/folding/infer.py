"""Card inference by evidence: the catalog card a document's rulings refer to as themselves.

Rulings mention many card names by accident: "Consider its card type", "Suspend is a
keyword", "the value of X", "Oracle text". A ruling refers to its own card in recognisable
ways instead: "The Tenth Doctor's first ability", "exiled with Rift Bolt", "Rift Bolt deals".
One pass over the texts with a token trie of every catalog name finds the mentions; each is
classed as evidence or not, weighed by how specific the name is, and a card is chosen only
with evidence and a clear margin over the next candidate.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

# Words and single punctuation marks; names and texts are cut the same way, so "Urza's Saga"
# and "Fire // Ice" match token by token whatever the spacing.
_TOKEN = re.compile(r"\w+|[^\w\s]")
# A sentence ends at . ! ? (and closing quotes or brackets) before a capital or a digit.
_BOUNDARY = re.compile(r"[.!?][\"\u201d'\u2019)]*\s+(?=[\"\u201c'\u2018(]*[A-Z0-9])")
_OPENERS = frozenset({'"', "\u201c", "'", "\u2018", "("})
# Self-reference: the weight of each kind of evidence.
EVIDENCE = {"possessive": 3.0, "exiled with": 3.0, "subject": 2.0, "full name": 1.0}
MENTION = 0.5  # a capitalised mid-sentence mention: counts toward the margin, is no evidence
MARGIN = 2.0  # the chosen card scores at least this many times the next candidate
# Verbs after a name that make it the subject of its sentence ("Rift Bolt deals").
_VERBS = frozenset(
    """enters entered deals dealt leaves dies attacks blocks becomes gets gains loses has had
    is isn't was wasn't will won't would can can't could cannot does doesn't did didn't must
    may might remains stays causes allows lets counts checks targets returns copies creates
    puts exiles triggers says refers uses resolves gives makes transforms destroys prevents
    untaps taps costs searches reveals draws sacrifices fights phases""".split()  # noqa: SIM905 - a word list reads better as words
)
_WITH = frozenset({"with", "by"})
_ACTED = frozenset({"put", "cast", "dealt", "chosen", "made", "paid", "drawn", "set"})
_DETERMINERS = frozenset(
    {"a", "an", "the", "each", "another", "target", "any", "that", "this", "those", "these"}
)
# Words after a name that make it a game term ("Oracle text", "Time counters").
_TERM_AFTER = frozenset(
    {"text", "wording", "ID", "counter", "counters", "token", "tokens", "type", "subtype"}
    | {"game", "games", "format", "variant"}  # "In a Two-Headed Giant game"
)
# Words after a keyword or type name that show it used as such ("suspend cost").
_KEYWORD_AFTER = frozenset(
    {"ability", "abilities", "card", "cards", "spell", "spells", "cost", "costs", "keyword"}
)
_LOWER_WORD = re.compile(r"\b[a-z]+\b")
_EXAMPLE_ANYWHERE = re.compile(r"\b(for example|for instance|e\.g\.)", re.IGNORECASE)
_EXAMPLE_LIST = re.compile(r"\b(such as|like|unlike|including)\b", re.IGNORECASE)
# "such as that of Mentor of the Meek", "such as Opt, Consider, or Fire": a name at most this
# many words after the marker, in the same clause, is an example.
_EXAMPLE_WORDS = 6
_CLAUSE_BREAK = re.compile(r"[;:]|,\s+(?!(?:and|or)\b)[a-z]")
_AS = re.compile(r"(?:^|,)\s*as\s+$")  # "copies a spell, as Finale of Promise may"


class Mention(NamedTuple):
    """One catalog name found in a ruling: the card, how it is used, and its sentence."""

    card: str
    kind: str  # an EVIDENCE key, "mention", or why it is no evidence
    sentence: str
    words: int  # words of the name as written (a face name may be shorter than the card's)
    name: str  # as written: the card's, a face's ("Fire") or a short name ("Klothys")


class Candidate(NamedTuple):
    """A card the rulings of one document mention, with its score and its mentions."""

    card: str
    score: float
    evidence: tuple[Mention, ...]  # self-reference mentions, strongest first
    others: tuple[Mention, ...]  # the mentions that are no evidence


class Verdict(NamedTuple):
    """The inferred card (or None) and the candidates it was chosen among, best first."""

    card: str | None
    candidates: tuple[Candidate, ...]


@dataclass(slots=True)
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    card: str | None = None
    words: int = 0
    alias: bool = False  # a short name ("Klothys" of "Klothys, God of Destiny")
    ambiguous: bool = False  # a short name of several cards: none of them


def _tokens(text: str) -> tuple[list[str], list[int], list[int]]:
    """The tokens of TEXT, their start and end offsets."""
    matches = list(_TOKEN.finditer(text.replace("\u2019", "'")))
    return [m.group() for m in matches], [m.start() for m in matches], [m.end() for m in matches]


@dataclass(slots=True)
class NameIndex:
    """A trie over the tokens of every catalog name: leftmost-longest matches in one pass."""

    root: _Node = field(default_factory=_Node)
    terms: set[str] = field(default_factory=set)  # casefolded keywords, ability words, types
    ordinary: set[str] = field(default_factory=set)  # lowercase words of the catalog's rules text

    def add(self, surface: str, card: str, *, alias: bool = False) -> None:
        """Index SURFACE (a card, face or short name) as a name of CARD; full names first."""
        node = self.root
        tokens = _tokens(surface)[0]
        for token in tokens:
            node = node.children.setdefault(token, _Node())
        if node.card == card or (node.card is not None and not node.alias):
            node.alias = node.alias and alias
            return
        if alias and (node.card is not None or node.ambiguous):
            node.card, node.ambiguous = None, True  # two cards share this short name
            return
        node.card, node.alias = card, alias
        node.words = sum(1 for t in tokens if t[0].isalnum())

    def mentions(self, text: str) -> list[Mention]:
        """Every catalog name TEXT mentions, classed as evidence or not."""
        words, starts, ends = _tokens(text)
        names = self.root.children
        bounds: list[int] = []  # sentence starts (offsets), found once a name is
        found: list[Mention] = []
        i = 0
        while i < len(words):
            if words[i] not in names:
                i += 1
                continue
            node, end, hit = self.root, i, None
            while end < len(words) and (child := node.children.get(words[end])):
                node, end = child, end + 1
                if node.card is not None:
                    hit = (node, end)
            if hit is None:
                i += 1
                continue
            matched, end = hit
            bounds = bounds or [0, *(m.end() for m in _BOUNDARY.finditer(text))]
            sentence = bisect_right(bounds, starts[i]) - 1
            first = bisect_left(starts, bounds[sentence])
            until = bounds[sentence + 1] if sentence + 1 < len(bounds) else len(text)
            name = text[starts[i] : ends[end - 1]]
            spot = _Spot(
                name=name,
                before=text[: starts[i]],
                clause=text[bounds[sentence] : starts[i]],
                after=tuple(words[end : end + 2]),
                previous=tuple(w.casefold() for w in words[max(first, i - 2) : i]),
                words=matched.words,
                sentence_start=all(w in _OPENERS for w in words[first:i]),
                term=name.casefold() in self.terms,
            )
            kind = next((k for k, rule in _RULES if rule(spot)), "mention")
            sentence_text = text[bounds[sentence] : until].strip()
            found.append(Mention(str(matched.card), kind, sentence_text, matched.words, name))
            i = end
        return found


class _Spot(NamedTuple):
    """A name found in a text, with what surrounds it."""

    name: str  # as written
    before: str  # the whole text before it
    clause: str  # its sentence up to it
    after: tuple[str, ...]  # the next two tokens
    previous: tuple[str, ...]  # the two tokens before it in its sentence, casefolded
    words: int
    sentence_start: bool
    term: bool  # the name is a keyword, an ability word or a type


def _is_example(spot: _Spot) -> bool:
    """After "for example" or "e.g.", a few words after "such as" or "like", or ", as"."""
    clause = spot.clause
    if _EXAMPLE_ANYWHERE.search(clause) or _AS.search(clause):
        return True
    for marker in _EXAMPLE_LIST.finditer(clause):
        gap = clause[marker.end() :]
        if len(gap.split()) <= _EXAMPLE_WORDS and not _CLAUSE_BREAK.search(gap):
            return True
    return False


def _is_quoted(spot: _Spot) -> bool:
    clause = spot.clause
    return bool(clause.count('"') % 2) or clause.count("\u201c") > clause.count("\u201d")


def _used_as_term(spot: _Spot) -> bool:
    return spot.term and (
        spot.sentence_start
        or any(p in _DETERMINERS for p in spot.previous)
        or spot.after[:1] in {(k,) for k in _KEYWORD_AFTER}
    )


# The first rule that holds names how a mention is used; none holding, it is a plain mention.
# Reasons for no evidence come first: they override any pattern.
_RULES: tuple[tuple[str, Callable[[_Spot], bool]], ...] = (
    ("variable", lambda s: len(s.name) == 1),
    ("in parentheses", lambda s: s.before.count("(") > s.before.count(")")),
    ("example", _is_example),
    ("quoted", _is_quoted),
    (
        "game term",
        lambda s: s.after[:1] in {(t,) for t in _TERM_AFTER} or s.after == ("card", "text"),
    ),
    ("keyword or type", _used_as_term),
    ("sentence start", lambda s: s.sentence_start and s.words == 1),
    ("possessive", lambda s: s.after == ("'", "s")),
    (
        "exiled with",
        lambda s: (
            len(s.previous) == 2  # noqa: PLR2004 - a participle, then "with"
            and s.previous[1] in _WITH
            and (s.previous[0].endswith("ed") or s.previous[0] in _ACTED)
        ),
    ),
    ("subject", lambda s: s.after[:1] in {(v,) for v in _VERBS}),
    ("full name", lambda s: s.words > 1),
    # A keyword or type capitalised mid-sentence with no self-reference ("Island you control").
    ("keyword or type", lambda s: s.term),
)


def name_weight(name: str, words: int, index: NameIndex, lowercase: set[str]) -> float:
    """How much a mention of NAME counts: longer names more, ordinary single words less."""
    weight = float(min(words, 3))
    folded = name.casefold()
    if words == 1 and (folded in index.terms or folded in index.ordinary or folded in lowercase):
        weight /= 2
    return weight


def infer(texts: Mapping[str, Iterable[str]], index: NameIndex) -> dict[str, Verdict]:
    """For each document (path -> ruling texts) that mentions a card, the verdict on it."""
    seen: dict[str, list[Mention]] = {}
    lowercase: set[str] = set()
    for ruling_texts in texts.values():
        for text in ruling_texts:
            if text not in seen:
                seen[text] = index.mentions(text)
                lowercase.update(_LOWER_WORD.findall(text))
    verdicts: dict[str, Verdict] = {}
    for path, ruling_texts in texts.items():
        by_card: dict[str, list[Mention]] = defaultdict(list)
        for text in dict.fromkeys(ruling_texts):
            for mention in seen[text]:
                by_card[mention.card].append(mention)
        if by_card:
            candidates = [_candidate(c, ms, index, lowercase) for c, ms in by_card.items()]
            verdicts[path] = _verdict(candidates)
    return verdicts


def _candidate(card: str, mentions: list[Mention], index: NameIndex, lower: set[str]) -> Candidate:
    weight = max(name_weight(m.name, m.words, index, lower) for m in mentions)
    evidence = sorted(
        (m for m in mentions if m.kind in EVIDENCE), key=lambda m: (-EVIDENCE[m.kind], m.sentence)
    )
    score = sum(EVIDENCE[m.kind] for m in evidence) + MENTION * sum(
        m.kind == "mention" for m in mentions
    )
    others = tuple(m for m in mentions if m.kind not in EVIDENCE)
    return Candidate(card, score * weight, tuple(evidence), others)


def _verdict(candidates: list[Candidate]) -> Verdict:
    ranked = tuple(sorted(candidates, key=lambda c: (-c.score, c.card)))
    best = ranked[0]
    runner_up = ranked[1].score if len(ranked) > 1 else 0.0
    # A name merely written out once may be another card's ("the ability of Mystic Sanctuary").
    alone = {m.sentence for m in best.evidence if m.kind == "full name"}
    strong = len(alone) > 1 or any(m.kind != "full name" for m in best.evidence)
    clear = strong and best.score >= MARGIN * runner_up
    return Verdict(best.card if clear else None, ranked)


def describe(candidate: Candidate) -> str:
    """CANDIDATE with its strongest mention: `Name (possessive: "sentence")`."""
    return f"{candidate.card} ({evidence(candidate)})"


def evidence(candidate: Candidate, limit: int = 100) -> str:
    """The strongest mention of CANDIDATE and its sentence: `possessive: "sentence"`."""
    mention = (candidate.evidence or candidate.others)[0]
    sentence = mention.sentence
    if len(sentence) > limit:
        sentence = sentence[: limit - 1].rstrip() + "\u2026"
    return f'{mention.kind}: "{sentence}"'
