"""The write path's rules a mutation run found untested (issue 19): what a stranger reads after a
merge (quarantine details, history rows naming file and line, the report's counts), a new record's
defaults, and counters and timestamps that only move forward."""

from __future__ import annotations

from datetime import datetime, timedelta

from ..conftest import AS_OF, rows, signed_by_user, user_claims, write_jsonl

LATER = AS_OF + timedelta(days=1)
NOTE = {"id": "note", "tenant": "acme", "user_id": "alice", "tier": "working", "type": "fact",
        "content": "Alice drinks green tea", "created_at": "2026-11-01T00:00:00Z",
        "last_accessed_at": "2026-11-01T00:00:00Z", "access_count": 2}


def ingest(lake, path, records, as_of=AS_OF):
    """Ingest `records` as one file; one with a user's records is signed as a user's edit signs it."""
    path = write_jsonl(path, records)
    return lake.ingest([signed_by_user(lake, path) if user_claims(records) else path], as_of=as_of).as_dict()


def counts(report):
    keys = ("files", "records", "ingested", "updated", "unchanged", "forgotten", "conflicted", "quarantined",
            "quarantine_reasons")
    return {k: report[k] for k in keys}


def history(lake, memory_id):
    return rows(lake, "SELECT seq, memory_id, version, change, changed_fields, operator, run_id, reason, as_of, "
                      "source_file, source_line, trace_id FROM memory_history WHERE memory_id = ? ORDER BY seq",
                [memory_id])


def memory(lake, memory_id):
    (row,) = rows(lake, "SELECT * FROM memories WHERE id = ?", [memory_id])
    return row


def test_a_new_record_gets_designs_defaults_and_an_insert_history_row(lake, tmp_path):
    # a bare record: every default applies; a second one whose times lie before its creation
    report = ingest(lake, tmp_path / "a.jsonl", [
        {"id": "bare", "tenant": "acme", "content": "Alice drinks tea"},
        {"id": "dated", "tenant": "acme", "content": "Alice met Bob", "created_at": "2026-11-10T00:00:00Z",
         "updated_at": "2026-11-01T00:00:00Z", "last_accessed_at": "2026-11-02T00:00:00Z", "trace_id": "T1",
         "operator": "user", "tags": ["people", "people"]},
    ])
    assert counts(report) == {"files": 1, "records": 2, "ingested": 2, "updated": 0, "unchanged": 0, "forgotten": 0,
                              "conflicted": 0, "quarantined": 0, "quarantine_reasons": {}}
    bare = memory(lake, "bare")
    assert {k: v for k, v in bare.items() if k != "content_hash"} == {
        "id": "bare", "tenant": "acme", "agent_id": None, "user_id": None, "context_id": None, "session_id": None,
        "tier": "short_term", "type": "other", "content": "Alice drinks tea", "summary": None, "tags": [],
        "importance": 0.5, "source": None, "created_at": AS_OF, "updated_at": AS_OF, "last_accessed_at": AS_OF,
        "access_count": 0, "reference_count": 0, "expires_at": None, "version": 1, "status": "active",
        "merged_into": None, "operator": "agent", "trace_id": None, "extra": None, "published_at": None,
        "publish_meta": None}
    assert len(bare["content_hash"]) == 64
    created = datetime(2026, 11, 10)
    dated = memory(lake, "dated")
    # updated and last accessed never lie before the creation
    assert (dated["created_at"], dated["updated_at"], dated["last_accessed_at"], dated["operator"],
            dated["trace_id"]) == (created, created, created, "user", "T1")
    run_id = report["run_id"]
    assert history(lake, "bare") + history(lake, "dated") == [
        {"seq": 1, "memory_id": "bare", "version": 1, "change": "insert", "changed_fields": None, "operator": "agent",
         "run_id": run_id, "reason": "snapshot", "as_of": AS_OF, "source_file": f"{tmp_path}/a.jsonl",
         "source_line": 1, "trace_id": None},
        {"seq": 2, "memory_id": "dated", "version": 1, "change": "insert", "changed_fields": None, "operator": "user",
         "run_id": run_id, "reason": "snapshot", "as_of": AS_OF, "source_file": f"{tmp_path}/a.jsonl",
         "source_line": 2, "trace_id": "T1"},
    ]
    # the after-image is the row as inserted
    (image,) = rows(lake, "SELECT before, after FROM memory_history WHERE memory_id = 'dated'")
    assert image["before"] is None
    assert {k: image["after"][k] for k in ("content", "tags", "tier", "updated_at", "version", "status")} == {
        "content": "Alice met Bob", "tags": ["people"], "tier": "short_term", "updated_at": created,
        "version": 1, "status": "active"}


