"""A local stand-in for Scryfall, MTGJSON and the rules page, that misbehaves on request.

One ThreadingHTTPServer on 127.0.0.1 (port 0) serves files by path; each path may be given
faults, used one per request: a status (429 with Retry-After, 503), a body cut off after
some bytes (the connection closed), silence, or a body dripped a byte at a time under a
Content-Length it may lie about. Every request is logged with its headers. A dripping body
ends by itself (its bytes, then the connection closed), so no test waits on it for long.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import lzma
import random
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from conftest import FIXTURES

if TYPE_CHECKING:
    from collections.abc import Iterator

LAST_MODIFIED = "Wed, 19 Aug 2026 20:00:53 GMT"
DEATHRITE = "22f1a4a4-c423-4d1c-8775-0ed604a9fa51"
RULINGS = [
    {"object": "ruling", "oracle_id": DEATHRITE, "source": "wotc",
     "published_at": "2016-06-08", "comment": "Because the first ability requires a target, "
     "it is not a mana ability. It uses the stack and can be responded to."},
    {"object": "ruling", "oracle_id": DEATHRITE, "source": "scryfall",
     "published_at": "2020-01-01", "comment": "A bulk ruling."},
]  # fmt: skip
CARDS = json.loads((FIXTURES / "catalog" / "scryfall-cards.json").read_text(encoding="utf-8"))


def rules_text(date: str, suspend: str) -> bytes:
    """A small Comprehensive Rules release (UTF-8 with a BOM, CRLF, as Wizards ships it)."""
    text = (
        "Magic: The Gathering Comprehensive Rules\n\n"
        f"These rules are effective as of {date}.\n\nIntroduction\n\nGlossary\n\nCredits\n\n"
        "1. Game Concepts\n\n100. General\n\n"
        "100.1. These Magic rules apply to any Magic game with two or more players.\n\n"
        "702. Keyword Abilities\n\n702.62. Suspend\n\n"
        f"702.62a {suspend}\n\nGlossary\n\nSuspend\nA keyword ability.\n\nCredits\n\nPeople.\n"
    )
    return b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8")


RULES_2024 = rules_text("February 2, 2024", "Suspend is a keyword that represents three abilities.")
RULES_2025 = rules_text("June 6, 2025", "Suspend is a keyword that stands for three abilities.")


def jsonl_gz(rows: list[dict[str, Any]]) -> bytes:
    """Rows as gzip-compressed JSON Lines, as Scryfall's bulk files are since August 2026."""
    return gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode(), mtime=0)


def json_array(rows: list[dict[str, Any]]) -> bytes:
    """Rows as one JSON array, as Scryfall's bulk files were before."""
    return json.dumps(rows).encode()


@functools.cache
def all_printings() -> bytes:
    """An AllPrintings of one set (Rift Bolt's), xz-compressed, padded to some 400 KB.

    The padding (seeded noise, which xz cannot shrink) gives a body of several reads, so
    that one broken off halfway has bytes on disk to resume from.
    """
    tsp = json.loads((FIXTURES / "raw" / "mtgjson-tsp-rift-bolt.json").read_bytes())
    noise = random.Random(32).randbytes(200_000).hex()
    build = {"meta": {"date": "2026-08-19", "version": "5.2.2+20260819"},
             "data": {"TSP": {**tsp["data"], "padding": noise}}}  # fmt: skip
    return lzma.compress(json.dumps(build).encode(), format=lzma.FORMAT_XZ)


@dataclass
class Fault:
    """One misbehaviour: a STATUS with HEADERS, a body CUT after so many bytes, or SILENCE.

    DRIP: seconds between two bytes of the body, announced as LENGTH bytes if given;
    HEADER_DRIP: seconds between two bytes of a header that never ends (40 bytes, then closed).
    """

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    cut: int | None = None
    silence: float | None = None
    drip: float | None = None
    length: int | None = None
    header_drip: float | None = None


