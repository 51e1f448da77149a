"""Tenant isolation in every read path (issue 34): search (each mode, Python and CLI), the context
pack (Python and CLI), entities and their facts, summaries (the preview, the summary memories, the
summary text in the export), the published scope files, `load_export` and the live-lake reads that
take a tenant (health, conflicts, the scope check).

One lake, built once for the module without Prefect, holds two tenants that collide everywhere but
in the tenant: the same agent and user names, the same topics in near-identical words, the same
people and places, a contradiction each, a summarised conversation in each scope. Only a marker
word (Orchid for acme, Cobalt for globex, also the prefix of every id) tells them apart, so any read
or grouping that forgets the tenant shows the other tenant's lines. Each test reads one tenant and
asserts the whole result: the exact ids (or rows), not just the absence of the other marker.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memory_lake import InputError, Lake, load_export, write_snapshot
from memory_lake.cli import main
from memory_lake.observe.runs import run_nightly_steps
from memory_lake.publish import UnknownScope, contract, scope_folder

from .maintain.conversation import build_conversation

pytestmark = pytest.mark.models  # its lakes are built and searched with the embedding models

AS_OF = datetime(2026, 11, 30)
AGENT = "support-bot"


@dataclass(frozen=True)
class Side:
    """What sets a tenant apart: its marker word (in every memory; lower-cased, the prefix of every
    id) and a scope of its own (an agent and a user the other tenant does not have)."""

    marker: str
    own_agent: str
    own_user: str
    own_name: str

    @property
    def prefix(self) -> str:
        return self.marker.lower()


SIDES = {"acme": Side("Orchid", "billing-bot", "dave", "Dave"), "globex": Side("Cobalt", "sales-bot", "carol", "Carol")}
OTHER = {"acme": "globex", "globex": "acme"}
TENANTS = pytest.mark.parametrize("tenant", list(SIDES))


def _at(hours_before: float) -> str:
    return (AS_OF - timedelta(hours=hours_before)).strftime("%Y-%m-%dT%H:%M:%SZ")


def snapshot(tenant: str) -> list[dict]:
    """A tenant's memories: user alice (an important memory, facts, a contradiction, working items
    and a 12-turn short-term conversation: a scope summary), user bob (facts and a 12-turn session:
    a session summary), both of agent support-bot, and one memory in a scope of the tenant's own."""
    side = SIDES[tenant]
    m = side.marker

    def memory(key: str, user: str, tier: str, type_: str, content: str, hours: float, agent: str = AGENT,
               **more) -> dict:
        return {"id": f"{side.prefix}-{key}", "tenant": tenant, "agent_id": agent, "user_id": user, "tier": tier,
                "type": type_, "content": content, "created_at": _at(hours), **more}

    records = [
        memory("a-important", "alice", "important", "preference",
               f"Never call Alice before 9am; the {m} account manager agreed.", 120),
        memory("a-home", "alice", "long_term", "fact", f"Alice lives in Paris and rides the {m} tram to work.", 110),
        memory("a-colleague", "alice", "long_term", "fact",
               f"Alice works with Dr Smith at Initech on the {m} billing project.", 100),
        memory("a-budget-old", "alice", "long_term", "fact", f"Alice's {m} travel budget is 500 euros per month.", 96),
        memory("a-budget-new", "alice", "long_term", "fact", f"Alice's {m} travel budget is 600 euros per month.", 90),
        memory("a-darkmode", "alice", "working", "preference", f"Alice prefers dark mode in the {m} dashboard.", 5),
        memory("a-draft", "alice", "working", "todo", f"Alice is drafting the {m} renewal email for Initech.", 4),
        memory("b-home", "bob", "long_term", "fact", f"Bob lives in Berlin near the {m} office.", 80),
        memory("b-lightmode", "bob", "working", "preference", f"Bob prefers light mode in the {m} dashboard.", 6),
        memory("x-home", side.own_user, "short_term", "fact", f"{side.own_name} lives in Oslo near the {m} office.", 20,
               agent=side.own_agent),
    ]
    for user, session, tier, seed in (("alice", None, "short_term", 5), ("bob", "sess-9", "long_term", 6)):
        for k, turn in enumerate(build_conversation(turns=12, filler=8, seed=seed)):
            text = turn["content"]
            for name in ("Priya", "Marco", "Anna", "Lena"):
                text = text.replace(name, f"{name} {m}")
            records.append(memory(f"{user[0]}-t{k:02d}", user, tier, "other", f"{m} desk: {text}", 70 - k,
                                  session_id=session))
    return records


