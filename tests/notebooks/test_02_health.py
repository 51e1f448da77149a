"""notebooks/02_health.ipynb: every health figure over the stored runs (the whole lake and each
tenant), what each run did, the last run's alerts and one scope in detail (issue 39)."""

from __future__ import annotations

import json
import re

import pytest

from memory_lake import Lake

from ..conftest import NIGHTS, rows
from .conftest import data_marks, outputs, recorded, run_notebook, svgs

pytestmark = pytest.mark.xdist_group("notebooks")

NAME = "02_health.ipynb"
# the notebook's column -> the figure's path in health_snapshots.metrics, as the snapshot stores it
FIGURES = {"total": "$.total", "working_utilization": "$.capacity.working.utilization",
           "short_term_utilization": "$.capacity.short_term.utilization", "hit_rate_7d": "$.hit_rate.last_7d",
           "stale_ratio": "$.staleness.stale_ratio", "stale_count": "$.staleness.stale_count",
           "conflicts_open": "$.conflicts.open", "dormant": "$.inactive.dormant"}


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
    assert charts and all(data_marks(svg) for svg in charts)


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
    alerts = {r["level"]: r["n"] for r in rows(Lake.open(nights_lake_dir), """
        SELECT level, count(*) AS n FROM (SELECT level, unnest(CAST(metrics->'$.alerts' AS JSON[])) FROM health_snapshots
                                          WHERE as_of = (SELECT max(as_of) FROM health_snapshots)) GROUP BY level""")}
    printed = "".join(o.get("text", "") for o in outputs(executed) if o["output_type"] == "stream")
    levels = ", ".join(f"{alerts[k]} for the whole lake" if k == "overall" else f"{alerts[k]} per {k}"
                       for k in ("overall", "tenant", "scope") if k in alerts)
    assert (f"{sum(alerts.values())} alert(s) in the snapshot of 2026-12-02 00:00, counted at every level: {levels} "
            "(the run's report counts the whole lake's alone):") in printed
    assert re.search(rf"Scope \S+ / \S+ / \S+: {NIGHTS} snapshot\(s\)", printed)
