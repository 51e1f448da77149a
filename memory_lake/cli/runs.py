"""Runs: `run nightly` (the Prefect flow, in this process), report and health."""

from __future__ import annotations

import contextlib
import os
import sys
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ..store import describe_error, write_wait_s
from .common import AsOfOpt, EXIT_BLOCKED, EXIT_DEGRADED, JsonOpt, LakeOpt, Options, ReportsOpt, SetOpt, _note_source, _open, _options, _show, err, out, parse_overrides, step_lines


# Prefect's temporary API gives up after 20 s, which a busy machine can exceed on its first start;
# PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS set in the environment wins.
EPHEMERAL_STARTUP_TIMEOUT_S = 120


def _run_nightly(the_lake, as_of: str | None, reports: Optional[Path], opts: Options,
                 policy: dict[str, Any] | None = None, use_prefect: bool = True) -> dict[str, Any]:
    """Run the nightly steps: as the Prefect flow in this process, or - with `use_prefect` False, or
    when no Prefect API can be reached (a warning says so) - the same library steps in the same
    order without Prefect, so a cron night never fails because of the orchestrator. Stdout is kept
    clean for --json; a line per step on stderr. A blocked publish returns its summary."""
    from ..observe import PublishBlocked, run_nightly_steps
    from ..store import resolve_as_of

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_HOME", str(the_lake.root / ".prefect"))
    # A failed step would otherwise print Prefect's tracebacks before the one error line (the runs
    # row keeps the step and the error); MEMORY_LAKE_DEBUG=1 shows Prefect's warnings and errors.
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING" if os.environ.get("MEMORY_LAKE_DEBUG") else "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", str(EPHEMERAL_STARTUP_TIMEOUT_S))
    reports_dir = str(reports) if reports else None
    with contextlib.redirect_stdout(sys.stderr), step_lines("nightly"):
        if use_prefect:
            from flows.deploy import api_reachable

            problem = api_reachable()
            if problem is not None:
                err.print(f"warning: no Prefect API could be reached ({problem}); running the nightly steps "
                          f"without Prefect (same steps, same order; --no-prefect skips this attempt)",
                          markup=False, highlight=False)
                use_prefect = False
        if not use_prefect:
            return run_nightly_steps(the_lake, resolve_as_of(as_of), reports_dir, wait_s=write_wait_s())
        from flows.nightly import nightly

        try:
            return nightly(str(the_lake.root), as_of=as_of, reports_dir=reports_dir, policy=policy, wait_s=write_wait_s())
        except PublishBlocked as exc:  # the flow run ends Failed; the command reports it and exits 4
            return exc.summary


def _rate(hit_rate: dict[str, Any]) -> str:
    value = hit_rate.get("last_7d")
    if value is None:
        return "n/a (" + (hit_rate.get("note") or "no searches logged in the last 7 days") + ")"
    if hit_rate.get("trend"):
        slope = hit_rate.get("trend_slope")
        per_day = f", {slope * 100:+.2f} points a day" if isinstance(slope, (int, float)) else ""
        return f"{value:.0%}, trend {hit_rate['trend']}{per_day}"
    note = hit_rate.get("trend_note")
    return f"{value:.0%}" + (f", no trend yet ({note})" if note else "")


def _print_run(summary: dict[str, Any], lake_root: Path | None = None) -> None:
    out.print(f"run {summary['run_id']} ({summary['as_of']}): {summary['status']} in {summary['duration_s']} s")
    for name, step in summary["steps"].items():
        out.print(f"  {name}: {step['summary']}")
    publish = summary.get("publish") or {}
    if publish.get("status") == "blocked":
        err.print(f"publish blocked by: {', '.join(publish.get('failed') or [])}; CURRENT left at {publish.get('current')}")
    elif publish.get("status") == "published":
        out.print(f"published {publish['version']}: {publish['path']} (exports/CURRENT points at it)", markup=False)
    elif publish.get("status") == "unchanged":
        held = " but the held scopes below" if publish.get("held") else ""
        out.print(f"nothing changed since {publish.get('current')}{held}: no new version", markup=False)
    for h in publish.get("held") or []:  # what a cron log keeps must say it (stranger's try, issue 38)
        scope = "/".join(p or "_" for p in (h["tenant"], h["agent_id"], h["user_id"]))
        err.print(f"held {scope} at its published state (since {h['since']}): {h['reason']}; to let it through: "
                  f"{h['action']}", markup=False, highlight=False)
    held_forgets = ((summary["steps"].get("ingest_inbox") or {}).get("counts") or {}).get("forgets held for a user")
    if held_forgets:
        err.print(f"{held_forgets} forget(s) by an agent held for a user (more than a "
                  "scope's allowance): see `memory-lake quarantine list`; a user confirms with `memory-lake forget ID "
                  "--reason TEXT`", markup=False, highlight=False)
    for error in summary.get("errors") or []:
        err.print(f"step {error['step']} skipped {describe_error(error)}; the rest of the run went on "
                  f"(traceback: {error.get('traceback_file')}; MEMORY_LAKE_DEBUG=1 prints it here)", markup=False, highlight=False)
        if os.environ.get("MEMORY_LAKE_DEBUG") and error.get("traceback_file") and lake_root is not None:
            err.print((Path(lake_root) / error["traceback_file"]).read_text(encoding="utf-8"), markup=False, highlight=False)
    tiers = (summary["steps"].get("enforce_tiers") or {}).get("counts") or {}
    if tiers.get("long_term_dormant"):
        err.print(f"note: {tiers['long_term_dormant']} long-term memories went dormant tonight (unused for longer than "
                  f"the policy allows: history imported with its old dates does this on its first night); search leaves "
                  f"them out (--include-inactive finds them). `memory-lake restore --all-dormant --tenant T` brings a scope's back; "
                  f"`ingest --history` starts the idle clock at ingest", markup=False, highlight=False)
    ingest_step = summary["steps"].get("ingest_inbox") or {}
    ingest = ingest_step.get("counts") or {}
    unrecognised = (ingest_step.get("details") or {}).get("unrecognised_files") or []
    if unrecognised:
        err.print(f"not ingested, unrecognised file(s) in inbox/: {', '.join(unrecognised)} (a snapshot ends in "
                  ".jsonl, .ndjson, .json or .parquet; usage events in .events.jsonl)")
    if ingest.get("files") == 0:
        out.print("inbox/ held no new snapshot files: this run maintained what the lake already holds (agents drop "
                  "snapshots there; see README, \"The snapshot contract\")", markup=False)


