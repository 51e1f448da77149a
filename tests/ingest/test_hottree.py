"""Issue 41.2: seed 004's hot-memory tree (index.json skeletons + YYYY/MM/DD sub-files) ingests as
one unit per memory: whole rows for the memory and its decisions, a broken pointer and a broken
sub-file quarantined with the sub-file (or index entry) as the file while the rest lands, a second
ingest a no-op, a changed sub-file an update; in the inbox a tree waits for its index.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memory_lake import Lake

from ..conftest import AS_OF

SUB = {"meta": {"memory_id": "mem_a1b2", "session_id": "sess_89f2", "created_at": 1778400000000, "version": 3},
       "summary": "讨论了 API 网关限流方案，最终采用令牌桶 + 分布式计数器", "tags": ["API网关", "限流"],
       "content": [{"role": "user", "msg": "我们的 API 网关需要限流，有什么推荐方案？", "ts": 1778400001000},
                   {"role": "assistant", "msg": "推荐令牌桶算法，结合 Redis 计数器", "ts": 1778400005000}],
       "decisions": ["采用令牌桶算法", "使用 Redis + Lua 脚本保证原子性"], "references": ["docs/rate-limiting.md"]}


def tree(root: Path, *, tenant: str | None = "zhongke", index: bool = True) -> Path:
    day = root / "2026" / "05" / "10"
    day.mkdir(parents=True)
    (day / "session_a1b2.json").write_text(json.dumps(SUB, ensure_ascii=False), encoding="utf-8")
    (day / "session_c3d4.json").write_text('{"meta": {"memory_id": "mem_c3d4", ', encoding="utf-8")  # cut short
    (day / "session_e5f6.json").write_text(json.dumps({"summary": "Chose Sentinel for circuit breaking",
                                                       "tags": ["微服务"]}), encoding="utf-8")
    entries = [
        {"memory_id": "mem_a1b2", "timestamp": 1778400000000, "summary": "限流方案", "tags": ["限流"], "priority": 7,
         "content_ptr": {"file": "/memory/2026/05/10/session_a1b2.json", "offset": 0, "size": 2840}, "ttl": 172800000},
        {"memory_id": "mem_c3d4", "timestamp": 1778400000000, "summary": "cut short", "content_ptr": "2026/05/10/session_c3d4.json"},
        {"memory_id": "mem_gone", "timestamp": 1778400000000, "summary": "gone", "content_ptr": "2026/05/10/nowhere.json"},
        {"memory_id": "mem_out", "timestamp": 1778400000000, "summary": "out", "content_ptr": {"file": "../../../etc/hosts"}},
        {"memory_id": "mem_e5f6", "timestamp": "2026-05-10T09:00:00Z", "priority": 4,
         "content_ptr": "hot/2026/05/10/session_e5f6.json"},
    ]
    if index:
        document = {"memories": entries, "agent_id": "yanfa-assistant", "user_id": "u-zhangwei"}
        if tenant:
            document["tenant"] = tenant
        (root / "index.json").write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return root


def rows(lake) -> list[dict]:
    return [{**r, "extra": json.loads(r["extra"])} for r in lake.sql(
        "SELECT id, tenant, agent_id, user_id, session_id, type, tier, content, tags, importance, "
        "strftime(created_at, '%Y-%m-%dT%H:%M:%SZ') AS created_at, strftime(expires_at, '%Y-%m-%dT%H:%M:%SZ') AS "
        "expires_at, version, extra FROM memories ORDER BY id").to_dicts()]


def test_a_tree_lands_memory_by_memory_and_its_broken_parts_are_quarantined(lake, tmp_path):
    report = lake.ingest([tree(tmp_path / "hot")], as_of=AS_OF)
    assert sorted((f.file.rsplit("/", 1)[-1], f.format, f.ingested, f.quarantined) for f in report.files) == [
        ("index.json#3", "hottree", 0, 1), ("index.json#4", "hottree", 0, 1), ("session_a1b2.json", "hottree", 3, 0),
        ("session_c3d4.json", "hottree", 0, 1), ("session_e5f6.json", "hottree", 1, 0)]
    scope = {"tenant": "zhongke", "agent_id": "yanfa-assistant", "user_id": "u-zhangwei"}
    stamps = {"created_at": "2026-05-10T08:00:00Z", "expires_at": "2026-05-12T08:00:00Z"}
    assert rows(lake) == [
        {"id": "mem_a1b2", **scope, "session_id": "sess_89f2", "type": "other", "tier": "short_term",
         "content": "讨论了 API 网关限流方案，最终采用令牌桶 + 分布式计数器", "tags": ["API网关", "限流"], "importance": 0.7,
         **stamps, "version": 1,
         "extra": {"source_text": "user: 我们的 API 网关需要限流，有什么推荐方案？\nassistant: 推荐令牌桶算法，结合 Redis 计数器",
                   "hot": {"content_ptr": {"file": "/memory/2026/05/10/session_a1b2.json", "offset": 0, "size": 2840},
                           "references": ["docs/rate-limiting.md"], "meta": SUB["meta"]}}},
        *({"id": f"mem_a1b2-d{k}", **scope, "session_id": "sess_89f2", "type": "decision", "tier": "short_term",
           "content": text, "tags": ["API网关", "限流"], "importance": 0.7, **stamps, "version": 1,
           "extra": {"parent_id": "mem_a1b2", "hot": {"decision": k}}} for k, text in enumerate(SUB["decisions"], 1)),
        {"id": "mem_e5f6", **scope, "session_id": None, "type": "other", "tier": "short_term",
         "content": "Chose Sentinel for circuit breaking", "tags": ["微服务"], "importance": 0.4,
         "created_at": "2026-05-10T09:00:00Z", "expires_at": None, "version": 1,
         "extra": {"hot": {"content_ptr": "hot/2026/05/10/session_e5f6.json"}}}]
    quarantined = lake.sql("SELECT file, line, reason, detail FROM quarantine ORDER BY file").to_dicts()
    root = str((tmp_path / "hot").resolve())
    assert quarantined == [
        {"file": f"{root}/2026/05/10/session_c3d4.json", "line": 1, "reason": "bad JSON",
         "detail": "not valid JSON: Expecting property name enclosed in double quotes at column 35"},
        {"file": f"{root}/index.json#3", "line": 1, "reason": "broken pointer",
         "detail": "broken pointer: content_ptr '2026/05/10/nowhere.json' names no file inside the tree"},
        {"file": f"{root}/index.json#4", "line": 1, "reason": "broken pointer",
         "detail": "broken pointer: content_ptr '../../../etc/hosts' names no file inside the tree"}]


def test_the_same_tree_again_is_a_no_op_and_a_changed_sub_file_updates(lake, tmp_path):
    root = tree(tmp_path / "hot")
    lake.ingest([root], as_of=AS_OF)
    before = rows(lake)
    again = lake.ingest([root], as_of=AS_OF)
    assert {f.status for f in again.files} == {"already ingested"} and rows(lake) == before
    changed = dict(SUB, summary="讨论了 API 网关限流方案，最终采用令牌桶")
    (root / "2026/05/10/session_a1b2.json").write_text(json.dumps(changed, ensure_ascii=False), encoding="utf-8")
    report = lake.ingest([root], as_of=AS_OF)
    assert (report.total("ingested"), report.total("updated"), report.total("unchanged")) == (0, 1, 2)
    after = {r["id"]: r for r in rows(lake)}
    assert (after["mem_a1b2"]["content"], after["mem_a1b2"]["version"]) == ("讨论了 API 网关限流方案，最终采用令牌桶", 2)
    assert len(after) == 4


def test_a_tree_without_a_tenant_takes_the_one_given_or_says_what_to_do(lake, tmp_path):
    refused = lake.ingest([tree(tmp_path / "a", tenant=None)], as_of=AS_OF)
    assert [(f.status, f.format) for f in refused.files] == [("unreadable", "hottree")]
    assert lake.sql("SELECT detail FROM quarantine").item() == (
        'a hot-memory tree names no tenant (no "tenant" in its index.json): ingest it with '
        "`memory-lake ingest TREE --tenant T`, or drop it in the inbox in a folder named `tenant=T`")
    given = lake.ingest([tmp_path / "a"], as_of=AS_OF, tenant="acme")
    assert given.total("ingested") == 4 and set(lake.sql("SELECT DISTINCT tenant FROM memories").to_series()) == {"acme"}


def test_in_the_inbox_a_tree_waits_for_its_index_then_lands_and_leaves(tmp_path):
    lake = Lake.open(tmp_path / "lake", create=True)
    root = tree(lake.inbox / "agent7-hot", index=False)  # the sub-files first; index.json is written last
    waiting = lake.ingest(as_of=AS_OF)
    assert waiting.files == [] and lake.sql("SELECT count(*) FROM memories").item() == 0  # no sub-file read alone
    assert waiting.as_dict()["waiting_trees"] == ["agent7-hot"]  # named, not invisible
    shutil.rmtree(root)
    tree(lake.inbox / "agent7-hot")
    done = lake.ingest(as_of=AS_OF)
    assert done.total("ingested") == 4 and done.total("quarantined") == 3
    assert not (lake.inbox / "agent7-hot").exists()  # the tree left the inbox, like a file


def test_a_tree_deeper_in_the_inbox_is_one_unit_and_takes_its_tenant_from_a_tenant_folder(tmp_path):
    """The nightly run has no --tenant: a tree under inbox/tenant=acme/ (any depth) is found as a
    tree, its sub-files are never read as save files, and it belongs to acme; a folder of dated
    JSON Lines snapshots beside it is no tree (its files are read, not kept waiting)."""
    lake = Lake.open(tmp_path / "lake", create=True)
    tree(lake.inbox / "tenant=acme" / "agent7" / "hot", tenant=None)
    dated = lake.inbox / "2026" / "11" / "30"
    dated.mkdir(parents=True)
    (dated / "a.jsonl").write_text('{"tenant": "globex", "content": "Lunch is at noon."}\n', encoding="utf-8")
    done = lake.ingest(as_of=AS_OF)
    assert sorted((f.format, f.ingested) for f in done.files if f.ingested) == [("hottree", 1), ("hottree", 3),
                                                                                ("jsonl", 1)]
    assert lake.sql("SELECT tenant, count(*) FROM memories GROUP BY 1 ORDER BY 1").rows() == [("acme", 4),
                                                                                            ("globex", 1)]
    assert not (lake.inbox / "tenant=acme" / "agent7" / "hot").exists()
