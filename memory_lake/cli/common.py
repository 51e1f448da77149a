"""`memory-lake`: the command line. It parses arguments, calls one library function and formats
the result: a table for people, ``--json`` for machines (JSON only on stdout). Errors are one
line on stderr and a non-zero exit code, never a traceback (set MEMORY_LAKE_DEBUG=1 for one).

Every command takes ``--lake DIR`` and ``--json`` before or after the sub-command.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import polars as pl
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .errors import InputError, MemoryLakeError

HELP = """memory-lake keeps AI-agent memory healthy: snapshots dropped in a lake's inbox are ingested
into a DuckDB + Parquet lake (bad rows quarantined, PII redacted), maintained and published.

The lake is ./lake unless --lake DIR or $MEMORY_LAKE_DIR says otherwise."""

app = typer.Typer(help=HELP, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  rich_markup_mode=None)
quarantine_app = typer.Typer(help="Inspect and replay quarantined lines.", no_args_is_help=True,
                             rich_markup_mode=None)
app.add_typer(quarantine_app, name="quarantine")
conflicts_app = typer.Typer(help="The conflict queue: list disputed values and resolve them.", no_args_is_help=True,
                            rich_markup_mode=None)
app.add_typer(conflicts_app, name="conflicts")
run_app = typer.Typer(help="Run a flow (Prefect, with its temporary local API when no server is set).",
                      no_args_is_help=True, rich_markup_mode=None)
app.add_typer(run_app, name="run")

# Exit codes beyond errors: a run whose publish was blocked by a failed check.
EXIT_BLOCKED = 4

# Memory text, file names and ids are printed as they are: never read as rich markup ("[/x]") or
# emoji codes (":x:"). Cells of tables are Text for the same reason.
out = Console(soft_wrap=True, markup=False, emoji=False)
err = Console(stderr=True, soft_wrap=True, markup=False, emoji=False, highlight=False)

LakeOpt = Annotated[Optional[Path], typer.Option("--lake", help="Lake folder (default $MEMORY_LAKE_DIR or ./lake).",
                                                 show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Logical time of the step (ISO 8601); default now.")]
SetOpt = Annotated[Optional[list[str]], typer.Option(
    "--set", help="Override a policy value for this run, e.g. tiers.working_capacity=30 or "
                  "tenants.acme.tiers.short_term_capacity=200 (repeatable).", show_default=False)]
ReportsOpt = Annotated[Optional[Path], typer.Option("--reports", help="Folder for HTML reports (default $MEMORY_LAKE_REPORTS or ./reports).",
                                                    show_default=False)]


@dataclass
class Options:
    lake: Optional[Path] = None
    json: bool = False


@app.callback()
def _global(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    ctx.obj = Options(lake, json_out)


@quarantine_app.callback()
@conflicts_app.callback()
@run_app.callback()
def _group(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """--lake and --json between a group and its sub-command (`conflicts --json list`)."""
    ctx.obj = _options(ctx, lake, json_out)


def _options(ctx: typer.Context, lake: Optional[Path], json_out: bool) -> Options:
    parent = ctx.find_object(Options) or Options()
    return Options(lake or parent.lake, json_out or parent.json)


def parse_overrides(items: list[str] | None) -> dict[str, Any] | None:
    """`section.key=value` (or `tenants.<t>.section.key=value`) into the policy's override dict;
    values are read as TOML (numbers, booleans, lists), else as text."""
    import tomllib

    if not items:
        return None
    result: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        parts = key.strip().split(".")
        if not sep or len(parts) < 2 or not all(parts):
            raise InputError(f"--set {item!r}: expected section.key=value")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        node = result
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return result


def _open(opts: Options, **kwargs):
    from .lake import Lake

    return Lake.open(opts.lake, **kwargs)


# ------------------------------------------------------------------ output helpers
def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat() + ("Z" if value.tzinfo is None else "")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=_jsonable) + "\n")


def frame_records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return json.loads(json.dumps(frame.to_dicts(), default=_jsonable))


def print_frame(frame: pl.DataFrame, title: str | None = None, max_width: int = 60) -> None:
    """A table for people; every cell and the title are plain text (never rich markup)."""
    table = Table(title=Text(title) if title else None, show_lines=False)
    for name in frame.columns:
        table.add_column(Text(name), overflow="fold")
    for row in frame.iter_rows():
        cells = []
        for value in row:
            text = "" if value is None else str(value)
            cells.append(Text(text if len(text) <= max_width else text[: max_width - 1] + "…"))
        table.add_row(*cells)
    out.print(table)
    out.print(f"{frame.height} row(s)")


# Plain progress lines (stderr not a terminal) come at most this often, and at the end of each stage.
PROGRESS_EVERY_S = 5.0


@contextlib.contextmanager
def progress_on_stderr(label: str, unit: str) -> Iterator[Callable[[str, int, int], None]]:
    """A callback ``(what, done, total)`` for long work, shown on stderr, never stdout: a rich bar
    on a terminal, otherwise lines like ``index: embedded 1200/5000 texts``."""
    if err.is_terminal:
        from rich.progress import Progress

        with Progress(console=err, transient=True) as bar:
            tasks: dict[str, Any] = {}

            def show(what: str, done: int, total: int) -> None:
                if what not in tasks:
                    tasks[what] = bar.add_task(f"{label}: {what} {unit}", total=total)
                bar.update(tasks[what], completed=done, total=total)

            yield show
        return
    last: dict[str, float] = {}

    def line(what: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last.get(what, -PROGRESS_EVERY_S) >= PROGRESS_EVERY_S:
            last[what] = now
            err.print(f"{label}: {what} {done}/{total} {unit}")

    yield line


@contextlib.contextmanager
def step_lines(label: str) -> Iterator[None]:
    """A line on stderr as each step of a run starts and ends (`runs.STEP_LISTENERS`)."""
    from .runs import STEP_LISTENERS

    numbers: dict[str, int] = {}

    def listener(event: str, name: str, result: dict[str, Any] | None) -> None:
        number = numbers.setdefault(name, len(numbers) + 1)
        if event == "start":
            err.print(f"{label}: step {number} {name} …")
        elif event == "end":
            err.print(f"{label}: step {number} {name} done in {result['duration_s']} s: {result['summary']}")
        else:
            err.print(f"{label}: step {number} {name} failed after {result['duration_s']} s")

    STEP_LISTENERS.append(listener)
    try:
        yield
    finally:
        STEP_LISTENERS.remove(listener)


def _show(opts: Options, data: dict[str, Any], human: Callable[[], None]) -> None:
    if opts.json:
        emit_json(data)
    else:
        human()


def _note_source(the_lake) -> None:
    """On stderr: the read was answered from the published version (a run holds the lake)."""
    last = the_lake.last_read
    if last is not None and last.note:
        err.print(f"note: {last.note}", markup=False, highlight=False)


# ------------------------------------------------------------------ commands
@app.command()
def init(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Create a lake (folders and DuckDB file); harmless on an existing lake."""
    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts, create=True)
    _show(opts, {"lake": str(the_lake.root), "db": str(the_lake.db_path)},
          lambda: out.print(f"lake ready at {the_lake.root}"))


