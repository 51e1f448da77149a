"""The versioned write path: validated records (temp table ``snap_valid``) into ``memories``.

Rules (DESIGN "Memory record"; seed 000 乐观锁 + 字段级合并):
- a new id inserts, starting at the version it carries (default 1), operator default ``agent``;
  records without an id get a derived id, so concurrent adds never collide;
- an existing id is sent with the version it was based on (default 1) and merged per field, three
  ways: the base is the row as the last agent/user write left it at that version (its history
  after-image), or, for a record carrying ``_base_seq`` (a manual edit, `inbox.edit_memory`), the
  image after that history row: what the person saw, system moves included. A field only the
  writer changed is applied, one only the lake changed is kept, one both changed to the same
  value is fine, and one both changed to different values is a conflict: the lake's value stays,
  the memory's status becomes ``conflicted`` (no version bump for that alone) and a ``conflicts``
  row keeps base, both values, both operators and trace ids (the lake's are those of the latest
  history row that changed the field: ``system`` for a rule's move);
- tags merge as sets (the writer's additions and removals since the base); usage counters add the
  writer's delta and move ``last_accessed_at`` forward without a version bump (history operator
  ``system``);
- any applied change to a versioned field bumps ``version`` (+1) and writes ``memory_history``
  (before, after, operator, run id, reason); history rows name their source file and line;
- a write that changes the content of a memory dedup merged into another makes it a memory of its
  own again (status ``active``, no ``merged_into``; its ``dedup_merges`` row is closed with
  ``unmerged_by = 'write'``): it says something new, which would otherwise stay hidden behind its
  canonical memory. Other changes to a merged memory are applied and it stays merged;
- a record that changes nothing is a no-op;
- a base newer than the lake's version, or one the history does not hold (a version, or a
  ``_base_seq`` row of another memory or version), is quarantined as ``unknown base version``;
- important memories change only by a user (seed 000: 仅可手动修改): an agent's changes are not
  applied but filed as conflicts of kind ``important`` for a user to decide; an agent's forget of
  one is quarantined; usage counters still move;
- ``deleted: true`` tombstones the memory through ``ingest.forget.forget_memories``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

import duckdb
import polars as pl

from ..store import schema
from ..store import HISTORY_COLUMNS, next_history_seq, row_image
from ..store import IngestPolicy

OTHER_TENANT = "id belongs to another tenant"
UNKNOWN_ID = "unknown id"
UNKNOWN_BASE = "unknown base version"
IMPORTANT_NEEDS_USER = "important memory needs operator user"
MASS_FORGET_HELD = "mass forget held for a user"

def merge_records(con: duckdb.DuckDBPyConnection, *, as_of: datetime, run_id: str, label: str,
                  policy: IngestPolicy, forget_limits: Callable[[list[str]], dict[str, tuple]] | None = None
                  ) -> tuple[int, int, int, int]:
    """Apply ``snap_valid`` to the lake; rejected records get their reason in ``snap_parsed``.

    `forget_limits(tenants)` gives each tenant's ``(max_active_drop, min_drop_allowance,
    drain_days, max_drain)`` (the policy's [publish] numbers): an agent's forgets beyond them are
    held (`_hold_mass_forgets`). Returns (ingested, updated, unchanged, forgotten, conflicted):
    conflicted counts the records that left at least one field in the ``conflicts`` queue.
    """
    _check_against_lake(con)
    if forget_limits is not None:
        _hold_mass_forgets(con, as_of, forget_limits)
    params = {"as_of": as_of, "run_id": run_id, "label": label}
    ingested = _insert_new(con, params, policy)
    updated, unchanged, conflicted = _apply_changes(con, params)
    forgotten = _apply_forgets(con, params)
    return ingested, updated, unchanged, forgotten, conflicted


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


def _reject_first(con: duckdb.DuckDBPyConnection, source: str, rules: list[tuple[str, str, str]],
                  among: str = "true") -> None:
    """`_reject` for each (condition, reason, detail) of `rules` in turn, in two statements instead of
    two per rule (a fixed cost of every file): a record gets the reason and detail of the first
    rule it matches, as when each rule took its records before the next one looked. `among`: a
    condition every rule implies, so that the rules are evaluated on those records only."""
    any_rule = " OR ".join(f"({condition})" for condition, _, _ in rules)
    # Most files break no rule: one count finds that (`among` alone when it narrows, as the rules
    # may ask the history) and the two statements below, whose planning costs more, are skipped.
    if not con.execute(f"SELECT count(*) FROM {source} WHERE {among if among != 'true' else any_rule}").fetchone()[0]:
        return
    reason = "CASE " + " ".join(f"WHEN {condition} THEN '{why}'" for condition, why, _ in rules) + " END"
    detail = "CASE " + " ".join(f"WHEN {condition} THEN {text}" for condition, _, text in rules) + " END"
    con.execute(
        f"""
        UPDATE snap_parsed SET reason = r.reason, detail = r.detail, id = r.id
        FROM (SELECT line, id, {reason} AS reason, {detail} AS detail FROM {source} WHERE {among}) r
        WHERE snap_parsed.line = r.line AND r.reason IS NOT NULL
        """
    )
    con.execute(f"DELETE FROM {source} WHERE ({among}) AND ({any_rule})")


def _check_against_lake(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE merge_checked AS
        SELECT v.*, m.id IS NOT NULL AS exists_, m.version AS m_version, m.tenant AS m_tenant,
               m.tier AS m_tier, m.status AS m_status, m.agent_id AS m_agent_id, m.user_id AS m_user_id,
               -- a forget needs no version; an edit is based on the version it carries (default 1)
               CASE WHEN v.is_forget THEN coalesce(v.version, m.version) ELSE coalesce(v.version, 1) END AS base_version
        FROM snap_valid v LEFT JOIN memories m ON m.id = v.id
        """
    )
    # Each record gets the first of these reasons that holds (the last rule, forgets, and the history
    # checks below, edits, never hold for the same record).
    _reject_first(con, "merge_checked", [
        ("exists_ AND m_tenant <> tenant", OTHER_TENANT, "'id ' || id || ' is not in tenant ' || tenant"),
        ("NOT exists_ AND is_forget", UNKNOWN_ID, "'no memory ' || id || ' in tenant ' || tenant"),
        ("exists_ AND base_version > m_version", UNKNOWN_BASE,
         "'based on version ' || base_version || ', lake has version ' || m_version"),
        ("is_forget AND m_tier = 'important' AND operator <> 'user' AND m_status <> 'deleted'",
         IMPORTANT_NEEDS_USER, "'operator ' || operator || ' may not forget important memory ' || id"),
    ])
    # An edit based on an older version is merged three ways against the row as it was then: that
    # image must be in the history (an edit never reaches the lake without one). A manual edit
    # names the history row it read: that row must be this memory's, at that version.
    _reject_first(con, "merge_checked", [
        ("base_seq IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memory_history h "
         "WHERE h.memory_id = merge_checked.id AND h.seq = merge_checked.base_seq "
         "AND h.version = merge_checked.base_version AND h.after IS NOT NULL)",
         UNKNOWN_BASE,
         "'based on history row ' || base_seq || ' at version ' || base_version || ', which the history of ' || id "
         "|| ' does not hold (lake has version ' || m_version || ')'"),
        ("base_seq IS NULL AND base_version < m_version AND NOT EXISTS (SELECT 1 FROM memory_history h "
         "WHERE h.memory_id = merge_checked.id AND h.version = merge_checked.base_version "
         "AND h.operator <> 'system' AND h.after IS NOT NULL)",
         UNKNOWN_BASE,
         "'based on version ' || base_version || ', which the history of ' || id || ' does not hold "
         "(lake has version ' || m_version || ')'"),
    ], among="exists_ AND NOT is_forget AND (base_seq IS NOT NULL OR base_version < m_version)")


