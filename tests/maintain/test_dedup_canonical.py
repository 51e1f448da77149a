"""Which memory a dedup merge keeps (issue 19): the most important one, then the oldest
(created_at), then the smallest id; ids and input order are chosen against each rule, so that
only the rule itself can pick the right one."""

from __future__ import annotations

from memory_lake.maintain.dedup import dedup

from ..conftest import AS_OF, rows, write_jsonl

TEXT = "Standup notes go to the team wiki"


def test_the_oldest_memory_is_kept_when_importance_ties(lake, tmp_path):
    # ids run against age: the smallest id is the newest, the oldest has the middle id
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [
        {"id": "m-1", "tenant": "acme", "content": TEXT, "importance": 0.5, "created_at": "2026-11-20T00:00:00Z"},
        {"id": "m-2", "tenant": "acme", "content": TEXT + "!", "importance": 0.5, "created_at": "2026-10-01T00:00:00Z"},
        {"id": "m-3", "tenant": "acme", "content": TEXT.upper(), "importance": 0.5, "created_at": "2026-11-05T00:00:00Z"},
    ])], as_of=AS_OF)
    dedup(lake, AS_OF)
    assert rows(lake, "SELECT id, status, merged_into, strftime(created_at, '%Y-%m-%d') AS created FROM memories "
                      "ORDER BY id") == [
        {"id": "m-1", "status": "merged", "merged_into": "m-2", "created": "2026-11-20"},
        {"id": "m-2", "status": "active", "merged_into": None, "created": "2026-10-01"},
        {"id": "m-3", "status": "merged", "merged_into": "m-2", "created": "2026-11-05"}]


def test_importance_comes_before_age_and_the_smallest_id_breaks_a_tie(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [
        # tenant "imp": the newest is the most important and is kept; it takes the earliest created_at
        {"id": "i-1", "tenant": "imp", "content": TEXT, "importance": 0.3, "created_at": "2026-10-01T00:00:00Z"},
        {"id": "i-2", "tenant": "imp", "content": TEXT + ".", "importance": 0.9, "created_at": "2026-11-20T00:00:00Z"},
        {"id": "i-3", "tenant": "imp", "content": TEXT + "!", "importance": 0.6, "created_at": "2026-09-01T00:00:00Z"},
        # tenant "tie": same importance, same created_at: the smallest id, whatever the input order
        {"id": "t-9", "tenant": "tie", "content": TEXT, "importance": 0.5, "created_at": "2026-11-01T00:00:00Z"},
        {"id": "t-4", "tenant": "tie", "content": TEXT + ".", "importance": 0.5, "created_at": "2026-11-01T00:00:00Z"},
        {"id": "t-7", "tenant": "tie", "content": TEXT + "!", "importance": 0.5, "created_at": "2026-11-01T00:00:00Z"},
    ])], as_of=AS_OF)
    report = dedup(lake, AS_OF)
    assert sorted((c["canonical"], tuple(c["members"])) for c in report.details["clusters"]) == [
        ("i-2", ("i-1", "i-3")), ("t-4", ("t-7", "t-9"))]
    assert rows(lake, "SELECT id, importance, strftime(created_at, '%Y-%m-%d') AS created FROM memories "
                      "WHERE merged_into IS NULL ORDER BY id") == [
        {"id": "i-2", "importance": 0.9, "created": "2026-09-01"},
        {"id": "t-4", "importance": 0.5, "created": "2026-11-01"}]


def test_a_contradiction_is_filed_once_between_canonical_memories_with_its_strongest_pair():
    """Two pairs reach one canonical pair (B merges into A, and C changes the number of both): it is
    filed once, with the pass and score of the stronger pair, the same on every run."""
    import polars as pl

    from memory_lake.maintain.dedup import find_duplicates
    from memory_lake.store.policy import Policy

    # b is a with a typo (merged); c changes b's number (score 1.0: numbers read as 0) and a's (0.91)
    texts = {"a": "The team budget for the billing service is $500 this year.",
             "b": "The team budget for the billing servce is $500 this year.",
             "c": "The team budget for the billing servce is $600 this year."}
    frame = pl.DataFrame([{"id": i, "tenant": "t", "agent_id": None, "user_id": None, "type": "fact", "tags": [],
                           "content": text, "importance": 0.5, "created_at": AS_OF, "covered": False}
                          for i, text in texts.items()], schema_overrides={"tags": pl.List(pl.String),
                                                                            "agent_id": pl.String, "user_id": pl.String})
    for _ in range(5):
        plan = find_duplicates(frame, None, Policy(), close=None)
        assert plan.merges.select("canonical", "member").to_dicts() == [{"canonical": "a", "member": "b"}]
        assert plan.contradictions.to_dicts() == [{"a": "a", "b": "c", "reason": "number", "pass": "near",
                                                    "score": 1.0}]
