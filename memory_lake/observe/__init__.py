"""Observe: health snapshots and alerts, the HTML report and run records."""

from .health import compute_health, latest_health, snapshot_health
from .report import render_report
from .runs import (NIGHTLY_STEPS, STEP_LISTENERS, NightlyStep, PublishBlocked, RunFailed, blocked_message, lake_for_run,
                   record_failed_run, record_run, run_digest, run_nightly_steps, timed, write_report)

__all__ = [
    "compute_health", "latest_health", "snapshot_health",
    "render_report",
    "NIGHTLY_STEPS", "STEP_LISTENERS", "NightlyStep", "PublishBlocked", "RunFailed", "blocked_message", "lake_for_run",
    "record_failed_run", "record_run", "run_digest", "run_nightly_steps", "timed", "write_report",
]
