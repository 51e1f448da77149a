"""Ingest commands: ingest, the quarantine group (list, export, replay) and edit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import polars as pl
import typer

from ..store import InputError
from ..store import write_wait_s
from .common import AsOfOpt, JsonOpt, LakeOpt, _note_source, _open, _options, _show, emit_json, frame_records, out, print_frame, progress_on_stderr


def ingest(
    ctx: typer.Context,
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Snapshot files or folders (default: the lake's inbox).",
                                                          show_default=False)] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate and count; write nothing.")] = False,
    as_of: AsOfOpt = None,
    max_content_bytes: Annotated[Optional[int], typer.Option("--max-content-bytes",
                                                             help="Quarantine content larger than this (default 65536).")] = None,
    history: Annotated[bool, typer.Option("--history", help="Old history with its real dates: start the idle "
                                          "clock of new memories now, so they are not dormant after the first "
                                          "night ([ingest] history = true for every ingest).")] = False,
    fmt: Annotated[Optional[str], typer.Option("--format", help="Read every file in this format instead of the "
                                               "one its name and shape say: jsonl, json (a save file), parquet, mem0 "
                                               "(a Mem0 get_all export), letta (archival passages), zep (Zep/Graphiti "
                                               "facts), transcript (chat messages, JSON Lines).")] = None,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="The tenant of a format that carries none "
                                                  "(Mem0, Letta, Zep exports; a transcript or hot-memory tree without "
                                                  "one). In the inbox, a folder named tenant=T says the same.")] = None,
    agent: Annotated[Optional[str], typer.Option("--agent", help="The agent of an export that names none (Letta "
                                                 "passages: the agent they were listed from).")] = None,
    user: Annotated[Optional[str], typer.Option("--user", help="The user of an export that names none (Letta; "
                                                "for Zep it replaces group_id).")] = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Ingest snapshots (JSON Lines, save files, Parquet, hot-memory trees, chat transcripts, Mem0,
    Letta and Zep exports): bad lines to quarantine, PII redacted. Formats are found by their
    shape; exports carry no tenant, so give --tenant (and --agent for Letta), or drop them in the
    inbox in a folder named tenant=T (agent=A, user=U inside it). --dry-run shows per format what
    would land, what would be quarantined and why."""
    from ..store import resolve_as_of
    from ..ingest import ingest_paths

    opts = _options(ctx, lake, json_out)
    ingest_overrides = ({"max_content_bytes": max_content_bytes} if max_content_bytes else {}) | (
        {"history": True} if history else {})
    overrides = {"ingest": ingest_overrides} if ingest_overrides else None
    the_lake = _open(opts, policy_overrides=overrides)
    with progress_on_stderr("ingest", "files") as on_progress:
        report = ingest_paths(the_lake, paths, as_of=resolve_as_of(as_of), dry_run=dry_run, wait_s=write_wait_s(),
                              on_progress=on_progress, fmt=fmt, tenant=tenant, agent=agent, user=user)
    _show(opts, report.as_dict(), lambda: _print_ingest(report.as_dict()))


def _print_ingest(data: dict[str, Any]) -> None:
    verb = "would ingest" if data["dry_run"] else "ingested"
    empty = data.get("files_empty") or 0
    skipped = ", ".join(part for part in (
        f"{data['files_skipped']} skipped: already ingested" if data["files_skipped"] else "",
        f"{empty} empty: nothing to read (an empty file in the inbox is removed)" if empty else "") if part)
    skipped = f" ({skipped})" if skipped else ""
    queued = f", {data['conflicted']} sent to the conflict queue" if data.get("conflicted") else ""
    unreadable = data.get("unreadable_files") or []
    out.print(
        f"{verb} {data['files'] - data['files_skipped'] - empty - len(unreadable)} file(s){skipped}: "
        f"{data['ingested']} new, {data['updated']} updated, {data['unchanged']} unchanged{queued}, "
        f"{data['forgotten']} forgotten, {data['quarantined']} quarantined"
    )
    formats = data.get("formats") or {}
    by_format = len(formats) > 1 or (formats and next(iter(formats)) not in ("jsonl", "json", "parquet"))
    if by_format:  # what each format brought (a dry run: what would land), why records were quarantined
        for fmt, row in formats.items():
            skipped = sum(row.get("skipped", {}).values())
            out.print(f"  {fmt}: {row['files']} file(s), {row['ingested']} new, {row['updated']} updated, "
                      f"{row['unchanged']} unchanged, {row['quarantined']} quarantined"
                      + (f", {skipped} skipped" if skipped else ""))
            for reason, count in row.get("reasons", {}).items():
                out.print(f"    quarantined: {count} × {reason}")
            if skipped:
                kinds = ", ".join(f"{n} {kind}" for kind, n in row["skipped"].items())
                out.print(f"    skipped, not memories: {kinds}")
    else:
        for reason, count in data["quarantine_reasons"].items():
            out.print(f"  quarantined: {count} × {reason}")
    if data.get("invisible_chars_removed"):
        out.print(f"  removed {data['invisible_chars_removed']} invisible character(s) (zero-width, bidi controls, "
                  "Unicode tags: they can hide text or instructions from a reader); see per_file in --json for "
                  "the files")
    if unreadable:
        quarantined = ("would be quarantined once as 'unreadable file'" if data["dry_run"] else
                       "quarantined once as 'unreadable file', see `memory-lake quarantine list`")
        out.print(f"  not ingested, unreadable file(s) left where they are: {', '.join(unreadable)} ({quarantined}; "
                  "mend what the reason below names, or remove the file; once it reads, its row is closed)")
        for name, why in (data.get("unreadable_why") or {}).items():
            out.print(f"    {name}: {why}")
    if data.get("waiting_trees"):
        out.print(f"  waiting, hot-memory tree(s) without their index.json yet: {', '.join(data['waiting_trees'])} "
                  "(a tree is read once its index.json appears; write it last)")
    for name, note in (data.get("notes") or {}).items():
        out.print(f"  {name}: {note}")
    if data.get("unrecognised_files"):
        out.print(f"  not ingested, unrecognised file(s): {', '.join(data['unrecognised_files'])} "
                  "(snapshots end in .jsonl, .ndjson, .json or .parquet)")


