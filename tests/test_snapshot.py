"""The snapshot contract: spellings, types, defaults and the reason of every bad record."""

from __future__ import annotations

from datetime import datetime

import pytest

from .conftest import AS_OF, rows, write_jsonl


def land(lake, tmp_path, records, **kwargs):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", records, **kwargs)], as_of=AS_OF)
    return rows(lake, "SELECT id, tenant, agent_id, user_id, context_id, session_id, tier, type, tags, importance, "
                      "created_at, updated_at, last_accessed_at, access_count, reference_count, expires_at, "
                      "version, status, operator, extra FROM memories ORDER BY id")


@pytest.mark.parametrize("spelling, tier", [
    ("working", "working"), ("short-term", "short_term"), ("short_term", "short_term"),
    ("shortTerm", "short_term"), ("Short Term", "short_term"), ("long-term", "long_term"),
    ("LONG_TERM", "long_term"), ("longTerm", "long_term"), ("important", "important"),
])
def test_tier_spellings(lake, tmp_path, spelling, tier):
    (row,) = land(lake, tmp_path, [{"id": "m", "tenant": "t", "content": "c", "tier": spelling}])
    assert row["tier"] == tier


def test_camel_case_keys_numbers_as_ids_and_timestamp_forms(lake, tmp_path):
    (row,) = land(lake, tmp_path, [{
        "id": 42, "tenant": "t", "agentId": "bot", "userId": 7, "contextId": "ctx", "sessionId": "s1",
        "content": "c", "type": "Preferences", "tags": "single", "importance": 1,
        "createdAt": "2026-11-01T10:00:00+08:00", "updatedAt": 1798761600, "lastAccessedAt": "2026-11-02",
        "accessCount": 3, "referenceCount": 2.0, "expiresAt": "2027-01-01T00:00:00Z", "important": True,
    }])
    assert row == {
        "id": "42", "tenant": "t", "agent_id": "bot", "user_id": "7", "context_id": "ctx", "session_id": "s1",
        "tier": "important", "type": "preference", "tags": ["single"], "importance": 1.0,
        "created_at": datetime(2026, 11, 1, 2), "updated_at": datetime(2027, 1, 1, 0),
        "last_accessed_at": datetime(2026, 11, 2), "access_count": 3, "reference_count": 2,
        "expires_at": datetime(2027, 1, 1), "version": 1, "status": "active", "operator": "agent", "extra": None,
    }


def test_unknown_fields_go_to_extra_sorted_and_nulls_are_absent(lake, tmp_path):
    (row,) = land(lake, tmp_path, [{"id": "m", "tenant": "t", "content": "c", "zeta": {"a": [1, 2]},
                                    "alpha": "x", "gone": None, "summary": None}])
    assert row["extra"] == '{"alpha":"x","zeta":{"a":[1,2]}}'


def test_timestamps_before_creation_are_lifted_to_it(lake, tmp_path):
    (row,) = land(lake, tmp_path, [{"id": "m", "tenant": "t", "content": "c", "created_at": "2026-11-10T00:00:00Z",
                                    "updated_at": "2026-11-01T00:00:00Z"}])
    assert (row["updated_at"], row["last_accessed_at"]) == (datetime(2026, 11, 10), datetime(2026, 11, 10))


BAD = [
    ('{"tenant": "t", "content": "c", "tier": 3}', "wrong type", "tier must be text"),
    ('{"tenant": "t", "content": ["c"]}', "wrong type", "content must be text"),
    ('{"tenant": "t", "content": "c", "type": "musing"}', "unknown type", "type musing"),
    ('{"tenant": "t", "content": "c", "status": "lost"}', "unknown status", "status lost"),
    ('{"tenant": "t", "content": "c", "operator": "robot"}', "unknown operator", "operator robot"),
    ('{"tenant": "t", "content": "c", "version": 0}', "out of range", "version 0 is outside 1..9007199254740991"),
    ('{"tenant": "t", "content": "c", "version": 1.5}', "wrong type", "version must be an integer"),
    ('{"tenant": "t", "content": "c", "access_count": -1}', "out of range", "access_count -1 is outside 0..9007199254740991"),
    ('{"tenant": "t", "content": "c", "deleted": "yes"}', "wrong type", "deleted must be true or false"),
    ('{"tenant": "t", "content": "c", "expires_at": "soon"}', "bad timestamp", 'expires_at: "soon"'),
    ('{"tenant": "t", "deleted": true}', "missing id", "a forget request needs the id"),
    ('{"tenant": "  ", "content": "c"}', "missing tenant", "tenant is empty"),
    ('{"tenant": "t", "content": "   "}', "missing content", "content is required"),
    ('{"tenant": {"name": "t"}, "content": "c"}', "wrong type", "tenant must be text"),
    ('"just a string"', "bad JSON", "not a JSON object"),
]


def test_every_bad_record_gets_its_reason_and_detail(lake, tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [text for text, _, _ in BAD])
    report = lake.ingest([path], as_of=AS_OF).as_dict()
    assert report["quarantined"] == len(BAD)
    got = rows(lake, "SELECT line, reason, detail FROM quarantine ORDER BY line")
    assert got == [{"line": i, "reason": r, "detail": d} for i, (_, r, d) in enumerate(BAD, start=1)]


def test_duplicate_id_in_one_file_quarantines_the_later_line(lake, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "x", "tenant": "t", "content": "first"},
                                              {"tenant": "t", "content": "Same  TEXT"},
                                              {"id": "x", "tenant": "t", "content": "second"},
                                              {"tenant": "t", "content": "same text"}])
    lake.ingest([path], as_of=AS_OF)
    assert rows(lake, "SELECT content FROM memories ORDER BY content") == [{"content": "Same  TEXT"}, {"content": "first"}]
    got = rows(lake, "SELECT line, reason, detail FROM quarantine ORDER BY line")
    assert [(g["line"], g["reason"]) for g in got] == [(3, "duplicate id in file"), (4, "duplicate id in file")]
    assert got[0]["detail"] == "id x first seen on line 1"


def test_content_limit_is_configurable(tmp_path):
    from memory_lake import Lake

    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "memory-lake.toml").write_text("[ingest]\nmax_content_bytes = 10\n")
    lake = Lake.open(tmp_path / "lake", create=True)
    path = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "t", "content": "0123456789"},
                                              {"tenant": "t", "content": "中文十个字节"}])
    lake.ingest([path], as_of=AS_OF)
    assert rows(lake, "SELECT line, reason, detail FROM quarantine") == [
        {"line": 2, "reason": "content too large", "detail": "18 bytes > 10"}]
