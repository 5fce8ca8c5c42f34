"""`pipeline site`: the history of every ruling as a static site, with an Atom feed.

One folder of plain files: index.html (every card, searchable in the page), a page per
card (cards/rift-bolt.html), per run (runs/2.html), per Comprehensive Rules rule
(rules/702.62a.html), feed.xml, one stylesheet. Every link is relative, nothing is fetched
from elsewhere, and the content reads without JavaScript.

The build is a pure function of the dataset's version in force: the same version gives
the same bytes. A rebuild renders only what may have changed and writes a page only if
its bytes differ (a temporary file, then os.replace). A manifest beside the folder
(`.NAME.site.json` for a folder NAME) remembers the run it was built from and, for each
card and rule page, a digest of the inputs it takes from outside its own history and a
digest of its record: a card a later run did not touch, whose outside inputs are the same,
is not even read again. The search index is made again only if what it is made of (its
documents, their names and texts) has another digest than the manifest's, or one of its
files is missing or of another size. The manifest and the build's lock (`.NAME.site.lock`)
sit beside the folder so that the folder holds only what is published.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import filelock
import jinja2

from pipeline.errors import LockBusyError, PipelineError, UsageError
from pipeline.publishing.feed import feed, latest, newest, on_home, short
from pipeline.publishing.render_html import summary, timeline
from pipeline.publishing.sections import Listed, chapters
from pipeline.publishing.site_data import SiteData, load_site
from pipeline.publishing.site_files import SiteFolder, UnsafePathError, unsafe
from pipeline.publishing.site_pages import (
    card_context,
    card_page,
    page_digest,
    rule_context,
    rule_page,
)
from pipeline.publishing.site_releases import Release, change_marks, releases
from pipeline.publishing.site_search import index_files, search_documents
from pipeline.publishing.site_tables import plain_rows, rule_order
from pipeline.publishing.templating import Links, render, template_sources
from pipeline.reading.read import escaped

MANIFEST = ".site.json"  # the manifest beside the folder ends so; in it, before (legacy)
LOCK = ".site.lock"
SEARCH = "search"  # the search index's folder in the site
_FORMAT = 1
FEED_ENTRIES = 100  # the newest changes the feed carries (rule-change groups, rules changes)
LATEST = 20  # the newest changes the home page shows
LATEST_ORACLE = 5  # of which at most so many groups of Oracle edits of one run


class SiteLinks(Links):
    """Relative links between the site's pages, from a page ROOT levels below the top."""

    def __init__(self, data: SiteData, root: str) -> None:
        self._data, self._root = data, root

    def card(self, name: str | None) -> str | None:
        """The card's page, if it has one."""
        slug = self._data.slug_of.get(name or "")
        return f"{self._root}cards/{slug}.html" if slug else None

    def rule(self, rule_id: str | None) -> str | None:
        """The rule's page (a section's: 702), if the dataset holds the rule."""
        file = self._data.rule_files.get(rule_id or "")
        if file is None and rule_id in self._data.sections:
            file = rule_id
        return f"{self._root}rules/{file}.html" if file else None

    def glossary(self, term: str | None) -> str | None:
        """The glossary entry's page, if the dataset holds the entry."""
        file = self._data.glossary_files.get(term or "")
        return f"{self._root}glossary/{file}.html" if file else None

    def run(self, run: int) -> str | None:
        """The run's page."""
        return f"{self._root}runs/{run}.html"

    def release(self, key: str) -> str | None:
        """A Comprehensive Rules release's page."""
        return f"{self._root}releases/{key}.html"


@dataclass(frozen=True, slots=True)
class SiteReport:
    """What a build did: pages in the site, rendered, written, removed; its size."""

    folder: Path
    pages: int
    rendered: int
    written: tuple[str, ...]
    removed: tuple[str, ...]
    size: int  # bytes of the site's pages
    full: bool  # built without a usable manifest: every page rendered
    warnings: tuple[str, ...] = ()  # page paths refused: out of the folder, through a link


