"""`pipeline fetch` and `update` against a hostile upstream, on every bound they keep.

Bounded in time and size, each source on its own, one job at a time, no temporary file
opened through a link.

Every server is the stand-in on 127.0.0.1; a dripping body ends by itself within seconds. The
bombs are small (tens of MiB expanded at most): the default caps refuse them early, and the
figures of the full-size ones are in benchmarks/hostile_fetch.py.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import lzma
import os
import random
import re
import threading
import time
from typing import TYPE_CHECKING

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import unstamped
from standin import RULES_2024, Fault, StandIn, all_printings, serving

from pipeline.cli import cli
from pipeline.fetching.client import Settings
from pipeline.fetching.fetch import FetchReport, Upstreams, fetch
from pipeline.fetching.raw import locked
from pipeline.fetching.verify import VerifyError, verify

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

RULES_URL = "/rules/MagicCompRules 20240206.txt"
RULES_PATH = "comprules/MagicCompRules-20240206.txt"
XZ_URL = "/mtgjson/AllPrintings.json.xz"
XZ_PATH = "mtgjson/AllPrintings.json.xz"
RULINGS_URL = "/files/rulings-20260819.jsonl.gz"
RULINGS_PATH = "scryfall/rulings.jsonl.gz"
MIB = 1 << 20
DEPTH = "JSON nested too deeply, over the limit of 64 (PIPELINE_MAX_DEPTH raises it)"


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    """The stand-in server, serving the three upstreams; shut down after the test."""
    for server in serving():
        server.upstreams()
        yield server


class Sleeps(list[float]):
    """A sleep that only notes how long it was asked to wait; CLOCK counts those waits in."""

    def __call__(self, seconds: float) -> None:
        """Note SECONDS."""
        self.append(seconds)

    def clock(self) -> float:
        """The real monotonic clock, plus every wait noted."""
        return time.monotonic() + sum(self)


def _settings(sleeps: Sleeps | None = None, **changes: object) -> Settings:
    options: dict[str, object] = {
        "pause": 0.0, "connect_timeout": 2.0, "read_timeout": 2.0, "retries": 1,
        "backoff": 0.1, "max_wait": 10.0, **changes,
    }  # fmt: skip
    return Settings(sleep=sleeps if sleeps is not None else Sleeps(), **options)  # type: ignore[arg-type]


def _roots(stand_in: StandIn) -> Upstreams:
    url = stand_in.url
    return Upstreams(f"{url}/scryfall", f"{url}/mtgjson", f"{url}/rules/")


def _fetch(stand_in: StandIn, raw: Path, *names: str, **changes: object) -> FetchReport:
    sleeps = changes.pop("sleeps", None)
    return fetch(names or ("scryfall", "mtgjson", "comprules"), raw=raw,
                 upstreams=_roots(stand_in), settings=_settings(sleeps, **changes))  # type: ignore[arg-type]  # fmt: skip


def _cli(stand_in: StandIn, command: str, raw: Path, *args: str) -> tuple[int, str, str]:
    roots = _roots(stand_in)
    result = CliRunner().invoke(cli, [
        command, *args, "--raw", str(raw), "--scryfall-api", roots.scryfall,
        "--mtgjson-api", roots.mtgjson, "--comprules-page", roots.comprules,
        "--pause", "0", "--timeout", "2", "--retries", "0",
    ])  # fmt: skip
    return result.exit_code, unstamped(result.stdout), unstamped(result.stderr)


def _rules(padding: bytes) -> bytes:
    """The 2024 release with PADDING after its title and date line (within the text)."""
    head, rest = RULES_2024.split(b"Introduction", 1)
    return head + padding + b"Introduction" + rest


# 1. No bound on a download's time or size.


@pytest.mark.slow
def test_a_dripping_body_stops_at_the_request_deadline(stand_in: StandIn, tmp_path: Path) -> None:
    """A byte every 0.25 s: the silence bound never rings, the request's deadline does.

    It stops the download at its time, under its announced 10^6 bytes; nothing is stored.
    """
    stand_in.serve(RULES_URL, RULES_2024[:24], faults=[Fault(drip=0.25, length=10**6)])
    started = time.monotonic()
    report = _fetch(stand_in, tmp_path / "raw", "comprules", request_seconds=1.0)
    assert time.monotonic() - started < 3
    [failure] = report.failures
    assert failure.startswith(f"comprules: {stand_in.url}/rules/MagicCompRules%2020240206.txt: "
                              "not done within the request's 1 s (--request-time), ")  # fmt: skip
    assert not (tmp_path / "raw" / RULES_PATH).exists()


@pytest.mark.slow
def test_dripping_headers_stop_at_the_request_deadline(stand_in: StandIn, tmp_path: Path) -> None:
    """A header a byte every 0.25 s: cut off at the request's deadline.

    Not at the header's end (40 bytes, 10 s): the watchdog shuts the socket down.
    """
    stand_in.files["/rules/"].faults = [Fault(header_drip=0.25)]
    started = time.monotonic()
    report = _fetch(stand_in, tmp_path / "raw", "comprules", request_seconds=1.0)
    assert time.monotonic() - started < 3
    [failure] = report.failures
    assert failure.startswith(
        f"comprules: {stand_in.url}/rules/: not done within the request's 1 s (--request-time)"
    )


@pytest.mark.slow
def test_the_run_budget_ends_the_sources_left(stand_in: StandIn, tmp_path: Path) -> None:
    """A run of 1 s: the dripping rules take it all; MTGJSON, after them, fails at once."""
    stand_in.serve(RULES_URL, RULES_2024[:24], faults=[Fault(drip=0.25, length=10**6)])
    started = time.monotonic()
    report = _fetch(stand_in, tmp_path / "raw", "comprules", "mtgjson", total_seconds=1.0)
    assert time.monotonic() - started < 3
    assert len(report.failures) == 2
    assert "not done within the run's 1 s (--max-time), " in report.failures[0]
    assert report.failures[1] == (
        f"mtgjson: {stand_in.url}/mtgjson/Meta.json: not done within the run's 1 s (--max-time)"
    )


def test_retry_after_waits_count_in_the_source_budget(stand_in: StandIn, tmp_path: Path) -> None:
    """Retry-After 4 on every answer, a source budget of 10 s: two waits, not a third."""
    stand_in.files["/rules/"].faults = [Fault(429, {"Retry-After": "4"})] * 5
    sleeps = Sleeps()
    report = _fetch(stand_in, tmp_path / "raw", "comprules", sleeps=sleeps, clock=sleeps.clock,
                    retries=10, source_seconds=10.0)  # fmt: skip
    assert sleeps == [4.0, 4.0]
    assert report.failures == (
        (
            f"comprules: {stand_in.url}/rules/: HTTP 429 Too Many Requests; a wait of 4 s would "
            "pass comprules's 10 s (--source-time): not retried"
        ),
    )


def test_a_file_over_its_size_cap_is_refused(stand_in: StandIn, tmp_path: Path) -> None:
    """A rules text of 17 MiB against the default cap of 16 MiB: refused on its length."""
    stand_in.serve(RULES_URL, _rules(b" " * 17 * MIB))
    report = _fetch(stand_in, tmp_path / "raw", "comprules")
    size = len(_rules(b" " * 17 * MIB))
    assert report.failures == (
        (
            f"comprules: {stand_in.url}/rules/MagicCompRules%2020240206.txt: {size:,} bytes "
            "announced: over the 16,777,216 bytes allowed (--comprules-max-size), refused"
        ),
    )
    assert list((tmp_path / "raw").rglob("*.txt*")) == []


def test_a_content_encoding_is_undone_under_the_caps(stand_in: StandIn, tmp_path: Path) -> None:
    """A gzip encoding the server adds is undone, under the caps.

    A sound text is stored decoded; one expanding 1,000 times is refused for its ratio,
    long before its 64 MiB are written.
    """
    raw = tmp_path / "raw"
    stand_in.serve(RULES_URL, gzip.compress(RULES_2024), headers={"Content-Encoding": "gzip"})
    assert _fetch(stand_in, raw, "comprules").failures == ()
    assert (raw / RULES_PATH).read_bytes() == RULES_2024
    bomb = gzip.compress(_rules(b" " * 64 * MIB), compresslevel=9)
    stand_in.serve(RULES_URL, bomb, headers={"Content-Encoding": "gzip"})
    [failure] = _fetch(stand_in, raw, "comprules").failures
    # The ratio is of the bytes received when it went over: the body is still arriving.
    assert re.fullmatch(
        rf"comprules: {stand_in.url}/rules/MagicCompRules%2020240206\.txt: Content-Encoding "
        r"gzip: gzip data of [0-9,]+ bytes expanding more than 200 times its size, over the "
        r"limit of 200 \(PIPELINE_MAX_RATIO raises it\)",
        failure,
    )
    assert (raw / RULES_PATH).read_bytes() == RULES_2024


def test_an_encoding_not_asked_for_is_refused(stand_in: StandIn, tmp_path: Path) -> None:
    """Content-Encoding br, which no request offers: refused, never stored as it came."""
    stand_in.serve(RULES_URL, RULES_2024, headers={"Content-Encoding": "br"})
    [failure] = _fetch(stand_in, tmp_path / "raw", "comprules").failures
    assert failure.endswith("a body in Content-Encoding 'br', which was not asked for: refused")


# 2. Verification decodes under the reader's caps, the checksum first.


@functools.cache
def _xz_bomb() -> bytes:
    """AllPrintings-shaped xz expanding 64 MiB from some 10 KB."""
    packer = lzma.LZMACompressor(format=lzma.FORMAT_XZ)
    parts = [packer.compress(b'{"meta": {"version": "x"}, "pad": "')]
    parts += [packer.compress(b"a" * MIB) for _ in range(64)]
    return b"".join([*parts, packer.compress(b'"}'), packer.flush()])


@pytest.mark.slow
def test_an_xz_bomb_with_its_digest_is_refused(stand_in: StandIn, tmp_path: Path) -> None:
    """A bomb whose published digest matches: refused for its ratio; yesterday's file stays."""
    raw = tmp_path / "raw"
    assert _fetch(stand_in, raw, "mtgjson").failures == ()
    bomb = _xz_bomb()
    stand_in.serve(XZ_URL, bomb)
    digest = hashlib.sha256(bomb).hexdigest().encode() + b"  AllPrintings.json.xz\n"
    stand_in.serve(XZ_URL + ".sha256", digest, validators=False)
    report = _fetch(stand_in, raw, "mtgjson")
    assert report.failures == (
        (
            f"mtgjson: {stand_in.url}{XZ_URL}: refused: xz data of {len(bomb):,} bytes expanding "
            "more than 200 times its size, over the limit of 200 (PIPELINE_MAX_RATIO raises it); "
            "the previous file is kept"
        ),
    )
    assert (raw / XZ_PATH).read_bytes() == all_printings()


