"""The command line: a thin shell over the library; the only module that prints."""

from __future__ import annotations

import contextvars
import datetime as dt
import errno
import gc
import json
import signal
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from tqdm import tqdm

from pipeline import cli_options as options
from pipeline import interrupts
from pipeline.errors import PipelineError, StoreError, UsageError
from pipeline.fetching.fetch import FetchReport, fetch
from pipeline.ingest import IngestReport, Outcome, ingest
from pipeline.models import DateOrder, FileStatus, Layout
from pipeline.publishing.output import write_output
from pipeline.reading.executor import EXECUTORS
from pipeline.reading.read import escaped, shown
from pipeline.storage import layout, lock
from pipeline.text.words import counted
from pipeline.update import UpdateReport, update

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from pipeline.publishing.changelog import Changeset

# The changelog's formats. The publishing modules are imported by the commands that use
# them: an ingest never does, and loading them (Jinja2 with them) took 50 ms of every
# command's start.
FORMATS = ("html", "json", "markdown")
# Whether the command running writes the nightly job's log (fetch, update): every line it
# prints, its last `Error:` line too, begins with the time.
_STAMPED: contextvars.ContextVar[bool] = contextvars.ContextVar("stamped", default=False)
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_PARTIAL = 3
EXIT_NOTHING_STORED = 5  # every input was rejected
# Runs that stored nothing, by why: the exit code (a run with nothing to store is fine).
_NOT_STORED = {
    Outcome.STRICT: EXIT_FAILED,
    Outcome.ALL_REJECTED: EXIT_NOTHING_STORED,
    Outcome.NO_INPUT: EXIT_OK,
}


class _Pipeline(click.Group):
    """The `pipeline` group: the one place where an exception becomes an exit code.

    Every command raises; none catches to exit. A PipelineError is one `Error:` line and
    its own exit code; an interrupt before a run's commit point says that nothing was
    stored (exit 1); one of the families that come from the system (a file, a name, a
    number) is one line too, never a traceback. click ends a write to a closed pipe itself,
    with exit 1, as it ends a bad option with exit 2.
    """

    def invoke(self, ctx: click.Context) -> Any:  # noqa: ANN401 - click's signature
        """Run the command CTX names, its exceptions turned into exit codes."""
        token = _STAMPED.set(False)
        try:
            return super().invoke(ctx)
        except PipelineError as exc:
            _fail(exc)
        except interrupts.Interrupted as exc:
            name = signal.Signals(exc.signum).name
            _fail(
                StoreError(
                    f"interrupted ({name}): nothing stored; the version before this "
                    "run stays in force"
                )
            )
        except (OSError, UnicodeError, OverflowError) as exc:
            if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
                raise
            _say(
                f"Error: {type(exc).__name__}: {exc} (not foreseen here: please report it)",
                err=True,
            )
            sys.exit(EXIT_FAILED)
        finally:
            _STAMPED.reset(token)


