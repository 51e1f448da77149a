"""The conflict queue's rules, row by row (issue 19: the mutants test_conflicts.py let survive).

What a resolution writes (the memory, its history rows with their before/after images, the
conflict row, the second memory of ``both``), the status a memory returns to, typed values
(redaction, parsing, their error lines), the refusals and their messages, the listing's filters
and order, and a resolution asked for while another process holds the lake (checked against the
published version, queued, applied by the next run).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from memory_lake.cli import main
from memory_lake.text import redact_text
from memory_lake.maintain.conflicts import (CONTRADICTION_PARTNERS_SQL, list_conflicts, parse_field_value, parse_take,
                                          resolve_conflict)
from memory_lake.maintain.decisions import apply_decisions, pending_decisions
from memory_lake.store.errors import InputError, NotApplicable

from ..conftest import AS_OF, held_by_another_process, rows, unsigned, write_jsonl

LATER = datetime(2026, 12, 1, 8, 30, 0)  # a resolution's as_of, after the ingests (AS_OF)
BASE = {"id": "pref-theme", "tenant": "acme", "agent_id": "assistant", "user_id": "alice", "tier": "long_term",
        "type": "preference", "content": "用户偏好浅色模式", "tags": ["ui"], "importance": 0.5,
        "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-12-10T00:00:00Z",
        "last_accessed_at": "2026-12-10T00:00:00Z", "access_count": 5, "reference_count": 2, "trace_id": "trace-base"}
SALT = b"a test salt"


@pytest.fixture
def lake(lake):
    """BASE is dated 2026-12-10, after the ingests (AS_OF) and the resolutions (LATER): a writer's
    clock ahead of the lake's, so that no resolution moves updated_at back. This lake lets such
    dates in ([ingest] future_horizon_h, issue 37.5)."""
    (lake.root / "memory-lake.toml").write_text("[ingest]\nfuture_horizon_h = 240\n", encoding="utf-8")
    return type(lake).open(lake.root)


def two_writers(lake, tmp_path, base=BASE, a=None, b=None):
    """`base` at version 1, then writers A and B both change version 1: A's values land (version 2),
    B's wait as one conflict per field (the lake keeps A's, the memory is conflicted)."""
    a = a or {"content": "用户偏好深色模式"}
    b = b or {"content": "用户偏好自动切换"}
    lake.ingest([write_jsonl(tmp_path / "v1.jsonl", [base])], as_of=AS_OF)
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [{**base, "version": 1, **a, "trace_id": "trace-a"}])], as_of=AS_OF)
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [{**base, "version": 1, **b, "trace_id": "trace-b"}])], as_of=AS_OF)
    return {c["field"]: c for c in lake.conflicts().to_dicts()}


def memory(lake, memory_id):
    (row,) = rows(lake, "SELECT * FROM memories WHERE id = ?", [memory_id])
    return row


def history(lake, since_seq):
    return rows(lake, "SELECT * FROM memory_history WHERE seq > ? ORDER BY seq", [since_seq])


def last_seq(lake):
    return rows(lake, "SELECT max(seq) AS n FROM memory_history")[0]["n"]


def conflict_row(lake, conflict_id):
    (row,) = rows(lake, "SELECT * FROM conflicts WHERE conflict_id = ?", [conflict_id])
    return row


# ---------------------------------------------------------------- both, with another conflict left

def test_both_writes_the_memory_a_second_memory_their_history_and_the_conflict(lake, tmp_path):
    conflicts = two_writers(lake, tmp_path, a={"content": "用户偏好深色模式", "importance": 0.6},
                            b={"content": "用户偏好自动切换", "importance": 0.7})
    content, importance = conflicts["content"], conflicts["importance"]
    before, seq = memory(lake, "pref-theme"), last_seq(lake)
    assert (before["version"], before["status"], seq) == (2, "conflicted", 3)

    result = lake.resolve_conflict(content["conflict_id"], "both", as_of=LATER)
    second = f"pref-theme~{content['conflict_id'][:8]}"
    run_id = result["run_id"]
    assert result == {"conflict_id": content["conflict_id"], "memory_id": "pref-theme", "field": "content",
                      "take": "both", "version": 3, "status": "conflicted", "new_memory_id": second, "open_left": 1,
                      "run_id": run_id}
    assert run_id.startswith("resolve-20261201T083000-")  # a run of its own, named by its as_of
    # the memory keeps the lake's value; still conflicted (importance is open); a user's write
    after = memory(lake, "pref-theme")
    assert after == {**before, "version": 3, "operator": "user", "updated_at": before["updated_at"]}
    # the copy: this memory with the incoming content, new from the resolution on, active, B's trace
    copy = memory(lake, second)
    assert copy == {**after, "id": second, "content": "用户偏好自动切换", "content_hash": copy["content_hash"],
                    "version": 1, "status": "active", "operator": "user", "trace_id": "trace-b",
                    "created_at": LATER, "updated_at": LATER, "last_accessed_at": LATER, "access_count": 0,
                    "reference_count": 0, "merged_into": None, "published_at": None, "publish_meta": None}
    assert copy["content_hash"] != after["content_hash"]
    reason = f"conflict {content['conflict_id']} on content resolved: both"
    label = f"resolve {content['conflict_id']}"
    assert history(lake, seq) == [
        {"seq": 4, "memory_id": "pref-theme", "tenant": "acme", "version": 3, "change": "update",
         "changed_fields": ["status"], "operator": "user", "run_id": run_id, "reason": reason, "as_of": LATER,
         "before": before, "after": after, "source_file": label, "source_line": None, "trace_id": "trace-a"},
        {"seq": 5, "memory_id": second, "tenant": "acme", "version": 1, "change": "insert", "changed_fields": None,
         "operator": "user", "run_id": run_id, "reason": reason, "as_of": LATER, "before": None, "after": copy,
         "source_file": label, "source_line": None, "trace_id": "trace-b"}]
    assert conflict_row(lake, content["conflict_id"]) == {
        **content_row(lake, content), "status": "resolved", "resolved_at": LATER, "resolution": "both",
        "resolved_by": "user", "resolved_value": '"用户偏好深色模式"', "new_memory_id": second}
    assert conflict_row(lake, importance["conflict_id"])["status"] == "open"

    # the last open conflict: a typed value; the memory returns to active
    seq = last_seq(lake)
    done = lake.resolve_conflict(importance["conflict_id"], "value=0.9", as_of=LATER)
    assert done == {"conflict_id": importance["conflict_id"], "memory_id": "pref-theme", "field": "importance",
                    "take": "value", "version": 4, "status": "active", "new_memory_id": None, "open_left": 0,
                    "run_id": done["run_id"]}
    final = memory(lake, "pref-theme")
    assert final == {**after, "importance": 0.9, "status": "active", "version": 4}
    (row,) = history(lake, seq)
    assert (row["seq"], row["changed_fields"], row["before"], row["after"], row["reason"], row["run_id"]) == (
        6, ["importance", "status"], after, final,
        f"conflict {importance['conflict_id']} on importance resolved: value",
        done["run_id"])
    resolved = conflict_row(lake, importance["conflict_id"])
    assert (resolved["status"], resolved["resolution"], resolved["resolved_value"], resolved["new_memory_id"]) == (
        "resolved", "value", "0.9", None)
    assert lake.conflicts().height == 0


def content_row(lake, listed):
    """The stored conflict row as it was when listed (the listing's columns plus lake_status)."""
    stored = conflict_row(lake, listed["conflict_id"])
    return {**stored, **{k: listed[k] for k in stored if k in listed}}


# ---------------------------------------------------------------- the status a memory returns to

@pytest.mark.parametrize("take", ["lake", "incoming", "both", "value=用户偏好跟随系统"])
def test_a_dormant_memory_returns_to_dormant_and_so_does_its_copy(lake, tmp_path, take):
    conflicts = two_writers(lake, tmp_path, base={**BASE, "status": "dormant"})
    assert memory(lake, "pref-theme")["status"] == "conflicted"
    result = lake.resolve_conflict(conflicts["content"]["conflict_id"], take, as_of=LATER)
    assert (result["status"], memory(lake, "pref-theme")["status"]) == ("dormant", "dormant")
    statuses = rows(lake, "SELECT id, status FROM memories ORDER BY id")
    expected = [{"id": "pref-theme", "status": "dormant"}]
    if take == "both":
        expected.append({"id": result["new_memory_id"], "status": "dormant"})
    assert statuses == expected


def test_resolving_lake_keeps_the_value_and_bumps_the_version(lake, tmp_path):
    conflicts = two_writers(lake, tmp_path)
    before = memory(lake, "pref-theme")
    result = lake.resolve_conflict(conflicts["content"]["conflict_id"], "lake", as_of=LATER)
    assert (result["version"], result["status"], result["new_memory_id"], result["open_left"]) == (3, "active", None, 0)
    assert memory(lake, "pref-theme") == {**before, "version": 3, "status": "active", "operator": "user"}
    resolved = conflict_row(lake, conflicts["content"]["conflict_id"])
    assert (resolved["resolution"], resolved["resolved_value"], resolved["resolved_by"], resolved["resolved_at"]) == (
        "lake", '"用户偏好深色模式"', "user", LATER)
    assert rows(lake, "SELECT count(*) AS n FROM memories") == [{"n": 1}]


# ---------------------------------------------------------------- typed fields

def test_an_incoming_type_and_a_typed_expiry_are_stored_typed_and_recorded_as_json(lake, tmp_path):
    conflicts = two_writers(lake, tmp_path, a={"type": "fact", "expires_at": "2027-01-01T00:00:00Z"},
                            b={"type": "decision", "expires_at": "2027-02-01T00:00:00Z"})
    assert sorted(conflicts) == ["expires_at", "type"]
    lake.resolve_conflict(conflicts["type"]["conflict_id"], "incoming", as_of=LATER)
    lake.resolve_conflict(conflicts["expires_at"]["conflict_id"], "value", value="2027-03-01", as_of=LATER)
    got = memory(lake, "pref-theme")
    assert (got["type"], got["expires_at"], got["status"], got["version"]) == (
        "decision", datetime(2027, 3, 1), "active", 4)
    assert conflict_row(lake, conflicts["type"]["conflict_id"])["resolved_value"] == '"decision"'
    assert conflict_row(lake, conflicts["expires_at"]["conflict_id"])["resolved_value"] == '"2027-03-01T00:00:00Z"'


def test_an_incoming_extra_is_stored_as_json(lake, tmp_path):
    conflicts = two_writers(lake, tmp_path, a={"extra": {"source": "a", "n": 1}}, b={"extra": {"source": "b", "n": 2}})
    lake.resolve_conflict(conflicts["extra"]["conflict_id"], "incoming", as_of=LATER)
    assert rows(lake, "SELECT extra::VARCHAR AS extra, json_type(extra) AS t FROM memories") == [
        {"extra": '{"n": 2, "source": "b"}', "t": "OBJECT"}]


def test_a_typed_value_is_redacted_with_the_tenants_salt_like_ingest(lake, tmp_path):
    conflicts = two_writers(lake, tmp_path)
    lake.ingest([write_jsonl(tmp_path / "mail.jsonl", [{"id": "mail", "tenant": "acme",
                                                        "content": "alice 的邮箱 alice@example.com"}])], as_of=AS_OF)
    ingested = memory(lake, "mail")["content"]
    assert "alice@example.com" not in ingested and "[EMAIL:" in ingested
    lake.resolve_conflict(conflicts["content"]["conflict_id"], "value=alice 的邮箱 alice@example.com", as_of=LATER)
    assert memory(lake, "pref-theme")["content"] == ingested
    assert conflict_row(lake, conflicts["content"]["conflict_id"])["resolved_value"] == json.dumps(
        ingested, ensure_ascii=False)


def test_a_copy_of_an_id_that_exists_is_refused_and_nothing_changes(lake, tmp_path):
    conflicts = two_writers(lake, tmp_path)
    conflict_id = conflicts["content"]["conflict_id"]
    taken = f"pref-theme~{conflict_id[:8]}"
    lake.ingest([write_jsonl(tmp_path / "taken.jsonl", [{"id": taken, "tenant": "acme", "content": "已有"}])],
                as_of=AS_OF)
    before = rows(lake, "SELECT * FROM memories ORDER BY id")
    with pytest.raises(InputError, match=rf"^memory {taken} exists already$"):
        lake.resolve_conflict(conflict_id, "both", as_of=LATER)
    assert rows(lake, "SELECT * FROM memories ORDER BY id") == before
    assert conflict_row(lake, conflict_id)["status"] == "open"


# ---------------------------------------------------------------- takes and their refusals

def test_parse_take_reads_the_four_takes_and_refuses_anything_else():
    assert [parse_take(t) for t in ("lake", "incoming", "both", "value=跟随系统", "value=")] == [
        ("lake", None), ("incoming", None), ("both", None), ("value", "跟随系统"), ("value", "")]
    for bad in ("maybe", "value", "VALUE", "Lake", "", None):
        with pytest.raises(InputError) as refused:
            parse_take(bad)
        assert str(refused.value) == f"--take must be lake, incoming, both or value=TEXT, not {bad!r}"


def test_a_resolution_is_refused_with_one_clear_line_and_nothing_changes(lake, tmp_path):
    conflicts = two_writers(lake, tmp_path)
    conflict_id = conflicts["content"]["conflict_id"]
    before = rows(lake, "SELECT * FROM memories"), rows(lake, "SELECT * FROM conflicts")
    refusals = [
        (dict(take="maybe"), InputError, "--take must be lake, incoming, both or value=TEXT, not 'maybe'"),
        (dict(take="value"), InputError, "--take value needs the value: --take value=TEXT"),
        (dict(take="lake", operator="agent"), InputError,
         "conflicts are resolved by a user (operator user), not 'agent'"),
        (dict(take="value=", conflict_id=conflict_id), InputError, "content cannot be empty"),
    ]
    for kwargs, error, message in refusals:
        kwargs = {"conflict_id": conflict_id, **kwargs}
        with pytest.raises(error) as refused:
            lake.resolve_conflict(kwargs.pop("conflict_id"), kwargs.pop("take"), as_of=LATER, **kwargs)
        assert str(refused.value) == message
    # `Lake.resolve_conflict` checks the id first (with suggestions); a queued decision reaches the rule itself
    with pytest.raises(NotApplicable) as refused:
        resolve_conflict(lake, "nope", "lake", as_of=LATER)
    assert str(refused.value) == ("unknown conflict id 'nope': the lake holds no such conflict "
                                  "(see `memory-lake conflicts list --all`)")
    assert (rows(lake, "SELECT * FROM memories"), rows(lake, "SELECT * FROM conflicts")) == before
    # resolved once; a second resolution says when, how and by whom
    lake.resolve_conflict(conflict_id, "incoming", as_of=LATER)
    with pytest.raises(NotApplicable) as refused:
        lake.resolve_conflict(conflict_id, "lake", as_of=LATER)
    assert str(refused.value) == (f"conflict {conflict_id} is already resolved (incoming by user at "
                                  "2026-12-01T08:30:00Z); see `memory-lake conflicts list --all`")


def test_a_conflict_closed_by_forget_says_so(lake, tmp_path):
    from memory_lake.maintain.forget import forget

    conflicts = two_writers(lake, tmp_path)
    conflict_id = conflicts["content"]["conflict_id"]
    forget(lake, ids=["pref-theme"], operator="user", reason="asked to", as_of=LATER)
    with pytest.raises(NotApplicable) as refused:
        lake.resolve_conflict(conflict_id, "lake", as_of=LATER)
    assert str(refused.value) == (f"conflict {conflict_id} is already resolved: closed when its memory was forgotten "
                                  "(by user at 2026-12-01T08:30:00Z); nothing is left to decide")


# ---------------------------------------------------------------- typed values

def test_text_fields_are_redacted_and_stripped_and_only_content_must_hold_text():
    text = "  邮箱 bob@example.com  "
    redacted = redact_text(text, SALT).strip()
    assert "bob@example.com" not in redacted
    assert parse_field_value("content", text, SALT) == redacted
    assert parse_field_value("summary", text, SALT) == redacted
    assert parse_field_value("content", text, b"another salt") != redacted  # the placeholder follows the salt
    assert parse_field_value("summary", "   ", SALT) is None
    assert parse_field_value("source", "", SALT) is None
    for field in ("content", "summary", "importance"):
        with pytest.raises(InputError) as refused:
            parse_field_value(field, None, SALT)
        assert str(refused.value) == f"{field} needs a value"
    with pytest.raises(InputError) as refused:
        parse_field_value("content", "  ", SALT)
    assert str(refused.value) == "content cannot be empty"


def test_tags_are_a_json_list_or_comma_separated_redacted_sorted_and_unique():
    assert parse_field_value("tags", "ui, theme ,ui,, dark mode", SALT) == ["dark mode", "theme", "ui"]
    assert parse_field_value("tags", ' ["ui", " theme", "", "ui"]', SALT) == ["theme", "ui"]
    assert parse_field_value("tags", "[]", SALT) == []
    assert parse_field_value("tags", "a@example.com, ui", SALT) == sorted([redact_text("a@example.com", SALT), "ui"])
    assert parse_field_value("tags", '["a@example.com"]', SALT) == [redact_text("a@example.com", SALT)]
    for bad in ("[ui, theme", '["ui", 3]', "[1, 2]", '[{"a": 1}]'):
        with pytest.raises(InputError) as refused:
            parse_field_value("tags", bad, SALT)
        assert str(refused.value) == f"tags {bad!r}: a JSON list or comma-separated words"


def test_importance_is_a_number_from_0_to_1():
    assert [parse_field_value("importance", t, SALT) for t in ("0", "1", "0.25", " 1.0 ")] == [0.0, 1.0, 0.25, 1.0]
    for bad, message in (("1.5", "importance 1.5 is outside 0..1"), ("-0.1", "importance -0.1 is outside 0..1"),
                         ("2", "importance 2.0 is outside 0..1"), ("high", "importance 'high' is not a number")):
        with pytest.raises(InputError) as refused:
            parse_field_value("importance", bad, SALT)
        assert str(refused.value) == message


def test_tier_type_and_status_take_the_ingest_spellings():
    tiers = {"Long-Term": "long_term", "long_term": "long_term", "long term": "long_term", "SHORT": "short_term",
             "short-term": "short_term", "work": "working", "working": "working", " Important ": "important"}
    assert {t: parse_field_value("tier", t, SALT) for t in tiers} == tiers
    types = {"Pref": "preference", "facts": "fact", "fact": "fact", "Task": "todo", " lesson ": "lesson"}
    assert {t: parse_field_value("type", t, SALT) for t in types} == types
    statuses = {"Active": "active", "dormant": "dormant", "archived": "archived", "conflicted": "conflicted"}
    assert {t: parse_field_value("status", t, SALT) for t in statuses} == statuses
    for field, bad in (("tier", "forever"), ("tier", "long--termish"), ("type", "opinion"), ("type", "prefs"),
                       ("status", "deleted"), ("status", "merged"), ("status", "gone")):
        with pytest.raises(InputError) as refused:
            parse_field_value(field, bad, SALT)
        assert str(refused.value) == f"unknown {field} {bad!r}"


def test_expiry_extra_and_fields_nobody_sets_by_hand():
    assert parse_field_value("expires_at", "2027-01-02T03:04:05Z", SALT) == datetime(2027, 1, 2, 3, 4, 5)
    assert parse_field_value("expires_at", "  ", SALT) is None
    assert parse_field_value("extra", '{"a": [1, "二"]}', SALT) == {"a": [1, "二"]}
    assert parse_field_value("extra", "null", SALT) is None
    with pytest.raises(InputError) as refused:
        parse_field_value("extra", "{a: 1}", SALT)
    assert str(refused.value) == "extra '{a: 1}' is not JSON"
    for field in ("id", "version", "content_hash", "created_at"):
        with pytest.raises(InputError) as refused:
            parse_field_value(field, "x", SALT)
        assert str(refused.value) == f"{field} cannot be set by hand"


# ---------------------------------------------------------------- contradictions

def contradiction(lake, tmp_path):
    """zh-1 and zh-2: similar preferences dedup will not merge; one open contradiction."""
    from memory_lake.maintain import dedup

    scope = {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "type": "preference"}
    lake.ingest([write_jsonl(tmp_path / "zh.jsonl", [
        {**scope, "id": "zh-1", "content": "用户在编辑器里偏好深色主题模式", "trace_id": "t1"},
        {**scope, "id": "zh-2", "content": "用户在编辑器里偏好浅色主题模式", "trace_id": "t2"}])], as_of=AS_OF)
    assert dedup(lake, AS_OF).counts["contradictions_filed"] == 1
    (listed,) = lake.conflicts().to_dicts()
    return listed["conflict_id"]


def partners(lake):
    return rows(lake, f"SELECT * FROM ({CONTRADICTION_PARTNERS_SQL}) ORDER BY id")


@pytest.mark.parametrize(("take", "archived", "versions"), [
    ("lake", None, {"zh-1": (1, "active"), "zh-2": (1, "active")}),
    ("both", None, {"zh-1": (1, "active"), "zh-2": (1, "active")}),
    ("incoming", "zh-1", {"zh-1": (2, "archived"), "zh-2": (1, "active")}),
])
def test_a_contradiction_resolved_keeps_or_archives_with_its_history(lake, tmp_path, take, archived, versions):
    conflict_id = contradiction(lake, tmp_path)
    assert partners(lake) == [{"id": "zh-1", "conflict_with": ["zh-2"]}, {"id": "zh-2", "conflict_with": ["zh-1"]}]
    before, seq = {i: memory(lake, i) for i in ("zh-1", "zh-2")}, last_seq(lake)
    result = lake.resolve_conflict(conflict_id, take, as_of=LATER)
    assert result == {"conflict_id": conflict_id, "memory_id": "zh-1", "other_memory_id": "zh-2", "field": "content",
                      "take": take, "archived": archived, "new_memory_id": None,
                      "version": versions["zh-1"][0], "status": versions["zh-1"][1],
                      "other_version": versions["zh-2"][0], "other_status": versions["zh-2"][1], "open_left": 0,
                      "run_id": result["run_id"]}
    assert {i: (memory(lake, i)["version"], memory(lake, i)["status"]) for i in ("zh-1", "zh-2")} == versions
    expected = []
    if archived:
        expected = [{"seq": seq + 1, "memory_id": archived, "tenant": "acme", "version": 2, "change": "update",
                     "changed_fields": ["status"], "operator": "user", "run_id": result["run_id"],
                     "reason": f"contradiction {conflict_id} resolved: {take}", "as_of": LATER,
                     "before": before[archived], "after": memory(lake, archived),
                     "source_file": f"resolve {conflict_id}", "source_line": None, "trace_id": "t1"}]
    assert history(lake, seq) == expected
    row = conflict_row(lake, conflict_id)
    assert (row["status"], row["resolution"], row["resolved_by"], row["resolved_at"], row["resolved_value"],
            row["new_memory_id"]) == ("resolved", take, "user", LATER, None, None)
    assert lake.conflicts(status="resolved")["conflict_id"].to_list() == [conflict_id]
    assert partners(lake) == []


def test_a_contradiction_resolved_from_a_decision_file_names_the_file_in_history(lake, tmp_path):
    """A resolution queued as a decision file and applied by the next run: the history row of the
    archived memory says which file decided it, not "resolve <id>"."""
    conflict_id = contradiction(lake, tmp_path)
    seq = last_seq(lake)
    resolve_conflict(lake, conflict_id, "incoming", as_of=LATER, source="inbox/decisions/20261201T000000-resolve.json")
    assert [(h["memory_id"], h["reason"], h["source_file"]) for h in history(lake, seq)] == [
        ("zh-1", f"contradiction {conflict_id} resolved: incoming", "inbox/decisions/20261201T000000-resolve.json")]


def test_a_contradiction_resolved_with_a_value_redacts_it_and_archives_the_other(lake, tmp_path):
    conflict_id = contradiction(lake, tmp_path)
    lake.ingest([write_jsonl(tmp_path / "mail.jsonl", [{"id": "mail", "tenant": "acme",
                                                        "content": "用户在编辑器里跟随系统 bob@example.com"}])],
                as_of=AS_OF)
    redacted = memory(lake, "mail")["content"]  # what ingest makes of the text for this tenant
    assert "bob@example.com" not in redacted
    before, seq = {i: memory(lake, i) for i in ("zh-1", "zh-2")}, last_seq(lake)
    result = lake.resolve_conflict(conflict_id, "value=用户在编辑器里跟随系统 bob@example.com", as_of=LATER)
    assert (result["archived"], result["version"], result["status"], result["other_version"],
            result["other_status"]) == ("zh-2", 2, "active", 2, "archived")
    first, second = memory(lake, "zh-1"), memory(lake, "zh-2")
    assert first == {**before["zh-1"], "content": redacted, "content_hash": memory(lake, "mail")["content_hash"],
                     "version": 2, "operator": "user", "updated_at": LATER}
    assert second == {**before["zh-2"], "status": "archived", "version": 2, "operator": "user", "updated_at": LATER}
    reason = f"contradiction {conflict_id} resolved: value"
    common = {"tenant": "acme", "version": 2, "change": "update", "operator": "user", "run_id": result["run_id"],
              "reason": reason, "as_of": LATER, "source_file": f"resolve {conflict_id}", "source_line": None}
    assert history(lake, seq) == [
        {"seq": seq + 1, "memory_id": "zh-1", **common, "changed_fields": ["content"], "before": before["zh-1"],
         "after": first, "trace_id": "t1"},
        {"seq": seq + 2, "memory_id": "zh-2", **common, "changed_fields": ["status"], "before": before["zh-2"],
         "after": second, "trace_id": "t2"}]
    row = conflict_row(lake, conflict_id)
    assert (row["resolution"], row["resolved_value"]) == ("value", json.dumps(redacted, ensure_ascii=False))
    assert "bob@example.com" not in json.dumps(rows(lake, "SELECT * FROM conflicts"), default=str)


# ---------------------------------------------------------------- a published memory's copy

def test_the_copy_of_a_published_memory_is_not_published(lake, tmp_path):
    conflicts = two_writers(lake, tmp_path)
    lake.publish(as_of=AS_OF)
    published = memory(lake, "pref-theme")
    assert published["published_at"] is not None and published["publish_meta"] is not None
    result = lake.resolve_conflict(conflicts["content"]["conflict_id"], "both", as_of=LATER)
    assert (memory(lake, "pref-theme")["published_at"], memory(lake, "pref-theme")["publish_meta"]) == (
        published["published_at"], published["publish_meta"])
    copy = memory(lake, result["new_memory_id"])
    assert (copy["published_at"], copy["publish_meta"], copy["merged_into"]) == (None, None, None)


# ---------------------------------------------------------------- while another process holds the lake

FONT = {**BASE, "id": "pref-font", "content": "用户偏好大号字体", "trace_id": "trace-font"}


def busy_lake(lake, tmp_path):
    """pref-theme: open conflicts on content and importance; pref-font: a conflict resolved (lake); published."""
    lake.ingest([write_jsonl(tmp_path / "v1.jsonl", [BASE, FONT])], as_of=AS_OF)
    for writer, importance in (("a", 0.6), ("b", 0.7)):
        lake.ingest([write_jsonl(tmp_path / f"{writer}.jsonl", [
            {**BASE, "version": 1, "content": f"用户偏好 {writer} 模式", "importance": importance},
            {**FONT, "version": 1, "content": f"用户偏好 {writer} 字体"}])], as_of=AS_OF)
    found = {(c["memory_id"], c["field"]): c["conflict_id"] for c in lake.conflicts().to_dicts()}
    lake.resolve_conflict(found["pref-font", "content"], "lake", as_of=AS_OF)
    lake.publish(as_of=AS_OF)
    return found


def test_while_busy_a_resolution_is_checked_against_the_published_version_then_queued(lake, tmp_path):
    found = busy_lake(lake, tmp_path)
    theme, importance, font = (found["pref-theme", "content"], found["pref-theme", "importance"],
                               found["pref-font", "content"])
    with held_by_another_process(lake, seconds=60):
        refusals = [
            ("nope", "lake", NotApplicable,
             "unknown conflict id 'nope': the lake is busy (a run holds it), and published v1, the latest "
             "published version, holds no such conflict; see `memory-lake conflicts list --all`, or try again "
             "when the run ends"),
            (font, "incoming", NotApplicable,
             f"conflict {font} is already resolved (lake by user at 2026-11-30T00:00:00Z); "
             "see `memory-lake conflicts list --all`"),
            (importance, "value=high", InputError, "importance 'high' is not a number"),
            (theme, "value=  ", InputError, "content cannot be empty"),
        ]
        for conflict_id, take, error, message in refusals:
            with pytest.raises(error) as refused:
                lake.resolve_conflict(conflict_id, take, as_of=LATER)
            assert str(refused.value) == message
        assert pending_decisions(lake) == []
        by_value = lake.resolve_conflict(theme, "value=用户偏好跟随系统 bob@example.com", as_of=LATER)
        by_lake = lake.resolve_conflict(importance, "lake", as_of=LATER + timedelta(minutes=1))  # name order: second
    files = pending_decisions(lake)
    assert [str(p) for p in files] == [by_value["queued"], by_lake["queued"]]
    queued = [unsigned(lake, json.loads(p.read_text(encoding="utf-8"))) for p in files]
    typed = queued[0]["value"]
    assert typed.startswith("用户偏好跟随系统 [EMAIL:") and "bob@example.com" not in typed  # no raw PII on disk
    assert queued == [
        {"kind": "resolve", "conflict_id": theme, "take": "value", "value": typed, "operator": "user",
         "requested_at": "2026-12-01T08:30:00Z"},
        {"kind": "resolve", "conflict_id": importance, "take": "lake", "value": None, "operator": "user",
         "requested_at": "2026-12-01T08:31:00Z"}]
    # the next run applies them first, in request order, as the user's writes naming the decision file
    seq = last_seq(lake)
    report = apply_decisions(lake, LATER)
    assert (report.counts["applied"], report.counts["resolved"], report.counts["failed"], report.counts["left"]) == (
        2, 2, 0, 0)
    got = memory(lake, "pref-theme")
    assert (got["content"], got["importance"], got["status"], got["version"], got["operator"]) == (
        typed, 0.6, "active", 4, "user")
    assert [(h["memory_id"], h["version"], h["changed_fields"], h["run_id"], h["source_file"], h["reason"])
            for h in history(lake, seq)] == [
        ("pref-theme", 3, ["content", "status"], report.run_id, f"inbox/decisions/{files[0].name}",
         f"conflict {theme} on content resolved: value"),
        ("pref-theme", 4, ["status"], report.run_id, f"inbox/decisions/{files[1].name}",
         f"conflict {importance} on importance resolved: lake")]
    assert lake.conflicts().height == 0


def test_while_busy_before_anything_is_published_a_resolution_is_queued_and_checked_by_the_next_run(lake, tmp_path):
    two_writers(lake, tmp_path)
    with held_by_another_process(lake, seconds=60):
        queued = resolve_conflict(lake, "nope", "lake", as_of=LATER)  # nothing to check against: queued
    (path,) = pending_decisions(lake)
    assert queued == {"queued": str(path)}
    report = apply_decisions(lake, LATER)
    assert (report.counts["applied"], report.counts["failed"]) == (0, 1)
    assert report.details["failed"] == [{"file": path.name, "kind": "resolve", "reason": (
        "unknown conflict id 'nope': the lake holds no such conflict (see `memory-lake conflicts list --all`)")}]


def test_the_check_before_queuing_names_the_live_lake_when_the_run_ended_meanwhile(lake, tmp_path):
    """The lake was busy when the resolution was asked for, and free again when the check reads it."""
    from memory_lake.maintain.conflicts import _check_published

    conflicts = two_writers(lake, tmp_path)
    with pytest.raises(NotApplicable) as refused:
        _check_published(lake, "nope", "lake", None)
    assert str(refused.value) == ("unknown conflict id 'nope': the lake holds no such conflict; see "
                                  "`memory-lake conflicts list --all`, or try again when the run ends")
    assert _check_published(lake, conflicts["content"]["conflict_id"], "value", "用户偏好跟随系统") is None


# ---------------------------------------------------------------- the listing

def test_the_listing_filters_by_tenant_and_status_oldest_first_with_the_memorys_version(lake, tmp_path):
    globex = {**BASE, "id": "g-theme", "tenant": "globex"}
    lake.ingest([write_jsonl(tmp_path / "v1.jsonl", [BASE, globex])], as_of=AS_OF)
    for writer, when in (("a", AS_OF), ("b", AS_OF), ("c", LATER)):  # c disputes again, a day later
        lake.ingest([write_jsonl(tmp_path / f"{writer}.jsonl", [
            {**record, "version": 1, "content": f"{record['tenant']} {writer}", "importance": 0.1}
            for record in (globex, BASE)])], as_of=when)
    everything = lake.conflicts(status=None).to_dicts()
    keys = [(c["tenant"], c["memory_id"], c["field"], c["created_at"], c["source_line"]) for c in everything]
    assert keys == [("globex", "g-theme", "content", AS_OF, 1), ("acme", "pref-theme", "content", AS_OF, 2),
                    ("globex", "g-theme", "content", LATER, 1), ("acme", "pref-theme", "content", LATER, 2)]
    assert [(c["status"], c["memory_version"], c["memory_status"], c["incoming_value"]) for c in everything] == [
        ("open", 2, "conflicted", '"globex b"'), ("open", 2, "conflicted", '"acme b"'),
        ("open", 2, "conflicted", '"globex c"'), ("open", 2, "conflicted", '"acme c"')]
    assert list(everything[0]) == [
        "conflict_id", "kind", "status", "tenant", "memory_id", "other_memory_id", "field", "base_version",
        "lake_version", "base_value", "lake_value", "incoming_value", "lake_operator", "incoming_operator",
        "lake_trace_id", "incoming_trace_id", "source_file", "source_line", "created_at", "resolved_at", "resolution",
        "resolved_by", "resolved_value", "new_memory_id", "memory_version", "memory_status", "found_by"]
    lake.resolve_conflict(everything[1]["conflict_id"], "lake", as_of=LATER)
    assert lake.conflicts().to_dicts() == [everything[0], everything[2],
                                           {**everything[3], "memory_version": 3}]
    assert [c["conflict_id"] for c in lake.conflicts(tenant="acme").to_dicts()] == [everything[3]["conflict_id"]]
    assert [c["conflict_id"] for c in lake.conflicts(tenant="acme", status="resolved").to_dicts()] == [
        everything[1]["conflict_id"]]
    assert [c["conflict_id"] for c in lake.conflicts(tenant="acme", status=None).to_dicts()] == [
        everything[1]["conflict_id"], everything[3]["conflict_id"]]
    assert [c["conflict_id"] for c in lake.conflicts(status="resolved").to_dicts()] == [everything[1]["conflict_id"]]
    assert lake.conflicts(tenant="globex", status="resolved").height == 0
    assert list_conflicts(lake).to_dicts() == lake.conflicts().to_dicts()  # open ones by default
    assert [c["conflict_id"] for c in list_conflicts(lake, tenant="", status="").to_dicts()] == [
        c["conflict_id"] for c in everything]


def test_the_listing_shows_a_conflict_closed_by_forget_with_its_forgotten_memory(lake, tmp_path):
    from memory_lake.maintain.forget import forget

    conflicts = two_writers(lake, tmp_path)
    forget(lake, ids=["pref-theme"], operator="user", reason="asked to", as_of=LATER)
    (row,) = lake.conflicts(status=None).to_dicts()
    assert (row["conflict_id"], row["status"], row["resolution"], row["memory_status"]) == (
        conflicts["content"]["conflict_id"], "resolved", "forgotten", "deleted")


def test_both_on_a_merged_memory_makes_an_active_copy_outside_the_merge(lake, tmp_path):
    """A memory dedup merged into another still takes writes, so it can be disputed. The first
    write changed its content, so it left the merge (a memory of its own again: its new text must
    not hide behind the canonical); the second, from the same version, is a conflict, and
    resolving it with `both` keeps the memory active and makes the copy a memory of its own too:
    active, not merged (a merged memory with no canonical would be hidden from search and could
    not be unmerged)."""
    from memory_lake.maintain import dedup

    scope = {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "type": "preference"}
    lake.ingest([write_jsonl(tmp_path / "v1.jsonl", [
        {**scope, "id": "old", "content": "用户偏好浅色模式", "created_at": "2026-11-01T00:00:00Z"},
        {**scope, "id": "new", "content": "用户偏好浅色模式", "created_at": "2026-11-02T00:00:00Z"}])], as_of=AS_OF)
    assert dedup(lake, AS_OF).counts["merged"] == 1
    for writer in ("a", "b"):
        lake.ingest([write_jsonl(tmp_path / f"{writer}.jsonl", [
            {**scope, "id": "new", "version": 1, "content": f"用户偏好{writer}模式"}])], as_of=AS_OF)
    (conflict_id,) = lake.conflicts()["conflict_id"].to_list()
    result = lake.resolve_conflict(conflict_id, "both", as_of=LATER)
    assert rows(lake, "SELECT id, version, status, merged_into, content FROM memories ORDER BY id") == [
        {"id": "new", "version": 3, "status": "active", "merged_into": None, "content": "用户偏好a模式"},
        {"id": result["new_memory_id"], "version": 1, "status": "active", "merged_into": None,
         "content": "用户偏好b模式"},
        {"id": "old", "version": 1, "status": "active", "merged_into": None, "content": "用户偏好浅色模式"}]


def test_a_memory_disputed_again_while_conflicted_returns_to_active_after_the_last(lake, tmp_path):
    """The second conflict was filed while the memory was already conflicted: resolved last, it
    returns the memory to active, not to conflicted (and the copy of `both` is active too)."""
    lake.ingest([write_jsonl(tmp_path / "v1.jsonl", [BASE])], as_of=AS_OF)
    for writer, when in (("a", AS_OF), ("b", AS_OF), ("c", LATER)):
        lake.ingest([write_jsonl(tmp_path / f"{writer}.jsonl", [{**BASE, "version": 1, "content": writer}])],
                    as_of=when)
    first, second = lake.conflicts()["conflict_id"].to_list()
    assert rows(lake, "SELECT lake_status FROM conflicts ORDER BY created_at") == [
        {"lake_status": "active"}, {"lake_status": "conflicted"}]
    assert lake.resolve_conflict(first, "lake", as_of=LATER)["status"] == "conflicted"
    result = lake.resolve_conflict(second, "both", as_of=LATER)
    assert rows(lake, "SELECT id, content, status FROM memories ORDER BY id") == [
        {"id": "pref-theme", "content": "a", "status": "active"},
        {"id": result["new_memory_id"], "content": "c", "status": "active"}]


@pytest.mark.parametrize("order", ["oldest first", "newest first"])
def test_a_dormant_memory_disputed_twice_returns_to_dormant_in_either_order(lake, tmp_path, order):
    """Observed: resolved oldest first, the second conflict (filed while the memory was already
    conflicted) remembered only `conflicted`, and the memory came back active, not dormant."""
    lake.ingest([write_jsonl(tmp_path / "v1.jsonl", [{**BASE, "status": "dormant"}])], as_of=AS_OF)
    for writer, when in (("a", AS_OF), ("b", AS_OF), ("c", LATER)):
        # a write wakes a dormant memory unless it says dormant itself: these writers do
        lake.ingest([write_jsonl(tmp_path / f"{writer}.jsonl", [{**BASE, "version": 1, "status": "dormant",
                                                                  "content": writer}])], as_of=when)
    first, second = lake.conflicts()["conflict_id"].to_list()
    assert rows(lake, "SELECT lake_status FROM conflicts ORDER BY created_at") == [
        {"lake_status": "dormant"}, {"lake_status": "conflicted"}]
    one, two = (first, second) if order == "oldest first" else (second, first)
    assert lake.resolve_conflict(one, "lake", as_of=LATER)["status"] == "conflicted"
    result = lake.resolve_conflict(two, "both", as_of=LATER)
    assert result["status"] == "dormant"
    assert rows(lake, "SELECT id, content, status FROM memories ORDER BY id") == [
        {"id": "pref-theme", "content": "a", "status": "dormant"},
        {"id": result["new_memory_id"], "content": "c" if two == second else "b", "status": "dormant"}]


def test_a_conflict_on_a_deleted_memory_is_refused(lake, tmp_path):
    """Forget closes a deleted memory's conflicts; should one stay open (a lake written by other
    code), resolving it is refused, naming the deleted memory, and nothing changes."""
    conflicts = two_writers(lake, tmp_path)
    conflict_id = conflicts["content"]["conflict_id"]
    with lake.writer(purpose="test: a memory deleted, its conflict left open") as con:
        con.execute("UPDATE memories SET status = 'deleted' WHERE id = 'pref-theme'")
    before = rows(lake, "SELECT * FROM memories"), rows(lake, "SELECT * FROM conflicts")
    with pytest.raises(NotApplicable) as refused:
        lake.resolve_conflict(conflict_id, "incoming", as_of=LATER)
    assert str(refused.value) == f"conflict {conflict_id} cannot be resolved: memory pref-theme was forgotten"
    assert (rows(lake, "SELECT * FROM memories"), rows(lake, "SELECT * FROM conflicts")) == before


def test_a_contradiction_whose_other_memory_is_deleted_is_refused(lake, tmp_path):
    conflict_id = contradiction(lake, tmp_path)
    with lake.writer(purpose="test: a memory deleted, its conflict left open") as con:
        con.execute("UPDATE memories SET status = 'deleted' WHERE id = 'zh-2'")
    with pytest.raises(NotApplicable) as refused:
        lake.resolve_conflict(conflict_id, "lake", as_of=LATER)
    assert str(refused.value) == f"conflict {conflict_id} cannot be resolved: memory zh-2 was forgotten"
