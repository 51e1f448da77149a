"""Issue 41.3: a conversation transcript (seed 002's messages, JSON Lines) read into records by
``read_transcript``: whole rows of a small English and Chinese transcript, its broken lines kept as
rows for the contract to quarantine, the skipped messages counted by kind, the tenant rule, stable
ids, and ``is_transcript``'s view of a first line."""

from __future__ import annotations

import hashlib
import json

import duckdb
import pytest

from memory_lake.ingest.formats.transcript import NO_ROLE, NO_TENANT, is_transcript, message_key, read_transcript
from memory_lake.store import InputError

from ..conftest import AS_OF

MESSAGES = [
    {"role": "user", "content": "Hi there!", "ts": "2026-11-20T08:00:00Z", "session_id": "s1", "user_id": "alice",
     "agent_id": "coach"},
    {"role": "user", "content": "I'm allergic to peanuts.", "ts": 1763625600000, "session_id": "s1",
     "user_id": "alice", "agent_id": "coach", "id": "m-2"},
    {"role": "assistant", "content": "Noted. Any other allergies?", "ts": 1763625601, "session_id": "s1",
     "user_id": "alice", "agent_id": "coach"},
    {"role": "assistant", "content": "I'll remind you tomorrow at 9am to book the allergist.", "ts": 1763625602,
     "session_id": "s1", "user_id": "alice", "agent_id": "coach"},
    {"role": "user", "content": "Thanks, bye!", "session_id": "s1", "user_id": "alice", "agent_id": "coach"},
    {"role": "system", "content": "You are a helpful coach.", "session_id": "s2"},
    {"role": "human", "content": "你好！", "ts": "2026-11-21T10:00:00+08:00", "session_id": "s2", "user_id": "wangfang",
     "agent_id": "kefu", "tenant": "globex"},
    {"role": "human", "content": [{"type": "text", "text": "我下周二上午十点有个面试。"}], "ts": "1763690400000",
     "session_id": "s2", "userId": "wangfang", "agentId": "kefu", "turn_id": 7},
    {"role": "ai", "content": "祝你面试顺利！你准备得怎么样了？", "session_id": "s2", "user_id": "wangfang", "agent_id": "kefu"},
    {"role": "user", "content": "我最喜欢的电影是盗梦空间。", "session_id": "s2", "user_id": "wangfang", "agent_id": "kefu"},
    {"role": "user", "content": "法国的首都是哪里？", "session_id": "s2"},
]
BROKEN = {  # line -> text
    12: '{"role": "user", "content": "I love hiking", ',
    13: '["a", "list"]',
    14: '{"content": "I love hiking", "session_id": "s1"}',
    15: '{"role": "user", "content": 42, "session_id": "s1"}',
    16: '{"role": "user", "content": "   ", "session_id": "s1"}',
}


def transcript(blank_line: bool = True) -> bytes:
    lines = [json.dumps(m, ensure_ascii=False) for m in MESSAGES]
    if blank_line:
        lines.insert(1, "")  # blank lines are skipped; line numbers count them
    else:
        lines.insert(1, '{"role": "user", "content": "ok", "session_id": "s1"}')
    lines += [BROKEN[n] for n in sorted(BROKEN)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def mid(tenant: str, session: str, role: str, ts, content) -> str:
    """The documented id of a message without an id of its own: its role, time and content."""
    return tid(tenant, session, message_key(role, ts, content))


def tid(tenant: str, session: str, key: str) -> str:
    """The documented id: t_ + 32 hex digits of SHA-256 of tenant, session and the message's id or position."""
    return "t_" + hashlib.sha256(f"{tenant}\x1f{session}\x1f{key}".encode()).hexdigest()[:32]


def parsed(raw: str):
    """A record's JSON as a dict, a broken line as its text."""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, dict) and "id" in value else raw


def rows(data: bytes, tenant: str | None = "acme") -> tuple[list[dict], dict[str, int]]:
    frame, skipped = read_transcript(duckdb.connect(), data, {"tenant": tenant})
    assert frame.columns == ["line", "raw", "ok", "problem"]
    return [{**r, "raw": parsed(r["raw"])} for r in frame.iter_rows(named=True)], skipped


