"""Publish (write-audit-publish, DESIGN "Publish"): stage an export, check it, switch CURRENT.

1. stage  - ``exports/.staging-<run>/``: ``memories.parquet`` (every published row: not deleted,
            not merged), ``tables/<table>.parquet`` (every other table of the lake but the tenant
            salts: what analysts and busy-time reads use), and per scope
            ``scopes/<tenant>/<agent>/<user>/memory.json`` (the save-file shape, re-ingestable) and
            ``context.md`` (a Markdown context pack) in the folder ``scope_folder`` names;
            a staging folder a crashed run left behind is removed first;
2. audit  - the Great Expectations suite (``checks.py``); a failure removes the staging folder,
            leaves CURRENT untouched and names every failed expectation;
3. publish - rename to ``exports/v<N>/`` with ``manifest.json`` (version, as_of, run id, counts,
            every scope with its folder, checksums, check results), then point ``exports/CURRENT``
            at it atomically (a new symlink renamed over the old one) and keep the last N versions.

Every exported memory carries ``conflict`` (its value is disputed: status ``conflicted``, or a
side of an open contradiction) and ``conflict_with`` (the ids of the other side(s)), in
``memories.parquet``, ``memory.json`` and as a visible mark in ``context.md``, so a known
contradiction never reaches an agent unmarked.

A publish whose content equals CURRENT's makes no new version. An empty lake publishes an empty
version (no scopes), so agents and busy-time reads find a CURRENT from the first night on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import duckdb
import polars as pl

from ..store import schema
from . import contract
from .changes import restamp_changes, stage_changes
from .checks import batches, validate
from .diff import diff_batches, keep_held, record_holds, scope_holds
from .kept import MEMORIES_MARK, load_kept, part_digests, put_staged, save_kept, scope_digest, table_digests, take_hashes
from .kept import unchanged_scopes
from .packs import AS_OF_LINE, LINE_FIELDS, PackHelpers, build_packs, head_tokens, load_packs, pack_key, pack_processes
from .packs import pack_view_digests, save_packs
from ..maintain import CONTRADICTION_PARTNERS_SQL
from ..maintain import scope_entity_facts, scope_fact_digests
from ..search import markdown_text, pack_head, scope_pack
from ..store import crash_point, file_sha256, iso
from ..store import Policy, parquet_sql, table_files
from ..store import MemoryLakeError, StepReport, step_error
from ..store import transaction

CURRENT = "CURRENT"
STAGING_PREFIX = ".staging-"
# Every table of the lake goes to ``tables/<name>.parquet`` (so every read command works while a
# run holds the lake, and a table added later is exported without a change here), except these:
NOT_EXPORTED = {
    "memories": "exported as memories.parquet (published rows only)",
}
# Tables written in parts, ``tables/<table>/<part>.parquet``, one per night the rows were made (the
# SQL of a row's part name, its ``as_of`` day; ``undated`` when it has none): a night adds a part
# and the others are hard-linked from the version that holds them. These tables only grow night by
# night (a forget rewrites the parts it scrubs): at 1M memories the embeddings are 1.6 GB and the
# history, the entity facts and their extractions 0.45 GB more, all written again every night
# before. A table with no rows has the one part ``empty.parquet``, so the folder always reads as the table.
_NIGHT_PART = "coalesce(strftime(as_of, '%Y-%m-%d'), 'undated')"
PARTED = {table: _NIGHT_PART for table in ("embeddings", "entity_extractions", "entity_facts", "memory_history")}
EMPTY_PART = "empty"
# Per memory, beside the memory columns: is its value disputed, and by which other memories.
CONFLICT_COLUMNS = ("conflict", "conflict_with")
# Columns of a record in a scope's memory.json: the snapshot contract, so the file re-ingests
# (publish/contract.py defines every exported file's columns and types).
SCOPE_RECORD_COLUMNS = contract.RECORD_COLUMNS
# The rows an export carries: not forgotten, not merged into another (schema.PUBLISHED_STATUSES).
PUBLISHED = "status IN (" + ", ".join(f"'{s}'" for s in schema.PUBLISHED_STATUSES) + ")"
TIER_ORDER = "CASE tier " + " ".join(f"WHEN '{t}' THEN {n}" for n, t in enumerate(contract.TIER_ORDER)) + " END"
TIER_TITLES = {"important": "Important", "working": "Working", "short_term": "Short-term", "long_term": "Long-term"}


def publish(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """Stage, check and publish in one call (the CLI's `publish`; the nightly flow runs the three
    steps as separate tasks)."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("publish", as_of)
    with lake.hold("publish"):
        staged = stage_export(lake, as_of, policy, run_id)
        checks = check_export(lake, staged.details["staging"], policy, run_id, as_of)
        return publish_export(lake, as_of, staged.details, checks.details, policy, run_id)


