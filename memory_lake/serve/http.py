"""`memory-lake serve`: the lake's HTTP API on FastAPI and uvicorn, with OpenAPI docs at ``/docs``.

Every route is a thin call into `core.Service` (the MCP server calls the same functions), so an
answer is exactly what the library returns, with the published ``version`` it read. Every error is
JSON, ``{"status", "error", "message"}``, the message a person can act on: an unknown tenant, agent or
user is 404 naming the closest published names, a bad parameter 422, a `since` too old for changes 410
(reload in full), nothing published yet 503, a missing or wrong token 401, a path the API does not have
404 and a method a route does not take 405 (both naming the routes; ``GET /`` lists them too).

``/docs`` is Swagger UI served from this process (``/docs-assets``: the files fastapi-offline ships),
so it works with no network; ReDoc is off.

The server binds 127.0.0.1 by default. Binding an address other machines reach needs a token
(``--token`` or ``$MEMORY_LAKE_TOKEN``), which every request must then carry as
``Authorization: Bearer <token>`` (compared in constant time); with a token, every request is
checked, on any address, except the API's description: ``/docs``, its assets and ``/openapi.json``
describe the routes and hold no data, and a browser cannot send the header when it opens a page, so
they answer without the token; the OpenAPI document declares the bearer scheme, so the page's
**Authorize** button sends the token with the requests it tries. Requests are not logged (uvicorn's
access log is off): a query string may hold text that the search log only keeps redacted.
"""

import asyncio
import concurrent.futures
import contextlib
import difflib
import functools
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http import HTTPStatus
from typing import Annotated, Any, Literal, Optional

import uvicorn
from fastapi import Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from ..publish import ReloadInFull, UnknownScope
from ..store import InputError, LakeBusy, LakeNotFound, MemoryLakeError
from .discovery import announce, withdraw
from .core import (DEFAULT_PAGE, MAX_K, MAX_PAGE, MODES, TOKEN_ENV, UNAUTHORIZED, Service, package_version,
                   resolve_token, token_matches)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DOCS_URL = "/docs"
OPENAPI_URL = "/openapi.json"
DOCS_ASSETS = "/docs-assets"
# Swagger UI 5 as fastapi-offline ships it (swagger-ui-bundle's Swagger UI 4.15 refuses FastAPI's
# OpenAPI 3.1 document: "Unable to render this definition").
SWAGGER_UI_FILES = ("fastapi_offline", "static")
# Paths that answer without the token: they describe the API and hold no data (module docstring).
# A path ending in "/" covers everything under it.
PUBLIC_PATHS = (DOCS_URL, OPENAPI_URL, DOCS_ASSETS + "/")
BEARER = "bearer"  # the OpenAPI security scheme of the token

DESCRIPTION = f"""Reads a memory lake's **published** version (what passed the publish gate; `exports/CURRENT`),
the same answers as the Python API (`Lake.search`, `Lake.build_context`, `load_export` ...). Every answer
names the `version` it read; a new publish is seen by the next request, without a restart. Searches are
logged to the lake's `events/` as the CLI's are (the hit rate counts them). `POST /v1/remember` writes
to the lake's inbox, never to its database: the next ingest brings the memory in.

With a token (`--token` or `${TOKEN_ENV}`), send `Authorization: Bearer <token>` on every request; on this
page, **Authorize** takes the token and sends it with every request you try. This page and `/openapi.json`
need no token: they describe the API and hold no data."""

Tenant = Annotated[str, Query(description="The tenant whose memories to read (required).", min_length=1)]
Agent = Annotated[Optional[str], Query(description="Only this agent's memories (default: every agent of the tenant).")]
User = Annotated[Optional[str], Query(description="Only this user's memories (default: every user of the tenant).")]
AsOf = Annotated[Optional[str], Query(description="When the request happens, ISO 8601 (dates the search log "
                                                  "line and the pack's heading); default now.")]


class RememberRequest(BaseModel):
    """One memory to write to the inbox. The snapshot contract's fields; `tenant` and `content` are required.
    A field it does not know is refused (422 naming it), never dropped: a scope given as `agent_id`
    landed in the tenant-wide scope, and `status: deleted` became a write (stranger's try, issue 38)."""

    model_config = ConfigDict(extra="forbid")

    tenant: str = Field(min_length=1, description="The tenant the memory belongs to.")
    content: str = Field(min_length=1, description="The text to remember (PII is redacted at ingest).")
    agent: Optional[str] = Field(None, validation_alias=AliasChoices("agent", "agent_id"),
                                 description="The agent of the scope (`agent_id` also accepted).")
    user: Optional[str] = Field(None, validation_alias=AliasChoices("user", "user_id"),
                                description="The user of the scope (`user_id` also accepted).")
    type: Optional[str] = Field(None, description="preference, decision, fact, lesson, event, todo, summary or other.")
    tier: Optional[str] = Field(None, description="working, short_term, long_term or important (default: ingest's).")
    tags: Optional[list[str]] = Field(None, description="Tags.")
    importance: Optional[float] = Field(None, ge=0, le=1, description="0 to 1.")
    source: Optional[str] = Field(None, description="Where the memory came from, as the writer names it.")
    context_id: Optional[str] = None
    session_id: Optional[str] = None
    id: Optional[str] = Field(None, description="A stable id; default: derived at ingest from the scope and the text.")
    as_of: Optional[str] = Field(None, description="When it was said, ISO 8601 (its created_at); default now.")


