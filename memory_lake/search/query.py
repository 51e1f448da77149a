"""Search over a scope's memories (DESIGN "Search"): keyword (BM25, jieba for Chinese), semantic
(cosine over the cached embeddings, routed by language: MiniLM where it covers the language, the
multilingual model elsewhere, issue 17) and hybrid, the seed's formula
``keyword*0.4 + semantic*0.4 + recency*0.1 + importance*0.1`` with each part in 0..1.

Only memories with evidence of relevance are returned (the relevance floor): a raw keyword match,
or a raw cosine >= ``[search] min_cosine`` (0.35) where the model covers the query's language. (A
search is a "hit" on stronger evidence, DESIGN "Search": a keyword match or ``hit_cosine`` 0.5.) When nothing passes, the results are
empty and ``notes`` say so, naming the scope and how many memories were searched.

Each result says whether it is disputed: ``conflict`` (its status is ``conflicted`` or it is a
side of an open contradiction) and ``conflict_with`` (the other side's ids), so an agent never
takes one side of a known contradiction for a settled fact.

Semantic needs the embedding models and the `index` step's vectors; without them it degrades to
keyword and says so. The query is embedded by each model that covers its language (few unknown
tokens) and each memory scored in the space of the first model that covers both it and the
query (`scopeindex`): a Chinese query goes through the multilingual model and may find an
English memory. Whenever the multilingual model scored any memory, the notes say which model
scored how many memories and why; where no model covers the query's language the semantic
weight moves to keyword, and the notes say so with each model's unknown share.

Search is read-only and never holds a connection: it loads the scope's rows with one
``lake.read`` (open, query, close). While a run holds the lake, that read answers from the latest
published export, and the result's ``notes`` say so. The only thing a search writes is one JSON
line appended to ``<lake>/events/searches-<YYYY-MM-DD>.jsonl``, which the next run loads into
``retrieval_log`` (hit rate, accesses).

No raw PII reaches that log: the query, the scope (tenant, agent, user) and the filter values
are redacted by the ingest's rules first, with the tenant's salt when the lake can give it, so a
phone number in a query becomes the same ``[PHONE:...]`` placeholder the memories hold and is
found by it. While a run holds the lake the salts cannot be read: a one-off salt then keeps the
value off disk, and the placeholder matches nothing, as the raw value would have matched nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import uuid
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..store import schema
from ..store import iso, resolve_as_of
from ..store import InputError
from ..store import check_scope
from ..text import redact_text
from .embeddings import models
from .scopeindex import SCOPES, load_scope
from ..text import TOKENIZER_VERSION, tokenize

MODES = ("keyword", "semantic", "hybrid")
DEFAULT_MODE = "hybrid"  # DESIGN "Search": hybrid is the default mode
FILTERS = ("tier", "type", "source", "tag", "context", "since", "until")
# DESIGN "Search": dormant, archived, deleted and merged memories are not returned unless asked.
SEARCHABLE_STATUSES = ("active", "conflicted")
LOG_PREFIX = "searches-"

NOTE_NOT_COVERED = ("the embedding model does not cover the query's language ({share:.0%} unknown tokens); "
                    "its semantic weight moved to keyword")
NOTE_NO_MODEL_COVERS = ("no embedding model covers the query's language ({shares}); "
                        "its semantic weight moved to keyword")
NOTE_SCORED_BY = "semantic part: {parts}"
NOTE_QUERY_NOT_COVERED = "{model} does not cover the query's language ({share:.0%} unknown tokens)"
NOTE_NO_VECTORS = "{missing} of {total} memories have no embedding yet (memory-lake index); their semantic part is 0"
NOTE_NO_INDEX = "no memory of this scope has an embedding yet (memory-lake index); the semantic part falls back to keyword"
NOTE_EMPTY_QUERY = "the query is empty; nothing to search for"
NOTE_NO_TOKENS = "the query has no searchable words (only stop words or punctuation)"
NOTE_NO_MATCH = "no memory matched {query!r} in {scope} ({why}); {searched} searched"
WHY_NO_MATCH = {
    "keyword": "none shares a word with the query",
    "semantic": "none has a cosine >= {cosine} to the query",
    "hybrid": "none shares a word with the query (besides words most memories hold) or has a cosine >= {cosine} to it",
}
NOTE_EMPTY_SCOPE = "no memory to search in {scope}: none is active or conflicted{filtered}"
NOTE_EMPTY_PUBLISHED_SCOPE = ("no memory of {scope} is in {source}, which this search read because a run holds "
                              "the lake (its names cannot be checked meanwhile): memories ingested since that "
                              "publish become searchable when the run ends")
NOTE_RESTING = ("{count} dormant or archived memories are in this scope: include_inactive (--include-inactive) "
                "searches them, `memory-lake restore ID...` makes them active again")
NOTE_NO_CONFLICTS = ("{source} has no conflicts table: results are not marked as sides of open contradictions "
                     "(a conflicted status still is)")

@dataclass
class SearchResult(Mapping):
    """One returned memory: `score` is its rank score in 0..1 (keyword: BM25 / the best BM25 of the
    query; semantic: scaled cosine; hybrid: the weighted sum). `conflict` is True when the memory is
    ``conflicted`` or a side of an open contradiction; `conflict_with` lists the other side(s).

    It reads as attributes (``r.id``) and as the mapping `search --json` prints (``r["id"]``,
    ``dict(r)``, the same keys: `as_dict`), so code written against the CLI's JSON works on it."""

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
    conflict: bool = False
    conflict_with: list[str] = field(default_factory=list)
    parts: dict[str, Any] | None = None  # only with explain=True
    status: str = "active"  # dormant, archived or merged only in an include_inactive search

    @property
    def resting(self) -> bool:
        """True for a dormant, archived or merged memory (found by an include_inactive search)."""
        return self.status not in SEARCHABLE_STATUSES

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
            "conflict": self.conflict,
            "conflict_with": list(self.conflict_with),
            "status": self.status,
        }
        if self.parts is not None:
            out["parts"] = dict(self.parts)
        return out

    def __getitem__(self, key: str) -> Any:
        return self.as_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())


