"""The example notebook runs top to bottom on a first run's dataset and on one with history."""

from __future__ import annotations

import os
import re
import shutil
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from conftest import FIXTURES, RAW, ROOT
from nbclient import NotebookClient

from pipeline import ingest

if TYPE_CHECKING:
    from pathlib import Path

NOTEBOOK = ROOT / "examples" / "analysis.ipynb"
SEED_2023 = RAW / "003_4e428d287bba6602.txt"
SEED_2024 = RAW / "000_3c6244a5804b91f0.txt"
# The sentences of the sections that have nothing to show after a single run.
NOTHING_YET = ("No amended rulings yet", "No changes yet beyond first sightings")
# What the two sections on cards say of a dataset no card source was read into.
NO_CARDS = (
    "No cards yet: the cards table is filled from card sources",
    "No Oracle changes: no card",
)
# Two MTGJSON builds of Time Spiral: the 2025 one rewords three cards' Oracle texts.
BUILDS = [FIXTURES / "raw" / f"mtgjson-tsp-cards-{year}.json" for year in (2022, 2025)]


def _ingest(out: Path, versions: list[tuple[Path, str]]) -> None:
    """Ingest each (seed, fetched_at day) as one run of the same dump of The Tenth Doctor."""
    raw = out.parent / "raw"
    raw.mkdir(exist_ok=True)
    for seed, day in versions:
        manifest = f"path,card,fetched_at\ndump.txt,The Tenth Doctor,{day}\n"
        (raw / "manifest.csv").write_text(manifest, encoding="utf-8")
        shutil.copy(seed, raw / "dump.txt")
        ingest([raw], out=out)


def _execute(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Run the notebook on DATASET and return the outputs of its code cells, in order."""
    monkeypatch.setenv("RULINGS_DATASET", str(dataset))
    notebook = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})  # fmt: skip
    client.execute(env={**os.environ})
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    return outputs


def _tables(outputs: list[Any]) -> str:
    """The plain-text form of every table and figure the notebook displayed."""
    return "\n\n".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)


def _printed(outputs: list[Any]) -> str:
    """Everything the notebook printed."""
    return "".join(o.text for o in outputs if o.output_type == "stream")


def test_notebook_is_committed_without_outputs() -> None:
    """Outputs are cleared in git: the notebook is run by the tests, not stored run."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code
    assert all(not cell.outputs and cell.execution_count is None for cell in code)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_notebook_on_a_first_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After one run the tables show, and the sections about changes say there are none yet."""
    out = tmp_path / "normalized"
    _ingest(out, [(SEED_2023, "2023-10-20")])
    outputs = _execute(out, monkeypatch)
    printed = _printed(outputs)
    assert all(sentence in printed for sentence in NOTHING_YET)
    assert "The Tenth Doctor" in _tables(outputs)  # today's rulings per card
    assert all(sentence in printed for sentence in NO_CARDS)
    assert not any("image/png" in o.get("data", {}) for o in outputs)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_notebook_on_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With history: amendments, a chart of changes by the month they took effect, queries."""
    out = tmp_path / "normalized"
    # The dump fetched in October 2023, February 2024, then in May 2024 back as it was.
    _ingest(out, [(SEED_2023, "2023-10-20"), (SEED_2024, "2024-02-10"), (SEED_2023, "2024-05-15")])
    outputs = _execute(out, monkeypatch)
    assert not any(sentence in _printed(outputs) for sentence in NOTHING_YET)
    tables = _tables(outputs)
    assert "Suspend is a keyword" in tables  # the most re-worded rulings
    assert "rulings" in tables  # the DuckDB result
    assert "source" in tables  # the Polars result
    assert any("image/png" in o.get("data", {}) for o in outputs)
    per_month = next(t for t in tables.split("\n\n") if t.startswith("change "))
    # Changes sit at the month of the version they brought: the 2024 rulings' 2024-02, the
    # 2023 wordings that came back in May at their own 2023-10, not at the day a run read
    # them; the months between are there with zeros, and removals are counted apart.
    months = re.findall(r"^(\d{4}-\d{2}) ", per_month, flags=re.MULTILINE)
    assert months == ["2023-10", "2023-11", "2023-12", "2024-01", "2024-02"]
    assert re.search(r"^2023-11(\s+0)+$", per_month, flags=re.MULTILINE)
    assert "2024-05" not in per_month
    removals = r"Removals \(no date of their own, not in the chart\): [1-9]"
    assert re.search(removals, _printed(outputs))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_notebook_on_cards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two builds of a set file: rulings of cards legal in modern, the last run's Oracle edits."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    raw.mkdir()
    for build in BUILDS:
        shutil.copy(build, raw / "TSP.json")
        ingest([raw], out=out)
    outputs = _execute(out, monkeypatch)
    printed = _printed(outputs)
    assert not any(sentence in printed for sentence in NO_CARDS)
    assert "33 rulings in force, of 2 of the 3 cards legal in modern" in printed
    assert "Run 2: 3 cards' Oracle texts changed, 3 groups of edits" in printed
    tables = _tables(outputs)
    legal = next(t for t in tables.split("\n\n") if "mana_value" in t)
    assert re.search(r"^Ancestral Vision\s+Sorcery\s+0\.0\s+18$", legal, flags=re.MULTILINE)
    assert re.search(r"^Rift Bolt\s+Sorcery\s+3\.0\s+15$", legal, flags=re.MULTILINE)
    edits = next(t for t in tables.split("\n\n") if "words" in t)
    assert "[-Amrou Seekers-]{+This creature+}" in edits
    assert "[-Rift Bolt-]{+This spell+}" in edits
    assert "2022-04-25  2025-08-18" in edits
