"""pipeline repair: the derived tables made again from the parts, into a new version."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from test_verify import DERIVED, PRIMARY, _corrupt, _path, written

from pipeline.cli import cli
from pipeline.errors import StoreError
from pipeline.rebuild import repair
from pipeline.schema import TABLES
from pipeline.storage import layout, store, verify

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["written"]  # the module fixture, shared with test_verify

Tables = dict[str, list[dict[str, object]]]


def _tables(out: Path) -> Tables:
    """Every table of the version in force as rows; runs without their wall-clock times."""
    version = store.open_version(out)
    found = {}
    for name in TABLES:
        table = version.table(name).cast(TABLES[name])
        if name == "runs":
            table = table.drop_columns(["started_at", "finished_at"])
        found[name] = table.to_pylist()
    return found


@pytest.fixture
def dataset(written: Path, tmp_path: Path) -> Path:
    """A copy of the two-run dataset, to damage."""
    out = tmp_path / "out"
    shutil.copytree(written, out, symlinks=True)
    return out


REBUILT = DERIVED


@pytest.mark.parametrize("how", ["corrupted", "deleted"])
@pytest.mark.parametrize("pattern", REBUILT)
def test_repair_rebuilds_a_damaged_derived_file(
    written: Path, dataset: Path, pattern: str, how: str
) -> None:
    """The new version equals, table by table, the one the runs wrote; verify finds it sound.

    Translations linked again in full score their links otherwise than the runs did, one
    after the other: their rows are compared without the scores and originals.
    """
    relative = _path(dataset, pattern)
    before = layout.pinned(dataset).name
    if how == "corrupted":
        _corrupt(dataset / relative)
    else:
        (dataset / relative).unlink()
    result = CliRunner().invoke(cli, ["repair", "--out", str(dataset)])
    assert result.exit_code == 0, result.output
    assert f"damaged: {relative}\n" in result.output
    assert int(layout.pinned(dataset).name) > int(before)  # a new version, nothing in place
    assert verify.check(dataset).faults == []
    got, want = _tables(dataset), _tables(written)
    if "translations" in pattern:
        linked = ("card", "lang", "text_hash")
        for rows in (got, want):
            rows["translations"] = [{k: r[k] for k in linked} for r in rows["translations"]]
    assert got == want


def test_repair_of_a_sound_dataset_changes_no_table(written: Path, dataset: Path) -> None:
    """Nothing damaged: the repaired version holds the same tables."""
    repair(dataset)
    assert _tables(dataset) == _tables(written)
    assert verify.check(dataset).faults == []


@pytest.mark.parametrize("pattern", PRIMARY)
def test_repair_refuses_a_damaged_primary_file(dataset: Path, pattern: str) -> None:
    """A part, runs or files corrupted: named by verify, refused by repair, nothing written."""
    relative = _path(dataset, pattern)
    before = layout.pinned(dataset).name
    _corrupt(dataset / relative)
    assert relative in {f.path for f in verify.check(dataset).faults}
    with pytest.raises(StoreError, match=f"^{relative}: .*restore it from a backup"):
        repair(dataset)
    assert layout.pinned(dataset).name == before
    result = CliRunner().invoke(cli, ["repair", "--out", str(dataset)])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {relative}: ")


@pytest.mark.parametrize("table", ["ruling_texts", "names_learned", "card_versions"])
def test_repair_refuses_when_a_log_part_is_lost(dataset: Path, table: str) -> None:
    """A log's part deleted: what it kept is in no other file: refused, named, nothing written."""
    part = layout.part_path(dataset, table, 1)
    shutil.rmtree(part.parent)
    before = layout.pinned(dataset).name
    relative = part.relative_to(dataset).as_posix()
    with pytest.raises(StoreError, match=f"^{relative}: .*restore it from a backup"):
        repair(dataset)
    assert layout.pinned(dataset).name == before


def test_repair_and_verify_take_a_relative_out(
    dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--out normalized` from the folder above, as the README runs them."""
    (layout.pinned(dataset) / "state" / "000001.parquet").unlink()
    monkeypatch.chdir(dataset.parent)
    runner = CliRunner()
    assert runner.invoke(cli, ["verify", "--out", dataset.name]).exit_code == 1
    result = runner.invoke(cli, ["repair", "--out", dataset.name])
    assert result.exit_code == 0, result.output
    assert runner.invoke(cli, ["verify", "--out", dataset.name]).exit_code == 0
