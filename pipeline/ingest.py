"""The ingest stage: raw files in, one committed run of the dataset out."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, TypedDict, Unpack

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import Column, kept, true_count
from pipeline.diffing.history import (
    is_rule_change,
    late_warnings,
    origins_from_files,
    run_history,
    state_from_sightings,
    with_current,
    with_origins,
)
from pipeline.diffing.oracle import Reading, oracle_run
from pipeline.folding import card_files
from pipeline.folding.catalog import Catalog, apply_catalog, found_catalogs, run_catalog
from pipeline.folding.catalog_files import catalog_reports
from pipeline.folding.merge import (
    assign_languages,
    carry_rule_dates,
    known_languages,
    merge_rulings,
    rules_by_number,
    texts_with_symbols,
)
from pipeline.folding.names import (
    english_names,
    learned,
    renamed,
    shared_names,
    unresolved,
)
from pipeline.folding.repair import repair
from pipeline.folding.translate import LINK_COLUMNS, has_work, update_translations
from pipeline.limits import Limits
from pipeline.models import DateOrder, FileReport, FileStatus, SourceHints
from pipeline.reading import executor, read
from pipeline.reading.extract import AMBIGUOUS
from pipeline.reading.scan import ScanBatch, ScanJob, ScanResult
from pipeline.reading.sightings import TextPool, dated, trim_heap, undeclared_texts
from pipeline.reading.unchanged import skip_unchanged
from pipeline.schema import FILES, PARTITION_KEY, RUNS, TABLES, in_memory
from pipeline.storage import commit, layout, lock, segments, store
from pipeline.storage.load import Loaded, load
from pipeline.storage.part import UNDETECTED, as_stored, sightings_part, texts_part
from pipeline.storage.segments import groups
from pipeline.storage.terms import KeptTerms
from pipeline.storage.upgrade import read_outdated, write_upgraded
from pipeline.text.language import forget, remember

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from pathlib import Path


class Outcome(StrEnum):
    """How a run ended: stored as a run of the dataset, or why no run was recorded."""

    STORED = "stored"
    STRICT = "NOT stored (--strict)"  # an input was rejected and --strict was given
    ALL_REJECTED = "NOT stored (every input was rejected)"
    NO_INPUT = "no input files"  # nothing to read: no run is recorded
    UNCHANGED = "nothing new"  # no file read anew, and asked to record no such run


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What one run read, stored, skipped and rejected."""

    run: int
    files: tuple[FileReport, ...]
    rulings_read: int
    new_keys: int
    warnings: tuple[str, ...]
    ambiguous: tuple[str, ...]
    outcome: Outcome
    started_at: dt.datetime = field(compare=False)
    finished_at: dt.datetime = field(compare=False)

    @property
    def stored(self) -> bool:
        """Whether the run was committed (RUN is then the dataset's newest run)."""
        return self.outcome is Outcome.STORED

    @property
    def ambiguous_reasons(self) -> tuple[tuple[str, str], ...]:
        """Each file of AMBIGUOUS with why its dates stayed open (its warning, unprefixed)."""
        listed = set(self.ambiguous)
        return tuple(
            (f.source_path, w.removeprefix(AMBIGUOUS))
            for f in self.files
            if f.source_path in listed
            for w in f.warnings
            if w.startswith(AMBIGUOUS)
        )

    @property
    def other_warnings(self) -> tuple[str, ...]:
        """WARNINGS but those of AMBIGUOUS_REASONS: a file's open dates are told once.

        WARNINGS holds every file's warnings, file by file, then the run's own.
        """
        listed = set(self.ambiguous)
        told = sum(len(f.warnings) for f in self.files)
        return (
            *(
                f"{f.source_path}: {w}"
                for f in self.files
                for w in f.warnings
                if f.source_path not in listed or not w.startswith(AMBIGUOUS)
            ),
            *self.warnings[told:],
        )

    @property
    def rejected(self) -> tuple[FileReport, ...]:
        """The files that were not stored, with their reasons."""
        return tuple(f for f in self.files if f.status is FileStatus.REJECTED)

    def count(self, status: FileStatus) -> int:
        """How many input files ended with STATUS."""
        return sum(f.status is status for f in self.files)

    @property
    def duplicates(self) -> int:
        """Rulings read that were already known, or read twice in this run."""
        return self.rulings_read - self.new_keys


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """How a run reads, folds and stores: every knob of ingest() but the inputs and OUT.

    CATALOG (see load_catalog) maps cards to English names and oracle ids; without one,
    the CATALOG_FILES and the files in each raw root's `.catalog/` folder are loaded as the
    catalog, only if the run has something to read (a found one that cannot be read is
    rejected, and the run goes on without it). MANIFEST replaces each root's manifest.csv;
    DATE_ORDER (dmy or mdy) reads the ambiguous dates of files whose hints give no order.
    STRICT stores nothing when an input is rejected. WAIT is how long another writer of OUT
    is waited for (LockBusyError after).
    PROGRESS is given the number of files and returns a callback told how many more are
    done. TODAY is the date dates are judged against (default: today's). The per-file stage
    runs on WORKERS processes (default: the cores), or on a Dask cluster with EXECUTOR_NAME
    "dask" (SCHEDULER: its address; a local cluster if none). REHASH hashes every file
    stored before, even when its size and modification time are unchanged.
    LINK_TRANSLATIONS False leaves new translations unlinked (a later run that reads their
    card links them); those linked are ranked on WORKERS processes as well.
    LIMITS caps each file (default: from the environment, see Limits.from_env); ISOLATE
    reads even a single batch in a worker process, within the per-file budgets.
    RECORD_UNCHANGED records a run that reads no file anew. RETAIN keeps each superseded
    version that many seconds (default: PIPELINE_RETAIN_SECONDS, else an hour).
    """

    manifest: Path | None = None
    catalog: Catalog | None = None
    catalog_files: Sequence[Path] = ()
    date_order: DateOrder | None = None
    strict: bool = False
    wait: float = 0
    progress: Callable[[int], Callable[[int], None]] | None = None
    today: dt.date | None = None
    workers: int | None = None
    executor_name: str = "local"
    scheduler: str | None = None
    rehash: bool = False
    link_translations: bool = True
    limits: Limits | None = None
    isolate: bool = False
    record_unchanged: bool = False
    retain: float | None = None