TURNS = {user: [f"{user[0]}-t{k:02d}" for k in range(12)] for user in ("alice", "bob")}
# every memory of each scope, by key ("sum:<user>" is the scope's summary, which the nightly run made)
SCOPE_KEYS = {
    "alice": ["a-important", "a-home", "a-colleague", "a-budget-old", "a-budget-new", "a-darkmode", "a-draft",
              *TURNS["alice"], "sum:alice"],
    "bob": ["b-home", "b-lightmode", *TURNS["bob"], "sum:bob"],
    "own": ["x-home"],
}
SUMMARISED = {"alice": (None, TURNS["alice"]), "bob": ("sess-9", TURNS["bob"])}  # user -> (session, sources)


@dataclass
class World:
    root: Path
    lake: Lake
    summary_ids: dict[tuple[str, str], str]          # (tenant, user) -> the summary memory's id
    tenant_of: dict[str, str]                         # memory id -> tenant
    content: dict[str, str]                           # memory id -> content
    conflict_ids: dict[str, str]                      # tenant -> its open conflict (the budget contradiction)
    by_text: dict[str, list[str]] = field(default_factory=dict)  # whitespace-normalised content -> ids

    def ids(self, tenant: str, keys) -> list[str]:
        """The ids of `keys` (``a-home``, ``sum:alice`` ...) in `tenant`."""
        return [self.summary_ids[(tenant, k[4:])] if k.startswith("sum:") else f"{SIDES[tenant].prefix}-{k}"
                for k in keys]

    def scope_ids(self, tenant: str, scope: str) -> list[str]:
        return self.ids(tenant, SCOPE_KEYS[scope])

    def all_ids(self, tenant: str) -> list[str]:
        return [i for scope in SCOPE_KEYS for i in self.scope_ids(tenant, scope)]

    def scope(self, tenant: str, scope: str) -> tuple[str, str, str]:
        side = SIDES[tenant]
        return (tenant, side.own_agent, side.own_user) if scope == "own" else (tenant, AGENT, scope)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    root = tmp_path_factory.mktemp("tenants") / "lake"
    Lake.init(root)
    # USE (NumPy) is the lake's only model: MiniLM would take torch's start-up (10-30 s) for English
    # text USE covers too; search's tenant filter is the same for every model
    (root / "memory-lake.toml").write_text('[search]\nmodel = "use-multilingual-v3"\nmultilingual_model = "none"\n')
    lake = Lake.open(root)
    for tenant in SIDES:
        write_snapshot(snapshot(tenant), lake.inbox, name=f"0001-{tenant}.jsonl")
    run = run_nightly_steps(lake, AS_OF, reports_dir=root.parent / "reports")
    assert run["status"] == "ok" and run["publish"]["version"] == "v1", run
    # what the lake holds, read here with plain SQL (each test checks a read path against it)
    summaries = lake.read("SELECT tenant, user_id, id FROM memories WHERE type = 'summary'").frame
    memories = lake.read("SELECT id, tenant, content FROM memories WHERE status <> 'deleted'").frame
    conflicts = lake.read("SELECT tenant, conflict_id FROM conflicts WHERE status = 'open'").frame
    found = World(root, lake, {(r["tenant"], r["user_id"]): r["id"] for r in summaries.iter_rows(named=True)},
                  dict(zip(memories["id"], memories["tenant"])), dict(zip(memories["id"], memories["content"])),
                  dict(zip(conflicts["tenant"], conflicts["conflict_id"])))
    for row in memories.iter_rows(named=True):
        found.by_text.setdefault(" ".join(row["content"].split()), []).append(row["id"])
    # the query model loads here, once, not in the first test that searches
    lake.search("warm up", tenant="acme", mode="semantic")
    return found


def test_the_lake_holds_each_tenants_memories_and_a_summary_per_scope(world):
    """The premise of every other test: each memory in its tenant, one summary per summarised key."""
    assert sorted(world.summary_ids) == [(t, u) for t in SIDES for u in SUMMARISED]
    assert sorted(world.tenant_of) == sorted(world.all_ids("acme") + world.all_ids("globex"))
    assert all(world.tenant_of[i] == t for t in SIDES for i in world.all_ids(t))
    assert all(len(ids) == 1 for ids in world.by_text.values())  # a pack line names one memory
    assert sorted(world.conflict_ids) == sorted(SIDES)  # one contradiction each


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cli_json(capsys, world: World, *args: str) -> dict:
    code, out, err = cli(capsys, "--lake", str(world.root), *args, "--json")
    assert code == 0, err
    return json.loads(out)


