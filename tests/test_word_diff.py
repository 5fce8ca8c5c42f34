"""Word diffs show words, not typography, in Markdown, JSON and HTML."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

from conftest import FIXTURES

from pipeline import ingest
from pipeline.publishing.dataset import load_changeset
from pipeline.publishing.render import render_json, render_markdown, word_diff
from pipeline.publishing.render_html import render_html

if TYPE_CHECKING:
    from pathlib import Path

RIFT_BOLT = FIXTURES / "raw" / "mtgjson-tsp" / "rift-bolt.txt"
TARGETS = "those targets are chosen when the spell is finally cast, not when it\u2019s exiled."


def test_word_diff_compares_folded_words() -> None:
    """A curly apostrophe made straight is the same word, shown as it is now spelled."""
    old = "It isn\u2019t cast, it\u2019s \u201cexiled.\u201d"
    new = "It isn't cast, it's now \"exiled.\""
    assert word_diff(old, new) == [("=", "It isn't cast, it's"), ("+", "now"), ("=", '"exiled."')]


def test_renderings_show_only_the_changed_word(tmp_path: Path) -> None:
    """Real Rift Bolt rulings re-typed with straight quotes and one word changed."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    shutil.copy(RIFT_BOLT, raw / "rift-bolt.txt")
    ingest([raw], out=out)
    text = RIFT_BOLT.read_text(encoding="utf-8")
    assert TARGETS in text
    retyped = text.replace(TARGETS, TARGETS.replace("finally", "eventually"))
    (raw / "rift-bolt.txt").write_text(retyped.replace("\u2019", "'"), encoding="utf-8")
    ingest([raw], out=out)
    cs = load_changeset(out)
    [group] = cs.groups  # only the amended ruling: the retyped apostrophes are no change
    assert group.new_text is not None
    assert "it's exiled" in group.new_text
    markdown = render_markdown(cs)
    assert "finally cast" not in markdown
    assert "is ~~finally~~ **eventually** cast, not when it's exiled." in markdown
    [data] = json.loads(render_json(cs))["groups"]
    assert [p for p in data["diff"] if p["op"] != "="] == [
        {"op": "-", "text": "finally"},
        {"op": "+", "text": "eventually"},
    ]
    html = render_html(cs)
    assert "<del>finally</del> <ins>eventually</ins> cast, not when it&#39;s exiled." in html
    assert html.count("<del>") == 1