@app.command()
def ingest(
    ctx: typer.Context,
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Snapshot files or folders (default: the lake's inbox).",
                                                          show_default=False)] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate and count; write nothing.")] = False,
    as_of: AsOfOpt = None,
    max_content_bytes: Annotated[Optional[int], typer.Option("--max-content-bytes",
                                                             help="Quarantine content larger than this (default 65536).")] = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Ingest snapshots (JSON Lines, save files, Parquet): bad lines to quarantine, PII redacted."""
    from .clock import resolve_as_of
    from .ingest import ingest_paths

    opts = _options(ctx, lake, json_out)
    overrides = {"ingest": {"max_content_bytes": max_content_bytes}} if max_content_bytes else None
    the_lake = _open(opts, policy_overrides=overrides)
    with progress_on_stderr("ingest", "files") as on_progress:
        report = ingest_paths(the_lake, paths, as_of=resolve_as_of(as_of), dry_run=dry_run, wait_s=_wait_s(),
                              on_progress=on_progress)
    _show(opts, report.as_dict(), lambda: _print_ingest(report.as_dict()))


def _print_ingest(data: dict[str, Any]) -> None:
    verb = "would ingest" if data["dry_run"] else "ingested"
    out.print(
        f"{verb} {data['files']} file(s) ({data['files_skipped']} already ingested): "
        f"{data['ingested']} new, {data['updated']} updated, {data['unchanged']} unchanged, "
        f"{data['forgotten']} forgotten, {data['quarantined']} quarantined"
    )
    for reason, count in data["quarantine_reasons"].items():
        out.print(f"  quarantined: {count} × {reason}")
    if data.get("unrecognised_files"):
        out.print(f"  not ingested, unrecognised file(s): {', '.join(data['unrecognised_files'])} "
                  "(snapshots end in .jsonl, .ndjson, .json or .parquet)")


def _wait_s() -> float:
    from .lake import DEFAULT_WRITE_WAIT_S

    return float(os.environ.get("MEMORY_LAKE_WAIT_S", DEFAULT_WRITE_WAIT_S))


@app.command()
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


@app.command()
def status(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Rows per table, memories per tenant and tier, files waiting in the inbox."""
    from .ingest import scan_inbox

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
    data = {
        "lake": str(the_lake.root), "source": result.source, "inbox_files": len(waiting),
        "inbox_unrecognised": unrecognised, **counts, "by_tenant_tier_status": frame_records(result.frame),
    }

    def human() -> None:
        out.print(f"lake {data['lake']} ({result.source}); {data['inbox_files']} file(s) waiting in the inbox")
        if unrecognised:
            out.print(f"unrecognised file(s) in inbox: {', '.join(unrecognised)} (not snapshots: never ingested)")
        if counts:
            out.print(", ".join(f"{k}: {v}" for k, v in counts.items()))
        print_frame(result.frame)

    _show(opts, data, human)


