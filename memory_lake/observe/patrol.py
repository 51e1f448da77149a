"""The daily patrol (seed 000 示例三 记忆健康度巡检): read the health alerts, deal with the ones a
rule can deal with, and say what to do about the others.

The alerts come from the last stored health snapshot at or before `as_of` (``health_snapshots``,
overall or the tenant's), or from ``compute_health`` at `as_of` when there is none (or when it was
written before alerts had codes). What to move is measured on the lake itself at `as_of`, per scope
(tenant, agent_id, user_id), since a snapshot can be hours old:

1. working above ``[health] utilization_warning`` (85 %) of the scope's working capacity: the
   oldest working memories move to short_term until at most floor(``[patrol] working_target`` x
   capacity) are left (75 %: 15 of 20). "Oldest" as the tier rule ``working_overflow`` orders
   them: least recently accessed first, then created first, then id.
2. then short_term above 85 %, counting what step 1 just moved in: the oldest short_term memories
   (created first, then id: the FIFO of ``short_term_overflow``) move to long_term, their status
   kept, until at most floor(``[patrol] short_term_target`` x capacity) (77 %: 77 of 100). A memory
   that entered short_term at this `as_of` (moved in by step 1 or by a tier rule) is the newest
   there and stays: room is made for it, it is not passed on.

Never moved: important memories (the important tier, and memories marked important - importance at
or above ``[tiers] important_importance`` - that the nightly's ``mark_important`` has not moved yet)
and the lake's own summaries (type ``summary``, operator ``system``). When only those keep a scope
above the target, the report says so. A low hit rate (``hit_rate_low``) and staleness
(``stale_ratio``) are advice: their message and action are reported, nothing moves. Other alerts are
listed with their own action.

The moves go through ``maintain.apply_moves`` with rule ``patrol`` (memory_history, cleanup_log,
``memory-cleanup.log``) in one transaction under the write lock. ``dry_run`` plans the same and
writes nothing. Run again at the same `as_of`, the patrol moves nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from math import floor
from typing import Any

import duckdb
import polars as pl

from ..maintain import append_cleanup_log, apply_moves
from ..store import Policy, StepReport, iso, transaction
from .health import compute_health

ACTIVE = "('active', 'conflicted')"
RULE = "patrol"
# tier -> (where its oldest go, the [patrol] target)
CAPACITY = {"working": ("short_term", "working_target"), "short_term": ("long_term", "short_term_target")}
# the alerts the patrol acts on, by the tier they are about
CAPACITY_CODES = {"working_capacity": "working", "working_capacity_scopes": "working",
                  "short_term_capacity": "short_term", "short_term_capacity_scopes": "short_term"}
# the alerts that are advice only (seed: 提示优化 / 提示清理)
ADVICE_CODES = ("hit_rate_low", "stale_ratio", "hit_rate_low_scopes", "stale_ratio_scopes")
OFF_SUMMARY = "off ([patrol] after_nightly = false)"
LABELS = {"working_to_short_term": "working → short_term", "short_term_to_long_term": "short_term → long_term",
          "scopes": "scopes acted on", "held": "scopes held above target", "advice": "advice"}


def patrol(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None, dry_run: bool = False,
           *, tenant: str | None = None) -> StepReport:
    """The patrol of the module docstring as of `as_of` (only `tenant`'s scopes and alerts when
    given). Counts: moved, per tier, scopes acted on, scopes held above the target, advice;
    details: where the alerts came from, each alert with what was done for it, each scope acted on
    (before/after, limit, target, the ids moved), the advice."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("patrol", as_of)
    log_lines: list[str] = []
    if dry_run:
        with lake.reader() as con:  # the live lake: a run holding it makes this wait, then LakeBusy
            plan = _plan(con, as_of, policy, tenant)
    else:
        with lake.writer(purpose="patrol") as con:
            plan = _plan(con, as_of, policy, tenant)
            moves = [(i, to) for scope in plan.scopes for tier, (to, _) in CAPACITY.items()
                     for i in scope[tier]["moved"]]
            if moves:
                frame = pl.DataFrame(moves, schema={"id": pl.String, "to_tier": pl.String}, orient="row")
                con.register("patrol_moves", frame)
                try:
                    with transaction(con):
                        con.execute(f"CREATE OR REPLACE TEMP TABLE tier_moves AS SELECT m.id, v.to_tier, "
                                    f"m.status AS to_status, '{RULE}' AS rule FROM memories m JOIN patrol_moves v USING (id)")
                        moved = apply_moves(con, as_of=as_of, run_id=run_id, log_lines=log_lines)
                        if moved != len(moves):  # the plan excludes what apply_moves drops: never expected
                            raise RuntimeError(f"patrol planned {len(moves)} moves, apply_moves made {moved}")
                finally:
                    con.unregister("patrol_moves")
        append_cleanup_log(lake.root, log_lines)
    return _report(plan, as_of, run_id, policy, dry_run)


