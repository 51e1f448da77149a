"""`memory-lake mcp` (memory_lake/serve/mcp.py): the console script started as a subprocess by the
MCP SDK's own client over stdio (`stdio_client` + `ClientSession`), as Claude Desktop or any MCP
client starts it; one server process for the module. Its tools answer what the library answers
(whole answers compared, minus search_id and the published version it adds), its resources are the
published scopes, and its one write goes to the inbox."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import anyio.from_thread
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memory_lake import Lake

from ..conftest import copy_lake

pytestmark = [pytest.mark.models, pytest.mark.process]

ASKED = "2026-12-01T08:00:00Z"
CONSOLE_SCRIPT = Path(sys.executable).with_name("memory-lake")
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


class Session:
    """A blocking face on an MCP client session that runs in a portal's event loop."""

    def __init__(self, portal, session: ClientSession):
        self.portal, self.session = portal, session

    def call(self, tool: str, **arguments):
        return self.portal.call(lambda: self.session.call_tool(tool, arguments, read_timeout_seconds=180))

    def answer(self, tool: str, **arguments) -> dict:
        result = self.call(tool, **arguments)
        assert not result.is_error, result.content
        assert json.loads(result.content[0].text) == result.structured_content  # the text is the same JSON
        return result.structured_content

    def __getattr__(self, name):
        method = getattr(self.session, name)
        return lambda *args, **kwargs: self.portal.call(lambda: method(*args, **kwargs))


@pytest.fixture(scope="module")
def mcp(published_dir):
    params = StdioServerParameters(command=str(CONSOLE_SCRIPT), args=["mcp", "--lake", str(published_dir)], env=OFFLINE)
    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(stdio_client(params)) as (read, write):
            with portal.wrap_async_context_manager(ClientSession(read, write)) as session:
                portal.call(session.initialize)
                yield Session(portal, session)


@pytest.fixture(scope="module")
def lake(published_dir) -> Lake:
    return Lake.open(published_dir)


def without(data: dict, *keys: str) -> dict:
    return {k: v for k, v in data.items() if k not in keys}


def test_the_tools_are_listed_with_descriptions_a_model_can_act_on(mcp):
    tools = {tool.name: tool for tool in mcp.list_tools().tools}
    assert sorted(tools) == ["get_context", "list_entities", "recent_changes", "remember", "search_memory"]
    assert all(len(tool.description) > 300 and "tenant (required)" in tool.description for tool in tools.values())
    assert tools["search_memory"].input_schema["required"] == ["query", "tenant"]
    assert tools["search_memory"].input_schema["properties"]["mode"]["enum"] == ["keyword", "semantic", "hybrid"]


@pytest.mark.parametrize("query, scope, mode", [
    ("dark mode editor", {"tenant": "acme", "user": "alice"}, "hybrid"),
    ("who approves the cloud budget?", {"tenant": "acme"}, "hybrid"),
    ("PostgreSQL migration", {"tenant": "acme", "agent": "support-bot", "user": "alice"}, "keyword"),
    ("西湖跑步", {"tenant": "acme"}, "semantic"),
])
def test_search_memory_is_lake_search(mcp, lake, query, scope, mode):
    got = mcp.answer("search_memory", query=query, mode=mode, k=5, as_of=ASKED, **scope)
    expected = lake.search(query, tenant=scope["tenant"], agent=scope.get("agent"), user=scope.get("user"), mode=mode,
                           limit=5, as_of=ASKED).as_dict()
    assert got["version"] == "v1" and got["results"]
    assert without(got, "version", "search_id") == without(expected, "search_id")


def test_get_context_is_build_context(mcp, lake):
    got = mcp.answer("get_context", tenant="acme", user="alice", query="what should I send Alice?", max_tokens=300,
                     as_of=ASKED)
    expected = lake.build_context("what should I send Alice?", tenant="acme", user="alice", max_tokens=300, as_of=ASKED)
    assert got == {"version": "v1", **expected.as_dict()}


