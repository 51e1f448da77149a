"""A scope that only lost memories since a closed settled plan is not planned again (settled.py):
the bucket pairing it rests on, which scopes a plan leaves open, and a night that skips such a
scope writing exactly the tables a night that plans it writes."""

from __future__ import annotations

from itertools import combinations

import polars as pl

from memory_lake.cli import main
from memory_lake.maintain.dedup import dedup, find_duplicates
from memory_lake.maintain.dedup.candidates import WHOLE_BUCKET, _bucket_pairs
from memory_lake.store import resolve_as_of
from memory_lake.store.policy import Policy

from ..conftest import AS_OF, copy_lake, write_jsonl


def _buckets(members: list[list[int]]) -> pl.DataFrame:
    return pl.DataFrame({"members": members}).with_row_index("bucket")


def test_a_bucket_up_to_its_whole_size_pairs_every_two_members():
    """Up to WHOLE_BUCKET members, every two members of a bucket are a pair, so any of its members
    pair only as the whole bucket paired them; one more and a pair is missing, and its members are
    noted as crowded."""
    for size in range(2, WHOLE_BUCKET + 1):
        crowded: set[int] = set()
        pairs = _bucket_pairs(_buckets([list(range(size))]), crowded)
        assert sorted(pairs.rows()) == list(combinations(range(size), 2)) and not crowded, size
    crowded = set()
    bigger = _bucket_pairs(_buckets([list(range(WHOLE_BUCKET + 1)), [20, 21]]), crowded)
    assert len(bigger.filter(pl.col("a") < 20)) < len(list(combinations(range(WHOLE_BUCKET + 1), 2)))
    assert crowded == set(range(WHOLE_BUCKET + 1))


def _scopes(texts: dict[str, list[str]]) -> pl.DataFrame:
    return pl.DataFrame([{"id": f"{user}-{i}", "tenant": "t", "agent_id": "bot", "user_id": user, "type": "fact",
                          "tags": [], "content": text, "importance": 0.5, "created_at": AS_OF, "covered": True}
                         for user, group in texts.items() for i, text in enumerate(group)],
                        schema_overrides={"tags": pl.List(pl.String)})


def test_a_plan_leaves_open_the_scopes_some_of_their_memories_could_merge_in():
    """Open: a pair the guard let through (a rewording), two memories with one strict key, a bucket
    too large to pair whole (eight budgets that differ in their number share every bucket).
    Closed: a pair kept apart (another number), memories with no pair."""
    budgets = [f"The team budget for the offsite is ${500 + i} this year" for i in range(WHOLE_BUCKET + 2)]
    plan = find_duplicates(_scopes({
        "reworded": ["User prefers dark mode in every editor", "Note: user prefers dark mode in every editor"],
        "twins": ["Lunch is at noon on Fridays", "lunch is at noon on fridays!"],
        "crowded": budgets,
        "numbers": budgets[:2],
        "apart": ["The printer on floor 3 jams", "Lunch is at noon on Fridays"],
    }), None, Policy())
    assert sorted(plan.merges["member"].to_list()) == ["reworded-1", "twins-1"]
    assert sorted(plan.contradictions.select("a", "b").rows())[:1] == [("crowded-0", "crowded-1")]
    assert ("numbers-0", "numbers-1") in plan.contradictions.select("a", "b").rows()
    assert plan.open_scopes == {("t", "bot", user) for user in ("reworded", "twins", "crowded")}


def _records(texts: list[str]) -> list[dict]:
    return [{"id": f"m{i}", "tenant": "t", "agent_id": "bot", "user_id": "u", "content": text, "type": "fact",
             "created_at": "2026-11-20T09:00:00Z"} for i, text in enumerate(texts)]


def _tables(lake) -> dict[str, list]:
    with lake.reader() as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                                           "ORDER BY 1").fetchall()]
        return {name: sorted(map(repr, con.execute(f'SELECT * FROM "{name}"').fetchall())) for name in names}


