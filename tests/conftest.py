"""Shared fixtures: the seed dumps, a scratch dataset folder, golden-file support."""

from __future__ import annotations

import re
import shutil
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pipeline.schema import PARTITIONED, SEGMENTED, TABLES
from pipeline.storage import layout, store

if TYPE_CHECKING:
    import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "raw"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXPECTED = FIXTURES / "expected"
SEEDS = sorted(p.name for p in RAW.glob("0*.txt"))
# The real public files of ../shared/realdata, where this checkout sits beside them.
REALDATA = ROOT.parent / "shared" / "realdata"


_LOOPBACK = ("127.", "::1", "localhost")
_THIS_MACHINE = {None, "", b"", "0.0.0.0", "::"}  # noqa: S104 - wildcards name this machine


class NetworkBlockedError(RuntimeError):
    """A test tried to reach a host that is not this machine."""


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a test at once if it looks up or connects to any host but the loopback.

    The fetcher's defaults are the public services: a test that forgets to point it at
    its local stand-in must stop here, loudly, not go out (nor wait on a DNS time-out).
    Not an OSError, so no HTTP client takes it for a connection to retry.
    """
    lookup, connect = socket.getaddrinfo, socket.socket.connect

    def refuse_remote(host: Any) -> None:
        if host in _THIS_MACHINE:  # a server binding every local address (Dask's cluster)
            return
        name = host.decode() if isinstance(host, bytes) else str(host)
        if not name.startswith(_LOOPBACK):
            msg = f"a test tried to reach {name!r}: tests use servers on 127.0.0.1 only"
            raise NetworkBlockedError(msg)

    def local_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        refuse_remote(host)
        return lookup(host, *args, **kwargs)

    def local_connect(self: socket.socket, address: Any) -> None:
        # A UDP connect sends nothing (distributed finds its own address that way).
        if self.family in {socket.AF_INET, socket.AF_INET6} and self.type == socket.SOCK_STREAM:
            try:
                refuse_remote(address[0])
            except NetworkBlockedError:
                self.close()  # no socket left for the garbage collector to warn about
                raise
        connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", local_lookup)
    monkeypatch.setattr(socket.socket, "connect", local_connect)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add --update-golden: rewrite golden files from the current outputs."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/fixtures/expected from current outputs; read them before committing",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether this session rewrites golden files instead of comparing with them."""
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def raw_copy(tmp_path: Path) -> Path:
    """A writable copy of the shipped raw/ folder (five seeds and their manifest)."""
    target = tmp_path / "raw"
    shutil.copytree(RAW, target)
    return target


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An empty dataset folder."""
    return tmp_path / "normalized"


def table(out: Path, name: str) -> pa.Table:
    """Table NAME of the dataset in OUT, plain types; a partitioned one's parts in run order."""
    return store.read_table(out, name).cast(TABLES[name])


def rows(out: Path, name: str) -> list[dict[str, Any]]:
    """Table NAME of the dataset in OUT as Python rows."""
    return table(out, name).to_pylist()


def data_files(out: Path) -> dict[str, bytes]:
    """Every data file a reader of OUT reaches, by its path under OUT: tables and parts."""
    found = {p.name: p.read_bytes() for p in sorted(out.glob("*.parquet"))}
    for name in SEGMENTED:
        for segment in sorted((out / name).glob("*.parquet")):
            found[str(segment.relative_to(out))] = segment.read_bytes()
    for name in sorted(PARTITIONED):
        for part in sorted((out / name).glob(f"*/{layout.PART}")):
            found[str(part.relative_to(out))] = part.read_bytes()
    return found


STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ "  # a log line's time: UTC ISO-8601, to the second


def unstamped(log: str) -> str:
    """LOG, the nightly job's output, without the time each line must begin with."""
    lines = log.splitlines(keepends=True)
    for line in lines:
        assert re.match(STAMP, line), f"a log line without its time: {line!r}"
    return "".join(re.sub(f"^{STAMP}", "", line) for line in lines)
