"""Issue 41.3 wired into ingest: a chat transcript (JSON Lines of messages) is found by its first
line, its worthy messages land as memories (whole rows), the rest are counted as skipped, its
broken lines are quarantined with their lines and reasons while the rest lands, the same file
again is a no-op and a transcript that grew keeps its earlier memories unchanged."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..conftest import AS_OF

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"


def tid(tenant: str, session: str, turn_id: str) -> str:
    return "t_" + hashlib.sha256(f"{tenant}\x1f{session}\x1fid:{turn_id}".encode()).hexdigest()[:32]


def rows(lake) -> list[dict]:
    found = lake.sql("SELECT id, tenant, agent_id, user_id, session_id, tier, type, status, content, importance, "
                     "strftime(created_at, '%Y-%m-%dT%H:%M:%SZ') AS created_at, source, version, extra "
                     "FROM memories ORDER BY created_at, id").to_dicts()
    return [{**r, "extra": json.loads(r["extra"])} for r in found]


def turn(n: int, turn_id: str, role: str, kind: str, rule: str) -> dict:
    """extra of the memory of line `n` (the line itself is in the memory's history row)."""
    return {"transcript": {"turn_id": turn_id, "role": role, "kind": kind, "rule": rule}}


def test_a_transcript_lands_its_worthy_messages_and_counts_the_rest(lake):
    report = lake.ingest([DATA / "transcript.jsonl"], as_of=AS_OF, tenant="acme")
    (done,) = report.files
    assert (done.format, done.status, done.records, done.ingested, done.quarantined, done.skipped) == (
        "transcript", "ingested", 5, 5, 0, {"assistant": 1, "pleasantry": 4})
    coach = {"tenant": "acme", "agent_id": "coach", "user_id": "alice", "session_id": "s-101", "tier": "short_term",
             "status": "active", "source": "transcript", "version": 1}
    kefu = {**coach, "agent_id": "kefu", "user_id": "wangfang", "session_id": "s-202"}
    assert rows(lake) == [
        {**kefu, "id": tid("acme", "s-202", "m7"), "type": "todo", "importance": 0.95,
         "content": "我下周二上午十点有个面试，记得提醒我。", "created_at": "2025-11-21T02:00:00Z",
         "extra": turn(7, "m7", "user", "commitment", "zh.commitment.appointment+date+remember")},
        {**kefu, "id": tid("acme", "s-202", "m8"), "type": "preference", "importance": 0.9,
         "content": "我最喜欢的电影是盗梦空间。", "created_at": "2025-11-21T02:01:40Z",
         "extra": turn(8, "m8", "user", "preference", "zh.preference.favourite+strong")},
        {**kefu, "id": tid("acme", "s-202", "m9"), "type": "todo", "importance": 0.8,
         "content": "好的，我会在周一晚上提醒你。", "created_at": "2025-11-21T02:03:20Z",
         "extra": turn(9, "m9", "assistant", "commitment", "zh.assistant.commitment+date")},
        {**coach, "id": tid("acme", "s-101", "m3"), "type": "fact", "importance": 0.9,
         "content": "I'm allergic to peanuts, so please never suggest recipes with them.",
         "created_at": "2026-11-20T08:01:00Z", "extra": turn(3, "m3", "user", "fact", "en.fact.health")},
        {**coach, "id": tid("acme", "s-101", "m4"), "type": "decision", "importance": 0.8,
         "content": "We decided to move the team offsite to March 3rd.", "created_at": "2026-11-20T08:02:00Z",
         "extra": turn(4, "m4", "user", "decision", "en.decision.decided")},
    ]
    assert report.as_dict()["formats"] == {"transcript": {
        "files": 1, "records": 5, "ingested": 5, "updated": 0, "unchanged": 0, "quarantined": 0, "reasons": {},
        "skipped": {"assistant": 1, "pleasantry": 4}}}
    again = lake.ingest([DATA / "transcript.jsonl"], as_of=AS_OF, tenant="acme")
    assert [(f.status, f.ingested, f.updated) for f in again.files] == [("already ingested", 0, 0)]
    assert len(rows(lake)) == 5


def test_a_transcript_that_grew_keeps_its_memories_and_adds_the_new_ones(lake, tmp_path):
    lake.ingest([DATA / "transcript.jsonl"], as_of=AS_OF, tenant="acme")
    before = rows(lake)
    grown = tmp_path / "transcript.jsonl"
    more = {"id": "m11", "role": "user", "content": "I prefer tea over coffee.",
            "ts": "2026-11-20T09:00:00Z", "session_id": "s-101", "user_id": "alice", "agent_id": "coach"}
    grown.write_text((DATA / "transcript.jsonl").read_text(encoding="utf-8") + json.dumps(more) + "\n",
                     encoding="utf-8")
    report = lake.ingest([grown], as_of=AS_OF, tenant="acme")
    assert [(f.ingested, f.updated, f.unchanged) for f in report.files] == [(1, 0, 5)]
    after = rows(lake)
    assert [r for r in after if r["id"] != tid("acme", "s-101", "m11")] == before
    assert [r["content"] for r in after if r["id"] == tid("acme", "s-101", "m11")] == [more["content"]]


def test_a_broken_transcript_quarantines_its_bad_lines_and_lands_the_rest(lake):
    report = lake.ingest([DATA / "transcript_broken.jsonl"], as_of=AS_OF, tenant="acme")
    assert [(f.format, f.ingested, f.quarantined, f.skipped) for f in report.files] == [
        ("transcript", 2, 4, {"pleasantry": 1})]
    assert lake.sql("SELECT line, reason, detail FROM quarantine ORDER BY line").rows() == [
        (2, "bad JSON", "not valid JSON: Expecting property name enclosed in double quotes at column 77"),
        (3, "bad JSON", "not a transcript message: it has no role (user, assistant, system ...)"),
        (4, "wrong type", "content must be text"),
        (5, "bad timestamp", 'created_at: "not a time"')]
    assert [(r["content"], r["type"], r["importance"]) for r in rows(lake)] == [
        ("我对青霉素过敏。", "fact", 0.9), ("My sister Emma lives in Lisbon.", "fact", 0.7)]


def test_a_transcript_in_the_inbox_takes_its_tenant_from_the_folder_or_is_refused_saying_how(lake):
    (lake.inbox / "chat.jsonl").write_bytes((DATA / "transcript.jsonl").read_bytes())
    refused = lake.ingest(None, as_of=AS_OF)
    assert [(f.format, f.status) for f in refused.files] == [("transcript", "unreadable")]
    assert refused.files[0].error == (
        'a transcript message carries no tenant: give each message a "tenant", ingest the file with '
        "`memory-lake ingest FILE --tenant T` (the tenant its memories belong to), or drop it in the inbox in a "
        "folder named `tenant=T` (line 1)")
    (lake.inbox / "tenant=acme").mkdir()
    (lake.inbox / "chat.jsonl").rename(lake.inbox / "tenant=acme" / "chat.jsonl")
    landed = lake.ingest(None, as_of=AS_OF)
    assert [(f.format, f.status, f.ingested) for f in landed.files] == [("transcript", "ingested", 5)]
    assert lake.sql("SELECT DISTINCT tenant FROM memories").rows() == [("acme",)]


def test_a_memory_snapshot_with_a_role_field_is_not_taken_for_a_transcript(lake, tmp_path):
    """Our own JSON Lines may carry "role" in a record; a field only a memory has keeps it a snapshot."""
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"tenant": "acme", "role": "user", "content": "Hi there", "tier": "working"}) + "\n",
                   encoding="utf-8")
    report = lake.ingest([own], as_of=AS_OF)
    assert [(f.format, f.ingested) for f in report.files] == [("jsonl", 1)]
    assert lake.sql("SELECT content, tier FROM memories").rows() == [("Hi there", "working")]


