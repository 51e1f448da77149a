"""Housekeeping (issue 14 item 6): retention prunes old raw copies, consumed event files and old
reports, never a table; merge, unmerge, forget and re-ingest still work after pruning."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from memory_lake.maintain import apply_events, dedup, forget, housekeeping

from ..conftest import AS_OF, rows, write_jsonl
from .test_dedup import build

OLD = AS_OF - timedelta(days=40)
RECENT = AS_OF - timedelta(days=1)
KEPT_TABLES = ("memory_history", "ingested_files", "conflicts", "quarantine", "retrieval_log")


def tables(lake) -> dict[str, list[dict]]:
    return {t: rows(lake, f"SELECT * FROM {t} ORDER BY ALL") for t in KEPT_TABLES}


def test_retention_prunes_old_files_and_merge_unmerge_forget_reingest_still_work(lake, tmp_path):
    # an old snapshot (the dedup fixture's memories), sent through the inbox 40 days ago
    build(lake, tmp_path / "src")  # its own file, not in the inbox, ingested at AS_OF: kept
    old_snapshot = write_jsonl(lake.inbox / "old.jsonl", [
        {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "type": "fact", "id": "o1",
         "content": "The standup is at nine", "created_at": "2026-10-01T00:00:00Z"}])
    old_bytes = old_snapshot.read_bytes()
    old_hash = hashlib.sha256(old_bytes).hexdigest()
    lake.ingest([old_snapshot], as_of=OLD)
    assert not old_snapshot.exists() and (lake.raw / f"{old_hash}.jsonl").is_file()
    recent = write_jsonl(tmp_path / "recent.jsonl", [
        {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "type": "fact", "id": "r1",
         "content": "Lunch is at noon", "created_at": "2026-11-28T00:00:00Z"}])
    lake.ingest([recent], as_of=RECENT)
    recent_hash = hashlib.sha256(recent.read_bytes()).hexdigest()
    # an agent's event file, consumed 40 days ago, and a search log still being written
    event_line = json.dumps({"ts": "2026-10-21T00:00:00Z", "tenant": "acme", "event": "access", "memory_id": "o1"})
    (lake.inbox / "agent.events.jsonl").write_text(event_line + "\n", encoding="utf-8")
    assert apply_events(lake, OLD).counts["access_events"] == 1
    (agent_file,) = [p.name for p in lake.events.glob("inbox-*.jsonl")]
    assert housekeeping(lake, OLD).counts == {"raw_copies_pruned": 0, "event_files_pruned": 0, "reports_pruned": 0}
    (lake.events / "searches-2026-11-29.jsonl").write_text('{"search_id": "s1"', encoding="utf-8")  # no newline yet
    reports = lake.root / "reports"  # the lake's own folder: reports there without a lake mark are its own
    reports.mkdir()
    for day in ("2026-10-30", "2026-10-31", "2026-11-29"):
        (reports / f"health-{day}.html").write_text("<html></html>", encoding="utf-8")
    (reports / "notes.html").write_text("mine", encoding="utf-8")
    before = tables(lake)

    report = housekeeping(lake, AS_OF)

    assert report.as_dict()["counts"] == {"raw_copies_pruned": 1, "event_files_pruned": 1, "reports_pruned": 1}
    assert report.details == {"retention_days": 30, "cutoff": "2026-10-31T00:00:00Z",
                              "raw": [f"raw/{old_hash}.jsonl"], "events": [f"events/{agent_file}"],
                              "reports": [str(reports / "health-2026-10-30.html")]}
    assert sorted(p.name for p in lake.raw.iterdir()) == sorted(
        [f"{recent_hash}.jsonl", f"{hashlib.sha256((tmp_path / 'src' / 'm.jsonl').read_bytes()).hexdigest()}.jsonl"])
    assert sorted(p.name for p in lake.events.iterdir()) == ["searches-2026-11-29.jsonl"]
    assert sorted(p.name for p in reports.iterdir()) == ["health-2026-10-31.html", "health-2026-11-29.html", "notes.html"]
    assert tables(lake) == before  # history, the file registry, conflicts ... never pruned
    assert housekeeping(lake, AS_OF, reports_dir=reports).counts == {
        "raw_copies_pruned": 0, "event_files_pruned": 0, "reports_pruned": 0}  # idempotent

    # re-ingest: the re-sent old snapshot is recognised (and leaves the inbox), its event file too
    (lake.inbox / "old.jsonl").write_bytes(old_bytes)
    again = lake.ingest(as_of=AS_OF)
    assert [f.status for f in again.files] == ["already ingested"]
    assert not (lake.inbox / "old.jsonl").exists()
    (lake.inbox / "agent.events.jsonl").write_text(event_line + "\n", encoding="utf-8")
    assert apply_events(lake, AS_OF).counts == {}
    assert rows(lake, "SELECT access_count FROM memories WHERE id = 'o1'") == [{"access_count": 1}]

    # merge and unmerge: history images, not raw copies
    memories = rows(lake, "SELECT * FROM memories ORDER BY id")
    assert dedup(lake, AS_OF).counts["merged"] == 2
    assert sorted(lake.unmerge("a2", as_of=AS_OF)["restored"]) == ["a1", "a2", "a3"]
    assert rows(lake, "SELECT * FROM memories ORDER BY id") == memories

    # forget reaches what is left and tolerates the pruned copy
    forget(lake, ids=["o1"], reason="user asked", as_of=AS_OF)
    assert rows(lake, "SELECT status FROM memories WHERE id = 'o1'") == [{"status": "deleted"}]


def test_zero_days_keeps_everything(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [{"tenant": "acme", "content": "x", "id": "m1"}])], as_of=OLD)
    lake = type(lake).open(lake.root, policy_overrides={"retention": {"days": 0}})
    report = housekeeping(lake, AS_OF)
    assert (report.counts, report.details["note"]) == ({}, "retention is off (days = 0): nothing is pruned")
    assert len(list(lake.raw.iterdir())) == 1


def test_housekeeping_prunes_only_this_lakes_reports_from_a_shared_folder(lake, tmp_path, monkeypatch):
    """Two lakes writing reports to one folder (--reports DIR): one lake's retention pruned the
    other's reports there. Each report names its lake; only this lake's old reports go."""
    from memory_lake import Lake
    from memory_lake.observe import write_report
    from memory_lake.store import resolve_as_of

    monkeypatch.delenv("MEMORY_LAKE_REPORTS", raising=False)
    other = Lake.init(tmp_path / "other")
    shared = tmp_path / "shared"
    for owner, day in ((lake, "2026-10-01"), (other, "2026-10-02"), (lake, "2026-11-29"), (other, "2026-11-28")):
        write_report(owner, resolve_as_of(day), f"r-{day}", None, shared)
    own = write_report(lake, resolve_as_of("2026-10-03"), "r-own", None).details["path"]  # the default: <lake>/reports
    theirs = write_report(other, resolve_as_of("2026-10-03"), "r-theirs", None).details["path"]
    assert own == str(lake.root.resolve() / "reports" / "2026-10-03" / "r-own.html")
    assert theirs == str(other.root.resolve() / "reports" / "2026-10-03" / "r-theirs.html")
    legacy = shared / "health-2026-10-04.html"  # a report from before reports named their lake: unknown owner
    legacy.write_text("<html></html>", encoding="utf-8")

    report = housekeeping(lake, AS_OF)

    # this lake's pages older than the cutoff go, with the date folders they leave empty
    assert report.details["reports"] == [own, str(shared.resolve() / "2026-10-01" / "r-2026-10-01.html")]
    assert sorted(p.name for p in shared.iterdir()) == [
        "2026-10-02", "2026-11-28", "2026-11-29", "health-2026-10-04.html", "index.html"]
    assert sorted(p.name for p in (other.root / "reports").iterdir()) == ["2026-10-03", "index.html"]
    assert sorted(p.name for p in (lake.root / "reports").iterdir()) == ["index.html"]
    assert housekeeping(other, AS_OF).details["reports"] == [
        theirs, str(shared.resolve() / "2026-10-02" / "r-2026-10-02.html")]