def _note_an_earlier_as_of(the_lake, when) -> None:
    """Say so when a run is dated before the last nightly run (a backfill or a typo): it works and
    publishes, but `health` keeps showing the newest snapshot."""
    from ..store import MemoryLakeError, iso

    try:
        result = the_lake.read("SELECT max(as_of) AS latest FROM runs WHERE kind = 'nightly' AND status <> 'failed'")
    except MemoryLakeError:
        return  # busy or unpublished: the run itself will say so
    latest = result.frame["latest"][0] if result.source == "live" and result.frame.height else None
    if latest is not None and when < latest:
        err.print(f"note: as_of {iso(when)} is before the last nightly run's ({iso(latest)}): this run reads and "
                  f"ages the memories as of then and publishes a new version; `memory-lake health` keeps showing "
                  f"the newest snapshot ({iso(latest)})", markup=False)


def run_nightly(
    ctx: typer.Context,
    as_of: AsOfOpt = None,
    reports: ReportsOpt = None,
    set_: SetOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
    no_prefect: Annotated[bool, typer.Option("--no-prefect", help="Run the library steps without Prefect "
                                             "(the same steps in the same order).")] = False,
) -> None:
    """The nightly run, in this order: queued decisions, ingest, usage events, tier rules, search
    index, dedup, entities, summaries, the summaries' index, health, stage, checks, publish, targets,
    housekeeping, report, notify.
    Exits 0 ok, 1 a step failed, 2 bad input, 3 lake busy, 4 publish blocked by a failed check,
    5 degraded: published, but a maintenance step skipped a scope (or itself) after an error - the
    output names the step, the scope and the error; `step_errors` and logs/step-errors/ keep them."""
    from ..store import iso, resolve_as_of

    opts = _options(ctx, lake, json_out)
    overrides = parse_overrides(set_)
    the_lake = _open(opts, policy_overrides=overrides)  # validates the overrides before Prefect starts
    when = resolve_as_of(as_of)
    _note_an_earlier_as_of(the_lake, when)
    summary = _run_nightly(the_lake, iso(when), reports, opts, overrides, use_prefect=not no_prefect)
    _show(opts, summary, lambda: (_print_run(summary, the_lake.root), out.print(f"report: {summary.get('report')}")))
    if summary["status"] == "blocked":
        raise typer.Exit(EXIT_BLOCKED)
    if summary["status"] == "degraded":
        raise typer.Exit(EXIT_DEGRADED)


def report(ctx: typer.Context, as_of: AsOfOpt = None, reports: ReportsOpt = None, lake: LakeOpt = None,
           json_out: JsonOpt = False) -> None:
    """Render the HTML health report (<lake>/reports/<date>/<id>.html and latest.html unless --reports DIR) from the
    lake's latest state."""
    from ..store import resolve_as_of
    from ..observe import write_report

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    when = resolve_as_of(as_of)
    result = write_report(the_lake, when, the_lake.new_run_id("report", when), None, reports)
    _note_source(the_lake)
    _show(opts, result.details, lambda: out.print(f"report: {result.details['path']}"))