def quarantine_list(
    ctx: typer.Context,
    reason: Annotated[Optional[str], typer.Option(help="Only this reason.")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Include replayed rows.")] = False,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Quarantined lines with file, line, reason and the (redacted) raw text; a raw text longer
    than 200 characters is cut in the table (--json gives it whole)."""
    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    frame = the_lake.quarantine(status=None if all_rows else "open", reason=reason)
    _note_source(the_lake)
    if opts.json:
        emit_json(frame_records(frame))
    else:
        print_frame(frame.select("quarantine_id", "file", "line", "reason", "detail", "status",
                                 _cut(pl.col("raw"), RAW_SHOWN)))


# How much of a quarantined line the table shows: enough to recognise the record, never a
# 64 KB content that floods the terminal.
RAW_SHOWN = 200


def _cut(text: pl.Expr, keep: int) -> pl.Expr:
    """`text` cut to `keep` characters, saying how long it was and where to see it whole."""
    length = text.str.len_chars()
    return (pl.when(length > keep)
            .then(pl.concat_str(text.str.slice(0, keep), pl.lit("… ("),
                                length.map_elements(lambda n: f"{n:,}", return_dtype=pl.String),
                                pl.lit(" characters; --json shows all)")))
            .otherwise(text).alias(text.meta.output_name()))


def quarantine_export(
    ctx: typer.Context,
    output: Annotated[Path, typer.Argument(help="File to write: one quarantined line per line, to fix and replay.")],
    reason: Annotated[Optional[str], typer.Option(help="Only this reason.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it already exists (without it, an "
                                                        "existing file is refused: it may hold edits in progress).")] = False,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write open quarantined lines to a file to fix, then `quarantine replay` it. Every line
    carries its `_quarantine_id` (keep it while editing): that is how replay closes the row of a
    fixed line and keeps one open row for a line that still fails. A line that was no JSON
    object comes as {"_quarantine_id": N, "_raw": "..."}: fix the text in `_raw`, or replace the
    line with the record. An existing FILE is refused unless --force."""
    from ..ingest import export_quarantine

    opts = _options(ctx, lake, json_out)
    count = export_quarantine(_open(opts), output, reason=reason, overwrite=force)
    _show(opts, {"file": str(output), "lines": count}, lambda: out.print(f"wrote {count} line(s) to {output}"))


def quarantine_replay(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A file of fixed lines (e.g. from `quarantine export`, edited).")],
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Re-ingest fixed lines: the quarantine row of a line that now ingests is marked replayed; a
    line that fails again keeps its row open (reason and text brought up to date), never a second row."""
    from ..store import resolve_as_of
    from ..ingest import replay_quarantine

    opts = _options(ctx, lake, json_out)
    report = replay_quarantine(_open(opts), file, as_of=resolve_as_of(as_of), wait_s=write_wait_s())
    data = report.as_dict()

    def human() -> None:
        _print_ingest(data)
        out.print(f"quarantine: {data['replayed']} row(s) replayed, {data['still_failing']} still failing "
                  "(kept open, see `memory-lake quarantine list`)")

    _show(opts, data, human)


def edit(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="The memory to edit.")],
    set_: Annotated[list[str], typer.Option("--set", help="field=value; fields: content, summary, tags "
                                                           "(a,b or a JSON list), importance, tier (important pins "
                                                           "it), type, expires_at, context_id. Repeatable.")],
    operator: Annotated[str, typer.Option(help="Who edits: user (may change important memories) or agent.")] = "user",
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Edit a memory by hand through the versioned write path (history, three-way merge). Waits in
    the inbox for the next run while a run holds the lake."""
    from ..store import resolve_as_of

    opts = _options(ctx, lake, json_out)
    changes: dict[str, str] = {}
    for item in set_ or []:
        field, sep, value = item.partition("=")
        if not sep or not field.strip():
            raise InputError(f"--set {item!r}: expected field=value")
        changes[field.strip()] = value
    result = _open(opts).edit(memory_id, operator=operator, as_of=resolve_as_of(as_of), **changes)

    def human() -> None:
        if "queued" in result:
            out.print(f"the lake is busy: the edit waits in the inbox as {result['queued']}")
        elif result["quarantined"]:
            out.print(f"not applied: {', '.join(result['quarantine_reasons'])}")
        elif result["conflicted"]:
            out.print(f"{memory_id}: a conflict was filed (see `memory-lake conflicts list`); version {result['version']}")
        elif result.get("updated"):
            asked = ", ".join(f"{k}={v}" for k, v in changes.items())
            out.print(f"{memory_id} is at version {result['version']} ({result['status']}): set {asked}")
        else:
            out.print(f"{memory_id} unchanged: it already had those values (version {result['version']}, "
                      f"{result['status']})")

    _show(opts, result, human)
