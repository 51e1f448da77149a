"""The diff gate's frames (publish/diff.py, issues 18 and 37.3), read whole: `scope_holds` and
`diff_batches` on a small lake published once (v1), then changed: the candidate's rows as staging
builds them before any hold is applied (`_stage_rows`).

The lake lives in a folder whose name holds a quote (`o'lake`): the Parquet paths are SQL string
literals. One tenant is Chinese, so v1's manifest holds non-ASCII text. Every test takes a copy of
the published lake (built once per module)."""

from __future__ import annotations

import locale
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from memory_lake import Lake
from memory_lake.maintain import forget
from memory_lake.publish import publish
from memory_lake.publish.diff import MEMORY_SCHEMA, SCOPE_SCHEMA, diff_batches, empty_diff, scope_holds
from memory_lake.publish.export import _stage_rows
from memory_lake.store import Policy

from ..conftest import AS_OF, copy_lake, write_jsonl

LATER = AS_OF + timedelta(days=1)
ZH = ("中科", "客服", "王芳")


def _memory(id_: str, scope: tuple, **fields) -> dict:
    tenant, agent, user = scope
    return {"id": id_, "tenant": tenant, "agent_id": agent, "user_id": user, "content": f"memory {id_}",
            "created_at": "2026-11-01T00:00:00Z", **fields}


