"""Zep / Graphiti facts: the entity edges of a user's graph written as JSON (a list of ``{"uuid",
"group_id", "name", "fact", "created_at", "valid_at", "invalid_at", "expired_at", "episodes",
"source_node_uuid", "target_node_uuid", "attributes", …}``, or ``{"edges": [...]}`` /
``{"facts": [...]}``; the Zep Cloud SDK writes ``uuid_``). ``docs/formats-research.md`` has the
shapes and their sources. Issue 41.4.

| Zep / Graphiti | memory-lake |
|---|---|
| `uuid` (`uuid_`) | `id` (a re-import of an updated export updates) |
| `fact` | `content`, type `fact`, tier `long_term` |
| `group_id` | `user_id` (one graph per user), unless `ingest --user U` |
| `created_at` | `created_at` |
| `invalid_at` (when the fact stopped being true) | `expires_at`: the nightly run archives it then |
| `expired_at` (the graph superseded the edge) | status `archived` |
| `valid_at`, `name`, nodes, `episodes`, `attributes`, … | `extra.zep` (the embedding is dropped) |
| — | `tenant` from `ingest --tenant T`, `agent_id` from `--agent A` |
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import polars as pl

from ...store import InputError
from .jsonl import frame
from .mem0 import lake_versions, load_document

NO_TENANT = ("a Zep export carries no tenant: ingest it with `memory-lake ingest FILE --tenant T`, or drop it "
             "in the inbox in a folder named `tenant=T`")
_DROPPED = {"fact_embedding", "uuid", "uuid_", "fact", "created_at"}


def _items(document: Any) -> Any:
    if isinstance(document, dict):
        for key in ("edges", "facts"):
            if isinstance(document.get(key), list):
                return document[key]
    return document


def is_zep(document: Any) -> bool:
    """A list of facts: items with ``fact`` and ``source_node_uuid`` (or ``{"edges"|"facts": [...]}``)."""
    items = _items(document)
    return (isinstance(items, list) and bool(items) and isinstance(items[0], dict) and "fact" in items[0]
            and ("source_node_uuid" in items[0] or "uuid" in items[0] or "uuid_" in items[0]))


def read_zep(con: duckdb.DuckDBPyConnection, data: bytes, scope: dict[str, str | None]) -> pl.DataFrame:
    """Records of a Zep / Graphiti facts export as (line, raw, ok, problem); line = the fact's position."""
    document = load_document(data, "Zep")
    if not scope.get("tenant"):
        raise InputError(NO_TENANT)
    items = _items(document)
    if not isinstance(items, list):
        raise InputError('a Zep export is a list of facts (or {"edges": [...]})')
    versions = lake_versions(con, [i.get("uuid") or i.get("uuid_") for i in items if isinstance(i, dict)])
    raws = [json.dumps(_record(item, scope, versions) if isinstance(item, dict) else item, ensure_ascii=False)
            for item in items]
    return frame(list(range(1, len(raws) + 1)), raws, [True] * len(raws))


def _record(item: dict[str, Any], scope: dict[str, str | None], versions: dict[str, int]) -> dict[str, Any]:
    record: dict[str, Any] = {k: v for k, v in scope.items() if v}
    record.update(source="zep", tier="long_term", type="fact")
    memory_id = item.get("uuid") or item.get("uuid_")
    if memory_id is not None:
        record["id"] = memory_id
    if item.get("fact") is not None:
        record["content"] = item["fact"]
    if item.get("created_at") is not None:
        record["created_at"] = item["created_at"]
    if not record.get("user_id") and item.get("group_id"):
        record["user_id"] = item["group_id"]
    if item.get("invalid_at") is not None:
        record["expires_at"] = item["invalid_at"]
    if item.get("expired_at") is not None:
        record["status"] = "archived"
    if memory_id is not None and str(memory_id) in versions:
        record["version"] = versions[str(memory_id)]
    record["extra"] = {"zep": {k: v for k, v in item.items() if k not in _DROPPED and v is not None}}
    return record
