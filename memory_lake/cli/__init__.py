"""`memory-lake`: the command line, one module per command group (`lake`, `ingest`, `maintain`,
`search`, `entities`, `publish`, `targets`, `serve`, `runs`, `patrol`, `evaluate`, `summaries`) over the shared pieces in `common`. ``main`` is the console-script entry.

Commands are registered here, in the order `memory-lake --help` lists them.
"""

from __future__ import annotations

import os
import sys

import typer

from ..store import InputError, MemoryLakeError
from . import entities, evaluate, ingest, lake, maintain, patrol, publish, runs, search, serve, summaries, targets
from .common import app, conflicts_app, err, holds_app, parse_overrides, quarantine_app, run_app, targets_app

app.command()(lake.init)
app.command()(ingest.ingest)
app.command()(lake.sql)
app.command()(lake.status)
app.command()(lake.demo)
app.command()(lake.backup)
app.command("restore-backup")(lake.restore_backup)
run_app.command("nightly")(runs.run_nightly)
app.command()(runs.deploy)
app.command("serve-flows")(runs.serve_flows)
app.command()(maintain.forget)
app.command()(maintain.restore)
app.command("apply-decisions")(maintain.apply_decisions)
app.command()(search.index)
app.command()(publish.publish)
app.command()(publish.publishes)
app.command()(publish.rollback)
holds_app.command("list")(publish.holds_list)
holds_app.command("release")(publish.holds_release)
targets_app.command("sync")(targets.targets_sync)
targets_app.command("status")(targets.targets_status)
app.command()(runs.report)
app.command()(runs.health)
app.command()(patrol.patrol)
app.command()(search.search)
app.command()(entities.context)
app.command()(entities.entities)
app.command()(serve.serve)
app.command()(serve.mcp)
app.command("summary-score")(evaluate.summary_score)
quarantine_app.command("list")(ingest.quarantine_list)
quarantine_app.command("export")(ingest.quarantine_export)
quarantine_app.command("replay")(ingest.quarantine_replay)
app.command()(maintain.dedup)
app.command()(maintain.unmerge)
conflicts_app.command("list")(maintain.conflicts_list)
conflicts_app.command("resolve")(maintain.conflicts_resolve)
app.command()(ingest.edit)
app.command()(summaries.summarize)


def _say_waiting(message: str) -> None:
    """A command that must wait for another process's lock says so at once (never on stdout)."""
    err.print(f"lake busy: {message}")


def main(argv: list[str] | None = None) -> int:
    """Console-script entry: one clear error line and an exit code instead of a traceback."""
    argv = sys.argv[1:] if argv is None else argv
    from ..store import INVALID_TARGET_LISTENERS, WAIT_LISTENERS
    from .targets import warn_invalid_targets

    if _say_waiting not in WAIT_LISTENERS:
        WAIT_LISTENERS.append(_say_waiting)
    if warn_invalid_targets not in INVALID_TARGET_LISTENERS:  # a command warns of a bad [[targets]] entry
        INVALID_TARGET_LISTENERS.append(warn_invalid_targets)
    try:
        result = app(args=argv, prog_name="memory-lake", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except MemoryLakeError as exc:
        if os.environ.get("MEMORY_LAKE_DEBUG") and exc.__cause__ is not None:  # a failed run: the step's traceback
            import traceback

            err.print("".join(traceback.format_exception(exc.__cause__)), markup=False, highlight=False)
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


__all__ = ["app", "main", "parse_overrides", "run"]
