"""The example notebook runs top to bottom against a dataset the test builds."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import nbformat
import pytest
from conftest import RAW, ROOT
from nbclient import NotebookClient

from pipeline import ingest

if TYPE_CHECKING:
    from pathlib import Path

NOTEBOOK = ROOT / "examples" / "analysis.ipynb"


def test_notebook_is_committed_without_outputs() -> None:
    """Outputs are cleared in git: the notebook is run by the tests, not stored run."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code
    assert all(not cell.outputs and cell.execution_count is None for cell in code)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cell runs without error; the chart and the three query results are produced."""
    raw, out = tmp_path / "raw", tmp_path / "normalized"
    raw.mkdir()
    (raw / "manifest.csv").write_text("path,card\ndump.txt,The Tenth Doctor\n", encoding="utf-8")
    shutil.copy(RAW / "003_4e428d287bba6602.txt", raw / "dump.txt")
    ingest([raw], out=out)
    shutil.copy(RAW / "000_3c6244a5804b91f0.txt", raw / "dump.txt")
    shutil.copy(RAW / "001_ca7dd0badab20c1e.txt", raw / "rift-bolt.txt")
    ingest([raw], out=out)
    monkeypatch.setenv("RULINGS_DATASET", str(out))
    notebook = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})  # fmt: skip
    client.execute(env={**os.environ})
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    texts = "\n".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "The Tenth Doctor" in texts
    assert "Suspend is a keyword" in texts  # the most re-worded rulings
    assert "2024-02" in texts  # changes per month
    assert "rulings" in texts  # the DuckDB result
    assert "source" in texts  # the Polars result
    assert any("image/png" in o.get("data", {}) for o in outputs)
