"""One small published lake per test module (real ingest, index, entities, health snapshot and
publish: v1), which the HTTP API and the MCP server serve; tests that change it take a copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lake import Lake
from memory_lake.maintain import extract_entities
from memory_lake.observe import snapshot_health

from ..conftest import AS_OF, write_jsonl

ALICE = ("acme", "support-bot", "alice")
MEMORIES = [
    ("pref-1", ALICE, "long_term", "preference", "Alice prefers dark mode in the code editor"),
    ("pref-2", ALICE, "long_term", "preference", "Alice wants meeting notes sent as Markdown, never as PDF"),
    ("fact-1", ALICE, "long_term", "fact", "Alice works at Lloyds Bank in London as a data engineer"),
    ("fact-2", ALICE, "long_term", "fact", "Alice's manager is Priya Shah, who approves the cloud budget"),
    ("dec-1", ALICE, "long_term", "decision", "Alice decided to migrate the billing service to PostgreSQL on March 10"),
    ("todo-1", ALICE, "working", "todo", "Send Alice the dashboard mock-ups before Friday"),
    ("ev-1", ALICE, "short_term", "event", "Alice presented the lakehouse roadmap to the platform team"),
    ("imp-1", ALICE, "important", "fact", "Alice is allergic to peanuts"),
    ("bob-1", ("acme", "support-bot", "bob"), "long_term", "preference", "Bob drinks green tea, never coffee"),
    ("bob-2", ("acme", "support-bot", "bob"), "working", "fact", "Bob is moving to the Berlin office in June"),
    ("glx-1", ("globex", None, None), "long_term", "fact", "Globex ships rockets from its Springfield plant"),
    ("zh-1", ALICE, "long_term", "preference", "用户喜欢在杭州的西湖边跑步"),
    ("old-1", ("initech", None, None), "long_term", "fact", "Initech moved its servers to Austin"),  # dormant
]
DORMANT = {"old-1"}  # published (a row of memories.parquet), searched by nobody: no scope folder either


def records() -> list[dict]:
    return [{"id": id_, "tenant": t, "agent_id": a, "user_id": u, "tier": tier, "type": type_, "content": text,
             "created_at": "2026-11-20T09:00:00Z", "operator": "agent", **({"status": "dormant"} if id_ in DORMANT else {})}
            for id_, (t, a, u), tier, type_, text in MEMORIES]


def build_published_lake(root: Path) -> Path:
    """A lake at `root` with MEMORIES ingested, indexed, read for entities and published as v1."""
    lake = Lake.init(root)
    lake.ingest([write_jsonl(root.parent / "memories.jsonl", records())], as_of=AS_OF)
    lake.index(as_of=AS_OF)
    extract_entities(lake, AS_OF)
    snapshot_health(lake, AS_OF)
    assert lake.publish(as_of=AS_OF).details["version"] == "v1"
    return root


@pytest.fixture(scope="module")
def published_dir(tmp_path_factory) -> Path:
    return build_published_lake(tmp_path_factory.mktemp("serve") / "lake")
