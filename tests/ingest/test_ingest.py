"""Ingest end to end on temporary lakes: landing, quarantine, idempotency, inbox handling, replay."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

import polars as pl
import pytest

from memory_lake import InputError

from ..conftest import AS_OF, rows, write_jsonl

MALFORMED = {
    # line kind -> (raw text, expected reason)
    "bad json": ('{"tenant": "t1", "content": "unterminated', "bad JSON"),
    "no content": ('{"tenant": "t1"}', "missing content"),
    "no tenant": ('{"content": "orphan memory"}', "missing tenant"),
    "bad tier": ('{"tenant": "t1", "content": "x", "tier": "forever"}', "unknown tier"),
    "bad ts": ('{"tenant": "t1", "content": "x", "created_at": "yesterday"}', "bad timestamp"),
    "wrong type": ('{"tenant": "t1", "content": "x", "importance": "high"}', "wrong type"),
    "not object": ("[1, 2, 3]", "bad JSON"),
    "importance range": ('{"tenant": "t1", "content": "x", "importance": 1.5}', "out of range"),
    "tags type": ('{"tenant": "t1", "content": "x", "tags": [1, 2]}', "wrong type"),
    "big": ('{"tenant": "t1", "content": "' + "x" * (64 * 1024 + 1) + '"}', "content too large"),
}


def test_thousand_good_fifty_bad_lands_exactly_and_is_idempotent(lake, tmp_path):
    good = [{"tenant": f"t{i % 3}", "agent_id": "a", "user_id": f"u{i % 7}", "content": f"memory number {i}",
             "type": "fact"} for i in range(1000)]
    kinds = list(MALFORMED)
    bad_at = {}  # 1-based line -> expected reason
    lines: list = list(good)
    for k in range(50):
        text, reason = MALFORMED[kinds[k % len(kinds)]]
        position = 3 + k * 20 + k  # spread through the file
        lines.insert(position - 1, text)
        bad_at[position] = reason
    # bad lines were inserted in increasing order, so their final line numbers are as recorded
    path = write_jsonl(tmp_path / "big.jsonl", lines)

    report = lake.ingest([path], as_of=AS_OF).as_dict()

    assert (report["records"], report["ingested"], report["quarantined"]) == (1050, 1000, 50)
    assert rows(lake, "SELECT count(*) AS n FROM memories") == [{"n": 1000}]
    got = {r["line"]: r["reason"] for r in rows(lake, "SELECT line, reason FROM quarantine")}
    assert got == bad_at
    assert set(rows(lake, "SELECT DISTINCT file FROM quarantine")[0].values()) == {str(path)}

    again = lake.ingest([path], as_of=AS_OF).as_dict()
    assert (again["files_skipped"], again["ingested"], again["quarantined"]) == (1, 0, 0)
    assert rows(lake, "SELECT count(*) AS n FROM memories") == [{"n": 1000}]
    assert rows(lake, "SELECT count(*) AS n FROM quarantine") == [{"n": 50}]


def test_new_memory_row_has_every_default(lake, tmp_path):
    path = write_jsonl(tmp_path / "one.jsonl", [{"tenant": "acme", "content": "User prefers dark mode",
                                                 "created_at": "2026-11-01T08:00:00Z", "channel": "slack"}])
    lake.ingest([path], as_of=AS_OF)
    (row,) = rows(lake, "SELECT * FROM memories")
    norm = "user prefers dark mode"
    assert row == {
        "id": "m_" + hashlib.sha256(f"acme\x1f\x1f\x1f{norm}".encode()).hexdigest()[:32],
        "tenant": "acme", "agent_id": None, "user_id": None, "context_id": None, "session_id": None,
        "tier": "short_term", "type": "other", "content": "User prefers dark mode", "summary": None,
        "tags": [], "importance": 0.5, "source": None,
        "created_at": datetime(2026, 11, 1, 8), "updated_at": datetime(2026, 11, 1, 8),
        "last_accessed_at": datetime(2026, 11, 1, 8), "access_count": 0, "reference_count": 0,
        "expires_at": None, "version": 1, "status": "active",
        "content_hash": hashlib.sha256(norm.encode()).hexdigest(), "merged_into": None, "operator": "agent",
        "trace_id": None, "extra": '{"channel":"slack"}', "published_at": None, "publish_meta": None,
    }
    (history,) = rows(lake, "SELECT memory_id, version, change, operator, reason, before, as_of, source_file, "
                            "source_line, after.content AS after_content FROM memory_history")
    assert history == {"memory_id": row["id"], "version": 1, "change": "insert", "operator": "agent",
                       "reason": "snapshot", "before": None, "as_of": AS_OF, "source_file": str(path),
                       "source_line": 1, "after_content": "User prefers dark mode"}


def test_inbox_file_leaves_once_its_redacted_copy_is_in_raw(lake):
    original = write_jsonl(lake.inbox / "0001.jsonl", [{"tenant": "acme", "content": "mail me at bob@example.com"}])
    digest = hashlib.sha256(original.read_bytes()).hexdigest()

    report = lake.ingest(as_of=AS_OF).as_dict()

    assert report["per_file"][0]["file"] == "0001.jsonl"
    assert not original.exists()
    copy = (lake.raw / f"{digest}.jsonl").read_text()
    assert "bob@example.com" not in copy and "[EMAIL:" in copy
    assert rows(lake, "SELECT file_hash, file_name, records, ingested FROM ingested_files") == [
        {"file_hash": digest, "file_name": "0001.jsonl", "records": 1, "ingested": 1}]
    # the same bytes dropped again are recognised and leave the inbox without a second landing
    write_jsonl(lake.inbox / "0001-again.jsonl", [{"tenant": "acme", "content": "mail me at bob@example.com"}])
    again = lake.ingest(as_of=AS_OF).as_dict()
    assert (again["files_skipped"], again["ingested"]) == (1, 0)
    assert list(lake.inbox.glob("*.jsonl")) == []


def test_files_outside_the_inbox_are_not_removed(lake, tmp_path):
    path = write_jsonl(tmp_path / "mine.jsonl", [{"tenant": "acme", "content": "keep my file"}])
    lake.ingest([path], as_of=AS_OF)
    assert path.exists()


def test_the_lakes_own_folders_are_refused_and_its_inbox_is_not(lake, tmp_path):
    """Observed: `ingest <lake>/raw` read the redacted copies as new files (new hashes), quarantined
    the same bad rows a second time and added two more copies to raw/."""
    write_jsonl(lake.inbox / "0001.jsonl", [{"tenant": "acme", "content": "one"}, "{broken"])
    assert lake.ingest(as_of=AS_OF).as_dict()["quarantined"] == 1
    state = (rows(lake, "SELECT count(*) AS n FROM quarantine"), sorted(p.name for p in lake.raw.iterdir()))
    for target, message in ((lake.raw, "inside the lake's own raw/ folder"),
                            (next(lake.raw.iterdir()), "inside the lake's own raw/ folder"),
                            (lake.root, "is the lake itself")):
        with pytest.raises(InputError, match=message):
            lake.ingest([target], as_of=AS_OF)
    assert (rows(lake, "SELECT count(*) AS n FROM quarantine"), sorted(p.name for p in lake.raw.iterdir())) == state
    # the inbox, given by its path, is read as usual
    write_jsonl(lake.inbox / "0002.jsonl", [{"tenant": "acme", "content": "two"}])
    assert lake.ingest([lake.inbox], as_of=AS_OF).as_dict()["ingested"] == 1


def test_in_progress_and_event_files_are_skipped(lake):
    write_jsonl(lake.inbox / "0001.jsonl.tmp", [{"tenant": "acme", "content": "still writing"}])
    write_jsonl(lake.inbox / "0002.events.jsonl", [{"ts": "2026-11-01T00:00:00Z", "tenant": "acme",
                                                    "event": "access", "memory_id": "x"}])
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert report["files"] == 0
    assert sorted(p.name for p in lake.inbox.iterdir() if p.is_file()) == ["0001.jsonl.tmp", "0002.events.jsonl"]


def test_dry_run_counts_and_writes_nothing(lake):
    path = write_jsonl(lake.inbox / "0001.jsonl", [{"tenant": "acme", "content": "a"}, "not json"])
    report = lake.ingest(dry_run=True, as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"], report["dry_run"]) == (1, 1, True)
    assert path.exists()
    assert list(lake.raw.iterdir()) == []
    for table in ("memories", "memory_history", "quarantine", "ingested_files", "runs"):
        assert rows(lake, f"SELECT count(*) AS n FROM {table}") == [{"n": 0}], table


def test_a_dry_run_of_several_files_counts_what_the_ingest_would(lake):
    """a.jsonl inserts x, b.jsonl updates it: a dry run said "2 new, 0 updated" (each file was
    tried alone against the lake), the ingest "1 new, 1 updated". One transaction holds all files
    of a dry run now, rolled back at the end."""
    write_jsonl(lake.inbox / "a.jsonl", [{"id": "x", "tenant": "t", "content": "Ann likes tea"}])
    write_jsonl(lake.inbox / "b.jsonl", [{"id": "x", "tenant": "t", "content": "Ann likes green tea", "version": 1},
                                         "not json"])
    keys = ("files", "ingested", "updated", "unchanged", "quarantined")
    dry = lake.ingest(dry_run=True, as_of=AS_OF).as_dict()
    for table in ("memories", "memory_history", "quarantine", "ingested_files", "runs"):
        assert rows(lake, f"SELECT count(*) AS n FROM {table}") == [{"n": 0}], table
    assert lake.tenant_salts(["t"], create=False) == {}  # a dry run stores no salt either
    real = lake.ingest(as_of=AS_OF).as_dict()
    assert {k: dry[k] for k in keys} == {k: real[k] for k in keys} == {
        "files": 2, "ingested": 1, "updated": 1, "unchanged": 0, "quarantined": 1}


def test_orchestrator_save_file_fills_scope_and_reads_tier_from_type(lake):
    doc = {"version": "1.0", "tenant": "zhongke", "agent_id": "orchestrator", "user_id": "u-1",
           "memories": [{"content": "用户是项目负责人", "type": "important"},
                        {"content": "用户喜欢喝咖啡", "type": "long-term", "persist": True},
                        {"content": "override scope", "user_id": "u-2", "type": "working"},
                        {"type": "working"}]}
    (lake.inbox / "save.json").write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (3, 1)
    assert rows(lake, "SELECT tenant, agent_id, user_id, tier, type, content, extra FROM memories ORDER BY content") == [
        {"tenant": "zhongke", "agent_id": "orchestrator", "user_id": "u-2", "tier": "working", "type": "other",
         "content": "override scope", "extra": None},
        {"tenant": "zhongke", "agent_id": "orchestrator", "user_id": "u-1", "tier": "long_term", "type": "other",
         "content": "用户喜欢喝咖啡", "extra": '{"persist":true}'},
        {"tenant": "zhongke", "agent_id": "orchestrator", "user_id": "u-1", "tier": "important", "type": "other",
         "content": "用户是项目负责人", "extra": None},
    ]
    assert rows(lake, "SELECT line, reason FROM quarantine") == [{"line": 4, "reason": "missing content"}]


def test_parquet_snapshot(lake, tmp_path):
    path = tmp_path / "snap.parquet"
    pl.DataFrame({"tenant": ["acme", "acme"], "content": ["from parquet", None],
                  "tags": [["a", "b"], None], "importance": [0.9, 0.1]}).write_parquet(path)
    report = lake.ingest([path], as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (1, 1)
    assert rows(lake, "SELECT content, tags, importance FROM memories") == [
        {"content": "from parquet", "tags": ["a", "b"], "importance": 0.9}]
    assert rows(lake, "SELECT line, reason FROM quarantine") == [{"line": 2, "reason": "missing content"}]


def test_broken_utf8_costs_one_line(lake, tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"tenant": "acme", "content": "ok"}\n{"tenant": "acme", "content": "caf\xe9"}\n')
    report = lake.ingest([path], as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (1, 1)
    assert rows(lake, "SELECT line, reason FROM quarantine") == [{"line": 2, "reason": "bad encoding"}]


def test_bad_json_says_where_the_line_stops_being_json(lake, tmp_path):
    """A stranger's trial: "not valid JSON" alone left a long line to be searched by eye."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"tenant": "acme", "content": "ok"}\n'
                    '{"tenant": "acme", "content": "a long memory about the user" "type": "fact"}\n'
                    '{"tenant": "acme", "content": "cut off\n', encoding="utf-8")
    report = lake.ingest([path], as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (1, 2)
    assert rows(lake, "SELECT line, reason, detail FROM quarantine ORDER BY line") == [
        {"line": 2, "reason": "bad JSON", "detail": "not valid JSON: Expecting ',' delimiter at column 62"},
        {"line": 3, "reason": "bad JSON", "detail": "not valid JSON: Unterminated string starting at column 31"}]


def test_missing_path_is_a_clear_error(lake, tmp_path):
    with pytest.raises(InputError, match="no such file"):
        lake.ingest([tmp_path / "nope.jsonl"], as_of=AS_OF)


def test_quarantine_export_fix_and_replay(lake, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "acme", "content": "fine"},
                                              {"tenant": "acme", "content": "x", "tier": "forever", "id": "m-9"},
                                              {"tenant": "acme", "content": "y", "created_at": "yesterday"}])
    lake.ingest([path], as_of=AS_OF)
    export = tmp_path / "fix.jsonl"
    from memory_lake.ingest.load import export_quarantine

    assert export_quarantine(lake, export) == 2
    fixed = [json.loads(line) for line in export.read_text().splitlines()]
    assert [f["_quarantine_id"] for f in fixed] == [1, 2]
    fixed[0]["tier"] = "long_term"
    fixed[1]["created_at"] = "2026-11-29T00:00:00Z"
    write_jsonl(export, fixed)

    report = lake.replay_quarantine(export, as_of=AS_OF).as_dict()

    assert (report["ingested"], report["quarantined"]) == (2, 0)
    assert rows(lake, "SELECT quarantine_id, status FROM quarantine ORDER BY 1") == [
        {"quarantine_id": 1, "status": "replayed"}, {"quarantine_id": 2, "status": "replayed"}]
    assert rows(lake, "SELECT tier, extra FROM memories WHERE id = 'm-9'") == [{"tier": "long_term", "extra": None}]
    assert lake.quarantine().height == 0


