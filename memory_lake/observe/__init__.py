"""Observe: health snapshots and alerts, the daily patrol, the HTML report, run records and the end-of-run webhook."""

from .forget import record_report  # also registers the reports scrubber
from .health import compute_health, latest_health, snapshot_health
from .patrol import nightly_patrol, patrol
from .notify import WEBHOOK_ENV, notify, post_json, run_payload, webhook_url
from .report import render_report
from .runs import (NIGHTLY_STEPS, STEP_LISTENERS, NightlyStep, PublishBlocked, RunFailed, blocked_message, lake_for_run,
                   record_failed_run, record_run, run_digest, run_nightly_steps, timed, write_report)

__all__ = [
    "record_report",
    "compute_health", "latest_health", "snapshot_health",
    "nightly_patrol", "patrol",
    "WEBHOOK_ENV", "notify", "post_json", "run_payload", "webhook_url",
    "render_report",
    "NIGHTLY_STEPS", "STEP_LISTENERS", "NightlyStep", "PublishBlocked", "RunFailed", "blocked_message", "lake_for_run",
    "record_failed_run", "record_run", "run_digest", "run_nightly_steps", "timed", "write_report",
]