class IngestKeywords(TypedDict, total=False):
    """IngestOptions' fields as keywords of ingest() (a test keeps the two alike)."""

    manifest: Path | None
    catalog: Catalog | None
    catalog_files: Sequence[Path]
    date_order: DateOrder | None
    strict: bool
    wait: float
    progress: Callable[[int], Callable[[int], None]] | None
    today: dt.date | None
    workers: int | None
    executor_name: str
    scheduler: str | None
    rehash: bool
    link_translations: bool
    limits: Limits | None
    isolate: bool
    record_unchanged: bool
    retain: float | None


def ingest(
    paths: list[Path],
    *,
    out: Path,
    options: IngestOptions | None = None,
    **keywords: Unpack[IngestKeywords],
) -> IngestReport:
    """Ingest the raw files under PATHS into the dataset in OUT as one run.

    OPTIONS (see IngestOptions), each of KEYWORDS given in its place: `ingest(paths,
    out=out, workers=2)` is `ingest(paths, out=out, options=IngestOptions(workers=2))`.
    A run that reads no file records no run, nor does one that reads no file anew (each
    unchanged, or rejected again) unless RECORD_UNCHANGED: an empty run would hide the
    last real changelog. A run whose every input is rejected stores nothing.
    """
    chosen = replace(options or IngestOptions(), **keywords)
    catalog, catalog_files, workers = chosen.catalog, chosen.catalog_files, chosen.workers
    limits = chosen.limits or Limits.from_env()
    started = dt.datetime.now(tz=dt.UTC)
    for path in () if catalog is not None else catalog_files:
        card_files.check(path, limits)  # a bad --catalog stops the run before it writes
    roots = read.discover(paths, chosen.manifest)
    manifests = {root: read.manifest_for(root, chosen.manifest) for root, _ in roots}
    hints = {root: found for root, (found, _) in manifests.items()}
    bad_rows = [
        FileReport(where, None, FileStatus.REJECTED, reason=reason)
        for _, problems in manifests.values()
        for where, reason in problems
    ]
    with (
        lock.writer_lock(out, chosen.wait),
        executor.quiet_gc(),
        executor.returning_pool(),
        executor.LanguageJobs(workers or os.cpu_count() or 1) as languages,
    ):
        commit.recover(out, retain=chosen.retain)
        upgrade(out)
        files_table = store.read_table(out, "files")
        runs = store.read_table(out, "runs")
        run = int(pc.max(runs["run"]).as_py()) + 1 if runs.num_rows else 1
        catalogs, catalog_rows = _catalogs(paths, files_table, hints, chosen, limits)
        pool = TextPool()
        results, count = _read(
            roots,
            hints,
            files_table,
            run=run,
            chosen=chosen,
            limits=limits,
            languages=languages,
            pool=pool,
        )
        # The files found go with their jobs: a Python object or three each, to the end of
        # the run (some 30 MiB of the 1M-ruling corpus's 70,962 files).
        del roots
        # Unchanged files need nothing more: no dataset table is read or rewritten.
        done = _Stored()
        if pool.batches:
            linking = (workers or os.cpu_count() or 1) if chosen.link_translations else 0
            named_by, unusable = run_catalog(catalog, catalog_files, catalogs)
            bad_rows += [r for r in unusable if r.source_path not in _names(catalog_rows)]
            done = _stored(
                out,
                pool,
                results,
                catalog=named_by,
                languages=languages,
                run=run,
                link_workers=linking,
            )
        ordered = [results[i] for i in range(count)]
        reports = [*bad_rows, *(report for r in ordered for report in r.reports), *catalog_rows]
        warnings = [f"{r.source_path}: {w}" for r in reports for w in r.warnings]
        report = IngestReport(
            run=run,
            files=tuple(reports),
            rulings_read=done.rulings_read,
            new_keys=done.new_keys,
            warnings=(*warnings, *done.warnings),
            ambiguous=tuple(path for r in ordered for path in r.ambiguous),
            outcome=_outcome(reports, chosen),
            started_at=started,
            finished_at=dt.datetime.now(tz=dt.UTC),
        )
        if report.stored:
            # Tables of an older schema version are rewritten, migrated, by this commit.
            tables = {name: store.read_table(out, name) for name in layout.outdated(out)}
            tables.update(done.tables)
            parts, rewritten = done.parts, done.segments
            # The commit lets go of each table once written, if nothing else holds it.
            del done
            _with_cards(out, reports, run, tables, parts)
            changes = parts.get(("changes", run))
            found = 0 if changes is None else true_count(is_rule_change(changes))
            del changes
            tables["runs"] = pa.concat_tables([runs, _run_row(report, paths, found)])
            if any(r.status is not FileStatus.SKIPPED for r in reports):
                tables["files"] = pa.concat_tables([files_table, _file_rows(reports, run)])
            commit.commit(out, tables, parts, rewritten, retain=chosen.retain)
    return report


