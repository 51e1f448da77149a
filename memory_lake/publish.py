"""Publish (write-audit-publish, DESIGN "Publish"): stage an export, check it, switch CURRENT.

1. stage  - ``exports/.staging-<run>/``: ``memories.parquet`` (every published row: not deleted,
            not merged), ``tables/<table>.parquet`` (what analysts and busy-time reads use), and per
            scope ``scopes/<tenant>/<agent>/<user>/memory.json`` (the save-file shape, re-ingestable)
            and ``context.md`` (a Markdown context pack), ``_`` for a missing agent or user;
2. audit  - the Great Expectations suite (``checks.py``); a failure removes the staging folder,
            leaves CURRENT untouched and names every failed expectation;
3. publish - rename to ``exports/v<N>/`` with ``manifest.json`` (version, as_of, run id, counts,
            checksums, check results), then point ``exports/CURRENT`` at it atomically (a new
            symlink renamed over the old one) and keep the last N versions.

A publish whose content equals CURRENT's makes no new version.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from . import schema
from .checks import batches, validate
from .clock import iso
from .policy import Policy
from .steps import StepReport

CURRENT = "CURRENT"
# Tables exported with every version (those that exist; later features add theirs).
EXPORTED_TABLES = ("memory_history", "cleanup_log", "health_snapshots", "retrieval_log", "quarantine", "runs",
                   "ingested_files", "publishes", "embeddings", "keyword_docs", "postings", "memory_flags")
# Columns of a record in a scope's memory.json: the snapshot contract, so the file re-ingests.
SCOPE_RECORD_COLUMNS = ("id", "tier", "type", "content", "summary", "tags", "importance", "source", "context_id",
                        "session_id", "created_at", "updated_at", "last_accessed_at", "access_count",
                        "reference_count", "expires_at", "version", "status", "trace_id")
# The rows an export carries: not forgotten, not merged into another (schema.PUBLISHED_STATUSES).
PUBLISHED = "status IN (" + ", ".join(f"'{s}'" for s in schema.PUBLISHED_STATUSES) + ")"
TIER_ORDER = "CASE tier WHEN 'important' THEN 0 WHEN 'working' THEN 1 WHEN 'short_term' THEN 2 ELSE 3 END"
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
    with lake.writer(purpose="stage export") as con:
        content_hash = _stage_rows(con)
        (rows,) = con.execute("SELECT count(*) FROM publish_rows").fetchone()
        current = current_version(lake)
        details = {"status": "staged", "staging": None, "content_hash": content_hash, "current": current,
                   "rows": rows, "scopes": 0}
        if current and _manifest(lake.exports / current).get("content_hash") == content_hash:
            details["status"] = "unchanged"
            return StepReport("stage_export", as_of, run_id, {"rows": rows, "staged": 0}, details)
        staging = lake.exports / f".staging-{run_id}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            details["scope_list"] = _write_staging(con, staging, as_of)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    details["staging"] = str(staging)
    details["scopes"] = len(details["scope_list"])
    return StepReport("stage_export", as_of, run_id, {"rows": rows, "staged": 1}, details)


def check_export(lake, staging: str | None, policy: Policy | None = None, run_id: str | None = None,
                 as_of: datetime | None = None) -> StepReport:
    """Run the publish suite on a staged export (nothing staged: nothing to check)."""
    policy = policy or lake.policy
    report = StepReport("check_export", as_of, run_id or "")
    if staging is None:
        report.details = {"success": True, "failed": [], "checks": [], "skipped": True}
        return report
    memories = pl.read_parquet(Path(staging) / "memories.parquet")
    checks = validate(batches(memories, scope_counts(memories, policy)))
    report.details = checks.as_dict()
    report.counts = {"expectations": len(checks.results), "failed": len(checks.failed)}
    return report


def publish_export(lake, as_of: datetime, staged: dict[str, Any], checks: dict[str, Any],
                   policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """Switch CURRENT to the staged version when every check passed; otherwise discard it."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("publish", as_of)
    current = current_version(lake)
    base = {"current": current, "content_hash": staged["content_hash"], "checks": checks["checks"], "failed": []}
    with lake.writer(purpose="publish") as con:
        if staged["status"] == "unchanged":
            result = {**base, "status": "unchanged", "version": None, "path": str(lake.exports / CURRENT)}
            _record(con, run_id, as_of, result, None)
            return StepReport("publish_export", as_of, run_id, {"new_versions": 0}, result)
        staging = Path(staged["staging"])
        if not checks["success"]:
            shutil.rmtree(staging, ignore_errors=True)
            result = {**base, "status": "blocked", "version": None, "path": None, "failed": checks["failed"]}
            _record(con, run_id, as_of, result, None)
            return StepReport("publish_export", as_of, run_id, {"new_versions": 0, "failed": len(checks["failed"])},
                              result)
        version = _next_version(lake)
        manifest = _write_manifest(staging, version=version, as_of=as_of, run_id=run_id,
                                   content_hash=staged["content_hash"], checks=checks, scopes=staged["scope_list"])
        target = lake.exports / version
        os.rename(staging, target)
        switch_current(lake.exports, version)
        pruned = _prune(lake.exports, policy.publish.keep_versions)
        con.execute(
            "UPDATE memories SET published_at = ?, publish_meta = json_object('version', ?, 'run_id', ?) "
            f"WHERE {PUBLISHED}", [as_of, version, run_id])
        result = {**base, "status": "published", "version": version, "current": version, "path": str(target),
                  "pruned": pruned}
        _record(con, run_id, as_of, result, manifest)
    return StepReport("publish_export", as_of, run_id, {"new_versions": 1, "rows": manifest["counts"]["rows"]}, result)


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
def _stage_rows(con: duckdb.DuckDBPyConnection) -> str:
    """Temp table ``publish_rows`` (ordered by id) and the hash of its content."""
    columns = [c for c in schema.MEMORY_COLUMNS if c not in ("published_at", "publish_meta")]
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE publish_rows AS
        SELECT {', '.join(columns)} FROM memories WHERE {PUBLISHED} ORDER BY id
        """
    )
    # Row digests joined in id order: the content identity of an export, independent of run and time.
    row = f"to_json(struct_pack({', '.join(f'{c} := {c}' for c in columns)}))::VARCHAR"
    (value,) = con.execute(
        f"SELECT sha256(coalesce(string_agg(md5({row}), '' ORDER BY id), '')) FROM publish_rows").fetchone()
    return value


def _write_staging(con: duckdb.DuckDBPyConnection, staging: Path, as_of: datetime) -> list[dict[str, Any]]:
    (staging / "tables").mkdir(parents=True)
    con.execute(f"COPY publish_rows TO '{staging / 'memories.parquet'}' (FORMAT parquet)")
    existing = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables "
                                          "WHERE table_schema = 'main'").fetchall()}
    for table in EXPORTED_TABLES:
        if table in existing:
            con.execute(f"COPY {table} TO '{staging / 'tables' / (table + '.parquet')}' (FORMAT parquet)")
    return _write_scopes(con, staging / "scopes", as_of)


def _write_scopes(con: duckdb.DuckDBPyConnection, root: Path, as_of: datetime) -> list[dict[str, Any]]:
    """One memory.json and context.md per scope (active and disputed memories; loop per scope)."""
    record = ", ".join(f"{c} := {c}" for c in SCOPE_RECORD_COLUMNS)
    frame = con.execute(
        f"""
        SELECT tenant, agent_id, user_id,
               to_json(list(struct_pack({record}, conflict := status = 'conflicted')
                            ORDER BY {TIER_ORDER}, importance DESC, last_accessed_at DESC, id))::VARCHAR AS records,
               list(struct_pack(tier := tier, type := type, content := content, conflict := status = 'conflicted')
                    ORDER BY {TIER_ORDER}, importance DESC, last_accessed_at DESC, id) AS lines,
               histogram(tier) AS by_tier
        FROM publish_rows WHERE status IN ('active', 'conflicted')
        GROUP BY tenant, agent_id, user_id ORDER BY tenant, agent_id NULLS FIRST, user_id NULLS FIRST
        """
    ).pl()
    scopes = []
    stamp = iso(as_of)
    for row in frame.iter_rows(named=True):
        folder = root / _segment(row["tenant"]) / _segment(row["agent_id"]) / _segment(row["user_id"])
        folder.mkdir(parents=True, exist_ok=True)
        header = {"tenant": row["tenant"], "agent_id": row["agent_id"], "user_id": row["user_id"], "as_of": stamp}
        document = json.dumps(header, ensure_ascii=False)[:-1] + ', "memories": ' + row["records"] + "}"
        (folder / "memory.json").write_text(document, encoding="utf-8")
        (folder / "context.md").write_text(_context_pack(header, row["lines"]), encoding="utf-8")
        by_tier = {e["key"]: e["value"] for e in row["by_tier"]} if isinstance(row["by_tier"], list) else dict(row["by_tier"])
        scopes.append({**{k: header[k] for k in ("tenant", "agent_id", "user_id")}, "by_tier": by_tier,
                       "path": str(folder.relative_to(root.parent))})
    return scopes


def _segment(name: str | None) -> str:
    """A folder name for a scope part: `_` when missing; anything path-like is percent-encoded."""
    if name is None or name == "":
        return "_"
    if re.fullmatch(r"[\w@+\-][\w.@+\-]*", name) and name != "_":
        return name
    from urllib.parse import quote

    return quote(name, safe="").replace(".", "%2E")


def _context_pack(header: dict[str, Any], lines: list[dict[str, str]]) -> str:
    scope = " / ".join(str(header[k] or "_") for k in ("tenant", "agent_id", "user_id"))
    out = [f"# Memory context: {scope}", "", f"As of {header['as_of']}.", ""]
    current = None
    for line in lines:
        if line["tier"] != current:
            current = line["tier"]
            out += ["", f"## {TIER_TITLES[current]}", ""]
        text = " ".join(line["content"].split())
        # a conflicted memory carries the lake's value; agents should know it is disputed
        disputed = " [disputed: another value waits for a user's decision]" if line.get("conflict") else ""
        out.append(f"- ({line['type']}) {text}{disputed}")
    return "\n".join(out).replace("\n\n\n", "\n\n") + "\n"


def scope_counts(memories: pl.DataFrame, policy: Policy) -> pl.DataFrame:
    """Per scope: active working / short_term counts and how far each is over its capacity."""
    active = memories.filter(pl.col("status").is_in(["active", "conflicted"]))
    counts = active.group_by("tenant", "agent_id", "user_id").agg(
        working=(pl.col("tier") == "working").sum().cast(pl.Int64),
        short_term=(pl.col("tier") == "short_term").sum().cast(pl.Int64),
    )
    tenants = counts["tenant"].unique().to_list()
    working = {t: policy.for_tenant(t).tiers.working_capacity for t in tenants}
    short_term = {t: policy.for_tenant(t).tiers.short_term_capacity for t in tenants}
    return counts.with_columns(
        working_over=pl.col("working") - pl.col("tenant").replace_strict(working, return_dtype=pl.Int64),
        short_term_over=pl.col("short_term") - pl.col("tenant").replace_strict(short_term, return_dtype=pl.Int64),
    ).sort("tenant", "agent_id", "user_id", nulls_last=False)


def _write_manifest(staging: Path, *, version: str, as_of: datetime, run_id: str, content_hash: str,
                    checks: dict[str, Any], scopes: list[dict[str, Any]]) -> dict[str, Any]:
    rows = pl.read_parquet(staging / "memories.parquet", columns=["tier", "status"])
    by_tier = dict(sorted(rows["tier"].value_counts().iter_rows()))
    by_status = dict(sorted(rows["status"].value_counts().iter_rows()))
    files = {str(p.relative_to(staging)): _sha256(p) for p in sorted(staging.rglob("*")) if p.is_file()}
    manifest = {
        "version": version, "as_of": iso(as_of), "run_id": run_id, "content_hash": content_hash,
        "counts": {"rows": sum(by_tier.values()), "by_tier": by_tier, "by_status": by_status, "scopes": scopes},
        "checks": checks["checks"], "files": files, "rewrites": [],
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
    return manifest


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _manifest(version_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((version_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _versions(exports: Path) -> list[int]:
    return sorted(int(p.name[1:]) for p in exports.glob("v*") if p.is_dir() and p.name[1:].isdigit())


def _next_version(lake) -> str:
    return f"v{max(_versions(lake.exports), default=0) + 1}"


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
                 json.dumps({k: v for k, v in (manifest or {}).items() if k != "files"}, ensure_ascii=False)
                 if manifest else None])
