"""pipeline verify: each damaged file of a version, or of the parts, is named; sound is exit 0."""

from __future__ import annotations

import shutil
from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, RAW, SEEDS

from pipeline import ingest
from pipeline.cli import cli
from pipeline.storage import layout, manifest, verify

if TYPE_CHECKING:
    from pathlib import Path

# The files of a two-run dataset, by what they hold; %V is the version in force.
DERIVED = [
    "%V/rulings/000001.parquet",
    "%V/state/000001.parquet",
    "%V/translations.parquet",
    "%V/names.parquet",
    "%V/cards.parquet",
    "%V/sightings-index/000000.parquet",
]
PRIMARY = [
    "%V/runs.parquet",
    "%V/files.parquet",
    "sightings/run=1/part-0.parquet",
    "sightings/run=2/part-0.parquet",
    "changes/run=2/part-0.parquet",
    "ruling_texts/run=1/part-0.parquet",
    "names_learned/run=1/part-0.parquet",
]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of two runs: the first seeds, then all of them (carried rows, an index)."""
    base = tmp_path_factory.mktemp("verify")
    raw = base / "raw"
    raw.mkdir()
    shutil.copy(RAW / "manifest.csv", raw)
    for name in SEEDS[:3]:
        shutil.copy(RAW / name, raw)
    shutil.copy(FIXTURES / "raw" / "mtgjson-tsp-cards-2022.json", raw)  # names, cards
    ingest([raw], out=base / "out")
    for name in SEEDS[3:]:
        shutil.copy(RAW / name, raw)
    shutil.copy(FIXTURES / "raw" / "mtgjson-tsp-cards-2025.json", raw)  # Oracle changes
    ingest([raw], out=base / "out")
    return base / "out"


@pytest.fixture
def dataset(written: Path, tmp_path: Path) -> Path:
    """A copy of the two-run dataset, to damage."""
    out = tmp_path / "out"
    shutil.copytree(written, out, symlinks=True)
    return out


def _path(out: Path, pattern: str) -> str:
    return pattern.replace("%V", f"{layout.VERSIONS}/{layout.pinned(out).name}")


def _corrupt(path: Path) -> None:
    """Overwrite bytes in the middle of PATH (its size kept), as a bad disk would."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 16] = bytes(16)
    path.unlink()  # a hard link shared with an older version keeps its bytes
    path.write_bytes(bytes(data))


def test_a_sound_dataset_exits_0(dataset: Path) -> None:
    """No fault: one summary line, exit 0."""
    assert verify.check(dataset).faults == []
    result = CliRunner().invoke(cli, ["verify", "--out", str(dataset)])
    assert result.exit_code == 0, result.output
    assert result.output.count("\n") == 1
    assert result.output.endswith("sound\n")


@pytest.mark.parametrize("how", ["corrupted", "deleted"])
@pytest.mark.parametrize("pattern", DERIVED + PRIMARY)
def test_a_damaged_file_is_named(dataset: Path, pattern: str, how: str) -> None:
    """Each file damaged in turn: verify names it on its own line and exits 1."""
    relative = _path(dataset, pattern)
    if how == "corrupted":
        _corrupt(dataset / relative)
    else:
        (dataset / relative).unlink()
    faults = verify.check(dataset).faults
    assert relative in {f.path for f in faults}, faults
    result = CliRunner().invoke(cli, ["verify", "--out", str(dataset)])
    assert result.exit_code == 1
    assert f"fault: {relative}: " in result.output


def test_a_missing_manifest_is_named(dataset: Path) -> None:
    """A version written before manifests: named, with what adds one."""
    (layout.pinned(dataset) / manifest.FILE).unlink()
    faults = verify.check(dataset).faults
    assert [f.path for f in faults] == [_path(dataset, f"%V/{manifest.FILE}")]


def test_a_part_of_an_uncommitted_run_is_named(dataset: Path) -> None:
    """A part of a run after L (a crash before the switch, not yet recovered)."""
    extra = layout.part_path(dataset, "changes", 3)
    extra.parent.mkdir()
    shutil.copy(layout.part_path(dataset, "changes", 2), extra)
    assert "changes/run=3/part-0.parquet" in {f.path for f in verify.check(dataset).faults}


def test_a_broken_link_is_named(dataset: Path) -> None:
    """A top-level link replaced by a plain file."""
    link = dataset / "names.parquet"
    target = link.resolve()
    link.unlink()
    shutil.copy(target, link)
    assert "names.parquet" in {f.path for f in verify.check(dataset).faults}


@pytest.mark.parametrize("leftover", [".current.tmp", ".versions/000009.tmp", ".versions/000009"])
def test_a_leftover_of_a_commit_is_named(dataset: Path, leftover: str) -> None:
    """What an interrupted commit leaves, before the next writer recovers (§9, 5)."""
    (dataset / leftover).mkdir()
    assert leftover in {f.path for f in verify.check(dataset).faults}


def test_a_part_out_of_order_is_named(dataset: Path) -> None:
    """A sightings part rewritten with its rows reversed (§9, 13)."""
    import pyarrow.parquet as pq  # noqa: PLC0415 - this test alone

    path = layout.part_path(dataset, "sightings", 1)
    table = pq.read_table(path)
    path.unlink()
    pq.write_table(table.take(list(reversed(range(table.num_rows)))), path)
    faults = [f for f in verify.check(dataset).faults if f.path == "sightings/run=1/part-0.parquet"]
    assert "rows not in (source_path, position) order" in {f.problem for f in faults}


@pytest.mark.parametrize("fixture", ["dataset-v3", "dataset-v5", "dataset-v7"])
def test_an_upgraded_dataset_gets_a_manifest_and_is_sound(fixture: str, tmp_path: Path) -> None:
    """A dataset written by an older version: its next commit writes a manifest, all sound."""
    out = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, out, symlinks=True)
    ingest([RAW], out=out)
    assert (layout.pinned(out) / manifest.FILE).is_file()
    assert verify.check(out).faults == []


def _rewrite(out: Path, relative: str, table: pa.Table) -> None:
    """Write TABLE over the file RELATIVE as the store writes it, its manifest entry made true.

    A change the manifest cannot see: what the invariants alone must find.
    """
    path = out / relative
    schema = pq.read_schema(path)
    path.unlink()  # a hard link shared with an older version keeps its bytes
    pq.write_table(table.replace_schema_metadata(schema.metadata), path)
    version = layout.pinned(out)
    found = manifest.read(version)
    assert found is not None
    files = {**found.files, relative: manifest.describe(path, relative)}
    (version / manifest.FILE).write_bytes(manifest.dump(replace(found, files=files)))


def test_a_derived_table_that_disagrees_with_its_log_is_named(dataset: Path) -> None:
    """names.parquet a row short, rulings with a text no run logged: §9, 18, past the manifest."""
    relative = _path(dataset, "%V/names.parquet")
    names = pq.read_table(dataset / relative)
    _rewrite(dataset, relative, names.slice(1))
    relative_rulings = _path(dataset, "%V/rulings/000001.parquet")
    rulings = pq.read_table(dataset / relative_rulings)
    texts = rulings["text"].to_pylist()
    texts[0] = f"{texts[0]} (edited by hand)"
    at = rulings.schema.get_field_index("text")
    _rewrite(dataset, relative_rulings, rulings.set_column(at, "text", pa.array(texts)))
    faults = {f.path: f.problem for f in verify.check(dataset).faults}
    assert faults[relative].startswith("not the rows names_learned logged")
    folder = relative_rulings.rsplit("/", 1)[0]
    assert faults[folder].startswith("1 rulings whose text ruling_texts does not log")