def _hold_mass_forgets(con: duckdb.DuckDBPyConnection, as_of: datetime,
                       forget_limits: Callable[[list[str]], dict[str, tuple]]) -> None:
    """Issue 37.3: an agent may not empty a scope. Its forgets (``deleted: true``) of a scope's active
    memories are held, all of them, when with the agent's forgets of the last 24 hours they pass the
    scope's nightly allowance, max(floor(active x max_active_drop), min_drop_allowance), or with
    those of the last drain_days more than max_drain of what the scope held. Held lines go to
    quarantine, the memories stay; a user confirms by forgetting them (``memory-lake forget``)."""
    wanted = "is_forget AND operator <> 'user' AND m_status IN ('active', 'conflicted')"
    tenants = [t for (t,) in con.execute(f"SELECT DISTINCT m_tenant FROM merge_checked WHERE {wanted}").fetchall()]
    if not tenants:
        return
    limits = forget_limits(tenants)
    frame = pl.DataFrame([(t, *limits[t]) for t in tenants], orient="row",
                         schema={"tenant": pl.String, "share": pl.Float64, "least": pl.Int64,
                                 "drain_days": pl.Int64, "max_drain": pl.Float64})
    same = " AND ".join(f"{{0}}.{c} IS NOT DISTINCT FROM {{1}}.{c}" for c in ("tenant", "agent_id", "user_id"))
    of_request = " AND ".join(f"f.{c} IS NOT DISTINCT FROM merge_checked.m_{c}" for c in ("tenant", "agent_id", "user_id"))
    con.register("forget_limits_frame", frame)
    try:
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE forget_verdict AS
            WITH asked AS (SELECT m_tenant AS tenant, m_agent_id AS agent_id, m_user_id AS user_id,
                                  count(DISTINCT id) AS n
                           FROM merge_checked WHERE {wanted} GROUP BY ALL),
                 earlier AS (SELECT h.memory_id, h.as_of, h.before.tenant AS tenant, h.before.agent_id AS agent_id,
                                    h.before.user_id AS user_id
                             FROM memory_history h
                             WHERE h.change = 'forget' AND h.operator <> 'user'
                               AND h.before.status IN ('active', 'conflicted') AND h.as_of <= $as_of)
            SELECT a.*, l.share, l.least, l.drain_days, l.max_drain,
                   (SELECT count(*) FROM memories m WHERE {same.format('m', 'a')}
                           AND m.status IN ('active', 'conflicted')) AS active,
                   (SELECT count(DISTINCT e.memory_id) FROM earlier e WHERE {same.format('e', 'a')}
                           AND e.as_of > $as_of - INTERVAL 1 DAY) AS tonight,
                   (SELECT count(DISTINCT e.memory_id) FROM earlier e WHERE {same.format('e', 'a')}
                           AND e.as_of > $as_of - to_days(l.drain_days::INTEGER)) AS drained
            FROM asked a JOIN forget_limits_frame l ON l.tenant = a.tenant""", {"as_of": as_of})
    finally:
        con.unregister("forget_limits_frame")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE forget_verdict AS
        SELECT *, greatest(floor((active + tonight) * share)::BIGINT, least) AS nightly,
                  greatest(floor((active + drained) * max_drain)::BIGINT, least) AS drain_allowance
        FROM forget_verdict""")
    held = (f"{wanted} AND EXISTS (SELECT 1 FROM forget_verdict f WHERE "
            f"{of_request} "
            "AND (f.n + f.tonight > f.nightly OR (f.drain_days > 0 AND f.n + f.drained > f.drain_allowance)))")
    detail = ("(SELECT 'an agent asked to forget ' || (f.n + f.tonight) || ' of ' || (f.active + f.tonight) "
              "|| ' active memories of its scope within a day (at most ' || f.nightly || '), or ' || (f.n + f.drained) "
              "|| ' within ' || f.drain_days || ' days (at most ' || f.drain_allowance || '): held, the memory stays; '"
              "|| 'to confirm, a user runs memory-lake forget ' || merge_checked.id || ' --reason TEXT' FROM forget_verdict f WHERE "
              f"{of_request})")
    _reject(con, "merge_checked", held, MASS_FORGET_HELD, detail)


