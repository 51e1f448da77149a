"""The versioned write path: validated records (temp table ``snap_valid``) into ``memories``.

Rules (DESIGN "Memory record"; seed 000 乐观锁 + 字段级合并):
- a new id inserts, starting at the version it carries (default 1), operator default ``agent``;
- an existing id must be sent with the version it was based on (default 1): equal to the lake's
  version, it is merged per field, three-way: an incoming value applies only where it differs
  from the value at that base version, so an agent re-sending a full snapshot never undoes a
  system move (tier and status moves, counters) made since;
- any applied change to a versioned field bumps ``version`` (+1) and writes ``memory_history``
  (before, after, operator, run id, reason); usage counters add the writer's delta and move
  ``last_accessed_at`` forward without a version bump (a history row with operator ``system``);
  history rows name their source file and line (``source_file``, ``source_line``);
- a record that changes nothing is a no-op;
- an older base is quarantined as ``stale version`` (the conflicts feature replaces this with a
  full three-way merge against history); a newer one as ``unknown base version``;
- important memories change only by a user (seed 000: 仅可手动修改): an agent's change or forget
  is quarantined; usage counters still move;
- ``deleted: true`` tombstones the memory through ``forget.forget_memories``.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

from . import schema
from .forget import forget_memories
from .history import HISTORY_COLUMNS, next_history_seq, row_image
from .policy import IngestPolicy

OTHER_TENANT = "id belongs to another tenant"
UNKNOWN_ID = "unknown id"
STALE_VERSION = "stale version"
UNKNOWN_BASE = "unknown base version"
IMPORTANT_NEEDS_USER = "important memory needs operator user"

def merge_records(con: duckdb.DuckDBPyConnection, *, as_of: datetime, run_id: str, label: str,
                  policy: IngestPolicy) -> tuple[int, int, int, int]:
    """Apply ``snap_valid`` to the lake; rejected records get their reason in ``snap_parsed``.

    Returns (ingested, updated, unchanged, forgotten).
    """
    _check_against_lake(con)
    params = {"as_of": as_of, "run_id": run_id, "label": label}
    ingested = _insert_new(con, params, policy)
    updated, unchanged = _apply_changes(con, params)
    forgotten = _apply_forgets(con, params)
    return ingested, updated, unchanged, forgotten


def _reject(con: duckdb.DuckDBPyConnection, source: str, condition: str, reason: str, detail: str) -> None:
    """Move records matching `condition` in `source` to quarantine (reason in snap_parsed)."""
    con.execute(
        f"""
        UPDATE snap_parsed SET reason = '{reason}', detail = r.detail, id = r.id
        FROM (SELECT line, id, {detail} AS detail FROM {source} WHERE {condition}) r
        WHERE snap_parsed.line = r.line
        """
    )
    con.execute(f"DELETE FROM {source} WHERE {condition}")


def _check_against_lake(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE merge_checked AS
        SELECT v.*, m.id IS NOT NULL AS exists_, m.version AS m_version, m.tenant AS m_tenant,
               m.tier AS m_tier, m.status AS m_status,
               -- a forget needs no version; an edit is based on the version it carries (default 1)
               CASE WHEN v.is_forget THEN coalesce(v.version, m.version) ELSE coalesce(v.version, 1) END AS base_version
        FROM snap_valid v LEFT JOIN memories m ON m.id = v.id
        """
    )
    _reject(con, "merge_checked", "exists_ AND m_tenant <> tenant", OTHER_TENANT,
            "'id ' || id || ' is not in tenant ' || tenant")
    _reject(con, "merge_checked", "NOT exists_ AND is_forget", UNKNOWN_ID,
            "'no memory ' || id || ' in tenant ' || tenant")
    _reject(con, "merge_checked", "exists_ AND base_version < m_version", STALE_VERSION,
            "'based on version ' || base_version || ', lake has version ' || m_version")
    _reject(con, "merge_checked", "exists_ AND base_version > m_version", UNKNOWN_BASE,
            "'based on version ' || base_version || ', lake has version ' || m_version")
    _reject(con, "merge_checked", "is_forget AND m_tier = 'important' AND operator <> 'user' AND m_status <> 'deleted'",
            IMPORTANT_NEEDS_USER, "'operator ' || operator || ' may not forget important memory ' || id")


