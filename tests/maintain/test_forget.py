"""forget: tombstones, the audit row, and the text gone from every table and file that held it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest

from memory_lake.store.errors import InputError
from memory_lake.maintain.events import apply_events
from memory_lake.maintain.entities import extract_entities
from memory_lake.maintain.forget import CRASH_AT_ENV, compact_database, file_scrubbers, forget, forget_memories, scrubbers
from memory_lake.publish.export import publish
from memory_lake.observe.runs import write_report

from ..conftest import AS_OF, CLI_MAIN, rows, unsigned, write_jsonl

LATER = datetime(2026, 12, 1)
# The forgotten memory's distinctive text, and the query that found it; compared case-insensitively.
SECRET = "zebra-42"
NEEDS_USER = "important memory needs operator user"


def leaks(lake, *folders: Path, secret: str = SECRET) -> list[str]:
    """Every place `secret` is still found: file bytes under `folders`, the values of every
    Parquet file (compressed pages hide text from a byte grep), and every column of every table."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if not path.is_file():
                continue
            name = str(path.relative_to(folder))
            if secret.encode() in path.read_bytes().lower():
                found.append(name)
            elif path.suffix == ".parquet" and secret in str(pl.read_parquet(path).to_dicts()).lower():
                found.append(f"{name} (values)")
    for table in tables(lake):
        if secret in str(rows(lake, f'SELECT * FROM "{table}"')).lower():
            found.append(f"table {table}")
    return found


def tables(lake) -> list[str]:
    return [r["table_name"] for r in rows(lake, "SELECT table_name FROM information_schema.tables "
                                                "WHERE table_schema = 'main' ORDER BY 1")]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def raw_path(lake, label: str) -> Path:
    (row,) = rows(lake, "SELECT raw_path FROM ingested_files WHERE file_name = ?", [label])
    return lake.root / row["raw_path"]


def version_files(version: Path) -> dict[str, bytes]:
    return {str(p.relative_to(version)): p.read_bytes() for p in sorted(version.rglob("*")) if p.is_file()}


