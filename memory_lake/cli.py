"""`memory-lake`: the command line. It parses arguments, calls one library function and formats
the result: a table for people, ``--json`` for machines (JSON only on stdout). Errors are one
line on stderr and a non-zero exit code, never a traceback (set MEMORY_LAKE_DEBUG=1 for one).

Every command takes ``--lake DIR`` and ``--json`` before or after the sub-command.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import click
import polars as pl
import typer
from rich.console import Console
from rich.table import Table

from .errors import MemoryLakeError

HELP = """memory-lake keeps AI-agent memory healthy: snapshots dropped in a lake's inbox are ingested
into a DuckDB + Parquet lake (bad rows quarantined, PII redacted), maintained and published.

The lake is ./lake unless --lake DIR or $MEMORY_LAKE_DIR says otherwise."""

app = typer.Typer(help=HELP, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  rich_markup_mode=None)
quarantine_app = typer.Typer(help="Inspect and replay quarantined lines.", no_args_is_help=True,
                             rich_markup_mode=None)
app.add_typer(quarantine_app, name="quarantine")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

LakeOpt = Annotated[Optional[Path], typer.Option("--lake", help="Lake folder (default $MEMORY_LAKE_DIR or ./lake).",
                                                 show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Logical time of the step (ISO 8601); default now.")]


@dataclass
class Options:
    lake: Optional[Path] = None
    json: bool = False


@app.callback()
def _global(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    ctx.obj = Options(lake, json_out)


def _options(ctx: typer.Context, lake: Optional[Path], json_out: bool) -> Options:
    parent = ctx.find_object(Options) or Options()
    return Options(lake or parent.lake, json_out or parent.json)


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
    table = Table(title=title, show_lines=False)
    for name in frame.columns:
        table.add_column(name, overflow="fold")
    for row in frame.iter_rows():
        cells = []
        for value in row:
            text = "" if value is None else str(value)
            cells.append(text if len(text) <= max_width else text[: max_width - 1] + "…")
        table.add_row(*cells)
    out.print(table)
    out.print(f"{frame.height} row(s)")


def _show(opts: Options, data: dict[str, Any], human: Callable[[], None]) -> None:
    if opts.json:
        emit_json(data)
    else:
        human()


# ------------------------------------------------------------------ commands
@app.command()
def init(ctx: typer.Context, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Create a lake (folders and DuckDB file); harmless on an existing lake."""
    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
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
    report = ingest_paths(the_lake, paths, as_of=resolve_as_of(as_of), dry_run=dry_run,
                          wait_s=_wait_s(), progress=not opts.json and err.is_terminal)
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


def _wait_s() -> float:
    from .lake import DEFAULT_WRITE_WAIT_S

    return float(os.environ.get("MEMORY_LAKE_WAIT_S", DEFAULT_WRITE_WAIT_S))


@app.command()
def sql(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help='A read-only query, e.g. "SELECT tier, count(*) FROM memories GROUP BY 1".')],
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run read-only SQL over the lake (the latest published version while a run holds it)."""
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
    from .ingest import discover_snapshots

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
    data = {
        "lake": str(the_lake.root), "source": result.source, "inbox_files": len(discover_snapshots(the_lake, None)),
        **counts, "by_tenant_tier_status": frame_records(result.frame),
    }

    def human() -> None:
        out.print(f"lake {data['lake']} ({result.source}); {data['inbox_files']} file(s) waiting in the inbox")
        if counts:
            out.print(", ".join(f"{k}: {v}" for k, v in counts.items()))
        print_frame(result.frame)

    _show(opts, data, human)


@app.command()
def demo(
    ctx: typer.Context,
    seed: Annotated[int, typer.Option(help="Seed of the generator (same seed, same data).")] = 7,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Generate deterministic demo snapshots into the inbox and ingest them."""
    from .demo import generate_demo
    from .ingest import ingest_paths

    opts = _options(ctx, lake, json_out)
    the_lake = _open(opts)
    data = generate_demo(the_lake.inbox, seed=seed)
    report = ingest_paths(the_lake, None, as_of=data.as_of, wait_s=_wait_s(),
                          progress=not opts.json and err.is_terminal).as_dict()
    counts = the_lake.sql("SELECT tier, count(*) AS memories FROM memories WHERE status <> 'deleted' GROUP BY 1 ORDER BY 1")
    result = {"lake": str(the_lake.root), "as_of": report["as_of"], "generated_files": len(data.files),
              "ingest": report, "memories_by_tier": dict(counts.iter_rows())}

    def human() -> None:
        out.print(f"demo data (seed {seed}) written to {the_lake.inbox}: {len(data.files)} file(s)")
        _print_ingest(report)
        out.print("memories by tier: " + ", ".join(f"{k} {v}" for k, v in result["memories_by_tier"].items()))

    _show(opts, result, human)


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
    frame = _open(opts).quarantine(status=None if all_rows else "open", reason=reason)
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


# ------------------------------------------------------------------ entry point
def main(argv: list[str] | None = None) -> int:
    """Console-script entry: one clear error line and an exit code instead of a traceback."""
    try:
        result = app(args=argv, prog_name="memory-lake", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except MemoryLakeError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        err.print("aborted")
        return 130
    except Exception as exc:  # the promise: never a traceback for the user
        if os.environ.get("MEMORY_LAKE_DEBUG"):
            raise
        err.print(f"error: unexpected {type(exc).__name__}: {exc} (MEMORY_LAKE_DEBUG=1 shows the traceback)",
                  markup=False, highlight=False)
        return 1


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run()