_NEW_ROWS = """
    SELECT id, tenant, agent_id, user_id, context_id, session_id,
           coalesce(tier, $default_tier) AS tier, coalesce(type, $default_type) AS type,
           content, summary, coalesce(tags, []::VARCHAR[]) AS tags,
           coalesce(importance, $default_importance) AS importance, source,
           coalesce(created_at, $as_of) AS created_at,
           greatest(coalesce(updated_at, created_at, $as_of), coalesce(created_at, $as_of)) AS updated_at,
           greatest(coalesce(last_accessed_at, created_at, $as_of), coalesce(created_at, $as_of)) AS last_accessed_at,
           coalesce(access_count, 0) AS access_count, coalesce(reference_count, 0) AS reference_count, expires_at,
           base_version AS version, coalesce(status, 'active') AS status, content_hash,
           NULL::VARCHAR AS merged_into, operator, trace_id, extra, NULL::TIMESTAMP AS published_at,
           NULL::JSON AS publish_meta, line
    FROM merge_checked WHERE NOT exists_ AND NOT is_forget
"""


def _insert_new(con: duckdb.DuckDBPyConnection, params: dict, policy: IngestPolicy) -> int:
    """New ids, with DESIGN's defaults: short_term, importance 0.5, last access = creation, version 1.

    The rows are computed twice (memories, then history) rather than materialised once: the
    projection is cheap, a copy of a million rows is not.
    """
    values = {"as_of": params["as_of"], "default_tier": policy.default_tier, "default_type": policy.default_type,
              "default_importance": policy.default_importance}
    count = con.execute("SELECT count(*) FROM merge_checked WHERE NOT exists_ AND NOT is_forget").fetchone()[0]
    if count:
        con.execute(f"INSERT INTO memories SELECT {', '.join(schema.MEMORY_COLUMNS)} FROM ({_NEW_ROWS})", values)
        con.execute(
            f"""
            INSERT INTO memory_history ({HISTORY_COLUMNS})
            SELECT $seq + line, id, tenant, version, 'insert', NULL, operator, $run_id,
                   'snapshot', $as_of, NULL, {row_image('n')}, $label, line, trace_id
            FROM ({_NEW_ROWS}) n
            """,
            {**params, **values, "seq": next_history_seq(con)},
        )
    return count


def _base_value(name: str) -> str:
    """The field at the base version: the after-image of the last agent/user write at that version."""
    return f"b.after.{name}"


