"""What bounds one response: the time left (a request's, its source's, the run's) and its size.

A body is read a network read at a time (`read1`), the deadline checked after each (the
watchdog, watchdog.py, cuts off a read still blocked at the deadline); its size is counted as
it is written, so a body past its cap is refused as soon as it goes over. A Content-Encoding the
server added is undone here with the reader's decoder, under the same caps
(pipeline.decoding), never by the HTTP library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, NoReturn, cast

import requests
import urllib3

from pipeline.decoding.compressed import Compression, inflate
from pipeline.errors import InputError, PipelineError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from pipeline.limits import Limits

_CHUNK = 64 * 1024
# The encodings undone (RFC 9110's names for gzip); any other is refused: none is asked for.
_GZIP = frozenset({"gzip", "x-gzip"})
_IDENTITY = frozenset({"", "identity"})


class FetchError(PipelineError):
    """A request that failed or a download that was refused, with the URL and the reason."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Deadline:
    """A moment on the client's clock, and what it bounds, as a reason would name it."""

    at: float = math.inf
    what: str = "no deadline"

    @staticmethod
    def after(now: float, seconds: float, what: str, option: str) -> Deadline:
        """SECONDS from NOW: `the request's 900 s (--request-time)`."""
        return Deadline(now + seconds, f"{what} {seconds:g} s ({option})")

    def first(self, *others: Deadline) -> Deadline:
        """The earliest of this deadline and OTHERS."""
        return min((self, *others), key=lambda d: d.at)


class Reading:
    """One response's body, read within a deadline and a size cap, decoded if encoded.

    CAP: the most bytes the file may have, and the option that sets it.
    """

    def __init__(
        self,
        response: requests.Response,
        deadline: Deadline,
        clock: Callable[[], float],
        cap: tuple[int, str],
        count: Callable[[int], None],
    ) -> None:
        self.response, self.deadline, self.clock = response, deadline, clock
        self.cap, self.cap_option = cap
        self.count = count  # told the size of each read off the wire
        self.url = response.url
        self.received = 0  # bytes off the wire (encoded, if the body is)
        self.broken: requests.RequestException | None = None

    def read(self, size: int = _CHUNK) -> bytes:
        """At most SIZE bytes off the wire (one network read); b"" at the end.

        A read the watchdog cut off at the deadline raises the deadline's FetchError.
        """
        self.check_time()
        try:
            data: bytes = self.response.raw.read1(max(size, 1), decode_content=False)
        except urllib3.exceptions.ReadTimeoutError as exc:
            self.broken = requests.exceptions.ConnectionError(exc)
        except (urllib3.exceptions.ProtocolError, urllib3.exceptions.DecodeError) as exc:
            self.broken = requests.exceptions.ChunkedEncodingError(exc)
        except urllib3.exceptions.HTTPError as exc:
            self.broken = requests.exceptions.ConnectionError(exc)
        self.check_time()
        if self.broken is not None:
            raise self.broken
        self.received += len(data)
        self.count(len(data))
        return data

    def check_time(self) -> None:
        """Raise FetchError once the deadline has passed."""
        if self.clock() > self.deadline.at:
            got = f"{self.received:,} bytes received"
            raise FetchError(self.url, f"not done within {self.deadline.what}, {got}")

    def refuse_announced(self, announced: int | None) -> None:
        """Refuse at once a body whose announced length is over the cap."""
        if announced is not None and announced > self.cap:
            self.over(f"{announced:,} bytes announced")

    def over(self, found: str) -> NoReturn:
        """Refuse a body over the cap."""
        msg = f"{found}: over the {self.cap:,} bytes allowed ({self.cap_option}), refused"
        raise FetchError(self.url, msg)

    def chunks(self, limits: Limits, already: int = 0) -> Iterator[bytes]:
        """The body's bytes as the file holds them (any Content-Encoding undone), capped.

        ALREADY bytes of the file are on disk (a resumed download): they count towards the cap.
        """
        encoding = self.response.headers.get("Content-Encoding", "").strip().lower()
        source: Reading | BinaryIO = self
        if encoding in _GZIP:
            source = inflate(Compression.GZIP, cast("BinaryIO", self), self.url, None, limits)
        elif encoding not in _IDENTITY:
            msg = f"a body in Content-Encoding {encoding!r}, which was not asked for: refused"
            raise FetchError(self.url, msg)
        size = already
        try:
            while chunk := source.read(_CHUNK):
                size += len(chunk)
                if size > self.cap:
                    self.over(f"{size:,} bytes and more")
                yield chunk
        except InputError as exc:
            if self.broken is not None:  # the connection broke inside the decoder
                raise self.broken from None
            raise FetchError(self.url, f"Content-Encoding {encoding}: {exc.reason}") from exc
