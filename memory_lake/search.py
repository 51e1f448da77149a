"""Search over a scope's memories (DESIGN "Search"): keyword (BM25, jieba for Chinese), semantic
(cosine over the cached MiniLM embeddings) and hybrid, the seed's formula
``keyword*0.4 + semantic*0.4 + recency*0.1 + importance*0.1`` with each part in 0..1.

Semantic needs the embedding model and the `index` step's vectors; without them it degrades to
keyword and says so. Where the model does not cover the query's language (too many unknown
tokens, e.g. Chinese with MiniLM) the semantic weight moves to keyword, and the notes say so.

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

NOTE_NOT_COVERED = ("the embedding model does not cover the query's language ({share:.0%} unknown tokens); "
                    "its semantic weight moved to keyword")
NOTE_NO_VECTORS = "{missing} of {total} memories have no embedding yet (memory-lake index); their semantic part is 0"
NOTE_NO_INDEX = "no memory of this scope has an embedding yet (memory-lake index); the semantic part falls back to keyword"
NOTE_EMPTY_QUERY = "the query is empty; nothing to search for"
NOTE_NO_TOKENS = "the query has no searchable words (only stop words or punctuation)"

_COLUMNS = ("id", "content", "tier", "type", "tags", "created_at", "importance", "source",
            "tenant", "agent_id", "user_id", "last_accessed_at", "session_id")
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

    ``keyword`` ranks by BM25, ``semantic`` by cosine to the query's embedding, ``hybrid`` (the
    default) by the seed's weighted sum. Without a model or embeddings, or where the model does not
    cover the query's language, the semantic part falls back to keyword and `notes` say so
    (``mode_used`` is "keyword" for a semantic search answered that way). `as_of` (default now)
    only dates the log line. Bad input (unknown mode or filter, bad value) raises InputError; a lake busy
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
    query = "" if query is None else str(query)
    results: list[SearchResult] = []
    raw_scores: list[float] = []
    semantic_match = False
    mode_used = "keyword"
    source = None
    if not query.strip():
        notes.append(NOTE_EMPTY_QUERY)
    else:
        read = _read_scope(lake, tenant, agent, user, chosen, include_inactive)
        source = read.source
        if read.note:
            notes.append(read.note)
        query = _redact_query(lake, tenant, query)
        query_tokens = tokenize(query)
        semantic = None
        if mode_key != "keyword":
            if read.frame.height and read.frame["vector"].is_null().all():
                notes.append(NOTE_NO_INDEX)
            else:
                semantic = _query_vector(lake.policy, query, mode_key, notes)
        # hybrid without a usable query vector keeps recency and importance; its semantic weight
        # goes to keyword. Semantic alone degrades to keyword.
        mode_used = mode_key if semantic is not None or mode_key == "hybrid" else "keyword"
        if not query_tokens and semantic is None:
            notes.append(NOTE_NO_TOKENS)
        elif read.frame.height:
            results, raw_scores, semantic_match = _rank(read.frame, query_tokens, limit, explain, mode_used,
                                                        semantic, lake.policy, when, notes)

    found = SearchResults(results, search_id=uuid.uuid4().hex, mode_used=mode_used, notes=notes,
                          query=query, source=source)
    _log(lake, found, when=when, tenant=tenant, agent=agent, user=user, mode=mode_key,
         filters=chosen, raw_scores=raw_scores, semantic_match=semantic_match)
    return found


def _keyword_documents(frame, window: int) -> list[str]:
    """The text keyword search matches for each row: its content plus the `window` memories before
    and after it in the same session (in time order). A memory is often only understood with its
    neighbours (a reply names neither the question nor the speaker); the memory itself is still
    what is returned."""
    import polars as pl

    if window <= 0 or "session_id" not in frame.columns or frame["session_id"].is_null().all():
        return frame["content"].fill_null("").to_list()
    ordered = frame.with_row_index("_row").sort("session_id", "created_at", "id", nulls_last=True)
    parts = [pl.col("content").fill_null("")]
    for step in range(1, window + 1):
        for shift in (step, -step):
            parts.append(pl.when(pl.col("session_id").is_not_null())
                         .then(pl.col("content").shift(shift).over("session_id")).otherwise(None).fill_null(""))
    documents = ordered.select("_row", text=pl.concat_str(parts, separator=" ")).sort("_row")
    return documents["text"].to_list()


def _query_vector(policy, query: str, mode: str, notes: list[str]):
    """(vector, unknown share) of the query, or None when semantic cannot or should not take part."""
    from .embeddings import ModelUnavailable, encode, load_model

    try:
        model = load_model(policy.search.model)
    except ModelUnavailable as exc:
        notes.append(f"{exc}; the semantic part falls back to keyword (BM25)")
        return None
    vectors, unknown = encode(model, [query], policy.search.batch_size)
    share = float(unknown[0])
    if share > policy.search.max_unknown_ratio:
        notes.append(NOTE_NOT_COVERED.format(share=share))
        return None
    return vectors.to_numpy()[0]


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
def _read_scope(lake, tenant, agent, user, chosen, include_inactive):
    """The scope's rows with their vectors; a published version from before embeddings were
    exported has none (then every vector is NULL)."""
    sql, params = _scope_sql(tenant, agent, user, chosen, include_inactive, lake.policy.search.model)
    try:
        return lake.read(sql, params)
    except InputError as exc:
        if "embeddings" not in str(exc):
            raise
        sql, params = _scope_sql(tenant, agent, user, chosen, include_inactive, None)
        return lake.read(sql, params)


def _scope_sql(tenant, agent, user, chosen, include_inactive, model: str | None) -> tuple[str, list[Any]]:
    """The scope's rows with their embedding for `model` (if any); every user value is a parameter."""
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
    columns = ", ".join(f"m.{c}" for c in _COLUMNS)
    scope = f"(SELECT * FROM memories WHERE {' AND '.join(where)}) m"
    if model is None:
        return f"SELECT {columns}, NULL::FLOAT[] AS vector FROM {scope} ORDER BY m.id", params
    # (text_hash, model) is unique: the index step only inserts what is missing
    sql = (f"SELECT {columns}, e.vector FROM {scope} "
           f"LEFT JOIN embeddings e ON e.text_hash = m.content_hash AND e.model = ? ORDER BY m.id")
    return sql, [*params, model]