def stage_export(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """Write the candidate version to ``exports/.staging-<run>/``; nothing when it equals CURRENT."""
    run_id = run_id or lake.new_run_id("publish", as_of)
    policy = policy or lake.policy
    with lake.writer(purpose="stage export") as con:
        remove_staging(lake, con)
        _stage_rows(con)
        current = current_version(lake)
        held = _hold_scopes(con, lake.exports / current if current else None, policy, run_id, as_of)
        _stage_digests(con)
        content_hash = _content_hash(con)
        (rows,) = con.execute("SELECT count(*) FROM publish_rows").fetchone()
        details = {"status": "staged", "staging": None, "content_hash": content_hash, "current": current,
                   "rows": rows, "scopes": 0, "held": held}
        counts = {"rows": rows, "staged": 0, "held_scopes": len(held)}
        if current and _manifest(lake.exports / current).get("content_hash") == content_hash:
            details["status"] = "unchanged"
            return StepReport("stage_export", as_of, run_id, counts, details)
        staging = lake.exports / f"{STAGING_PREFIX}{run_id}"
        errors: list[dict[str, Any]] = []
        try:
            # changes.parquet and each scope's memory.json#changes, against CURRENT (changes.py)
            version = _next_version(lake, con)
            changes = stage_changes(con, staging, lake.exports / current if current else None, version)
            details["changes"] = changes.summary()
            packs, kept = load_packs(con, lake.exports), load_kept(con, lake.exports, version)
            details["scope_list"] = _write_staging(con, staging, as_of, policy, errors, changes, (packs, version), kept)
            put_staged(staging, kept)
            save_packs(con, packs)
            save_kept(con, kept)
            counts.update(packs_kept=packs.reused, packs_by_helpers=packs.by_helpers, scopes_kept=len(kept.unchanged),
                          tables_linked=kept.linked_tables)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    details["staging"] = str(staging)
    details["scopes"] = len(details["scope_list"])
    return StepReport("stage_export", as_of, run_id, {**counts, "staged": 1}, details, errors=errors)


def check_export(lake, staging: str | None, policy: Policy | None = None, run_id: str | None = None,
                 as_of: datetime | None = None) -> StepReport:
    """Run the publish suite on a staged export, the diff gate against CURRENT included. With
    nothing staged (the content equals CURRENT's) the suite checks CURRENT itself under today's
    policy, so a policy change that makes it invalid is reported even when no data changed
    (``details["checked"]`` says which)."""
    policy = policy or lake.policy
    report = StepReport("check_export", as_of, run_id or "")
    current = current_version(lake)
    if staging is None and current is None:
        report.details = {"success": True, "failed": [], "checks": [], "skipped": True}
        return report
    previous = lake.exports / current if current else None
    candidate = Path(staging) if staging is not None else previous
    memories, rows = _checked_rows(candidate / "memories.parquet",
                                   unchanged_scopes(candidate) if staging is not None else [])
    counted = memories if memories.height == rows else pl.read_parquet(
        candidate / "memories.parquet", columns=[*contract.SCOPE_FIELDS, "tier", "status"])  # every row's scope and tier
    with lake.writer(purpose="check export") as con:
        diff = diff_batches(con, previous, candidate, policy, as_of)
    checks = validate(batches(memories, scope_counts(counted, policy), diff))
    report.details = {**checks.as_dict(), "checked": "staged" if staging is not None else current,
                      "previous": current, "rows": rows, "rows_checked": memories.height}
    report.counts = {"expectations": len(checks.results), "failed": len(checks.failed), "rows_checked": memories.height}
    return report


def _checked_rows(path: Path, unchanged: list[tuple[str, str | None, str | None]]) -> tuple[pl.DataFrame, int]:
    """The rows of `path` the row expectations check, and how many rows it has: every row but those
    of the `unchanged` scopes (rows a published version holds as they are, which the suite passed),
    and always every row whose id is missing or not unique (uniqueness is over the whole version)."""
    rows = pl.scan_parquet(path)
    if not unchanged:
        frame = rows.collect()
        return frame, frame.height
    scopes = pl.DataFrame(unchanged, schema={f: pl.String for f in contract.SCOPE_FIELDS}, orient="row")
    frame = (rows.with_row_index("_row")
             .join(scopes.lazy().with_columns(_unchanged=pl.lit(True)), on=list(contract.SCOPE_FIELDS), how="left",
                   nulls_equal=True)
             .filter(pl.col("_unchanged").is_null() | pl.col("id").is_null() | pl.col("id").is_duplicated())
             .sort("_row").drop("_row", "_unchanged").collect())
    (total,) = rows.select(pl.len()).collect().row(0)
    return frame, total


def publish_export(lake, as_of: datetime, staged: dict[str, Any], checks: dict[str, Any],
                   policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """Switch CURRENT to the staged version when every check passed; otherwise discard it."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("publish", as_of)
    current = current_version(lake)
    base = {"current": current, "content_hash": staged["content_hash"], "checks": checks["checks"], "failed": [],
            "held": staged.get("held") or []}
    with lake.writer(purpose="publish") as con:
        if staged["status"] == "unchanged":
            if current and not _recorded(con, current):
                # a publish killed between the CURRENT switch and its record: finish it (same as_of)
                return _record_published(con, lake, policy, as_of, run_id, base, current,
                                         _manifest(lake.exports / current))
            if not checks["success"]:
                # nothing new to publish, but CURRENT itself fails today's policy: said, not skipped
                result = {**base, "status": "blocked", "version": None, "path": None, "failed": checks["failed"],
                          "current_invalid": True}
                _record(con, run_id, as_of, result, None)
                return StepReport("publish_export", as_of, run_id,
                                  {"new_version": 0, "failed": len(checks["failed"])}, result)
            result = {**base, "status": "unchanged", "version": None, "path": str(lake.exports / CURRENT)}
            _record(con, run_id, as_of, result, None)
            return StepReport("publish_export", as_of, run_id, {"new_version": 0}, result)
        staging = Path(staged["staging"])
        if not checks["success"]:
            shutil.rmtree(staging, ignore_errors=True)
            result = {**base, "status": "blocked", "version": None, "path": None, "failed": checks["failed"]}
            _record(con, run_id, as_of, result, None)
            return StepReport("publish_export", as_of, run_id, {"new_version": 0, "failed": len(checks["failed"])},
                              result)
        version = _next_version(lake, con)
        changes = staged.get("changes") or {}
        if changes and changes.get("to") != version:
            restamp_changes(staging, version)
        manifest = _write_manifest(staging, version=version, as_of=as_of, run_id=run_id,
                                   content_hash=staged["content_hash"], checks=checks, scopes=staged["scope_list"],
                                   previous=current, changes_from=changes.get("from"))
        target = lake.exports / version
        crash_point("publish:staged")  # tests/test_crash_safety.py kills at each of these
        os.rename(staging, target)
        crash_point("publish:renamed")
        switch_current(lake.exports, version)
        crash_point("publish:switched")
        base["changes"] = {**changes, "to": version} if changes else None  # what changes.parquet counts
        return _record_published(con, lake, policy, as_of, run_id, base, version, manifest)


def _record_published(con: duckdb.DuckDBPyConnection, lake, policy: Policy, as_of: datetime, run_id: str,
                      base: dict[str, Any], version: str, manifest: dict[str, Any]) -> StepReport:
    """After CURRENT points at `version`: prune old versions, stamp the published rows and record the
    publish, in one transaction (a re-run after a kill before it finishes it, see publish_export)."""
    pruned = _prune(lake.exports, policy.publish.keep_versions)
    with transaction(con):
        con.execute(
            "UPDATE memories SET published_at = ?, publish_meta = json_object('version', ?, 'run_id', ?) "
            f"WHERE {PUBLISHED}", [as_of, version, run_id])
        result = {**base, "status": "published", "version": version, "current": version,
                  "path": str(lake.exports / version), "pruned": pruned}
        _record(con, run_id, as_of, result, manifest)
    return StepReport("publish_export", as_of, run_id, {"new_version": 1, "rows": manifest["counts"]["rows"]}, result)


def _recorded(con: duckdb.DuckDBPyConnection, version: str) -> bool:
    """True when the publish of `version` (e.g. "v3") is in ``publishes``."""
    return bool(con.execute("SELECT count(*) FROM publishes WHERE status = 'published' AND version = ?",
                            [int(version[1:])]).fetchone()[0])


def remove_staging(lake, con: duckdb.DuckDBPyConnection | None = None) -> list[str]:
    """Remove every ``exports/.staging-*`` folder (one a crashed or failed run left behind), and
    every ``v<N>`` newer than CURRENT that was never recorded as published (a publish killed
    between its rename and the CURRENT switch: no reader ever saw it, and the next publish reuses
    its number; a version CURRENT was rolled back from stays); the caller holds the write lock, so
    no other publish is staging. Returns the names removed."""
    removed = []
    if lake.exports.is_dir():
        current = current_version(lake)
        newest = int(current[1:]) if current and current[1:].isdigit() else 0
        orphans = [n for n in _versions(lake.exports) if n > newest]
        if orphans:
            with contextlib.nullcontext(con) if con is not None else lake.writer(purpose="remove staging") as live:
                recorded = set(_published_numbers(live))
            orphans = [lake.exports / f"v{n}" for n in orphans if n not in recorded]
        for folder in sorted(lake.exports.glob(f"{STAGING_PREFIX}*")) + orphans:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
    return removed


def _published_numbers(con: duckdb.DuckDBPyConnection) -> list[int]:
    return [n for (n,) in con.execute(
        "SELECT DISTINCT version FROM publishes WHERE status = 'published' AND version IS NOT NULL").fetchall()]


def current_version(lake) -> str | None:
    """The version CURRENT points at (e.g. "v3"), or None before the first publish."""
    link = lake.exports / CURRENT
    return os.readlink(link) if link.is_symlink() else None


def switch_current(exports: Path, version: str) -> None:
    """Point CURRENT at `version` atomically: a new symlink renamed over the old one."""
    tmp = exports / f".{CURRENT}.tmp"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(version)
    os.replace(tmp, exports / CURRENT)


# ---------------------------------------------------------------------------- staging
def _stage_rows(con: duckdb.DuckDBPyConnection) -> None:
    """Temp table ``publish_rows`` (ordered by id: the memory columns and CONFLICT_COLUMNS)."""
    columns = [c for c in contract.PARQUET_COLUMNS if c not in CONFLICT_COLUMNS]
    # base_seq: the memory's latest history row, the base a record written back is merged against
    selected = ", ".join("h.base_seq" if c == "base_seq" else f"m.{c}" for c in columns)
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE publish_rows AS
        WITH partners AS ({CONTRADICTION_PARTNERS_SQL}),
        latest AS (SELECT memory_id, max(seq) AS base_seq FROM memory_history GROUP BY memory_id)
        SELECT {selected},
               m.status = 'conflicted' OR p.id IS NOT NULL AS conflict,
               coalesce(p.conflict_with, []::VARCHAR[]) AS conflict_with
        FROM memories m LEFT JOIN partners p ON p.id = m.id LEFT JOIN latest h ON h.memory_id = m.id
        WHERE m.{PUBLISHED} ORDER BY m.id
        """
    )


def _hold_scopes(con: duckdb.DuckDBPyConnection, previous: Path | None, policy: Policy, run_id: str,
                 as_of: datetime) -> list[dict[str, Any]]:
    """Judge every scope of `previous` (diff.py); a held scope keeps its published rows in
    ``publish_rows``. Returns the held scopes, each with its reason and the command that releases it."""
    holds = scope_holds(con, previous, "publish_rows", policy, as_of)
    if holds.is_empty():
        return []
    keep_held(con, previous, "publish_rows", holds.filter(pl.col("reason").is_not_null()))
    with transaction(con):
        return record_holds(con, holds, previous.name, run_id, as_of)


def _stage_digests(con: duckdb.DuckDBPyConnection) -> None:
    """Temp tables ``publish_digests`` (per row of ``publish_rows``: its scope, status, tier and the
    md5 of its content) and ``publish_scopes`` (per scope: the md5 of its rows' digests in id order,
    its active count and its active count per tier): what the content hash, the kept scope files
    (kept.py) and the incremental publish checks compare."""
    columns = [c for c in contract.PARQUET_COLUMNS if c not in CONFLICT_COLUMNS]
    row = f"to_json(struct_pack({', '.join(f'{c} := {c}' for c in [*columns, *CONFLICT_COLUMNS])}))::VARCHAR"
    con.execute(f"""CREATE OR REPLACE TEMP TABLE publish_digests AS
                    SELECT id, tenant, agent_id, user_id, status, tier, md5({row}) AS digest FROM publish_rows""")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE publish_scopes AS
        SELECT tenant, agent_id, user_id, md5(string_agg(digest, '' ORDER BY id)) AS digest,
               count(*) FILTER (WHERE status IN ('active', 'conflicted')) AS active,
               histogram(tier) FILTER (WHERE status IN ('active', 'conflicted')) AS by_tier
        FROM publish_digests GROUP BY ALL""")


def _content_hash(con: duckdb.DuckDBPyConnection) -> str:
    """The hash of ``publish_rows``' content (a contradiction opened or resolved changes it, so the
    marks get published), from ``publish_digests``."""
    # Row digests joined in id order, after the format version: the content identity of an export,
    # independent of run and time (a new format publishes a new version of unchanged rows).
    (value,) = con.execute(
        "SELECT sha256(? || coalesce(string_agg(digest, '' ORDER BY id), '')) FROM publish_digests",
        [contract.FORMAT_VERSION]).fetchone()
    return value


def exported_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The lake's tables a version carries in ``tables/`` (all but NOT_EXPORTED)."""
    names = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() "
        "AND table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name").fetchall()
    return [name for (name,) in names if name not in NOT_EXPORTED]


