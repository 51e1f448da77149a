"""Publish holds (issue 37.3), from the observed failures: one tenant's legitimate write blocked
every tenant's publish, night after night, while an agent could empty a scope in one night (or by
20 % a night) and have it published. Real ingests, real publishes (GX suite included), one lake
built once per module and copied per test.

Scopes: acme/bot/small (4 memories), acme/bot/big (20), globex/_/_ (10)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from memory_lake import InputError, Lake
from memory_lake.publish import publish
from memory_lake.publish.diff import release_hold

from ..conftest import AS_OF, copy_lake, write_jsonl


def _memories(tenant, agent, user, n, prefix):
    return [{"id": f"{prefix}-{i:02d}", "tenant": tenant, "agent_id": agent, "user_id": user,
             "content": f"{prefix} fact number {i}", "created_at": "2026-11-01T00:00:00Z"} for i in range(n)]


@pytest.fixture(scope="module")
def published_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("holds") / "lake"
    lake = Lake.init(root)
    records = (_memories("acme", "bot", "small", 4, "s") + _memories("acme", "bot", "big", 20, "b")
               + _memories("globex", None, None, 10, "g"))
    lake.ingest([write_jsonl(root.parent / "m.jsonl", records)], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"
    return root


@pytest.fixture
def lake(published_dir, tmp_path) -> Lake:
    return copy_lake(published_dir, tmp_path / "lake")


def night(lake, n: int, records: list[dict] | None = None):
    """Night `n` after v1: an agent's snapshot (if any), then a publish."""
    as_of = AS_OF + timedelta(days=n)
    if records:
        lake.ingest([write_jsonl(lake.root.parent / f"night{n}.jsonl", records)], as_of=as_of)
    return publish(lake, as_of).details, as_of


def published_ids(lake, tenant: str, user: str | None = None) -> list[str]:
    frame = pl.read_parquet(lake.exports / "CURRENT" / "memories.parquet")
    frame = frame.filter(pl.col("tenant") == tenant, pl.col("status").is_in(["active", "conflicted"]))
    if user is not None:
        frame = frame.filter(pl.col("user_id") == user)
    return sorted(frame["id"].to_list())


def deleted(*ids: str, tenant="acme", agent="bot", user="big") -> list[dict]:
    return [{"id": i, "tenant": tenant, "agent_id": agent, "user_id": user, "deleted": True} for i in ids]


def test_a_small_scope_archiving_one_memory_publishes_and_blocks_no_one(lake):
    """4 memories, one archived by its agent: floor(4 x 0.2) = 0 allowed, and the whole publish was
    blocked for every tenant, every night. The absolute allowance (2) lets it through."""
    details, _ = night(lake, 1, [{"id": "s-00", "tenant": "acme", "agent_id": "bot", "user_id": "small",
                                  "content": "s fact number 0", "status": "archived", "version": 1},
                                 {"id": "g-new", "tenant": "globex", "content": "a new globex fact"}])
    assert (details["status"], details["version"], details["failed"], details.get("held")) == ("published", "v2", [], [])
    assert published_ids(lake, "acme", "small") == ["s-01", "s-02", "s-03"]
    assert "g-new" in published_ids(lake, "globex")


def archived(*ids: str, user="big") -> list[dict]:
    """An agent's snapshot lines that archive its memories (an update of version 1)."""
    return [{"id": i, "tenant": "acme", "agent_id": "bot", "user_id": user, "version": 1, "status": "archived",
             "content": f"b fact number {int(i.split('-')[1])}"} for i in ids]


