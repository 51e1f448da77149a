"""A Mem0 export: the result of ``Memory.get_all()`` / ``MemoryClient.get_all()`` written as JSON,
``{"results": [{"id", "memory", "hash", "metadata", "created_at", "updated_at", "user_id",
"agent_id", "run_id", ...}]}`` (Mem0 1.x; the 0.x list of the same items is read too). Issue 41.

Each item becomes one canonical record (README "Other memory systems"):

| Mem0 | memory-lake |
|---|---|
| `id` | `id` (so a re-import of an updated dump updates and never duplicates) |
| `memory` | `content` |
| `user_id`, `agent_id` (`userId`, `agentId`) | `user_id`, `agent_id` (the scope) |
| `run_id` (`runId`) | `context_id` |
| `created_at`, `updated_at` (`createdAt`, `updatedAt`: the TypeScript SDK) | `created_at`, `updated_at` |
| `expiration_date` (`expirationDate`) | `expires_at` (the nightly expiry archives it then) |
| `metadata.type` / `metadata.tier` / `metadata.importance` | `type` / `tier` / `importance` (when present) |
| `metadata.tags`, else `metadata.categories`, else `categories` | `tags` |
| `hash`, `metadata`, any other field | `extra.mem0` |
| — | `tenant`: the export has none, `ingest --tenant T` gives it |

A re-imported memory is written at the version the lake holds, so what the dump says wins for the
fields it carries (content, scope, dates); the lake's own fields (tier, counters) stay. The
contract then validates every record: an item without a text ``memory`` is quarantined as
missing content or the wrong type, a bad date as a bad timestamp, and the rest of the dump lands.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import polars as pl

from ...store import InputError
from .jsonl import decode, frame

NO_TENANT = ("a Mem0 export carries no tenant: ingest it with `memory-lake ingest FILE --tenant T` "
             "(the tenant its memories belong to), or drop it in the inbox in a folder named `tenant=T`")
# ours, then Mem0's names (Python SDK and REST in snake_case; the TypeScript SDK in camelCase)
_FIELDS = (("id", "id"), ("content", "memory"), ("user_id", "user_id", "userId"), ("agent_id", "agent_id", "agentId"),
           ("context_id", "run_id", "runId"), ("created_at", "created_at", "createdAt"),
           ("updated_at", "updated_at", "updatedAt"), ("expires_at", "expiration_date", "expirationDate"))
_KNOWN = {name for _, *names in _FIELDS for name in names}


def is_mem0(document: Any) -> bool:
    """Whether a parsed JSON document has the shape of a Mem0 ``get_all`` result: an object with a
    ``results`` list (and no save file's ``memories``), or a list of items with ``memory`` and ``hash``."""
    if isinstance(document, dict):
        return isinstance(document.get("results"), list) and "memories" not in document
    return (isinstance(document, list) and bool(document) and isinstance(document[0], dict)
            and "memory" in document[0] and "hash" in document[0])


def read_mem0(con: duckdb.DuckDBPyConnection, data: bytes, scope: dict[str, str | None]) -> pl.DataFrame:
    """Records of a Mem0 export as (line, raw, ok, problem): line = the item's 1-based position.
    Each item names its own user and agent; `scope` gives the tenant."""
    tenant = scope.get("tenant")
    document = load_document(data, "Mem0")
    if not tenant:
        raise InputError(NO_TENANT)
    items = document.get("results") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise InputError('a Mem0 export holds its memories in "results", a list')
    versions = lake_versions(con, [item.get("id") for item in items if isinstance(item, dict)])
    raws = [json.dumps(_record(item, tenant, versions), ensure_ascii=False) if isinstance(item, dict)
            else json.dumps(item, ensure_ascii=False) for item in items]
    return frame(list(range(1, len(raws) + 1)), raws, [True] * len(raws))


def lake_versions(con: duckdb.DuckDBPyConnection, ids: list) -> dict[str, int]:
    """The lake's version of each of `ids` it holds: an export's record is written at it, so a
    re-import of an updated export updates the memory (the export wins for what it carries)."""
    ids = [str(i) for i in ids if i is not None]
    if not ids:
        return {}
    return dict(con.execute("SELECT id, version FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))",
                            [ids]).fetchall())


def load_document(data: bytes, name: str) -> Any:
    """The export's JSON document (InputError saying what is wrong when it is none)."""
    _, text, decoded = decode(data)
    if not decoded:
        raise InputError(f"a {name} export must be UTF-8 JSON")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InputError(f"a {name} export must be one JSON document: {exc}") from None


def _record(item: dict[str, Any], tenant: str, versions: dict[str, int]) -> dict[str, Any]:
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    record: dict[str, Any] = {"tenant": tenant, "source": "mem0"}
    for ours, *theirs in _FIELDS:
        found = next((name for name in theirs if item.get(name) is not None), None)
        if found is not None:
            record[ours] = item[found]
    for key in ("type", "tier", "importance"):
        if metadata.get(key) is not None:
            record[key] = metadata[key]
    tags = next((value for value in (metadata.get("tags"), metadata.get("categories"), item.get("categories"))
                 if isinstance(value, list)), None)
    if isinstance(tags, list):
        record["tags"] = [str(t) for t in tags]
    if record.get("id") is not None and str(record["id"]) in versions:
        record["version"] = versions[str(record["id"])]  # the dump wins for what it carries
    record["extra"] = {"mem0": {k: v for k, v in item.items() if k not in _KNOWN}}
    return record