def health(ctx: typer.Context, tenant: Annotated[Optional[str], typer.Option(help="Only this tenant.")] = None,
           as_of: AsOfOpt = None, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """The health dashboard (capacity, distribution, hit rate, staleness, alerts): the latest
    snapshot of a nightly run, or computed now before the first run."""
    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    data = the_lake.health(tenant=tenant, as_of=as_of)
    _note_source(the_lake)

    def human() -> None:
        overall = data["overall"]
        if overall is None:
            out.print(f"no memories for tenant {tenant}")
            return
        out.print(f"health as of {data['as_of']}" + (f" for tenant {tenant}" if tenant else ""))
        scopes = data.get("scopes") or []
        for tier, cap in overall["capacity"].items():
            limit = f"/{cap['limit']} ({cap['utilization']:.0%})" if cap["limit"] else ""
            out.print(f"  {tier:<11} {cap['used']}{limit}{_per_scope(tier, scopes) if cap['limit'] else ''}")
        stale = overall["staleness"]
        out.print(f"  stale: {stale['stale_count']} ({stale['stale_ratio']:.0%}), oldest unaccessed "
                  f"{stale['oldest_unaccessed_days']} days; hit rate 7d: {_rate(overall['hit_rate'])}")
        inactive = overall.get("inactive") or {}
        if inactive.get("dormant") or inactive.get("archived"):
            out.print(f"  not counted above: {inactive['dormant']} dormant, {inactive['archived']} archived "
                      "(search leaves them out; `memory-lake restore ID...` makes them active again)")
        for alert in overall["alerts"]:
            out.print(f"  [{alert['level']}] {alert['message']} - {alert['action']}", markup=False)
        moved = _patrolled_since(the_lake, data["as_of"])
        if moved:
            out.print(f"note: the patrol moved {moved[0]} memories since this snapshot (last at {moved[1]}); the figures "
                      f"above are the snapshot's: `memory-lake health --as-of {moved[1]}` measures the lake after it",
                      markup=False)

    _show(opts, data, human)


def _patrolled_since(the_lake, as_of: str) -> tuple[int, str] | None:
    """(memories the patrol moved after the snapshot of `as_of`, when it last did), or None."""
    from ..store import iso, resolve_as_of

    try:
        frame = the_lake.sql("SELECT count(*) AS n, max(as_of) AS last FROM cleanup_log WHERE rule = 'patrol' AND as_of > ?",
                             [resolve_as_of(as_of)])
    except Exception:  # an old lake, a published version without the table: nothing to say
        return None
    n, last = frame.row(0)
    return (int(n), iso(last)) if n else None


def _per_scope(tier: str, scopes: list[dict]) -> str:
    """Where an overall limit comes from: capacity is per scope (tenant, agent, user), so the
    overall limit is the sum of the scopes' limits ("20 each in 17 scopes")."""
    limits = [s["capacity"][tier]["limit"] for s in scopes if s["capacity"][tier]["limit"]]
    if len(limits) < 2:
        return ""
    each = f"{limits[0]} each" if len(set(limits)) == 1 else f"{min(limits)}-{max(limits)} each"
    return f"  limit {each} in {len(limits)} scopes"


TimezoneOpt = Annotated[Optional[str], typer.Option("--timezone", envvar="MEMORY_LAKE_TZ",
                                                    help="IANA time zone the cron strings are read in "
                                                         "(default $MEMORY_LAKE_TZ), e.g. Europe/Berlin or UTC.")]


def _schedule_target(opts: Options, timezone: Optional[str], reports: Optional[Path]) -> tuple[str, str, str]:
    from ..store import InputError

    if not timezone:
        raise InputError("no time zone: pass --timezone (an IANA name such as Europe/Berlin or UTC) or set MEMORY_LAKE_TZ")
    the_lake = _open(opts)  # an existing lake; its absolute path goes into the deployments
    return str(the_lake.root.resolve()), timezone, str(Path(reports or the_lake.root / "reports").expanduser().resolve())


def deploy(ctx: typer.Context, timezone: TimezoneOpt = None, reports: ReportsOpt = None, lake: LakeOpt = None,
           json_out: JsonOpt = False) -> None:
    """Prepare the Prefect server in PREFECT_API_URL: create the process work pool `memory-lake` and
    register every deployment of prefect.yaml (nightly, sync) against this lake's absolute path.
    Then start a worker: prefect worker start --pool memory-lake."""
    opts = _options(ctx, lake, json_out)
    lake_dir, tz, reports_dir = _schedule_target(opts, timezone, reports)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from flows.deploy import WORK_POOL, deploy_all, deployment_specs

    with contextlib.redirect_stdout(sys.stderr):
        names = deploy_all(lake_dir, tz, reports_dir)
    specs = {s.name: s.cron for s in deployment_specs()}
    data = {"work_pool": WORK_POOL, "lake_dir": lake_dir, "timezone": tz, "reports_dir": reports_dir,
            "deployments": [{"name": n, "cron": specs[n.split("/")[-1]]} for n in names]}
    _show(opts, data, lambda: (
        [out.print(f"deployed {d['name']} ({d['cron']}, {tz}) on {lake_dir}", markup=False) for d in data["deployments"]],
        out.print(f"next: prefect worker start --pool {WORK_POOL}", markup=False)))


def serve_flows(ctx: typer.Context, timezone: TimezoneOpt = None, reports: ReportsOpt = None,
                lake: LakeOpt = None) -> None:
    """Run every deployment of prefect.yaml on its schedule from this process, without a work pool
    (Prefect's serve()); stop with Ctrl-C."""
    opts = _options(ctx, lake, False)
    lake_dir, tz, reports_dir = _schedule_target(opts, timezone, reports)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from flows.deploy import serve_all

    serve_all(lake_dir, tz, reports_dir)