def build_lake(lake, tmp_path) -> Path:
    """A lake where the diary's text is everywhere it can be: three raw copies (insert, update and
    a quarantined line, an unchanged re-send), history images, quarantine, the search log and
    retrieval_log, two export versions and a report. Returns the reports folder."""
    write_jsonl(lake.inbox / "20261101-a.jsonl", [
        {"id": "diary", "tenant": "acme", "user_id": "alice", "tier": "long_term", "type": "event",
         "content": "my secret diary ZEBRA-42", "summary": "ZEBRA-42 diary", "tags": ["zebra-42"],
         "mood": "ZEBRA-42 mood"},
        {"id": "milk", "tenant": "acme", "user_id": "alice", "content": "buy milk on friday"},
        {"id": "tea", "tenant": "acme", "user_id": "bob", "content": "bob likes green tea"},
    ], raw_lines={2: ""})
    write_jsonl(lake.inbox / "20261102-b.jsonl", [
        {"id": "diary", "tenant": "acme", "user_id": "alice", "version": 1,
         "content": "my secret diary ZEBRA-42, page two"},
        {"id": "diary", "tenant": "acme", "user_id": "alice", "content": "ZEBRA-42 sideways", "tier": "sideways"},
        {"id": "note", "tenant": "acme", "user_id": "bob", "content": "bob reads at night"},
    ])
    # a full re-send: the diary is unchanged, so no history row points at this line
    write_jsonl(lake.inbox / "20261103-c.jsonl", [
        {"id": "milk", "tenant": "acme", "user_id": "alice", "content": "buy milk on friday"},
        {"id": "diary", "tenant": "acme", "user_id": "alice", "version": 2,
         "content": "my secret diary ZEBRA-42, page two"},
    ])
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert (report["ingested"], report["updated"], report["unchanged"], report["quarantined"]) == (4, 1, 2, 1)
    assert [r.id for r in lake.search("ZEBRA-42 diary", tenant="acme", user="alice", as_of=AS_OF)] == ["diary"]
    assert [r.id for r in lake.search("zebra", tenant="acme", user="alice", as_of=AS_OF)] == ["diary"]
    assert [r.id for r in lake.search("green tea", tenant="acme", user="bob", as_of=AS_OF)] == ["tea"]
    apply_events(lake, AS_OF)
    # its entity ZEBRA: a fact holding the sentence, and an entity in both versions' context.md
    assert extract_entities(lake, AS_OF).counts["mentions"] == 1
    publish(lake, AS_OF)
    lake.ingest([write_jsonl(lake.inbox / "20261104-d.jsonl", [
        {"id": "walk", "tenant": "acme", "user_id": "bob", "content": "bob walks the dog"}])], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v2"
    reports = tmp_path / "reports"
    write_report(lake, AS_OF, "r", None, reports)
    return reports


def test_every_store_holding_text_is_registered():
    assert scrubbers() == ["memory_history", "quarantine", "embeddings", "postings", "keyword_docs", "retrieval_log",
                           "conflicts", "entity_facts", "entities", "summary_state", "dedup_verdicts"]
    assert file_scrubbers() == ["raw", "events", "exports", "reports"]


def test_only_the_declared_scrubbers_read_more_than_their_own_table(lake):
    """The export scrub replays a part hard-linked into several versions once, for every scrubber
    but those of READS_MEMORIES (publish/forget.py): each other scrubber must run with nothing but
    its own table and ``forget_ids`` there (a table it reads that is not there fails as it binds);
    those of READS_MEMORIES run with ``memories`` there as well."""
    import duckdb

    from memory_lake.store import READS_MEMORIES
    from memory_lake.store.registry import table_scrubbers

    def run(name: str, scrub, *tables: str) -> str | None:
        con = duckdb.connect()
        try:
            con.execute(f"ATTACH '{lake.db_path}' AS src (READ_ONLY)")
            for table in tables:
                con.execute(f'CREATE TABLE "{table}" AS SELECT * FROM src."{table}" LIMIT 0')
            con.execute("DETACH src")
            con.execute("CREATE TEMP TABLE forget_ids (id VARCHAR, operator VARCHAR, reason VARCHAR, line BIGINT, "
                        "as_of TIMESTAMP)")
            scrub(con)
            return None
        except duckdb.CatalogException as error:
            return str(error)
        finally:
            con.close()

    assert set(READS_MEMORIES) <= set(scrubbers())
    for name, scrub in table_scrubbers():
        assert run(name, scrub, name, *(["memories"] if name in READS_MEMORIES else [])) is None, name


@pytest.mark.models
def test_forget_removes_the_text_from_every_table_and_file(lake, tmp_path):
    reports = build_lake(lake, tmp_path)
    # the check below is not vacuous: before the forget the text is in all of these
    assert set(leaks(lake, lake.root, reports)) >= {
        "lake.duckdb", "events/searches-2026-11-30.jsonl", "exports/v1/scopes/acme/_/alice/memory.json",
        "exports/v2/scopes/acme/_/alice/context.md", "table memories", "table memory_history", "table quarantine",
        "table retrieval_log", "table entity_facts"}
    raws = {label: raw_path(lake, label) for label in ("20261101-a.jsonl", "20261102-b.jsonl", "20261103-c.jsonl")}
    raw_before = {label: path.read_text().split("\n") for label, path in raws.items()}
    log = lake.events / "searches-2026-11-30.jsonl"
    log_before = log.read_bytes()
    others_before = rows(lake, "SELECT * FROM memories WHERE id <> 'diary' ORDER BY id")
    exports_before = {v: pl.read_parquet(lake.exports / v / "memories.parquet").filter(pl.col("id") != "diary")
                      for v in ("v1", "v2")}
    bob_before = {v: version_files(lake.exports / v / "scopes" / "acme" / "_" / "bob") for v in ("v1", "v2")}
    (hash_before,) = rows(lake, "SELECT content_hash FROM memories WHERE id = 'diary'")

    result = forget(lake, ids=["diary"], operator="user", reason="user asked to forget", as_of=LATER)

    export_files = ["manifest.json", "memories.parquet", "scopes/acme/_/alice/context.md",
                    "scopes/acme/_/alice/memory.json", "tables/entities.parquet",
                    "tables/entity_facts/2026-11-30.parquet", "tables/memory_history/2026-11-30.parquet",
                    "tables/quarantine.parquet", "tables/retrieval_log.parquet"]
    assert result == {
        "run_id": result["run_id"], "forgotten": ["diary"], "refused": [], "already_deleted": [], "unknown": [],
        "files": {"raw": sorted(str(p.relative_to(lake.root)) for p in raws.values()),
                  "events": ["events/searches-2026-11-30.jsonl"],
                  "exports": sorted(f"exports/{v}/{f}" for v in ("v1", "v2") for f in export_files),
                  "reports": [], "database": ["lake.duckdb"]},
        "compaction": "done"}
    assert result["run_id"].startswith("forget-20261201T000000-")
    assert leaks(lake, lake.root, reports) == []

    # the tombstone and its audit row: id, content hash, operator, time and reason, no text
    assert rows(lake, "SELECT status, content, summary, tags, extra, version FROM memories WHERE id = 'diary'") == [
        {"status": "deleted", "content": "", "summary": None, "tags": [], "extra": None, "version": 3}]
    assert rows(lake, "SELECT memory_id, change, operator, reason, as_of, run_id, after.content_hash AS content_hash, "
                      "before.content AS before_content, after.status AS status "
                      "FROM memory_history WHERE change = 'forget'") == [
        {"memory_id": "diary", "change": "forget", "operator": "user", "reason": "user asked to forget",
         "as_of": LATER, "run_id": result["run_id"], "content_hash": hash_before["content_hash"],
         "before_content": None, "status": "deleted"}]
    assert rows(lake, "SELECT kind, status, report FROM runs WHERE run_id = ?", [result["run_id"]]) == [
        {"kind": "forget", "status": "ok", "report": json.dumps(
            {"forgotten": ["diary"], "already_deleted": [], "unknown": [], "refused": []})}]
    # the searches that found it lost their query; the other search kept its own
    assert rows(lake, "SELECT query FROM retrieval_log ORDER BY query") == [
        {"query": "[forgotten]"}, {"query": "[forgotten]"}, {"query": "green tea"}]
    assert rows(lake, "SELECT raw FROM quarantine") == [{"raw": "[forgotten]"}]
    # every other memory is exactly as it was
    assert rows(lake, "SELECT * FROM memories WHERE id <> 'diary' ORDER BY id") == others_before

    # raw copies keep their line numbers; only the diary's lines (and the forget's own) are empty
    emptied = {"20261101-a.jsonl": {1}, "20261102-b.jsonl": {1, 2}, "20261103-c.jsonl": {2}}
    for label, path in raws.items():
        after = path.read_text().split("\n")
        assert len(after) == len(raw_before[label])
        assert [line for k, line in enumerate(after, 1) if k not in emptied[label]] == \
               [line for k, line in enumerate(raw_before[label], 1) if k not in emptied[label]]
        assert all(after[k - 1] == "" for k in emptied[label])

    # the search log keeps every line's byte length, so the events step's offsets stay valid
    log_after = log.read_bytes()
    assert [len(x) for x in log_after.split(b"\n")] == [len(x) for x in log_before.split(b"\n")]
    queries = [json.loads(line)["query"] for line in log_after.decode().splitlines()]
    assert queries == ["[forgotten]", "", "green tea"]  # "zebra" was shorter than the marker
    lake.search("green tea", tenant="acme", user="bob", as_of=AS_OF)
    assert apply_events(lake, LATER).counts["searches"] == 1
    assert rows(lake, "SELECT count(*) AS n FROM quarantine WHERE reason = 'bad JSON'") == [{"n": 0}]

    for v in ("v1", "v2"):
        version = lake.exports / v
        manifest = json.loads((version / "manifest.json").read_text())
        assert manifest["rewrites"] == [{"as_of": "2026-12-01T00:00:00Z", "run_id": result["run_id"],
                                         "reason": "forget", "memories": 1, "files": export_files[1:]}]
        assert manifest["files"] == {name: sha256(version / name) for name in version_files(version)
                                     if name != "manifest.json"}
        memories = pl.read_parquet(version / "memories.parquet")
        assert "diary" not in memories["id"].to_list()
        assert memories.equals(exports_before[v])
        assert manifest["counts"]["rows"] == memories.height
        alice = version / "scopes" / "acme" / "_" / "alice"
        scope = json.loads((alice / "memory.json").read_text())
        assert [m["id"] for m in scope["memories"]] == ["milk"]
        assert (scope["tenant"], scope["user_id"], scope["as_of"]) == ("acme", "alice", "2026-11-30T00:00:00Z")
        assert (alice / "context.md").read_text() == (
            "# Memory context: acme / _ / alice\n\nAs of 2026-11-30T00:00:00Z.\n\n## Recent\n\n"
            "- 2026-11-30 (other) buy milk on friday\n")
        assert [s["by_tier"] for s in manifest["counts"]["scopes"] if s["user_id"] == "alice"] == [{"short_term": 1}]
        assert version_files(version / "scopes" / "acme" / "_" / "bob") == bob_before[v]

    # the compacted database is whole: later steps run on it
    assert lake.ingest([write_jsonl(tmp_path / "e.jsonl", [
        {"id": "late", "tenant": "acme", "content": "after the forget", "tier": "odd"}])], as_of=LATER
                       ).as_dict()["quarantine_reasons"] == {"unknown tier": 1}
    assert publish(lake, LATER).details["version"] == "v3"

    # forgetting again changes nothing
    files_before = version_files(lake.root / "exports")
    again = forget(lake, ids=["diary"], reason="again", as_of=LATER)
    assert (again["forgotten"], again["already_deleted"]) == ([], ["diary"])
    assert again["files"] == {"raw": [], "events": [], "exports": [], "reports": []}
    assert version_files(lake.root / "exports") == files_before


def test_an_agent_may_not_forget_an_important_memory(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "vault", "tenant": "acme", "user_id": "carol", "tier": "important", "content": "the vault code is qz-7781"},
        {"id": "plain", "tenant": "acme", "user_id": "carol", "content": "carol likes jazz"},
    ])], as_of=AS_OF)
    publish(lake, AS_OF)
    before = rows(lake, "SELECT * FROM memories WHERE id = 'vault'")
    result = forget(lake, ids=["vault", "plain"], operator="agent", reason="agent cleanup", as_of=LATER)
    assert {k: result[k] for k in ("forgotten", "refused", "already_deleted", "unknown")} == {
        "forgotten": ["plain"], "refused": [{"id": "vault", "reason": NEEDS_USER}], "already_deleted": [],
        "unknown": []}
    assert rows(lake, "SELECT * FROM memories WHERE id = 'vault'") == before
    assert rows(lake, "SELECT memory_id, operator FROM memory_history WHERE change = 'forget'") == [
        {"memory_id": "plain", "operator": "agent"}]
    scope = json.loads((lake.exports / "v1" / "scopes" / "acme" / "_" / "carol" / "memory.json").read_text())
    assert [m["id"] for m in scope["memories"]] == ["vault"]
    # a user may
    assert forget(lake, ids=["vault"], operator="user", reason="user asked", as_of=LATER)["forgotten"] == ["vault"]
    # (a secret no hex digest can hold: export_files and lake.duckdb keep SHA-256 digests)
    assert leaks(lake, lake.root, secret="qz-7781") == []
    # the scope is now empty, so its folder goes, as publish would not have written it
    assert not (lake.exports / "v1" / "scopes" / "acme" / "_" / "carol").exists()
    manifest = json.loads((lake.exports / "v1" / "manifest.json").read_text())
    assert manifest["counts"]["scopes"] == [] and manifest["counts"]["rows"] == 0
    assert [r["files"] for r in manifest["rewrites"]] == [
        ["memories.parquet", "scopes/acme/_/carol/context.md", "scopes/acme/_/carol/memory.json",
         "tables/memory_history/2026-11-30.parquet"]] * 2


