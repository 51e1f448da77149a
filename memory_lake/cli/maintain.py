"""Maintenance commands: forget, restore, dedup, unmerge and the conflicts group."""

from __future__ import annotations

import json

from datetime import date
from typing import Annotated, Optional

import typer

from .common import AsOfOpt, JsonOpt, LakeOpt, SetOpt, _note_source, _open, _options, _show, emit_json, frame_records, out, parse_overrides, print_frame


def forget(
    ctx: typer.Context,
    ids: Annotated[Optional[list[str]], typer.Argument(help="Ids to forget (or a scope with --tenant).",
                                                       show_default=False)] = None,
    tenant: Annotated[Optional[str], typer.Option(help="Forget a whole scope of this tenant.")] = None,
    agent: Annotated[Optional[str], typer.Option(help="Narrow the scope to this agent.")] = None,
    user: Annotated[Optional[str], typer.Option(help="Narrow the scope to this user.")] = None,
    operator: Annotated[str, typer.Option(help="Who asks: user (needed for important memories) or agent.")] = "user",
    reason: Annotated[str, typer.Option(help="Why (required; kept in the audit trail).", show_default=False)] = "",
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Forget memories: tombstones with an audit row, and the text removed from every table, raw
    copy, search log and kept export. Queued in inbox/decisions/ while a run holds the lake.
    Backups taken outside the lake are out of its reach. Exit 1 when a memory was refused (an
    important memory needs --operator user); the others are forgotten."""
    from ..store import resolve_as_of
    from ..maintain import forget as forget_memories

    from ..store import check_ids, check_scope

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    check_scope(the_lake, tenant, agent, user)
    check_ids(the_lake, ids)
    result = forget_memories(the_lake, ids=ids or None, tenant=tenant, agent=agent, user=user, operator=operator,
                             reason=reason, as_of=resolve_as_of(as_of))

    def human() -> None:
        if "queued" in result:
            out.print(f"the lake is busy: queued as {result['queued']}; the next nightly run applies it first, "
                      "or `memory-lake apply-decisions` once the lake is free", markup=False)
            return
        out.print(f"forgot {len(result['forgotten'])}; already deleted {len(result['already_deleted'])}; "
                  f"unknown {len(result['unknown'])}")
        for refused in result["refused"]:
            out.print(f"  refused {refused['id']}: {refused['reason']}")
        out.print("note: backups taken outside the lake are not reached by a forget")

    _show(opts, result, human)
    if result.get("refused"):
        raise typer.Exit(EXIT_REFUSED)  # what could be forgotten was; a script must see the rest was not


# Exit code of a forget that refused a memory (an important one asked by an agent): done in part.
EXIT_REFUSED = 1


def apply_decisions(
    ctx: typer.Context,
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Apply now the decisions queued in inbox/decisions/ while a run held the lake (forget,
    conflicts resolve, unmerge), instead of at the next nightly run, which applies them first.
    Applied files move to inbox/decisions/applied/; one the lake refuses (an unknown id, a conflict
    already resolved) to failed/ with its reason; a malformed one stays. Waits for a run that holds
    the lake ($MEMORY_LAKE_WAIT_S)."""
    from ..maintain import apply_decisions as apply_queued
    from ..store import resolve_as_of

    opts = _options(ctx, lake, json_out)
    report = apply_queued(_open(opts), resolve_as_of(as_of))
    data = {"counts": report.counts, **report.details} if report.counts else {"counts": {"applied": 0}}

    def human() -> None:
        if not report.counts:
            out.print("no decision is queued in inbox/decisions/")
            return
        c = report.counts
        out.print(f"applied {c['applied']} decision(s): forgot {c['forgotten']}, resolved {c['resolved']}; refused "
                  f"{c['refused']}, failed {c['failed']}, left {c['left']}")
        for f in report.details.get("failed", []):
            out.print(f"  failed {f['file']}: {f['reason']} (moved to inbox/decisions/failed/)", markup=False)
        for f in report.details.get("left", []):
            out.print(f"  left {f['file']}: {f['reason']} (fix or remove it)", markup=False)

    _show(opts, data, human)


def restore(
    ctx: typer.Context,
    ids: Annotated[Optional[list[str]], typer.Argument(help="Ids of archived or dormant memories.")] = None,
    all_dormant: Annotated[bool, typer.Option("--all-dormant", help="Every dormant memory of --tenant (and "
                                              "--agent / --user): imported history gone dormant, in one go.")] = False,
    tenant: Annotated[Optional[str], typer.Option(help="With --all-dormant: the tenant (required).")] = None,
    agent: Annotated[Optional[str], typer.Option(help="With --all-dormant: only this agent's.")] = None,
    user: Annotated[Optional[str], typer.Option(help="With --all-dormant: only this user's.")] = None,
    operator: Annotated[str, typer.Option(help="Who decides: user (default) or agent.")] = "user",
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Bring archived or dormant memories back to active (audited, version + 1): by id, or every
    dormant one of a scope (`--all-dormant --tenant T [--agent A] [--user U]`). An archived
    short_term memory comes back in long_term (short_term's FIFO would archive it again)."""
    from ..store import InputError, check_ids, check_scope, resolve_as_of
    from ..maintain import restore_memories

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    if all_dormant == bool(ids):
        raise InputError("name the memories to restore: ids, or --all-dormant --tenant T [--agent A] [--user U] "
                         "(not both)")
    if not all_dormant and (tenant or agent or user):
        raise InputError("--tenant, --agent and --user choose the scope of --all-dormant; with ids, drop them")
    if all_dormant:
        if not tenant:
            raise InputError("--all-dormant needs --tenant (and optionally --agent, --user): the scope to restore")
        check_scope(the_lake, tenant, agent, user)
        where = " AND ".join(["status = 'dormant'", "tenant = ?"] + (["agent_id = ?"] if agent else [])
                             + (["user_id = ?"] if user else []))
        ids = [r["id"] for r in the_lake.read(f"SELECT id FROM memories WHERE {where} ORDER BY id",
                                              [v for v in (tenant, agent, user) if v]).frame.to_dicts()]
    else:
        check_ids(the_lake, ids)
    if not ids:  # --all-dormant on a scope with none: say so, change nothing
        _show(opts, {"restored": [], "not_restorable": [], "unknown": []},
              lambda: out.print(f"no dormant memories in tenant {tenant}" + (f", agent {agent}" if agent else "")
                                + (f", user {user}" if user else "") + ": nothing to restore", markup=False))
        return
    report = restore_memories(the_lake, ids, operator=operator, as_of=resolve_as_of(as_of))

    def human() -> None:
        d = report.details
        out.print(f"restored {len(d['restored'])}; not archived or dormant: {', '.join(d['not_restorable']) or '-'}; "
                  f"unknown: {', '.join(d['unknown']) or '-'}")
        if d.get("moved_to_long_term"):
            out.print(f"  back in long_term, not short_term: {', '.join(d['moved_to_long_term'])} (short_term's FIFO "
                      "would archive an old memory again at the next run; long_term has no capacity limit)")

    _show(opts, report.details, human)


def dedup(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the clusters and contradictions; write nothing.")] = False,
    as_of: AsOfOpt = None,
    set_: SetOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Merge duplicates per scope (exact; near: MinHash; semantic: embeddings), never contradictions.
    A pair that differs in a value of one thing (a number, a date, a unit), a negation, an antonym or a
    swap goes to the conflict queue; a pair that differs in a name, a place, an identifier or another
    item of one kind (violin / cello) is kept apart as two facts and only counted ("kept apart
    different"); a replaced word merges only when a dictionary calls it a synonym or the language's
    model puts the two phrases close ([dedup] paraphrase_cosine). Chat turns of two speakers, turns
    that state nothing (greetings, thanks, questions) and two memories about different named things
    are kept apart too; --json lists every pair kept apart with its reason."""
    from ..store import resolve_as_of
    from ..maintain import dedup as run_dedup

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts, policy_overrides=parse_overrides(set_))
    report = run_dedup(the_lake, resolve_as_of(as_of), dry_run=dry_run)

    def human() -> None:
        c = report.counts
        verb = "would merge" if dry_run else "merged"
        out.print(f"examined {c['examined']}; {verb} {c['merged']} memories into {c['clusters']} cluster(s) "
                  f"(exact {c['merged_exact']}, near {c['merged_near']}, semantic {c['merged_semantic']}); "
                  f"{c['contradictions']} contradiction(s) kept apart for a person, "
                  f"{c['kept_apart_different']} similar but different pair(s) kept apart")
        if c.get("scopes_settled"):  # a run plans only the scopes that changed (a dry run plans every one)
            shrunk = c.get("scopes_settled_after_removals") or 0
            out.print(f"  {c['scopes_settled']} scope(s) not planned, as since a night that merged nothing there they are "
                      + (f"unchanged ({c['scopes_settled'] - shrunk}) or only lost memories ({shrunk})" if shrunk
                         else "unchanged"))
        reasons = report.details.get("kept_apart_reasons") or {}
        if reasons:
            out.print("  kept apart: " + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items(), key=lambda r: -r[1]))
                      + " (--json lists the pairs)")
        for cluster in report.details["clusters"][:20]:
            out.print(f"  {cluster['canonical']} <- {', '.join(cluster['members'])} ({', '.join(cluster['passes'])})")

    _show(opts, report.as_dict(), human)


def unmerge(
    ctx: typer.Context,
    canonical_id: Annotated[str, typer.Argument(help="The memory others were merged into.")],
    operator: Annotated[str, typer.Option(help="Who asks.")] = "user",
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Undo the latest dedup merge into CANONICAL_ID: every memory of the cluster gets its exact row
    back, and the pairs are never merged again. Queued while a run holds the lake."""
    from ..store import resolve_as_of

    opts = _options(ctx, lake, json_out)
    result = _open(opts).unmerge(canonical_id, operator=operator, as_of=resolve_as_of(as_of))

    def human() -> None:
        if "queued" in result:
            out.print(f"the lake is busy: queued as {result['queued']}; the next nightly run applies it first, "
                      "or `memory-lake apply-decisions` once the lake is free", markup=False)
        else:
            out.print(f"restored {len(result['restored'])} memories of cluster {result['cluster']}")

    _show(opts, result, human)


def conflicts_list(
    ctx: typer.Context,
    tenant: Annotated[Optional[str], typer.Option(help="Only this tenant.")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Include resolved conflicts.")] = False,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Open conflicts (--all: resolved ones too, with how, by whom and when), oldest first: memory,
    field, the lake's and the incoming value (JSON text; in --json
    the values themselves, as are the base value and found_by),
    both operators and trace ids, the base version the incoming write read, and what found it (the
    snapshot's file name and line of a write, or the dedup pass with its reason: "dedup near (unit 斤/公斤,
    0.91)")."""
    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    frame = the_lake.conflicts(tenant=tenant, status=None if all_rows else "open")
    _note_source(the_lake)
    if opts.json:
        # the two values are JSON text in the lake; a machine reads them as the values they hold
        records = frame_records(frame)
        for record in records:
            for key in ("base_value", "lake_value", "incoming_value"):
                record[key] = _json_value(record.get(key))
        emit_json(records)
    elif frame.height == 0:
        out.print(_no_conflicts_line(the_lake, tenant, all_rows), markup=False, highlight=False)
    else:
        # with --all, how and by whom each resolved one was decided
        decided = ["resolution", "resolved_value", "resolved_by", "resolved_at", "new_memory_id"] if all_rows else []
        print_frame(frame.select("conflict_id", "kind", "memory_id", "other_memory_id", "field", "lake_value", "incoming_value",
                                 "incoming_operator", "base_version", "lake_version", "created_at", "status",
                                 "found_by", *decided),
                    title=f"{frame.height} conflict(s)")


def _json_value(text):
    """A conflict's value as the JSON it holds ('"深色"' -> "深色", '0.8' -> 0.8); text that is no
    JSON stays as it is."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _no_conflicts_line(the_lake, tenant: str | None, all_rows: bool) -> str:
    """Why `conflicts list` is empty, in one line: none recorded, or only resolved ones (under --all)."""
    where = f" for tenant {tenant}" if tenant else ""
    if all_rows:
        return f"no conflicts recorded{where}"
    resolved = the_lake.conflicts(tenant=tenant, status=None).height
    if resolved:
        return f"no open conflicts{where} ({resolved} resolved: conflicts list --all)"
    return (f"no open conflicts{where} (none resolved either: a conflict appears when an incoming write or "
            "dedup disputes a memory)")


def conflicts_resolve(
    ctx: typer.Context,
    conflict_id: Annotated[str, typer.Argument(help="The conflict (see `conflicts list`).")],
    take: Annotated[str, typer.Option(help="lake (keep), incoming (take the disputed value), both (keep both as "
                                           "two memories) or value=TEXT (your own).")],
    operator: Annotated[str, typer.Option(help="Who decides: only a user resolves conflicts.")] = "user",
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Resolve a conflict: the memory's version goes up, history records the user's choice, and the
    memory leaves `conflicted` when no other conflict on it is open. Queued while a run holds the lake."""
    from ..store import resolve_as_of
    from ..maintain import parse_take

    opts = _options(ctx, lake, json_out)
    kind, value = parse_take(take)
    result = _open(opts).resolve_conflict(conflict_id, kind, value=value, operator=operator,
                                          as_of=resolve_as_of(as_of))

    def human() -> None:
        if "queued" in result:
            out.print(f"the lake is busy: queued as {result['queued']}; the next nightly run applies it first, "
                      "or `memory-lake apply-decisions` once the lake is free", markup=False)
            return
        if "other_memory_id" in result:  # a contradiction between two memories
            first, other = result["memory_id"], result["other_memory_id"]
            first_at = f"version {result['version']}, {result['status']}"
            other_at = f"version {result['other_version']}, {result['other_status']}"
            said = {"incoming": f"{other} keeps its text ({other_at}); {first} archived ({first_at})",
                    "value": f"{first} now holds your text ({first_at}); {other} archived ({other_at})"}.get(
                result["take"], f"both keep their text: {first} ({first_at}) and {other} ({other_at})")
            out.print(f"resolved contradiction {conflict_id} ({result['take']}): {said}")
            return
        extra = f"; kept the incoming value as {result['new_memory_id']}" if result["new_memory_id"] else ""
        out.print(f"resolved {conflict_id} ({result['take']}): {result['memory_id']} is at version "
                  f"{result['version']}, {result['status']}{extra}")

    _show(opts, result, human)
