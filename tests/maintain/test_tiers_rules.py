"""Tier rules, the parts the first tests left thin (issue 19, surviving mutants): when a memory
entered short_term, where "referenced since the last run" starts, the audit images of status moves
and of a restore, the run ids a caller gets, integer-valued policy numbers, the cleanup log's
encoding and the name a busy lake gives for the tier run; then the mutants around them: which
statuses each rule takes, tie-breaks of the capacity orders, per-agent scopes, system summaries,
access versus reference, the archive-suggestion flag's removal and switch."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta

import pytest

from memory_lake import Lake
from memory_lake.maintain.events import apply_events
from memory_lake.maintain.tiers import CLEANUP_LOG_FILE, append_cleanup_log, enforce_tiers, restore_memories
from memory_lake.observe.runs import record_run
from memory_lake.store import LakeBusy

from ..conftest import AS_OF, ASCII_LOCALE, code_env, rows, write_jsonl
from .test_tiers import SECOND, land, memory, moves, state, z


def history(lake, memory_id: str) -> list[dict]:
    return rows(lake, "SELECT memory_id, version, change, changed_fields, operator, run_id, reason, as_of, before, after "
                      "FROM memory_history WHERE memory_id = ? AND change <> 'insert' ORDER BY seq", [memory_id])


@pytest.mark.parametrize("later, consolidated", [
    (timedelta(0), False),                       # moved to short_term in this very run: 0 h there
    (timedelta(hours=12), False),
    (timedelta(hours=24), False),                # exactly 24 h since it entered short_term
    (timedelta(hours=24) + SECOND, True),
])
def test_consolidate_counts_from_when_the_memory_entered_short_term(lake, tmp_path, later, consolidated):
    """A working memory created three days ago that overflows into short_term now has spent no time
    there: its 24 h start at the move, not at its creation."""
    records = [memory(f"w{i:02d}", "working", created=timedelta(hours=2), accessed=timedelta(minutes=30 - i))
               for i in range(1, 21)]
    records.append(memory("w00", "working", created=timedelta(days=3), accessed=timedelta(hours=1), importance=0.8))
    land(lake, tmp_path, records)
    assert moves(enforce_tiers(lake, AS_OF)) == {"working_overflow": 1}
    assert state(lake, "tier <> 'working'") == {"w00": ("short_term", "active")}
    report = enforce_tiers(lake, AS_OF + later)
    assert moves(report) == ({"consolidate": 1} if consolidated else {})
    assert state(lake, "tier <> 'working'") == {"w00": ("long_term" if consolidated else "short_term", "active")}


@pytest.mark.parametrize("previous_nightly, referenced, recalled", [
    (timedelta(hours=48), timedelta(hours=36), True),    # after the last run, though older than the default 24 h
    (timedelta(hours=6), timedelta(hours=12), False),    # within 24 h, but before the last run: already seen
    (timedelta(hours=6), timedelta(hours=6), False),     # at the last run: that run saw it
    (None, timedelta(hours=24), False),                  # exactly 24 h ago: not within the default window
    (None, timedelta(hours=12), True),                   # no nightly run yet: the default window of 24 h
    (None, timedelta(hours=36), False),
])
def test_long_term_recall_looks_back_to_the_previous_nightly_run(lake, tmp_path, previous_nightly, referenced,
                                                                recalled):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        memory("old", "long_term", created=timedelta(days=40), accessed=timedelta(days=3))])],
        as_of=AS_OF - timedelta(days=3))
    write_jsonl(lake.inbox / "use.events.jsonl", [
        {"ts": z(AS_OF - referenced - SECOND), "tenant": "acme", "event": "reference", "memory_id": "old"}])
    apply_events(lake, AS_OF - referenced)
    if previous_nightly is not None:
        record_run(lake, "nightly-before", "nightly", AS_OF - previous_nightly, [])
    record_run(lake, "ingest-later", "ingest", AS_OF - timedelta(hours=1), [])   # not a nightly run: no start
    assert moves(enforce_tiers(lake, AS_OF)) == ({"long_term_recall": 1} if recalled else {})
    assert state(lake) == {"old": ("short_term" if recalled else "long_term", "active")}


def test_status_moves_leave_a_history_row_with_the_new_status(lake, tmp_path):
    """The after-image of a rule's move is the row as the rule left it: status and tier both."""
    records = [memory("past", "long_term", expires_at=z(AS_OF - SECOND)),
               memory("idle", "long_term", created=timedelta(days=90), accessed=timedelta(days=61))]
    records += [memory(f"s{i:03d}", "short_term", created=timedelta(minutes=200 - i)) for i in range(101)]
    land(lake, tmp_path, records)
    before = {r["id"]: r for r in rows(lake, "SELECT * FROM memories")}
    assert moves(enforce_tiers(lake, AS_OF, run_id="run-9")) == {"expire": 1, "short_term_overflow": 1,
                                                                   "long_term_dormant": 1}
    for memory_id, rule, to_status in (("past", "expire", "archived"), ("s000", "short_term_overflow", "archived"),
                                       ("idle", "long_term_dormant", "dormant")):
        (row,) = history(lake, memory_id)
        image = {k: v for k, v in before[memory_id].items() if k in row["before"]}
        assert row == {"memory_id": memory_id, "version": 1, "change": "status", "changed_fields": ["status"],
                       "operator": "system", "run_id": "run-9", "reason": rule, "as_of": AS_OF,
                       "before": image, "after": {**image, "status": to_status}}
        assert rows(lake, "SELECT status, version FROM memories WHERE id = ?", [memory_id]) == [
            {"status": to_status, "version": 1}]


