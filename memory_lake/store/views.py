"""Typed views over the JSON the nightly run stores (issue 40): ``health_series`` (one column per
health figure of ``health_snapshots``), ``health_alerts`` (one row per alert), ``run_series`` (one
row per nightly run with its counts: ingested, merged, moves per tier rule ...) and
``run_step_durations`` (one row per run and step). SQL and notebooks read these instead of digging
in JSON: ``memory-lake sql "SELECT as_of, working_used, hit_rate_7d FROM health_series WHERE level =
'overall'"``.

The column lists are data (`HEALTH_COLUMNS`, `RUN_COLUMNS`): the views, the analyst's `open_lake`
and the report's history charts are all made from them, so they cannot drift apart.
"""

from __future__ import annotations

import json
from typing import Any

# (column, JSON path in health_snapshots.metrics, type, what it measures)
HEALTH_COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    ("total", "$.total", "BIGINT", "live memories (active or conflicted) in the scope, tenant or lake"),
    *((f"{tier}_{part}", f"$.capacity.{tier}.{part}", kind, f"{tier}: {what}")
      for tier in ("working", "short_term", "long_term", "important")
      for part, kind, what in (("used", "BIGINT", "memories held"), ("limit", "BIGINT", "capacity (null: none)"),
                               ("utilization", "DOUBLE", "used / limit"))),
    ("hit_rate_7d", "$.hit_rate.last_7d", "DOUBLE",
     "share of the searches of the last 7 days that found a relevant memory (null: no search)"),
    ("hit_rate_30d", "$.hit_rate.last_30d", "DOUBLE", "the same over 30 days"),
    ("searches_7d", "$.hit_rate.searches_7d", "BIGINT", "searches in the last 7 days"),
    ("hit_rate_trend", "$.hit_rate.trend", "VARCHAR",
     "improving, declining or stable: the slope of the 7-day hit rate over the last k snapshots (null: too few)"),
    ("hit_rate_slope", "$.hit_rate.trend_slope", "DOUBLE", "that slope, in hit-rate points per day"),
    ("stale_count", "$.staleness.stale_count", "BIGINT", "memories not accessed for the stale window (30 days)"),
    ("stale_ratio", "$.staleness.stale_ratio", "DOUBLE", "stale_count / live memories outside the important tier"),
    ("oldest_unaccessed_days", "$.staleness.oldest_unaccessed_days", "BIGINT", "age of the longest-unread memory"),
    ("suggest_archive", "$.staleness.suggest_archive", "BIGINT", "long-term memories the rules suggest archiving"),
    ("conflicts_open", "$.conflicts.open", "BIGINT", "conflicts waiting for a user"),
    ("conflicts_over_7d", "$.conflicts.by_age.over_7d", "BIGINT", "of those, open for more than 7 days"),
    ("conflicts_important", "$.conflicts.important", "BIGINT", "open conflicts on important memories"),
    ("conflicts_oldest_days", "$.conflicts.oldest_days", "BIGINT", "age of the oldest open conflict"),
    ("dormant", "$.inactive.dormant", "BIGINT", "dormant memories (kept, not searched)"),
    ("archived", "$.inactive.archived", "BIGINT", "archived memories"),
    ("created_last_7d", "$.distribution.by_age.last_7d", "BIGINT", "memories created in the last 7 days"),
    ("created_last_30d", "$.distribution.by_age.last_30d", "BIGINT", "created 7 to 30 days ago"),
    ("quarantine_open", "$.quarantine.open", "BIGINT", "quarantined lines not replayed yet (tenant and lake only)"),
    ("summaries_published", "$.summaries.published", "BIGINT", "summaries published (tenant and lake only)"),
    ("summaries_failed", "$.summaries.failed", "BIGINT",
     "summaries whose latest attempt failed the quality gate (the previous one stays)"),
    *((f"summary_{score}", f"$.summaries.mean.{score}", "DOUBLE",
       f"mean {score} of the published summaries (gate: {gate})")
      for score, gate in (("retention", ">= 0.9"), ("compression", ">= 3"), ("readability", ">= 0.8"),
                          ("accuracy", ">= 0.95"))),
)

HEALTH_SERIES_SQL = (
    "SELECT as_of, run_id, level, tenant, agent_id, user_id, "
    + ", ".join(f"TRY_CAST(metrics->>'{path}' AS {kind}) AS {name}" for name, path, kind, _ in HEALTH_COLUMNS)
    + ", CAST(coalesce(json_array_length(metrics->'$.alerts'), 0) AS BIGINT) AS alerts FROM health_snapshots"
)

HEALTH_ALERTS_SQL = """
    SELECT as_of, run_id, level AS scope_level, tenant, agent_id, user_id,
           alert->>'$.level' AS level, alert->>'$.code' AS code, alert->>'$.message' AS message,
           alert->>'$.action' AS action
    FROM (SELECT *, unnest(CAST(coalesce(metrics->'$.alerts', '[]') AS JSON[])) AS alert FROM health_snapshots)"""

