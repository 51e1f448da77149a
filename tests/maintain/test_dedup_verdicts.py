"""What dedup keeps from night to night: the contradiction guard's verdicts (verdictcache.py) and
the scopes it need not plan again (settled.py). A night that reads them gives exactly the tables a
night that plans every scope and judges every pair gives, and a change to what they depend on
plans and judges everything again."""

from __future__ import annotations

import dataclasses

import pytest

from memory_lake.demo import night_as_of
from memory_lake.maintain.dedup import dedup
from memory_lake.maintain.dedup.verdictcache import guard_fingerprint, text_key
from memory_lake.maintain.forget import forget
from memory_lake.store import Lake, resolve_as_of

from ..conftest import copy_lake, write_jsonl

pytestmark = [pytest.mark.xdist_group("notebooks"), pytest.mark.models]


def _new_records(lake: Lake) -> list[dict]:
    """Tonight's arrivals: for a few of the lake's memories, a reworded copy (merges), the same
    sentence with another number (a contradiction) and a new unrelated memory, in their scopes."""
    picked = lake.sql("SELECT id, tenant, agent_id, user_id, content FROM memories WHERE status = 'active' "
                      "AND tier <> 'working' ORDER BY id LIMIT 6").to_dicts()
    assert len(picked) == 6
    records = []
    for i, m in enumerate(picked):
        scope = {"tenant": m["tenant"], "agent_id": m["agent_id"], "user_id": m["user_id"]}
        records += [
            {"id": f"new-{i}-reworded", **scope, "content": f"Note: {m['content']}", "type": "fact",
             "created_at": "2026-12-02T09:00:00Z"},
            {"id": f"new-{i}-number", **scope, "content": f"{m['content']} It happened 17 times.", "type": "fact",
             "created_at": "2026-12-02T09:05:00Z"},
            {"id": f"new-{i}-other", **scope, "content": f"Unrelated note {i}: the printer on floor {i + 2} jams.",
             "type": "fact", "created_at": "2026-12-02T09:10:00Z"}]
    return records


@pytest.fixture(scope="module")
def tonight_dir(three_nights, tmp_path_factory):
    """The demo lake after three nights with night 4's arrivals (`_new_records`) ingested and indexed,
    before its dedup: built once for the module's tests that start there; each takes a copy."""
    folder = tmp_path_factory.mktemp("tonight")
    tonight = copy_lake(three_nights.root, folder / "lake")
    assert tonight.sql("SELECT count(*) AS n FROM dedup_verdicts").item() > 0  # night 3 kept its pairs' verdicts
    as_of = resolve_as_of(night_as_of(4))
    tonight.ingest([write_jsonl(folder / "tonight.jsonl", _new_records(tonight))], as_of=as_of)
    tonight.index(as_of=as_of)
    return tonight.root


def _tables(lake: Lake) -> dict[str, list]:
    with lake.reader() as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                                           "ORDER BY 1").fetchall()]
        return {name: sorted(map(repr, con.execute(f'SELECT * FROM "{name}"').fetchall())) for name in names}


def test_kept_verdicts_give_the_tables_judging_every_pair_gives(tonight_dir, tmp_path):
    as_of = resolve_as_of(night_as_of(4))
    tonight = copy_lake(tonight_dir, tmp_path / "tonight" / "lake")
    judged, kept = (copy_lake(tonight.root, tmp_path / name / "lake") for name in ("judged", "kept"))
    with judged.writer() as con:
        con.execute("DELETE FROM dedup_verdicts")  # this copy judges every pair again
        con.execute("DELETE FROM dedup_scopes")  # and plans every scope
    again = dedup(judged, as_of, run_id="night-4")
    cached = dedup(kept, as_of, run_id="night-4")

    assert again.counts["pairs_judged_before"] == 0 and again.counts["scopes_settled"] == 0
    # only the scopes that changed since night 3 (or merged then) were planned, the rest settled
    assert 0 < cached.counts["scopes_settled"] < tonight.sql(
        "SELECT count(*) FROM (SELECT DISTINCT tenant, agent_id, user_id FROM memories)").item()
    assert 0 < cached.counts["pairs_judged_before"] < cached.counts["candidates"]  # new pairs judged tonight
    for key in ("merged", "clusters", "contradictions_filed"):
        assert cached.counts[key] == again.counts[key], key
    assert again.counts["merged"] > 0 and again.counts["contradictions_filed"] > 0  # tonight's arrivals did both
    assert sorted(map(repr, cached.details["clusters"])) == sorted(map(repr, again.details["clusters"]))
    # a settled scope's contradictions were filed on an earlier night: seen again by the full plan only
    assert set(map(repr, cached.details["contradictions"])) < set(map(repr, again.details["contradictions"]))
    assert _tables(kept) == _tables(judged)  # every table, the kept verdicts and settled scopes included


def test_a_changed_policy_or_rule_judges_every_pair_again(three_nights, tmp_path):
    lake = copy_lake(three_nights.root, tmp_path / "lake")
    policy = lake.policy
    looser = dataclasses.replace(policy, dedup=dataclasses.replace(policy.dedup, paraphrase_cosine=0.93))
    assert guard_fingerprint(looser) != guard_fingerprint(policy)
    as_of = resolve_as_of(night_as_of(4))
    with lake.writer() as con:
        con.execute("DELETE FROM dedup_scopes")  # every scope is planned: its pairs' verdicts are read
    assert dedup(lake, as_of, run_id="same").counts["pairs_judged_before"] > 0
    assert dedup(lake, as_of, policy=looser, run_id="looser").counts["pairs_judged_before"] == 0


