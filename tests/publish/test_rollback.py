"""Rollback and retention (publish/rollback.py, issue 18): CURRENT goes back atomically with who
and why recorded, the next publish goes forward again, the newest versions are kept, and a rollback
never brings forgotten text back."""

from __future__ import annotations

import json
import os
from datetime import timedelta

import pytest

from memory_lake import InputError, Lake, load_export
from memory_lake.cli import main
from memory_lake.maintain import forget
from memory_lake.publish import publish
from memory_lake.store import Policy

from ..conftest import AS_OF, rows, write_jsonl


def night(lake, tmp_path, day: int, *contents: str):
    lake.ingest([write_jsonl(tmp_path / f"d{day}.jsonl", [
        {"id": f"m-{day}-{i}", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "content": text,
         "created_at": "2026-11-01T00:00:00Z"} for i, text in enumerate(contents)])], as_of=AS_OF + timedelta(days=day))
    return publish(lake, AS_OF + timedelta(days=day)).details


def test_rollback_switches_current_records_who_and_why_and_the_next_run_goes_forward(lake, tmp_path):
    assert night(lake, tmp_path, 0, "likes tea")["version"] == "v1"
    v2 = night(lake, tmp_path, 1, "likes coffee")
    assert v2["version"] == "v2"

    done = lake.rollback(reason="v2 came from a bad snapshot", by="ops-anna", as_of=AS_OF + timedelta(days=1, hours=2))
    assert {k: v for k, v in done.items() if k != "run_id"} == {
        "from": "v2", "to": "v1", "by": "ops-anna", "reason": "v2 came from a bad snapshot",
        "as_of": "2026-12-01T02:00:00Z"}
    assert os.readlink(lake.exports / "CURRENT") == "v1"
    assert [r["content"] for r in load_export(lake.root, tenant="acme")] == ["likes tea"]
    assert rows(lake, "SELECT from_version, to_version, rolled_back_by, reason FROM rollbacks") == [
        {"from_version": 2, "to_version": 1, "rolled_back_by": "ops-anna", "reason": "v2 came from a bad snapshot"}]

    listing = lake.publishes()
    assert listing["current"] == "v1"
    assert [(v["version"], v["current"], v["previous"], v["checks_passed"] == v["checks_total"] > 10, v["failed"])
            for v in listing["versions"]] == [("v2", False, "v1", True, []), ("v1", True, None, True, [])]
    assert listing["versions"][0]["counts"]["rows"] == 2 and listing["versions"][0]["format_version"] == "1.4.0"
    assert [(r["from_version"], r["to_version"], r["rolled_back_by"]) for r in listing["rollbacks"]] == [
        ("v2", "v1", "ops-anna")]

    # the lake is as it was: the next publish goes forward again, as a new number, v2 kept
    forward = publish(lake, AS_OF + timedelta(days=2)).details
    assert (forward["status"], forward["version"], forward["current"]) == ("published", "v3", "v3")
    manifests = {v: json.loads((lake.exports / v / "manifest.json").read_text()) for v in ("v2", "v3")}
    assert manifests["v3"]["content_hash"] == manifests["v2"]["content_hash"] and manifests["v3"]["previous"] == "v1"
    assert sorted(p.name for p in lake.exports.iterdir()) == ["CURRENT", "v1", "v2", "v3"]


def test_rollback_refusals_change_nothing(lake, tmp_path):
    with pytest.raises(InputError, match="nothing is published yet"):
        lake.rollback(reason="x", by="me", as_of=AS_OF)
    night(lake, tmp_path, 0, "likes tea")
    with pytest.raises(InputError, match=r"no version older than CURRENT \(v1\) is kept; kept versions: v1"):
        lake.rollback(reason="x", by="me", as_of=AS_OF)
    night(lake, tmp_path, 1, "likes coffee")
    with pytest.raises(InputError, match=r"version 'v9' is not kept; kept versions: v1, v2"):
        lake.rollback("v9", reason="x", by="me", as_of=AS_OF)
    with pytest.raises(InputError, match="CURRENT already points at v2"):
        lake.rollback("2", reason="x", by="me", as_of=AS_OF)
    with pytest.raises(InputError, match="needs a reason"):
        lake.rollback(reason=" ", by="me", as_of=AS_OF)
    assert os.readlink(lake.exports / "CURRENT") == "v2"
    assert rows(lake, "SELECT count(*) AS n FROM rollbacks") == [{"n": 0}]


