"""The diff gate's frames (publish/diff.py, issue 18), read whole: `diff_batches` on a small lake
published once (v1), then changed and staged as the next candidate, as `check_export` calls it.

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
from memory_lake.publish.diff import MEMORY_SCHEMA, SCOPE_SCHEMA, diff_batches, empty_diff
from memory_lake.publish.export import stage_export
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


def diff_of(lake, policy: Policy | None = None) -> dict[str, pl.DataFrame]:
    """The diff of the staged candidate against v1, as the publish's check step computes it."""
    staged = stage_export(lake, LATER, policy).details
    candidate = Path(staged["staging"]) if staged["staging"] else lake.exports / "v1"
    with lake.writer(purpose="diff") as con:
        return diff_batches(con, lake.exports / "v1", candidate, policy or lake.policy)


def scopes(found: dict) -> list[tuple]:
    return found["diff_scopes"].rows()


def findings(found: dict) -> list[tuple]:
    """Rows of diff_memories where a rule does not hold."""
    frame = found["diff_memories"]
    return frame.filter(pl.col("important_changed").is_not_null() | pl.col("tenant_moved").is_not_null()).rows()


def test_nothing_to_compare_with_gives_the_empty_frames_with_their_schemas(lake, tmp_path):
    expected = {"diff_scopes": SCOPE_SCHEMA, "diff_memories": MEMORY_SCHEMA}
    for previous in (None, tmp_path / "v0"):  # nothing published; a folder without memories.parquet
        (tmp_path / "v0").mkdir(exist_ok=True)
        with lake.reader() as con:
            found = diff_batches(con, previous, lake.exports / "v1", lake.policy)
        assert {name: (frame.height, dict(frame.schema)) for name, frame in found.items()} == {
            name: (0, schema) for name, schema in expected.items()}
    assert {name: dict(frame.schema) for name, frame in empty_diff().items()} == expected


def test_the_same_version_gives_every_scope_and_every_memory_with_no_finding(lake):
    found = diff_of(lake)  # nothing changed: the candidate is v1 itself
    assert list(found) == ["diff_scopes", "diff_memories"]
    assert found["diff_scopes"].schema == pl.Schema(SCOPE_SCHEMA)
    assert scopes(found) == [
        ("acme", None, None, 5, 5, 0, 1, None),
        ("acme", "bot", "alice", 13, 13, 0, 2, None),
        (*ZH, 5, 5, 0, 1, None)]
    assert found["diff_memories"].schema == pl.Schema(MEMORY_SCHEMA)
    assert found["diff_memories"]["id"].to_list() == sorted(
        [f"a-{i:02d}" for i in range(10)] + ["a-imp", "a-imp2", "a-imp3"] + [f"n-{i}" for i in range(5)]
        + [f"z-{i}" for i in range(5)])
    assert findings(found) == []


def test_unexplained_drops_name_their_scope_null_parts_as_underscores(lake):
    plant(lake, "UPDATE memories SET status = 'archived' WHERE id IN ('a-00', 'a-01', 'a-02', 'a-03', 'a-04')",
          "UPDATE memories SET status = 'dormant' WHERE id IN ('n-0', 'n-1', 'n-2')",
          "UPDATE memories SET status = 'archived' WHERE id = 'z-0'")  # 1 of 5: within 20 %
    assert scopes(diff_of(lake)) == [
        ("acme", None, None, 5, 2, 0, 1, "acme/_/_: 5 -> 2 active, 3 unexplained (at most 1 allowed)"),
        ("acme", "bot", "alice", 13, 8, 0, 2, "acme/bot/alice: 13 -> 8 active, 5 unexplained (at most 2 allowed)"),
        (*ZH, 5, 4, 0, 1, None)]


def test_a_drop_within_the_tenants_own_share_passes_and_the_share_is_per_tenant(lake):
    plant(lake, "UPDATE memories SET status = 'archived' WHERE id IN ('z-0', 'z-1')",
          "UPDATE memories SET status = 'archived' WHERE id IN ('n-0', 'n-1')")
    policy = Policy().with_overrides({"tenants": {"中科": {"publish": {"max_active_drop": 0.4}}}})
    assert scopes(diff_of(lake, policy)) == [
        ("acme", None, None, 5, 3, 0, 1, "acme/_/_: 5 -> 3 active, 2 unexplained (at most 1 allowed)"),
        ("acme", "bot", "alice", 13, 13, 0, 2, None),
        (*ZH, 5, 3, 0, 2, None)]


def test_what_the_lake_explains_since_the_previous_version_is_subtracted(lake):
    """A forget (deleted), a user's own change, and a cleanup-log move to the status the memory has
    now, logged at or after v1's as_of; a move logged before it, or to another status, explains nothing."""
    forget(lake, ids=["a-00", "a-01"], operator="user", reason="asked", as_of=LATER, scrub=False, compact=False)
    lake.edit("a-02", content="the user's words", operator="user", as_of=LATER)
    lake.edit("a-03", content="an agent's words", operator="agent", as_of=LATER)  # an agent's: explains nothing
    plant(lake, "UPDATE memories SET status = 'archived' WHERE id IN ('a-02', 'a-03')",
          "UPDATE memories SET status = 'dormant' WHERE id IN ('n-0', 'n-1', 'n-2', 'n-3')",
          "INSERT INTO cleanup_log VALUES "
          f"('n-0', 'acme', NULL, NULL, 'long_term', 'long_term', 'active', 'dormant', 'r', 'run', '{AS_OF}'), "
          f"('n-1', 'acme', NULL, NULL, 'long_term', 'long_term', 'active', 'dormant', 'r', 'run', '{LATER}'), "
          f"('n-2', 'acme', NULL, NULL, 'long_term', 'long_term', 'active', 'dormant', 'r', 'run', "
          f"'{AS_OF - timedelta(seconds=1)}'), "
          f"('n-3', 'acme', NULL, NULL, 'long_term', 'long_term', 'active', 'archived', 'r', 'run', '{LATER}')")
    assert scopes(diff_of(lake)) == [
        ("acme", None, None, 5, 1, 2, 1, "acme/_/_: 5 -> 1 active, 2 unexplained (at most 1 allowed)"),
        ("acme", "bot", "alice", 13, 9, 3, 2, None),
        (*ZH, 5, 5, 0, 1, None)]


def test_a_memory_moved_to_another_scope_counts_as_left_and_unexplained(lake):
    plant(lake, "UPDATE memories SET agent_id = NULL, user_id = NULL WHERE id IN ('a-00', 'a-01', 'a-02')")
    assert scopes(diff_of(lake)) == [
        ("acme", None, None, 5, 8, 0, 1, None),
        ("acme", "bot", "alice", 13, 10, 0, 2, "acme/bot/alice: 13 -> 10 active, 3 unexplained (at most 2 allowed)"),
        (*ZH, 5, 5, 0, 1, None)]


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
    staged = stage_export(lake, LATER).details
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        with lake.writer(purpose="diff") as con:
            found = diff_batches(con, lake.exports / "v1", Path(staged["staging"]), lake.policy)
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert scopes(found)[-1] == (*ZH, 5, 2, 0, 1, "中科/客服/王芳: 5 -> 2 active, 3 unexplained (at most 1 allowed)")
