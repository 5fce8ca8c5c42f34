"""`pipeline fetch` against a hostile upstream on 127.0.0.1: exit code, seconds, peak RSS.

Each case serves one misbehaving file (a body that drips, a text of hundreds of MB, a
Content-Encoding bomb, an xz bomb with a matching or a wrong digest, a gzip of one huge
line or of blank lines, JSON nested 200,000 deep, an index entry of the wrong type) and runs
`pipeline fetch` of its source into a fresh raw folder, from a small parent process under an
address-space cap of 4 GiB and a wall-clock limit, so that a regression cannot take the
machine down. The bombs are made once, streaming, in a temporary folder (never expanded on
disk). Prints a table; asserts nothing.

    .venv/bin/python benchmarks/hostile_fetch.py [--only NAME] [--limit SECONDS] [-- OPTIONS]

OPTIONS are passed to every `pipeline fetch` (e.g. `--max-time 20`).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import lzma
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_CAP = 4 << 30
_MIB = 1 << 20
# The parent of one run: caps the command, waits for it, reports its figures as JSON.
CAPPED = Path(__file__).resolve().parent / "capped.py"
RULES_HEAD = (
    b"Magic: The Gathering Comprehensive Rules\r\n\r\n"
    b"These rules are effective as of February 2, 2024.\r\n\r\n"
)

# A route answers with a status, headers and the body's chunks (a generator may sleep).
Route = tuple[int, dict[str, str], "Callable[[], Iterator[bytes]]"]


def _repeat(chunk: bytes, times: int) -> Iterator[bytes]:
    for _ in range(times):
        yield chunk


def _xz(head: bytes, fill: bytes, times: int, tail: bytes) -> bytes:
    """An xz stream of HEAD, FILL repeated TIMES, TAIL, made without holding it expanded."""
    packer = lzma.LZMACompressor(format=lzma.FORMAT_XZ, preset=6)
    out = [packer.compress(head)]
    out += [packer.compress(part) for part in _repeat(fill, times)]
    out += [packer.compress(tail), packer.flush()]
    return b"".join(out)


def _gzip(head: bytes, fill: bytes, times: int, tail: bytes) -> bytes:
    """A gzip stream of HEAD, FILL repeated TIMES, TAIL, made without holding it expanded."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [packer.compress(head)]
    out += [packer.compress(part) for part in _repeat(fill, times)]
    out += [packer.compress(tail), packer.flush()]
    return b"".join(out)


def _drip() -> Iterator[bytes]:
    yield RULES_HEAD
    while True:
        time.sleep(2)
        yield b"x"


def _ok(body: bytes, **headers: str) -> Route:
    return 200, {"Content-Length": str(len(body)), **headers}, lambda: iter([body])


def _rules_page(base: str) -> Route:
    page = f'<a href="{base}/rules/MagicCompRules%2020240206.txt">TXT</a>'.encode()
    return _ok(page, **{"Content-Type": "text/html"})


def _meta() -> Route:
    return _ok(json.dumps({"meta": {"version": "5.2.2", "date": "2026-08-19"}}).encode())


def _bulk(base: str, kind: object = "rulings") -> Route:
    link = "jsonl_download_uri"
    entries = [{"type": kind, link: f"{base}/files/rulings.jsonl.gz"},
               {"type": "oracle_cards", link: f"{base}/files/cards.jsonl.gz"}]  # fmt: skip
    return _ok(json.dumps({"data": entries}).encode())