class SearchResults(list):
    """The results of one search, best first, with `search_id`, `mode_used`, `notes` and `query`.

    It is the list of :class:`SearchResult`; `results` is that list too, under the name the JSON
    uses. `query` is the query as searched and logged, i.e. after PII redaction. `searched` is
    how many memories the scope held (0 when nothing was read).
    """

    def __init__(self, results=(), *, search_id: str, mode_used: str, notes: list[str], query: str,
                 source: str | None = None, searched: int = 0):
        super().__init__(results)
        self.search_id = search_id
        self.mode_used = mode_used
        self.notes = notes
        self.query = query
        self.source = source  # "live", "published v<N>", or None when nothing was read
        self.searched = searched

    @property
    def results(self) -> list[SearchResult]:
        """The results, best first, as in the JSON's ``"results"``."""
        return list(self)

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
    log: bool = True,
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
    (``mode_used`` is "keyword" for a semantic search answered that way). Only memories with a
    keyword match or a raw cosine >= ``min_cosine`` are returned; when none is, `notes` say why.
    `explain` adds each result's score parts (and, for hybrid, the weights used). `as_of` (default now)
    only dates the log line. `log=False` leaves the search out of ``events/`` (and so out of the
    hit rate): a measurement of search quality, not an agent's question. Bad input (unknown mode or filter, bad value) raises InputError; a lake busy
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
    tenant, agent, user, query, chosen = _redact_request(lake, tenant, agent, user, query, chosen)
    # an unknown name is an error, not 0 results; checked as stored (after redaction: an e-mail
    # tenant is known by its placeholder)
    identity = lake.data_identity()  # once a search: the scope check and the scope cache share it
    check_scope(lake, tenant, agent, user, identity=identity)
    results: list[SearchResult] = []
    raw_scores: list[float] = []
    semantic_match = False
    mode_used = "keyword"
    source = None
    searched = 0
    if not query.strip():
        notes.append(NOTE_EMPTY_QUERY)
    else:
        query_tokens = tokenize(query)
        # The query's embedding is computed while the scope is loaded (or looked up).
        # Only the first model that covers the query is run now; a later one only when the scope
        # holds memories that only it scored (`_more_vectors`).
        pending = _QUERY_VECTORS.submit(_query_vector, lake.policy, query, True) if mode_key != "keyword" else None
        scope, source, note = _scope(lake, tenant, agent, user, chosen, include_inactive, identity)
        if note:
            notes.append(note)
        searched = scope.size
        if not scope.conflicts_known:
            notes.append(NOTE_NO_CONFLICTS.format(source=source))
        semantic = None
        routing: list[str] = []
        if pending is not None:
            semantic, why_not, routing, uncovered = pending.result()
            if semantic is not None:
                routing += _more_vectors(lake.policy, query, semantic, scope)
            if semantic is None and why_not and (uncovered or scope.with_vectors or not scope.size):
                notes.append(why_not)  # no model covers the query's language, or none can load
            elif scope.size and not scope.with_vectors:
                semantic = None
                notes.append(NOTE_NO_INDEX)
            else:
                if semantic is not None and scope.with_vectors < scope.size:
                    notes.append(NOTE_NO_VECTORS.format(missing=scope.size - scope.with_vectors, total=scope.size))
        # hybrid without a usable query vector keeps recency and importance; its semantic weight
        # goes to keyword. Semantic alone degrades to keyword.
        mode_used = mode_key if semantic is not None or mode_key == "hybrid" else "keyword"
        if not query_tokens and semantic is None:
            notes.append(NOTE_NO_TOKENS)
        else:
            if scope.size:
                scored = scope.rank(query_tokens, semantic, mode_used, limit, lake.policy.search, when,
                                    floors=_floors(lake.policy))
                scored_note = _scored_note(scored.scored_by, lake.policy, routing)
                if scored_note:
                    notes.append(scored_note)
                results, raw_scores, semantic_match = _results(
                    scored, mode_used, explain, semantic is not None, lake.policy)
            if not results:
                notes.append(_no_match(query, tenant, agent, user, chosen, scope.size, mode_used,
                                       semantic is not None, lake.policy.search.min_cosine, source))
                if not scope.size and not include_inactive:
                    resting = _resting(lake, tenant, agent, user)
                    if resting:
                        notes.append(NOTE_RESTING.format(count=resting))

    found = SearchResults(results, search_id=uuid.uuid4().hex, mode_used=mode_used, notes=notes,
                          query=query, source=source, searched=searched)
    if log:
        _log(lake, found, when=when, tenant=tenant, agent=agent, user=user, mode=mode_key,
             filters=chosen, raw_scores=raw_scores, semantic_match=semantic_match)
    return found


