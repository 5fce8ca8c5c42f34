"""Exit codes a batch job can trust: every command, many times, each in a fresh process.

A command that has done its work must end with its own exit code, not with SIGABRT while the
interpreter shuts down. Arrow decodes Parquet on its pool threads, and they drop what a read
used a moment after the read returns: a read just before exit that left behind a buffer
needing the GIL aborted 10 to 30% of runs on a loaded machine (layout.native_file says why).
The commands here run three to a core, so that the interpreter's shutdown meets those
threads often; the dataset is the smallest that showed the abort in 1 run of 10 under that
load (20,000 rulings of 4,000 cards), and every expected code is asserted on every run.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pytest
from conftest import RAW

from pipeline import ingest

if TYPE_CHECKING:
    from pathlib import Path

# Each test runs its commands many times in fresh processes: left out of make check.
pytestmark = pytest.mark.slow

RULINGS, CARDS = 20_000, 4_000
_WORDS = ["card", "spell", "counter", "exile", "target", "battlefield", "player", "creature"]
_WORDS += ["ability", "mana", "cost", "turn", "upkeep", "library", "graveyard", "token"]


def _set_file(path: Path) -> None:
    """An MTGJSON v5 set file of CARDS cards, RULINGS rulings of random words in all."""
    rng = random.Random(7)
    cards = []
    for number in range(CARDS):
        rulings = [
            {
                "date": f"20{rng.randint(10, 24)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
                "text": " ".join(rng.choices(_WORDS, k=rng.randint(12, 40))).capitalize() + ".",
            }
            for _ in range(RULINGS // CARDS)
        ]
        cards.append({"name": f"Card {number:05d}", "rulings": rulings, "foreignData": []})
    data = {"code": "SYN", "name": "Synthetic", "releaseDate": "2022-01-01", "cards": cards}
    doc = {"meta": {"date": "2022-04-25", "version": "5.2.0"}, "data": data}
    path.write_text(json.dumps(doc), encoding="utf-8")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of the seeds and one synthetic set file, in two runs."""
    root = tmp_path_factory.mktemp("exit-codes")
    synthetic = root / "synthetic"
    synthetic.mkdir()
    _set_file(synthetic / "SYN.json")
    out = root / "normalized"
    ingest([RAW], out=out)
    ingest([synthetic], out=out)
    return out


def _run_all(commands: list[list[str]], cwd: Path) -> list[tuple[list[str], int, str]]:
    """Run COMMANDS three to a core; each command's argv, exit code and last stderr line."""

    def run(argv: list[str]) -> tuple[list[str], int, str]:
        done = subprocess.run(
            argv, check=False, cwd=cwd, capture_output=True, text=True, timeout=120
        )
        lines = done.stderr.strip().splitlines()
        return argv, done.returncode, lines[-1] if lines else ""

    with ThreadPoolExecutor(max_workers=3 * (os.cpu_count() or 1)) as pool:
        return list(pool.map(run, commands))


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "pipeline", *args]


# (arguments, expected exit code, times): the reading commands, failing and succeeding.
CLI_CASES = [
    (("history", "Nope"), 2, 12),
    (("history", "Card 00001"), 0, 6),
    (("history", "Rift Bolt"), 0, 4),
    (("changelog",), 0, 4),
    (("changelog", "--format", "json"), 0, 3),
    (("changelog", "--format", "html"), 0, 3),
    (("changelog", "--run", "99"), 2, 4),
    (("stats",), 0, 4),
    (("stats", "--json"), 0, 3),
]


def test_every_command_ends_with_its_own_exit_code(dataset: Path) -> None:
    """Each reading command, run again and again, exits with the same code every time."""
    commands = []
    expected = {}
    for args, code, times in CLI_CASES:
        argv = _cli(*args, "--out", str(dataset))
        expected[tuple(argv)] = code
        commands += [argv] * times
    # ingest too: a new dataset each time (a second writer of one would exit 4 by design).
    for n in range(3):
        argv = _cli("ingest", str(RAW), "--out", str(dataset.parent / f"fresh-{n}"))
        expected[tuple(argv)] = 0
        commands.append(argv)
    results = _run_all(commands, dataset.parent)
    wrong = [(argv[3:], rc, err) for argv, rc, err in results if rc != expected[tuple(argv)]]
    assert not wrong, f"{len(wrong)} of {len(results)} runs ended otherwise: {wrong[:5]}"


LIBRARY_CALLS = {
    "open_dataset": "ds.last_run",
    "rulings": "ds.rulings(current_only=False)",
    "sightings": "ds.sightings()",
    "changes": "ds.changes()",
    "translations": "ds.translations()",
    "history": "ds.history('Card 00001')",
    "runs": "ds.runs()",
    "duckdb": "ds.duckdb().execute('SELECT count(*) FROM sightings').fetchall()",
}


def test_library_readers_end_with_the_scripts_exit_code(dataset: Path) -> None:
    """A fresh Python that reads with each entry point exits with the code it asks for."""
    commands = []
    expected = {}
    for call in LIBRARY_CALLS.values():
        for code in (0, 3, 0, 3):
            script = textwrap.dedent(f"""
                import sys
                import pipeline
                ds = pipeline.open_dataset({str(dataset)!r})
                result = {call}
                sys.exit({code})
            """)
            expected[script] = code
            commands.append([sys.executable, "-c", script])
    results = _run_all(commands, dataset.parent)
    wrong = [
        (argv[2].split("result = ")[1].split("\n")[0], rc, err)
        for argv, rc, err in results
        if rc != expected[argv[2]]
    ]
    assert not wrong, f"{len(wrong)} of {len(results)} runs ended otherwise: {wrong[:5]}"