def test_worthy_messages_become_records_and_the_rest_are_counted():
    got, skipped = rows(transcript())
    assert got == [
        {"line": 3, "ok": True, "problem": None, "raw": {
            "id": tid("acme", "s1", "id:m-2"), "tenant": "acme", "agent_id": "coach", "user_id": "alice",
            "session_id": "s1", "content": "I'm allergic to peanuts.", "type": "fact", "importance": 0.9,
            "tier": "short_term", "created_at": "2025-11-20T08:00:00.000Z", "source": "transcript",
            "extra": {"transcript": {"turn_id": "m-2", "role": "user", "kind": "fact",
                                     "rule": "en.fact.health"}}}},
        {"line": 5, "ok": True, "problem": None, "raw": {
            "id": mid("acme", "s1", "assistant", 1763625602, "I'll remind you tomorrow at 9am to book the allergist."), "tenant": "acme", "agent_id": "coach", "user_id": "alice",
            "session_id": "s1", "content": "I'll remind you tomorrow at 9am to book the allergist.", "type": "todo",
            "importance": 0.8, "tier": "short_term", "created_at": 1763625602, "source": "transcript",
            "extra": {"transcript": {"turn_id": None, "role": "assistant", "kind": "commitment",
                                     "rule": "en.assistant.commitment+date"}}}},
        {"line": 9, "ok": True, "problem": None, "raw": {
            "id": tid("acme", "s2", "id:7"), "tenant": "acme", "agent_id": "kefu", "user_id": "wangfang",
            "session_id": "s2", "content": "我下周二上午十点有个面试。", "type": "todo", "importance": 0.85,
            "tier": "short_term", "created_at": "2025-11-21T02:00:00.000Z", "source": "transcript",
            "extra": {"transcript": {"turn_id": 7, "role": "user", "kind": "commitment",
                                     "rule": "zh.commitment.appointment+date"}}}},
        {"line": 11, "ok": True, "problem": None, "raw": {
            "id": mid("acme", "s2", "user", None, "我最喜欢的电影是盗梦空间。"), "tenant": "acme", "agent_id": "kefu", "user_id": "wangfang",
            "session_id": "s2", "content": "我最喜欢的电影是盗梦空间。", "type": "preference", "importance": 0.9,
            "tier": "short_term", "source": "transcript",
            "extra": {"transcript": {"turn_id": None, "role": "user", "kind": "preference",
                                     "rule": "zh.preference.favourite+strong"}}}},
        # the broken lines stay rows: the contract quarantines them with file and line
        {"line": 13, "ok": True, "problem": None, "raw": BROKEN[12]},  # bad JSON
        {"line": 14, "ok": True, "problem": None, "raw": BROKEN[13]},  # not an object
        {"line": 15, "ok": True, "problem": NO_ROLE, "raw": BROKEN[14]},  # no role
        {"line": 16, "ok": True, "problem": None, "raw": {  # content not text: "wrong type"
            "id": mid("acme", "s1", "user", None, 42), "tenant": "acme", "session_id": "s1", "content": 42}},
        {"line": 17, "ok": True, "problem": None, "raw": {  # blank content: "missing content"
            "id": mid("acme", "s1", "user", None, "   "), "tenant": "acme", "session_id": "s1"}},
    ]
    # a message's own tenant wins over --tenant (line 8's greeting is skipped, yet it names globex)
    assert skipped == {"assistant": 2, "pleasantry": 3, "question": 1, "system": 1}


def test_a_message_of_its_own_tenant_keeps_it():
    data = (json.dumps({"role": "user", "content": "I live in Shanghai.", "tenant": "globex", "session_id": "x"})
            + "\n").encode()
    (row,), skipped = rows(data, tenant="acme")
    assert (row["raw"]["tenant"], row["raw"]["id"], skipped) == ("globex", mid("globex", "x", "user", None, "I live in Shanghai."), {})


def test_without_a_tenant_anywhere_the_file_is_refused():
    data = (json.dumps({"role": "user", "content": "I love hiking.", "tenant": "globex"}) + "\n"
            + json.dumps({"role": "user", "content": "Hello"}) + "\n").encode()
    with pytest.raises(InputError) as caught:
        read_transcript(duckdb.connect(), data, {"tenant": None})
    assert str(caught.value) == f"{NO_TENANT} (line 2)"
    assert "--tenant T" in NO_TENANT
    # with --tenant the same file reads, and the message's own tenant still wins
    got, skipped = rows(data, tenant="acme")
    assert ([r["raw"]["tenant"] for r in got], skipped) == (["globex"], {"pleasantry": 1})