def test_the_cli_lists_versions_and_rolls_back(lake, tmp_path, capsys, monkeypatch):
    night(lake, tmp_path, 0, "likes tea")
    night(lake, tmp_path, 1, "likes coffee")
    monkeypatch.setenv("USER", "ops-ben")
    assert main(["--lake", str(lake.root), "rollback", "--reason", "bad night", "--as-of", "2026-12-01T03:00:00Z"]) == 0
    assert capsys.readouterr().out == ("CURRENT v2 -> v1 (by ops-ben: bad night); the next publish goes forward again\n")
    assert main(["--lake", str(lake.root), "publishes", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [(v["version"], v["current"]) for v in listing["versions"]] == [("v2", False), ("v1", True)]
    assert listing["rollbacks"][0]["rolled_back_by"] == "ops-ben"
    assert main(["--lake", str(lake.root), "publishes"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1].startswith("* v1  as_of 2026-11-30T00:00:00Z  rows 1  format 1.4.0  checks 16/16 passed")
    assert text[2] == "rollback v2 -> v1 at 2026-12-01T03:00:00Z by ops-ben: bad night"
    assert main(["--lake", str(lake.root), "rollback", "v7", "--reason", "x"]) == 2
    assert capsys.readouterr().err.strip() == "error: version 'v7' is not kept; kept versions: v1, v2"


def test_retention_keeps_the_newest_versions_and_always_current(lake, tmp_path):
    keep = Policy().publish.keep_versions
    for day in range(keep + 2):
        night(lake, tmp_path, day, f"memory of day {day}")
    assert sorted(p.name for p in lake.exports.iterdir()) == ["CURRENT"] + sorted(f"v{n}" for n in range(3, keep + 3))
    lake.rollback("v3", reason="test", by="me", as_of=AS_OF + timedelta(days=10))
    for day in range(10, 10 + keep):
        night(lake, tmp_path, day, f"memory of day {day}")
    kept = sorted(int(p.name[1:]) for p in lake.exports.iterdir() if p.name != "CURRENT")
    assert kept == list(range(keep + 3, 2 * keep + 3))  # v3 went once CURRENT moved on from it


def test_a_rollback_never_brings_forgotten_text_back(lake, tmp_path):
    night(lake, tmp_path, 0, "secret plan: move to Lisbon", "likes tea")
    night(lake, tmp_path, 1, "likes coffee")
    result = forget(lake, ids=["m-0-0"], operator="user", reason="user asked", as_of=AS_OF + timedelta(days=1))
    assert result["forgotten"] == ["m-0-0"]
    lake.rollback("v1", reason="after the forget", by="me", as_of=AS_OF + timedelta(days=1, hours=1))
    assert [r["content"] for r in load_export(lake.root, tenant="acme")] == ["likes tea"]
    leaked = [str(p) for p in lake.exports.rglob("*") if p.is_file() and b"Lisbon" in p.read_bytes()]
    assert leaked == []
    # and the next publish goes forward without it
    forward = publish(lake, AS_OF + timedelta(days=2)).details
    assert forward["version"] == "v3"
    assert sorted(r["content"] for r in load_export(lake.root, tenant="acme")) == ["likes coffee", "likes tea"]
    assert Lake.open(lake.root).sql("SELECT count(*) AS n FROM memories WHERE content LIKE '%Lisbon%'").item() == 0
