"""The diff gate (publish/diff.py, issues 18 and 37.3): each rule planted as a defect in a copy of
the demo lake holds the scope it touches at its published state (agents keep loading what they
had), every other scope publishes, and the run result, the digest and the report name the held
scope and why; the operations that explain a change (a user's edit, the tier rules' moves) pass."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from memory_lake.demo import DEMO_AS_OF
from memory_lake.observe.runs import run_nightly_steps
from memory_lake.publish import publish
from memory_lake.store import Policy

from ..conftest import AS_OF, rows, write_jsonl

pytestmark = pytest.mark.models  # its lakes are built and searched with the embedding models


def published(lake, version: str = "v1") -> tuple[int, int]:
    """Rows and scopes of a published version (the demo's, counted rather than written down)."""
    import json

    manifest = json.loads((lake.exports / version / "manifest.json").read_text())
    return manifest["counts"]["rows"], len(manifest["counts"]["scopes"])

DROP = "active per scope not dropped beyond max_active_drop unexplained"
SCOPE = ("acme", "support-bot", "u-alice")


def plant(lake, *statements: str) -> None:
    """A defect written straight into lake.duckdb, as a bug upstream would: no history, no log."""
    with lake.writer(purpose="plant a defect") as con:
        for statement in statements:
            con.execute(statement)


def night(lake, tmp_path: Path, as_of=DEMO_AS_OF) -> tuple[dict, str]:
    """The nightly steps (no Prefect); the run summary and the HTML report's text."""
    summary = run_nightly_steps(lake, as_of, reports_dir=tmp_path / "reports")
    return summary, Path(summary["report"]).read_text(encoding="utf-8")


def assert_held(lake, summary: dict, report: str, scopes: list[tuple], reason: str) -> None:
    import polars as pl

    assert summary["status"] == "ok" and summary["publish"]["failed"] == []
    held = summary["publish"]["held"]
    assert [(h["tenant"], h["agent_id"], h["user_id"]) for h in held] == scopes
    assert reason in held[0]["reason"]
    assert held[0]["action"].startswith(f"memory-lake holds release {scopes[0][0]}")
    current, first = (pl.read_parquet(lake.exports / v / "memories.parquet") for v in ("CURRENT", "v1"))
    for tenant, agent, user in scopes:  # what agents load of the held scope is v1's, row for row
        mine = (pl.col("tenant") == tenant) & (pl.col("agent_id") == agent) & (pl.col("user_id") == user)
        assert current.filter(mine).sort("id").equals(first.filter(mine).sort("id"))
    assert "Held scopes" in report and reason.replace(">", "&gt;") in report
    assert f"{len(scopes)} scope(s) held at their published state by the publish gate" in report  # the alert
    assert lake.sql("SELECT count(*) FROM publish_holds WHERE released_at IS NULL").item() == len(scopes)


def test_an_unexplained_drop_of_a_scope_holds_that_scope(demo_copy, tmp_path):
    lake = demo_copy
    before = rows(lake, "SELECT count(*) AS n FROM memories WHERE tenant = ? AND agent_id = ? AND user_id = ? "
                        "AND status IN ('active', 'conflicted')", list(SCOPE))[0]["n"]
    plant(lake, "UPDATE memories SET status = 'archived' WHERE id IN (SELECT id FROM memories WHERE tenant = 'acme' "
                "AND agent_id = 'support-bot' AND user_id = 'u-alice' AND status = 'active' AND tier <> 'important' "
                "ORDER BY id LIMIT 60)")
    summary, report = night(lake, tmp_path)
    allowed = int(before * Policy().publish.max_active_drop)
    assert_held(lake, summary, report, [SCOPE], f"60 of {before} active memories left with nothing recorded to "
                                                f"explain it (at most {allowed} allowed)")


def test_an_important_memory_changed_without_a_user_holds_its_scope(demo_copy, tmp_path):
    lake = demo_copy
    (target,) = [r["id"] for r in rows(lake, "SELECT min(id) AS id FROM memories WHERE tier = 'important' "
                                             "AND tenant = 'zhongke'")]
    (scope,) = rows(lake, f"SELECT tenant, agent_id, user_id FROM memories WHERE id = '{target}'")
    plant(lake, f"UPDATE memories SET content = content || '（已改）' WHERE id = '{target}'")
    summary, report = night(lake, tmp_path)
    assert_held(lake, summary, report, [tuple(scope.values())], f"important memory {target} changed with no user history row")


def test_an_important_memory_gone_without_a_user_holds_its_scope(demo_copy, tmp_path):
    lake = demo_copy
    (target,) = [r["id"] for r in rows(lake, "SELECT min(id) AS id FROM memories WHERE tier = 'important' "
                                             "AND tenant = 'acme'")]
    (scope,) = rows(lake, f"SELECT tenant, agent_id, user_id FROM memories WHERE id = '{target}'")
    plant(lake, f"UPDATE memories SET status = 'deleted' WHERE id = '{target}'")  # a forget with no history row
    summary, report = night(lake, tmp_path)
    assert_held(lake, summary, report, [tuple(scope.values())], f"important memory {target} disappeared with no user history row")


def test_a_memory_moved_to_another_tenant_holds_both_scopes(demo_copy, tmp_path):
    lake = demo_copy
    (target,) = [r["id"] for r in rows(lake, "SELECT min(id) AS id FROM memories WHERE tenant = 'zhongke' "
                                             "AND tier <> 'important' AND status = 'active'")]
    (scope,) = rows(lake, f"SELECT tenant, agent_id, user_id FROM memories WHERE id = '{target}'")
    plant(lake, f"UPDATE memories SET tenant = 'globex' WHERE id = '{target}'")
    summary, report = night(lake, tmp_path)
    scope = tuple(scope.values())
    assert_held(lake, summary, report, [("globex", *scope[1:]), scope], f"memory {target} moved from tenant zhongke to globex")


def test_a_users_edit_of_an_important_memory_passes_the_gate(demo_copy, tmp_path):
    lake = demo_copy
    (target,) = [r["id"] for r in rows(lake, "SELECT min(id) AS id FROM memories WHERE tier = 'important'")]
    lake.edit(target, content="A user rewrote this important memory", operator="user", as_of=DEMO_AS_OF)
    summary, _ = night(lake, tmp_path)
    assert (summary["status"], summary["publish"]["version"], summary["publish"]["failed"]) == ("ok", "v2", [])


def test_the_tier_rules_moves_explain_a_large_drop(demo_copy, tmp_path):
    """Seventy days on, long_term_dormant makes most long-term memories dormant: scopes lose far more
    than 20 % of their active memories, every one of them explained by the cleanup log."""
    lake = demo_copy
    later = DEMO_AS_OF + timedelta(days=70)
    summary, _ = night(lake, tmp_path, later)
    assert (summary["status"], summary["publish"]["version"]) == ("ok", "v2")
    drops = rows(lake, "SELECT count(*) AS n FROM cleanup_log WHERE rule = 'long_term_dormant' AND as_of = ?", [later])
    assert drops[0]["n"] > 300
    checks = {c["expectation"]: c for c in summary_checks(lake, "v2")}
    assert checks[DROP] == {"expectation": DROP, "success": True, "observed": f"0 unexpected of {published(lake)[1]}"}


def summary_checks(lake, version: str) -> list[dict]:
    import json

    return json.loads((lake.exports / version / "manifest.json").read_text())["checks"]


# ---------------------------------------------------------------------------- a policy change, no data change
def test_a_policy_change_that_makes_current_invalid_is_reported_with_no_data_change(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "w.jsonl", [
        {"id": f"w-{i}", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "working",
         "content": f"working memory {i}", "created_at": "2026-11-01T00:00:00Z"} for i in range(15)])], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"
    assert publish(lake, AS_OF).details["status"] == "unchanged"

    stricter = Policy().with_overrides({"tiers": {"working_capacity": 10, "disabled_rules": ["working_overflow"]}})
    report = publish(lake, AS_OF + timedelta(days=1), stricter)

    details = report.details
    assert (details["status"], details["failed"], details["current_invalid"], details["current"]) == (
        "blocked", ["working within capacity per scope"], True, "v1")
    (failed,) = [c for c in details["checks"] if not c["success"]]
    assert failed == {"expectation": "working within capacity per scope", "success": False,
                      "observed": "1 unexpected of 1 (e.g. 5)"}
    assert os.readlink(lake.exports / "CURRENT") == "v1"
    assert sorted(p.name for p in lake.exports.iterdir()) == ["CURRENT", "v1"]
    assert rows(lake, "SELECT status, failed FROM publishes ORDER BY as_of, status") == [
        {"status": "published", "failed": []}, {"status": "unchanged", "failed": []},
        {"status": "blocked", "failed": ["working within capacity per scope"]}]
    # under the policy CURRENT was published with, the same night is fine again
    assert publish(lake, AS_OF + timedelta(days=1)).details["status"] == "unchanged"


