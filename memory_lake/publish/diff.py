"""The diff gate: a candidate version compared with the one CURRENT points at (issues 18, 37.3).

A bug upstream (a rule gone wrong, a bad merge, a lost file) shows as a version that differs from
the last good one in ways no recorded operation explains, and an agent gone wrong shows as a mass
removal. The gate judges each scope against its own history (`scope_holds`, run when the export is
staged), since the version the scope was last published in. A scope fails when

* more of its active memories (status active or conflicted: what agents load) left than its
  allowance, max(floor(active x ``max_active_drop``), ``min_drop_allowance``), through removals
  nothing recorded explains, or through removals by an agent (a forget or ``deleted: true``, a
  status change, the expiry of its ``expires_at``); the tier rules' moves, dedup merges and a
  user's own changes are explained and always allowed;
* an agent's removals over the last ``drain_days`` took more than ``max_drain`` of what it held
  (a steady drain of 20 % a night);
* an important memory disappeared or changed with no user history row, or a memory moved tenant.

A scope that fails is **held**: the candidate keeps that scope's rows of the published version
(`keep_held`) and every other scope publishes. The hold stays open in ``publish_holds``
(`record_holds`), and the report and an alert say why, until the scope passes again or a user
releases it (`release_hold`, ``memory-lake holds release``): the removals before the release then
count as the user's. One scope's write never blocks another tenant's publish.

The publish suite then checks the candidate with its holds (``checks.PUBLISH_EXPECTATIONS``; a
column null where the rule holds, naming the scope or id where it does not, never memory text), so
what no hold mended blocks the publish like any other failure: every scope passes the gate as
`scope_holds` judges it, no important memory changed without a user history row since CURRENT's
as_of, and no memory moved tenant.
"""

from __future__ import annotations

import json
import shlex
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ..store import InputError, Policy, iso, schema
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
                 policy: Policy, as_of: datetime | None) -> dict[str, pl.DataFrame]:
    """The two frames the diff expectations validate, from the version folders `previous` (None:
    nothing published yet) and `candidate`, and the lake's tables behind `con` (memories,
    memory_history, publish_holds): each scope judged as `scope_holds` judges it (a held scope
    kept its published rows, so it passes), and the memory rules since `previous`'s as_of."""
    if previous is None or not (previous / "memories.parquet").is_file():
        return empty_diff()
    since = json.loads((previous / "manifest.json").read_text(encoding="utf-8")).get("as_of")
    before, after = (_parquet(previous / "memories.parquet"), _parquet(candidate / "memories.parquet"))
    holds = scope_holds(con, previous, _parquet(candidate / "memories.parquet"), policy, as_of)
    scopes = holds.select(
        *contract.SCOPE_FIELDS, "active_before", "active_after", explained=pl.col("by_user") + pl.col("by_system"),
        allowed_drop=pl.col("allowance"),
        unexplained_drop=pl.when(pl.col("reason").is_not_null()).then(pl.format(
            "{}/{}/{}: {}", *[pl.col(c).fill_null("_") for c in contract.SCOPE_FIELDS], "reason"))).cast(SCOPE_SCHEMA)
    before, after = (_parquet(previous / "memories.parquet"), _parquet(candidate / "memories.parquet"))
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


def _same(x: str, y: str) -> str:
    """SQL: aliases `x` and `y` are of the same scope."""
    return " AND ".join(f"{x}.{c} IS NOT DISTINCT FROM {y}.{c}" for c in contract.SCOPE_FIELDS)


def _parquet(path: Path) -> str:
    return "read_parquet('" + str(path).replace("'", "''") + "')"


def _typed(alias: str, field: str) -> str:
    """A column compared across versions by its contract type (an older version may have stored
    a timestamp without its zone, or JSON as JSON)."""
    kind = contract.MEMORY_FIELDS[field].type
    cast = {"timestamp": "::TIMESTAMPTZ", "json": "::VARCHAR"}.get(kind, "")
    return f"{alias}.{field}{cast}"


# ---------------------------------------------------------------------------- holds (issue 37.3)
HOLD_SCHEMA = {"tenant": pl.String, "agent_id": pl.String, "user_id": pl.String, "active_before": pl.Int64,
               "active_after": pl.Int64, "by_user": pl.Int64, "by_system": pl.Int64, "by_agent": pl.Int64,
               "unexplained": pl.Int64, "drained": pl.Int64, "allowance": pl.Int64, "since": pl.Datetime,
               "reason": pl.String}
