"""`summarize`: the structured summaries of a scope's short-term memory and of its sessions, scored."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import JsonOpt, LakeOpt, _note_source, _open, _options, _show, out


def summarize(
    ctx: typer.Context,
    tenant: Annotated[str, typer.Option(help="Tenant (required).")],
    agent: Annotated[Optional[str], typer.Option(help="Only this agent's scopes.")] = None,
    user: Annotated[Optional[str], typer.Option(help="Only this user's scopes.")] = None,
    session: Annotated[Optional[str], typer.Option(help="Only this session (its memories of every tier).")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(help="Token budget per summary (default [summaries] "
                                                           "max_tokens, 500).")] = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show the summary of each scope's short-term memory and of each session whose memories hold
    more tokens than the budget: events, decisions, lessons and todos, with retention, compression,
    readability and accuracy. A preview: it writes nothing and never waits for a run (then it reads
    the published version); the nightly run publishes the summaries that pass every threshold."""
    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    result = the_lake.summarize(tenant=tenant, agent=agent, user=user, session=session, max_tokens=max_tokens)
    _note_source(the_lake)
    _show(opts, result, lambda: _print_summaries(result))


def _what(entry: dict) -> str:
    scope = " / ".join(entry[k] or "_" for k in ("tenant", "agent_id", "user_id"))
    return f"{scope}, session {entry['session_id']}" if entry["session_id"] else f"{scope}, short-term memory"


def _print_summaries(result: dict) -> None:
    """Each summary (passed or failed), its scores and what it lost or made up; then each scope
    skipped with the reason; an empty result says why."""
    if not result["scopes"]:
        out.print(result.get("note") or "nothing to summarise")
    for entry in result["scopes"]:
        what = _what(entry)
        verdict = "passed" if entry["passed"] else f"FAILED ({', '.join(entry.get('failed') or [])}): not published"
        out.print(f"== {what}: {verdict}")
        out.print(entry["summary"].rstrip())
        scores = entry["scores"]
        out.print(f"-- retention {scores['retention']:.2f}, compression {scores['compression']:.2f}x, readability "
                  f"{scores['readability']:.2f}, accuracy {scores['accuracy']:.2f}; {entry['summary_tokens']} of "
                  f"{entry['source_tokens']} tokens; {entry['method']}"
                  + (f" (fallback: {entry['fallback']})" if entry.get("fallback") else ""))
        for fact in entry["missing_facts"]:
            out.print(f"   missing: {fact}")
        for statement in entry["unsupported_statements"]:
            out.print(f"   unsupported: {statement}")
        out.print("")
    small = [e for e in result.get("skipped", []) if e["reason"].endswith("nothing to compress")]
    for entry in result.get("skipped", []):
        if entry not in small:
            out.print(f"== {_what(entry)}: skipped: {entry['reason']}")
    if small:
        # one line for the many short sessions and scopes: a summary would be no shorter than they are
        scopes = sum(1 for e in small if not e["session_id"])
        out.print(f"== {len(small) - scopes} session(s) and {scopes} scope(s) skipped: their memories already fit the "
                  f"token budget, nothing to compress (--json lists each)")
