"""forget_memories: tombstones, the audit row, and every registered store scrubbed."""

from __future__ import annotations

from datetime import datetime

import polars as pl

from memory_lake.forget import forget_memories, scrubbers

from .conftest import AS_OF, rows, write_jsonl


def test_every_store_holding_text_is_registered():
    assert scrubbers() == ["memory_history", "quarantine"]


def test_forget_by_id_tombstones_and_scrubs(lake, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"id": "keep", "tenant": "acme", "content": "keep me"},
        {"id": "gone", "tenant": "acme", "content": "my diary entry", "summary": "diary", "tags": ["private"],
         "mood": "sad"},
        {"id": "gone", "tenant": "acme", "content": "duplicate line that also holds my diary entry"},
    ])
    lake.ingest([path], as_of=AS_OF)
    when = datetime(2026, 12, 1)
    with lake.writer() as con:
        count = forget_memories(con, pl.DataFrame({"id": ["gone", "gone", "nope"], "operator": ["user"] * 3,
                                                   "reason": ["asked"] * 3}), as_of=when, run_id="run-1")
    assert count == 1
    assert rows(lake, "SELECT id, status, content, summary, tags, extra, version, operator, updated_at "
                      "FROM memories ORDER BY id") == [
        {"id": "gone", "status": "deleted", "content": "", "summary": None, "tags": [], "extra": None, "version": 2,
         "operator": "user", "updated_at": when},
        {"id": "keep", "status": "active", "content": "keep me", "summary": None, "tags": [], "extra": None,
         "version": 1, "operator": "agent", "updated_at": AS_OF},
    ]
    audit = rows(lake, "SELECT version, change, operator, run_id, reason, as_of, after.status AS status, "
                       "after.content_hash IS NOT NULL AS hashed FROM memory_history WHERE memory_id = 'gone' ORDER BY seq")
    assert audit[-1] == {"version": 2, "change": "forget", "operator": "user", "run_id": "run-1", "reason": "asked",
                         "as_of": when, "status": "deleted", "hashed": True}
    everything = " ".join(str(v) for table in ("memories", "memory_history", "quarantine")
                          for row in rows(lake, f"SELECT * FROM {table}") for v in row.values())
    assert "diary" not in everything and "sad" not in everything and "private" not in everything
    # forgetting again is a no-op
    with lake.writer() as con:
        assert forget_memories(con, pl.DataFrame({"id": ["gone"], "operator": ["user"], "reason": ["again"]}),
                               as_of=when, run_id="run-2") == 0