def nightly_patrol(lake, as_of: datetime, run_id: str | None = None) -> StepReport:
    """The patrol as a step at the end of the nightly run, when ``[patrol] after_nightly = true``;
    otherwise a report that says it is off (counts {}), and nothing is read or written."""
    if not lake.policy.patrol.after_nightly:
        return PatrolOff("patrol", as_of, run_id or lake.new_run_id("patrol", as_of),
                         details={"status": "off", "reason": "[patrol] after_nightly = false: the patrol runs on its "
                                                             "own (memory-lake patrol, the daily `patrol` deployment)"})
    return patrol(lake, as_of, run_id=run_id)


nightly_patrol.step_name = "patrol"  # runs.timed names the step after its report


class PatrolOff(StepReport):
    """The report of a nightly whose patrol is switched off: no counts, and a summary that says so."""

    @property
    def summary(self) -> str:
        return OFF_SUMMARY


# ---------------------------------------------------------------------------- the plan
@dataclass
class Plan:
    alerts_from: dict[str, Any]
    alerts: list[dict[str, Any]]
    scopes: list[dict[str, Any]] = field(default_factory=list)
    threshold: float = 0.85


def _plan(con: duckdb.DuckDBPyConnection, as_of: datetime, policy: Policy, tenant: str | None) -> Plan:
    alerts_from, alerts = read_alerts(con, as_of, policy, tenant)
    threshold = policy.health.utilization_warning  # the threshold the alerts use
    plan = Plan(alerts_from, alerts, threshold=threshold)
    scopes = con.execute(
        f"""
        SELECT tenant, agent_id, user_id, count(*) FILTER (WHERE tier = 'working'),
               count(*) FILTER (WHERE tier = 'short_term')
        FROM memories WHERE status IN {ACTIVE} AND ($tenant IS NULL OR tenant = $tenant)
        GROUP BY ALL ORDER BY tenant, agent_id NULLS FIRST, user_id NULLS FIRST
        """, {"tenant": tenant}).fetchall()
    for t, a, u, working, short_term in scopes:
        mine = policy.for_tenant(t)
        limits = {"working": mine.tiers.working_capacity, "short_term": mine.tiers.short_term_capacity}
        if not (_over(working, limits["working"], threshold) or _over(short_term, limits["short_term"], threshold)):
            continue  # short_term only takes more when working is above its threshold
        scope = {"tenant": t, "agent_id": a, "user_id": u}
        arrived: list[str] = []
        for tier, used in (("working", working), ("short_term", short_term)):
            to, target_key = CAPACITY[tier]
            limit = limits[tier]
            target = floor(Decimal(str(getattr(mine.patrol, target_key))) * limit)
            measured = used + len(arrived) if tier == "short_term" else used
            entry = {"before": used, "arrived": len(arrived) if tier == "short_term" else 0, "measured": measured,
                     "limit": limit, "target": target, "utilization": _utilization(measured, limit),
                     "over": _over(measured, limit, threshold), "to": to, "moved": [], "kept": {}}
            if entry["over"]:
                candidates = _candidates(con, scope, tier, as_of, mine.tiers.important_importance)
                need = measured - target
                for memory_id, kind in candidates:  # what working just moved in is not among them yet
                    if kind is None and len(entry["moved"]) < need:
                        entry["moved"].append(memory_id)
                    elif kind is not None:
                        entry["kept"][kind] = entry["kept"].get(kind, 0) + 1
                if tier == "short_term":  # ... and stays: the newest in short_term
                    entry["kept"]["just_arrived"] = entry["kept"].get("just_arrived", 0) + len(arrived)
                entry["kept"] = {k: v for k, v in entry["kept"].items() if v}
            entry["after"] = measured - len(entry["moved"])
            entry["held"] = entry["over"] and entry["after"] > target
            scope[tier] = entry
            if tier == "working":
                arrived = list(entry["moved"])
        if scope["working"]["over"] or scope["short_term"]["over"]:
            plan.scopes.append(scope)
    return plan