def test_an_agent_forgetting_a_whole_scope_is_held_for_a_user_and_nothing_is_forgotten(lake):
    """`deleted: true` on all 20 memories of a scope emptied it in one night. A forget reaches the
    published versions at once (it scrubs them), so it is held before it applies: every line of
    that request goes to quarantine with the command that confirms it; the other lines land."""
    details, as_of = night(lake, 1, deleted(*[f"b-{i:02d}" for i in range(20)])
                           + [{"id": "g-new", "tenant": "globex", "content": "a new globex fact"}])
    assert (details["status"], details["version"], details["failed"], details["held"]) == ("published", "v2", [], [])
    assert published_ids(lake, "acme", "big") == [f"b-{i:02d}" for i in range(20)]
    assert "g-new" in published_ids(lake, "globex")
    held = lake.sql("SELECT line, reason, detail, memory_id FROM quarantine ORDER BY line").rows()
    assert len(held) == 20 and {r[1] for r in held} == {"mass forget held for a user"}
    assert held[0] == (1, "mass forget held for a user",
                       "an agent asked to forget 20 of 20 active memories of its scope within a day (at most 4), or 20 "
                       "within 7 days (at most 10): held, the memory stays; to confirm, a user runs memory-lake forget "
                       "b-00 --reason TEXT", "b-00")
    # the user confirms: a user's forget is never held
    from memory_lake.maintain import forget
    forget(lake, ids=[f"b-{i:02d}" for i in range(20)], operator="user", reason="confirmed",
           as_of=as_of + timedelta(hours=9), scrub=False, compact=False)
    details, _ = night(lake, 2)
    assert (details["status"], details["held"]) == ("published", [])
    assert published_ids(lake, "acme", "big") == []


def test_a_few_forgets_by_an_agent_apply_at_once(lake):
    night(lake, 1, deleted("b-00", "b-01", "b-02", "b-03"))  # 4 of 20: the nightly allowance
    assert lake.sql("SELECT count(*) FROM quarantine").item() == 0
    assert len(published_ids(lake, "acme", "big")) == 16


def test_an_agent_archiving_a_whole_scope_is_held_and_every_other_scope_publishes(lake):
    details, as_of = night(lake, 1, archived(*[f"b-{i:02d}" for i in range(20)])
                           + [{"id": "g-new", "tenant": "globex", "content": "a new globex fact"}])
    assert (details["status"], details["version"], details["failed"]) == ("published", "v2", [])
    assert details["held"] == [{
        "tenant": "acme", "agent_id": "bot", "user_id": "big", "active_before": 20, "active_after": 0,
        "by_agent": 20, "unexplained": 0, "drained": 20, "allowance": 4,
        "reason": "an agent removed 20 of 20 active memories (forget, status change or expiry; at most 4 a night); "
                  "an agent removed 20 of 20 memories over the last 7 days (at most 10)",
        "since": "2026-11-30T00:00:00Z", "held_at": "2026-12-01T00:00:00Z",
        "action": "memory-lake holds release acme --agent bot --user big --reason TEXT"}]
    assert published_ids(lake, "acme", "big") == [f"b-{i:02d}" for i in range(20)]  # agents still load them
    assert "g-new" in published_ids(lake, "globex")  # the other tenant is not held back
    assert lake.sql("SELECT count(*) FROM memories WHERE user_id = 'big' AND status = 'archived'").item() == 20

    # the next night nothing changes: still held (not blocked, not silently let through)
    details, _ = night(lake, 2, [{"id": "g-new2", "tenant": "globex", "content": "another globex fact"}])
    assert details["status"] == "published" and [h["held_at"] for h in details["held"]] == ["2026-12-01T00:00:00Z"]
    assert len(published_ids(lake, "acme", "big")) == 20 and "g-new2" in published_ids(lake, "globex")

    # a user confirms: the next publish lets the removal through and closes the hold
    released = release_hold(lake, "acme", "bot", "big", by="ops", reason="the agent reset its memory on purpose",
                            as_of=AS_OF + timedelta(days=2, hours=9))
    assert [r["user_id"] for r in released] == ["big"]
    details, _ = night(lake, 3)
    assert (details["status"], details["held"], details["failed"]) == ("published", [], [])
    assert published_ids(lake, "acme", "big") == []
    assert lake.sql("SELECT released_by, released_reason FROM publish_holds").rows() == [
        ("ops", "the agent reset its memory on purpose")]
    details, _ = night(lake, 4, [{"id": "g-new3", "tenant": "globex", "content": "a third globex fact"}])
    assert details["held"] == []