def test_run_is_recorded(lake, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "acme", "content": "fine"}])
    report = lake.ingest([path], as_of=AS_OF)
    (run,) = rows(lake, "SELECT run_id, kind, as_of, status, report FROM runs")
    assert (run["run_id"], run["kind"], run["as_of"], run["status"]) == (report.run_id, "ingest", AS_OF, "ok")
    assert json.loads(run["report"])["ingested"] == 1


def test_an_unreadable_file_is_quarantined_once_and_the_run_goes_on(lake):
    (lake.inbox / "0001-broken.parquet").write_bytes(b"PAR1 this is not parquet")
    write_jsonl(lake.inbox / "0002.jsonl", [{"tenant": "acme", "content": "still lands"}])
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert [(f["file"], f["status"], f["quarantined"]) for f in report["per_file"]] == [
        ("0001-broken.parquet", "unreadable", 1), ("0002.jsonl", "ingested", 0)]
    (row,) = rows(lake, "SELECT file, line, reason, raw FROM quarantine")
    assert row == {"file": "0001-broken.parquet", "line": 0, "reason": "unreadable file", "raw": ""}
    assert (lake.inbox / "0001-broken.parquet").exists()
    again = lake.ingest(as_of=AS_OF).as_dict()
    assert again["quarantined"] == 0
    assert rows(lake, "SELECT count(*) AS n FROM quarantine") == [{"n": 1}]