@pytest.fixture(scope="module")
def published_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("diff") / "o'lake"
    lake = Lake.init(root)
    records = [_memory(f"a-{i:02d}", ("acme", "bot", "alice")) for i in range(10)]
    records += [_memory("a-imp", ("acme", "bot", "alice"), tier="important", extra_note="kept"),
                _memory("a-imp2", ("acme", "bot", "alice"), tier="important"),
                _memory("a-imp3", ("acme", "bot", "alice"), tier="important")]
    records += [_memory(f"n-{i}", ("acme", None, None)) for i in range(5)]
    records += [_memory(f"z-{i}", ZH, content=f"记忆 {i}") for i in range(5)]
    lake.ingest([write_jsonl(root.parent / "m.jsonl", records)], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"
    return root


@pytest.fixture
def lake(published_dir, tmp_path) -> Lake:
    return copy_lake(published_dir, tmp_path / "o'lake")


def plant(lake, *statements: str) -> None:
    """Changes written straight into lake.duckdb (no history, no cleanup log): what a bug does."""
    with lake.writer(purpose="plant") as con:
        for statement in statements:
            con.execute(statement)


def unheld_candidate(lake) -> Path:
    """The candidate's memories.parquet as staging builds it, before holds."""
    folder = lake.root.parent / "candidate"
    folder.mkdir(exist_ok=True)
    with lake.writer(purpose="stage") as con:
        _stage_rows(con)
        con.execute(f"COPY publish_rows TO '{folder / 'memories.parquet'}' (FORMAT parquet)".replace("o'lake", "o''lake"))
    return folder


def diff_of(lake, policy: Policy | None = None) -> dict[str, pl.DataFrame]:
    """The diff of the candidate against v1, as the publish's check step computes it."""
    candidate = unheld_candidate(lake)
    with lake.writer(purpose="diff") as con:
        return diff_batches(con, lake.exports / "v1", candidate, policy or lake.policy, LATER)


def scopes(lake, policy: Policy | None = None) -> list[tuple]:
    """(scope, active before, after, by user, by system, by agent, unexplained, allowance, reason) per scope."""
    with lake.writer(purpose="judge") as con:
        _stage_rows(con)
        found = scope_holds(con, lake.exports / "v1", "publish_rows", policy or lake.policy, LATER)
    return found.select("tenant", "agent_id", "user_id", "active_before", "active_after", "by_user", "by_system",
                        "by_agent", "unexplained", "allowance", "reason").rows()


def findings(found: dict) -> list[tuple]:
    """Rows of diff_memories where a rule does not hold."""
    frame = found["diff_memories"]
    return frame.filter(pl.col("important_changed").is_not_null() | pl.col("tenant_moved").is_not_null()).rows()


def test_nothing_to_compare_with_gives_the_empty_frames_with_their_schemas(lake, tmp_path):
    expected = {"diff_scopes": SCOPE_SCHEMA, "diff_memories": MEMORY_SCHEMA}
    for previous in (None, tmp_path / "v0"):  # nothing published; a folder without memories.parquet
        (tmp_path / "v0").mkdir(exist_ok=True)
        with lake.reader() as con:
            found = diff_batches(con, previous, lake.exports / "v1", lake.policy, LATER)
        assert {name: (frame.height, dict(frame.schema)) for name, frame in found.items()} == {
            name: (0, schema) for name, schema in expected.items()}
    assert {name: dict(frame.schema) for name, frame in empty_diff().items()} == expected


def test_the_same_version_gives_every_scope_and_every_memory_with_no_finding(lake):
    found = diff_of(lake)  # nothing changed: the candidate is v1 itself
    assert list(found) == ["diff_scopes", "diff_memories"]
    assert found["diff_scopes"].schema == pl.Schema(SCOPE_SCHEMA)
    assert found["diff_scopes"].rows() == [
        ("acme", None, None, 5, 5, 0, 2, None),
        ("acme", "bot", "alice", 13, 13, 0, 2, None),
        (*ZH, 5, 5, 0, 2, None)]
    assert found["diff_memories"].schema == pl.Schema(MEMORY_SCHEMA)
    assert found["diff_memories"]["id"].to_list() == sorted(
        [f"a-{i:02d}" for i in range(10)] + ["a-imp", "a-imp2", "a-imp3"] + [f"n-{i}" for i in range(5)]
        + [f"z-{i}" for i in range(5)])
    assert findings(found) == []


def test_unexplained_drops_name_their_scope_null_parts_as_underscores(lake):
    plant(lake, "UPDATE memories SET status = 'archived' WHERE id IN ('a-00', 'a-01', 'a-02', 'a-03', 'a-04')",
          "UPDATE memories SET status = 'dormant' WHERE id IN ('n-0', 'n-1', 'n-2')",
          "UPDATE memories SET status = 'archived' WHERE id = 'z-0'")  # 1 of 5: within 20 %
    assert scopes(lake) == [
        ("acme", None, None, 5, 2, 0, 0, 0, 3, 2, "3 of 5 active memories left with nothing recorded to explain it "
                                                  "(at most 2 allowed)"),
        ("acme", "bot", "alice", 13, 8, 0, 0, 0, 5, 2, "5 of 13 active memories left with nothing recorded to explain "
                                                       "it (at most 2 allowed)"),
        (*ZH, 5, 4, 0, 0, 0, 1, 2, None)]
    assert diff_of(lake)["diff_scopes"]["unexplained_drop"].to_list() == [
        "acme/_/_: 3 of 5 active memories left with nothing recorded to explain it (at most 2 allowed)",
        "acme/bot/alice: 5 of 13 active memories left with nothing recorded to explain it (at most 2 allowed)", None]


def test_a_drop_within_the_tenants_own_share_passes_and_the_share_is_per_tenant(lake):
    plant(lake, "UPDATE memories SET status = 'archived' WHERE id IN ('z-0', 'z-1', 'z-2')",
          "UPDATE memories SET status = 'archived' WHERE id IN ('n-0', 'n-1', 'n-2')")
    policy = Policy().with_overrides({"tenants": {"中科": {"publish": {"max_active_drop": 0.6}}}})
    assert scopes(lake, policy) == [
        ("acme", None, None, 5, 2, 0, 0, 0, 3, 2, "3 of 5 active memories left with nothing recorded to explain it "
                                                  "(at most 2 allowed)"),
        ("acme", "bot", "alice", 13, 13, 0, 0, 0, 0, 2, None),
        (*ZH, 5, 2, 0, 0, 0, 3, 3, None)]


def test_each_removal_is_put_to_whoever_took_the_memory_out_since_the_previous_version(lake):
    """A user's forget, an agent's forget, a tier rule's move (system) and a dedup-style merge are
    put to their cause by the history row that took the memory out of the active set, at or after
    v1's as_of; a row before it, or an edit that left the memory active, explains nothing."""
    forget(lake, ids=["a-00", "a-01"], operator="user", reason="asked", as_of=LATER, scrub=False, compact=False)
    forget(lake, ids=["a-02"], operator="agent", reason="stale", as_of=LATER, scrub=False, compact=False)
    lake.edit("a-03", content="the user's words", operator="user", as_of=LATER)  # still active: no removal
    plant(lake, "UPDATE memories SET status = 'archived' WHERE id = 'a-03'",
          "UPDATE memories SET status = 'merged' WHERE id = 'a-04'",
          "UPDATE memories SET status = 'dormant' WHERE id IN ('n-0', 'n-1', 'n-2')",
          "INSERT INTO memory_history (seq, memory_id, tenant, version, change, operator, run_id, reason, as_of, before, after) "
          f"SELECT 1000 + row_number() OVER (), id, tenant, version, 'tier', 'system', 'run', 'long_term_dormant', "
          f"CASE WHEN id = 'n-0' THEN TIMESTAMP '{AS_OF - timedelta(seconds=1)}' ELSE TIMESTAMP '{LATER}' END, "
          "struct_pack(status := 'active', tenant := tenant, agent_id := agent_id, user_id := user_id), "
          "struct_pack(status := 'dormant', tenant := tenant, agent_id := agent_id, user_id := user_id) "
          "FROM memories WHERE id IN ('n-0', 'n-1')")
    assert scopes(lake) == [
        ("acme", None, None, 5, 2, 0, 1, 0, 2, 2, None),   # n-1 by a rule; n-0 (logged before v1) and n-2 unexplained
        ("acme", "bot", "alice", 13, 8, 2, 1, 1, 1, 2, None),  # a-00/01 user, a-04 merged, a-02 agent, a-03 unexplained
        (*ZH, 5, 5, 0, 0, 0, 0, 2, None)]


def test_a_memory_moved_to_another_scope_counts_as_left_and_unexplained(lake):
    plant(lake, "UPDATE memories SET agent_id = NULL, user_id = NULL WHERE id IN ('a-00', 'a-01', 'a-02')")
    assert scopes(lake) == [
        ("acme", None, None, 5, 8, 0, 0, 0, 0, 2, None),
        ("acme", "bot", "alice", 13, 10, 0, 0, 0, 3, 2, "3 of 13 active memories left with nothing recorded to explain "
                                                        "it (at most 2 allowed)"),
        (*ZH, 5, 5, 0, 0, 0, 0, 2, None)]


def test_important_memories_changed_gone_or_moved_are_named_and_a_users_edit_is_not(lake):
    lake.edit("a-imp3", content="the user rewrote it", operator="user", as_of=LATER)
    plant(lake, "UPDATE memories SET content = 'rewritten by a bug' WHERE id = 'a-imp'",
          "UPDATE memories SET status = 'deleted' WHERE id = 'a-imp2'",
          "UPDATE memories SET tenant = 'globex' WHERE id = 'a-05'",
          "UPDATE memories SET importance = 0.99 WHERE id = 'a-06'")  # not important: no finding
    assert findings(diff_of(lake)) == [
        ("a-05", None, "a-05: acme -> globex"),
        ("a-imp", "a-imp changed with no user history row", None),
        ("a-imp2", "a-imp2 disappeared with no user history row", None)]
    # the scopes are held for it: the important memories' one, and both ends of the move
    held = [(t, a, u, r) for t, a, u, *_, r in scopes(lake) if r]
    assert held == [
        ("acme", "bot", "alice", "important memory a-imp changed with no user history row; important memory a-imp2 "
                                 "disappeared with no user history row; memory a-05 moved from tenant acme to globex"),
        ("globex", "bot", "alice", "memory a-05 moved from tenant acme to globex")]


@pytest.mark.parametrize(("statement", "changed"), [
    ("UPDATE memories SET status = 'conflicted' WHERE id = 'a-imp'", False),   # disputed is no change
    ("UPDATE memories SET status = 'archived' WHERE id = 'a-imp'", True),
    ("UPDATE memories SET extra = '{\"note\": \"other\"}' WHERE id = 'a-imp'", True),
    ("UPDATE memories SET expires_at = TIMESTAMP '2027-01-01 00:00:00' WHERE id = 'a-imp'", True),
    ("UPDATE memories SET updated_at = TIMESTAMP '2026-12-01 00:00:00', access_count = 9 WHERE id = 'a-imp'", False),
])
def test_which_fields_of_an_important_memory_count_as_a_change(lake, statement, changed):
    plant(lake, statement)
    assert findings(diff_of(lake)) == ([("a-imp", "a-imp changed with no user history row", None)] if changed else [])


def test_the_previous_manifest_is_read_as_utf_8_whatever_the_locale(lake):
    """v1's manifest names the tenant 中科; a nightly run under cron's C locale still reads it."""
    assert "中科" in (lake.exports / "v1" / "manifest.json").read_text(encoding="utf-8")
    plant(lake, "UPDATE memories SET status = 'archived' WHERE id IN ('z-0', 'z-1', 'z-2')")
    candidate = unheld_candidate(lake)
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        with lake.writer(purpose="diff") as con:
            found = diff_batches(con, lake.exports / "v1", candidate, lake.policy, LATER)
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert found["diff_scopes"].rows()[-1] == (
        *ZH, 5, 2, 0, 2, "中科/客服/王芳: 3 of 5 active memories left with nothing recorded to explain it (at most 2 allowed)")
