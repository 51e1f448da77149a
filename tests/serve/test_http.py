"""`memory-lake serve` (memory_lake/serve/http.py, over serve/core.py): a real uvicorn server on
127.0.0.1 in a background thread, called with httpx over loopback. What it answers is what the
library answers for the same question (whole answers compared, minus the per-call search_id and
the version the server adds); what it refuses, it refuses in JSON a person can act on."""

from __future__ import annotations

import json
import re
import shutil
from datetime import timedelta

import httpx
import pytest

from memory_lake import Lake, load_export
from memory_lake.publish import ReloadInFull, changes_since
from memory_lake.serve import Service, create_app, serve_in_thread
from memory_lake.serve.core import QUEUED_NOTE, UNAUTHORIZED, package_version, resolve_token

from ..conftest import AS_OF, copy_lake, write_jsonl

pytestmark = pytest.mark.models  # the module's lake is indexed; searches encode their queries

ASKED = "2026-12-01T08:00:00Z"  # the as_of of every question: equal scores, one search log file


ROUTES = ["GET /v1/search", "GET /v1/context", "GET /v1/scopes/{tenant}", "GET /v1/memories", "GET /v1/entities",
          "GET /v1/changes", "GET /v1/health", "POST /v1/remember"]


@pytest.fixture(scope="module")
def lake(published_dir) -> Lake:
    return Lake.open(published_dir)


@pytest.fixture(scope="module")
def client(published_dir):
    with serve_in_thread(create_app(Service(published_dir))) as url, httpx.Client(base_url=url, timeout=120) as http:
        yield http


@pytest.fixture
def own_server(published_dir, tmp_path):
    """A copy of the published lake and a server of its own, for a test that changes the lake."""
    lake = copy_lake(published_dir, tmp_path / "lake")
    with serve_in_thread(create_app(Service(lake.root))) as url, httpx.Client(base_url=url, timeout=120) as http:
        yield lake, http


def answer(response: httpx.Response, status: int = 200) -> dict:
    assert response.status_code == status, response.text
    return response.json()


def without(data: dict, *keys: str) -> dict:
    return {k: v for k, v in data.items() if k not in keys}


def search(http: httpx.Client, query: str, **params) -> dict:
    return answer(http.get("/v1/search", params={"query": query, "as_of": ASKED, **params}))


# ---------------------------------------------------------------- the same answers as the library


@pytest.mark.parametrize("query, scope, mode", [
    ("dark mode editor", {"tenant": "acme", "user": "alice"}, "hybrid"),
    ("who approves the cloud budget?", {"tenant": "acme"}, "hybrid"),
    ("PostgreSQL migration", {"tenant": "acme", "agent": "support-bot", "user": "alice"}, "keyword"),
    ("what does Bob drink", {"tenant": "acme", "user": "bob"}, "semantic"),
    ("西湖跑步", {"tenant": "acme"}, "hybrid"),
    ("quantum chromodynamics", {"tenant": "globex"}, "hybrid"),  # nothing matches: the notes say why
    ("servers in Austin", {"tenant": "initech"}, "keyword"),  # only a dormant memory: nothing to search, and why
])
def test_a_search_over_http_is_lake_search(client, lake, query, scope, mode):
    got = search(client, query, mode=mode, k=5, **scope)
    expected = lake.search(query, tenant=scope["tenant"], agent=scope.get("agent"), user=scope.get("user"),
                           mode=mode, limit=5, as_of=ASKED).as_dict()
    assert got["version"] == "v1" and len(got["search_id"]) == 32
    assert without(got, "version", "search_id") == without(expected, "search_id")


def test_the_first_results_are_the_memories_asked_for(client):
    assert [r["id"] for r in search(client, "dark mode editor", tenant="acme", user="alice", k=1)["results"]] == ["pref-1"]
    nothing = search(client, "quantum chromodynamics", tenant="globex")
    assert nothing["results"] == [] and nothing["notes"][-1].startswith("no memory matched 'quantum chromodynamics'")
    assert search(client, "servers in Austin", tenant="initech")["notes"] == [
        "no memory to search in scope tenant initech: none is active or conflicted",
        "1 dormant or archived memories are in this scope: include_inactive (--include-inactive) searches them, "
        "`memory-lake restore ID...` makes them active again"]