# One worker: query embeddings are computed beside the database work of the same search.
_QUERY_VECTORS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-lake-query-vector")


def _query_vector(policy, query: str, first_only: bool = False):
    """(vectors, why not, routing, uncovered) for the query: `vectors` maps each model that covers
    the query's language to the query's vector (None when none does or none can load), `why not`
    is the note when semantic takes no part, `routing` the reasons a first-choice model was passed
    over, `uncovered` True when models loaded but none covers the query's language. `first_only`
    stops at the first model that covers the query (`_more_vectors` adds the others a scope needs)."""
    from .embeddings import models

    names = models(policy)
    if not names:
        return None, ('semantic search is switched off ([search] model = "none"); the semantic part falls back '
                      'to keyword (BM25)'), [], False
    vectors, shares, unavailable = {}, {}, []
    for name in names:
        if first_only and vectors:
            break
        _encode_query(policy, query, name, vectors, shares, unavailable)
    routing = [NOTE_QUERY_NOT_COVERED.format(model=n, share=s) for n, s in shares.items() if n not in vectors]
    if vectors:
        return vectors, None, routing, False
    if not shares:
        return None, f"{'; '.join(unavailable)}; the semantic part falls back to keyword (BM25)", [], False
    if len(shares) == 1:
        return None, NOTE_NOT_COVERED.format(share=next(iter(shares.values()))), [], True
    return None, NOTE_NO_MODEL_COVERS.format(shares=", ".join(f"{n}: {s:.0%} unknown tokens"
                                                              for n, s in shares.items())), [], True


