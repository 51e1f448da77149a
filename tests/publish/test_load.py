"""`load_export` (publish/load.py, issue 18): a scope from CURRENT or a kept version, the same
records as its memory.json, and a round trip export -> load -> re-ingest that gives the same rows."""

from __future__ import annotations

from datetime import timedelta

import json
import shutil

import polars as pl
import pytest

from memory_lake import InputError, Lake, LakeNotFound, load_export
from memory_lake.demo import DEMO_AS_OF
from memory_lake.maintain import apply_events
from memory_lake.publish import UnknownExportFormat, UnknownScope, contract, scope_folder

from ..conftest import rows, write_jsonl

# every memory column but who wrote it last (the re-ingest's writer is an agent) and the lake's
# publish bookkeeping, which the export leaves out (contract.NOT_EXPORTED_COLUMNS)
COMPARED = "* EXCLUDE (operator, published_at, publish_meta)"


@pytest.mark.parametrize("scope", [("acme", "support-bot", "u-alice"), ("zhongke", "kefu-bot", "u-wangfang")])
def test_export_load_reingest_gives_the_same_active_rows(demo_lake_dir, tmp_path, scope):
    tenant, agent, user = scope
    records = load_export(demo_lake_dir, tenant=tenant, agent=agent, user=user)
    assert len(records) > 50 and all(list(r) == list(contract.LOAD_COLUMNS) for r in records)

    fresh = Lake.init(tmp_path / "fresh")
    report = fresh.ingest([write_jsonl(tmp_path / "scope.jsonl", records)], as_of=DEMO_AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (len(records), 0)

    where = "tenant = ? AND agent_id = ? AND user_id = ? AND status IN ('active', 'conflicted') ORDER BY id"
    original = rows(Lake.open(demo_lake_dir), f"SELECT {COMPARED} FROM memories WHERE {where}", list(scope))
    again = rows(fresh, f"SELECT {COMPARED} FROM memories WHERE {where}", list(scope))
    assert again == original
    assert any(r["extra"] for r in original) or tenant == "zhongke"
    if tenant == "zhongke":
        assert any("\u4e00" <= ch <= "\u9fff" for r in original for ch in r["content"])


def test_loaded_records_are_memory_json_records_and_the_frame_has_parquet_types(demo_lake_dir):
    scope = ("zhongke", "kefu-bot", "u-wangfang")
    document = json.loads((demo_lake_dir / "exports" / "CURRENT" / "scopes" / scope_folder(*scope) / "memory.json")
                          .read_text(encoding="utf-8"))
    records = load_export(demo_lake_dir, tenant=scope[0], agent=scope[1], user=scope[2])
    assert [{k: v for k, v in r.items() if k not in contract.SCOPE_FIELDS} for r in records] == document["memories"]
    frame = load_export(demo_lake_dir, tenant=scope[0], agent=scope[1], user=scope[2], as_frame=True)
    assert frame.columns == list(contract.LOAD_COLUMNS) and frame.height == len(records)
    assert frame.schema["created_at"] == pl.Datetime("us", "UTC") and frame.schema["extra"] == pl.String
    # agent and user left open: every scope of the tenant, each in its memory.json order
    tenant = load_export(demo_lake_dir / "exports", tenant="zhongke")
    assert {(r["agent_id"], r["user_id"]) for r in tenant} >= {scope[1:]} and len(tenant) > len(records)
    assert [r for r in tenant if (r["agent_id"], r["user_id"]) == scope[1:]] == records


def test_the_default_path_is_memory_lake_dir_then_lake(demo_lake_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_LAKE_DIR", str(demo_lake_dir))
    assert len(load_export(tenant="acme", user="u-bob")) > 10
    monkeypatch.delenv("MEMORY_LAKE_DIR")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LakeNotFound) as missing:
        load_export(tenant="acme")
    assert str(missing.value) == (
        f"no lake at {tmp_path / 'lake'}: create one with `memory-lake init --lake {tmp_path / 'lake'}`, or "
        f"give load_export a lake's folder, its exports folder or a version's folder")
    shutil.copytree(demo_lake_dir / "exports", tmp_path / "lake" / "exports", symlinks=True)
    assert load_export(tenant="acme", user="u-bob") == load_export(demo_lake_dir, tenant="acme", user="u-bob")


def test_a_given_version_and_an_unknown_format_version(demo_lake_dir, tmp_path):
    exports = tmp_path / "exports"
    shutil.copytree(demo_lake_dir / "exports", exports, symlinks=True)
    assert load_export(exports, tenant="acme", version="v1") == load_export(exports, tenant="acme")
    with pytest.raises(InputError, match=r"no published version 'v7' under .*; kept versions: v1"):
        load_export(exports, tenant="acme", version="v7")
    manifest = exports / "v1" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "format_version": "2.0.0"}))
    with pytest.raises(UnknownExportFormat) as refused:
        load_export(exports, tenant="acme")
    assert str(refused.value) == (
        f"{exports / 'v1'} has export format_version '2.0.0'; this memory-lake reads format 1.x "
        f"({contract.FORMAT_VERSION}): upgrade memory-lake, or load a version published by this one")


