"""Commands on the lake as a whole: init, sql, status, demo, backup, restore-backup."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import EXIT_BLOCKED, EXIT_DEGRADED, AsOfOpt, JsonOpt, LakeOpt, ReportsOpt, _open, _options, _show, emit_json, err, frame_records, out, print_frame
from .runs import _run_nightly
from .runs import _print_run


def init(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Create a lake (folders and DuckDB file); harmless on an existing lake."""
    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts, create=True)
    _show(opts, {"lake": str(the_lake.root), "db": str(the_lake.db_path)},
          lambda: out.print(f"lake ready at {the_lake.root}"))


def sql(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help='One read-only query, e.g. "SELECT tier, count(*) FROM memories GROUP BY 1".')],
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run one read-only query over the lake's tables (the latest published version while a run
    holds the lake). Allowed: a single SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW,
    SUMMARIZE or EXPLAIN over the lake's tables. Refused with exit 2: writes, COPY, ATTACH, SET,
    PRAGMA, INSTALL/LOAD, several statements, and functions that reach files or the network
    (read_csv, read_text, ...)."""
    opts = _options(ctx, lake, json_out)
    result = _open(opts).read(query)
    if result.note:
        err.print(f"note: {result.note}")
    if opts.json:
        emit_json(frame_records(result.frame))
    else:
        print_frame(result.frame)


def status(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Rows per table, memories per tenant and tier, files waiting in the inbox."""
    from ..ingest import file_label, scan_inbox
    from ..store import file_sha256

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    result = the_lake.read(
        "SELECT tenant, tier, status, count(*) AS memories FROM memories GROUP BY ALL ORDER BY ALL"
    )
    counts = the_lake.read(
        "SELECT (SELECT count(*) FROM memories) AS memories, (SELECT count(*) FROM memory_history) AS history, "
        "(SELECT count(*) FROM quarantine WHERE status = 'open') AS quarantined, "
        "(SELECT count(*) FROM ingested_files) AS files, (SELECT count(*) FROM runs) AS runs"
    ).frame.to_dicts()[0] if result.source == "live" else {}
    waiting, unrecognised = scan_inbox(the_lake)
    labels = [file_label(the_lake, p) for p in waiting]
    unreadable: list[str] = []
    if result.source == "live" and waiting:
        # matched by content, not name: quarantine keeps the name redacted (names can hold PII)
        hashes = {}
        for path, label in zip(waiting, labels):
            try:
                hashes[file_sha256(path)] = label
            except OSError:      # taken by an ingest since it was listed
                continue
        quarantined = the_lake.read(
            "SELECT DISTINCT file_hash FROM quarantine WHERE status = 'open' AND reason = 'unreadable file' "
            "AND file_hash IN (SELECT unnest(?))", [sorted(hashes)]).frame
        unreadable = sorted(hashes[h] for (h,) in quarantined.iter_rows())
    decisions = sorted(p.name for p in the_lake.decisions.glob("*.json")) if the_lake.decisions.is_dir() else []
    data = {
        "lake": str(the_lake.root), "source": result.source, "inbox_files": len(waiting),
        "inbox_unrecognised": unrecognised, "inbox_unreadable": unreadable, "pending_decisions": decisions,
        **counts, "by_tenant_tier_status": frame_records(result.frame),
    }

    def human() -> None:
        out.print(f"lake {data['lake']} ({result.source}); {data['inbox_files']} file(s) waiting in the inbox"
                  + (f": {', '.join(labels)}" if 0 < len(labels) <= 5 else ""))
        if unreadable:
            out.print(f"unreadable file(s) in inbox: {', '.join(unreadable)} (quarantined as 'unreadable file'; "
                      "replace with a readable file or remove)")
        if unrecognised:
            out.print(f"unrecognised file(s) in inbox: {', '.join(unrecognised)} (not snapshots: never ingested)")
        if decisions:
            out.print(f"{len(decisions)} decision(s) queued for the next run (forget, restore, resolve, edit made "
                      f"while a run held the lake): {', '.join(decisions[:5])}{' …' if len(decisions) > 5 else ''}")
        if counts:
            out.print(", ".join(f"{k}: {v}" for k, v in counts.items()))
        print_frame(result.frame)

    _show(opts, data, human)


