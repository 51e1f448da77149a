"""Shared pieces of the command line (`memory_lake.cli`): the Typer apps, options, output helpers.

`memory-lake`: the command line. It parses arguments, calls one library function and formats
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

from ..store import InputError

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
holds_app = typer.Typer(help="Scopes the publish gate holds at their published state (an agent's mass removal, "
                                  "or a drop nothing explains): list them, release one.", no_args_is_help=True,
                        rich_markup_mode=None)
app.add_typer(holds_app, name="holds")
targets_app = typer.Typer(help="The vector stores (LanceDB, Qdrant, Chroma) each publish is copied into: sync them, "
                               "check them.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(targets_app, name="targets")
run_app = typer.Typer(help="Run a flow (Prefect, with its temporary local API when no server is set).",
                      no_args_is_help=True, rich_markup_mode=None)
app.add_typer(run_app, name="run")

# Exit codes beyond errors: a run whose publish was blocked by a failed check.
EXIT_BLOCKED = 4
EXIT_DEGRADED = 5  # a run published, but a step skipped a scope after an error (step_errors)

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
ReportsOpt = Annotated[Optional[Path], typer.Option("--reports", help="Folder for HTML reports (default $MEMORY_LAKE_REPORTS, else <lake>/reports).",
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
@targets_app.callback()
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
    from ..api import Lake

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


def _print_records(frame: pl.DataFrame, title: str | None) -> None:
    if title:
        out.print(Text(title))
    label = max(len(name) for name in frame.columns)
    for number, row in enumerate(frame.iter_rows(named=True), start=1):
        out.print(Text(f"-- row {number} " + "-" * max(0, min(out.width, 60) - 10 - len(str(number)))))
        for name, value in row.items():
            out.print(Text(f"{name.ljust(label)}  {'' if value is None else value}"))
    out.print(f"{frame.height} row(s)")


def _is_id_column(name: str) -> bool:
    return name == "id" or name.endswith("_id")


def print_frame(frame: pl.DataFrame, title: str | None = None, max_width: int = 60) -> None:
    """A table for people; every cell and the title are plain text (never rich markup). When the
    table cannot fit the terminal (or 80 columns when piped; Chinese characters count two), each row
    is printed as a block of `column: value` lines instead, so no id is folded and no column
    squeezed to nothing."""
    from rich.cells import cell_len

    # columns on screen, not characters: a Chinese character takes two (用户住在杭州 is 12 wide)
    cells_width = [max([cell_len(name)] + [min(cell_len(str(v)), 2 * max_width) for v in frame[name].to_list()])
                   for name in frame.columns]
    if frame.height and sum(cells_width) + 3 * len(cells_width) + 1 > out.width:
        _print_records(frame, title)
        return
    table = Table(title=Text(title) if title else None, show_lines=False)
    for name in frame.columns:
        if _is_id_column(name):
            # ids are pasted into the next command: never folded over lines, never cut
            table.add_column(Text(name), no_wrap=True, overflow="ignore",
                             min_width=max([len(name)] + [len(str(v)) for v in frame[name].drop_nulls().to_list()]))
        else:
            table.add_column(Text(name), overflow="fold")
    for row in frame.iter_rows():
        cells = []
        for name, value in zip(frame.columns, row):
            text = "" if value is None else str(value)
            cut = len(text) > max_width and not _is_id_column(name)
            cells.append(Text(text[: max_width - 1] + "…" if cut else text))
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
    from ..observe import STEP_LISTENERS

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