def _write_staging(con: duckdb.DuckDBPyConnection, staging: Path, as_of: datetime,
                   policy: Policy | None = None, errors: list[dict[str, Any]] | None = None,
                   changes=None, packs=None, kept=None) -> list[dict[str, Any]]:
    """The staged files; `kept` (``kept.KeptFiles``): tables and scope records that did not change
    since the last export are taken from its version (kept.py)."""
    (staging / "tables").mkdir(parents=True)
    _copy_typed(con, "publish_rows", staging / "memories.parquet")
    tables = exported_tables(con)
    digests = table_digests(con, [t for t in tables if t not in PARTED]) if kept is not None else {}
    for table in tables:
        if table in PARTED:
            _write_parts(con, table, staging / "tables" / table, kept)
            continue
        target = staging / "tables" / (table + ".parquet")
        if kept is not None and kept.link_table(table, digests[table], target):
            continue
        _copy_typed(con, table, target)
        if kept is not None:
            kept.wrote_table(table, digests[table], target)
    return _write_scopes(con, staging / "scopes", as_of, policy or Policy(), errors, changes, packs, kept)


def contract_type(duckdb_type: str) -> str:
    """The type a lake column is exported with (the contract's one type per field): TIMESTAMP
    becomes UTC-aware TIMESTAMPTZ and JSON becomes its text, also inside structs and lists."""
    return _JSON_TYPE.sub("VARCHAR", _NAIVE_TIMESTAMP.sub("TIMESTAMPTZ", duckdb_type))