def test_a_run_without_a_run_id_gets_one_named_for_tiers(lake, tmp_path):
    land(lake, tmp_path, [memory("past", "long_term", expires_at=z(AS_OF - SECOND)),
                          memory("soon", "long_term", expires_at=z(AS_OF + timedelta(hours=1)))])
    report = enforce_tiers(lake, AS_OF)
    assert (report.name, report.as_of) == ("enforce_tiers", AS_OF)     # what the run's report shows
    assert re.fullmatch(r"tiers-20261130T000000-[0-9a-f]{8}", report.run_id)
    assert rows(lake, "SELECT memory_id, run_id FROM cleanup_log") == [{"memory_id": "past", "run_id": report.run_id}]
    assert [r["run_id"] for r in history(lake, "past")] == [report.run_id]
    assert (lake.root / CLEANUP_LOG_FILE).read_text(encoding="utf-8").splitlines() == [
        f"2026-11-30T00:00:00Z run={report.run_id} rule=expire id=past tenant=acme long_term/active -> long_term/archived"]
    second = enforce_tiers(lake, AS_OF + timedelta(hours=2))          # the log grows by whole lines
    assert (lake.root / CLEANUP_LOG_FILE).read_text(encoding="utf-8") == (
        f"2026-11-30T00:00:00Z run={report.run_id} rule=expire id=past tenant=acme long_term/active -> long_term/archived\n"
        f"2026-11-30T02:00:00Z run={second.run_id} rule=expire id=soon tenant=acme long_term/active -> long_term/archived\n")