# ---------------------------------------------------------------------------- search
# (query, mode, user) -> the ids found in acme, best first; globex finds the same keys. Keyword
# ranks are compared exactly; semantic and hybrid ones (cosines of two tenants' near-identical
# lines can tie) as sets, hybrid's clear best result exactly.
SEARCHES = {
    ("travel budget", "keyword", None): ["a-budget-new", "a-budget-old", "sum:bob", "b-t11", "sum:alice", "a-t11",
                                         "b-t10"],
    ("travel budget", "keyword", "alice"): ["a-budget-new", "a-budget-old", "sum:alice", "a-t11"],
    ("travel budget", "semantic", None): ["a-budget-new", "a-budget-old"],
    ("travel budget", "semantic", "alice"): ["a-budget-new", "a-budget-old"],
    ("travel budget", "hybrid", None): ["a-budget-new", "a-budget-old", "a-t11", "b-t11", "sum:bob", "sum:alice",
                                        "b-t10"],
    ("travel budget", "hybrid", "alice"): ["a-budget-new", "a-budget-old", "a-t11", "sum:alice"],
    ("dark mode dashboard", "keyword", None): ["a-darkmode", "b-lightmode", "a-t11", "a-t05", "a-t07", "b-t09",
                                               "b-t10", "b-t08"],
    ("dark mode dashboard", "keyword", "alice"): ["a-darkmode", "a-t11", "a-t05", "a-t07"],
    ("dark mode dashboard", "semantic", None): ["b-lightmode", "a-darkmode"],
    ("dark mode dashboard", "semantic", "alice"): ["a-darkmode"],
    ("dark mode dashboard", "hybrid", None): ["a-darkmode", "b-lightmode", "a-t11", "a-t07", "b-t10", "b-t09",
                                              "a-t05", "b-t08"],
    ("dark mode dashboard", "hybrid", "alice"): ["a-darkmode", "a-t11", "a-t07", "a-t05"],
}
SEARCHABLE = {None: 36, "alice": 20}  # active memories of the tenant, of its user alice
CONFLICTS = {"a-budget-new": ["a-budget-old"], "a-budget-old": ["a-budget-new"]}


def assert_found(world: World, tenant: str, query: str, mode: str, user: str | None, results: list[dict]) -> None:
    expected = world.ids(tenant, SEARCHES[(query, mode, user)])
    found = [r["id"] for r in results]
    if mode == "keyword":
        assert found == expected
    else:
        assert sorted(found) == sorted(expected)
        assert mode == "semantic" or found[0] == expected[0]
    assert {(r["tenant"], r["agent_id"]) for r in results} == {(tenant, AGENT)}
    assert {r["id"]: r["conflict_with"] for r in results if r["conflict"]} == {
        i: world.ids(tenant, CONFLICTS[k]) for k, i in zip(SEARCHES[(query, mode, user)], expected) if k in CONFLICTS}


@TENANTS
@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
@pytest.mark.parametrize("user", [None, "alice"], ids=["tenant", "user"])
def test_search_finds_only_the_tenants_memories(world, tenant, mode, user):
    for query in ("travel budget", "dark mode dashboard"):
        found = world.lake.search(query, tenant=tenant, user=user, mode=mode, as_of=AS_OF)
        assert found.mode_used == mode and found.searched == SEARCHABLE[user]
        assert_found(world, tenant, query, mode, user,
                     [{"id": r.id, "tenant": r.tenant, "agent_id": r.agent_id, "conflict": r.conflict,
                       "conflict_with": r.conflict_with} for r in found.results])


@TENANTS
@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_search_cli_finds_only_the_tenants_memories(world, capsys, tenant, mode):
    for query, user in (("travel budget", None), ("dark mode dashboard", "alice")):
        data = cli_json(capsys, world, "search", query, "--tenant", tenant, *(["--user", user] if user else []),
                        "--mode", mode)
        assert data["mode_used"] == mode
        for r in data["results"]:  # the JSON leaves the tenant out (the caller named it): the lake says it
            r["tenant"] = world.tenant_of[r["id"]]
            assert SIDES[tenant].marker in r["content"] and SIDES[OTHER[tenant]].marker not in r["content"]
        assert_found(world, tenant, query, mode, user, data["results"])


