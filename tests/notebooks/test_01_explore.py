"""notebooks/01_explore.ipynb: what the lake holds per tenant, tier, type and status, its growth, tags,
entities, sample rows, a free query, and the tiers of an older published version beside the live ones
(issue 39)."""

from __future__ import annotations

import re

import duckdb
import nbformat
import pytest

from memory_lake import Lake

from ..conftest import rows
from .conftest import NOTEBOOKS, outputs, run_notebook

pytestmark = pytest.mark.xdist_group("notebooks")

NAME = "01_explore.ipynb"


def recorded(notebook, name: str) -> list[dict]:
    """The rows the notebook keeps in the metadata of its output `name` (its cell is tagged `name`)."""
    (found,) = [o["metadata"]["memory_lake"]["rows"] for o in outputs(notebook, name)
                if o.get("metadata", {}).get("memory_lake", {}).get("name") == name]
    return found


def last_svg(notebook) -> str:
    return [o["data"]["image/svg+xml"] for o in outputs(notebook) if "image/svg+xml" in o.get("data", {})][-1]


def data_marks(svg: str) -> list[str]:
    """What a chart draws for its data (bars, points, lines): its axes, legend and title left out."""
    return [m for m in re.findall(r'role="graphics-symbol" aria-roledescription="([^"]+)"', svg)
            if m not in ("axis", "legend", "title")]


@pytest.fixture(scope="module")
def executed(nights_lake_dir, tmp_path_factory):
    """The notebook run once (a real kernel) on the three-night lake, with its default parameters."""
    return run_notebook(NAME, tmp_path_factory.mktemp("nb01"), lake=str(nights_lake_dir))


@pytest.mark.process
@pytest.mark.models
def test_runs_without_error_and_the_last_chart_draws_data(executed):
    assert not [o for o in outputs(executed) if o["output_type"] == "error"]
    svg = last_svg(executed)
    assert 'role="graphics-symbol"' in svg and "bar" in data_marks(svg)


@pytest.mark.process
@pytest.mark.models
def test_counts_per_tier_and_status_equal_a_direct_query(executed, nights_lake_dir):
    expected = rows(Lake.open(nights_lake_dir), "SELECT tier, status, count(*) AS memories FROM memories "
                                                "GROUP BY ALL ORDER BY tier, status")
    assert recorded(executed, "tier_counts") == expected
    assert sum(r["memories"] for r in expected) > 900  # the demo's memories, not an empty lake


@pytest.mark.process
@pytest.mark.models
def test_time_travel_sets_v1_beside_the_live_lake(executed, nights_lake_dir):
    kept = ("SELECT tier, count(*) AS memories FROM {} WHERE status NOT IN ('merged', 'deleted') "
            "GROUP BY tier ORDER BY tier")
    v1 = duckdb.sql(kept.format(f"read_parquet('{nights_lake_dir / 'exports' / 'v1' / 'memories.parquet'}')")).pl()
    live = rows(Lake.open(nights_lake_dir), kept.format("memories"))
    travel = recorded(executed, "time_travel")
    assert [{"tier": r["tier"], "memories": r["memories"]} for r in travel if r["version"] == "v1"] == v1.to_dicts()
    assert [{"tier": r["tier"], "memories": r["memories"]} for r in travel if r["version"] == "live"] == live
    assert v1.to_dicts() != live  # three nights of tier rules moved memories since v1
    shown = "".join(o["data"].get("text/plain", "") for o in outputs(executed, "time_travel") if "data" in o)
    assert "v1 (2026-11-30T00:00:00Z)" in shown and "live (this notebook)" in shown


@pytest.mark.process
def test_a_wrong_lake_path_is_lake_not_found_naming_it(tmp_path):
    from papermill.exceptions import PapermillExecutionError

    missing = tmp_path / "no-lake-here"
    with pytest.raises(PapermillExecutionError) as caught:
        run_notebook(NAME, tmp_path / "out", lake=str(missing))
    assert caught.value.ename == "LakeNotFound" and f"no lake at {missing}" in caught.value.evalue


def test_is_committed_without_outputs_and_opens_with_its_question_and_parameters():
    notebook = nbformat.read(NOTEBOOKS / NAME, as_version=4)
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert [(c.outputs, c.execution_count) for c in code] == [([], None)] * len(code)
    title, parameters = notebook.cells[:2]
    assert title.cell_type == "markdown" and title.source.startswith("# ")
    assert parameters.metadata.get("tags") == ["parameters"]
    assert [line.split("#")[0].strip() for line in parameters.source.splitlines()] == [
        "lake = None", "tenant = None", "version = None", "as_of = None"]
    assert notebook.metadata["kernelspec"]["name"] == "python3"
