"""The command line: exit codes, messages and the printed summary."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, data_files, rows

from pipeline.cli import cli
from pipeline.storage import lock, store

if TYPE_CHECKING:
    from pathlib import Path


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_ingest_prints_the_summary_and_exits_0(raw_copy: Path, out: Path) -> None:
    """A clean run prints its counts and exits 0."""
    code, stdout, _ = _run("ingest", str(raw_copy), "--out", str(out))
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0] == "run 1: stored"
    assert "  files read      5" in lines
    assert "  rulings read    77" in lines
    assert "  new keys        77" in lines
    assert "  duplicates      0" in lines
    assert "  warnings        1" in lines


def test_rejected_input_exits_3_and_names_the_file(raw_copy: Path, out: Path) -> None:
    """Some inputs rejected, the rest stored: exit 3, each rejection on its own line."""
    (raw_copy / "blank.txt").write_text("\n\n", encoding="utf-8")
    code, stdout, _ = _run("ingest", str(raw_copy), "--out", str(out))
    assert code == 3
    assert "rejected:\n  blank.txt: empty file" in stdout
    assert "run 1: stored" in stdout


def test_strict_rejection_exits_1(raw_copy: Path, out: Path) -> None:
    """With --strict a rejection fails the run and nothing is stored."""
    (raw_copy / "blank.txt").write_text("\n", encoding="utf-8")
    code, stdout, _ = _run("ingest", str(raw_copy), "--out", str(out), "--strict")
    assert code == 1
    assert stdout.startswith("run 1: NOT stored (--strict)")
    assert not (out / "rulings").exists()


def test_ambiguous_document_is_named(tmp_path: Path, out: Path) -> None:
    """An undecidable document is listed under its own heading."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "amb.txt").write_text("Rift Bolt\n\n07/06/2013\n\nA ruling.\n", encoding="utf-8")
    code, stdout, _ = _run("ingest", str(raw), "--out", str(out))
    assert code == 0
    assert "ambiguous dates (left empty):\n  amb.txt" in stdout


def test_an_ambiguous_document_is_told_once_with_its_reason(tmp_path: Path, out: Path) -> None:
    """Listed under its heading with why, and not again under the warnings."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "amb.txt").write_text("Rift Bolt\n\n07/06/2013\n\nA ruling.\n", encoding="utf-8")
    (raw / "bad.txt").write_text("Rift Bolt\n\n31/02/2024\n\nAnother.\n", encoding="utf-8")
    code, stdout, _ = _run("ingest", str(raw), "--out", str(out))
    assert code == 0
    assert stdout.count("amb.txt") == 1
    assert "  amb.txt: no date tells day-first from month-first; dates left empty" in stdout
    assert "  warnings        2" in stdout
    assert stdout.endswith(
        "warnings:\n  bad.txt: invalid date '31/02/2024': kept as printed, date left empty\n"
    )


def test_a_long_list_of_warnings_is_cut_and_the_dataset_keeps_them_all(
    tmp_path: Path, out: Path
) -> None:
    """A stored run lists LISTED warnings and counts the rest; files.parquet has every one."""
    from pipeline.cli import LISTED  # noqa: PLC0415

    raw = tmp_path / "raw"
    raw.mkdir()
    count = LISTED + 7
    for n in range(count):
        (raw / f"{n:04}.txt").write_text(f"Rift Bolt\n\n31/02/2024\n\nRuling {n}.\n", "utf-8")
    code, stdout, _ = _run("ingest", str(raw), "--out", str(out))
    assert code == 0
    listed = [line for line in stdout.splitlines() if "invalid date" in line]
    assert len(listed) == LISTED
    assert listed[0].startswith("  0000.txt:")
    assert "  ... and 7 more (every file's warnings: files.parquet in the dataset)" in stdout
    files = store.read_table(out, "files").to_pylist()
    assert sum(len(row["warnings"]) for row in files) == count
    # Not stored (--strict, a rejected file), nothing holds them: all are listed.
    (raw / "blank.txt").write_text("\n", encoding="utf-8")
    code, stdout, _ = _run("ingest", str(raw), "--out", str(tmp_path / "strict"), "--strict")
    assert code == 1
    assert sum("invalid date" in line for line in stdout.splitlines()) == count


def test_missing_path_is_a_usage_error(tmp_path: Path, out: Path) -> None:
    """A path that does not exist exits 2 with one Error: line."""
    code, _, stderr = _run("ingest", str(tmp_path / "nope"), "--out", str(out))
    assert code == 2
    assert stderr == f"Error: {tmp_path / 'nope'}: no such file or folder\n"


def test_bad_option_value_is_a_usage_error(raw_copy: Path) -> None:
    """Click's own usage errors exit 2 too."""
    code, _, stderr = _run("ingest", str(raw_copy), "--date-order", "ymd")
    assert code == 2
    assert "Invalid value for '--date-order'" in stderr


def test_manifest_row_escaping_the_root_is_rejected(raw_copy: Path, out: Path) -> None:
    """A manifest row escaping the raw root is a named rejection; the rest is stored."""
    manifest = raw_copy / "manifest.csv"
    manifest.write_text("path,card\n../../etc/passwd,X\n", encoding="utf-8")
    code, stdout, _ = _run("ingest", str(raw_copy), "--out", str(out))
    assert code == 3
    assert "manifest.csv:2: path '../../etc/passwd' escapes the raw root; row ignored" in stdout
    assert "  files read      5" in stdout


