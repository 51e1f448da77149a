"""`patrol`: the daily health patrol (seed 000 示例三 记忆健康度巡检)."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from .common import AsOfOpt, JsonOpt, LakeOpt, _open, _options, _show, out


def patrol(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would move and the advice; write nothing.")] = False,
    tenant: Annotated[Optional[str], typer.Option(help="Only this tenant's scopes and its alerts.")] = None,
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The daily health patrol (seed 000 example 3, 记忆健康度巡检): read the health alerts (the
    last health snapshot, or the dashboard computed now before the first) and act on them, per scope
    (tenant, agent, user), measured on the lake as of --as-of:

    working above 85% of the scope's working capacity ([health] utilization_warning): the oldest
    working memories (least recently accessed) move to short_term until at most 75% are left
    ([patrol] working_target; 15 of 20). Then short_term above 85%, counting what just moved in: the
    oldest short_term memories (created first) move to long_term until at most 77% ([patrol]
    short_term_target; 77 of 100). Important memories and the lake's own summaries never move.

    A 7-day hit rate below 30% and a stale ratio above 10% are advice: printed, nothing moves.
    Moves are logged like the tier rules' (memory_history, cleanup_log and memory-cleanup.log, rule
    patrol). Run again at the same --as-of: nothing moves. Waits for a run that holds the lake
    ($MEMORY_LAKE_WAIT_S), then exits 3."""
    from ..observe import patrol as run_patrol
    from ..store import check_scope, resolve_as_of

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    check_scope(the_lake, tenant)
    report = run_patrol(the_lake, resolve_as_of(as_of), dry_run=dry_run, tenant=tenant)
    _show(opts, report.as_dict(), lambda: print_patrol(report.details))


def print_patrol(details: dict[str, Any]) -> None:
    source = details["alerts_from"]
    if source["source"] == "snapshot":
        out.print(f"alerts of the health snapshot of {source['as_of']}", markup=False)
    else:
        out.print(f"alerts computed as of {source['as_of']} ({source['why']})", markup=False)
    scopes = details["scopes"]
    for alert in details["alerts"]:
        if alert["code"] in ("hit_rate_low", "stale_ratio"):
            continue  # the advice lines below
        out.print(f"[{alert['level']}] {alert['code']}: {_alert_line(alert)}", markup=False)
        tier = _capacity_tier(alert["code"])
        _scope_lines(tier, scopes)
    for item in details["unannounced"]:
        out.print(f"{item['tier']} (no alert read for it; above {details['threshold']:.0%} at this as_of): "
                  f"{item['done']}", markup=False)
        _scope_lines(item["tier"], scopes)
    for advice in details["advice"]:
        out.print(f"advice [{advice['level']}] {advice['code']}: {advice['message']} → {advice['action']}", markup=False)
    out.print(details["final"], markup=False)


def _capacity_tier(code: str | None) -> str | None:
    if code in ("working_capacity", "working_capacity_scopes"):
        return "working"
    if code in ("short_term_capacity", "short_term_capacity_scopes"):
        return "short_term"
    return None


def _alert_line(alert: dict[str, Any]) -> str:
    if _capacity_tier(alert["code"]) is not None:
        return alert["done"]
    return f"{alert['message']} ({alert['done']}) → {alert['action']}"


def _scope_lines(tier: str | None, scopes: list[dict[str, Any]]) -> None:
    """One line per scope when an alert covers several (a single one is on the alert's line)."""
    over = [s for s in scopes if tier and s[tier]["over"]]
    if len(over) < 2:
        return
    for scope in over:
        name = "/".join(p or "_" for p in (scope["tenant"], scope["agent_id"], scope["user_id"]))
        out.print(f"  {name}: {scope[tier]['done']}", markup=False)