_NAIVE_TIMESTAMP = re.compile(r"\bTIMESTAMP\b(?! WITH TIME ZONE)(?!_)")
_JSON_TYPE = re.compile(r"\bJSON\b")


def _copy_typed(con: duckdb.DuckDBPyConnection, table: str, target: Path, where: str = "true") -> None:
    """COPY a table (its rows where `where` holds) to Parquet with contract types (the connection's
    time zone is UTC, so a naive lake timestamp is read as the UTC time it is)."""
    columns = con.execute(f'DESCRIBE "{table}"').fetchall()
    select = ", ".join(f'"{name}"::{contract_type(kind)} AS "{name}"' if contract_type(kind) != kind else f'"{name}"'
                       for name, kind, *_ in columns)
    con.execute(f'COPY (SELECT {select} FROM "{table}" WHERE {where}) TO \'{_sql_path(target)}\' (FORMAT parquet)')


def _write_parts(con: duckdb.DuckDBPyConnection, table: str, folder: Path, kept=None) -> None:
    """`table` as one file per part (PARTED) in `folder`, each hard-linked from the version holding it
    when its rows are the same (`kept`: ``kept.KeptFiles``)."""
    folder.mkdir()
    part = PARTED[table]
    digests = part_digests(con, table, part)
    if not digests:
        _copy_typed(con, table, folder / f"{EMPTY_PART}.parquet", "false")
        return
    for name, digest in digests.items():
        target, relpath = folder / f"{name}.parquet", f"tables/{table}/{name}.parquet"
        if kept is not None and kept.link_table(f"{table}/{name}", digest, target, relpath):
            continue
        _copy_typed(con, table, target, f"{part} = '{name}'")
        if kept is not None:
            kept.wrote_table(f"{table}/{name}", digest, target, relpath)


