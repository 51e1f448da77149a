"""Context packs kept from version to version (publish/packs.py): an export that takes the unchanged
scopes' packs from the last version writes the same bytes as one that builds every pack, and a
kept file changed since (a forget, a hand edit) is built again."""

from __future__ import annotations

import json
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


def test_packs_built_by_a_helper_process_are_the_packs_built_here(three_nights, tmp_path, monkeypatch):
    """A night with many packs to build hands a share of each batch to each helper process
    (packs.PackHelpers; at 1M memories about half of 10,000 scopes): the files are the ones one
    process writes. Here every pack is built (none kept), in batches of a few scopes, by three
    processes, and the helpers start at the first pack instead of the thousandth."""
    import memory_lake.publish.export as export
    import memory_lake.publish.packs as packs
    from memory_lake.store import Policy

    as_of = resolve_as_of(night_as_of(4))
    alone, helped = (copy_lake(three_nights.root, tmp_path / name / "lake") for name in ("alone", "helped"))
    for lake in (alone, helped):
        lake.ingest([write_jsonl(tmp_path / "tonight.jsonl", [  # a change, so that there is a version to stage
            {"id": "night-4-helped", "tenant": "acme", "content": "A new scope's only memory.",
             "created_at": "2026-12-02T08:00:00Z"}])], as_of=as_of)
        with lake.writer() as con:
            con.execute("DELETE FROM export_packs")  # every pack is built
    monkeypatch.setattr(export, "SCOPE_BATCH_ROWS", 250)  # several batches of several scopes
    one = stage_export(alone, as_of, Policy().with_overrides({"context": {"pack_processes": 1}}), run_id="night-4")
    monkeypatch.setattr(packs, "HELPER_MIN_PACKS", 1)
    three = stage_export(helped, as_of, Policy().with_overrides({"context": {"pack_processes": 3}}), run_id="night-4")
    scopes = len(one.details["scope_list"])
    assert (one.counts["packs_kept"], one.counts["packs_by_helpers"], three.counts["packs_kept"]) == (0, 0, 0)
    assert scopes // 3 <= three.counts["packs_by_helpers"] < scopes  # two shares of each batch went to the helpers
    staged = [Path(r.details["staging"]) / "scopes" for r in (one, three)]
    assert len(_files(staged[0])) == 2 * scopes and _files(staged[1]) == _files(staged[0])


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