def test_an_update_moves_hash_time_version_writer_and_names_its_file_and_line(lake, tmp_path):
    ingest(lake, tmp_path / "a.jsonl", [NOTE, {**NOTE, "id": "twin", "content": "Alice drinks black tea"}])
    before = memory(lake, "note")
    report = ingest(lake, tmp_path / "b.jsonl", [
        {**NOTE, "id": "twin", "version": 1, "content": "Alice drinks black tea"},  # unchanged
        {**NOTE, "version": 1, "content": "Alice drinks black tea", "trace_id": "T2", "operator": "user"},
        {**NOTE, "id": "other", "version": 1, "importance": 0.9, "updated_at": "2026-11-02T00:00:00Z"},
    ], as_of=LATER)
    assert counts(report) == {"files": 1, "records": 3, "ingested": 1, "updated": 1, "unchanged": 1, "forgotten": 0,
                              "conflicted": 0, "quarantined": 0, "quarantine_reasons": {}}
    after = memory(lake, "note")
    # the content hash follows the content: it is the hash a new memory with that text gets
    assert after == {**before, "content": "Alice drinks black tea", "content_hash": memory(lake, "twin")["content_hash"],
                     "updated_at": LATER, "last_accessed_at": LATER,  # a write is a use
                     "version": 2, "operator": "user", "trace_id": "T2"}
    assert after["content_hash"] != before["content_hash"]
    # history rows number from the lake's last (2) by file line: the insert on line 3 is 5, and
    # the merge's own rows come after everything before it: 5 + line 2
    assert [h["seq"] for h in history(lake, "other")] == [5]
    assert history(lake, "note")[-1] == {
        "seq": 7, "memory_id": "note", "version": 2, "change": "update", "changed_fields": ["content"],
        "operator": "user", "run_id": report["run_id"], "reason": "snapshot", "as_of": LATER,
        "source_file": f"{tmp_path}/b.jsonl", "source_line": 2, "trace_id": "T2"}
    (image,) = rows(lake, "SELECT before, after FROM memory_history WHERE memory_id = 'note' AND version = 2")
    assert (image["before"]["content"], image["before"]["version"], image["after"]["content"],
            image["after"]["version"], image["after"]["operator"]) == (
        "Alice drinks green tea", 1, "Alice drinks black tea", 2, "user")


def test_a_writers_older_updated_at_never_moves_the_lakes_back(lake, tmp_path):
    ingest(lake, tmp_path / "a.jsonl", [NOTE])
    ingest(lake, tmp_path / "b.jsonl", [{**NOTE, "version": 1, "importance": 0.7}], as_of=LATER)
    assert memory(lake, "note")["updated_at"] == LATER
    ingest(lake, tmp_path / "c.jsonl", [{**NOTE, "version": 2, "importance": 0.8,
                                         "updated_at": "2026-11-05T00:00:00Z"}], as_of=LATER + timedelta(days=1))
    assert (memory(lake, "note")["updated_at"], memory(lake, "note")["version"]) == (LATER, 3)
    ingest(lake, tmp_path / "d.jsonl", [{**NOTE, "version": 3, "importance": 0.9,
                                         "updated_at": "2026-12-03T12:00:00Z"}], as_of=LATER + timedelta(days=2))
    assert (memory(lake, "note")["updated_at"], memory(lake, "note")["version"]) == (datetime(2026, 12, 3, 12), 4)


def test_usage_counters_and_last_access_only_move_forward(lake, tmp_path):
    ingest(lake, tmp_path / "a.jsonl", [NOTE])  # access 2, reference 0
    before = memory(lake, "note")
    # a writer that read fewer accesses and an older last access: nothing to do
    report = ingest(lake, tmp_path / "b.jsonl", [{**NOTE, "version": 1, "access_count": 1, "reference_count": 0,
                                                  "last_accessed_at": "2026-10-01T00:00:00Z"}])
    assert (report["updated"], report["unchanged"]) == (0, 1)
    assert memory(lake, "note") == before
    # references add their delta too, and the version and writer stay
    report = ingest(lake, tmp_path / "c.jsonl", [{**NOTE, "version": 1, "reference_count": 3, "trace_id": "T"}])
    assert (report["updated"], report["unchanged"]) == (0, 1)  # counters alone change no field
    assert memory(lake, "note") == {**before, "reference_count": 3}
    assert history(lake, "note")[-1] == {
        "seq": 2, "memory_id": "note", "version": 1, "change": "usage",
        "changed_fields": ["access_count", "reference_count", "last_accessed_at"], "operator": "system",
        "run_id": report["run_id"], "reason": "usage counters from snapshot", "as_of": AS_OF,
        "source_file": f"{tmp_path}/c.jsonl", "source_line": 1, "trace_id": "T"}