def _encode_query(policy, query: str, name: str, vectors: dict, shares: dict, unavailable: list) -> None:
    """The query's vector in model `name` into `vectors` when the model covers the query, its
    unknown-token share into `shares`, or why it cannot load into `unavailable`."""
    from ..text import ModelUnavailable, encode, load_model

    try:
        model = load_model(name)
    except ModelUnavailable as exc:
        unavailable.append(str(exc))
        return
    measure = getattr(model, "unknown_share", None)  # a separate tokenizer: coverage first, cheaply
    if measure is not None:
        shares[name] = float(measure([query])[0])
        if shares[name] > policy.search.max_unknown_ratio:
            return
    found, unknown = encode(model, [query], policy.search.batch_size, queries=True)
    shares[name] = float(unknown[0])
    if shares[name] <= policy.search.max_unknown_ratio:
        vectors[name] = found.to_numpy()[0]


def _more_vectors(policy, query: str, vectors: dict, scope) -> list[str]:
    """Adds to `vectors` the query's vector in each later model whose space holds memories of the
    scope that no earlier space with a query vector scores (`ScopeIndex.cosines` takes the first
    space that has both vectors, so a model without such memories changes nothing: an English
    query in an English scope is encoded once, not by both models). The routing notes of the
    models that do not cover the query."""
    import numpy as np

    from .embeddings import models

    shares: dict[str, float] = {}
    taken = np.zeros(scope.size, dtype=bool)
    names = models(policy)
    tried = max(names.index(name) for name in vectors)  # `_query_vector` stopped there
    for position, name in enumerate(names):
        space = scope.spaces.get(name)
        if position > tried and space is not None and (space[1] & ~taken).any():
            _encode_query(policy, query, name, vectors, shares, [])
        if name in vectors and space is not None:
            taken |= space[1]
    return [NOTE_QUERY_NOT_COVERED.format(model=n, share=s) for n, s in shares.items() if n not in vectors]


def _floors(policy) -> dict[str, float]:
    """The relevance floor of each model's space."""
    s = policy.search
    return {s.model: s.min_cosine, s.multilingual_model: s.multilingual_min_cosine} if s.multilingual_model != s.model \
        else {s.model: s.min_cosine}


def _hits(policy) -> dict[str, float]:
    """The cosine that makes a search a hit, in each model's space."""
    s = policy.search
    return {s.multilingual_model: s.multilingual_hit_cosine, s.model: s.hit_cosine}


def _scored_note(scored_by: dict[str, int] | None, policy, routing: list[str]) -> str | None:
    """Which model scored how many memories, when any but the first-choice model took part (the
    first choice alone is the plain case and needs no note)."""
    if not scored_by or set(scored_by) <= {policy.search.model}:
        return None
    parts = ", ".join(f"{model} for {n} {'memory' if n == 1 else 'memories'}" for model, n in scored_by.items())
    why = "; ".join(routing) if routing else (
        f"{policy.search.model} does not cover the language of the others")
    return NOTE_SCORED_BY.format(parts=parts) + f" ({why})"


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
            chosen[name] = _vocabulary(name, value, schema.TIER_ALIASES)
        elif name == "type":
            chosen[name] = _vocabulary(name, value, schema.TYPE_ALIASES)
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


def _vocabulary(name: str, value: Any, aliases: Mapping[str, str]) -> str:
    # The same tolerant spellings ingest accepts ("short-term", "Long Term", "To-Do", "preferences"):
    # case, hyphens, underscores and spaces do not matter, for a tier as for a type.
    key = str(value).strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    if key in aliases.values():
        return key
    if key in aliases:
        return aliases[key]
    raise InputError(f"unknown {name} {value!r}: use one of {', '.join(sorted(set(aliases.values())))}")