def test_forgetting_a_memory_forgets_its_kept_verdicts(three_nights, tmp_path):
    lake = copy_lake(three_nights.root, tmp_path / "lake")
    memory, content = lake.sql("SELECT m.id, m.content FROM dedup_verdicts v JOIN memories m ON m.id = v.a_memory_id "
                               "WHERE v.verdict IS NOT NULL ORDER BY m.id LIMIT 1").row(0)
    assert lake.sql("SELECT count(*) FROM dedup_verdicts WHERE a_key = ?", [text_key(content)]).item() > 0
    theirs = lake.sql("SELECT count(*) FROM dedup_verdicts WHERE ? IN (a_memory_id, b_memory_id)", [memory]).item()
    before = lake.sql("SELECT count(*) FROM dedup_verdicts").item()
    forget(lake, ids=[memory], operator="user", reason="user asked to forget", as_of=resolve_as_of(night_as_of(4)))
    assert lake.sql("SELECT count(*) FROM dedup_verdicts WHERE ? IN (a_memory_id, b_memory_id)", [memory]).item() == 0
    assert lake.sql("SELECT count(*) FROM dedup_verdicts").item() == before - theirs


def test_planning_in_batches_of_scopes_gives_the_tables_of_one_plan(tonight_dir, tmp_path, monkeypatch):
    """Dedup plans a batch of whole scopes at a time (at 1M memories the vectors of all at once took
    gigabytes): batches of a few memories merge, file and settle exactly what one plan does."""
    import importlib

    step = importlib.import_module("memory_lake.maintain.dedup.step")  # the package's name is also the step's

    as_of = resolve_as_of(night_as_of(4))
    whole, batched = (copy_lake(tonight_dir, tmp_path / name / "lake") for name in ("whole", "batched"))
    for lake in (whole, batched):
        with lake.writer() as con:
            con.execute("DELETE FROM dedup_scopes")  # every scope planned
    at_once = dedup(whole, as_of, run_id="night-4")
    monkeypatch.setattr(step, "PLAN_BATCH_ROWS", 5)
    in_batches = dedup(batched, as_of, run_id="night-4")

    assert at_once.counts["merged"] > 0 and at_once.counts["contradictions_filed"] > 0
    assert in_batches.counts == at_once.counts
    assert _tables(batched) == _tables(whole)


def test_a_scope_that_merged_settles_the_same_night(tonight_dir, tmp_path):
    """A scope that merged is planned again in the same step until a round merges nothing, so the
    night after, when nothing changed, dedup plans no scope at all (before, every scope that merged
    was planned again the next night: at 1M memories 643k memories a night)."""
    as_of = resolve_as_of(night_as_of(4))
    lake = copy_lake(tonight_dir, tmp_path / "lake")
    tonight = dedup(lake, as_of, run_id="night-4")
    assert tonight.counts["merged"] > 0 and tonight.counts["rounds"] == 2  # merged, then a round that merged nothing
    assert tonight.counts["merged_in_later_rounds"] == 0
    scopes = lake.sql("SELECT count(*) FROM (SELECT DISTINCT tenant, agent_id, user_id FROM memories "
                      "WHERE status = 'active' AND tier <> 'important')").item()
    assert lake.sql("SELECT count(*) FROM dedup_scopes WHERE settled").item() == scopes
    after = dedup(lake, resolve_as_of(night_as_of(5)), run_id="night-5")
    assert (after.counts["examined"], after.counts["merged"], after.counts["rounds"]) == (0, 0, 1)
    assert after.counts["scopes_settled"] == scopes


def test_scopes_that_only_lost_memories_give_the_tables_planning_them_gives(three_nights, tmp_path):
    """On the demo lake after three nights: memories of closed settled scopes are forgotten (a
    person's forget) and others go dormant (as the tier rule leaves them). The night after plans
    none of those scopes, and writes every table as a night that plans every scope."""
    lake = copy_lake(three_nights.root, tmp_path / "lake" / "lake")
    closed = lake.sql("SELECT tenant, agent_id, user_id FROM dedup_scopes WHERE settled AND members IS NOT NULL "
                      "ORDER BY ALL").rows()
    assert len(closed) >= 4
    # in each of four closed scopes, a memory with a kept verdict (two forgotten, two dormant)
    leaving = [lake.sql("""SELECT m.id FROM memories m JOIN dedup_verdicts v ON m.id IN (v.a_memory_id, v.b_memory_id)
                           WHERE m.tenant = ? AND m.agent_id IS NOT DISTINCT FROM ? AND m.user_id IS NOT DISTINCT FROM ?
                             AND m.status = 'active' AND m.tier <> 'important' ORDER BY m.id LIMIT 1""",
                        list(scope)).to_series().to_list() for scope in closed]
    leaving = [ids[0] for ids in leaving if ids][:4]
    assert len(leaving) == 4
    as_of = resolve_as_of(night_as_of(4))
    forget(lake, ids=leaving[:2], operator="user", reason="user asked to forget", as_of=as_of)
    with lake.writer() as con:
        con.execute("UPDATE memories SET status = 'dormant' WHERE id IN (?, ?)", leaving[2:])
    kept, planned = (copy_lake(lake.root, tmp_path / name / "lake") for name in ("kept", "planned"))
    with planned.writer() as con:
        con.execute("DELETE FROM dedup_scopes")  # plans every scope
    skipped, full = dedup(kept, as_of, run_id="night-4"), dedup(planned, as_of, run_id="night-4")

    assert skipped.counts["scopes_settled_after_removals"] == 4 and full.counts["scopes_settled_after_removals"] == 0
    assert skipped.counts["examined"] < full.counts["examined"]
    for key in ("merged", "clusters", "contradictions_filed"):
        assert skipped.counts[key] == full.counts[key], key
    assert _tables(kept) == _tables(planned)
