"""The index step's keyword postings: once per content, incremental, and what search reads."""

from __future__ import annotations

import pytest

from memory_lake.search import indexing
from memory_lake.search.indexing import index
from memory_lake.store.policy import Policy
from memory_lake.search.query import search

from ..conftest import AS_OF, rows, write_jsonl

NO_MODEL = Policy().with_overrides({"search": {"model": "none"}})  # postings only: no embedding needed here


def _ingest(lake, path, records):
    return lake.ingest([write_jsonl(path, records)], as_of=AS_OF)


def test_postings_once_per_content_then_only_what_changed(lake, tmp_path):
    _ingest(lake, tmp_path / "a.jsonl", [
        {"id": "a", "tenant": "t", "content": "Users prefer dark mode; dark themes too"},
        {"id": "b", "tenant": "t", "user_id": "u", "content": "users prefer dark mode; DARK themes too"},  # same hash
        {"id": "c", "tenant": "t", "content": "用户喜欢喝咖啡"},
    ])
    assert index(lake, AS_OF, NO_MODEL).counts["tokenized"] == 2
    assert rows(lake, "SELECT p.term, p.tf FROM postings p JOIN memories m ON m.content_hash = p.text_hash "
                      "WHERE m.id = 'a' ORDER BY p.term") == [
        {"term": "dark", "tf": 2}, {"term": "mod", "tf": 1}, {"term": "prefer", "tf": 1}, {"term": "them", "tf": 1},
        {"term": "user", "tf": 1}]
    assert rows(lake, "SELECT k.length, k.tokenizer FROM keyword_docs k JOIN memories m ON m.content_hash = k.text_hash "
                      "WHERE m.id = 'c'") == [{"length": 4, "tokenizer": "2"}]  # 用户 喜欢 喝 咖啡
    assert index(lake, AS_OF, NO_MODEL).counts["tokenized"] == 0
    # an edit makes a new content version: only it is tokenised
    _ingest(lake, tmp_path / "b.jsonl", [{"id": "c", "tenant": "t", "content": "用户喜欢喝绿茶", "version": 1}])
    assert index(lake, AS_OF, NO_MODEL).counts["tokenized"] == 1
    assert rows(lake, "SELECT count(*) AS n FROM keyword_docs") == [{"n": 3}]


def test_a_new_tokenizer_version_rebuilds_the_postings(lake, tmp_path, monkeypatch):
    _ingest(lake, tmp_path / "a.jsonl", [{"id": "a", "tenant": "t", "content": "dark mode"},
                                         {"id": "b", "tenant": "t", "content": "light mode"}])
    index(lake, AS_OF, NO_MODEL)
    monkeypatch.setattr(indexing, "TOKENIZER_VERSION", "3")
    assert index(lake, AS_OF, NO_MODEL).counts["tokenized"] == 2
    assert rows(lake, "SELECT DISTINCT tokenizer FROM keyword_docs") == [{"tokenizer": "3"}]
    assert rows(lake, "SELECT count(*) AS n FROM postings") == [{"n": 4}]  # the old version's rows are gone


def test_search_reads_the_postings_and_tokenises_only_what_the_index_lacks(lake, tmp_path):
    records = [{"id": f"m{i}", "tenant": "t", "session_id": "s", "created_at": f"2026-11-01T10:00:0{i}Z", "content": c}
               for i, c in enumerate(["Caroline went hiking at the lake", "It was sunny", "Melanie baked bread",
                                      "The bread was for the hiking trip", "用户喜欢喝咖啡"])]
    _ingest(lake, tmp_path / "a.jsonl", records)

    def answer(query):
        found = search(lake, query, tenant="t", mode="keyword", as_of=AS_OF, explain=True)
        return [(r.id, r.parts["keyword"]) for r in found]

    queries = ["hiking bread", "sunny lake", "咖啡", "Melanie"]
    before = [answer(q) for q in queries]  # nothing indexed: every posting computed at query time
    index(lake, AS_OF, NO_MODEL)
    assert [answer(q) for q in queries] == before  # from the stored postings: the same scores
    # one memory ingested after the index: found at once, scored with the stored ones
    _ingest(lake, tmp_path / "b.jsonl", [{"id": "m9", "tenant": "t", "session_id": "x", "content": "hiking boots"}])
    hiking = answer("hiking")
    assert [i for i, _ in hiking][:1] == ["m9"]  # the shortest document holding the term
    # "hiking" is in m0 and m3; with one neighbour each side every memory of session s matches
    assert {i for i, _ in hiking} == {"m9", "m0", "m1", "m2", "m3", "m4"}


def test_keyword_scores_equal_the_reference_bm25(lake, tmp_path):
    import random

    from memory_lake.search.bm25 import bm25_scores
    from memory_lake.text import tokenize

    rng = random.Random(5)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa 咖啡 茶 会议".split()
    records = [{"id": f"d{i:02d}", "tenant": "t", "content": " ".join(rng.choices(words, k=rng.randint(1, 9)))}
               for i in range(60)]
    _ingest(lake, tmp_path / "a.jsonl", records)
    index(lake, AS_OF, NO_MODEL)
    lake.policy = Policy().with_overrides({"search": {"context_window": 0, "index_dates": False}})
    for query in ("alpha beta", "咖啡 kappa", "theta theta iota"):
        expected = bm25_scores(tokenize(query), [tokenize(r["content"]) for r in records])
        best = sorted(((-round(s, 12), r["id"], s) for r, s in zip(records, expected) if s > 0))[:10]
        found = search(lake, query, tenant="t", mode="keyword", as_of=AS_OF, explain=True)
        assert [r.id for r in found] == [i for _, i, _ in best]
        assert [r.parts["keyword"] for r in found] == [pytest.approx(s, rel=1e-12) for _, _, s in best]


def test_a_loaded_scope_is_kept_until_the_lake_changes(lake, tmp_path):
    from memory_lake.search.scopeindex import SCOPES

    SCOPES.clear()
    _ingest(lake, tmp_path / "a.jsonl", [{"id": "a", "tenant": "t", "content": "blue bird"}])
    assert [r.id for r in search(lake, "bird", tenant="t", mode="keyword", as_of=AS_OF)] == ["a"]
    assert len(SCOPES) == 1
    identity = lake.data_identity()
    # a kept scope answers without opening the lake: here the file is open read-write in this
    # process, which would make any read-only open of it fail
    import duckdb

    blocker = duckdb.connect(str(lake.db_path))
    try:
        assert [r.id for r in search(lake, "bird", tenant="t", mode="keyword", as_of=AS_OF)] == ["a"]
    finally:
        blocker.close()
    assert lake.data_identity()[:3] == identity[:3]
    # any write, however quick, makes the next search load again
    _ingest(lake, tmp_path / "b.jsonl", [{"id": "b", "tenant": "t", "content": "red bird"}])
    assert lake.data_identity() != identity
    assert sorted(r.id for r in search(lake, "bird", tenant="t", mode="keyword", as_of=AS_OF)) == ["a", "b"]
    assert len(SCOPES) == 1  # the older load of the same scope was dropped
    lake.policy = Policy().with_overrides({"search": {"cache_rows": 0}})
    SCOPES.clear()
    search(lake, "bird", tenant="t", mode="keyword", as_of=AS_OF)
    assert len(SCOPES) == 0