@TENANTS
def test_search_including_inactive_memories_stays_in_the_tenant(world, tenant):
    found = world.lake.search("dark mode dashboard", tenant=tenant, user="alice", mode="keyword",
                              include_inactive=True, as_of=AS_OF)
    assert found.searched == SEARCHABLE["alice"]
    assert [r.id for r in found.results] == world.ids(tenant, SEARCHES[("dark mode dashboard", "keyword", "alice")])


@TENANTS
def test_another_tenants_agent_or_user_is_unknown_not_found(world, capsys, tenant):
    other = SIDES[OTHER[tenant]]
    with pytest.raises(InputError, match=f"unknown user '{other.own_user}'"):
        world.lake.search("Oslo office", tenant=tenant, user=other.own_user)
    with pytest.raises(InputError, match=f"unknown agent '{other.own_agent}'"):
        world.lake.build_context("Oslo office", tenant=tenant, agent=other.own_agent)
    with pytest.raises(InputError, match=f"unknown user '{other.own_user}'"):
        world.lake.entities(tenant=tenant, user=other.own_user)
    with pytest.raises(InputError, match=f"unknown user '{other.own_user}'"):
        world.lake.summarize(tenant=tenant, user=other.own_user)
    code, out, err = cli(capsys, "--lake", str(world.root), "search", "Oslo office", "--tenant", tenant,
                         "--user", other.own_user, "--json")
    assert (code, out) == (2, "") and f"unknown user '{other.own_user}'" in err
    # the tenant's own scope, which holds the same words, is found
    found = world.lake.search("Oslo office", tenant=tenant, user=SIDES[tenant].own_user, mode="keyword")
    assert [r.id for r in found.results] == world.ids(tenant, ["x-home"])


# ---------------------------------------------------------------------------- the context pack
LINE = re.compile(r"^- \d{4}-\d\d-\d\d \(\w+\) (?P<text>.*?)(?: \[disputed, id [^\]]*\])?$")
ENTITY_LINE = re.compile(r"^- (?P<name>.+?) \((?:person|place|organisation|thing), \d+ mentions?\): ")


def line_id(world: World, line: str) -> str:
    """The memory a pack line shows (a line shortened with … by the start of its content)."""
    text = LINE.match(line)["text"]
    if text.endswith("…"):
        found = [i for t, ids in world.by_text.items() if t.startswith(text[:-1].rstrip()) for i in ids]
    else:
        found = world.by_text.get(text, [])
    assert len(found) == 1, f"{line!r} shows {found}"
    return found[0]


def pack_content(world: World, sections: list[dict]) -> dict[str, list[str]]:
    """Per section of a pack, the ids of the memories its lines show (entities: the names)."""
    return {s["name"]: [ENTITY_LINE.match(line)["name"] if s["name"] == "entities" else line_id(world, line)
                        for line in s["lines"]] for s in sections}


def expected_pack(world: World, tenant: str, user: str | None) -> dict[str, list[str]]:
    """The pack for "travel budget" (8000 tokens: nothing left out): ids per section, entity names."""
    m, ids = SIDES[tenant].marker, lambda keys: world.ids(tenant, keys)
    if user == "alice":
        return {"important": ids(["a-important"]), "summary": ids(["sum:alice"]),
                "relevant": ids(["a-budget-new", "a-budget-old"]), "entities": [m, "Alice"],
                "recent": ids(["a-draft", "a-darkmode", *reversed(TURNS["alice"][4:])])}
    # both summaries were written at the run's as_of: the lower id is the latest, the other is relevant
    latest, other = sorted(ids(["sum:alice", "sum:bob"]))
    return {"important": ids(["a-important"]), "summary": [latest],
            # the other summary has its vector the night it is written (index_summaries): it ranks above b-t11
            "relevant": ids(["a-budget-new", "a-budget-old"]) + [other] + ids(["b-t11"]),
            "entities": [m, "Alice", m, f"Anna {m}"],
            "recent": ids(["a-draft", "a-darkmode", "b-lightmode", "x-home", *reversed(TURNS["alice"][6:])])}


