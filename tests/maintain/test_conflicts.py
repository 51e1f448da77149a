"""The conflict queue: seed 000's example 2, every resolution, queued resolutions, manual edits, the inbox helper."""

from __future__ import annotations

import json

import pytest

from memory_lake import write_snapshot
from memory_lake.cli import main
from memory_lake.maintain.decisions import apply_decisions, pending_decisions
from memory_lake.store.errors import InputError

from ..conftest import AS_OF, held_by_another_process, rows, write_jsonl

PREF = {"id": "pref-theme", "tenant": "acme", "agent_id": "assistant", "user_id": "alice", "tier": "long_term",
        "type": "preference", "content": "用户偏好浅色模式", "tags": ["ui"], "created_at": "2026-11-01T00:00:00Z"}


def ingest(lake, tmp_path, name, records):
    return lake.ingest([write_jsonl(tmp_path / name, records)], as_of=AS_OF).as_dict()


def at_version_3(lake, tmp_path):
    ingest(lake, tmp_path, "v1.jsonl", [PREF])
    ingest(lake, tmp_path, "v2.jsonl", [{**PREF, "version": 1, "importance": 0.7}])
    ingest(lake, tmp_path, "v3.jsonl", [{**PREF, "version": 2, "importance": 0.8}])
    assert rows(lake, "SELECT version FROM memories") == [{"version": 3}]


def memories(lake):
    return rows(lake, "SELECT id, content, version, status, tier, operator FROM memories ORDER BY id")


def test_seed_example_2_two_agents_from_version_3_then_both(lake, tmp_path):
    at_version_3(lake, tmp_path)
    a = ingest(lake, tmp_path, "agent-a.jsonl", [{**PREF, "version": 3, "content": "用户偏好深色模式",
                                                  "trace_id": "trace-a"}])
    b = ingest(lake, tmp_path, "agent-b.jsonl", [{**PREF, "version": 3, "content": "用户偏好自动切换",
                                                  "trace_id": "trace-b"}])
    assert (a["updated"], b["updated"], b["conflicted"]) == (1, 0, 1)
    # A's write is version 4; B's is a conflict: the lake keeps A's value, marked conflicted
    assert memories(lake) == [{"id": "pref-theme", "content": "用户偏好深色模式", "version": 4, "status": "conflicted",
                               "tier": "long_term", "operator": "agent"}]
    (conflict,) = lake.conflicts().to_dicts()
    assert {k: conflict[k] for k in ("kind", "field", "base_version", "lake_version", "lake_value", "incoming_value",
                                     "lake_trace_id", "incoming_trace_id", "memory_version", "memory_status")} == {
        "kind": "write", "field": "content", "base_version": 3, "lake_version": 4,
        "lake_value": '"用户偏好深色模式"', "incoming_value": '"用户偏好自动切换"', "lake_trace_id": "trace-a",
        "incoming_trace_id": "trace-b", "memory_version": 4, "memory_status": "conflicted"}
    # the user picks "两者都记": version 5, and two memories
    result = lake.resolve_conflict(conflict["conflict_id"], "both", as_of=AS_OF)
    second = f"pref-theme~{conflict['conflict_id'][:8]}"
    assert (result["version"], result["status"], result["new_memory_id"], result["open_left"]) == (5, "active", second, 0)
    assert memories(lake) == [
        {"id": "pref-theme", "content": "用户偏好深色模式", "version": 5, "status": "active", "tier": "long_term",
         "operator": "user"},
        {"id": second, "content": "用户偏好自动切换", "version": 1, "status": "active", "tier": "long_term",
         "operator": "user"}]
    assert rows(lake, "SELECT memory_id, version, change, operator, reason FROM memory_history "
                      "WHERE operator = 'user' ORDER BY memory_id") == [
        {"memory_id": "pref-theme", "version": 5, "change": "update", "operator": "user",
         "reason": f"conflict {conflict['conflict_id']} on content resolved: both"},
        {"memory_id": second, "version": 1, "change": "insert", "operator": "user",
         "reason": f"conflict {conflict['conflict_id']} on content resolved: both"}]
    assert lake.conflicts().height == 0
    (done,) = lake.conflicts(status="resolved").to_dicts()
    assert (done["resolution"], done["resolved_by"], done["resolved_value"], done["new_memory_id"]) == (
        "both", "user", '"用户偏好深色模式"', second)
    # the second memory's content hash is the one ingest gives that text (search and dedup rely on it)
    ingest(lake, tmp_path, "same.jsonl", [{**PREF, "id": None, "content": "用户偏好自动切换"}])
    (pair,) = rows(lake, "SELECT count(DISTINCT content_hash) AS n FROM memories WHERE content = '用户偏好自动切换'")
    assert pair == {"n": 1}


