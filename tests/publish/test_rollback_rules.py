"""Rollback and the publish listing (publish/rollback.py, issue 18), read whole: a small lake with
three published versions and one blocked publish, built once per module and copied per test."""

from __future__ import annotations

import json
import os
import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from memory_lake import InputError, Lake
from memory_lake.text import redact_text
from memory_lake.publish import list_publishes, publish, rollback
from memory_lake.publish.rollback import LISTED
from memory_lake.store import Policy

from ..conftest import AS_OF, copy_lake, rows, write_jsonl

DAY = timedelta(days=1)
BLOCKED = "working within capacity per scope"


@pytest.fixture(scope="module")
def published_dir(tmp_path_factory) -> Path:
    """v1 (day 0), v2 (day 1), v3 (day 2), then a publish on day 3 blocked by a stricter policy."""
    root = tmp_path_factory.mktemp("rollback") / "lake"
    lake = Lake.init(root)
    for day in range(3):
        lake.ingest([write_jsonl(root.parent / f"d{day}.jsonl", [
            {"id": f"m-{day}", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "working",
             "content": f"memory of day {day}", "created_at": "2026-11-01T00:00:00Z",
             "last_accessed_at": "2026-11-29T00:00:00Z"}])], as_of=AS_OF + day * DAY)
        assert publish(lake, AS_OF + day * DAY).details["version"] == f"v{day + 1}"
    stricter = Policy().with_overrides({"tiers": {"working_capacity": 2, "disabled_rules": ["working_overflow"]}})
    blocked = publish(lake, AS_OF + 3 * DAY, stricter).details
    assert (blocked["status"], blocked["failed"]) == ("blocked", [BLOCKED])
    return root


@pytest.fixture
def lake(published_dir, tmp_path) -> Lake:
    return copy_lake(published_dir, tmp_path / "lake")


def manifest(lake, version: str) -> dict:
    return json.loads((lake.exports / version / "manifest.json").read_text(encoding="utf-8"))


def refused(lake, *args, **kwargs) -> str:
    """The message of a refused rollback; nothing changed (CURRENT, the rollbacks table)."""
    before = (os.readlink(lake.exports / "CURRENT"), rows(lake, "SELECT count(*) AS n FROM rollbacks"))
    with pytest.raises(InputError) as error:
        rollback(lake, *args, **{"reason": "bad night", "by": "ops", "as_of": AS_OF + 4 * DAY, **kwargs})
    assert (os.readlink(lake.exports / "CURRENT"), rows(lake, "SELECT count(*) AS n FROM rollbacks")) == before
    return str(error.value)


def test_the_listing_gives_every_kept_version_newest_first_with_its_manifest_and_checks(lake):
    (lake.exports / "v9").mkdir()  # a folder a killed publish left, without a manifest: no version
    listing = list_publishes(lake)
    assert list(listing) == ["current", "versions", "rollbacks", "blocked"]
    assert listing["current"] == "v3"
    assert [v["version"] for v in listing["versions"]] == ["v3", "v2", "v1"]
    for entry in listing["versions"]:
        found = manifest(lake, entry["version"])
        total = len(found["checks"])
        assert total > 10 and all(c["success"] for c in found["checks"])
        assert entry == {**{k: found.get(k) for k in LISTED}, "current": entry["version"] == "v3",
                         "checks_passed": total, "checks_total": total, "failed": []}
    assert [(v["previous"], v["as_of"]) for v in listing["versions"]] == [
        ("v2", "2026-12-02T00:00:00Z"), ("v1", "2026-12-01T00:00:00Z"), (None, "2026-11-30T00:00:00Z")]
    (run_id,) = [r["run_id"] for r in rows(lake, "SELECT run_id FROM publishes WHERE status = 'blocked'")]
    assert listing["blocked"] == [{"as_of": "2026-12-03T00:00:00Z", "run_id": run_id, "failed": [BLOCKED]}]
    assert listing["rollbacks"] == []


def test_a_version_whose_checks_failed_is_listed_with_them(lake):
    """A kept version's manifest records every check; one that did not pass is counted and named
    (a version rewritten by hand, or published by a memory-lake whose checks differed)."""
    path = lake.exports / "v1" / "manifest.json"
    found = manifest(lake, "v1")
    found["checks"][0]["success"] = False
    found["checks"][2]["success"] = False
    path.write_text(json.dumps(found), encoding="utf-8")
    (entry,) = [v for v in list_publishes(lake)["versions"] if v["version"] == "v1"]
    total = len(found["checks"])
    assert (entry["checks_passed"], entry["checks_total"], entry["failed"]) == (
        total - 2, total, [found["checks"][0]["expectation"], found["checks"][2]["expectation"]])
    found["checks"] = None
    path.write_text(json.dumps(found), encoding="utf-8")
    (entry,) = [v for v in list_publishes(lake)["versions"] if v["version"] == "v1"]
    assert (entry["checks_passed"], entry["checks_total"], entry["failed"]) == (0, 0, [])