def test_a_policy_change_blocks_the_nightly_run_and_says_why(lake, tmp_path):
    """The same through the nightly steps: the run result and the report name the check."""
    lake.ingest([write_jsonl(tmp_path / "w.jsonl", [
        {"id": f"w-{i}", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "working",
         "content": f"working memory {i}", "created_at": "2026-11-01T00:00:00Z",
         "last_accessed_at": "2026-11-29T00:00:00Z"} for i in range(15)])], as_of=AS_OF)
    assert night(lake, tmp_path, AS_OF)[0]["publish"]["version"] == "v1"
    (lake.root / "memory-lake.toml").write_text('[tiers]\nworking_capacity = 10\ndisabled_rules = ["working_overflow"]\n')
    from memory_lake import Lake
    from memory_lake.observe.runs import blocked_message

    reopened = Lake.open(lake.root)
    summary, report = night(reopened, tmp_path, AS_OF)
    assert summary["status"] == "blocked" and summary["publish"]["current_invalid"] is True
    assert summary["publish"]["failed"] == ["working within capacity per scope"]
    assert "CURRENT still points at v1 and no longer passes them" in blocked_message(summary)
    assert "CURRENT no longer passes the checks under the current policy" in report
    assert os.readlink(lake.exports / "CURRENT") == "v1"
