"""The vector-store target commands: `targets sync` (what the nightly run does after its publish,
by hand) and `targets status` (each target against the published version, read-only). An invalid
``[[targets]]`` entry fails these two (and the nightly's sync); every other command warns once."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated, Any, Optional

import typer

from ..store import resolve_as_of
from .common import AsOfOpt, JsonOpt, LakeOpt, SetOpt, _open, _options, _show, err, out, parse_overrides

NamesArg = Annotated[Optional[list[str]], typer.Argument(
    help="Target names (default: every target in the lake's [[targets]]).", metavar="NAME", show_default=False)]
NO_TARGET = ("no target is configured: add a [[targets]] table (kind, name, path) to the lake's memory-lake.toml; "
             "see the README, Vector-store targets")


_WARNED: set[str] = set()
_SHOWN_HERE = {"on": False}  # inside `targets sync|status`, which report the entries themselves


def warn_invalid_targets(message: str) -> None:
    """Once per process, on stderr: memory-lake.toml has invalid [[targets]] entries (the command
    goes on; only what uses targets fails on them)."""
    if _SHOWN_HERE["on"] or message in _WARNED:
        return
    _WARNED.add(message)
    err.print(f"warning: {message}")


@contextlib.contextmanager
def _no_warning() -> Iterator[None]:
    _SHOWN_HERE["on"] = True
    try:
        yield
    finally:
        _SHOWN_HERE["on"] = False


def _label(t: dict[str, Any]) -> str:
    kind = "table" if t["kind"] == "lancedb" else "collection"
    return f"{t['name']} ({t['kind']} {t['where']}, {kind} {t['collection']})"


def _not_sent(t: dict[str, Any]) -> str:
    n = t.get("not_covered") or 0
    return (f"; {n} published memor{'y has' if n == 1 else 'ies have'} no {t['model']} vector (a language the model "
            f"does not cover, or not indexed yet): not sent") if n else ""


def targets_sync(ctx: typer.Context, names: NamesArg = None, as_of: AsOfOpt = None, set_: SetOpt = None,
                 lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Bring the vector-store targets level with the published version (exports/CURRENT): write the
    memories that are new or changed, delete those no longer published, with the lake's own vectors.
    The nightly run does this after each publish. Waits while a run holds the lake. Exits 1 when a
    target failed or its [[targets]] entry is invalid (the others are synced)."""
    from ..targets import sync_targets

    opts = _options(ctx, lake, json_out)
    with _no_warning():
        the_lake = _open(opts, policy_overrides=parse_overrides(set_))
    report = sync_targets(the_lake, resolve_as_of(as_of), names=names or None).as_dict()
    for error in report.get("errors") or []:
        error.pop("traceback", None)  # MEMORY_LAKE_DEBUG is for a crash; the error line says what failed
    targets = report["details"]["targets"]

    def human() -> None:
        if not targets:
            out.print(NO_TARGET)
            return
        for t in targets:
            if t["state"] == "invalid":
                out.print(f"INVALID, not synced: {t['error']}; {t['action']}")
            elif t["state"] == "failed":
                out.print(f"{_label(t)}: FAILED: {t['error']}; {t['action']}")
            elif t["state"] == "nothing_published":
                out.print(f"{_label(t)}: nothing is published yet (run `memory-lake publish` or the nightly run)")
            elif t["state"] == "in_sync":
                out.print(f"{_label(t)}: already level with {t['version']} ({t['held']} memories), nothing written"
                          + _not_sent(t))
            else:
                out.print(f"{_label(t)}: level with {t['version']}: {t['written']} written, {t['deleted']} deleted "
                          f"in {t['scopes']} scope(s); it holds {t['held']} memories" + _not_sent(t))

    _show(opts, report, human)
    if any(t["state"] in ("failed", "invalid") for t in targets):
        raise typer.Exit(1)


def targets_status(ctx: typer.Context, names: NamesArg = None, set_: SetOpt = None, lake: LakeOpt = None,
                   json_out: JsonOpt = False) -> None:
    """Compare each vector-store target with the published version, writing nothing: in_sync,
    behind (the next sync writes or deletes; `memory-lake targets sync` does it now) or unreachable
    (the store raised; the error says why); an invalid [[targets]] entry of memory-lake.toml is named
    with what is wrong. Exits 1 when a target is unreachable or an entry invalid."""
    from ..targets import target_status

    opts = _options(ctx, lake, json_out)
    with _no_warning():
        the_lake = _open(opts, policy_overrides=parse_overrides(set_))
    data = target_status(the_lake, names=names or None)

    def human() -> None:
        if not data["targets"]:
            out.print(NO_TARGET)
            return
        for t in data["targets"]:
            if t["state"] == "invalid":
                out.print(f"INVALID: {t['error']}; {t['action']}")
            elif t["state"] == "unreachable":
                out.print(f"{_label(t)}: UNREACHABLE: {t['error']}")
            elif t["state"] == "nothing_published":
                out.print(f"{_label(t)}: nothing is published yet")
            elif t["state"] == "in_sync":
                out.print(f"{_label(t)}: in sync with {t['version']} ({t['held']} memories)" + _not_sent(t))
            else:
                out.print(f"{_label(t)}: behind {t['version']}: {t['to_write']} to write, {t['to_delete']} to delete "
                          f"(it holds {t['held']}, {t['published']} published); run `memory-lake targets sync "
                          f"{t['name']}`" + _not_sent(t))

    _show(opts, data, human)
    if any(t["state"] in ("unreachable", "invalid") for t in data["targets"]):
        raise typer.Exit(1)
