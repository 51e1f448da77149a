"""`memory-lake mcp`: the lake as a Model Context Protocol server, on the official `mcp` SDK
(``MCPServer``), over stdio (the default: an MCP client starts it as a subprocess) or streamable HTTP
(``--http``).

Tools: `search_memory`, `get_context`, `list_entities`, `recent_changes` and `remember`, each a call
into `core.Service`, so a tool returns exactly what the HTTP API returns (the library's answer with
the published ``version`` it read). A library error (an unknown tenant, a bad mode, nothing
published yet) is a tool error whose text says what to do; the model reads it. Resources: every
scope of the published version, ``memory-lake://scopes/<tenant>/<agent>/<user>``, whose text is the
scope's published ``context.md``; the list follows CURRENT, so a new publish shows without a restart.

Over stdio the SDK points the process's stdout at stderr while it serves, so nothing the stack
prints can break the protocol; the models load in a background thread once the session starts
(the first search waits for them if it comes first). Over HTTP, the token rule of `memory-lake serve`
holds: another address than 127.0.0.1 needs ``--token``.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import Resource as MCPResource

from ..store import MemoryLakeError
from .core import MODES, Service, package_version, resolve_token

SCOPE_URI = "memory-lake://scopes/{tenant}/{agent}/{user}"
DEFAULT_MCP_PORT = 8766
Mode = Literal[MODES]

INSTRUCTIONS = """Long-term memory of users and agents, kept by memory-lake: only what passed the lake's publish
checks (PII redacted, duplicates merged, contradictions marked). Every memory belongs to a scope: a tenant, and
optionally an agent and a user. Call get_context at the start of a task for a ready Markdown pack, search_memory
for specific questions, list_entities for people, places and organisations. A result with "conflict": true is a
disputed value: say so, never treat it as settled. remember saves a new memory; it becomes searchable only after
the lake's next ingest and publish (usually the nightly run). Every answer names the published "version" it read."""

SEARCH = """Search a scope's long-term memory for what is relevant to a question or the task at hand: the user's
preferences, earlier decisions, facts about people and projects, anything said in earlier sessions. Call it before
answering from memory, and before asking the user something they may have told you already.
Arguments: query (natural language, any language), tenant (required), agent and user to narrow the scope (omit to
search all of the tenant), mode (hybrid by default; keyword for exact names, codes and ids), k results (1-100);
leave as_of out (it dates the question, default now).
Returns {version, search_id, mode_used, notes, results}: results best first, each with id, content, tier, type,
score, created_at, importance, conflict and conflict_with. "conflict": true means the value is disputed: mention
both sides. No results come with notes saying why (no match, nothing indexed)."""

CONTEXT = """Get a ready-to-use context pack for a scope: one Markdown text, within a token budget, with the
scope's important memories, its latest summary, the long-term memories relevant to `query`, the known entities
and the most recent items; disputed values are marked. Call it once at the start of a conversation or task and
put `markdown` into your working context. Arguments: tenant (required), agent, user, query (the task at hand;
optional), max_tokens (default: the lake's budget, 2000); leave as_of out (default now). Returns {version, markdown, tokens, max_tokens,
sections, dropped, notes}."""

ENTITIES = """List the people, places, organisations and things a scope's memories mention, most mentioned
first, each with its current facts (value, source memories, when) and its history of superseded facts. Use it to
answer "who is ...", "where does ... work" or to check a fact about someone before acting on it. Arguments:
tenant (required), agent, user. Returns {version, entities, notes}."""

CHANGES = """What changed in a scope's published memory since a version you already hold: the ids added,
updated and removed, each removal with its reason (forgotten, merged_into, moved, expired, archived, dormant,
rolled_back). Every answer of this server names its "version"; pass it back as `since` later to refresh what you
keep instead of reloading everything, and drop what was removed. Arguments: tenant (required), agent, user, since
("v<N>"; default: the latest publish's changes), records (true: each added or updated memory comes with its text
and fields). Returns {version, from, to, changes}; since equal to version: no change. A `since` older than the
versions kept is an error telling you to reload in full (get_context, or the scope's resource); one that is no
version ("v<N>") or later than the lake's is an error naming the version the lake is at."""

REMEMBER = """Save one new memory for a scope: a fact, preference, decision, lesson, event or todo worth keeping
across sessions. Write one self-contained statement per call ("Alice prefers dark mode in the editor", not "she
likes it"); never secrets. It is written to the lake's inbox, not yet to its memory: the next ingest and publish
(usually the nightly run) make it searchable, so search_memory will not find it right away. Arguments: content and
tenant (required), agent, user, type (preference, decision, fact, lesson, event, todo, summary, other), tier
(working, short_term, long_term, important), tags, importance (0-1). Returns {file, queued, record, note,
warnings}: a warning says the tenant has no memories yet and names the known ones; check the spelling (a new
tenant is fine)."""


