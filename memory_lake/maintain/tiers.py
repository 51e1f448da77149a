"""Tier lifecycle: the rules that move memories between tiers and statuses (seed 000 四层记忆架构,
seed 002 consolidate(), seed 003 three-level forgetting).

Each rule is one set-based query that proposes moves ``(id, to_tier, to_status)`` for the state
the previous rule left; ``apply_moves`` applies them with a history row (operator ``system``, no
version bump), a ``cleanup_log`` row and a line in ``<lake>/memory-cleanup.log`` (the file seed
000 names). Important memories are never touched by a rule (``apply_moves`` drops such moves).
Only active (and disputed) memories move, except where a rule says otherwise.

The order is part of the contract; with it one run reaches a fixed point (run again with the same
``as_of``: nothing moves). Day limits are strict: exactly 7 days idle is not yet "over 7 days".

1. ``expire``              - ``expires_at`` passed → archived (seed 000: 含 expires_at 且过期 → 自动归档).
2. ``mark_important``      - importance >= 1 (marked important) → important, from any tier (seed
                             000: 标记重要 → 晋升到重要记忆; running first, nothing later can move
                             a marked memory out of reach of this rule).
3. ``working_overflow``    - working over capacity per scope: the least recently accessed (then
                             oldest created) move to short_term (超限自动晋升短期).
4. ``consolidate``         - short_term for more than 24 h with importance > 0.7 or referenced more
                             than twice → long_term (seed 002 consolidate()). Time counts from when
                             the memory entered short_term, so a recalled memory gets its day.
5. ``short_term_idle``     - short_term not accessed for more than 7 days → long_term (7 天未访问).
6. ``long_term_recall``    - long_term referenced since the last run (and since it entered
                             long_term) → short_term (被引用 → 临时提升到短期, LRU).
7. ``short_term_overflow`` - short_term over capacity per scope, FIFO by creation (memories recalled
                             in this run count as newest: room is made for them): to long_term when
                             importance >= 0.7 or referenced >= 2 times, else archived, never deleted.
8. ``long_term_dormant``   - long_term not accessed for more than 60 days → dormant (kept, out of
                             search and of the scope exports); an access or reference wakes it.
9. ``suggest_archive``     - long_term not accessed or referenced for more than 180 days: a flag in
                             ``memory_flags`` and an alert, never a move (180 天未引用提示归档).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl

from ..store import iso
from ..store import transaction
from ..store import HISTORY_COLUMNS, next_history_seq, row_image
from ..store import Policy
from ..store import StepReport, tenant_limits

ACTIVE = "('active', 'conflicted')"
CLEANUP_LOG_FILE = "memory-cleanup.log"


def _expire(policy: Policy) -> str:
    return """
        SELECT id, tier AS to_tier, 'archived' AS to_status FROM memories
        WHERE expires_at < $as_of AND status IN ('active', 'conflicted', 'dormant')
    """


def _mark_important(policy: Policy) -> str:
    return f"""
        SELECT m.id, 'important' AS to_tier, m.status AS to_status
        FROM memories m JOIN tenant_limits l USING (tenant)
        WHERE m.tier <> 'important' AND m.status IN {ACTIVE} AND m.importance >= l.important_importance
    """


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


def _entered(tier: str) -> str:
    """When each memory last entered `tier` by a rule (its creation when no rule moved it)."""
    return f"(SELECT memory_id, max(as_of) AS entered FROM cleanup_log WHERE to_tier = '{tier}' GROUP BY memory_id)"


def _consolidate(policy: Policy) -> str:
    return f"""
        SELECT m.id, 'long_term' AS to_tier, m.status AS to_status
        FROM memories m JOIN tenant_limits l USING (tenant) LEFT JOIN {_entered('short_term')} e ON e.memory_id = m.id
        WHERE m.tier = 'short_term' AND m.status IN {ACTIVE}
          AND greatest(m.created_at, coalesce(e.entered, m.created_at)) < $as_of - to_hours(l.consolidate_hours)
          AND (m.importance > l.consolidate_importance OR m.reference_count > l.consolidate_references)
    """


def _short_term_idle(policy: Policy) -> str:
    return f"""
        SELECT m.id, 'long_term' AS to_tier, m.status AS to_status
        FROM memories m JOIN tenant_limits l USING (tenant)
        WHERE m.tier = 'short_term' AND m.status IN {ACTIVE} AND m.last_accessed_at < $as_of - to_days(l.idle_days)
    """


def _long_term_recall(policy: Policy) -> str:
    return f"""
        SELECT m.id, 'short_term' AS to_tier, m.status AS to_status
        FROM memories m
        JOIN (SELECT memory_id, max(as_of) AS referenced FROM memory_history
              WHERE change = 'usage' AND after.reference_count > before.reference_count
                AND as_of > $since AND as_of <= $as_of
              GROUP BY memory_id) r ON r.memory_id = m.id
        LEFT JOIN {_entered('long_term')} e ON e.memory_id = m.id
        WHERE m.tier = 'long_term' AND m.status IN {ACTIVE} AND r.referenced > coalesce(e.entered, m.created_at)
    """


def _short_term_overflow(policy: Policy) -> str:
    keep = "(importance >= keep_importance OR reference_count >= keep_references)"
    return f"""
        SELECT id, CASE WHEN {keep} THEN 'long_term' ELSE 'short_term' END AS to_tier,
               CASE WHEN {keep} THEN status ELSE 'archived' END AS to_status
        FROM (SELECT m.id, m.status, m.importance, m.reference_count, l.short_term AS capacity,
                     l.keep_importance, l.keep_references,
                     row_number() OVER (PARTITION BY m.tenant, m.agent_id, m.user_id
                                        ORDER BY (c.memory_id IS NOT NULL) DESC, m.created_at DESC, m.id DESC) AS rank
              FROM memories m JOIN tenant_limits l USING (tenant)
              LEFT JOIN (SELECT DISTINCT memory_id FROM cleanup_log
                         WHERE rule = 'long_term_recall' AND as_of = $as_of) c ON c.memory_id = m.id
              WHERE m.tier = 'short_term' AND m.status IN {ACTIVE})
        WHERE rank > capacity
    """


def _long_term_dormant(policy: Policy) -> str:
    return f"""
        SELECT m.id, 'long_term' AS to_tier, 'dormant' AS to_status
        FROM memories m JOIN tenant_limits l USING (tenant)
        WHERE m.tier = 'long_term' AND m.status IN {ACTIVE} AND m.last_accessed_at < $as_of - to_days(l.dormant_days)
    """


# The order is part of the contract: each rule sees what the previous one left.
RULES = (
    ("expire", _expire),
    ("mark_important", _mark_important),
    ("working_overflow", _working_overflow),
    ("consolidate", _consolidate),
    ("short_term_idle", _short_term_idle),
    ("long_term_recall", _long_term_recall),
    ("short_term_overflow", _short_term_overflow),
    ("long_term_dormant", _long_term_dormant),
)
SUGGEST_ARCHIVE = "suggest_archive"


def enforce_tiers(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """Run every enabled tier rule in order, then refresh the suggest-archive flags."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("tiers", as_of)
    report = StepReport("enforce_tiers", as_of, run_id)
    log_lines: list[str] = []
    with lake.writer(purpose="tier rules") as con:
        _limits(con, policy)
        params = {"as_of": as_of, "since": _previous_run(con, as_of, policy)}
        with transaction(con):
            for name, rule in RULES:
                if name in policy.tiers.disabled_rules:
                    report.details.setdefault("disabled", []).append(name)
                    continue
                sql = rule(policy)
                (proposed,) = con.execute(  # a CREATE ... AS answers with the number of rows it wrote
                    f"CREATE OR REPLACE TEMP TABLE tier_moves AS SELECT *, '{name}' AS rule FROM ({sql})",
                    {k: v for k, v in params.items() if f"${k}" in sql}).fetchone()
                # most rules propose nothing on most nights: no moves to apply (apply_moves would count 0)
                report.counts[name] = apply_moves(con, as_of=as_of, run_id=run_id, log_lines=log_lines) if proposed else 0
            if SUGGEST_ARCHIVE not in policy.tiers.disabled_rules:
                report.counts[SUGGEST_ARCHIVE] = _refresh_flags(con, as_of, run_id)
    append_cleanup_log(lake.root, log_lines)
    return report