def _read(
    roots: list[tuple[Path, list[read.InputFile]]],
    hints: dict[Path, dict[str, SourceHints]],
    files: pa.Table,
    *,
    run: int,
    chosen: IngestOptions,
    limits: Limits,
    languages: executor.LanguageJobs,
    pool: TextPool,
) -> tuple[dict[int, ScanResult], int]:
    """Read each file of ROOTS that FILES does not hold unchanged, its sightings into POOL.

    The results, by job (every file found, in order), and how many jobs there were: the
    jobs themselves go once read.
    """
    none, order = SourceHints(), chosen.date_order
    jobs = [
        ScanJob(root, file, hints[root].get(file.name, none), order, chosen.today, run, limits)
        for root, found in roots
        for file in found
    ]
    update = chosen.progress(len(jobs)) if chosen.progress else None
    results, todo = skip_unchanged(jobs, files, rehash=chosen.rehash)
    if update is not None:
        update(len(jobs) - len(todo))
    languages.start(len(todo))
    scanned = executor.run(
        [jobs[i] for i in todo],
        workers=chosen.workers,
        executor=chosen.executor_name,
        scheduler=chosen.scheduler,
        progress=update,
        isolate=chosen.isolate,
    )
    _take(scanned, iter(todo), results, languages, pool)
    return results, len(jobs)