@pytest.mark.parametrize("params", [
    {"tenant": "acme", "user": "alice", "query": "what should I send Alice?", "max_tokens": 300},
    {"tenant": "acme", "user": "alice", "max_tokens": 60},  # the budget leaves lines out; the notes say so
    {"tenant": "globex"},  # no query: the pack the published context.md holds
])
def test_a_context_pack_over_http_is_build_context(client, lake, params):
    got = answer(client.get("/v1/context", params={**params, "as_of": ASKED}))
    expected = lake.build_context(params.get("query"), tenant=params["tenant"], user=params.get("user"),
                                  max_tokens=params.get("max_tokens"), as_of=ASKED).as_dict()
    assert got == {"version": "v1", **expected}


def test_a_search_is_logged_to_events_as_the_cli_logs_it(client, lake, published_dir):
    over_http = search(client, "meeting notes format", tenant="acme", user="alice")
    in_process = lake.search("meeting notes format", tenant="acme", user="alice", as_of=ASKED)
    lines = [json.loads(line) for line in (published_dir / "events" / "searches-2026-12-01.jsonl").read_text().splitlines()]
    logged = {line["search_id"]: line for line in lines}
    assert logged[over_http["search_id"]]["result_ids"] == [r["id"] for r in over_http["results"]] != []
    assert without(logged[over_http["search_id"]], "search_id") == without(logged[in_process.search_id], "search_id")


def test_scopes_memories_entities_and_health_are_the_library_s(client, lake, published_dir):
    manifest = json.loads((published_dir / "exports" / "v1" / "manifest.json").read_text())
    assert answer(client.get("/v1/scopes/acme")) == {
        "version": "v1", "tenant": "acme", "scopes": [s for s in manifest["counts"]["scopes"] if s["tenant"] == "acme"]}

    pages, offset = [], 0
    while offset is not None:
        page = answer(client.get("/v1/memories", params={"tenant": "acme", "user": "alice", "limit": 3, "offset": offset}))
        assert without(page, "memories", "offset", "next_offset") == {
            "version": "v1", "tenant": "acme", "agent": None, "user": "alice", "total": 9, "limit": 3}
        pages.append(page["memories"])
        offset = page["next_offset"]
    assert [len(p) for p in pages] == [3, 3, 3]
    assert [m for p in pages for m in p] == load_export(published_dir, tenant="acme", user="alice")

    entities = answer(client.get("/v1/entities", params={"tenant": "acme", "user": "alice"}))
    assert entities == {"version": "v1", **lake.entities(tenant="acme", user="alice")}
    assert "Priya Shah" in {e["name"] for e in entities["entities"]}

    health = answer(client.get("/v1/health", params={"tenant": "acme"}))
    assert health == {"version": "v1", **json.loads(json.dumps(lake.health(tenant="acme")))}
    assert health["as_of"] == "2026-11-30T00:00:00Z"  # the snapshot the nightly step stored, not a new one


def test_the_openapi_docs_list_every_endpoint(client):
    assert client.get("/docs").status_code == 200
    assert sorted(answer(client.get("/openapi.json"))["paths"]) == [
        "/v1/changes", "/v1/context", "/v1/entities", "/v1/health", "/v1/memories", "/v1/remember", "/v1/scopes/{tenant}",
        "/v1/search"]


def test_the_docs_page_loads_swagger_ui_from_this_server_with_no_network(client):
    """A stranger offline saw a blank /docs: its script and style came from a CDN."""
    page = client.get("/docs")
    assert (page.status_code, page.headers["content-type"]) == (200, "text/html; charset=utf-8")
    assert re.findall(r"(?:https?:)?//[\w.-]+", page.text) == []  # no URL of another host, of any scheme
    assets = re.findall(r'(?:href|src)="([^"]+)"', page.text)
    assert assets == ["/docs-assets/swagger-ui.css", "/docs-assets/favicon.png", "/docs-assets/swagger-ui-bundle.js"]
    served = {path: client.get(path) for path in assets}
    assert {path: (r.status_code, r.headers["content-type"].split(";")[0]) for path, r in served.items()} == {
        "/docs-assets/swagger-ui.css": (200, "text/css"), "/docs-assets/favicon.png": (200, "image/png"),
        "/docs-assets/swagger-ui-bundle.js": (200, "text/javascript")}
    # the document is OpenAPI 3.1, which Swagger UI reads from version 5 on (4.x shows "Unable to render")
    assert answer(client.get("/openapi.json"))["openapi"].startswith("3.1.")
    assert "openapi: 3.1.0" in served["/docs-assets/swagger-ui-bundle.js"].text
    assert "'/openapi.json'" in page.text and '"validatorUrl": null' in page.text  # nor swagger.io's validator
    assert answer(client.get("/redoc"), 404)["error"] == "no such route"  # ReDoc would need a CDN: off