def assert_pack(world: World, tenant: str, user: str | None, pack: dict) -> None:
    assert pack["dropped"] == 0 and pack["notes"] == []
    assert pack_content(world, pack["sections"]) == expected_pack(world, tenant, user)
    scope = f"{tenant} / (all) / {user or '(all)'}"
    assert pack["markdown"].startswith(f"# Memory context: {scope}\n")
    assert SIDES[OTHER[tenant]].marker not in pack["markdown"] and OTHER[tenant] not in pack["markdown"]
    # the dispute mark names the tenant's own other side
    new, old = world.ids(tenant, ["a-budget-new", "a-budget-old"])
    assert f"[disputed, id {new}: contradicts {old}; waits for a user's decision]" in pack["markdown"]


@TENANTS
@pytest.mark.parametrize("user", ["alice", None], ids=["user", "tenant"])
def test_context_pack_shows_only_the_tenants_memories_and_entities(world, tenant, user):
    pack = world.lake.build_context("travel budget", tenant=tenant, user=user, max_tokens=8000, as_of=AS_OF)
    assert_pack(world, tenant, user, pack.as_dict())


@TENANTS
def test_context_cli_shows_only_the_tenants_memories(world, capsys, tenant):
    data = cli_json(capsys, world, "context", "travel budget", "--tenant", tenant, "--user", "alice",
                    "--max-tokens", "8000")
    assert_pack(world, tenant, "alice", data)
    python = world.lake.build_context("travel budget", tenant=tenant, user="alice", max_tokens=8000)
    assert data["sections"] == python.as_dict()["sections"]


# ---------------------------------------------------------------------------- entities and facts
# the hand-written people and places: current facts (text, source keys), newest first, and history
ALICE_FACTS = {
    "Alice": ([("Alice is drafting the {m} renewal email for Initech.", ["a-draft"]),
               ("Alice prefers dark mode in the {m} dashboard.", ["a-darkmode"]),
               ("Alice's {m} travel budget is 600 euros per month.", ["a-budget-new"]),
               ("Alice works with Dr Smith at Initech on the {m} billing project.", ["a-colleague"]),
               ("Alice lives in Paris and rides the {m} tram to work.", ["a-home"]),
               ("Never call Alice before 9am;", ["a-important"])],
              [("Alice's {m} travel budget is 500 euros per month.", ["a-budget-old"])]),
    "Initech": ([("Alice is drafting the {m} renewal email for Initech.", ["a-draft"]),
                 ("Alice works with Dr Smith at Initech on the {m} billing project.", ["a-colleague"])], []),
    "Dr Smith": ([("Alice works with Dr Smith at Initech on the {m} billing project.", ["a-colleague"])], []),
    "Paris": ([("Alice lives in Paris and rides the {m} tram to work.", ["a-home"])], []),
}


def assert_entities(world: World, tenant: str, user: str | None, result: dict) -> None:
    m = SIDES[tenant].marker
    entities = result["entities"]
    allowed = set(world.scope_ids(tenant, user) if user else world.all_ids(tenant))
    for entity in entities:
        assert (entity["tenant"], entity["agent_id"] in (AGENT, SIDES[tenant].own_agent)) == (tenant, True)
        for fact in entity["facts"] + entity["history"]:
            assert set(fact["sources"]) <= allowed, (entity["name"], fact)
            assert SIDES[OTHER[tenant]].marker not in fact["content"]
    # every entity row of the tenant's scope(s), as the entities table holds them (plain SQL)
    rows = world.lake.read("SELECT user_id, name, kind, mention_count FROM entities WHERE tenant = ? "
                           "AND (? IS NULL OR user_id = ?)", [tenant, user, user]).frame.rows()
    assert sorted((e["user_id"], e["name"], e["kind"], e["mention_count"]) for e in entities) == sorted(rows)
    assert [e["mention_count"] for e in entities] == sorted((e["mention_count"] for e in entities), reverse=True)
    by_name = {e["name"]: e for e in entities if e["user_id"] == "alice"}
    assert (by_name[m]["mention_count"], by_name["Alice"]["mention_count"]) == (19, 7)
    for name, (facts, history) in ALICE_FACTS.items():
        entity = by_name[name]
        assert [(f["content"], f["sources"], f["disputed"]) for f in entity["facts"]] == [
            (text.format(m=m), world.ids(tenant, keys), None) for text, keys in facts]
        assert [(f["content"], f["sources"], f["change"], f["disputed"]) for f in entity["history"]] == [
            (text.format(m=m), world.ids(tenant, keys), "number", world.conflict_ids[tenant]) for text, keys in history]
    if user is None:
        assert {e["user_id"] for e in entities} == {"alice", "bob", SIDES[tenant].own_user}
        own = [(e["name"], e["kind"], e["mention_count"]) for e in entities if e["user_id"] == SIDES[tenant].own_user]
        assert own == [(SIDES[tenant].own_name, "person", 1), (m, "thing", 1), ("Oslo", "place", 1)]