def _previous_run(con: duckdb.DuckDBPyConnection, as_of: datetime, policy: Policy) -> datetime:
    """The as_of of the previous nightly run: "referenced since the last run" starts there."""
    (previous,) = con.execute("SELECT max(as_of) FROM runs WHERE kind = 'nightly' AND as_of < ?", [as_of]).fetchone()
    return previous or as_of - timedelta(hours=policy.tiers.recall_default_window_hours)


def _refresh_flags(con: duckdb.DuckDBPyConnection, as_of: datetime, run_id: str) -> int:
    """Flag long_term memories idle beyond the archive suggestion; unflag the ones used again."""
    qualifying = """
        SELECT m.id, m.tenant FROM memories m JOIN tenant_limits l USING (tenant)
        WHERE m.tier = 'long_term' AND m.status IN ('active', 'conflicted', 'dormant')
          AND m.last_accessed_at < $as_of - to_days(l.suggest_archive_days)
    """
    con.execute(f"DELETE FROM memory_flags WHERE flag = '{SUGGEST_ARCHIVE}' AND memory_id NOT IN "
                f"(SELECT id FROM ({qualifying}))", {"as_of": as_of})
    con.execute(
        f"""
        INSERT INTO memory_flags
        SELECT q.id, q.tenant, '{SUGGEST_ARCHIVE}', $as_of, $run_id FROM ({qualifying}) q
        WHERE q.id NOT IN (SELECT memory_id FROM memory_flags WHERE flag = '{SUGGEST_ARCHIVE}')
        """,
        {"as_of": as_of, "run_id": run_id},
    )
    return con.execute(f"SELECT count(*) FROM memory_flags WHERE flag = '{SUGGEST_ARCHIVE}'").fetchone()[0]


