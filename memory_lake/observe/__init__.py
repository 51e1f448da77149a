"""Observe: health snapshots and alerts, the HTML report and run records."""

from .health import compute_health, latest_health, snapshot_health
from .report import render_report
from .runs import STEP_LISTENERS, RunFailed, record_failed_run, record_run, timed, write_report

__all__ = [
    "compute_health", "latest_health", "snapshot_health",
    "render_report",
    "STEP_LISTENERS", "RunFailed", "record_failed_run", "record_run", "timed", "write_report",
]