def test_a_wrong_digest_is_refused_before_anything_is_decoded(tmp_path: Path) -> None:
    """A broken xz stream with a digest that is not its own: the digest is what is said."""
    body = b"\xfd7zXZ\x00" + bytes(64)
    (tmp_path / "f").write_bytes(body)
    with pytest.raises(VerifyError) as caught:
        verify(tmp_path / "f", XZ_PATH, sha256="0" * 64)
    assert (
        str(caught.value)
        == f"sha256 {hashlib.sha256(body).hexdigest()} is not the published {'0' * 64}"
    )


@functools.cache
def _long_line() -> bytes:
    """Gzipped JSON Lines whose one line is 9 MiB (hex: it compresses only about twice)."""
    text = random.Random(50).randbytes(9 * MIB // 2).hex()
    return gzip.compress(b'{"a": "' + text.encode() + b'"}\n', compresslevel=1)


def test_a_line_past_the_line_limit_is_refused(tmp_path: Path) -> None:
    """One 9 MiB line: refused at the reader's limit (4 MiB), never held whole."""
    (tmp_path / "f").write_bytes(_long_line())
    reason = (
        r"^a JSON line of [0-9,]+ bytes or more, over the line limit of 4,194,304 "
        r"\(4 times PIPELINE_MAX_STRING, which raises it\)$"
    )
    with pytest.raises(VerifyError, match=reason):
        verify(tmp_path / "f", RULINGS_PATH)


@pytest.mark.slow
def test_blank_lines_cost_their_bytes_not_a_step_each(tmp_path: Path) -> None:
    """30 MiB of mostly blank lines (some 24 million) between two rows: quickly verified.

    Well under two seconds; a Python step per line took several.
    """
    whitespace = np.frombuffer(b" \t\n", np.uint8)
    filler = np.random.default_rng(7).choice(whitespace, 30 * MIB, p=[0.1, 0.1, 0.8]).tobytes()
    body = gzip.compress(b'{"a": 1}\n' + filler + b'\n{"b": 2}\n', compresslevel=1)
    (tmp_path / "f").write_bytes(body)
    started = time.monotonic()
    assert verify(tmp_path / "f", RULINGS_PATH).size == len(body)
    assert time.monotonic() - started < 2


# 3. A failure of one source, of any kind, is its line; the others go on.


def test_a_meta_json_nested_200000_deep_fails_mtgjson_alone(
    stand_in: StandIn, tmp_path: Path
) -> None:
    """Meta.json of 200,000 brackets: one line for MTGJSON, the other sources stored."""
    stand_in.serve("/mtgjson/Meta.json", b"[" * 200_000 + b"]" * 200_000, validators=False)
    report = _fetch(stand_in, tmp_path / "raw")
    assert report.failures == (
        f"mtgjson: {stand_in.url}/mtgjson/Meta.json: Meta.json: {DEPTH}",
    )  # fmt: skip
    assert report.failed == ("mtgjson",)
    assert len(report.changed) == 3


def test_a_bulk_entry_typed_as_a_list_fails_scryfall_alone(
    stand_in: StandIn, tmp_path: Path
) -> None:
    """`"type": ["rulings"]` is no rulings entry: Scryfall's line names what the index has."""
    index = json.loads(stand_in.files["/scryfall/bulk-data"].body)
    index["data"][0]["type"] = ["rulings"]
    stand_in.serve("/scryfall/bulk-data", json.dumps(index).encode(), validators=False)
    report = _fetch(stand_in, tmp_path / "raw")
    assert report.failures == (
        (
            f"scryfall: {stand_in.url}/scryfall/bulk-data: the bulk-data index has no 'rulings' "
            "entry (types: default_cards, oracle_cards)"
        ),
    )
    assert report.failed == ("scryfall",)


def test_a_line_nested_100000_deep_is_refused(stand_in: StandIn, tmp_path: Path) -> None:
    """A rulings line 100,000 brackets deep: refused at the depth cap; the rest stored."""
    deep = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    stand_in.serve(RULINGS_URL, gzip.compress(deep + b'{"b": 1}\n'))
    report = _fetch(stand_in, tmp_path / "raw")
    assert report.failures == (
        f"scryfall: {stand_in.url}{RULINGS_URL}: refused: {DEPTH}; nothing stored",
    )
    assert len(report.changed) == 3


def test_an_unforeseen_error_is_one_line(
    stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any exception of a source is its line, saying it was not foreseen; the rest go on."""

    def broken(*_: object) -> list[object]:
        key = "who"
        raise KeyError(key)

    monkeypatch.setitem(fetch.__globals__["_PLANS"], "scryfall", broken)
    report = _fetch(stand_in, tmp_path / "raw")
    assert report.failures == (
        f"scryfall: {stand_in.url}/scryfall: KeyError: 'who' (not foreseen: please report it)",
    )
    assert len(report.changed) == 2


def test_update_ingests_the_other_sources_and_exits_3(stand_in: StandIn, tmp_path: Path) -> None:
    """`update` with a Meta.json 200,000 deep: one line on stderr, the rest ingested.

    Exit 3, the partial exit code.
    """
    stand_in.serve("/mtgjson/Meta.json", b"[" * 200_000 + b"]" * 200_000, validators=False)
    code, stdout, stderr = _cli(stand_in, "update", tmp_path / "raw", "--out",
                                str(tmp_path / "out"), "--workers", "1")  # fmt: skip
    assert code == 3
    assert stderr == f"Error: mtgjson: {stand_in.url}/mtgjson/Meta.json: Meta.json: {DEPTH}\n"
    assert "\nrun 1: stored\n" in stdout


# 5. One job at a time; a text is verified whole.


def _held(stand_in: StandIn, raw: Path) -> tuple[threading.Thread, list[FetchReport]]:
    """A fetch of the rules started in a thread, held up 1.5 s by a silent page."""
    stand_in.files["/rules/"].faults = [Fault(silence=1.5)]
    reports: list[FetchReport] = []
    thread = threading.Thread(
        target=lambda: reports.append(_fetch(stand_in, raw, "comprules", retries=1)), daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 5
    while not stand_in.requests_to("/rules/") and time.monotonic() < deadline:
        time.sleep(0.01)
    return thread, reports


@pytest.mark.slow
def test_a_second_fetch_exits_4_while_the_first_runs(stand_in: StandIn, tmp_path: Path) -> None:
    """A fetch while another writes the same raw folder: exit 4 at once, one clear line."""
    raw = tmp_path / "raw"
    thread, reports = _held(stand_in, raw)
    code, _, stderr = _cli(stand_in, "fetch", raw, "comprules")
    thread.join(timeout=10)
    assert code == 4
    assert stderr == (
        f"Error: {raw}: another fetch or update is writing this raw folder; try again later "
        "or pass --wait SECONDS (waited 0 s)\n"
    )
    assert reports[0].failures == ()


@pytest.mark.slow
def test_a_second_update_waits_for_the_first(stand_in: StandIn, tmp_path: Path) -> None:
    """`update --wait 10` while a fetch holds the raw folder: it waits, then runs."""
    raw = tmp_path / "raw"
    thread, _ = _held(stand_in, raw)
    started = time.monotonic()
    code, stdout, _ = _cli(stand_in, "update", raw, "comprules", "--out", str(tmp_path / "out"),
                           "--wait", "10", "--workers", "1")  # fmt: skip
    thread.join(timeout=10)
    assert code == 0
    assert time.monotonic() - started > 0.5  # it waited for the first
    assert f"comprules: {RULES_PATH} unchanged" in stdout  # what the first had fetched


def test_an_update_exits_4_while_a_fetch_holds_raw(stand_in: StandIn, tmp_path: Path) -> None:
    """`update` while another job holds the raw folder: exit 4, nothing fetched nor stored."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    with locked(raw):
        code, stdout, stderr = _cli(stand_in, "update", raw, "--out", str(out))
    assert code == 4
    assert stderr.startswith(f"Error: {raw}: another fetch or update is writing this raw folder")
    assert stdout == ""
    assert stand_in.log == []
    assert not out.exists()


def test_a_text_with_a_hole_of_nul_bytes_is_refused(stand_in: StandIn, tmp_path: Path) -> None:
    """393 KB of NUL bytes past the first 64 KiB: refused, the release fetched before kept."""
    raw = tmp_path / "raw"
    _fetch(stand_in, raw, "comprules")
    stand_in.serve(RULES_URL, _rules(b" " * 70_000 + bytes(393_000)))
    report = _fetch(stand_in, raw, "comprules")
    assert report.failures == (
        (
            f"comprules: {stand_in.url}/rules/MagicCompRules%2020240206.txt: refused: a NUL "
            "character in the text (a download with a hole, or no text); the previous file is kept"
        ),
    )
    assert (raw / RULES_PATH).read_bytes() == RULES_2024


# 7. Temporary files are created, never opened through a link.


def test_a_link_at_the_temporary_name_is_not_followed(stand_in: StandIn, tmp_path: Path) -> None:
    """A link at `.rulings.jsonl.gz.part`: its target untouched, the file stored as itself."""
    raw, victim = tmp_path / "raw", tmp_path / "victim"
    victim.write_bytes(b"precious")
    (raw / "scryfall").mkdir(parents=True)
    (raw / "scryfall" / ".rulings.jsonl.gz.part").symlink_to(victim)
    assert _fetch(stand_in, raw, "scryfall").failures == ()
    assert victim.read_bytes() == b"precious"
    stored = raw / RULINGS_PATH
    assert not stored.is_symlink()
    assert stored.read_bytes() == stand_in.files[RULINGS_URL].body
    assert not (raw / "scryfall" / ".rulings.jsonl.gz.part").exists()


def test_the_state_is_not_written_through_a_link(stand_in: StandIn, tmp_path: Path) -> None:
    """A link at the state's temporary name: the state is written, the target untouched."""
    raw, victim = tmp_path / "raw", tmp_path / "victim"
    victim.write_bytes(b"precious")
    raw.mkdir()
    (raw / f"..fetch.json.{os.getpid()}.tmp").symlink_to(victim)  # the name write_atomic takes
    assert _fetch(stand_in, raw, "comprules").failures == ()
    assert victim.read_bytes() == b"precious"
    assert not (raw / ".fetch.json").is_symlink()
    assert [e["path"] for e in json.loads((raw / ".fetch.json").read_text())["files"]] == [
        RULES_PATH
    ]


def test_a_state_entry_outside_raw_is_trusted_for_nothing(
    stand_in: StandIn, tmp_path: Path
) -> None:
    """An entry `../victim` of the rulings' item: never removed as the file superseded."""
    raw, victim = tmp_path / "raw", tmp_path / "victim"
    victim.write_bytes(b"precious")
    raw.mkdir()
    when = "2026-01-01T00:00:00+00:00"
    entry: dict[str, object] = {
        "path": "../victim", "source": "scryfall", "item": "rulings", "url": "x", "etag": None,
        "last_modified": None, "size": 8, "sha256": "0" * 64, "fetched_at": when,
        "checked_at": when, "extra": {},
    }  # fmt: skip
    (raw / ".fetch.json").write_text(json.dumps({"version": 1, "files": [entry]}))
    assert _fetch(stand_in, raw, "scryfall").failures == ()
    assert victim.read_bytes() == b"precious"
    assert (raw / RULINGS_PATH).read_bytes() == stand_in.files[RULINGS_URL].body
