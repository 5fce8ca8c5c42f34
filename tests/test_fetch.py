"""`pipeline fetch` against a local stand-in of the three upstreams that misbehaves on purpose.

No test reaches the network: every URL is the stand-in's on 127.0.0.1, or a closed port.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import hashlib
import json
import re
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from conftest import REALDATA, NetworkBlockedError, unstamped
from standin import (
    CARDS,
    RULES_2024,
    RULES_2025,
    RULINGS,
    Fault,
    StandIn,
    all_printings,
    closed_port,
    jsonl_gz,
    serving,
)

from pipeline.cli import cli, stamp
from pipeline.fetching.client import Client, FetchError, Settings, retry_after, user_agent
from pipeline.fetching.comprules import newest_release, stored_name
from pipeline.fetching.fetch import FetchReport, Upstreams, fetch
from pipeline.fetching.verify import VerifyError, verify

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

RULINGS_PATH = "scryfall/rulings.jsonl.gz"
CATALOG_PATH = ".catalog/scryfall-oracle-cards.jsonl.gz"
XZ_PATH = "mtgjson/AllPrintings.json.xz"
RULES_PATH = "comprules/MagicCompRules-20240206.txt"
XZ_URL = "/mtgjson/AllPrintings.json.xz"
REFUSED = "cannot connect: Connection refused"


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    """The stand-in server, shut down after the test."""
    yield from serving()


class Sleeps(list[float]):
    """A sleep that only notes how long it was asked to wait."""

    def __call__(self, seconds: float) -> None:
        """Note SECONDS."""
        self.append(seconds)


def _settings(sleeps: Sleeps | None = None, **changes: float) -> Settings:
    """Settings for tests: no pause, short timeouts, three retries; SLEEPS notes the waits."""
    options = {"pause": 0.0, "connect_timeout": 2.0, "read_timeout": 2.0, "retries": 3,
               "backoff": 0.5, "max_wait": 10.0, **changes}  # fmt: skip
    return Settings(sleep=sleeps if sleeps is not None else Sleeps(), **options)  # type: ignore[arg-type]


def _fetch(stand_in: StandIn, raw: Path, *names: str, **changes: float) -> FetchReport:
    roots = stand_in.upstreams() if not stand_in.files else _roots(stand_in)
    settings = _settings(None, **changes)
    return fetch(names or ("scryfall", "mtgjson", "comprules"), raw=raw,
                 upstreams=Upstreams(**roots), settings=settings)  # fmt: skip


def _roots(stand_in: StandIn) -> dict[str, str]:
    url = stand_in.url
    return {
        "scryfall": f"{url}/scryfall",
        "mtgjson": f"{url}/mtgjson",
        "comprules": f"{url}/rules/",
    }


def _small(stand_in: StandIn, *paths: str) -> int:
    return sum(len(stand_in.files[p].body) for p in paths)


def _manifest(raw: Path) -> list[dict[str, str]]:
    with (raw / "manifest.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _state(raw: Path) -> dict[str, dict[str, object]]:
    data = json.loads((raw / ".fetch.json").read_text(encoding="utf-8"))
    return {e["path"]: e for e in data["files"]}


def _hidden_partials(raw: Path) -> list[str]:
    return sorted(str(p.relative_to(raw)) for p in raw.rglob(".*.part"))


def test_first_fetch_stores_every_source(stand_in: StandIn, tmp_path: Path) -> None:
    """Each file lands under its stable name, verified, with its state and manifest row."""
    raw = tmp_path / "raw"
    report = _fetch(stand_in, raw)
    assert report.failures == ()
    assert sorted(f.path for f in report.changed) == [
        CATALOG_PATH,
        RULES_PATH,
        XZ_PATH,
        RULINGS_PATH,
    ]
    assert (raw / RULINGS_PATH).read_bytes() == jsonl_gz(RULINGS)
    assert (raw / CATALOG_PATH).read_bytes() == jsonl_gz(CARDS)
    assert (raw / XZ_PATH).read_bytes() == all_printings()
    assert (raw / RULES_PATH).read_bytes() == RULES_2024
    assert _hidden_partials(raw) == []
    state = _state(raw)
    xz = state[XZ_PATH]
    assert xz["sha256"] == hashlib.sha256(all_printings()).hexdigest()
    assert (xz["size"], xz["url"]) == (len(all_printings()), stand_in.url + XZ_URL)
    assert xz["etag"] == stand_in.files[XZ_URL].etag
    assert xz["last_modified"] == "Wed, 19 Aug 2026 20:00:53 GMT"
    assert xz["extra"] == {"version": "5.2.2+20260819", "date": "2026-08-19"}
    assert state[RULINGS_PATH]["extra"] == {"updated_at": "2026-08-19T20:00:53+00:00"}
    fetched = dt.datetime.fromisoformat(str(xz["fetched_at"]))
    assert fetched.tzinfo is not None
    rows = {r["path"]: r for r in _manifest(raw)}
    assert sorted(rows) == sorted(state)
    assert {r["fetched_at"] for r in rows.values()} == {s["fetched_at"] for s in state.values()}
    assert {r["source"] for r in rows.values()} == {""}  # the formats name their sources
    # Bulk-data index, two Scryfall files, Meta, AllPrintings, its digest, the page, the rules.
    assert report.requests == len(stand_in.log) == 8


def test_every_request_names_the_tool_and_what_it_accepts(
    stand_in: StandIn, tmp_path: Path
) -> None:
    """A User-Agent with the tool's name and version and an Accept header, on every request."""
    _fetch(stand_in, tmp_path / "raw")
    agent = user_agent()
    assert agent.startswith("mtg-rulings-pipeline/0.1.0 ")
    assert {r.headers["User-Agent"] for r in stand_in.log} == {agent}
    accepts = {r.path: r.headers["Accept"] for r in stand_in.log}
    assert accepts["/scryfall/bulk-data"] == "application/json"
    assert accepts[XZ_URL].startswith("application/x-xz")
    assert accepts["/rules/"].startswith("text/html")
    assert accepts["/rules/MagicCompRules 20240206.txt"].startswith("text/plain")