class LakeMCP(MCPServer):
    """An MCPServer whose resources are the scopes of the version CURRENT points at when asked."""

    def __init__(self, service: Service, **kwargs: Any):
        super().__init__(**kwargs)
        self.service = service

    async def list_resources(self) -> list[MCPResource]:
        try:
            version, scopes = self.service.published_scopes()
        except MemoryLakeError:
            return []  # nothing published yet: no scope to offer
        resources = []
        for scope in scopes:
            folders = scope["path"].split("/")[1:]
            names = [scope.get(k) for k in ("tenant", "agent_id", "user_id")]
            label = " / ".join("(none)" if n is None else n for n in names)
            tiers = ", ".join(f"{count} {tier}" for tier, count in sorted(scope.get("by_tier", {}).items()))
            resources.append(MCPResource(
                uri="memory-lake://scopes/" + "/".join(quote(f, safe="") for f in folders),
                name=label, title=f"Memory context: {label}", mime_type="text/markdown",
                description=(f"The published context pack (published {version}) of tenant {names[0]}, agent "
                             f"{names[1] or '(none)'}, user {names[2] or '(none)'} ({tiers}): important memories, "
                             "latest summary, entities, recent items. search_memory finds specific ones.")))
        return resources


def create_mcp(service: Service, *, warm_in_background: bool = True) -> LakeMCP:
    """The MCP server over `service`: five tools and the published scopes as resources."""

    @contextlib.asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[None]:
        if warm_in_background:
            threading.Thread(target=service.warm, name="memory-lake-warm", daemon=True).start()
        yield

    server = LakeMCP(service, name="memory-lake", version=package_version(), instructions=INSTRUCTIONS, lifespan=lifespan,
                     log_level="WARNING")

    @server.tool(description=SEARCH)
    def search_memory(query: str, tenant: str, agent: str | None = None, user: str | None = None,
                      mode: Mode = "hybrid", k: int = 10, as_of: str | None = None) -> dict[str, Any]:
        return _answer(lambda: service.search(query, tenant=tenant, agent=agent, user=user, mode=mode, k=k, as_of=as_of))

    @server.tool(description=CONTEXT)
    def get_context(tenant: str, agent: str | None = None, user: str | None = None, query: str | None = None,
                    max_tokens: int | None = None, as_of: str | None = None) -> dict[str, Any]:
        return _answer(lambda: service.context(query, tenant=tenant, agent=agent, user=user, max_tokens=max_tokens,
                                               as_of=as_of))

    @server.tool(description=ENTITIES)
    def list_entities(tenant: str, agent: str | None = None, user: str | None = None) -> dict[str, Any]:
        return _answer(lambda: service.entities(tenant=tenant, agent=agent, user=user))

    @server.tool(description=CHANGES)
    def recent_changes(tenant: str, agent: str | None = None, user: str | None = None, since: str | None = None,
                       records: bool = False) -> dict[str, Any]:
        return _answer(lambda: service.changes(since, tenant=tenant, agent=agent, user=user, records=records))

    @server.tool(description=REMEMBER)
    def remember(content: str, tenant: str, agent: str | None = None, user: str | None = None,
                 type: str | None = None, tier: str | None = None, tags: list[str] | None = None,
                 importance: float | None = None) -> dict[str, Any]:
        return _answer(lambda: service.remember(content, tenant=tenant, agent=agent, user=user, type=type, tier=tier,
                                                tags=tags, importance=importance))

    @server.resource(SCOPE_URI, name="scope context", mime_type="text/markdown",
                     description="The published context pack of one scope (folder names as in the version).")
    def scope_context(tenant: str, agent: str, user: str) -> str:
        try:
            return service.scope_context_file(f"{tenant}/{agent}/{user}")
        except MemoryLakeError as exc:
            raise ResourceError(str(exc)) from None

    return server


def _answer(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`call()`, a library error becoming a tool error with its message (the model reads it)."""
    try:
        return call()
    except MemoryLakeError as exc:
        raise ToolError(str(exc)) from None


def run_mcp(lake_dir=None, *, http: bool = False, host: str = "127.0.0.1", port: int = DEFAULT_MCP_PORT,
            token: str | None = None) -> None:
    """`memory-lake mcp`: serve over stdio until the client closes it, or with `http` over streamable
    HTTP at ``http://host:port/mcp`` until interrupted."""
    if not http:
        create_mcp(Service(lake_dir)).run("stdio")
        return
    import uvicorn

    from .http import TokenGate, check_port_free

    token = resolve_token(host, token)
    service = Service(lake_dir)
    check_port_free(host, port)
    server = create_mcp(service, warm_in_background=False)
    app = server.streamable_http_app(host=host)
    loaded = service.warm()
    where = f"http://{'[' + host + ']' if ':' in host else host}:{port}/mcp"
    print(f"memory-lake mcp: {service.root}; models {', '.join(loaded) or 'none'} loaded; streamable HTTP at "
          f"{where}{'; token required' if token else ''}", file=sys.stderr, flush=True)
    uvicorn.run(TokenGate(app, token) if token else app, host=host, port=port, access_log=False, log_level="info")
