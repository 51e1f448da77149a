"""Issue 39: the analyst's notebooks run against a demo lake that has had three nightly runs on
three dates (built once per session: the demo's first night, then two more), each test on its own
copy when it changes the lake. `run_notebook` executes a notebook with papermill parameters in a
real kernel and returns the executed notebook."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest


from ..conftest import copy_lake

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.fixture(scope="session")
def nights_lake_dir(three_nights) -> Path:
    """The demo lake after NIGHTS nightly runs, one a day from the demo's as_of (v1, v2, v3): each
    later night ran on that day's follow-up snapshots, after the searches of the day before (the
    session's `three_nights`, shared with tests/demo; treat it as read-only, `nights_copy` to write)."""
    return three_nights.root


@pytest.fixture
def nights_copy(nights_lake_dir, tmp_path):
    return copy_lake(nights_lake_dir, tmp_path / "lake")


def run_notebook(name: str, out_dir: Path, **parameters) -> nbformat.NotebookNode:
    """Execute notebooks/`name` with papermill `parameters` (a real kernel) into `out_dir`; the
    executed notebook (papermill raises PapermillExecutionError on a cell's error)."""
    import papermill

    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / name
    papermill.execute_notebook(str(NOTEBOOKS / name), str(out), parameters=parameters, kernel_name="python3",
                               cwd=str(out_dir), progress_bar=False, log_output=False)
    return nbformat.read(out, as_version=4)


def outputs(notebook: nbformat.NotebookNode, tag: str | None = None) -> list[dict]:
    """The outputs of the code cells (of the cells tagged `tag`), in order."""
    return [o for c in notebook.cells if c.cell_type == "code"
            and (tag is None or tag in c.get("metadata", {}).get("tags", [])) for o in c.get("outputs", [])]


def recorded(notebook: nbformat.NotebookNode, name: str) -> list[dict]:
    """The rows the notebook keeps in the metadata of its output `name` (its cell is tagged `name`)."""
    (found,) = [o["metadata"]["memory_lake"]["rows"] for o in outputs(notebook, name)
                if o.get("metadata", {}).get("memory_lake", {}).get("name") == name]
    return found


def printed(notebook: nbformat.NotebookNode) -> str:
    """Everything the notebook's cells printed."""
    return "".join(o.get("text", "") for o in outputs(notebook) if o["output_type"] == "stream")


def svgs(notebook: nbformat.NotebookNode) -> list[str]:
    """The notebook's charts (Altair renders SVG in the kernel), in order."""
    return [o["data"]["image/svg+xml"] for o in outputs(notebook) if "image/svg+xml" in o.get("data", {})]


def last_svg(notebook: nbformat.NotebookNode) -> str:
    return svgs(notebook)[-1]


def data_marks(svg: str) -> list[str]:
    """What a chart draws for its data (bars, points, lines): its axes, legend and title left out
    (they carry the graphics-symbol role too, so an empty chart has some)."""
    return [m for m in re.findall(r'role="graphics-symbol" aria-roledescription="([^"]+)"', svg)
            if m not in ("axis", "legend", "title")]
