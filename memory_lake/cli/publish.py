"""The publish commands: `publish`, `publishes` (the kept versions), `rollback`, and `holds list` /
`holds release` (scopes the gate keeps at their published state)."""

from __future__ import annotations

import unicodedata

from typing import Annotated, Optional

import typer

from .common import AsOfOpt, EXIT_BLOCKED, JsonOpt, LakeOpt, SetOpt, _open, _options, _show, out, parse_overrides


def publish(ctx: typer.Context, as_of: AsOfOpt = None, set_: SetOpt = None, lake: LakeOpt = None,
            json_out: JsonOpt = False) -> None:
    """Stage an export, run the data checks, and switch exports/CURRENT when they pass.
    Exits 4 when a check blocked the publish (CURRENT untouched)."""
    opts = _options(ctx, lake, json_out)
    result = _open(opts, policy_overrides=parse_overrides(set_)).publish(as_of=as_of).details
    data = {k: v for k, v in result.items() if k != "scope_list"}

    def human() -> None:
        status, current = result["status"], result.get("current")
        if status == "published":
            out.print(f"published {result['version']}: exports/CURRENT now points at it")
        elif status == "unchanged":
            out.print(f"nothing new to publish: the lake's content equals CURRENT ({current})")
        elif status == "blocked":
            out.print(f"publish blocked by a failed check: nothing published, CURRENT stays {current or '(none)'}")
        else:
            out.print(f"publish {status}: version {result.get('version') or '-'}, CURRENT {current or '(none)'}")
        for check in result.get("checks", []):
            if not check["success"]:
                out.print(f"  failed: {check['expectation']} ({check['observed']})")
        _print_held(result.get("held") or [])

    _show(opts, data, human)
    if result["status"] == "blocked":
        raise typer.Exit(EXIT_BLOCKED)


def publishes(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """List the kept export versions, newest first: which one CURRENT points at, when and by which
    run each was published, its format version, rows and check results; then the rollbacks (who,
    why) and the publishes the checks blocked. --json adds each version's manifest."""
    opts = _options(ctx, lake, json_out)
    data = _open(opts).publishes()

    def human() -> None:
        if not data["versions"]:
            out.print("no version is kept: nothing was published yet (run `memory-lake publish` or the nightly run)")
        for v in data["versions"]:
            mark = "* " if v["current"] else "  "
            checks = f"checks {v['checks_passed']}/{v['checks_total']} passed"
            rows = (v.get("counts") or {}).get("rows")
            out.print(f"{mark}{v['version']}  as_of {v['as_of']}  rows {rows}  format {v['format_version'] or '-'}  "
                      f"{checks}  run {v['run_id']}" + ("  <- CURRENT" if v["current"] else ""))
        for r in data["rollbacks"]:
            # rows recorded before rollback refused control characters: shown escaped, never raw
            out.print(f"rollback {r['from_version']} -> {r['to_version']} at {r['as_of']} by "
                      f"{_plain(r['rolled_back_by'])}: {_plain(r['reason'])}")
        for b in data["blocked"][:10]:
            out.print(f"blocked at {b['as_of']} (run {b['run_id']}): {', '.join(b['failed'] or [])}")

    _show(opts, data, human)


def rollback(ctx: typer.Context,
             version: Annotated[Optional[str], typer.Argument(
                 help="The kept version to point CURRENT at, e.g. v3 (default: the one before CURRENT).",
                 show_default=False)] = None,
             reason: Annotated[str, typer.Option("--reason", help="Why (required; kept in the rollbacks table).",
                                                 show_default=False)] = "",
             by: Annotated[Optional[str], typer.Option("--by", help="Who rolls back (default $USER).",
                                                       show_default=False)] = None,
             as_of: AsOfOpt = None, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Point exports/CURRENT back at a kept version atomically and record who and why. Agents read
    it on their next load; the lake's data is unchanged, so fix the cause: the next publish
    (checked against the version CURRENT now points at) goes forward again as a new version.
    While a run holds the lake it waits (up to $MEMORY_LAKE_WAIT_S seconds); if that run published
    a new version meanwhile, it refuses, naming both, rather than undo a version you did not see."""
    opts = _options(ctx, lake, json_out)
    result = _open(opts).rollback(version, reason=reason, by=by, as_of=as_of)
    _show(opts, result, lambda: out.print(
        f"CURRENT {result['from']} -> {result['to']} (by {result['by']}: {result['reason']}); the next publish "
        f"goes forward again"))


def _plain(text: str | None) -> str:
    """`text` with control and invisible characters written as \\uXXXX (a terminal prints it inert)."""
    return "".join(f"\\u{ord(c):04X}" if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c
                   for c in text or "")


def _print_held(held: list[dict]) -> None:
    for h in held:
        scope = "/".join(_plain(p) if p is not None else "_" for p in (h["tenant"], h["agent_id"], h["user_id"]))
        out.print(f"  held {scope} at its published state since {h['since']}: {h['reason']}")
        out.print(f"    to let it through: {_plain(h['action'])}")


def holds_list(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """List the scopes the publish gate holds now: agents keep loading their published memories
    until the scope passes the gate again or a user releases it (`holds release`)."""
    from ..publish import release_command

    opts = _options(ctx, lake, json_out)
    frame = _open(opts).holds()
    data = [{**h, "action": release_command(h)} for h in frame.to_dicts()]

    def human() -> None:
        if not data:
            out.print("no scope is held: every scope publishes")
        for h in data:
            scope = "/".join(_plain(p) if p is not None else "_" for p in (h["tenant"], h["agent_id"], h["user_id"]))
            out.print(f"{scope}  held since {h['held_at']} (published as of {h['since']}, {h['since_version']}): "
                      f"{h['reason']}")
            out.print(f"    to let it through: {_plain(h['action'])}")

    _show(opts, data, human)


def holds_release(ctx: typer.Context,
                  tenant: Annotated[str, typer.Argument(help="The held scope's tenant.", show_default=False)],
                  agent: Annotated[Optional[str], typer.Option("--agent", help="The held scope's agent_id (leave out "
                                                               "for a scope without one).", show_default=False)] = None,
                  user: Annotated[Optional[str], typer.Option("--user", help="The held scope's user_id (leave out "
                                                              "for a scope without one).", show_default=False)] = None,
                  reason: Annotated[str, typer.Option("--reason", help="Why the removals are right (required).",
                                                      show_default=False)] = "",
                  by: Annotated[Optional[str], typer.Option("--by", help="Who confirms (default $USER).",
                                                            show_default=False)] = None,
                  as_of: AsOfOpt = None, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Confirm one held scope's removals as the user (the scope exactly as `holds list` and the run
    name it): the next publish (the nightly run, or `memory-lake publish`) lets them through, and
    removals made before now count as yours."""
    opts = _options(ctx, lake, json_out)
    released = _open(opts).release_hold(tenant, agent, user, reason=reason, by=by, as_of=as_of)

    def human() -> None:
        for h in released:
            scope = "/".join(_plain(p) if p is not None else "_" for p in (h["tenant"], h["agent_id"], h["user_id"]))
            out.print(f"released {scope}; the next publish lets its removals through")

    _show(opts, released, human)
