"""HTTP for the fetchers: polite, conditional, retried requests and resumable downloads.

Built on requests, with its own attempt loop rather than urllib3's Retry: a download that
breaks off is resumed with Range and If-Range (RFC 9110), which needs the loop to know how
many bytes are already on disk and whether the server answered 206 or sent it all again.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
import time
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, BinaryIO, NamedTuple, Self
from urllib.parse import urlsplit

import requests

from pipeline.fetching import watchdog
from pipeline.fetching.bounds import Deadline, FetchError, Reading
from pipeline.limits import Limits

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "MAX_SIZE",
    "Client",
    "Download",
    "FetchError",
    "Settings",
    "Tally",
    "Validators",
    "describe",
    "retry_after",
    "user_agent",
]

# Statuses worth asking again: timeout, too many requests, the server's own errors.
RETRIED = frozenset({408, 429, *range(500, 600)})
SMALL_LIMIT = 16 * 1024 * 1024  # an index, a digest or a page: never a bulk file
# A read cut short by a broken connection loses its bytes: the resume starts at the last whole one.
_CHUNK = 64 * 1024
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\"()\]]+)")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


def user_agent() -> str:
    """The User-Agent of every request: the tool, its version, the HTTP library."""
    try:
        version = metadata.version("mtg-rulings-pipeline")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"mtg-rulings-pipeline/{version} (pipeline fetch) python-requests/{requests.__version__}"


# Today's largest files: Scryfall's all_cards JSON some 2.3 GB (its gzipped JSON Lines far
# less; rulings 24 MB), MTGJSON's AllPrintings.json.xz about 100 MB (.json.gz about 200 MB),
# a Comprehensive Rules text about 1 MB (1.7 MB in UTF-16).
MAX_SIZE = {"scryfall": 4 << 30, "mtgjson": 1 << 30, "comprules": 16 << 20}


@dataclass(frozen=True, slots=True)
class Settings:
    """How the fetchers behave towards the servers; tests shorten every wait."""

    pause: float = 0.1  # seconds between two requests to one host (Scryfall asks 50-100 ms)
    connect_timeout: float = 10.0
    read_timeout: float = 60.0  # the longest silence while a body streams
    retries: int = 4  # attempts after the first, per request or download
    backoff: float = 1.0  # the first wait between attempts, doubled each time
    max_wait: float = 120.0  # the longest wait; a Retry-After above it is not waited for
    # Wall-clock bounds, waits included: one request with its retries, one source, the run.
    request_seconds: float = 900.0
    source_seconds: float = 1800.0
    total_seconds: float = 2700.0
    # The largest file of each source, as stored (an encoding the server added undone).
    max_size: dict[str, int] = field(default_factory=lambda: dict(MAX_SIZE))
    limits: Limits = field(default_factory=Limits)  # decoding caps, as the reader's
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    user_agent: str = field(default_factory=user_agent)


class Validators(NamedTuple):
    """What the server said identifies a file's version, for "only if changed" requests."""

    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True, slots=True)
class Download:
    """How a download ended: not modified (304), or a body of SIZE bytes on disk."""

    modified: bool
    validators: Validators = field(default_factory=Validators)
    size: int = 0
    expected: int | None = None  # what Content-Length (or Content-Range) announced


@dataclass(slots=True)
class Tally:
    """What one source cost: its requests, the retries among them, resumes, body bytes."""

    requests: int = 0
    retries: int = 0  # requests made again after a failed attempt (a resume is one too)
    resumed: int = 0  # broken downloads taken up where they stopped (206 to a Range request)
    downloaded: int = 0  # body bytes received, in every request


class _Attempts:
    """The attempts left for one request; waits before the next, raises when none is left."""

    def __init__(self, url: str, settings: Settings, deadline: Deadline, tally: Tally) -> None:
        self.url = url
        self.settings = settings
        self.deadline = deadline  # the first of the request's, the source's and the run's
        self.tally = tally
        self.made = 0

    def again(self, reason: str, retry_after: float | None = None) -> None:
        self.made += 1
        s = self.settings
        if s.clock() >= self.deadline.at:  # the watchdog cut the request off, or time is up
            raise FetchError(self.url, f"not done within {self.deadline.what} ({reason})")
        if retry_after is not None and retry_after > s.max_wait:
            msg = (
                f"{reason}, Retry-After {retry_after:g} s is over the {s.max_wait:g} s "
                "allowed (--max-wait): not retried"
            )
            raise FetchError(self.url, msg)
        if self.made > s.retries:
            tries = f"{self.made} attempts" if self.made > 1 else "1 attempt"
            raise FetchError(self.url, f"{reason} (gave up after {tries})")
        wait = retry_after if retry_after is not None else s.backoff * 2 ** (self.made - 1)
        wait = min(wait, s.max_wait)
        if s.clock() + wait > self.deadline.at:
            msg = f"{reason}; a wait of {wait:g} s would pass {self.deadline.what}: not retried"
            raise FetchError(self.url, msg)
        self.tally.retries += 1
        s.sleep(wait)


