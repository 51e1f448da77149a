"""The demo's memories in other systems' shapes (issue 41): on night 2 the demo agents' users bring
what they kept elsewhere: one Mem0 ``get_all`` export, one Letta archival-passages export, one
Zep/Graphiti facts export, one seed-004 hot-memory tree and one chat transcript (seed 002's
messages), English and Chinese, in the demo's own scopes.

None of them names a tenant, as in the real exports: each goes in a folder of the inbox named for
its scope (``tenant=acme/``, ``tenant=globex/agent=research-agent/user=u-grace/``), which is how
the nightly ingest (no `--tenant` there) knows whose they are. Everything is written by hand here,
dated against the night's as_of; files are written to a temporary name and renamed, and the tree's
``index.json`` is written last (the inbox convention).

``FORMAT_MEMORIES`` is what each should land as: memories (a Letta deleted passage and a
transcript's pleasantries and assistant chatter are skipped, never memories).
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = ["FORMAT_MEMORIES", "FORMATS_NIGHT", "write_formats"]

FORMATS_NIGHT = 2  # the night whose inbox also gets these
# memories each format lands (the Mem0 dump's 4, Letta's 3 of 4 passages, Zep's 3 facts, the tree's
# 2 memories and 3 decisions, the transcript's 3 messages text.judge keeps: of the 8, 2 pleasantries,
# 2 assistant turns and "Our team decided to upgrade ..." are skipped, the last a miss of the rules)
FORMAT_MEMORIES = {"mem0": 4, "letta": 3, "zep": 3, "hottree": 5, "transcript": 3}


def write_formats(inbox: Path, as_of: datetime) -> dict[str, Path]:
    """Write one input of each other format into `inbox`; returns format -> path (the tree's folder)."""
    inbox = Path(inbox)

    def day(days_before: float, hour: int = 10) -> datetime:
        return (as_of - timedelta(days=days_before)).replace(hour=hour, minute=0, second=0, microsecond=0)

    def iso(moment: datetime) -> str:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00"

    def ms(moment: datetime) -> int:
        return int(moment.timestamp() * 1000)

    written = {
        "mem0": _write(inbox / "tenant=acme" / "0150-mem0-export.json", _mem0(day, iso)),
        "letta": _write(inbox / "tenant=globex" / "agent=research-agent" / "user=u-grace" / "0151-letta-passages.json",
                        _letta(day, iso)),
        "zep": _write(inbox / "tenant=zhongke" / "0152-zep-facts.json", _zep(day, iso)),
        "transcript": _write_lines(inbox / "tenant=acme" / "0154-chat-transcript.jsonl", _transcript(day, iso)),
    }
    root = inbox / "tenant=zhongke" / "0153-hot-memory"
    sub_a, sub_b = _hot_subfiles(day, ms)
    when = day(1)
    folder = f"{when:%Y}/{when:%m}/{when:%d}"
    _write(root / folder / "session_gw01.json", sub_a)
    _write(root / folder / "session_db02.json", sub_b)
    index = {"agent_id": "yanfa-assistant", "user_id": "u-zhangwei", "memories": [
        {"memory_id": "hot_gw01", "timestamp": ms(day(1, 9)), "summary": "API 网关限流方案", "tags": ["API网关", "限流"],
         "priority": 8, "content_ptr": {"file": f"{folder}/session_gw01.json", "offset": 0, "size": 0},
         "ttl": 14 * 86_400_000},
        {"memory_id": "hot_db02", "timestamp": iso(day(1, 15)), "summary": "订单库分表", "tags": ["数据库"], "priority": 6,
         "content_ptr": f"{folder}/session_db02.json"},
    ]}
    _write(root / "index.json", index)  # last: the tree is complete when its index appears
    written["hottree"] = root
    return written


def _mem0(day, iso) -> dict[str, Any]:
    def item(uid: str, memory: str, digest: str, categories: list[str] | None, created: datetime,
             updated: datetime | None = None, run_id: str | None = None) -> dict[str, Any]:
        found = {"id": uid, "memory": memory, "hash": digest,
                 "metadata": {"categories": categories} if categories else None,
                 "created_at": iso(created), "updated_at": iso(updated or created), "user_id": "u-dave",
                 "agent_id": "sales-assistant"}
        return {**found, "run_id": run_id} if run_id else found

    return {"results": [
        item("3c1e7a52-41d2-4a8e-9f0b-6d2c8e1a7b30", "Dave prefers quotes in euros, with VAT shown separately",
             "b1d4c0e9a7f25c3e8d61f0a29b7c4e15", ["finance", "preferences"], day(40), day(12)),
        item("8e9f2b14-6c3d-4f5a-a1b2-7d8e9f0a1b2c", "Dave's company renews its support contract every April",
             "0c7e5d3a9f1b2e4d6a8c0f1e3d5b7a9c", ["professional_details"], day(35)),
        item("5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", "Dave asked for a demo of the analytics add-on next week",
             "7f0e1d2c3b4a59687766554433221100", ["plans"], day(3), run_id="sales-call-1129"),
        item("1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b", "Dave 的团队在上海有一个分部，负责亚太区客户",
             "a9b8c7d6e5f40312a1b2c3d4e5f60718", None, day(20)),
    ]}


def _letta(day, iso) -> list[dict[str, Any]]:
    def passage(uid: str, text: str, created: datetime, tags: list[str] | None = None,
                deleted: bool = False) -> dict[str, Any]:
        return {"created_by_id": "user-00000000-0000-4000-8000-000000000000", "created_at": iso(created),
                "updated_at": iso(created), "is_deleted": deleted,
                "organization_id": "org-00000000-0000-4000-8000-000000000000",
                "archive_id": "archive-2f9c1d6e-8b7a-4c3d-9e2f-1a0b9c8d7e6f", "source_id": None, "file_id": None,
                "file_name": None, "metadata": {}, "tags": tags, "id": uid, "text": text,
                "embedding": [0.0213, -0.0402, 0.0117, 0.0365],
                "embedding_config": {"embedding_endpoint_type": "openai", "embedding_model": "text-embedding-3-small",
                                     "embedding_dim": 1536}}

    return [
        passage("passage-6b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
                "Grace is comparing three battery suppliers for the Q1 report; she trusts the Fraunhofer test data most.",
                day(25), ["research"]),
        passage("passage-7c2e3f4a-5b6c-4d7e-9f8a-0b1c2d3e4f5a",
                "Grace wants literature summaries as bullet points with one citation per bullet.", day(18),
                ["preferences"]),
        passage("passage-8d3f4a5b-6c7d-4e8f-a09b-1c2d3e4f5a6b",
                "Grace's review meeting with the steering group moved to Thursdays at 14:00.", day(6)),
        passage("passage-9e4a5b6c-7d8e-4f9a-b1ac-2d3e4f5a6b7c", "Grace once asked about a supplier in Ohio (deleted).",
                day(30), deleted=True),
    ]


def _zep(day, iso) -> list[dict[str, Any]]:
    def fact(uid: str, name: str, text: str, created: datetime, valid_at: str, invalid_at: str | None = None,
             expired_at: datetime | None = None) -> dict[str, Any]:
        return {"uuid": uid, "group_id": "u-liuyang", "source_node_uuid": "0d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a",
                "target_node_uuid": f"{uid[:-4]}beef", "created_at": iso(created), "name": name, "fact": text,
                "fact_embedding": None, "episodes": [f"{uid[:-4]}e901"],
                "expired_at": iso(expired_at) if expired_at else None, "valid_at": valid_at,
                "invalid_at": invalid_at, "reference_time": iso(created), "attributes": {}}

    return [
        fact("2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d", "WORKS_ON", "刘洋负责支付服务从单体拆分为微服务的改造。", day(50),
             iso(day(60)), iso(day(9)), day(8)),
        fact("3b4c5d6e-7f8a-4b9c-8d1e-2f3a4b5c6d7e", "WORKS_ON", "刘洋从十一月起转到风控平台组，负责规则引擎。", day(8),
             iso(day(9))),
        fact("4c5d6e7f-8a9b-4c0d-9e2f-3a4b5c6d7e8f", "PREFERS", "刘洋希望代码评审意见集中在一次提交里给出。", day(15),
             iso(day(15))),
    ]


def _hot_subfiles(day, ms) -> tuple[dict[str, Any], dict[str, Any]]:
    gateway = {"meta": {"memory_id": "hot_gw01", "session_id": "sess_gw01", "created_at": ms(day(1, 9)), "version": 1},
               "summary": "讨论了 API 网关限流方案，最终采用令牌桶加 Redis 分布式计数器",
               "tags": ["API网关", "限流"],
               "content": [{"role": "user", "msg": "网关高峰期被刷，限流用什么方案？", "ts": ms(day(1, 9))},
                           {"role": "assistant", "msg": "建议令牌桶算法，计数放在 Redis，用 Lua 保证原子性。",
                            "ts": ms(day(1, 9)) + 5000}],
               "decisions": ["采用令牌桶算法", "限流计数用 Redis + Lua 脚本"],
               "references": ["docs/rate-limiting.md"]}
    database = {"meta": {"memory_id": "hot_db02", "session_id": "sess_db02", "created_at": ms(day(1, 15)), "version": 1},
                "summary": "订单表按用户 ID 哈希分成 16 张表，历史订单归档到冷库",
                "tags": ["数据库", "分表"],
                "content": [{"role": "user", "msg": "订单表已经两亿行了，怎么拆？", "ts": ms(day(1, 15))}],
                "decisions": ["按用户 ID 哈希分 16 张表"], "references": []}
    return gateway, database


def _transcript(day, iso) -> list[dict[str, Any]]:
    scope = {"session_id": "chat-bob-1130", "user_id": "u-bob", "agent_id": "support-bot"}
    start = day(1, 16)
    turns = [
        ("user", "Hi there!"),
        ("assistant", "Hello Bob, how can I help today?"),
        ("user", "I prefer email over phone calls for ticket updates."),
        ("user", "Our team decided to upgrade to the Enterprise plan next quarter."),
        ("assistant", "Good to know. Anything else?"),
        ("user", "My manager is Priya Nair, she signs off on all purchases."),
        ("user", "Please remind me on Friday to send the renewal form."),
        ("user", "Thanks, bye!"),
    ]
    return [{"id": f"bob-1130-{n:02d}", "role": role, "content": text, "ts": iso(start + timedelta(minutes=n)), **scope}
            for n, (role, text) in enumerate(turns, 1)]


def _write(path: Path, document: Any) -> Path:
    return _atomic(path, json.dumps(document, ensure_ascii=False, indent=2) + "\n")


def _write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    return _atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def _atomic(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