def test_scope_form_forgets_exactly_that_scope(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "a1", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "content": "alice one"},
        {"id": "a2", "tenant": "acme", "agent_id": "other", "user_id": "alice", "content": "alice two",
         "status": "archived"},
        {"id": "a3", "tenant": "acme", "user_id": "alice", "tier": "important", "content": "alice three"},
        {"id": "a4", "tenant": "acme", "user_id": "alice", "content": "alice four"},
        {"id": "b1", "tenant": "acme", "agent_id": "bot", "user_id": "bob", "content": "bob one"},
        {"id": "g1", "tenant": "globex", "agent_id": "bot", "user_id": "alice", "content": "globex alice"},
    ])], as_of=AS_OF)
    forget(lake, ids=["a4"], reason="earlier", as_of=AS_OF)
    untouched = rows(lake, "SELECT * FROM memories WHERE id IN ('b1', 'g1') ORDER BY id")
    result = forget(lake, tenant="acme", agent="bot", user="alice", reason="clear bot's memory of me", as_of=LATER)
    assert (result["forgotten"], result["unknown"]) == (["a1"], [])
    result = forget(lake, tenant="acme", user="alice", reason="clear everything about me", as_of=LATER)
    assert {k: result[k] for k in ("forgotten", "refused", "already_deleted", "unknown")} == {
        "forgotten": ["a2", "a3"], "refused": [], "already_deleted": [], "unknown": []}
    assert rows(lake, "SELECT id, status FROM memories ORDER BY id") == [
        {"id": "a1", "status": "deleted"}, {"id": "a2", "status": "deleted"}, {"id": "a3", "status": "deleted"},
        {"id": "a4", "status": "deleted"}, {"id": "b1", "status": "active"}, {"id": "g1", "status": "active"}]
    assert rows(lake, "SELECT * FROM memories WHERE id IN ('b1', 'g1') ORDER BY id") == untouched
    # an agent asking for a whole scope gets the rest, not the important ones
    lake.ingest([write_jsonl(tmp_path / "t.jsonl", [
        {"id": "b2", "tenant": "acme", "user_id": "bob", "tier": "important", "content": "bob two"}])], as_of=LATER)
    result = forget(lake, tenant="acme", user="bob", operator="agent", reason="tidy", as_of=LATER)
    assert (result["forgotten"], result["refused"]) == (["b1"], [{"id": "b2", "reason": NEEDS_USER}])