@pytest.mark.parametrize(("take", "value", "content"), [
    ("lake", None, "用户偏好深色模式"), ("incoming", None, "用户偏好自动切换"), ("value", "用户偏好跟随系统", "用户偏好跟随系统")])
def test_take_lake_incoming_or_a_value(lake, tmp_path, take, value, content):
    at_version_3(lake, tmp_path)
    ingest(lake, tmp_path, "a.jsonl", [{**PREF, "version": 3, "content": "用户偏好深色模式"}])
    ingest(lake, tmp_path, "b.jsonl", [{**PREF, "version": 3, "content": "用户偏好自动切换"}])
    (conflict_id,) = lake.conflicts()["conflict_id"].to_list()
    result = lake.resolve_conflict(conflict_id, take, value=value, as_of=AS_OF)
    assert (result["version"], result["status"], result["new_memory_id"]) == (5, "active", None)
    assert memories(lake) == [{"id": "pref-theme", "content": content, "version": 5, "status": "active",
                               "tier": "long_term", "operator": "user"}]
    with pytest.raises(InputError, match="already resolved"):
        lake.resolve_conflict(conflict_id, "lake", as_of=AS_OF)
    with pytest.raises(InputError, match="unknown conflict id 'nope'"):
        lake.resolve_conflict("nope", "lake", as_of=AS_OF)


def test_the_memory_stays_conflicted_until_its_last_conflict_is_resolved(lake, tmp_path):
    at_version_3(lake, tmp_path)
    ingest(lake, tmp_path, "a.jsonl", [{**PREF, "version": 3, "content": "A", "importance": 0.1}])
    ingest(lake, tmp_path, "b.jsonl", [{**PREF, "version": 3, "content": "B", "importance": 0.2}])
    first, second = lake.conflicts()["conflict_id"].to_list()
    assert lake.resolve_conflict(first, "incoming", as_of=AS_OF)["status"] == "conflicted"
    assert lake.resolve_conflict(second, "lake", as_of=AS_OF)["status"] == "active"
    assert rows(lake, "SELECT content, importance, version FROM memories") == [
        {"content": "B", "importance": 0.1, "version": 6}]  # fields sort: content first, then importance


def test_a_resolution_is_queued_while_a_run_holds_the_lake_and_applied_first_by_the_next(lake, tmp_path):
    import time

    at_version_3(lake, tmp_path)
    ingest(lake, tmp_path, "a.jsonl", [{**PREF, "version": 3, "content": "用户偏好深色模式"}])
    ingest(lake, tmp_path, "b.jsonl", [{**PREF, "version": 3, "content": "用户偏好自动切换"}])
    (conflict_id,) = lake.conflicts()["conflict_id"].to_list()
    with held_by_another_process(lake, seconds=30):
        queued = lake.resolve_conflict(conflict_id, "incoming", as_of=AS_OF)
        assert set(queued) == {"queued"} and [p.name for p in pending_decisions(lake)] == [queued["queued"].split("/")[-1]]
    time.sleep(0.1)
    report = apply_decisions(lake, AS_OF)
    assert (report.counts["applied"], report.counts["resolved"], report.counts["left"]) == (1, 1, 0)
    assert memories(lake)[0]["content"] == "用户偏好自动切换"
    assert pending_decisions(lake) == []


def test_manual_edit_pins_a_memory_through_the_versioned_path(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [PREF])
    result = lake.edit("pref-theme", tier="important", tags="ui, theme", importance="0.9", as_of=AS_OF)
    assert (result["version"], result["updated"], result["quarantined"]) == (2, 1, 0)
    assert rows(lake, "SELECT tier, tags, importance, version, operator FROM memories") == [
        {"tier": "important", "tags": ["theme", "ui"], "importance": 0.9, "version": 2, "operator": "user"}]
    assert rows(lake, "SELECT change, changed_fields, operator FROM memory_history WHERE version = 2") == [
        {"change": "update", "changed_fields": ["tier", "tags", "importance"], "operator": "user"}]
    # now important: an agent's edit waits for a user as a conflict, a user's applies
    agent = lake.edit("pref-theme", content="agent text", operator="agent", as_of=AS_OF)
    assert (agent["conflicted"], agent["version"], agent["status"]) == (1, 2, "conflicted")
    assert lake.conflicts()["kind"].to_list() == ["important"]
    with pytest.raises(InputError, match="cannot edit"):
        lake.edit("pref-theme", status="archived", as_of=AS_OF)
    with pytest.raises(InputError, match="outside 0..1"):
        lake.edit("pref-theme", importance="3", as_of=AS_OF)


