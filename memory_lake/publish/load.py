"""`load_export`: an agent reads its scope from a published version (issue 18), in full or, with
``since``, only what changed from the version it holds (issue 38.3; `changes_since` answers the
same for a service: the HTTP endpoint, the MCP tool).

The export is a contract (``contract.py``): a reader checks ``format_version`` before it trusts a
column, so a version written in a format this code does not know is refused, never half-read.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import polars as pl

from ..store import InputError, is_lake, lake_not_found, unknown_message
from . import contract
from .changes import compose_changes, version_name

LAKE_ENV = "MEMORY_LAKE_DIR"


class UnknownExportFormat(InputError):
    """The version was written in a ``format_version`` this memory-lake cannot read."""


class UnknownScope(InputError):
    """The version names no memory of the tenant, agent or user asked for (a typo, a user not
    ingested yet, or one forgotten entirely); ``missing_ok=True`` loads [] instead."""


def load_export(path: str | os.PathLike | None = None, *, tenant: str, agent: str | None = None,
                user: str | None = None, version: str | int | None = None,
                as_frame: bool = False, missing_ok: bool = False,
                since: str | int | None = None) -> list[dict[str, Any]] | pl.DataFrame:
    """The memories an agent works with (status active or conflicted) of one scope, from a
    published version.

    `path` is a lake folder (default ``$MEMORY_LAKE_DIR``, else ``./lake``), its ``exports`` folder,
    or one version's folder. `version` (``"v3"``, ``3`` or ``"3"``) picks a kept version; default: the one
    ``exports/CURRENT`` points at. `agent` and `user` narrow the scope; None leaves that part open
    (every agent, every user of the tenant).

    Returns a list of dicts with the fields of ``contract.LOAD_COLUMNS`` (the scope, then a
    memory.json record: timestamps as ISO 8601 UTC text ending in Z, ``extra`` as JSON text), in
    the order memory.json lists them, or with ``as_frame=True`` the same as a Polars DataFrame
    with the Parquet types (UTC-aware datetimes). Such records re-ingest as they are
    (``write_snapshot``). A published scope with no active or conflicted memory gives []; a
    `tenant`, `agent` or `user` the version does not name at all is an UnknownScope (an InputError)
    that suggests the closest published names (a typo must not look like an empty memory), unless
    `missing_ok`: an agent that starts for a user with no memory yet (new, or forgotten entirely)
    passes it and gets []. Raises LakeNotFound when
    `path` holds no lake, InputError when there is no published version there, and
    UnknownExportFormat when the version's ``format_version`` is not one this code reads.

    `since` (``"v41"``, ``41``): only what changed in the scope from that version to the chosen one
    (``publish/changes.py``): one row per changed memory with ``contract.LOAD_CHANGE_COLUMNS``
    (``changes.parquet``'s columns: ``change`` added / updated / removed, the removal's ``reason``
    ..., then the memory.json record of an added or updated memory, null for a removed one),
    composed across the versions between; [] when nothing changed. Apply it as upserts and deletes
    by id. A `since` not kept, or whose changes are not all kept, raises ReloadInFull (an
    InputError): load in full instead.
    """
    if not isinstance(tenant, str) or not tenant:
        # a missing tenant matched nothing and loaded [], which an agent takes for "no memory yet"
        raise InputError(f"load_export needs the tenant whose memories to load (a non-empty name), not {tenant!r}")
    folder = _version_folder(path, version)
    _check_format(folder)
    if since is not None:
        frame = _changes(folder, since, tenant, agent, user, missing_ok, records=True)
        return frame if as_frame else _json_rows(frame)
    scope = pl.col("tenant") == tenant
    for column, value in (("agent_id", agent), ("user_id", user)):
        if value is not None:
            scope &= pl.col(column) == value
    frame = (pl.scan_parquet(folder / "memories.parquet")
             .filter(scope & pl.col("status").is_in(list(contract.SCOPE_STATUSES)))
             .select(contract.LOAD_COLUMNS)
             .with_columns(tier_rank=pl.col("tier").replace_strict(
                 {tier: rank for rank, tier in enumerate(contract.TIER_ORDER)}, default=len(contract.TIER_ORDER),
                 return_dtype=pl.Int64))
             .sort(["tenant", "agent_id", "user_id", "tier_rank", "importance", "last_accessed_at", "id"],
                   descending=[False, False, False, False, True, True, False], nulls_last=False)
             .drop("tier_rank").collect())
    if frame.height == 0 and not missing_ok:
        _check_scope(folder / "memories.parquet", tenant, agent, user)
    if as_frame:
        return frame
    return _json_rows(frame)


def changes_since(path_or_lake_root: str | os.PathLike | None, since: str | int, *, tenant: str | None = None,
                  agent: str | None = None, user: str | None = None, version: str | int | None = None,
                  records: bool = False) -> dict[str, Any]:
    """What changed in the memories agents load from the version `since` to `version` (default:
    the one CURRENT points at), for a service answering agents (``GET /v1/changes``, the MCP tool
    ``recent_changes``).

    `path_or_lake_root` is read as `load_export` reads `path`. `tenant`, `agent` and `user` narrow
    the scope (None: every tenant, agent, user); a name the version does not know is an
    UnknownScope when nothing changed for it. Returns ``{"from": "v41", "to": "v47", "changes":
    [...]}``, the rows ordered by scope and id with ``changes.parquet``'s columns
    (``contract.CHANGE_COLUMNS``), composed across the versions between; with `records`, each
    added or updated memory also carries its memory.json record (``contract.LOAD_CHANGE_COLUMNS``,
    timestamps as ISO 8601 UTC text). Raises ReloadInFull when `since` is not kept (or not a version
    here) or the changes on the way are not all kept: the agent loads in full; InputError when
    `since` is no version's name; LakeNotFound and UnknownExportFormat as `load_export`.
    """
    since = version_name(since)
    folder = _version_folder(path_or_lake_root, version)
    _check_format(folder)
    frame = _changes(folder, since, tenant, agent, user, missing_ok=False, records=records)
    return {"from": since, "to": folder.name, "changes": _json_rows(frame)}


def _changes(folder: Path, since: str | int, tenant: str | None, agent: str | None, user: str | None,
             missing_ok: bool, records: bool) -> pl.DataFrame:
    """The composed changes of a scope up to the version `folder` (changes.compose_changes), with
    the memory.json record of each added or updated memory when `records`."""
    frame = compose_changes(folder.parent, since, folder.name, tenant=tenant, agent=agent, user=user)
    if frame.height == 0 and not missing_ok:
        _check_scope(folder / "memories.parquet", tenant, agent, user)
    if not records:
        return frame
    fields = [c for c in contract.LOAD_COLUMNS if c not in contract.SCOPE_FIELDS]
    held = pl.scan_parquet(folder / "memories.parquet").filter(
        pl.col("status").is_in(list(contract.SCOPE_STATUSES))).select(*contract.SCOPE_FIELDS, *fields)
    return (frame.lazy().join(held, on=[*contract.SCOPE_FIELDS, "id"], how="left", nulls_equal=True,
                              maintain_order="left")
            .with_columns(pl.when(pl.col("change") != "removed").then(pl.col(c)).alias(c)
                          for c in fields if c != "id")
            .select(contract.LOAD_CHANGE_COLUMNS).collect())


def _json_rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts, timestamps as the contract's JSON text."""
    times = [name for name in frame.columns
             if name in contract.MEMORY_FIELDS and contract.MEMORY_FIELDS[name].type == "timestamp"]
    return frame.with_columns(_iso(pl.col(name)).alias(name) for name in times).to_dicts()