# The tier rules whose moves a run counts (maintain.tiers.RULES, in order) and the patrol's.
TIER_RULES = ("expire", "mark_important", "working_overflow", "consolidate", "short_term_idle", "long_term_recall",
              "short_term_overflow", "long_term_dormant")

# (column, path in runs.report, type, what it counts) for the nightly runs
RUN_COLUMNS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("status", ("status",), "VARCHAR", "ok, degraded (a step skipped a scope), blocked (publish stopped) or failed"),
    ("duration_s", ("duration_s",), "DOUBLE", "seconds the steps took together"),
    ("ingested", ("steps", "ingest_inbox", "counts", "ingested"), "BIGINT", "memories new or changed from the inbox"),
    ("quarantined", ("steps", "ingest_inbox", "counts", "quarantined"), "BIGINT", "lines of the inbox quarantined"),
    ("forgotten", ("steps", "ingest_inbox", "counts", "forgotten"), "BIGINT", "memories forgotten on request"),
    ("searches", ("steps", "apply_events", "counts", "searches"), "BIGINT", "searches the run loaded from events/"),
    ("merged", ("steps", "dedup", "counts", "merged"), "BIGINT", "duplicates merged into a kept memory"),
    ("contradictions_filed", ("steps", "dedup", "counts", "contradictions_filed"), "BIGINT",
     "near-duplicates that contradict each other, filed as conflicts"),
    *((f"moved_{rule}", ("steps", "enforce_tiers", "counts", rule), "BIGINT", f"memories the {rule} rule moved")
      for rule in TIER_RULES),
    ("moved_patrol", ("steps", "patrol", "counts", "moved"), "BIGINT",
     "memories the patrol moved (when it runs at the end of the nightly)"),
    ("summaries_regenerated", ("steps", "summarize", "counts", "regenerated"), "BIGINT", "summaries regenerated"),
    ("summaries_failed", ("steps", "summarize", "counts", "failed"), "BIGINT", "summaries that failed the gate"),
    ("publish_status", ("publish", "status"), "VARCHAR", "published, unchanged or blocked"),
    ("published_version", ("publish", "version"), "VARCHAR", "the version this run published (null: none)"),
    ("current_version", ("publish", "current"), "VARCHAR", "the version agents read after the run"),
    ("alerts", ("alert_count",), "BIGINT", "alerts the run's report showed"),
    ("warnings", ("warning_count",), "BIGINT", "of those, warnings"),
    ("report", ("report",), "VARCHAR", "the run's HTML report"),
)


def _json_path(path: tuple[str, ...]) -> str:
    return "$." + ".".join(f'"{p}"' for p in path)


RUN_SERIES_SQL = (
    "SELECT run_id, as_of, "
    + ", ".join(f"TRY_CAST(report->>'{_json_path(path)}' AS {kind}) AS {name}" for name, path, kind, _ in RUN_COLUMNS)
    + " FROM runs WHERE kind = 'nightly'"
)

RUN_STEP_DURATIONS_SQL = """
    SELECT run_id, as_of, position, step, TRY_CAST(steps->>(concat('$."', step, '".duration_s')) AS DOUBLE) AS duration_s
    FROM (SELECT run_id, as_of, steps, unnest(json_keys(steps)) AS step, unnest(range(1, len(json_keys(steps)) + 1)) AS position
          FROM (SELECT *, coalesce(report->'$.steps', '{}') AS steps FROM runs WHERE kind = 'nightly'))"""

VIEWS = {"health_series": HEALTH_SERIES_SQL, "health_alerts": HEALTH_ALERTS_SQL, "run_series": RUN_SERIES_SQL,
         "run_step_durations": RUN_STEP_DURATIONS_SQL}

VIEWS_DDL = "\n".join(f"CREATE OR REPLACE VIEW {name} AS {sql};" for name, sql in VIEWS.items())


def run_point(summary: dict[str, Any] | str | None) -> dict[str, Any]:
    """One `run_series` row from a run summary (the ``runs.report`` JSON, or the dict a run is
    building before it is recorded): ``{column: value}`` of `RUN_COLUMNS`, plus the per-step
    seconds as ``steps`` ({step: seconds})."""
    if isinstance(summary, str):
        try:
            summary = json.loads(summary)
        except ValueError:
            summary = {}
    summary = summary or {}
    out: dict[str, Any] = {"run_id": summary.get("run_id"), "as_of": summary.get("as_of")}
    for name, path, kind, _ in RUN_COLUMNS:
        value: Any = summary
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None and kind == "BIGINT":
            try:
                value = int(value)
            except (TypeError, ValueError):
                value = None
        elif value is not None and kind == "DOUBLE":
            try:
                value = float(value)
            except (TypeError, ValueError):
                value = None
        elif value is not None:
            value = str(value)
        out[name] = value
    out["steps"] = {name: step.get("duration_s") for name, step in (summary.get("steps") or {}).items()
                    if isinstance(step, dict)}
    return out
