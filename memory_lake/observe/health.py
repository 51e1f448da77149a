"""The health dashboard (seed 000 记忆健康度仪表盘): capacity, distribution, hit rate, staleness,
alerts - per scope, per tenant and overall, in the seed's JSON keys.

``compute_health`` is read-only and works on any connection; ``snapshot_health`` is the nightly
step that also stores it in ``health_snapshots`` (one row per level and scope per ``as_of``, so
the dashboard has history and a re-run with the same ``as_of`` replaces rather than adds).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import duckdb
import polars as pl

from ..store import iso
from ..store import transaction
from ..store import Policy
from ..store import TIERS
from ..store import MemoryLakeError, StepReport, step_error
from .alerts import make_alert, scope_count_note

ACTIVE = "('active', 'conflicted')"
NO_LOG_NOTE = "no retrieval log yet: the hit rate needs searches (memory-lake search) in the window"


def compute_health(con: duckdb.DuckDBPyConnection, as_of: datetime, policy: Policy,
                   errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The dashboard as of `as_of`: ``{"as_of", "overall", "tenants": {name: ...}, "scopes": [...]}``.
    A scope whose metrics raise is left out of the scopes (its rows still count in its tenant's and
    the overall figures), with its error appended to `errors` (raised when `errors` is None)."""
    scopes = _scope_metrics(con, as_of, policy)
    hits = _hit_counts(con, as_of)
    important_changes = _important_changes(con, as_of)
    suggestions = _archive_suggestions(con)
    open_conflicts = _open_conflicts(con, as_of, policy.health.conflict_overdue_days)
    inactive = _inactive(con)
    quarantine = _open_quarantine(con, as_of)
    summaries = _summary_quality(con)
    threshold = policy.health.utilization_warning
    language = policy.report.language

    def resting(tenant_name: str) -> list[dict[str, int]]:
        return [v for k, v in inactive.items() if k[0] == tenant_name]

    result_scopes = []
    for row in scopes.iter_rows(named=True):
        key = (row["tenant"], row["agent_id"], row["user_id"])
        try:
            metrics = _metrics(row, hits.get(key), policy, important_changes.get(key, 0), suggestions.get(key, 0),
                               conflicts=open_conflicts.get(key))
            metrics = _with_inactive(metrics, [inactive.get(key)])
        except MemoryLakeError:
            raise
        except Exception as exc:
            if errors is None:
                raise
            errors.append(step_error("snapshot_health", exc, item="scope metrics", tenant=key[0], agent_id=key[1],
                                     user_id=key[2]))
            continue
        result_scopes.append({"tenant": row["tenant"], "agent_id": row["agent_id"], "user_id": row["user_id"], **metrics})
    tenants = {}
    for tenant, group in scopes.group_by("tenant", maintain_order=True):
        tenant_name = tenant[0]
        row = _sum_rows(group)
        tenant_hits = _sum_hits([v for k, v in hits.items() if k[0] == tenant_name])
        changes = sum(v for k, v in important_changes.items() if k[0] == tenant_name)
        suggested = sum(v for k, v in suggestions.items() if k[0] == tenant_name)
        tenants[tenant_name] = _metrics(row, tenant_hits, policy, changes, suggested, scope_alerts=_alert_counts(
            [s for s in result_scopes if s["tenant"] == tenant_name], threshold),
            conflicts=_sum_conflicts([v for k, v in open_conflicts.items() if k[0] == tenant_name]))
        tenants[tenant_name] = _with_inactive(tenants[tenant_name], resting(tenant_name))
    for tenant_name in sorted({k[0] for k in inactive} - tenants.keys()):
        # every memory of the tenant is dormant or archived: no live scope, yet not an unknown tenant
        tenants[tenant_name] = _metrics(_sum_rows(scopes.clear()), None, policy, 0,
                                        sum(v for k, v in suggestions.items() if k[0] == tenant_name),
                                        conflicts=_sum_conflicts([v for k, v in open_conflicts.items()
                                                                  if k[0] == tenant_name]))
        tenants[tenant_name] = _with_inactive(tenants[tenant_name], resting(tenant_name))
    overall = _metrics(_sum_rows(scopes), _sum_hits(list(hits.values())), policy, sum(important_changes.values()),
                       sum(suggestions.values()), scope_alerts=_alert_counts(result_scopes, threshold),
                       conflicts=_sum_conflicts(list(open_conflicts.values())))
    overall = _with_inactive(overall, list(inactive.values()))
    for name, metrics in [*tenants.items(), (None, overall)]:
        _with_quality(metrics, quarantine, summaries, name, policy)
    # a scope whose memories all went dormant (unused 60 days): an agent loading it gets nothing, and
    # no scope row shows it (archived ones ended on purpose: expired, or pushed out by capacity)
    live = {(s["tenant"], s["agent_id"], s["user_id"]) for s in result_scopes}
    emptied = {k: v for k, v in inactive.items() if k not in live and v["dormant"]}
    for name, metrics in [*tenants.items(), (None, overall)]:
        mine = [v for k, v in emptied.items() if name is None or k[0] == name]
        if mine:
            metrics["alerts"].append(make_alert("dormant_scopes", language, scopes=len(mine),
                                                dormant=sum(v["dormant"] for v in mine), days=policy.tiers.dormant_days))
    health = {"as_of": iso(as_of), "overall": overall, "tenants": tenants, "scopes": result_scopes}
    _with_history(con, as_of, policy, health)
    return health