def _over(used: int, limit: int, threshold: float) -> bool:
    """Above the threshold, measured as the dashboard measures utilisation (4 decimals)."""
    return bool(limit) and round(used / limit, 4) > threshold


def _utilization(used: int, limit: int) -> float | None:
    return round(used / limit, 4) if limit else None


def _candidates(con: duckdb.DuckDBPyConnection, scope: dict[str, Any], tier: str, as_of: datetime,
                important_at: float) -> list[tuple[str, str | None]]:
    """The scope's live memories of `tier`, oldest first (as the tier rules order them), each with
    why it may not move (None: it may): marked important, the lake's own summary, or (short_term)
    it entered the tier at this as_of."""
    order = "last_accessed_at, created_at, id" if tier == "working" else "created_at, id"
    rows = con.execute(
        f"""
        SELECT id, CASE WHEN importance >= $important THEN 'marked_important'
                        WHEN type = 'summary' AND operator = 'system' THEN 'summaries'
                        WHEN $tier = 'short_term' AND id IN (SELECT memory_id FROM cleanup_log
                             WHERE to_tier = $tier AND from_tier <> $tier AND as_of = $as_of) THEN 'just_arrived'
                   END AS kept
        FROM memories
        WHERE tenant = $tenant AND agent_id IS NOT DISTINCT FROM $agent AND user_id IS NOT DISTINCT FROM $user
          AND tier = $tier AND status IN {ACTIVE}
        ORDER BY {order}
        """,
        {"important": important_at, "tier": tier, "as_of": as_of, "tenant": scope["tenant"], "agent": scope["agent_id"],
         "user": scope["user_id"]}).fetchall()
    return [(memory_id, kept) for memory_id, kept in rows]


