"""Search over a scope's memories (DESIGN "Search"). This first form answers every mode with
keyword BM25; a later issue adds embeddings, hybrid scoring and postings tables.

Search is read-only and never holds a connection: it loads the scope's rows with one
``lake.read`` (open, query, close). While a run holds the lake, that read answers from the latest
published export, and the result's ``notes`` say so. The only thing a search writes is one JSON
line appended to ``<lake>/events/searches-<YYYY-MM-DD>.jsonl``, which the next run loads into
``retrieval_log`` (hit rate, accesses).

No raw PII reaches that log: the query is redacted by the ingest's rules first, with the
tenant's salt when the lake can give it, so a phone number in a query becomes the same
``[PHONE:...]`` placeholder the memories hold and is found by it.
"""

from __future__ import annotations

import json
import os
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from . import schema
from .clock import iso, resolve_as_of
from .errors import InputError, MemoryLakeError
from .redact import redact_text
from .textsearch import BM25_B, BM25_K1, bm25_scores, tokenize

MODES = ("keyword", "semantic", "hybrid")
DEFAULT_MODE = "hybrid"  # DESIGN "Search": hybrid is the default mode
FILTERS = ("tier", "type", "source", "tag", "context", "since", "until")
# DESIGN "Search": dormant, archived, deleted and merged memories are not returned unless asked.
SEARCHABLE_STATUSES = ("active", "conflicted")
LOG_PREFIX = "searches-"

NOTE_NO_SEMANTIC = "semantic search is not available yet; answered with keyword (BM25)"
NOTE_EMPTY_QUERY = "the query is empty; nothing to search for"
NOTE_NO_TOKENS = "the query has no searchable words (only stop words or punctuation)"

_COLUMNS = ("id", "content", "tier", "type", "tags", "created_at", "importance", "source",
            "tenant", "agent_id", "user_id")
# Ties in BM25 are broken by id; rounding the sort key keeps float noise from deciding a tie.
_TIE_DIGITS = 12


