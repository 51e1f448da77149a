"""The versioned write path: seed 000's merge table (three-way per field, conflicts), counters, tags, important, forget."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from memory_lake.store.history import row_image

from ..conftest import AS_OF, rows, signed_by_user, user_claims, write_jsonl

BASE = {"id": "pref-1", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "working",
        "type": "preference", "content": "User prefers dark mode", "tags": ["ui"], "importance": 0.6,
        "created_at": "2026-11-01T00:00:00Z", "access_count": 2}


def ingest(lake, tmp_path, name, records, as_of=AS_OF):
    """Ingest `records` as one file; one with a user's records is signed as a user's edit signs it."""
    path = write_jsonl(tmp_path / name, records)
    return lake.ingest([signed_by_user(lake, path) if user_claims(records) else path], as_of=as_of).as_dict()


def memory(lake, memory_id="pref-1"):
    (row,) = rows(lake, "SELECT * EXCLUDE (published_at, publish_meta) FROM memories WHERE id = ?", [memory_id])
    return row


def history(lake, memory_id="pref-1"):
    return rows(lake, "SELECT version, change, changed_fields, operator, reason FROM memory_history "
                      "WHERE memory_id = ? ORDER BY seq", [memory_id])


def system_move(lake, memory_id, **changes):
    """What a maintenance step does: change fields without a version bump, history operator system."""
    with lake.writer() as con:
        con.execute("CREATE TEMP TABLE before_move AS SELECT * FROM memories WHERE id = ?", [memory_id])
        sets = ", ".join(f"{k} = ?" for k in changes)
        con.execute(f"UPDATE memories SET {sets} WHERE id = ?", [*changes.values(), memory_id])
        con.execute(
            f"INSERT INTO memory_history (seq, memory_id, tenant, version, change, changed_fields, operator, run_id, "
            f"reason, as_of, before, after) SELECT (SELECT max(seq) + 1 FROM memory_history), m.id, m.tenant, m.version, "
            f"'tier', ?, 'system', 'r', 'rule', ?, {row_image('b')}, {row_image('m')} "
            f"FROM memories m JOIN before_move b USING (id)", [list(changes), AS_OF])


def test_edit_with_current_version_bumps_and_writes_history(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE])
    report = ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "content": "User prefers light mode",
                                                 "tags": ["ui", "theme"], "trace_id": "t-2"}])
    assert (report["updated"], report["ingested"], report["unchanged"]) == (1, 0, 0)
    row = memory(lake)
    assert (row["content"], row["tags"], row["version"], row["operator"], row["trace_id"], row["updated_at"]) == (
        "User prefers light mode", ["theme", "ui"], 2, "agent", "t-2", AS_OF)
    assert history(lake) == [
        {"version": 1, "change": "insert", "changed_fields": None, "operator": "agent", "reason": "snapshot"},
        {"version": 2, "change": "update", "changed_fields": ["content", "tags"], "operator": "agent",
         "reason": "snapshot"},
    ]
    (images,) = rows(lake, "SELECT before.content AS before, after.content AS after FROM memory_history WHERE version = 2")
    assert images == {"before": "User prefers dark mode", "after": "User prefers light mode"}


def test_identical_record_is_a_no_op(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE])
    before = memory(lake)
    report = ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "channel": None}])
    assert (report["updated"], report["unchanged"]) == (0, 1)
    assert memory(lake) == before
    assert len(history(lake)) == 1


def conflicts(lake):
    return rows(lake, "SELECT * EXCLUDE (conflict_id, created_at, run_id) FROM conflicts ORDER BY source_file, field")


OPEN = {"other_memory_id": None, "resolved_at": None, "resolution": None, "resolved_by": None,
        "resolved_value": None, "new_memory_id": None, "status": "open", "tenant": "acme", "memory_id": "pref-1"}


def test_older_base_different_fields_merge(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE])
    ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "content": "User prefers light mode", "trace_id": "A"}])
    # B read version 1 too and changed another field: both changes stand (各取所改)
    after_a = memory(lake)
    report = ingest(lake, tmp_path, "c.jsonl", [{**BASE, "version": 1, "importance": 0.9, "trace_id": "B"}])
    assert (report["updated"], report["conflicted"], report["quarantined"]) == (1, 0, 0)
    # the whole row: A's content stays, B's importance applies, nothing else moves
    assert memory(lake) == {**after_a, "importance": 0.9, "version": 3, "trace_id": "B"}
    assert after_a["content"] == "User prefers light mode"
    assert [h["changed_fields"] for h in history(lake)] == [None, ["content"], ["importance"]]
    assert conflicts(lake) == []


def test_older_base_same_field_same_value_is_fine(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE])
    ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "content": "User prefers light mode"}])
    after_a = memory(lake)
    report = ingest(lake, tmp_path, "c.jsonl", [{**BASE, "version": 1, "content": "User prefers light mode",
                                                 "trace_id": "B"}])  # another writer, same result
    assert (report["updated"], report["unchanged"], report["conflicted"]) == (0, 1, 0)
    assert memory(lake) == after_a
    assert conflicts(lake) == []


def test_older_base_same_field_different_values_is_a_conflict(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE])
    ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "content": "User prefers light mode", "trace_id": "A"}])
    after_a = memory(lake)
    report = ingest(lake, tmp_path, "c.jsonl", [{**BASE, "version": 1, "content": "User prefers auto mode",
                                                 "importance": 0.9, "operator": "agent", "trace_id": "B"}])
    assert (report["updated"], report["conflicted"]) == (1, 1)
    # the lake's value stays; the other field B changed applies; the memory is marked conflicted
    assert memory(lake) == {**after_a, "importance": 0.9, "version": 3, "status": "conflicted", "trace_id": "B"}
    assert conflicts(lake) == [{
        **OPEN, "kind": "write", "field": "content", "base_version": 1, "lake_version": 2,
        "base_value": '"User prefers dark mode"', "lake_value": '"User prefers light mode"',
        "incoming_value": '"User prefers auto mode"', "lake_operator": "agent", "incoming_operator": "agent",
        "lake_trace_id": "A", "incoming_trace_id": "B", "lake_status": "active",
        "source_file": f"{tmp_path}/c.jsonl", "source_line": 1}]
    assert history(lake)[-1] == {"version": 3, "change": "update", "changed_fields": ["importance"],
                                 "operator": "agent", "reason": "snapshot; conflict on content"}


def test_a_conflict_alone_marks_the_memory_without_a_version_bump(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE])
    ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "content": "light"}])
    report = ingest(lake, tmp_path, "c.jsonl", [{**BASE, "version": 1, "content": "auto"}])
    assert (report["updated"], report["unchanged"], report["conflicted"]) == (0, 0, 1)
    assert (memory(lake)["content"], memory(lake)["version"], memory(lake)["status"]) == ("light", 2, "conflicted")
    assert history(lake)[-1] == {"version": 2, "change": "conflict", "changed_fields": ["status"],
                                 "operator": "system", "reason": "conflict on content (based on version 1)"}


def test_concurrent_adds_just_merge(lake, tmp_path):
    # two agents add memories at once: records without an id get derived ids and never collide
    new = {k: v for k, v in BASE.items() if k != "id"}
    report = ingest(lake, tmp_path, "a.jsonl", [{**new, "content": "Alice likes tea", "agent_id": "a"},
                                                {**new, "content": "Alice likes jazz", "agent_id": "b"}])
    assert (report["ingested"], report["conflicted"]) == (2, 0)
    assert rows(lake, "SELECT content, version, status FROM memories ORDER BY content") == [
        {"content": "Alice likes jazz", "version": 1, "status": "active"},
        {"content": "Alice likes tea", "version": 1, "status": "active"}]
    assert conflicts(lake) == []


def test_tags_merge_as_sets(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [{**BASE, "tags": ["ui", "theme"]}])
    ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "tags": ["ui", "theme", "editor"]}])  # A adds
    after_a = memory(lake)
    report = ingest(lake, tmp_path, "c.jsonl", [{**BASE, "version": 1, "tags": ["ui", "night"]}])  # B: -theme +night
    assert (report["updated"], report["conflicted"]) == (1, 0)
    assert memory(lake) == {**after_a, "tags": ["editor", "night", "ui"], "version": 3}


def test_unknown_and_missing_base_versions_are_quarantined(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE, {**BASE, "id": "exported", "version": 5, "content": "from an export"}])
    ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 7, "content": "from the future"},
                                       {**BASE, "id": "exported", "version": 3, "content": "base not here"}])
    assert rows(lake, "SELECT file, line, reason, detail, memory_id FROM quarantine ORDER BY line") == [
        {"file": f"{tmp_path}/b.jsonl", "line": 1, "reason": "unknown base version",
         "detail": "based on version 7, lake has version 1", "memory_id": "pref-1"},
        {"file": f"{tmp_path}/b.jsonl", "line": 2, "reason": "unknown base version",
         "detail": "based on version 3, which the history of exported does not hold (lake has version 5)",
         "memory_id": "exported"},
    ]
    assert memory(lake, "exported")["content"] == "from an export"


def test_resent_snapshot_does_not_undo_a_system_move(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE])
    system_move(lake, "pref-1", tier="short_term")
    # the agent re-sends what it read at version 1 (tier working) with one real change
    report = ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "importance": 0.9}])
    row = memory(lake)
    assert report["updated"] == 1
    assert (row["tier"], row["importance"], row["version"]) == ("short_term", 0.9, 2)
    assert history(lake)[-1]["changed_fields"] == ["importance"]
    # and an explicit tier change by the agent does apply
    ingest(lake, tmp_path, "c.jsonl", [{**BASE, "version": 2, "importance": 0.9, "tier": "long_term"}])
    assert (memory(lake)["tier"], memory(lake)["version"]) == ("long_term", 3)


def test_counters_add_the_writers_delta_without_a_version_bump(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE])  # access_count 2
    system_move(lake, "pref-1", access_count=5)  # e.g. three accesses from search events
    later = (AS_OF + timedelta(days=1)).isoformat() + "Z"
    report = ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "access_count": 4, "last_accessed_at": later}])
    row = memory(lake)
    assert (report["updated"], report["unchanged"]) == (0, 1)  # counters alone change no field
    assert (row["access_count"], row["version"], row["last_accessed_at"]) == (7, 1, AS_OF + timedelta(days=1))
    assert history(lake)[-1] == {"version": 1, "change": "usage",
                                 "changed_fields": ["access_count", "reference_count", "last_accessed_at"],
                                 "operator": "system", "reason": "usage counters from snapshot"}


def test_an_agents_change_to_an_important_memory_waits_for_a_user(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [{**BASE, "important": True}])
    before = memory(lake)
    report = ingest(lake, tmp_path, "b.jsonl", [{**BASE, "important": True, "version": 1, "content": "agent edit",
                                                 "access_count": 3, "trace_id": "T"}])
    assert (report["quarantined"], report["updated"], report["conflicted"]) == (0, 0, 1)
    # not applied: the memory keeps its content and version; usage counters still move
    assert memory(lake) == {**before, "status": "conflicted", "access_count": 3}
    assert conflicts(lake) == [{
        **OPEN, "kind": "important", "field": "content", "base_version": 1, "lake_version": 1,
        "base_value": '"User prefers dark mode"', "lake_value": '"User prefers dark mode"',
        "incoming_value": '"agent edit"', "lake_operator": "agent", "incoming_operator": "agent",
        "lake_trace_id": None, "incoming_trace_id": "T", "lake_status": "active",
        "source_file": f"{tmp_path}/b.jsonl", "source_line": 1}]
    ingest(lake, tmp_path, "c.jsonl", [{**BASE, "important": True, "version": 1, "content": "user edit",
                                        "operator": "user"}])
    row = memory(lake)
    assert (row["content"], row["version"], row["operator"], row["tier"]) == ("user edit", 2, "user", "important")


def test_forget_makes_an_audited_tombstone_and_scrubs_history(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE, {**BASE, "id": "vip", "important": True, "content": "VIP secret note"}])
    ingest(lake, tmp_path, "b.jsonl", [{**BASE, "version": 1, "content": "User prefers light mode"}])
    report = ingest(lake, tmp_path, "c.jsonl", [
        {"id": "pref-1", "tenant": "acme", "deleted": True, "operator": "user", "reason": "user asked"},
        {"id": "vip", "tenant": "acme", "deleted": True},
        {"id": "ghost", "tenant": "acme", "deleted": True},
    ])
    assert (report["forgotten"], report["quarantined"]) == (1, 2)
    row = memory(lake)
    assert (row["status"], row["content"], row["summary"], row["tags"], row["extra"], row["version"]) == (
        "deleted", "", None, [], None, 3)
    assert history(lake)[-1] == {"version": 3, "change": "forget",
                                 "changed_fields": ["content", "summary", "tags", "extra", "status"],
                                 "operator": "user", "reason": "user asked"}
    images = rows(lake, "SELECT before, after FROM memory_history WHERE memory_id = 'pref-1' ORDER BY seq")
    texts = [image[c] for r in images for image in (r["before"], r["after"]) if image
             for c in ("content", "summary", "tags", "extra")]
    assert texts and all(t is None for t in texts)
    assert all(r["after"]["content_hash"] for r in images)
    assert (images[-1]["after"]["status"], images[-1]["after"]["version"]) == ("deleted", 3)
    assert rows(lake, "SELECT memory_id, reason FROM quarantine ORDER BY line") == [
        {"memory_id": "vip", "reason": "important memory needs operator user"},
        {"memory_id": "ghost", "reason": "unknown id"}]
    assert memory(lake, "vip")["status"] == "active"


def test_an_id_of_another_tenant_is_refused(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [BASE])
    report = ingest(lake, tmp_path, "b.jsonl", [{**BASE, "tenant": "globex", "content": "hijack"}])
    assert report["quarantined"] == 1
    assert rows(lake, "SELECT reason FROM quarantine") == [{"reason": "id belongs to another tenant"}]
    assert memory(lake)["tenant"] == "acme"


def test_new_id_with_a_version_starts_there(lake, tmp_path):
    ingest(lake, tmp_path, "a.jsonl", [{**BASE, "version": 4}])
    assert memory(lake)["version"] == 4
    assert history(lake)[0]["version"] == 4


def test_two_snapshots_in_one_run_apply_in_file_order(lake):
    write_jsonl(lake.inbox / "0001.jsonl", [BASE])
    write_jsonl(lake.inbox / "0002.jsonl", [{**BASE, "version": 1, "content": "second"}])
    write_jsonl(lake.inbox / "0003.jsonl", [{**BASE, "version": 1, "content": "third, from the same base"}])
    report = lake.ingest(as_of=datetime(2026, 11, 30)).as_dict()
    assert [(f["file"], f["ingested"], f["updated"], f["conflicted"]) for f in report["per_file"]] == [
        ("0001.jsonl", 1, 0, 0), ("0002.jsonl", 0, 1, 0), ("0003.jsonl", 0, 0, 1)]
    assert (memory(lake)["content"], memory(lake)["status"]) == ("second", "conflicted")


# ---------------------------------------------------------------- manual edits after a system move
# Observed by a new user: after the nightly tier rule moved zh-3 and en-2 from short_term to
# long_term (no version bump), `memory-lake edit zh-3 --set tier=short_term --operator user` said
# "version 1 (active)" and changed nothing, and `edit en-2 --set tier=important` filed a conflict
# naming operator `agent` for the lake's side instead of pinning.
IDLE = {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "short_term", "type": "fact",
        "created_at": "2026-11-01T00:00:00Z", "last_accessed_at": "2026-11-01T00:00:00Z"}
MOVED = [{**IDLE, "id": "zh-3", "content": "用户每周五下午三点开组会"},
         {**IDLE, "id": "en-2", "content": "Alice prefers dark mode in the editor"}]


def moved_by_a_tier_rule(lake, tmp_path):
    from memory_lake.maintain import enforce_tiers

    ingest(lake, tmp_path, "moved.jsonl", MOVED)
    assert enforce_tiers(lake, AS_OF).counts["short_term_idle"] == 2  # idle over 7 days -> long_term
    assert rows(lake, "SELECT id, tier, version, status FROM memories ORDER BY id") == [
        {"id": "en-2", "tier": "long_term", "version": 1, "status": "active"},
        {"id": "zh-3", "tier": "long_term", "version": 1, "status": "active"}]


def edited(lake, memory_id):
    (row,) = rows(lake, "SELECT id, content, tier, version, status, operator FROM memories WHERE id = ?", [memory_id])
    last = rows(lake, "SELECT version, change, changed_fields, operator FROM memory_history WHERE memory_id = ? "
                      "ORDER BY seq DESC LIMIT 1", [memory_id])[0]
    return row, last


@pytest.mark.parametrize(("memory_id", "changes", "expected"), [
    ("zh-3", {"tier": "short_term"}, {"tier": "short_term"}),   # moved back by hand
    ("en-2", {"tier": "important"}, {"tier": "important"}),     # the README's way to pin
    ("en-2", {"content": "Alice prefers light mode in the editor"},
     {"content": "Alice prefers light mode in the editor", "tier": "long_term"}),  # the move stays
])
def test_a_manual_edit_after_a_tier_rule_moved_the_memory_applies(lake, tmp_path, memory_id, changes, expected):
    moved_by_a_tier_rule(lake, tmp_path)
    original = next(m for m in MOVED if m["id"] == memory_id)
    result = lake.edit(memory_id, operator="user", as_of=AS_OF, **changes)
    assert (result["version"], result["status"], result["updated"], result["conflicted"], result["quarantined"]) == (
        2, "active", 1, 0, 0)
    assert edited(lake, memory_id) == (
        {"id": memory_id, "content": original["content"], "tier": "long_term", "version": 2, "status": "active",
         "operator": "user", **expected},
        {"version": 2, "change": "update", "changed_fields": sorted(changes), "operator": "user"})
    assert conflicts(lake) == []


def test_an_edit_queued_while_the_lake_is_busy_applies_next_run(lake, tmp_path):
    moved_by_a_tier_rule(lake, tmp_path)
    lake.publish(as_of=AS_OF)  # a busy lake is read from the latest published version
    with lake.writer():  # another process holds the lake
        queued = lake.edit("en-2", tier="important", operator="user", as_of=AS_OF)
    assert set(queued) == {"queued", "memory_id", "base_version"}
    report = lake.ingest(as_of=AS_OF).as_dict()  # the next run
    assert (report["files"], report["updated"], report["conflicted"], report["quarantined"]) == (1, 1, 0, 0)
    assert edited(lake, "en-2") == (
        {"id": "en-2", "content": MOVED[1]["content"], "tier": "important", "version": 2, "status": "active",
         "operator": "user"},
        {"version": 2, "change": "update", "changed_fields": ["tier"], "operator": "user"})
    assert conflicts(lake) == []


def test_a_write_between_the_edits_read_and_its_apply_still_conflicts(lake, tmp_path):
    moved_by_a_tier_rule(lake, tmp_path)
    lake.publish(as_of=AS_OF)
    with lake.writer():
        lake.edit("en-2", content="Alice prefers light mode in the editor", operator="user", as_of=AS_OF)
    # before the queued edit is ingested, an agent that read version 1 changes the same field
    ingest(lake, tmp_path, "agent.jsonl", [{**MOVED[1], "version": 1, "content": "Alice prefers auto mode",
                                            "trace_id": "agent-t"}])
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert (report["updated"], report["conflicted"]) == (0, 1)
    (conflict,) = conflicts(lake)
    assert {k: conflict[k] for k in ("kind", "field", "base_version", "lake_version", "base_value", "lake_value",
                                     "incoming_value", "lake_operator", "incoming_operator", "lake_trace_id",
                                     "lake_status")} == {
        "kind": "write", "field": "content", "base_version": 1, "lake_version": 2,
        "base_value": '"Alice prefers dark mode in the editor"', "lake_value": '"Alice prefers auto mode"',
        "incoming_value": '"Alice prefers light mode in the editor"', "lake_operator": "agent",
        "incoming_operator": "user", "lake_trace_id": "agent-t", "lake_status": "active"}
    assert edited(lake, "en-2")[0] == {"id": "en-2", "content": "Alice prefers auto mode", "tier": "long_term",
                                       "version": 2, "status": "conflicted", "operator": "agent"}


def test_the_lake_side_of_a_conflict_names_the_system_for_a_rules_move(lake, tmp_path):
    moved_by_a_tier_rule(lake, tmp_path)
    # an agent that read version 1 (short_term) sends working: the rule moved it to long_term since
    report = ingest(lake, tmp_path, "agent.jsonl", [{**MOVED[0], "version": 1, "tier": "working", "trace_id": "t"}])
    assert (report["updated"], report["conflicted"]) == (0, 1)
    (conflict,) = conflicts(lake)
    assert {k: conflict[k] for k in ("memory_id", "field", "base_value", "lake_value", "incoming_value",
                                     "lake_operator", "incoming_operator", "lake_trace_id", "incoming_trace_id")} == {
        "memory_id": "zh-3", "field": "tier", "base_value": '"short_term"', "lake_value": '"long_term"',
        "incoming_value": '"working"', "lake_operator": "system", "incoming_operator": "agent",
        "lake_trace_id": None, "incoming_trace_id": "t"}


def test_a_base_history_row_of_another_memory_is_quarantined(lake, tmp_path):
    moved_by_a_tier_rule(lake, tmp_path)
    (other,) = rows(lake, "SELECT max(seq) AS seq FROM memory_history WHERE memory_id = 'zh-3'")
    ingest(lake, tmp_path, "forged.jsonl", [{**MOVED[1], "version": 1, "_base_seq": other["seq"], "tier": "working"}])
    assert rows(lake, "SELECT reason, detail, memory_id FROM quarantine") == [
        {"reason": "unknown base version", "memory_id": "en-2",
         "detail": f"based on history row {other['seq']} at version 1, which the history of en-2 does not hold "
                   "(lake has version 1)"}]