def test_records_written_back_to_their_own_lake_change_nothing(demo_copy, tmp_path):
    """Observed: an agent that loaded its export and wrote it back doubled the usage counters the
    lake had counted from events since the memory's last write (3 -> 6), and those records were in
    no counter of the ingest line. Each record carries `base_seq`: the merge's base is what was read."""
    scope = ("acme", "support-bot", "u-alice")
    where = "tenant = ? AND agent_id = ? AND user_id = ? AND status IN ('active', 'conflicted') ORDER BY id"
    used = [r["id"] for r in rows(demo_copy, f"SELECT id FROM memories WHERE {where} LIMIT 3", list(scope))]
    events = [{"ts": "2026-11-30T01:00:00Z", "tenant": "acme", "event": "access", "memory_id": m}
              for m in used for _ in range(3)]  # three uses each, counted by the lake after the last write
    write_jsonl(demo_copy.inbox / "use.events.jsonl", events)
    later = DEMO_AS_OF + timedelta(hours=2)          # the events are dated 01:00: a run at their time or after
    apply_events(demo_copy, later)
    demo_copy.publish(as_of=later)
    before = rows(demo_copy, f"SELECT * FROM memories WHERE {where}", list(scope))
    assert rows(demo_copy, "SELECT count(DISTINCT memory_id) AS n FROM memory_history WHERE change = 'usage'") == [
        {"n": 3}]
    history = rows(demo_copy, "SELECT count(*) AS n FROM memory_history")[0]["n"]

    records = load_export(demo_copy.root, tenant="acme", agent="support-bot", user="u-alice")
    assert all(isinstance(r["base_seq"], int) for r in records)
    report = demo_copy.ingest([write_jsonl(tmp_path / "back.jsonl", records)], as_of=DEMO_AS_OF).as_dict()
    assert {k: report[k] for k in ("ingested", "updated", "unchanged", "conflicted", "quarantined")} == {
        "ingested": 0, "updated": 0, "unchanged": len(records), "conflicted": 0, "quarantined": 0}
    assert rows(demo_copy, f"SELECT * FROM memories WHERE {where}", list(scope)) == before
    assert rows(demo_copy, "SELECT count(*) AS n FROM memory_history")[0]["n"] == history


def test_a_path_with_no_lake_says_so_and_a_lake_with_nothing_published_says_that(tmp_path):
    for where in (tmp_path / "nolake", tmp_path):
        with pytest.raises(LakeNotFound, match=f"^no lake at {where}: create one with "):
            load_export(where, tenant="acme")
    assert list(tmp_path.iterdir()) == []  # nothing is created
    lake = Lake.init(tmp_path / "lake")
    with pytest.raises(InputError) as unpublished:
        load_export(lake.root, tenant="acme")
    assert str(unpublished.value) == (
        f"nothing is published under {lake.exports}: no exports/CURRENT (run `memory-lake publish` or the nightly "
        f"run first, or pass the lake's folder)")


