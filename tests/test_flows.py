"""Flows: every prefect.yaml entrypoint imports and keeps its cron; the nightly steps run the same
with and without Prefect; the ingest flow runs for real under Prefect."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import cli_process, rows, write_jsonl

ROOT = Path(__file__).resolve().parents[1]


def entrypoints() -> list[str]:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    return [d["entrypoint"] for d in config["deployments"]]


@pytest.mark.parametrize("entrypoint", entrypoints())
def test_every_prefect_yaml_entrypoint_imports(entrypoint):
    from prefect.flows import Flow

    path, name = entrypoint.split(":")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    assert isinstance(getattr(module, name), Flow)


def test_prefect_yaml_schedules_and_parameters():
    """Issue 14.1: seed 004's schedule - the "dream" nightly at 03:02, the sync every six hours -
    in the operator's time zone, against a lake path given from outside (no relative `lake`)."""
    from flows.deploy import deployment_specs

    config = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    assert [(d["name"], d["entrypoint"], d["schedules"], d["parameters"], d["work_pool"]) for d in config["deployments"]] == [
        ("nightly", "flows/nightly.py:nightly", [{"cron": "2 3 * * *", "timezone": "{{ $MEMORY_LAKE_TZ }}"}],
         {"lake_dir": "{{ $MEMORY_LAKE_DIR }}"}, {"name": "memory-lake"}),
        ("sync", "flows/ingest.py:ingest_inbox", [{"cron": "0 */6 * * *", "timezone": "{{ $MEMORY_LAKE_TZ }}"}],
         {"lake_dir": "{{ $MEMORY_LAKE_DIR }}"}, {"name": "memory-lake"}),
        # seed 000 example 3: 心跳任务每天 - the daily patrol, after the nightly and the 06:00 sync
        ("patrol", "flows/patrol.py:patrol", [{"cron": "30 6 * * *", "timezone": "{{ $MEMORY_LAKE_TZ }}"}],
         {"lake_dir": "{{ $MEMORY_LAKE_DIR }}"}, {"name": "memory-lake"})]
    assert "pull" not in config  # no $MEMORY_LAKE_HOME: Prefect records the checkout it deploys from
    assert [(s.name, s.cron, s.parameters) for s in deployment_specs()] == [
        ("nightly", "2 3 * * *", {}), ("sync", "0 */6 * * *", {}), ("patrol", "30 6 * * *", {})]


def test_a_scheduled_run_refuses_a_relative_or_missing_lake(tmp_path):
    """Issue 14.1: `lake_dir: lake` resolved against the checkout and "maintained" a new empty lake."""
    from memory_lake.observe import lake_for_run
    from memory_lake.store import InputError, LakeNotFound

    with pytest.raises(InputError, match=r"^lake_dir must be an absolute path to a lake, got 'lake'; set the "
                                         r"deployment's lake_dir parameter"):
        lake_for_run("lake")
    with pytest.raises(LakeNotFound):
        lake_for_run(str(tmp_path / "nowhere"))
    assert not (tmp_path / "nowhere").exists()


def test_the_flow_wires_the_library_steps_in_order():
    from flows.nightly import TASKS
    from memory_lake.observe import NIGHTLY_STEPS

    assert list(TASKS) == [s.name for s in NIGHTLY_STEPS] == [
        "apply_decisions", "ingest_inbox", "apply_events", "enforce_tiers", "index", "dedup", "extract_entities", "summarize",
        "index_summaries", "snapshot_health", "patrol",
        "stage_export", "check_export", "publish_export", "sync_targets", "housekeeping", "write_report", "notify"]
    # retries only where a step does file I/O
    assert {name: t.retries for name, t in TASKS.items() if t.retries} == {"ingest_inbox": 2, "housekeeping": 2,
                                                                           "write_report": 2}


def _cli(warm, *args: str, **env: str):
    """The command in its own process (its exit code and output), forked from the warm Python."""
    return cli_process(warm, *args, env=env)