def test_quarantined_records_say_which_id_tenant_and_operator(lake, tmp_path):
    ingest(lake, tmp_path / "a.jsonl", [NOTE, {**NOTE, "id": "vip", "tier": "important"}, {**NOTE, "id": "old"}])
    report = ingest(lake, tmp_path / "b.jsonl", [
        {**NOTE, "tenant": "globex", "content": "hijack"},
        {"id": "ghost", "tenant": "acme", "deleted": True},
        {"id": "vip", "tenant": "acme", "deleted": True, "operator": "agent"},
        {**NOTE, "id": "old", "version": 2, "content": "from the future"},
    ])
    assert counts(report) == {"files": 1, "records": 4, "ingested": 0, "updated": 0, "unchanged": 0, "forgotten": 0,
                              "conflicted": 0, "quarantined": 4, "quarantine_reasons": {
                                  "id belongs to another tenant": 1, "important memory needs operator user": 1,
                                  "unknown base version": 1, "unknown id": 1}}
    assert rows(lake, "SELECT file, line, reason, detail, memory_id FROM quarantine ORDER BY line") == [
        {"file": f"{tmp_path}/b.jsonl", "line": 1, "reason": "id belongs to another tenant",
         "detail": "id note is not in tenant globex", "memory_id": "note"},
        {"file": f"{tmp_path}/b.jsonl", "line": 2, "reason": "unknown id",
         "detail": "no memory ghost in tenant acme", "memory_id": "ghost"},
        {"file": f"{tmp_path}/b.jsonl", "line": 3, "reason": "important memory needs operator user",
         "detail": "operator agent may not forget important memory vip", "memory_id": "vip"},
        {"file": f"{tmp_path}/b.jsonl", "line": 4, "reason": "unknown base version",
         "detail": "based on version 2, lake has version 1", "memory_id": "old"},
    ]
    assert [(m["id"], m["content"], m["version"], m["status"]) for m in
            rows(lake, "SELECT * FROM memories ORDER BY id")] == [
        ("note", "Alice drinks green tea", 1, "active"), ("old", "Alice drinks green tea", 1, "active"),
        ("vip", "Alice drinks green tea", 1, "active")]


def test_a_forget_in_a_snapshot_is_audited_by_file_and_line_and_leaves_the_raw_copies(lake, tmp_path):
    first = ingest(lake, tmp_path / "a.jsonl", [{**NOTE, "content": "Alice hides the key under ZEBRA-42"},
                                                {**NOTE, "id": "milk", "content": "buy milk on friday"}])
    assert counts(first)["forgotten"] == 0
    assert rows(lake, "SELECT file_name, forgotten FROM ingested_files") == [
        {"file_name": f"{tmp_path}/a.jsonl", "forgotten": 0}]
    (raw,) = rows(lake, "SELECT raw_path FROM ingested_files")
    raw = lake.root / raw["raw_path"]
    assert "ZEBRA-42" in raw.read_text()
    # a forget without a reason, on line 2 of a later file
    report = ingest(lake, tmp_path / "b.jsonl", [{**NOTE, "id": "milk", "version": 1, "importance": 0.9},
                                                 {"id": "note", "tenant": "acme", "deleted": True, "operator": "user"}])
    assert counts(report) == {"files": 1, "records": 2, "ingested": 0, "updated": 1, "unchanged": 0, "forgotten": 1,
                              "conflicted": 0, "quarantined": 0, "quarantine_reasons": {}}
    assert history(lake, "note")[-1] == {
        "seq": 4, "memory_id": "note", "version": 2, "change": "forget",
        "changed_fields": ["content", "summary", "tags", "extra", "status"], "operator": "user",
        "run_id": report["run_id"], "reason": "forget request", "as_of": AS_OF,
        "source_file": f"{tmp_path}/b.jsonl", "source_line": 2, "trace_id": None}
    # the forgotten text left the earlier file's raw copy; the other memory's line stays
    lines = raw.read_text().split("\n")
    assert lines[0] == ""
    assert "buy milk on friday" in lines[1]
    assert "ZEBRA-42" not in raw.read_text()