def _rank(frame, query_tokens: list[str], limit: int, explain: bool, mode: str, query_vector, policy,
          when: datetime, notes: list[str]) -> tuple[list[SearchResult], list[float], bool]:
    """Score every row of the scope (vectorised) and return the best `limit`, best first, then id.

    keyword: BM25 / the best BM25 of the query; semantic: cosine, min-max scaled over the scope;
    recency: 0.5 ** (days since last access / half-life); importance as stored. Keyword mode ranks
    by keyword alone, semantic by semantic alone, hybrid by the weighted sum (weights from the
    policy, the seed's 0.4 / 0.4 / 0.1 / 0.1 by default).
    """
    import numpy as np
    import polars as pl

    size = frame.height
    ids = frame["id"].to_list()
    documents = _keyword_documents(frame, policy.search.context_window)
    keyword_raw = np.asarray(bm25_scores(query_tokens, [tokenize(d) for d in documents], BM25_K1, BM25_B)
                             if query_tokens else [0.0] * size, dtype=float)
    keyword = keyword_raw / keyword_raw.max() if keyword_raw.max() > 0 else np.zeros(size)
    cosine = np.zeros(size)
    semantic = np.zeros(size)
    if query_vector is not None:
        has = frame["vector"].is_not_null().to_numpy()
        if not has.all():
            notes.append(NOTE_NO_VECTORS.format(missing=int((~has).sum()), total=size))
        if has.any():
            vectors = frame["vector"].filter(frame["vector"].is_not_null())
            matrix = vectors.list.to_array(len(query_vector)).to_numpy().astype(np.float32, copy=False)
            cosine[has] = matrix @ query_vector
            low, high = cosine[has].min(), cosine[has].max()
            semantic[has] = (cosine[has] - low) / (high - low) if high > low else 1.0
    s = policy.search
    age_days = frame.select(
        (pl.lit(when) - pl.col("last_accessed_at").fill_null(when)).dt.total_seconds() / 86400).to_series().to_numpy()
    recency = np.power(0.5, np.clip(age_days, 0, None) / s.recency_half_life_days)
    importance = frame["importance"].fill_null(0.0).to_numpy().astype(float)
    if mode == "keyword":
        score, eligible = keyword, keyword_raw > 0
    elif mode == "semantic":
        score, eligible = semantic, cosine != 0
    else:
        keyword_weight, semantic_weight = s.keyword_weight, s.semantic_weight
        if query_vector is None:
            keyword_weight, semantic_weight = keyword_weight + semantic_weight, 0.0
        score = (keyword_weight * keyword + semantic_weight * semantic + s.recency_weight * recency
                 + s.importance_weight * importance)
        eligible = (keyword_raw > 0) | (cosine != 0)
    order = sorted(np.flatnonzero(eligible), key=lambda i: (-round(float(score[i]), _TIE_DIGITS), ids[i]))[:limit]
    results = []
    for i in order:
        row = frame.row(int(i), named=True)
        parts = None
        if explain:
            parts = {"keyword": float(keyword_raw[i]), "keyword_norm": float(keyword[i])}
            if mode != "keyword":
                parts |= {"semantic": float(cosine[i]), "semantic_norm": float(semantic[i]),
                          "recency": float(recency[i]), "importance": float(importance[i])}
        results.append(SearchResult(
            id=row["id"], content=row["content"], tier=row["tier"], type=row["type"], score=float(score[i]),
            tags=list(row["tags"] or []), created_at=row["created_at"], importance=row["importance"],
            source=row["source"], tenant=row["tenant"], agent_id=row["agent_id"], user_id=row["user_id"], parts=parts,
        ))
    raw = [float(keyword_raw[i]) for i in order]
    best_cosine = float(cosine[order[0]]) if order and query_vector is not None else 0.0
    return results, raw, best_cosine >= s.hit_cosine


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


def _log(lake, found: SearchResults, *, when: datetime, tenant, agent, user, mode, filters, raw_scores,
         semantic_match: bool = False) -> None:
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
        "semantic_match": semantic_match,
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