@app.command()
def demo(
    ctx: typer.Context,
    seed: Annotated[int, typer.Option(help="Seed of the generator (same seed, same data).")] = 7,
    reports: ReportsOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Generate deterministic demo snapshots into the inbox and run the nightly flow on them
    (at the demo's own fixed as_of, so a second demo changes nothing)."""
    from .clock import iso
    from .demo import generate_demo

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts, create=True)
    data = generate_demo(the_lake.inbox, seed=seed)
    summary = _run_nightly(the_lake, iso(data.as_of), reports, opts)
    counts = the_lake.sql("SELECT tier, count(*) AS memories FROM memories WHERE status = 'active' GROUP BY 1 ORDER BY 1")
    result = {"lake": str(the_lake.root), "as_of": summary["as_of"], "generated_files": len(data.files),
              "run": summary, "memories_by_tier": dict(counts.iter_rows()),
              "report": summary.get("report"), "export": str(the_lake.exports / "CURRENT")}

    def human() -> None:
        out.print(f"demo data (seed {seed}): {len(data.files)} snapshot file(s) in {the_lake.inbox}")
        _print_run(summary)
        out.print("active memories by tier: " + ", ".join(f"{k} {v}" for k, v in result["memories_by_tier"].items()))
        out.print(f"report: {result['report']}")
        out.print(f"export: {result['export']} -> {summary['publish'].get('current')}")

    _show(opts, result, human)
    if summary["status"] == "blocked":
        raise typer.Exit(EXIT_BLOCKED)


def _run_nightly(the_lake, as_of: str | None, reports: Optional[Path], opts: Options,
                 policy: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the Prefect nightly flow in this process (stdout kept clean for --json; a line per
    step on stderr)."""
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_HOME", str(the_lake.root / ".prefect"))
    # A failed step would otherwise print Prefect's tracebacks before the one error line (the runs
    # row keeps the step and the error); MEMORY_LAKE_DEBUG=1 shows Prefect's warnings and errors.
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING" if os.environ.get("MEMORY_LAKE_DEBUG") else "CRITICAL")
    # Prefect's temporary API gives up after 20 s, which a busy machine can exceed on its first start.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    from flows.nightly import nightly

    with contextlib.redirect_stdout(sys.stderr), step_lines("nightly"):
        return nightly(str(the_lake.root), as_of=as_of, reports_dir=str(reports) if reports else None, policy=policy)


def _print_run(summary: dict[str, Any]) -> None:
    out.print(f"run {summary['run_id']} ({summary['as_of']}): {summary['status']} in {summary['duration_s']} s")
    for name, step in summary["steps"].items():
        out.print(f"  {name}: {step['summary']}")
    publish = summary.get("publish") or {}
    if publish.get("status") == "blocked":
        err.print(f"publish blocked by: {', '.join(publish.get('failed') or [])}; CURRENT left at {publish.get('current')}")
    elif publish.get("status") == "published":
        out.print(f"published {publish['version']}: {publish['path']} (exports/CURRENT points at it)", markup=False)
    elif publish.get("status") == "unchanged":
        out.print(f"nothing changed since {publish.get('current')}: no new version", markup=False)
    ingest = (summary["steps"].get("ingest_inbox") or {}).get("counts") or {}
    if ingest.get("files") == 0:
        out.print("no snapshot files were waiting in the lake's inbox/ (see README, \"The snapshot contract\")",
                  markup=False)


@run_app.command("nightly")
def run_nightly(
    ctx: typer.Context,
    as_of: AsOfOpt = None,
    reports: ReportsOpt = None,
    set_: SetOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The nightly run: ingest, events, tier rules, health, checks, publish, report.
    Exits 4 when the publish was blocked by a failed check."""
    from .clock import iso, resolve_as_of

    opts = _options(ctx, lake, json_out)
    overrides = parse_overrides(set_)
    the_lake = _open(opts, policy_overrides=overrides)  # validates the overrides before Prefect starts
    summary = _run_nightly(the_lake, iso(resolve_as_of(as_of)), reports, opts, overrides)
    _show(opts, summary, lambda: (_print_run(summary), out.print(f"report: {summary.get('report')}")))
    if summary["status"] == "blocked":
        raise typer.Exit(EXIT_BLOCKED)


@app.command()
def forget(
    ctx: typer.Context,
    ids: Annotated[Optional[list[str]], typer.Argument(help="Ids to forget (or a scope with --tenant).",
                                                       show_default=False)] = None,
    tenant: Annotated[Optional[str], typer.Option(help="Forget a whole scope of this tenant.")] = None,
    agent: Annotated[Optional[str], typer.Option(help="Narrow the scope to this agent.")] = None,
    user: Annotated[Optional[str], typer.Option(help="Narrow the scope to this user.")] = None,
    operator: Annotated[str, typer.Option(help="Who asks: user (needed for important memories) or agent.")] = "user",
    reason: Annotated[str, typer.Option(help="Why (kept in the audit trail).")] = "",
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Forget memories: tombstones with an audit row, and the text removed from every table, raw
    copy, search log and kept export. Queued in inbox/decisions/ while a run holds the lake.
    Backups taken outside the lake are out of its reach."""
    from .clock import resolve_as_of
    from .forget import forget as forget_memories

    from .names import check_ids, check_scope

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    check_scope(the_lake, tenant, agent, user)
    check_ids(the_lake, ids)
    result = forget_memories(the_lake, ids=ids or None, tenant=tenant, agent=agent, user=user, operator=operator,
                             reason=reason, as_of=resolve_as_of(as_of))

    def human() -> None:
        if "queued" in result:
            out.print(f"the lake is busy: queued for the next run as {result['queued']}")
            return
        out.print(f"forgot {len(result['forgotten'])}; already deleted {len(result['already_deleted'])}; "
                  f"unknown {len(result['unknown'])}")
        for refused in result["refused"]:
            out.print(f"  refused {refused['id']}: {refused['reason']}")
        out.print("note: backups taken outside the lake are not reached by a forget")

    _show(opts, result, human)


@app.command()
def restore(
    ctx: typer.Context,
    ids: Annotated[list[str], typer.Argument(help="Ids of archived or dormant memories.")],
    operator: Annotated[str, typer.Option(help="Who decides: user (default) or agent.")] = "user",
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Bring archived or dormant memories back to active (audited, version + 1)."""
    from .clock import resolve_as_of
    from .tiers import restore_memories

    from .names import check_ids

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    check_ids(the_lake, ids)
    report = restore_memories(the_lake, ids, operator=operator, as_of=resolve_as_of(as_of))
    _show(opts, report.details, lambda: out.print(
        f"restored {len(report.details['restored'])}; not archived or dormant: "
        f"{', '.join(report.details['not_restorable']) or '-'}; unknown: {', '.join(report.details['unknown']) or '-'}"))


@app.command()
def index(ctx: typer.Context, as_of: AsOfOpt = None, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Index new or changed memories: keyword postings and embeddings, once per content hash (and
    model); a model change re-embeds, a new tokenizer version re-tokenises."""
    opts = _options(ctx, lake, json_out)
    with progress_on_stderr("index", "texts") as on_progress:
        report = _open(opts).index(as_of=as_of, on_progress=on_progress)
    _show(opts, report.as_dict(), lambda: out.print(f"index: {report.summary}" + (
        f" ({report.details['note']})" if report.details.get("note") else "")))


@app.command()
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


@app.command()
def report(ctx: typer.Context, as_of: AsOfOpt = None, reports: ReportsOpt = None, lake: LakeOpt = None,
           json_out: JsonOpt = False) -> None:
    """Render the HTML health report (reports/health-<date>.html) from the lake's latest state."""
    from .clock import resolve_as_of
    from .runs import write_report

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    when = resolve_as_of(as_of)
    result = write_report(the_lake, when, the_lake.new_run_id("report", when), None, reports)
    _show(opts, result.details, lambda: out.print(f"report: {result.details['path']}"))


@app.command()
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
        for tier, cap in overall["capacity"].items():
            limit = f"/{cap['limit']} ({cap['utilization']:.0%})" if cap["limit"] else ""
            out.print(f"  {tier:<11} {cap['used']}{limit}")
        stale = overall["staleness"]
        out.print(f"  stale: {stale['stale_count']} ({stale['stale_ratio']:.0%}), oldest unaccessed "
                  f"{stale['oldest_unaccessed_days']} days; hit rate 7d: {overall['hit_rate']['last_7d']}")
        for alert in overall["alerts"]:
            out.print(f"  [{alert['level']}] {alert['message']} - {alert['action']}", markup=False)

    _show(opts, data, human)


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for (English or Chinese).")],
    tenant: Annotated[str, typer.Option(help="Tenant (required).")],
    agent: Annotated[Optional[str], typer.Option(help="Only this agent's memories.")] = None,
    user: Annotated[Optional[str], typer.Option(help="Only this user's memories.")] = None,
    mode: Annotated[str, typer.Option(help="keyword | semantic | hybrid.")] = "hybrid",
    limit: Annotated[int, typer.Option(help="How many results.")] = 10,
    tier: Annotated[Optional[str], typer.Option(help="Only this tier.")] = None,
    type_: Annotated[Optional[str], typer.Option("--type", help="Only this type.")] = None,
    source: Annotated[Optional[str], typer.Option(help="Only this source.")] = None,
    tag: Annotated[Optional[str], typer.Option(help="Only memories with this tag.")] = None,
    context: Annotated[Optional[str], typer.Option(help="Only this context_id.")] = None,
    since: Annotated[Optional[str], typer.Option(help="Created at or after (ISO 8601).")] = None,
    until: Annotated[Optional[str], typer.Option(help="Created before (ISO 8601).")] = None,
    include_inactive: Annotated[bool, typer.Option("--include-inactive", help="Also dormant, archived, merged.")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show each score part.")] = False,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Search a scope (read-only; logged to events/ for the hit rate). An unknown tenant, agent or
    user is an error that names the known ones."""
    opts = _options(ctx, lake, json_out)
    results = _open(opts).search(query, tenant=tenant, agent=agent, user=user, mode=mode, limit=limit,
                                 include_inactive=include_inactive, explain=explain, tier=tier, type=type_,
                                 source=source, tag=tag, context=context, since=since, until=until)
    _show(opts, results.as_dict(), lambda: _print_search(results, explain))


def _print_search(results, explain: bool) -> None:
    """Search results for people: one row per memory with its full id (never folded: it is pasted
    into other commands), scope, tier, type, score, a conflict mark and the content (which wraps);
    the other side of each conflict below; with `explain`, every score part and the weights.
    Every cell is plain text (`Text`), so content such as ``[/x]`` is printed, not parsed as markup."""
    from rich import box
    from rich.text import Text

    def print_parts() -> None:
        """The parts of each score (raw and scaled to 0..1) and the weights that summed them."""
        parts = [r.parts or {} for r in results]
        semantic = any("semantic" in p for p in parts)
        table = Table(title="score parts (raw -> scaled)", box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False,
                      title_justify="left")
        table.add_column("id", no_wrap=True)
        table.add_column("keyword", justify="right", no_wrap=True)
        if semantic:
            for name in ("semantic (cos)", "recency", "importance"):
                table.add_column(name, justify="right", no_wrap=True)
        table.add_column("score", justify="right", no_wrap=True)
        for r, p in zip(results, parts):
            row = [Text(r.id), f"{p.get('keyword', 0.0):.3f} -> {p.get('keyword_norm', 0.0):.3f}"]
            if semantic:
                row += [f"{p.get('semantic', 0.0):.3f} -> {p.get('semantic_norm', 0.0):.3f}",
                        f"{p.get('recency', 0.0):.3f}", f"{p.get('importance', 0.0):.3f}"]
            table.add_row(*row, f"{r.score:.3f}")
        out.print(table)
        weights = parts[0].get("weights")
        if weights:
            out.print("score = " + " + ".join(f"{w:g} x {name}" for name, w in weights.items())
                      + " (keyword and semantic scaled over the scope)")
        else:
            scaled = "semantic" if results.mode_used == "semantic" else "keyword"
            out.print(f"score = {scaled} scaled over the scope ({results.mode_used} mode ranks by it alone)")

    notes = list(results.notes)
    if not results:
        # the last note says why nothing came back; the others are context (busy, degraded)
        for note in notes[:-1]:
            err.print(f"note: {note}", markup=False)
        out.print(Text(f"0 results: {notes[-1]}" if notes else "0 results"))
        return
    for note in notes:
        err.print(f"note: {note}", markup=False)
    scopes = [(r.tenant or "-", r.agent_id or "-", r.user_id or "-") for r in results]
    id_width = max(len(r.id) for r in results)
    fixed = id_width + max(len(r.tier or "") for r in results) + max(len(r.type or "") for r in results) + 14
    scope_width = max(len(" / ".join(s)) for s in scopes)
    table = Table(title=Text(f"search {results.search_id} ({results.mode_used})"), box=box.SIMPLE_HEAD,
                  padding=(0, 1, 0, 0), pad_edge=False, title_justify="left")
    table.add_column("id", no_wrap=True, min_width=id_width)
    # On a narrow terminal the scope goes on three lines (tenant, agent, user), leaving the width to content.
    table.add_column("scope", overflow="fold", max_width=(
        None if out.width - fixed - scope_width >= 40 else max(len(p) for s in scopes for p in s) + 2))
    table.add_column("tier", overflow="fold")
    table.add_column("type", overflow="fold")
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("!", no_wrap=True)
    table.add_column("content", overflow="fold")
    for r, scope in zip(results, scopes):
        content = r.content or ""
        content = content if len(content) <= 280 else content[:279] + "…"  # a long memory: its start
        table.add_row(Text(r.id), Text(" / ".join(scope)), Text(r.tier or ""), Text(r.type or ""), f"{r.score:.3f}",
                      "!" if r.conflict else "", Text(content))
    out.print(table)
    out.print(f"{len(results)} result(s) of {results.searched} memories searched")
    for r in results:
        if r.conflict:
            other = f"contradicts {', '.join(r.conflict_with)}" if r.conflict_with else "has an open conflict"
            out.print(Text(f"! {r.id} {other} (memory-lake conflicts list)"))
    if explain:
        print_parts()


# ------------------------------------------------------------------ quarantine
@quarantine_app.command("list")
def quarantine_list(
    ctx: typer.Context,
    reason: Annotated[Optional[str], typer.Option(help="Only this reason.")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Include replayed rows.")] = False,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Quarantined lines with file, line, reason and the (redacted) raw text."""
    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    frame = the_lake.quarantine(status=None if all_rows else "open", reason=reason)
    _note_source(the_lake)
    if opts.json:
        emit_json(frame_records(frame))
    else:
        print_frame(frame.select("quarantine_id", "file", "line", "reason", "detail", "status", "raw"))


@quarantine_app.command("export")
def quarantine_export(
    ctx: typer.Context,
    output: Annotated[Path, typer.Argument(help="File to write: one quarantined line per line, to fix and replay.")],
    reason: Annotated[Optional[str], typer.Option(help="Only this reason.")] = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write open quarantined lines to a file; JSON objects carry `_quarantine_id` for `replay`."""
    from .ingest import export_quarantine

    opts = _options(ctx, lake, json_out)
    count = export_quarantine(_open(opts), output, reason=reason)
    _show(opts, {"file": str(output), "lines": count}, lambda: out.print(f"wrote {count} line(s) to {output}"))


@quarantine_app.command("replay")
def quarantine_replay(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A file of fixed lines (e.g. from `quarantine export`, edited).")],
    as_of: AsOfOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Re-ingest fixed lines; the quarantine rows they fix are marked replayed."""
    from .clock import resolve_as_of
    from .ingest import replay_quarantine

    opts = _options(ctx, lake, json_out)
    report = replay_quarantine(_open(opts), file, as_of=resolve_as_of(as_of), wait_s=_wait_s())
    _show(opts, report.as_dict(), lambda: _print_ingest(report.as_dict()))


# ------------------------------------------------------------------ dedup
@app.command()
def dedup(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the clusters and contradictions; write nothing.")] = False,
    as_of: AsOfOpt = None,
    set_: SetOpt = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Merge duplicates per scope (exact, near: MinHash, semantic: cosine > 0.90), never contradictions:
    pairs that differ in a number, date, negation, antonym or a replaced word go to the conflict queue."""
    from .clock import resolve_as_of
    from .dedup import dedup as run_dedup

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
        for cluster in report.details["clusters"][:20]:
            out.print(f"  {cluster['canonical']} <- {', '.join(cluster['members'])} ({', '.join(cluster['passes'])})")

    _show(opts, report.as_dict(), human)


@app.command()
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
    from .clock import resolve_as_of

    opts = _options(ctx, lake, json_out)
    result = _open(opts).unmerge(canonical_id, operator=operator, as_of=resolve_as_of(as_of))

    def human() -> None:
        if "queued" in result:
            out.print(f"the lake is busy: queued for the next run as {result['queued']}")
        else:
            out.print(f"restored {len(result['restored'])} memories of cluster {result['cluster']}")

    _show(opts, result, human)


# ------------------------------------------------------------------ conflicts and edits
@conflicts_app.command("list")
def conflicts_list(
    ctx: typer.Context,
    tenant: Annotated[Optional[str], typer.Option(help="Only this tenant.")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Include resolved conflicts.")] = False,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Open conflicts, oldest first: memory, field, the lake's and the incoming value (JSON text),
    both operators and trace ids, and the base version the incoming write read."""
    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    frame = the_lake.conflicts(tenant=tenant, status=None if all_rows else "open")
    _note_source(the_lake)
    if opts.json:
        emit_json(frame_records(frame))
    else:
        print_frame(frame.select("conflict_id", "kind", "memory_id", "field", "lake_value", "incoming_value",
                                 "incoming_operator", "base_version", "lake_version", "created_at", "status"),
                    title=f"{frame.height} conflict(s)")


@conflicts_app.command("resolve")
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
    from .clock import resolve_as_of
    from .conflicts import parse_take

    opts = _options(ctx, lake, json_out)
    kind, value = parse_take(take)
    result = _open(opts).resolve_conflict(conflict_id, kind, value=value, operator=operator,
                                          as_of=resolve_as_of(as_of))

    def human() -> None:
        if "queued" in result:
            out.print(f"the lake is busy: queued for the next run as {result['queued']}")
            return
        extra = f"; kept the incoming value as {result['new_memory_id']}" if result["new_memory_id"] else ""
        out.print(f"resolved {conflict_id} ({result['take']}): {result['memory_id']} is at version "
                  f"{result['version']}, {result['status']}{extra}")

    _show(opts, result, human)


@app.command()
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
    from .clock import resolve_as_of

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
        else:
            out.print(f"{memory_id} is at version {result['version']} ({result['status']})")

    _show(opts, result, human)


# ------------------------------------------------------------------ entry point
def main(argv: list[str] | None = None) -> int:
    """Console-script entry: one clear error line and an exit code instead of a traceback."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        result = app(args=argv, prog_name="memory-lake", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except MemoryLakeError as exc:
        err.print(f"error: {exc}")
        return exc.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.TyperException as exc:  # usage: unknown option or command, missing or bad value
        err.print(usage_error(exc, argv))
        return InputError.exit_code
    except (typer.Abort, KeyboardInterrupt):
        err.print("aborted")
        return 130
    except Exception as exc:  # the promise: never a traceback for the user
        if os.environ.get("MEMORY_LAKE_DEBUG"):
            raise
        err.print(f"error: unexpected {type(exc).__name__}: {exc} (MEMORY_LAKE_DEBUG=1 shows the traceback)")
        return 1


def usage_error(exc: typer.TyperException, argv: list[str]) -> str:
    """Click's message as one line, and which --help to read; a group called without a
    sub-command shows its help."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        return exc.format_message()
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else _command_path(argv)
    return f"error: {message} (see `{path} --help`)"


def _command_path(argv: list[str]) -> str:
    """`memory-lake conflicts list` from the words of `argv` that name commands (for an error
    raised before click knew the command)."""
    import typer.main

    command, path = typer.main.get_command(app), ["memory-lake"]
    for word in argv:
        sub = getattr(command, "commands", {}).get(word)
        if sub is not None:
            command = sub
            path.append(word)
    return " ".join(path)


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run()