def test_restore_history_has_the_whole_restored_row_and_its_run(lake, tmp_path):
    """Restored later than the last use: the after-image is exactly the row in the table afterwards
    (status, tier, version, operator, times, the passed expiry cleared, a future one kept)."""
    land(lake, tmp_path, [
        memory("arch", "short_term", status="archived", expires_at=z(AS_OF - timedelta(days=1))),
        memory("dorm", "long_term", status="dormant", created=timedelta(days=200), accessed=timedelta(days=100),
               expires_at=z(AS_OF + timedelta(days=30))),
        memory("edge", "long_term", status="archived", expires_at=z(AS_OF + timedelta(days=2)))])
    before = {r["id"]: r for r in rows(lake, "SELECT * FROM memories")}
    later = AS_OF + timedelta(days=2)
    report = restore_memories(lake, ["dorm", "arch", "edge"], operator="agent", as_of=later)
    assert re.fullmatch(r"restore-20261202T000000-[0-9a-f]{8}", report.run_id)
    assert (report.name, report.as_of) == ("restore", later)
    assert (report.counts, report.details) == ({"restored": 3}, {"restored": ["arch", "dorm", "edge"],
                                                                  "not_restorable": [], "unknown": [],
                                                                  "moved_to_long_term": ["arch"]})
    after = {r["id"]: r for r in rows(lake, "SELECT * FROM memories")}
    expiry = {"arch": None, "dorm": AS_OF + timedelta(days=30), "edge": later}   # expiring exactly now: not passed
    for memory_id, tier, fields in (("arch", "long_term", ["status", "tier"]), ("dorm", "long_term", ["status"]),
                                    ("edge", "long_term", ["status"])):
        (row,) = history(lake, memory_id)
        image = {k: v for k, v in before[memory_id].items() if k in row["before"]}
        expected = {**image, "tier": tier, "status": "active", "version": 2, "operator": "agent",
                    "updated_at": later, "last_accessed_at": later,
                    "expires_at": expiry[memory_id]}
        assert row == {"memory_id": memory_id, "version": 2, "change": "status", "changed_fields": fields,
                       "operator": "agent", "run_id": report.run_id, "reason": "restore", "as_of": later,
                       "before": image, "after": expected}
        assert {k: v for k, v in after[memory_id].items() if k in expected} == expected
    assert rows(lake, "SELECT memory_id, from_tier, to_tier, from_status, to_status, rule, run_id FROM cleanup_log "
                      "ORDER BY memory_id") == [
        {"memory_id": "arch", "from_tier": "short_term", "to_tier": "long_term", "from_status": "archived",
         "to_status": "active", "rule": "restore", "run_id": report.run_id},
        {"memory_id": "dorm", "from_tier": "long_term", "to_tier": "long_term", "from_status": "dormant",
         "to_status": "active", "rule": "restore", "run_id": report.run_id},
        {"memory_id": "edge", "from_tier": "long_term", "to_tier": "long_term", "from_status": "archived",
         "to_status": "active", "rule": "restore", "run_id": report.run_id}]


def test_a_memory_consolidated_by_its_references_is_not_recalled_by_them(lake, tmp_path):
    """The reference that lifts a short_term memory over the consolidation bar happened before it
    entered long_term: it does not count as a recall, or the memory would bounce back and forth."""
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        memory("m", "short_term", created=timedelta(days=3), accessed=timedelta(hours=3), importance=0.1,
               reference_count=2)])], as_of=AS_OF - timedelta(days=1))
    write_jsonl(lake.inbox / "use.events.jsonl", [
        {"ts": z(AS_OF - SECOND), "tenant": "acme", "event": "reference", "memory_id": "m"}])
    apply_events(lake, AS_OF)
    assert rows(lake, "SELECT reference_count FROM memories") == [{"reference_count": 3}]
    assert moves(enforce_tiers(lake, AS_OF)) == {"consolidate": 1}
    assert state(lake) == {"m": ("long_term", "active")}
    assert moves(enforce_tiers(lake, AS_OF + timedelta(hours=12))) == {}
    assert state(lake) == {"m": ("long_term", "active")}


