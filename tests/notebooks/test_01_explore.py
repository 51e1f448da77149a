"""notebooks/01_explore.ipynb: what the lake holds per tenant, tier, type and status, its growth, tags,
entities, sample rows, a free query, and the tiers of an older published version beside the live ones
(issue 39)."""

from __future__ import annotations


import duckdb
import pytest

from memory_lake import Lake

from ..conftest import rows
from .conftest import data_marks, last_svg, outputs, recorded, run_notebook

pytestmark = pytest.mark.xdist_group("notebooks")

NAME = "01_explore.ipynb"


@pytest.fixture(scope="module")
def executed(nights_lake_dir, tmp_path_factory):
    """The notebook run once (a real kernel) on the three-night lake, with its default parameters."""
    return run_notebook(NAME, tmp_path_factory.mktemp("nb01"), lake=str(nights_lake_dir))


@pytest.mark.process
@pytest.mark.models
def test_runs_without_error_and_the_last_chart_draws_data(executed):
    assert not [o for o in outputs(executed) if o["output_type"] == "error"]
    svg = last_svg(executed)
    assert "bar" in data_marks(svg)


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