def test_unknown_ids_other_tenants_and_bad_requests(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "m1", "tenant": "acme", "content": "one"}, {"id": "m2", "tenant": "globex", "content": "two"},
    ])], as_of=AS_OF)
    result = forget(lake, ids=["nope", "m2", "m1"], tenant="acme", reason="r", as_of=LATER)
    assert {k: result[k] for k in ("forgotten", "refused", "already_deleted", "unknown")} == {
        "forgotten": ["m1"], "refused": [], "already_deleted": [], "unknown": ["m2", "nope"]}
    assert forget(lake, ids=["nope"], reason="r", as_of=LATER)["files"] == {}
    with pytest.raises(InputError, match="ids, or a tenant"):
        forget(lake, reason="r", as_of=LATER)
    with pytest.raises(InputError, match="reason"):
        forget(lake, ids=["m2"], reason=" ", as_of=LATER)
    with pytest.raises(InputError, match="operator"):
        forget(lake, ids=["m2"], operator="robot", reason="r", as_of=LATER)
    assert rows(lake, "SELECT status FROM memories WHERE id = 'm2'") == [{"status": "active"}]


def test_a_busy_lake_queues_the_request(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [{"id": "m1", "tenant": "acme", "content": "one"}])], as_of=AS_OF)
    with lake.writer():  # another holder of the write lock, as a run in another process would be
        assert lake.is_busy()
        result = forget(lake, ids=["m1"], tenant="acme", user="alice", reason="please", as_of=LATER)
    path = Path(result["queued"])
    assert result == {"queued": str(path)}
    assert path.parent == lake.decisions and re.fullmatch(r"20261201T000000-forget-[0-9a-f]{8}\.json", path.name)
    assert unsigned(lake, json.loads(path.read_text())) == {
        "kind": "forget", "ids": ["m1"], "tenant": "acme", "agent": None, "user": "alice", "operator": "user",
        "reason": "please", "requested_at": "2026-12-01T00:00:00Z"}
    assert [p.name for p in lake.decisions.iterdir()] == [path.name]  # no temporary file left
    assert rows(lake, "SELECT status FROM memories") == [{"status": "active"}]


