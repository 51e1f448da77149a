"""Publish: layout of a version, the gate, the atomic CURRENT switch, no-op publishes, pruning."""

from __future__ import annotations

import json
import os
from datetime import timedelta

import polars as pl

from memory_lake import Lake
from memory_lake.policy import Policy
from memory_lake.publish import publish
from memory_lake.tiers import enforce_tiers

from .conftest import AS_OF, rows, write_jsonl


def scope_memory(i, **extra):
    return {"id": f"w-{i:02d}", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "working",
            "type": "fact", "content": f"working memory {i}", "created_at": "2026-11-01T00:00:00Z", **extra}


def test_a_version_has_manifest_rows_tables_and_scope_files(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        scope_memory(1, importance=0.9), scope_memory(2, tier="important"),
        {"id": "x", "tenant": "acme", "content": "no agent or user", "type": "todo"},
        {"id": "gone", "tenant": "acme", "content": "archived one", "status": "archived"},
    ])], as_of=AS_OF)
    report = publish(lake, AS_OF, run_id="run-1")
    assert (report.details["status"], report.details["version"]) == ("published", "v1")
    assert os.readlink(lake.exports / "CURRENT") == "v1"
    version = lake.exports / "v1"
    assert sorted(p.name for p in version.iterdir()) == ["manifest.json", "memories.parquet", "scopes", "tables"]
    assert sorted(pl.read_parquet(version / "memories.parquet")["id"]) == ["gone", "w-01", "w-02", "x"]
    assert {p.stem for p in (version / "tables").iterdir()} >= {"memory_history", "quarantine", "runs", "cleanup_log"}
    manifest = json.loads((version / "manifest.json").read_text())
    assert {k: manifest[k] for k in ("version", "as_of", "run_id")} == {
        "version": "v1", "as_of": "2026-11-30T00:00:00Z", "run_id": "run-1"}
    assert manifest["counts"]["by_tier"] == {"important": 1, "short_term": 2, "working": 1}
    assert manifest["counts"]["by_status"] == {"active": 3, "archived": 1}
    assert all(check["success"] for check in manifest["checks"]) and len(manifest["checks"]) == 13
    assert manifest["files"]["memories.parquet"] and "scopes/acme/_/_/memory.json" in manifest["files"]
    scope = json.loads((version / "scopes" / "acme" / "bot" / "alice" / "memory.json").read_text())
    assert {k: scope[k] for k in ("tenant", "agent_id", "user_id", "as_of")} == {
        "tenant": "acme", "agent_id": "bot", "user_id": "alice", "as_of": "2026-11-30T00:00:00Z"}
    assert [(m["id"], m["tier"], m["version"], m["conflict"]) for m in scope["memories"]] == [
        ("w-02", "important", 1, False), ("w-01", "working", 1, False)]
    context = (version / "scopes" / "acme" / "bot" / "alice" / "context.md").read_text()
    assert context == ("# Memory context: acme / bot / alice\n\nAs of 2026-11-30T00:00:00Z.\n\n## Important\n\n"
                       "- (fact) working memory 2\n\n## Working\n\n- (fact) working memory 1\n")
    assert rows(lake, "SELECT count(*) AS n FROM memories WHERE publish_meta ->> '$.version' = 'v1'") == [{"n": 4}]


def test_scope_files_reingest_into_a_fresh_lake(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [scope_memory(i, tags=["t"]) for i in range(3)])], as_of=AS_OF)
    publish(lake, AS_OF)
    fresh = Lake.open(tmp_path / "fresh", create=True)
    report = fresh.ingest([lake.exports / "v1" / "scopes" / "acme" / "bot" / "alice" / "memory.json"], as_of=AS_OF)
    assert (report.as_dict()["ingested"], report.as_dict()["quarantined"]) == (3, 0)
    columns = "id, tenant, agent_id, user_id, tier, type, content, tags, version, created_at"
    assert rows(fresh, f"SELECT {columns} FROM memories ORDER BY id") == rows(lake, f"SELECT {columns} FROM memories ORDER BY id")


def test_same_content_makes_no_new_version_and_a_change_does(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [scope_memory(1)])], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"
    later = AS_OF + timedelta(days=1)
    again = publish(lake, later)
    assert (again.details["status"], again.details["version"], again.details["current"]) == ("unchanged", None, "v1")
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [scope_memory(2)])], as_of=later)
    assert publish(lake, later).details["version"] == "v2"
    assert os.readlink(lake.exports / "CURRENT") == "v2"
    assert sorted(p.name for p in lake.exports.iterdir()) == ["CURRENT", "v1", "v2"]


def test_failed_check_blocks_names_the_expectation_and_leaves_current(lake, tmp_path):
    """Acceptance: 25 working items in one scope with the capacity rule off."""
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [scope_memory(i) for i in range(20)])], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [scope_memory(i) for i in range(20, 25)])], as_of=AS_OF)
    policy = Policy().with_overrides({"tiers": {"disabled_rules": ["working_overflow"]}})
    enforce_tiers(lake, AS_OF, policy)

    report = publish(lake, AS_OF, policy)

    assert report.details["status"] == "blocked"
    assert report.details["failed"] == ["working within capacity per scope"]
    (failed,) = [c for c in report.details["checks"] if not c["success"]]
    assert failed == {"expectation": "working within capacity per scope", "success": False,
                      "observed": "1 unexpected of 1 (e.g. 5)"}
    assert os.readlink(lake.exports / "CURRENT") == "v1"
    assert sorted(p.name for p in lake.exports.iterdir()) == ["CURRENT", "v1"]  # staging removed
    assert rows(lake, "SELECT version, status, failed FROM publishes ORDER BY as_of, status") == [
        {"version": None, "status": "blocked", "failed": ["working within capacity per scope"]},
        {"version": 1, "status": "published", "failed": []}]
    # with the rule on, the next publish goes through
    enforce_tiers(lake, AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v2"


def test_old_versions_are_pruned(tmp_path):
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "memory-lake.toml").write_text("[publish]\nkeep_versions = 2\n")
    lake = Lake.open(tmp_path / "lake", create=True)
    for i in range(4):
        lake.ingest([write_jsonl(tmp_path / f"{i}.jsonl", [scope_memory(i)])], as_of=AS_OF)
        publish(lake, AS_OF)
    assert sorted(p.name for p in lake.exports.iterdir()) == ["CURRENT", "v3", "v4"]
    assert os.readlink(lake.exports / "CURRENT") == "v4"


def test_reads_while_busy_come_from_the_published_version(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [scope_memory(1)])], as_of=AS_OF)
    publish(lake, AS_OF)
    with lake.writer(purpose="nightly run"):
        result = lake.read("SELECT id FROM memories")
        assert (result.frame["id"].to_list(), result.source) == (["w-01"], "published v1")
        assert lake.sql("SELECT count(*) AS n FROM memory_history").item() == 1
