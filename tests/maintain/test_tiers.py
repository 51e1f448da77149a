"""Tier rules: one test per rule on a hand-built lake with its boundaries, the order, the fixed
point, the audit trail, and the never-touched important tier."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from memory_lake.maintain.events import apply_events
from memory_lake.store.policy import Policy
from memory_lake.maintain.tiers import CLEANUP_LOG_FILE, RULES, enforce_tiers

from ..conftest import AS_OF, rows, write_jsonl

SECOND = timedelta(seconds=1)


def z(ts: datetime) -> str:
    return ts.isoformat() + "Z"


def memory(key: str, tier: str, *, created: timedelta = timedelta(hours=1), accessed: timedelta | None = None,
           user: str = "alice", **extra) -> dict:
    """A memory created `created` before AS_OF and last accessed `accessed` before it."""
    created_at = AS_OF - created
    accessed_at = AS_OF - (accessed if accessed is not None else min(created, timedelta(hours=1)))
    return {"id": key, "tenant": "acme", "agent_id": "bot", "user_id": user, "tier": tier, "content": f"memory {key}",
            "created_at": z(created_at), "last_accessed_at": z(accessed_at), **extra}


def land(lake, tmp_path, records, name="s.jsonl"):
    lake.ingest([write_jsonl(tmp_path / name, records)], as_of=AS_OF)


def moves(report) -> dict[str, int]:
    return {rule: n for rule, n in report.counts.items() if n}


def state(lake, where="true"):
    return {r["id"]: (r["tier"], r["status"])
            for r in rows(lake, f"SELECT id, tier, status FROM memories WHERE {where} ORDER BY id")}


def test_rule_order_is_the_documented_one():
    assert [name for name, _ in RULES] == ["expire", "mark_important", "working_overflow", "consolidate",
                                           "short_term_idle", "long_term_recall", "short_term_overflow",
                                           "long_term_dormant"]


def test_expire_archives_once_expires_at_has_passed(lake, tmp_path):
    land(lake, tmp_path, [memory("past", "long_term", expires_at=z(AS_OF - SECOND)),
                          memory("now", "long_term", expires_at=z(AS_OF)),
                          memory("vip", "important", expires_at=z(AS_OF - timedelta(days=3)))])
    report = enforce_tiers(lake, AS_OF)
    assert moves(report) == {"expire": 1}
    assert state(lake) == {"now": ("long_term", "active"), "past": ("long_term", "archived"),
                           "vip": ("important", "active")}


def test_mark_important_takes_any_tier_at_importance_one(lake, tmp_path):
    land(lake, tmp_path, [memory("w", "working", importance=1.0), memory("s", "short_term", importance=1),
                          memory("almost", "working", importance=0.99), memory("l", "long_term", importance=1.0),
                          memory("gone", "working", importance=1.0, status="archived")])
    assert moves(enforce_tiers(lake, AS_OF)) == {"mark_important": 3}
    assert state(lake) == {"almost": ("working", "active"), "gone": ("working", "archived"),
                           "l": ("important", "active"), "s": ("important", "active"), "w": ("important", "active")}


def test_exactly_at_capacity_nothing_moves(lake, tmp_path):
    land(lake, tmp_path, [memory(f"w{i:02d}", "working") for i in range(20)]
         + [memory(f"s{i:03d}", "short_term") for i in range(100)])
    report = enforce_tiers(lake, AS_OF)
    assert moves(report) == {} and set(report.counts) == {name for name, _ in RULES} | {"suggest_archive"}
    assert rows(lake, "SELECT count(*) AS n FROM cleanup_log") == [{"n": 0}]


def test_working_overflow_moves_the_least_recently_accessed(lake, tmp_path):
    records = [memory(f"w{i:02d}", "working", created=timedelta(hours=30 - i), accessed=timedelta(hours=20 - i / 2))
               for i in range(21)]
    records[0]["last_accessed_at"] = z(AS_OF - timedelta(minutes=5))  # oldest but just used: stays
    land(lake, tmp_path, records)
    report = enforce_tiers(lake, AS_OF, run_id="run-1")
    assert moves(report) == {"working_overflow": 1}
    assert state(lake, "tier <> 'working'") == {"w01": ("short_term", "active")}
    (row,) = rows(lake, "SELECT * EXCLUDE (published_at, publish_meta) FROM memories WHERE id = 'w01'")
    assert (row["version"], row["operator"], row["content"]) == (1, "agent", "memory w01")
    assert rows(lake, "SELECT * FROM cleanup_log") == [{
        "memory_id": "w01", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "from_tier": "working",
        "to_tier": "short_term", "from_status": "active", "to_status": "active", "rule": "working_overflow",
        "run_id": "run-1", "as_of": AS_OF}]
    assert rows(lake, "SELECT change, changed_fields, operator, reason, before.tier AS b, after.tier AS a, version "
                      "FROM memory_history WHERE memory_id = 'w01' AND operator = 'system'") == [
        {"change": "tier", "changed_fields": ["tier"], "operator": "system", "reason": "working_overflow",
         "b": "working", "a": "short_term", "version": 1}]
    assert (lake.root / CLEANUP_LOG_FILE).read_text().splitlines() == [
        "2026-11-30T00:00:00Z run=run-1 rule=working_overflow id=w01 tenant=acme working/active -> short_term/active"]


@pytest.mark.parametrize("age, importance, references, moved", [
    (timedelta(hours=24), 0.8, 0, False),              # exactly 24 h: not older than 24 h
    (timedelta(hours=24) + SECOND, 0.8, 0, True),
    (timedelta(hours=48), 0.7, 0, False),              # importance must be > 0.7
    (timedelta(hours=48), 0.1, 3, True),               # referenced more than twice
    (timedelta(hours=48), 0.1, 2, False),
])
def test_consolidate(lake, tmp_path, age, importance, references, moved):
    land(lake, tmp_path, [memory("m", "short_term", created=age, accessed=timedelta(hours=1), importance=importance,
                                 reference_count=references)])
    assert moves(enforce_tiers(lake, AS_OF)) == ({"consolidate": 1} if moved else {})
    assert state(lake)["m"] == ("long_term" if moved else "short_term", "active")


@pytest.mark.parametrize("idle, moved", [(timedelta(days=7), False), (timedelta(days=7) + SECOND, True)])
def test_short_term_idle(lake, tmp_path, idle, moved):
    land(lake, tmp_path, [memory("m", "short_term", created=timedelta(days=9), accessed=idle, importance=0.1)])
    assert moves(enforce_tiers(lake, AS_OF)) == ({"short_term_idle": 1} if moved else {})
    assert state(lake)["m"] == ("long_term" if moved else "short_term", "active")


def test_short_term_fifo_keeps_borderline_items_and_archives_the_rest(lake, tmp_path):
    records = [memory(f"s{i:03d}", "short_term", created=timedelta(minutes=200 - i)) for i in range(103)]
    records[0]["importance"] = 0.7        # >= 0.7: kept, to long_term
    records[1]["reference_count"] = 2     # >= 2 references: kept, to long_term
    records[2]["importance"] = 0.69       # archived
    records[50]["importance"] = 0.1       # young enough: stays
    land(lake, tmp_path, records)
    assert moves(enforce_tiers(lake, AS_OF)) == {"short_term_overflow": 3}
    assert state(lake, "NOT (tier = 'short_term' AND status = 'active')") == {
        "s000": ("long_term", "active"), "s001": ("long_term", "active"), "s002": ("short_term", "archived")}


def test_working_overflow_feeds_the_short_term_fifo_in_one_run(lake, tmp_path):
    land(lake, tmp_path, [memory(f"w{i:02d}", "working", created=timedelta(minutes=30 - i)) for i in range(25)]
         + [memory(f"s{i:03d}", "short_term", created=timedelta(minutes=300 - i)) for i in range(98)])
    report = enforce_tiers(lake, AS_OF)
    assert moves(report) == {"working_overflow": 5, "short_term_overflow": 3}
    counts = dict(lake.sql("SELECT tier, count(*) FROM memories WHERE status = 'active' GROUP BY 1").rows())
    assert counts == {"working": 20, "short_term": 100}
    # FIFO by creation: the three oldest short_term items, not the newer promoted working ones
    assert state(lake, "status = 'archived'") == {f"s{i:03d}": ("short_term", "archived") for i in range(3)}
    assert moves(enforce_tiers(lake, AS_OF)) == {}


def test_long_term_recall_on_reference_makes_room_by_fifo(lake, tmp_path):
    land(lake, tmp_path, [memory("old", "long_term", created=timedelta(days=40), accessed=timedelta(days=3))]
         + [memory(f"s{i:03d}", "short_term", created=timedelta(minutes=300 - i)) for i in range(100)])
    write_jsonl(lake.inbox / "use.events.jsonl", [
        {"ts": z(AS_OF - timedelta(hours=2)), "tenant": "acme", "event": "reference", "memory_id": "old"}])
    apply_events(lake, AS_OF)
    report = enforce_tiers(lake, AS_OF)
    assert moves(report) == {"long_term_recall": 1, "short_term_overflow": 1}
    assert state(lake, "id IN ('old', 's000')") == {"old": ("short_term", "active"), "s000": ("short_term", "archived")}
    assert moves(enforce_tiers(lake, AS_OF)) == {}          # fixed point
    # the next day, with no new reference, nothing comes back or goes
    assert moves(enforce_tiers(lake, AS_OF + timedelta(hours=12))) == {}


@pytest.mark.parametrize("idle, dormant", [(timedelta(days=60), False), (timedelta(days=60) + SECOND, True)])
def test_long_term_dormant_and_woken_by_use(lake, tmp_path, idle, dormant):
    land(lake, tmp_path, [memory("m", "long_term", created=timedelta(days=90), accessed=idle)])
    assert moves(enforce_tiers(lake, AS_OF)) == ({"long_term_dormant": 1} if dormant else {})
    assert state(lake)["m"] == ("long_term", "dormant" if dormant else "active")
    if dormant:
        write_jsonl(lake.inbox / "use.events.jsonl", [
            {"ts": z(AS_OF + timedelta(hours=1)), "tenant": "acme", "event": "access", "memory_id": "m"}])
        apply_events(lake, AS_OF + timedelta(hours=2))
        assert state(lake)["m"] == ("long_term", "active")
        assert rows(lake, "SELECT rule, from_status, to_status FROM cleanup_log ORDER BY as_of") == [
            {"rule": "long_term_dormant", "from_status": "active", "to_status": "dormant"},
            {"rule": "wake_on_use", "from_status": "dormant", "to_status": "active"}]


@pytest.mark.models
def test_an_include_inactive_search_shows_a_dormant_memory_without_waking_it(lake, tmp_path):
    from memory_lake.search.query import search

    land(lake, tmp_path, [memory("m", "long_term", created=timedelta(days=90), accessed=timedelta(days=61))])
    enforce_tiers(lake, AS_OF)
    found = search(lake, "memory", tenant="acme", include_inactive=True, as_of=AS_OF + timedelta(hours=1))
    assert [(r.id, r.status, r.resting) for r in found] == [("m", "dormant", True)]
    line = json.loads(next(lake.events.glob("searches-*.jsonl")).read_text())
    assert (line["result_ids"], line["resting_ids"]) == (["m"], ["m"])
    report = apply_events(lake, AS_OF + timedelta(hours=2))
    assert (report.counts["searches"], report.counts["woken"]) == (1, 0)
    assert state(lake)["m"] == ("long_term", "dormant")
    assert rows(lake, "SELECT access_count FROM memories") == [{"access_count": 0}]
    # an ordinary search does not see it; an access event (the agent used it) wakes it
    assert not search(lake, "memory", tenant="acme", as_of=AS_OF + timedelta(hours=3))
    write_jsonl(lake.inbox / "use.events.jsonl", [
        {"ts": z(AS_OF + timedelta(hours=3)), "tenant": "acme", "event": "access", "memory_id": "m"}])
    apply_events(lake, AS_OF + timedelta(hours=4))
    assert state(lake)["m"] == ("long_term", "active")
    assert "resting_ids" not in json.loads(
        next(lake.events.glob("searches-*.jsonl")).read_text().splitlines()[-1])


@pytest.mark.parametrize("idle, flagged", [(timedelta(days=180), False), (timedelta(days=180) + SECOND, True)])
def test_suggest_archive_is_a_flag_not_a_move(lake, tmp_path, idle, flagged):
    land(lake, tmp_path, [memory("m", "long_term", created=timedelta(days=400), accessed=idle)])
    report = enforce_tiers(lake, AS_OF, run_id="r1")
    assert report.counts["suggest_archive"] == int(flagged)
    assert state(lake)["m"] == ("long_term", "dormant")  # dormant after 60 days either way, never archived
    expected = [{"memory_id": "m", "tenant": "acme", "flag": "suggest_archive", "since": AS_OF, "run_id": "r1"}]
    assert rows(lake, "SELECT * FROM memory_flags") == (expected if flagged else [])
    enforce_tiers(lake, AS_OF + timedelta(days=1), run_id="r2")  # still flagged, since unchanged
    assert rows(lake, "SELECT since, run_id FROM memory_flags") == (
        [{"since": AS_OF, "run_id": "r1"}] if flagged else [{"since": AS_OF + timedelta(days=1), "run_id": "r2"}])


def test_important_memories_are_never_moved_by_any_rule(lake, tmp_path):
    land(lake, tmp_path, [memory(f"i{n}", "important", created=timedelta(days=400), accessed=timedelta(days=300),
                                 expires_at=z(AS_OF - timedelta(days=1)), reference_count=5) for n in range(30)])
    before = rows(lake, "SELECT * FROM memories ORDER BY id")
    assert moves(enforce_tiers(lake, AS_OF)) == {}
    assert rows(lake, "SELECT * FROM memories ORDER BY id") == before


def test_scopes_are_independent_and_tenants_have_their_own_capacity(lake, tmp_path):
    records = [memory(f"w{i:02d}", "working", created=timedelta(minutes=60 - i)) for i in range(21)]
    records += [memory(f"b{i:02d}", "working", created=timedelta(minutes=60 - i), user="bob") for i in range(21)]
    records += [{**memory(f"g{i:02d}", "working"), "tenant": "globex"} for i in range(21)]
    land(lake, tmp_path, records)
    policy = Policy().with_overrides({"tenants": {"globex": {"tiers": {"working_capacity": 30}}}})
    assert moves(enforce_tiers(lake, AS_OF, policy)) == {"working_overflow": 2}
    assert sorted(state(lake, "tier = 'short_term'")) == ["b00", "w00"]


def test_a_disabled_rule_does_not_run(lake, tmp_path):
    land(lake, tmp_path, [memory(f"w{i:02d}", "working") for i in range(25)])
    policy = Policy().with_overrides({"tiers": {"disabled_rules": ["working_overflow"]}})
    report = enforce_tiers(lake, AS_OF, policy)
    assert "working_overflow" not in report.counts and report.details == {"disabled": ["working_overflow"]}
    assert rows(lake, "SELECT count(*) AS n FROM memories WHERE tier = 'working'") == [{"n": 25}]


def test_restore_brings_archived_and_dormant_back_with_an_audit_row(lake, tmp_path):
    from memory_lake.maintain.tiers import restore_memories

    land(lake, tmp_path, [memory("arch", "short_term", status="archived", expires_at=z(AS_OF - timedelta(days=1))),
                          memory("dorm", "long_term", status="dormant", created=timedelta(days=200),
                                 accessed=timedelta(days=100)),
                          memory("live", "working")])
    report = restore_memories(lake, ["arch", "dorm", "live", "ghost"], operator="user", as_of=AS_OF, run_id="r")
    assert report.details == {"restored": ["arch", "dorm"], "not_restorable": ["live"], "unknown": ["ghost"],
                              "moved_to_long_term": ["arch"]}
    assert rows(lake, "SELECT id, tier, status, version, operator, expires_at, last_accessed_at = ? AS used "
                      "FROM memories ORDER BY id", [AS_OF]) == [
        {"id": "arch", "tier": "long_term", "status": "active", "version": 2, "operator": "user", "expires_at": None,
         "used": True},
        {"id": "dorm", "tier": "long_term", "status": "active", "version": 2, "operator": "user", "expires_at": None,
         "used": True},
        {"id": "live", "tier": "working", "status": "active", "version": 1, "operator": "agent", "expires_at": None,
         "used": False}]
    assert rows(lake, "SELECT memory_id, change, changed_fields, operator, reason FROM memory_history "
                      "WHERE reason = 'restore' ORDER BY memory_id") == [
        {"memory_id": "arch", "change": "status", "changed_fields": ["status", "tier"], "operator": "user",
         "reason": "restore"},
        {"memory_id": "dorm", "change": "status", "changed_fields": ["status"], "operator": "user", "reason": "restore"}]
    assert moves(enforce_tiers(lake, AS_OF)) == {}
