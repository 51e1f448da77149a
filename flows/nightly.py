"""The nightly run: queued decisions and the inbox to a gated, atomically switched export and an
HTML report.

Reads top to bottom in DESIGN's order. Each task is a thin wrapper over one library step and
passes paths and ids, never connections. The run holds the lake's write lock throughout, so
agents' reads meanwhile answer from the previous published version.
"""

from __future__ import annotations

from prefect import flow, task

from memory_lake import Lake
from memory_lake.maintain import apply_decisions, apply_events, compact_database, dedup, enforce_tiers, housekeeping
from memory_lake.observe import notify, record_failed_run, record_run, snapshot_health, timed, write_report
from memory_lake.publish import check_export, publish_export, stage_export
from memory_lake.search import index
from memory_lake.store import iso, resolve_as_of


def _lake(lake_dir: str, policy: dict | None = None) -> Lake:
    return Lake.open(lake_dir, policy_overrides=policy)


@task(name="apply_decisions")
def apply_decisions_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str) -> dict:
    return timed(apply_decisions, _lake(lake_dir, policy), resolve_as_of(as_of), run_id=run_id)


@task(name="ingest_inbox")
def ingest_inbox_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str) -> dict:
    from memory_lake.ingest import ingest_step

    return timed(ingest_step, _lake(lake_dir, policy), resolve_as_of(as_of), run_id=run_id)


@task(name="apply_events")
def apply_events_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str) -> dict:
    return timed(apply_events, _lake(lake_dir, policy), resolve_as_of(as_of), run_id=run_id)


@task(name="enforce_tiers")
def enforce_tiers_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str) -> dict:
    return timed(enforce_tiers, _lake(lake_dir, policy), resolve_as_of(as_of), run_id=run_id)


@task(name="index")
def index_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str) -> dict:
    return timed(index, _lake(lake_dir, policy), resolve_as_of(as_of), run_id=run_id)


@task(name="dedup")
def dedup_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str) -> dict:
    return timed(dedup, _lake(lake_dir, policy), resolve_as_of(as_of), run_id=run_id)


@task(name="snapshot_health")
def snapshot_health_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str) -> dict:
    return timed(snapshot_health, _lake(lake_dir, policy), resolve_as_of(as_of), run_id=run_id)


@task(name="stage_export")
def stage_export_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str) -> dict:
    return timed(stage_export, _lake(lake_dir, policy), resolve_as_of(as_of), run_id=run_id)


@task(name="check_export")
def check_export_task(lake_dir: str, policy: dict | None, staged: dict, as_of: str, run_id: str) -> dict:
    return timed(check_export, _lake(lake_dir, policy), staged["details"]["staging"], run_id=run_id, as_of=resolve_as_of(as_of))


@task(name="publish_export")
def publish_export_task(lake_dir: str, policy: dict | None, as_of: str, staged: dict, checks: dict, run_id: str) -> dict:
    return timed(publish_export, _lake(lake_dir, policy), resolve_as_of(as_of), staged["details"], checks["details"],
                 run_id=run_id)


@task(name="write_report")
def write_report_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str, steps: list[dict], reports_dir: str | None) -> dict:
    return timed(write_report, _lake(lake_dir, policy), resolve_as_of(as_of), run_id, steps, reports_dir)


@task(name="housekeeping")
def housekeeping_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str, reports_dir: str | None) -> dict:
    return timed(housekeeping, _lake(lake_dir, policy), resolve_as_of(as_of), run_id=run_id, reports_dir=reports_dir)


@task(name="notify")
def notify_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str, steps: list[dict]) -> dict:
    return timed(notify, _lake(lake_dir, policy), resolve_as_of(as_of), run_id, steps)


@task(name="record_run")
def record_run_task(lake_dir: str, policy: dict | None, as_of: str, run_id: str, steps: list[dict]) -> dict:
    return record_run(_lake(lake_dir, policy), run_id, "nightly", resolve_as_of(as_of), steps)


@task(name="compact_database")
def compact_database_task(lake_dir: str, policy: dict | None) -> bool:
    return compact_database(_lake(lake_dir, policy), only_if_pending=True)


@flow(name="nightly", log_prints=True)
def nightly(lake_dir: str = "lake", as_of: str | None = None, reports_dir: str | None = None,
            policy: dict | None = None) -> dict:
    """Decisions -> ingest -> events -> tier rules -> index -> dedup -> health -> checks -> publish -> report (as_of:
    now, taken once; policy: overrides of the lake's memory-lake.toml for this run)."""
    as_of = iso(resolve_as_of(as_of))
    lake = _lake(lake_dir, policy)
    run_id = lake.new_run_id("nightly", resolve_as_of(as_of))
    with lake.hold("nightly run"):
        steps: list[dict] = []
        try:
            steps.append(apply_decisions_task(lake_dir, policy, as_of, run_id))
            steps.append(ingest_inbox_task(lake_dir, policy, as_of, run_id))
            steps.append(apply_events_task(lake_dir, policy, as_of, run_id))
            steps.append(enforce_tiers_task(lake_dir, policy, as_of, run_id))
            steps.append(index_task(lake_dir, policy, as_of, run_id))
            steps.append(dedup_task(lake_dir, policy, as_of, run_id))
            steps.append(snapshot_health_task(lake_dir, policy, as_of, run_id))
            staged = stage_export_task(lake_dir, policy, as_of, run_id)
            steps.append(staged)
            checks = check_export_task(lake_dir, policy, staged, as_of, run_id)
            steps.append(checks)
            steps.append(publish_export_task(lake_dir, policy, as_of, staged, checks, run_id))
            steps.append(housekeeping_task(lake_dir, policy, as_of, run_id, reports_dir))
            steps.append(write_report_task(lake_dir, policy, as_of, run_id, steps, reports_dir))
            steps.append(notify_task(lake_dir, policy, as_of, run_id, steps))
        except Exception as exc:
            # a failed run is recorded too (status failed, the step and the error), CURRENT untouched
            raise record_failed_run(lake, run_id, "nightly", resolve_as_of(as_of), steps, exc) from exc
        summary = record_run_task(lake_dir, policy, as_of, run_id, steps)
    compact_database_task(lake_dir, policy)  # after the hold: a forget's freed blocks are rewritten
    print(f"nightly {summary['status']}: publish {summary['publish']['status']}, report {summary['report']}")
    return summary
