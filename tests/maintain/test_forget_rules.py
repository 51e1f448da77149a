"""forget, at the edges the main tests leave open: the audit row a forget writes (its version and
the request file it names), the context.md a scrub rewrites under the lake's own budget and from
its own scope's entity facts, a lake taken between the check and the hold, the report registry and
the message of a bad operator."""

from __future__ import annotations

from datetime import datetime

import importlib
import json
from pathlib import Path

import pytest

from memory_lake.maintain.entities import extract_entities
from memory_lake.maintain.forget import compact_database, forget
from memory_lake.observe.forget import record_report
from memory_lake.store import REPORT_FOLDERS
from memory_lake.publish.export import publish
from memory_lake.store import InputError
from memory_lake import Lake

from ..conftest import AS_OF, held_by_another_process, rows, unsigned, write_jsonl

LATER = datetime(2026, 12, 1)
forget_module = importlib.import_module("memory_lake.ingest.forget")  # compaction and its scrubs live there


def test_the_forget_history_row_names_the_next_version_and_the_request_file(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "diary", "tenant": "acme", "user_id": "alice", "content": "my secret diary"},
        {"id": "milk", "tenant": "acme", "user_id": "alice", "content": "buy milk on friday"},
    ])], as_of=AS_OF)
    lake.ingest([write_jsonl(tmp_path / "t.jsonl", [
        {"id": "diary", "tenant": "acme", "user_id": "alice", "version": 1, "content": "my secret diary, page two"},
    ])], as_of=AS_OF)
    result = forget(lake, ids=["diary"], reason="user asked", as_of=LATER, source="decisions/forget-1.json")
    assert result["forgotten"] == ["diary"]
    (row,) = rows(lake, "SELECT memory_id, version, change, operator, reason, as_of, source_file, source_line, "
                        "before.version AS before_version, after.version AS after_version, "
                        "after.status AS after_status, after.content AS after_content, after.tags AS after_tags "
                        "FROM memory_history WHERE change = 'forget'")
    assert row == {"memory_id": "diary", "version": 3, "change": "forget", "operator": "user", "reason": "user asked",
                   "as_of": LATER, "source_file": "decisions/forget-1.json", "source_line": None,
                   "before_version": 2, "after_version": 3, "after_status": "deleted", "after_content": None,
                   "after_tags": None}
    # the after image is the row the table now holds, without its text (history keeps none)
    assert rows(lake, "SELECT version, status, content, tags FROM memories WHERE id = 'diary'") == [
        {"version": 3, "status": "deleted", "content": "", "tags": []}]
    # without a request file the row names none
    forget(lake, ids=["milk"], reason="user asked", as_of=LATER)
    assert rows(lake, "SELECT source_file, after.version AS v FROM memory_history "
                      "WHERE change = 'forget' AND memory_id = 'milk'") == [{"source_file": None, "v": 2}]


def test_a_scrubbed_context_md_keeps_the_lakes_own_token_budget(lake, tmp_path):
    """The rewritten context.md of a scope is the pack publish would write for what stays, within
    the lake's [context] max_tokens, not the default budget."""
    words = ["apple", "river", "candle", "forest", "violin", "harbor", "meadow", "rocket", "garden", "pillow"]
    records = [{"id": f"m{i}", "tenant": "acme", "user_id": "alice",
                "content": f"alice remembers the {w} story number {i} with many small details about the {w}"}
               for i, w in enumerate(words)]
    small = Lake.open(lake.root, policy_overrides={"context": {"max_tokens": 60}})
    small.ingest([write_jsonl(tmp_path / "s.jsonl", records)], as_of=AS_OF)
    publish(small, AS_OF)
    forget(small, ids=["m0"], reason="user asked", as_of=LATER)
    scrubbed = (small.exports / "v1" / "scopes" / "acme" / "_" / "alice" / "context.md").read_text()
    # what publish writes now for the memories that stay, under the same budget
    assert publish(small, LATER).details["version"] == "v2"
    fresh = (small.exports / "v2" / "scopes" / "acme" / "_" / "alice" / "context.md").read_text()
    assert "m0" not in scrubbed and "apple" not in scrubbed
    # the budget bites: not every remaining memory fits
    assert sum(w in scrubbed for w in words[1:]) < 9
    # the same pack; only the header's date is the version's own
    assert scrubbed == fresh.replace(LATER.isoformat(), AS_OF.isoformat())


