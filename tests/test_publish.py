"""The HTML changelog page, the stats command and the analysts' Python API."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import RAW

import pipeline
from pipeline import ingest
from pipeline.cli import cli
from pipeline.errors import StoreError, UsageError
from pipeline.publishing.dataset import load_changeset
from pipeline.publishing.render_html import render_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE_TEXT = "A ruling with <script>alert('x')</script> & <b>markup</b> in it."


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    """Seed 003 then seed 000 as one card and source, with a hostile ruling removed on the way."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    raw.mkdir()
    (raw / "manifest.csv").write_text("path,card\ndump.txt,The Tenth Doctor\n", encoding="utf-8")
    first = (RAW / "003_4e428d287bba6602.txt").read_text(encoding="utf-8")
    (raw / "dump.txt").write_text(f"{first}\n\u2022 2023-10-13\n  {HOSTILE_TEXT}\n", "utf-8")
    ingest([raw], out=out)
    shutil.copy(RAW / "000_3c6244a5804b91f0.txt", raw / "dump.txt")
    shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw / "rift-bolt.txt")
    ingest([raw], out=out)
    return out


class _Articles(HTMLParser):
    """Collects the page's articles (their attributes) and its scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.articles: list[dict[str, str | None]] = []
        self.scripts = 0
        self.shown = ""
        self._in_shown = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article":
            self.articles.append(dict(attrs))
        self.scripts += tag == "script"
        self._in_shown = dict(attrs).get("id") == "shown"

    def handle_data(self, data: str) -> None:
        if self._in_shown:
            self.shown += data


def _parse(html: str) -> _Articles:
    parser = _Articles()
    parser.feed(html)
    return parser


def test_page_is_self_contained_and_escaped(scenario: Path) -> None:
    """One file, no external reference, one script (ours); ruling markup shown as text."""
    html = render_html(load_changeset(scenario))
    page = _parse(html)
    assert page.scripts == 1
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &lt;b&gt;markup&lt;/b&gt;" in html
    assert "<script>alert" not in html
    assert "<svg" in html
    changes = [a["data-change"] for a in page.articles]
    assert changes.count("amended") == 3
    assert changes.count("removed") == 3  # the hostile, the mana abilities, the suspend merge
    assert "<del>causes</del> <ins>gives</ins>" in html
    replaced = html[html.index("<h3>Replaced") :].split("</article>")[0]
    assert replaced.count('<blockquote class="removed"><del>') == 2
    assert '<blockquote class="added"><ins>Due to a recent rules change' in replaced


def _chromium(url: str, *flags: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = Path(url.removeprefix("file://").split("#", maxsplit=1)[0]).parent / "profile"
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={profile}", *flags, url,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
def test_page_in_headless_chromium(scenario: Path, tmp_path: Path) -> None:
    """In a real browser: the groups are there, the filters work from the URL, a screenshot."""
    page = tmp_path / "changelog.html"
    code = CliRunner().invoke(
        cli, ["changelog", "--out", str(scenario), "--format", "html", "-o", str(page)]
    )
    assert code.exit_code == 0
    dom = _parse(_chromium(f"file://{page}", "--dump-dom").stdout)
    assert len(dom.articles) >= 11
    assert not [a for a in dom.articles if "hidden" in a]
    assert dom.shown == f"{len(dom.articles)} of {len(dom.articles)} groups shown"
    filtered = _parse(_chromium(f"file://{page}#change=removed", "--dump-dom").stdout)
    visible = [a for a in filtered.articles if "hidden" not in a]
    assert {a["data-change"] for a in visible} == {"removed"}
    assert filtered.shown == f"{len(visible)} of {len(dom.articles)} groups shown"
    url = f"file://{page}#card=The%20Tenth%20Doctor&lang=en&change=amended"
    by_card = _parse(_chromium(url, "--dump-dom").stdout)
    assert len([a for a in by_card.articles if "hidden" not in a]) == 3
    shot = tmp_path / "changelog.png"
    _chromium(f"file://{page}", f"--screenshot={shot}", "--window-size=1100,1600")
    assert shot.stat().st_size > 10_000


def test_stats_command(scenario: Path) -> None:
    """The table for people and the JSON for programs carry the same figures."""
    result = CliRunner().invoke(cli, ["stats", "--out", str(scenario), "--json"])
    assert result.exit_code == 0
    figures = json.loads(result.stdout)
    assert figures["runs"] == 2
    assert figures["cards"] == 2
    assert figures["rulings"]["current"] == 19 + 13
    assert figures["by_lang"]["ko"] == {"current": 3, "total": 3}
    assert figures["by_source"] == {"dump.txt": 37, "rift-bolt.txt": 13}
    table = CliRunner().invoke(cli, ["stats", "--out", str(scenario)]).stdout
    assert "rulings           " in table
    counts = figures["rulings"]
    shown = f"{counts['total']} ({counts['current']} in force, {counts['stale_source']} only"
    assert shown in table
    assert counts["current"] + counts["stale_source"] + counts["historical"] == counts["total"]


def test_help_lists_every_command() -> None:
    """`pipeline --help` names each command with its summary."""
    result = CliRunner().invoke(cli, ["--help"])
    for command in ("ingest", "changelog", "history", "site", "stats"):
        assert f"  {command} " in result.stdout


def test_api_rulings_changes_history_runs(scenario: Path) -> None:
    """DataFrames with pyarrow-backed dtypes and real dates; filters as documented."""
    ds = pipeline.open_dataset(scenario)
    today = ds.rulings()
    assert len(today) == 32
    assert isinstance(today["card"].dtype, pd.ArrowDtype)
    assert today["effective_date"].dropna().map(type).eq(__import__("datetime").date).all()
    assert set(ds.rulings(card="Rift Bolt", lang="ko")["lang"]) == {"ko"}
    assert len(ds.rulings(current_only=False)) > len(today)
    assert set(ds.changes(run=2, rule_changes_only=True)["change"]) == {
        "amended",
        "removed",
        "added",
    }
    assert len(ds.changes(since="2000-01-01")) == len(ds.changes())
    history = ds.history("The Tenth Doctor")
    assert {"appeared", "disappeared", "text"} <= set(history.columns)
    assert list(ds.runs()["run"]) == [1, 2]


def test_api_duckdb_views(scenario: Path) -> None:
    """SQL over the rulings, sightings, changes and runs views."""
    con = pipeline.open_dataset(scenario).duckdb()
    rows = con.sql("SELECT count(*) FROM rulings WHERE current").fetchall()
    assert rows == [(32,)]
    assert con.sql("SELECT max(run) FROM runs").fetchall() == [(2,)]
    amended = con.sql("SELECT count(*) FROM changes WHERE change = 'amended'").fetchall()
    assert amended == [(3,)]


def test_api_errors(tmp_path: Path) -> None:
    """A missing folder, or one that holds other Parquet files, gives a clear error."""
    with pytest.raises(UsageError, match="no dataset here"):
        pipeline.open_dataset(tmp_path / "nowhere")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    pd.DataFrame({"a": [1]}).to_parquet(foreign / "runs.parquet")
    with pytest.raises(StoreError, match="not written by this pipeline"):
        pipeline.open_dataset(foreign)