def test_inside_a_run_the_forget_applies_at_once_and_the_run_compacts_after(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "m1", "tenant": "acme", "content": "the ZEBRA-42 plan"}])], as_of=AS_OF)
    assert compact_database(lake, only_if_pending=True) is False  # nothing owed
    with lake.hold("nightly run"):  # this process holds the lake: its own steps are not queued
        result = forget(lake, ids=["m1"], reason="r", as_of=LATER)
        assert (result["forgotten"], result["compaction"], result["files"]["database"]) == (["m1"], "pending", [])
        # the run's shared connection is open: the file cannot be swapped yet
        assert compact_database(lake, only_if_pending=True) is False
    assert not list(lake.decisions.glob("*.json"))
    assert rows(lake, "SELECT run_id, as_of, memories FROM pending_compactions") == [
        {"run_id": result["run_id"], "as_of": LATER, "memories": 1}]
    assert leaks(lake, lake.root) == ["lake.duckdb"]  # freed blocks still hold the old row
    assert compact_database(lake, only_if_pending=True) is True
    assert rows(lake, "SELECT * FROM pending_compactions") == []
    assert leaks(lake, lake.root) == []
    assert rows(lake, "SELECT id, status FROM memories") == [{"id": "m1", "status": "deleted"}]


def test_forget_memories_tombstones_and_scrubs(lake, tmp_path):
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