def beside(folder: Path) -> tuple[Path, Path]:
    """The manifest and the lock of the site in FOLDER: `.NAME.site.json`, `.NAME.site.lock`.

    They sit beside the folder, not in it, so that what is in it is the site to publish.
    """
    # "site/", "." and ".." named as the folder they are; not resolve(): a link named as the
    # folder keeps its manifest beside the link.
    whole = Path(os.path.abspath(folder))  # noqa: PTH100 - see above
    if not whole.name:
        shown = escaped(str(folder))
        msg = f"{shown}: the site needs a folder with a name; give -o another folder"
        raise UsageError(msg)
    return whole.parent / f".{whole.name}{MANIFEST}", whole.parent / f".{whole.name}{LOCK}"


def build_site(out: Path, folder: Path) -> SiteReport:
    """Write (or bring up to date) the static site of the dataset in OUT into FOLDER."""
    data = load_site(out)
    manifest, lock_path = beside(folder)
    _check_folder(folder, out, manifest)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(lock_path)
        lock.acquire(timeout=0)
    except filelock.Timeout as exc:
        shown = escaped(str(folder))
        msg = f"{shown}: another `pipeline site` is writing this folder; try again later"
        raise LockBusyError(msg) from exc
    except OSError as exc:
        raise _unwritable(folder, exc) from exc
    try:
        with SiteFolder(folder) as files:
            return _Build(data, folder, files, manifest).run()
    except OSError as exc:
        raise _unwritable(folder, exc) from exc
    finally:
        lock.release()


def _check_folder(folder: Path, out: Path, manifest: Path) -> None:
    """Refuse a site folder that is a file, the dataset, or a folder of other files.

    A folder is a site when its manifest (MANIFEST, beside it) names every entry in it,
    each as a page or a folder of pages; or when it holds the manifest of an older build
    (`.site.json`, in it). A manifest left beside a folder that now holds other files does
    not make it a site.
    """
    shown = escaped(str(folder))
    if folder.exists() and not folder.is_dir():
        msg = f"{shown}: not a folder; give -o a new or empty folder"
        raise UsageError(msg)
    if folder.resolve() == out.resolve():
        msg = f"{shown}: that is the dataset folder; give -o another folder"
        raise UsageError(msg)
    if not folder.is_dir() or (folder / MANIFEST).is_file():
        return
    entries = {p.name for p in folder.iterdir()} - {LOCK}
    if not entries:
        return
    listed = _listed(manifest)
    if listed is None:
        why = f"no {manifest.name} beside it"
    else:
        others = sorted(entries - listed)
        if not others:
            return
        named = ", ".join(escaped(name) for name in others[:3])
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""  # noqa: PLR2004 - three named
        why = f"{named}{more} not in {manifest.name}"
    msg = (
        f"{shown}: holds files `pipeline site` did not write ({why}); give -o a new or empty folder"
    )
    raise UsageError(msg)


def _listed(manifest: Path) -> set[str] | None:
    """The entries of a site folder its MANIFEST names (each page's first component).

    None if there is no manifest or it lists no pages. Any format's manifest will do: a
    build of another version of this package still knows the site is its own.
    """
    try:
        found = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pages = found.get("pages") if isinstance(found, dict) else None
    if not isinstance(pages, dict):
        return None
    return {path.split("/", 1)[0] for path in pages if isinstance(path, str)}


def _unwritable(path: Path, exc: OSError) -> PipelineError:
    return PipelineError(f"{escaped(str(path))}: cannot write ({exc.strerror or exc})")