def _apply_changes(con: duckdb.DuckDBPyConnection, params: dict) -> tuple[int, int]:
    """Existing ids: three-way per field against the base version; returns (updated, unchanged)."""
    if not con.execute("SELECT count(*) FROM merge_checked WHERE exists_ AND NOT is_forget").fetchone()[0]:
        return 0, 0
    # Without an after-image (a lake built before history existed) the current row is the base.
    new_values = [
        f"CASE WHEN c.{n} IS NOT NULL AND c.{n} IS DISTINCT FROM "
        f"(CASE WHEN b.after IS NULL THEN m.{n} ELSE {_base_value(n)} END) THEN c.{n} ELSE m.{n} END AS {n}"
        for n in schema.VERSIONED_FIELDS
    ]
    counters = [
        f"m.{n} + greatest(coalesce(c.{n} - coalesce({_base_value(n)}, m.{n}), 0), 0) AS {n}"
        for n in schema.COUNTER_FIELDS
    ]
    changed = ", ".join(f"CASE WHEN {n} IS DISTINCT FROM m_{n} THEN '{n}' END" for n in schema.VERSIONED_FIELDS)
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE merge_changed AS
        WITH todo AS (SELECT * FROM merge_checked WHERE exists_ AND NOT is_forget),
        base AS (
            -- the row as the last agent/user write left it at the base version; system moves made
            -- since (tier, status, counters) do not bump the version and must not be undone
            SELECT h.memory_id, arg_max(h.after, h.seq) AS after
            FROM memory_history h JOIN todo c ON h.memory_id = c.id AND h.version = c.m_version
            WHERE h.operator <> 'system'
            GROUP BY h.memory_id
        ), merged AS (
            SELECT c.line, c.operator AS c_operator, c.trace_id AS c_trace_id, c.updated_at AS c_updated_at,
                   c.content_hash AS c_content_hash, c.last_accessed_at AS c_last_accessed_at,
                   {', '.join(f'm.{n} AS m_{n}' for n in schema.MEMORY_COLUMNS)},
                   {', '.join(new_values)},
                   {', '.join(counters)}
            FROM todo c JOIN memories m ON m.id = c.id LEFT JOIN base b ON b.memory_id = c.id
        )
        SELECT *, m_id AS id, list_filter([{changed}], x -> x IS NOT NULL) AS changed_fields,
               greatest(m_last_accessed_at, coalesce(c_last_accessed_at, m_last_accessed_at)) AS last_accessed_at
        FROM merged
        """
    )
    _reject(con, "merge_changed", "m_tier = 'important' AND c_operator <> 'user' AND len(changed_fields) > 0",
            IMPORTANT_NEEDS_USER,
            "'operator ' || c_operator || ' may not change ' || array_to_string(changed_fields, ', ') "
            "|| ' of important memory ' || m_id")
    final = {
        "id": "m_id", "tenant": "m_tenant", "created_at": "m_created_at", "merged_into": "m_merged_into",
        "published_at": "m_published_at", "publish_meta": "m_publish_meta",
        "content_hash": "CASE WHEN list_contains(changed_fields, 'content') THEN c_content_hash ELSE m_content_hash END",
        "updated_at": "CASE WHEN versioned THEN greatest(m_updated_at, coalesce(c_updated_at, $as_of)) ELSE m_updated_at END",
        "version": "m_version + CASE WHEN versioned THEN 1 ELSE 0 END",
        "operator": "CASE WHEN versioned THEN c_operator ELSE m_operator END",
        "trace_id": "CASE WHEN versioned THEN c_trace_id ELSE m_trace_id END",
    }
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE merge_final AS
        SELECT {', '.join(f'{final.get(c, c)} AS {c}' for c in schema.MEMORY_COLUMNS)},
               line, versioned, changed_fields, {row_image('x', 'm_')} AS before
        FROM (SELECT *, len(changed_fields) > 0 AS versioned FROM merge_changed) x
        WHERE versioned OR access_count <> m_access_count OR reference_count <> m_reference_count
              OR last_accessed_at <> m_last_accessed_at
        """,
        {"as_of": params["as_of"]},
    )
    assignments = ", ".join(f"{c} = f.{c}" for c in schema.MEMORY_COLUMNS if c != "id")
    con.execute(f"UPDATE memories SET {assignments} FROM merge_final f WHERE memories.id = f.id")
    con.execute(
        f"""
        INSERT INTO memory_history ({HISTORY_COLUMNS})
        SELECT $seq + line, id, tenant, version,
               CASE WHEN versioned THEN 'update' ELSE 'usage' END,
               CASE WHEN versioned THEN changed_fields ELSE ['access_count', 'reference_count', 'last_accessed_at'] END,
               CASE WHEN versioned THEN operator ELSE 'system' END, $run_id,
               CASE WHEN versioned THEN 'snapshot' ELSE 'usage counters from snapshot' END,
               $as_of, before, {row_image('f')}, $label, line, trace_id
        FROM merge_final f
        """,
        {**params, "seq": next_history_seq(con)},
    )
    updated = con.execute("SELECT count(*) FROM merge_final WHERE versioned").fetchone()[0]
    unchanged = con.execute("SELECT (SELECT count(*) FROM merge_changed) - (SELECT count(*) FROM merge_final)").fetchone()[0]
    con.execute("DROP TABLE merge_final; DROP TABLE merge_changed")
    return updated, unchanged


def _apply_forgets(con: duckdb.DuckDBPyConnection, params: dict) -> int:
    requests = con.execute(
        "SELECT id, operator, coalesce(forget_reason, 'forget request') AS reason, line "
        "FROM merge_checked WHERE is_forget ORDER BY line"
    ).pl()
    if requests.height == 0:
        return 0
    return forget_memories(con, requests, as_of=params["as_of"], run_id=params["run_id"], source=params["label"])