def _check_format(folder: Path) -> None:
    """Raise UnknownExportFormat when `folder`'s ``format_version`` is not one this code reads."""
    found = _manifest(folder).get("format_version")
    if contract.format_major(found) != contract.READABLE_MAJOR:
        raise UnknownExportFormat(
            f"{folder} has export format_version {found!r}; this memory-lake reads format "
            f"{contract.READABLE_MAJOR}.x ({contract.FORMAT_VERSION}): upgrade memory-lake, or load a version "
            f"published by this one")


def _check_scope(parquet: Path, tenant: str, agent: str | None, user: str | None) -> None:
    """Raise InputError when the version holds no memory (of any status) of `tenant`, or of `agent`
    / `user` within the scope named before it, suggesting the closest published names, as the CLI's
    search does against the lake: a typo in an agent's config must not start it with an empty
    memory. A published scope whose memories are all dormant or archived passes (it loads [])."""
    within = pl.scan_parquet(parquet).select("tenant", "agent_id", "user_id").unique().collect()
    check_names(within, tenant, agent, user,
                " (load_export(..., missing_ok=True) loads [] for a scope with no memory yet)")


def check_names(within: pl.DataFrame, tenant: str, agent: str | None, user: str | None, hint: str = "") -> None:
    """UnknownScope when `within` (distinct tenant, agent_id, user_id of a version) lacks `tenant`, or
    `agent` / `user` inside the scope named before it, naming the closest names; `hint` ends the message."""
    named: list[str] = []
    for label, column, value in (("tenant", "tenant", tenant), ("agent", "agent_id", agent), ("user", "user_id", user)):
        if value is None:
            continue
        inside = within.filter(pl.col(column) == value)
        if inside.height == 0:
            known = sorted(within.get_column(column).drop_nulls().unique().to_list())
            raise UnknownScope(unknown_message(label, value, known, within=", ".join(named)) + hint)
        within = inside
        named.append(f"{label} {value!r}")


