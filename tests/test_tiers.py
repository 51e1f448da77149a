"""Tier rules (capacity): whole resulting rows, boundaries, order, fixed point, audit trail."""

from __future__ import annotations

from datetime import datetime, timedelta

from memory_lake.policy import Policy
from memory_lake.tiers import CLEANUP_LOG_FILE, enforce_tiers

from .conftest import AS_OF, rows, write_jsonl

T0 = datetime(2026, 10, 1)


def memory(i: int, tier: str, **extra) -> dict:
    created = T0 + timedelta(hours=i)
    return {"id": f"{tier}-{i:03d}", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": tier,
            "content": f"{tier} memory {i}", "created_at": created.isoformat() + "Z",
            "last_accessed_at": (created + timedelta(days=1)).isoformat() + "Z", **extra}


def land(lake, tmp_path, records):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", records)], as_of=AS_OF)


def state(lake, where="true"):
    return {r["id"]: (r["tier"], r["status"]) for r in rows(lake, f"SELECT id, tier, status FROM memories WHERE {where}")}


def test_exactly_at_capacity_nothing_moves(lake, tmp_path):
    land(lake, tmp_path, [memory(i, "working") for i in range(20)] + [memory(i, "short_term") for i in range(100)])
    report = enforce_tiers(lake, AS_OF)
    assert report.counts == {"working_overflow": 0, "short_term_overflow": 0}
    assert rows(lake, "SELECT count(*) AS n FROM cleanup_log") == [{"n": 0}]


def test_working_overflow_moves_the_least_recently_accessed(lake, tmp_path):
    records = [memory(i, "working") for i in range(21)]
    records[5]["last_accessed_at"] = "2026-11-29T00:00:00Z"  # old but recently used: stays
    land(lake, tmp_path, records)
    report = enforce_tiers(lake, AS_OF, run_id="run-1")
    assert report.counts == {"working_overflow": 1, "short_term_overflow": 0}
    moved = rows(lake, "SELECT * EXCLUDE (published_at, publish_meta) FROM memories WHERE tier <> 'working'")
    assert [(m["id"], m["tier"], m["status"], m["version"], m["operator"]) for m in moved] == [
        ("working-000", "short_term", "active", 1, "agent")]
    assert rows(lake, "SELECT * FROM cleanup_log") == [{
        "memory_id": "working-000", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "from_tier": "working",
        "to_tier": "short_term", "from_status": "active", "to_status": "active", "rule": "working_overflow",
        "run_id": "run-1", "as_of": AS_OF}]
    assert rows(lake, "SELECT change, changed_fields, operator, reason, before.tier AS b, after.tier AS a, version "
                      "FROM memory_history WHERE memory_id = 'working-000' AND operator = 'system'") == [
        {"change": "tier", "changed_fields": ["tier"], "operator": "system", "reason": "working_overflow",
         "b": "working", "a": "short_term", "version": 1}]
    log = (lake.root / CLEANUP_LOG_FILE).read_text().splitlines()
    assert log == ["2026-11-30T00:00:00Z run=run-1 rule=working_overflow id=working-000 tenant=acme "
                   "working/active -> short_term/active"]


def test_short_term_fifo_keeps_borderline_items_and_archives_the_rest(lake, tmp_path):
    records = [memory(i, "short_term") for i in range(103)]
    records[0]["importance"] = 0.7        # >= 0.7: kept, to long_term
    records[1]["reference_count"] = 2     # >= 2 references: kept, to long_term
    records[2]["importance"] = 0.69       # archived
    records[50]["importance"] = 0.1       # young enough: stays
    land(lake, tmp_path, records)
    report = enforce_tiers(lake, AS_OF)
    assert report.counts == {"working_overflow": 0, "short_term_overflow": 3}
    assert state(lake, "NOT (tier = 'short_term' AND status = 'active')") == {
        "short_term-000": ("long_term", "active"), "short_term-001": ("long_term", "active"),
        "short_term-002": ("short_term", "archived")}


def test_working_overflow_feeds_the_short_term_fifo_in_one_run(lake, tmp_path):
    land(lake, tmp_path, [memory(200 + i, "working") for i in range(25)]
         + [memory(100 + i, "short_term") for i in range(98)])
    report = enforce_tiers(lake, AS_OF)
    assert report.counts == {"working_overflow": 5, "short_term_overflow": 3}
    counts = dict(lake.sql("SELECT tier, count(*) FROM memories WHERE status = 'active' GROUP BY 1").rows())
    assert counts == {"working": 20, "short_term": 100}
    # the FIFO evicted the oldest short_term items by creation, not the newer promoted ones
    assert state(lake, "status = 'archived'") == {f"short_term-{100 + i:03d}": ("short_term", "archived")
                                                  for i in range(3)}
    again = enforce_tiers(lake, AS_OF)
    assert again.counts == {"working_overflow": 0, "short_term_overflow": 0}


def test_important_and_inactive_memories_are_never_moved(lake, tmp_path):
    land(lake, tmp_path, [memory(i, "important") for i in range(30)]
         + [memory(i, "working", status="archived") for i in range(30)])
    assert enforce_tiers(lake, AS_OF).counts == {"working_overflow": 0, "short_term_overflow": 0}


def test_scopes_are_independent_and_tenants_have_their_own_capacity(lake, tmp_path):
    records = [memory(i, "working") for i in range(21)]
    records += [{**memory(i, "working"), "id": f"other-{i}", "user_id": "bob"} for i in range(21)]
    records += [{**memory(i, "working"), "id": f"g-{i}", "tenant": "globex"} for i in range(21)]
    land(lake, tmp_path, records)
    policy = Policy().with_overrides({"tenants": {"globex": {"tiers": {"working_capacity": 30}}}})
    report = enforce_tiers(lake, AS_OF, policy)
    assert report.counts["working_overflow"] == 2
    assert sorted(state(lake, "tier = 'short_term'")) == ["other-0", "working-000"]


def test_a_disabled_rule_does_not_run(lake, tmp_path):
    land(lake, tmp_path, [memory(i, "working") for i in range(25)])
    policy = Policy().with_overrides({"tiers": {"disabled_rules": ["working_overflow"]}})
    report = enforce_tiers(lake, AS_OF, policy)
    assert report.counts == {"short_term_overflow": 0}
    assert report.details == {"disabled": ["working_overflow"]}
    assert rows(lake, "SELECT count(*) AS n FROM memories WHERE tier = 'working'") == [{"n": 25}]