# The scope of a history image, and "still in that scope and loaded by agents".
_OUT = ("{0}.status NOT IN ('active', 'conflicted')", "{0}.tenant IS DISTINCT FROM {1}.tenant",
        "{0}.agent_id IS DISTINCT FROM {1}.agent_id", "{0}.user_id IS DISTINCT FROM {1}.user_id")


def scope_holds(con: duckdb.DuckDBPyConnection, previous: Path | None, after: str, policy: Policy,
                as_of) -> pl.DataFrame:
    """Per scope of the `previous` version (None: nothing to compare with, no row): how its active
    memories left by cause, and ``reason`` (null: it publishes) why it is held. `after` is the
    candidate's rows (a table or ``read_parquet(...)``). Each scope is judged since the version it
    was last published in: CURRENT's as_of, or the as_of of its open hold; an agent's removal
    before a user's release of that scope counts as the user's."""
    if previous is None or not (previous / "memories.parquet").is_file():
        return pl.DataFrame(schema=HOLD_SCHEMA)
    since = json.loads((previous / "manifest.json").read_text(encoding="utf-8")).get("as_of")
    on = _same
    took_out = " OR ".join(f.format("h.after", "h.before") for f in _OUT)
    frame = con.execute(
        f"""
        WITH b AS (SELECT id, tenant, agent_id, user_id FROM {_parquet(previous / 'memories.parquet')} WHERE {ACTIVE}),
             a AS (SELECT id, tenant, agent_id, user_id FROM {after} WHERE {ACTIVE}),
             scopes AS (SELECT tenant, agent_id, user_id, count(*) AS active_before FROM b GROUP BY ALL),
             -- held, or released since CURRENT was published: judged since the hold began
             open_holds AS (SELECT tenant, agent_id, user_id, min(since) AS since FROM publish_holds
                            WHERE released_at IS NULL OR released_at >= $since::TIMESTAMP GROUP BY ALL),
             releases AS (SELECT tenant, agent_id, user_id, max(released_at) AS released FROM publish_holds
                          WHERE released_by IS NOT NULL AND released_by <> 'system' GROUP BY ALL),
             judged AS (SELECT s.*, coalesce(o.since, $since::TIMESTAMP) AS since, r.released
                        FROM scopes s LEFT JOIN open_holds o ON {on('o', 's')} LEFT JOIN releases r ON {on('r', 's')}),
             -- every change that took a memory out of its scope's active set: who did it, and when
             removals AS (
                 SELECT h.memory_id, h.as_of, h.seq, h.before.tenant AS tenant, h.before.agent_id AS agent_id,
                        h.before.user_id AS user_id,
                        CASE WHEN h.operator = 'user' THEN 'user'
                             WHEN h.operator = 'system' AND h.reason <> 'expire' THEN 'system'
                             ELSE 'agent' END AS cause   -- an expiry is of the expires_at an agent wrote
                 FROM memory_history h
                 WHERE h.change <> 'insert' AND h.before IS NOT NULL
                   AND h.before.status IN ('active', 'conflicted') AND (h.after IS NULL OR {took_out})),
             gone AS (
                 SELECT b.id, b.tenant, b.agent_id, b.user_id, j.since, j.released,
                        (SELECT arg_max(CASE WHEN r.cause = 'agent' AND r.as_of <= j.released THEN 'user' ELSE r.cause END,
                                        r.seq)
                         FROM removals r WHERE r.memory_id = b.id AND r.as_of >= j.since) AS cause,
                        m.status = 'merged' AS merged
                 FROM b JOIN judged j ON {on('j', 'b')}
                 LEFT JOIN a ON a.id = b.id AND {on('a', 'b')}
                 LEFT JOIN memories m ON m.id = b.id
                 WHERE a.id IS NULL),
             -- a memory counts towards a drain only when a publish held it: one that arrived already
             -- past its expires_at (an old import) left before any agent could load it
             born AS (SELECT memory_id, min(as_of) AS born FROM memory_history
                      WHERE memory_id IN (SELECT memory_id FROM removals) GROUP BY memory_id),
             drained AS (
                 SELECT r.tenant, r.agent_id, r.user_id, count(DISTINCT r.memory_id) AS n
                 FROM removals r JOIN judged j ON {on('j', 'r')} JOIN born USING (memory_id)
                 WHERE r.cause = 'agent' AND r.as_of > $as_of::TIMESTAMP - to_days($drain_days)
                   AND (j.released IS NULL OR r.as_of > j.released)
                   AND r.memory_id NOT IN (SELECT id FROM a)
                   AND EXISTS (SELECT 1 FROM publishes p WHERE p.status IN ('published', 'unchanged')
                                   AND p.as_of >= born.born AND p.as_of < r.as_of)
                 GROUP BY ALL)
        SELECT j.tenant, j.agent_id, j.user_id, j.active_before,
               (SELECT count(*) FROM a WHERE {on('a', 'j')}) AS active_after,
               count(g.id) FILTER (WHERE NOT g.merged AND g.cause = 'user') AS by_user,
               count(g.id) FILTER (WHERE g.merged OR g.cause = 'system') AS by_system,
               count(g.id) FILTER (WHERE NOT g.merged AND g.cause = 'agent') AS by_agent,
               count(g.id) FILTER (WHERE NOT g.merged AND g.cause IS NULL) AS unexplained,
               coalesce(any_value(d.n), 0) AS drained, j.since
        FROM judged j LEFT JOIN gone g ON {on('g', 'j')} LEFT JOIN drained d ON {on('d', 'j')}
        GROUP BY j.tenant, j.agent_id, j.user_id, j.active_before, j.since
        ORDER BY j.tenant, j.agent_id NULLS FIRST, j.user_id NULLS FIRST
        """, {"since": since, "as_of": as_of, "drain_days": policy.publish.drain_days if as_of is not None else 0}).pl()
    rows = []
    for row in frame.iter_rows(named=True):
        rules = policy.for_tenant(row["tenant"]).publish
        allowance = max(int(row["active_before"] * rules.max_active_drop), rules.min_drop_allowance)
        base = row["active_after"] + row["drained"]
        drain_allowance = max(int(base * rules.max_drain), rules.min_drop_allowance)
        reasons = []
        if row["unexplained"] > allowance:
            reasons.append(f"{row['unexplained']} of {row['active_before']} active memories left with nothing recorded "
                           f"to explain it (at most {allowance} allowed)")
        if row["by_agent"] > allowance:
            reasons.append(f"an agent removed {row['by_agent']} of {row['active_before']} active memories "
                           f"(forget, status change or expiry; at most {allowance} a night)")
        if rules.drain_days and row["drained"] > drain_allowance:
            reasons.append(f"an agent removed {row['drained']} of {base} memories over the last {rules.drain_days} days "
                           f"(at most {drain_allowance})")
        rows.append({**row, "allowance": allowance, "reason": "; ".join(reasons) or None})
    holds = pl.DataFrame(rows, schema={k: v for k, v in HOLD_SCHEMA.items()}) if rows else pl.DataFrame(schema=HOLD_SCHEMA)
    return _hold_changed(con, previous, after, holds, datetime.fromisoformat(since.replace("Z", "+00:00")).replace(tzinfo=None))