def test_the_root_is_an_index_of_the_service(client):
    assert answer(client.get("/")) == {
        "service": "memory-lake serve", "memory_lake": package_version(), "version": "v1", "docs": "/docs",
        "openapi": "/openapi.json", "routes": [
            {"method": "GET", "path": "/v1/search", "summary": "Search a scope (keyword, semantic or hybrid)"},
            {"method": "GET", "path": "/v1/context", "summary": "The context pack of a scope, within a token budget"},
            {"method": "GET", "path": "/v1/scopes/{tenant}", "summary": "A tenant's published scopes"},
            {"method": "GET", "path": "/v1/memories", "summary": "A scope's published records, a page at a time"},
            {"method": "GET", "path": "/v1/entities", "summary": "The people, places, organisations and things of a scope"},
            {"method": "GET", "path": "/v1/changes", "summary": "What changed in a scope since a version"},
            {"method": "GET", "path": "/v1/health", "summary": "The health dashboard"},
            {"method": "POST", "path": "/v1/remember", "summary": "Write a memory to the lake's inbox"}]}


# ---------------------------------------------------------------- refusals a person can act on


@pytest.mark.parametrize("path, params, message", [
    ("/v1/search", {"query": "tea", "tenant": "acmee"},
     "unknown tenant 'acmee': did you mean 'acme'? known tenants: acme, globex, initech (published v1)"),
    ("/v1/context", {"tenant": "acme", "user": "alicia"},
     "unknown user 'alicia': did you mean 'alice'? known users in tenant 'acme': alice, bob (published v1)"),
    ("/v1/scopes/umbrella", {}, "unknown tenant 'umbrella': known tenants: acme, globex, initech (published v1)"),
    ("/v1/memories", {"tenant": "acme", "agent": "suport-bot"},
     "unknown agent 'suport-bot': did you mean 'support-bot'? known agents in tenant 'acme': support-bot (published v1)"),
    ("/v1/entities", {"tenant": "Acme"}, "unknown tenant 'Acme': did you mean 'acme'? known tenants: acme, globex, initech (published v1)"),
])
def test_an_unknown_name_is_a_404_naming_it_and_the_close_ones(client, path, params, message):
    assert answer(client.get(path, params=params), 404) == {"status": 404, "error": "unknown scope", "message": message}


@pytest.mark.parametrize("path, params, message", [
    ("/v1/search", {"query": "tea", "tenant": "acme", "k": 0},
     "query parameter k: Input should be greater than or equal to 1 (got '0') (see /v1/search in /docs)"),
    ("/v1/search", {"query": "tea", "tenant": "acme", "mode": "fuzzy"},
     "query parameter mode: Input should be 'keyword', 'semantic' or 'hybrid' (got 'fuzzy') (see /v1/search in /docs)"),
    ("/v1/search", {"tenant": "acme"}, "query parameter query: Field required (see /v1/search in /docs)"),
    ("/v1/search", {"query": "  ", "tenant": "acme"}, "query is empty: give the words to look for, e.g. query=dark mode"),
    ("/v1/search", {"query": "tea", "tenant": "acme", "as_of": "yesterday"}, "--as-of 'yesterday' is not an ISO 8601 timestamp"),
    ("/v1/memories", {"tenant": "acme", "limit": 5000},
     "query parameter limit: Input should be less than or equal to 1000 (got '5000') (see /v1/memories in /docs)"),
    ("/v1/context", {"tenant": "acme", "max_tokens": "many"},
     "query parameter max_tokens: Input should be a valid integer, unable to parse string as an integer (got 'many') "
     "(see /v1/context in /docs)"),
    ("/v1/changes", {"tenant": "acme", "since": "yesterday"},
     "since must be a published version, v<N>, not 'yesterday': pass the \"version\" an answer of this server named "
     "(the lake is at v1)"),
])
def test_a_bad_parameter_is_a_422_saying_which_and_why(client, path, params, message):
    body = answer(client.get(path, params=params), 422)
    assert (body["status"], body["error"], body["message"]) == (422, "bad parameter", message)