@dataclass
class SearchResult:
    """One returned memory: `score` is the keyword score normalised to 0..1 (best of the query = 1)."""

    id: str
    content: str
    tier: str
    type: str
    score: float
    tags: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    importance: float | None = None
    source: str | None = None
    tenant: str | None = None
    agent_id: str | None = None
    user_id: str | None = None
    parts: dict[str, float] | None = None  # only with explain=True

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of `search --json` (no tenant: the caller named it); `parts` when explained."""
        out = {
            "id": self.id,
            "content": self.content,
            "tier": self.tier,
            "type": self.type,
            "score": self.score,
            "tags": list(self.tags),
            "created_at": iso(self.created_at),
            "importance": self.importance,
            "source": self.source,
            "agent_id": self.agent_id,
            "user_id": self.user_id,
        }
        if self.parts is not None:
            out["parts"] = dict(self.parts)
        return out


class SearchResults(list):
    """The results of one search, best first, with `search_id`, `mode_used`, `notes` and `query`.

    `query` is the query as searched and logged, i.e. after PII redaction.
    """

    def __init__(self, results=(), *, search_id: str, mode_used: str, notes: list[str], query: str,
                 source: str | None = None):
        super().__init__(results)
        self.search_id = search_id
        self.mode_used = mode_used
        self.notes = notes
        self.query = query
        self.source = source  # "live", "published v<N>", or None when nothing was read

    def as_dict(self) -> dict[str, Any]:
        """``{"search_id", "mode_used", "notes", "results": [...]}`` as `search --json` prints it."""
        return {
            "search_id": self.search_id,
            "mode_used": self.mode_used,
            "notes": list(self.notes),
            "results": [r.as_dict() for r in self],
        }


def search(
    lake,
    query: str,
    *,
    tenant: str,
    agent: str | None = None,
    user: str | None = None,
    mode: str = DEFAULT_MODE,
    limit: int = 10,
    as_of: datetime | str | None = None,
    include_inactive: bool = False,
    explain: bool = False,
    **filters: Any,
) -> SearchResults:
    """Search the memories of one scope and log the search to ``events/``.

    The scope is `tenant` (required), narrowed by `agent` and `user` (None = all of the tenant).
    `filters`, each optional (None = not given): ``tier``, ``type``, ``source``, ``tag`` (a tag, or
    a list of tags that must all be present), ``context`` (context_id), ``since`` and ``until``
    (ISO text or datetimes; ``since <= created_at < until``). Only active and conflicted memories
    that are not merged are searched unless `include_inactive`.

    Every mode is answered with keyword BM25 for now; asked for ``semantic`` or ``hybrid``, the
    result says so in `notes` and has ``mode_used == "keyword"``. `as_of` (default now) only dates
    the log line. Bad input (unknown mode or filter, bad value) raises InputError; a lake busy
    with nothing published raises LakeBusy. An empty query gives no results and a note.
    """
    mode_key = _check_mode(mode)
    tenant = _check_scope_value("tenant", tenant, required=True)
    agent = _check_scope_value("agent", agent)
    user = _check_scope_value("user", user)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(f"limit must be a positive integer, not {limit!r}")
    chosen = _check_filters(filters)
    when = resolve_as_of(as_of)

    notes: list[str] = []
    if mode_key != "keyword":
        notes.append(NOTE_NO_SEMANTIC)
    query = "" if query is None else str(query)
    results: list[SearchResult] = []
    raw_scores: list[float] = []
    source = None
    if not query.strip():
        notes.append(NOTE_EMPTY_QUERY)
    else:
        sql, params = _scope_sql(tenant, agent, user, chosen, include_inactive)
        read = lake.read(sql, params)
        source = read.source
        if read.note:
            notes.append(read.note)
        query = _redact_query(lake, tenant, query)
        query_tokens = tokenize(query)
        if not query_tokens:
            notes.append(NOTE_NO_TOKENS)
        elif read.frame.height:
            results, raw_scores = _rank(read.frame, query_tokens, limit, explain)

    found = SearchResults(results, search_id=uuid.uuid4().hex, mode_used="keyword", notes=notes,
                          query=query, source=source)
    _log(lake, found, when=when, tenant=tenant, agent=agent, user=user, mode=mode_key,
         filters=chosen, raw_scores=raw_scores)
    return found


# ------------------------------------------------------------------ input checks
def _check_mode(mode: str) -> str:
    key = str(mode).strip().lower() if mode is not None else DEFAULT_MODE
    if key not in MODES:
        raise InputError(f"unknown search mode {mode!r}: use one of {', '.join(MODES)}")
    return key


def _check_scope_value(name: str, value: Any, *, required: bool = False) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InputError(f"search needs a {name}: memories are searched per scope")
        return None
    if not isinstance(value, str):
        raise InputError(f"{name} must be text, not {type(value).__name__}")
    return value


def _check_filters(filters: Mapping[str, Any]) -> dict[str, Any]:
    """The given filters (None = not given), validated and normalised, in FILTERS order."""
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise InputError(f"unknown search filter {', '.join(unknown)}: use {', '.join(FILTERS)}")
    chosen: dict[str, Any] = {}
    for name in FILTERS:
        value = filters.get(name)
        if value is None:
            continue
        if name == "tier":
            chosen[name] = _vocabulary(name, value, schema.TIER_ALIASES, squash=True)
        elif name == "type":
            chosen[name] = _vocabulary(name, value, schema.TYPE_ALIASES, squash=False)
        elif name == "tag":
            tags = [value] if isinstance(value, str) else value
            if not isinstance(tags, (list, tuple)) or not tags or not all(isinstance(t, str) and t for t in tags):
                raise InputError(f"tag must be a tag or a list of tags, not {value!r}")
            chosen[name] = tags[0] if len(tags) == 1 else list(tags)
        elif name in ("since", "until"):
            try:
                chosen[name] = resolve_as_of(value)
            except (InputError, TypeError, AttributeError):
                raise InputError(f"{name} {value!r} is not an ISO 8601 timestamp") from None
        else:
            if not isinstance(value, str):
                raise InputError(f"{name} must be text, not {value!r}")
            chosen[name] = value
    return chosen


def _vocabulary(name: str, value: Any, aliases: Mapping[str, str], *, squash: bool) -> str:
    # The same tolerant spellings ingest accepts ("short-term", "Long Term", "preferences").
    key = str(value).strip().lower()
    if squash:
        key = key.replace("-", "").replace("_", "").replace(" ", "")
    if key in aliases.values():
        return key
    if key in aliases:
        return aliases[key]
    raise InputError(f"unknown {name} {value!r}: use one of {', '.join(sorted(set(aliases.values())))}")


# ------------------------------------------------------------------ reading and ranking
def _scope_sql(tenant, agent, user, chosen, include_inactive) -> tuple[str, list[Any]]:
    """The scope's rows; every user value is a parameter."""
    where, params = ["tenant = ?"], [tenant]
    if agent is not None:
        where.append("agent_id = ?")
        params.append(agent)
    if user is not None:
        where.append("user_id = ?")
        params.append(user)
    if not include_inactive:
        statuses = ", ".join(f"'{s}'" for s in SEARCHABLE_STATUSES)
        where.append(f"status IN ({statuses}) AND merged_into IS NULL")
    for name, column in (("tier", "tier"), ("type", "type"), ("source", "source"), ("context", "context_id")):
        if name in chosen:
            where.append(f"{column} = ?")
            params.append(chosen[name])
    if "tag" in chosen:
        tags = chosen["tag"] if isinstance(chosen["tag"], list) else [chosen["tag"]]
        where.append("list_has_all(coalesce(tags, []::VARCHAR[]), ?::VARCHAR[])")
        params.append(tags)
    if "since" in chosen:
        where.append("created_at >= ?")
        params.append(chosen["since"])
    if "until" in chosen:
        where.append("created_at < ?")
        params.append(chosen["until"])
    sql = f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE {' AND '.join(where)} ORDER BY id"
    return sql, params