def test_second_fetch_asks_only_if_changed(stand_in: StandIn, tmp_path: Path) -> None:
    """Nothing new upstream: one conditional request per file, answered 304, no file bytes."""
    raw = tmp_path / "raw"
    _fetch(stand_in, raw)
    before = {p: (raw / p).stat().st_mtime_ns for p in _state(raw)}
    manifest = (raw / "manifest.csv").read_bytes()
    stand_in.log.clear()
    report = _fetch(stand_in, raw)
    assert report.failures == ()
    assert report.changed == ()
    files = [r for r in stand_in.log if r.path.startswith(("/files/", XZ_URL, "/rules/Magic"))]
    assert len(files) == 4
    assert {r.status for r in files} == {304}
    assert all(r.headers["If-None-Match"] == stand_in.files[r.path].etag for r in files)
    assert all(r.headers["If-Modified-Since"] == "Wed, 19 Aug 2026 20:00:53 GMT" for r in files)
    # What was downloaded is the index, Meta.json and the page: no byte of any file.
    small = sum(
        len(stand_in.files[p].body)
        for p in ("/scryfall/bulk-data", "/mtgjson/Meta.json", "/rules/")
    )
    assert report.downloaded == small
    assert report.requests == 7  # no digest is asked for a file not downloaded
    assert {p: (raw / p).stat().st_mtime_ns for p in _state(raw)} == before
    assert (raw / "manifest.csv").read_bytes() == manifest


def test_old_download_uri_is_followed(stand_in: StandIn, tmp_path: Path) -> None:
    """A mirror whose index still has only `download_uri` gives the JSON array files."""
    raw = tmp_path / "raw"
    roots = stand_in.upstreams(jsonl=False)
    report = fetch(["scryfall"], raw=raw, upstreams=Upstreams(**roots), settings=_settings())
    assert report.failures == ()
    assert json.loads((raw / "scryfall/rulings.json").read_bytes()) == RULINGS
    assert json.loads((raw / ".catalog/scryfall-oracle-cards.json").read_bytes()) == CARDS