@dataclass
class Resource:
    """A file served at a path, with its validators; RANGES False ignores Range headers."""

    body: bytes
    content_type: str = "application/octet-stream"
    ranges: bool = True
    validators: bool = True
    faults: list[Fault] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)  # on every answer (Content-Encoding)

    @property
    def etag(self) -> str:
        """A strong ETag: the first hex digits of the body's sha256."""
        return '"' + hashlib.sha256(self.body).hexdigest()[:16] + '"'


@dataclass
class Logged:
    """A request the stand-in received, and what it answered."""

    path: str
    headers: dict[str, str]
    status: int = 0
    sent: int = 0


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-reply (the fetcher's size and time bounds do) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class StandIn:
    """The server, its files by path, and its log of requests."""

    def __init__(self) -> None:
        self.files: dict[str, Resource] = {}
        self.log: list[Logged] = []
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.stand_in = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def serve(self, path: str, body: bytes, **options: Any) -> Resource:
        """Serve BODY at PATH (options as Resource's); returns it, to add faults to."""
        self.files[path] = Resource(body, **options)
        return self.files[path]

    def requests_to(self, path: str) -> list[Logged]:
        """The logged requests for PATH."""
        return [r for r in self.log if r.path == path]

    def upstreams(self, *, jsonl: bool = True) -> dict[str, str]:
        """Serve the three upstreams (Scryfall's index in the new or the old form); their roots."""
        key, rulings, cards = (
            ("jsonl_download_uri", jsonl_gz(RULINGS), jsonl_gz(CARDS)) if jsonl
            else ("download_uri", json_array(RULINGS), json_array(CARDS))
        )  # fmt: skip
        suffix = ".jsonl.gz" if jsonl else ".json"
        when = "2026-08-19T20:00:53+00:00"
        entries = [
            {"object": "bulk_data", "id": "r", "type": "rulings", "updated_at": when,
             key: f"{self.url}/files/rulings-20260819{suffix}", "content_encoding": "gzip"},
            {"object": "bulk_data", "id": "o", "type": "oracle_cards", "updated_at": when,
             key: f"{self.url}/files/oracle-cards-20260819{suffix}"},
            {"object": "bulk_data", "id": "d", "type": "default_cards",
             key: f"{self.url}/files/nope"},
        ]  # fmt: skip
        self.serve("/scryfall/bulk-data", json.dumps({"object": "list", "data": entries}).encode(),
                   content_type="application/json", validators=False)  # fmt: skip
        self.serve(f"/files/rulings-20260819{suffix}", rulings)
        self.serve(f"/files/oracle-cards-20260819{suffix}", cards)
        xz = all_printings()
        self.serve("/mtgjson/AllPrintings.json.xz", xz)
        digest = hashlib.sha256(xz).hexdigest() + "  AllPrintings.json.xz\n"
        self.serve("/mtgjson/AllPrintings.json.xz.sha256", digest.encode(), validators=False)
        meta = {"meta": {"date": "2026-08-19", "version": "5.2.2+20260819"},
                "data": {"date": "2026-08-19", "version": "5.2.2+20260819"}}  # fmt: skip
        self.serve("/mtgjson/Meta.json", json.dumps(meta).encode(), validators=False)
        self.rules_page(["MagicCompRules 20240206.txt"])
        self.serve("/rules/MagicCompRules 20240206.txt", RULES_2024, content_type="text/plain")
        return {
            "scryfall": f"{self.url}/scryfall",
            "mtgjson": f"{self.url}/mtgjson",
            "comprules": f"{self.url}/rules/",
        }

    def rules_page(self, releases: list[str]) -> None:
        """The rules page, linking each release as PDF, TXT (relative, %20) and DOCX."""
        links = "".join(
            f'<li><a href="/media/{n[:-4]}.pdf">PDF</a> <a href="{n.replace(" ", "%20")}">TXT</a>'
            f' <a href="https://media.example/{n[:-4].replace(" ", "%20")}.docx">DOCX</a></li>'
            for n in releases
        )
        page = f"<html><body><h1>Comprehensive Rules</h1><ul>{links}</ul></body></html>"
        self.serve("/rules/", page.encode(), content_type="text/html", validators=False)


class _Handler(BaseHTTPRequestHandler):
    timeout = 5  # a client that hangs ends its handler
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        """Quiet: the stand-in keeps its own log."""

    def do_GET(self) -> None:
        stand_in: StandIn = self.server.stand_in  # type: ignore[attr-defined]
        path = unquote(urlsplit(self.path).path)
        logged = Logged(path, dict(self.headers.items()))
        stand_in.log.append(logged)
        found = stand_in.files.get(path)
        if found is None:
            self._reply(logged, 404, b"not found", {})
            return
        fault = found.faults.pop(0) if found.faults else None
        if fault is not None and fault.silence is not None:
            time.sleep(fault.silence)
            return
        if fault is not None and fault.status is not None:
            self._reply(logged, fault.status, b"busy", fault.headers)
            return
        if fault is not None and fault.header_drip is not None:
            self._header_drip(logged, fault.header_drip)
            return
        if fault is not None and fault.drip is not None:
            self._drip(logged, found.body, fault)
            return
        self._file(found, logged, fault.cut if fault is not None else None)

    def _header_drip(self, logged: Logged, seconds: float) -> None:
        """A status line, then a header a byte every SECONDS, 40 of them; then the end."""
        logged.status = 200
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            for _ in range(40):
                self.wfile.flush()
                time.sleep(seconds)
                self.wfile.write(b"a")
        except OSError:
            return  # the client gave up
        self.connection.shutdown(socket.SHUT_RDWR)

    def _drip(self, logged: Logged, body: bytes, fault: Fault) -> None:
        """BODY a byte every DRIP seconds under its announced length; then the end."""
        logged.status = 200
        self.send_response(200)
        self.send_header("Content-Length", str(fault.length or len(body)))
        self.end_headers()
        try:
            for at in range(len(body)):
                self.wfile.write(body[at : at + 1])
                self.wfile.flush()
                logged.sent += 1
                time.sleep(fault.drip or 0)
        except OSError:
            return  # the client gave up
        self.connection.shutdown(socket.SHUT_RDWR)

    def _file(self, found: Resource, logged: Logged, cut: int | None) -> None:
        headers = {"Content-Type": found.content_type, **found.headers}
        if found.validators:
            headers |= {"ETag": found.etag, "Last-Modified": LAST_MODIFIED}
            if found.ranges:
                headers["Accept-Ranges"] = "bytes"
            if self.headers.get("If-None-Match") == found.etag or (
                "If-None-Match" not in self.headers
                and self.headers.get("If-Modified-Since") == LAST_MODIFIED
            ):
                self._reply(logged, 304, b"", headers)
                return
        body, status = found.body, 200
        wanted = self.headers.get("Range", "")
        if (
            found.ranges
            and wanted.startswith("bytes=")
            and self.headers.get("If-Range") in {found.etag, LAST_MODIFIED, None}
        ):
            start = int(wanted.removeprefix("bytes=").split("-")[0])
            headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
            body, status = body[start:], 206
        self._reply(logged, status, body, headers, cut)

    def _reply(
        self,
        logged: Logged,
        status: int,
        body: bytes,
        headers: dict[str, str],
        cut: int | None = None,
    ) -> None:
        logged.status = status
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        sent = body if cut is None else body[:cut]
        self.wfile.write(sent)
        logged.sent = len(sent)
        self.wfile.flush()
        if cut is not None:
            self.connection.shutdown(socket.SHUT_RDWR)


def closed_port() -> str:
    """The root URL of a port nothing listens on (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def serving() -> Iterator[StandIn]:
    """Start a stand-in, yield it, shut it down (the body of a pytest fixture)."""
    stand_in = StandIn()
    stand_in.thread.start()
    try:
        yield stand_in
    finally:
        stand_in.server.shutdown()
        stand_in.server.server_close()
        stand_in.thread.join(timeout=5)
