"""Conversation transcripts (issue 41.3, seed 002's ``addMessage``): JSON Lines of chat messages, one a
line, ``{"role", "content", "ts", "session_id", "tenant", "agent_id", "user_id", "id" | "turn_id"}``.

Each message is judged by ``memory_lake.text.judge`` (the rules and the importance scale are its
module doc): a worthy one becomes one canonical record, the others are skipped and counted by kind
(``{"pleasantry": 12, "question": 4, "assistant": 30}``: a user turn by the kind judged, any other
turn by its role). The record of a worthy message:

| transcript | memory-lake |
|---|---|
| `content` (text, or a list of `{"type": "text", "text"}` parts, joined by new lines) | `content` |
| `tenant` (else `ingest --tenant T`; neither: the file is refused, `NO_TENANT`) | `tenant` |
| `agent_id`, `user_id`, `session_id` (or `agentId`, `userId`, `sessionId`) | the same (agent and user else `ingest --agent A --user U`) |
| the judged kind: preference, decision, fact, commitment, event | `type`: preference, decision, fact, todo, event |
| the judged importance | `importance` |
| — | `tier`: `short_term` (seed 002's `shortTerm.add`) |
| `ts` (or `timestamp`, `created_at`): ISO text, epoch seconds, or epoch milliseconds (a number above 10^11, made ISO UTC) | `created_at` |
| `id` (or `turn_id`, `message_id`) | `extra.transcript.turn_id` |
| the role, kind and rule | `extra.transcript.role` / `kind` / `rule` |
| — | `source`: `transcript` |

``id`` is ``t_`` and 32 hex digits of the SHA-256 of tenant, session and the message's own id, or,
without one, its role, time and content (the n-th repeat of the same message in a session adds
``#n``): the same transcript ingested again writes the same ids (a no-op), and a transcript that
grew, at its end or anywhere, keeps its earlier ids. Nothing positional is kept in the memory (a
message's line is in its history row), so a message that moved down a line changes nothing.

A line that is no message still becomes a row, for the contract to quarantine with its file and
line: not UTF-8 (``bad encoding``), not JSON or not an object (the line's text: ``bad JSON``), an
object without a role (``bad JSON``, saying so), a message whose ``content`` is missing, empty or
not text (its record without that content: ``missing content`` or ``wrong type``).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any

import duckdb
import polars as pl

from ...store import InputError
from ...text import judge
from .jsonl import line_records, normalise

NO_TENANT = ("a transcript message carries no tenant: give each message a \"tenant\", ingest the file with "
             "`memory-lake ingest FILE --tenant T` (the tenant its memories belong to), or drop it in the inbox "
             "in a folder named `tenant=T`")
NO_ROLE = "not a transcript message: it has no role (user, assistant, system ...)"
ROLES = frozenset({"user", "assistant", "system", "human", "ai"})
_ROLE_ALIASES = {"human": "user", "ai": "assistant"}
# fields only a memory record has: a first line with one is a memory, not a message
MEMORY_ONLY = frozenset({"tier", "importance", "tags", "status", "version", "summary", "expires_at", "access_count",
                         "reference_count", "content_hash", "memory", "deleted", "merged_into", "operator"})
TYPE_OF_KIND = {"preference": "preference", "decision": "decision", "fact": "fact", "commitment": "todo",
                "event": "event"}
EPOCH_MS_ABOVE = 1e11  # a number above this is epoch milliseconds (1e11 s is the year 5138)
_KEYS = {"agent_id": ("agent_id", "agentId"), "user_id": ("user_id", "userId"),
         "session_id": ("session_id", "sessionId")}


def is_transcript(first_record: dict) -> bool:
    """Whether the first record of a JSON Lines file is a chat message: a ``role`` of ``ROLES``, a
    ``content``, no field only a memory has (``MEMORY_ONLY``, or a ``type`` other than "message")."""
    role = first_record.get("role")
    return (isinstance(role, str) and role.strip().lower() in ROLES and "content" in first_record
            and not MEMORY_ONLY & first_record.keys() and first_record.get("type") in (None, "message"))


def read_transcript(con: duckdb.DuckDBPyConnection, data: bytes,
                    scope: dict[str, str | None] | None = None) -> tuple[pl.DataFrame, dict[str, int]]:
    """Records of a transcript's worthy messages and of its broken lines as (line, raw, ok, problem),
    and the skipped messages counted by kind (module doc). `scope` gives the tenant, agent_id and
    user_id of messages that carry none (``ingest --tenant --agent --user``)."""
    scope = scope or {}
    tenant = scope.get("tenant")
    defaults = {k: scope.get(k) for k in ("agent_id", "user_id")}
    lines = line_records(normalise(data))
    out_lines: list[int] = []
    raws: list[str] = []
    oks: list[bool] = []
    problems: list[str | None] = []
    skipped: dict[str, int] = {}
    positions: dict[str, int] = {}  # repeats of a message without an id of its own, per session
    for line, raw, ok, problem in lines.iter_rows():
        row = _row(line, raw, ok, problem, tenant, positions, skipped, defaults)
        if row is not None:
            out_lines.append(line)
            raws.append(row[0])
            oks.append(ok)
            problems.append(row[1])
    frame = pl.DataFrame({"line": out_lines, "raw": raws, "ok": oks, "problem": problems},
                         schema={"line": pl.Int64, "raw": pl.String, "ok": pl.Boolean, "problem": pl.String})
    return frame, dict(sorted(skipped.items()))


def _row(line: int, raw: str, ok: bool, problem: str | None, tenant: str | None, positions: dict[str, int],
         skipped: dict[str, int], defaults: dict[str, str | None]) -> tuple[str, str | None] | None:
    """(raw, problem) of the row a line becomes, or None when it is a message not worth keeping."""
    if not ok:
        return raw, problem  # bad encoding: the contract says where
    try:
        message = json.loads(raw)
    except ValueError:
        return raw, None  # bad JSON
    if not isinstance(message, dict):
        return raw, None  # not an object
    role = message.get("role")
    if not isinstance(role, str) or not role.strip():
        return raw, NO_ROLE
    role = _ROLE_ALIASES.get(role.strip().lower(), role.strip().lower())
    owner = message.get("tenant")
    owner = tenant if owner is None or (isinstance(owner, str) and not owner.strip()) else owner
    if owner is None or owner == "":
        raise InputError(f"{NO_TENANT} (line {line})")
    scope = {key: next((message[k] for k in keys if message.get(k) is not None), defaults.get(key))
             for key, keys in _KEYS.items()}
    session = str(scope["session_id"]) if scope["session_id"] is not None else ""
    own_id = next((message[k] for k in ("id", "turn_id", "message_id") if message.get(k) is not None), None)
    stamp = next((message[k] for k in ("ts", "timestamp", "created_at") if message.get(k) is not None), None)
    key = f"id:{own_id}" if own_id is not None else message_key(role, stamp, message.get("content"))
    if own_id is None:
        positions[f"{session}\x1f{key}"] = seen = positions.get(f"{session}\x1f{key}", 0) + 1
        key = key if seen == 1 else f"{key}#{seen}"
    record: dict[str, Any] = {"id": "t_" + hashlib.sha256(f"{owner}\x1f{session}\x1f{key}".encode()).hexdigest()[:32],
                              "tenant": owner}
    record.update({k: v for k, v in scope.items() if v is not None})
    content = _text(message.get("content"))
    if content is None or not content.strip():
        if "content" in message and not isinstance(message["content"], (str, list)):
            record["content"] = message["content"]  # the contract says: content must be text
        return json.dumps(record, ensure_ascii=False), None
    verdict = judge(content, role)
    if not verdict.worthy:
        counted = verdict.kind if role == "user" else role
        skipped[counted] = skipped.get(counted, 0) + 1
        return None
    record.update(content=content, type=TYPE_OF_KIND[verdict.kind], importance=verdict.importance, tier="short_term")
    if stamp is not None:
        record["created_at"] = _timestamp(stamp)
    record["source"] = "transcript"
    record["extra"] = {"transcript": {"turn_id": own_id, "role": role, "kind": verdict.kind, "rule": verdict.reason}}
    return json.dumps(record, ensure_ascii=False), None


def message_key(role: str, stamp: Any, content: Any) -> str:
    """What identifies a message without an id of its own: its role, time and content as sent."""
    return "msg:" + json.dumps([role, stamp, content], ensure_ascii=False, sort_keys=True, default=str)


def _text(content: Any) -> str | None:
    """The text of a message's content: a string, or the text parts of a list joined by new lines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, dict))]
        texts = [p for p in parts if isinstance(p, str)]
        return "\n".join(texts) if texts else None
    return None


def _timestamp(stamp: Any) -> Any:
    """ISO text for epoch milliseconds (a number, or digits, above ``EPOCH_MS_ABOVE``); anything else as
    given (ISO text, epoch seconds), for the contract to read or quarantine."""
    value = stamp
    if isinstance(stamp, str) and stamp.strip().isdigit():
        value = int(stamp.strip())
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > EPOCH_MS_ABOVE:
        try:
            moment = datetime.fromtimestamp(value / 1000, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return stamp  # beyond any date: the contract says out of range
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return value


__all__ = ["NO_ROLE", "NO_TENANT", "ROLES", "TYPE_OF_KIND", "is_transcript", "message_key", "read_transcript"]
