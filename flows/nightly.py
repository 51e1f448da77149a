"""The nightly run: queued decisions and the inbox to a gated, atomically switched export and an
HTML report.

A table of contents only: the steps, their order and the run's bookkeeping live once in the
library (`memory_lake.observe.NIGHTLY_STEPS`, `run_nightly_steps`, which `run nightly --no-prefect`
calls directly); here each step becomes a Prefect task (retried only when it does file I/O) and the
run gets an honest final state and its artifacts. Tasks pass paths and ids, never connections.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact
from prefect.states import Completed, Failed

from memory_lake.observe import (NIGHTLY_STEPS, PublishBlocked, RunFailed, blocked_message, lake_for_run, run_digest,
                                 run_nightly_steps)
from memory_lake.store import iso, resolve_as_of

_STEPS = {step.name: step for step in NIGHTLY_STEPS}


@task
def nightly_step(step_name: str, lake_dir: str, policy: dict | None, as_of: str, run_id: str, done: dict,
                 reports_dir: str | None) -> dict:
    """One library step of the nightly run on a freshly opened lake."""
    return _STEPS[step_name].run(lake_for_run(lake_dir, policy), resolve_as_of(as_of), run_id, done, reports_dir)


# one task per step, named after it; only steps doing file I/O (inbox, reports) are retried
TASKS = {step.name: nightly_step.with_options(name=step.name, retries=2 if step.io else 0, retry_delay_seconds=10)
         for step in NIGHTLY_STEPS}


def publish_artifacts(lake, summary: dict) -> None:
    """The run's headline, alerts and failed checks (Markdown), per-step counts (table), the report."""
    digest = run_digest(lake, summary)
    create_markdown_artifact(key="nightly-summary", markdown=digest["markdown"], description=digest["headline"])
    create_table_artifact(key="nightly-steps", table=digest["table"], description="counts per step")
    if digest["report"]:
        create_link_artifact(key="nightly-report", link=Path(digest["report"]).as_uri(),
                             link_text=Path(digest["report"]).name, description="the HTML health report")


@flow(name="nightly", log_prints=True)
def nightly(lake_dir: str, as_of: str | None = None, reports_dir: str | None = None, policy: dict | None = None,
            wait_s: float | None = None):
    """Decisions -> ingest -> events -> tier rules -> index -> dedup -> entities -> summaries -> index (what
    the summaries wrote) -> health -> stage -> checks -> publish -> targets -> housekeeping -> report ->
    notify (lake_dir: absolute path of an existing lake; as_of: now, taken once; policy: overrides of
    the lake's memory-lake.toml for this run). A blocked publish ends the run Failed (PublishBlocked);
    a degraded run (a maintenance step skipped a scope after an error, the rest published) ends
    Completed, named Degraded, with the step errors in its summary artifact."""
    logger = get_run_logger()
    lake = lake_for_run(lake_dir, policy)
    when = resolve_as_of(as_of)

    def as_task(step, run_id: str, done: dict) -> dict:
        return TASKS[step.name](step.name, str(lake.root), policy, iso(when), run_id, done, reports_dir)

    try:
        summary = run_nightly_steps(lake, when, reports_dir, runner=as_task, wait_s=wait_s)
    except RunFailed as exc:
        logger.error(str(exc))
        publish_artifacts(lake, exc.summary)
        raise
    publish_artifacts(lake, summary)
    if summary["status"] == "blocked":
        message = blocked_message(summary)
        logger.error(message)
        return Failed(message=message, data=PublishBlocked(message, summary))
    print(f"nightly {summary['status']}: publish {summary['publish']['status']}, report {summary['report']}")
    if summary["status"] == "degraded":
        # published, but a step skipped a scope after an error: a Completed state named Degraded
        message = run_digest(lake, summary)["headline"]
        logger.warning(message)
        return Completed(name="Degraded", message=message, data=summary)
    return summary