class _Build:
    """One build: the pages it renders, the manifest it keeps, the files it writes."""

    def __init__(self, data: SiteData, folder: Path, files: SiteFolder, manifest: Path) -> None:
        self.data, self.folder, self.files, self.manifest = data, folder, files, manifest
        self.warnings: dict[str, None] = {}  # in order, each once
        self.legacy = (folder / MANIFEST).is_file()  # an older build's manifest, in the folder
        old = _read_manifest(manifest)
        if old is None and self.legacy:
            old = _read_manifest(folder / MANIFEST)
        self.old_pages: dict[str, list[Any]] = {}
        for path, entry in (old.get("pages", {}) if old else {}).items():
            reason = unsafe(path)
            if reason is None:
                self.old_pages[path] = entry
            else:
                self._warn(UnsafePathError(path, reason), f"in {manifest.name}; ignored")
        since = int(old.get("last_run", 0)) if old else 0
        self.full = (
            old is None
            or old.get("generator") != generator()
            or since > data.version.last_run
            or old.get("dataset") != _identity(data, since)
        )
        self.since = 0 if self.full else since
        self.reusable = {} if self.full else self.old_pages
        self.old_search = None if self.full or old is None else old.get("search")
        self.search = ""
        self.pages: dict[str, list[Any]] = {}
        self.written: list[str] = []
        self.rendered = 0
        self.present = _present(folder)
        self.citing: dict[str, list[str]] = defaultdict(list)  # rule -> cards citing it
        for card, numbers in sorted(data.cited.items()):
            for number in numbers:
                self.citing[number].append(card)

    def run(self) -> SiteReport:
        """Build every page, remove the ones no longer made, write the manifest."""
        data = self.data
        touched, rules_read = (
            ({c.name for c in data.cards}, True) if self.full else data.touched(self.since)
        )
        self._cards(touched)
        self._rules(rules_read)
        self._rules(rules_read, "glossary")
        links = SiteLinks(data, "../")
        summaries = {}
        for run in data.runs:
            cs = run.changeset
            summaries[run.run] = summary(cs)
            self._page(
                f"runs/{run.run}.html",
                "run.html",
                root="../",
                links=links,
                run=run,
                counts=summaries[run.run],
                bars=timeline(cs),
            )
        self._page("runs/index.html", "runs.html", root="../", runs=data.runs, summaries=summaries)
        found = releases(data, self.citing)
        self._contents(found)
        for n, release in enumerate(found):
            self._page(
                f"releases/{release.key}.html",
                "release.html",
                root="../",
                links=links,
                release=release,
                previous=found[n - 1] if n else None,
                next=found[n + 1] if n + 1 < len(found) else None,
            )
        items = latest(data, newest(data.threads.values(), data), found)
        langs = sorted({lang for c in data.cards for lang in c.langs})
        self._page(
            "index.html",
            "index.html",
            root="",
            links=SiteLinks(data, ""),
            cards=data.cards,
            langs=langs,
            items=on_home(items, LATEST, LATEST_ORACLE),
            runs=data.runs,
            latest=data.runs[-1] if data.runs else None,
            rules=len(data.rules),
        )
        self._page(
            "feed.xml", "feed.xml", feed=feed(data, items[:FEED_ENTRIES], SiteLinks(data, ""))
        )
        self._file("assets/site.css", _asset("site.css"))
        self._page("search.html", "search.html", root="")
        self._search()
        removed = self._remove_stale()
        manifest = {
            "format": _FORMAT,
            "generator": generator(),
            "last_run": data.version.last_run,
            "dataset": _identity(data, data.version.last_run),
            "pages": dict(sorted(self.pages.items())),
            "search": self.search,
        }
        _write_beside(
            self.manifest, json.dumps(manifest, indent=0, sort_keys=True).encode("utf-8") + b"\n"
        )
        if self.legacy:  # the manifest and lock an older build kept in the folder: now beside it
            for name in (MANIFEST, LOCK):
                try:
                    self.files.remove(name)
                except UnsafePathError as exc:
                    self._warn(exc, "not removed")
        return SiteReport(
            self.folder,
            len(self.pages),
            self.rendered,
            tuple(self.written),
            removed,
            sum(int(p[2]) for p in self.pages.values()),
            self.full,
            tuple(self.warnings),
        )

    def _search(self) -> None:
        """The search index's files, unless the manifest's were made of the same documents."""
        documents = search_documents(self.data)
        self.search = documents.digest()
        kept = {p: e for p, e in self.reusable.items() if p.startswith(f"{SEARCH}/")}
        if kept and self.old_search == self.search:
            found = _sizes(self.folder / SEARCH)
            if all(found.get(p.removeprefix(f"{SEARCH}/")) == e[2] for p, e in kept.items()):
                self.pages.update(kept)
                return
        for path, content in index_files(documents).items():
            self._file(path, content)

    def _warn(self, error: UnsafePathError, outcome: str) -> None:
        self.warnings[f"page {error}; {outcome}"] = None

    def _cards(self, touched: set[str]) -> None:
        data, todo = self.data, {}
        for row in data.cards:
            path, context = f"cards/{row.slug}.html", card_context(data, row.name)
            kept = self.reusable.get(path)
            if row.name not in touched and kept and kept[0] == context and path in self.present:
                self.pages[path] = kept
            else:
                todo[row.name] = (path, context)
        if not todo:
            return
        events = data.card_events(set(todo))
        links = SiteLinks(data, "../")
        for name, history, langs in data.iter_histories(set(todo)):
            path, context = todo[name]
            record = card_page(data, name, history, events.get(name, []), langs)
            self._recorded(path, context, record, "card.html", root="../", page=record, links=links)

    def _rules(self, rules_read: bool, kind: str = "rule") -> None:  # noqa: FBT001 - one flag
        """The page of each rule (KIND "glossary": of each glossary entry)."""
        data, todo, citing = self.data, {}, self.citing
        glossary = kind == "glossary"
        numbers, files = (
            (data.glossary, data.glossary_files) if glossary else (data.rules, data.rule_files)
        )
        folder = "glossary" if glossary else "rules"
        for rule in numbers:
            path = f"{folder}/{files[rule]}.html"
            context = rule_context(data, rule, tuple(citing.get(rule, ())))
            kept = self.reusable.get(path)
            if not rules_read and kept and kept[0] == context and path in self.present:
                self.pages[path] = kept
            else:
                todo[rule] = (path, context)
        if not todo:
            return
        histories = data.rule_histories(kind)
        changes: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in plain_rows(data.events, data.events.column_names):
            for rule in {row["old_rule_id"], row["new_rule_id"]} - {None}:
                changes[rule].append(row)
        links = SiteLinks(data, "../")
        for rule in sorted(todo, key=rule_order):
            path, context = todo[rule]
            record = rule_page(
                data,
                rule,
                histories.get(rule, []),
                changes.get(rule, []),
                tuple(citing.get(rule, ())),
            )
            self._recorded(
                path, context, record, "rule.html", root="../", page=record, links=links, kind=kind
            )

    def _contents(self, found: tuple[Release, ...]) -> None:
        """The rules' index by chapter and section, a page per section, the glossary's index."""
        data, links = self.data, SiteLinks(self.data, "../")
        marks = change_marks(found)
        contents = chapters(data.rules, data.sections, marks, short)
        for chapter in contents:
            for section in chapter.sections:
                self._recorded(
                    f"rules/{section.number}.html",
                    "",
                    (chapter.number, chapter.title, section),
                    "section.html",
                    root="../",
                    chapter=chapter,
                    section=section,
                    links=links,
                )
        self._page(
            "rules/index.html",
            "rules.html",
            root="../",
            chapters=contents,
            total=len(data.rules),
            releases=found,
            glossary=len(data.glossary),
            links=links,
        )
        if data.glossary:
            terms = [
                Listed(t, short(text), *marks.get(t, (None, None)))
                for t, text in sorted(data.glossary.items(), key=lambda i: (i[0].casefold(), i[0]))
            ]
            self._page("glossary/index.html", "glossary.html", root="../", terms=terms, links=links)

    def _recorded(
        self,
        path: str,
        context: str,
        record: object,
        template: str,
        **values: Any,  # noqa: ANN401 - the template's
    ) -> None:
        """Render a card's or rule's page unless the manifest has its record's digest."""
        digest = page_digest(record)
        kept = self.reusable.get(path)
        if kept and kept[1] == digest and path in self.present:
            self.pages[path] = [context, digest, kept[2]]
            return
        size = self._file(path, render(template, **values).encode("utf-8"))
        self.pages[path] = [context, digest, size]

    def _page(self, path: str, template: str, **values: Any) -> None:  # noqa: ANN401 - the template's
        """Render a page every build renders (index, runs, feed): cheap, and it changes."""
        size = self._file(path, render(template, **values).encode("utf-8"))
        self.pages[path] = ["", "", size]

    def _file(self, path: str, content: bytes) -> int:
        self.rendered += 1
        self._write(path, content)
        self.pages.setdefault(path, ["", "", len(content)])
        return len(content)

    def _write(self, path: str, content: bytes) -> None:
        """Write CONTENT to PATH under the folder unless it holds those bytes already.

        A path through a link in the folder is not written: a warning says so.
        """
        try:
            if not self.files.write(path, content):
                return
        except UnsafePathError as exc:
            self._warn(exc, "not written")
            return
        except OSError as exc:
            raise _unwritable(self.folder / path, exc) from exc
        self.written.append(path)

    def _remove_stale(self) -> tuple[str, ...]:
        """Remove the pages an earlier build wrote that this one no longer makes.

        Only inside the folder: a path through a link, or a link, is left with a warning.
        """
        gone = []
        for path in sorted(set(self.old_pages) - set(self.pages)):
            try:
                self.files.remove(path)
            except UnsafePathError as exc:
                self._warn(exc, f"in {self.manifest.name}; not removed")
                continue
            except OSError as exc:
                raise _unwritable(self.folder / path, exc) from exc
            gone.append(path)
        return tuple(gone)


