"""Run bookkeeping shared by the nightly flow and the CLI: timing a step, the HTML report step,
and the `runs` row that records what a run did - also when it failed."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from ..store import iso
from ..maintain import record_report
from ..store import MemoryLakeError
from .health import compute_health, latest_health
from ..store import StepReport

REPORTS_ENV = "MEMORY_LAKE_REPORTS"


class RunFailed(MemoryLakeError):
    """A run stopped on an error; its `runs` row (status failed) records the step and the error."""


def reports_dir(path: str | os.PathLike | None = None) -> Path:
    """Where HTML reports go: the argument, else $MEMORY_LAKE_REPORTS, else ./reports."""
    return Path(path or os.environ.get(REPORTS_ENV) or "reports").expanduser().resolve()


# Told as each timed step starts and ends: ``listener(event, step_name, result)`` with event
# "start" (result None), "end" (the step's dict) or "failed" (None). The CLI prints a line each.
STEP_LISTENERS: list[Callable[[str, str, dict[str, Any] | None], None]] = []


def timed(step: Callable[..., StepReport], *args, **kwargs) -> dict[str, Any]:
    """Run a step and return its report as a dict with its wall duration (operational metadata,
    never an input to a rule); STEP_LISTENERS hear when it starts and ends."""
    name = getattr(step, "__name__", str(step))
    for listener in list(STEP_LISTENERS):
        listener("start", name, None)
    started = time.monotonic()
    try:
        report = step(*args, **kwargs)
    except BaseException as exc:
        # the run's failure record names the step (Prefect hands the same exception to the flow)
        if isinstance(exc, Exception) and not hasattr(exc, "failed_step"):
            try:
                exc.failed_step = getattr(step, "__name__", str(step))
            except AttributeError:
                pass
        for listener in list(STEP_LISTENERS):
            listener("failed", name, {"duration_s": round(time.monotonic() - started, 3)})
        raise
    result = {**report.as_dict(), "duration_s": round(time.monotonic() - started, 3)}
    for listener in list(STEP_LISTENERS):
        listener("end", name, result)
    return result


def run_status(steps: list[dict[str, Any]]) -> str:
    """ok, or blocked when the publish was blocked by a failed check."""
    blocked = any(s["name"] in ("publish_export", "publish") and s["details"].get("status") == "blocked" for s in steps)
    return "blocked" if blocked else "ok"


def write_report(lake, as_of: datetime, run_id: str, steps: list[dict[str, Any]] | None = None,
                 out_dir: str | os.PathLike | None = None) -> StepReport:
    """Render ``reports/health-<date>.html`` from the stored health snapshot, the quarantine and
    the run's steps (or, outside a run, the last publish)."""
    from .report import render_report

    steps = steps or []
    health = latest_health(lake)
    if health is None or health["as_of"] != iso(as_of):
        with lake.reading() as (con, _source, _note):  # the published version while a run holds the lake
            health = compute_health(con, as_of, lake.policy)
    quarantine = dict(lake.sql("SELECT reason, count(*) FROM quarantine WHERE status = 'open' "
                               "GROUP BY reason ORDER BY 2 DESC, 1").rows())
    conflicts = lake.sql(
        "SELECT conflict_id, kind, memory_id, other_memory_id, field, incoming_operator, created_at "
        "FROM conflicts WHERE status = 'open' ORDER BY created_at, source_file, source_line, field LIMIT 20").to_dicts()
    publish = next((s["details"] for s in steps if s["name"] in ("publish_export", "publish")), None)
    if publish is None and not steps:
        publish = last_publish(lake)
    run = {"run_id": run_id, "status": run_status(steps) if steps else "ok",
           "duration_s": round(sum(s.get("duration_s", 0) for s in steps), 3),
           "steps": [{"name": s["name"], "duration_s": s.get("duration_s"), "summary": s["summary"]} for s in steps]}
    path = render_report(health, publish=publish, quarantine=quarantine, run=run, out_dir=reports_dir(out_dir),
                         conflicts=conflicts)
    record_report(lake, path)  # a later forget reaches the reports folder (forget.REPORT_FOLDERS)
    return StepReport("write_report", as_of, run_id, {"alerts": len(health["overall"]["alerts"]) if health["overall"] else 0},
                      {"path": str(path)})


def last_publish(lake) -> dict[str, Any] | None:
    """The most recent publish outcome, in the shape the report shows."""
    frame = lake.sql("SELECT version, status, failed, manifest FROM publishes ORDER BY as_of DESC, run_id DESC LIMIT 1")
    if frame.height == 0:
        return None
    row = frame.row(0, named=True)
    manifest = json.loads(row["manifest"]) if row["manifest"] else {}
    version = f"v{row['version']}" if row["version"] else None
    current = lake.exports / "CURRENT"
    return {"status": row["status"], "version": version,
            "current": os.readlink(current) if current.is_symlink() else None,
            "path": str(lake.exports / version) if version else None, "failed": list(row["failed"] or []),
            "checks": manifest.get("checks", [])}


def record_run(lake, run_id: str, kind: str, as_of: datetime, steps: list[dict[str, Any]],
               error: BaseException | None = None) -> dict[str, Any]:
    """One `runs` row for the whole run; returns the run summary. With `error` the run failed:
    status ``failed``, and the summary names the step that failed and the error."""
    summary = {"run_id": run_id, "kind": kind, "as_of": iso(as_of),
               "status": "failed" if error is not None else run_status(steps),
               "duration_s": round(sum(s.get("duration_s", 0) for s in steps), 3),
               "steps": {s["name"]: {"counts": s["counts"], "summary": s["summary"]} for s in steps}}
    if error is not None:
        summary["failed_step"] = getattr(error, "failed_step", None)
        message = (str(error).strip().splitlines() or [""])[0]
        summary["error"] = f"{type(error).__name__}: {message}" if message else type(error).__name__
    for step in steps:
        if step["name"] in ("publish_export", "publish"):
            summary["publish"] = {k: step["details"].get(k) for k in ("status", "version", "current", "path", "failed")}
        if step["name"] == "write_report":
            summary["report"] = step["details"]["path"]
    with lake.writer(purpose="record run") as con:
        con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)",
                    [run_id, kind, as_of, summary["status"], summary["duration_s"],
                     json.dumps(summary, ensure_ascii=False, default=str)])
    return summary


def record_failed_run(lake, run_id: str, kind: str, as_of: datetime, steps: list[dict[str, Any]],
                      error: BaseException) -> RunFailed:
    """After a step raised: remove the half-written staging folder, record the `runs` row with
    status failed, and return the one-line error to raise (CURRENT is left as it was)."""
    from ..publish import current_version, remove_staging

    remove_staging(lake)
    summary = record_run(lake, run_id, kind, as_of, steps, error)
    current = current_version(lake)
    published = f"CURRENT still points at {current}" if current else "nothing is published yet"
    where = f" in step {summary['failed_step']}" if summary.get("failed_step") else ""
    return RunFailed(f"{kind} run {run_id} failed{where}: {summary['error']}; {published}; the runs table "
                     f"records it (MEMORY_LAKE_DEBUG=1 shows the traceback)")