def _rank(frame, query_tokens: list[str], limit: int, explain: bool) -> tuple[list[SearchResult], list[float]]:
    """BM25 over the scope's rows; the best `limit` with a positive score, best first, then by id."""
    rows = frame.to_dicts()
    raw = bm25_scores(query_tokens, [tokenize(r["content"] or "") for r in rows], BM25_K1, BM25_B)
    ranked = sorted(
        (i for i, score in enumerate(raw) if score > 0),
        key=lambda i: (-round(raw[i], _TIE_DIGITS), rows[i]["id"]),
    )[:limit]
    if not ranked:
        return [], []
    best = raw[ranked[0]]
    results = []
    for i in ranked:
        row, score = rows[i], raw[i] / best
        results.append(SearchResult(
            id=row["id"], content=row["content"], tier=row["tier"], type=row["type"], score=score,
            tags=list(row["tags"] or []), created_at=row["created_at"], importance=row["importance"],
            source=row["source"], tenant=row["tenant"], agent_id=row["agent_id"], user_id=row["user_id"],
            parts={"keyword": raw[i], "keyword_norm": score} if explain else None,
        ))
    return results, [raw[i] for i in ranked]


# ------------------------------------------------------------------ PII and the log
def _redact_query(lake, tenant: str, query: str) -> str:
    """The query with PII replaced as ingest would; the tenant's salt is read only when needed."""
    if redact_text(query, b"probe") == query:
        return query  # nothing to redact (the common case): no second read
    return redact_text(query, _tenant_salt(lake, tenant))


def _tenant_salt(lake, tenant: str) -> bytes:
    try:
        frame = lake.read("SELECT salt FROM tenant_salts WHERE tenant = ?", [tenant]).frame
    except MemoryLakeError:
        frame = None  # busy: published versions do not carry salts
    if frame is not None and frame.height:
        return bytes(frame.item(0, 0))
    # An unknown tenant, or a busy lake: a one-off salt still keeps raw PII off disk; the
    # placeholder then matches nothing, as the raw value would have matched nothing.
    return secrets.token_bytes(32)


def _log(lake, found: SearchResults, *, when: datetime, tenant, agent, user, mode, filters, raw_scores) -> None:
    """Append one JSON line for this search; one O_APPEND write keeps concurrent lines whole."""
    record = {
        "search_id": found.search_id,
        "ts": iso(when),
        "tenant": tenant,
        "agent_id": agent,
        "user_id": user,
        "query": found.query,
        "mode": mode,
        "mode_used": found.mode_used,
        "filters": {k: (iso(v) if isinstance(v, datetime) else v) for k, v in filters.items()},
        "result_ids": [r.id for r in found],
        "raw_scores": raw_scores,
        "keyword_match": bool(raw_scores) and raw_scores[0] > 0,
    }
    data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    lake.events.mkdir(parents=True, exist_ok=True)
    path = lake.events / f"{LOG_PREFIX}{when:%Y-%m-%d}.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        # A regular file takes the whole line in one write; a short write (a full disk) is
        # finished rather than leaving half a line for the next run to trip over.
        while written < len(data):
            written += os.write(fd, data[written:])
    finally:
        os.close(fd)