def test_a_forget_and_its_compaction_leave_nothing_in_the_working_directory(lake, tmp_path, monkeypatch):
    """Compaction copies the lake through an in-memory DuckDB: no database file appears where the
    command was run (DuckDB takes ":MEMORY:" for a file name)."""
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "diary", "tenant": "acme", "user_id": "alice", "content": "my secret diary"}])], as_of=AS_OF)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    result = forget(lake, ids=["diary"], reason="user asked", as_of=LATER)
    assert (result["forgotten"], result["compaction"], result["files"]["database"]) == (
        ["diary"], "done", [lake.db_path.name])
    assert sorted(p.name for p in cwd.iterdir()) == []
    assert sorted(p.name for p in lake.root.iterdir() if p.name.startswith(lake.db_path.name)) == [lake.db_path.name]
    assert rows(lake, "SELECT count(*) AS n FROM pending_compactions") == [{"n": 0}]


def test_a_scrubbed_scope_is_rebuilt_from_its_own_scope_and_keeps_chinese_as_written(lake, tmp_path):
    """Another tenant with the same user and no agent holds entity facts of its own: the rewritten
    context.md of the scope is the pack publish writes for what stays there, with none of them, and
    memory.json keeps Chinese text as characters, as publish writes it."""
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "a1", "tenant": "acme", "user_id": "alice", "content": "Alice banks with Lloyds Bank in London"},
        {"id": "a2", "tenant": "acme", "user_id": "alice", "content": "Alice 每天早上喝一杯咖啡"},
        {"id": "a3", "tenant": "acme", "user_id": "alice", "content": "Alice met Priya Raman at Lloyds Bank"},
        {"id": "g1", "tenant": "globex", "user_id": "alice", "content": "Alice works for Zephyr Corp in Oslo"},
        {"id": "g2", "tenant": "globex", "user_id": "alice", "content": "Marta Olsen leads Zephyr Corp"}])], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    publish(lake, AS_OF)
    assert forget(lake, ids=["a1"], reason="user asked", as_of=LATER)["forgotten"] == ["a1"]
    scope = lake.exports / "v1" / "scopes" / "acme" / "_" / "alice"
    scrubbed = (scope / "context.md").read_text(encoding="utf-8")
    assert publish(lake, LATER).details["version"] == "v2"
    fresh = (lake.exports / "v2" / "scopes" / "acme" / "_" / "alice" / "context.md").read_text(encoding="utf-8")
    assert scrubbed == fresh.replace(LATER.isoformat(), AS_OF.isoformat())
    assert "Priya Raman (thing, 1 mention)" in scrubbed
    assert not any(w in scrubbed for w in ("Zephyr", "Oslo", "Marta", "London"))
    text = (scope / "memory.json").read_text(encoding="utf-8")
    assert "Alice 每天早上喝一杯咖啡" in text
    assert [m["id"] for m in json.loads(text)["memories"]] == ["a2", "a3"]


def test_a_lake_taken_between_the_check_and_the_hold_queues_the_request(lake, tmp_path, monkeypatch):
    """Another process takes the lake just after forget saw it free (is_busy said no): the hold
    times out and the request is queued with its ids, not lost."""
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [{"id": "m1", "tenant": "acme", "content": "one"}])], as_of=AS_OF)
    with held_by_another_process(lake):
        monkeypatch.setattr(lake, "is_busy", lambda: False)   # the race: free when looked at
        result = forget(lake, ids=["m1"], reason="please", as_of=LATER, wait_s=0)
    request = unsigned(lake, json.loads(Path(result["queued"]).read_text(encoding="utf-8")))
    assert request == {"kind": "forget", "ids": ["m1"], "tenant": None, "agent": None, "user": None,
                       "operator": "user", "reason": "please", "requested_at": "2026-12-01T00:00:00Z"}
    assert rows(lake, "SELECT id, status FROM memories") == [{"id": "m1", "status": "active"}]


def test_the_report_registry_lists_each_folder_once_a_line(lake, tmp_path):
    for path in (tmp_path / "r1" / "a.html", tmp_path / "r2" / "b.html", tmp_path / "r1" / "c.html"):
        record_report(lake, path)
    assert (lake.root / REPORT_FOLDERS).read_text(encoding="utf-8") == (
        f"{(tmp_path / 'r1').resolve()}\n{(tmp_path / 'r2').resolve()}\n")


def test_a_bad_operator_is_told_the_three_allowed():
    with pytest.raises(InputError) as caught:
        forget(None, ids=["m1"], operator="robot", reason="why")
    assert str(caught.value) == "operator must be one of user, agent, system, not 'robot'"


def test_a_compaction_names_itself_to_whoever_meets_the_lake(lake, monkeypatch):
    """While the compaction after a forget holds the lake, the lock says what holds it: another
    writer is told "compact after forget" (the lake's busy message reads this)."""
    seen = []
    finish = forget_module._finish_scrubs

    def finish_and_look(held):
        seen.append(json.loads(held.lock_path.read_text(encoding="utf-8")))
        return finish(held)

    monkeypatch.setattr(forget_module, "_finish_scrubs", finish_and_look)
    compact_database(lake)
    assert [holder["purpose"] for holder in seen] == ["compact after forget"]