def test_cli_lists_and_resolves(lake, tmp_path, capsys):
    at_version_3(lake, tmp_path)
    ingest(lake, tmp_path, "a.jsonl", [{**PREF, "version": 3, "content": "用户偏好深色模式"}])
    ingest(lake, tmp_path, "b.jsonl", [{**PREF, "version": 3, "content": "用户偏好自动切换"}])
    assert main(["--lake", str(lake.root), "conflicts", "list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    # the values come as the JSON they are (not JSON text inside JSON), with what found the conflict
    assert (listed["memory_id"], listed["field"], listed["lake_value"], listed["incoming_value"], listed["status"],
            listed["found_by"]) == ("pref-theme", "content", "用户偏好深色模式", "用户偏好自动切换", "open", "b.jsonl:1")
    assert listed["base_value"] == "用户偏好浅色模式"                  # the base too, not '"用户偏好浅色模式"'
    assert main(["--lake", str(lake.root), "conflicts", "resolve", listed["conflict_id"], "--take", "value=跟随系统",
                 "--operator", "user", "--as-of", "2026-11-30T00:00:00Z", "--json"]) == 0
    resolved = json.loads(capsys.readouterr().out)
    assert (resolved["version"], resolved["status"], resolved["take"]) == (5, "active", "value")
    assert main(["--lake", str(lake.root), "conflicts", "resolve", listed["conflict_id"], "--take", "maybe"]) == 2
    assert main(["--lake", str(lake.root), "edit", "pref-theme", "--set", "content=新的内容", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 6


def test_write_snapshot_is_atomic_and_ingested_once(lake):
    path = write_snapshot([{"tenant": "acme", "content": "from an agent"}], lake.root)
    assert path.parent == lake.inbox and path.suffix == ".jsonl"
    assert [p.name for p in lake.inbox.iterdir() if p.is_file()] == [path.name]  # no temporary file is left
    # a file being written under a temporary name is not taken
    (lake.inbox / ".half.jsonl.tmp").write_text('{"tenant": "acme", "content": "hal')
    first = lake.ingest(as_of=AS_OF).as_dict()
    again = lake.ingest(as_of=AS_OF).as_dict()
    assert (first["files"], first["ingested"], again["files"]) == (1, 1, 0)
    assert sorted(p.name for p in lake.inbox.iterdir() if p.is_file()) == [".half.jsonl.tmp"]
    assert rows(lake, "SELECT count(*) AS n FROM ingested_files") == [{"n": 1}]


# Observed: resolving a contradiction printed "zh-1 is at version None, None".
@pytest.mark.parametrize(("take", "said", "statuses"), [
    ("lake", "both keep their text: zh-1 (version 1, active) and zh-2 (version 1, active)",
     [("zh-1", 1, "active"), ("zh-2", 1, "active")]),
    ("incoming", "zh-2 keeps its text (version 1, active); zh-1 archived (version 2, archived)",
     [("zh-1", 2, "archived"), ("zh-2", 1, "active")]),
    ("value=用户在编辑器里跟随系统主题", "zh-1 now holds your text (version 2, active); zh-2 archived (version 2, archived)",
     [("zh-1", 2, "active"), ("zh-2", 2, "archived")]),
])
def test_resolving_a_contradiction_says_what_each_memory_became(lake, tmp_path, capsys, take, said, statuses):
    from memory_lake.maintain import dedup

    scope = {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "type": "preference"}
    ingest(lake, tmp_path, "zh.jsonl", [{**scope, "id": "zh-1", "content": "用户在编辑器里偏好深色主题模式"},
                                        {**scope, "id": "zh-2", "content": "用户在编辑器里偏好浅色主题模式"}])
    assert dedup(lake, AS_OF).counts["contradictions_filed"] == 1
    (conflict_id,) = lake.conflicts()["conflict_id"].to_list()
    assert main(["--lake", str(lake.root), "conflicts", "resolve", conflict_id, "--take", take,
                 "--as-of", "2026-11-30T00:00:00Z"]) == 0
    kind = take.partition("=")[0]
    assert capsys.readouterr().out == f"resolved contradiction {conflict_id} ({kind}): {said}\n"
    assert [(r["id"], r["version"], r["status"]) for r in memories(lake)] == statuses
