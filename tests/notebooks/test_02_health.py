"""notebooks/02_health.ipynb: every health figure over the stored runs (the whole lake and each
tenant), what each run did, the last run's alerts and one scope in detail (issue 39)."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from memory_lake import Lake

from ..conftest import rows
from .conftest import NIGHTS, NOTEBOOKS, outputs, run_notebook

pytestmark = pytest.mark.xdist_group("notebooks")

NAME = "02_health.ipynb"
# the notebook's column -> the figure's path in health_snapshots.metrics, as the snapshot stores it
FIGURES = {"total": "$.total", "working_utilization": "$.capacity.working.utilization",
           "short_term_utilization": "$.capacity.short_term.utilization", "hit_rate_7d": "$.hit_rate.last_7d",
           "stale_ratio": "$.staleness.stale_ratio", "stale_count": "$.staleness.stale_count",
           "conflicts_open": "$.conflicts.open", "dormant": "$.inactive.dormant"}


def recorded(notebook, name: str) -> list[dict]:
    """The rows the notebook keeps in the metadata of its output `name` (its cell is tagged `name`)."""
    (found,) = [o["metadata"]["memory_lake"]["rows"] for o in outputs(notebook, name)
                if o.get("metadata", {}).get("memory_lake", {}).get("name") == name]
    return found


def svgs(notebook) -> list[str]:
    return [o["data"]["image/svg+xml"] for o in outputs(notebook) if "image/svg+xml" in o.get("data", {})]


def data_marks(svg: str) -> list[str]:
    """What a chart draws for its data (bars, points, lines): its axes, legend and title left out."""
    return [m for m in re.findall(r'role="graphics-symbol" aria-roledescription="([^"]+)"', svg)
            if m not in ("axis", "legend", "title")]


@pytest.fixture(scope="module")
def executed(nights_lake_dir, tmp_path_factory):
    """The notebook run once (a real kernel) on the three-night lake, with its default parameters."""
    return run_notebook(NAME, tmp_path_factory.mktemp("nb02"), lake=str(nights_lake_dir))


@pytest.mark.process
@pytest.mark.models
def test_runs_without_error_and_every_chart_draws_data(executed):
    assert not [o for o in outputs(executed) if o["output_type"] == "error"]
    charts = svgs(executed)
    assert len(charts) >= 10  # health figures, per-run counts, summaries, duration, the scope
    assert 'role="graphics-symbol"' in charts[-1] and all(data_marks(svg) for svg in charts)


@pytest.mark.process
@pytest.mark.models
def test_health_series_equal_the_stored_snapshots(executed, nights_lake_dir):
    stored = rows(Lake.open(nights_lake_dir), f"""
        SELECT strftime(as_of, '%Y-%m-%d %H:%M:%S') AS as_of, coalesce(tenant, 'all tenants') AS scope,
               {', '.join(f"CAST(metrics->'{path}' AS VARCHAR) AS {name}" for name, path in FIGURES.items())}
        FROM health_snapshots WHERE level IN ('overall', 'tenant') ORDER BY as_of, level <> 'overall', tenant""")
    series = [{"as_of": r["as_of"], "scope": r["scope"], **{name: r[name] for name in FIGURES}}
              for r in recorded(executed, "health_series")]
    assert series == [{**s, **{name: json.loads(s[name] or "null") for name in FIGURES}} for s in stored]
    assert len({s["as_of"] for s in series}) == NIGHTS and {s["scope"] for s in series} == {
        "all tenants", "acme", "globex", "zhongke"}


@pytest.mark.process
@pytest.mark.models
def test_shows_the_last_runs_alerts_and_a_scope_with_them(executed, nights_lake_dir):
    alerts = rows(Lake.open(nights_lake_dir), """
        SELECT count(*) AS n FROM (SELECT unnest(CAST(metrics->'$.alerts' AS JSON[])) FROM health_snapshots
                                   WHERE as_of = (SELECT max(as_of) FROM health_snapshots))""")
    printed = "".join(o.get("text", "") for o in outputs(executed) if o["output_type"] == "stream")
    assert f"{alerts[0]['n']} alert(s) in the snapshot of 2026-12-02 00:00:" in printed
    assert re.search(rf"Scope \S+ / \S+ / \S+: {NIGHTS} snapshot\(s\)", printed)


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
