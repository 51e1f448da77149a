"""The lifecycle over time: a seeded 180-day simulation with daily invariants, and property tests
(hypothesis) for the fixed point and the nothing-lost invariant."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_lake import Lake
from memory_lake.maintain.events import apply_events
from memory_lake.store.policy import Policy
from memory_lake.maintain.tiers import enforce_tiers

from .conftest import copy_lake, rows, write_jsonl

START = datetime(2026, 1, 1)
SCOPES = [("acme", "bot", "alice"), ("acme", "bot", "bob"), ("globex", None, "carol")]
TIER_CHOICES = ["working"] * 5 + ["short_term"] * 3 + ["long_term", "important"]
IMPORTANT_FIELDS = "id, tier, status, content, importance, version, tags, expires_at, summary"


def z(ts: datetime) -> str:
    return ts.isoformat() + "Z"


def day_of_memories(rnd: random.Random, day: int, now: datetime) -> list[dict]:
    records = []
    for n in range(rnd.randint(6, 14)):
        tenant, agent, user = rnd.choice(SCOPES)
        created = now - timedelta(minutes=rnd.randint(1, 600))
        record = {"id": f"d{day:03d}-{n:02d}", "tenant": tenant, "agent_id": agent, "user_id": user,
                  "tier": rnd.choice(TIER_CHOICES), "content": f"day {day} memory {n}",
                  "importance": round(rnd.random(), 2), "created_at": z(created)}
        if rnd.random() < 0.1:
            record["expires_at"] = z(now + timedelta(days=rnd.randint(1, 40)))
        if rnd.random() < 0.05:
            record["importance"] = 1.0
        records.append(record)
    return records


def uses(rnd: random.Random, ids: list[tuple[str, str]], now: datetime) -> list[dict]:
    events = []
    for memory_id, tenant in rnd.sample(ids, k=min(len(ids), rnd.randint(0, 12))):
        events.append({"ts": z(now - timedelta(minutes=rnd.randint(0, 300))), "tenant": tenant,
                       "event": rnd.choice(["access", "access", "reference"]), "memory_id": memory_id})
    return events


DAYS_PER_HOLD = 7


@pytest.mark.slow
def test_180_days_keep_every_invariant(tmp_path):
    """Acceptance: daily as_of for 180 days, new memories and uses every day (seeded).

    The lake is held (one connection) for a simulated week at a time, not a day: each close
    checkpoints the whole file (~0.1 s of CPU, growing with the lake; 17 of the test's ~120 s
    with a close a day), and no invariant here depends on it; the lake is still closed and
    opened again 26 times. DuckDB runs on one thread on that connection: the statements are
    small, and a second thread only added CPU (-20 % with one), the results are the same."""
    rnd = random.Random(20261130)
    lake = Lake.open(tmp_path / "lake", create=True)
    ingested: list[tuple[str, str]] = []
    important_before: list[dict] = []
    for week in range(0, 180, DAYS_PER_HOLD):
        with lake.hold("simulated week"):
            with lake.writer() as con:  # the week's connection
                con.execute("SET threads = 1")
            for day in range(week, min(180, week + DAYS_PER_HOLD)):
                important_before = simulate_day(lake, rnd, day, ingested, important_before)
    # the simulation exercised the rules
    fired = dict(lake.sql("SELECT rule, count(*) FROM cleanup_log GROUP BY 1").rows())
    assert {"expire", "mark_important", "working_overflow", "consolidate", "short_term_idle", "long_term_recall",
            "long_term_dormant", "wake_on_use"} <= set(fired), fired


def simulate_day(lake, rnd, day, ingested, important_before):
    """One day: new memories and uses arrive, the rules run; then every invariant is checked."""
    now = START + timedelta(days=day, hours=2)
    records = day_of_memories(rnd, day, now)
    write_jsonl(lake.inbox / f"{day:03d}-snapshot.jsonl", records)
    if ingested:
        write_jsonl(lake.inbox / f"{day:03d}-use.events.jsonl", uses(rnd, ingested, now))
    lake.ingest(as_of=now)
    apply_events(lake, now)
    ingested += [(r["id"], r["tenant"]) for r in records]

    report = enforce_tiers(lake, now, run_id=f"day-{day}")

    # working <= 20 and short_term <= 100 per scope
    over = rows(lake, "SELECT tenant, agent_id, user_id, tier, count(*) AS n FROM memories "
                      "WHERE status IN ('active', 'conflicted') AND tier IN ('working', 'short_term') "
                      "GROUP BY ALL HAVING n > CASE tier WHEN 'working' THEN 20 ELSE 100 END")
    assert over == [], f"day {day}: {over}"
    # no important memory changed by automation (usage counters may move)
    important_now = rows(lake, f"SELECT {IMPORTANT_FIELDS} FROM memories WHERE id IN "
                               f"(SELECT unnest(?)) ORDER BY id", [[m["id"] for m in important_before]])
    assert important_now == important_before, f"day {day}"
    important_before = rows(lake, f"SELECT {IMPORTANT_FIELDS} FROM memories WHERE tier = 'important' ORDER BY id")
    # every move has exactly one cleanup-log row with its rule, and one history row
    moved = sum(report.counts.get(name, 0) for name in report.counts if name != "suggest_archive")
    log = rows(lake, "SELECT memory_id, rule FROM cleanup_log WHERE run_id = ? ORDER BY ALL", [f"day-{day}"])
    history = rows(lake, "SELECT memory_id, reason AS rule FROM memory_history WHERE run_id = ? AND operator = 'system' "
                         "AND change IN ('tier', 'status') ORDER BY ALL", [f"day-{day}"])
    assert len(log) == moved and log == history, f"day {day}"
    # nothing lost: every id ever ingested is still there, in a known state
    present = rows(lake, "SELECT count(*) AS n FROM memories WHERE id IN (SELECT unnest(?)) "
                         "AND status IN ('active', 'dormant', 'archived', 'deleted', 'conflicted')",
                   [[i for i, _ in ingested]])
    assert present == [{"n": len(ingested)}], f"day {day}"
    # a second run with the same as_of changes nothing
    state = rows(lake, "SELECT * FROM memories ORDER BY id")
    again = enforce_tiers(lake, now, run_id=f"day-{day}-again")
    assert {k: v for k, v in again.counts.items() if k != "suggest_archive" and v} == {}, f"day {day}"
    assert rows(lake, "SELECT * FROM memories ORDER BY id") == state
    return important_before


memory_strategy = st.fixed_dictionaries({
    "tier": st.sampled_from(["working", "short_term", "long_term", "important"]),
    "status": st.sampled_from(["active", "active", "active", "dormant", "archived"]),
    "importance": st.sampled_from([0.0, 0.3, 0.7, 0.71, 0.9, 1.0]),
    "reference_count": st.integers(0, 4),
    "created_days": st.integers(0, 400),
    "idle_days": st.integers(0, 400),
    "expires_days": st.one_of(st.none(), st.integers(-30, 30)),
    "scope": st.integers(0, 2),
})


def build(lake, tmp_path, memories, now):
    records = []
    for i, m in enumerate(memories):
        created = now - timedelta(days=m["created_days"], hours=1)
        accessed = max(created, now - timedelta(days=m["idle_days"], hours=1))
        record = {"id": f"m{i:03d}", "tenant": "t", "user_id": f"u{m['scope']}", "tier": m["tier"],
                  "status": m["status"], "content": f"memory {i}", "importance": m["importance"],
                  "reference_count": m["reference_count"], "created_at": z(created), "last_accessed_at": z(accessed)}
        if m["expires_days"] is not None:
            record["expires_at"] = z(now + timedelta(days=m["expires_days"]))
        records.append(record)
    lake.ingest([write_jsonl(tmp_path / "p.jsonl", records)], as_of=now)


@pytest.mark.slow  # 25-40 s: Hypothesis examples, each a whole lake
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(memories=st.lists(memory_strategy, min_size=1, max_size=40), hours=st.integers(0, 23))
def test_one_run_reaches_a_fixed_point_and_loses_nothing(tmp_path_factory, new_lake_dir, memories, hours):
    """Each example on a new lake of its own (a copy of the session's empty one: creating the schema
    is most of a small example), held for the example, one connection on one DuckDB thread (a close
    checkpoints; each of the ~8 steps and reads opened and closed one)."""
    tmp_path = tmp_path_factory.mktemp("prop")
    lake = copy_lake(new_lake_dir, tmp_path / "lake")
    with lake.hold("example"):
        with lake.writer() as con:
            con.execute("SET threads = 1")
        run_to_a_fixed_point(lake, tmp_path, memories, hours)


def run_to_a_fixed_point(lake, tmp_path, memories, hours):
    now = datetime(2026, 6, 1, hours)
    build(lake, tmp_path, memories, now)
    policy = Policy().with_overrides({"tiers": {"working_capacity": 3, "short_term_capacity": 5}})
    before = rows(lake, "SELECT id, tier, status, importance FROM memories ORDER BY id")
    important = rows(lake, "SELECT * FROM memories WHERE tier = 'important' ORDER BY id")
    enforce_tiers(lake, now, policy)
    after = rows(lake, "SELECT * FROM memories ORDER BY id")
    again = enforce_tiers(lake, now, policy)
    assert {k: v for k, v in again.counts.items() if k != "suggest_archive" and v} == {}
    assert rows(lake, "SELECT * FROM memories ORDER BY id") == after
    # nothing lost, nothing deleted, important untouched, capacities hold
    assert [r["id"] for r in after] == [r["id"] for r in before]
    assert all(r["status"] != "deleted" for r in after)
    assert [r for r in after if r["id"] in {i["id"] for i in important}] == important
    over = rows(lake, "SELECT user_id, tier, count(*) AS n FROM memories WHERE status IN ('active', 'conflicted') "
                      "AND tier IN ('working', 'short_term') GROUP BY ALL HAVING n > CASE tier WHEN 'working' THEN 3 ELSE 5 END")
    assert over == []