def test_the_same_transcript_gives_the_same_ids_and_a_grown_one_keeps_them():
    first, _ = rows(transcript())
    again, _ = rows(transcript())
    assert again == first
    # an earlier message of session s1 inserted: every message keeps its id, with an id of its own
    # or without (a stranger's transcript without ids got duplicates and swapped contents)
    grown, skipped = rows(transcript(blank_line=False))
    ids = {r["line"]: r["raw"]["id"] for r in grown if isinstance(r["raw"], dict)}
    assert [ids[n] for n in (3, 5, 9, 11)] == [first[k]["raw"]["id"] for k in range(4)]
    assert [r["raw"] for r in grown[:4]] == [r["raw"] for r in first[:4]]
    # the same message twice in a session: the second is its own memory
    twice = (json.dumps({"role": "user", "content": "I love tea.", "session_id": "s"}) + "\n") * 2
    (one, two), _ = rows(twice.encode())
    assert (one["raw"]["id"], two["raw"]["id"]) == (mid("acme", "s", "user", None, "I love tea."),
                                                    tid("acme", "s", message_key("user", None, "I love tea.") + "#2"))
    assert skipped == {"assistant": 2, "pleasantry": 4, "question": 1, "system": 1}


def test_bad_bytes_cost_their_line_and_an_empty_file_reads_empty():
    data = b'{"role": "user", "content": "I love tea.", "session_id": "s"}\n{"role": "user", "content": "caf\xe9"}\n'
    frame, skipped = read_transcript(duckdb.connect(), data, {"tenant": "acme"})
    assert [(r["line"], r["ok"], r["problem"]) for r in frame.iter_rows(named=True)] == [
        (1, True, None), (2, False, "byte 0xE9 at byte 33 of the line is not valid UTF-8")]
    assert skipped == {}
    frame, skipped = read_transcript(duckdb.connect(), b"", {"tenant": "acme"})
    assert (frame.height, frame.columns, skipped) == (0, ["line", "raw", "ok", "problem"], {})


@pytest.mark.parametrize(("first", "expected"), [
    ({"role": "user", "content": "hi"}, True),
    ({"role": "Assistant", "content": "hi", "ts": 1}, True),
    ({"role": "human", "content": [{"type": "text", "text": "hi"}], "session_id": "s"}, True),
    ({"role": "ai", "content": "hi", "type": "message"}, True),
    ({"role": "system", "content": ""}, True),
    ({"role": "tool", "content": "{}"}, False),  # a transcript starts with a person, the assistant or the system
    ({"role": "user"}, False),  # no content
    ({"content": "I love tea", "tenant": "acme"}, False),  # a memory record
    ({"role": "user", "content": "I love tea", "tier": "short_term"}, False),  # memory-only fields
    ({"role": "user", "content": "I love tea", "type": "preference"}, False),
    ({"role": "user", "content": "I love tea", "importance": 0.9}, False),
    ({"role": 3, "content": "hi"}, False),
])
def test_is_transcript(first, expected):
    assert is_transcript(first) is expected


def test_the_records_are_what_the_contract_takes(lake, tmp_path):
    """Until the transcript format is wired into ingest, its rows go through the JSON Lines path: the
    worthy messages land as they are, the broken ones are quarantined with their reasons."""
    frame, _ = read_transcript(duckdb.connect(), transcript(), {"tenant": "acme"})
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(frame.filter(frame["problem"].is_null())["raw"]) + "\n", encoding="utf-8")
    report = lake.ingest([path], as_of=AS_OF)
    assert (report.files[0].ingested, report.files[0].reasons) == (4, {"bad JSON": 2, "wrong type": 1,
                                                                       "missing content": 1})
    got = lake.sql("SELECT id, type, tier, importance, content, created_at::VARCHAR AS created_at, source "
                   "FROM memories ORDER BY content").to_dicts()
    assert got == [
        {"id": mid("acme", "s1", "assistant", 1763625602, "I'll remind you tomorrow at 9am to book the allergist."), "type": "todo", "tier": "short_term", "importance": 0.8,
         "content": "I'll remind you tomorrow at 9am to book the allergist.", "created_at": "2025-11-20 08:00:02",
         "source": "transcript"},
        {"id": tid("acme", "s1", "id:m-2"), "type": "fact", "tier": "short_term", "importance": 0.9,
         "content": "I'm allergic to peanuts.", "created_at": "2025-11-20 08:00:00", "source": "transcript"},
        {"id": tid("acme", "s2", "id:7"), "type": "todo", "tier": "short_term", "importance": 0.85,
         "content": "我下周二上午十点有个面试。", "created_at": "2025-11-21 02:00:00", "source": "transcript"},
        {"id": mid("acme", "s2", "user", None, "我最喜欢的电影是盗梦空间。"), "type": "preference", "tier": "short_term", "importance": 0.9,
         "content": "我最喜欢的电影是盗梦空间。", "created_at": "2026-11-30 00:00:00", "source": "transcript"},
    ]
    again = tmp_path / "again.jsonl"  # the same records in another file: nothing changes
    again.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    report = lake.ingest([again], as_of=AS_OF)
    assert (report.files[0].ingested, report.files[0].updated, report.files[0].unchanged) == (0, 0, 4)