def test_a_row_change_the_pack_cannot_show_keeps_it_and_every_kept_pack_is_the_built_one(three_nights, tmp_path):
    """The pack's key reads the rows a pack can show (packs.pack_view_digests): a long-term memory
    going dormant (no summary, no entity's source, no one's other side) changes the scope's records,
    not its pack, which is kept; the newest short-term memory moving to long-term, and an edit of a
    scope's newest short-term memory, build their packs again. Every file equals the one building everything gives."""
    as_of = resolve_as_of(night_as_of(4))
    base = copy_lake(three_nights.root, tmp_path / "base" / "lake")
    base.ingest([write_jsonl(tmp_path / "tonight.jsonl", [  # so that each lake has something to publish
        {"id": "night-4-elsewhere", "tenant": "acme", "content": "A new scope's only memory.",
         "created_at": "2026-12-02T08:00:00Z"}])], as_of=as_of)
    quiet = base.sql("""
        SELECT m.id, m.tenant, m.agent_id, m.user_id FROM memories m
        WHERE m.status = 'active' AND m.tier = 'long_term' AND m.type <> 'summary'
          AND m.id NOT IN (SELECT memory_id FROM entity_facts)
          AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.status = 'open' AND (c.memory_id = m.id OR c.other_memory_id = m.id))
        ORDER BY m.id LIMIT 1""").to_dicts()
    assert quiet, "the demo has a long-term memory that no pack line or entity reads"
    quiet = quiet[0]
    newest = base.sql("""
        SELECT id, tenant, agent_id, user_id FROM memories WHERE status = 'active' AND tier IN ('working', 'short_term')
          AND id <> 'night-4-elsewhere' AND (tenant, agent_id, user_id) IS DISTINCT FROM (?, ?, ?)
        ORDER BY created_at DESC, id LIMIT 1""", [quiet["tenant"], quiet["agent_id"], quiet["user_id"]]).to_dicts()[0]
    edited = base.sql("""
        SELECT id, tenant, agent_id, user_id FROM memories WHERE status = 'active' AND tier IN ('working', 'short_term')
          AND id <> 'night-4-elsewhere' AND (tenant, agent_id, user_id) IS DISTINCT FROM (?, ?, ?)
          AND (tenant, agent_id, user_id) IS DISTINCT FROM (?, ?, ?)
        ORDER BY created_at DESC, id LIMIT 1""", [quiet["tenant"], quiet["agent_id"], quiet["user_id"],
                                                  newest["tenant"], newest["agent_id"], newest["user_id"]]).to_dicts()[0]
    changed = copy_lake(base.root, tmp_path / "changed" / "lake")
    with changed.writer() as con:
        con.execute("UPDATE memories SET status = 'dormant' WHERE id = ?", [quiet["id"]])
        con.execute("UPDATE memories SET tier = 'long_term' WHERE id = ?", [newest["id"]])
        con.execute("UPDATE memories SET content = content || ' (edited)' WHERE id = ?", [edited["id"]])
    built = copy_lake(changed.root, tmp_path / "built" / "lake")
    with built.writer() as con:
        con.execute("DELETE FROM export_packs")

    unchanged, reused, fresh = (stage_export(lake, as_of, run_id="night-4") for lake in (base, changed, built))

    assert fresh.counts["packs_kept"] == 0
    assert reused.counts["held_scopes"] == unchanged.counts["held_scopes"] == 0
    assert reused.counts["packs_kept"] == unchanged.counts["packs_kept"] - 2  # the two whose packs changed
    assert reused.counts["scopes_kept"] == unchanged.counts["scopes_kept"] - 3  # the dormant one's records changed
    staged = {name: Path(report.details["staging"]) / "scopes" for name, report in (("kept", reused), ("built", fresh))}
    assert _files(staged["kept"]) == _files(staged["built"])
    path = [p["path"] for p in reused.details["scope_list"]
            if (p["tenant"], p["agent_id"], p["user_id"]) == (quiet["tenant"], quiet["agent_id"], quiet["user_id"])][0]
    document = json.loads((staged["kept"].parent / path / "memory.json").read_text(encoding="utf-8"))
    assert quiet["id"] not in {m["id"] for m in document["memories"]}  # gone from its records
    assert quiet["id"] in {m["id"] for m in document["changes"]["removed"]}  # and said so


