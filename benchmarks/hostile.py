"""Each hostile file beside a good seed: exit code, reason, seconds, peak RSS.

Every case is one `pipeline ingest` of a fresh raw folder (the Rift Bolt seed and the
hostile file) into a fresh dataset, run from a small parent process under an address-space
cap of 4 GiB, so a regression cannot take the machine down. Peak RSS is the largest of the
command and its worker processes. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = HERE.parent / "raw" / "001_ca7dd0badab20c1e.txt"  # Rift Bolt, 13 rulings
_CAP = 4 << 30
_LIMIT = 600  # seconds a case may run
# The parent of one run: caps the command, waits for it, reports its figures as JSON.
CAPPED = HERE / "capped.py"


def _scryfall(data: bytes) -> bytes:
    return b'{"object": "list", "has_more": false, "data": ' + data + b"}"


def _ruling(comment: bytes) -> bytes:
    return (
        b'{"object": "ruling", "oracle_id": "5c6a5d0b-bd60-4b51-8ab1-2d2fdf3a9f5a", '
        b'"source": "wotc", "published_at": "2024-02-02", "comment": "' + comment + b'"}'
    )


def _mtgjson(rulings: bytes) -> bytes:
    return (
        b'{"meta": {"version": "5.2.0"}, "data": {"code": "TSP", "cards": '
        b'[{"name": "Rift Bolt", "rulings": ' + rulings + b"}]}}"
    )


def cases() -> dict[str, bytes | None]:
    """The hostile files (None: a named pipe), by name."""
    return {
        "(the seed alone)": b"",
        "deep-array.json": b"[" * 200_000 + b"]" * 200_000,
        "scryfall-deep-data.json": _scryfall(b"[" * 100_000 + b"]" * 100_000),
        "mtgjson-deep-rulings.json": _mtgjson(b"[" * 50_000 + b"]" * 50_000),
        "fifo.txt": None,
        "scryfall-50mb-ruling.json": _scryfall(b"[" + _ruling(b"x" * 50_000_000) + b"]"),
        "deep-object.json": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        "deep.html": (
            b'<html><body><span id="x_SubContentHeader_subtitleDisplay">Rift Bolt</span>'
            + b"<div>\n" * 300_000
            + b"</body></html>"
        ),
        "long-number.json": _scryfall(b"[" + b"1" * 100_000 + b"]"),
    }


def run_case(name: str, data: bytes | None, work: Path) -> dict[str, object]:
    """Ingest the seed and one hostile file; return the run's figures and its reason line."""
    raw, out = work / "raw", work / "out"
    shutil.rmtree(work, ignore_errors=True)
    raw.mkdir(parents=True)
    shutil.copy(SEED, raw / SEED.name)
    if data is None:
        os.mkfifo(raw / name)
    elif data:
        (raw / name).write_bytes(data)
    command = [sys.executable, "-m", "pipeline", "ingest", str(raw), "--out", str(out)]
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, str(CAPPED), str(_CAP), str(_LIMIT), *command],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(HERE.parent)},
    )
    figures = json.loads(done.stdout)
    lines = figures["stdout"].splitlines() + figures["stderr"].splitlines()
    named = [line.strip() for line in lines if name in line]
    stored = next((line.split()[-1] for line in lines if "rulings read" in line), "?")
    return {
        "code": figures["code"],
        "seconds": figures["seconds"],
        "rss_mb": figures["rss_mb"],
        "stored": stored,
        "reason": named[0] if named else "(not named)",
        "traceback": "Traceback" in figures["stderr"],
    }


def main() -> None:
    """Run every case and print one row each."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", help="run only the case whose name contains this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        print("| file | exit | rulings stored | seconds | peak RSS | reason |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, data in cases().items():
            if args.only and args.only not in name:
                continue
            row = run_case(name, data, Path(tmp) / "case")
            flag = " TRACEBACK" if row["traceback"] else ""
            print(
                f"| {name} | {row['code']}{flag} | {row['stored']} | {row['seconds']:.2f} "
                f"| {row['rss_mb']:.0f} MiB | {row['reason']} |"
            )


if __name__ == "__main__":
    main()
