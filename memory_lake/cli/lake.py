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
    from ..ingest import file_label, scan_inbox, waiting_trees
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
        "inbox_waiting_trees": waiting_trees(the_lake),
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
        if data["inbox_waiting_trees"]:
            out.print(f"hot-memory tree(s) in inbox waiting for their index.json: {', '.join(data['inbox_waiting_trees'])}")
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
    nights: Annotated[int, typer.Option(
        min=1, help="Nightly runs, one a day from 2026-11-30: night 1 runs on the demo data, each later "
        "night on the day's follow-up snapshots after the day's searches.")] = 3,
    force: Annotated[bool, typer.Option("--force", help="Add the demo data to a lake that holds other tenants.")] = False,
    reports: ReportsOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Generate deterministic demo snapshots into the inbox and run the nightly flow on them, NIGHTS
    times on consecutive days (each at the demo's own fixed as_of, so a second demo changes
    nothing: a night the lake has already moved past is skipped, the latest is run again and finds
    nothing new). Between two nights the demo agents search the lake, which gives the health report
    its hit rate. A lake that already holds tenants other than the demo's (acme, globex, zhongke) is
    refused unless --force: the demo would mix made-up memories (about 940 on the first night, 80 on
    each later one) into real data."""
    from ..store import InputError, iso
    from ..demo import (DEMO_TENANTS, MAX_NIGHTS, demo_searches, generate_demo, generate_night, last_nightly_as_of,
                        night_as_of)

    if nights > MAX_NIGHTS:
        raise InputError(f"--nights {nights} is more than the demo has days for: at most {MAX_NIGHTS}")
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
    latest = last_nightly_as_of(the_lake)
    done: list[dict] = []
    for night in range(1, nights + 1):
        when = night_as_of(night)
        header = f"night {night} of {nights} ({when:%Y-%m-%d})"
        if latest is not None and latest > when:
            skipped = (f"skipped: the lake's last nightly run is dated {latest:%Y-%m-%d}, and a demo night never runs "
                       "before it (that would re-age a lake that has moved on)")
            err.print(f"{header}: {skipped}", markup=False, highlight=False)
            done.append({"night": night, "as_of": iso(when), "skipped": skipped})
            continue
        searched = demo_searches(the_lake, night - 1) if night > 1 else None
        data = generate_demo(the_lake.inbox, seed=seed) if night == 1 else generate_night(the_lake.inbox, night, seed=seed)
        entry = {"night": night, "as_of": iso(when), "searches": _searches_json(searched),
                 "generated_files": len(data.files) + len(getattr(data, "formats", {}))}
        if nights > 1:
            err.print(f"{header}: {_searches_text(entry['searches'])}{len(data.files)} snapshot file(s) written to "
                      "inbox/; the nightly run:", markup=False, highlight=False)
        entry["run"] = _run_nightly(the_lake, iso(when), reports, opts)
        done.append(entry)
        if entry["run"]["status"] == "blocked":
            break  # a later night would publish past a failed check
    runs = [d for d in done if "run" in d]
    summary = runs[-1]["run"] if runs else None
    counts = the_lake.sql("SELECT tier, count(*) AS memories FROM memories WHERE status = 'active' GROUP BY 1 ORDER BY 1")
    result = {"lake": str(the_lake.root), "as_of": summary["as_of"] if summary else done[-1]["as_of"],
              "generated_files": sum(d["generated_files"] for d in runs), "run": summary,
              "memories_by_tier": dict(counts.iter_rows()), "report": summary.get("report") if summary else None,
              "export": str(the_lake.exports / "CURRENT"), "nights": done}

    def human() -> None:
        for d in runs:  # a skipped night was said on stderr as it was skipped
            if nights > 1:
                out.print(f"night {d['night']} of {nights} ({d['as_of'][:10]})", markup=False)
            if d["night"] == 1:
                out.print(f"demo data (seed {seed}): {d['generated_files']} snapshot file(s) in {the_lake.inbox}")
            else:
                out.print(f"{_searches_text(d['searches'])}follow-up data (seed {seed}): {d['generated_files']} "
                          f"snapshot file(s) in {the_lake.inbox}", markup=False)
            _print_run(d["run"], the_lake.root)
        out.print("active memories by tier: " + ", ".join(f"{k} {v}" for k, v in result["memories_by_tier"].items()))
        if summary is None:
            out.print(f"no night run: the lake's last nightly run ({latest:%Y-%m-%d}) is later than every night asked "
                      "for; more --nights add the days after it, a new folder (memory-lake --lake demo-lake demo) "
                      "starts the demo again", markup=False)
            return
        out.print(f"report: {result['report']}")
        if result["report"]:
            folder = Path(result["report"]).parent.parent
            out.print(f"every run: {folder / 'index.html'} (the newest: {folder / 'latest.html'})")
        out.print(f"export: {result['export']} -> {summary['publish'].get('current')}")

    _show(opts, result, human)
    statuses = {d["run"]["status"] for d in runs}
    if "blocked" in statuses:
        raise typer.Exit(EXIT_BLOCKED)
    if "degraded" in statuses:
        raise typer.Exit(EXIT_DEGRADED)


def _searches_json(searched) -> dict | None:
    """A demo day's searches (`DemoSearches`) for --json: when, how many, how many returned memories."""
    from ..store import iso

    if searched is None:
        return None
    return {"as_of": iso(searched.as_of), "searches": len(searched.searches), "with_results": searched.with_results,
            "already_logged": searched.already_logged}


def _searches_text(searches: dict | None) -> str:
    if searches is None:
        return ""
    day = searches["as_of"][:10]
    if searches["already_logged"]:
        return f"the searches of {day} were logged before (not made again); "
    return f"{searches['searches']} searches on {day} ({searches['with_results']} returned memories); "


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
