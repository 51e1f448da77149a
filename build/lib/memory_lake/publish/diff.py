"""The diff gate: a candidate version compared with the one CURRENT points at (issue 18).

A bug upstream (a rule gone wrong, a bad merge, a lost file) shows as a version that differs from
the last good one in ways no recorded operation explains. Three rules, checked as expectations of
the publish suite (``checks.PUBLISH_EXPECTATIONS``), so a failure blocks the publish like any other:

* a scope's active count (status active or conflicted: what agents load) may not fall by more
  than ``[publish] max_active_drop`` of what it was, beyond what the lake explains: a forget, a
  merge, a move in the cleanup log (archive, dormant) or a user's own change (not an insert) since
  that version;
* an important memory may not disappear or change (any versioned field; being marked disputed is
  no change) unless a user's history row since that version says why;
* no memory may move to another tenant.

Each rule gives a column that is null where the rule holds and names the scope or id where it
does not (ids and scope names only, never memory text), so the failed check's examples say where.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl

from ..store import Policy, schema
from . import contract

ACTIVE = "status IN (" + ", ".join(f"'{s}'" for s in contract.SCOPE_STATUSES) + ")"
# Compared for "an important memory changed": what a write changes (status as disputed or not).
COMPARED = ("tenant", *[f for f in schema.VERSIONED_FIELDS if f != "status"])

SCOPE_SCHEMA = {"tenant": pl.String, "agent_id": pl.String, "user_id": pl.String, "active_before": pl.Int64,
                "active_after": pl.Int64, "explained": pl.Int64, "allowed_drop": pl.Int64,
                "unexplained_drop": pl.String}
MEMORY_SCHEMA = {"id": pl.String, "important_changed": pl.String, "tenant_moved": pl.String}


def empty_diff() -> dict[str, pl.DataFrame]:
    """The diff batches when there is nothing to compare with (the first publish)."""
    return {"diff_scopes": pl.DataFrame(schema=SCOPE_SCHEMA), "diff_memories": pl.DataFrame(schema=MEMORY_SCHEMA)}


def diff_batches(con: duckdb.DuckDBPyConnection, previous: Path | None, candidate: Path,
                 policy: Policy) -> dict[str, pl.DataFrame]:
    """The two frames the diff expectations validate, from the version folders `previous` (None:
    nothing published yet) and `candidate`, and the lake's tables behind `con` (memories,
    cleanup_log, memory_history): what happened since `previous`'s as_of explains a change."""
    if previous is None or not (previous / "memories.parquet").is_file():
        return empty_diff()
    since = json.loads((previous / "manifest.json").read_text(encoding="utf-8")).get("as_of")
    before, after = (_parquet(previous / "memories.parquet"), _parquet(candidate / "memories.parquet"))
    explained_since = f"""
        SELECT id FROM memories WHERE status IN ('deleted', 'merged')
        UNION SELECT c.memory_id FROM cleanup_log c JOIN memories m ON m.id = c.memory_id
              WHERE c.as_of >= $since AND c.to_status = m.status
        UNION SELECT memory_id FROM memory_history WHERE operator = 'user' AND change <> 'insert' AND as_of >= $since"""
    same_scope = " AND ".join(f"a.{c} IS NOT DISTINCT FROM b.{c}" for c in contract.SCOPE_FIELDS)
    scopes = con.execute(
        f"""
        WITH b AS (SELECT id, tenant, agent_id, user_id FROM {before} WHERE {ACTIVE}),
             a AS (SELECT id, tenant, agent_id, user_id FROM {after} WHERE {ACTIVE}),
             explained AS ({explained_since}),
             left_scope AS (
                 SELECT b.tenant, b.agent_id, b.user_id, count(*) FILTER (WHERE b.id IN (SELECT id FROM explained)) AS n
                 FROM b LEFT JOIN a ON a.id = b.id AND {same_scope} WHERE a.id IS NULL GROUP BY ALL),
             counts_before AS (SELECT tenant, agent_id, user_id, count(*) AS n FROM b GROUP BY ALL),
             counts_after AS (SELECT tenant, agent_id, user_id, count(*) AS n FROM a GROUP BY ALL)
        SELECT b.tenant, b.agent_id, b.user_id, b.n AS active_before, coalesce(a.n, 0) AS active_after,
               coalesce(l.n, 0) AS explained
        FROM counts_before b
        LEFT JOIN counts_after a ON {same_scope}
        LEFT JOIN left_scope l ON {same_scope.replace('a.', 'l.', 3)}
        ORDER BY b.tenant, b.agent_id NULLS FIRST, b.user_id NULLS FIRST
        """, {"since": since}).pl()
    tenants = scopes["tenant"].unique().to_list()
    share = pl.DataFrame({"tenant": tenants, "share": [policy.for_tenant(t).publish.max_active_drop for t in tenants]},
                         schema={"tenant": pl.String, "share": pl.Float64})
    fall = pl.max_horizontal(pl.col("active_before") - pl.col("active_after") - pl.col("explained"), pl.lit(0))
    scopes = scopes.join(share, on="tenant", how="left").with_columns(
        allowed_drop=(pl.col("active_before") * pl.col("share")).floor().cast(pl.Int64)).with_columns(
        unexplained_drop=pl.when(fall > pl.col("allowed_drop")).then(pl.format(
            "{}/{}/{}: {} -> {} active, {} unexplained (at most {} allowed)",
            *[pl.col(c).fill_null("_") for c in contract.SCOPE_FIELDS], "active_before", "active_after",
            fall, "allowed_drop"))).select(list(SCOPE_SCHEMA)).cast(SCOPE_SCHEMA)

    changed = " OR ".join(f"{_typed('b', f)} IS DISTINCT FROM {_typed('a', f)}" for f in COMPARED)
    status = "CASE WHEN {0}.status = 'conflicted' THEN 'active' ELSE {0}.status END"
    memories = con.execute(
        f"""
        WITH users AS (SELECT DISTINCT memory_id FROM memory_history WHERE operator = 'user' AND change <> 'insert' AND as_of >= $since)
        SELECT b.id,
               CASE WHEN b.tier = 'important' AND b.id NOT IN (SELECT memory_id FROM users)
                         AND (a.id IS NULL OR {changed} OR {status.format('a')} <> {status.format('b')})
                    THEN b.id || CASE WHEN a.id IS NULL THEN ' disappeared' ELSE ' changed' END
                         || ' with no user history row' END AS important_changed,
               CASE WHEN a.tenant <> b.tenant THEN b.id || ': ' || b.tenant || ' -> ' || a.tenant END AS tenant_moved
        FROM {before} b LEFT JOIN {after} a ON a.id = b.id
        ORDER BY b.id
        """, {"since": since}).pl()
    return {"diff_scopes": scopes, "diff_memories": memories.cast(MEMORY_SCHEMA)}


def _parquet(path: Path) -> str:
    return "read_parquet('" + str(path).replace("'", "''") + "')"


def _typed(alias: str, field: str) -> str:
    """A column compared across versions by its contract type (an older version may have stored
    a timestamp without its zone, or JSON as JSON)."""
    kind = contract.MEMORY_FIELDS[field].type
    cast = {"timestamp": "::TIMESTAMPTZ", "json": "::VARCHAR"}.get(kind, "")
    return f"{alias}.{field}{cast}"