def test_an_agents_forget_of_an_already_deleted_important_memory_is_not_refused(lake, tmp_path):
    ingest(lake, tmp_path / "a.jsonl", [{**NOTE, "tier": "important"}])
    ingest(lake, tmp_path / "b.jsonl", [{"id": "note", "tenant": "acme", "deleted": True, "operator": "user",
                                         "reason": "user asked"}])
    deleted = memory(lake, "note")
    report = ingest(lake, tmp_path / "c.jsonl", [{"id": "note", "tenant": "acme", "deleted": True}])
    # already a tombstone: nothing to forget and nothing to refuse
    assert counts(report) == {"files": 1, "records": 1, "ingested": 0, "updated": 0, "unchanged": 0, "forgotten": 0,
                              "conflicted": 0, "quarantined": 0, "quarantine_reasons": {}}
    assert memory(lake, "note") == deleted
    assert [h["reason"] for h in history(lake, "note")] == ["snapshot", "user asked"]


def test_a_conflict_on_two_fields_files_one_row_each_and_names_both(lake, tmp_path):
    ingest(lake, tmp_path / "a.jsonl", [NOTE])
    ingest(lake, tmp_path / "b.jsonl", [{**NOTE, "version": 1, "content": "Alice drinks oolong", "importance": 0.7,
                                         "trace_id": "A"}])
    lake_side = memory(lake, "note")
    report = ingest(lake, tmp_path / "c.jsonl", [{**NOTE, "version": 1, "content": "Alice drinks coffee",
                                                  "importance": 0.2, "trace_id": "B"}])
    assert (report["updated"], report["unchanged"], report["conflicted"]) == (0, 0, 1)
    assert memory(lake, "note") == {**lake_side, "status": "conflicted"}
    assert history(lake, "note")[-1] == {
        "seq": 3, "memory_id": "note", "version": 2, "change": "conflict", "changed_fields": ["status"],
        "operator": "system", "run_id": report["run_id"], "reason": "conflict on content, importance (based on version 1)",
        "as_of": AS_OF, "source_file": f"{tmp_path}/c.jsonl", "source_line": 1, "trace_id": "B"}
    found = rows(lake, "SELECT conflict_id, kind, field, base_value, lake_value, incoming_value, lake_operator, "
                       "lake_trace_id, incoming_trace_id, lake_status, base_version, lake_version FROM conflicts "
                       "ORDER BY field")
    assert [{k: v for k, v in c.items() if k != "conflict_id"} for c in found] == [
        {"kind": "write", "field": "content", "base_value": '"Alice drinks green tea"',
         "lake_value": '"Alice drinks oolong"', "incoming_value": '"Alice drinks coffee"', "lake_operator": "agent",
         "lake_trace_id": "A", "incoming_trace_id": "B", "lake_status": "active", "base_version": 1,
         "lake_version": 2},
        {"kind": "write", "field": "importance", "base_value": "0.5", "lake_value": "0.7", "incoming_value": "0.2",
         "lake_operator": "agent", "lake_trace_id": "A", "incoming_trace_id": "B", "lake_status": "active",
         "base_version": 1, "lake_version": 2},
    ]
    assert len({c["conflict_id"] for c in found}) == 2


def test_a_later_last_access_alone_moves_without_a_version_bump(lake, tmp_path):
    ingest(lake, tmp_path / "a.jsonl", [NOTE])
    before = memory(lake, "note")
    report = ingest(lake, tmp_path / "b.jsonl", [{**NOTE, "version": 1, "last_accessed_at": "2026-11-20T00:00:00Z"}])
    assert (report["updated"], report["unchanged"], report["conflicted"]) == (0, 1, 0)
    assert memory(lake, "note") == {**before, "last_accessed_at": datetime(2026, 11, 20)}
    assert [(h["version"], h["change"], h["operator"]) for h in history(lake, "note")] == [
        (1, "insert", "agent"), (1, "usage", "system")]