def test_format_transcript_can_be_forced_and_dry_run_writes_nothing(lake, tmp_path):
    plain = tmp_path / "messages.ndjson"
    plain.write_text(json.dumps({"role": "user", "content": "I love hiking in the Alps.", "tier": "x"}) + "\n",
                     encoding="utf-8")
    dry = lake.ingest([plain], as_of=AS_OF, tenant="acme", fmt="transcript", dry_run=True)
    assert [(f.format, f.status, f.ingested) for f in dry.files] == [("transcript", "dry run", 1)]
    assert lake.sql("SELECT count(*) FROM memories").item() == 0
    assert lake.sql("SELECT count(*) FROM ingested_files").item() == 0


def test_dry_run_of_a_folder_says_per_format_what_would_land_be_quarantined_and_skipped(tmp_path, capsys):
    import shutil

    from memory_lake import Lake
    from memory_lake.cli import main

    Lake.init(tmp_path / "lake")
    folder = tmp_path / "drop"
    folder.mkdir()
    for name in ("transcript_broken.jsonl", "letta_passages.json", "zep_facts_broken.json"):
        shutil.copy(DATA / name, folder / name)
    assert main(["--lake", str(tmp_path / "lake"), "ingest", str(folder), "--tenant", "acme", "--agent", "a",
                 "--dry-run", "--as-of", "2026-11-30T00:00:00Z"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "would ingest 3 file(s): 11 new, 0 updated, 0 unchanged, 0 forgotten, 6 quarantined",
        "  letta: 1 file(s), 6 new, 0 updated, 0 unchanged, 0 quarantined, 2 skipped",
        "    skipped, not memories: 1 deleted, 1 file chunk",
        "  transcript: 1 file(s), 2 new, 0 updated, 0 unchanged, 4 quarantined, 1 skipped",
        "    quarantined: 2 × bad JSON",
        "    quarantined: 1 × bad timestamp",
        "    quarantined: 1 × wrong type",
        "    skipped, not memories: 1 pleasantry",
        "  zep: 1 file(s), 3 new, 0 updated, 0 unchanged, 2 quarantined",
        "    quarantined: 1 × bad timestamp",
        "    quarantined: 1 × missing content"]
    lake = Lake.open(tmp_path / "lake")
    assert lake.sql("SELECT count(*) FROM memories").item() == 0 and lake.sql("SELECT count(*) FROM quarantine").item() == 0


def test_a_transcript_without_message_ids_keeps_its_memories_when_a_message_is_put_before_them(lake, tmp_path):
    """A stranger's transcript without ids, then the same with "I prefer tea over coffee." first: it
    gave 2 new and 6 updated (ids by position: contents swapped between memories, versions bumped
    for a moved line). Now: the new message is new, every other memory unchanged at version 1."""
    messages = [{k: v for k, v in json.loads(line).items() if k != "id"}
                for line in (DATA / "transcript.jsonl").read_text(encoding="utf-8").splitlines()]
    plain = tmp_path / "a.jsonl"
    plain.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages), encoding="utf-8")
    lake.ingest([plain], as_of=AS_OF, tenant="acme")
    before = {r["id"]: r for r in rows(lake)}
    first = {**messages[0], "content": "I prefer tea over coffee."}
    plain.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in [first, *messages]), encoding="utf-8")
    report = lake.ingest([plain], as_of=AS_OF, tenant="acme")
    assert [(f.ingested, f.updated, f.unchanged) for f in report.files] == [(1, 0, 5)]
    after = {r["id"]: r for r in rows(lake)}
    assert {i: r for i, r in after.items() if i in before} == before
    assert [r["content"] for i, r in after.items() if i not in before] == ["I prefer tea over coffee."]
