"""Issue 39: every notebook is committed without outputs and opens with the papermill parameters
cell the README promises; `make notebooks-run` (notebooks/run.py) renders them as HTML that loads
nothing from the network, and says when the lake is not there."""

from __future__ import annotations

import importlib.util
import json
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


@pytest.mark.xdist_group("notebooks")
@pytest.mark.process
def test_a_tenant_the_lake_does_not_hold_stops_a_notebook_naming_the_known_ones(nights_lake_dir, tmp_path):
    """Stranger: tenant="zhongkee" ran every notebook on nothing ("no memories yet"), and 05 crashed."""
    import papermill

    from .conftest import run_notebook

    with pytest.raises(papermill.PapermillExecutionError) as caught:
        run_notebook("05_search_quality.ipynb", tmp_path, lake=str(nights_lake_dir), tenant="zhongkee")
    assert caught.value.ename == "InputError"
    assert "unknown tenant 'zhongkee': did you mean 'zhongke'? known tenants in live: acme, globex, zhongke" \
        in caught.value.evalue


@pytest.mark.xdist_group("notebooks")
@pytest.mark.process
def test_last_night_on_a_published_version_names_the_run_that_published_it(nights_lake_dir, tmp_path):
    """Stranger: 06 on version v2 showed night 1's run labelled "the latest nightly run"."""
    from .conftest import run_notebook

    executed = run_notebook("06_last_night.ipynb", tmp_path, lake=str(nights_lake_dir), version="v2")
    text = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", []))
    manifest = json.loads((nights_lake_dir / "exports" / "v2" / "manifest.json").read_text())
    assert "the latest nightly run" not in text and "the last nightly run v2 records" in text
    assert (f"v2 was published by run {manifest['run_id']} ({manifest['as_of']}), whose report is written after its "
            "publish and so is not in v2. Open the live lake (version = None) to see that run.") in text


def test_notebooks_run_names_the_notebooks_when_one_asked_for_is_not_there(nights_lake_dir, tmp_path, capsys):
    assert _runner().main(["07_nope", "--lake", str(nights_lake_dir), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == ("no notebook named 07_nope; the notebooks: " + ", ".join(NAMES))


@pytest.mark.process
def test_a_lake_with_one_memory_and_no_run_is_explored_and_measured_without_an_error(tmp_path):
    """Stranger: 01 crashed on a lake with nothing published ("current" column), 05 on a lake that is
    not the demo (its query set names the demo's users)."""
    from memory_lake import Lake

    from ..conftest import AS_OF, write_jsonl
    from .conftest import run_notebook

    lake = Lake.init(tmp_path / "lake")
    lake.ingest([write_jsonl(tmp_path / "one.jsonl", [{"id": "m1", "tenant": "solo", "content": "I like tea"}])],
                as_of=AS_OF)
    explored = run_notebook("01_explore.ipynb", tmp_path / "out", lake=str(lake.root))
    text = "".join(o.get("text", "") for c in explored.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "Nothing is published in this lake yet" in text
    measured = run_notebook("05_search_quality.ipynb", tmp_path / "out", lake=str(lake.root))
    text = "".join(o.get("text", "") for c in measured.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert ("40 of 40 queries name a scope this lake does not hold and are left out (the notebook's own set is "
            "written for the demo lake: pass queries=PATH for yours).") in text


@pytest.mark.xdist_group("notebooks")
@pytest.mark.process
@pytest.mark.parametrize("name", NAMES)
def test_a_wrong_lake_path_stops_each_notebook_with_lake_not_found_naming_it(name, tmp_path):
    import papermill

    from .conftest import run_notebook

    missing = tmp_path / "no-lake-here"
    with pytest.raises(papermill.PapermillExecutionError) as caught:
        run_notebook(f"{name}.ipynb", tmp_path / "out", lake=str(missing))
    assert caught.value.ename == "LakeNotFound" and f"no lake at {missing}" in caught.value.evalue
    assert not missing.exists()
