"""A Changeset as one self-contained HTML page: filters, word diffs and a month timeline.

No network and no external assets: styles, script and the SVG timeline are inline, and
every text from the data is escaped, so a ruling that contains markup is shown, not run.
"""

from __future__ import annotations

import json
from collections import Counter
from html import escape
from typing import TYPE_CHECKING

from pipeline.diffing.diff import ChangeType
from pipeline.publishing.changelog import kind_words
from pipeline.publishing.render import TITLES, change_counts, paired, rule_when, title, word_diff

if TYPE_CHECKING:
    from pipeline.publishing.changelog import Changeset, Group

_STYLE = """
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:960px;padding:1rem;color:#222}
h1{margin:.2rem 0}.counts{color:#555}form{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
label{font-size:.9rem}select{font:inherit}article{border:1px solid #ddd;border-radius:6px;
padding:.5rem 1rem;margin:.7rem 0}article[data-rule-change="true"]{border-left:5px solid #b33}
h3{margin:.3rem 0;font-size:1rem}.cards,.explained,.meta{margin:.2rem 0;font-size:.9rem}
blockquote{margin:.4rem 0;padding:.4rem .8rem;background:#f7f7f7;border-radius:4px}
del{background:#fdd;text-decoration:line-through}ins{background:#dfd;text-decoration:none;
font-weight:bold}.bar{fill:#b33}.axis{font-size:10px;fill:#555}#shown{color:#555}
"""
_SCRIPT = """
(function () {
  var groups = Array.prototype.slice.call(document.querySelectorAll("article.group"));
  var fields = {card: "f-card", lang: "f-lang", change: "f-change"};
  function value(name) { return document.getElementById(fields[name]).value; }
  function apply() {
    var card = value("card"), lang = value("lang"), change = value("change"), shown = 0;
    groups.forEach(function (g) {
      var cards = JSON.parse(g.getAttribute("data-cards"));
      var ok = (!card || cards.indexOf(card) >= 0) &&
               (!lang || g.getAttribute("data-lang") === lang) &&
               (!change || g.getAttribute("data-change") === change);
      if (ok) { g.removeAttribute("hidden"); shown++; } else { g.setAttribute("hidden", ""); }
    });
    document.getElementById("shown").textContent =
      shown + " of " + groups.length + " groups shown";
    var state = new URLSearchParams({card: card, lang: lang, change: change}).toString();
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", "#" + state);
    }
  }
  var start = new URLSearchParams(window.location.hash.slice(1));
  Object.keys(fields).forEach(function (name) {
    var select = document.getElementById(fields[name]);
    if (start.get(name)) { select.value = start.get(name); }
    select.addEventListener("change", apply);
  });
  apply();
})();
"""
_BAR_AREA = 880
_BAR_HEIGHT = 120


def render_html(cs: Changeset) -> str:
    """The changeset as a page for publishers."""
    runs = ", ".join(str(r) for r in cs.runs) or "none"
    counts = "; ".join(filter(None, [change_counts(cs), cs.first_seen_summary()]))
    cards = sorted({c for g in cs.groups for c, _ in g.cards if c})
    langs = sorted({g.lang for g in cs.groups if g.lang})
    changes = [t.value for t in ChangeType if any(g.change is t for g in cs.groups)]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Ruling changes: run {escape(runs)}</title><style>{_STYLE}</style></head><body>",
        (
            f'<header><h1>Ruling changes: run {escape(runs)}</h1><p class="counts">'
            f"{escape(counts or 'No changes.')}</p></header>"
        ),
        _timeline(cs),
        '<form id="filters" onsubmit="return false">',
        _select("f-card", "Card", cards),
        _select("f-lang", "Language", langs),
        _select("f-change", "Change", changes),
        '</form><p id="shown"></p><main>',
        *(_article(g) for g in cs.groups),
        "</main>",
        _stale(cs),
        _first_seen(cs),
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _select(ident: str, label: str, values: list[str]) -> str:
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return (
        f'<label for="{ident}">{label} <select id="{ident}"><option value="">all</option>'
        f"{options}</select></label>"
    )