class Client:
    """One session for a fetch: counts its costs, pauses between requests to a host.

    Requests, retries, resumed downloads and body bytes are counted per source (`tallies`,
    by the name `begin` was given; "" before any); the fetch's totals are their sums.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.session = requests.Session()
        self.tally = Tally()  # the source's being fetched
        self.tallies: dict[str, Tally] = {"": self.tally}
        self._last: dict[str, float] = {}
        s = self.settings
        self.run = Deadline.after(s.clock(), s.total_seconds, "the run's", "--max-time")
        self.source = Deadline()
        self.watchdog = watchdog.Watchdog(s.clock)
        watched = watchdog.adapter(self.watchdog)
        self.session.mount("http://", watched)
        self.session.mount("https://", watched)

    def begin(self, source: str) -> None:
        """Start SOURCE: its own time budget, within the run's."""
        s = self.settings
        self.source = Deadline.after(s.clock(), s.source_seconds, f"{source}'s", "--source-time")
        self.tally = self.tallies.setdefault(source, Tally())

    @property
    def requests_made(self) -> int:
        """Requests made, in every source."""
        return sum(t.requests for t in self.tallies.values())

    @property
    def bytes_received(self) -> int:
        """Body bytes received, in every request of every source."""
        return sum(t.downloaded for t in self.tallies.values())

    def _attempts(self, url: str) -> _Attempts:
        s = self.settings
        request = Deadline.after(s.clock(), s.request_seconds, "the request's", "--request-time")
        return _Attempts(url, s, request.first(self.source, self.run), self.tally)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.session.close()

    def get(self, url: str, *, accept: str, limit: int = SMALL_LIMIT) -> bytes:
        """The body of a small document (an index, a digest, a page), retried as needed."""
        attempts = self._attempts(url)
        with self.watchdog.watching(attempts.deadline.at):
            while True:
                try:
                    with self._send(
                        url, {"Accept": accept, "Accept-Encoding": "gzip"}, attempts
                    ) as response:
                        if response.status_code != requests.codes.ok:
                            _refuse_or_wait(response, attempts)
                            continue
                        body = self._reading(response, attempts, (limit, "an index, a page"))
                        return b"".join(body.chunks(self.settings.limits))
                except _TRANSIENT as exc:
                    attempts.again(describe(exc))
                except requests.RequestException as exc:
                    raise FetchError(url, describe(exc)) from exc

    def download(
        self,
        url: str,
        handle: BinaryIO,
        *,
        accept: str,
        validators: Validators | None = None,
        cap: tuple[int, str] = (1 << 30, "the size cap"),
    ) -> Download:
        """Stream URL into HANDLE, resuming a broken body where the server allows it.

        With VALIDATORS the request is conditional: a 304 leaves HANDLE empty. A body that
        breaks off is asked for again from where it stopped (Range, and If-Range with the
        first answer's ETag or Last-Modified, so that a file changed in between is never
        spliced); a server that answers 200 is sending the whole file again, which replaces
        what was written. CAP is the most bytes the file may have, and the option that sets it.
        """
        attempts = self._attempts(url)
        body = _Body(handle)
        with self.watchdog.watching(attempts.deadline.at):
            while True:
                headers = body.headers(accept, validators)
                try:
                    with self._send(url, headers, attempts) as response:
                        reading = self._reading(response, attempts, cap)
                        done = body.take(response, headers, attempts, reading)
                    if done is not None:
                        return done
                except _TRANSIENT as exc:
                    where = f" after {body.got:,} bytes" if body.got else ""
                    attempts.again(describe(exc) + where)
                except requests.RequestException as exc:
                    raise FetchError(url, describe(exc)) from exc

    def _reading(
        self, response: requests.Response, attempts: _Attempts, cap: tuple[int, str]
    ) -> Reading:
        return Reading(response, attempts.deadline, self.settings.clock, cap, self._count)

    def _count(self, size: int) -> None:
        self.tally.downloaded += size

    def _send(self, url: str, headers: dict[str, str], attempts: _Attempts) -> requests.Response:
        """One GET, after the pause the host is owed since the last request to it."""
        s = self.settings
        host = urlsplit(url).netloc
        last = self._last.get(host)
        if last is not None and (wait := last + s.pause - time.monotonic()) > 0:
            s.sleep(wait)
        if s.clock() > attempts.deadline.at:
            raise FetchError(url, f"not done within {attempts.deadline.what}")
        self.tally.requests += 1
        try:
            return self.session.get(
                url,
                headers={"User-Agent": s.user_agent, **headers},
                stream=True,
                timeout=(s.connect_timeout, s.read_timeout),
            )
        finally:
            self._last[host] = time.monotonic()