def test_policy_numbers_written_as_integers_per_tenant(lake, tmp_path):
    """TOML gives `1` as an integer: a tenant's whole-number threshold beside another tenant's
    fractional one is the same threshold, whichever tenant comes first."""
    (lake.root / "memory-lake.toml").write_text(
        "[tenants.acme.tiers]\noverflow_keep_importance = 1\n\n"
        "[tenants.globex.tiers]\nimportant_importance = 1\noverflow_keep_importance = 0.5\n", encoding="utf-8")
    records = [memory(f"s{i:03d}", "short_term", created=timedelta(minutes=200 - i)) for i in range(101)]
    records[0]["importance"] = 0.8                     # acme keeps only importance >= 1: archived
    records += [{**r, "id": f"g{r['id']}", "tenant": "globex"} for r in records]   # globex keeps >= 0.5
    records += [{**memory("gvip", "working", importance=1), "tenant": "globex"}]
    land(lake, tmp_path, records)
    lake = Lake.open(lake.root)
    assert moves(enforce_tiers(lake, AS_OF)) == {"mark_important": 1, "short_term_overflow": 2}
    assert state(lake, "NOT (tier = 'short_term' AND status = 'active')") == {
        "gs000": ("long_term", "active"), "gvip": ("important", "active"), "s000": ("short_term", "archived")}


@pytest.mark.process  # starts a process (the subject here)
def test_cleanup_log_is_utf8_whatever_the_locale(lake, tmp_path):
    """Ids and tenants may be Chinese; a process under a plain ASCII locale still writes the log."""
    land(lake, tmp_path, [{**memory("记忆-1", "long_term", expires_at=z(AS_OF - SECOND)), "tenant": "租户"}])
    env = code_env(**ASCII_LOCALE)
    script = ("import sys; from datetime import datetime; from memory_lake import Lake\n"
              "from memory_lake.maintain.tiers import enforce_tiers\n"
              "assert sys.flags.utf8_mode == 0\n"
              f"enforce_tiers(Lake.open({str(lake.root)!r}), datetime.fromisoformat({AS_OF.isoformat()!r}), run_id='r')\n")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, encoding="utf-8")
    assert (done.returncode, done.stderr) == (0, "")
    first = "2026-11-30T00:00:00Z run=r rule=expire id=记忆-1 tenant=租户 long_term/active -> long_term/archived"
    assert (lake.root / CLEANUP_LOG_FILE).read_text(encoding="utf-8").splitlines() == [first]
    # a later writer (here this process) appends after it; calling the writer in this process also
    # lets `make mutate`, which runs only the tests it saw call a function, run this test for it
    append_cleanup_log(lake.root, ["2026-12-01T00:00:00Z run=s rule=restore id=记忆-1"])
    assert (lake.root / CLEANUP_LOG_FILE).read_text(encoding="utf-8").splitlines() == [
        first, "2026-12-01T00:00:00Z run=s rule=restore id=记忆-1"]