@click.group(cls=_Pipeline, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mtg-rulings-pipeline")
def cli() -> None:
    """Ingest Magic: The Gathering ruling dumps into a historied Parquet dataset."""


@cli.command("ingest", short_help="Ingest raw dumps into the dataset as one run.")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@options.WRITE_OUT
@click.option(
    "--manifest",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="CSV with path, card, source, fetched_at, date_order "
    "[default: manifest.csv in each raw root, if present].",
)
@click.option(
    "--date-order",
    type=click.Choice([o.value for o in DateOrder]),
    help="Day/month order for documents whose own dates do not decide it.",
)
@options.catalogs(
    "Card catalog (MTGJSON set/AllPrintings/AtomicCards or Scryfall cards JSON): "
    "English names, oracle ids, localized names; added to those in each raw root's "
    ".catalog/ folder. Repeatable."
)
@click.option(
    "--strict", is_flag=True, help="Store nothing, and fail the run, if any input is rejected."
)
@options.wait("Seconds to wait for another ingest writing the same --out.")
@options.workers(
    "Processes for the per-file stage and for ranking translations [default: the machine's cores]."
)
@click.option(
    "--executor",
    type=click.Choice(EXECUTORS),
    default="local",
    show_default=True,
    help="Run the per-file stage here or on a Dask cluster (pip install '.[dask]').",
)
@click.option(
    "--scheduler", metavar="ADDRESS", help="Dask scheduler address [default: a local cluster]."
)
@click.option(
    "--rehash",
    is_flag=True,
    help="Hash every file read before, even when its size and modification time are unchanged.",
)
@click.option(
    "--no-translations",
    "no_translations",
    is_flag=True,
    help="Link no new translation to its English original this run (existing links are kept "
    "and still marked stale when their original changes); a later run that reads their card "
    "links them.",
)
@options.RETAIN
def ingest_command(  # noqa: PLR0917 - click passes one argument per option
    paths: tuple[Path, ...],
    out: Path,
    manifest: Path | None,
    date_order: str | None,
    catalogs: tuple[Path, ...],
    strict: bool,  # noqa: FBT001 - click passes flags positionally
    wait: float,
    workers: int | None,
    executor: str,
    scheduler: str | None,
    rehash: bool,  # noqa: FBT001 - click passes flags positionally
    no_translations: bool,  # noqa: FBT001 - click passes flags positionally
    retain: float | None,
) -> None:
    """Ingest raw dumps (files or folders; default raw/) into the dataset as one run.

    Each file is read under caps raised with environment variables: PIPELINE_MAX_DEPTH,
    PIPELINE_MAX_HTML_DEPTH, PIPELINE_MAX_STRING, PIPELINE_MAX_RULING, PIPELINE_MAX_TEXT,
    PIPELINE_FILE_MEMORY, PIPELINE_FILE_SECONDS, PIPELINE_MAX_EXPANDED, PIPELINE_MAX_RATIO
    (docs/sources.md, "Limits").
    """
    with interrupts.guarded() as guard:
        with _progress() as progress:
            report = ingest(
                list(paths) or [Path("raw")],
                out=out,
                manifest=manifest,
                catalog_files=catalogs,
                date_order=DateOrder(date_order) if date_order else None,
                strict=strict,
                wait=wait,
                progress=progress,
                workers=workers,
                executor_name=executor,
                scheduler=scheduler,
                rehash=rehash,
                link_translations=not no_translations,
                retain=retain,
                isolate=True,  # a hostile file must cost its worker, never this process
            )
        _echo(summary(report))
        _after_commit(guard, report)
    sys.exit(_ingest_exit(report))


def _after_commit(
    guard: interrupts.Guard, report: IngestReport, echo: Callable[..., None] | None = None
) -> None:
    """Say on stderr (with ECHO, default _echo) that a signal came once the run was stored."""
    for signum in guard.after_commit:
        name = signal.Signals(signum).name
        (echo or _echo)(f"{name} came after run {report.run} was stored: it stays stored", err=True)


def _ingest_exit(report: IngestReport) -> int:
    if report.stored or report.outcome is Outcome.UNCHANGED:
        return EXIT_PARTIAL if report.rejected else EXIT_OK
    return _NOT_STORED[report.outcome]


@cli.command("fetch", short_help="Download the latest public data into raw/.")
@options.fetch_options
def fetch_command(**kwargs: Any) -> None:  # noqa: ANN401 - click's options, typed in fetch_settings
    """Download the latest files of each SOURCE (default: all) into raw/, only if changed.

    scryfall: the bulk rulings and the oracle cards (raw/.catalog/, the ingest's catalog);
    mtgjson: AllPrintings.json.xz, checked against its sha256; comprules: the current
    Comprehensive Rules text. Each download is bounded in time and size and verified under
    the reader's caps (PIPELINE_MAX_EXPANDED, PIPELINE_MAX_RATIO, PIPELINE_MAX_DEPTH, ...).
    Exit 0 all fetched, 3 some sources failed, 1 all failed, 4 another job holds --raw.
    """
    names, upstreams, settings = options.fetch_settings(kwargs)
    _STAMPED.set(True)
    report = fetch(
        names, raw=kwargs["raw"], upstreams=upstreams, settings=settings, wait=kwargs["wait"]
    )
    _echo_fetch(report)
    sys.exit(_fetch_exit(report))


@cli.command("update", short_help="Fetch, then ingest what changed: the nightly job.")
@options.fetch_options
@options.WRITE_OUT
@options.catalogs("Card catalog besides those in RAW/.catalog/. Repeatable.")
@options.workers("Processes for the per-file stage [default: the machine's cores].")
@options.RETAIN
def update_command(**kwargs: Any) -> None:  # noqa: ANN401 - click's options, typed in fetch_settings
    """Fetch each SOURCE (default: all) into --raw, then ingest --raw into --out as one run.

    Only the files that changed are read; when nothing did, no run is recorded. Exit 0 all
    fetched and stored (or nothing new), 3 a source failed or inputs were rejected (the rest
    stored), 5 every input rejected, 1 nothing fetched or stored, 4 another job holds
    --raw or another ingest --out.
    """
    names, upstreams, settings = options.fetch_settings(kwargs)
    _STAMPED.set(True)
    with interrupts.guarded() as guard:
        with _progress() as progress:
            report = update(
                names,
                raw=kwargs["raw"],
                out=kwargs["out"],
                upstreams=upstreams,
                settings=settings,
                catalog_files=kwargs["catalogs"],
                wait=kwargs["wait"],
                workers=kwargs["workers"],
                retain=kwargs["retain"],
                progress=progress,
                fetched=_echo_fetch,
                isolate=True,  # a hostile file must cost its worker, never this process
            )
        if report.ingested is None:
            _log("nothing ingested: no source could be fetched")
        else:
            _log(summary(report.ingested))
            _after_commit(guard, report.ingested, _log)
    sys.exit(_update_exit(report))


def _echo_fetch(report: FetchReport) -> None:
    """Each file's line, then the totals and each source's; each failure on stderr, one line."""
    for source in report.sources:
        for f in source.files:
            state = "new" if f.changed else "unchanged"
            _log(f"{source.name}: {f.path} {state} ({f.size:,} bytes)")
            for old in f.superseded:
                _log(f"{source.name}: {old} removed (superseded by {f.path})")
    for failure in report.failures:
        _log(f"Error: {failure}", err=True)
    files = [f for s in report.sources for f in s.files]
    failed = (
        f", {len(report.failed)} of {len(report.sources)} sources failed" if report.failed else ""
    )
    _log(
        f"fetched {counted(len(files), 'file')} ({len(report.changed)} new){failed}: "
        f"{_cost(report.requests, report.retries, report.resumed, report.downloaded)}, "
        f"{report.seconds:.1f} s"
    )
    for source in report.sources:
        c = source.cost
        _log(f"  {source.name}: {_cost(c.requests, c.retries, c.resumed, c.downloaded)}")


def _cost(requests: int, retries: int, resumed: int, downloaded: int) -> str:
    """What fetching cost, in words: requests, retries, resumed downloads, bytes."""
    return (
        f"{counted(requests, 'request')} ({counted(retries, 'retry', 'retries')}, "
        f"{counted(resumed, 'resumed download')}), {downloaded:,} bytes downloaded"
    )


def _fetch_exit(report: FetchReport) -> int:
    if not report.failed:
        return EXIT_OK
    return EXIT_FAILED if len(report.failed) == len(report.sources) else EXIT_PARTIAL


def _update_exit(report: UpdateReport) -> int:
    ingested = report.ingested
    if ingested is None:
        return EXIT_FAILED
    code = _ingest_exit(ingested)
    return EXIT_PARTIAL if code == EXIT_OK and report.fetched.failed else code


@cli.command("changelog", short_help="Show what changed in a run, grouped, with word diffs.")
@options.READ_OUT
@click.option(
    "--run",
    "run",
    type=click.IntRange(min=1),
    metavar="N",
    help="Report run N [default: the latest].",
)
@click.option(
    "--since",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    metavar="DATE",
    help="Report every run started on or after DATE (YYYY-MM-DD).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="markdown",
    show_default=True,
    help="Markdown for people, JSON for programs, HTML for a page to publish.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write to FILE instead of standard output: a regular file is replaced whole, a FIFO "
    "or device (/dev/stdout, /dev/null) written in place.",
)
def changelog_command(
    out: Path, run: int | None, since: dt.datetime | None, fmt: str, output: Path | None
) -> None:
    """Show what changed in a run (default: the latest), grouped, with word diffs."""
    if run is not None and since is not None:
        msg = "--run and --since exclude each other; give one"
        raise UsageError(msg)
    from pipeline.publishing.dataset import load_changeset  # noqa: PLC0415 - see FORMATS

    cs = load_changeset(out, run=run, since=since.date() if since else None)
    text = _render(fmt, cs)
    if output is None:
        _echo(text, nl=False)
    else:
        write_output(output, text)  # a FIFO or device written in place, a file replaced whole


def _render(fmt: str, changes: Changeset) -> str:
    """The changelog CHANGES in format FMT (one of FORMATS)."""
    if fmt == "html":
        from pipeline.publishing.render_html import render_html  # noqa: PLC0415 - see FORMATS

        return render_html(changes)
    from pipeline.publishing import render  # noqa: PLC0415 - see FORMATS

    return render.render_json(changes) if fmt == "json" else render.render_markdown(changes)


@cli.command("history", short_help="Show every version of every ruling of a card, or of a rule.")
@click.argument("card", required=False)
@click.option(
    "--rule",
    "rule",
    metavar="NUMBER",
    help="Show every version of this Comprehensive Rules rule (702.62a) instead of a card's.",
)
@options.READ_OUT
def history_command(card: str | None, rule: str | None, out: Path) -> None:
    """Every version of every ruling of CARD, or of rule --rule, oldest first, numbered.

    Each with when it came and when it went, and what became of it. One its source still
    carries is "in force" or, where a fresher source of the card does not carry it, "only
    in a staler source" (a rule: "current"); one its source dropped was amended into
    another version (#N, with their similarity and the changed words), re-dated, removed,
    replaced by a version that carries its words, renumbered (a rule), or is "no longer
    carried" where no change tells. Then, for a card the card sources describe, each Oracle
    text each source gave it, with the words each later text changed.
    """
    if (card is None) == (rule is None):
        which = "not both" if card is not None else "one of them"
        msg = f"give a CARD or --rule NUMBER ({which})"
        raise UsageError(msg)
    from pipeline.publishing import dataset, fates  # noqa: PLC0415 - see FORMATS

    entries, ended = dataset.load_history_fates(out, card=card, rule=rule)
    oracle = dataset.load_oracle_versions(out, card) if card is not None else []
    name = card if card is not None else str(rule)
    for line in [*fates.history_lines(name, entries, ended), *fates.oracle_lines(oracle)]:
        _echo(line)


@cli.command("site", short_help="Write the history of every ruling as a static site with a feed.")
@options.READ_OUT
@click.option(
    "-o",
    "--output",
    "folder",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    metavar="SITE_DIR",
    help="Folder of the site: made if missing, brought up to date in place if it is a site.",
)
def site_command(out: Path, folder: Path) -> None:
    """Write the dataset's history as a static site: a page per card, run and rule, a feed.

    A rebuild into the same folder writes only the pages whose content changed.
    """
    from pipeline.publishing.site import build_site  # noqa: PLC0415 - see FORMATS

    report = build_site(out, folder)
    unchanged = report.rendered - len(report.written)
    _echo(
        f"site {folder}: {counted(report.pages, 'page')}, {len(report.written)} written, "
        f"{unchanged} rendered unchanged, {report.pages - report.rendered} not rendered "
        f"(their inputs unchanged), {len(report.removed)} removed; {report.size:,} bytes"
    )
    for warning in report.warnings:
        _echo(f"warning: {warning}", err=True)


@cli.command("stats", short_help="Show the dataset in figures.")
@options.READ_OUT
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def stats_command(out: Path, as_json: bool) -> None:  # noqa: FBT001 - click passes flags
    """Figures of the dataset: runs, cards, rulings by language, kind and source."""
    from pipeline.publishing.stats import dataset_stats, render_stats  # noqa: PLC0415

    figures = dataset_stats(out)
    _echo(json.dumps(figures, indent=2, ensure_ascii=False) if as_json else render_stats(figures))


@cli.command("verify", short_help="Check the dataset against its manifest and its invariants.")
@options.READ_OUT
def verify_command(out: Path) -> None:
    """Check every file of the version in force against its manifest, and the format's rules.

    Each file: present, its bytes, sha256 and rows as the manifest says; then the
    invariants of docs/format.md §9 that are cheap to check. Exit 0 sound (one summary
    line), 1 each fault on its own line (the file, what is wrong), then the summary.
    """
    from pipeline.storage.verify import check  # noqa: PLC0415 - see FORMATS

    lock.check_folder_name(out)
    if not (out / layout.CURRENT).is_symlink() and not out.is_dir():
        msg = f"{out}: no dataset here; give its folder with --out"
        raise UsageError(msg)
    report = check(out)
    for fault in report.faults:
        _echo(f"fault: {fault}")
    state = counted(len(report.faults), "fault") if report.faults else "sound"
    _echo(
        f"{out}: version {report.version or '?'}, runs 1-{report.last_run}, "
        f"{counted(report.files, 'file')} in its manifest: {state}"
    )
    sys.exit(EXIT_FAILED if report.faults else EXIT_OK)


@cli.command("repair", short_help="Rebuild the derived tables into a new version.")
@options.WRITE_OUT
@options.wait("Seconds to wait for an ingest writing the same --out.")
@options.RETAIN
def repair_command(out: Path, wait: float, retain: float | None) -> None:
    """Rebuild the derived tables (rulings, state, names, cards, the index) into a new version.

    From the files nothing rebuilds (runs, files, every part: sightings, changes and the
    logs), checked first: one of them bad is refused, named, with nothing written. Nothing is
    overwritten in place: the repaired tables are the next version, in one commit.
    """
    from pipeline.rebuild import repair  # noqa: PLC0415 - see FORMATS

    report = repair(out, wait=wait, retain=retain)
    for path in report.damaged:
        _echo(f"damaged: {path}")
    _echo(
        f"{out}: version {report.version} written: rulings, state, names, cards and the "
        f"sightings index rebuilt, translations {report.translations}"
    )


def _fail(exc: PipelineError) -> NoReturn:
    """End the command: EXC on stderr as one `Error:` line, and its exit code."""
    _say(f"Error: {exc}", err=True)
    sys.exit(exc.exit_code)


def _echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print TEXT; bytes of a file name that are not UTF-8 are shown escaped (read.escaped)."""
    click.echo(escaped(text), err=err, nl=nl)


def _log(text: str, *, err: bool = False) -> None:
    """Print TEXT as lines of the nightly job's log, each begun with the time (stamp())."""
    now = stamp()
    _echo("\n".join(f"{now} {line}" for line in text.split("\n")), err=err)


def _say(text: str, *, err: bool = False) -> None:
    """Print TEXT as the command prints its lines: stamped in the nightly job's log."""
    (_log if _STAMPED.get() else _echo)(text, err=err)


def stamp(now: dt.datetime | None = None) -> str:
    """The time a log line begins with: NOW (default: this second), UTC ISO-8601, to the second.

    "2024-02-06T03:00:12Z": the same width every line, sortable, whatever the machine's zone.
    """
    when = now or dt.datetime.now(dt.UTC)
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextmanager
def _progress() -> Iterator[Callable[[int], Callable[[int], None]]]:
    """Progress bars for one run, each closed when the run ends, before its summary."""
    bars: list[Any] = []

    def new_bar(total: int) -> Callable[[int], None]:
        # tqdm writes to stderr, and only when it is a terminal: batch logs stay clean.
        bar = tqdm(total=total, unit="file", disable=not sys.stderr.isatty(), leave=False)
        bars.append(bar)

        def advance(done: int) -> None:
            bar.update(done)

        return advance

    try:
        yield new_bar
    finally:
        for bar in bars:
            bar.close()


def summary(report: IngestReport) -> str:
    """The human summary of one run, as printed at its end."""
    if report.outcome is Outcome.NO_INPUT:
        return "no run: no input files (hidden files, READMEs and the manifest are not inputs)"
    if report.outcome is Outcome.UNCHANGED:
        skipped = report.count(FileStatus.SKIPPED)
        unchanged = counted(skipped, "file")
        lines = [f"no run: nothing new ({unchanged} unchanged since they were stored)"]
        if report.rejected:
            lines.append("rejected:")
            lines += [f"  {shown(f.source_path)}: {f.reason}" for f in report.rejected]
        return "\n".join(lines)
    lines = [
        f"run {report.run}: {report.outcome.value}",
        f"  files read      {report.count(FileStatus.STORED)}",
        f"  files unchanged {report.count(FileStatus.SKIPPED)} (skipped)",
        f"  files rejected  {len(report.rejected)}",
        f"  rulings read    {report.rulings_read}",
        f"  new keys        {report.new_keys}",
        f"  duplicates      {report.duplicates}",
        f"  warnings        {len(report.warnings)}",
    ]
    releases = [f for f in report.files if f.layout is Layout.COMPREHENSIVE_RULES]
    if releases:
        lines.append("comprehensive rules releases:")
        lines += [f"  {f.source_path}: {counted(f.rules, 'numbered rule')}" for f in releases]
    if report.rejected:
        lines.append("rejected:")
        lines += [f"  {shown(f.source_path)}: {f.reason}" for f in report.rejected]
    if report.ambiguous:
        lines.append("ambiguous dates (left empty):")
        why = [f"  {shown(path)}: {reason}" for path, reason in report.ambiguous_reasons]
        lines += _capped(why, stored=report.stored)
    if report.other_warnings:
        lines.append("warnings:")
        lines += _capped([f"  {w}" for w in report.other_warnings], stored=report.stored)
    return "\n".join(lines)


# A stored run's summary lists this many warnings under a heading; the rest are counted, and
# every file's warnings are in the dataset's files.parquet (a run of 22,078 dumps printed
# 11,000 such lines). A run not stored lists them all: it recorded nothing to look them up in.
LISTED = 100


def _capped(lines: list[str], *, stored: bool) -> list[str]:
    if len(lines) <= LISTED or not stored:
        return lines
    more = len(lines) - LISTED
    return [
        *lines[:LISTED],
        f"  ... and {more} more (every file's warnings: files.parquet in the dataset)",
    ]


def main() -> None:
    """Entry point of the `pipeline` console script (exit codes: the group, _Pipeline)."""
    try:
        cli(prog_name="pipeline")
    finally:
        # The process ends here: the system takes its memory back at once, and the collector
        # need not walk what is left of a run (its reports, 100,000 objects and more) while
        # the interpreter shuts down. After an ingest of 22,078 files the exit took 0.17 s
        # without this, 0.05 s with it.
        gc.freeze()