def create_app(service: Service, token: Optional[str] = None) -> FastAPI:
    """The FastAPI application over `service`; with `token`, every request must carry it."""
    app = FastAPI(title="memory-lake", version=package_version(), description=DESCRIPTION,
                  default_response_class=JSONResponse, openapi_url=OPENAPI_URL, docs_url=None, redoc_url=None)
    if token is not None:
        app.add_middleware(TokenGate, token=token, public=PUBLIC_PATHS)
        _declare_bearer(app)
    _add_error_handlers(app)
    _add_docs(app)

    @app.get("/", include_in_schema=False)
    def index() -> JSONResponse:
        """What this server is and where to go: the published version it reads, the docs, the routes."""
        try:
            read = {"version": service.current().name}
        except LakeBusy as exc:
            read = {"version": None, "note": str(exc)}
        return JSONResponse({"service": "memory-lake serve", "memory_lake": package_version(), **read,
                             "docs": DOCS_URL, "openapi": OPENAPI_URL,
                             "routes": [{"method": method, "path": path, "summary": summary}
                                        for method, path, summary in api_routes(app)]})

    @app.get("/v1/search", summary="Search a scope (keyword, semantic or hybrid)")
    async def search(query: Annotated[str, Query(description="What to look for, in any language.")],
               tenant: Tenant, agent: Agent = None, user: User = None,
               mode: Annotated[Literal[MODES], Query(description="keyword (BM25), semantic (embeddings) or hybrid.")] = "hybrid",
               k: Annotated[int, Query(ge=1, le=MAX_K, description="How many results.")] = 10,
               as_of: AsOf = None) -> JSONResponse:
        """`Lake.search`: `{version, search_id, mode_used, notes, results}`, best first; `notes` say why
        nothing matched or what the search fell back to. Send a `hit` event with the `search_id` when a
        result helped (see README "Usage events")."""
        return JSONResponse(await _on_encoder(service.search, query, tenant=tenant, agent=agent, user=user, mode=mode,
                                              k=k, as_of=as_of))

    @app.get("/v1/context", summary="The context pack of a scope, within a token budget")
    async def context(tenant: Tenant, agent: Agent = None, user: User = None,
                query: Annotated[Optional[str], Query(description="The task at hand; adds the memories relevant to it.")] = None,
                max_tokens: Annotated[Optional[int], Query(ge=1, description="Token budget (default: the tenant's [context] max_tokens).")] = None,
                as_of: AsOf = None) -> JSONResponse:
        """`Lake.build_context`: `{version, markdown, tokens, max_tokens, sections, dropped, notes}`, the
        Markdown to put in a prompt: important memories, the latest summary, relevant and recent ones,
        known entities; disputed values marked."""
        return JSONResponse(await _on_encoder(service.context, query, tenant=tenant, agent=agent, user=user,
                                              max_tokens=max_tokens, as_of=as_of))

    @app.get("/v1/scopes/{tenant}", summary="A tenant's published scopes")
    def scopes(tenant: str) -> JSONResponse:
        """`{version, tenant, scopes}`: each scope (agent_id, user_id) with its memories per tier and its folder
        in the version."""
        return JSONResponse(service.scopes(tenant))

    @app.get("/v1/memories", summary="A scope's published records, a page at a time")
    def memories(tenant: Tenant, agent: Agent = None, user: User = None,
                 limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Records per page.")] = DEFAULT_PAGE,
                 offset: Annotated[int, Query(ge=0, description="Records to skip.")] = 0) -> JSONResponse:
        """`load_export`'s records (active and disputed memories, memory.json's order):
        `{version, total, offset, limit, next_offset, memories}`; ask again with `offset=next_offset`
        until it is null."""
        return JSONResponse(service.memories(tenant=tenant, agent=agent, user=user, limit=limit, offset=offset))

    @app.get("/v1/entities", summary="The people, places, organisations and things of a scope")
    def entities(tenant: Tenant, agent: Agent = None, user: User = None) -> JSONResponse:
        """`Lake.entities`: `{version, entities, notes}`, each entity with its current facts and their history."""
        return JSONResponse(service.entities(tenant=tenant, agent=agent, user=user))

    @app.get("/v1/changes", summary="What changed in a scope since a version")
    def changes(tenant: Tenant, agent: Agent = None, user: User = None,
                since: Annotated[Optional[str], Query(description="The version you hold, v<N> (the `version` an "
                                                      "answer named; default: the one the current version's changes "
                                                      "are against)")] = None,
                records: Annotated[bool, Query(description="Also each added or updated memory's record.")] = False
                ) -> JSONResponse:
        """`changes_since`: `{version, from, to, changes}`, the memories added, updated and removed (with the
        reason: forgotten, merged_into, moved, expired, archived, dormant, rolled_back) since `since`, up
        to `version`; `since` equal to `version` lists none. A `since` no longer kept is 410: load the scope in
        full (`/v1/memories`); one that is no version, or later than the lake's, is 422 naming the lake's."""
        return JSONResponse(service.changes(since, tenant=tenant, agent=agent, user=user, records=records))

    @app.get("/v1/health", summary="The health dashboard")
    def health(tenant: Annotated[Optional[str], Query(description="One tenant (default: the whole lake).")] = None
               ) -> JSONResponse:
        """`Lake.health`: the latest health snapshot (capacity, hit rate, duplicates, conflicts ...)."""
        return JSONResponse(service.health(tenant=tenant))

    @app.post("/v1/remember", summary="Write a memory to the lake's inbox", status_code=202)
    def remember(memory: Annotated[RememberRequest, Body()]) -> JSONResponse:
        """`write_snapshot` of one record into the inbox, never the database (202): `{file, queued, record,
        note, warnings}`. The next ingest (`memory-lake ingest`, or the nightly run) brings it in; the
        publish after it makes it searchable here. A tenant the published version does not name is
        written (a new tenant starts so) with a warning naming the known ones, in case it is a typo."""
        fields = memory.model_dump()
        content, tenant = fields.pop("content"), fields.pop("tenant")
        return JSONResponse(service.remember(content, tenant=tenant, **fields), status_code=202)

    return app


