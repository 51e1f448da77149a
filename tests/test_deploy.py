"""Issue 14.1-14.2: the documented way to schedule works on a fresh Prefect server. A real
`prefect server start` (one per session), `memory-lake deploy` against an absolute lake path, runs
triggered from the `nightly` deployment and executed by a real process worker: a clean lake
completes and publishes; a lake with a planted failing check ends Failed with the check named, an
ERROR log, and its artifacts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .conftest import write_jsonl

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
AS_OF = "2026-11-30T00:00:00Z"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory):
    """A real Prefect server on a free local port with its own PREFECT_HOME; stopped at the end."""
    home = tmp_path_factory.mktemp("prefect-home")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
           "PREFECT_API_URL": url, "PYTHONPATH": str(ROOT), "PREFECT_LOGGING_LEVEL": "WARNING"}
    log = (home / "server.log").open("w")
    server = subprocess.Popen([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, (home / "server.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the Prefect server did not answer within 120 s"
            time.sleep(1)
        yield url, env
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _blocked_lake(root: Path) -> Path:
    """A lake whose next publish is blocked: 25 working memories in one scope with the overflow rule
    off, so the check "working within capacity per scope" fails."""
    from memory_lake import Lake

    lake = Lake.open(root, create=True)
    (root / "memory-lake.toml").write_text('[tiers]\ndisabled_rules = ["working_overflow"]\n')
    write_jsonl(lake.inbox / "0001.jsonl", [{"tenant": "acme", "agent_id": "a", "user_id": "u", "tier": "working",
                                             "content": f"item {i}"} for i in range(25)])
    return root


@pytest.mark.slow
@pytest.mark.process  # starts a process (the subject here)
def test_deploy_then_nightly_runs_from_the_deployment(prefect_server, tmp_path):
    from prefect.client.orchestration import SyncPrefectClient
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, LogFilter, LogFilterFlowRunId
    from prefect.client.schemas.sorting import TaskRunSort

    from memory_lake import Lake
    from memory_lake.observe import NIGHTLY_STEPS

    url, env = prefect_server
    good = Lake.open(tmp_path / "good", create=True).root
    bad = _blocked_lake(tmp_path / "bad")

    # one command prepares the fresh server: work pool included, the lake's absolute path recorded
    done = subprocess.run([str(BIN / "memory-lake"), "--lake", str(good), "--json", "deploy", "--timezone", "Europe/Berlin"],
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    deployed = json.loads(done.stdout)
    assert deployed == {"work_pool": "memory-lake", "lake_dir": str(good), "timezone": "Europe/Berlin",
                        "reports_dir": str(good / "reports"),
                        "deployments": [{"name": "nightly/nightly", "cron": "2 3 * * *"},
                                        {"name": "ingest-inbox/sync", "cron": "0 */6 * * *"},
                                        {"name": "patrol/patrol", "cron": "30 6 * * *"}]}

    # issue 35.6: serve-flows beside the worker's deployments is refused (it used to take them over
    # and pause them when stopped: the 03:02 run silently disappeared)
    served = subprocess.run([str(BIN / "memory-lake"), "--lake", str(good), "serve-flows", "--timezone", "Europe/Berlin"],
                            env=env, capture_output=True, text=True, timeout=180)
    assert served.returncode == 2, served.stdout[-2000:] + served.stderr[-2000:]
    assert ("not serving: nightly/nightly (work pool memory-lake), ingest-inbox/sync (work pool memory-lake), "
            "patrol/patrol (work pool memory-lake) already run on a worker") in served.stderr

    with SyncPrefectClient(url) as client:
        deployment = client.read_deployment_by_name("nightly/nightly")
        assert deployment.work_pool_name == "memory-lake" and not deployment.paused
        assert deployment.parameters == {"lake_dir": str(good), "reports_dir": str(good / "reports")}
        assert [(s.schedule.cron, s.schedule.timezone) for s in deployment.schedules] == [("2 3 * * *", "Europe/Berlin")]
        ok_run = client.create_flow_run_from_deployment(deployment.id, parameters={"as_of": AS_OF})
        blocked_run = client.create_flow_run_from_deployment(
            deployment.id, parameters={"as_of": AS_OF, "lake_dir": str(bad), "reports_dir": str(tmp_path / "bad-reports")})
        # the daily patrol (seed 000 example 3), after the nightly, on a lake of its own: 25 working
        # memories in one scope (the overflow rule off) come down to 15 of 20
        patrol = client.read_deployment_by_name("patrol/patrol")
        assert patrol.work_pool_name == "memory-lake" and patrol.parameters == {"lake_dir": str(good)}
        assert [(s.schedule.cron, s.schedule.timezone) for s in patrol.schedules] == [("30 6 * * *", "Europe/Berlin")]
        crowded = _blocked_lake(tmp_path / "crowded")
        Lake.open(crowded).ingest(as_of=AS_OF)
        patrol_run = client.create_flow_run_from_deployment(patrol.id, parameters={"as_of": AS_OF, "lake_dir": str(crowded)})

        worker = subprocess.run([str(BIN / "prefect"), "worker", "start", "--pool", "memory-lake", "--run-once"],
                                env=env, capture_output=True, text=True, timeout=240)
        assert worker.returncode == 0, worker.stdout[-2000:] + worker.stderr[-2000:]

        ok = client.read_flow_run(ok_run.id)
        assert ok.state.type.value == "COMPLETED", ok.state.message
        assert os.readlink(good / "exports" / "CURRENT") == "v1"
        tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[ok_run.id])),
                                      sort=TaskRunSort.EXPECTED_START_TIME_ASC)
        # the flow's tasks are the library's nightly steps, in the library's order
        assert [t.name.rsplit("-", 1)[0] for t in tasks] == [s.name for s in NIGHTLY_STEPS]

        patrolled = client.read_flow_run(patrol_run.id)
        assert patrolled.state.type.value == "COMPLETED", patrolled.state.message
        assert Lake.open(crowded).sql("SELECT tier, count(*) AS n FROM memories GROUP BY tier ORDER BY tier").rows() == [
            ("short_term", 10), ("working", 15)]

        blocked = client.read_flow_run(blocked_run.id)
        assert blocked.state.type.value == "FAILED"
        assert "blocked by failed check(s) working within capacity per scope" in blocked.state.message
        assert "nothing is published yet" in blocked.state.message
        assert not (bad / "exports" / "CURRENT").exists()
        logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[blocked_run.id])))
        assert any(log.level >= 40 and "working within capacity per scope" in log.message for log in logs)

        artifacts = {a.key: a for a in client.read_artifacts(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[blocked_run.id])))}
        assert sorted(artifacts) == ["nightly-report", "nightly-steps", "nightly-summary"]
        summary = artifacts["nightly-summary"].data
        blocked_run_id = summary.splitlines()[0].split()[2]  # "# nightly <run id> BLOCKED: ..."
        assert summary.startswith("# nightly nightly-20261130T000000-") and "BLOCKED" in summary.splitlines()[0]
        assert "## Failed checks\n\n- working within capacity per scope\n" in summary
        table = json.loads(artifacts["nightly-steps"].data)
        assert [row["step"] for row in table] == [s.name for s in NIGHTLY_STEPS]
        assert table[1]["counts"] == "files=1, ingested=25, updated=0, unchanged=0, forgotten=0, quarantined=0"
        report = tmp_path / "bad-reports" / "2026-11-30" / f"{blocked_run_id}.html"
        assert artifacts["nightly-report"].data == f"[{report.name}]({report.as_uri()})" and report.exists()