def _write_beside(path: Path, content: bytes) -> None:
    """Write CONTENT to PATH (beside the folder) unless it holds those bytes already.

    A temporary file in the same folder, then a rename: a link at PATH is replaced, not
    followed.
    """
    with contextlib.suppress(OSError):
        if path.read_bytes() == content:
            return
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # as the pages are: mkstemp makes it the owner's alone
        with os.fdopen(fd, "wb") as file:
            file.write(content)
        Path(temporary).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temporary).unlink()
        raise


def _read_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest of an earlier build, or None (none, unreadable, of another format)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("format") != _FORMAT:
        return None
    pages = found.get("pages")
    entry = 3  # [context digest, record digest, size]
    if not isinstance(pages, dict) or not all(
        isinstance(v, list) and len(v) == entry for v in pages.values()
    ):
        return None
    return found


def _present(folder: Path) -> set[str]:
    """The card, rule and glossary pages in FOLDER now (a page deleted by hand is made again)."""
    found = set()
    for sub in ("cards", "rules", "glossary"):
        with contextlib.suppress(OSError), os.scandir(folder / sub) as entries:
            found |= {f"{sub}/{e.name}" for e in entries if e.name.endswith(".html")}
    return found


def _sizes(folder: Path) -> dict[str, int]:
    """The plain files in FOLDER, with their sizes (none if FOLDER is a link or missing)."""
    if folder.is_symlink():
        return {}
    found = {}
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_file(follow_symlinks=False):
                found[entry.name] = entry.stat(follow_symlinks=False).st_size
    return found


def generator() -> str:
    """A digest of what renders the pages: the templates, this package's code, Jinja2."""
    digest = hashlib.sha256(jinja2.__version__.encode())
    for name, source in template_sources().items():
        digest.update(f"{name}\0{source}\0".encode())
    here = Path(__file__).resolve().parent
    for path in [*sorted(here.glob("*.py")), here.parent / "diffing" / "history.py"]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:24]


def _identity(data: SiteData, upto: int) -> str:
    """A digest of the dataset's runs up to UPTO: another dataset has other start times."""
    runs = [(r.run, r.started_at.isoformat()) for r in data.runs if r.run <= upto]
    return page_digest(runs)


def _asset(name: str) -> bytes:
    return template_sources()[name].encode("utf-8")