def _hold_changed(con: duckdb.DuckDBPyConnection, previous: Path, after: str, holds: pl.DataFrame,
                  since: datetime) -> pl.DataFrame:
    """Add the memory rules: a scope whose important memory changed or vanished with no user history
    row since it was judged, and both scopes of a memory that moved tenant, are held too."""
    changed = " OR ".join(f"{_typed('b', f)} IS DISTINCT FROM {_typed('a', f)}" for f in COMPARED)
    status = "CASE WHEN {0}.status = 'conflicted' THEN 'active' ELSE {0}.status END"
    con.register("judged_scopes", holds.select(*contract.SCOPE_FIELDS, "since"))
    try:
        found = con.execute(
            f"""
            WITH b AS (SELECT * FROM {_parquet(previous / 'memories.parquet')}),
                 a AS (SELECT * FROM {after})
            SELECT tenant, agent_id, user_id, reason FROM (
                SELECT b.tenant, b.agent_id, b.user_id, 0 AS kind, b.id,
                       'important memory ' || b.id || CASE WHEN a.id IS NULL THEN ' disappeared' ELSE ' changed' END
                       || ' with no user history row' AS reason
                FROM b JOIN judged_scopes j ON {_same('j', 'b')}
                LEFT JOIN a ON a.id = b.id
                WHERE b.tier = 'important' AND {ACTIVE.replace('status', 'b.status')}
                  AND b.id NOT IN (SELECT memory_id FROM memory_history WHERE operator = 'user' AND change <> 'insert'
                                   AND as_of >= j.since)
                  AND (a.id IS NULL OR {changed} OR {status.format('a')} <> {status.format('b')})
                UNION ALL
                SELECT s.tenant, s.agent_id, s.user_id, 1, b.id,
                       'memory ' || b.id || ' moved from tenant ' || b.tenant || ' to ' || a.tenant
                FROM b JOIN a ON a.id = b.id AND a.tenant <> b.tenant,
                     LATERAL (SELECT b.tenant, b.agent_id, b.user_id UNION ALL SELECT a.tenant, a.agent_id, a.user_id) s)
            -- a scope's reasons in one order whatever the join's threads did: the changed important
            -- memories by id, then the moves
            ORDER BY kind, id, tenant, agent_id NULLS FIRST, user_id NULLS FIRST
            """).pl()
    finally:
        con.unregister("judged_scopes")
    if found.is_empty():
        return holds
    extra = found.group_by(*contract.SCOPE_FIELDS, maintain_order=True).agg(pl.col("reason").str.join("; ").alias("more"))
    joined = holds.join(extra, on=list(contract.SCOPE_FIELDS), how="full", coalesce=True, nulls_equal=True)
    return joined.with_columns(
        reason=pl.when(pl.col("reason").is_null() & pl.col("more").is_null()).then(None)
                 .otherwise(pl.concat_str([pl.col("reason"), pl.col("more")], separator="; ", ignore_nulls=True)),
        since=pl.col("since").fill_null(since),  # a scope the moved memory reached, new since then
    ).with_columns(pl.col(c).fill_null(0) for c in ("active_before", "active_after", "by_user", "by_system", "by_agent",
                                                     "unexplained", "drained", "allowance")).select(list(HOLD_SCHEMA))


