"""Letta (formerly MemGPT) archival memory: the passages ``GET /v1/agents/{agent_id}/archival-memory``
returns, written as JSON (a list of ``{"id": "passage-…", "text", "tags", "metadata", "created_at",
"updated_at", "archive_id", "embedding", …}``; ``docs/formats-research.md`` has the shape and its
sources). Issue 41.4.

| Letta | memory-lake |
|---|---|
| `id` | `id` (a re-import of an updated dump updates) |
| `text` | `content` |
| `tags` | `tags` |
| `created_at`, `updated_at` | the same |
| — | `tier` `long_term` (archival memory is Letta's long-term store) |
| `agent_id` (before Letta 0.11) | `agent_id`; else `ingest --agent A` |
| `metadata.importance` (a number) | `importance` |
| `archive_id`, `organization_id`, `created_by_id`, `metadata`, … | `extra.letta` (the embedding is dropped) |
| — | `tenant` from `ingest --tenant T`, `user_id` from `--user U` |

A deleted passage (``is_deleted: true``) and a chunk of an attached file (``file_id`` or
``source_id`` set: a document, not a memory) are skipped, never imported, and counted
(``skipped``: ``deleted``, ``file chunk``; the file's record count is the passages read).
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import polars as pl

from ...store import InputError
from .jsonl import frame
from .mem0 import lake_versions, load_document

NO_TENANT = ("a Letta export carries no tenant: ingest it with `memory-lake ingest FILE --tenant T` "
             "(and --agent A, the agent the passages were listed from), or drop it in the inbox in a folder "
             "named `tenant=T` (and `agent=A` inside it)")
_DROPPED = {"embedding", "id", "text", "tags", "created_at", "updated_at", "agent_id"}


def is_letta(document: Any) -> bool:
    """A list of passages: items with ``text`` and an ``id`` starting ``passage-``."""
    items = document.get("passages") if isinstance(document, dict) else document
    return (isinstance(items, list) and bool(items) and isinstance(items[0], dict) and "text" in items[0]
            and str(items[0].get("id", "")).startswith("passage-"))


def read_letta(con: duckdb.DuckDBPyConnection, data: bytes,
               scope: dict[str, str | None]) -> tuple[pl.DataFrame, dict[str, int]]:
    """Records of a Letta passages export as (line, raw, ok, problem), line = the passage's position,
    and the passages skipped (not memories) counted by kind."""
    document = load_document(data, "Letta")
    if not scope.get("tenant"):
        raise InputError(NO_TENANT)
    items = document.get("passages") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise InputError("a Letta export is a list of passages")
    versions = lake_versions(con, [i.get("id") for i in items if isinstance(i, dict)])
    lines, raws = [], []
    skipped: dict[str, int] = {}
    for n, item in enumerate(items, 1):
        if isinstance(item, dict) and (item.get("is_deleted") or item.get("file_id") or item.get("source_id")):
            kind = "deleted" if item.get("is_deleted") else "file chunk"  # gone in Letta, or part of a document
            skipped[kind] = skipped.get(kind, 0) + 1
            continue
        lines.append(n)
        raws.append(json.dumps(_record(item, scope, versions) if isinstance(item, dict) else item, ensure_ascii=False))
    return frame(lines, raws, [True] * len(raws)), dict(sorted(skipped.items()))


def _record(item: dict[str, Any], scope: dict[str, str | None], versions: dict[str, int]) -> dict[str, Any]:
    record: dict[str, Any] = {k: v for k, v in scope.items() if v}
    record.update(source="letta", tier="long_term")
    for ours, theirs in (("id", "id"), ("content", "text"), ("created_at", "created_at"), ("updated_at", "updated_at"),
                         ("agent_id", "agent_id")):
        if item.get(theirs) is not None:
            record[ours] = item[theirs]
    if isinstance(item.get("tags"), list):
        record["tags"] = item["tags"]
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else item.get("metadata_")
    importance = metadata.get("importance") if isinstance(metadata, dict) else None
    if isinstance(importance, (int, float)) and not isinstance(importance, bool) and 0 <= importance <= 1:
        record["importance"] = importance
    if record.get("id") is not None and str(record["id"]) in versions:
        record["version"] = versions[str(record["id"])]
    letta = {k: v for k, v in item.items() if k not in _DROPPED and v is not None}
    if isinstance(item.get("embedding_config"), dict):
        letta["embedding_config"] = {k: item["embedding_config"].get(k) for k in ("embedding_model",)}
    record["extra"] = {"letta": letta}
    return record