def _limits(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    """Temp table ``tenant_limits``: each tenant's numbers for every rule (per-tenant overrides)."""
    tenant_limits(con, policy)
    tenants = [t for (t,) in con.execute("SELECT tenant FROM tenant_limits").fetchall()]
    columns = {
        "keep_importance": ("overflow_keep_importance", pl.Float64),
        "keep_references": ("overflow_keep_references", pl.Int64),
        "important_importance": ("important_importance", pl.Float64),
        "consolidate_hours": ("consolidate_min_age_hours", pl.Int64),
        "consolidate_importance": ("consolidate_importance", pl.Float64),
        "consolidate_references": ("consolidate_references", pl.Int64),
        "idle_days": ("short_term_idle_days", pl.Int64),
        "dormant_days": ("dormant_days", pl.Int64),
        "suggest_archive_days": ("suggest_archive_days", pl.Int64),
    }
    values = {"tenant": tenants}
    for column, (field_name, _) in columns.items():
        values[column] = [getattr(policy.for_tenant(t).tiers, field_name) for t in tenants]
    frame = pl.DataFrame(values, schema={"tenant": pl.String, **{c: kind for c, (_, kind) in columns.items()}})
    con.register("rule_limits_frame", frame)
    con.execute("CREATE OR REPLACE TEMP TABLE tenant_limits AS SELECT * FROM tenant_limits JOIN rule_limits_frame USING (tenant)")
    con.unregister("rule_limits_frame")


def apply_moves(con: duckdb.DuckDBPyConnection, *, as_of: datetime, run_id: str, log_lines: list[str]) -> int:
    """Apply temp table ``tier_moves(id, to_tier, to_status, rule)``: history, cleanup log, update.

    Moves that change nothing and moves of important memories are dropped here, whatever rule
    proposed them: automation never touches an important memory. Nor the lake's own summaries: the
    summarize step keeps them (regenerated, or archived when no longer needed).
    """
    (count,) = con.execute(  # a CREATE ... AS answers with the number of rows it wrote
        """
        CREATE OR REPLACE TEMP TABLE tier_moves_full AS
        SELECT m.*, v.to_tier, v.to_status, v.rule
        FROM memories m JOIN tier_moves v USING (id)
        WHERE m.tier <> 'important' AND (m.tier <> v.to_tier OR m.status <> v.to_status)
          AND NOT (m.type = 'summary' AND m.operator = 'system')  -- the lake's own summaries (maintain/summaries)
        """
    ).fetchone()
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


def restore_memories(lake, ids: list[str], *, operator: str = "user", as_of: datetime,
                     run_id: str | None = None) -> StepReport:
    """Bring archived or dormant memories back to active (a person's decision: history with the
    operator, version + 1). The restore counts as a use (last access = as_of) and clears an
    expiry that has passed, so the next run does not undo it; an archived short_term memory comes
    back in long_term, which has no capacity for the FIFO to archive it again."""
    from ..store import InputError

    if operator not in ("user", "agent"):
        raise InputError(f"operator must be user or agent, not {operator!r}")
    run_id = run_id or lake.new_run_id("restore", as_of)
    frame = pl.DataFrame({"id": list(ids)}, schema={"id": pl.String})
    with lake.writer(purpose="restore") as con:
        con.register("restore_ids", frame)
        con.execute(
            """
            CREATE OR REPLACE TEMP TABLE restore_rows AS
            SELECT m.*, CASE WHEN m.tier = 'short_term' THEN 'long_term' ELSE m.tier END AS to_tier
            FROM memories m JOIN restore_ids r USING (id) WHERE m.status IN ('archived', 'dormant')
            """
        )
        con.unregister("restore_ids")
        restored = [i for (i,) in con.execute("SELECT id FROM restore_rows ORDER BY id").fetchall()]
        to_long_term = [i for (i,) in con.execute(
            "SELECT id FROM restore_rows WHERE tier <> to_tier ORDER BY id").fetchall()]
        known = {i for (i,) in con.execute("SELECT id FROM memories WHERE id IN (SELECT unnest(?))", [list(ids)]).fetchall()}
        with transaction(con):
            changes = {"tier": "f.to_tier", "status": "'active'", "version": "f.version + 1", "operator": "$operator",
                       "updated_at": "greatest(f.updated_at, $as_of)",
                       "last_accessed_at": "greatest(f.last_accessed_at, $as_of)",
                       "expires_at": "CASE WHEN f.expires_at < $as_of THEN NULL ELSE f.expires_at END"}
            con.execute(
                f"""
                INSERT INTO memory_history ({HISTORY_COLUMNS})
                SELECT $seq + row_number() OVER (ORDER BY id), id, tenant, version + 1, 'status',
                       list_filter(['status', CASE WHEN tier <> to_tier THEN 'tier' END], x -> x IS NOT NULL),
                       $operator, $run_id, 'restore', $as_of, {row_image('f')}, {row_image('f', **changes)},
                       NULL, NULL, NULL
                FROM restore_rows f
                """,
                {"seq": next_history_seq(con), "operator": operator, "run_id": run_id, "as_of": as_of},
            )
            con.execute(
                """
                INSERT INTO cleanup_log SELECT id, tenant, agent_id, user_id, tier, to_tier, status, 'active',
                       'restore', $run_id, $as_of FROM restore_rows
                """,
                {"run_id": run_id, "as_of": as_of},
            )
            con.execute(
                """
                UPDATE memories SET tier = f.to_tier, status = 'active', version = memories.version + 1,
                       operator = $operator, updated_at = greatest(memories.updated_at, $as_of),
                       last_accessed_at = greatest(memories.last_accessed_at, $as_of),
                       expires_at = CASE WHEN memories.expires_at < $as_of THEN NULL ELSE memories.expires_at END
                FROM restore_rows f WHERE memories.id = f.id
                """,
                {"operator": operator, "as_of": as_of},
            )
    details = {"restored": restored, "not_restorable": sorted(known - set(restored)),
               "unknown": sorted(set(ids) - known), "moved_to_long_term": to_long_term}
    return StepReport("restore", as_of, run_id, {"restored": len(restored)}, details)
