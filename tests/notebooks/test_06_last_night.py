"""notebooks/06_last_night.ipynb: what one nightly run ingested, moved, merged, quarantined, forgot,
summarised and published, counted from the lake's tables and checked against the run's own report
(issue 39)."""

from __future__ import annotations

import json

import pytest

from memory_lake import Lake

from ..conftest import rows
from .conftest import data_marks, last_svg, outputs, recorded, run_notebook

pytestmark = pytest.mark.xdist_group("notebooks")

NAME = "06_last_night.ipynb"
# figure of the notebook -> (step, count) of the run report
REPORTED = {"files ingested": ("ingest_inbox", "files"), "memories ingested (new)": ("ingest_inbox", "ingested"),
            "memories updated": ("ingest_inbox", "updated"), "lines quarantined": ("ingest_inbox", "quarantined"),
            "memories merged": ("dedup", "merged"), "memories merged, exact pass": ("dedup", "merged_exact"),
            "memories merged, near pass": ("dedup", "merged_near"),
            "memories merged, semantic pass": ("dedup", "merged_semantic"),
            "summaries published": ("summarize", "published"), "summaries failed": ("summarize", "failed"),
            "summaries skipped": ("summarize", "skipped"),
            "new versions published": ("publish_export", "new_version"), "rows published": ("publish_export", "rows")}


@pytest.fixture(scope="module")
def executed(nights_lake_dir, tmp_path_factory):
    """The notebook run once (a real kernel) on the three-night lake, with its default parameters: the last run."""
    return run_notebook(NAME, tmp_path_factory.mktemp("nb06"), lake=str(nights_lake_dir))


@pytest.fixture(scope="module")
def report(nights_lake_dir) -> dict:
    """The report the last nightly run stored in `runs`, read here without the notebook's API."""
    (run,) = rows(Lake.open(nights_lake_dir), "SELECT run_id, as_of, report FROM runs WHERE kind = 'nightly' "
                                              "ORDER BY as_of DESC, run_id DESC LIMIT 1")
    return {**json.loads(run["report"]), "run_id": run["run_id"], "as_of": run["as_of"]}


@pytest.mark.process
@pytest.mark.models
def test_runs_without_error_and_the_last_chart_draws_data(executed, report):
    assert not [o for o in outputs(executed) if o["output_type"] == "error"]
    svg = last_svg(executed)
    assert "bar" in data_marks(svg)
    printed = "".join(o.get("text", "") for o in outputs(executed) if o["output_type"] == "stream")
    assert f"Run {report['run_id']}: as of {report['as_of']:%Y-%m-%d %H:%M} UTC, ok" in printed
    assert "; the latest nightly run" in printed


@pytest.mark.process
@pytest.mark.models
def test_counts_from_the_tables_equal_the_run_report(executed, report):
    figures = {f["figure"]: f for f in recorded(executed, "figures")}
    steps = report["steps"]
    for figure, (step, name) in REPORTED.items():
        assert (figures[figure]["this notebook"], figures[figure]["run report"]) == (steps[step]["counts"][name],) * 2
    forgotten = steps["ingest_inbox"]["counts"]["forgotten"] + steps["apply_decisions"]["counts"].get("forgotten", 0)
    assert figures["memories forgotten"]["this notebook"] == forgotten
    moves = {f["figure"][len("moved by tier rule "):]: f["this notebook"] for f in figures.values()
             if f["figure"].startswith("moved by tier rule ")}
    assert moves == {k: v for k, v in steps["enforce_tiers"]["counts"].items() if k != "suggest_archive"}
    # every figure the report counts is compared (the last run's summaries are all on record) and equal
    assert {f["figure"]: f["equal"] for f in figures.values() if f["run report"] is not None} == {
        f: True for f, r in figures.items() if r["run report"] is not None}
    assert figures["memories ingested (new)"]["this notebook"] > 0  # the third night's follow-up snapshots
    printed = "".join(o.get("text", "") for o in outputs(executed) if o["output_type"] == "stream")
    compared = sum(f["equal"] is True for f in figures.values())
    assert f"All {compared} compared figures agree with the run report" in printed