def test_an_agents_tag_change_to_an_important_memory_waits_for_a_user(lake, tmp_path):
    ingest(lake, tmp_path / "a.jsonl", [{**NOTE, "tier": "important", "tags": ["drinks", "tea"]}])
    before = memory(lake, "note")
    report = ingest(lake, tmp_path / "b.jsonl", [{**NOTE, "tier": "important", "version": 1,
                                                  "tags": ["tea", "coffee"], "trace_id": "T"}])
    assert (report["updated"], report["unchanged"], report["conflicted"]) == (0, 0, 1)
    # not applied: the tags stay as they are, the memory waits for a user's decision
    assert memory(lake, "note") == {**before, "status": "conflicted"}
    assert rows(lake, "SELECT kind, field, base_value, lake_value, incoming_value, incoming_trace_id "
                      "FROM conflicts") == [
        {"kind": "important", "field": "tags", "base_value": '["drinks","tea"]', "lake_value": '["drinks","tea"]',
         "incoming_value": '["coffee","tea"]', "incoming_trace_id": "T"}]
    # the same tags in another order are no change at all
    report = ingest(lake, tmp_path / "c.jsonl", [{**NOTE, "tier": "important", "version": 1,
                                                  "tags": ["tea", "drinks"]}])
    assert (report["updated"], report["unchanged"], report["conflicted"]) == (0, 1, 0)
    # a user's tag change applies
    report = ingest(lake, tmp_path / "d.jsonl", [{**NOTE, "tier": "important", "version": 1, "operator": "user",
                                                  "tags": ["tea", "coffee"]}])
    assert (report["updated"], report["conflicted"]) == (1, 0)
    assert (memory(lake, "note")["tags"], memory(lake, "note")["version"]) == (["coffee", "tea"], 2)


def test_the_lake_side_of_a_conflict_is_who_changed_that_field_not_the_last_writer(lake, tmp_path):
    ingest(lake, tmp_path / "a.jsonl", [NOTE])
    ingest(lake, tmp_path / "b.jsonl", [{**NOTE, "version": 1, "content": "Alice drinks oolong", "operator": "user",
                                         "trace_id": "A"}])
    ingest(lake, tmp_path / "c.jsonl", [{**NOTE, "version": 2, "content": "Alice drinks oolong", "importance": 0.7,
                                         "trace_id": "B"}])
    assert (memory(lake, "note")["operator"], memory(lake, "note")["trace_id"]) == ("agent", "B")
    # a writer that read version 1 changes the content: the user's edit (A) is the lake's side
    report = ingest(lake, tmp_path / "d.jsonl", [{**NOTE, "version": 1, "content": "Alice drinks coffee",
                                                  "trace_id": "C"}])
    assert (report["updated"], report["conflicted"]) == (0, 1)
    assert rows(lake, "SELECT field, base_version, lake_version, lake_value, lake_operator, lake_trace_id, "
                      "incoming_operator, incoming_trace_id FROM conflicts") == [
        {"field": "content", "base_version": 1, "lake_version": 3, "lake_value": '"Alice drinks oolong"',
         "lake_operator": "user", "lake_trace_id": "A", "incoming_operator": "agent", "incoming_trace_id": "C"}]


def test_a_write_is_a_use_and_wakes_a_dormant_memory(lake, tmp_path):
    """A stranger rewrote a memory created in June ("Fritz lives in Hamburg now", version 2) and the
    same night's tier rules made it dormant: its last access was still June, so the newest fact
    left search, the context pack and the export. A write moves the last access to its time, and
    a dormant memory written to is active again (as a search's access wakes it)."""
    old = {"id": "fz-city", "tenant": "solo", "user_id": "fz", "content": "Fritz lives in Munich",
           "created_at": "2026-06-01T00:00:00Z"}
    ingest(lake, tmp_path / "a.jsonl", [old])
    from memory_lake.maintain import enforce_tiers

    enforce_tiers(lake, AS_OF)  # idle in short_term, unaccessed in long_term since June
    assert (memory(lake, "fz-city")["tier"], memory(lake, "fz-city")["status"]) == ("long_term", "dormant")
    ingest(lake, tmp_path / "b.jsonl", [{**old, "version": 1, "content": "Fritz lives in Hamburg now"}], as_of=LATER)
    row = memory(lake, "fz-city")
    assert (row["version"], row["status"], row["updated_at"], row["last_accessed_at"]) == (2, "active", LATER, LATER)
    assert history(lake, "fz-city")[-1]["changed_fields"] == ["content", "status"]
    # unchanged text is no write: nothing moves
    ingest(lake, tmp_path / "c.jsonl", [{**old, "version": 2, "content": "Fritz lives in Hamburg now"}],
           as_of=LATER + timedelta(days=3))
    assert memory(lake, "fz-city")["last_accessed_at"] == LATER
