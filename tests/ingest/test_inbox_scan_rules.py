"""The inbox scan and the edit's answers, where the inbox rule's second mutation sample (issue 19)
found no test: which files are snapshots and which are named as unrecognised, a scan of given
paths only, the base an edit queued behind a run carries, and the whole answer of an edit."""

from __future__ import annotations

import json
from pathlib import Path

from memory_lake.ingest.inbox import edit_memory
from memory_lake.ingest.load import discover_snapshots, scan_inbox
from memory_lake.publish.export import publish

from ..conftest import AS_OF, held_by_another_process, rows, write_jsonl


def test_the_scan_names_what_is_not_a_snapshot_and_reads_only_the_paths_given(lake, tmp_path):
    inbox = lake.inbox
    (inbox / "sub").mkdir(parents=True, exist_ok=True)
    for name in ("b.jsonl", "a.JSON", "z.parquet", "notes.txt", ".c.jsonl", "d.jsonl.part", "usage.events.jsonl",
                 "sub/e.ndjson", "sub/late.events.jsonl"):
        (inbox / name).write_text("{}\n", encoding="utf-8")
    snapshots, unrecognised = scan_inbox(lake)
    # folder by folder, the inbox's own files first, then by name
    assert [p.relative_to(inbox).as_posix() for p in snapshots] == ["a.JSON", "b.jsonl", "z.parquet", "sub/e.ndjson"]
    # usage events count only at the inbox's top; below it such a file is named, not read
    assert unrecognised == ["notes.txt", "sub/late.events.jsonl"]
    assert discover_snapshots(lake, [inbox / "sub"]) == [(inbox / "sub" / "e.ndjson").resolve()]
    assert discover_snapshots(lake, None) == snapshots


def test_an_edit_queued_behind_a_run_carries_the_history_it_was_made_on(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [{"id": "m1", "tenant": "acme", "content": "old"}])], as_of=AS_OF)
    (seq,) = rows(lake, "SELECT max(seq) AS s FROM memory_history WHERE memory_id = 'm1'")
    publish(lake, AS_OF)  # while a run holds the lake, the edit reads the published version
    with held_by_another_process(lake):
        queued = edit_memory(lake, "m1", {"content": "new"}, as_of=AS_OF)
    path = Path(queued["queued"])
    assert queued == {"queued": str(path), "memory_id": "m1", "base_version": 1}
    (line,) = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert (line["id"], line["content"], line["version"], line["_base_seq"]) == ("m1", "new", 1, seq["s"])


def test_an_edit_answers_with_the_whole_outcome(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [{"id": "m1", "tenant": "acme", "content": "old"}])], as_of=AS_OF)
    done = edit_memory(lake, "m1", {"content": "new"}, as_of=AS_OF)
    assert done == {"memory_id": "m1", "base_version": 1, "version": 2, "status": "active", "updated": 1,
                    "conflicted": 0, "quarantined": 0, "quarantine_reasons": {}, "trace_id": done["trace_id"]}
    assert done["trace_id"].startswith("edit-")


def test_edited_tags_are_read_as_a_list_typed_with_commas_or_as_json(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [{"id": "m1", "tenant": "acme", "content": "old", "tags": ["x"]}])],
                as_of=AS_OF)
    edit_memory(lake, "m1", {"tags": "work, urgent ,"}, as_of=AS_OF)
    assert rows(lake, "SELECT tags FROM memories") == [{"tags": ["urgent", "work"]}]
    edit_memory(lake, "m1", {"tags": '["home", "later"]'}, as_of=AS_OF)
    assert rows(lake, "SELECT tags FROM memories") == [{"tags": ["home", "later"]}]


def test_an_edited_tag_with_pii_is_redacted_with_the_lakes_salt(lake, tmp_path):
    """Typed tags go to the ingest as typed (not as the validation parsed them, whose placeholders
    carry another salt): the same tag as an agent's snapshot would give."""
    base = {"tenant": "acme", "content": "old text", "created_at": "2026-11-01T00:00:00Z"}
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [{"id": "edited", **base},
                                                    {"id": "written", **base, "tags": ["bob@example.com", "work"]}])],
                as_of=AS_OF)
    edit_memory(lake, "edited", {"tags": "work, bob@example.com"}, as_of=AS_OF)
    (edited,), (written,) = (rows(lake, f"SELECT tags FROM memories WHERE id = '{i}'") for i in ("edited", "written"))
    assert edited == written and "bob@example.com" not in str(edited) and "[EMAIL:" in str(edited)
