"""Context packs kept from version to version (publish/packs.py): an export that takes the unchanged
scopes' packs from the last version writes the same bytes as one that builds every pack, and a
kept file changed since (a forget, a hand edit) is built again."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lake.demo import night_as_of
from memory_lake.publish.export import stage_export
from memory_lake.store import resolve_as_of

from ..conftest import copy_lake, write_jsonl

pytestmark = pytest.mark.xdist_group("notebooks")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_kept_packs_give_the_bytes_building_every_pack_gives(three_nights, tmp_path):
    as_of = resolve_as_of(night_as_of(4))
    tonight = copy_lake(three_nights.root, tmp_path / "tonight" / "lake")
    assert tonight.sql("SELECT count(*) FROM export_packs").item() > 0  # night 3's export kept its packs
    scope = tonight.sql("SELECT tenant, agent_id, user_id FROM memories WHERE status = 'active' ORDER BY id LIMIT 1"
                        ).to_dicts()[0]
    tonight.ingest([write_jsonl(tmp_path / "tonight.jsonl", [
        {"id": "night-4-new", **scope, "content": "The user now prefers tea to coffee in the morning.",
         "type": "preference", "tier": "important", "created_at": "2026-12-02T08:00:00Z"}])], as_of=as_of)
    built, kept = (copy_lake(tonight.root, tmp_path / name / "lake") for name in ("built", "kept"))
    with built.writer() as con:
        con.execute("DELETE FROM export_packs")  # this copy builds every pack
    # a kept file changed since it was written (as a forget's rewrite would): built again, not taken
    version, folder = kept.sql("SELECT version, folder FROM export_packs ORDER BY folder DESC LIMIT 1").row(0)
    edited = kept.root / "exports" / version / "scopes" / folder / "context.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "- an edit\n", encoding="utf-8")

    fresh = stage_export(built, as_of, run_id="night-4")
    reused = stage_export(kept, as_of, run_id="night-4")

    scopes = reused.details["scopes"]
    assert fresh.counts["packs_kept"] == 0
    assert 0 < reused.counts["packs_kept"] <= scopes - 2  # the new memory's scope and the edited one were built
    staged = {name: Path(report.details["staging"]) for name, report in (("built", fresh), ("kept", reused))}
    assert _files(staged["kept"] / "scopes") == _files(staged["built"] / "scopes")
    assert len(_files(staged["kept"] / "scopes")) == 2 * scopes
    assert "night-4-new" in (staged["kept"] / "scopes").joinpath(
        *[p for p in reused.details["scope_list"] if p["tenant"] == scope["tenant"]
          and p["agent_id"] == scope["agent_id"] and p["user_id"] == scope["user_id"]][0]["path"].split("/")[1:],
        "memory.json").read_text(encoding="utf-8")
    # tonight's packs are kept for the next export, each under the version it was staged for
    assert kept.sql("SELECT count(*) FROM export_packs WHERE version = ?",
                    [reused.details["changes"]["to"]]).item() == scopes


def test_scopes_written_in_batches_are_the_scopes_written_at_once(three_nights, tmp_path, monkeypatch):
    """Staging reads the scopes' records a batch at a time (1M memories at once ran out of memory):
    batches of a few memories give the same files, in the same scope order, as one batch."""
    import memory_lake.publish.export as export

    as_of = resolve_as_of(night_as_of(4))
    whole, batched = (copy_lake(three_nights.root, tmp_path / name / "lake") for name in ("whole", "batched"))
    for lake in (whole, batched):
        lake.ingest([write_jsonl(tmp_path / "tonight.jsonl", [
            {"id": "night-4-batch", "tenant": "acme", "content": "A new scope's only memory.",
             "created_at": "2026-12-02T08:00:00Z"}])], as_of=as_of)
    at_once = stage_export(whole, as_of, run_id="night-4")
    monkeypatch.setattr(export, "SCOPE_BATCH_ROWS", 7)
    in_batches = stage_export(batched, as_of, run_id="night-4")
    assert in_batches.details["scope_list"] == at_once.details["scope_list"]
    assert len(at_once.details["scope_list"]) > 3
    staged = [Path(r.details["staging"]) / "scopes" for r in (at_once, in_batches)]
    assert _files(staged[1]) == _files(staged[0])


def test_a_changed_fact_changes_its_scopes_fact_digest_and_no_other(three_nights, tmp_path):
    from memory_lake.maintain import scope_fact_digests

    lake = copy_lake(three_nights.root, tmp_path / "lake")
    with lake.writer() as con:
        before = scope_fact_digests(con)
        assert len(before) > 1
        fact, scope = con.execute(
            "SELECT f.fact_id, (e.tenant, e.agent_id, e.user_id) FROM entity_facts f JOIN entities e USING (entity_id) "
            "ORDER BY f.fact_id LIMIT 1").fetchone()
        con.execute("UPDATE entity_facts SET content = content || ' (revised)' WHERE fact_id = ?", [fact])
        after = scope_fact_digests(con)
        con.execute("UPDATE entity_facts SET content = replace(content, ' (revised)', '') WHERE fact_id = ?", [fact])
        restored = scope_fact_digests(con)
    scope = tuple(scope.values()) if isinstance(scope, dict) else tuple(scope)
    assert {k for k in before if before[k] != after.get(k)} == {scope}
    assert restored == before