def test_rollback_goes_to_the_newest_older_version_and_records_it_whole(lake):
    done = rollback(lake, reason="  v3 came from a bad snapshot  ", by="ops-anna", as_of=AS_OF + 4 * DAY)
    assert done == {"from": "v3", "to": "v2", "by": "ops-anna", "reason": "v3 came from a bad snapshot",
                    "as_of": "2026-12-04T00:00:00Z", "run_id": done["run_id"]}
    assert done["run_id"].startswith("rollback-20261204T000000-")
    assert os.readlink(lake.exports / "CURRENT") == "v2"
    assert rows(lake, "SELECT * FROM rollbacks") == [
        {"as_of": AS_OF + 4 * DAY, "from_version": 3, "to_version": 2, "rolled_back_by": "ops-anna",
         "reason": "v3 came from a bad snapshot", "run_id": done["run_id"]}]
    # and once more, by number, to the oldest: the listing has both, newest first
    again = rollback(lake, "1", reason="v2 too", by="ops-ben", as_of=AS_OF + 5 * DAY)
    assert (again["from"], again["to"]) == ("v2", "v1")
    listing = list_publishes(lake)
    assert listing["current"] == "v1"
    assert [(v["version"], v["current"]) for v in listing["versions"]] == [("v3", False), ("v2", False), ("v1", True)]
    assert listing["rollbacks"] == [
        {"as_of": "2026-12-05T00:00:00Z", "from_version": "v2", "to_version": "v1", "rolled_back_by": "ops-ben",
         "reason": "v2 too", "run_id": again["run_id"]},
        {"as_of": "2026-12-04T00:00:00Z", "from_version": "v3", "to_version": "v2", "rolled_back_by": "ops-anna",
         "reason": "v3 came from a bad snapshot", "run_id": done["run_id"]}]


def test_a_named_version_and_pii_in_who_and_why_are_redacted(lake):
    done = rollback(lake, "v1", reason="call anna at +1 415 555 0100", by="anna@example.com", as_of=AS_OF + 4 * DAY)
    assert (done["from"], done["to"]) == ("v3", "v1")
    with lake.writer(purpose="read the salt"):  # redacted as every text: with the lake-wide salt
        salt = lake.tenant_salts([""])[""]
    assert (done["by"], done["reason"]) == (redact_text("anna@example.com", salt),
                                            redact_text("call anna at +1 415 555 0100", salt))
    assert "555" not in done["reason"] and "anna@example.com" not in done["by"]
    assert done["reason"].startswith("call anna at ")
    assert rows(lake, "SELECT rolled_back_by, reason FROM rollbacks") == [
        {"rolled_back_by": done["by"], "reason": done["reason"]}]
    assert os.readlink(lake.exports / "CURRENT") == "v1"


def test_every_refusal_says_why_in_full_and_changes_nothing(lake, tmp_path):
    (lake.exports / "v9").mkdir()  # no manifest: not a kept version
    assert refused(lake, reason="") == (
        "a rollback needs a reason (--reason TEXT): it is kept in the rollbacks table")
    assert refused(lake, reason="   ") == (
        "a rollback needs a reason (--reason TEXT): it is kept in the rollbacks table")
    assert refused(lake, "v7") == "version 'v7' is not kept; kept versions: v1, v2, v3"
    assert refused(lake, "9") == "version '9' is not kept; kept versions: v1, v2, v3"
    assert refused(lake, "v3") == "CURRENT already points at v3; kept versions: v1, v2, v3"
    found = manifest(lake, "v1")
    (lake.exports / "v1" / "manifest.json").write_text(json.dumps({**found, "format_version": "2.0.0"}))
    assert refused(lake, "v1") == (
        "v1 was written in export format '2.0.0', which agents loading format 1.4.0 cannot read; "
        "roll back to a version published since")
    (lake.exports / "v1" / "manifest.json").write_text(json.dumps({k: v for k, v in found.items()
                                                                    if k != "format_version"}))
    assert refused(lake, "v1") == (
        "v1 was written in export format None, which agents loading format 1.4.0 cannot read; "
        "roll back to a version published since")
    # every manifest unreadable (damaged by hand): no version is kept
    for name in ("v1", "v2", "v3"):
        (lake.exports / name / "manifest.json").rename(lake.exports / name / "manifest.json.bak")
    assert refused(lake, "v2") == "version 'v2' is not kept; kept versions: none"
    assert refused(lake) == (
        "no version older than CURRENT (v3) is kept; kept versions: none ([publish] keep_versions keeps the newest)")
    for name in ("v1", "v2", "v3"):
        (lake.exports / name / "manifest.json.bak").rename(lake.exports / name / "manifest.json")
    (lake.exports / "v1" / "manifest.json").write_text(json.dumps(found))
    # CURRENT at the oldest kept version: nothing older to go to
    rollback(lake, "v2", reason="x", by="me", as_of=AS_OF + 4 * DAY)
    shutil.rmtree(lake.exports / "v1")
    assert refused(lake) == (
        "no version older than CURRENT (v2) is kept; kept versions: v2, v3 ([publish] keep_versions keeps the newest)")


def test_nothing_published_is_refused_and_so_is_an_empty_lake_listing(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    with pytest.raises(InputError) as error:
        rollback(lake, reason="x", by="me", as_of=AS_OF)
    assert str(error.value) == "nothing is published yet: there is no CURRENT to roll back"
    assert list_publishes(lake) == {"current": None, "versions": [], "rollbacks": [], "blocked": []}


def test_control_characters_in_who_or_why_are_refused(lake):
    # issue 37.8: `rollback --by/--reason` kept terminal escapes that `publishes` printed raw
    before = (lake.exports / "CURRENT").resolve().name
    assert refused(lake, reason="bad \x1b[2J\x1b[31mnight") == (
        "--reason holds control or invisible characters (U+001B): write it as plain text on one line")
    assert refused(lake, by="ops\u202eevil") == (
        "--by holds control or invisible characters (U+202E): write it as plain text on one line")
    assert refused(lake, reason="two\nlines") == (
        "--reason holds control or invisible characters (U+000A): write it as plain text on one line")
    assert (lake.exports / "CURRENT").resolve().name == before
    assert lake.publishes()["rollbacks"] == []