def read_alerts(con: duckdb.DuckDBPyConnection, as_of: datetime, policy: Policy,
                tenant: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The alerts the patrol reads: ``(where from, alerts)``. The last stored snapshot at or before
    `as_of` (its overall row, or `tenant`'s), else the dashboard computed at `as_of`."""
    level = "tenant" if tenant else "overall"
    row = con.execute(
        """
        SELECT as_of, metrics FROM health_snapshots
        WHERE as_of = (SELECT max(as_of) FROM health_snapshots WHERE as_of <= $as_of)
          AND level = $level AND tenant IS NOT DISTINCT FROM $tenant
        """, {"as_of": as_of, "level": level, "tenant": tenant}).fetchone()
    why = f"no health snapshot at or before {iso(as_of)}"
    if row is not None:
        alerts = json.loads(row[1]).get("alerts") or []
        if all("code" in alert for alert in alerts):
            return {"source": "snapshot", "as_of": iso(row[0])}, alerts
        why = f"the health snapshot of {iso(row[0])} predates alert codes"
    health = compute_health(con, as_of, policy)
    metrics = health["tenants"].get(tenant) if tenant else health["overall"]
    return {"source": "computed", "as_of": iso(as_of), "why": why}, list((metrics or {}).get("alerts") or [])


# ---------------------------------------------------------------------------- the report
def _report(plan: Plan, as_of: datetime, run_id: str, policy: Policy, dry_run: bool) -> StepReport:
    scopes = plan.scopes
    for scope in scopes:
        for tier in CAPACITY:
            scope[tier]["done"] = describe_tier(tier, scope[tier], plan.threshold, dry_run)
    moved = {tier: sum(len(s[tier]["moved"]) for s in scopes) for tier in CAPACITY}
    acted = [s for s in scopes if s["working"]["moved"] or s["short_term"]["moved"]]
    held = [s for s in scopes if s["working"]["held"] or s["short_term"]["held"]]
    advice = [{k: a.get(k) for k in ("level", "code", "message", "action")} for a in plan.alerts
              if a.get("code") in ADVICE_CODES]
    alerts = [{**{k: a.get(k) for k in ("level", "code", "message", "action")},
               "done": _alert_done(a.get("code"), scopes, plan.threshold, dry_run)} for a in plan.alerts]
    announced = {CAPACITY_CODES[a["code"]] for a in alerts if a["code"] in CAPACITY_CODES}
    unannounced = [{"tier": tier, "done": _tier_done(tier, scopes, plan.threshold, dry_run)}
                   for tier in CAPACITY if tier not in announced and any(s[tier]["over"] for s in scopes)]
    counts = {"moved": moved["working"] + moved["short_term"], "working_to_short_term": moved["working"],
              "short_term_to_long_term": moved["short_term"], "scopes": len(acted), "held": len(held),
              "advice": len(advice)}
    details = {"dry_run": dry_run, "as_of": iso(as_of), "alerts_from": plan.alerts_from,
               "threshold": plan.threshold,
               "targets": {"working": policy.patrol.working_target, "short_term": policy.patrol.short_term_target},
               "alerts": alerts, "unannounced": unannounced, "advice": advice,
               "scopes": [_scope_detail(s) for s in scopes]}
    details["final"] = final_line(counts, details)
    return StepReport("patrol", as_of, run_id, counts, details, labels=LABELS)


def _scope_detail(scope: dict[str, Any]) -> dict[str, Any]:
    keys = ("before", "arrived", "measured", "after", "limit", "target", "utilization", "over", "held", "to", "moved",
            "kept", "done")
    return {"tenant": scope["tenant"], "agent_id": scope["agent_id"], "user_id": scope["user_id"],
            **{tier: {k: scope[tier][k] for k in keys} for tier in CAPACITY}}


def scope_name(scope: dict[str, Any]) -> str:
    return "/".join(p or "_" for p in (scope["tenant"], scope["agent_id"], scope["user_id"]))


KEPT_WORDS = {
    "marked_important": "marked important (the nightly's mark_important moves them to the important tier)",
    "summaries": "the lake's own summaries",
    "just_arrived": "new in short_term at this as_of (the newest there)",
}


def describe_tier(tier: str, entry: dict[str, Any], threshold: float, dry_run: bool) -> str:
    """``working 18/20 (90%) → 15/20: moved 3 oldest to short_term``, or why not (dry run: "would move")."""
    limit, to = entry["limit"], entry["to"]
    start = f"{tier} {entry['before']}/{limit} ({entry['before'] / limit:.0%})"
    if entry["arrived"]:
        start += f" + {entry['arrived']} from working = {entry['measured']}/{limit} ({entry['utilization']:.0%})"
    if not entry["over"]:
        return f"{start}: not above {threshold:.0%}, nothing to move"
    n = len(entry["moved"])
    text = f"{start} → {entry['after']}/{limit}: "
    text += f"{'would move' if dry_run else 'moved'} {n} oldest to {to}" if n else "nothing moved"
    if entry["held"]:
        kept = "; ".join(f"{v} {KEPT_WORDS[k]}" for k, v in entry["kept"].items())
        text += f"; still above the {entry['target']}/{limit} target, and the patrol may not move the rest: {kept}"
    return text


def _tier_done(tier: str, scopes: list[dict[str, Any]], threshold: float, dry_run: bool) -> str:
    over = [s for s in scopes if s[tier]["over"]]
    if not over:
        return f"nothing to move: no scope's {tier} is above {threshold:.0%} at this as_of"
    if len(over) == 1:
        return f"{over[0][tier]['done']} ({scope_name(over[0])})"
    n = sum(len(s[tier]["moved"]) for s in over)
    held = sum(s[tier]["held"] for s in over)
    text = (f"{len(over)} scopes above {threshold:.0%}: {'would move' if dry_run else 'moved'} {n} oldest {tier} "
            f"memories to {CAPACITY[tier][0]}")
    return text + (f"; {held} scope(s) stay above the target (only memories that may not move are left)" if held else "")


def _alert_done(code: str | None, scopes: list[dict[str, Any]], threshold: float, dry_run: bool) -> str:
    if code in CAPACITY_CODES:
        return _tier_done(CAPACITY_CODES[code], scopes, threshold, dry_run)
    if code in ADVICE_CODES:
        return "advice only: nothing moved"
    return "not the patrol's: left for a person"


def final_line(counts: dict[str, int], details: dict[str, Any]) -> str:
    """The closing line of the command: what moved (or would), in how many scopes, the advice."""
    what = "dry run" if details["dry_run"] else "patrol"
    if counts["moved"]:
        verb = "would move" if details["dry_run"] else "moved"
        text = (f"{what} as of {details['as_of']}: {verb} {counts['moved']} memories in {counts['scopes']} "
                f"scope(s) ({counts['working_to_short_term']} working → short_term, "
                f"{counts['short_term_to_long_term']} short_term → long_term)")
    else:
        text = f"{what} as of {details['as_of']}: nothing to move"
    if counts["held"]:
        text += f"; {counts['held']} scope(s) stay above the target"
    text += f"; {counts['advice']} advice"
    if details["dry_run"]:
        text += "; nothing written"
    elif counts["moved"]:
        text += f"; logged in cleanup_log and memory-cleanup.log (rule {RULE})"
    return text
