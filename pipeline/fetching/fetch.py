"""`pipeline fetch`: each source's latest files into raw/, only those that changed.

A source that fails, in whatever way, is one line (the source, the URL, the reason); the
others go on. A file is put in place only once verified, so a refused download leaves the
previous one. One fetch at a time writes a raw folder (raw.locked).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

import requests

from pipeline.errors import PipelineError
from pipeline.fetching import comprules, mtgjson, scryfall
from pipeline.fetching.client import Client, FetchError, Settings, Tally, Validators, describe
from pipeline.fetching.raw import Entry, RawFolder, create_new, locked, same_file
from pipeline.fetching.verify import VerifyError, verify

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from pipeline.fetching.job import Job

SOURCES = (scryfall.NAME, mtgjson.NAME, comprules.NAME)


@dataclass(frozen=True, slots=True)
class Upstreams:
    """Where each source is fetched from: the public services, or a mirror or stand-in."""

    scryfall: str = scryfall.DEFAULT
    mtgjson: str = mtgjson.DEFAULT
    comprules: str = comprules.DEFAULT


_PLANS: dict[str, Callable[[Client, str], list[Job]]] = {
    scryfall.NAME: scryfall.plan,
    mtgjson.NAME: mtgjson.plan,
    comprules.NAME: comprules.plan,
}


class Fetched(NamedTuple):
    """One file of a source: where it is under raw/, and whether this fetch changed it."""

    path: str
    url: str
    changed: bool
    size: int
    superseded: tuple[str, ...] = ()  # older files of the same item, removed


@dataclass(frozen=True, slots=True)
class SourceReport:
    """What one source gave: its files, its failures (one line each), and what it cost."""

    name: str
    files: tuple[Fetched, ...] = ()
    failures: tuple[str, ...] = ()
    cost: Tally = field(default_factory=Tally)  # its requests, retries, resumes and bytes


@dataclass(frozen=True, slots=True)
class FetchReport:
    """What a fetch did, with the cost of it: requests made, body bytes received, seconds."""

    sources: tuple[SourceReport, ...]
    requests: int
    downloaded: int
    seconds: float
    failures: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "failures", tuple(f for s in self.sources for f in s.failures))

    @property
    def changed(self) -> tuple[Fetched, ...]:
        """The files this fetch put in place."""
        return tuple(f for s in self.sources for f in s.files if f.changed)

    @property
    def retries(self) -> int:
        """Requests made again after a failed attempt, in every source."""
        return sum(s.cost.retries for s in self.sources)

    @property
    def resumed(self) -> int:
        """Broken downloads taken up where they stopped, in every source."""
        return sum(s.cost.resumed for s in self.sources)

    @property
    def failed(self) -> tuple[str, ...]:
        """The names of the sources with a failure."""
        return tuple(s.name for s in self.sources if s.failures)


def fetch(
    names: Sequence[str] = SOURCES,
    *,
    raw: Path,
    upstreams: Upstreams | None = None,
    settings: Settings | None = None,
    wait: float = 0,
    lock: bool = True,
) -> FetchReport:
    """Fetch the sources NAMES (default: all) into RAW; each failure is reported, not raised.

    The raw folder's lock is held throughout (waiting up to WAIT seconds for another job;
    LockBusyError after), unless LOCK is False: the caller holds it (`update`).
    """
    if lock:
        with locked(raw, wait):
            return fetch(names, raw=raw, upstreams=upstreams, settings=settings, lock=False)
    upstreams = upstreams or Upstreams()
    started = time.monotonic()
    raw.mkdir(parents=True, exist_ok=True)
    folder = RawFolder(raw)
    with Client(settings) as client:
        reports = [_source(name, getattr(upstreams, name), client, folder) for name in names]
    return FetchReport(
        tuple(reports), client.requests_made, client.bytes_received, time.monotonic() - started
    )


def _source(name: str, upstream: str, client: Client, folder: RawFolder) -> SourceReport:
    """One source, on its own, with what it cost (the client's tally of it)."""
    client.begin(name)
    report = _fetched(name, upstream, client, folder)
    return replace(report, cost=replace(client.tally))


def _fetched(name: str, upstream: str, client: Client, folder: RawFolder) -> SourceReport:
    """One source's files: any failure of it is a line, and the next source goes on."""
    try:
        jobs = _PLANS[name](client, upstream)
    except Exception as exc:  # noqa: BLE001 - whatever it is, it is this source's alone
        return SourceReport(name, failures=(f"{name}: {_line(exc, upstream)}",))
    files, failures = [], []
    for job in jobs:
        try:
            files.append(fetch_file(job, client, folder))
        except Exception as exc:  # noqa: BLE001 - as above: one line, the others go on
            failures.append(f"{name}: {_line(exc, job.url)}")
    return SourceReport(name, tuple(files), tuple(failures))


def _line(exc: BaseException, url: str) -> str:
    """A failure as one line: the URL and the reason (no traceback)."""
    if isinstance(exc, FetchError):
        return str(exc)
    if isinstance(exc, requests.RequestException):
        return f"{url}: {describe(exc)}"
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{url}: cannot write {where}{exc.strerror or exc}"
    if isinstance(exc, (ValueError, PipelineError)):
        return f"{url}: {exc}"
    if isinstance(exc, RecursionError):
        return f"{url}: nested too deeply to read"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{url}: {type(exc).__name__}: {text} (not foreseen: please report it)"


def _now() -> str:
    return dt.datetime.now(tz=dt.UTC).replace(microsecond=0).isoformat()


def fetch_file(job: Job, client: Client, folder: RawFolder) -> Fetched:
    """Download JOB's file if it changed, verify it, and put it in place; else confirm it."""
    known = folder.known(job.path, job.url)
    validators = Validators(known.etag, known.last_modified) if known else None
    temp = folder.temp_for(job.path)
    s = client.settings
    cap = (s.max_size[job.source], f"--{job.source}-max-size")
    try:
        with create_new(temp) as handle:
            got = client.download(
                job.url, handle, accept=job.accept, validators=validators, cap=cap
            )
            now = _now()
            if not got.modified and known is not None:
                folder.confirm(job.path, now, extra=job.extra or known.extra)
                return Fetched(job.path, job.url, changed=False, size=known.size)
            kept = "the previous file is kept" if known else "nothing stored"
            try:
                digest = job.digest() if job.digest is not None else None
                checked = verify(
                    handle, job.path, sha256=digest, size=got.expected, limits=s.limits
                )
            except VerifyError as exc:
                raise FetchError(job.url, f"refused: {exc}; {kept}") from exc
            if not same_file(handle, temp):
                msg = f"refused: {temp} was replaced while it was checked; {kept}"
                raise FetchError(job.url, msg)
            etag, modified = got.validators
            if known is not None and checked.sha256 == known.sha256:
                # The same bytes under new validators: the file stays, untouched.
                folder.confirm(job.path, now, etag=etag, last_modified=modified, extra=job.extra)
                return Fetched(job.path, job.url, changed=False, size=checked.size)
            entry = Entry(
                job.path,
                job.source,
                job.item,
                job.url,
                etag,
                modified,
                checked.size,
                checked.sha256,
                now,
                now,
                dict(job.extra),
            )
            old = folder.place(temp, entry)
            return Fetched(
                job.path, job.url, changed=True, size=checked.size, superseded=tuple(old)
            )
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
