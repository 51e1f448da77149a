"""The publish command."""

from __future__ import annotations


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
        out.print(f"publish {result['status']}: version {result.get('version') or '-'}, CURRENT {result.get('current')}")
        for check in result.get("checks", []):
            if not check["success"]:
                out.print(f"  failed: {check['expectation']} ({check['observed']})")

    _show(opts, data, human)
    if result["status"] == "blocked":
        raise typer.Exit(EXIT_BLOCKED)
