"""Issue 39: every notebook is committed without outputs and opens with the papermill parameters
cell the README promises; `make notebooks-run` (notebooks/run.py) renders them as HTML that loads
nothing from the network, and says when the lake is not there."""

from __future__ import annotations

import importlib.util
import re
import stat

import nbformat
import pytest

from .conftest import NOTEBOOKS

NAMES = ["01_explore", "02_health", "03_dedup_review", "04_conflicts", "05_search_quality", "06_last_night"]


def _runner():
    spec = importlib.util.spec_from_file_location("notebooks_run", NOTEBOOKS / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_six_notebooks_are_there_without_outputs_each_opening_with_its_parameters():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == NAMES
    for name in NAMES:
        notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        code = [c for c in notebook.cells if c.cell_type == "code"]
        assert [c for c in code if c.get("outputs") or c.get("execution_count")] == [], f"{name}: commit without outputs"
        assert notebook.cells[0].cell_type == "markdown" and notebook.cells[0].source.startswith("# "), name
        first = code[0]
        assert "parameters" in first.metadata.get("tags", []), name
        for parameter in ("lake", "tenant", "version", "as_of"):
            assert re.search(rf"^{parameter} = None\b", first.source, re.M), (name, parameter)


@pytest.mark.xdist_group("notebooks")
@pytest.mark.process  # a kernel
def test_notebooks_run_renders_html_that_loads_nothing_from_the_network(nights_lake_dir, tmp_path, capsys):
    out = tmp_path / "reports" / "notebooks"
    assert _runner().main(["06_last_night", "--lake", str(nights_lake_dir), "--out", str(out)]) == 0
    html = (out / "06_last_night.html").read_text(encoding="utf-8")
    assert re.findall(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', html) == []
    assert re.findall(r"@import\s+url\(\s*['\"]?(?:https?:)?//", html) == []
    assert "data:image/svg+xml;base64," in html and "What did last night" in html  # the charts, inline
    assert stat.S_IMODE((out / "06_last_night.html").stat().st_mode) == 0o644
    err = capsys.readouterr().err
    assert "[1/1] 06_last_night.ipynb on" in err and "ok in" in err


def test_notebooks_run_without_a_lake_says_what_to_do(tmp_path, capsys):
    assert _runner().main(["--lake", str(tmp_path / "nothing"), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"no lake at {tmp_path / 'nothing'}: run `make demo` first, or set MEMORY_LAKE_DIR (or --lake) to your lake")