class _Body:
    """A download's bytes on disk across attempts: how many, and how to resume them."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.got = 0
        self.resume: str | None = None  # the If-Range value, while the bytes may be resumed
        self.first = Download(modified=True)

    def headers(self, accept: str, validators: Validators | None) -> dict[str, str]:
        """The next attempt's request: resume what is on disk, or ask only if changed."""
        headers = {"Accept": accept, "Accept-Encoding": "identity"}
        if self.got and self.resume:
            return headers | {"Range": f"bytes={self.got}-", "If-Range": self.resume}
        return headers | _conditional(validators) if validators is not None else headers

    def take(
        self,
        response: requests.Response,
        headers: dict[str, str],
        attempts: _Attempts,
        reading: Reading,
    ) -> Download | None:
        """Write the answer to HEADERS; the download once whole, None to ask again."""
        status = response.status_code
        if status == requests.codes.not_modified and _asked(headers):
            return Download(modified=False, validators=self.first.validators)
        if (
            status == requests.codes.partial
            and "Range" in headers
            and (_range_start(response) == self.got)
        ):
            expected = _range_total(response) or self.first.expected
            attempts.tally.resumed += 1
        elif status == requests.codes.ok:
            self._restart()  # the whole body again: what was written goes
            self.first = _first(response)
            self.resume, expected = _resumable(response, self.first), self.first.expected
        elif status in {requests.codes.partial, requests.codes.range_not_satisfiable}:
            self._restart()
            attempts.again(f"HTTP {status} to a Range request: starting over")
            return None
        else:
            _refuse_or_wait(response, attempts)
            return None
        reading.refuse_announced(expected)
        for chunk in reading.chunks(attempts.settings.limits, self.got):
            self.handle.write(chunk)
            self.got += len(chunk)
        if expected is not None and self.got != expected:
            attempts.again(f"the body ended at {self.got:,} of {expected:,} bytes")
            return None
        self.handle.flush()
        return Download(
            modified=True, validators=self.first.validators, size=self.got, expected=expected
        )

    def _restart(self) -> None:
        self.handle.seek(0)
        self.handle.truncate()
        self.got, self.resume = 0, None


# Failures of the connection, worth another attempt; any other requests error is final.
_TRANSIENT = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)


def describe(exc: BaseException) -> str:
    """A one-line reason for a requests error (its text nests urllib3's in a long line)."""
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return "the connection broke off during the body"
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return "no connection within the connect timeout"
    if isinstance(exc, requests.Timeout) or "Read timed out" in str(exc):
        return "the server went silent past the read timeout"
    found = _ERRNO.search(str(exc))
    if found is not None:
        return f"cannot connect: {found.group(1).strip().rstrip('.')}"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def retry_after(value: str | None, now: dt.datetime | None = None) -> float | None:
    """Seconds a Retry-After header asks to wait (delay-seconds or an HTTP date), or None."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - (now or dt.datetime.now(tz=dt.UTC))).total_seconds())


def _refuse_or_wait(response: requests.Response, attempts: _Attempts) -> None:
    """Wait before asking again for a status worth it (408, 429, 5xx); refuse any other."""
    status = response.status_code
    reason = f"HTTP {status} {response.reason or ''}".strip()
    if status not in RETRIED:
        raise FetchError(attempts.url, reason)
    attempts.again(reason, retry_after(response.headers.get("Retry-After")))


def _asked(headers: dict[str, str]) -> bool:
    """Whether a request was conditional: only then does a 304 mean "unchanged"."""
    return "If-None-Match" in headers or "If-Modified-Since" in headers


def _conditional(validators: Validators) -> dict[str, str]:
    headers = {}
    if validators.etag:
        headers["If-None-Match"] = validators.etag
    if validators.last_modified:
        headers["If-Modified-Since"] = validators.last_modified
    return headers


def _first(response: requests.Response) -> Download:
    """The validators and announced size of a whole (200) answer."""
    headers = response.headers
    validators = Validators(headers.get("ETag"), headers.get("Last-Modified"))
    length = headers.get("Content-Length", "")
    encoded = headers.get("Content-Encoding", "identity").lower() != "identity"
    # An encoded body is decoded as it streams: its length is not the bytes written.
    expected = int(length) if length.isdigit() and not encoded else None
    return Download(modified=True, validators=validators, expected=expected)


def _resumable(response: requests.Response, first: Download) -> str | None:
    """The If-Range value a broken body of this answer could be resumed with, if any."""
    headers = response.headers
    if headers.get("Accept-Ranges", "").lower() == "none" or first.expected is None:
        return None
    etag = first.validators.etag
    if etag and not etag.startswith("W/"):  # a weak tag cannot vouch for a byte range
        return etag
    return first.validators.last_modified


def _range_start(response: requests.Response) -> int | None:
    found = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
    return int(found.group(1)) if found else None


def _range_total(response: requests.Response) -> int | None:
    found = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
    return int(found.group(3)) if found and found.group(3) != "*" else None
