"""Usage events and the search log: counters move, versions do not, bad lines are quarantined,
append-only files are read once."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from memory_lake.maintain.events import apply_events

from ..conftest import AS_OF, rows, write_jsonl


def setup(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "m1", "tenant": "t", "content": "first", "created_at": "2026-11-01T00:00:00Z"},
        {"id": "m2", "tenant": "t", "content": "second", "created_at": "2026-11-01T00:00:00Z"},
    ])], as_of=AS_OF)


def test_events_move_counters_and_last_access_without_a_version_bump(lake, tmp_path):
    setup(lake, tmp_path)
    write_jsonl(lake.inbox / "agent.events.jsonl", [
        {"ts": "2026-11-20T00:00:00Z", "tenant": "t", "event": "access", "memory_id": "m1"},
        {"ts": "2026-11-21T00:00:00Z", "tenant": "t", "event": "access", "memory_id": "m1"},
        {"ts": "2026-11-22T00:00:00Z", "tenant": "t", "event": "reference", "memory_id": "m2"},
        {"ts": "2026-11-22T00:00:00Z", "tenant": "other", "event": "access", "memory_id": "m2"},
        {"ts": "2026-11-22T00:00:00Z", "tenant": "t", "event": "poke", "memory_id": "m2"},
        "not json",
    ])
    report = apply_events(lake, AS_OF, run_id="r1")
    assert report.counts == {"searches": 0, "access_events": 2, "reference_events": 1, "hit_events": 0,
                             "memories_used": 2, "woken": 0, "quarantined": 3}
    assert rows(lake, "SELECT id, access_count, reference_count, last_accessed_at, version FROM memories ORDER BY id") == [
        {"id": "m1", "access_count": 2, "reference_count": 0, "last_accessed_at": datetime(2026, 11, 21), "version": 1},
        {"id": "m2", "access_count": 0, "reference_count": 1, "last_accessed_at": datetime(2026, 11, 22), "version": 1}]
    assert rows(lake, "SELECT line, reason FROM quarantine ORDER BY line") == [
        {"line": 4, "reason": "id belongs to another tenant"}, {"line": 5, "reason": "unknown event"}, {"line": 6, "reason": "bad JSON"}]
    # the detail names what was wrong and what is expected (it was empty)
    assert rows(lake, "SELECT detail FROM quarantine WHERE line IN (5, 6) ORDER BY line") == [
        {"detail": 'event "poke" is not one of access, reference, hit (or a search record with search_id and result_ids)'},
        {"detail": "each line must be one JSON object"}]
    assert rows(lake, "SELECT memory_id, change, operator, reason FROM memory_history WHERE change = 'usage' ORDER BY 1") == [
        {"memory_id": "m1", "change": "usage", "operator": "system", "reason": "usage events"},
        {"memory_id": "m2", "change": "usage", "operator": "system", "reason": "usage events"}]
    assert not list(lake.inbox.glob("*.events.jsonl"))
    # applied once: a second run reads nothing new
    assert apply_events(lake, AS_OF).counts == {}
    assert rows(lake, "SELECT sum(access_count) AS n FROM memories") == [{"n": 2}]


def test_search_log_is_loaded_once_and_counts_returned_memories_as_accessed(lake, tmp_path):
    setup(lake, tmp_path)
    log = lake.events / "searches-2026-11-29.jsonl"
    line = {"search_id": "s1", "ts": "2026-11-29T10:00:00Z", "tenant": "t", "agent_id": None, "user_id": None,
            "query": "first", "mode": "hybrid", "mode_used": "keyword", "filters": {}, "result_ids": ["m1", "m2"],
            "raw_scores": [1.5, 0.2], "keyword_match": True}
    log.write_text(json.dumps(line) + "\n" + '{"search_id": "s2", "query": "partial')  # second line still being written
    apply_events(lake, AS_OF, run_id="r1")
    assert rows(lake, "SELECT search_id, query, result_ids, raw_scores, keyword_match, confirmed_hit FROM retrieval_log") == [
        {"search_id": "s1", "query": "first", "result_ids": ["m1", "m2"], "raw_scores": [1.5, 0.2],
         "keyword_match": True, "confirmed_hit": False}]
    assert rows(lake, "SELECT id, access_count FROM memories ORDER BY id") == [
        {"id": "m1", "access_count": 1}, {"id": "m2", "access_count": 1}]
    # the writer finishes its line; an agent confirms s1 was a hit
    with open(log, "a") as handle:
        handle.write(' query", "ts": "2026-11-29T11:00:00Z", "tenant": "t", "result_ids": [], "raw_scores": []}\n')
    write_jsonl(lake.inbox / "hits.events.jsonl", [{"ts": "2026-11-29T12:00:00Z", "tenant": "t", "event": "hit",
                                                    "search_id": "s1"}])
    report = apply_events(lake, AS_OF, run_id="r2")
    assert (report.counts["searches"], report.counts["hit_events"]) == (1, 1)
    assert rows(lake, "SELECT search_id, confirmed_hit FROM retrieval_log ORDER BY 1") == [
        {"search_id": "s1", "confirmed_hit": True}, {"search_id": "s2", "confirmed_hit": False}]
    assert rows(lake, "SELECT sum(access_count) AS n FROM memories") == [{"n": 2}]


def test_events_dated_after_as_of_wait_for_a_later_run(lake, tmp_path):
    """`search` logs the real time; a nightly rerun for an earlier as_of applied today's searches
    (a stranger saw last_accessed_at after the run's as_of and "oldest unaccessed -1 days"). A line
    dated after as_of and the lines after it wait; a run at their time applies them once."""
    setup(lake, tmp_path)
    log = lake.events / "searches-2026-12-03.jsonl"
    search_line = {"search_id": "s-later", "ts": "2026-12-03T06:08:51Z", "tenant": "t", "query": "second",
                   "mode": "hybrid", "mode_used": "keyword", "result_ids": ["m2"], "raw_scores": [1.0],
                   "keyword_match": True}
    write_jsonl(log, [{"ts": "2026-11-29T00:00:00Z", "tenant": "t", "event": "access", "memory_id": "m1"},
                      search_line])
    report = apply_events(lake, AS_OF, run_id="r1")                     # AS_OF: 2026-11-30
    assert (report.counts["access_events"], report.counts["searches"], report.counts["waiting"]) == (1, 0, 1)
    assert rows(lake, "SELECT id, access_count, last_accessed_at FROM memories ORDER BY id") == [
        {"id": "m1", "access_count": 1, "last_accessed_at": datetime(2026, 11, 29)},
        {"id": "m2", "access_count": 0, "last_accessed_at": datetime(2026, 11, 1)}]
    assert apply_events(lake, AS_OF, run_id="r2").counts == {"waiting": 1}   # a rerun changes nothing
    assert rows(lake, "SELECT count(*) AS n FROM retrieval_log") == [{"n": 0}]
    later = apply_events(lake, datetime(2026, 12, 3, 7), run_id="r3")
    assert (later.counts["searches"], "waiting" in later.counts) == (1, False)
    assert rows(lake, "SELECT id, access_count, last_accessed_at FROM memories ORDER BY id") == [
        {"id": "m1", "access_count": 1, "last_accessed_at": datetime(2026, 11, 29)},
        {"id": "m2", "access_count": 1, "last_accessed_at": datetime(2026, 12, 3, 6, 8, 51)}]


@pytest.mark.models
def test_events_touch_only_their_own_tenant(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "a1", "tenant": "A", "content": "tenant A plans the launch", "created_at": "2026-11-01T00:00:00Z"},
        {"id": "b1", "tenant": "B", "content": "tenant B plans the party", "created_at": "2026-11-01T00:00:00Z"},
    ])], as_of=AS_OF)
    found = lake.search("launch", tenant="A", as_of=AS_OF)  # tenant A searches
    assert [r.id for r in found] == ["a1"]
    before = rows(lake, "SELECT * FROM memories ORDER BY id")
    write_jsonl(lake.inbox / "b.events.jsonl", [
        {"ts": "2026-11-29T12:00:00Z", "tenant": "B", "event": "hit", "search_id": found.search_id},
        {"ts": "2026-11-29T12:00:00Z", "tenant": "B", "event": "access", "memory_id": "a1"},
        {"ts": "2026-11-29T12:00:00Z", "tenant": "B", "event": "reference", "memory_id": "a1"},
        {"ts": "2026-11-29T12:00:00Z", "tenant": "B", "event": "access", "memory_id": "nope"},
    ])
    # a forged search line of B that returns A's memory would count as an access of it
    (log_path,) = lake.events.glob("searches-*.jsonl")  # the log A's search wrote
    with open(log_path, "a") as log:
        log.write(json.dumps({"search_id": "forged", "ts": "2026-11-29T12:00:00Z", "tenant": "B", "query": "x",
                              "result_ids": ["a1"], "raw_scores": [1.0]}) + "\n")
    report = apply_events(lake, AS_OF, run_id="r1")
    assert report.counts == {"searches": 1, "access_events": 0, "reference_events": 0, "hit_events": 0,
                             "memories_used": 1, "woken": 0, "quarantined": 5}
    # A's search is logged (and counted as A's own access of a1), never confirmed by B
    assert rows(lake, "SELECT search_id, tenant, confirmed_hit FROM retrieval_log") == [
        {"search_id": found.search_id, "tenant": "A", "confirmed_hit": False}]
    assert rows(lake, "SELECT id, access_count, reference_count FROM memories ORDER BY id") == [
        {"id": "a1", "access_count": 1, "reference_count": 0}, {"id": "b1", "access_count": 0, "reference_count": 0}]
    assert rows(lake, "SELECT id, access_count, reference_count, last_accessed_at FROM memories WHERE id = 'b1'") == [
        {k: before[1][k] for k in ("id", "access_count", "reference_count", "last_accessed_at")}]
    assert rows(lake, "SELECT file, line, reason, tenant, memory_id FROM quarantine ORDER BY file, line") == [
        {"file": "events/inbox-" + _digest(lake, "b.events.jsonl"), "line": 1,
         "reason": "id belongs to another tenant", "tenant": "B", "memory_id": None},
        {"file": "events/inbox-" + _digest(lake, "b.events.jsonl"), "line": 2,
         "reason": "id belongs to another tenant", "tenant": "B", "memory_id": "a1"},
        {"file": "events/inbox-" + _digest(lake, "b.events.jsonl"), "line": 3,
         "reason": "id belongs to another tenant", "tenant": "B", "memory_id": "a1"},
        {"file": "events/inbox-" + _digest(lake, "b.events.jsonl"), "line": 4, "reason": "unknown id", "tenant": "B",
         "memory_id": "nope"},
        {"file": f"events/{log_path.name}", "line": 2, "reason": "id belongs to another tenant",
         "tenant": "B", "memory_id": None}]
    # A's own hit still confirms A's search
    write_jsonl(lake.inbox / "a.events.jsonl", [
        {"ts": "2026-11-29T13:00:00Z", "tenant": "A", "event": "hit", "search_id": found.search_id}])
    assert apply_events(lake, AS_OF, run_id="r2").counts["hit_events"] == 1
    assert rows(lake, "SELECT search_id, confirmed_hit FROM retrieval_log") == [
        {"search_id": found.search_id, "confirmed_hit": True}]


def _digest(lake, name: str) -> str:
    (path,) = [p for p in lake.events.glob(f"inbox-*-{name}")]
    return path.name[len("inbox-"):]


def test_event_files_are_redacted_before_they_reach_events_or_quarantine(lake, tmp_path):
    # issue 12 item 6: *.events.jsonl landed raw in events/, bad lines raw in quarantine
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "m1", "tenant": "bob@example.com", "content": "first", "created_at": "2026-11-01T00:00:00Z"}])],
        as_of=AS_OF)
    write_jsonl(lake.inbox / "13812345678.events.jsonl", [
        {"ts": "2026-11-20T00:00:00Z", "tenant": "bob@example.com", "event": "access", "memory_id": "m1",
         "note": "from 10.0.0.7 by password: correct horse battery staple"},
        {"ts": "2026-11-20T00:00:00Z", "tenant": "bob@example.com", "event": "poke", "note": "call (415) 555-0132"},
        '{"ts": "2026-11-20T00:00:00Z", "note": "\\u0031\\u0033\\u0038\\u0031\\u0032\\u0033\\u0034\\u0035\\u0036\\u0037\\u0038',
    ])
    report = apply_events(lake, AS_OF, run_id="r1")
    assert (report.counts["access_events"], report.counts["memories_used"], report.counts["quarantined"]) == (1, 1, 2)
    tenant = lake.sql("SELECT tenant FROM memories").item()
    assert tenant.startswith("[EMAIL:")  # the tenant is known by its placeholder, in events too
    [copy] = lake.events.glob("*.jsonl")
    assert "13812345678" not in copy.name and "[PHONE:" in copy.name
    body = copy.read_text()
    for raw in ("bob@example.com", "10.0.0.7", "horse", "555-0132", "\\u0031\\u0033"):
        assert raw not in body
    assert rows(lake, "SELECT reason, tenant, raw LIKE '%[PHONE:%' AS redacted FROM quarantine ORDER BY line") == [
        {"reason": "unknown event", "tenant": tenant, "redacted": True},
        {"reason": "bad JSON", "tenant": None, "redacted": True}]
    assert lake.sql("SELECT access_count FROM memories").item() == 1