def test_a_new_format_supersedes_the_old_file(stand_in: StandIn, tmp_path: Path) -> None:
    """rulings.json then, once the index links JSON Lines, rulings.jsonl.gz in its place."""
    raw = tmp_path / "raw"
    fetch(["scryfall"], raw=raw, upstreams=Upstreams(**stand_in.upstreams(jsonl=False)),
          settings=_settings())  # fmt: skip
    report = fetch(["scryfall"], raw=raw, upstreams=Upstreams(**stand_in.upstreams()),
                   settings=_settings())  # fmt: skip
    [source] = report.sources
    assert [f.superseded for f in source.files] == [
        ("scryfall/rulings.json",),
        (".catalog/scryfall-oracle-cards.json",),
    ]
    assert not (raw / "scryfall/rulings.json").exists()
    assert sorted(r["path"] for r in _manifest(raw)) == [CATALOG_PATH, RULINGS_PATH]
    assert sorted(_state(raw)) == [CATALOG_PATH, RULINGS_PATH]


def test_an_entry_without_a_download_link_fails_its_source(
    stand_in: StandIn, tmp_path: Path
) -> None:
    """An index entry with neither link: the failure names the entry and the keys it has."""
    roots = stand_in.upstreams()
    index = json.loads(stand_in.files["/scryfall/bulk-data"].body)
    del index["data"][0]["jsonl_download_uri"]
    stand_in.serve("/scryfall/bulk-data", json.dumps(index).encode(), validators=False)
    report = fetch(["scryfall", "comprules"], raw=tmp_path / "raw", upstreams=Upstreams(**roots),
                   settings=_settings())  # fmt: skip
    assert report.failures == (
        (
            f"scryfall: {stand_in.url}/scryfall/bulk-data: bulk-data entry 'rulings' has neither "
            "jsonl_download_uri nor download_uri (its keys: content_encoding, id, object, type, "
            "updated_at)"
        ),
    )
    assert report.failed == ("scryfall",)
    assert (tmp_path / "raw" / RULES_PATH).is_file()  # the other source is stored


def test_a_busy_server_is_waited_for(stand_in: StandIn, tmp_path: Path) -> None:
    """429 with Retry-After, then 200: the client waits as asked, once."""
    stand_in.upstreams()
    stand_in.files["/scryfall/bulk-data"].faults = [Fault(429, {"Retry-After": "3"})]
    sleeps = Sleeps()
    report = fetch(["scryfall"], raw=tmp_path / "raw", upstreams=Upstreams(**_roots(stand_in)),
                   settings=_settings(sleeps))  # fmt: skip
    assert report.failures == ()
    assert sleeps == [3.0]
    assert [r.status for r in stand_in.requests_to("/scryfall/bulk-data")] == [429, 200]


def test_server_errors_are_retried_with_backoff(stand_in: StandIn, tmp_path: Path) -> None:
    """503 twice, then the file: waits of 0.5 and 1 s (doubling), and the file stored."""
    stand_in.upstreams()
    stand_in.files[XZ_URL].faults = [Fault(503), Fault(503)]
    sleeps = Sleeps()
    report = fetch(["mtgjson"], raw=tmp_path / "raw", upstreams=Upstreams(**_roots(stand_in)),
                   settings=_settings(sleeps))  # fmt: skip
    assert report.failures == ()
    assert sleeps == [0.5, 1.0]
    assert (tmp_path / "raw" / XZ_PATH).read_bytes() == all_printings()


def test_retries_are_bounded(stand_in: StandIn, tmp_path: Path) -> None:
    """A server that stays down: the first attempt and three more, then one failure line."""
    stand_in.upstreams()
    stand_in.files["/mtgjson/Meta.json"].faults = [Fault(503)] * 10
    report = fetch(["mtgjson"], raw=tmp_path / "raw", upstreams=Upstreams(**_roots(stand_in)),
                   settings=_settings())  # fmt: skip
    assert report.failures == (
        (
            f"mtgjson: {stand_in.url}/mtgjson/Meta.json: HTTP 503 Service Unavailable "
            "(gave up after 4 attempts)"
        ),
    )
    assert len(stand_in.requests_to("/mtgjson/Meta.json")) == 4


