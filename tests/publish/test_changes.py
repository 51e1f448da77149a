"""Incremental sync (publish/changes.py, issue 38.3): every version's changes.parquet and each scope's
memory.json#changes against the version CURRENT pointed at, and `load_export(..., since=)` /
`changes_since` composing them. Real ingests, tier rules, dedup, forgets, rollbacks and publishes
(GX suite included) on one lake built once per module and copied per test.

Scopes at v1: acme/bot/alice (a0-a4, d1 long-term and idle since January, dup1/dup2 the same words,
arch archived: not loaded), acme/bot/bob (b0), globex/_/_ (g0)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from memory_lake import InputError, Lake, Policy
from memory_lake.maintain import enforce_tiers, forget
from memory_lake.maintain.dedup.step import dedup
from memory_lake.publish import (ReloadInFull, UnknownScope, changes_since, contract, load_export, publish,
                                 rollback)
from memory_lake.publish.changes import restamp_changes

from ..conftest import AS_OF, copy_lake, write_jsonl

LATER = datetime(2026, 12, 2)
# No scope held (every removal here is meant), dedup's exact pass only (no model).
POLICY = Policy().with_overrides({"publish": {"min_drop_allowance": 100}, "dedup": {"passes": ["exact"]}})
ALICE = {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "created_at": "2026-11-29T00:00:00Z"}
SECRET = "zebra-42"  # a1's
OTHER_SECRET = "okapi-17"
ARROW = {"string": pa.string(), "int64": pa.int64()}


def _records() -> list[dict]:
    alice = [{**ALICE, "id": f"a{i}", "content": f"alice fact {i} about cats"} for i in range(5)]
    alice[1]["content"] = f"alice's locker code is {SECRET}"
    alice[3]["expires_at"] = "2026-12-01T00:00:00Z"
    return alice + [
        {**ALICE, "id": "d1", "content": "an old long-term fact", "tier": "long_term",
         "created_at": "2026-01-01T00:00:00Z"},
        {**ALICE, "id": "dup1", "content": "the office is on floor three"},
        {**ALICE, "id": "dup2", "content": "The office is on floor three.", "created_at": "2026-11-29T01:00:00Z"},
        {**ALICE, "id": "arch", "content": "already archived", "status": "archived"},
        {**ALICE, "id": "b0", "user_id": "bob", "content": "bob likes tea"},
        {"id": "g0", "tenant": "globex", "content": "globex ships on fridays", "created_at": "2026-11-29T00:00:00Z"}]


@pytest.fixture(scope="module")
def published_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("changes") / "lake"
    lake = Lake.init(root)
    lake.ingest([write_jsonl(root.parent / "m.jsonl", _records())], as_of=AS_OF)
    assert publish(lake, AS_OF, POLICY).details["version"] == "v1"
    return root


@pytest.fixture
def lake(published_dir, tmp_path) -> Lake:
    return copy_lake(published_dir, tmp_path / "lake")


def ingest(lake: Lake, as_of: datetime, *records: dict) -> None:
    name = f"s-{as_of:%Y%m%dT%H%M%S}.jsonl"
    report = lake.ingest([write_jsonl(lake.root.parent / name, list(records))], as_of=as_of)
    assert report.total("quarantined") == 0, report.reasons


def edit(memory_id: str, version: int, content: str, **fields) -> dict:
    return {**ALICE, "id": memory_id, "version": version, "content": content, **fields}


def published(lake: Lake, as_of: datetime, policy: Policy = POLICY) -> dict:
    details = publish(lake, as_of, policy).details
    assert details["status"] == "published", details
    return details


def changes(lake: Lake, version: str) -> list[dict]:
    return pl.read_parquet(lake.exports / version / "changes.parquet").to_dicts()


def row(scope: tuple, memory_id: str, change: str, before: int | None, after: int | None, frm: str | None, to: str,
        reason: str | None = None, merged_into: str | None = None) -> dict:
    tenant, agent, user = scope
    return {"tenant": tenant, "agent_id": agent, "user_id": user, "id": memory_id, "change": change,
            "reason": reason, "merged_into": merged_into, "version_before": before, "version_after": after,
            "from_version": frm, "to_version": to}


A, B, G = ("acme", "bot", "alice"), ("acme", "bot", "bob"), ("globex", None, None)


def scope_changes(lake: Lake, version: str, user: str) -> dict:
    document = json.loads((lake.exports / version / "scopes" / "acme" / "bot" / user / "memory.json").read_text())
    assert list(document) == ["format_version", "tenant", "agent_id", "user_id", "as_of", "changes", "memories"]
    return document["changes"]


def test_the_first_version_adds_every_memory_agents_load(lake):
    loaded = ["a0", "a1", "a2", "a3", "a4", "d1", "dup1", "dup2"]  # not `arch`: archived, no agent loads it
    assert changes(lake, "v1") == ([row(A, i, "added", None, 1, None, "v1") for i in loaded]
                                   + [row(B, "b0", "added", None, 1, None, "v1"),
                                      row(G, "g0", "added", None, 1, None, "v1")])
    schema = pq.read_schema(lake.exports / "v1" / "changes.parquet")
    assert [(f.name, f.type) for f in schema] == [(f.name, ARROW[f.type]) for f in contract.CHANGE_FIELDS]
    manifest = json.loads((lake.exports / "v1" / "manifest.json").read_text())
    assert (manifest["previous"], manifest["changes_from"]) == (None, None)
    assert manifest["schema"]["changes.parquet"] == contract.file_schema("changes.parquet")
    assert scope_changes(lake, "v1", "alice") == {"from": None, "added": loaded, "updated": [], "removed": []}


def test_a_publish_names_each_change_and_why_a_memory_left(lake):
    """An edit, an agent's archive, a move to another user, a new memory, a forget, the expire and
    dormant rules and a dedup merge, in one night; bob's and globex's unchanged memories are not there."""
    ingest(lake, LATER, edit("a0", 1, "alice fact 0 about dogs"),
           edit("a2", 1, "alice fact 2 about cats", status="archived"),
           edit("a4", 1, "alice fact 4 about cats", user_id="bob"), {**ALICE, "id": "a9", "content": "a new fact"})
    forget(lake, ids=["a1"], operator="user", reason="asked", as_of=LATER)
    enforce_tiers(lake, LATER, POLICY)
    dedup(lake, LATER, POLICY)
    details = published(lake, LATER)

    assert changes(lake, "v2") == [
        row(A, "a0", "updated", 1, 2, "v1", "v2"),
        row(A, "a1", "removed", 1, None, "v1", "v2", "forgotten"),
        row(A, "a2", "removed", 1, None, "v1", "v2", "archived"),
        row(A, "a3", "removed", 1, None, "v1", "v2", "expired"),
        row(A, "a4", "removed", 1, None, "v1", "v2", "moved"),
        row(A, "a9", "added", None, 1, "v1", "v2"),
        row(A, "d1", "removed", 1, None, "v1", "v2", "dormant"),
        row(A, "dup1", "updated", 1, 1, "v1", "v2"),  # the kept side of the merge took dup2's history
        row(A, "dup2", "removed", 1, None, "v1", "v2", "merged_into", "dup1"),
        row(B, "a4", "added", None, 2, "v1", "v2")]
    assert details["changes"] == {"from": "v1", "to": "v2", "added": 2, "updated": 2, "removed": 6}
    manifest = json.loads((lake.exports / "v2" / "manifest.json").read_text())
    assert (manifest["previous"], manifest["changes_from"]) == ("v1", "v1")
    assert scope_changes(lake, "v2", "alice") == {
        "from": "v1", "added": ["a9"], "updated": ["a0", "dup1"],
        "removed": [{"id": i, "reason": r, "merged_into": m} for i, r, m in (
            ("a1", "forgotten", None), ("a2", "archived", None), ("a3", "expired", None), ("a4", "moved", None),
            ("d1", "dormant", None), ("dup2", "merged_into", "dup1"))]}
    assert scope_changes(lake, "v2", "bob") == {"from": "v1", "added": ["a4"], "updated": [], "removed": []}
    # v1 no longer holds a1 (the forget scrubbed it), yet v2 says it was forgotten; no text anywhere
    assert "a1" not in pl.read_parquet(lake.exports / "v1" / "memories.parquet")["id"].to_list()
    for version in ("v1", "v2"):
        assert SECRET not in str(changes(lake, version)) + (lake.exports / version / "changes.parquet").read_text(
            errors="replace")


def test_load_export_since_composes_the_versions_between(lake):
    """x1 added in v2 and archived in v3 is not in the answer from v1; a0 edited twice is one update."""
    ingest(lake, LATER, edit("a0", 1, "alice fact 0 about dogs"), {**ALICE, "id": "x1", "content": "a passing fact"})
    published(lake, LATER)
    later = LATER + timedelta(hours=1)
    ingest(lake, later, edit("a0", 2, "alice fact 0 about birds"), edit("x1", 1, "a passing fact", status="archived"))
    published(lake, later)

    assert changes_since(lake.root, "v1", tenant="acme") == {
        "from": "v1", "to": "v3", "changes": [row(A, "a0", "updated", 1, 3, "v1", "v3")]}
    assert changes_since(lake.root, "v2") == {"from": "v2", "to": "v3", "changes": [
        row(A, "a0", "updated", 2, 3, "v2", "v3"), row(A, "x1", "removed", 1, None, "v2", "v3", "archived")]}
    assert changes_since(lake.root, 3) == {"from": "v3", "to": "v3", "changes": []}
    assert changes_since(lake.root, "v1", version="v2", tenant="acme", user="alice") == {
        "from": "v1", "to": "v2", "changes": [row(A, "a0", "updated", 1, 2, "v1", "v2"),
                                              row(A, "x1", "added", None, 1, "v1", "v2")]}

    loaded = load_export(lake.root, tenant="acme", agent="bot", user="alice", since="v2")
    assert [list(r) for r in loaded] == [list(contract.LOAD_CHANGE_COLUMNS)] * 2
    current = {r["id"]: r for r in load_export(lake.root, tenant="acme", user="alice")}
    assert loaded[0] == {**row(A, "a0", "updated", 2, 3, "v2", "v3"),
                         **{k: v for k, v in current["a0"].items() if k != "id"}}
    assert loaded[0]["content"] == "alice fact 0 about birds"
    assert loaded[1] == {**dict.fromkeys(contract.LOAD_CHANGE_COLUMNS),
                         **row(A, "x1", "removed", 1, None, "v2", "v3", "archived")}
    frame = load_export(lake.root, tenant="acme", since="v1", as_frame=True)
    assert frame.columns == list(contract.LOAD_CHANGE_COLUMNS) and frame["id"].to_list() == ["a0"]
    assert frame.schema["created_at"] == pl.Datetime("us", "UTC")
    assert load_export(lake.root, tenant="globex", since="v1") == []


def test_a_since_no_longer_kept_asks_for_a_reload_in_full(lake):
    keep_two = POLICY.with_overrides({"publish": {"keep_versions": 2}})
    for n, at in enumerate((LATER, LATER + timedelta(hours=1)), start=2):
        ingest(lake, at, edit("a0", n - 1, f"alice fact 0, take {n}"))
        published(lake, at, keep_two)
    with pytest.raises(ReloadInFull) as error:
        load_export(lake.root, tenant="acme", since="v1")
    assert str(error.value) == "reload in full: v1 is no longer kept (kept: v2..v3)"
    assert isinstance(error.value, InputError)
    with pytest.raises(ReloadInFull, match=r"^reload in full: v7 is not a version published here \(kept: v2\.\.v3\)$"):
        changes_since(lake.root, "v7")
    for bad in ("../v2", "latest", None, True):
        with pytest.raises(InputError, match="since must be a version's name such as 'v41'") as error:
            changes_since(lake.root, bad)
        assert not isinstance(error.value, ReloadInFull)


def test_a_gap_in_the_chain_of_changes_is_a_reload_in_full_never_a_partial_answer(lake):
    for n, at in enumerate((LATER, LATER + timedelta(hours=1)), start=2):
        ingest(lake, at, edit("a0", n - 1, f"alice fact 0, take {n}"))
        published(lake, at)
    (lake.exports / "v2" / "changes.parquet").unlink()  # as a version published before the file existed
    with pytest.raises(ReloadInFull) as error:
        changes_since(lake.root, "v1")
    assert str(error.value) == ("reload in full: the changes from v1 to v3 are not all kept (v2 was published "
                                "without changes.parquet; kept: v1..v3)")
    assert changes_since(lake.root, "v2")["changes"] == [row(A, "a0", "updated", 2, 3, "v2", "v3")]


def test_after_a_rollback_the_next_changes_are_against_the_version_rolled_back_to(lake):
    """v2 adds x1 and edits a0; CURRENT goes back to v1; x1 is archived; v3 is against v1. An agent
    that loaded v2 hears that x1 left as rolled back; one that loaded v1 hears of a0 only."""
    ingest(lake, LATER, edit("a0", 1, "alice fact 0 about dogs"), {**ALICE, "id": "x1", "content": "a bad fact"})
    published(lake, LATER)
    rollback(lake, "v1", reason="x1 should not have been published", by="ops", as_of=LATER + timedelta(hours=1))
    later = LATER + timedelta(hours=2)
    ingest(lake, later, edit("x1", 1, "a bad fact", status="archived"))
    details = published(lake, later)

    manifest = json.loads((lake.exports / "v3" / "manifest.json").read_text())
    assert (manifest["previous"], manifest["changes_from"]) == ("v1", "v1")
    assert details["changes"] == {"from": "v1", "to": "v3", "added": 0, "updated": 1, "removed": 0}
    assert changes(lake, "v3") == [row(A, "a0", "updated", 1, 2, "v1", "v3")]
    assert changes_since(lake.root, "v2")["changes"] == [row(A, "x1", "removed", 1, None, "v2", "v3", "rolled_back")]
    assert changes_since(lake.root, "v1")["changes"] == [row(A, "a0", "updated", 1, 2, "v1", "v3")]
    # and back the other way: what v3 holds that v2 did not (nothing), what v2 held (x1 comes back)
    assert changes_since(lake.root, "v3", version="v2")["changes"] == [
        row(A, "x1", "added", None, 1, "v3", "v2")]


def test_a_memory_forgotten_after_its_publish_leaves_the_answer(lake):
    """x1 added in v2 and a0 updated in v2 are forgotten after v2's publish (the forget scrubs v2):
    from v1, x1 is not there at all and a0 is removed as forgotten; their text is nowhere (a1's is: it stays)."""
    ingest(lake, LATER, edit("a0", 1, f"alice fact 0 about {OTHER_SECRET}"),
           {**ALICE, "id": "x1", "content": OTHER_SECRET})
    published(lake, LATER)
    forget(lake, ids=["a0", "x1"], operator="user", reason="asked", as_of=LATER + timedelta(hours=1))
    assert changes(lake, "v2") == [row(A, "a0", "updated", 1, 2, "v1", "v2"),
                                   row(A, "x1", "added", None, 1, "v1", "v2")]
    assert changes_since(lake.root, "v1") == {"from": "v1", "to": "v2", "changes": [
        row(A, "a0", "removed", 1, None, "v1", "v2", "forgotten")]}
    assert load_export(lake.root, tenant="acme", user="alice", since="v1") == [
        {**dict.fromkeys(contract.LOAD_CHANGE_COLUMNS), **row(A, "a0", "removed", 1, None, "v1", "v2", "forgotten")}]
    assert scope_changes(lake, "v2", "alice") == {"from": "v1", "added": ["x1"], "updated": ["a0"], "removed": []}
    for path in (lake.exports / "v2").rglob("*"):
        assert not path.is_file() or OTHER_SECRET.encode() not in path.read_bytes(), path


def test_an_unknown_scope_is_named_and_an_unchanged_one_is_empty(lake):
    ingest(lake, LATER, edit("a0", 1, "alice fact 0 about dogs"))
    published(lake, LATER)
    assert changes_since(lake.root, "v1", tenant="globex") == {"from": "v1", "to": "v2", "changes": []}
    assert load_export(lake.root, tenant="acme", user="bob", since="v1") == []
    with pytest.raises(UnknownScope, match="acmee"):
        changes_since(lake.root, "v1", tenant="acmee")
    with pytest.raises(UnknownScope, match="carol"):
        load_export(lake.root, tenant="acme", user="carol", since="v1")
    assert load_export(lake.root, tenant="acme", user="carol", since="v1", missing_ok=True) == []


def test_restamp_changes_renames_the_version_the_changes_lead_to(lake):
    restamp_changes(lake.exports / "v1", "v9")
    assert {r["to_version"] for r in changes(lake, "v1")} == {"v9"}
    assert len(changes(lake, "v1")) == 10
