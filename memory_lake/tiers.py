"""Tier lifecycle: the rules that move memories between tiers and statuses (seed 000 四层记忆架构).

Each rule is one set-based query that proposes moves ``(id, to_tier, to_status, rule)`` for the
current state; ``apply_moves`` applies them with a history row (operator ``system``, no version
bump), a ``cleanup_log`` row and a line in ``<lake>/memory-cleanup.log`` (the file seed 000 names).
Rules run in a fixed order, each on the state the previous one left, so that one run reaches a
fixed point: run again with the same ``as_of``, nothing moves. Important memories are never
touched by a rule.

Rules here (in order):
1. ``working_overflow``  - working over capacity per scope: the oldest by last access, then
   creation, move to short_term (seed 000: 超限自动晋升短期).
2. ``short_term_overflow`` - short_term over capacity per scope, FIFO by creation: the oldest move
   to long_term when importance >= 0.7 or referenced >= 2 times, else they are archived, never
   deleted (seed 000: FIFO 淘汰，移到长期或删除; DESIGN keeps borderline items).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from .clock import iso
from .history import HISTORY_COLUMNS, next_history_seq, row_image
from .policy import Policy
from .steps import StepReport, tenant_limits

ACTIVE = "('active', 'conflicted')"
CLEANUP_LOG_FILE = "memory-cleanup.log"


def _working_overflow(policy: Policy) -> str:
    return f"""
        SELECT id, 'short_term' AS to_tier, status AS to_status
        FROM (SELECT m.id, m.status, l.working AS capacity,
                     row_number() OVER (PARTITION BY m.tenant, m.agent_id, m.user_id
                                        ORDER BY m.last_accessed_at DESC, m.created_at DESC, m.id DESC) AS rank
              FROM memories m JOIN tenant_limits l USING (tenant)
              WHERE m.tier = 'working' AND m.status IN {ACTIVE})
        WHERE rank > capacity
    """


def _short_term_overflow(policy: Policy) -> str:
    keep = "(importance >= keep_importance OR reference_count >= keep_references)"
    return f"""
        SELECT id, CASE WHEN {keep} THEN 'long_term' ELSE 'short_term' END AS to_tier,
               CASE WHEN {keep} THEN status ELSE 'archived' END AS to_status
        FROM (SELECT m.id, m.status, m.importance, m.reference_count, l.short_term AS capacity,
                     l.keep_importance, l.keep_references,
                     row_number() OVER (PARTITION BY m.tenant, m.agent_id, m.user_id
                                        ORDER BY m.created_at DESC, m.id DESC) AS rank
              FROM memories m JOIN tenant_limits l USING (tenant)
              WHERE m.tier = 'short_term' AND m.status IN {ACTIVE})
        WHERE rank > capacity
    """


# The order is part of the contract: each rule sees what the previous one left.
RULES = (
    ("working_overflow", _working_overflow),
    ("short_term_overflow", _short_term_overflow),
)


def enforce_tiers(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """Run every enabled tier rule in order; returns moves per rule."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("tiers", as_of)
    report = StepReport("enforce_tiers", as_of, run_id)
    log_lines: list[str] = []
    with lake.writer(purpose="tier rules") as con:
        _limits(con, policy)
        con.execute("BEGIN TRANSACTION")
        try:
            for name, rule in RULES:
                if name in policy.tiers.disabled_rules:
                    report.details.setdefault("disabled", []).append(name)
                    continue
                con.execute(f"CREATE OR REPLACE TEMP TABLE tier_moves AS SELECT *, '{name}' AS rule FROM ({rule(policy)})")
                report.counts[name] = apply_moves(con, as_of=as_of, run_id=run_id, log_lines=log_lines)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    append_cleanup_log(lake.root, log_lines)
    return report


def _limits(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    tenant_limits(con, policy)
    tenants = [t for (t,) in con.execute("SELECT tenant FROM tenant_limits").fetchall()]
    keep = pl.DataFrame(
        [(t, policy.for_tenant(t).tiers.overflow_keep_importance, policy.for_tenant(t).tiers.overflow_keep_references)
         for t in tenants],
        schema={"tenant": pl.String, "keep_importance": pl.Float64, "keep_references": pl.Int64}, orient="row")
    con.register("keep_frame", keep)
    con.execute("CREATE OR REPLACE TEMP TABLE tenant_limits AS SELECT * FROM tenant_limits JOIN keep_frame USING (tenant)")
    con.unregister("keep_frame")


def apply_moves(con: duckdb.DuckDBPyConnection, *, as_of: datetime, run_id: str, log_lines: list[str]) -> int:
    """Apply temp table ``tier_moves(id, to_tier, to_status, rule)``: history, cleanup log, update.

    Moves that change nothing and moves of important memories are dropped here, whatever rule
    proposed them: automation never touches an important memory.
    """
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE tier_moves_full AS
        SELECT m.*, v.to_tier, v.to_status, v.rule
        FROM memories m JOIN tier_moves v USING (id)
        WHERE m.tier <> 'important' AND (m.tier <> v.to_tier OR m.status <> v.to_status)
        """
    )
    count = con.execute("SELECT count(*) FROM tier_moves_full").fetchone()[0]
    if count:
        con.execute(
            f"""
            INSERT INTO memory_history ({HISTORY_COLUMNS})
            SELECT $seq + row_number() OVER (ORDER BY id), id, tenant, version,
                   CASE WHEN tier <> to_tier THEN 'tier' ELSE 'status' END,
                   list_filter([CASE WHEN tier <> to_tier THEN 'tier' END,
                                CASE WHEN status <> to_status THEN 'status' END], x -> x IS NOT NULL),
                   'system', $run_id, rule, $as_of, {row_image('f')},
                   {row_image('f', tier='f.to_tier', status='f.to_status')}, NULL, NULL, NULL
            FROM tier_moves_full f
            """,
            {"seq": next_history_seq(con), "run_id": run_id, "as_of": as_of},
        )
        con.execute(
            """
            INSERT INTO cleanup_log
            SELECT id, tenant, agent_id, user_id, tier, to_tier, status, to_status, rule, $run_id, $as_of
            FROM tier_moves_full
            """,
            {"run_id": run_id, "as_of": as_of},
        )
        con.execute("UPDATE memories SET tier = f.to_tier, status = f.to_status FROM tier_moves_full f "
                    "WHERE memories.id = f.id")
        lines = con.execute(
            """
            SELECT concat_ws(' ', $stamp, 'run=' || $run_id, 'rule=' || rule, 'id=' || id, 'tenant=' || tenant,
                             tier || '/' || status, '->', to_tier || '/' || to_status)
            FROM tier_moves_full ORDER BY id
            """,
            {"stamp": iso(as_of), "run_id": run_id},
        ).fetchall()
        log_lines.extend(line for (line,) in lines)
    con.execute("DROP TABLE tier_moves_full")
    return count


def append_cleanup_log(lake_root: Path, lines: list[str]) -> None:
    """Append to ``memory-cleanup.log`` after the commit (ids and rules only, never content)."""
    if lines:
        with open(lake_root / CLEANUP_LOG_FILE, "a", encoding="utf-8") as log:
            log.write("\n".join(lines) + "\n")