@pytest.mark.parametrize("method, path, status, allow, message", [
    ("GET", "/v1/serch", 404, None, "no route GET /v1/serch: did you mean /v1/search? this server answers "
                                    f"{', '.join(ROUTES)} (see /docs, or GET /)"),
    ("GET", "/v1/scopes/", 404, None, "no route GET /v1/scopes/: did you mean /v1/scopes/{tenant}? this server "
                                      f"answers {', '.join(ROUTES)} (see /docs, or GET /)"),
    ("GET", "/search", 404, None, "no route GET /search: did you mean /v1/search? this server answers "
                                  f"{', '.join(ROUTES)} (see /docs, or GET /)"),
    ("GET", "/metrics", 404, None, f"no route GET /metrics: this server answers {', '.join(ROUTES)} (see /docs, or GET /)"),
    ("GET", "/v1/remember", 405, "POST", "/v1/remember does not take GET: it takes POST (see /v1/remember in /docs)"),
    ("DELETE", "/v1/search", 405, "GET", "/v1/search does not take DELETE: it takes GET (see /v1/search in /docs)"),
])
def test_an_unknown_route_or_method_is_an_error_naming_the_routes(client, method, path, status, allow, message):
    """A stranger's GET /v1/serch got FastAPI's bare {"detail": "Not Found"}."""
    response = client.request(method, path)
    error = {404: "no such route", 405: "method not allowed"}[status]
    assert answer(response, status) == {"status": status, "error": error, "message": message, "routes": ROUTES}
    assert response.headers.get("allow") == allow


@pytest.mark.parametrize("since, message", [
    ("v0", "since must be a published version, v<N>, not 'v0' (versions count from v1): pass the \"version\" an answer "
           "of this server named (the lake is at v1)"),
    ("abc", "since must be a published version, v<N>, not 'abc': pass the \"version\" an answer of this server named "
            "(the lake is at v1)"),
    ("v5", "since v5 is later than any version published here: pass the \"version\" an answer of this server named "
           "(the lake is at v1)"),
    (None, "v1 is the first published version: there is nothing before it to compare with; load the scope in full "
           "(its memories, or load_export)"),
])
def test_a_since_that_is_no_version_of_the_lake_is_a_422_naming_the_lake_s(client, since, message):
    """since=v0 was a 410 "v0 is no longer kept", since=v5 a 410 "reload in full", since=abc a regular expression."""
    params = {"tenant": "acme", **({"since": since} if since else {})}
    assert answer(client.get("/v1/changes", params=params), 422) == {"status": 422, "error": "bad parameter",
                                                                      "message": message}


def test_since_the_version_held_is_no_change(client):
    for since in ("v1", "1"):
        assert answer(client.get("/v1/changes", params={"tenant": "acme", "since": since})) == {
            "version": "v1", "from": "v1", "to": "v1", "changes": []}


@pytest.mark.parametrize("tenant, hint", [
    ("acmee", "did you mean 'acme'? "),
    ("umbrella", ""),  # a new tenant, nothing close
])
def test_remember_to_a_tenant_the_lake_does_not_know_is_written_with_a_warning(client, published_dir, tenant, hint):
    """A mistyped tenant was accepted silently: the next ingest would have made it a tenant."""
    body = answer(client.post("/v1/remember", json={"tenant": tenant, "content": "Prefers tea"}), 202)
    (published_dir / body["file"]).unlink()  # the module's lake stays as published
    assert body["warnings"] == [
        f"tenant '{tenant}' has no memories yet ({hint}known tenants: acme, globex, initech; published v1); the "
        f"snapshot will create it at the next ingest (a typo? remove {body['file']} before then)"]
    assert body["record"]["tenant"] == tenant and body["queued"]


