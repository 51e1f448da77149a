"""What a nightly publishes is indexed: every published memory's text has its postings and a row
per embedding model in the same version, the summaries the night wrote after its ``index`` step
included (a stranger's report: they were published without vectors, so a busy-time search, the
targets and `search --mode semantic` missed them until the next night)."""

from __future__ import annotations

import duckdb

from memory_lake import Lake
from memory_lake.observe import run_nightly_steps
from memory_lake.publish import contract
from memory_lake.search.embeddings import models

from ..conftest import AS_OF, write_jsonl


def test_the_summaries_a_nightly_writes_are_published_with_their_vectors_and_postings(demo_lake_dir):
    version = (demo_lake_dir / "exports" / "CURRENT").resolve()
    names = models(Lake.open(demo_lake_dir).policy)
    con = duckdb.connect()
    try:
        unindexed = con.execute(
            """
            WITH m AS (SELECT * FROM read_parquet($memories)
                       WHERE status IN (SELECT unnest($statuses::VARCHAR[])) AND content <> ''),
                 wanted AS (SELECT unnest($models::VARCHAR[]) AS model)
            SELECT m.id, m.type, w.model AS lacks FROM m CROSS JOIN wanted w
            WHERE NOT EXISTS (SELECT 1 FROM read_parquet($embeddings) e
                              WHERE e.text_hash = m.content_hash AND e.model = w.model)
            UNION ALL
            SELECT m.id, m.type, 'postings' FROM m
            WHERE NOT EXISTS (SELECT 1 FROM read_parquet($keywords) k WHERE k.text_hash = m.content_hash)
            ORDER BY 1, 3
            """,
            {"memories": str(version / "memories.parquet"), "statuses": list(contract.SCOPE_STATUSES),
             "embeddings": str(version / "tables" / "embeddings" / "*.parquet"),
             "keywords": str(version / "tables" / "keyword_docs.parquet"), "models": list(names)}).fetchall()
        made_tonight = con.execute(
            "SELECT m.type, len(e.vector) > 0 FROM read_parquet($memories) m "
            "JOIN read_parquet($state) s ON s.summary_id = m.id AND s.status = 'published' "
            "JOIN read_parquet($embeddings) e ON e.text_hash = m.content_hash AND e.model = $model ORDER BY m.id",
            {"memories": str(version / "memories.parquet"), "state": str(version / "tables" / "summary_state.parquet"),
             "embeddings": str(version / "tables" / "embeddings" / "*.parquet"), "model": names[-1]}).fetchall()
    finally:
        con.close()
    assert unindexed == []
    assert len(names) == 2  # MiniLM and the multilingual model: each assessed every published text
    # the night's own summaries (written by `summarize`, after the `index` step) carry a multilingual
    # vector (MiniLM leaves the demo's Chinese ones an empty, assessed row)
    assert made_tonight and made_tonight == [("summary", True)] * len(made_tonight)


def test_a_text_the_index_cannot_take_is_reported_once_a_night(tmp_path, monkeypatch):
    """The second index (``index_summaries``) tries again what the first could not take; the run
    names each such text once, under ``index``."""
    from memory_lake.search import indexing

    lake = Lake.init(tmp_path / "lake")
    (lake.root / "memory-lake.toml").write_text('[search]\nmodel = "none"\nmultilingual_model = "none"\n')
    write_jsonl(lake.inbox / "a.jsonl", [
        {"id": who, "tenant": "acme", "user_id": who, "content": f"{who.title()} prefers tea in the morning"}
        for who in ("alice", "bruno")])
    real = indexing.term_counts

    def term_counts(hashes, texts):
        if any("Bruno" in t for t in texts):
            raise UnicodeError("cannot segment")
        return real(hashes, texts)

    monkeypatch.setattr(indexing, "term_counts", term_counts)
    summary = run_nightly_steps(Lake.open(lake.root), AS_OF, reports_dir=tmp_path / "reports")
    assert (summary["status"], summary["publish"]["status"]) == ("degraded", "published")
    assert [{k: e[k] for k in ("step", "user_id", "item", "error")} for e in summary["errors"]] == [
        {"step": "index", "user_id": "bruno", "item": "tokenising memory bruno", "error": "UnicodeError: cannot segment"}]
    # (with no model, "missing" counts every text: nothing can embed them)
    assert summary["steps"]["index_summaries"]["summary"] == "0 tokenized, 0 embedded, 2 missing before"