def api_routes(app: FastAPI) -> list[tuple[str, str, str]]:
    """(method, path, summary) of every route the OpenAPI document describes, in the order declared."""
    return [(method, route.path, route.summary or "") for route in app.routes
            if isinstance(route, APIRoute) and route.include_in_schema for method in sorted(route.methods)]


def _add_docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI whose page, script, style and icon all come from this server."""
    app.mount(DOCS_ASSETS, StaticFiles(packages=[SWAGGER_UI_FILES]), name="docs-assets")

    @app.get(DOCS_URL, include_in_schema=False)
    def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(openapi_url=root + OPENAPI_URL, title=f"{app.title} - API",
                                   swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
                                   swagger_ui_parameters={"validatorUrl": None})  # no call to swagger.io's validator


def _declare_bearer(app: FastAPI) -> None:
    """Declare the token in the OpenAPI document, as an HTTP bearer scheme every operation needs, so
    that Swagger UI shows **Authorize** and sends the token (TokenGate still checks every request)."""
    described = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = described()
            schema.setdefault("components", {}).setdefault("securitySchemes", {})[BEARER] = {
                "type": "http", "scheme": "bearer",
                "description": f"The token the server was started with (--token or ${TOKEN_ENV})."}
            schema["security"] = [{BEARER: []}]
        return app.openapi_schema

    app.openapi = openapi


class TokenGate:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>`` (401 otherwise),
    except to the `public` paths (one ending in "/" covers the paths under it)."""

    def __init__(self, app, token: str, public: tuple[str, ...] = ()):
        self.app = app
        self.token = token
        self.public = public

    def is_public(self, scope) -> bool:
        path = scope.get("path", "").removeprefix(scope.get("root_path", "")) or "/"
        return any(path == p or (p.endswith("/") and path.startswith(p)) for p in self.public)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] in ("http", "websocket") and not self.is_public(scope):
            header = dict(scope.get("headers") or ()).get(b"authorization", b"").decode("latin-1")
            if not token_matches(self.token, header):
                response = JSONResponse({"status": 401, "error": "unauthorized", "message": UNAUTHORIZED},
                                        status_code=401, headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


# Searches and context packs encode their query on one thread of their own: the models run one query
# at a time anyway, and torch's thread team is made once, not on each of the pool's threads (a
# request landing on a fresh pool thread paid for a new team: HTTP hybrid p95 3.5x in-process).
_ENCODER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-lake-encoder")


async def _on_encoder(call, *args, **kwargs):
    return await asyncio.get_running_loop().run_in_executor(_ENCODER, functools.partial(call, *args, **kwargs))


def _error(status: int, error: str, message: str, headers: Optional[dict[str, str]] = None,
           **more: Any) -> JSONResponse:
    return JSONResponse({"status": status, "error": error, "message": message, **more}, status_code=status,
                        headers=headers)


# The library's errors, most specific first: (class, HTTP status, error name).
ERRORS = (
    (UnknownScope, 404, "unknown scope"),
    (LakeNotFound, 503, "no lake"),
    (ReloadInFull, 410, "reload in full"),
    (InputError, 422, "bad parameter"),
    (LakeBusy, 503, "not available yet"),
    (MemoryLakeError, 500, "failed"),
)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(MemoryLakeError)
    async def library_error(request: Request, exc: MemoryLakeError) -> JSONResponse:
        for kind, status, name in ERRORS:
            if isinstance(exc, kind):
                return _error(status, name, str(exc))
        return _error(500, "failed", str(exc))  # pragma: no cover (MemoryLakeError is last in ERRORS)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        """A path the API does not have (404) or a method its route does not take (405), in the
        service's shape and naming the routes; any other HTTP error with its reason."""
        method, path = request.method, request.url.path
        routes = [f"{m} {p}" for m, p, _ in api_routes(app)]
        headers = dict(exc.headers or {})
        if exc.status_code == 404:
            # 0.7, not difflib's 0.6: /v2/search and /health get their /v1 route, /metrics no /v1/memories
            close = difflib.get_close_matches(path, sorted({p for _, p, _ in api_routes(app)}), n=1, cutoff=0.7)
            hint = f"did you mean {close[0]}? " if close else ""
            message = (f"no route {method} {path}: {hint}this server answers {', '.join(routes)} "
                       f"(see {DOCS_URL}, or GET /)")
            return _error(404, "no such route", message, routes=routes, headers=headers)
        if exc.status_code == 405:
            allowed = headers.get("Allow", "another method")
            message = f"{path} does not take {method}: it takes {allowed} (see {path} in {DOCS_URL})"
            return _error(405, "method not allowed", message, routes=routes, headers=headers)
        try:
            phrase = HTTPStatus(exc.status_code).phrase.lower()
        except ValueError:
            phrase = "failed"
        return _error(exc.status_code, phrase, str(exc.detail), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [_problem(e) for e in exc.errors()]
        return _error(422, "bad parameter", "; ".join(problems) + f" (see {request.url.path} in /docs)",
                      problems=problems)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, "unexpected", f"unexpected {type(exc).__name__}: {exc} (the server's stderr has the "
                                         "traceback; report it with the request)")


def _problem(error: dict[str, Any]) -> str:
    """``query parameter k: Input should be less than or equal to 100 (got 500)``."""
    where = list(error.get("loc", ()))
    place = {"query": "query parameter", "path": "path parameter", "body": "body field"}.get(where[0], where[0]) if where else ""
    name = ".".join(str(p) for p in where[1:]) or "body"
    given = f" (got {error['input']!r})" if "input" in error and error.get("type") != "missing" else ""
    return f"{place} {name}: {error.get('msg', 'invalid')}{given}".strip()


def check_port_free(host: str, port: int) -> None:
    """InputError naming the port when another process listens there (uvicorn would only log it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc} (another memory-lake serve? "
                             "pass --port)") from None


def run_http(lake_dir=None, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, token: Optional[str] = None) -> None:
    """`memory-lake serve`: open the lake, load the models once, serve until interrupted."""
    token = resolve_token(host, token)
    service = Service(lake_dir)
    check_port_free(host, port)
    app = create_app(service, token)
    loaded = service.warm()
    try:
        published = f"published {service.current().name}"
    except LakeBusy:
        published = "nothing published yet (requests get 503 until the first publish)"
    where = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    print(f"memory-lake serve: {service.root}, {published}; models {', '.join(loaded) or 'none'} loaded; "
          f"API docs at {where}/docs{'; token required' if token else ''}", file=sys.stderr, flush=True)
    # `memory-lake search` and `context` on this machine ask this server instead of loading the model
    local = f"http://127.0.0.1:{port}" if host in ("0.0.0.0", "127.0.0.1", "localhost") else where
    announce(service.root, local, token=bool(token))
    try:
        uvicorn.run(app, host=host, port=port, access_log=False, log_level="info")
    finally:
        withdraw(service.root)


@contextlib.contextmanager
def serve_in_thread(app, host: str = DEFAULT_HOST, port: int = 0, timeout_s: float = 30.0) -> Iterator[str]:
    """Run `app` on uvicorn in a background thread of this process (a free port by default), for
    tests, benchmarks and notebooks: yields the base URL, stops the server on exit."""
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, access_log=False, log_level="warning"))
    thread = threading.Thread(target=server.run, name="memory-lake-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the server did not start on {host}:{port}")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout_s)
