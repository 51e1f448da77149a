"""Queued decisions: written while the lake is busy, applied first by the next run, kept as the audit."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from memory_lake.maintain.decisions import apply_decisions, pending_decisions, queue_decision
from memory_lake.maintain.queue import canonical_decision
from memory_lake.maintain.forget import compact_database, forget
from memory_lake.store.errors import NotApplicable

from ..conftest import AS_OF, rows, unsigned, write_jsonl

LATER = datetime(2026, 12, 1)
RUN = datetime(2026, 12, 2)


def setup(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "diary", "tenant": "acme", "user_id": "alice", "content": "my secret diary ZEBRA-42"},
        {"id": "milk", "tenant": "acme", "user_id": "alice", "content": "buy milk on friday"},
        {"id": "vault", "tenant": "acme", "user_id": "carol", "tier": "important", "content": "vault code 7781"},
    ])], as_of=AS_OF)


def test_a_forget_queued_while_busy_is_applied_by_the_next_run_once(lake, tmp_path):
    setup(lake, tmp_path)
    with lake.writer():  # a held writer makes the lake busy even for this process's probe
        assert lake.is_busy()
        queued = Path(forget(lake, ids=["diary"], tenant="acme", reason="user asked", as_of=LATER)["queued"])
    assert not lake.is_busy()
    assert pending_decisions(lake) == [queued]
    assert rows(lake, "SELECT status FROM memories WHERE id = 'diary'") == [{"status": "active"}]
    original = queued.read_bytes()

    report = apply_decisions(lake, RUN, run_id="nightly-1")
    assert report.counts == {"applied": 1, "forgotten": 1, "resolved": 0, "refused": 0, "failed": 0, "left": 0}
    assert report.details["applied"] == [{"file": queued.name, "kind": "forget", "forgotten": ["diary"],
                                          "refused": [], "already_deleted": [], "unknown": []}]
    assert report.details["left"] == []
    assert (report.details["files"]["database"], report.details["compaction"]) == (["lake.duckdb"], "done")
    assert rows(lake, "SELECT id, status FROM memories ORDER BY id") == [
        {"id": "diary", "status": "deleted"}, {"id": "milk", "status": "active"}, {"id": "vault", "status": "active"}]
    # the audit: the run's time and id, the requester's operator and reason, and the decision file
    assert rows(lake, "SELECT memory_id, operator, reason, as_of, run_id, source_file FROM memory_history "
                      "WHERE change = 'forget'") == [
        {"memory_id": "diary", "operator": "user", "reason": "user asked", "as_of": RUN, "run_id": "nightly-1",
         "source_file": f"inbox/decisions/{queued.name}"}]
    assert b"ZEBRA" not in (lake.root / rows(lake, "SELECT raw_path FROM ingested_files")[0]["raw_path"]).read_bytes()
    applied = lake.decisions / "applied" / queued.name
    assert not queued.exists() and applied.read_bytes() == original
    assert pending_decisions(lake) == []

    # a second run has nothing to do
    again = apply_decisions(lake, RUN, run_id="nightly-2")
    assert (again.counts, again.summary) == ({}, "nothing to do")

    # the same decision dropped again changes nothing, and the audit keeps one copy
    history = rows(lake, "SELECT * FROM memory_history ORDER BY seq")
    shutil.copy(applied, queued)
    replay = apply_decisions(lake, RUN, run_id="nightly-3")
    assert replay.counts == {"applied": 1, "forgotten": 0, "resolved": 0, "refused": 0, "failed": 0, "left": 0}
    assert replay.details["applied"][0]["already_deleted"] == ["diary"]
    assert "database" not in replay.details["files"] and "compaction" not in replay.details
    assert rows(lake, "SELECT * FROM memory_history ORDER BY seq") == history
    assert [p.name for p in (lake.decisions / "applied").iterdir()] == [queued.name]


def test_decisions_apply_in_name_order_and_bad_ones_stay(lake, tmp_path):
    setup(lake, tmp_path)
    first = queue_decision(lake, {"kind": "forget", "ids": ["milk"], "tenant": None, "agent": None, "user": None,
                                  "operator": "user", "reason": "first", "requested_at": "2026-12-01T00:00:00Z"},
                           datetime(2026, 12, 1, 8))
    assert re.fullmatch(r"20261201T080000-forget-[0-9a-f]{8}\.json", first.name)
    second = queue_decision(lake, {"kind": "forget", "tenant": "acme", "operator": "agent", "reason": "tidy"},
                            datetime(2026, 12, 1, 9))
    (lake.decisions / "20261201T070000-split-0000abcd.json").write_text('{"kind": "split", "id": 3}')
    (lake.decisions / "20261201T071000-forget-broken.json").write_text('{"kind": "forget", ')
    # signed as the CLI signs, yet no reason: the lake never applies it
    noreason = {"kind": "forget", "ids": ["vault"]}
    noreason["signature"] = lake.sign(canonical_decision(noreason))
    (lake.decisions / "20261201T072000-forget-noreason.json").write_text(json.dumps(noreason))
    (lake.decisions / ".20261201T073000-forget-inprogress.json.tmp").write_text("{")

    report = apply_decisions(lake, RUN, run_id="nightly-1")
    assert report.counts == {"applied": 2, "forgotten": 2, "resolved": 0, "refused": 1, "failed": 0, "left": 3}
    assert report.details["applied"] == [
        {"file": first.name, "kind": "forget", "forgotten": ["milk"], "refused": [], "already_deleted": [],
         "unknown": []},
        # the scope form, asked by an agent: the important memory is refused, the rest forgotten
        {"file": second.name, "kind": "forget", "forgotten": ["diary"],
         "refused": [{"id": "vault", "reason": "important memory needs operator user"}], "already_deleted": [],
         "unknown": []}]
    assert report.details["left"] == [
        {"file": "20261201T070000-split-0000abcd.json", "reason": "unknown kind 'split'"},
        {"file": "20261201T071000-forget-broken.json", "reason": "bad decision: not a JSON document (JSONDecodeError)"},
        {"file": "20261201T072000-forget-noreason.json",
         "reason": "bad decision: forget needs a reason (it is kept in the audit history)"}]
    assert [p.name for p in pending_decisions(lake)] == [
        "20261201T070000-split-0000abcd.json", "20261201T071000-forget-broken.json",
        "20261201T072000-forget-noreason.json"]
    assert sorted(p.name for p in (lake.decisions / "applied").iterdir()) == [first.name, second.name]
    assert rows(lake, "SELECT memory_id, reason FROM memory_history WHERE change = 'forget' ORDER BY seq") == [
        {"memory_id": "milk", "reason": "first"}, {"memory_id": "diary", "reason": "tidy"}]
    assert rows(lake, "SELECT status FROM memories WHERE id = 'vault'") == [{"status": "active"}]
    # the ones left are reported again next time, and nothing else happens
    assert apply_decisions(lake, RUN).counts == {"applied": 0, "forgotten": 0, "resolved": 0, "refused": 0, "failed": 0,
                                                 "left": 3}


def test_inside_a_run_decisions_apply_under_the_runs_hold(lake, tmp_path):
    setup(lake, tmp_path)
    queue_decision(lake, {"kind": "forget", "ids": ["diary"], "reason": "r"}, LATER)
    with lake.hold("nightly run"):
        report = apply_decisions(lake, RUN)
        assert (report.counts["forgotten"], report.details["compaction"]) == (1, "pending")
    assert unsigned(lake, json.loads(next((lake.decisions / "applied").iterdir()).read_text())) == {
        "kind": "forget", "ids": ["diary"], "reason": "r"}
    assert b"ZEBRA" in lake.db_path.read_bytes()  # until the run compacts after its hold
    assert compact_database(lake, only_if_pending=True)
    assert b"ZEBRA" not in lake.db_path.read_bytes()


# ---------------------------------------------------------------- decisions that cannot apply
def conflict_on_milk(lake, tmp_path) -> str:
    """An open write conflict: two agents changed `milk` from version 1."""
    setup(lake, tmp_path)
    for name, text in (("a.jsonl", "buy oat milk on friday"), ("b.jsonl", "buy soy milk on friday")):
        lake.ingest([write_jsonl(tmp_path / name, [{"id": "milk", "tenant": "acme", "user_id": "alice",
                                                    "content": text, "version": 1}])], as_of=AS_OF)
    (conflict_id,) = lake.conflicts()["conflict_id"].to_list()
    return conflict_id


def test_a_resolution_is_checked_against_the_published_version_before_it_is_queued(lake, tmp_path, capsys):
    from memory_lake.cli import main

    conflict_id = conflict_on_milk(lake, tmp_path)
    lake.resolve_conflict(conflict_id, "lake", as_of=LATER)
    lake.publish(as_of=LATER)
    with lake.writer():  # a run holds the lake: reads answer from the published version
        with pytest.raises(NotApplicable, match=rf"^conflict {conflict_id} is already resolved \(lake by user at "
                                                r"2026-12-01T00:00:00Z\)"):
            lake.resolve_conflict(conflict_id, "incoming", as_of=RUN)
        with pytest.raises(NotApplicable, match=r"^unknown conflict id 'c0ffee': the lake is busy \(a run holds it\), "
                                                r"and published v1, the latest published version, holds no such"):
            lake.resolve_conflict("c0ffee", "lake", as_of=RUN)
        assert main(["--lake", str(lake.root), "conflicts", "resolve", "c0ffee", "--take", "lake"]) == 2
    assert "unknown conflict id 'c0ffee'" in capsys.readouterr().err
    assert pending_decisions(lake) == []


def test_decisions_the_lake_refuses_when_applied_move_to_failed_with_their_reason(lake, tmp_path):
    conflict_id = conflict_on_milk(lake, tmp_path)
    lake.publish(as_of=AS_OF)  # publishes the conflict as open
    with lake.writer():  # checked against the published version: open, so both are queued
        resolved_since = Path(lake.resolve_conflict(conflict_id, "incoming", as_of=LATER)["queued"])
    lake.resolve_conflict(conflict_id, "lake", as_of=LATER)  # someone else decides before the next run
    unknown = queue_decision(lake, {"kind": "resolve", "conflict_id": "c0ffee", "take": "lake", "operator": "user"},
                             datetime(2026, 12, 1, 9))  # a file nothing checked
    no_merge = queue_decision(lake, {"kind": "unmerge", "canonical_id": "milk", "operator": "user"},
                              datetime(2026, 12, 1, 10))
    before = rows(lake, "SELECT * FROM memories ORDER BY id")

    report = apply_decisions(lake, RUN, run_id="nightly-1")
    assert report.counts == {"applied": 0, "forgotten": 0, "resolved": 0, "refused": 0, "failed": 3, "left": 0}
    reasons = [
        {"file": resolved_since.name, "kind": "resolve",
         "reason": f"conflict {conflict_id} is already resolved (lake by user at 2026-12-01T00:00:00Z); "
                   "see `memory-lake conflicts list --all`"},
        {"file": unknown.name, "kind": "resolve",
         "reason": "unknown conflict id 'c0ffee': the lake holds no such conflict (see `memory-lake conflicts list --all`)"},
        {"file": no_merge.name, "kind": "unmerge",
         "reason": "milk is not the canonical memory of a merge (see `memory-lake dedup --dry-run` or the "
                   "dedup_merges table)"}]
    assert report.details["failed"] == reasons
    assert rows(lake, "SELECT * FROM memories ORDER BY id") == before
    assert pending_decisions(lake) == [] and not (lake.decisions / "applied").exists()
    failed = {p.name: json.loads(p.read_text()) for p in (lake.decisions / "failed").iterdir()}
    assert unsigned(lake, failed[unknown.name]) == {"kind": "resolve", "conflict_id": "c0ffee", "take": "lake", "operator": "user",
                                    "failure": {"reason": reasons[1]["reason"], "as_of": "2026-12-02T00:00:00Z",
                                                "run_id": "nightly-1"}}
    assert sorted(failed) == sorted(r["file"] for r in reasons)
    assert [f["failure"]["reason"] for f in (failed[r["file"]] for r in reasons)] == [r["reason"] for r in reasons]
    # never retried: the next run has nothing to do
    assert apply_decisions(lake, RUN).summary == "nothing to do"


def test_a_resolution_queued_before_its_memory_was_forgotten_fails(lake, tmp_path):
    conflict_id = conflict_on_milk(lake, tmp_path)
    lake.publish(as_of=AS_OF)
    with lake.writer():
        queued = Path(lake.resolve_conflict(conflict_id, "incoming", as_of=LATER)["queued"])
    forget(lake, ids=["milk"], tenant="acme", reason="user asked", as_of=LATER)
    report = apply_decisions(lake, RUN, run_id="nightly-1")
    assert (report.counts["failed"], report.counts["applied"], report.counts["resolved"]) == (1, 0, 0)
    assert report.details["failed"] == [{
        "file": queued.name, "kind": "resolve",
        "reason": f"conflict {conflict_id} is already resolved: closed when its memory was forgotten "
                  "(by user at 2026-12-01T00:00:00Z); nothing is left to decide"}]
    assert rows(lake, "SELECT status, version FROM memories WHERE id = 'milk'") == [{"status": "deleted", "version": 3}]