@pytest.mark.models
def test_a_forget_line_in_a_snapshot_reaches_the_files_too(lake, tmp_path):
    reports = build_lake(lake, tmp_path)
    write_jsonl(lake.inbox / "20261201-forget.jsonl", [
        {"id": "diary", "tenant": "acme", "deleted": True, "operator": "user", "reason": "user asked"}])
    assert lake.ingest(as_of=LATER).as_dict()["forgotten"] == 1
    assert leaks(lake, lake.root, reports) == []


# ---------------------------------------------------------------------------- conflicts, merges, reports
DARK = "dark mode"  # the text of the memory forgotten below and of its near-copies


def build_disputes(lake, tmp_path) -> Path:
    """The issue's lake: a2's text is in a write conflict (base, lake and incoming values, open), a
    contradiction with b1, two near-duplicates merged into it, and a report written before reports
    left conflict values out. Returns the reports folder."""
    from memory_lake.maintain.dedup import dedup

    base = {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "type": "preference"}
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [
        {**base, "id": "a1", "content": "User prefers dark mode in the editor", "created_at": "2026-11-01T00:00:00Z"},
        {**base, "id": "a2", "content": "user prefers DARK mode in the editor!", "importance": 0.6,
         "created_at": "2026-11-05T00:00:00Z"},
        {**base, "id": "a3", "content": "Note: user prefers dark mode in the editor", "created_at": "2026-10-20T00:00:00Z"},
        {**base, "id": "b1", "content": "User prefers light mode in the editor", "created_at": "2026-11-02T00:00:00Z"},
    ])], as_of=AS_OF)
    report = dedup(lake, AS_OF)
    assert (report.counts["merged"], report.counts["contradictions_filed"]) == (2, 1)
    assert rows(lake, "SELECT id, merged_into FROM memories WHERE merged_into IS NOT NULL ORDER BY id") == [
        {"id": "a1", "merged_into": "a2"}, {"id": "a3", "merged_into": "a2"}]
    # two writers edit a2 from version 1: the second one's value waits in the queue
    lake.ingest([write_jsonl(tmp_path / "w1.jsonl", [
        {**base, "id": "a2", "version": 1, "content": "user prefers DARK mode in the editor, always"}])], as_of=AS_OF)
    lake.ingest([write_jsonl(tmp_path / "w2.jsonl", [
        {**base, "id": "a2", "version": 1, "content": "user prefers dark mode in every editor"}])], as_of=AS_OF)
    assert sorted(lake.conflicts()["kind"].to_list()) == ["contradiction", "write"]
    reports = tmp_path / "reports"
    page = Path(write_report(lake, AS_OF, "r1", None, reports).details["path"]).read_text()
    assert "conflict" in page and DARK not in page.lower() and "light mode" not in page
    # a report an earlier version wrote into the same folder, values and all, plus a row of another conflict
    legacy_rows = "".join(
        f"<tr><td>{c['conflict_id']}</td><td>{c['kind']}</td><td>{c['memory_id']}</td><td>{c['field']}</td>"
        f"<td>{c['lake_value'].replace(chr(34), '&quot;')}</td><td>{c['incoming_value'].replace(chr(34), '&quot;')}</td>"
        f"<td>{c['incoming_operator']}</td><td>2026-11-30 00:00</td></tr>" for c in lake.conflicts().to_dicts())
    (reports / "health-2026-11-29.html").write_text(
        '<html><body><section id="conflicts"><h2>Conflict queue</h2><table><thead><tr><th>conflict</th><th>kind</th>'
        "<th>memory</th><th>field</th><th>lake keeps</th><th>disputed value</th><th>from</th><th>since</th></tr>"
        f"</thead><tbody>{legacy_rows}{OTHER_ROW}</tbody></table></section></body></html>")
    return reports


OTHER_ROW = ("<tr><td>c0ffee</td><td>write</td><td>tea</td><td>content</td><td>&quot;green tea&quot;</td>"
             "<td>&quot;black tea&quot;</td><td>agent</td><td>2026-11-29 00:00</td></tr>")