def _take(
    scanned: Iterable[ScanBatch],
    slots: Iterator[int],
    results: dict[int, ScanResult],
    languages: executor.LanguageJobs,
    pool: TextPool,
) -> None:
    """Take each batch SCANNED as it comes: its results in their SLOTS, its sightings pooled.

    A batch goes once pooled (the pool keeps its own encoding of the rows): a run of one
    bulk file is one batch, whose rows as unpickled were held to the end of the run (67
    MiB of a 120,000-ruling file, beside every later stage).
    """
    for batch in scanned:
        for result in batch.results:
            results[next(slots)] = result
        if batch.sightings is not None:
            languages.submit(undeclared_texts(batch.sightings))
            pool.add(batch.sightings)


def _catalogs(
    paths: list[Path],
    files: pa.Table,
    hints: dict[Path, dict[str, SourceHints]],
    chosen: IngestOptions,
    limits: Limits,
) -> tuple[list[tuple[str, Path]], list[FileReport]]:
    """The raw roots' catalog files, and their reports as card sources (catalog_files.py)."""
    catalogs = found_catalogs(paths)
    given = {name: hint for found in hints.values() for name, hint in found.items()}
    reports = catalog_reports(
        catalogs, files, given, limits=limits, today=chosen.today, rehash=chosen.rehash
    )
    return catalogs, reports


def _names(reports: list[FileReport]) -> set[str]:
    return {report.source_path for report in reports}


def _with_cards(
    out: Path,
    reports: list[FileReport],
    run: int,
    tables: dict[str, pa.Table],
    parts: dict[tuple[str, int], pa.Table],
) -> None:
    """Add to TABLES and PARTS what the cards of the files REPORTS read make (oracle.py)."""
    readings = [
        Reading(facts, report.layout.value, report.source_path, report.as_of)
        for report in reports
        if report.layout is not None
        for facts in report.cards
    ]
    if not readings:
        return
    made = oracle_run(store.read_table(out, "card_versions"), readings, run)
    if not made.versions.num_rows:
        return  # read again: nothing new
    parts[("card_versions", run)] = made.versions
    tables["cards"] = made.cards
    if made.changes.num_rows:
        found = parts.get(("changes", run))
        oracle = made.changes.cast(in_memory("changes"))
        parts[("changes", run)] = oracle if found is None else pa.concat_tables([found, oracle])


def _outcome(reports: list[FileReport], options: IngestOptions) -> Outcome:
    strict, record_unchanged = options.strict, options.record_unchanged
    statuses = {r.status for r in reports}
    if not reports:
        return Outcome.NO_INPUT
    if statuses == {FileStatus.REJECTED}:
        return Outcome.ALL_REJECTED
    if strict and FileStatus.REJECTED in statuses:
        return Outcome.STRICT
    if not record_unchanged and FileStatus.STORED not in statuses:
        return Outcome.UNCHANGED  # skipped files, maybe some rejected again: nothing new
    return Outcome.STORED


@dataclass(frozen=True, slots=True)
class _Stored:
    """What a run's sightings make of the dataset: the counts, and what the commit writes."""

    rulings_read: int = 0
    new_keys: int = 0
    warnings: list[str] = field(default_factory=list)
    tables: dict[str, pa.Table] = field(default_factory=dict)
    parts: dict[tuple[str, int], pa.Table] = field(default_factory=dict)
    segments: dict[str, dict[int, segments.Cut | None]] = field(default_factory=dict)