def test_malformed_manifest_is_a_usage_error(raw_copy: Path, out: Path) -> None:
    """A manifest without a path column stops the run before anything is read."""
    (raw_copy / "manifest.csv").write_text("card\nX\n", encoding="utf-8")
    code, _, stderr = _run("ingest", str(raw_copy), "--out", str(out))
    assert code == 2
    assert "a manifest needs a 'path' column" in stderr
    assert not out.exists() or not data_files(out)


def test_busy_dataset_exits_4(raw_copy: Path, out: Path) -> None:
    """A second writer exits 4 with a message that says what to do."""
    with lock.writer_lock(out):
        code, _, stderr = _run("ingest", str(raw_copy), "--out", str(out))
    assert code == 4
    assert "another ingest is writing this dataset" in stderr
    assert "--wait SECONDS" in stderr


@pytest.mark.parametrize("where", ["/proc", "/proc/self"])
def test_a_folder_where_no_lock_can_be_made_is_no_busy_dataset(raw_copy: Path, where: str) -> None:
    """--out a folder in which the writer lock cannot be made: exit 1 and why, never 4."""
    code, _, stderr = _run("ingest", str(raw_copy), "--out", where)
    assert code == 1
    assert stderr.startswith(f"Error: {where}: cannot make the dataset's writer lock .lock there (")
    assert stderr.endswith(
        "): not a folder a dataset can be written in; give --out another folder\n"
    )
    code, _, stderr = _run("update", "--raw", str(raw_copy), "--out", where, "comprules")
    assert code == 1
    assert "cannot make the dataset's writer lock" in stderr


@pytest.mark.slow
def test_module_entry_point_and_defaults(raw_copy: Path, tmp_path: Path) -> None:
    """`python -m pipeline ingest` reads raw/ into normalized/ by default, with no bar in a pipe."""
    work = tmp_path / "work"
    work.mkdir()
    raw_copy.rename(work / "raw")
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "ingest"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert (work / "normalized" / "rulings").is_dir()


def test_every_input_rejected_exits_5(tmp_path: Path, out: Path) -> None:
    """Nothing could be stored: its own first line, exit 5, and no run recorded."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "blank.txt").write_text("\n\n", encoding="utf-8")
    code, stdout, _ = _run("ingest", str(raw), "--out", str(out))
    assert code == 5
    assert stdout.startswith("run 1: NOT stored (every input was rejected)\n")
    assert "rejected:\n  blank.txt: empty file" in stdout
    assert not out.exists() or not data_files(out)


def test_an_empty_folder_records_no_run(tmp_path: Path, out: Path) -> None:
    """No input file: nothing to do, exit 0, and the dataset gets no empty run."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "manifest.csv").write_text("path,card\n", encoding="utf-8")
    code, stdout, _ = _run("ingest", str(raw), "--out", str(out))
    assert code == 0
    assert stdout == (
        "no run: no input files (hidden files, READMEs and the manifest are not inputs)\n"
    )
    assert not out.exists() or not data_files(out)


BULK = (
    '[{"object":"ruling","oracle_id":"22f1a4a4-c423-4d1c-8775-0ed604a9fa51",'
    '"source":"wotc","published_at":"2020-01-01","comment":"A bulk ruling."}]'
)


@pytest.mark.parametrize("form", ["json", "jsonl.gz"])
def test_catalogs_in_the_raw_roots_catalog_folder_are_used(
    tmp_path: Path, out: Path, form: str
) -> None:
    """RAW/.catalog/ holds catalogs: loaded without --catalog, they name the card.

    As a JSON array, and as the gzipped JSON Lines Scryfall's bulk index serves today. A
    catalog is a card source too: read as a file (2: the rulings and the catalog).
    """
    raw = tmp_path / "raw"
    (raw / ".catalog").mkdir(parents=True)
    (raw / "bulk.json").write_text(BULK, encoding="utf-8")
    cards = FIXTURES / "catalog" / "scryfall-cards.json"
    catalog = f"oracle.{form}"
    if form == "json":
        shutil.copy(cards, raw / ".catalog" / catalog)
    else:
        lines = "".join(json.dumps(c) + "\n" for c in json.loads(cards.read_text("utf-8")))
        (raw / ".catalog" / catalog).write_bytes(gzip.compress(lines.encode()))
    code, stdout, _ = _run("ingest", str(raw), "--out", str(out))
    assert code == 0, stdout
    assert "  files read      2" in stdout
    assert "  warnings        0" in stdout
    assert [r["source_path"] for r in rows(out, "files")] == ["bulk.json", f".catalog/{catalog}"]
    assert [(r["card"], r["source"]) for r in rows(out, "sightings")] == [
        ("Deathrite Shaman", "scryfall/wotc")
    ]


def test_an_unreadable_catalog_in_the_folder_is_rejected(tmp_path: Path, out: Path) -> None:
    """A found catalog that cannot be read is left out and reported; the rest is stored."""
    raw = tmp_path / "raw"
    (raw / ".catalog").mkdir(parents=True)
    (raw / "bulk.json").write_text(BULK, encoding="utf-8")
    (raw / ".catalog" / "broken.json").write_text("not a catalog\n", encoding="utf-8")
    code, stdout, _ = _run("ingest", str(raw), "--out", str(out))
    assert code == 3
    assert "rejected:\n  .catalog/broken.json: not a card catalog of a known shape;" in stdout
    assert "1 ruling names only an oracle id" in stdout