def _json_time(column: str) -> str:
    """SQL: a timestamp column as the contract's JSON text, ISO 8601 UTC ending in Z."""
    return (f"CASE WHEN {column} IS NOT NULL THEN strftime({column}, '%Y-%m-%dT%H:%M:%S') "
            f"|| CASE WHEN epoch_us({column}) % 1000000 <> 0 THEN strftime({column}, '.%f') ELSE '' END || 'Z' END")


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


def _write_scopes(con: duckdb.DuckDBPyConnection, root: Path, as_of: datetime,
                  policy: Policy | None = None, errors: list[dict[str, Any]] | None = None,
                  changes=None, packs=None, kept=None) -> list[dict[str, Any]]:
    """One memory.json and context.md per scope (active and disputed memories; loop per scope);
    context.md is the scope's context pack within its tenant's ``[context] max_tokens``. A scope
    whose pack raises gets a context.md that says so, and the error goes to `errors` (raised
    when `errors` is None). `packs` (``packs.KeptPacks``, the version's name) and `kept`
    (``kept.KeptFiles``): a scope whose rows, facts and budget have not changed since the last export
    takes its records and pack from there, with tonight's header; the others are built, a batch of
    scopes per query. Needs ``publish_scopes`` (``_stage_digests``)."""
    as_json = {c: _json_time(c) for c in SCOPE_RECORD_COLUMNS if contract.MEMORY_FIELDS[c].type == "timestamp"}
    as_json["extra"] = "extra::VARCHAR"
    record = ", ".join(f"{c} := {as_json.get(c, c)}" for c in SCOPE_RECORD_COLUMNS)
    order = f"{TIER_ORDER}, importance DESC, last_accessed_at DESC, id"
    root.mkdir(parents=True, exist_ok=True)  # also when there is no scope yet: one layout for agents
    stamp = iso(as_of)
    policy = policy or Policy()
    facts = scope_fact_digests(con)  # what a pack's key reads; the facts themselves only for the packs built
    views = pack_view_digests(con) if packs else {}  # what a pack can read of the scope's rows (packs.py)
    listed = con.execute(
        """SELECT tenant, agent_id, user_id, digest, active, by_tier FROM publish_scopes WHERE active > 0
           ORDER BY tenant, agent_id NULLS FIRST, user_id NULLS FIRST""").pl()
    headers = [{"format_version": contract.FORMAT_VERSION, "tenant": t, "agent_id": a, "user_id": u, "as_of": stamp}
               for t, a, u in listed.select("tenant", "agent_id", "user_id").iter_rows()]
    headings = head_tokens(headers) if packs else [None] * len(headers)
    scopes: list[dict[str, Any]] = []
    plans: dict[tuple, dict[str, Any]] = {}  # scope -> what writing it needs
    for n, row in enumerate(listed.iter_rows(named=True)):
        header, scope = headers[n], (row["tenant"], row["agent_id"], row["user_id"])
        path = scope_folder(*scope)
        by_tier = {e["key"]: e["value"] for e in row["by_tier"]} if isinstance(row["by_tier"], list) else dict(row["by_tier"])
        scopes.append({"tenant": scope[0], "agent_id": scope[1], "user_id": scope[2], "by_tier": by_tier,
                       "path": f"{root.name}/{path}"})
        plan = {"path": path, "header": header, "heading": headings[n], "facts": facts.get(scope, ""),
                "budget": policy.for_tenant(scope[0]).context.max_tokens,
                "digest": scope_digest(row["digest"]) if kept is not None else None,
                "view": "view:" + views.get(scope, "") if packs else None,
                "section": changes.section(*scope) if changes else None}
        records = kept.scope_records(path, plan["digest"]) if kept is not None else None
        if records is not None:
            kept.unchanged.append(scope)
        pack = _kept_pack(packs, plan, kept_only=True)
        if records is not None and pack is not None:
            _write_scope(root, plan, records, pack, kept)
        else:  # the query reads what is missing: the records, the pack's lines, or both
            plans[scope] = {**plan, "rows": row["active"], "records": records, "pack": pack}
    if not plans:
        return scopes
    to_build = sum(plan["pack"] is None for plan in plans.values())
    with PackHelpers(pack_processes(policy), to_build) as helpers:
        for frame, facts in _scope_batches(con, record, order, plans):  # a batch at a time: 1M at once ran out of memory
            rows = list(frame.iter_rows(named=True))
            todo = [s for s in ((r["tenant"], r["agent_id"], r["user_id"]) for r in rows) if plans[s]["pack"] is None]
            specs = {s: (plans[s]["header"], plans[s]["budget"]) for s in todo}
            handed = helpers.hand(frame, facts, todo, specs, _context_pack)  # the helpers build the last ones meanwhile
            built = build_packs(frame, facts, {s: specs[s] for s in todo if s not in handed.scopes}, _context_pack)
            built.update(handed.collect())
            if packs:
                packs[0].by_helpers += handed.built_there
            for row in rows:
                scope = (row["tenant"], row["agent_id"], row["user_id"])
                plan = plans[scope]
                try:
                    if plan["pack"] is not None:
                        pack = plan["pack"]
                    else:
                        ok, pack = built[scope]
                        if not ok:
                            raise pack
                        pack = _kept_pack(packs, {**plan, "built": pack})
                except MemoryLakeError:
                    raise
                except Exception as exc:
                    if errors is None:
                        raise
                    # the scope is published without its pack: memory.json holds every memory, and an
                    # agent loading context.md reads why it is empty
                    errors.append(step_error("stage_export", exc, item="context.md", tenant=row["tenant"],
                                             agent_id=row["agent_id"], user_id=row["user_id"]))
                    pack = _context_pack(plan["header"], [], []) + (
                        "\n_The context pack of this scope could not be built tonight; memory.json holds its "
                        "memories._\n")
                _write_scope(root, plan, plan["records"] if plan["records"] is not None else row["records"], pack, kept)
    return scopes