def test_run_nightly_without_prefect_and_when_no_api_answers(tmp_path, warm_python):
    """Issue 14.3: when the Prefect API cannot be reached the nightly steps still run, in order, with a
    warning; `--no-prefect` skips Prefect outright; a blocked publish still exits 4."""
    from memory_lake import Lake

    lake = Lake.open(tmp_path / "lake", create=True)
    (lake.root / "memory-lake.toml").write_text('[tiers]\ndisabled_rules = ["working_overflow"]\n')
    write_jsonl(lake.inbox / "0001.jsonl", [{"tenant": "acme", "agent_id": "a", "user_id": "u", "tier": "working",
                                             "content": f"item {i}"} for i in range(25)])
    done = _cli(warm_python, "--lake", str(lake.root), "--json", "run", "nightly", "--no-prefect", "--as-of", "2026-11-30T00:00:00Z",
                "--reports", str(tmp_path / "reports"))
    summary = json.loads(done.stdout)
    assert (done.returncode, summary["status"], summary["publish"]["failed"]) == (
        4, "blocked", ["working within capacity per scope"])
    assert list(summary["steps"]) == ["apply_decisions", "ingest_inbox", "apply_events", "enforce_tiers", "index", "dedup", "extract_entities", "summarize",
                                      "index_summaries", "snapshot_health", "patrol", "stage_export", "check_export", "publish_export", "sync_targets", "housekeeping", "write_report", "notify"]
    assert "warning" not in done.stderr

    (lake.root / "memory-lake.toml").unlink()  # the overflow rule back on: the next night publishes
    done = _cli(warm_python, "--lake", str(lake.root), "--json", "run", "nightly", "--as-of", "2026-12-01T00:00:00Z",
                "--reports", str(tmp_path / "reports"), PREFECT_API_URL="http://127.0.0.1:9/api")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("warning: no Prefect API could be reached (ConnectError: ")
    assert "running the nightly steps without Prefect" in done.stderr.splitlines()[0]
    assert json.loads(done.stdout)["publish"]["version"] == "v1"
    assert rows(lake, "SELECT status FROM runs ORDER BY as_of") == [{"status": "blocked"}, {"status": "ok"}]


def test_the_library_never_imports_prefect():
    pattern = re.compile(r"^\s*(import|from)\s+prefect\b", re.MULTILINE)
    for path in (ROOT / "memory_lake").glob("*.py"):
        assert not pattern.search(path.read_text()), f"{path.name} imports Prefect"


@pytest.mark.slow
def test_ingest_flow_runs_under_prefect(prefect_harness, lake):
    from flows.ingest import ingest_inbox

    write_jsonl(lake.inbox / "0001.jsonl", [{"tenant": "acme", "content": "from a flow"}, "broken"])
    report = ingest_inbox(str(lake.root), as_of="2026-11-30T00:00:00Z")
    assert (report["ingested"], report["quarantined"], report["as_of"]) == (1, 1, "2026-11-30T00:00:00Z")
    assert rows(lake, "SELECT content FROM memories") == [{"content": "from a flow"}]
    # the sync run indexes what it ingested: postings and an embedding for the one new content
    assert report["index"]["counts"] == {"tokenized": 1, "embedded": 1, "missing": 1}
    assert rows(lake, "SELECT term, tf FROM postings ORDER BY term") == [{"term": "flow", "tf": 1}]


@pytest.mark.slow
def test_nightly_flow_runs_end_to_end_under_prefect(prefect_harness, lake, tmp_path):
    import os

    from flows.nightly import nightly
    from memory_lake.demo.generator import generate_demo

    data = generate_demo(lake.inbox, seed=7)
    summary = nightly(str(lake.root), as_of="2026-11-30T00:00:00Z", reports_dir=str(tmp_path / "reports"))
    assert summary["status"] == "ok"
    assert list(summary["steps"]) == ["apply_decisions", "ingest_inbox", "apply_events", "enforce_tiers", "index", "dedup", "extract_entities", "summarize",
                                      "index_summaries", "snapshot_health", "patrol", "stage_export", "check_export", "publish_export", "sync_targets", "housekeeping", "write_report", "notify"]
    assert summary["steps"]["ingest_inbox"]["counts"]["quarantined"] == len(data.malformed)
    assert summary["publish"] == {"status": "published", "version": "v1", "current": "v1",
                                  "path": str(lake.exports / "v1"), "failed": [], "held": []}
    assert summary["report"] == str(tmp_path / "reports" / "2026-11-30" / f"{summary['run_id']}.html")
    assert os.readlink(lake.exports / "CURRENT") == "v1"
    assert rows(lake, "SELECT kind, status FROM runs") == [{"kind": "nightly", "status": "ok"}]
    # the same as_of again: nothing changes, no new version
    before = rows(lake, "SELECT * EXCLUDE (published_at, publish_meta) FROM memories ORDER BY id")
    again = nightly(str(lake.root), as_of="2026-11-30T00:00:00Z", reports_dir=str(tmp_path / "reports"))
    assert again["publish"]["status"] == "unchanged"
    assert again["steps"]["ingest_inbox"]["counts"] == {"files": 0, "ingested": 0, "updated": 0, "unchanged": 0,
                                                        "forgotten": 0, "quarantined": 0}
    moved = {rule: n for rule, n in again["steps"]["enforce_tiers"]["counts"].items() if rule != "suggest_archive" and n}
    assert moved == {}
    # unchanged content: no embedding is computed again
    assert summary["steps"]["index"]["counts"]["embedded"] > 800
    # the two session summaries of the demo's conversations, written after the index step, are indexed
    # by index_summaries before the publish (they waited for the next night before)
    assert summary["steps"]["index_summaries"]["counts"] == {"tokenized": 2, "embedded": 2, "missing": 2}
    assert again["steps"]["index"]["counts"] == again["steps"]["index_summaries"]["counts"] == {
        "tokenized": 0, "embedded": 0, "missing": 0}
    assert rows(lake, "SELECT * EXCLUDE (published_at, publish_meta) FROM memories ORDER BY id") == before
    assert sorted(p.name for p in lake.exports.iterdir()) == ["CURRENT", "v1"]