def test_a_closed_scope_that_only_lost_memories_is_not_planned_and_the_tables_are_a_plans(lake, tmp_path, capsys):
    """Night 1 settles a closed scope (two budgets kept apart as a contradiction, other notes) and an
    open one (a crowded bucket). A memory of each leaves (dormant, as the tier rule leaves it), and
    night 2 does not plan the closed scope, plans the open one, writes every table as a night
    that plans both, and `memory-lake dedup` says so. When the memory of the closed scope comes back, night 3 plans it again."""
    closed = ["The team budget for the offsite is $500 this year", "The team budget for the offsite is $600 this year",
              "The printer on floor 3 jams", "Lunch is at noon on Fridays", "Standup moved to 9:30 on Mondays"]
    crowded = [f"The build server has {10 + i} cores and a queue" for i in range(WHOLE_BUCKET + 2)]
    records = _records(closed) + [{**r, "id": f"c{i}", "user_id": "v"} for i, r in enumerate(_records(crowded))]
    night = [resolve_as_of(f"2026-12-0{d}T03:00:00Z") for d in (1, 2, 3)]
    lake.ingest([write_jsonl(tmp_path / "in.jsonl", records)], as_of=night[0])
    first = dedup(lake, night[0], run_id="n1")
    assert first.counts["merged"] == 0 and first.counts["contradictions_filed"] > 1
    assert lake.sql("SELECT user_id, settled, members IS NOT NULL AS closed FROM dedup_scopes ORDER BY 1").rows() == [
        ("u", True, True), ("v", True, False)]
    with lake.writer() as con:
        con.execute("UPDATE memories SET status = 'dormant' WHERE id IN ('m1', 'c2')")
    kept, planned, told = (copy_lake(lake.root, tmp_path / name / "lake") for name in ("kept", "planned", "told"))
    with planned.writer() as con:
        con.execute("DELETE FROM dedup_scopes")  # plans every scope

    second, full = dedup(kept, night[1], run_id="n2"), dedup(planned, night[1], run_id="n2")
    assert (second.counts["scopes_settled_after_removals"], second.counts["examined"]) == (1, len(crowded) - 1)
    assert (full.counts["scopes_settled_after_removals"], full.counts["examined"]) == (0, len(closed) - 1 + len(crowded) - 1)
    assert second.counts["merged"] == full.counts["merged"] == 0
    assert _tables(kept) == _tables(planned)
    assert kept.sql("SELECT count(*) FROM dedup_verdicts WHERE 'm1' IN (a_memory_id, b_memory_id)").item() == 0

    assert main(["--lake", str(told.root), "dedup", "--as-of", night[1].isoformat()]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  1 scope(s) not planned, as since a night that merged nothing there they are unchanged (0) or only lost "
        "memories (1)"]

    with kept.writer() as con:  # the memory comes back: still one of the rows the closed plan read
        con.execute("UPDATE memories SET status = 'active' WHERE id = 'm1'")
    back = dedup(kept, night[2], run_id="n3")
    assert (back.counts["scopes_settled_after_removals"], back.counts["examined"]) == (0, len(closed))


def test_the_verdicts_fingerprint_covers_every_module_the_guard_imports():
    """The kept verdicts hold while the guard's own modules do not change (verdictcache.GUARD_MODULES):
    that list is exactly what guard.py imports from dedup, directly or through another, and beyond
    dedup it imports only what the fingerprint covers too (chat.py, text/) or Policy from store."""
    import ast
    from pathlib import Path

    from memory_lake.maintain.dedup import verdictcache

    folder = Path(verdictcache.__file__).parent
    found, todo, beyond = set(), ["guard.py"], set()
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        for node in ast.walk(ast.parse((folder / name).read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                todo.append(f"{node.module}.py")
            elif isinstance(node, ast.ImportFrom) and node.level > 1:
                beyond.add((node.level, node.module))
    assert found == set(verdictcache.GUARD_MODULES)
    assert beyond == {(2, "chat"), (3, "text"), (3, "store")}
    assert {source for source in verdictcache._SOURCES if not source.startswith("maintain/dedup/")} == {
        "maintain/chat.py", "maintain/data", "text"}
