"""A manual edit of a text field with PII in it (issue 19, the inbox rule's survivors): the text
goes to the ingest as typed, so the lake redacts it with its own salt, exactly as if an agent had
written the same text in a snapshot; a placeholder made while validating (another salt) never
reaches the lake."""

from __future__ import annotations

import pytest

from memory_lake.ingest.inbox import edit_memory

from ..conftest import AS_OF, rows, write_jsonl


@pytest.mark.parametrize("field", ["content", "summary", "context_id"])
def test_an_edited_text_field_is_redacted_as_a_snapshot_would_be(lake, tmp_path, field):
    text = "call Alice on 13812345678 or alice@example.com"
    base = {"tenant": "acme", "content": "old text", "created_at": "2026-11-01T00:00:00Z"}
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [
        {"id": "edited", **base},
        {"id": "written", **base, field: text}])], as_of=AS_OF)
    edit_memory(lake, "edited", {field: text}, as_of=AS_OF)
    (edited,) = rows(lake, f"SELECT {field} AS v FROM memories WHERE id = 'edited'")
    (written,) = rows(lake, f"SELECT {field} AS v FROM memories WHERE id = 'written'")
    assert edited == written and "13812345678" not in edited["v"] and "[PHONE:" in edited["v"]