def test_list_entities_is_lake_entities(mcp, lake):
    assert mcp.answer("list_entities", tenant="acme", user="alice") == {
        "version": "v1", **lake.entities(tenant="acme", user="alice")}


def test_a_library_error_is_a_tool_error_the_model_can_read(mcp):
    unknown = mcp.call("search_memory", query="tea", tenant="acmee")
    assert unknown.is_error and unknown.content[0].text.endswith(
        "unknown tenant 'acmee': did you mean 'acme'? known tenants: acme, globex, initech (published v1)")
    first = mcp.call("recent_changes", tenant="acme")
    assert first.is_error and first.content[0].text.endswith(
        "v1 is the first published version: there is nothing before it to compare with; load the scope in full "
        "(its memories, or load_export)")


def test_recent_changes_says_which_since_it_takes_and_where_the_lake_is(mcp):
    """since=v0 and a future since were "reload in full" (as if once kept), since=abc a bare refusal."""
    ask = 'pass the "version" an answer of this server named (the lake is at v1)'
    for since, message in [("v0", f"since must be a published version, v<N>, not 'v0' (versions count from v1): {ask}"),
                           ("abc", f"since must be a published version, v<N>, not 'abc': {ask}"),
                           ("v5", f"since v5 is later than any version published here: {ask}")]:
        refused = mcp.call("recent_changes", tenant="acme", since=since)
        assert refused.is_error and refused.content[0].text.endswith(message), since
    assert mcp.answer("recent_changes", tenant="acme", since="v1") == {"version": "v1", "from": "v1", "to": "v1",
                                                                       "changes": []}


def test_remember_to_a_tenant_the_lake_does_not_know_warns_and_names_the_known_ones(mcp, published_dir):
    got = mcp.answer("remember", tenant="acmee", content="Prefers tea")
    (published_dir / got["file"]).unlink()  # the module's lake stays as published
    assert got["warnings"] == [
        "tenant 'acmee' has no memories yet (did you mean 'acme'? known tenants: acme, globex, initech; published v1); "
        f"the snapshot will create it at the next ingest (a typo? remove {got['file']} before then)"]


def test_the_published_scopes_are_resources_holding_their_context_pack(mcp, published_dir):
    resources = mcp.list_resources().resources
    assert [(r.name, r.uri, r.mime_type) for r in resources] == [
        ("acme / support-bot / alice", "memory-lake://scopes/acme/support-bot/alice", "text/markdown"),
        ("acme / support-bot / bob", "memory-lake://scopes/acme/support-bot/bob", "text/markdown"),
        ("globex / (none) / (none)", "memory-lake://scopes/globex/_/_", "text/markdown")]
    read = mcp.read_resource(resources[0].uri)
    assert read.contents[0].text == (published_dir / "exports/v1/scopes/acme/support-bot/alice/context.md").read_text()


def test_remember_writes_to_the_inbox_and_the_next_ingest_brings_it_in(mcp, published_dir, tmp_path):
    got = mcp.answer("remember", tenant="acme", agent="support-bot", user="alice", type="preference",
                     content="Alice reads on a Kindle, never on paper")
    written = published_dir / got["file"]
    assert got["queued"] and [json.loads(line) for line in written.read_text().splitlines()] == [got["record"]]
    assert got["warnings"] == []  # a tenant the lake knows
    assert without(got["record"], "created_at") == {"tenant": "acme", "agent_id": "support-bot", "user_id": "alice",
                                                    "content": "Alice reads on a Kindle, never on paper",
                                                    "type": "preference"}
    refused = mcp.call("remember", tenant="acme", content="x", tier="forever")
    assert refused.is_error and refused.content[0].text.endswith(
        "tier must be one of working, short_term, long_term, important, not 'forever'")

    copy = copy_lake(published_dir, tmp_path / "lake")  # the module's lake stays as published
    written.unlink()
    assert copy.ingest().as_dict()["ingested"] == 1  # now: the memory was stamped when it was remembered
    assert [r.id for r in copy.search("Kindle paper", tenant="acme", mode="keyword")] != []
