"""Applying and undoing dedup merges (seed 004; seed 000: 等待用户确认): `_apply_merges`, `unmerge`.

**Merge.** The canonical memory takes the union of the tags, the sum of the access and reference
counts, the max importance, the earliest created_at and the latest last_accessed_at; the others get
``merged_into`` and status ``merged`` (they are not deleted; search, publish, health and the tier
rules skip them; forget still reaches them). A merge is a system move: no version bump, a
``memory_history`` row (change ``merge``) per memory with its before image, a ``dedup_merges`` row
per member, and the cleanup log. ``unmerge(canonical)`` restores the whole cluster exactly from
those before images (the status too); the pairs it separates are never merged again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl

from ...store import schema, iso, resolve_as_of, NotApplicable, HISTORY_COLUMNS, next_history_seq, row_image


def _apply_merges(con, merges: pl.DataFrame, as_of: datetime, run_id: str, log_lines: list[str]) -> None:
    con.register("dedup_plan", merges)
    try:
        con.execute(
            """
            CREATE OR REPLACE TEMP TABLE dedup_rows AS
            SELECT DISTINCT cluster, canonical, canonical AS id, 'canonical' AS role, NULL AS pass, NULL::DOUBLE AS score
            FROM dedup_plan
            UNION ALL SELECT cluster, canonical, member, 'member', pass, score FROM dedup_plan
            """)
        con.execute("CREATE OR REPLACE TEMP TABLE dedup_before AS SELECT m.* FROM memories m JOIN dedup_rows r USING (id)")
        con.execute(
            """
            CREATE OR REPLACE TEMP TABLE dedup_canonical AS
            SELECT r.canonical AS id,
                   list_sort(list_distinct(flatten(list(coalesce(m.tags, []::VARCHAR[]))))) AS tags,
                   sum(m.access_count) AS access_count, sum(m.reference_count) AS reference_count,
                   max(m.importance) AS importance, min(m.created_at) AS created_at,
                   max(m.last_accessed_at) AS last_accessed_at
            FROM dedup_rows r JOIN memories m USING (id) GROUP BY r.canonical
            """)
        con.execute(
            """
            UPDATE memories SET tags = c.tags, access_count = c.access_count, reference_count = c.reference_count,
                   importance = c.importance, created_at = c.created_at, last_accessed_at = c.last_accessed_at,
                   updated_at = greatest(memories.updated_at, c.created_at)
            FROM dedup_canonical c WHERE memories.id = c.id
            """)
        con.execute("UPDATE memories SET merged_into = p.canonical, status = 'merged' FROM dedup_plan p "
                    "WHERE memories.id = p.member")
        seq = next_history_seq(con)
        con.execute(
            f"""
            INSERT INTO memory_history ({HISTORY_COLUMNS})
            SELECT $seq + row_number() OVER (ORDER BY r.cluster, r.role, r.id), m.id, m.tenant, m.version, 'merge',
                   CASE WHEN r.role = 'canonical'
                        THEN ['tags', 'access_count', 'reference_count', 'importance', 'created_at', 'last_accessed_at']
                        ELSE ['merged_into', 'status'] END,
                   'system', $run_id,
                   'dedup ' || coalesce(r.pass, 'cluster') || ': cluster ' || r.cluster || ' into ' || r.canonical,
                   $as_of, {row_image('b')}, {row_image('m')}, 'dedup', NULL, m.trace_id
            FROM dedup_rows r JOIN memories m USING (id) JOIN dedup_before b USING (id)
            """,
            {"seq": seq, "run_id": run_id, "as_of": as_of})
        con.execute(
            """
            INSERT INTO dedup_merges
            SELECT p.cluster, p.canonical, p.member, p.pass, p.score, $run_id, $as_of, NULL, NULL FROM dedup_plan p
            """, {"run_id": run_id, "as_of": as_of})
        con.execute(
            """
            INSERT INTO cleanup_log
            SELECT m.id, m.tenant, m.agent_id, m.user_id, m.tier, m.tier, b.status, m.status, 'dedup_' || p.pass, $run_id, $as_of
            FROM dedup_plan p JOIN memories m ON m.id = p.member JOIN dedup_before b ON b.id = p.member
            """, {"run_id": run_id, "as_of": as_of})
        lines = con.execute(
            "SELECT concat_ws(' ', ?, ?, 'dedup_' || pass, member, 'merged into', canonical) FROM dedup_plan "
            "ORDER BY cluster, member", [iso(as_of), run_id]).fetchall()
        log_lines.extend(line for (line,) in lines)
        con.execute("DROP TABLE dedup_rows; DROP TABLE dedup_before; DROP TABLE dedup_canonical")
    finally:
        con.unregister("dedup_plan")


def unmerge(lake, canonical_id: str, *, operator: str = "user", as_of: datetime | str | None = None,
            run_id: str | None = None, source: str | None = None) -> dict[str, Any]:
    """Undo the latest dedup merge into `canonical_id`: every memory of that cluster gets back what
    the merge changed (status, merged_into; the kept one's tags, counters, importance, dates) unless
    an edit changed it since, which stays (the version never goes back), and the pairs are never
    merged again; one with a write or
    important conflict still open stays ``conflicted`` (seed 000: 等待用户确认) and returns to its
    restored status when that is resolved. Queued in ``inbox/decisions/`` while another process
    holds the lake (``{"queued": path}``)."""
    from ..queue import apply_or_queue

    as_of = resolve_as_of(as_of)
    decision = {"kind": "unmerge", "canonical_id": canonical_id, "operator": operator, "requested_at": iso(as_of)}
    run_id = run_id or lake.new_run_id("unmerge", as_of)
    return apply_or_queue(lake, decision, as_of, lambda con: _unmerge(con, canonical_id, operator, as_of, run_id,
                                                                      source or f"unmerge {canonical_id}"))


def _unmerged_value(column: str) -> str:
    """SET clause of `column` for unmerge: the value before the merge when the merge changed it and
    it still holds the merge's value; a counter minus what the merge added; else the current one."""
    changed = f"list_contains(i.fields, '{column}')"
    if column in schema.COUNTER_FIELDS:
        return (f"{column} = CASE WHEN {changed} THEN greatest(memories.{column} - (i.merged.{column} - "
                f"i.image.{column}), 0) ELSE memories.{column} END")
    return (f"{column} = CASE WHEN {changed} AND memories.{column} IS NOT DISTINCT FROM i.merged.{column} "
            f"THEN i.image.{column} ELSE memories.{column} END")


def _unmerge(con, canonical_id, operator, as_of, run_id, label) -> dict[str, Any]:
    if con.execute("SELECT 1 FROM memories WHERE id = ? AND status = 'deleted'", [canonical_id]).fetchone():
        # its members were forgotten with it, and history keeps no text to restore
        raise NotApplicable(f"{canonical_id} was forgotten (with the memories merged into it); a forgotten memory "
                            "cannot be unmerged")
    found = con.execute("SELECT cluster_id FROM dedup_merges WHERE canonical_id = ? AND unmerged_at IS NULL "
                        "ORDER BY as_of DESC, cluster_id LIMIT 1", [canonical_id]).fetchone()
    if not found:
        raise NotApplicable(f"{canonical_id} is not the canonical memory of a merge (see `memory-lake dedup --dry-run` "
                            "or the dedup_merges table)")
    (cluster,) = found
    members = [m for (m,) in con.execute("SELECT member_id FROM dedup_merges WHERE cluster_id = ? AND canonical_id = ? "
                                         "AND unmerged_at IS NULL ORDER BY member_id", [cluster, canonical_id]).fetchall()]
    ids = [canonical_id, *members]
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE unmerge_images AS
        SELECT memory_id AS id, arg_max(before, seq) AS image, arg_max(after, seq) AS merged,
               arg_max(changed_fields, seq) AS fields FROM memory_history
        WHERE change = 'merge' AND memory_id IN (SELECT unnest(?::VARCHAR[])) AND reason LIKE '%cluster ' || ? || ' into %'
          -- a memory forgotten since stays a tombstone: its image holds no text to give back
          AND memory_id NOT IN (SELECT id FROM memories WHERE status = 'deleted')
        GROUP BY memory_id
        """, [ids, cluster])
    restored = [i for (i,) in con.execute("SELECT id FROM unmerge_images ORDER BY id").fetchall()]
    con.execute("CREATE OR REPLACE TEMP TABLE unmerge_before AS SELECT m.* FROM memories m "
                "WHERE id IN (SELECT id FROM unmerge_images)")
    # Only what the merge changed goes back, and only where nothing changed it since: an edit made
    # after the merge (a user's tier, an agent's tags) stays, the version never goes back, and the
    # counters lose only what the merged memories brought.
    assignments = ", ".join(_unmerged_value(c) for c in schema.MEMORY_COLUMNS if c != "id")
    con.execute(f"UPDATE memories SET {assignments} FROM unmerge_images i WHERE memories.id = i.id")
    # A write or important conflict filed since the merge is still open: its memory stays
    # conflicted, and the status it returns to once resolved is the restored one, not `merged`.
    con.execute(
        """
        UPDATE conflicts SET lake_status = i.image.status FROM unmerge_images i
        WHERE conflicts.memory_id = i.id AND conflicts.status = 'open' AND conflicts.kind IN ('write', 'important')
          AND i.image.status <> 'conflicted'
        """)
    con.execute(
        """
        UPDATE memories SET status = 'conflicted'
        WHERE id IN (SELECT c.memory_id FROM conflicts c JOIN unmerge_images i ON i.id = c.memory_id
                     WHERE c.status = 'open' AND c.kind IN ('write', 'important'))
        """)
    con.execute(
        f"""
        INSERT INTO memory_history ({HISTORY_COLUMNS})
        SELECT ? + row_number() OVER (ORDER BY m.id), m.id, m.tenant, m.version, 'unmerge', NULL, ?, ?, ?, ?,
               {row_image('b')}, {row_image('m')}, ?, NULL, m.trace_id
        FROM memories m JOIN unmerge_before b USING (id)
        """,
        [next_history_seq(con), operator, run_id, f"unmerge cluster {cluster} of {canonical_id}", as_of, label])
    con.execute("UPDATE dedup_merges SET unmerged_at = ?, unmerged_by = ? WHERE cluster_id = ? AND canonical_id = ? "
                "AND unmerged_at IS NULL", [as_of, operator, cluster, canonical_id])
    restored = {i for (i,) in con.execute("SELECT id FROM unmerge_images").fetchall()}
    con.execute("DROP TABLE unmerge_images; DROP TABLE unmerge_before")
    return {"cluster": cluster, "canonical_id": canonical_id, "restored": [i for i in ids if i in restored],
            "run_id": run_id}