def cases(base: str, folder: Path) -> dict[str, tuple[str, dict[str, Route]]]:
    """Each case: the source fetched, and the routes its upstream answers."""
    text = "/rules/MagicCompRules 20240206.txt"
    bomb = _xz(b'{"meta": {"version": "x"}, "pad": "', b"a" * _MIB, 1024, b'"}')
    (folder / "bomb.xz").write_bytes(bomb)
    digest = hashlib.sha256(bomb).hexdigest().encode()
    card = gzip.compress(b'{"name": "Rift Bolt"}\n', mtime=0)
    return {
        "drip (Content-Length 10^12, 1 byte / 2 s)": ("comprules", {
            "/rules/": _rules_page(base),
            text: (200, {"Content-Length": str(10**12)}, _drip),
        }),
        "drip (Content-Length 10^6, 1 byte / 2 s)": ("comprules", {
            "/rules/": _rules_page(base),
            text: (200, {"Content-Length": str(10**6)}, _drip),
        }),
        "txt of 300 MB": ("comprules", {
            "/rules/": _rules_page(base),
            text: (200, {"Content-Length": str(len(RULES_HEAD) + 300 * _MIB)},
                   lambda: iter([RULES_HEAD, *_repeat(b"x" * _MIB, 300)])),
        }),
        "Content-Encoding gzip, 1 MiB to 1 GiB": ("comprules", {
            "/rules/": _rules_page(base),
            text: _ok(_gzip(RULES_HEAD, b" " * _MIB, 1024, b""), **{"Content-Encoding": "gzip"}),
        }),
        f"xz bomb {len(bomb) // 1024} KiB to 1 GiB, digest matches": ("mtgjson", {
            "/mtgjson/Meta.json": _meta(),
            "/mtgjson/AllPrintings.json.xz": _ok(bomb),
            "/mtgjson/AllPrintings.json.xz.sha256": _ok(digest + b"  AllPrintings.json.xz\n"),
        }),
        "xz bomb, wrong digest": ("mtgjson", {
            "/mtgjson/Meta.json": _meta(),
            "/mtgjson/AllPrintings.json.xz": _ok(bomb),
            "/mtgjson/AllPrintings.json.xz.sha256": _ok(b"0" * 64 + b"\n"),
        }),
        "gzip of one 1 GiB line": ("scryfall", {
            "/scryfall/bulk-data": _bulk(base),
            "/files/rulings.jsonl.gz": _ok(_gzip(b'{"a": "', b"a" * _MIB, 1024, b'"}\n')),
            "/files/cards.jsonl.gz": _ok(card),
        }),
        "gzip of blank lines, 100 KiB": ("scryfall", {
            "/scryfall/bulk-data": _bulk(base),
            "/files/rulings.jsonl.gz": _ok(_gzip(b'{"a": 1}\n', b"\n" * _MIB, 100, b'{"a": 2}\n')),
            "/files/cards.jsonl.gz": _ok(card),
        }),
        "Meta.json nested 200,000 deep": ("mtgjson", {
            "/mtgjson/Meta.json": _ok(b"[" * 200_000 + b"]" * 200_000),
        }),
        'bulk-data "type": ["rulings"]': ("scryfall", {
            "/scryfall/bulk-data": _bulk(base, ["rulings"]),
        }),
    }  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    routes: dict[str, Route] = {}  # noqa: RUF012 - set per case, one case at a time

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Quiet."""

    def do_GET(self) -> None:
        from urllib.parse import unquote, urlsplit  # noqa: PLC0415

        route = self.routes.get(unquote(urlsplit(self.path).path))
        if route is None:
            self.send_error(404)
            return
        status, headers, body = route
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            for chunk in body():
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:
            return  # the client gave up


def main() -> None:
    """Run each case (or --only one) and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose name contains this")
    parser.add_argument("--limit", type=float, default=120, help="wall seconds per case")
    parser.add_argument("options", nargs="*", help="options for every pipeline fetch")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    base = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"{'case':<44} {'exit':>6} {'wall s':>7} {'cpu s':>7} {'peak MiB':>9}  raw/ after; error")
    with tempfile.TemporaryDirectory() as scratch:
        for name, (source, routes) in cases(base, Path(scratch)).items():
            if args.only and args.only not in name:
                continue
            _Handler.routes = routes
            raw = Path(scratch) / "raw"
            api = "scryfall-api" if source == "scryfall" else "mtgjson-api"
            command = [sys.executable, "-m", "pipeline", "fetch", source, "--raw", str(raw),
                       "--pause", "0", "--timeout", "5", "--retries", "1", f"--{api}",
                       f"{base}/{source}", "--comprules-page", f"{base}/rules/",
                       *args.options]  # fmt: skip
            done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
                [sys.executable, str(CAPPED), str(_CAP), str(args.limit), *command],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            figures = json.loads(done.stdout)
            stored = sum(p.stat().st_size for p in raw.rglob("*") if p.is_file())
            error = (figures["stderr"].strip().splitlines() or [""])[-1][:150]
            print(f"{name:<44} {figures['code']!s:>6} {figures['seconds']:7.1f} "
                  f"{figures['cpu']:7.1f} {figures['rss_mb']:9.0f}  {stored / _MIB:,.1f} MiB; "
                  f"{error}")  # fmt: skip
            _clear(raw)
    server.shutdown()


def _clear(raw: Path) -> None:
    import shutil  # noqa: PLC0415

    shutil.rmtree(raw, ignore_errors=True)


if __name__ == "__main__":
    main()
