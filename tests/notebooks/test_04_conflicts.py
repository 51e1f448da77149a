"""notebooks/04_conflicts.ipynb: the open conflicts decoded with their age chart, and a resolution through
the Python API: applied at once when the lake is free, queued while another process holds it (issue 39)."""

from __future__ import annotations

import json

import pytest

from ..conftest import copy_lake, held_by_another_process, rows
from .conftest import data_marks, last_svg, outputs, printed, run_notebook

pytestmark = [pytest.mark.xdist_group("notebooks"), pytest.mark.process, pytest.mark.models]

NAME = "04_conflicts.ipynb"
# the oldest open write conflict that is the only one open on its memory (which then returns to `active`)
OPEN_WRITE = """
    SELECT conflict_id, memory_id, incoming_value FROM conflicts c WHERE status = 'open' AND kind = 'write'
      AND NOT EXISTS (SELECT 1 FROM conflicts o WHERE o.memory_id = c.memory_id AND o.status = 'open'
                      AND o.conflict_id <> c.conflict_id)
    ORDER BY created_at, conflict_id LIMIT 1"""


@pytest.fixture(scope="module")
def resolved(nights_lake_dir, tmp_path_factory):
    """The notebook run once on a copy of the three-night lake, taking the incoming side of a write conflict."""
    root = tmp_path_factory.mktemp("nb04")
    lake = copy_lake(nights_lake_dir, root / "lake")
    (conflict,) = rows(lake, OPEN_WRITE)
    notebook = run_notebook(NAME, root / "out", lake=str(lake.root), resolve_conflict=conflict["conflict_id"],
                            take="incoming")
    return lake, conflict, notebook


def test_runs_and_draws_the_ages(resolved):
    lake, _, notebook = resolved
    (opened,) = rows(lake, "SELECT count(*) AS n FROM conflicts WHERE created_at <= (SELECT max(as_of) FROM runs) "
                           "AND (resolved_at IS NULL OR resolved_at > (SELECT max(as_of) FROM runs))")
    assert not [o for o in outputs(notebook) if o["output_type"] == "error"]
    assert f"{opened['n']} conflicts open at " in printed(notebook)  # read before the resolution
    assert data_marks(last_svg(notebook))


def test_resolves_the_conflict_at_once_and_the_lake_shows_it(resolved):
    lake, conflict, notebook = resolved
    assert f"Applied now: conflict {conflict['conflict_id']} resolved (incoming)" in printed(notebook)
    assert rows(lake, "SELECT status, resolution, resolved_by FROM conflicts WHERE conflict_id = ?",
                [conflict["conflict_id"]]) == [{"status": "resolved", "resolution": "incoming", "resolved_by": "user"}]
    assert rows(lake, "SELECT content, status FROM memories WHERE id = ?", [conflict["memory_id"]]) == [
        {"content": json.loads(conflict["incoming_value"]), "status": "active"}]


def test_while_another_process_holds_the_lake_the_resolution_is_queued_and_said(nights_copy, tmp_path):
    (conflict,) = rows(nights_copy, OPEN_WRITE)
    with held_by_another_process(nights_copy, seconds=120):
        notebook = run_notebook(NAME, tmp_path / "out", lake=str(nights_copy.root),
                                resolve_conflict=conflict["conflict_id"], take="lake")
    text = printed(notebook)
    assert "the lake is busy (a run holds it); read the published v3 instead" in text
    assert f"Queued, not applied: another process holds the lake (a nightly run), so the decision to take 'lake' " \
           f"for conflict {conflict['conflict_id']} was written to {nights_copy.root / 'inbox' / 'decisions'}" in text
    (queued,) = sorted((nights_copy.root / "inbox" / "decisions").glob("*.json"))
    assert {k: v for k, v in json.loads(queued.read_text(encoding="utf-8")).items()
            if k in ("kind", "conflict_id", "take")} == {"kind": "resolve", "conflict_id": conflict["conflict_id"],
                                                          "take": "lake"}
    assert rows(nights_copy, "SELECT status FROM conflicts WHERE conflict_id = ?", [conflict["conflict_id"]]) == [
        {"status": "open"}]