@pytest.mark.process  # starts a process (the subject here)
def test_a_writer_meeting_a_tier_run_is_told_what_holds_the_lake(lake, tmp_path):
    """While the tier run holds the write lock (here: waiting for a reader of another process to let
    go of the database file), a second writer is refused with the run named: "tier rules"."""
    land(lake, tmp_path, [memory("past", "long_term", expires_at=z(AS_OF - SECOND))])
    reader = subprocess.Popen([sys.executable, "-c", (
        "import duckdb, time\n"
        f"con = duckdb.connect({str(lake.db_path)!r}, read_only=True)\n"
        "print('open', flush=True); time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    outcome: dict = {}
    run = threading.Thread(target=lambda: outcome.update(report=enforce_tiers(lake, AS_OF, run_id="r")))
    try:
        assert reader.stdout.readline().strip() == "open"
        run.start()
        message, deadline = None, time.monotonic() + 30
        while message is None and time.monotonic() < deadline:
            try:
                with Lake.open(lake.root).writer(wait_s=0):
                    pass
            except LakeBusy as exc:
                if "holds the write lock" in str(exc):
                    message = str(exc)
            time.sleep(0.05)
    finally:
        reader.kill()
        reader.wait()
        reader.stdout.close()
    run.join(60)
    assert message == (f"lake {lake.root} is busy: pid {os.getpid()} (tier rules) holds the write lock; "
                       "try again when it finishes")
    assert moves(outcome["report"]) == {"expire": 1}


def test_expire_takes_dormant_and_conflicted_memories_too(lake, tmp_path):
    gone = z(AS_OF - SECOND)
    land(lake, tmp_path, [memory("dorm", "long_term", status="dormant", expires_at=gone),
                          memory("disputed", "short_term", status="conflicted", expires_at=gone),
                          memory("done", "long_term", status="archived", expires_at=gone)])
    assert moves(enforce_tiers(lake, AS_OF)) == {"expire": 2}
    assert state(lake) == {"disputed": ("short_term", "archived"), "dorm": ("long_term", "archived"),
                           "done": ("long_term", "archived")}


def test_a_disputed_memory_counts_and_moves_like_an_active_one(lake, tmp_path):
    """Conflicted memories fill a scope's capacity and overflow, consolidate and doze like active ones."""
    records = [memory(f"w{i:02d}", "working", created=timedelta(minutes=60 - i)) for i in range(21)]
    records[0]["status"] = "conflicted"
    records += [memory("c", "short_term", status="conflicted", created=timedelta(days=2), importance=0.8),
                memory("i", "working", status="conflicted", importance=1.0),
                memory("l", "long_term", status="conflicted", created=timedelta(days=90), accessed=timedelta(days=61))]
    land(lake, tmp_path, records)
    assert moves(enforce_tiers(lake, AS_OF)) == {"mark_important": 1, "working_overflow": 1, "consolidate": 1,
                                                 "long_term_dormant": 1}
    assert state(lake, "NOT (tier = 'working' AND status = 'active')") == {
        "c": ("long_term", "conflicted"), "i": ("important", "conflicted"), "l": ("long_term", "dormant"),
        "w00": ("short_term", "conflicted")}


@pytest.mark.parametrize("tie, moved", [("created", "w00"), ("id", "w00")])
def test_working_overflow_ties_move_the_oldest_then_the_lowest_id(lake, tmp_path, tie, moved):
    """Same last access: the oldest created goes; same creation too: the lowest id goes (the order
    is total, so a run is repeatable)."""
    records = [memory(f"w{i:02d}", "working", created=timedelta(hours=5) - (i * SECOND if tie == "created" else 0 * SECOND),
                      accessed=timedelta(hours=1)) for i in range(21)]
    land(lake, tmp_path, records)
    assert moves(enforce_tiers(lake, AS_OF)) == {"working_overflow": 1}
    assert state(lake, "tier <> 'working'") == {moved: ("short_term", "active")}


def test_short_term_fifo_ties_archive_the_lowest_id(lake, tmp_path):
    land(lake, tmp_path, [memory(f"s{i:03d}", "short_term", created=timedelta(hours=2)) for i in range(101)])
    assert moves(enforce_tiers(lake, AS_OF)) == {"short_term_overflow": 1}
    assert state(lake, "status <> 'active'") == {"s000": ("short_term", "archived")}


def test_each_agent_of_a_user_has_its_own_capacity(lake, tmp_path):
    records = [memory(f"w{i:02d}", "working") for i in range(20)]
    records += [{**memory(f"x{i:02d}", "working"), "agent_id": "other-bot"} for i in range(20)]
    records += [memory(f"s{i:03d}", "short_term") for i in range(100)]
    records += [{**memory(f"t{i:03d}", "short_term"), "agent_id": "other-bot"} for i in range(100)]
    land(lake, tmp_path, records)
    assert moves(enforce_tiers(lake, AS_OF)) == {}


def test_the_lakes_own_summaries_are_left_to_the_summarize_step(lake, tmp_path):
    """A system summary is never moved by a tier rule; a summary an agent wrote is a memory like any."""
    land(lake, tmp_path, [memory("sys", "long_term", type="summary", created=timedelta(days=90),
                                 accessed=timedelta(days=61)),
                          memory("mine", "long_term", type="summary", created=timedelta(days=90),
                                 accessed=timedelta(days=61)),
                          memory("sysfact", "long_term", type="fact", created=timedelta(days=90),
                                 accessed=timedelta(days=61))])
    with lake.writer() as con:
        con.execute("UPDATE memories SET operator = 'system' WHERE id IN ('sys', 'sysfact')")
    assert moves(enforce_tiers(lake, AS_OF)) == {"long_term_dormant": 2}
    assert state(lake) == {"mine": ("long_term", "dormant"), "sys": ("long_term", "active"),
                           "sysfact": ("long_term", "dormant")}


def test_an_access_is_not_a_reference_for_recall(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        memory("old", "long_term", created=timedelta(days=40), accessed=timedelta(days=3))])],
        as_of=AS_OF - timedelta(days=1))
    write_jsonl(lake.inbox / "use.events.jsonl", [
        {"ts": z(AS_OF - timedelta(hours=2)), "tenant": "acme", "event": "access", "memory_id": "old"}])
    apply_events(lake, AS_OF - timedelta(hours=1))
    assert moves(enforce_tiers(lake, AS_OF)) == {}
    assert state(lake) == {"old": ("long_term", "active")}