def _article(g: Group) -> str:
    heading = title(g)
    if g.is_rule:
        number = " \u2192 ".join(dict.fromkeys(filter(None, [g.old_rule_id, g.new_rule_id])))
        heading = f"Rule {number}: {heading.lower()}"
    moved = (
        f"{g.old_date} \u2192 {g.new_date}"
        if g.old_date != g.new_date and g.old_date and g.new_date
        else f"dated {g.date}"
    )
    if g.is_rule and g.change is ChangeType.RENUMBERED:
        moved = rule_when(g)
    cards = ", ".join(
        f'<span class="card">{escape(card or "(no card)")}</span> ({escape(source)})'
        for card, source in g.cards
    )
    names = json.dumps(sorted({c for c, _ in g.cards if c}), ensure_ascii=False)
    lines = [
        (
            f'<article class="group" id="g-{escape(g.group)}" data-change="{g.change.value}" '
            f'data-rule-change="{str(g.rule_change).lower()}" data-lang="{escape(g.lang or "")}" '
            f'data-cards="{escape(names)}">'
        ),
        f"<h3>{escape(heading)}, {escape(moved)}</h3>",
        f'<p class="cards">{"Rules" if g.is_rule else "Cards"}: {cards}</p>',
    ]
    if g.explained_by:
        rules = escape(", ".join(g.explained_by))
        lines.append(f'<p class="explained">Explained by Comprehensive Rules {rules}.</p>')
    if g.is_replacement:
        lines.append('<p class="meta">Removed:</p>')
        lines += [
            f'<blockquote class="removed"><del>{escape(t)}</del></blockquote>' for t in g.replaced
        ]
        lines.append('<p class="meta">Replaced by:</p>')
        lines.append(
            f'<blockquote class="added"><ins>{escape(g.new_text or "")}</ins></blockquote>'
        )
    else:
        lines.append(f'<blockquote class="diff">{_body(g)}</blockquote>')
    if g.similarity is not None and g.change is ChangeType.AMENDED:
        lines.append(f'<p class="meta">Similarity {g.similarity:.1f}%{escape(paired(g))}.</p>')
    lines.append("</article>")
    return "\n".join(lines)


def _body(g: Group) -> str:
    if g.change is ChangeType.AMENDED and g.old_text and g.new_text:
        marks = {"=": "{}", "-": "<del>{}</del>", "+": "<ins>{}</ins>"}
        return " ".join(
            marks[op].format(escape(words)) for op, words in word_diff(g.old_text, g.new_text)
        )
    return escape(g.text)


def _timeline(cs: Changeset) -> str:
    """Card-level changes per month of their as-of date (when the data showed them), as SVG."""
    months: Counter[str] = Counter()
    for g in cs.groups:
        if g.when is not None:
            months[g.when.strftime("%Y-%m")] += g.changes + g.added
    if not months:
        return ""
    first, last = min(months), max(months)
    span: list[str] = []
    year, month = int(first[:4]), int(first[5:])
    while f"{year:04d}-{month:02d}" <= last:
        span.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)  # noqa: PLR2004
    width = max(_BAR_AREA / len(span), 2)
    top = max(months.values())
    bars = []
    for n, label in enumerate(span):
        height = _BAR_HEIGHT * months.get(label, 0) / top
        x = 40 + n * width
        bars.append(
            f'<rect class="bar" x="{x:.1f}" y="{10 + _BAR_HEIGHT - height:.1f}" '
            f'width="{max(width - 1, 1):.1f}" height="{height:.1f}">'
            f"<title>{label}: {months.get(label, 0)}</title></rect>"
        )
        if len(span) <= 24 or label.endswith("-01"):  # noqa: PLR2004 - label every month, or years
            bars.append(f'<text class="axis" x="{x:.1f}" y="{_BAR_HEIGHT + 24}">{label}</text>')
    return (
        '<section id="timeline"><h2>Changes per month</h2>'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_BAR_AREA + 60}" '
        f'height="{_BAR_HEIGHT + 34}" role="img" aria-label="changes per month">'
        f'<text class="axis" x="0" y="18">{top}</text>{"".join(bars)}</svg></section>'
    )


def _stale(cs: Changeset) -> str:
    if not cs.stale:
        return ""
    groups = []
    for g in cs.stale:
        items = "".join(
            f'<li><span class="lang">{escape(lang)}</span> {escape(card or "(no card)")}: '
            f"{escape(text)}</li>"
            for card, lang, text in g.translations
        )
        now = f"<p>Now: {escape(g.now)}</p>" if g.now else ""
        groups.append(
            f'<div class="stale"><h3>{escape(TITLES[g.change])}: {escape(g.original)}</h3>{now}'
            f"<ul>{items}</ul></div>"
        )
    return (
        '<section id="stale"><h2>Translations now out of date</h2>' + "".join(groups) + "</section>"
    )


def _first_seen(cs: Changeset) -> str:
    if not cs.first_seen and not cs.first_seen_rules:
        return ""
    items = "".join(
        f"<li>{escape(card or '(no card)')} ({escape(source)}): {count} ruling(s)</li>"
        for card, source, count in cs.first_seen
    ) + "".join(
        f"<li>{escape(source)}: {count} {escape(kind_words(kind))}</li>"
        for source, kind, count in cs.first_seen_rules
    )
    return f'<section id="first-seen"><h2>First seen</h2><ul>{items}</ul></section>'