def test_a_bad_memory_to_remember_is_a_422_and_nothing_is_written(client, published_dir):
    before = sorted(p.name for p in (published_dir / "inbox").iterdir())
    body = answer(client.post("/v1/remember", json={"tenant": "acme", "content": "x", "tier": "forever"}), 422)
    assert body == {"status": 422, "error": "bad parameter",
                    "message": "tier must be one of working, short_term, long_term, important, not 'forever'"}
    body = answer(client.post("/v1/remember", json={"tenant": "acme"}), 422)
    assert body["message"] == "body field content: Field required (see /v1/remember in /docs)"
    # a field it does not take is refused, never dropped (a forget sent here became a write)
    body = answer(client.post("/v1/remember", json={"tenant": "acme", "id": "pref-1", "content": "x",
                                                    "status": "deleted"}), 422)
    assert body["message"] == "body field status: Extra inputs are not permitted (got 'deleted') (see /v1/remember in /docs)"
    assert sorted(p.name for p in (published_dir / "inbox").iterdir()) == before


def test_nothing_published_yet_is_a_503_saying_what_to_run(tmp_path):
    fresh = Lake.init(tmp_path / "lake")
    with serve_in_thread(create_app(Service(fresh.root))) as url:
        body = answer(httpx.get(f"{url}/v1/search", params={"query": "tea", "tenant": "acme"}), 503)
        index = answer(httpx.get(f"{url}/"))
    assert body == {"status": 503, "error": "not available yet",
                    "message": f"nothing is published in {fresh.root} yet: run `memory-lake publish` (or the nightly run); "
                               "this server picks the version up without a restart"}
    assert (index["version"], index["note"]) == (None, body["message"])  # the index says so too


# ---------------------------------------------------------------- the token


def test_a_token_protected_server_refuses_a_request_without_it(published_dir):
    with serve_in_thread(create_app(Service(published_dir), token="s3cret-t0ken")) as url:
        refused = {"status": 401, "error": "unauthorized", "message": UNAUTHORIZED}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-t0ken"}):
            response = httpx.get(f"{url}/v1/health", headers=headers)
            assert (response.status_code, response.json(), response.headers["www-authenticate"]) == (401, refused, "Bearer")
        for path in ("/", "/v1/serch"):  # the index and a path probe too: without the token, nothing but the docs
            assert (httpx.get(f"{url}{path}").status_code, httpx.get(f"{url}{path}").json()) == (401, refused)
        accepted = httpx.get(f"{url}/v1/scopes/globex", headers={"Authorization": "Bearer s3cret-t0ken"})
        assert (accepted.status_code, accepted.json()["scopes"][0]["path"]) == (200, "scopes/globex/_/_")


def test_with_a_token_the_docs_answer_without_it_and_authorize_sends_it(published_dir):
    """With a token, /docs was a 401 (a browser opening a page sends no header) and had no Authorize."""
    with serve_in_thread(create_app(Service(published_dir), token="s3cret-t0ken")) as url:
        for path in ("/docs", "/openapi.json", "/docs-assets/swagger-ui-bundle.js", "/docs-assets/swagger-ui.css"):
            assert httpx.get(f"{url}{path}").status_code == 200, path  # the API's description, no data
        assert httpx.get(f"{url}/docs-assetsX").status_code == 401  # only what is under the assets' folder
        described = httpx.get(f"{url}/openapi.json").json()
        scheme = {"type": "http", "scheme": "bearer",
                  "description": "The token the server was started with (--token or $MEMORY_LAKE_TOKEN)."}
        assert (described["components"]["securitySchemes"], described["security"]) == ({"bearer": scheme},
                                                                                          [{"bearer": []}])
        # what Swagger UI sends once the token is given to Authorize (an http bearer scheme)
        sent = httpx.get(f"{url}/v1/scopes/globex", headers={"Authorization": "Bearer s3cret-t0ken"})
        assert (sent.status_code, sent.json()["version"]) == (200, "v1")
    with serve_in_thread(create_app(Service(published_dir))) as url:  # no token: no Authorize to confuse anyone
        described = httpx.get(f"{url}/openapi.json").json()
        assert ("security" in described, "securitySchemes" in described.get("components", {})) == (False, False)


