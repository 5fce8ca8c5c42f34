"""The manifest of each version: every file with its rows, bytes and sha256, carried forward."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import RAW, SEEDS

from pipeline import ingest, open_dataset
from pipeline.errors import StoreError
from pipeline.schema import SCHEMA_VERSION, on_disk
from pipeline.storage import layout, manifest, store

if TYPE_CHECKING:
    from pathlib import Path


def _two_runs(tmp_path: Path, out: Path) -> Path:
    """OUT after two runs: the first seeds, then all of them."""
    raw = tmp_path / "raw-growing"
    raw.mkdir(parents=True)
    shutil.copy(RAW / "manifest.csv", raw)
    for name in SEEDS[:3]:
        shutil.copy(RAW / name, raw)
    ingest([raw], out=out)
    for name in SEEDS[3:]:
        shutil.copy(RAW / name, raw)
    ingest([raw], out=out)
    return out


def _entries(out: Path) -> dict[str, manifest.Entry]:
    found = manifest.read(layout.pinned(out))
    assert found is not None
    return found.files


def test_manifest_lists_every_file_as_it_is(tmp_path: Path, out: Path) -> None:
    """Every file of the version and every part of runs 1 … L, each entry true to its file."""
    _two_runs(tmp_path, out)
    version = layout.pinned(out)
    entries = _entries(out)
    prefix = f"{layout.VERSIONS}/{version.name}/"
    expected = {prefix + name for name in manifest.version_files(version)}
    logs = ("sightings", "changes", "ruling_texts")  # the seeds give no names, no cards
    expected |= {f"{n}/run={r}/part-0.parquet" for n in logs for r in (1, 2)}
    assert set(entries) == expected
    for path, entry in entries.items():  # carried entries (linked files, old parts) included
        assert manifest.describe(out / path, path) == entry, path
    data = json.loads((version / manifest.FILE).read_text(encoding="utf-8"))
    assert (data["version"], data["schema_version"], data["last_run"]) == (2, SCHEMA_VERSION, 2)


def test_manifest_bytes_are_deterministic(tmp_path: Path) -> None:
    """Two datasets from the same seeds: the same manifest but for runs, files, the index.

    runs.parquet holds wall-clock times, the index the parts' modification times (§4), and
    files.parquet the raw copies' paths and modification times, which differ here.
    """
    one, two = (_two_runs(tmp_path / n, tmp_path / n / "out") for n in ("a", "b"))

    def stable(out: Path) -> dict[str, manifest.Entry]:
        return {
            p: e
            for p, e in _entries(out).items()
            if not any(k in p for k in ("runs.", "files.", "sightings-index"))
        }

    assert stable(one) == stable(two)
    assert (
        manifest.dump(manifest.read(layout.pinned(one)) or _never())
        == (layout.pinned(one) / manifest.FILE).read_bytes()
    )


def _never() -> manifest.Manifest:
    raise AssertionError


def test_a_dataset_without_manifest_gets_one_at_its_next_commit(tmp_path: Path, out: Path) -> None:
    """A version written before manifests: the next commit hashes every file once."""
    raw = tmp_path / "raw-growing"
    raw.mkdir()
    shutil.copy(RAW / "manifest.csv", raw)
    for name in SEEDS[:3]:
        shutil.copy(RAW / name, raw)
    ingest([raw], out=out)
    (layout.pinned(out) / manifest.FILE).unlink()
    for name in SEEDS[3:]:
        shutil.copy(RAW / name, raw)
    ingest([raw], out=out)
    for path, entry in _entries(out).items():
        assert manifest.describe(out / path, path) == entry, path
    assert "sightings/run=1/part-0.parquet" in _entries(out)


def test_a_commit_hashes_only_the_files_it_writes(
    tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run 2 carries run 1's parts and the linked files' entries: it hashes what it wrote."""
    raw = tmp_path / "raw-growing"
    raw.mkdir()
    shutil.copy(RAW / "manifest.csv", raw)
    for name in SEEDS[:3]:
        shutil.copy(RAW / name, raw)
    ingest([raw], out=out)
    first = layout.pinned(out)
    for name in SEEDS[3:]:
        shutil.copy(RAW / name, raw)
    hashed: list[str] = []
    describe = manifest.describe

    def counted(path: Path, relative: str) -> manifest.Entry:
        hashed.append(relative)
        return describe(path, relative)

    monkeypatch.setattr(manifest, "describe", counted)
    ingest([raw], out=out)
    second = layout.pinned(out)
    assert "sightings/run=1/part-0.parquet" not in hashed
    assert "sightings/run=2/part-0.parquet" in hashed
    carried = []
    for relative in _entries(out):
        name = relative.removeprefix(f"{layout.VERSIONS}/{second.name}/")
        linked = name != relative and (first / name).exists()
        if linked and (first / name).samefile(second / name):
            carried.append(relative)
    assert carried  # this run leaves some of the version's files as they were
    assert not set(carried) & set(hashed)


def test_readers_read_the_files_the_manifest_lists(tmp_path: Path, out: Path) -> None:
    """A part on disk the manifest does not list is read by no reader; a listed one gone is named.

    As a part written by a run that has not committed yet: its rows are not the version's.
    """
    _two_runs(tmp_path, out)
    stray = layout.part_path(out, "names_learned", 1)
    stray.parent.mkdir(parents=True)
    row = {"name": "Blitz der Kluft", "lang": "de", "card": "Rift Bolt", "oracle_id": None}
    schema = on_disk("names_learned")
    pq.write_table(pa.Table.from_pylist([row], schema=schema), stray)
    assert layout.part_runs(out, "names_learned") == [1]  # on disk
    assert store.open_version(out).table("names_learned").num_rows == 0
    connection = open_dataset(out).duckdb()
    assert connection.execute("SELECT count(*) FROM names_learned").fetchone() == (0,)
    listed = layout.part_path(out, "ruling_texts", 2)
    listed.unlink()
    with pytest.raises(StoreError, match=r"^ruling_texts/run=2/part-0\.parquet: missing"):
        store.open_version(out).table("ruling_texts")
