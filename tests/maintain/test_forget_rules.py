"""forget, at the edges the main tests leave open: the audit row a forget writes (its version and
the request file it names) and the context.md a scrub rewrites under the lake's own budget."""

from __future__ import annotations

from datetime import datetime

from memory_lake.maintain.forget import forget
from memory_lake.publish.export import publish
from memory_lake import Lake

from ..conftest import AS_OF, rows, write_jsonl

LATER = datetime(2026, 12, 1)


def test_the_forget_history_row_names_the_next_version_and_the_request_file(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "diary", "tenant": "acme", "user_id": "alice", "content": "my secret diary"},
        {"id": "milk", "tenant": "acme", "user_id": "alice", "content": "buy milk on friday"},
    ])], as_of=AS_OF)
    lake.ingest([write_jsonl(tmp_path / "t.jsonl", [
        {"id": "diary", "tenant": "acme", "user_id": "alice", "version": 1, "content": "my secret diary, page two"},
    ])], as_of=AS_OF)
    result = forget(lake, ids=["diary"], reason="user asked", as_of=LATER, source="decisions/forget-1.json")
    assert result["forgotten"] == ["diary"]
    (row,) = rows(lake, "SELECT memory_id, version, change, operator, reason, as_of, source_file, source_line, "
                        "before.version AS before_version, after.version AS after_version, "
                        "after.status AS after_status, after.content AS after_content, after.tags AS after_tags "
                        "FROM memory_history WHERE change = 'forget'")
    assert row == {"memory_id": "diary", "version": 3, "change": "forget", "operator": "user", "reason": "user asked",
                   "as_of": LATER, "source_file": "decisions/forget-1.json", "source_line": None,
                   "before_version": 2, "after_version": 3, "after_status": "deleted", "after_content": None,
                   "after_tags": None}
    # the after image is the row the table now holds, without its text (history keeps none)
    assert rows(lake, "SELECT version, status, content, tags FROM memories WHERE id = 'diary'") == [
        {"version": 3, "status": "deleted", "content": "", "tags": []}]
    # without a request file the row names none
    forget(lake, ids=["milk"], reason="user asked", as_of=LATER)
    assert rows(lake, "SELECT source_file, after.version AS v FROM memory_history "
                      "WHERE change = 'forget' AND memory_id = 'milk'") == [{"source_file": None, "v": 2}]


def test_a_scrubbed_context_md_keeps_the_lakes_own_token_budget(lake, tmp_path):
    """The rewritten context.md of a scope is the pack publish would write for what stays, within
    the lake's [context] max_tokens, not the default budget."""
    words = ["apple", "river", "candle", "forest", "violin", "harbor", "meadow", "rocket", "garden", "pillow"]
    records = [{"id": f"m{i}", "tenant": "acme", "user_id": "alice",
                "content": f"alice remembers the {w} story number {i} with many small details about the {w}"}
               for i, w in enumerate(words)]
    small = Lake.open(lake.root, policy_overrides={"context": {"max_tokens": 60}})
    small.ingest([write_jsonl(tmp_path / "s.jsonl", records)], as_of=AS_OF)
    publish(small, AS_OF)
    forget(small, ids=["m0"], reason="user asked", as_of=LATER)
    scrubbed = (small.exports / "v1" / "scopes" / "acme" / "_" / "alice" / "context.md").read_text()
    # what publish writes now for the memories that stay, under the same budget
    assert publish(small, LATER).details["version"] == "v2"
    fresh = (small.exports / "v2" / "scopes" / "acme" / "_" / "alice" / "context.md").read_text()
    assert "m0" not in scrubbed and "apple" not in scrubbed
    # the budget bites: not every remaining memory fits
    assert sum(w in scrubbed for w in words[1:]) < 9
    # the same pack; only the header's date is the version's own
    assert scrubbed == fresh.replace(LATER.isoformat(), AS_OF.isoformat())


def test_a_forget_and_its_compaction_leave_nothing_in_the_working_directory(lake, tmp_path, monkeypatch):
    """Compaction copies the lake through an in-memory DuckDB: no database file appears where the
    command was run (DuckDB takes ":MEMORY:" for a file name)."""
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "diary", "tenant": "acme", "user_id": "alice", "content": "my secret diary"}])], as_of=AS_OF)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    result = forget(lake, ids=["diary"], reason="user asked", as_of=LATER)
    assert (result["forgotten"], result["compaction"], result["files"]["database"]) == (
        ["diary"], "done", [lake.db_path.name])
    assert sorted(p.name for p in cwd.iterdir()) == []
    assert sorted(p.name for p in lake.root.iterdir() if p.name.startswith(lake.db_path.name)) == [lake.db_path.name]
    assert rows(lake, "SELECT count(*) AS n FROM pending_compactions") == [{"n": 0}]