def _write_scope(root: Path, plan: dict[str, Any], records: str, pack: str, kept=None) -> None:
    """A scope's memory.json (its header, then its changes before its records: a forget's rewrite
    keeps this order) and context.md."""
    folder = root / plan["path"]
    folder.mkdir(parents=True, exist_ok=True)
    document = (json.dumps({**plan["header"], "changes": plan["section"]}, ensure_ascii=False)[:-1] + MEMORIES_MARK
                + records + "}")
    (folder / "memory.json").write_text(document, encoding="utf-8")
    (folder / "context.md").write_text(pack, encoding="utf-8")
    if kept is not None:
        kept.wrote_scope(plan["path"], plan["digest"], records, document, f"{root.name}/{plan['path']}/memory.json")
        kept.hashes[f"{root.name}/{plan['path']}/context.md"] = hashlib.sha256(pack.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------- scope folders
MISSING = "_"  # the folder of a missing (null) agent or user
ESCAPED = "="  # first character of an encoded folder name; never in a plain one
# Filesystems allow 255 bytes per name; a folder name stays well below, so three of them and the
# lake's own path fit in any path limit.
MAX_FOLDER_BYTES = 120
HASHED_PREFIX_BYTES = 60
_PLAIN = re.compile(r"[\w@+][\w.@+\-]*")


def scope_folder(tenant: str, agent_id: str | None, user_id: str | None) -> str:
    """The folder of a scope below ``scopes/``: ``<tenant>/<agent>/<user>``, one name per part.

    The mapping is injective (two different scopes never share a folder) and every name is a
    safe single path component of at most MAX_FOLDER_BYTES bytes:

    * a missing (null) agent or user is ``_``;
    * a plain name - word characters (any script), digits, ``@ + . -``, not starting with ``.`` or
      ``-``, not ``_`` itself, at most MAX_FOLDER_BYTES bytes in UTF-8 - is itself (``alice``,
      ``bot-7``, ``张三``);
    * anything else is ``=`` followed by its percent-encoded UTF-8 (``%XX`` for every byte but
      letters, digits and ``_ -``): ``""`` is ``=``, ``"_"`` is ``=_``, ``".."`` is ``=%2E%2E``,
      ``"a/b"`` is ``=a%2Fb``, a newline is ``%0A``;
    * when that is longer than MAX_FOLDER_BYTES: ``=`` + the first HASHED_PREFIX_BYTES bytes of the
      encoding + ``=`` + the first 32 hex digits of the name's SHA-256.

    A plain name has no ``=`` and ``%``, an encoded one no second ``=``, so the three forms never
    meet. The manifest lists every scope with its folder (``counts.scopes[].path``).
    """
    return "/".join(folder_name(part) for part in (tenant, agent_id, user_id))


def folder_name(name: str | None) -> str:
    """One part of ``scope_folder`` (see there)."""
    if name is None:
        return MISSING
    if name != MISSING and _PLAIN.fullmatch(name) and len(name.encode("utf-8")) <= MAX_FOLDER_BYTES:
        return name
    encoded = quote(name, safe="").replace(".", "%2E").replace("~", "%7E")
    if len(encoded) + 1 <= MAX_FOLDER_BYTES:
        return ESCAPED + encoded
    prefix = encoded[:HASHED_PREFIX_BYTES]
    prefix = prefix[: prefix.rfind("%")] if "%" in prefix[-2:] else prefix  # never cut a %XX in half
    return f"{ESCAPED}{prefix}{ESCAPED}{hashlib.sha256(name.encode('utf-8')).hexdigest()[:32]}"


def _segment(name: str | None) -> str:
    """A folder name for one scope part (kept for callers of the earlier name; see `folder_name`)."""
    return folder_name(name)


# ---------------------------------------------------------------------------- context.md
# Scopes are written in batches of about this many memories (one query per batch), so that staging
# holds one batch's records at a time.
SCOPE_BATCH_ROWS = 50_000


def _scope_batches(con: duckdb.DuckDBPyConnection, record: str, order: str, plans: dict[tuple, dict[str, Any]]):
    """Per batch of whole scopes of `plans` (in scope order): a frame of tenant, agent_id, user_id,
    the records as JSON text (null where ``plan["records"]`` has them) and the pack's lines (null
    where ``plan["pack"]`` is kept); and the entity facts of the batch's packs to build
    (``maintain.scope_entity_facts`` rows)."""
    sizes = pl.DataFrame([(*scope, plan["rows"], plan.get("records") is None, plan.get("pack") is None)
                          for scope, plan in plans.items()], orient="row",
                         schema={"tenant": pl.String, "agent_id": pl.String, "user_id": pl.String, "n": pl.Int64,
                                 "need_records": pl.Boolean, "need_lines": pl.Boolean})
    batch = (sizes["n"].cum_sum() - 1) // SCOPE_BATCH_ROWS
    lines = ", ".join(f"{f} := r.{f}" for f in LINE_FIELDS)
    for part in sizes.with_columns(batch=batch).partition_by("batch", maintain_order=True, include_key=False):
        con.register("scope_batch", part.drop("n"))
        try:
            # records only for the scopes whose records were not kept, lines only for the packs to build
            records = con.execute(
                f"""
                SELECT r.tenant, r.agent_id, r.user_id,
                       to_json(list(struct_pack({record}) ORDER BY {order}) FILTER (WHERE b.need_records))::VARCHAR
                           AS records,
                       list(struct_pack({lines}) ORDER BY {order}) FILTER (WHERE b.need_lines) AS lines
                FROM publish_rows r JOIN scope_batch b ON b.tenant = r.tenant
                     AND b.agent_id IS NOT DISTINCT FROM r.agent_id AND b.user_id IS NOT DISTINCT FROM r.user_id
                WHERE r.status IN ('active', 'conflicted')
                GROUP BY r.tenant, r.agent_id, r.user_id ORDER BY r.tenant, r.agent_id NULLS FIRST, r.user_id NULLS FIRST
                """
            ).pl()
            # the batch's entities first, then their facts: a correlated EXISTS over the join of every
            # entity with its facts cost twice the CPU (100k memories, half the scopes in the batch)
            yield records, scope_entity_facts(con, "e.entity_id IN (SELECT x.entity_id FROM entities x JOIN scope_batch b "
                                                   "ON b.need_lines AND b.tenant = x.tenant "
                                                   "AND b.agent_id IS NOT DISTINCT FROM x.agent_id "
                                                   "AND b.user_id IS NOT DISTINCT FROM x.user_id)")
        finally:
            con.unregister("scope_batch")


def _kept_pack(packs, plan: dict[str, Any], kept_only: bool = False) -> str | None:
    """The scope's context.md: kept from the last export when nothing it is built from changed
    (``packs.py``: the key reads the pack's view of the scope's rows, ``plan["view"]``, and
    ``plan["facts"]``, the facts' digest), else ``plan["built"]``, the pack built tonight (None with
    `kept_only`); recorded for the next export either way."""
    header = plan["header"]
    if packs is None:
        return None if kept_only else plan["built"]
    kept, version = packs
    key = pack_key(header, plan["view"] or plan["digest"], plan["facts"], plan["budget"], plan["heading"])
    pack = kept.kept(plan["path"], key, pack_head(header)[AS_OF_LINE])
    if pack is None:
        if kept_only:
            return None
        pack = plan["built"]
    kept.record(plan["path"], key, pack, version)
    return pack


def _context_pack(header: dict[str, Any], lines: list[dict[str, Any]], entity_rows: list[dict[str, Any]] | None = None,
                  max_tokens: int | None = None) -> str:
    """context.md: the scope's context pack without a query (``search.scope_pack``: important
    memories, latest summary, most mentioned entities, most recent items, each line dated, disputed
    ones marked with their other side) within `max_tokens` (default ``[context] max_tokens``). The
    full list stays in memory.json."""
    budget = Policy().context.max_tokens if max_tokens is None else max_tokens
    return scope_pack(header, lines, entity_rows, max_tokens=budget).markdown


def scope_counts(memories: pl.DataFrame, policy: Policy) -> pl.DataFrame:
    """Per scope: active working / short_term counts and how far each is over its capacity
    (its tenant's capacity; no rows for an empty lake)."""
    active = memories.filter(pl.col("status").is_in(["active", "conflicted"]))
    counts = active.group_by("tenant", "agent_id", "user_id").agg(
        working=(pl.col("tier") == "working").sum().cast(pl.Int64),
        short_term=(pl.col("tier") == "short_term").sum().cast(pl.Int64),
    )
    tenants = counts["tenant"].unique().sort().to_list()
    limits = pl.DataFrame(
        {"tenant": tenants,
         "working_limit": [policy.for_tenant(t).tiers.working_capacity for t in tenants],
         "short_term_limit": [policy.for_tenant(t).tiers.short_term_capacity for t in tenants]},
        schema={"tenant": counts.schema["tenant"], "working_limit": pl.Int64, "short_term_limit": pl.Int64})
    return counts.join(limits, on="tenant", how="left").select(
        "tenant", "agent_id", "user_id", "working", "short_term",
        working_over=pl.col("working") - pl.col("working_limit"),
        short_term_over=pl.col("short_term") - pl.col("short_term_limit"),
    ).sort("tenant", "agent_id", "user_id", nulls_last=False)


def _write_manifest(staging: Path, *, version: str, as_of: datetime, run_id: str, content_hash: str,
                    checks: dict[str, Any], scopes: list[dict[str, Any]], previous: str | None = None,
                    changes_from: str | None = None) -> dict[str, Any]:
    rows = pl.read_parquet(staging / "memories.parquet", columns=["tier", "status"])
    by_tier = dict(sorted(rows["tier"].value_counts().iter_rows()))
    by_status = dict(sorted(rows["status"].value_counts().iter_rows()))
    known = take_hashes(staging)  # what staging wrote or linked (kept.py); the rest is read here
    files = {}
    for path in sorted(staging.rglob("*")):
        if path.is_file():
            name = str(path.relative_to(staging))
            files[name] = known.get(name) or file_sha256(path)
    with duckdb.connect(":memory:") as con:
        tables = {name + ("/*" if name in PARTED else ""): [(column, kind) for column, kind, *_ in con.execute(
                      f"DESCRIBE SELECT * FROM {parquet_sql(files)}").fetchall()]
                  for name, files in table_files(staging).items()}
    manifest = {
        "format_version": contract.FORMAT_VERSION,
        "version": version, "as_of": iso(as_of), "run_id": run_id, "content_hash": content_hash, "previous": previous,
        "changes_from": changes_from,
        "counts": {"rows": sum(by_tier.values()), "by_tier": by_tier, "by_status": by_status, "scopes": scopes},
        "checks": checks["checks"], "files": files, "schema": contract.manifest_schema(tables), "rewrites": [],
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
    return manifest



def _manifest(version_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((version_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _versions(exports: Path) -> list[int]:
    return sorted(int(p.name[1:]) for p in exports.glob("v*") if p.is_dir() and p.name[1:].isdigit())


def _next_version(lake, con: duckdb.DuckDBPyConnection) -> str:
    """One past every version on disk or ever published: a number is never given twice."""
    return f"v{max([*_versions(lake.exports), *_published_numbers(con)], default=0) + 1}"


def _prune(exports: Path, keep: int) -> list[str]:
    """Remove versions beyond the newest `keep` (never the one CURRENT points at)."""
    current = os.readlink(exports / CURRENT) if (exports / CURRENT).is_symlink() else None
    old = [f"v{n}" for n in _versions(exports)[:-keep]] if keep > 0 else []
    removed = [name for name in old if name != current]
    for name in removed:
        shutil.rmtree(exports / name)
    return removed


def _record(con: duckdb.DuckDBPyConnection, run_id: str, as_of: datetime, result: dict[str, Any],
            manifest: dict[str, Any] | None) -> None:
    number = int(result["version"][1:]) if result.get("version") else None
    con.execute("INSERT INTO publishes VALUES (?, ?, ?, ?, ?, ?, ?)",
                [number, run_id, as_of, result["status"], result.get("content_hash"), result.get("failed") or [],
                 json.dumps({k: v for k, v in (manifest or {}).items() if k not in ("files", "schema")},
                            ensure_ascii=False)
                 if manifest else None])