def _stored(
    out: Path,
    pool: TextPool,
    results: dict[int, ScanResult],
    *,
    catalog: Catalog | None,
    languages: executor.LanguageJobs,
    run: int,
    link_workers: int,
) -> _Stored:
    """Fold the sightings in POOL into the dataset in OUT: the counts and tables to commit.

    Only what the commit needs outlives this call: the stages' own tables (the run's
    sightings as read, named, folded; the rulings merged) are freed before the commit.
    """
    as_of = {
        report.source_path: report.as_of
        for r in results.values()
        for report in r.reports
        if report.as_of is not None
    }
    # Translated names the files give, with those known before: a card one name (names.py).
    found = [local for r in results.values() for report in r.reports for local in report.names]
    known = store.read_table(out, "names")
    names = learned(known, found, run)
    english = english_names(names)
    read = renamed(dated(pool.collect(), as_of), english)
    shared = unresolved(read, shared_names(names))
    named, catalog_warnings = apply_catalog(read, catalog)
    loaded = load(out, named, english)
    own = kept(loaded.rulings, pc.is_in(groups(loaded.rulings), value_set=pc.unique(groups(named))))
    new, fold_warnings = _fold(named, own)
    del named
    # The history needs no languages: it is made while the last texts are still detected.
    history = run_history(loaded.state, as_stored(new, UNDETECTED), run) if new.num_rows else None
    # The state loaded is the history's alone: the stages after it need the rulings loaded
    # (a daily run's every segment: its state was some 60 MiB held to the commit).
    loaded = replace(loaded, state=loaded.state.schema.empty_table())
    if history is not None:  # the state says where each version's as-of date came from
        origins = {
            report.source_path: report.as_of_origin.value
            for r in results.values()
            for report in r.reports
            if report.as_of_origin is not None
        }
        changes, state, late = history
        history = changes, with_origins(state, run, origins), late
        del changes, state, late
    # The C heap's pages the stages free (NumPy's arrays of keys.codes) go back at each
    # stage's end, not kept under the next stage's peak (20 to 50 MiB of the 1M ingest's).
    trim_heap()
    remember(languages.results())
    new = assign_languages(new, known_languages(own))
    forget()  # the detected languages are in `new` now
    merged = merge_rulings(loaded.rulings, new)
    trim_heap()
    tables, parts, rewritten, late_warnings = _history(
        out, new, merged, loaded, history, run=run, link_workers=link_workers
    )
    warnings = [*shared, *fold_warnings, *catalog_warnings, *late_warnings]
    new_keys = merged.num_rows - loaded.rulings.num_rows
    if names is not known:  # some learned
        tables["names"] = names
        learned_now = pc.equal(names["first_run"], pa.scalar(run, pa.int64()))
        logged = names.filter(learned_now).rename_columns({"first_run": PARTITION_KEY})
        parts[("names_learned", run)] = logged.select(TABLES["names_learned"].names)
    return _Stored(new.num_rows, new_keys, warnings, tables, parts, rewritten)


def _history(
    out: Path,
    new: pa.Table,
    merged: pa.Table,
    loaded: Loaded,
    history: tuple[pa.Table, pa.Table, pa.Table] | None,
    *,
    run: int,
    link_workers: int,
) -> tuple[
    dict[str, pa.Table],
    dict[tuple[str, int], pa.Table],
    dict[str, dict[int, segments.Cut | None]],
    list[str],
]:
    """What the run's sightings NEW change: rewritten tables, new parts, segments, warnings.

    MERGED is the rulings of the LOADED segments with NEW folded in; HISTORY is what
    run_history() made of NEW (None when it is empty). Translations are linked on
    LINK_WORKERS processes; 0 puts linking off.
    """
    if history is None:
        return {}, {}, {}, []
    changes, state, late = history
    rulings = with_current(merged, state)
    # The cards whose translations are linked: those read, unless linking is put off.
    cards: Column = pc.unique(new["card"].cast(pa.string()))
    if not link_workers:
        cards = pa.array([], pa.string())
    old = store.read_table(out, "translations")
    tables = {}
    if loaded.renames:  # cards re-keyed this run: their translations too
        old = renamed(old, loaded.english)
        by = ("card", "lang", "text_hash")  # nulls last, as Arrow sorts by default
        order = pc.sort_indices(old, sort_keys=[(n, "ascending") for n in by])
        old = old.take(order)
        tables["translations"] = old
    if has_work(old, rulings, cards):  # links are made among every English ruling
        schema = in_memory("rulings")
        keep = pa.schema([schema.field(name) for name in LINK_COLUMNS])
        rest = loaded.other_rulings(keep.names)
        everything = pa.concat_tables([rulings.select(keep.names).cast(keep), *rest])
        tables["translations"] = update_translations(
            old, everything, cards, run, workers=link_workers, kept=KeptTerms(out)
        )
    trim_heap()
    part = sightings_part(out, loaded.base, new, merged)
    texts = texts_part(loaded.rulings, merged, run)
    parts = {("sightings", run): part, ("changes", run): changes, ("ruling_texts", run): texts}
    # Cut last: each segment's rows (an int64 a row) are not held through the stages above.
    rewritten = segments.split({"rulings": rulings, "state": state}, loaded.plan)
    trim_heap()
    return tables, parts, rewritten, late_warnings(late)


