"""`load_export` (publish/load.py, issue 18), read whole on a small published lake: which memories a
scope loads and in which order, their timestamps as text, and every way of naming a version and
every refusal in full. The lake is built and published once per module; a test that changes its
exports works on a copy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memory_lake import InputError, Lake, LakeNotFound, load_export
from memory_lake.publish import UnknownExportFormat, UnknownScope, contract, publish

from ..conftest import AS_OF, write_jsonl

BOT_ALICE = ("bot", "alice")


def _memory(id_: str, agent, user, tier="short_term", importance=0.5, last="2026-11-20T00:00:00Z", **fields) -> dict:
    return {"id": id_, "tenant": "acme", "agent_id": agent, "user_id": user, "tier": tier, "importance": importance,
            "content": f"memory {id_}", "created_at": "2026-11-01T00:00:00Z", "last_accessed_at": last, **fields}


@pytest.fixture(scope="module")
def lake_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("load") / "lake"
    lake = Lake.init(root)
    records = [
        _memory("h1", "helper", "alice"),
        _memory("x1", "bot", "bob"),
        _memory("l1", *BOT_ALICE, tier="long_term", importance=0.99),
        _memory("s2", *BOT_ALICE, importance=0.3),
        _memory("s1", *BOT_ALICE, importance=0.7),
        _memory("w2", *BOT_ALICE, tier="working", last="2026-11-20T08:15:00.250Z"),
        _memory("w1", *BOT_ALICE, tier="working", last="2026-11-20T08:15:00.250Z"),
        _memory("i1", *BOT_ALICE, tier="important", importance=0.9, last="2026-11-20T00:00:00Z"),
        _memory("i2", *BOT_ALICE, tier="important", importance=0.9, last="2026-11-25T00:00:00Z"),
        _memory("a1", *BOT_ALICE, status="archived"),
        _memory("b0", "bot", None, tier="long_term"),
        _memory("n1", None, None, tier="working"),
        _memory("o1", "old", "carl", status="dormant"),
        {**_memory("g1", "bot", "alice"), "tenant": "globex"},
    ]
    lake.ingest([write_jsonl(root.parent / "m.jsonl", records)], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"
    return root


def ids(records) -> list[tuple]:
    return [(r["agent_id"], r["user_id"], r["id"]) for r in records]


def test_a_tenant_loads_by_scope_nulls_first_then_tier_importance_last_use_and_id(lake_dir):
    assert ids(load_export(lake_dir, tenant="acme")) == [
        (None, None, "n1"), ("bot", None, "b0"),
        ("bot", "alice", "i2"), ("bot", "alice", "i1"), ("bot", "alice", "w1"), ("bot", "alice", "w2"),
        ("bot", "alice", "s1"), ("bot", "alice", "s2"), ("bot", "alice", "l1"),
        ("bot", "bob", "x1"), ("helper", "alice", "h1")]


def test_agent_and_user_narrow_the_scope_each_on_its_own(lake_dir):
    assert ids(load_export(lake_dir, tenant="acme", agent="bot", user="alice")) == [
        ("bot", "alice", i) for i in ("i2", "i1", "w1", "w2", "s1", "s2", "l1")]
    assert ids(load_export(lake_dir, tenant="acme", agent="bot")) == [
        ("bot", None, "b0"), *[("bot", "alice", i) for i in ("i2", "i1", "w1", "w2", "s1", "s2", "l1")],
        ("bot", "bob", "x1")]
    assert ids(load_export(lake_dir, tenant="acme", user="alice")) == [
        *[("bot", "alice", i) for i in ("i2", "i1", "w1", "w2", "s1", "s2", "l1")], ("helper", "alice", "h1")]
    assert ids(load_export(lake_dir, tenant="globex", agent="bot", user="alice")) == [("bot", "alice", "g1")]
    # a scope whose memories are all dormant or archived is published: it loads [], no error
    assert load_export(lake_dir, tenant="acme", agent="old", user="carl") == []


def test_a_record_is_the_scope_then_the_memory_json_record_with_iso_times(lake_dir):
    (record,) = [r for r in load_export(lake_dir, tenant="acme", agent="bot", user="alice") if r["id"] == "w1"]
    assert list(record) == list(contract.LOAD_COLUMNS)
    assert {k: record[k] for k in ("tenant", "agent_id", "user_id", "tier", "content", "created_at",
                                   "last_accessed_at", "expires_at", "status", "extra")} == {
        "tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "working", "content": "memory w1",
        "created_at": "2026-11-01T00:00:00Z", "last_accessed_at": "2026-11-20T08:15:00.250000Z", "expires_at": None,
        "status": "active", "extra": None}
    document = json.loads((lake_dir / "exports" / "v1" / "scopes" / "acme" / "bot" / "alice" / "memory.json")
                          .read_text(encoding="utf-8"))
    loaded = load_export(lake_dir, tenant="acme", agent="bot", user="alice")
    assert [{k: v for k, v in r.items() if k not in contract.SCOPE_FIELDS} for r in loaded] == document["memories"]
    frame = load_export(lake_dir, tenant="acme", agent="bot", user="alice", as_frame=True)
    assert frame["id"].to_list() == [r["id"] for r in loaded]
    assert str(frame.filter(id="w1")["last_accessed_at"][0]) == "2026-11-20 08:15:00.250000+00:00"


@pytest.mark.parametrize(("scope", "message"), [
    ({"tenant": "acm"}, "unknown tenant 'acm': did you mean 'acme'? known tenants: acme, globex"),
    ({"tenant": "acme", "agent": "bott"}, "unknown agent 'bott': did you mean 'bot'? known agents in tenant 'acme': "
                                         "bot, helper, old"),
    ({"tenant": "acme", "agent": "helper", "user": "bob"},
     "unknown user 'bob': known users in tenant 'acme', agent 'helper': alice"),
    ({"tenant": "acme", "user": "caral"},
     "unknown user 'caral': did you mean 'carl'? known users in tenant 'acme': alice, bob, carl"),
    ({"tenant": "globex", "agent": "helper"}, "unknown agent 'helper': known agents in tenant 'globex': bot"),
])
def test_an_unknown_name_is_refused_with_the_names_in_its_scope(lake_dir, scope, message):
    with pytest.raises(UnknownScope) as unknown:
        load_export(lake_dir, **scope)
    assert str(unknown.value) == message + " (load_export(..., missing_ok=True) loads [] for a scope with no memory yet)"
    assert load_export(lake_dir, **scope, missing_ok=True) == []


def test_a_version_by_name_number_or_folder_and_every_path_form(lake_dir, tmp_path, monkeypatch):
    exports = tmp_path / "lake" / "exports"
    shutil.copytree(lake_dir / "exports", exports, symlinks=True)
    for name in ("v9", "v10"):
        shutil.copytree(exports / "v1", exports / name)
    shutil.copytree(exports / "v1", exports / "vx")
    (exports / "v11").mkdir()  # no manifest: not a version
    expected = ids(load_export(lake_dir, tenant="globex"))
    for path, version in ((exports.parent, None), (exports, None), (exports / "v10", None), (exports.parent, 10),
                          (exports.parent, "10"), (exports.parent, "v9"), (exports, "vx")):
        assert ids(load_export(path, tenant="globex", version=version)) == expected, (path, version)
    monkeypatch.chdir(tmp_path)
    assert ids(load_export(tenant="globex")) == expected  # ./lake
    monkeypatch.setenv("MEMORY_LAKE_DIR", str(exports / "v9"))
    assert ids(load_export(tenant="globex")) == expected
    for version in (7, "7", "v7"):
        with pytest.raises(InputError) as missing:
            load_export(exports, tenant="globex", version=version)
        assert str(missing.value) == f"no published version 'v7' under {exports}; kept versions: vx, v1, v9, v10"
    for version in (True, 1.0, ["v1"]):
        with pytest.raises(InputError) as wrong:
            load_export(exports, tenant="globex", version=version)
        assert str(wrong.value) == f"version must be a version's name such as 'v3' (or its number), not {version!r}"


def test_a_version_without_a_readable_manifest_or_in_an_unknown_format_is_refused(lake_dir, tmp_path):
    exports = tmp_path / "exports"
    shutil.copytree(lake_dir / "exports", exports, symlinks=True)
    manifest = exports / "v1" / "manifest.json"
    found = json.loads(manifest.read_text(encoding="utf-8"))
    for version in ("0.9.0", "2.0.0", None, "one"):
        manifest.write_text(json.dumps({**found, "format_version": version}))
        with pytest.raises(UnknownExportFormat) as refused:
            load_export(exports, tenant="acme")
        assert str(refused.value) == (
            f"{exports / 'v1'} has export format_version {version!r}; this memory-lake reads format 1.x "
            f"({contract.FORMAT_VERSION}): upgrade memory-lake, or load a version published by this one")
    manifest.write_text(json.dumps({**found, "format_version": "1.7.2"}))  # a newer minor: read
    assert ids(load_export(exports, tenant="globex")) == [("bot", "alice", "g1")]
    manifest.write_text("{not json")
    with pytest.raises(InputError) as unreadable:
        load_export(exports / "v1", tenant="acme", version=None)
    assert str(unreadable.value).startswith(f"{exports / 'v1'} has no readable manifest.json (")
    assert str(unreadable.value).endswith("); it is not a published version")


def test_an_exports_folder_is_known_by_its_current_link_or_its_name(lake_dir, tmp_path):
    """A copy of the exports folder under another name is still read through its CURRENT; a folder
    named exports with nothing published says so (it is not mistaken for a lake holding exports/)."""
    published = tmp_path / "published"
    shutil.copytree(lake_dir / "exports", published, symlinks=True)
    assert ids(load_export(published, tenant="globex")) == [("bot", "alice", "g1")]
    assert ids(load_export(published, tenant="globex", version=1)) == [("bot", "alice", "g1")]
    exports = tmp_path / "exports"
    shutil.copytree(lake_dir / "exports", exports, symlinks=True)
    (exports / "CURRENT").unlink()
    assert ids(load_export(exports, tenant="globex", version="v1")) == [("bot", "alice", "g1")]
    with pytest.raises(InputError) as unpublished:
        load_export(exports, tenant="globex")
    assert str(unpublished.value) == (
        f"nothing is published under {exports}: no exports/CURRENT (run `memory-lake publish` or the nightly run "
        f"first, or pass the lake's folder)")


def test_a_tier_this_reader_does_not_know_sorts_after_the_known_ones(lake_dir, tmp_path):
    """A newer 1.x writer may add a tier: the reader still loads the scope, that tier last."""
    import polars as pl

    exports = tmp_path / "exports"
    shutil.copytree(lake_dir / "exports", exports, symlinks=True)
    parquet = exports / "v1" / "memories.parquet"
    frame = pl.read_parquet(parquet)
    frame.with_columns(tier=pl.when(pl.col("id") == "i1").then(pl.lit("pinned")).otherwise("tier")).write_parquet(parquet)
    loaded = load_export(exports, tenant="acme", agent="bot", user="alice")
    assert [(r["id"], r["tier"]) for r in loaded] == [
        ("i2", "important"), ("w1", "working"), ("w2", "working"), ("s1", "short_term"), ("s2", "short_term"),
        ("l1", "long_term"), ("i1", "pinned")]


def test_a_version_is_a_name_never_a_path_and_a_tenant_is_required(lake_dir, tmp_path):
    # issue 37.8: version="../../other/exports/v1" read another lake's export, and tenant=None
    # loaded [] (an agent takes that for "no memory yet")
    other = tmp_path / "other" / "lake"
    Lake.init(other)
    shutil.copytree(lake_dir / "exports" / "v1", other / "exports" / "v1")
    sneaky = f"../../../{other.relative_to(other.anchor)}/exports/v1"
    for version in (sneaky, "../v1", "v1/../v1", "..", "v1\\..\\..\\x"):
        with pytest.raises(InputError) as raised:
            load_export(lake_dir, tenant="acme", version=version)
        assert str(raised.value) == f"version must be a version's name such as 'v3' (or its number), not {version!r}"
    for tenant in (None, ""):
        with pytest.raises(InputError) as raised:
            load_export(lake_dir, tenant=tenant)
        assert str(raised.value) == f"load_export needs the tenant whose memories to load (a non-empty name), not {tenant!r}"