def test_forget_closes_its_conflicts_takes_its_merged_copies_and_reaches_reports(lake, tmp_path, capsys):
    from memory_lake.cli import main
    from memory_lake.maintain.conflicts import CONTRADICTION_PARTNERS_SQL

    reports = build_disputes(lake, tmp_path)
    assert set(leaks(lake, lake.root, reports, secret=DARK)) >= {"health-2026-11-29.html", "table conflicts"}
    conflicts = {c["kind"]: c["conflict_id"] for c in lake.conflicts().to_dicts()}
    b1_before = rows(lake, "SELECT * FROM memories WHERE id = 'b1'")

    result = forget(lake, ids=["a2"], reason="user asked", as_of=LATER)

    # the near-copies merged into a2 go with it
    assert {k: result[k] for k in ("forgotten", "refused", "already_deleted", "unknown", "compaction")} == {
        "forgotten": ["a1", "a2", "a3"], "refused": [], "already_deleted": [], "unknown": [], "compaction": "done"}
    assert rows(lake, "SELECT memory_id, operator, reason FROM memory_history WHERE change = 'forget' ORDER BY 1") == [
        {"memory_id": "a1", "operator": "user", "reason": "merged into a2, forgotten with it: user asked"},
        {"memory_id": "a2", "operator": "user", "reason": "user asked"},
        {"memory_id": "a3", "operator": "user", "reason": "merged into a2, forgotten with it: user asked"}]
    # every value of both conflicts is gone and both are closed as forgotten; b1 stays as it was
    assert rows(lake, "SELECT kind, status, memory_id, other_memory_id, base_value, lake_value, incoming_value, "
                      "resolution, resolved_by, resolved_at, resolved_value FROM conflicts ORDER BY kind") == [
        {"kind": "contradiction", "status": "resolved", "memory_id": "a2", "other_memory_id": "b1", "base_value": None,
         "lake_value": None, "incoming_value": None, "resolution": "forgotten", "resolved_by": "user",
         "resolved_at": LATER, "resolved_value": None},
        {"kind": "write", "status": "resolved", "memory_id": "a2", "other_memory_id": None, "base_value": None,
         "lake_value": None, "incoming_value": None, "resolution": "forgotten", "resolved_by": "user",
         "resolved_at": LATER, "resolved_value": None}]
    assert lake.conflicts().height == 0 and rows(lake, CONTRADICTION_PARTNERS_SQL) == []
    assert rows(lake, "SELECT * FROM memories WHERE id = 'b1'") == b1_before
    # the old report keeps its rows' ids and loses their values; another conflict's row is untouched
    legacy = reports / "health-2026-11-29.html"
    assert result["files"]["reports"] == [str(legacy)]
    body = legacy.read_text()
    assert (f"<tr><td>{conflicts['write']}</td><td>write</td><td>a2</td><td>content</td>"
            "<td>[forgotten]</td><td>[forgotten]</td><td>agent</td><td>2026-11-30 00:00</td></tr>") in body
    assert f"<tr><td>{conflicts['contradiction']}</td><td>contradiction</td><td>a2</td>" in body
    assert OTHER_ROW in body and "light mode" not in body
    assert leaks(lake, lake.root, reports, secret=DARK) == []

    # unmerge of the forgotten memory: one clear line, exit 2, nothing changed
    before = rows(lake, "SELECT * FROM memories ORDER BY id")
    with pytest.raises(InputError, match="^a2 was forgotten"):
        lake.unmerge("a2", as_of=LATER)
    assert main(["--lake", str(lake.root), "unmerge", "a2"]) == 2
    error = capsys.readouterr().err
    assert error == ("error: a2 was forgotten (with the memories merged into it); a forgotten memory cannot be "
                     "unmerged\n")
    assert rows(lake, "SELECT * FROM memories ORDER BY id") == before


def test_forgetting_the_other_side_closes_the_contradiction_and_keeps_the_first(lake, tmp_path):
    build_disputes(lake, tmp_path)
    conflicts = {c["kind"]: c for c in lake.conflicts().to_dicts()}
    kept = rows(lake, "SELECT * FROM memories WHERE id IN ('a1', 'a2', 'a3') ORDER BY id")
    result = forget(lake, ids=["b1"], reason="user asked", as_of=LATER)
    assert result["forgotten"] == ["b1"]
    assert rows(lake, "SELECT * FROM memories WHERE id IN ('a1', 'a2', 'a3') ORDER BY id") == kept
    assert rows(lake, "SELECT status, lake_value, incoming_value, resolution FROM conflicts WHERE kind = 'contradiction'"
                ) == [{"status": "resolved", "lake_value": None, "incoming_value": None, "resolution": "forgotten"}]
    # a2's own write conflict is not b1's: it stays open with its values
    assert lake.conflicts().to_dicts() == [{**conflicts["write"], "memory_status": "conflicted"}]
    assert leaks(lake, lake.root, secret="light mode") == []


