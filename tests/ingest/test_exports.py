"""Issue 41.4: Letta archival passages and Zep/Graphiti facts, found by their shape, on the samples in
tests/data/formats (real field shapes: docs/formats-research.md). Whole rows, broken samples
quarantined with their positions while the rest lands, a second ingest a no-op, an updated export
an update."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import AS_OF

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"


def row(lake, memory_id: str) -> dict:
    found = lake.sql("SELECT id, tenant, agent_id, user_id, tier, type, status, content, tags, importance, "
                     "strftime(created_at, '%Y-%m-%dT%H:%M:%SZ') AS created_at, "
                     "strftime(expires_at, '%Y-%m-%dT%H:%M:%SZ') AS expires_at, version, extra FROM memories "
                     "WHERE id = ?", [memory_id]).to_dicts()
    return {**found[0], "extra": json.loads(found[0]["extra"])}


def test_letta_passages_land_in_long_term_with_the_agent_given(lake):
    report = lake.ingest([DATA / "letta_passages.json"], as_of=AS_OF, tenant="acme", agent="letta-agent")
    assert [(f.format, f.records, f.ingested, f.quarantined) for f in report.files] == [("letta", 6, 6, 0)]
    got = row(lake, "passage-729dbe06-d423-4a99-85ac-2e9f9a426404")
    extra = got.pop("extra")
    assert got == {"id": "passage-729dbe06-d423-4a99-85ac-2e9f9a426404", "tenant": "acme", "agent_id": "letta-agent",
                   "user_id": None, "tier": "long_term", "type": "other", "status": "active",
                   "content": "2026-09-14: Alice is migrating the billing service from MySQL 5.7 to PostgreSQL 16; "
                              "cutover planned for 2026-10-20.",
                   "tags": ["projects", "work"], "importance": 0.5, "created_at": "2026-09-14T16:40:27Z",
                   "expires_at": None, "version": 1}
    # Letta's free-form metadata ("importance": "high") stays in extra; the embedding is dropped
    assert extra == {"letta": {
        "created_by_id": "user-00000000-0000-4000-8000-000000000000",
        "last_updated_by_id": "user-00000000-0000-4000-8000-000000000000", "is_deleted": False,
        "organization_id": "org-00000000-0000-4000-8000-000000000000",
        "archive_id": "archive-6e27d4bf-7b2b-43f1-975b-760ff6626411",
        "metadata": {"source": "conversation", "importance": "high"},
        "embedding_config": {"embedding_model": "text-embedding-3-small"}}}
    again = lake.ingest([DATA / "letta_passages.json"], as_of=AS_OF, tenant="acme", agent="letta-agent")
    assert [f.status for f in again.files] == ["already ingested"]


def test_zep_facts_carry_their_validity(lake):
    report = lake.ingest([DATA / "zep_facts.json"], as_of=AS_OF, tenant="acme")
    assert [(f.format, f.ingested, f.quarantined) for f in report.files] == [("zep", 6, 0)]
    superseded = row(lake, "8fcd6305-55ea-4d33-8b19-ab28c7727730")
    assert superseded == {
        "id": "8fcd6305-55ea-4d33-8b19-ab28c7727730", "tenant": "acme", "agent_id": None, "user_id": "wanglei",
        "tier": "long_term", "type": "fact", "status": "archived",
        "content": "Wang Lei works as a product manager at an e-commerce company in Hangzhou.", "tags": [],
        "importance": 0.5, "created_at": "2026-01-13T04:15:02Z", "expires_at": "2026-02-28T00:00:00Z", "version": 1,
        "extra": {"zep": {"group_id": "wanglei", "source_node_uuid": "6d654382-3916-471e-b3bd-56c66fccc399",
                          "target_node_uuid": "07eb35f6-1f95-4bc8-8fc0-77c688889047", "name": "WORKS_AT",
                          "episodes": ["cec92dec-832b-49ca-9cf2-d64e9e6a74ae"],
                          "expired_at": "2026-03-02T09:40:17.338201Z", "valid_at": "2023-07-01T00:00:00Z",
                          "invalid_at": "2026-02-28T00:00:00Z", "reference_time": "2026-01-13T04:14:55Z",
                          "attributes": {}}}}
    assert lake.sql("SELECT count(*) FROM memories WHERE status = 'active'").item() == 5


def test_an_updated_zep_export_updates_and_never_duplicates(lake, tmp_path):
    lake.ingest([DATA / "zep_facts.json"], as_of=AS_OF, tenant="acme")
    facts = json.loads((DATA / "zep_facts.json").read_text(encoding="utf-8"))
    facts[1]["fact"] = facts[1]["fact"] + " (confirmed)"
    (tmp_path / "zep-2.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    report = lake.ingest([tmp_path / "zep-2.json"], as_of=AS_OF, tenant="acme")
    assert (report.total("ingested"), report.total("updated"), report.total("unchanged")) == (0, 1, 5)
    assert lake.sql("SELECT count(*) FROM memories").item() == 6


@pytest.mark.parametrize("name, fmt, landed", [("letta_passages_broken", "letta", 3), ("zep_facts_broken", "zep", 3)])
def test_a_broken_export_quarantines_its_bad_items_and_lands_the_rest(lake, name, fmt, landed):
    report = lake.ingest([DATA / f"{name}.json"], as_of=AS_OF, tenant="acme", agent="a")
    assert [(f.format, f.ingested) for f in report.files] == [(fmt, landed)]
    assert lake.sql("SELECT line, reason FROM quarantine ORDER BY line").rows() == [(2, "missing content"),
                                                                                     (4, "bad timestamp")]


def test_an_export_without_a_tenant_is_refused_saying_how(lake):
    report = lake.ingest([DATA / "letta_passages.json"], as_of=AS_OF)
    assert [f.status for f in report.files] == ["unreadable"]
    assert lake.sql("SELECT detail FROM quarantine").item() == (
        "a Letta export carries no tenant: ingest it with `memory-lake ingest FILE --tenant T` (and --agent A, the "
        "agent the passages were listed from), or drop it in the inbox in a folder named `tenant=T` (and `agent=A` "
        "inside it)")
    # given the tenant it lacked, it reads, and its row is closed (it stayed open for good)
    lake.ingest([DATA / "letta_passages.json"], as_of=AS_OF, tenant="acme")
    assert lake.sql("SELECT reason, status FROM quarantine").rows() == [("unreadable file", "replayed")]


def test_an_export_in_an_inbox_folder_named_tenant_takes_its_scope_from_the_folders(lake):
    """The nightly run gives no --tenant: an export dropped in inbox/tenant=acme/agent=letta-agent/
    lands as if ingested with --tenant acme --agent letta-agent; --tenant wins over the folder."""
    folder = lake.inbox / "tenant=acme" / "agent=letta-agent"
    folder.mkdir(parents=True)
    (folder / "passages.json").write_bytes((DATA / "letta_passages.json").read_bytes())
    report = lake.ingest(None, as_of=AS_OF)
    assert [(f.format, f.status, f.ingested, f.skipped) for f in report.files] == [
        ("letta", "ingested", 6, {"deleted": 1, "file chunk": 1})]
    assert lake.sql("SELECT DISTINCT tenant, agent_id FROM memories").rows() == [("acme", "letta-agent")]
    assert not (folder / "passages.json").exists()
    other = lake.root.parent / "tenant=acme"
    other.mkdir()
    (other / "zep.json").write_bytes((DATA / "zep_facts.json").read_bytes())
    lake.ingest([other / "zep.json"], as_of=AS_OF, tenant="globex")
    assert lake.sql("SELECT DISTINCT tenant FROM memories WHERE source = 'zep'").rows() == [("globex",)]
