"""Publish targets (issue 38.4): LanceDB, Qdrant (local mode) and Chroma follow every publish with
the lake's own vectors, only what changed is written, and a failing target never blocks the lake.

One lake is built per module (real ingest, index with the embedding models, publish v1); each test
takes its own copy. What a target must hold is computed here from the published files alone
(`expected`), not by the code under test."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from memory_lake import InputError, Lake, write_snapshot
from memory_lake.maintain import enforce_tiers, forget
from memory_lake.observe import run_digest, run_nightly_steps
from memory_lake.store.policy import Policy
from memory_lake.targets import base, open_target, sync_targets, target_status
from memory_lake.targets.lancedb import LanceDBTarget

from ..conftest import AS_OF, copy_lake, write_jsonl

pytestmark = pytest.mark.models  # the module's lake is indexed with the embedding models

MODEL = "all-MiniLM-L6-v2"
KINDS = ("lancedb", "qdrant", "chroma")
SPELT = {"lancedb": "table", "qdrant": "collection", "chroma": "collection"}


def memory(id_, content, user="alice", **extra):
    return {"id": id_, "tenant": "acme", "agent_id": "bot", "user_id": user, "type": "fact", "content": content,
            "created_at": "2026-11-29T09:00:00Z", **extra}


RECORDS = [
    memory("m1", "Alice prefers window seats on long flights"),
    memory("m2", "Alice is allergic to peanuts and carries an EpiPen"),
    memory("m3", "The quarterly report is due on the first Friday of March"),
    memory("m4", "Alice's cat is called Biscuit"),
    memory("m5", "Alice runs five kilometres every Tuesday morning"),
    memory("m5b", "Alice runs five kilometres every Tuesday morning", created_at="2026-11-29T09:30:00Z"),  # a copy
    memory("m6", "Alice's sister lives in Lisbon", created_at="2026-11-29T09:00:00.250000Z"),
    memory("zh1", "用户喜欢喝乌龙茶"),  # MiniLM does not cover Chinese: no vector of the lake's model
    memory("n1", "The team stand-up moved to 9:30", user=None),
    memory("n2", "Deploys are frozen during the holiday week", user=None, tier="long_term"),
    {"id": "g1", "tenant": "globex", "content": "Globex invoices are paid within 30 days", "type": "fact",
     "created_at": "2026-11-29T10:00:00Z"},
    memory("gone", "An archived note about an old printer", status="archived"),
]


@pytest.fixture(scope="module")
def published_lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("targets") / "lake"
    lake = Lake.init(root)
    lake.ingest([write_jsonl(root.parent / "s.jsonl", RECORDS)], as_of=AS_OF)
    lake.index(as_of=AS_OF)
    assert lake.publish(as_of=AS_OF).details["version"] == "v1"
    return root


@pytest.fixture
def lake(published_lake, tmp_path) -> Lake:
    return copy_lake(published_lake, tmp_path / "lake")


def target_config(kind: str, name: str | None = None) -> dict:
    return {"kind": kind, "name": name or f"{kind}-main", "path": f"vectors/{kind}", SPELT[kind]: "agent-memories"}


def with_targets(lake, *configs: dict) -> Policy:
    return lake.policy.with_overrides({"targets": list(configs)})


def iso_text(ts: datetime) -> str:
    return ts.astimezone(timezone.utc).replace(tzinfo=None).isoformat() + "Z"


def expected(lake) -> dict[str, dict]:
    """What a target must hold now: CURRENT's active and conflicted memories that have a vector of
    MODEL in the same version, each with its text, metadata and vector."""
    version = (lake.exports / "CURRENT").resolve()
    memories = pl.read_parquet(version / "memories.parquet").filter(pl.col("status").is_in(["active", "conflicted"]))
    vectors = pl.read_parquet(version / "tables" / "embeddings" / "*.parquet").filter(
        (pl.col("model") == MODEL) & (pl.col("vector").list.len() > 0))
    rows = memories.join(vectors.select(pl.col("text_hash").alias("content_hash"), "vector"), on="content_hash")
    return {r["id"]: {"content": r["content"], "tenant": r["tenant"], "agent_id": r["agent_id"], "user_id": r["user_id"],
                      "tier": r["tier"], "type": r["type"], "status": r["status"],
                      "created_at": iso_text(r["created_at"]), "updated_at": iso_text(r["updated_at"]),
                      "version": r["version"], "vector": np.asarray(r["vector"], dtype=np.float32)}
            for r in rows.iter_rows(named=True)}


def held_rows(lake, policy) -> dict[str, dict]:
    target = open_target(policy.targets[0], lake.root)
    try:
        frame = target.dump()
    finally:
        target.close()
    return {r["id"]: {**{k: v for k, v in r.items() if k != "id"},
                      "vector": np.asarray(r["vector"], dtype=np.float32)} for r in frame.iter_rows(named=True)}


def assert_level(lake, policy, written_from: set[str]) -> dict[str, dict]:
    """The target holds exactly the expected rows (ids, texts, metadata, vectors); each row's
    export_version is one of `written_from`; returns what it holds."""
    want, held = expected(lake), held_rows(lake, policy)
    assert sorted(held) == sorted(want)
    for id_, row in held.items():
        assert {k: v for k, v in row.items() if k not in ("vector", "export_version", "digest")} == \
            {k: v for k, v in want[id_].items() if k != "vector"}, id_
        assert np.allclose(row["vector"], want[id_]["vector"], atol=1e-6), id_
        assert row["export_version"] in written_from and len(row["digest"]) == 64
    return held


class Spy:
    """A target that counts what reaches the store."""

    def __init__(self, target, calls):
        self._target, self._calls = target, calls
        self.kind, self.name = target.kind, target.name

    def __getattr__(self, name):
        return getattr(self._target, name)

    def write(self, rows):
        self._calls["written"] += rows.height
        self._target.write(rows)

    def delete(self, ids):
        self._calls["deleted"] += len(ids)
        self._target.delete(ids)


@pytest.fixture
def store_calls(monkeypatch) -> dict[str, int]:
    calls = {"written": 0, "deleted": 0}
    real = base.open_target
    monkeypatch.setattr(base, "open_target", lambda config, root: Spy(real(config, root), calls))
    return calls


def sync_once(lake, policy, calls) -> dict:
    calls.update(written=0, deleted=0)
    report = sync_targets(lake, AS_OF, policy)
    assert report.errors == []
    (result,) = report.details["targets"]
    assert (result["written"], result["deleted"]) == (calls["written"], calls["deleted"])  # counted as sent
    return result


# ------------------------------------------------------------------------------------------ each kind


@pytest.mark.parametrize("kind", KINDS)
def test_a_target_equals_the_published_set_after_each_publish_and_an_unchanged_lake_writes_nothing(
        lake, kind, store_calls):
    policy = with_targets(lake, target_config(kind))
    published = len(expected(lake))

    first = sync_once(lake, policy, store_calls)
    assert {k: first[k] for k in ("state", "version", "written", "deleted", "scopes", "held", "published",
                                  "not_covered", "model")} == {
        "state": "synced", "version": "v1", "written": published, "deleted": 0, "scopes": 3, "held": published,
        "published": published, "not_covered": 1, "model": MODEL}
    assert_level(lake, policy, {"v1"})
    assert "zh1" not in held_rows(lake, policy) and "gone" not in held_rows(lake, policy)
    again = sync_once(lake, policy, store_calls)
    assert (again["state"], store_calls) == ("in_sync", {"written": 0, "deleted": 0})

    # edit (new text and a tier), an expiry, a forget and a merge, then the next publish
    later = AS_OF + timedelta(hours=1)
    lake.edit("m1", content="Alice prefers aisle seats on long flights", as_of=later)
    lake.edit("m2", tier="important", as_of=later)
    lake.edit("m3", expires_at="2026-11-30T00:30:00Z", as_of=later)
    assert enforce_tiers(lake, later + timedelta(minutes=5)).counts["expire"] == 1
    forget(lake, ids="m4", reason="the user asked", as_of=later)
    assert lake.dedup(as_of=later).counts["merged"] == 1  # m5b into m5
    lake.index(as_of=later)
    assert lake.publish(as_of=later + timedelta(minutes=10)).details["version"] == "v2"
    gone = {"m3", "m4", "m5b"}  # expired, forgotten, merged into m5
    assert not gone & set(expected(lake))

    second = sync_once(lake, policy, store_calls)
    assert (second["state"], second["version"], second["written"], second["deleted"]) == ("synced", "v2", 2, 3)
    held = assert_level(lake, policy, {"v1", "v2"})
    assert held["m1"]["content"] == "Alice prefers aisle seats on long flights" and held["m1"]["version"] == 2
    assert held["m2"]["tier"] == "important"
    assert {i for i, r in held.items() if r["export_version"] == "v2"} == {"m1", "m2"}
    assert not gone & set(held)
    again = sync_once(lake, policy, store_calls)
    assert (again["state"], store_calls) == ("in_sync", {"written": 0, "deleted": 0})


@pytest.mark.parametrize("kind", KINDS)
def test_a_target_that_lost_rows_or_holds_strangers_is_brought_level(lake, kind, store_calls):
    policy = with_targets(lake, target_config(kind))
    sync_once(lake, policy, store_calls)
    target = open_target(policy.targets[0], lake.root)
    try:
        target.delete(["m2", "n1"])  # lost by hand
        stranger = target.dump().filter(pl.col("id") == "m1").with_columns(id=pl.lit("not-ours"), digest=pl.lit(None))
        target.write(stranger)
    finally:
        target.close()
    status = target_status(lake, policy)["targets"][0]
    assert {k: status[k] for k in ("state", "to_write", "to_delete")} == {"state": "behind", "to_write": 2, "to_delete": 1}
    result = sync_once(lake, policy, store_calls)
    assert (result["written"], result["deleted"]) == (2, 1)
    assert_level(lake, policy, {"v1"})
    assert target_status(lake, policy)["targets"][0]["state"] == "in_sync"


# ------------------------------------------------------------------------------------------ failures


def test_a_target_that_raises_in_the_nightly_never_blocks_the_publish_and_the_next_run_brings_it_level(
        lake, tmp_path, monkeypatch):
    (lake.root / "memory-lake.toml").write_text(
        '[[targets]]\nkind = "lancedb"\nname = "agents"\npath = "vectors/lancedb"\ntable = "agent-memories"\n\n'
        '[[targets]]\nkind = "chroma"\nname = "side"\npath = "vectors/chroma"\n', encoding="utf-8")
    lake = Lake.open(lake.root)
    write_snapshot([memory("m7", "Alice booked a table at the harbour restaurant")], lake.root)

    def full_disk(self, rows):
        raise OSError("No space left on device")

    monkeypatch.setattr(LanceDBTarget, "write", full_disk)
    night = datetime(2026, 12, 1, 3, 2)
    summary = run_nightly_steps(lake, night, reports_dir=tmp_path / "reports")
    assert (summary["status"], summary["publish"]["status"], summary["publish"]["version"]) == (
        "degraded", "published", "v2")
    assert summary["steps"]["sync_targets"]["summary"] == (
        f"2 targets, {len(expected(lake))} rows written, 0 rows deleted, 1 target failed; 1 skipped after an error "
        "(the whole step (target agents): OSError: No space left on device)")
    assert [{k: e[k] for k in ("step", "item", "error")} for e in summary["errors"]] == [
        {"step": "sync_targets", "item": "target agents", "error": "OSError: No space left on device"}]
    assert ("- sync_targets, the whole step (target agents): OSError: No space left on device"
            in run_digest(lake, summary)["markdown"])
    page = Path(summary["report"]).read_text(encoding="utf-8")
    assert "target agents" in page and "OSError: No space left on device" in page
    recorded = json.loads(lake.sql("SELECT report FROM runs WHERE run_id = ?", [summary["run_id"]]).rows()[0][0])
    assert recorded["steps"]["sync_targets"]["counts"] == {"targets": 2, "written": len(expected(lake)), "deleted": 0,
                                                           "failed": 1}
    assert (lake.root / "exports" / "CURRENT").resolve().name == "v2"  # the lake published all the same
    agents = with_targets(lake, target_config("lancedb", "agents"))  # the same target as the file's
    assert held_rows(lake, agents) == {}
    status = {t["name"]: t["state"] for t in target_status(lake)["targets"]}
    assert status == {"agents": "behind", "side": "in_sync"}

    monkeypatch.undo()  # the disk has room again: the next run brings the target level
    summary = run_nightly_steps(lake, night + timedelta(days=1), reports_dir=tmp_path / "reports")
    assert summary["status"] == "ok", summary.get("errors")
    assert_level(lake, agents, {(lake.exports / "CURRENT").resolve().name})
    assert {t["name"]: t["state"] for t in target_status(lake)["targets"]} == {"agents": "in_sync", "side": "in_sync"}


def test_nothing_configured_or_nothing_published_writes_nothing(tmp_path):
    fresh = Lake.init(tmp_path / "fresh")
    assert sync_targets(fresh, AS_OF).as_dict()["summary"] == "nothing to do"
    policy = with_targets(fresh, target_config("lancedb"))
    report = sync_targets(fresh, AS_OF, policy)
    assert [(t["name"], t["state"]) for t in report.details["targets"]] == [("lancedb-main", "nothing_published")]
    assert not (fresh.root / "vectors").exists()


def test_a_target_of_another_dimension_fails_alone_and_says_what_to_do(lake):
    policy = with_targets(lake, target_config("lancedb", "a"), target_config("chroma", "b"))
    sync_targets(lake, AS_OF, policy)
    other = lake.policy.with_overrides({"targets": [{**target_config("lancedb", "a"), "model": "use-multilingual-v3"},
                                                    target_config("chroma", "b")]})
    report = sync_targets(lake, AS_OF, other)
    a, b = report.details["targets"]
    assert (a["state"], a["error"]) == ("failed", "TargetError: target a holds 384-d vectors and model "
                                                  "use-multilingual-v3 gives 512-d: name another table or collection "
                                                  "for this model (or remove the old one)")
    assert a["action"].startswith("fix the cause") and b["state"] == "in_sync"
    typo = sync_targets(lake, AS_OF, lake.policy.with_overrides(
        {"targets": [{**target_config("chroma", "b"), "model": "all-MiniLM-L6-v3"}]})).details["targets"][0]
    assert (typo["state"], typo["error"]) == (  # a model with no vectors would have emptied the target
        "failed", "TargetError: target b: model = 'all-MiniLM-L6-v3' is not one of the lake's models "
                  "(all-MiniLM-L6-v2, use-multilingual-v3; [search] model and multilingual_model), so it has no "
                  "vectors to send")
    assert len(held_rows(lake, with_targets(lake, target_config("chroma", "b")))) == len(expected(lake))


# ------------------------------------------------------------------------------------------ policy


@pytest.mark.parametrize("targets, message", [
    ({"kind": "lancedb"}, "[targets]: write each target as a [[targets]] table"),
    ([{"kind": "pinecone", "name": "x", "path": "p"}], "[[targets]] #1 (x) kind = 'pinecone': one of lancedb, qdrant, chroma"),
    ([{"kind": "lancedb", "name": "x", "path": "p", "collection": "abc"}],
     "[[targets]] #1 (x): unknown key(s) collection (a lancedb target names its table: write table)"),
    ([{"kind": "chroma", "name": "x"}], "[[targets]] #1 (x): needs a path"),
    ([{"kind": "qdrant", "name": "x", "path": "p", "url": "http://localhost:6333"}],
     "[[targets]] #1 (x): needs a path or a url (not both)"),
    ([{"kind": "chroma", "name": "x", "url": "http://localhost:8000"}], "[[targets]] #1 (x) url: only a qdrant target"),
    ([{"kind": "qdrant", "name": "x", "url": "ftp://example.org/"}], "[[targets]] #1 (x) url is not an http(s) URL"),
    ([{"kind": "chroma", "name": "x", "path": "p", "collection": "m"}], "[[targets]] #1 (x) collection = 'm': 3 to 63"),
    ([{"kind": "lancedb", "name": "x", "path": "a"}, {"kind": "chroma", "name": "x", "path": "b"}],
     "[[targets]] #2 (x) name = 'x': two targets have this name"),
])
def test_a_bad_target_is_refused_when_the_policy_is_read_naming_the_key(targets, message):
    with pytest.raises(InputError) as refused:
        Policy().with_overrides({"targets": targets})
    assert str(refused.value).startswith(message)


def toml_of(targets) -> str:
    """The ``targets`` of a memory-lake.toml: a list as [[targets]] tables, a dict as one [targets] table."""
    def table(header: str, values: dict) -> str:
        return header + "\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())
    if isinstance(targets, dict):
        return table("[targets]", targets)
    return "\n".join(table("[[targets]]", t) for t in targets)


@pytest.mark.parametrize("targets, entry, message", [
    ({"kind": "lancedb"}, "[targets]", "[targets]: write each target as a [[targets]] table"),
    ([{"kind": "pinecone", "name": "x", "path": "p"}], "[[targets]] #1 (x)",
     "[[targets]] #1 (x) kind = 'pinecone': one of lancedb, qdrant, chroma"),
    ([{"kind": "chroma", "path": "p"}], "[[targets]] #1", "[[targets]] #1 name = '': a name of letters, digits"),
    ([{"kind": "lancedb", "name": "x", "path": "a"}, {"kind": "chroma", "name": "x", "path": "b"}], "[[targets]] #2 (x)",
     "[[targets]] #2 (x) name = 'x': two targets have this name"),
])
def test_a_bad_target_in_the_file_is_kept_aside_naming_the_file_and_the_entry(tmp_path, targets, entry, message):
    """A stranger: one bad [[targets]] entry failed every command. The policy loads; the entry is kept
    with its error (the file, the entry, what is wrong) for what uses targets; the good ones stay."""
    from memory_lake.store import InvalidTarget
    from memory_lake.store.policy import TargetPolicy, load_policy

    config = tmp_path / "memory-lake.toml"
    config.write_text('[tiers]\nworking_capacity = 30\n\n' + toml_of(targets), encoding="utf-8")
    policy = load_policy(tmp_path)
    assert policy.tiers.working_capacity == 30
    assert list(policy.targets) == ([TargetPolicy(kind="lancedb", name="x", path="a")] if len(targets) == 2 else [])
    (bad,) = policy.invalid_targets
    assert isinstance(bad, InvalidTarget) and (bad.entry, bad.name) == (entry, "x" if "(x)" in entry else None)
    assert bad.error.startswith(f"{config}: {message}")
    fixed = policy.with_overrides({"targets": [target_config("lancedb")]})  # given explicitly: replaced
    assert (len(fixed.targets), fixed.invalid_targets) == (1, ())


def test_targets_are_lake_wide_not_per_tenant(tmp_path):
    from memory_lake.store import InvalidTarget
    from memory_lake.store.policy import load_policy

    (tmp_path / "memory-lake.toml").write_text('[tenants.acme]\n[[tenants.acme.targets]]\nkind = "lancedb"\n')
    assert load_policy(tmp_path).invalid_targets == (InvalidTarget(
        "[tenants.acme] targets", None, f"{tmp_path}/memory-lake.toml: [tenants.acme] targets: [targets] are lake-wide: "
                                        f"configure them as [[targets]] tables, not per tenant"),)
    with pytest.raises(InputError, match=r"^\[targets\] are lake-wide"):  # given explicitly: refused at once
        Policy().with_overrides({"tenants": {"acme": {"targets": []}}}).for_tenant("acme")


def test_targets_default_to_none_and_read_from_toml(tmp_path):
    from memory_lake.store.policy import TargetPolicy, load_policy

    assert Policy().targets == ()
    (tmp_path / "memory-lake.toml").write_text(
        '[[targets]]\nkind = "lancedb"\nname = "agents"\npath = "vectors/lance"\n\n'
        '[[targets]]\nkind = "qdrant"\nname = "q"\nurl = "http://localhost:6333"\ncollection = "mem"\n'
        'api_key_env = "QDRANT_API_KEY"\n')
    assert load_policy(tmp_path).targets == (
        TargetPolicy(kind="lancedb", name="agents", path="vectors/lance"),
        TargetPolicy(kind="qdrant", name="q", url="http://localhost:6333", collection="mem", api_key_env="QDRANT_API_KEY"))


# ------------------------------------------------------------------------------------------ the command


def test_the_commands_sync_and_report_each_target(lake, capsys):
    from memory_lake.cli import main

    (lake.root / "memory-lake.toml").write_text(
        '[[targets]]\nkind = "qdrant"\nname = "q"\npath = "vectors/qdrant"\n', encoding="utf-8")
    args = ("--lake", str(lake.root))
    assert main([*args, "targets", "status"]) == 0
    assert capsys.readouterr().out.startswith("q (qdrant vectors/qdrant, collection memories): behind v1: 10 to write, "
                                              "0 to delete (it holds 0, 10 published); run `memory-lake targets sync q`")
    assert main([*args, "--json", "targets", "sync", "--as-of", "2026-11-30T00:00:00Z"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["name"], report["counts"]) == ("sync_targets", {"targets": 1, "written": 10, "deleted": 0, "failed": 0})
    assert main([*args, "targets", "sync", "q"]) == 0
    assert capsys.readouterr().out == (
        "q (qdrant vectors/qdrant, collection memories): already level with v1 (10 memories), nothing written; "
        "1 published memory has no all-MiniLM-L6-v2 vector (a language the model does not cover, or not indexed "
        "yet): not sent\n")
    assert main([*args, "targets", "sync", "qq"]) == 2
    assert capsys.readouterr().err.strip() == "error: unknown target 'qq': did you mean 'q'? configured targets: q"


BAD_ENTRY = ('[[targets]]\nkind = "pinecone"\nname = "vec"\npath = "vectors/pinecone"\n\n'
             '[[targets]]\nkind = "lancedb"\nname = "agents"\npath = "vectors/lancedb"\n')


def test_a_bad_entry_fails_only_the_target_commands_and_every_other_command_warns_once(lake, capsys):
    """A stranger: one bad [[targets]] entry failed `search`, `status` and the nightly with an error
    naming the file. Now they work, with one warning; `targets status|sync` name the file, the entry
    and what is wrong, and exit 1 (the good target is synced all the same)."""
    from memory_lake.cli import main

    (lake.root / "memory-lake.toml").write_text(BAD_ENTRY, encoding="utf-8")
    config = lake.root / "memory-lake.toml"
    error = f"{config}: [[targets]] #1 (vec) kind = 'pinecone': one of lancedb, qdrant, chroma"
    args = ("--lake", str(lake.root))
    assert main([*args, "status"]) == 0
    assert capsys.readouterr().err == (
        f"warning: {error}; the target sync leaves it out and reports it as failed (`memory-lake targets status` "
        f"shows it) until memory-lake.toml is fixed\n")
    assert main([*args, "--json", "search", "window seats", "--tenant", "acme", "--user", "alice"]) == 0
    found = capsys.readouterr()
    assert json.loads(found.out)["results"][0]["id"] == "m1" and "warning" not in found.err  # once a process

    assert main([*args, "targets", "status"]) == 1
    shown = capsys.readouterr()
    fix = ("fix the entry in memory-lake.toml (see the error); the next nightly run, or `memory-lake targets sync`, "
           "brings the target level")
    assert shown.out.splitlines()[1:] == [f"INVALID: {error}; {fix}"] and shown.err == ""
    assert shown.out.startswith("agents (lancedb vectors/lancedb, table memories): behind v1")
    assert main([*args, "--json", "targets", "status", "vec"]) == 1
    assert json.loads(capsys.readouterr().out)["targets"] == [
        {"name": "vec", "entry": "[[targets]] #1 (vec)", "kind": None, "where": None, "collection": None, "model": None,
         "version": "v1", "state": "invalid", "error": error, "action": fix}]
    assert main([*args, "targets", "sync"]) == 1
    synced = capsys.readouterr().out.splitlines()
    assert synced[0].startswith("agents (lancedb vectors/lancedb, table memories): level with v1: ")
    assert synced[1:] == [f"INVALID, not synced: {error}; {fix}"]


def test_a_bad_entry_is_the_nightly_target_steps_failure_and_the_lake_publishes(lake, tmp_path):
    (lake.root / "memory-lake.toml").write_text(BAD_ENTRY, encoding="utf-8")
    lake = Lake.open(lake.root)
    write_snapshot([memory("m7", "Alice booked a table at the harbour restaurant")], lake.root)
    summary = run_nightly_steps(lake, datetime(2026, 12, 1, 3, 2), reports_dir=tmp_path / "reports")
    assert (summary["status"], summary["publish"]["status"], summary["publish"]["version"]) == (
        "degraded", "published", "v2")
    error = f"InputError: {lake.root}/memory-lake.toml: [[targets]] #1 (vec) kind = 'pinecone': one of lancedb, qdrant, chroma"
    assert [{k: e[k] for k in ("step", "item", "error")} for e in summary["errors"]] == [
        {"step": "sync_targets", "item": "[[targets]] #1 (vec)", "error": error}]
    assert summary["steps"]["sync_targets"]["summary"] == (
        f"2 targets, {len(expected(lake))} rows written, 0 rows deleted, 1 target failed; 1 skipped after an error "
        f"(the whole step ([[targets]] #1 (vec)): {error})")
    assert f"- sync_targets, the whole step ([[targets]] #1 (vec)): {error}" in run_digest(lake, summary)["markdown"]
    assert (lake.root / "exports" / "CURRENT").resolve().name == "v2"
    agents = with_targets(lake, {"kind": "lancedb", "name": "agents", "path": "vectors/lancedb"})  # the file's good one
    assert_level(lake, agents, {"v2"})
