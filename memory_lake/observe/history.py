"""Health over time, as the report draws it: the stored snapshots of the last N runs (typed, one row
per snapshot: `store.views.HEALTH_COLUMNS`) and the nightly runs' own counts (`store.views.RUN_COLUMNS`:
ingested, merged, moves per tier rule, seconds per step ...).

The run being reported is not in ``runs`` yet (its row is written after its last step): the caller
passes its summary so far (`run_summary`), and it is the last point of the run series.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..store import iso
from ..store import views as lake_views
from .notify import run_status


def health_history(con, as_of: datetime, last_n: int) -> dict[str, Any]:
    """The overall and per-tenant rows of the last `last_n` snapshots up to `as_of`, oldest first:
    ``{"as_of": [iso...], "overall": [row...], "tenants": {name: [row...]}}``; a row is ``{column:
    value}`` of HEALTH_COLUMNS plus ``as_of`` and ``run_id``. A tenant missing from a snapshot has
    no row for it (its line starts later)."""
    instants = [t for (t,) in con.execute(
        "SELECT DISTINCT as_of FROM health_snapshots WHERE as_of <= ? ORDER BY as_of DESC LIMIT ?",
        [as_of, last_n]).fetchall()]
    if not instants:
        return {"as_of": [], "overall": [], "tenants": {}}
    frame = con.execute(
        f"SELECT * FROM ({lake_views.HEALTH_SERIES_SQL}) WHERE level IN ('overall', 'tenant') "
        "AND as_of IN (SELECT unnest(?::TIMESTAMP[])) ORDER BY as_of, level, tenant", [instants]).pl()
    overall: list[dict[str, Any]] = []
    tenants: dict[str, list[dict[str, Any]]] = {}
    for row in frame.iter_rows(named=True):
        row = {**row, "as_of": iso(row["as_of"])}
        if row["level"] == "overall":
            overall.append(row)
        else:
            tenants.setdefault(row["tenant"], []).append(row)
    return {"as_of": [iso(t) for t in sorted(instants)], "overall": overall, "tenants": dict(sorted(tenants.items()))}


def run_history(con, as_of: datetime, last_n: int | None, current: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The nightly runs up to `as_of` (the last `last_n`; None: all), oldest first, each a
    `store.views.run_point`; `current` (the summary of the run being reported, not recorded yet)
    comes last. Reruns of one night are separate runs."""
    # a rerun of a night after the first: the order the rows were written in (rowid; a published
    # version's tables are Parquet files written in that order, read in it)
    live = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'runs'").fetchone()[0]
    rows = con.execute(
        "SELECT run_id, report FROM runs WHERE kind = 'nightly' AND as_of <= ? "
        + ("ORDER BY as_of, rowid" if live else "ORDER BY as_of"), [as_of]).fetchall()
    points = []
    for run_id, report in rows:
        point = lake_views.run_point(report)
        point["run_id"] = point["run_id"] or run_id
        points.append(point)
    if current is not None:
        points = [p for p in points if p["run_id"] != current.get("run_id")]
        points.append(lake_views.run_point(json.loads(json.dumps(current, default=str))))
    return points[-last_n:] if last_n else points


def run_summary(run_id: str, kind: str, as_of: datetime, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary a run's ``runs`` row stores (`runs.record_run`), from its steps so far."""
    summary = {"run_id": run_id, "kind": kind, "as_of": iso(as_of),
               "status": run_status(steps),
               "duration_s": round(sum(s.get("duration_s", 0) or 0 for s in steps), 3),
               "steps": {s["name"]: {"counts": s["counts"], "summary": s["summary"],
                                     "duration_s": round(s["duration_s"], 3) if s.get("duration_s") is not None else None}
                         for s in steps}}
    errors = [e for s in steps for e in s.get("errors") or []]
    if errors:  # what a degraded run skipped: step, scope, error, traceback file
        summary["errors"] = [{k: v for k, v in e.items() if k != "traceback"} for e in errors]
    for step in steps:
        if step["name"] in ("publish_export", "publish"):
            summary["publish"] = {k: step["details"].get(k) for k in ("status", "version", "current", "path", "failed",
                                                                       "current_invalid", "held") if k in step["details"]
                                  or k not in ("current_invalid", "held")}
        if step["name"] == "write_report":
            summary["report"] = step["details"]["path"]
            for key in ("alert_count", "warning_count", "alerts", "headline"):
                if key in step["details"]:
                    summary[key] = step["details"][key]
    return summary