def keep_held(con: duckdb.DuckDBPyConnection, previous: Path, rows_table: str, held: pl.DataFrame) -> int:
    """Give each held scope its rows of the `previous` version in `rows_table` (the candidate), and
    drop from other scopes a memory a held scope keeps (it is published once). Returns the rows kept."""
    if held.is_empty():
        return 0
    con.register("held_scopes", held.select(*contract.SCOPE_FIELDS))
    columns = [name for (name, *_rest) in con.execute(f'DESCRIBE "{rows_table}"').fetchall()]
    try:
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE held_rows AS
            SELECT {', '.join(f'p."{c}"' for c in columns)} FROM {_parquet(previous / 'memories.parquet')} p
            WHERE EXISTS (SELECT 1 FROM held_scopes h WHERE {_same('h', 'p')})""")
        con.execute(f"""DELETE FROM "{rows_table}" r
                        WHERE EXISTS (SELECT 1 FROM held_scopes h WHERE {_same('h', 'r')})
                           OR r.id IN (SELECT id FROM held_rows)""")
        con.execute(f'INSERT INTO "{rows_table}" SELECT * FROM held_rows')
        (kept,) = con.execute("SELECT count(*) FROM held_rows").fetchone()
    finally:
        con.unregister("held_scopes")
    return kept


def record_holds(con: duckdb.DuckDBPyConnection, holds: pl.DataFrame, version: str, run_id: str,
                 as_of: datetime) -> list[dict[str, Any]]:
    """Open a hold for each newly held scope (since the version it was judged against), refresh the
    reason of one still held, and close the hold of a scope that passes again (released by
    ``system``). Returns the held scopes as dicts (scope, counts, reason, since, held_at)."""
    held = holds.filter(pl.col("reason").is_not_null()).sort(*contract.SCOPE_FIELDS, nulls_last=False)
    passing = holds.filter(pl.col("reason").is_null()).select(*contract.SCOPE_FIELDS)
    con.register("passing_scopes", passing)  # one statement for every scope (10k scopes: 10k statements took 3.5 s)
    try:
        con.execute(f"""UPDATE publish_holds h SET released_at = $as_of, released_by = 'system',
                            released_reason = 'the scope passes the gate again'
                        WHERE released_at IS NULL AND EXISTS (SELECT 1 FROM passing_scopes p WHERE {_same('h', 'p')})""",
                    {"as_of": as_of})
    finally:
        con.unregister("passing_scopes")
    out = []
    for row in held.iter_rows(named=True):
        params = {**_scope(row), "as_of": as_of}
        updated = con.execute(f"""UPDATE publish_holds h SET reason = $reason, last_held_at = $as_of
                                  WHERE released_at IS NULL AND {_scope_is('h')} RETURNING held_at""",
                              {**params, "reason": row["reason"]}).fetchall()
        if not updated:
            con.execute("INSERT INTO publish_holds VALUES ($tenant, $agent_id, $user_id, $since, $version, $reason, "
                        "$run_id, $as_of, $as_of, NULL, NULL, NULL)",
                        {**params, "since": row["since"], "version": version, "reason": row["reason"], "run_id": run_id})
        held_at = updated[0][0] if updated else as_of
        out.append({**_scope(row), **{k: row[k] for k in ("active_before", "active_after", "by_agent", "unexplained",
                                                          "drained", "allowance", "reason")},
                    "since": iso(row["since"]), "held_at": iso(held_at), "action": release_command(row)})
    return out


def release_command(scope: dict[str, Any]) -> str:
    """The command a user runs to let a held scope through."""
    parts = ["memory-lake holds release", _quoted(scope["tenant"])]
    for option, key in (("--agent", "agent_id"), ("--user", "user_id")):
        if scope.get(key) is not None:
            parts += [option, _quoted(scope[key])]
    return " ".join(parts + ["--reason TEXT"])


def open_holds(lake) -> pl.DataFrame:
    """Every scope held now, oldest first."""
    return lake.sql("SELECT tenant, agent_id, user_id, reason, since, since_version, held_at, last_held_at "
                    "FROM publish_holds WHERE released_at IS NULL ORDER BY held_at, tenant, agent_id, user_id")


def release_hold(lake, tenant: str, agent_id: str | None, user_id: str | None, *, by: str, reason: str,
                 as_of: datetime) -> list[dict[str, Any]]:
    """A user's confirmation: close the open hold of exactly the scope `tenant` / `agent_id` /
    `user_id` (None: the scope has no such part, as `release_command` writes it). The removals made before `as_of` count as the user's, so the next publish (the
    nightly run, or ``memory-lake publish``) lets the scope through. InputError when nothing of it
    is held (naming what is)."""
    for label, text in (("--by", by), ("--reason", reason)):
        if not text or not text.strip() or any(ord(ch) < 32 or 0x7f <= ord(ch) < 0xa0 for ch in text):
            raise InputError(f"{label} must be a name or sentence without control characters")
    # exactly one scope: a part left out is a scope without that part (acme/_/_), never "every agent"
    where = ["released_at IS NULL", "tenant = $tenant", "agent_id IS NOT DISTINCT FROM $agent_id",
             "user_id IS NOT DISTINCT FROM $user_id"]
    params: dict[str, Any] = {"tenant": tenant, "agent_id": agent_id, "user_id": user_id, "as_of": as_of, "by": by,
                              "reason": reason}
    with lake.writer(purpose="release a publish hold") as con:
        released = con.execute(
            f"""UPDATE publish_holds SET released_at = $as_of, released_by = $by, released_reason = $reason
                WHERE {' AND '.join(where)} RETURNING tenant, agent_id, user_id, reason""", params).pl()
        if released.is_empty():
            held = con.execute("SELECT tenant, agent_id, user_id FROM publish_holds WHERE released_at IS NULL "
                               "ORDER BY ALL").fetchall()
            named = ", ".join("/".join(p or "_" for p in row) for row in held) or "none"
            raise InputError(f"no publish hold on {'/'.join(p or '_' for p in (tenant, agent_id, user_id))}: "
                             f"scopes held now: {named} (memory-lake holds list)")
    return released.to_dicts()


def _scope(row: dict[str, Any]) -> dict[str, Any]:
    return {c: row[c] for c in contract.SCOPE_FIELDS}


def _scope_is(alias: str) -> str:
    return " AND ".join(f"{alias}.{c} IS NOT DISTINCT FROM ${c}" for c in contract.SCOPE_FIELDS)


def _quoted(text: str) -> str:
    return shlex.quote(text)