def test_binding_another_address_than_localhost_needs_a_token(published_dir, monkeypatch, capsys):
    from memory_lake.cli import main

    monkeypatch.delenv("MEMORY_LAKE_TOKEN", raising=False)
    assert resolve_token("127.0.0.1", None) is None and resolve_token("::1", None) is None
    assert main(["--lake", str(published_dir), "serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: binding 0.0.0.0 opens the lake to other machines: give --token SECRET (or set MEMORY_LAKE_TOKEN); "
        "clients then send 'Authorization: Bearer SECRET'. Without a token, bind 127.0.0.1")
    monkeypatch.setenv("MEMORY_LAKE_TOKEN", "from-env")
    assert resolve_token("0.0.0.0", None) == "from-env" and resolve_token("0.0.0.0", "given") == "given"


# ---------------------------------------------------------------- writes and new versions


def test_remember_lands_through_the_inbox_and_appears_after_the_next_ingest(own_server):
    lake, http = own_server
    body = answer(http.post("/v1/remember", json={  # the scope as the snapshot contract names it, or agent / user
        "tenant": "acme", "agent_id": "support-bot", "user": "alice", "content": "Alice goes sailing in Cornwall every August",
        "type": "preference", "tags": ["hobby"], "as_of": "2026-12-01T08:00:00Z"}), 202)
    record = {"tenant": "acme", "agent_id": "support-bot", "user_id": "alice",
              "content": "Alice goes sailing in Cornwall every August", "type": "preference", "tags": ["hobby"],
              "created_at": "2026-12-01T08:00:00Z"}
    assert without(body, "file") == {"queued": True, "record": record, "note": QUEUED_NOTE, "warnings": []}
    written = lake.root / body["file"]
    assert written.parent == lake.inbox and [json.loads(line) for line in written.read_text().splitlines()] == [record]
    assert lake.search("sailing Cornwall", tenant="acme", mode="keyword") == []  # never written to the database

    report = lake.ingest(as_of=AS_OF + timedelta(days=1)).as_dict()
    assert (report["ingested"], report["quarantined"], written.exists()) == (1, 0, False)
    found = lake.search("sailing Cornwall", tenant="acme", mode="keyword")
    assert [(r.content, r.type, r.tags) for r in found] == [(record["content"], "preference", ["hobby"])]
    # the server reads published versions only: it is searchable there after the next publish
    assert search(http, "sailing Cornwall", tenant="acme", mode="keyword")["results"] == []


def test_a_new_publish_is_seen_without_a_restart_and_so_is_a_rollback(own_server):
    lake, http = own_server
    assert search(http, "sailing Cornwall", tenant="acme", mode="keyword") | {"search_id": ""} == {
        "version": "v1", "search_id": "", "mode_used": "keyword", "notes": [
            "no memory matched 'sailing Cornwall' in scope tenant acme (none shares a word with the query); 11 memories searched"],
        "results": []}
    night = AS_OF + timedelta(days=1)
    lake.ingest([write_jsonl(lake.root.parent / "new.jsonl", [
        {"id": "hobby-1", "tenant": "acme", "agent_id": "support-bot", "user_id": "alice", "type": "preference",
         "content": "Alice goes sailing in Cornwall every August", "created_at": "2026-12-01T08:00:00Z"}])], as_of=night)
    lake.index(as_of=night)
    assert lake.publish(as_of=night).details["version"] == "v2"

    found = search(http, "sailing Cornwall", tenant="acme", mode="keyword")
    assert (found["version"], [r["id"] for r in found["results"]]) == ("v2", ["hobby-1"])
    assert answer(http.get("/v1/memories", params={"tenant": "acme", "user": "alice"}))["total"] == 10
    lake.rollback("v1", reason="test: the server follows CURRENT back", by="test")
    back = search(http, "sailing Cornwall", tenant="acme", mode="keyword")
    assert (back["version"], back["results"]) == ("v1", [])
    # v2 is still a version an agent may hold; v3 never was
    undone = answer(http.get("/v1/changes", params={"tenant": "acme", "since": "v2"}))
    assert [(c["id"], c["change"], c["reason"]) for c in undone["changes"]] == [("hobby-1", "removed", "rolled_back")]
    assert answer(http.get("/v1/changes", params={"tenant": "acme", "since": "v3"}), 422)["message"] == (
        'since v3 is later than any version published here: pass the "version" an answer of this server named '
        "(the lake is at v1, rolled back from v2)")


def test_changes_since_a_version_are_changes_since_even_for_a_scope_forgotten_entirely(own_server):
    lake, http = own_server
    night = AS_OF + timedelta(days=1)
    lake.ingest([write_jsonl(lake.root.parent / "new.jsonl", [
        {"id": "hobby-1", "tenant": "acme", "agent_id": "support-bot", "user_id": "alice",
         "content": "Alice goes sailing in Cornwall every August", "created_at": "2026-12-01T08:00:00Z"},
        *({"id": i, "tenant": "acme", "agent_id": "support-bot", "user_id": "bob", "deleted": True}
          for i in ("bob-1", "bob-2"))])], as_of=night)
    lake.index(as_of=night)
    assert lake.publish(as_of=night).details["version"] == "v2"

    for params in ({"tenant": "acme"}, {"tenant": "acme", "user": "bob", "records": True}):
        expected = changes_since(lake.root, "v1", tenant="acme", user=params.get("user"), records=bool(params.get("records")))
        assert answer(http.get("/v1/changes", params={**params, "since": "v1"})) == {"version": "v2", **expected}
        assert answer(http.get("/v1/changes", params=params)) == {"version": "v2", **expected}  # since v2's base
    bob = answer(http.get("/v1/changes", params={"tenant": "acme", "user": "bob", "since": "1"}))
    assert [(c["id"], c["change"], c["reason"]) for c in bob["changes"]] == [("bob-1", "removed", "forgotten"),
                                                                            ("bob-2", "removed", "forgotten")]
    # bob is in no published row any more: his other reads are a 404
    assert answer(http.get("/v1/memories", params={"tenant": "acme", "user": "bob"}), 404)["message"] == (
        "unknown user 'bob': known users in tenant 'acme': alice (published v2)")
    assert answer(http.get("/v1/changes", params={"tenant": "acme", "since": "v7"}), 422)["message"] == (
        'since v7 is later than any version published here: pass the "version" an answer of this server named '
        "(the lake is at v2)")
    shutil.rmtree(lake.exports / "v1")  # as a publish prunes it past [publish] keep_versions
    gone = answer(http.get("/v1/changes", params={"tenant": "acme", "since": "v1"}), 410)
    assert gone == {"status": 410, "error": "reload in full", "message": str(_reload_error(lake, "v1"))}
    assert gone["message"] == "reload in full: v1 is no longer kept (kept: v2)"


def _reload_error(lake, since):
    with pytest.raises(ReloadInFull) as caught:
        changes_since(lake.root, since, tenant="acme")
    return caught.value


def test_the_cli_search_and_context_ask_a_running_server_and_answer_alone_without_one(own_server, capsys):
    """Issue 38.5: with a `serve` running for the lake (its `.serve.json`), `memory-lake search` and
    `context` ask it (no model loaded in the command) and say so; a dead server's file is ignored."""
    import json as _json

    from memory_lake.cli import main
    from memory_lake.serve import announce, withdraw

    lake, http = own_server
    argv = ["--lake", str(lake.root), "--json"]
    announce(lake.root, str(http.base_url).rstrip("/"))
    try:
        assert main([*argv, "search", "dark mode editor", "--tenant", "acme", "--mode", "keyword"]) == 0
        served = _json.loads(capsys.readouterr().out)
        assert served["notes"][-1] == "answered by memory-lake serve from published v1"
        assert main([*argv, "context", "editor", "--tenant", "acme", "--agent", "support-bot", "--user", "alice"]) == 0
        pack = _json.loads(capsys.readouterr().out)
        assert pack["notes"][-1] == "answered by memory-lake serve from published v1"
        assert "Alice prefers dark mode" in pack["markdown"]
    finally:
        withdraw(lake.root)
    assert not (lake.root / ".serve.json").exists()
    # in-process: the same results, without the note
    assert main([*argv, "search", "dark mode editor", "--tenant", "acme", "--mode", "keyword"]) == 0
    alone = _json.loads(capsys.readouterr().out)
    assert [r["id"] for r in alone["results"]] == [r["id"] for r in served["results"]]
    assert "answered by memory-lake serve" not in " ".join(alone["notes"])
    # a file left by a server that died: its pid is gone, the command answers alone
    (lake.root / ".serve.json").write_text(_json.dumps({"url": "http://127.0.0.1:9", "pid": 2 ** 22 + 7}))
    assert main([*argv, "search", "dark mode editor", "--tenant", "acme", "--mode", "keyword"]) == 0
    assert [r["id"] for r in _json.loads(capsys.readouterr().out)["results"]] == [r["id"] for r in served["results"]]