@pytest.mark.parametrize("how", ["archive", "forget"])
def test_a_steady_drain_is_held(lake, how):
    """2 of 20 a night is within the nightly allowance every night; over 7 days, more than half is not."""
    left = [f"b-{i:02d}" for i in range(20)]
    held_on = None
    for n in range(1, 8):
        gone, left = left[:2], left[2:]
        details, _ = night(lake, n, archived(*gone) if how == "archive" else deleted(*gone))
        assert details["status"] in ("published", "unchanged") and details["failed"] == []  # never blocked
        if details["held"] or lake.sql("SELECT count(*) FROM quarantine").item():
            held_on = n
            break
    assert held_on == 6  # 12 of 20 within 7 days, at most 10
    if how == "archive":
        assert details["held"][0]["reason"] == "an agent removed 12 of 20 memories over the last 7 days (at most 10)"
    else:
        assert lake.sql("SELECT DISTINCT reason FROM quarantine").item() == "mass forget held for a user"
    assert len(published_ids(lake, "acme", "big")) == 10  # as published after night 5


def test_a_users_forget_is_never_held(lake):
    from memory_lake.maintain import forget

    forget(lake, ids=[f"b-{i:02d}" for i in range(15)], operator="user", reason="asked to",
           as_of=AS_OF + timedelta(days=1), scrub=False, compact=False)
    details, _ = night(lake, 1)
    assert (details["status"], details["held"]) == ("published", [])
    assert published_ids(lake, "acme", "big") == [f"b-{i:02d}" for i in range(15, 20)]


def test_release_names_what_is_held_when_nothing_matches(lake):
    night(lake, 1, archived(*[f"b-{i:02d}" for i in range(20)]))
    with pytest.raises(InputError, match=r"no publish hold on acme/bot/small: scopes held now: acme/bot/big"):
        release_hold(lake, "acme", "bot", "small", by="ops", reason="x", as_of=AS_OF + timedelta(days=1, hours=1))
    with pytest.raises(InputError, match="--by must be a name"):
        release_hold(lake, "acme", None, None, by="ops\x1b[2J", reason="x", as_of=AS_OF + timedelta(days=1, hours=1))
    manifest = json.loads((lake.exports / "CURRENT" / "manifest.json").read_text())
    assert manifest["version"] == "v1"  # all that changed is held: nothing new to publish


def test_memories_that_arrive_already_expired_never_count_as_an_agents_drain(lake):
    """A stranger's import (a hot-memory tree whose ttl had passed, Zep facts no longer valid) of 8
    memories, 3 already past their expires_at: the nightly expiry archived them before any publish,
    so no agent ever loaded them. Night 2 was held ("an agent removed 3 of 5 memories over the last
    7 days") and blocked with nothing changed; a removal counts only for a memory some publish held."""
    from memory_lake.maintain import enforce_tiers

    records = [{"id": f"x-{i}", "tenant": "acme", "agent_id": "bot", "user_id": "imported",
                "content": f"imported fact number {i}", "created_at": "2026-11-28T00:00:00Z",
                **({"expires_at": "2026-11-29T00:00:00Z"} if i < 3 else {})} for i in range(8)]
    as_of = AS_OF + timedelta(days=1)
    lake.ingest([write_jsonl(lake.root.parent / "import.jsonl", records)], as_of=as_of)
    assert enforce_tiers(lake, as_of).counts["expire"] == 3
    first = publish(lake, as_of).details
    assert (first["status"], first["held"]) == ("published", [])
    assert published_ids(lake, "acme", "imported") == ["x-3", "x-4", "x-5", "x-6", "x-7"]
    second, _ = night(lake, 2)
    assert (second["status"], second["failed"], second["held"]) == ("unchanged", [], [])
    # memories that were published and then expire still count: 4 of the 5 published, 2 allowed
    day3 = AS_OF + timedelta(days=3)
    lake.ingest([write_jsonl(lake.root.parent / "later.jsonl", [
        {**r, "version": 1, "expires_at": "2026-12-02T12:00:00Z"} for r in records[3:7]])], as_of=day3)
    assert enforce_tiers(lake, day3).counts["expire"] == 4
    third = publish(lake, day3).details
    assert [(h["user_id"], h["reason"]) for h in third["held"]] == [
        ("imported", "an agent removed 4 of 5 active memories (forget, status change or expiry; at most 2 a night); "
                     "an agent removed 4 of 5 memories over the last 7 days (at most 2)")]  # not 7 of 8
