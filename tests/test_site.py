"""`pipeline site`: the static site of the seeds and the real TSP set, its feed, its rebuilds."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, RAW, REALDATA

from pipeline import ingest
from pipeline.cli import cli
from pipeline.publishing.dataset import load_changeset
from pipeline.publishing.render import render_markdown
from pipeline.publishing.render_html import render_html
from pipeline.publishing.site import MANIFEST, beside, build_site
from pipeline.publishing.site_pages import Earlier, _one_per_ruling
from pipeline.publishing.slugs import readable, slugs

TSP = REALDATA / "mtgjson-2022" / "TSP.json"
RULES = REALDATA / "comprules"
ATOM = "{http://www.w3.org/2005/Atom}"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_tsp = pytest.mark.skipif(
    not TSP.is_file(), reason="../shared/realdata is not beside this checkout"
)
needs_rules = pytest.mark.skipif(
    not RULES.is_dir(), reason="../shared/realdata is not beside this checkout"
)
SEED_RIFT_BOLT = RAW / "001_ca7dd0badab20c1e.txt"
OLD_WORDING = "The third is a triggered ability that causes you to cast the card"
NEW_WORDING = "The third is a triggered ability that gives you the option to cast the card"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run 1, the five seeds of raw/; run 2, the real MTGJSON 2022 Time Spiral set.

    Seed 001 is Rift Bolt's 2024 rulings, three in Korean; TSP holds its rulings before the
    2024 suspend change.
    """
    if not TSP.is_file():
        pytest.skip("../shared/realdata is not beside this checkout")
    root = tmp_path_factory.mktemp("site")
    out = root / "normalized"
    shutil.copytree(RAW, root / "raw")
    ingest([root / "raw"], out=out)
    (root / "tsp").mkdir()
    shutil.copy(TSP, root / "tsp" / "TSP.json")
    ingest([root / "tsp"], out=out)
    return out