def test_a_retry_after_over_the_cap_is_not_waited_for(stand_in: StandIn, tmp_path: Path) -> None:
    """Retry-After of an hour against a cap of 10 s: the source fails at once, unslept."""
    stand_in.upstreams()
    stand_in.files["/rules/"].faults = [Fault(429, {"Retry-After": "3600"})]
    sleeps = Sleeps()
    report = fetch(["comprules"], raw=tmp_path / "raw", upstreams=Upstreams(**_roots(stand_in)),
                   settings=_settings(sleeps))  # fmt: skip
    assert report.failures == (
        (
            f"comprules: {stand_in.url}/rules/: HTTP 429 Too Many Requests, Retry-After 3600 s is "
            "over the 10 s allowed (--max-wait): not retried"
        ),
    )
    assert sleeps == []


def test_retry_after_as_seconds_or_an_http_date() -> None:
    """Retry-After is delay-seconds or an HTTP date (seconds from now); anything else None."""
    now = dt.datetime(2026, 8, 20, 12, 0, tzinfo=dt.UTC)
    assert retry_after("120", now) == 120.0
    assert retry_after("Thu, 20 Aug 2026 12:01:30 GMT", now) == 90.0
    assert retry_after("Thu, 20 Aug 2026 11:00:00 GMT", now) == 0.0
    assert retry_after("soon", now) is None
    assert retry_after(None, now) is None


def test_a_server_that_is_down(tmp_path: Path) -> None:
    """Connection refused: retried, then one line naming the source, the URL and the reason."""
    down = closed_port()
    report = fetch(["scryfall"], raw=tmp_path / "raw", upstreams=Upstreams(scryfall=down),
                   settings=_settings(retries=1))  # fmt: skip
    assert report.failures == (f"scryfall: {down}/bulk-data: {REFUSED} (gave up after 2 attempts)",)


@pytest.mark.slow
def test_a_silent_server_times_out(stand_in: StandIn, tmp_path: Path) -> None:
    """A server that never answers costs the read timeout per attempt, then fails the source."""
    stand_in.upstreams()
    stand_in.files["/rules/"].faults = [Fault(silence=3), Fault(silence=3)]
    report = fetch(["comprules"], raw=tmp_path / "raw", upstreams=Upstreams(**_roots(stand_in)),
                   settings=_settings(read_timeout=0.3, retries=1))  # fmt: skip
    assert report.failures == (
        (
            f"comprules: {stand_in.url}/rules/: the server went silent past the read timeout "
            "(gave up after 2 attempts)"
        ),
    )


def test_a_broken_download_is_resumed_with_range(stand_in: StandIn, tmp_path: Path) -> None:
    """Half the body, then the connection closes: the rest is asked for with Range + If-Range."""
    stand_in.upstreams()
    xz = stand_in.files[XZ_URL]
    half = len(xz.body) // 2
    xz.faults = [Fault(cut=half)]
    report = fetch(["mtgjson"], raw=tmp_path / "raw", upstreams=Upstreams(**_roots(stand_in)),
                   settings=_settings())  # fmt: skip
    assert report.failures == ()
    first, second = stand_in.requests_to(XZ_URL)
    assert "Range" not in first.headers
    # The bytes of a read cut short are lost: the rest is asked from the last whole read.
    start = int(second.headers["Range"].removeprefix("bytes=").removesuffix("-"))
    assert half - 64 * 1024 < start <= half
    assert second.headers["If-Range"] == xz.etag
    assert (second.status, second.sent) == (206, len(xz.body) - start)
    assert (tmp_path / "raw" / XZ_PATH).read_bytes() == xz.body
    assert report.downloaded == start + len(xz.body) - start + _small(
        stand_in, "/mtgjson/Meta.json", XZ_URL + ".sha256"
    )
    assert _hidden_partials(tmp_path / "raw") == []


