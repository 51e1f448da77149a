"""notebooks/03_dedup_review.ipynb: one run's merged clusters and kept-apart contradictions, the score
chart, and an unmerge through the Python API that the lake then shows (issue 39)."""

from __future__ import annotations

import pytest

from ..conftest import copy_lake, rows
from .conftest import data_marks, last_svg, outputs, printed, run_notebook

pytestmark = [pytest.mark.xdist_group("notebooks"), pytest.mark.process, pytest.mark.models]

NAME = "03_dedup_review.ipynb"


@pytest.fixture(scope="module")
def unmerged(nights_lake_dir, tmp_path_factory):
    """The notebook run once on a copy of the three-night lake, unmerging its largest cluster."""
    root = tmp_path_factory.mktemp("nb03")
    lake = copy_lake(nights_lake_dir, root / "lake")
    # the largest cluster that an unmerge of its canonical memory undoes (the latest merged into it), whose
    # memories have no open write conflict (those stay `conflicted` after an unmerge)
    (cluster,) = rows(lake, """
        SELECT cluster_id, any_value(canonical_id) AS canonical_id, list(member_id ORDER BY member_id) AS members
        FROM dedup_merges d WHERE unmerged_at IS NULL
          AND cluster_id = (SELECT cluster_id FROM dedup_merges l WHERE l.canonical_id = d.canonical_id
                            AND l.unmerged_at IS NULL ORDER BY as_of DESC, cluster_id LIMIT 1)
          AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.status = 'open' AND c.kind = 'write'
                          AND c.memory_id IN (d.canonical_id, d.member_id))
        GROUP BY cluster_id ORDER BY len(members) DESC, cluster_id LIMIT 1""")
    notebook = run_notebook(NAME, root / "out", lake=str(lake.root), unmerge_cluster=cluster["cluster_id"])
    return lake, cluster, notebook


def test_runs_and_draws_the_scores(unmerged):
    _, _, notebook = unmerged
    assert not [o for o in outputs(notebook) if o["output_type"] == "error"]
    assert data_marks(last_svg(notebook))


def test_reviews_the_latest_run_that_merged(unmerged):
    lake, _, notebook = unmerged
    (latest,) = rows(lake, "SELECT run_id FROM runs ORDER BY as_of DESC LIMIT 1")
    (review,) = rows(lake, "SELECT run_id, count(*) AS memories, count(DISTINCT cluster_id) AS clusters "
                           "FROM dedup_merges GROUP BY run_id ORDER BY max(as_of) DESC LIMIT 1")
    (filed,) = rows(lake, "SELECT count(*) AS pairs FROM conflicts WHERE kind = 'contradiction' AND run_id = ?",
                    [review["run_id"]])
    text = printed(notebook)
    if review["run_id"] == latest["run_id"]:
        assert f"Reviewing run {review['run_id']}." in text
    else:
        assert f"The latest run, {latest['run_id']} " in text
        assert f"reviewing the latest run that did: {review['run_id']}" in text
    assert f"Run {review['run_id']} merged {review['memories']} memories into {review['clusters']} clusters" in text
    assert f"{filed['pairs']} filed by run {review['run_id']}" in text


def test_unmerges_the_chosen_cluster_and_the_lake_shows_its_members_active(unmerged):
    lake, cluster, notebook = unmerged
    ids = [cluster["canonical_id"], *cluster["members"]]
    assert f"Applied now: cluster {cluster['cluster_id']} unmerged from {cluster['canonical_id']}" in printed(notebook)
    assert rows(lake, "SELECT id, status, merged_into FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[])) "
                      "ORDER BY id", [ids]) == [{"id": i, "status": "active", "merged_into": None} for i in sorted(ids)]
    assert rows(lake, "SELECT member_id, unmerged_by, unmerged_at IS NOT NULL AS unmerged FROM dedup_merges "
                      "WHERE cluster_id = ? ORDER BY member_id", [cluster["cluster_id"]]) == [
        {"member_id": m, "unmerged_by": "user", "unmerged": True} for m in cluster["members"]]
