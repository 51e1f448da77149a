"""The publish gate reads a memory's summary for raw PII, not only its content (issue 19).

Ingest redacts every text, so raw PII reaches the lake only through a row written before a
detector existed (or a defect); this test plants one, as such a row would look, and publishes
through the whole path: stage, the GX suite over the staged Parquet, the CURRENT switch."""

from __future__ import annotations

import os

from memory_lake.publish.export import publish

from ..conftest import AS_OF, rows, write_jsonl

MEMORY = {"id": "m-1", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "type": "fact",
          "content": "Alice asked for the invoice to be sent again", "summary": "invoice resend",
          "created_at": "2026-11-01T00:00:00Z"}


def set_summary(lake, text):
    with lake.writer(purpose="test: an old row") as con:
        con.execute("UPDATE memories SET summary = ? WHERE id = 'm-1'", [text])


def test_raw_pii_in_a_summary_blocks_the_publish(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [MEMORY])], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"

    set_summary(lake, "resend the invoice to alice.smith@example.com")
    report = publish(lake, AS_OF)

    assert (report.details["status"], report.details["failed"]) == ("blocked", ["no raw PII"])
    (failed,) = [c for c in report.details["checks"] if not c["success"]]
    assert failed == {"expectation": "no raw PII", "success": False, "observed": "1 unexpected of 1 (e.g. True)"}
    assert os.readlink(lake.exports / "CURRENT") == "v1"
    assert sorted(p.name for p in lake.exports.iterdir()) == ["CURRENT", "v1"]
    assert rows(lake, "SELECT version, status, failed FROM publishes ORDER BY as_of, status") == [
        {"version": None, "status": "blocked", "failed": ["no raw PII"]},
        {"version": 1, "status": "published", "failed": []}]


def test_a_redacted_summary_publishes(lake, tmp_path):
    """The same change with the address as ingest writes it (a placeholder) goes through."""
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [
        {**MEMORY, "summary": "resend the invoice to alice.smith@example.com"}])], as_of=AS_OF)
    (summary,) = rows(lake, "SELECT summary FROM memories")
    assert "example.com" not in summary["summary"] and "[EMAIL:" in summary["summary"]
    report = publish(lake, AS_OF)
    assert (report.details["status"], report.details["version"], report.details["failed"]) == ("published", "v1", [])


def test_two_clean_texts_of_a_row_never_make_pii_together():
    """Each text is read on its own line: a content ending in digits and a summary starting with
    digits are two numbers, not one phone number, and a tag list is read item by item."""
    from datetime import datetime

    import polars as pl

    from memory_lake.publish.checks import batches, validate

    t = datetime(2026, 1, 1)
    memories = pl.DataFrame({
        "id": ["a"], "tier": ["working"], "status": ["active"], "type": ["fact"], "content": ["book room 1381234"],
        "summary": ["5678 guests"], "tags": [["alice.smith", "@example.com"]], "version": [1], "importance": [0.5],
        "created_at": [t], "updated_at": [t], "last_accessed_at": [t]})
    scopes = pl.DataFrame({"tenant": ["t"], "working_over": [-1], "short_term_over": [-1]})
    frames = batches(memories, scopes)
    assert frames["memories"]["raw_pii"].to_list() == [False]
    assert validate(frames).failed == []
    glued = memories.with_columns(summary=pl.lit("book room 13812345678 guests"))
    assert batches(glued, scopes)["memories"]["raw_pii"].to_list() == [True]  # the same digits in one text are a phone
