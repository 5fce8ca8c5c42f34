"""The Jinja2 templates of the HTML pages and the feed: one environment, autoescaping on.

Every page, the one-page changelog and the site's, is rendered here from the templates in
templates/, so every text from the data goes through one escaping (markupsafe's) and every
change through one rendering of its word diff. A template sees the data it is given and
the helpers below; it links nowhere unless it is given a Links.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import jinja2
import markupsafe

from pipeline.diffing.diff import ChangeType
from pipeline.publishing.changelog import kind_words
from pipeline.publishing.render import TITLES, paired, rule_when, title, word_diff
from pipeline.text.normalize import printable

if TYPE_CHECKING:
    from pipeline.publishing.changelog import Group

# A Comprehensive Rules number in a text: 702.62a, 601.2f, 100.1 (not a price or a date).
RULE_NUMBER = re.compile(r"(?<![\w.])([1-9]\d{2}\.\d{1,3}[a-z]?)(?![\w])")
# A section named by a cross-reference ("see rule 729", "rules 702"), not a price, a date,
# nor a rule's number (729.1), nor the end of a sentence taken for one ("see rule 729.").
_SECTION_CITED = (
    r"(?:(?<=[Rr]ule )|(?<=[Rr]ules )|(?<=[Ss]ection )|(?<=[Ss]ections ))([1-9]\d{2})(?!\w|\.\d)"
)
_CITED = re.compile(f"{RULE_NUMBER.pattern}|{_SECTION_CITED}")
# Characters XML 1.0 forbids even escaped (a feed with one does not parse).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


class Links:
    """Where a page links a card, a rule, a run or a group; nowhere (None) by default.

    The one-page changelog links nothing; the site's pages link with relative paths.
    """

    def card(self, name: str | None) -> str | None:  # noqa: ARG002 - links nowhere
        """The card's page, or None."""
        return None

    def rule(self, rule_id: str | None) -> str | None:  # noqa: ARG002 - links nowhere
        """The rule's page, or None."""
        return None

    def run(self, run: int) -> str | None:  # noqa: ARG002 - links nowhere
        """The run's page, or None."""
        return None

    def release(self, key: str) -> str | None:  # noqa: ARG002 - links nowhere
        """A Comprehensive Rules release's page, or None."""
        return None

    def glossary(self, term: str | None) -> str | None:  # noqa: ARG002 - links nowhere
        """A glossary entry's page, or None."""
        return None


NO_LINKS = Links()


@dataclass(frozen=True, slots=True)
class Piece:
    """A stretch of a ruling's text: plain, or a rule number with the page it links to."""

    text: str
    rule: str | None = None
    href: str | None = None


def cited(text: str, links: Links) -> list[Piece]:
    """TEXT cut at its rule numbers, each linked where LINKS has the rule's page.

    A section a cross-reference names ("see rule 729") is linked to the section's page.
    """
    pieces, at = [], 0
    for match in _CITED.finditer(text):
        if match.start() > at:
            pieces.append(Piece(text[at : match.start()]))
        number = match.group(1) or match.group(2)
        pieces.append(Piece(number, number, links.rule(number)))
        at = match.end()
    if at < len(text):
        pieces.append(Piece(text[at:]))
    return pieces


def linked(text: str, links: Links) -> markupsafe.Markup:
    """TEXT escaped, its rule numbers linked where LINKS has the rule's page.

    What the `text` macro of _changes.html says, in Python: a card page shows ten or so
    rulings, and thirty thousand card pages call this three hundred thousand times.
    """
    if _CITED.search(text) is None:
        return markupsafe.escape(text)
    out = []
    for piece in cited(text, links):
        if piece.href is None:
            out.append(markupsafe.escape(piece.text))
        else:
            out.append(
                markupsafe.Markup('<a class="rule" href="{}">{}</a>').format(piece.href, piece.text)
            )
    return markupsafe.Markup("").join(out)


def rule_numbers(text: str) -> list[str]:
    """The rule numbers TEXT cites, in order, each once."""
    return list(dict.fromkeys(m.group(1) for m in RULE_NUMBER.finditer(text)))


def heading(g: Group) -> str:
    """A group's heading: its change (and a rule's number), as the changelogs say it."""
    words = title(g)
    if g.is_rule:
        number = " \u2192 ".join(dict.fromkeys(filter(None, [g.old_rule_id, g.new_rule_id])))
        return f"Rule {number}: {words.lower()}"
    return words


def moved(g: Group) -> str:
    """A group's dates: "2021-06-18 → 2024-02-02", "dated 2024-02-02", "as of …"."""
    if g.is_rule and g.change is ChangeType.RENUMBERED:
        return rule_when(g)
    if g.old_date != g.new_date and g.old_date and g.new_date:
        return f"{g.old_date} \u2192 {g.new_date}"
    return f"dated {g.date}"


def card_names(g: Group) -> str:
    """The group's card names as a JSON array (for the page's filter script)."""
    return json.dumps(sorted({c for c, _ in g.cards if c}), ensure_ascii=False)


def xml_text(value: object) -> str:
    """VALUE as text XML can hold: the control characters it forbids dropped."""
    return _NOT_XML.sub("", str(value))


@cache
def environment() -> jinja2.Environment:
    """The templates' environment: autoescaped, strict about undefined names."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pipeline.publishing", "templates"),
        autoescape=jinja2.select_autoescape(("html", "xml"), default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals.update(
        TITLES=TITLES,
        ChangeType=ChangeType,
        word_diff=word_diff,
        paired=paired,
        cited=cited,
        heading=heading,
        moved=moved,
        card_names=card_names,
        kind_words=kind_words,
        linked=linked,
    )
    env.filters["xml_text"] = xml_text
    return env


def render(name: str, **context: Any) -> str:  # noqa: ANN401 - the template's own values
    """Template NAME rendered with CONTEXT, without a control character but tab and newline."""
    return printable(environment().get_template(name).render(**context))


def template_sources() -> dict[str, str]:
    """Each template's name and source text: what a site's pages were rendered with."""
    env = environment()
    assert env.loader is not None
    return {name: env.loader.get_source(env, name)[0] for name in sorted(env.list_templates())}