@pytest.mark.slow
def test_nightly_on_an_empty_lake_and_then_on_one_memory(prefect_harness, lake, tmp_path):
    """Issue 11.4: the first night of a new install crashed in check_export, leaving
    exports/.staging-…, no report and no runs row."""
    import json
    import os

    from flows.nightly import nightly

    summary = nightly(str(lake.root), as_of="2026-11-30T00:00:00Z", reports_dir=str(tmp_path / "reports"))
    assert (summary["status"], summary["publish"]) == ("ok", {
        "status": "published", "version": "v1", "current": "v1", "path": str(lake.exports / "v1"), "failed": [], "held": []})
    assert summary["report"] == str(tmp_path / "reports" / "2026-11-30" / f"{summary['run_id']}.html")
    assert os.path.exists(summary["report"])
    assert sorted(p.name for p in lake.exports.iterdir()) == ["CURRENT", "v1"]
    assert rows(lake, "SELECT kind, status FROM runs") == [{"kind": "nightly", "status": "ok"}]

    write_jsonl(lake.inbox / "0001.jsonl", [{"id": "tea", "tenant": "acme", "content": "likes tea"}])
    summary = nightly(str(lake.root), as_of="2026-12-01T00:00:00Z", reports_dir=str(tmp_path / "reports"))
    assert (summary["status"], summary["publish"]["version"]) == ("ok", "v2")
    scope = json.loads((lake.exports / "v2" / "scopes" / "acme" / "_" / "_" / "memory.json").read_text())
    assert [(m["id"], m["content"], m["conflict"]) for m in scope["memories"]] == [("tea", "likes tea", False)]
    assert rows(lake, "SELECT status FROM runs ORDER BY as_of") == [{"status": "ok"}, {"status": "ok"}]


@pytest.mark.slow
def test_a_failed_nightly_records_a_failed_run_and_leaves_no_staging(prefect_harness, lake, tmp_path):
    import json
    import os

    from flows.nightly import nightly
    from memory_lake.observe.runs import RunFailed

    write_jsonl(lake.inbox / "0001.jsonl", [{"id": "tea", "tenant": "acme", "content": "likes tea"}])
    (lake.exports / ".staging-nightly-20261129T000000-deadbeef").mkdir()  # a crashed run's leftover
    (lake.exports / "v1").write_text("in the way")  # the publish cannot rename its version there
    with pytest.raises(RunFailed, match=r"^nightly run nightly-20261130T000000-\w+ failed in step publish_export: "
                                        r"NotADirectoryError: .*; nothing is published yet; the runs table records it"):
        nightly(str(lake.root), as_of="2026-11-30T00:00:00Z", reports_dir=str(tmp_path / "reports"))
    ((status, report),) = lake.sql("SELECT status, report FROM runs").rows()
    report = json.loads(report)
    assert (status, report["status"], report["failed_step"]) == ("failed", "failed", "publish_export")
    assert report["error"].startswith("NotADirectoryError: ")
    assert list(report["steps"])[-2:] == ["stage_export", "check_export"]
    assert sorted(p.name for p in lake.exports.iterdir()) == ["v1"]  # no staging left, no CURRENT
    assert not os.path.lexists(lake.exports / "CURRENT")