# ------------------------------------------------------------------ reading and ranking
def _scope(lake, tenant, agent, user, chosen, include_inactive, identity):
    """(ScopeIndex, source, note): the scope from the process's cache when nothing was written
    since `identity` (the lake's `data_identity()`, taken before) was read, else loaded with one
    read (live, or published while a run holds the lake)."""
    policy = lake.policy.search
    key = None
    if identity is not None:
        filters = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in chosen.items())
        key = (identity, models(lake.policy), policy.max_unknown_ratio, int(policy.context_window), bool(policy.index_dates), TOKENIZER_VERSION,
               tenant, agent, user,
               filters, include_inactive)
        found = SCOPES.get(key)
        if found is not None:
            if identity[1] == "live":
                return found, "live", None
            return found, f"published {identity[2]}", f"the lake is busy (a run holds it); answered from published {identity[2]}"
    where, params = _scope_where(tenant, agent, user, chosen, include_inactive)
    with lake.reading() as (con, source, note):
        scope = load_scope(con, where, params, models=models(lake.policy), window=int(policy.context_window),
                           index_dates=bool(policy.index_dates), max_unknown_ratio=policy.max_unknown_ratio)
    if key is not None and source == ("live" if identity[1] == "live" else f"published {identity[2]}"):
        SCOPES.put(key, scope, policy.cache_rows)
    return scope, source, note


def _results(scored, mode: str, explain: bool, has_query_vector: bool, full_policy):
    """(results, raw keyword scores, semantic hit) from a scope's best rows."""
    policy = full_policy.search
    weights = None
    if explain and mode == "hybrid":
        # the weights this search used: without a query vector the semantic weight went to keyword
        moved = 0.0 if has_query_vector else policy.semantic_weight
        weights = {"keyword": policy.keyword_weight + moved, "semantic": policy.semantic_weight - moved,
                   "recency": policy.recency_weight, "importance": policy.importance_weight}
    results = []
    for i, row in enumerate(scored.rows):
        parts = None
        if explain:
            parts = {"keyword": float(scored.keyword_raw[i]), "keyword_norm": float(scored.keyword[i])}
            if mode != "keyword":
                cosine = scored.cosine[i]
                parts |= {"semantic": 0.0 if cosine != cosine else float(cosine),
                          "model": scored.model[i] if scored.model else None,
                          "semantic_norm": float(scored.semantic[i]), "recency": float(scored.recency[i]),
                          "importance": float(scored.importance[i])}
            if weights is not None:
                parts["weights"] = dict(weights)
        partners = list(row["conflict_with"] or [])
        results.append(SearchResult(
            id=row["id"], content=row["content"], tier=row["tier"], type=row["type"], score=float(scored.score[i]),
            tags=list(row["tags"] or []), created_at=row["created_at"], importance=row["importance"],
            source=row["source"], tenant=row["tenant"], agent_id=row["agent_id"], user_id=row["user_id"],
            conflict=row["status"] == "conflicted" or bool(partners), conflict_with=partners, parts=parts,
            status=row["status"],
        ))
    raw = [float(x) for x in scored.keyword_raw]
    best_cosine = scored.cosine[0] if len(scored.rows) and has_query_vector else 0.0
    hit = _hits(full_policy).get(scored.model[0] if scored.model else None, policy.hit_cosine)
    return results, raw, bool(best_cosine == best_cosine and best_cosine >= hit)


def _resting(lake, tenant: str, agent: str | None, user: str | None) -> int:
    """How many dormant or archived memories a scope holds (0 when the lake cannot say)."""
    try:
        frame = lake.sql("SELECT count(*) AS n FROM memories WHERE tenant = ? AND (? IS NULL OR agent_id = ?) "
                         "AND (? IS NULL OR user_id = ?) AND status IN ('dormant', 'archived')",
                         [tenant, agent, agent, user, user])
    except Exception:  # noqa: BLE001 - a hint only: a busy or older lake gives no count, not an error
        return 0
    return int(frame["n"][0]) if frame.height else 0


def _no_match(query, tenant, agent, user, chosen, searched: int, mode: str, has_query_vector: bool,
              hit_cosine: float, source: str | None = None) -> str:
    """Why a search of a scope returned nothing: the scope, the rule no memory met, the count."""
    scope = describe_scope(tenant, agent, user, chosen)
    if not searched:
        if source and source.startswith("published"):
            # a run holds the lake: the published version may predate this scope's memories
            return NOTE_EMPTY_PUBLISHED_SCOPE.format(scope=scope, source=source)
        return NOTE_EMPTY_SCOPE.format(scope=scope, filtered=" and passes the filters" if chosen else "")
    if mode == "hybrid" and not has_query_vector:
        mode = "keyword"  # semantic took no part: a shared word was the only evidence
    why = WHY_NO_MATCH[mode].format(cosine=hit_cosine)
    return NOTE_NO_MATCH.format(query=query, scope=scope, why=why,
                                searched=f"{searched} {'memory' if searched == 1 else 'memories'}")