@pytest.fixture(scope="module")
def site(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of that dataset, built once."""
    folder = tmp_path_factory.mktemp("built") / "site"
    build_site(dataset, folder)
    return folder


def _rift_bolt_run(out: Path, folder: Path, rewordings: dict[str, str]) -> None:
    """A run of seed 001 again (the same source), its rulings reworded: rule changes of one card."""
    folder.mkdir()
    text = SEED_RIFT_BOLT.read_text(encoding="utf-8")
    for old, new in rewordings.items():
        assert old in text
        text = text.replace(old, new)
    (folder / SEED_RIFT_BOLT.name).write_text(text, encoding="utf-8")
    ingest([folder], out=out)


RUN_3 = {
    "Cards exiled with suspend are exiled face up.":
        "Cards exiled with suspend are exiled face up, always.",
    "you must choose 0 as the value of X": "you must choose 0 for X",
}  # fmt: skip


@pytest.fixture(scope="module")
def history(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """That dataset and a third run amending two of Rift Bolt's rulings; and its site."""
    root = tmp_path_factory.mktemp("history")
    out = root / "normalized"
    shutil.copytree(dataset, out, symlinks=True)
    _rift_bolt_run(out, root / "raw3", RUN_3)
    build_site(out, root / "site")
    return out, root / "site"


class _Page(HTMLParser):
    """A page's links, scripts, texts by language, and the text of each section by id."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.scripts: list[dict[str, str | None]] = []
        self.by_lang: dict[str, list[str]] = {}
        self.sections: dict[str, str] = {}
        self.meta: list[dict[str, str | None]] = []
        self._langs: list[tuple[str, str | None]] = []
        self._section: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("href", "src"):
            if found.get(name):
                self.links.append(str(found[name]))
        if tag == "script":
            self.scripts.append(found)
        if tag == "meta":
            self.meta.append(found)
        if tag == "section":
            self._section = found.get("id")
        self._langs.append((tag, found.get("lang")))

    def handle_endtag(self, tag: str) -> None:
        while self._langs:
            opened, _ = self._langs.pop()
            if opened == tag:
                break
        if tag == "section":
            self._section = None

    def handle_data(self, data: str) -> None:
        lang = next((lang for _, lang in reversed(self._langs) if lang), None)
        if lang:
            self.by_lang.setdefault(lang, []).append(data)
        if self._section:
            self.sections[self._section] = self.sections.get(self._section, "") + data


def _page(path: Path) -> _Page:
    parser = _Page()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _copy_site(site: Path, folder: Path) -> None:
    """Copy the site in SITE to FOLDER with its manifest (beside it, not in it)."""
    shutil.copytree(site, folder)
    shutil.copy(beside(site)[0], beside(folder)[0])


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".site.lock"}  # fmt: skip


def test_rift_bolt_shows_both_wordings_and_its_korean_translations(site: Path) -> None:
    """Two sources disagree: the 2024 seed's wording is today's, MTGJSON 2022's is marked staler.

    The seed is the freshest source (by its as-of date), so its suspend ruling leads the page
    and MTGJSON's pre-2024 one shows under "Only in staler sources"; the three Korean rulings
    are marked lang="ko", each beside the English ruling it translates (or saying none was found).
    """
    page = _page(site / "cards" / "rift-bolt.html")
    assert NEW_WORDING in page.sections["today"]
    assert OLD_WORDING not in page.sections["today"]
    assert OLD_WORDING in page.sections["staler"]
    assert "staler source" in page.sections["staler"]
    html = (site / "cards" / "rift-bolt.html").read_text(encoding="utf-8")
    assert re.search(
        r"001_ca7dd0badab20c1e\.txt</span>, as of \S+ <span class=\"badge fresh\">freshest", html
    )
    korean = " ".join(page.by_lang["ko"])
    assert "유예를 가진 카드를 추방하는 것은" in korean
    assert "주문이 목표를 요구한다면" in korean
    assert "시간 카운터는 제거되지 않습니다" in korean
    assert html.count('<p class="text" lang="ko">') == 3
    translations = page.sections["translations"]
    assert "Translates If the spell requires any targets" in " ".join(translations.split())
    assert "current" in translations


def test_pages_are_self_contained_relative_and_escaped(site: Path) -> None:
    """Every link is relative and reaches a file of the site; no script or style from elsewhere."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 100
    for path in pages:
        page = _page(path)
        assert {"name": "viewport", "content": "width=device-width, initial-scale=1"} in page.meta
        for link in page.links:
            assert "://" not in link, (path, link)
            assert not link.startswith("/"), (path, link)
            target = link.split("#", 1)[0]
            if target:
                assert (path.parent / target).resolve().is_file(), (path, link)
        assert all("src" not in s for s in page.scripts), path  # inline only
        scripted = path in {site / "index.html", site / "search.html"}
        assert len(page.scripts) == (1 if scripted else 0), path
    text = (site / "index.html").read_text(encoding="utf-8")
    assert '<ul id="card-list">' in text
    assert '<a href="cards/rift-bolt.html">Rift Bolt</a>' in text  # readable without JavaScript


def test_hostile_names_and_texts_are_escaped(tmp_path: Path) -> None:
    """A card name and a ruling made of markup are shown as text on every page, never run."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    raw.mkdir()
    name = '<img src=x onerror="alert(1)">'
    quoted = name.replace('"', '""')
    (raw / "manifest.csv").write_text(f'path,card\ndump.txt,"{quoted}"\n', "utf-8")
    (raw / "dump.txt").write_text(
        "Rulings\n\n2024-02-02\n\nA ruling with <script>alert('x')</script> & <b>markup</b>.\n",
        "utf-8",
    )
    ingest([raw], out=out)
    build_site(out, tmp_path / "site")
    pages = {p: p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.html")}
    [card] = [p for p in pages if p.parent.name == "cards"]
    assert card.name == "img-src-x-onerror-alert-1.html"
    for text in pages.values():
        assert "<img" not in text
        assert "<script>alert" not in text
        assert "<b>markup" not in text
    assert (
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &lt;b&gt;markup&lt;/b&gt;"
        in pages[card]
    )
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in pages[card]


def _feed(site: Path) -> ET.Element:
    return ET.parse(site / "feed.xml").getroot()  # noqa: S314 - our own file


def test_feed_is_atom(history: tuple[Path, Path], tmp_path: Path) -> None:
    """RFC 4287: the feed's id, title, updated, author and links; each entry's too.

    Entries have an id, a title, an updated time and an alternate link, come newest first,
    and their ids are unique and the same in another build.
    """
    site = history[1]
    feed = _feed(site)
    assert feed.tag == f"{ATOM}feed"
    for name in ("id", "title", "updated", "author"):
        assert feed.find(f"{ATOM}{name}") is not None, name
    assert {link.get("rel") for link in feed.findall(f"{ATOM}link")} == {"self", "alternate"}
    entries = feed.findall(f"{ATOM}entry")
    assert len(entries) == 2  # run 3's two amendments (the seeds and TSP are other sources)
    ids = [str(e.findtext(f"{ATOM}id")) for e in entries]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"urn:uuid:[0-9a-f-]{36}", i) for i in ids)
    updated = [str(e.findtext(f"{ATOM}updated")) for e in entries]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT00:00:00Z", u) for u in updated)
    assert updated == sorted(updated, reverse=True)
    assert feed.findtext(f"{ATOM}updated") == updated[0]
    for entry in entries:
        assert entry.findtext(f"{ATOM}title")
        [link] = entry.findall(f"{ATOM}link")
        assert link.get("rel") == "alternate"
        assert (site / str(link.get("href")).split("#")[0]).is_file()
        content = entry.find(f"{ATOM}content")
        assert content is not None
        assert content.get("type") == "html"
        assert "<article" in str(content.text)  # HTML, escaped once in the XML
    build_site(history[0], tmp_path / "again")
    again = [e.findtext(f"{ATOM}id") for e in _feed(tmp_path / "again").findall(f"{ATOM}entry")]
    assert again == ids


def test_two_builds_are_byte_identical(dataset: Path, site: Path, tmp_path: Path) -> None:
    """The same dataset gives the same bytes, manifest included; a rebuild writes nothing."""
    again = tmp_path / "again"
    report = build_site(dataset, again)
    assert report.full
    assert _files(again) == _files(site)
    assert beside(again)[0].read_bytes() == beside(site)[0].read_bytes()
    before = {p: p.stat().st_mtime_ns for p in again.rglob("*") if p.is_file()}
    report = build_site(dataset, again)
    assert not report.full
    assert report.written == ()
    assert report.rendered == 8  # the index, the feed, the runs' index and pages, the rules'
    # index, the stylesheet, the search page: what every build makes (not the search index,
    # made of the same documents)
    assert {p: p.stat().st_mtime_ns for p in again.rglob("*") if p.is_file()} == before


def test_a_run_that_touches_one_card_rewrites_only_what_it_should(
    history: tuple[Path, Path], tmp_path: Path
) -> None:
    """A run amending one Rift Bolt ruling rewrites only its page and the pages that list runs.

    Its page, the index, the run's page, the runs' index and the feed are written, nothing
    else (mtimes and the build's write log); the feed keeps every id and gains one entry,
    first; a fresh build gives the same bytes.
    """
    out, folder = tmp_path / "normalized", tmp_path / "site"
    shutil.copytree(history[0], out, symlinks=True)
    _copy_site(history[1], folder)
    old_ids = [e.findtext(f"{ATOM}id") for e in _feed(folder).findall(f"{ATOM}entry")]
    mtimes = {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}
    _rift_bolt_run(
        out, tmp_path / "raw4", RUN_3 | {"It doesn't matter why": "It does not matter why"}
    )
    report = build_site(out, folder)
    assert not report.full
    searched = {w for w in report.written if w.startswith("search/")}
    assert searched <= {"search/w-do.js", "search/w-no.js"}  # the words it changed
    assert set(report.written) - searched == {
        "cards/rift-bolt.html", "index.html", "runs/4.html", "runs/index.html", "feed.xml",
    }  # fmt: skip
    assert report.rendered == 11 + len(list((folder / "search").iterdir()))  # those five, runs
    # 1 to 3, the rules' index, the stylesheet, the search page and its index
    changed = {str(p.relative_to(folder)) for p, t in mtimes.items() if p.stat().st_mtime_ns != t}
    changed -= searched
    assert changed == {
        "cards/rift-bolt.html",
        "index.html",
        "runs/index.html",
        "feed.xml",
    }
    assert not (folder / MANIFEST).exists()  # beside the folder, with the build's run in it
    assert json.loads(beside(folder)[0].read_text(encoding="utf-8"))["last_run"] == 4
    page = (folder / "cards" / "rift-bolt.html").read_text(encoding="utf-8")
    assert "It <del>doesn&#39;t</del> <ins>does not</ins> matter why" in page
    new_ids = [e.findtext(f"{ATOM}id") for e in _feed(folder).findall(f"{ATOM}entry")]
    assert len(old_ids) == 2
    assert new_ids[1:] == old_ids  # every id kept, the new entry first
    fresh = tmp_path / "fresh"
    build_site(out, fresh)
    assert _files(fresh) == _files(folder)


def test_a_page_removed_by_hand_comes_back(dataset: Path, site: Path, tmp_path: Path) -> None:
    """A card page missing from the folder is made again; nothing else is written."""
    folder = tmp_path / "site"
    _copy_site(site, folder)
    (folder / "cards" / "rift-bolt.html").unlink()
    report = build_site(dataset, folder)
    assert report.written == ("cards/rift-bolt.html",)
    assert _files(folder) == _files(site)


def test_slugs_are_readable_stable_and_never_shared() -> None:
    """Names that fold alike (case, accents, the ligature) get their own hash; others do not."""
    names = [
        "Rift Bolt",
        "Lim-Dûl's Vault",
        "Æther Vial",
        "Aether Vial",
        "aether vial",
        "Con",
        "火",
    ]
    found = slugs(names)
    assert found["Rift Bolt"] == "rift-bolt"
    assert found["Lim-Dûl's Vault"] == "lim-duls-vault"
    vials = [found[n] for n in ("Æther Vial", "Aether Vial", "aether vial")]
    assert len({v.casefold() for v in vials}) == 3
    assert all(re.fullmatch(r"aether-vial-[0-9a-f]{6}", v) for v in vials)
    assert re.fullmatch(r"con-[0-9a-f]{6}", found["Con"])  # a device name on Windows
    assert re.fullmatch(r"card-[0-9a-f]{6}", found["火"])
    assert slugs(reversed(names)) == found
    assert slugs(["Rift Bolt", "Aether Vial"]) == {
        "Rift Bolt": "rift-bolt",
        "Aether Vial": "aether-vial",
    }
    assert readable("Urza\u2019s Saga") == "urzas-saga"
    clash = slugs(["Rift Bolt", "rift bolt", "Rift Bolt " + found["Rift Bolt"][-6:]])
    assert len(set(clash.values())) == 3


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_site_command(dataset: Path, tmp_path: Path) -> None:
    """`pipeline site -o DIR` builds and reports; a folder of other files is refused (exit 2)."""
    code, stdout, _ = _cli("site", "--out", str(dataset), "-o", str(tmp_path / "site"))
    assert code == 0
    assert re.match(r"site \S+: \d+ pages, \d+ written", stdout)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    code, _, stderr = _cli("site", "--out", str(dataset), "-o", str(other))
    assert code == 2
    assert "holds files `pipeline site` did not write" in stderr
    code, _, stderr = _cli("site", "--out", str(tmp_path / "nowhere"), "-o", str(tmp_path / "s2"))
    assert code == 2
    assert "no dataset here" in stderr
    code, _, stderr = _cli("site", "--out", str(dataset))
    assert code == 2
    assert "Missing option '-o'" in stderr


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Comprehensive Rules of 2023-11-17, then of 2024-02-06, each a run."""
    if not RULES.is_dir():
        pytest.skip("../shared/realdata is not beside this checkout")
    root = tmp_path_factory.mktemp("rules")
    for release in ("2023-11-17.txt", "2024-02-06.txt"):
        folder = root / release.removesuffix(".txt")
        folder.mkdir()
        shutil.copy(RULES / release, folder)
        ingest([folder], out=root / "normalized")
    return root / "normalized"


@needs_rules
def test_history_of_a_rule(rules: Path) -> None:
    """`pipeline history --rule 702.62a`: the suspend rule before and after 2024-02-02."""
    code, stdout, _ = _cli("history", "--rule", "702.62a", "--out", str(rules))
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0] == "702.62a: 2 versions (1 current, 1 earlier)"
    assert re.match(
        r"#1  2023-11-17  2023-11-17 \(run 1\) until 2024-02-02 \(run 2\) .*play it without",
        lines[1],
    )
    assert lines[2].startswith("    amended into #2 (dated 2024-02-02, similarity 99.3%): ")
    assert re.match(
        r"#2  2024-02-02  since 2024-02-02 \(run 2\), current .*you may play it", lines[3]
    )
    for args, message in [
        ([], "give a CARD or --rule NUMBER (one of them)"),
        (["Rift Bolt", "--rule", "702.62a"], "give a CARD or --rule NUMBER (not both)"),
        (["--rule", "702.62z"], "no rule '702.62z'"),
    ]:
        code, _, stderr = _cli("history", *args, "--out", str(rules))
        assert code == 2, args
        assert stderr.startswith("Error: ")
        assert message in stderr


@pytest.mark.slow
@needs_rules
def test_rule_pages(rules: Path, tmp_path: Path) -> None:
    """A page per rule with its versions: 702.62a's two, the amendment marked word by word."""
    report = build_site(rules, tmp_path / "site")
    page = (tmp_path / "site" / "rules" / "702.62a.html").read_text(encoding="utf-8")
    assert page.count('<li><p class="text">') == 2
    assert "<del>play</del> <ins>you may play</ins>" in page or "<ins>you may</ins>" in page
    assert "effective 2023-11-17" in page
    assert "effective 2024-02-02" in page
    assert "(Suspend)" in page
    assert report.pages > 2900
    renumbered = (tmp_path / "site" / "rules" / "701.34e.html").read_text(encoding="utf-8")
    assert (
        '<li>Renumbered from <a href="../rules/701.34d.html">701.34d</a>, as of 2024-02-02'
        in renumbered
    )
    assert (
        '<li>Renumbered to <a href="../rules/701.34f.html">701.34f</a>, as of 2024-02-02'
        in renumbered
    )


@pytest.fixture(scope="module")
def rules_site(rules: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of the two real rules releases, built once."""
    folder = tmp_path_factory.mktemp("rules-site") / "site"
    build_site(rules, folder)
    return folder


@needs_rules
def test_a_page_per_rules_release(rules_site: Path) -> None:
    """The 2024-02-02 release: substantive changes first with word diffs, the rest folded.

    702.62a's amendment is a substantive change, marked word by word; 701.34d -> 701.34e is in
    the renumbered list; 104.6, whose only change is "rule 723" -> "rule 724", is among the
    cross-reference updates; every rule number is a link to a page that exists.
    """
    path = rules_site / "releases" / "2024-02-02.html"
    page = _page(path)
    changes, renumbered = page.sections["changes"], page.sections["renumbered"]
    html = path.read_text(encoding="utf-8")
    assert "702.62a (Suspend) amended" in " ".join(changes.split())
    assert "<ins>you may</ins> play it" in html
    assert "701.34d → 701.34e" in renumbered
    assert "702.62a" not in page.sections["references"]
    assert re.search(r'href="../rules/104.6.html">104.6</a>: <del>723,</del> <ins>724,</ins>', html)
    assert (
        html.index('id="changes"') < html.index('id="renumbered"') < html.index('id="references"')
    )
    rule_links = [link for link in page.links if "/rules/" in link]
    assert len(rule_links) > 180
    for link in rule_links:
        assert (path.parent / link.split("#")[0]).is_file(), link
    rule = (rules_site / "rules" / "702.62a.html").read_text(encoding="utf-8")
    assert '<a href="../releases/2024-02-02.html">the release</a>' in rule


@needs_rules
def test_rules_index_by_section_glossary_and_cross_references(rules_site: Path) -> None:
    """The rules' index by chapter and section with change marks; glossary pages; links.

    "7. Additional Rules" holds "702. Keyword Abilities", whose page lists 702.62a marked
    "amended 2024-02-02"; a rule's page names its chapter and section; the glossary entry
    "Day" has a page, and "Prototype Card"'s "See rule 718" links the section's page.
    """
    index = (rules_site / "rules" / "index.html").read_text(encoding="utf-8")
    assert '<h3 id="c7">7. Additional Rules</h3>' in index
    assert re.search(
        r'<a href="702.html">702. Keyword Abilities</a> <span class="n">\d+ rules</span> '
        r'<span class="badge warn">\d+ changed</span>',
        index,
    )
    section = (rules_site / "rules" / "702.html").read_text(encoding="utf-8")
    assert re.search(
        r'<a href="../rules/702.62a.html">702.62a</a> Suspend is [^<]*<a class="badge warn" '
        r'href="../releases/2024-02-02.html">amended 2024-02-02</a>',
        section,
    )
    rule = (rules_site / "rules" / "702.62a.html").read_text(encoding="utf-8")
    assert (
        '<a href="index.html#c7">7. Additional Rules</a> \u203a <a href="../rules/702.html">'
        in rule
    )
    day = (rules_site / "glossary" / "day.html").read_text(encoding="utf-8")
    assert "<h1>Glossary: Day</h1>" in day
    prototype = (rules_site / "glossary" / "prototype-card.html").read_text(encoding="utf-8")
    assert 'See rule <a class="rule" href="../rules/718.html">718</a>, “Prototype' in prototype
    glossary = (rules_site / "glossary" / "index.html").read_text(encoding="utf-8")
    assert '<a href="../glossary/day.html">Day</a>' in glossary


@needs_rules
def test_a_run_page_links_its_rule_changes(rules_site: Path) -> None:
    """Run 2's rules groups name and link their rules, never "(no card)"; one narrow bar."""
    page = (rules_site / "runs" / "2.html").read_text(encoding="utf-8")
    assert "(no card)" not in page
    assert (
        'Rule <a class="rule" href="../rules/702.62a.html">702.62a</a> (comprehensive_rules)'
        in page
    )
    assert re.search(r'Rule <a class="rule" href="../rules/701.34d.html">701.34d</a> \u2192 ', page)
    assert 'Glossary entry <a class="rule" href="../glossary/day.html">Day</a>' in page
    [width] = re.findall(r'<rect class="bar" x="[^"]+" y="[^"]+" width="([^"]+)"', page)
    assert float(width) < 50


@needs_rules
def test_rules_changes_are_news(rules_site: Path) -> None:
    """The feed has the release and each substantive rule change, titled by the rule, stable ids.

    The home page's latest changes show them too.
    """
    entries = _feed(rules_site).findall(f"{ATOM}entry")
    titles = [str(e.findtext(f"{ATOM}title")) for e in entries]
    assert titles[0].startswith("Comprehensive Rules as of 2024-02-02: ")
    assert any(t.startswith("Rule 702.62a (Suspend) amended: ") for t in titles)
    ids = [str(e.findtext(f"{ATOM}id")) for e in entries]
    assert len(set(ids)) == len(ids)
    for entry in entries:
        [link] = entry.findall(f"{ATOM}link")
        assert (rules_site / str(link.get("href")).split("#")[0]).is_file()
    latest = _page(rules_site / "index.html").sections["latest"]
    assert "Comprehensive Rules as of 2024-02-02" in latest
    assert "702.62a" in latest


@needs_rules
def test_changelog_of_the_real_rules_releases(rules: Path) -> None:
    """The changelog's fixes on the real files.

    One 2024-02 bar, renumberings as of 2024-02-02, rules and glossary entries counted apart.
    """
    cs = load_changeset(rules)
    bars = re.findall(r"<title>(\d{4}-\d{2}): (\d+)</title>", render_html(cs))
    assert bars == [("2024-02", str(sum(g.changes + g.added for g in cs.groups)))]
    markdown = render_markdown(cs)
    assert "renumbered, as of 2024-02-02" in markdown
    assert "renumbered, effective 2023-11-17" not in markdown
    first = render_markdown(load_changeset(rules, run=1))
    assert "2899 rules, 668 glossary entries first seen" in first
    assert "card(s)" not in first


def _chromium(url: str, *flags: str) -> str:
    assert CHROMIUM is not None
    profile = Path(url.removeprefix("file://").split("#", maxsplit=1)[0]).parent / ".profile"
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={profile}", *flags, url,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    shutil.rmtree(profile, ignore_errors=True)
    return done.stdout


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
def test_site_in_headless_chromium(site: Path, tmp_path: Path) -> None:
    """In a real browser: the index's search, a card page, screenshots of both.

    The search (from the URL) keeps the matching cards; the card page opened from it shows
    its rulings and Korean translations.
    """
    folder = tmp_path / "site"
    shutil.copytree(site, folder)
    index = folder / "index.html"
    dom = _chromium(f"file://{index}#q=rift", "--dump-dom")
    shown = re.findall(
        r'<li data-l="[^"]*" data-f="[^"]*"><a href="(cards/[^"]+)">([^<]+)</a>', dom
    )
    assert ("cards/rift-bolt.html", "Rift Bolt") in shown
    assert all("rift" in name.lower() for _, name in shown)
    total = (folder / "index.html").read_text(encoding="utf-8").count("<li data-l=")
    match = re.search(r'<output id="shown"[^>]*>(\d+) of (\d+) cards</output>', dom)
    assert match is not None
    assert (int(match.group(1)), int(match.group(2))) == (len(shown), total)
    assert '<form id="search" role="search" onsubmit' in dom  # shown once the script ran
    korean = _chromium(f"file://{folder / 'cards' / 'rift-bolt.html'}", "--dump-dom")
    assert "<h1>Rift Bolt</h1>" in korean
    assert korean.count('lang="ko"') == 3
    for name, url in (
        ("index", f"file://{index}"),
        ("card", f"file://{folder}/cards/rift-bolt.html"),
    ):
        shot = tmp_path / f"{name}.png"
        _chromium(url, f"--screenshot={shot}", "--window-size=1000,1400")
        assert shot.stat().st_size > 10_000
    if os.environ.get("PIPELINE_SCREENSHOTS"):  # keep them to look at
        for name in ("index", "card"):
            shutil.copy(
                tmp_path / f"{name}.png", Path(os.environ["PIPELINE_SCREENSHOTS"]) / f"{name}.png"
            )
    assert MANIFEST


def test_a_gone_ruling_printed_two_ways_is_one_earlier_version() -> None:
    """One ruling printed with curly and straight quotes, dropped by two sources: one entry."""
    day = dt.date(2021, 6, 18)
    gone: dict[str, Any] = {"lang": "en", "date": day, "since": day, "since_run": 1, "until": None,
            "until_run": 2, "fate": "removed", "now": None, "now_date": None,
            "text_hash": "k"}  # fmt: skip
    versions = [
        Earlier(text="It isn\u2019t exiled.", source="mtgjson", **gone),
        Earlier(text="It isn't exiled.", source="scryfall", **gone),
        Earlier(text="It isn't exiled.", source="later", **{**gone, "until_run": 3}),
    ]
    merged = sorted(_one_per_ruling(versions), key=lambda e: e.until_run)
    assert [(e.source, e.until_run) for e in merged] == [("mtgjson; scryfall", 2), ("later", 3)]
    assert merged[0].text == "It isn't exiled."


def _seed_site(tmp_path: Path) -> tuple[Path, Path]:
    """The dataset of raw/'s seeds and its site, each in TMP_PATH."""
    out, folder = tmp_path / "normalized", tmp_path / "site"
    ingest([RAW], out=out)
    build_site(out, folder)
    return out, folder


def test_the_manifest_removes_nothing_outside_the_site(tmp_path: Path) -> None:
    """Page paths of the manifest that leave the folder, or go through a link, are ignored.

    Absolute, `..`, and through a link in the folder: each named on stderr, none removed.
    """
    out, folder = _seed_site(tmp_path)
    victims = tmp_path / "victims"
    victims.mkdir()
    names = ("victim1.txt", "victim2.txt", "victim3.txt", "page.html")
    for name in names:
        (victims / name).write_text("mine", encoding="utf-8")
    (folder / "elsewhere").symlink_to(victims)
    path = beside(folder)[0]
    manifest = json.loads(path.read_text(encoding="utf-8"))
    bad = [
        "../victims/victim1.txt",
        str(victims / "victim2.txt"),
        "cards/../../victims/victim3.txt",
        "elsewhere/page.html",
    ]
    manifest["pages"].update({path: ["", "", 4] for path in bad})
    path.write_text(json.dumps(manifest), encoding="utf-8")
    code, stdout, stderr = _cli("site", "--out", str(out), "-o", str(folder))
    assert code == 0
    assert ", 0 removed;" in stdout
    assert sorted(p.name for p in victims.iterdir()) == sorted(names)
    ignored, kept = f"in {path.name}; ignored", f"in {path.name}; not removed"
    assert stderr.splitlines() == [
        f"warning: page {path!r}: {why}; {outcome}"
        for path, why, outcome in [
            (bad[0], "leaves the site folder (`..`)", ignored),
            (bad[1], "an absolute path", ignored),
            (bad[2], "leaves the site folder (`..`)", ignored),
            (bad[3], "elsewhere is a symbolic link: not followed", kept),
        ]
    ]
    assert json.loads(path.read_text(encoding="utf-8"))["pages"].keys().isdisjoint(bad)


def test_a_link_in_the_site_folder_is_not_written_through(tmp_path: Path) -> None:
    """A page folder replaced by a link to another folder: nothing written there, a warning."""
    out, folder = _seed_site(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(folder / "runs")
    (folder / "runs").symlink_to(elsewhere)
    report = build_site(out, folder)
    assert list(elsewhere.iterdir()) == []
    assert report.warnings == (
        "page 'runs/1.html': runs is a symbolic link: not followed; not written",
        "page 'runs/index.html': runs is a symbolic link: not followed; not written",
    )


@pytest.mark.slow
def test_nothing_published_names_the_building_machine_or_runs_its_text(tmp_path: Path) -> None:
    """Site, feed and changelogs of a raw folder under a temporary path name no such path.

    Run pages name the files as the dataset does (relative to the raw folder); the card
    page's Oracle block and the feed's Oracle entries are among the pages searched. A
    ruling's or an Oracle text's markup and control characters are shown as text, never as
    markup.
    """
    where = tmp_path / "machine-path-7f3a"
    raw, out, site = where / "raw", where / "normalized", where / "site"
    raw.mkdir(parents=True)
    shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw / "rift-bolt.txt")
    hostile = '"<script>alert(1)</script> & <img src=x onerror=alert(2)>\\u001b[31m\\u0085"'
    (raw / "r.json").write_text(
        '{"object": "list", "has_more": false, "data": [{"object": "ruling", "oracle_id":'
        f' "o-1", "source": "wotc", "published_at": "2024-02-02", "comment": {hostile}}}]}}',
        encoding="utf-8",
    )
    cards = FIXTURES / "raw"
    shutil.copy(cards / "mtgjson-tsp-cards-2022.json", raw / "TSP.json")
    ingest([raw], out=out)
    later = json.loads((cards / "mtgjson-tsp-cards-2025.json").read_text(encoding="utf-8"))
    for card in later["data"]["cards"]:
        if card["name"] == "Rift Bolt":  # an Oracle change whose new text is markup
            card["text"] += "\n<script>alert(1)</script> & <img src=x onerror=alert(2)>"
    (raw / "TSP.json").write_text(json.dumps(later), encoding="utf-8")
    (raw / "rift-bolt.txt").write_text(
        (RAW / "001_ca7dd0badab20c1e.txt").read_text("utf-8").replace("face up", "face down")
        + "\n2024-02-02\n\n<script>alert(1)</script> & <img src=x onerror=alert(2)>\n",
        encoding="utf-8",
    )
    ingest([raw], out=out)
    build_site(out, site)
    for fmt in ("html", "markdown", "json"):
        code, _, _ = _cli("changelog", "--out", str(out), "--format", fmt, "-o", str(where / fmt))
        assert code == 0
    published = [p for p in site.rglob("*") if p.is_file() and not p.name.startswith(".")]
    published += [where / fmt for fmt in ("html", "markdown", "json")]
    assert len(published) > 10
    for path in published:
        text = path.read_text(encoding="utf-8")
        assert "machine-path-7f3a" not in text, path
        assert str(tmp_path) not in text, path
        assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", text), path
        if path.name != "json":  # JSON is data; Markdown escapes a `<` with a backslash
            assert not re.search(r"(?<!\\)<(script>alert|img src=x)", text), path
    pages = "".join(p.read_text("utf-8") for p in site.rglob("*.html"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages  # shown, as text
    card = (site / "cards" / "rift-bolt.html").read_text(encoding="utf-8")
    assert "From MTGJSON (TSP.json)" in card  # the Oracle block and its history, checked above
    assert "Oracle history: 2 texts" in card
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img" in card
    assert "<title>Oracle text of " in (site / "feed.xml").read_text(encoding="utf-8")
    first, second = ((site / "runs" / f"{n}.html").read_text(encoding="utf-8") for n in (1, 2))
    assert "<code>TSP.json</code>, <code>r.json</code>, <code>rift-bolt.txt</code></p>" in first
    assert "<code>TSP.json</code>, <code>rift-bolt.txt</code></p>" in second  # r.json unchanged


@pytest.fixture(scope="module")
def judge_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of the real TSP and PLC sets (Rift Bolt, Dichotomancy) and two rules releases."""
    if not (TSP.is_file() and RULES.is_dir()):
        pytest.skip("../shared/realdata is not beside this checkout")
    root = tmp_path_factory.mktemp("judge")
    (root / "sets").mkdir()
    for name in ("TSP.json", "PLC.json"):
        shutil.copy(TSP.parent / name, root / "sets" / name)
    (root / "rules").mkdir()
    shutil.copy(RULES / "2023-11-17.txt", root / "rules")
    ingest([root / "sets", root / "rules"], out=root / "normalized")
    (root / "rules" / "2023-11-17.txt").unlink()
    shutil.copy(RULES / "2024-02-06.txt", root / "rules")
    ingest([root / "rules"], out=root / "normalized")
    build_site(root / "normalized", root / "site")
    return root / "site"


# Put in a copy of a page: once it is loaded, run STEPS (JavaScript), then write what it found
# into the page's title, where --dump-dom shows it.
_HOOK = '<script>window.addEventListener("load", function () {{ {steps} }});</script></body>'
# Type WORDS into the search box as a person would (an input event per key), then open
# the first result whose address holds WANTED.
_TYPE = """
var q = document.getElementById("find-q"), words = {words};
q.focus(); q.value = "";
for (var i = 0; i < words.length; i++) {{
  q.value += words[i]; q.dispatchEvent(new Event("input", {{bubbles: true}}));
}}
var tries = 0, wait = setInterval(function () {{
  var found = Array.prototype.filter.call(document.querySelectorAll("ol.found a"),
    function (a) {{ return a.getAttribute("href").indexOf({wanted}) >= 0; }});
  if (found.length || ++tries > 100) {{ clearInterval(wait); if (found.length) found[0].click(); }}
}}, 50);
"""


def _hooked(folder: Path, page: str, steps: str) -> str:
    """A copy of PAGE (beside it, so its links hold) that runs STEPS once loaded; its URL."""
    source = folder / page
    copy = source.with_name(f"hooked-{source.name}")
    text = source.read_text(encoding="utf-8")
    copy.write_text(text.replace("</body>", _HOOK.format(steps=steps)), encoding="utf-8")
    return f"file://{copy}"


def _browse(url: str, width: int = 1280) -> str:
    """The page's DOM once its scripts ran and what they opened has loaded."""
    return _chromium(url, "--dump-dom", "--virtual-time-budget=15000", f"--window-size={width},900")


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
def test_search_in_headless_chromium(judge_site: Path, tmp_path: Path) -> None:
    """Typed into the search: a word of rulings and rules, a rule number, a translated name.

    `suspend` finds the suspend rules and the cards whose rulings say it, and opens 702.62a;
    `702.62a` opens the rule; `dichotomagie` (Dichotomancy's German name) opens the card.
    The address's #q= is read on load and followed when it changes.
    """
    folder = tmp_path / "site"
    shutil.copytree(judge_site, folder)
    for words, wanted, heading in (
        ("suspend", "rules/702.62a.html", "Rule 702.62a"),
        ("702.62a", "rules/702.62a.html", "Rule 702.62a"),
        ("dichotomagie", "cards/dichotomancy.html", "Dichotomancy"),
    ):
        steps = _TYPE.format(words=json.dumps(words), wanted=json.dumps(wanted))
        dom = _browse(_hooked(folder, "search.html", steps))
        assert re.search(rf"<h1>{re.escape(heading)}\b", dom), (words, dom[:2000])
    found = _browse(f"file://{folder / 'search.html'}#q=suspend")
    assert '<a href="rules/702.62a.html">702.62a Suspend</a>' in found
    assert '<a href="cards/rift-bolt.html">Rift Bolt</a>' in found  # its rulings say suspend
    assert re.search(r'<p id="status"[^>]*>\d+ found</p>', found)
    steps = 'location.hash = "#q=dichotomagie";'  # the address changes on an open page
    moved = _browse(_hooked(folder, "search.html", steps) + "#q=suspend")
    assert '<a href="cards/dichotomancy.html">Dichotomancy</a>' in moved
    assert "702.62a Suspend" not in moved


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
def test_a_rules_release_in_headless_chromium(judge_site: Path, tmp_path: Path) -> None:
    """The 2024-02-02 release page opened, its first substantive change's rule link followed."""
    folder = tmp_path / "site"
    shutil.copytree(judge_site, folder)
    page = _browse(f"file://{folder / 'releases' / '2024-02-02.html'}")
    assert "<h1>Comprehensive Rules as of 2024-02-02</h1>" in page
    steps = 'document.querySelector("#changes article h3 a.rule").click();'
    opened = _browse(_hooked(folder, "releases/2024-02-02.html", steps))
    first = re.search(
        r'<section id="changes">.*?<h3>Rule <a class="rule" href="[^"]+">([^<]+)', page, re.DOTALL
    )
    assert first is not None
    assert f"<h1>Rule {first.group(1)}" in opened


@pytest.mark.parametrize("which", ["site", "judge_site"])
def test_a_card_has_one_count_of_its_rulings_today(
    which: str, request: pytest.FixtureRequest
) -> None:
    """The index's number beside each card is its page's "Rulings today (N)".

    Translations and rulings only staler sources carry are shown apart on the page, and
    counted apart from it on both.
    """
    folder: Path = request.getfixturevalue(which)
    index = (folder / "index.html").read_text(encoding="utf-8")
    listed = re.findall(r'<a href="cards/([^"]+)">[^<]*</a> <span class="n">(\d+)</span>', index)
    assert len(listed) > 100
    for slug, count in listed:
        page = (folder / "cards" / slug).read_text(encoding="utf-8")
        found = re.search(r"<h2>Rulings today \((\d+)\)</h2>", page)
        assert found is not None, slug
        assert found.group(1) == count, slug


def test_a_card_page_marks_its_latest_change_and_folds_redatings(
    history: tuple[Path, Path],
) -> None:
    """Run 3's two amendments of Rift Bolt's rulings are marked, each with its word diff.

    No re-dating is repeated at length; the Oracle text, from the real TSP file, is above.
    """
    page = (history[1] / "cards" / "rift-bolt.html").read_text(encoding="utf-8")
    start = page.index('<section id="today">')
    today = page[start : page.index("</section>", start)]
    assert today.count('<span class="badge warn">amended in run 3</span>') == 2
    assert "face up<ins>, always.</ins>" in today or "<ins>up, always.</ins>" in today
    assert "<time>" in today
    oracle = page[page.index('<section id="oracle"') : page.index('<section id="today">')]
    assert "From MTGJSON (TSP.json), as of <time>2022-04-25</time>" in oracle  # the real TSP
    assert "Re-dated " not in page.split('id="earlier"', 1)[-1]  # folded above, if any


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
def test_a_card_page_on_a_phone(judge_site: Path, tmp_path: Path) -> None:
    """Rift Bolt's page 390 px wide: nothing scrolls sideways, no date wraps, search on top.

    Headless Chromium opens no window narrower than 500 px: the page is measured in a frame
    390 px wide, and tells the page around it (postMessage) what it measured.
    """
    folder = tmp_path / "site"
    shutil.copytree(judge_site, folder)
    steps = """
    var wide = document.documentElement.scrollWidth, seen = window.innerWidth;
    var broken = Array.prototype.filter.call(document.querySelectorAll("time"),
      function (t) { return t.getClientRects().length > 1; });
    var box = document.getElementById("find-q").getBoundingClientRect();
    parent.postMessage([wide, seen, broken.length, Math.round(box.top)].join(" "), "*");
    """
    phone = folder / "phone.html"
    for page in ("cards/rift-bolt.html", "index.html", "releases/2024-02-02.html"):
        hooked = _hooked(folder, page, steps).removeprefix(f"file://{folder}/")
        phone.write_text(
            f'<!DOCTYPE html><html><body style="margin:0"><iframe src="{hooked}" '
            'style="width:390px;height:844px;border:0"></iframe><script>'
            'addEventListener("message", function (e) { document.body.setAttribute('
            '"data-measured", e.data); });</script></body></html>',
            encoding="utf-8",
        )
        dom = _browse(f"file://{phone}")
        measured = re.search(r'data-measured="(\d+) (\d+) (\d+) (-?\d+)"', dom)
        assert measured is not None, page
        wide, seen, broken, top = map(int, measured.groups())
        assert seen == 390, page
        assert wide <= seen, (page, wide, seen)
        assert broken == 0, page
        assert 0 <= top < 200, (page, top)