@TENANTS
@pytest.mark.parametrize("user", ["alice", None], ids=["user", "tenant"])
def test_entities_and_facts_are_the_tenants_own(world, tenant, user):
    result = world.lake.entities(tenant=tenant, user=user)
    assert result["notes"] == []
    assert_entities(world, tenant, user, result)


@TENANTS
def test_entities_cli_lists_the_tenants_own(world, capsys, tenant):
    data = cli_json(capsys, world, "entities", "--tenant", tenant, "--user", "alice")
    assert_entities(world, tenant, "alice", data)
    assert data == world.lake.entities(tenant=tenant, user="alice")


# ---------------------------------------------------------------------------- summaries
def assert_summary_text(world: World, tenant: str, user: str, text: str) -> None:
    """An extractive summary of the key's own sources: every fact is a sentence of them, verbatim."""
    sources = [world.content[i] for i in world.ids(tenant, SUMMARISED[user][1])]
    title = ("short-term memory: " + " / ".join(world.scope(tenant, user)) if user == "alice"
             else "session sess-9")
    assert text.startswith(f"# Summary of {title}\n")
    facts = [line[2:] for line in text.splitlines() if line.startswith("- ")]
    assert len(facts) >= 5 and all(any(fact in source for source in sources) for fact in facts), facts
    assert SIDES[tenant].marker in text and SIDES[OTHER[tenant]].marker not in text and OTHER[tenant] not in text


@TENANTS
def test_summary_memories_summarise_only_the_tenants_sources(world, tenant):
    found = world.lake.sql(
        "SELECT id, tenant, agent_id, user_id, session_id, tier, type, status, operator, content, "
        "extra->>'summary_of' AS summary_of FROM memories WHERE type = 'summary' AND tenant = ? ORDER BY user_id",
        [tenant]).to_dicts()
    assert [{k: v for k, v in row.items() if k != "content"} for row in found] == [
        {"id": world.summary_ids[(tenant, user)], "tenant": tenant, "agent_id": AGENT, "user_id": user,
         "session_id": session, "tier": "long_term", "type": "summary", "status": "active", "operator": "system",
         "summary_of": json.dumps(world.ids(tenant, sources), separators=(",", ":"))}
        for user, (session, sources) in SUMMARISED.items()]
    for row in found:
        assert_summary_text(world, tenant, row["user_id"], row["content"])
        links = world.lake.sql("SELECT source_id FROM summary_sources WHERE summary_id = ? ORDER BY source_id",
                               [row["id"]])["source_id"].to_list()
        assert links == sorted(world.ids(tenant, SUMMARISED[row["user_id"]][1]))


def assert_preview(world: World, tenant: str, preview: dict) -> None:
    assert [(s["tenant"], s["agent_id"], s["user_id"], s["session_id"], s["status"], s["sources"])
            for s in preview["scopes"]] == [(tenant, AGENT, user, session, "passed", 12)
                                            for user, (session, _) in SUMMARISED.items()]
    for entry in preview["scopes"]:
        # the preview makes what the nightly run published
        assert entry["summary"] == world.content[world.summary_ids[(tenant, entry["user_id"])]]
        assert_summary_text(world, tenant, entry["user_id"], entry["summary"])
    side = SIDES[tenant]
    assert [(s["tenant"], s["agent_id"], s["user_id"], s["session_id"], s["status"]) for s in preview["skipped"]] == [
        (tenant, side.own_agent, side.own_user, None, "skipped")]


@TENANTS
def test_summary_preview_summarises_only_the_tenants_scopes(world, tenant):
    assert_preview(world, tenant, world.lake.summarize(tenant=tenant))


@TENANTS
def test_summarize_cli_summarises_only_the_tenants_scopes(world, capsys, tenant):
    assert_preview(world, tenant, cli_json(capsys, world, "summarize", "--tenant", tenant))