def test_whenever_a_scopes_view_digest_holds_its_pack_is_the_same(three_nights, tmp_path):
    """The property the kept packs rest on, over 300 seeded random edits of the demo's rows (one
    scope at a time, each undone after): a tier or status move, a content, type or importance edit,
    a created_at moved into another memory's second (with a fraction of a second, which the pack
    orders by its text), a memory added or removed, a dispute marked; each scope has a dispute
    between a shown memory and a long-term one, and the budget shows every line. Whenever the scope's
    ``pack_view_digests`` stays the same, ``scope_pack`` gives the same Markdown; and the edits do
    reach both outcomes (a digest that always changed would keep nothing)."""
    import random
    import shutil

    import duckdb

    from memory_lake.maintain import scope_entity_facts
    from memory_lake.publish.export import _stage_rows
    from memory_lake.publish.packs import LINE_FIELDS, pack_view_digests
    from memory_lake.search import scope_pack

    shutil.copy(three_nights.root / "lake.duckdb", tmp_path / "lake.duckdb")
    con = duckdb.connect(str(tmp_path / "lake.duckdb"))
    con.execute("SET TimeZone = 'UTC'")
    _stage_rows(con)
    scopes = con.execute("SELECT DISTINCT tenant, agent_id, user_id FROM publish_rows WHERE status = 'active' "
                         "ORDER BY ALL").fetchall()
    same_scope = "tenant = ? AND agent_id IS NOT DISTINCT FROM ? AND user_id IS NOT DISTINCT FROM ?"

    def pack(scope) -> str:
        lines = con.execute(f"SELECT {', '.join(LINE_FIELDS)} FROM publish_rows WHERE {same_scope} "
                            "AND status IN ('active', 'conflicted') ORDER BY id", list(scope)).pl().to_dicts()
        facts = scope_entity_facts(con, "e.tenant = ? AND e.agent_id IS NOT DISTINCT FROM ? "
                                        "AND e.user_id IS NOT DISTINCT FROM ?", list(scope)).to_dicts()
        header = {"tenant": scope[0], "agent_id": scope[1], "user_id": scope[2], "as_of": "2026-12-02T02:00:00Z"}
        return scope_pack(header, lines, facts, max_tokens=20_000).markdown  # room for every line

    rng = random.Random(42)
    # each scope's newest short-term memory disputes a long-term one (its other side shows below it)
    for scope in scopes:
        pair = con.execute(f"""
            SELECT (SELECT id FROM publish_rows WHERE {same_scope} AND tier IN ('working', 'short_term')
                    AND status = 'active' ORDER BY created_at DESC, id LIMIT 1),
                   (SELECT id FROM publish_rows WHERE {same_scope} AND tier = 'long_term' AND type <> 'summary'
                    AND status = 'active' ORDER BY id LIMIT 1)""", list(scope) * 2).fetchone()
        if None not in pair:
            for side, other in (pair, pair[::-1]):
                con.execute("UPDATE publish_rows SET conflict = true, conflict_with = [?] WHERE id = ?", [other, side])
    # Every edit is rolled back, so each one starts from these rows: the digests, and per scope its
    # ids, the ids its pack may read and its pack, are computed once for this state (the same 300
    # edits as when they were computed again before each edit: 300 more digests and packs).
    before_digests = pack_view_digests(con)
    before: dict[tuple, tuple[list[str], list[str], str]] = {}

    def scope_before(scope) -> tuple[list[str], list[str], str]:
        if scope not in before:
            ids = [i for (i,) in con.execute(f"SELECT id FROM publish_rows WHERE {same_scope} ORDER BY id",
                                             list(scope)).fetchall()]
            # half the edits hit a memory the pack may read: the newest twelve short-term ones, the
            # important ones, the summaries, the disputed ones, the entities' sources
            read = [i for (i,) in con.execute(f"""
                SELECT id FROM (SELECT id, tier, type, conflict, row_number() OVER (PARTITION BY tier IN ('working', 'short_term')
                                                                               ORDER BY created_at DESC, id) AS n
                                FROM publish_rows WHERE {same_scope} AND status IN ('active', 'conflicted'))
                WHERE (tier IN ('working', 'short_term') AND n <= 12) OR tier = 'important' OR type = 'summary' OR conflict
                   OR id IN (SELECT memory_id FROM entity_facts) ORDER BY id""", list(scope)).fetchall()]
            before[scope] = ids, read, pack(scope)
        return before[scope]

    outcomes = {"kept": 0, "changed": 0}
    for _ in range(300):
        scope = rng.choice(scopes)
        ids, read, before_pack = scope_before(scope)
        before_digest = before_digests.get(scope)
        one = rng.choice(read if read and rng.random() < 0.5 else ids)
        other = rng.choice(ids)
        edits = [
            ("UPDATE publish_rows SET tier = ? WHERE id = ?", [rng.choice(["working", "short_term", "long_term",
                                                                          "important"]), one]),
            ("UPDATE publish_rows SET status = ? WHERE id = ?", [rng.choice(["dormant", "archived", "active",
                                                                            "conflicted"]), one]),
            ("UPDATE publish_rows SET content = content || ' (edited)' WHERE id = ?", [one]),
            ("UPDATE publish_rows SET type = ? WHERE id = ?", [rng.choice(["fact", "summary", "event"]), one]),
            ("UPDATE publish_rows SET importance = ? WHERE id = ?", [rng.random(), one]),
            ("UPDATE publish_rows SET created_at = (SELECT date_trunc('second', created_at) + to_milliseconds(?) "
             "FROM publish_rows WHERE id = ?) WHERE id = ?", [rng.choice([0, 1, 500, 999]), other, one]),
            ("INSERT INTO publish_rows SELECT * REPLACE (id || '-copy' AS id) FROM publish_rows WHERE id = ?", [one]),
            ("DELETE FROM publish_rows WHERE id = ?", [one]),
            ("UPDATE publish_rows SET conflict = true, conflict_with = [?] WHERE id = ?", [other, one]),
        ]
        con.execute("BEGIN")
        con.execute(*rng.choice(edits))
        kept = pack_view_digests(con).get(scope) == before_digest
        if kept:
            assert pack(scope) == before_pack, (scope, one)
        outcomes["kept" if kept else "changed"] += 1
        con.execute("ROLLBACK")
    assert outcomes["kept"] >= 50 and outcomes["changed"] >= 50, outcomes
    assert pack_view_digests(con) == before_digests  # the rollbacks left the rows every edit started from