# ---------------------------------------------------------------------------- a forget killed before compaction
def cli(warm, lake, *args: str, crash_at: str | None = None):
    """`memory-lake --lake LAKE --json ARGS` in its own process (this checkout's code), forked from
    the warm Python: a real process, killed by a real SIGKILL at `crash_at`, without a new
    interpreter's start-up (about a second of CPU each, twice per case)."""
    return warm.run(CLI_MAIN, "--lake", str(lake.root), "--json", *args,
                    env={CRASH_AT_ENV: crash_at} if crash_at else None, remove_env=() if crash_at else (CRASH_AT_ENV,))


def database_bytes(lake) -> bytes:
    """lake.duckdb and, when one is left, its write-ahead log."""
    return b"".join(p.read_bytes() for p in (lake.db_path, lake.db_path.with_name("lake.duckdb.wal")) if p.exists())


@pytest.mark.parametrize("next_command", ["forget again", "another forget", "nightly"])
@pytest.mark.process  # starts a process (the subject here)
def test_a_forget_killed_after_its_commit_is_compacted_by_the_next_command(lake, tmp_path, next_command, warm_python):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "diary", "tenant": "acme", "content": "my secret diary ZEBRA-42"},
        {"id": "milk", "tenant": "acme", "content": "buy milk on friday"}])], as_of=AS_OF)
    assert b"ZEBRA-42" in database_bytes(lake)

    killed = cli(warm_python, lake, "forget", "diary", "--reason", "user asked", "--as-of", "2026-12-01T00:00:00Z",
                 crash_at="forget:committed")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # committed: the tombstone and the debt; not compacted: the text is still in the file's bytes
    assert rows(lake, "SELECT id, status FROM memories ORDER BY id") == [
        {"id": "diary", "status": "deleted"}, {"id": "milk", "status": "active"}]
    (owed,) = rows(lake, "SELECT run_id, as_of, memories FROM pending_compactions")
    assert (owed["as_of"], owed["memories"]) == (LATER, 1)
    assert b"ZEBRA-42" in database_bytes(lake)

    if next_command == "nightly":
        # the nightly flow's last task (flows/nightly.py compact_database_task) is this library call
        assert compact_database(lake, only_if_pending=True) is True
    else:
        target = "diary" if next_command == "forget again" else "milk"
        done = cli(warm_python, lake, "forget", target, "--reason", "retry", "--as-of", "2026-12-01T00:00:00Z")
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert (result["forgotten"], result["already_deleted"], result["compaction"], result["files"]["database"]) == (
            ([], ["diary"]) if target == "diary" else (["milk"], [])) + ("done", ["lake.duckdb"])
    assert b"zebra-42" not in database_bytes(lake).lower()
    assert leaks(lake, lake.root) == []
    assert rows(lake, "SELECT * FROM pending_compactions") == []
    assert compact_database(lake, only_if_pending=True) is False  # nothing owed any more


def test_a_forget_reason_names_an_email_as_the_tenant_s_memories_do(lake, tmp_path):
    """The reason was redacted with the lake-wide salt, so the e-mail it named got another
    placeholder than the same e-mail in the tenant's memories ([EMAIL:fcc015b2] against
    [EMAIL:e7245738]), and an auditor could not tell they were one address."""
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "m1", "tenant": "home", "content": "Maria's e-mail is maria@example.com"},
        {"id": "m2", "tenant": "home", "content": "reach maria@example.com on weekdays"},
        {"id": "g1", "tenant": "globex", "content": "maria@example.com is a supplier contact"}])], as_of=AS_OF)
    forget(lake, ids=["m1", "g1"], reason="maria@example.com asked to be forgotten", as_of=LATER)
    (kept,) = rows(lake, "SELECT content FROM memories WHERE id = 'm2'")
    placeholder = re.search(r"\[EMAIL:[0-9a-f]+\]", kept["content"]).group()
    reasons = {r["memory_id"]: r["reason"] for r in rows(
        lake, "SELECT memory_id, reason FROM memory_history WHERE change = 'forget'")}
    assert reasons["m1"] == f"{placeholder} asked to be forgotten"
    assert re.fullmatch(r"\[EMAIL:[0-9a-f]+\] asked to be forgotten", reasons["g1"]) and placeholder not in reasons["g1"]