# ---------------------------------------------------------------------------- the published export
def current(world: World) -> Path:
    return world.root / "exports" / "CURRENT"


def scope_records(world: World, tenant: str, scope: str) -> list[dict]:
    """A scope's memory.json records with their scope, as load_export returns them."""
    document = json.loads((current(world) / "scopes" / scope_folder(*world.scope(tenant, scope)) / "memory.json")
                          .read_text(encoding="utf-8"))
    head = {k: document[k] for k in ("tenant", "agent_id", "user_id")}
    return [head | record for record in document["memories"]]


def context_md(world: World, tenant: str, scope: str) -> tuple[str, dict[str, list[str]]]:
    """A scope's context.md: its heading line and, per section, the ids (entities: names) it shows."""
    text = (current(world) / "scopes" / scope_folder(*world.scope(tenant, scope)) / "context.md").read_text("utf-8")
    sections, name = [], None
    for line in text.splitlines():
        if line.startswith("## "):
            name = {"Important": "important", "Latest summary": "summary", "Known entities": "entities",
                    "Recent": "recent"}[line[3:]]
            sections.append({"name": name, "lines": []})
        elif line.startswith("- ") and name:
            sections[-1]["lines"].append(line)
    return text.splitlines()[0], pack_content(world, sections)


# context.md of each scope (memory keys, entity names; {m}: the marker, {name}: the own user's name):
# the pack without a query, within 2000 tokens
CONTEXT_MD = {
    "alice": {"important": ["a-important"], "summary": ["sum:alice"],
              "entities": ["{m}", "Alice", "Initech", "Without", "Prefect", "Priya {m}", "Anna {m}", "Parquet", "Fridays",
                           "DuckDB"],
              "recent": ["a-draft", "a-darkmode", "a-t11", "a-t10", "a-t09", "a-t08", "a-t07", "a-t06"]},
    "bob": {"summary": ["sum:bob"],
            "entities": ["{m}", "Bob", "Prefect", "Priya {m}", "Without", "Anna {m}", "Parquet", "Fridays", "DuckDB", "GB"],
            "recent": ["b-lightmode"]},
    "own": {"entities": ["{name}", "{m}", "Oslo"], "recent": ["x-home"]},
}


@TENANTS
def test_published_scope_files_hold_only_the_tenants_memories(world, tenant):
    manifest = json.loads((current(world) / "manifest.json").read_text(encoding="utf-8"))
    listed = [(s["tenant"], s["agent_id"], s["user_id"], s["path"]) for s in manifest["counts"]["scopes"]
              if s["tenant"] == tenant]
    scopes = sorted(SCOPE_KEYS, key=lambda s: world.scope(tenant, s))
    assert listed == [(*world.scope(tenant, s), f"scopes/{scope_folder(*world.scope(tenant, s))}") for s in scopes]
    for scope in scopes:
        records = scope_records(world, tenant, scope)
        assert sorted(r["id"] for r in records) == sorted(world.scope_ids(tenant, scope))
        assert {(r["tenant"], r["agent_id"], r["user_id"]) for r in records} == {world.scope(tenant, scope)}
        for record in records:
            assert record["content"] == world.content[record["id"]]
            assert SIDES[tenant].marker in record["content"] and SIDES[OTHER[tenant]].marker not in record["content"]
        if scope != "own":  # the summary text in the export is the tenant's own summary
            (summary,) = [r["content"] for r in records if r["type"] == "summary"]
            assert_summary_text(world, tenant, scope, summary)
        head, shown = context_md(world, tenant, scope)
        assert head == f"# Memory context: {' / '.join(world.scope(tenant, scope))}"
        side = SIDES[tenant]
        assert shown == {section: [name.format(m=side.marker, name=side.own_name) for name in keys]
                         if section == "entities" else world.ids(tenant, keys)
                         for section, keys in CONTEXT_MD[scope].items()}


# ---------------------------------------------------------------------------- load_export
def exported(world: World, tenant: str, scopes) -> list[dict]:
    """The records of `scopes` as their memory.json files hold them, in load_export's order (agent,
    then user)."""
    return [r for s in sorted(scopes, key=lambda s: world.scope(tenant, s)) for r in scope_records(world, tenant, s)]


