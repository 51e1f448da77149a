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
    open_conflicts = _open_conflicts(con, as_of)
    inactive = _inactive(con)
    threshold = policy.health.utilization_warning

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
    # a scope whose memories all went dormant (unused 60 days): an agent loading it gets nothing, and
    # no scope row shows it (archived ones ended on purpose: expired, or pushed out by capacity)
    live = {(s["tenant"], s["agent_id"], s["user_id"]) for s in result_scopes}
    emptied = {k: v for k, v in inactive.items() if k not in live and v["dormant"]}
    for name, metrics in [*tenants.items(), (None, overall)]:
        mine = [v for k, v in emptied.items() if name is None or k[0] == name]
        if mine:
            metrics["alerts"].append({
                "level": "warning",
                "message": f"{len(mine)} scope(s) hold no live memory, only {sum(v['dormant'] for v in mine)} "
                           f"dormant ones (unused for {policy.tiers.dormant_days} days): search, the context pack and the export "
                           "give them nothing",
                "action": "memory-lake search QUERY --tenant T --user U --include-inactive to see them; "
                          "memory-lake restore ID... brings them back (a use or a write wakes a dormant one)"})
    return {"as_of": iso(as_of), "overall": overall, "tenants": tenants, "scopes": result_scopes}


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


def _open_conflicts(con: duckdb.DuckDBPyConnection, as_of: datetime) -> dict[tuple, dict[str, int]]:
    """Open conflicts per scope by age (the conflict queue a person works through)."""
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'conflicts'").fetchone()[0]:
        return {}
    rows = con.execute(
        """
        SELECT m.tenant, m.agent_id, m.user_id, count(*) AS open,
               count(*) FILTER (WHERE c.created_at > ? - INTERVAL 1 DAY) AS under_1d,
               count(*) FILTER (WHERE c.created_at <= ? - INTERVAL 1 DAY AND c.created_at > ? - INTERVAL 7 DAY) AS d1_7,
               count(*) FILTER (WHERE c.created_at <= ? - INTERVAL 7 DAY) AS over_7d,
               count(*) FILTER (WHERE c.kind = 'important') AS important,
               coalesce(max(date_diff('day', c.created_at, ?)), 0) AS oldest_days
        FROM conflicts c JOIN memories m ON m.id = c.memory_id
        WHERE c.status = 'open' AND c.created_at <= ?
        GROUP BY ALL
        """,
        [as_of] * 6,
    ).fetchall()
    return {(t, a, u): {"open": n, "by_age": {"under_1d": d0, "1_to_7d": d1, "over_7d": d7}, "important": imp,
                        "oldest_days": old}
            for t, a, u, n, d0, d1, d7, imp, old in rows}


def _sum_conflicts(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not items:
        return None
    return {"open": sum(i["open"] for i in items),
            "by_age": {k: sum(i["by_age"][k] for i in items) for k in ("under_1d", "1_to_7d", "over_7d")},
            "important": sum(i["important"] for i in items), "oldest_days": max(i["oldest_days"] for i in items)}


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
        if hit_rate["last_7d"] is not None and hit_rate["last_30d"] is not None:
            delta = hit_rate["last_7d"] - hit_rate["last_30d"]
            hit_rate["trend"] = "improving" if delta > 0.02 else "declining" if delta < -0.02 else "stable"
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
                                   "important": 0, "oldest_days": 0},
    }
    metrics["alerts"] = _alerts(metrics, policy, important_changes, scope_alerts)
    queue = metrics["conflicts"]
    if queue["important"]:
        metrics["alerts"].append({
            "level": "info", "message": f"important memory modified: {queue['important']} agent change(s) to "
                                        "important memories wait for a user",
            "action": "memory-lake conflicts list; the attempted change is in memory_history and conflicts"})
    if queue["open"] > queue["important"]:
        metrics["alerts"].append({
            "level": "info", "message": f"{queue['open'] - queue['important']} open conflict(s) wait for a user "
                                        f"(oldest {queue['oldest_days']} days)"
                                        + (f"; {queue['open']} open with the {queue['important']} on important "
                                           "memories" if queue["important"] else ""),
            "action": "memory-lake conflicts list, then conflicts resolve ID --take lake|incoming|both|value=TEXT"})
    if suggested_archive:
        metrics["alerts"].append({
            "level": "info",
            "message": f"{suggested_archive} long-term memories not used for {policy.tiers.suggest_archive_days} days",
            "action": "suggest archive: review them (memory-lake sql \"SELECT * FROM memory_flags\"), then archive "
                      "one (memory-lake edit ID --set expires_at=YYYY-MM-DD, today or earlier: the next run archives it), forget it "
                      "(memory-lake forget ID --reason TEXT) or keep it"})
    return metrics


def _alerts(metrics: dict[str, Any], policy: Policy, important_changes: int,
            scope_alerts: dict[str, int] | None) -> list[dict[str, str]]:
    """Seed 000 告警规则, each alert ``{level, message, action}``."""
    h = policy.health
    alerts = []
    for tier, action in (("working", "promote the oldest working memories to short_term (the nightly run does)"),
                         ("short_term", "move the oldest short_term memories to long_term or archive them")):
        cap = metrics["capacity"][tier]
        if cap["utilization"] is not None and cap["utilization"] > h.utilization_warning:
            alerts.append({"level": "warning",
                           "message": f"{tier} memory at {cap['utilization']:.0%} of capacity ({cap['used']}/{cap['limit']})",
                           "action": action})
    if scope_alerts:
        for tier in ("working", "short_term"):
            if scope_alerts.get(tier):
                alerts.append({"level": "warning",
                               "message": f"{scope_alerts[tier]} scope(s) with {tier} memory above "
                                          f"{h.utilization_warning:.0%} of capacity",
                               "action": "see the scopes table; the tier rules move the oldest memories"})
    rate = metrics["hit_rate"]["last_7d"]
    if rate is not None and rate < h.hit_rate_warning:
        alerts.append({"level": "warning", "message": f"7-day hit rate {rate:.0%} is below {h.hit_rate_warning:.0%}",
                       "action": "switch agents to hybrid search; clean up stale memories"})
    stale = metrics["staleness"]
    if stale["stale_ratio"] > h.stale_ratio_info:
        alerts.append({"level": "info",
                       "message": f"{stale['stale_count']} memories not accessed for {h.stale_days} days "
                                  f"({stale['stale_ratio']:.0%})",
                       "action": "review them for archiving"})
    if important_changes:
        alerts.append({"level": "info", "message": f"{important_changes} change(s) to important memories",
                       "action": "review the audit trail in memory_history"})
    return alerts


def _alert_counts(scopes: list[dict[str, Any]], threshold: float) -> dict[str, int]:
    """How many scopes are above the utilisation threshold, per capacity tier."""
    counts = {"working": 0, "short_term": 0}
    for scope in scopes:
        for tier in counts:
            utilization = scope["capacity"][tier]["utilization"]
            if utilization is not None and utilization > threshold:
                counts[tier] += 1
    return counts