@pytest.mark.parametrize(("scope", "message"), [
    ({"tenant": "acmee"}, "unknown tenant 'acmee': did you mean 'acme'? known tenants: acme, globex, zhongke"),
    ({"tenant": "acme", "agent": "suport-bot"},
     "unknown agent 'suport-bot': did you mean 'support-bot'? known agents in tenant 'acme': {agents}"),
    ({"tenant": "acme", "agent": "support-bot", "user": "u-alcie"},
     "unknown user 'u-alcie': did you mean 'u-alice'? known users in tenant 'acme', agent 'support-bot': {users}"),
    ({"tenant": "acme", "user": "dan"}, "unknown user 'dan': known users in tenant 'acme': {tenant_users}"),
])
def test_an_unknown_scope_is_an_error_with_the_closest_published_names(demo_lake_dir, scope, message):
    published = pl.read_parquet(demo_lake_dir / "exports" / "CURRENT" / "memories.parquet").filter(tenant="acme")

    def listed(frame: pl.DataFrame, column: str) -> str:
        names = sorted(frame[column].drop_nulls().unique())
        return ", ".join(names[:5]) + (f", … ({len(names)} in all)" if len(names) > 5 else "")

    expected = message.format(agents=listed(published, "agent_id"), tenant_users=listed(published, "user_id"),
                              users=listed(published.filter(agent_id="support-bot"), "user_id"))
    with pytest.raises(UnknownScope) as unknown:
        load_export(demo_lake_dir, **scope)
    assert str(unknown.value) == expected + (" (load_export(..., missing_ok=True) loads [] for a scope with no "
                                             "memory yet)")
    assert isinstance(unknown.value, InputError)


def test_a_published_scope_with_no_active_memories_loads_empty(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [
        {"id": "m-1", "tenant": "acme", "agent_id": "bot", "user_id": "u-live", "content": "still used"},
        {"id": "m-2", "tenant": "acme", "agent_id": "bot", "user_id": "u-old", "content": "put away",
         "status": "archived"},
        {"id": "m-3", "tenant": "quiet", "agent_id": "bot", "user_id": "u-old", "content": "resting",
         "status": "dormant"}])], as_of=DEMO_AS_OF)
    assert lake.publish(as_of=DEMO_AS_OF).details["version"] == "v1"
    assert [r["id"] for r in load_export(lake.root, tenant="acme")] == ["m-1"]
    assert load_export(lake.root, tenant="acme", agent="bot", user="u-old") == []
    assert load_export(lake.root, tenant="quiet") == []
    assert load_export(lake.root, tenant="quiet", as_frame=True).columns == list(contract.LOAD_COLUMNS)
    with pytest.raises(InputError, match="^unknown user 'u-new': known users in tenant 'acme', agent 'bot': u-live, u-old "):
        load_export(lake.root, tenant="acme", agent="bot", user="u-new")
    # an agent starting for a user with no memory yet (new, or forgotten entirely) asks for []
    assert load_export(lake.root, tenant="acme", agent="bot", user="u-new", missing_ok=True) == []
    assert load_export(lake.root, tenant="nobody", missing_ok=True, as_frame=True).height == 0
    # a version by its name or its number
    assert [r["id"] for r in load_export(lake.root, tenant="acme", version=1)] == ["m-1"]
    assert [r["id"] for r in load_export(lake.root, tenant="acme", version="1")] == ["m-1"]
    with pytest.raises(InputError, match="^no published version 'v7' under .*; kept versions: v1$"):
        load_export(lake.root, tenant="acme", version=7)
    with pytest.raises(InputError, match="^version must be a version's name such as 'v3'"):
        load_export(lake.root, tenant="acme", version=1.5)