def describe_scope(tenant: str, agent: str | None, user: str | None, chosen: Mapping[str, Any] | None = None) -> str:
    """``scope tenant acme, agent bot`` (with the filters given, if any), as notes name it."""
    text = f"scope tenant {tenant}"
    if agent is not None:
        text += f", agent {agent}"
    if user is not None:
        text += f", user {user}"
    if chosen:
        shown = {k: iso(v) if isinstance(v, datetime) else "+".join(v) if isinstance(v, list) else v
                 for k, v in chosen.items()}
        text += " with " + ", ".join(f"{k}={v}" for k, v in shown.items())
    return text


def _scope_where(tenant, agent, user, chosen, include_inactive) -> tuple[str, dict[str, Any]]:
    """The WHERE clause of the scope and its named parameters; every user value is a parameter."""
    where, params = ["tenant = $tenant"], {"tenant": tenant}
    if agent is not None:
        where.append("agent_id = $agent")
        params["agent"] = agent
    if user is not None:
        where.append("user_id = $user")
        params["user"] = user
    if not include_inactive:
        statuses = ", ".join(f"'{s}'" for s in SEARCHABLE_STATUSES)
        where.append(f"status IN ({statuses}) AND merged_into IS NULL")
    else:
        where.append("status <> 'deleted'")  # a forgotten memory is a tombstone, never a result
    for name, column in (("tier", "tier"), ("type", "type"), ("source", "source"), ("context", "context_id")):
        if name in chosen:
            where.append(f"{column} = ${name}")
            params[name] = chosen[name]
    if "tag" in chosen:
        tags = chosen["tag"] if isinstance(chosen["tag"], list) else [chosen["tag"]]
        where.append("list_has_all(coalesce(tags, []::VARCHAR[]), $tags::VARCHAR[])")
        params["tags"] = tags
    if "since" in chosen:
        where.append("created_at >= $since")
        params["since"] = chosen["since"]
    if "until" in chosen:
        where.append("created_at < $until")
        params["until"] = chosen["until"]
    return " AND ".join(where), params


# ------------------------------------------------------------------ PII and the log
def _redact_request(lake, tenant: str, agent, user, query: str, chosen: dict[str, Any]):
    """(tenant, agent, user, query, filters) as the lake stores such values: PII replaced by the
    ingest's rules, a tenant name with the lake-wide salt and the rest with the tenant's own salt
    (``redact.redact_records``). So ``--user bob@example.com`` finds the memories ingest stored
    under ``[EMAIL:...]``, and the search log never holds the raw value. Salts are read only when
    something needs redacting."""
    texts = [tenant, agent, user, query, *(v for v in chosen.values() if isinstance(v, str))]
    texts += [t for v in chosen.values() if isinstance(v, list) for t in v]
    if all(t is None or not isinstance(t, str) or redact_text(t, b"probe") == t for t in texts):
        return tenant, agent, user, query, chosen  # nothing to redact (the common case): no read
    tenant = redact_text(tenant, _tenant_salt(lake, ""))
    salt = _tenant_salt(lake, tenant)

    def redacted(value):
        if isinstance(value, list):
            return [redacted(v) for v in value]
        return redact_text(value, salt) if isinstance(value, str) else value

    return tenant, redacted(agent), redacted(user), redacted(query), {k: redacted(v) for k, v in chosen.items()}


def _tenant_salt(lake, tenant: str) -> bytes:
    salt = lake.tenant_salts([tenant], create=False).get(tenant)
    if salt is not None:
        return salt
    # An unknown tenant: a one-off salt still keeps raw PII off disk; the placeholder then matches
    # nothing, as the raw value would have matched nothing.
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
    resting = [r.id for r in found if r.resting]
    if resting:
        # shown to an include_inactive search, not used: the events step counts no access for
        # them, so a look at dormant memories does not wake them (an access event does)
        record["resting_ids"] = resting
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