_NEW_ROWS = """
    SELECT id, tenant, agent_id, user_id, context_id, session_id,
           coalesce(tier, $default_tier) AS tier, coalesce(type, $default_type) AS type,
           content, summary, coalesce(tags, []::VARCHAR[]) AS tags,
           coalesce(importance, $default_importance) AS importance, source,
           coalesce(created_at, $as_of) AS created_at,
           greatest(coalesce(updated_at, created_at, $as_of), coalesce(created_at, $as_of)) AS updated_at,
           CASE WHEN $history THEN greatest(coalesce(last_accessed_at, $as_of), $as_of, coalesce(created_at, $as_of))
                ELSE greatest(coalesce(last_accessed_at, created_at, $as_of), coalesce(created_at, $as_of))
           END AS last_accessed_at,
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
              "default_importance": policy.default_importance, "history": policy.history}
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


def _field_sql(name: str) -> tuple[str, str, str]:
    """(changed?, conflict?, new value) SQL of one versioned field, three ways: ``was_<name>`` the
    base, ``m_<name>`` the lake, ``in_<name>`` the incoming value (columns of ``_apply_changes``'
    layers; a condition is a column of the layer before the next: each is written, and planned,
    once).

    The incoming side changed the field when it sent a value different from the base; the lake
    changed it when its value differs from the base. Only the incoming side changed it: applied.
    Only the lake: kept. Both, to the same value: fine. Both, to different values: a conflict, and
    the lake's value stays. Tags merge as sets (the writer's additions and removals since the base,
    ``tags_added`` and ``tags_removed``, apply to the lake's tags) and never conflict. ``guard``
    (an agent writing to an important memory) turns every change into a conflict for a user to
    decide.
    """
    if name == "tags":
        lake_tags = "coalesce(m_tags, []::VARCHAR[])"
        merged = (f"list_sort(list_concat(list_filter({lake_tags}, x -> NOT list_contains(tags_removed, x)), "
                  f"list_filter(tags_added, x -> NOT list_contains({lake_tags}, x))))")
        changed = "(in_tags IS NOT NULL AND (len(tags_added) > 0 OR len(tags_removed) > 0))"
        conflict = (f"(guard AND chg_tags AND list_sort(list_distinct(in_tags)) IS DISTINCT FROM "
                    f"list_sort(list_distinct({lake_tags})))")
        return changed, conflict, f"CASE WHEN guard OR in_tags IS NULL THEN m_tags ELSE {merged} END"
    changed = f"(in_{name} IS NOT NULL AND in_{name} IS DISTINCT FROM was_{name})"
    conflict = (f"(chg_{name} AND in_{name} IS DISTINCT FROM m_{name} "
                f"AND (guard OR m_{name} IS DISTINCT FROM was_{name}))")
    return changed, conflict, f"CASE WHEN chg_{name} AND NOT cf_{name} THEN in_{name} ELSE m_{name} END"


def _apply_changes(con: duckdb.DuckDBPyConnection, params: dict) -> tuple[int, int, int]:
    """Existing ids: three-way per field against the base version; returns (updated, unchanged, conflicted)."""
    if not con.execute("SELECT count(*) FROM merge_checked WHERE exists_ AND NOT is_forget").fetchone()[0]:
        return 0, 0, 0
    fields = schema.VERSIONED_FIELDS
    sql = {n: _field_sql(n) for n in fields}
    conflict_items = [
        f"CASE WHEN cf_{n} THEN {{'field': '{n}', 'base': to_json(was_{n})::VARCHAR, "
        f"'lake': to_json(m_{n})::VARCHAR, 'incoming': to_json(in_{n})::VARCHAR}} END" for n in fields]
    counters = [f"m_{n} + greatest(coalesce(in_{n} - coalesce(b_after.{n}, m_{n}), 0), 0) AS {n}"
                for n in schema.COUNTER_FIELDS]
    # `status` becomes "conflicted" below, after the versioned changes are known: marking a
    # conflict is not an edit and bumps no version (seed 000, example 2).
    changed = ", ".join(f"CASE WHEN {n} IS DISTINCT FROM m_{n} THEN '{n}' END" for n in fields)
    # Each layer names what the next one needs (the base, what changed, what conflicts), so that
    # an expression is written once: planning this statement is most of a small file's ingest.
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE merge_changed AS
        WITH todo AS (
            -- guard: an agent writing to an important memory (seed 000: 仅可手动修改)
            SELECT v.*, v.m_tier = 'important' AND v.operator <> 'user' AS guard
            FROM merge_checked v WHERE exists_ AND NOT is_forget
        ),
        base AS (
            -- the row as the last agent/user write left it at the base version; system moves made
            -- since (tier, status, counters) bump no version and are the lake's side of the merge.
            -- A manual edit (base_seq) is based on the row as the person saw it, moves included.
            SELECT h.memory_id, arg_max(h.after, h.seq) AS after
            FROM memory_history h JOIN todo c ON h.memory_id = c.id AND h.version = c.base_version
            WHERE CASE WHEN c.base_seq IS NULL THEN h.operator <> 'system' ELSE h.seq = c.base_seq END
            GROUP BY h.memory_id
        ), sides AS (
            SELECT c.line, c.operator AS c_operator, c.trace_id AS c_trace_id, c.updated_at AS c_updated_at,
                   c.content_hash AS c_content_hash, c.last_accessed_at AS c_last_accessed_at, c.status AS c_status,
                   c.base_version, c.guard, b.after AS b_after,
                   {', '.join(f'm.{n} AS m_{n}' for n in schema.MEMORY_COLUMNS)},
                   {', '.join(f'c.{n} AS in_{n}' for n in (*fields, *schema.COUNTER_FIELDS))},
                   {', '.join(f'CASE WHEN b.after IS NULL THEN m.{n} ELSE b.after.{n} END AS was_{n}' for n in fields)}
            FROM todo c JOIN memories m ON m.id = c.id LEFT JOIN base b ON b.memory_id = c.id
        ), deltas AS (
            SELECT *, list_filter(list_distinct(in_tags), x -> NOT list_contains(coalesce(was_tags, []::VARCHAR[]), x))
                          AS tags_added,
                      list_filter(coalesce(was_tags, []::VARCHAR[]), x -> NOT list_contains(in_tags, x)) AS tags_removed
            FROM sides
        ), changes AS (
            SELECT *, {', '.join(f'{sql[n][0]} AS chg_{n}' for n in fields)} FROM deltas
        ), verdicts AS (
            SELECT *, {', '.join(f'{sql[n][1]} AS cf_{n}' for n in fields)} FROM changes
        ), merged AS (
            SELECT line, c_operator, c_trace_id, c_updated_at, c_content_hash, c_last_accessed_at, c_status,
                   base_version, guard,
                   {', '.join(f'm_{n}' for n in schema.MEMORY_COLUMNS)},
                   {', '.join(f'{sql[n][2]} AS {n}' for n in fields)},
                   {', '.join(counters)},
                   list_filter([{', '.join(conflict_items)}], x -> x IS NOT NULL) AS conflict_items
            FROM verdicts
        )
        SELECT *, m_id AS id, list_filter([{changed}], x -> x IS NOT NULL) AS changed_fields,
               greatest(m_last_accessed_at, coalesce(c_last_accessed_at, m_last_accessed_at)) AS last_accessed_at
        FROM merged
        """
    )
    final = {
        "id": "m_id", "tenant": "m_tenant", "created_at": "m_created_at",
        "published_at": "m_published_at", "publish_meta": "m_publish_meta",
        "content_hash": "CASE WHEN list_contains(changed_fields, 'content') THEN c_content_hash ELSE m_content_hash END",
        "updated_at": "CASE WHEN versioned THEN greatest(m_updated_at, coalesce(c_updated_at, $as_of)) ELSE m_updated_at END",
        "version": "m_version + CASE WHEN versioned THEN 1 ELSE 0 END",
        "operator": "CASE WHEN versioned THEN c_operator ELSE m_operator END",
        "trace_id": "CASE WHEN versioned THEN c_trace_id ELSE m_trace_id END",
        # a write that changes a merged memory's content makes it a memory of its own again
        # (else the new text would stay hidden behind its canonical memory)
        "merged_into": "CASE WHEN revived THEN NULL ELSE m_merged_into END",
        "status": "CASE WHEN conflicted THEN 'conflicted' WHEN revived AND status = 'merged' THEN 'active' "
                  "WHEN woken THEN 'active' ELSE status END",
        # a write is a use: the memory an agent just rewrote is not "unused for 60 days" tonight
        "last_accessed_at": "CASE WHEN versioned THEN greatest(last_accessed_at, least(coalesce(c_updated_at, $as_of), $as_of)) "
                            "ELSE last_accessed_at END",
    }
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE merge_final AS
        SELECT {', '.join(f'{final.get(c, c)} AS {c}' for c in schema.MEMORY_COLUMNS)},
               line, versioned, conflicted, revived, m_merged_into,
               CASE WHEN revived THEN list_concat(changed_fields, ['merged_into', 'status'])
                    WHEN woken THEN list_concat(changed_fields, ['status']) ELSE changed_fields END AS changed_fields,
               conflict_items, guard, base_version,
               CASE WHEN revived THEN 'active' ELSE m_status END AS m_status, m_operator, m_trace_id, m_version,
               c_operator, c_trace_id,
               {row_image('x', 'm_')} AS before
        FROM (SELECT *, len(changed_fields) > 0 AS versioned, len(conflict_items) > 0 AS conflicted,
                     m_status = 'merged' AND list_contains(changed_fields, 'content') AS revived,
                     -- a dormant memory written to again is in use (as a search's access wakes it)
                     -- (unless the write itself says dormant)
                     len(changed_fields) > 0 AND len(conflict_items) = 0 AND m_status = 'dormant'
                         AND status = 'dormant' AND c_status IS NULL AS woken
              FROM merge_changed) x
        WHERE versioned OR conflicted OR access_count <> m_access_count OR reference_count <> m_reference_count
              OR last_accessed_at <> m_last_accessed_at
        """,
        {"as_of": params["as_of"]},
    )
    # a record that only moves usage counters changes no field: unchanged (so every record is counted)
    changes, updated, conflicted, revived, unchanged = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE versioned), count(*) FILTER (WHERE conflicted), "
        "count(*) FILTER (WHERE revived), "
        "(SELECT count(*) FROM merge_changed) - count(*) FILTER (WHERE versioned OR conflicted) FROM merge_final"
    ).fetchone()
    # The statements below change nothing without their rows; skipped, they cost nothing either
    # (planning them is most of a small file's ingest).
    if changes:
        assignments = ", ".join(f"{c} = f.{c}" for c in schema.MEMORY_COLUMNS if c != "id")
        con.execute(f"UPDATE memories SET {assignments} FROM merge_final f WHERE memories.id = f.id")
        seq = next_history_seq(con)  # rows up to here are the lake's side; this merge's own come after
        con.execute(
            f"""
            INSERT INTO memory_history ({HISTORY_COLUMNS})
            SELECT $seq + line, id, tenant, version,
                   CASE WHEN versioned THEN 'update' WHEN conflicted THEN 'conflict' ELSE 'usage' END,
                   CASE WHEN versioned THEN changed_fields
                        WHEN conflicted THEN ['status']
                        ELSE ['access_count', 'reference_count', 'last_accessed_at'] END,
                   CASE WHEN versioned THEN operator ELSE 'system' END, $run_id,
                   CASE WHEN versioned AND conflicted THEN 'snapshot; conflict on '
                             || array_to_string(list_transform(conflict_items, x -> x.field), ', ')
                        WHEN revived THEN 'snapshot; content changed: no longer merged into ' || m_merged_into
                        WHEN versioned THEN 'snapshot'
                        WHEN conflicted THEN 'conflict on ' || array_to_string(list_transform(conflict_items, x -> x.field), ', ')
                             || ' (based on version ' || base_version || ')'
                        ELSE 'usage counters from snapshot' END,
                   $as_of, before, {row_image('f')}, $label, line, c_trace_id
            FROM merge_final f
            """,
            {**params, "seq": seq},
        )
    if revived:
        con.execute("UPDATE dedup_merges SET unmerged_at = $as_of, unmerged_by = $by FROM merge_final f "
                    "WHERE f.revived AND dedup_merges.member_id = f.id AND dedup_merges.unmerged_at IS NULL",
                    {"as_of": params["as_of"], "by": schema.UNMERGED_BY_WRITE})
    # The lake's side of a conflict is whoever last changed that field (a rule's move: system),
    # from the history images; the memory's last writer when the history shows no change.
    if conflicted:
        field_changed = " ".join(f"WHEN '{n}' THEN h.before.{n} IS DISTINCT FROM h.after.{n}"
                                 for n in schema.VERSIONED_FIELDS)
        con.execute(
            f"""
            INSERT INTO conflicts
            WITH items AS (
                SELECT *, unnest(conflict_items) AS item FROM merge_final WHERE conflicted
            ), changers AS (
                SELECT i.id, i.item.field AS field,
                       arg_max(struct_pack(operator := h.operator, trace_id := h.trace_id), h.seq) AS w
                FROM items i JOIN memory_history h ON h.memory_id = i.id
                WHERE h.seq <= $seq AND h.before IS NOT NULL AND h.after IS NOT NULL
                  AND CASE i.item.field {field_changed} ELSE false END
                GROUP BY ALL
            )
            SELECT substr(md5(i.id || ':' || i.item.field || ':' || $label || ':' || line), 1, 16),
                   CASE WHEN guard THEN 'important' ELSE 'write' END, 'open', tenant, i.id, NULL, i.item.field,
                   base_version, m_version, i.item.base, i.item.lake, i.item.incoming,
                   CASE WHEN c.w IS NULL THEN m_operator ELSE c.w.operator END, c_operator,
                   CASE WHEN c.w IS NULL THEN m_trace_id ELSE c.w.trace_id END, c_trace_id, m_status, $label, line,
                   $as_of, $run_id, NULL, NULL, NULL, NULL, NULL
            FROM items i LEFT JOIN changers c ON c.id = i.id AND c.field = i.item.field
            """,
            {**params, "seq": seq},
        )
    con.execute("DROP TABLE merge_final; DROP TABLE merge_changed")
    return updated, unchanged, conflicted


def _apply_forgets(con: duckdb.DuckDBPyConnection, params: dict) -> int:
    from .forget import forget_memories
    requests = con.execute(
        "SELECT id, operator, coalesce(forget_reason, 'forget request') AS reason, line "
        "FROM merge_checked WHERE is_forget ORDER BY line"
    ).pl()
    if requests.height == 0:
        return 0
    return forget_memories(con, requests, as_of=params["as_of"], run_id=params["run_id"], source=params["label"])