def snapshot_health(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """Nightly step: compute the dashboard and store it (replacing a snapshot of the same as_of)."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("health", as_of)
    errors: list[dict[str, Any]] = []
    with lake.writer(purpose="health snapshot") as con:
        health = compute_health(con, as_of, policy, errors)
        rows = [("overall", None, None, None, health["overall"])]
        rows += [("tenant", name, None, None, metrics) for name, metrics in health["tenants"].items()]
        rows += [("scope", s["tenant"], s["agent_id"], s["user_id"],
                  {k: v for k, v in s.items() if k not in ("tenant", "agent_id", "user_id")}) for s in health["scopes"]]
        frame = pl.DataFrame(
            [(level, t, a, u, json.dumps(m, ensure_ascii=False)) for level, t, a, u, m in rows],
            schema={"level": pl.String, "tenant": pl.String, "agent_id": pl.String, "user_id": pl.String,
                    "metrics": pl.String}, orient="row")
        con.register("health_frame", frame)
        with transaction(con):
            con.execute("DELETE FROM health_snapshots WHERE as_of = ?", [as_of])
            con.execute("INSERT INTO health_snapshots SELECT ?, level, tenant, agent_id, user_id, metrics::JSON, ? "
                        "FROM health_frame", [as_of, run_id])
        con.unregister("health_frame")
    overall = health["overall"]
    counts = {"scopes": len(health["scopes"]), "tenants": len(health["tenants"]),
              "alerts": len(overall["alerts"])}
    return StepReport("snapshot_health", as_of, run_id, counts,
                      {"capacity": overall["capacity"], "alerts": overall["alerts"]}, errors=errors)


def latest_health(lake, *, tenant: str | None = None) -> dict[str, Any] | None:
    """The most recent stored snapshot in the dashboard's JSON layout (None before the first)."""
    frame = lake.sql(
        "SELECT as_of, level, tenant, agent_id, user_id, metrics FROM health_snapshots "
        "WHERE as_of = (SELECT max(as_of) FROM health_snapshots) AND (? IS NULL OR tenant = ? OR level = 'overall') "
        "ORDER BY level, tenant, agent_id, user_id",
        [tenant, tenant],
    )
    if frame.height == 0:
        return None
    result: dict[str, Any] = {"as_of": iso(frame["as_of"][0]), "overall": None, "tenants": {}, "scopes": []}
    for row in frame.iter_rows(named=True):
        metrics = json.loads(row["metrics"])
        if row["level"] == "overall":
            result["overall"] = metrics
        elif row["level"] == "tenant":
            result["tenants"][row["tenant"]] = metrics
        else:
            result["scopes"].append({"tenant": row["tenant"], "agent_id": row["agent_id"], "user_id": row["user_id"],
                                     **metrics})
    if tenant is not None:
        result["overall"] = result["tenants"].get(tenant)
    return result


# ---------------------------------------------------------------------------- queries
def _scope_metrics(con: duckdb.DuckDBPyConnection, as_of: datetime, policy: Policy) -> pl.DataFrame:
    stale_days = policy.health.stale_days
    tiers = ", ".join(f"count(*) FILTER (WHERE tier = '{t}') AS used_{t}" for t in TIERS)
    frame = con.execute(
        f"""
        SELECT tenant, agent_id, user_id, {tiers},
               histogram(type) AS by_type,
               count(*) FILTER (WHERE created_at > $as_of - INTERVAL 7 DAY) AS last_7d,
               count(*) FILTER (WHERE created_at <= $as_of - INTERVAL 7 DAY
                                  AND created_at > $as_of - INTERVAL 30 DAY) AS last_30d,
               count(*) FILTER (WHERE created_at <= $as_of - INTERVAL 30 DAY) AS older,
               count(*) FILTER (WHERE tier <> 'important') AS stale_base,
               count(*) FILTER (WHERE tier <> 'important'
                                  AND last_accessed_at < $as_of - to_days($stale_days)) AS stale_count,
               greatest(coalesce(max(date_diff('day', last_accessed_at, $as_of)) FILTER (WHERE tier <> 'important'), 0), 0)
                   AS oldest_unaccessed_days   -- a use dated after as_of (a snapshot's own clock) is no negative age
        FROM memories WHERE status IN {ACTIVE}
        GROUP BY tenant, agent_id, user_id
        ORDER BY tenant, agent_id NULLS FIRST, user_id NULLS FIRST
        """,
        {"as_of": as_of, "stale_days": stale_days},
    ).pl()
    limits = {t: policy.for_tenant(t).tiers for t in frame["tenant"].unique().to_list()}
    return frame.with_columns(
        limit_working=pl.col("tenant").replace_strict({t: v.working_capacity for t, v in limits.items()},
                                                      return_dtype=pl.Int64, default=policy.tiers.working_capacity),
        limit_short_term=pl.col("tenant").replace_strict({t: v.short_term_capacity for t, v in limits.items()},
                                                         return_dtype=pl.Int64, default=policy.tiers.short_term_capacity),
    )


def _hit_counts(con: duckdb.DuckDBPyConnection, as_of: datetime) -> dict[tuple, dict[str, int]]:
    rows = con.execute(
        """
        SELECT tenant, agent_id, user_id,
               count(*) FILTER (WHERE ts > $as_of - INTERVAL 7 DAY) AS searches_7d,
               count(*) FILTER (WHERE ts > $as_of - INTERVAL 7 DAY AND (keyword_match OR semantic_match OR confirmed_hit)) AS hits_7d,
               count(*) AS searches_30d,
               count(*) FILTER (WHERE keyword_match OR confirmed_hit) AS hits_30d
        FROM retrieval_log WHERE ts > $as_of - INTERVAL 30 DAY AND ts <= $as_of
        GROUP BY ALL
        """,
        {"as_of": as_of},
    ).fetchall()
    return {(t, a, u): {"searches_7d": s7, "hits_7d": h7, "searches_30d": s30, "hits_30d": h30}
            for t, a, u, s7, h7, s30, h30 in rows}


def _important_changes(con: duckdb.DuckDBPyConnection, as_of: datetime) -> dict[tuple, int]:
    """Changes to important memories since the previous snapshot (seed: 重要记忆被修改 → info)."""
    (previous,) = con.execute("SELECT max(as_of) FROM health_snapshots WHERE as_of < ?", [as_of]).fetchone()
    since = previous or as_of - timedelta(days=1)
    rows = con.execute(
        """
        SELECT h.tenant, m.agent_id, m.user_id, count(*)
        FROM memory_history h JOIN memories m ON m.id = h.memory_id
        WHERE h.change IN ('update', 'forget') AND h.as_of > ? AND h.as_of <= ?
          AND (h.before.tier = 'important' OR h.after.tier = 'important')
        GROUP BY ALL
        """,
        [since, as_of],
    ).fetchall()
    return {(t, a, u): n for t, a, u, n in rows}


def _open_conflicts(con: duckdb.DuckDBPyConnection, as_of: datetime, overdue_days: int = 7) -> dict[tuple, dict[str, int]]:
    """Open conflicts per scope by age (the conflict queue a person works through); ``overdue``:
    open longer than `overdue_days` (the policy's conflict_overdue_days)."""
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'conflicts'").fetchone()[0]:
        return {}
    rows = con.execute(
        """
        SELECT m.tenant, m.agent_id, m.user_id, count(*) AS open,
               count(*) FILTER (WHERE c.created_at > ? - INTERVAL 1 DAY) AS under_1d,
               count(*) FILTER (WHERE c.created_at <= ? - INTERVAL 1 DAY AND c.created_at > ? - INTERVAL 7 DAY) AS d1_7,
               count(*) FILTER (WHERE c.created_at <= ? - INTERVAL 7 DAY) AS over_7d,
               count(*) FILTER (WHERE c.kind = 'important') AS important,
               coalesce(max(date_diff('day', c.created_at, ?)), 0) AS oldest_days,
               count(*) FILTER (WHERE c.created_at <= ? - to_days(?)) AS overdue
        FROM conflicts c JOIN memories m ON m.id = c.memory_id
        WHERE c.status = 'open' AND c.created_at <= ?
        GROUP BY ALL
        """,
        [as_of] * 5 + [as_of, overdue_days, as_of],
    ).fetchall()
    return {(t, a, u): {"open": n, "by_age": {"under_1d": d0, "1_to_7d": d1, "over_7d": d7}, "important": imp,
                        "oldest_days": old, "overdue": late}
            for t, a, u, n, d0, d1, d7, imp, old, late in rows}


def _sum_conflicts(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not items:
        return None
    return {"open": sum(i["open"] for i in items),
            "by_age": {k: sum(i["by_age"][k] for i in items) for k in ("under_1d", "1_to_7d", "over_7d")},
            "important": sum(i["important"] for i in items), "oldest_days": max(i["oldest_days"] for i in items),
            "overdue": sum(i["overdue"] for i in items)}


def _inactive(con: duckdb.DuckDBPyConnection) -> dict[tuple, dict[str, int]]:
    """Dormant and archived memories by scope. The dashboard counts live memories (active or
    conflicted); these are kept apart so that a lake whose memories all went dormant (history
    imported with old dates: the 60-day dormant rule) does not read as an empty one."""
    rows = con.execute(
        """
        SELECT tenant, agent_id, user_id, count(*) FILTER (WHERE status = 'dormant'),
               count(*) FILTER (WHERE status = 'archived')
        FROM memories WHERE status IN ('dormant', 'archived') GROUP BY ALL
        """
    ).fetchall()
    return {(t, a, u): {"dormant": d, "archived": r} for t, a, u, d, r in rows}


def _with_inactive(metrics: dict[str, Any], items: list[dict[str, int] | None]) -> dict[str, Any]:
    """`metrics` with ``inactive`` (the sum of `items`) just before the alerts, which stay last."""
    alerts = metrics.pop("alerts")
    return {**metrics, "inactive": {k: sum(i[k] for i in items if i) for k in ("dormant", "archived")},
            "alerts": alerts}


def _archive_suggestions(con: duckdb.DuckDBPyConnection) -> dict[tuple, int]:
    """Long-term memories flagged by the tier rules (seed 000: 180 天未引用提示归档)."""
    rows = con.execute(
        """
        SELECT m.tenant, m.agent_id, m.user_id, count(*) FROM memory_flags f JOIN memories m ON m.id = f.memory_id
        WHERE f.flag = 'suggest_archive' GROUP BY ALL
        """
    ).fetchall()
    return {(t, a, u): n for t, a, u, n in rows}


def _open_quarantine(con: duckdb.DuckDBPyConnection, as_of: datetime) -> dict[str | None, int]:
    """Open quarantined lines per tenant (None: lines without a readable tenant) as of `as_of`."""
    rows = con.execute("SELECT tenant, count(*) FROM quarantine WHERE status = 'open' AND as_of <= ? GROUP BY ALL",
                       [as_of]).fetchall()
    return {t: n for t, n in rows}


def _summary_quality(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, Any]]:
    """Per tenant: summaries published, summaries whose latest attempt failed the gate (which
    thresholds), and the mean of each quality score over the published ones."""
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'summary_state'").fetchone()[0]:
        return {}
    published = "FILTER (WHERE status = 'published')"
    rows = con.execute(
        f"""
        SELECT tenant, count(*) {published}, count(*) FILTER (WHERE status = 'failed'),
               list_sort(list_distinct(flatten(list(coalesce(failed, [])) FILTER (WHERE status = 'failed')))),
               {', '.join(f"coalesce(sum({score}) {published}, 0)" for score in QUALITY_SCORES)}
        FROM summary_state GROUP BY tenant
        """).fetchall()
    return {tenant: {"published": n, "failed": failed, "failed_thresholds": list(thresholds or []),
                     "sums": [float(x) for x in sums]}
            for tenant, n, failed, thresholds, *sums in rows}


QUALITY_SCORES = ("retention", "compression", "readability", "accuracy")


def _with_quality(metrics: dict[str, Any], quarantine: dict[str | None, int], summaries: dict[str, dict[str, Any]],
                  tenant: str | None, policy: Policy) -> None:
    """Add ``quarantine`` (open lines) and ``summaries`` (published, failed the gate, mean scores of
    the published ones) to a tenant's (or with `tenant` None the whole lake's) metrics, and the
    alert for summaries that failed their gate. The alerts stay last."""
    mine = [v for k, v in summaries.items() if tenant is None or k == tenant]
    published = sum(v["published"] for v in mine)
    failed = sum(v["failed"] for v in mine)
    sums = [sum(v["sums"][i] for v in mine) for i in range(len(QUALITY_SCORES))]
    means = {score: round(sums[i] / published, 4) if published else None for i, score in enumerate(QUALITY_SCORES)}
    thresholds = sorted({t for v in mine for t in v["failed_thresholds"]})
    alerts = metrics.pop("alerts")
    metrics["quarantine"] = {"open": sum(n for k, n in quarantine.items() if tenant is None or k == tenant)}
    metrics["summaries"] = {"published": published, "failed": failed, "mean": means}
    if failed:
        alerts.append(make_alert("summaries_failed", policy.report.language, count=failed,
                                 ies="y" if failed == 1 else "ies", failed=", ".join(thresholds) or "scores"))
    metrics["alerts"] = alerts


def _with_history(con: duckdb.DuckDBPyConnection, as_of: datetime, policy: Policy, health: dict[str, Any]) -> None:
    """What needs the stored snapshots before `as_of`: the hit-rate trend of every level (see
    `hit_rate_trend`), quarantine growth (overall and per tenant) and, overall, a nightly run that
    did not happen (the last successful one older than ``overdue_hours``)."""
    h = policy.health
    k = max(2, h.trend_snapshots)
    depth = max(k - 1, h.quarantine_growth_runs)
    instants = [t for (t,) in con.execute(
        "SELECT DISTINCT as_of FROM health_snapshots WHERE as_of < ? ORDER BY as_of DESC LIMIT ?", [as_of, depth])
        .fetchall()]
    past: dict[tuple, list[tuple[datetime, float | None, int | None]]] = {}
    if instants:
        rows = con.execute(
            """
            SELECT level, tenant, agent_id, user_id, as_of, TRY_CAST(metrics->>'$.hit_rate.last_7d' AS DOUBLE),
                   TRY_CAST(metrics->>'$.quarantine.open' AS BIGINT)
            FROM health_snapshots WHERE as_of IN (SELECT unnest(?::TIMESTAMP[])) ORDER BY as_of
            """, [instants]).fetchall()
        for level, tenant, agent, user, when, rate, quarantined in rows:
            past.setdefault((level, tenant, agent, user), []).append((when, rate, quarantined))
    trend_instants = set(sorted(instants)[-(k - 1):]) if k > 1 else set()
    language = policy.report.language

    def apply(key: tuple, metrics: dict[str, Any]) -> None:
        points = [(when, rate) for when, rate, _ in past.get(key, []) if when in trend_instants]
        points.append((as_of, metrics["hit_rate"]["last_7d"]))
        metrics["hit_rate"].update(hit_rate_trend(points, k, h.trend_dead_band))

    apply(("overall", None, None, None), health["overall"])
    for name, metrics in health["tenants"].items():
        apply(("tenant", name, None, None), metrics)
    for scope in health["scopes"]:
        apply(("scope", scope["tenant"], scope["agent_id"], scope["user_id"]), scope)

    runs = h.quarantine_growth_runs
    for key, metrics in [(("overall", None, None, None), health["overall"]),
                         *((("tenant", n, None, None), m) for n, m in health["tenants"].items())]:
        series = [q for _, _, q in past.get(key, [])][-runs:] + [metrics["quarantine"]["open"]]
        if runs and len(series) == runs + 1 and None not in series and all(b > a for a, b in zip(series, series[1:])):
            metrics["alerts"].append(make_alert("quarantine_growing", language, runs=runs,
                                                series=" → ".join(str(q) for q in series)))

    (last,) = con.execute("SELECT max(as_of) FROM runs WHERE kind = 'nightly' AND status <> 'failed' AND as_of < ?",
                          [as_of]).fetchone()
    if last is not None and as_of - last > timedelta(hours=h.overdue_hours):
        hours = int((as_of - last).total_seconds() // 3600)
        health["overall"]["alerts"].append(make_alert("run_overdue", language, hours=hours, last=iso(last)))


def hit_rate_trend(points: list[tuple[datetime, float | None]], k: int, dead_band: float) -> dict[str, Any]:
    """The trend of the 7-day hit rate over the last `k` snapshots, `points` (instant, rate) oldest
    first, the current one last. The slope is the least-squares slope of the rate against time in
    days, b = Σ(x - x̄)(y - ȳ) / Σ(x - x̄)², over the last k points; "improving" when b > `dead_band`,
    "declining" when b < -`dead_band`, else "stable". Until k points hold a rate: trend and slope
    null, and ``trend_note`` says how many are there ("3 of 7 snapshots needed")."""
    window = points[-k:]
    rated = [(when, rate) for when, rate in window if rate is not None]
    if len(rated) < k:
        return {"trend": None, "trend_slope": None,
                "trend_note": f"{len(rated)} of {k} snapshots with a 7-day hit rate needed"}
    start = rated[0][0]
    xs = [(when - start).total_seconds() / 86400 for when, _ in rated]
    ys = [rate for _, rate in rated]
    mx, my = sum(xs) / k, sum(ys) / k
    spread = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / spread if spread else 0.0
    trend = "improving" if slope > dead_band else "declining" if slope < -dead_band else "stable"
    return {"trend": trend, "trend_slope": round(slope, 6), "trend_note": None,
            "trend_window": {"snapshots": k, "from": iso(rated[0][0]), "to": iso(rated[-1][0])}}


# ---------------------------------------------------------------------------- assembly
def _sum_rows(frame: pl.DataFrame) -> dict[str, Any]:
    numeric = [c for c in frame.columns if c not in ("tenant", "agent_id", "user_id", "by_type", "oldest_unaccessed_days")]
    row = {c: int(frame[c].sum()) for c in numeric}
    row["oldest_unaccessed_days"] = int(frame["oldest_unaccessed_days"].max() or 0)
    by_type: dict[str, int] = {}
    for mapping in frame["by_type"].to_list():
        for key, value in _as_dict(mapping).items():
            by_type[key] = by_type.get(key, 0) + value
    row["by_type"] = by_type
    return row


def _sum_hits(items: list[dict[str, int]]) -> dict[str, int] | None:
    if not items:
        return None
    return {k: sum(i[k] for i in items) for k in items[0]}


def _as_dict(mapping: Any) -> dict[str, int]:
    if mapping is None:
        return {}
    if isinstance(mapping, dict):
        return dict(mapping)
    return {entry["key"]: entry["value"] for entry in mapping}  # polars reads a MAP as a list of key/value


def _rate(hits: int, searches: int) -> float | None:
    return round(hits / searches, 4) if searches else None


def _metrics(row: dict[str, Any], hits: dict[str, int] | None, policy: Policy, important_changes: int,
             suggested_archive: int = 0, scope_alerts: dict[str, int] | None = None,
             conflicts: dict[str, Any] | None = None) -> dict[str, Any]:
    limits = {"working": row["limit_working"], "short_term": row["limit_short_term"], "long_term": None, "important": None}
    capacity = {}
    for tier in TIERS:
        used, limit = row[f"used_{tier}"], limits[tier]
        capacity[tier] = {"used": used, "limit": limit, "utilization": round(used / limit, 4) if limit else None}
    total = sum(row[f"used_{t}"] for t in TIERS)
    stale_ratio = round(row["stale_count"] / row["stale_base"], 4) if row["stale_base"] else 0.0
    hit_rate: dict[str, Any] = {"last_7d": None, "last_30d": None, "trend": None}
    if hits:
        hit_rate["last_7d"] = _rate(hits["hits_7d"], hits["searches_7d"])
        hit_rate["last_30d"] = _rate(hits["hits_30d"], hits["searches_30d"])
        hit_rate["searches_7d"], hit_rate["searches_30d"] = hits["searches_7d"], hits["searches_30d"]
    if hit_rate["last_7d"] is None:
        hit_rate["note"] = NO_LOG_NOTE
    metrics = {
        "capacity": capacity,
        "distribution": {"by_type": dict(sorted(_as_dict(row["by_type"]).items(), key=lambda kv: (-kv[1], kv[0]))),
                         "by_age": {"last_7d": row["last_7d"], "last_30d": row["last_30d"], "older": row["older"]}},
        "hit_rate": hit_rate,
        "staleness": {"stale_count": row["stale_count"], "stale_ratio": stale_ratio,
                      "oldest_unaccessed_days": row["oldest_unaccessed_days"], "suggest_archive": suggested_archive},
        "total": total,
        "conflicts": conflicts or {"open": 0, "by_age": {"under_1d": 0, "1_to_7d": 0, "over_7d": 0},
                                   "important": 0, "oldest_days": 0, "overdue": 0},
    }
    metrics["alerts"] = _alerts(metrics, policy, important_changes, scope_alerts)
    language = policy.report.language
    queue = metrics["conflicts"]
    overdue = queue["overdue"]
    if overdue:
        metrics["alerts"].append(make_alert("conflicts_overdue", language, count=overdue,
                                            days=policy.health.conflict_overdue_days, oldest=queue["oldest_days"]))
    if queue["important"]:
        metrics["alerts"].append(make_alert("important_conflicts", language, count=queue["important"]))
    waiting = queue["open"] - queue["important"] - overdue
    if waiting > 0:
        # the oldest of these is the queue's oldest only when none is overdue
        oldest = queue["oldest_days"] if not overdue else min(queue["oldest_days"], policy.health.conflict_overdue_days)
        metrics["alerts"].append(make_alert("conflicts_waiting", language, count=waiting,
                                            oldest=oldest if not overdue else f"≤{oldest}"))
    if suggested_archive:
        metrics["alerts"].append(make_alert("suggest_archive", language, count=suggested_archive,
                                            days=policy.tiers.suggest_archive_days))
    return metrics


def _alerts(metrics: dict[str, Any], policy: Policy, important_changes: int,
            scope_alerts: dict[str, int] | None) -> list[dict[str, str]]:
    """Seed 000 告警规则, each alert ``{level, code, message, action}`` (observe.alerts words them).

    Measured after the nightly rules ran (snapshot_health follows enforce_tiers), so a capacity the
    rules already brought back under its limit does not alarm. A tier above the threshold gives one
    alert, which says how many scopes are above it; when the whole lake is below it and some
    scopes are not, one alert counts those scopes."""
    h = policy.health
    language = policy.report.language
    targets = {"working": policy.patrol.working_target, "short_term": policy.patrol.short_term_target}
    alerts = []
    for tier in ("working", "short_term"):
        cap = metrics["capacity"][tier]
        hot_scopes = (scope_alerts or {}).get(tier, 0)
        if cap["utilization"] is not None and cap["utilization"] > h.utilization_warning:
            alerts.append(make_alert(f"{tier}_capacity", language, utilization=cap["utilization"], used=cap["used"],
                                     limit=cap["limit"], target=targets[tier],
                                     scopes=scope_count_note(hot_scopes if (scope_alerts or {}).get("scopes", 0) > 1
                                                             else 0, h.utilization_warning, language)))
        elif hot_scopes:
            alerts.append(make_alert(f"{tier}_capacity_scopes", language, scopes=hot_scopes,
                                     threshold=h.utilization_warning, target=targets[tier]))
    hit_rate = metrics["hit_rate"]
    rate = hit_rate["last_7d"]
    counts = scope_alerts or {}
    if rate is not None and rate < h.hit_rate_warning:
        searches = hit_rate.get("searches_7d", 0)
        alerts.append(make_alert("hit_rate_low", language, rate=rate, threshold=h.hit_rate_warning,
                                 searches=f"{searches} 次检索" if language == "zh" else
                                 f"{searches} search{'es' if searches != 1 else ''}"))
    elif counts.get("hit_rate_low"):  # the whole is fine, some scopes are not: their agents find little
        alerts.append(make_alert("hit_rate_low_scopes", language, scopes=counts["hit_rate_low"],
                                 threshold=h.hit_rate_warning))
    stale = metrics["staleness"]
    if stale["stale_ratio"] > h.stale_ratio_info:
        alerts.append(make_alert("stale_ratio", language, count=stale["stale_count"], days=h.stale_days,
                                 ratio=stale["stale_ratio"], threshold=h.stale_ratio_info))
    elif counts.get("stale_ratio"):
        alerts.append(make_alert("stale_ratio_scopes", language, scopes=counts["stale_ratio"], days=h.stale_days,
                                 threshold=h.stale_ratio_info))
    if important_changes:
        alerts.append(make_alert("important_changed", language, count=important_changes))
    return alerts


def _alert_counts(scopes: list[dict[str, Any]], threshold: float) -> dict[str, int]:
    """How many scopes raise each scope-level alert: above the utilisation threshold per capacity
    tier, a low 7-day hit rate, a high stale ratio (codes of the scopes' own alerts)."""
    counts = {"working": 0, "short_term": 0}
    for scope in scopes:
        for tier in ("working", "short_term"):
            utilization = scope["capacity"][tier]["utilization"]
            if utilization is not None and utilization > threshold:
                counts[tier] += 1
    for code in ("hit_rate_low", "stale_ratio"):
        counts[code] = sum(1 for scope in scopes if any(a.get("code") == code for a in scope.get("alerts") or []))
    return {**counts, "scopes": len(scopes)}  # a lake of one scope: its count says nothing the figure does not