def test_a_server_ignoring_range_restarts_the_download(stand_in: StandIn, tmp_path: Path) -> None:
    """A 200 to a Range request is the whole file again: written from the start, not appended."""
    stand_in.upstreams()
    xz = stand_in.files[XZ_URL]
    xz.ranges = False
    xz.faults = [Fault(cut=len(xz.body) // 2)]
    report = fetch(["mtgjson"], raw=tmp_path / "raw", upstreams=Upstreams(**_roots(stand_in)),
                   settings=_settings())  # fmt: skip
    assert report.failures == ()
    assert [r.status for r in stand_in.requests_to(XZ_URL)] == [200, 200]
    assert (tmp_path / "raw" / XZ_PATH).read_bytes() == xz.body


def test_a_wrong_checksum_keeps_yesterdays_file(stand_in: StandIn, tmp_path: Path) -> None:
    """A new AllPrintings whose digest does not match: refused, the stored file and state kept."""
    raw = tmp_path / "raw"
    _fetch(stand_in, raw, "mtgjson")
    state = (raw / ".fetch.json").read_bytes()
    stand_in.serve(XZ_URL, all_printings() + b"\0")  # a new ETag, a body the digest is not of
    report = _fetch(stand_in, raw, "mtgjson")
    published = hashlib.sha256(all_printings()).hexdigest()
    got = hashlib.sha256(all_printings() + b"\0").hexdigest()
    assert report.failures == (
        (
            f"mtgjson: {stand_in.url}{XZ_URL}: refused: sha256 {got} is not the published "
            f"{published}; the previous file is kept"
        ),
    )
    assert (raw / XZ_PATH).read_bytes() == all_printings()
    assert (raw / ".fetch.json").read_bytes() == state
    assert _hidden_partials(raw) == []


@pytest.mark.parametrize(
    ("path", "body", "reason"),
    [
        (
            "x.jsonl.gz",
            jsonl_gz(RULINGS)[:-9],
            "a truncated or corrupt gzip file (Compressed file ended before the end-of-stream",
        ),
        ("x.jsonl.gz", gzip.compress(b'{"a": 1}\n{"b": '), "its last line is not JSON"),
        ("x.jsonl.gz", b"not gzip at all", "not gzip data (it begins b'not gzip')"),
        ("x.json.xz", all_printings()[:-40], "a truncated or corrupt xz file (Compressed file "),
        ("x.json", b'[{"object": "ruling"}, ', "not valid JSON"),
        ("x.txt", b"Magic: The Gathering Comprehensive Rules\n\nIntroduction\n", "no 'These rules"),
    ],
    ids=["cut-gzip", "bad-last-line", "not-gzip", "cut-xz", "cut-json", "no-date-line"],
)
def test_a_broken_file_is_refused(tmp_path: Path, path: str, body: bytes, reason: str) -> None:
    """Each format is checked to its end before the file may replace the previous one."""
    (tmp_path / "f").write_bytes(body)
    with pytest.raises(VerifyError) as caught:
        verify(tmp_path / "f", path)
    assert reason in str(caught.value)


@pytest.mark.skipif(not (REALDATA / "comprules").is_dir(), reason="../shared/realdata is absent")
@pytest.mark.parametrize("release", ["2022-10-07", "2022-11-18", "2023-11-17", "2024-02-06"])
def test_real_rules_releases_pass(release: str) -> None:
    """The real releases, in cp1252, UTF-16 big-endian and UTF-8 with a BOM, all verify."""
    path = REALDATA / "comprules" / f"{release}.txt"
    assert verify(path, "MagicCompRules.txt").size == path.stat().st_size


def test_a_new_release_is_kept_beside_the_last(stand_in: StandIn, tmp_path: Path) -> None:
    """A new release under its own name: the last one stays (the reader diffs them by date)."""
    raw = tmp_path / "raw"
    _fetch(stand_in, raw, "comprules")
    stand_in.rules_page(["MagicCompRules 20240206.txt", "MagicCompRules 20250606.txt"])
    stand_in.serve("/rules/MagicCompRules 20250606.txt", RULES_2025)
    report = _fetch(stand_in, raw, "comprules")
    assert [f.path for f in report.changed] == ["comprules/MagicCompRules-20250606.txt"]
    assert sorted(p.name for p in (raw / "comprules").iterdir()) == [
        "MagicCompRules-20240206.txt",
        "MagicCompRules-20250606.txt",
    ]


def test_the_newest_txt_link_is_taken() -> None:
    """Relative or absolute, %20 or not: the .txt with the latest date in its name."""
    page = (
        '<a href="MagicCompRules%2020231117.txt">old</a><a href="/x/MagicCompRules 2024.pdf">p</a>'
        '<a href="https://media.example/rules/MagicCompRules%2020240206.txt">TXT</a>'
        '<a href="MagicCompRules 20240206.docx">DOCX</a>'
    )
    url = newest_release(page, "https://magic.example/en/rules")
    assert url == "https://media.example/rules/MagicCompRules%2020240206.txt"
    assert stored_name(url) == "MagicCompRules-20240206.txt"
    with pytest.raises(FetchError, match=r"the page links no \.txt release"):
        newest_release('<a href="rules.pdf">PDF</a>', "https://magic.example/en/rules")


def test_the_manifest_keeps_its_other_rows(stand_in: StandIn, tmp_path: Path) -> None:
    """A hand-written manifest row stays as it was; the fetched files get theirs."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "manifest.csv").write_text(
        "path,card,source,fetched_at,date_order\nmine.txt,Rift Bolt,,,dmy\n", encoding="utf-8"
    )
    _fetch(stand_in, raw, "comprules")
    rows = _manifest(raw)
    assert rows[0] == {"path": "mine.txt", "card": "Rift Bolt", "source": "", "fetched_at": "",
                       "date_order": "dmy"}  # fmt: skip
    assert [r["path"] for r in rows[1:]] == [RULES_PATH]


def test_pause_between_requests_to_one_host(stand_in: StandIn) -> None:
    """With a pause, every request after the first to a host waits for it."""
    stand_in.upstreams()
    sleeps = Sleeps()
    with Client(_settings(sleeps, pause=0.2)) as client:
        client.get(f"{stand_in.url}/rules/", accept="text/html")
        client.get(f"{stand_in.url}/rules/", accept="text/html")
    assert len(sleeps) == 1
    assert 0 < sleeps[0] <= 0.2


def _cli(stand_in: StandIn, raw: Path, *args: str) -> tuple[int, str, str]:
    roots = _roots(stand_in)
    result = CliRunner().invoke(cli, [
        "fetch", *args, "--raw", str(raw), "--scryfall-api", roots["scryfall"],
        "--mtgjson-api", roots["mtgjson"], "--comprules-page", roots["comprules"],
        "--pause", "0", "--timeout", "2", "--retries", "1",
    ])  # fmt: skip
    return result.exit_code, unstamped(result.stdout), unstamped(result.stderr)


def test_cli_fetch_prints_each_file_and_exits_0(stand_in: StandIn, tmp_path: Path) -> None:
    """Every file on a line, then the totals; a second run finds each file unchanged."""
    stand_in.upstreams()
    code, stdout, stderr = _cli(stand_in, tmp_path / "raw")
    assert (code, stderr) == (0, "")
    lines = stdout.splitlines()
    assert lines[0] == f"scryfall: {RULINGS_PATH} new ({len(jsonl_gz(RULINGS)):,} bytes)"
    assert lines[-4].startswith("fetched 4 files (4 new): 8 requests (0 retries, ")
    assert [line.split(":")[0] for line in lines[-3:]] == ["  scryfall", "  mtgjson", "  comprules"]
    code, stdout, _ = _cli(stand_in, tmp_path / "raw")
    assert code == 0
    assert f"comprules: {RULES_PATH} unchanged ({len(RULES_2024):,} bytes)" in stdout
    assert "fetched 4 files (0 new): 7 requests (0 retries, 0 resumed downloads), " in stdout


def test_cli_fetch_failure_is_one_error_line_and_exit_3(stand_in: StandIn, tmp_path: Path) -> None:
    """A refused download: exit 3, one Error: line naming the source, the URL and why."""
    stand_in.upstreams()
    stand_in.serve("/mtgjson/AllPrintings.json.xz.sha256", b"0" * 64 + b"\n", validators=False)
    code, stdout, stderr = _cli(stand_in, tmp_path / "raw")
    assert code == 3
    got = hashlib.sha256(all_printings()).hexdigest()
    assert stderr == (
        f"Error: mtgjson: {stand_in.url}{XZ_URL}: refused: sha256 {got} is not the published "
        f"{'0' * 64}; nothing stored\n"
    )
    assert "fetched 3 files (3 new), 1 of 3 sources failed: " in stdout
    assert not (tmp_path / "raw" / XZ_PATH).exists()


def test_cli_fetch_with_every_source_down_exits_1(tmp_path: Path) -> None:
    """Nothing could be fetched: exit 1, a line per source, no traceback."""
    down = closed_port()
    result = CliRunner().invoke(cli, [
        "fetch", "scryfall", "mtgjson", "--raw", str(tmp_path / "raw"), "--scryfall-api", down,
        "--mtgjson-api", down, "--pause", "0", "--retries", "0",
    ])  # fmt: skip
    assert result.exit_code == 1
    assert unstamped(result.stderr).splitlines() == [
        f"Error: scryfall: {down}/bulk-data: {REFUSED} (gave up after 1 attempt)",
        f"Error: mtgjson: {down}/Meta.json: {REFUSED} (gave up after 1 attempt)",
    ]
    assert "Traceback" not in result.output


@pytest.mark.parametrize("source", ["scryfall", "mtgjson", "comprules"])
def test_a_fetch_left_on_the_public_defaults_never_goes_out(source: str, tmp_path: Path) -> None:
    """Without a stand-in's URL, the test's own guard stops the first request at once.

    The fetch reports any failure of a source as its line: the guard's is that line.
    """
    assert not Upstreams().scryfall.startswith("http://127.")  # the defaults are public
    report = fetch([source], raw=tmp_path / "raw", upstreams=Upstreams(), settings=_settings())
    [failure] = report.failures
    assert f"{NetworkBlockedError.__name__}: a test tried to reach " in failure
    assert failure.endswith("tests use servers on 127.0.0.1 only (not foreseen: please report it)")
    assert not (tmp_path / "raw" / ".fetch.json").exists()


def test_the_log_shows_a_resume_and_a_retry(stand_in: StandIn, tmp_path: Path) -> None:
    """A download broken off once: the summary counts the retry, the resume and every byte."""
    stand_in.upstreams()
    xz = stand_in.files[XZ_URL]
    xz.faults = [Fault(cut=len(xz.body) // 2)]
    code, stdout, stderr = _cli(stand_in, tmp_path / "raw", "mtgjson")
    assert (code, stderr) == (0, "")
    assert [r.status for r in stand_in.requests_to(XZ_URL)] == [200, 206]
    # The bytes of the cut read are lost, so the two answers' bytes are the file's, once.
    size = len(xz.body) + _small(stand_in, "/mtgjson/Meta.json", XZ_URL + ".sha256")
    totals, mine = stdout.splitlines()[-2:]
    cost = f"4 requests (1 retry, 1 resumed download), {size:,} bytes downloaded"
    assert re.fullmatch(rf"fetched 1 file \(1 new\): {re.escape(cost)}, \d+\.\d s", totals)
    assert mine == f"  mtgjson: {cost}"


def test_every_log_line_begins_with_its_time(stand_in: StandIn, tmp_path: Path) -> None:
    """The nightly log's lines, stdout and stderr alike, begin with the UTC time to the second."""
    stand_in.upstreams()
    stand_in.serve("/mtgjson/AllPrintings.json.xz.sha256", b"0" * 64 + b"\n", validators=False)
    result = CliRunner().invoke(cli, [
        "fetch", "mtgjson", "--raw", str(tmp_path / "raw"), "--mtgjson-api",
        _roots(stand_in)["mtgjson"], "--pause", "0", "--retries", "0",
    ])  # fmt: skip
    assert result.exit_code == 1
    assert len(unstamped(result.stdout).splitlines()) == 2  # the totals, and mtgjson's
    assert unstamped(result.stderr).startswith("Error: mtgjson: ")


@pytest.mark.parametrize(
    ("when", "stamped"),
    [
        (dt.datetime(2024, 2, 6, 3, 0, 12, 999_999, tzinfo=dt.UTC), "2024-02-06T03:00:12Z"),
        (dt.datetime(2024, 2, 6, 4, 0, 12, tzinfo=dt.timezone(dt.timedelta(hours=1))),
         "2024-02-06T03:00:12Z"),
    ],
    ids=["utc", "another-zone"],
)  # fmt: skip
def test_a_stamp_is_utc_to_the_second(when: dt.datetime, stamped: str) -> None:
    """The time a log line begins with: ISO-8601 in UTC, whatever the zone, to the second."""
    assert stamp(when) == stamped