def test_raw_copy_keeps_line_numbers(lake, tmp_path):
    path = tmp_path / "gaps.jsonl"
    path.write_text('{"tenant": "t", "content": "one"}\n\n\n{"tenant": "t", "content": "four"}\nbroken\n')
    lake.ingest([path], as_of=AS_OF)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert (lake.raw / f"{digest}.jsonl").read_text().split("\n") == [
        '{"tenant": "t", "content": "one"}', "", "", '{"tenant": "t", "content": "four"}', "broken", ""]


# ---------------------------------------------------------------- tolerate what is unambiguous (issue 12 item 2)
def test_bom_and_one_bad_byte_cost_only_the_bad_line(lake, tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"tenant": "acme", "content": "first"}\n'
                     b'{"tenant": "acme", "content": "caf\xe9"}\n{"tenant": "acme", "content": "third"}\n')
    report = lake.ingest([path], as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (2, 1)
    assert rows(lake, "SELECT content FROM memories ORDER BY content") == [{"content": "first"}, {"content": "third"}]
    assert rows(lake, "SELECT line, reason, detail FROM quarantine") == [
        {"line": 2, "reason": "bad encoding", "detail": "byte 0xE9 at byte 35 of the line is not valid UTF-8"}]


def test_utf16_with_a_bom_is_read(lake, tmp_path):
    path = tmp_path / "windows.jsonl"
    path.write_bytes('{"tenant": "acme", "content": "用户喜欢喝咖啡"}\r\n'.encode("utf-16"))
    assert lake.ingest([path], as_of=AS_OF).as_dict()["ingested"] == 1
    assert rows(lake, "SELECT content FROM memories") == [{"content": "用户喜欢喝咖啡"}]


@pytest.mark.parametrize("newline", ["\r", "\r\n"])
def test_cr_and_crlf_line_ends_split_records(lake, tmp_path, newline):
    path = tmp_path / "mac.jsonl"
    body = ['{"tenant": "acme", "content": "one"}', '{"tenant": "acme", "content": "two"}', "", "broken"]
    path.write_bytes(newline.join(body).encode() + newline.encode())
    report = lake.ingest([path], as_of=AS_OF).as_dict()
    assert (report["records"], report["ingested"], report["quarantined"]) == (3, 2, 1)
    assert rows(lake, "SELECT content FROM memories ORDER BY content") == [{"content": "one"}, {"content": "two"}]
    assert rows(lake, "SELECT line, reason, raw FROM quarantine") == [{"line": 4, "reason": "bad JSON", "raw": "broken"}]


def test_suffixes_match_in_any_case_and_unrecognised_files_are_named(lake, capsys):
    from memory_lake.cli import main

    write_jsonl(lake.inbox / "0001.JSONL", [{"tenant": "acme", "content": "upper case jsonl"}])
    write_jsonl(lake.inbox / "0002.NDJSON", [{"tenant": "acme", "content": "upper case ndjson"}])
    (lake.inbox / "0003.Json").write_text(json.dumps({"tenant": "acme", "memories": [{"content": "mixed case json"}]}))
    pl.DataFrame({"tenant": ["acme"], "content": ["upper case parquet"]}).write_parquet(lake.inbox / "0004.PARQUET")
    (lake.inbox / "notes.txt").write_text("not a snapshot")
    write_jsonl(lake.inbox / "sub" / "0005.Events.JSONL", [{"event": "access"}])  # never collected by events
    write_jsonl(lake.inbox / "0006.jsonl.TMP", [{"tenant": "acme", "content": "still writing"}])
    write_jsonl(lake.inbox / "0007.events.jsonl", [{"ts": "2026-11-01T00:00:00Z", "tenant": "acme",
                                                    "event": "access", "memory_id": "x"}])
    root = str(lake.root)

    assert main(["--lake", root, "status"]) == 0
    out = capsys.readouterr().out
    assert "4 file(s) waiting in the inbox" in out
    assert "unrecognised file(s) in inbox: notes.txt, sub/0005.Events.JSONL" in out
    assert main(["--lake", root, "--json", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["inbox_files"], status["inbox_unrecognised"]) == (4, ["notes.txt", "sub/0005.Events.JSONL"])

    assert main(["--lake", root, "--json", "ingest", "--as-of", "2026-11-30T00:00:00Z"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(f["file"], f["format"], f["ingested"]) for f in report["per_file"]] == [
        ("0001.JSONL", "jsonl", 1), ("0002.NDJSON", "jsonl", 1), ("0003.Json", "json", 1), ("0004.PARQUET", "parquet", 1)]
    assert report["unrecognised_files"] == ["notes.txt", "sub/0005.Events.JSONL"]
    assert main(["--lake", root, "ingest"]) == 0
    assert "not ingested, unrecognised file(s): notes.txt, sub/0005.Events.JSONL" in capsys.readouterr().out
    assert sorted(str(p.relative_to(lake.inbox)) for p in lake.inbox.rglob("*") if p.is_file()) == [
        "0006.jsonl.TMP", "0007.events.jsonl", "notes.txt", "sub/0005.Events.JSONL"]


def test_export_keeps_a_trailing_comma_to_fix_and_replay_marks_it(lake, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", ['{"id": "m-1", "tenant": "acme", "content": "c", "operator": "agent",}'])
    lake.ingest([path], as_of=AS_OF)
    from memory_lake.ingest.load import export_quarantine

    export = tmp_path / "fix.jsonl"
    assert export_quarantine(lake, export) == 1
    assert export.read_text() == '{"_quarantine_id":1,"id": "m-1", "tenant": "acme", "content": "c", "operator": "agent",}\n'
    export.write_text(export.read_text().replace(',}', '}'))
    report = lake.replay_quarantine(export, as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (1, 0)
    assert rows(lake, "SELECT quarantine_id, status FROM quarantine") == [{"quarantine_id": 1, "status": "replayed"}]


# ---------------------------------------------------------------- replay keeps one row per bad record
def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_replay_updates_rows_that_fail_again_and_closes_fixed_ones_bad_json_too(lake, tmp_path):
    """Finding 3: 4 bad records stay 4 rows through any number of replays; every exported line
    carries its `_quarantine_id` (bad JSON and non-objects too), a fixed line closes its row."""
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"tenant": "t1", "content": "fine"},
        '{"id": "bad-1", "tenant": "t1", "content": "unterminated',
        {"id": "bad-2", "tenant": "t1", "content": "x", "tier": "forever"},
        "[1, 2, 3]",
        {"id": "bad-4", "tenant": "t1", "content": "y", "created_at": "yesterday"},
    ])
    lake.ingest([path], as_of=AS_OF)
    export = tmp_path / "fix.jsonl"
    from memory_lake.ingest import export_quarantine

    assert export_quarantine(lake, export) == 4
    assert _lines(export) == [
        '{"_quarantine_id":1,"id": "bad-1", "tenant": "t1", "content": "unterminated',
        '{"id":"bad-2","tenant":"t1","content":"x","tier":"forever","_quarantine_id":2}',
        '{"_quarantine_id":3,"_raw":"[1, 2, 3]"}',
        '{"id":"bad-4","tenant":"t1","content":"y","created_at":"yesterday","_quarantine_id":4}',
    ]
    # First replay: nothing fixed. The rows stay as they were; no new row.
    export_hash = hashlib.sha256(export.read_bytes()).hexdigest()
    report = lake.replay_quarantine(export, as_of=AS_OF).as_dict()
    # the lines live on in their rows; the replay's raw copy keeps them blank (forget finds the rows)
    assert (lake.raw / f"{export_hash}.jsonl").read_text(encoding="utf-8") == "\n" * 4
    assert (report["ingested"], report["quarantined"], report["replayed"], report["still_failing"]) == (0, 4, 0, 4)
    table = "SELECT quarantine_id, file, line, reason, status, memory_id FROM quarantine ORDER BY 1"
    before = [{"quarantine_id": 1, "file": str(path), "line": 2, "reason": "bad JSON", "status": "open", "memory_id": None},
              {"quarantine_id": 2, "file": str(path), "line": 3, "reason": "unknown tier", "status": "open",
               "memory_id": "bad-2"},
              {"quarantine_id": 3, "file": str(path), "line": 4, "reason": "bad JSON", "status": "open", "memory_id": None},
              {"quarantine_id": 4, "file": str(path), "line": 5, "reason": "bad timestamp", "status": "open",
               "memory_id": "bad-4"}]
    assert rows(lake, table) == before

    # Second round: bad-1's JSON fixed, bad-2 fixed into another fault, the array wrapped line
    # replaced by a record, bad-4 left as it was.
    fixed = _lines(export)
    fixed[0] += '"}'
    fixed[1] = fixed[1].replace('"forever"', '"forever", "importance": 7')
    fixed[2] = '{"_quarantine_id": 3, "tenant": "t1", "content": "was an array"}'
    export.write_text("\n".join(fixed) + "\n", encoding="utf-8")
    report = lake.replay_quarantine(export, as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"], report["replayed"], report["still_failing"]) == (2, 2, 2, 2)
    assert rows(lake, "SELECT quarantine_id, reason, detail, status, raw FROM quarantine ORDER BY 1") == [
        {"quarantine_id": 1, "reason": "bad JSON", "detail": "not valid JSON: Unterminated string starting at column 63", "status": "replayed",
         "raw": '{"id": "bad-1", "tenant": "t1", "content": "unterminated'},
        {"quarantine_id": 2, "reason": "out of range", "detail": "importance 7 is outside 0..1", "status": "open",
         "raw": '{"id":"bad-2","tenant":"t1","content":"x","tier":"forever","importance":7}'},
        {"quarantine_id": 3, "reason": "bad JSON", "detail": "not a JSON object", "status": "replayed",
         "raw": "[1, 2, 3]"},
        {"quarantine_id": 4, "reason": "bad timestamp", "detail": "created_at: \"yesterday\"", "status": "open",
         "raw": '{"id":"bad-4","tenant":"t1","content":"y","created_at":"yesterday"}'},
    ]
    assert rows(lake, "SELECT id, content, status FROM memories WHERE id = 'bad-1'") == [
        {"id": "bad-1", "content": "unterminated", "status": "active"}]
    assert lake.quarantine()["quarantine_id"].to_list() == [2, 4]

    # Export again: the still-open rows carry the latest attempt, and fixing them closes them.
    assert export_quarantine(lake, export, overwrite=True) == 2
    fixed = [json.loads(line) for line in _lines(export)]
    assert [f["_quarantine_id"] for f in fixed] == [2, 4]
    fixed[0].update(tier="working", importance=0.7)
    fixed[1]["created_at"] = "2026-11-01T00:00:00Z"
    write_jsonl(export, fixed)
    report = lake.replay_quarantine(export, as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"], report["replayed"], report["still_failing"]) == (2, 0, 2, 0)
    assert rows(lake, "SELECT count(*) AS n FROM quarantine WHERE status = 'open'") == [{"n": 0}]
    assert rows(lake, "SELECT count(*) AS n FROM quarantine") == [{"n": 4}]


def test_a_wrapped_line_fixed_inside_its_raw_text_closes_its_row(lake, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", ["not json at all"])
    lake.ingest([path], as_of=AS_OF)
    from memory_lake.ingest import export_quarantine

    export = tmp_path / "fix.jsonl"
    assert export_quarantine(lake, export) == 1
    assert _lines(export) == ['{"_quarantine_id":1,"_raw":"not json at all"}']
    write_jsonl(export, [{"_quarantine_id": 1, "_raw": json.dumps({"tenant": "t1", "content": "now json"})}])
    report = lake.replay_quarantine(export, as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"], report["replayed"]) == (1, 0, 1)
    assert rows(lake, "SELECT quarantine_id, status FROM quarantine") == [{"quarantine_id": 1, "status": "replayed"}]
    assert rows(lake, "SELECT tenant, content, extra FROM memories") == [
        {"tenant": "t1", "content": "now json", "extra": None}]


def test_export_refuses_to_replace_a_file_unless_asked(lake, tmp_path):
    """Finding 13: an existing export file may hold edits in progress."""
    path = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "t1", "content": "x", "tier": "forever"}])
    lake.ingest([path], as_of=AS_OF)
    from memory_lake.ingest import export_quarantine

    export = tmp_path / "fix.jsonl"
    export.write_text("my edits\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"fix.jsonl already exists .* --force"):
        export_quarantine(lake, export)
    assert export.read_text(encoding="utf-8") == "my edits\n"
    assert export_quarantine(lake, export, overwrite=True) == 1
    assert json.loads(export.read_text(encoding="utf-8"))["_quarantine_id"] == 1


def test_a_line_linked_to_a_closed_row_that_fails_gets_a_new_row_without_the_link(lake, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"id": "m-1", "tenant": "t1", "content": "x", "tier": "forever"}])
    lake.ingest([path], as_of=AS_OF)
    from memory_lake.ingest import export_quarantine

    export = tmp_path / "fix.jsonl"
    export_quarantine(lake, export)
    good = json.loads(export.read_text(encoding="utf-8")) | {"tier": "working"}
    write_jsonl(export, [good, good | {"id": "m-2", "tier": "sometimes"}])  # the line copied and broken again
    report = lake.replay_quarantine(export, as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"], report["replayed"], report["still_failing"]) == (1, 1, 1, 0)
    assert rows(lake, "SELECT quarantine_id, line, reason, memory_id, status, raw FROM quarantine ORDER BY 1") == [
        {"quarantine_id": 1, "line": 1, "reason": "unknown tier", "memory_id": "m-1", "status": "replayed",
         "raw": '{"id": "m-1", "tenant": "t1", "content": "x", "tier": "forever"}'},
        {"quarantine_id": 2, "line": 2, "reason": "unknown tier", "memory_id": "m-2", "status": "open",
         "raw": '{"id":"m-2","tenant":"t1","content":"x","tier":"sometimes"}'}]

