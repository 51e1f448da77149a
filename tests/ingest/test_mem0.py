"""Issue 41.4 (first format): a Mem0 ``get_all`` export ingests by its shape, with the tenant from
``--tenant``; each item is one memory (whole rows below), broken items are quarantined with their
reason while the rest lands, the same file again is a no-op, and an updated dump updates the
memories it names, never duplicating them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_lake import Lake
from memory_lake.store import InputError

from ..conftest import AS_OF

DUMP = {"results": [
    {"id": "m0-0001", "memory": "Prefers dark mode in every editor", "hash": "9b1f", "metadata": {"source": "chat"},
     "categories": ["preferences"], "created_at": "2026-11-20T08:15:00.123456-08:00", "updated_at": None,
     "user_id": "alice", "agent_id": None, "run_id": None},
    {"id": "m0-0002", "memory": "用户每周三下午开周会", "hash": "c3d4", "metadata": {"type": "event", "tags": ["会议"]},
     "created_at": "2026-11-21T10:00:00+08:00", "updated_at": "2026-11-22T10:00:00+08:00", "user_id": "wangfang",
     "agent_id": "kefu-bot", "run_id": "sess-9"},
    {"id": "m0-0003", "hash": "e5f6", "metadata": {}, "created_at": "2026-11-21T10:00:00Z", "user_id": "alice"},
    {"id": "m0-0004", "memory": "Allergic to peanuts", "hash": "g7h8", "created_at": "yesterday", "user_id": "alice"},
    {"id": "m0-0005", "memory": 42, "hash": "i9j0", "created_at": "2026-11-21T10:00:00Z", "user_id": "alice"},
]}
COLUMNS = "id, tenant, agent_id, user_id, context_id, type, tier, content, tags, created_at, updated_at, version, extra"


def write(path: Path, document) -> Path:
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


def rows(lake) -> list[dict]:
    return [{**r, "extra": json.loads(r["extra"])} for r in lake.sql(f"SELECT {COLUMNS} FROM memories ORDER BY id")
            .to_dicts()]


def test_a_mem0_dump_lands_item_by_item_with_the_tenant_given(lake, tmp_path):
    report = lake.ingest([write(tmp_path / "mem0.json", DUMP)], as_of=AS_OF, tenant="acme")
    (file,) = report.files
    assert (file.format, file.records, file.ingested, file.quarantined) == ("mem0", 5, 2, 3)
    assert file.reasons == {"missing content": 1, "bad timestamp": 1, "wrong type": 1}
    got = rows(lake)
    assert [{k: v for k, v in r.items() if k not in ("created_at", "updated_at")} for r in got] == [
        {"id": "m0-0001", "tenant": "acme", "agent_id": None, "user_id": "alice", "context_id": None, "type": "other",
         "tier": "short_term", "content": "Prefers dark mode in every editor", "tags": ["preferences"], "version": 1,
         "extra": {"mem0": {"hash": "9b1f", "metadata": {"source": "chat"}, "categories": ["preferences"]}}},
        {"id": "m0-0002", "tenant": "acme", "agent_id": "kefu-bot", "user_id": "wangfang", "context_id": "sess-9",
         "type": "event", "tier": "short_term", "content": "用户每周三下午开周会", "tags": ["会议"], "version": 1,
         "extra": {"mem0": {"hash": "c3d4", "metadata": {"type": "event", "tags": ["会议"]}}}}]
    # Mem0's offsets become UTC; a missing updated_at is the creation time
    assert [(str(r["created_at"]), str(r["updated_at"])) for r in got] == [
        ("2026-11-20 16:15:00.123456", "2026-11-20 16:15:00.123456"), ("2026-11-21 02:00:00", "2026-11-22 02:00:00")]
    quarantined = lake.sql("SELECT line, reason, detail FROM quarantine ORDER BY line").to_dicts()
    assert [(q["line"], q["reason"]) for q in quarantined] == [(3, "missing content"), (4, "bad timestamp"),
                                                               (5, "wrong type")]


def test_the_same_dump_again_is_a_no_op_and_an_updated_one_updates(lake, tmp_path):
    first = write(tmp_path / "mem0.json", DUMP)
    lake.ingest([first], as_of=AS_OF, tenant="acme")
    before = rows(lake)
    again = lake.ingest([first], as_of=AS_OF, tenant="acme")
    assert [f.status for f in again.files] == ["already ingested"] and rows(lake) == before
    # the same bytes under another tenant are not read again, and the report says so
    other = lake.ingest([first], as_of=AS_OF, tenant="globex").as_dict()
    assert (other["ingested"], other["notes"]) == (0, {str(first): (
        "ingested before (mem0, as of 2026-11-30): the same bytes are read once, so --tenant and --format do not "
        "apply again; `memory-lake forget` what it brought first to read it differently")})
    for round_, text in enumerate(("Prefers light mode since November", "Prefers light mode, except at night"), 2):
        updated = json.loads(json.dumps(DUMP))
        updated["results"][0].update(memory=text, updated_at=f"2026-11-2{round_}T09:00:00Z")
        report = lake.ingest([write(tmp_path / f"mem0-{round_}.json", updated)], as_of=AS_OF, tenant="acme")
        assert (report.files[0].ingested, report.files[0].updated, report.files[0].unchanged) == (0, 1, 1)
    after = rows(lake)
    assert [r["id"] for r in after] == ["m0-0001", "m0-0002"]  # never a duplicate
    assert (after[0]["content"], after[0]["version"]) == ("Prefers light mode, except at night", 3)
    assert after[1] == before[1]
    assert lake.sql("SELECT count(*) AS n FROM conflicts").item() == 0  # the dump wins for what it carries


def test_without_a_tenant_the_file_is_refused_with_what_to_do(lake, tmp_path):
    report = lake.ingest([write(tmp_path / "mem0.json", DUMP)], as_of=AS_OF)
    assert [f.status for f in report.files] == ["unreadable"]
    (detail,) = lake.sql("SELECT detail FROM quarantine").to_series().to_list()
    assert detail == ("a Mem0 export carries no tenant: ingest it with `memory-lake ingest FILE --tenant T` "
                      "(the tenant its memories belong to), or drop it in the inbox in a folder named `tenant=T`")
    assert lake.sql("SELECT count(*) AS n FROM memories").item() == 0


def test_the_shape_decides_and_format_overrides(lake, tmp_path):
    # a save file and a plain list of records stay save files; a 0.x Mem0 list (memory + hash) is Mem0
    save = write(tmp_path / "save.json", {"tenant": "acme", "memories": [{"content": "Lunch at noon"}]})
    old_mem0 = write(tmp_path / "old.json", [{"id": "m0-9", "memory": "Likes tea", "hash": "x1", "user_id": "bob"}])
    report = lake.ingest([save, old_mem0], as_of=AS_OF, tenant="acme")
    assert [(Path(f.file).name, f.format, f.ingested) for f in report.files] == [("old.json", "mem0", 1),
                                                                                 ("save.json", "json", 1)]
    renamed = write(tmp_path / "mem0.txt.jsonl", {"results": [{"id": "m0-10", "memory": "Runs on Sundays"}]})
    forced = lake.ingest([renamed], as_of=AS_OF, tenant="acme", fmt="mem0")
    assert (forced.files[0].format, forced.files[0].ingested) == ("mem0", 1)
    with pytest.raises(InputError, match="--format 'mem1': one of jsonl, json, parquet, mem0"):
        lake.ingest([renamed], as_of=AS_OF, fmt="mem1")


def test_the_cli_takes_tenant_and_format_and_reports_the_format(tmp_path, capsys):
    from memory_lake.cli import main

    Lake.init(tmp_path / "lake")
    dump = write(tmp_path / "mem0.json", DUMP)
    assert main(["--lake", str(tmp_path / "lake"), "--json", "ingest", str(dump), "--tenant", "acme", "--dry-run",
                 "--as-of", "2026-11-30T00:00:00Z"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["ingested"], data["quarantined"], data["dry_run"]) == (2, 3, True)
    assert [(f["format"], f["status"]) for f in data["per_file"]] == [("mem0", "dry run")]


def test_the_report_counts_per_format(lake, tmp_path):
    from ..conftest import write_jsonl

    lines = write_jsonl(tmp_path / "a.jsonl", [{"tenant": "acme", "content": "Lunch at noon"}], raw_lines={2: "{bad"})
    report = lake.ingest([write(tmp_path / "mem0.json", DUMP), lines], as_of=AS_OF, tenant="acme").as_dict()
    assert report["formats"] == {
        "jsonl": {"files": 1, "records": 2, "ingested": 1, "updated": 0, "unchanged": 0, "quarantined": 1,
                  "reasons": {"bad JSON": 1}, "skipped": {}},
        "mem0": {"files": 1, "records": 5, "ingested": 2, "updated": 0, "unchanged": 0, "quarantined": 3,
                 "reasons": {"bad timestamp": 1, "missing content": 1, "wrong type": 1}, "skipped": {}}}


def test_a_typescript_sdk_dump_keeps_its_camel_case_dates_and_its_expiration(lake, tmp_path):
    """A stranger's dump from Mem0's TypeScript SDK (createdAt, updatedAt, userId) landed with the
    ingest time as created_at and its dates in extra; expiration_date was not mapped at all."""
    dump = [{"id": "ts-1", "memory": "Works remotely on Fridays", "hash": "ab12", "userId": "alice",
             "agentId": "coach", "runId": "r-7", "createdAt": "2026-10-02T09:00:00.000Z",
             "updatedAt": "2026-10-03T09:00:00.000Z", "expirationDate": "2027-01-01T00:00:00Z"}]
    lake.ingest([write(tmp_path / "ts.json", dump)], as_of=AS_OF, tenant="acme", fmt="mem0")
    assert lake.sql("SELECT id, user_id, agent_id, context_id, strftime(created_at, '%Y-%m-%dT%H:%M:%SZ'), "
                    "strftime(updated_at, '%Y-%m-%dT%H:%M:%SZ'), strftime(expires_at, '%Y-%m-%dT%H:%M:%SZ'), extra "
                    "FROM memories").rows() == [
        ("ts-1", "alice", "coach", "r-7", "2026-10-02T09:00:00Z", "2026-10-03T09:00:00Z", "2027-01-01T00:00:00Z",
         '{"mem0":{"hash":"ab12"}}')]