# (where load_export reads, its arguments but the tenant, the scopes they select)
LOADS = {
    "tenant": ("lake", {}, ["alice", "bob", "own"]),
    "agent": ("lake", {"agent": AGENT}, ["alice", "bob"]),
    "agent-user": ("lake", {"agent": AGENT, "user": "alice"}, ["alice"]),
    "user": ("lake", {"user": "bob"}, ["bob"]),
    "exports-folder": ("exports", {"user": "alice"}, ["alice"]),
    "version-folder": ("exports/v1", {}, ["alice", "bob", "own"]),
    "version-name": ("lake", {"version": "v1", "user": "alice"}, ["alice"]),
    "version-number": ("exports", {"version": 1, "agent": AGENT}, ["alice", "bob"]),
    "missing-ok": ("lake", {"user": "alice", "missing_ok": True}, ["alice"]),
}


@TENANTS
@pytest.mark.parametrize("load", list(LOADS))
def test_load_export_loads_only_the_tenants_records(world, tenant, load):
    where, arguments, scopes = LOADS[load]
    records = load_export(world.root if where == "lake" else world.root / where, tenant=tenant, **arguments)
    assert records == exported(world, tenant, scopes)
    assert sorted(r["id"] for r in records) == sorted(i for s in scopes for i in world.scope_ids(tenant, s))


@TENANTS
def test_load_export_as_a_frame_holds_only_the_tenants_rows(world, tenant):
    frame = load_export(world.root, tenant=tenant, agent=AGENT, as_frame=True)
    assert frame.columns == list(contract.LOAD_COLUMNS)
    assert frame["id"].to_list() == [r["id"] for r in exported(world, tenant, ["alice", "bob"])]
    assert frame.select("tenant", "agent_id", "user_id").unique().sort("user_id").rows() == [
        world.scope(tenant, "alice"), world.scope(tenant, "bob")]


@TENANTS
def test_load_export_of_another_tenants_agent_or_user_is_unknown(world, tenant):
    other = SIDES[OTHER[tenant]]
    with pytest.raises(UnknownScope, match=f"unknown user '{other.own_user}'"):
        load_export(world.root, tenant=tenant, user=other.own_user)
    with pytest.raises(UnknownScope, match=f"unknown agent '{other.own_agent}'"):
        load_export(world.root, tenant=tenant, agent=other.own_agent)
    assert load_export(world.root, tenant=tenant, user=other.own_user, missing_ok=True) == []
    assert load_export(world.root, tenant=tenant, agent=other.own_agent, missing_ok=True, as_frame=True).height == 0
    own = load_export(world.root, tenant=tenant, user=SIDES[tenant].own_user)
    assert [r["id"] for r in own] == world.scope_ids(tenant, "own")


# ---------------------------------------------------------------------------- live-lake reads that take a tenant
@TENANTS
def test_conflicts_of_a_tenant_are_its_own(world, capsys, tenant):
    new, old = world.ids(tenant, ["a-budget-new", "a-budget-old"])
    expected = [{"conflict_id": world.conflict_ids[tenant], "kind": "contradiction", "status": "open",
                 "tenant": tenant, "memory_id": new, "other_memory_id": old}]
    columns = list(expected[0])
    assert world.lake.conflicts(tenant=tenant).select(columns).to_dicts() == expected
    listed = cli_json(capsys, world, "conflicts", "list", "--tenant", tenant)
    assert [{k: c[k] for k in columns} for c in listed] == expected
    assert [c["lake_value"] for c in listed] == [world.content[new]]


@TENANTS
def test_health_of_a_tenant_counts_only_its_memories(world, capsys, tenant):
    stored, computed = world.lake.health(tenant=tenant), world.lake.health(tenant=tenant, as_of=AS_OF)
    for health in (stored, computed, cli_json(capsys, world, "health", "--tenant", tenant)):
        assert list(health["tenants"]) == [tenant] and health["overall"] == health["tenants"][tenant]
        assert health["overall"]["total"] == 36 and health["overall"]["conflicts"]["open"] == 1
        assert {k: v["used"] for k, v in health["overall"]["capacity"].items()} == {
            "working": 3, "short_term": 13, "long_term": 19, "important": 1}
        scopes = sorted(SCOPE_KEYS, key=lambda s: world.scope(tenant, s))
        assert [(s["tenant"], s["agent_id"], s["user_id"], s["total"]) for s in health["scopes"]] == [
            (*world.scope(tenant, s), len(SCOPE_KEYS[s])) for s in scopes]