def _iso(column: pl.Expr) -> pl.Expr:
    """A UTC datetime as the contract's JSON text: seconds, six fractional digits when it has any."""
    return (pl.when(column.dt.microsecond() == 0)
            .then(column.dt.strftime("%Y-%m-%dT%H:%M:%SZ"))
            .otherwise(column.dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ")))


def _version_folder(path: str | os.PathLike | None, version: str | None) -> Path:
    root = Path(path or os.environ.get(LAKE_ENV) or "lake").expanduser()
    if (root / "manifest.json").is_file() and version is None:
        return root  # a version's folder itself
    exports = root if (root / "CURRENT").exists() or root.name == "exports" else root / "exports"
    if not exports.is_dir() and not is_lake(exports.parent):
        raise lake_not_found(exports.parent.resolve(),
                             "give load_export a lake's folder, its exports folder or a version's folder")
    if version is not None:
        if isinstance(version, bool) or not isinstance(version, (str, int)):
            raise InputError(f"version must be a version's name such as 'v3' (or its number), not {version!r}")
        version = f"v{version}" if isinstance(version, int) or str(version).isdigit() else str(version)
        folder = exports / version
        if re.search(r"[/\\]", version) or version in (".", "..") or folder.resolve().parent != exports.resolve():
            # a name, never a path: "../../other/exports/v1" must not read another lake
            raise InputError(f"version must be a version's name such as 'v3' (or its number), not {version!r}")
        if not (folder / "manifest.json").is_file():
            kept = sorted((p.name for p in exports.glob("v*") if (p / "manifest.json").is_file()),
                          key=lambda name: int(name[1:]) if name[1:].isdigit() else 0)
            raise InputError(f"no published version {version!r} under {exports}; kept versions: "
                             f"{', '.join(kept) or 'none'}")
        return folder
    current = exports / "CURRENT"
    if not current.exists():
        raise InputError(f"nothing is published under {exports}: no exports/CURRENT (run `memory-lake publish` or "
                         f"the nightly run first, or pass the lake's folder)")
    return current.resolve()


def _manifest(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{folder} has no readable manifest.json ({exc}); it is not a published version") from None
