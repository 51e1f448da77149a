"""Every notebook runs top to bottom against a fresh lake (notebooks are committed without outputs)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
@pytest.mark.process  # starts a process (the subject here)
def test_notebook_runs(path, tmp_path, monkeypatch):
    notebook = nbformat.read(path, as_version=4)
    assert not any(cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), "commit without outputs"
    monkeypatch.setenv("MEMORY_LAKE_DIR", str(tmp_path / "lake"))  # empty: the notebook builds the demo lake
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    # a cell's result (a library may also print a warning to the cell first, e.g. tqdm's IProgress one)
    shown = [o["data"]["text/plain"] for c in notebook.cells if c.cell_type == "code"
             for o in c.outputs if "data" in o]
    # the edit history, the conflict queue (the demo's late sync), and the dedup dry run's clusters
    assert any("memory_id" in text and "before" in text for text in shown)
    assert any("conflict_id" in text and "shape: (1, 8)" in text and "write" in text for text in shown)
    assert "canonical" in shown[-1] and "members" in shown[-1]