def demo(
    ctx: typer.Context,
    seed: Annotated[int, typer.Option(help="Seed of the generator (same seed, same data).")] = 7,
    force: Annotated[bool, typer.Option("--force", help="Add the demo data to a lake that holds other tenants.")] = False,
    reports: ReportsOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Generate deterministic demo snapshots into the inbox and run the nightly flow on them
    (at the demo's own fixed as_of, so a second demo changes nothing). A lake that already holds
    tenants other than the demo's (acme, globex, zhongke) is refused unless --force: the demo
    would mix 940 made-up memories into real data."""
    from ..store import InputError, iso
    from ..demo import DEMO_TENANTS, generate_demo

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts, create=True)
    if not force:
        others = [t for (t,) in the_lake.read(
            "SELECT DISTINCT tenant FROM memories WHERE tenant NOT IN (SELECT unnest(?)) ORDER BY 1",
            [list(DEMO_TENANTS)]).frame.iter_rows()]
        if others:
            shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            raise InputError(f"{the_lake.root} already holds memories of other tenants ({shown}): the demo would "
                             "mix made-up memories into them. Run it on a new folder (memory-lake --lake demo-lake "
                             "demo), or pass --force to add it anyway")
    data = generate_demo(the_lake.inbox, seed=seed)
    summary = _run_nightly(the_lake, iso(data.as_of), reports, opts)
    counts = the_lake.sql("SELECT tier, count(*) AS memories FROM memories WHERE status = 'active' GROUP BY 1 ORDER BY 1")
    result = {"lake": str(the_lake.root), "as_of": summary["as_of"], "generated_files": len(data.files),
              "run": summary, "memories_by_tier": dict(counts.iter_rows()),
              "report": summary.get("report"), "export": str(the_lake.exports / "CURRENT")}

    def human() -> None:
        out.print(f"demo data (seed {seed}): {len(data.files)} snapshot file(s) in {the_lake.inbox}")
        _print_run(summary, the_lake.root)
        out.print("active memories by tier: " + ", ".join(f"{k} {v}" for k, v in result["memories_by_tier"].items()))
        out.print(f"report: {result['report']}")
        out.print(f"export: {result['export']} -> {summary['publish'].get('current')}")

    _show(opts, result, human)
    if summary["status"] == "blocked":
        raise typer.Exit(EXIT_BLOCKED)
    if summary["status"] == "degraded":
        raise typer.Exit(EXIT_DEGRADED)


def backup(
    ctx: typer.Context,
    dest: Annotated[Path, typer.Argument(help="A new or empty folder to write the backup into.")],
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Copy the lake (database, config, raw/, events/, exports/) into DEST as one consistent state,
    under the write lock, with a manifest of checksums. Forget cannot reach a backup."""
    from ..store import FORGET_WARNING, backup as take_backup, resolve_as_of

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    manifest = take_backup(the_lake, dest, resolve_as_of(as_of))
    err.print(FORGET_WARNING)
    data = {"backup": str(Path(dest).expanduser().resolve()), "as_of": manifest["as_of"],
            "schema_version": manifest["schema_version"], "files": len(manifest["files"])}
    _show(opts, data, lambda: out.print(f"backup of {the_lake.root} at {data['backup']}: {data['files']} file(s), "
                                        f"as_of {data['as_of']}, schema version {data['schema_version']}"))


def restore_backup(
    ctx: typer.Context,
    src: Annotated[Path, typer.Argument(help="A folder written by `memory-lake backup`.")],
    force: Annotated[bool, typer.Option("--force", help="Replace the lake already at --lake.")] = False,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Restore a backup into --lake (a new or empty folder; --force replaces an existing lake),
    after checking every file against the backup's checksums."""
    from ..store import restore_backup as restore

    opts = _options(ctx, lake, json_out)
    manifest = restore(src, opts.lake, force=force)
    data = {"lake": manifest["restored_to"], "as_of": manifest["as_of"], "files": len(manifest["files"])}
    _show(opts, data, lambda: out.print(f"restored {data['files']} file(s) of the backup taken at {data['as_of']} "
                                        f"into {data['lake']}"))