def upgrade(out: Path) -> None:
    """Move a dataset of an older layout to this one, in one commit before the next run.

    Storage reads the old layout and writes the new (storage/upgrade.py); between the two,
    the stages after it make anew what the old one lacked: the state of a dataset that kept
    none, from its sightings; the rules folded by number; `current` weighed across each
    card's sources, with the state's as-of origins taken from files.parquet.
    """
    outdated = read_outdated(out)
    if outdated is None:
        return
    state = outdated.state
    if state is None:
        state = state_from_sightings(outdated.sightings)
    state = origins_from_files(state, outdated.files)
    rulings = outdated.rulings
    if outdated.rules is not None:  # rules keyed by their text alone until version 7
        rulings = rules_by_number(rulings, outdated.rules)
    rulings = with_current(rulings, state)  # weighed across each card's sources from version 8
    write_upgraded(out, outdated, rulings=rulings, state=state)


def _fold(new: pa.Table, own: pa.Table) -> tuple[pa.Table, list[str]]:
    """The run's named sightings NEW repaired, with rule dates (languages come later).

    OWN is what the sightings are matched against (texts with symbols, rule dates): the
    loaded rulings of their own cards, and of the rows without a card, whatever else
    shares their segments.
    """
    new, repair_warnings = repair(new, texts_with_symbols(own))
    return carry_rule_dates(new, own), repair_warnings


def _file_rows(reports: list[FileReport], run: int) -> pa.Table:
    """Rows of files.parquet for the files RUN read or rejected (skipped ones have none)."""
    reports = [r for r in reports if r.status is not FileStatus.SKIPPED]
    return pa.table(
        {
            "run": [run] * len(reports),
            "source_path": [r.source_path for r in reports],
            "source_sha256": [r.source_sha256 for r in reports],
            "status": [r.status.value for r in reports],
            "reason": [r.reason for r in reports],
            "layout": [r.layout.value if r.layout else None for r in reports],
            "encoding": [r.encoding for r in reports],
            "rulings": [r.rulings for r in reports],
            "warnings": [list(r.warnings) for r in reports],
            "context": [r.context for r in reports],
            "size": [r.size for r in reports],
            "mtime_ns": [r.mtime_ns for r in reports],
            "as_of": [r.as_of for r in reports],
            "as_of_origin": [r.as_of_origin.value if r.as_of_origin else None for r in reports],
            "cards": [len(r.cards) if r.status is FileStatus.STORED else None for r in reports],
        },
        schema=FILES,
    )


def _run_row(report: IngestReport, paths: list[Path], rule_changes: int) -> pa.Table:
    return pa.table(
        {
            "run": [report.run],
            "started_at": [report.started_at],
            "finished_at": [report.finished_at],
            "inputs": [[read.escaped(str(p)) for p in paths]],
            "files_read": [report.count(FileStatus.STORED)],
            "files_skipped": [report.count(FileStatus.SKIPPED)],
            "files_rejected": [report.count(FileStatus.REJECTED)],
            "rulings_read": [report.rulings_read],
            "new_keys": [report.new_keys],
            "duplicates": [report.duplicates],
            "warnings": [len(report.warnings)],
            "status": ["partial" if report.rejected else "ok"],
            "rule_changes": [rule_changes],
        },
        schema=RUNS,
    )