def test_restore_is_a_persons_decision_never_the_systems(lake, tmp_path):
    from memory_lake.store import InputError

    land(lake, tmp_path, [memory("arch", "long_term", status="archived")])
    with pytest.raises(InputError) as error:
        restore_memories(lake, ["arch"], operator="system", as_of=AS_OF)
    assert str(error.value) == "operator must be user or agent, not 'system'"
    assert state(lake) == {"arch": ("long_term", "archived")}
    assert rows(lake, "SELECT count(*) AS n FROM cleanup_log") == [{"n": 0}]


def test_a_dormant_memory_marked_important_waits_for_a_use(lake, tmp_path):
    """Only active and disputed memories move: a dormant one stays asleep until an access wakes it."""
    land(lake, tmp_path, [memory("d", "long_term", status="dormant", importance=1.0, created=timedelta(days=90),
                                 accessed=timedelta(days=61))])
    assert moves(enforce_tiers(lake, AS_OF)) == {}
    assert state(lake) == {"d": ("long_term", "dormant")}


def test_suggest_archive_flag_goes_when_the_memory_is_used_and_can_be_disabled(lake, tmp_path):
    from memory_lake.store.policy import Policy

    land(lake, tmp_path, [memory("m", "long_term", created=timedelta(days=400), accessed=timedelta(days=181)),
                          memory("n", "long_term", created=timedelta(days=400), accessed=timedelta(days=181))])
    off = Policy().with_overrides({"tiers": {"disabled_rules": ["suggest_archive"]}})
    report = enforce_tiers(lake, AS_OF, off)
    assert "suggest_archive" not in report.counts and rows(lake, "SELECT * FROM memory_flags") == []
    assert enforce_tiers(lake, AS_OF, run_id="r1").counts["suggest_archive"] == 2
    write_jsonl(lake.inbox / "use.events.jsonl", [
        {"ts": z(AS_OF + timedelta(hours=1)), "tenant": "acme", "event": "access", "memory_id": "m"}])
    apply_events(lake, AS_OF + timedelta(hours=2))
    assert enforce_tiers(lake, AS_OF + timedelta(hours=3), run_id="r2").counts["suggest_archive"] == 1
    assert rows(lake, "SELECT memory_id, run_id FROM memory_flags") == [{"memory_id": "n", "run_id": "r1"}]


def test_restore_by_default_is_a_users_and_an_empty_list_restores_nothing(lake, tmp_path):
    """Written after the second mutation sample (seed 2): a caller that names no operator restores
    as "user", and restoring no ids is a run that changes nothing."""
    land(lake, tmp_path, [memory("arch", "long_term", status="archived")])
    report = restore_memories(lake, [], as_of=AS_OF)
    assert report.counts["restored"] == 0 and state(lake) == {"arch": ("long_term", "archived")}
    restore_memories(lake, ["arch"], as_of=AS_OF)
    assert state(lake) == {"arch": ("long_term", "active")}
    assert [(h["operator"], h["reason"]) for h in history(lake, "arch")] == [("user", "restore")]
