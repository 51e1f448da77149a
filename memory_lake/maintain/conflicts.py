"""The conflict queue: disputed values wait here for a person (seed 000: 冲突时两者都记，标记冲突，等待用户确认).

Ingest's three-way merge (`memory_lake.ingest.merge`) files a ``conflicts`` row per field when two writers
changed the same field of a memory to different values, or when an agent changed an important
memory (kind ``important``: 仅可手动修改). The memory keeps the lake's value and the status
``conflicted`` until every open conflict on it is resolved:

* ``lake``: keep the lake's value;
* ``incoming``: take the disputed value;
* ``value``: set a value of the person's own (``--take value=TEXT``);
* ``both``: keep the lake's value here and the incoming one as a second memory (两者都记), a copy
  of this one with that field changed, id ``<memory id>~<first 8 of the conflict id>``.

A resolution is a user's write: the memory's version goes up by one, a ``memory_history`` row with
operator ``user`` records it (and an ``insert`` row for a second memory), the conflict row records
who took what, and the memory returns to the status it had before its first open conflict. While
another process holds the lake the resolution is queued in ``inbox/decisions/`` and the next run
applies it first (`decisions.apply_decisions`). Values a person types are redacted like ingest's.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import duckdb
import polars as pl

from ..store import register_scrubber, schema
from ..ingest import parse_field_value
from ..store import iso, resolve_as_of
from ..store import InputError, LakeBusy, NotApplicable
from ..store import HISTORY_COLUMNS, next_history_seq, row_image

TAKES = ("lake", "incoming", "both", "value")


# The other side(s) of every open contradiction, per memory: one row `(id, conflict_with)` where
# `conflict_with` is the sorted list of the ids this memory contradicts. Both sides get a row. Every
# place that hands a memory to an agent (export files, context.md, search results) joins this
# relation, so a known contradiction never reaches an agent unmarked. Use as a subquery or CTE.
CONTRADICTION_PARTNERS_SQL = """
    SELECT id, list(DISTINCT other_id ORDER BY other_id) AS conflict_with
    FROM (
        SELECT memory_id AS id, other_memory_id AS other_id FROM conflicts
        WHERE status = 'open' AND kind = 'contradiction' AND other_memory_id IS NOT NULL
        UNION ALL
        SELECT other_memory_id AS id, memory_id AS other_id FROM conflicts
        WHERE status = 'open' AND kind = 'contradiction' AND other_memory_id IS NOT NULL
    )
    GROUP BY id
"""


def list_conflicts(lake, *, tenant: str | None = None, status: str | None = "open") -> pl.DataFrame:
    """Conflicts (open ones by default), oldest first, with the memory's current version and status
    and what found each (`found_by`, as `conflicts list` shows it)."""
    where, params = [], []
    if tenant:
        where.append("c.tenant = ?")
        params.append(tenant)
    if status:
        where.append("c.status = ?")
        params.append(status)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    return lake.sql(
        f"""
        SELECT c.conflict_id, c.kind, c.status, c.tenant, c.memory_id, c.other_memory_id, c.field,
               c.base_version, c.lake_version, c.base_value, c.lake_value, c.incoming_value,
               c.lake_operator, c.incoming_operator, c.lake_trace_id, c.incoming_trace_id,
               c.source_file, c.source_line, c.created_at, c.resolved_at, c.resolution, c.resolved_by,
               c.resolved_value, c.new_memory_id, m.version AS memory_version, m.status AS memory_status,
               -- what found it: a snapshot by its file name and line, or the dedup pass and its reason
               CASE WHEN c.source_line IS NULL THEN c.source_file
                    ELSE regexp_extract(c.source_file, '([^/\\\\]+)$', 1) || ':' || c.source_line END AS found_by
        FROM conflicts c LEFT JOIN memories m ON m.id = c.memory_id
        {clause}
        ORDER BY c.created_at, c.source_file, c.source_line, c.field, c.conflict_id
        """,
        params,
    )


def parse_take(take: str) -> tuple[str, str | None]:
    """``lake`` | ``incoming`` | ``both`` | ``value=TEXT`` -> (take, text)."""
    text = str(take or "")
    if text.startswith("value="):
        return "value", text[len("value="):]
    if text not in TAKES or text == "value":
        raise InputError(f"--take must be lake, incoming, both or value=TEXT, not {take!r}")
    return text, None


def resolve_conflict(lake, conflict_id: str, take: str, *, value: str | None = None, operator: str = "user",
                     as_of: datetime | str | None = None, run_id: str | None = None,
                     source: str | None = None) -> dict[str, Any]:
    """Resolve one open conflict (see the module docstring); returns what was done.

    `take` is ``lake``, ``incoming``, ``both`` or ``value`` (with `value`), or ``value=TEXT``.
    Only a user resolves (seed 000: 等待用户确认). Unknown or already resolved ids raise
    InputError (NotApplicable). When another process holds the lake the result is
    ``{"queued": path}``, once the id is checked against the latest published version (a
    conflict that version does not hold, or holds as resolved, is refused, not queued).
    """
    from .queue import apply_or_queue

    as_of = resolve_as_of(as_of)
    if value is None and str(take).startswith("value="):
        take, value = parse_take(take)
    elif take not in TAKES:
        raise InputError(f"--take must be lake, incoming, both or value=TEXT, not {take!r}")
    if take == "value" and value is None:
        raise InputError("--take value needs the value: --take value=TEXT")
    if operator != "user":
        raise InputError(f"conflicts are resolved by a user (operator user), not {operator!r}")
    decision = {"kind": "resolve", "conflict_id": conflict_id, "take": take, "value": value,
                "operator": operator, "requested_at": iso(as_of)}
    run_id = run_id or lake.new_run_id("resolve", as_of)
    return apply_or_queue(lake, decision, as_of,
                          lambda con: _resolve(lake, con, conflict_id, take, value, operator, as_of, run_id, source),
                          check=lambda: _check_published(lake, conflict_id, take, value))


def _check_published(lake, conflict_id: str, take: str, value: str | None) -> None:
    """Before a resolution is queued: the latest published version must hold the conflict, open,
    and a typed value must suit its field. Nothing published yet: the next run checks it."""
    try:
        with lake.reading() as (con, source, _note):
            found = con.execute("SELECT * FROM conflicts WHERE conflict_id = ?", [conflict_id]).pl()
    except (LakeBusy, duckdb.CatalogException):
        return
    if found.height == 0:
        where = "the lake holds" if source == "live" else (
            f"the lake is busy (a run holds it), and {source}, the latest published version, holds")
        raise NotApplicable(f"unknown conflict id {conflict_id!r}: {where} no such conflict; see "
                            "`memory-lake conflicts list --all`, or try again when the run ends")
    conflict = found.row(0, named=True)
    if conflict["status"] != "open":
        raise NotApplicable(_resolved_message(conflict))
    if take == "value":
        parse_field_value(conflict["field"], value, b"validation-only")


def _resolved_message(conflict: dict[str, Any]) -> str:
    """Why a closed conflict cannot be resolved again: when, how and by whom it was closed."""
    when = iso(conflict["resolved_at"])
    if conflict["resolution"] == "forgotten":
        return (f"conflict {conflict['conflict_id']} is already resolved: closed when its memory was forgotten "
                f"(by {conflict['resolved_by']} at {when}); nothing is left to decide")
    return (f"conflict {conflict['conflict_id']} is already resolved ({conflict['resolution']} by "
            f"{conflict['resolved_by']} at {when}); see `memory-lake conflicts list --all`")


def _resolve(lake, con, conflict_id, take, value, operator, as_of, run_id, source) -> dict[str, Any]:
    found = con.execute("SELECT * FROM conflicts WHERE conflict_id = ?", [conflict_id]).pl()
    if found.height == 0:
        raise NotApplicable(f"unknown conflict id {conflict_id!r}: the lake holds no such conflict "
                            "(see `memory-lake conflicts list --all`)")
    conflict = found.row(0, named=True)
    if conflict["status"] != "open":
        raise NotApplicable(_resolved_message(conflict))
    forgotten = con.execute("SELECT id FROM memories WHERE id IN (?, ?) AND status = 'deleted' ORDER BY id",
                            [conflict["memory_id"], conflict["other_memory_id"]]).fetchall()
    if forgotten:
        raise NotApplicable(f"conflict {conflict_id} cannot be resolved: memory {forgotten[0][0]} was forgotten")
    if conflict["kind"] == "contradiction":
        return _resolve_contradiction(lake, con, conflict, take, value, operator, as_of, run_id, source)
    memory_id, field, tenant = conflict["memory_id"], conflict["field"], conflict["tenant"]
    if take == "value":
        salt = lake.tenant_salts([tenant])[tenant]
        new_value = parse_field_value(field, value, salt)
    elif take == "incoming":
        new_value = json.loads(conflict["incoming_value"])
    else:
        new_value = None  # lake / both: the memory keeps its value
    # The status the memory had before its first open conflict; it returns there when none is left.
    (restore,) = con.execute(
        "SELECT coalesce(arg_min(lake_status, (created_at, source_line, conflict_id)), 'active') FROM conflicts "
        "WHERE memory_id = ? AND status = 'open'", [memory_id]).fetchone()
    (others,) = con.execute("SELECT count(*) FROM conflicts WHERE memory_id = ? AND status = 'open' "
                            "AND conflict_id <> ?", [memory_id, conflict_id]).fetchone()
    if others and restore != "conflicted":
        # the conflicts still open were filed while the memory was conflicted: hand them the status
        # it had before its first one, so it returns there (dormant, say) whichever is resolved last
        con.execute("UPDATE conflicts SET lake_status = ? WHERE memory_id = ? AND status = 'open' "
                    "AND conflict_id <> ? AND lake_status = 'conflicted'", [restore, memory_id, conflict_id])
    sets = {}
    if take in ("incoming", "value"):
        sets[field] = new_value
    sets["status"] = "conflicted" if others else ("active" if restore == "conflicted" else restore)
    label = source or f"resolve {conflict_id}"
    reason = f"conflict {conflict_id} on {field} resolved: {take}"
    _update(con, memory_id, sets, operator=operator, as_of=as_of, run_id=run_id, reason=reason, label=label)
    new_memory_id = None
    if take == "both":
        new_memory_id = f"{memory_id}~{conflict_id[:8]}"
        _insert_copy(con, memory_id, new_memory_id, field, json.loads(conflict["incoming_value"]),
                     status=restore if restore not in ("conflicted", "merged") else "active", operator=operator,
                     trace_id=conflict["incoming_trace_id"], as_of=as_of, run_id=run_id, reason=reason, label=label)
    resolved_value = conflict["lake_value"] if take in ("lake", "both") else json.dumps(_jsonable(new_value),
                                                                                       ensure_ascii=False)
    con.execute(
        "UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = ?, resolved_by = ?, "
        "resolved_value = ?, new_memory_id = ? WHERE conflict_id = ?",
        [as_of, take, operator, resolved_value, new_memory_id, conflict_id])
    (version, status) = con.execute("SELECT version, status FROM memories WHERE id = ?", [memory_id]).fetchone()
    return {"conflict_id": conflict_id, "memory_id": memory_id, "field": field, "take": take, "version": version,
            "status": status, "new_memory_id": new_memory_id, "open_left": others, "run_id": run_id}


def _resolve_contradiction(lake, con, conflict, take, value, operator, as_of, run_id, source) -> dict[str, Any]:
    """Two similar memories dedup would not merge: ``lake`` or ``both`` keeps both as they are;
    ``incoming`` keeps the other one and archives this one; ``value=TEXT`` sets this one's content
    and archives the other."""
    first, second = conflict["memory_id"], conflict["other_memory_id"]
    label = source or f"resolve {conflict['conflict_id']}"
    reason = f"contradiction {conflict['conflict_id']} resolved: {take}"
    archived = content = None
    if take == "incoming":
        archived = first
        _update(con, first, {"status": "archived"}, operator=operator, as_of=as_of, run_id=run_id, reason=reason,
                label=label)
    elif take == "value":
        salt = lake.tenant_salts([conflict["tenant"]])[conflict["tenant"]]
        content = parse_field_value("content", value, salt)  # redacted: the conflict row records it too
        _update(con, first, {"content": content}, operator=operator, as_of=as_of,
                run_id=run_id, reason=reason, label=label)
        archived = second
        _update(con, second, {"status": "archived"}, operator=operator, as_of=as_of, run_id=run_id, reason=reason,
                label=label)
    con.execute(
        "UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = ?, resolved_by = ?, "
        "resolved_value = ? WHERE conflict_id = ?",
        [as_of, take, operator, json.dumps(content, ensure_ascii=False) if take == "value" else None,
         conflict["conflict_id"]])
    (version, status), (other_version, other_status) = (
        con.execute("SELECT version, status FROM memories WHERE id = ?", [i]).fetchone() for i in (first, second))
    return {"conflict_id": conflict["conflict_id"], "memory_id": first, "other_memory_id": second, "field": "content",
            "take": take, "archived": archived, "new_memory_id": None, "version": version, "status": status,
            "other_version": other_version, "other_status": other_status, "open_left": 0, "run_id": run_id}


def _jsonable(value: Any) -> Any:
    return iso(value) if isinstance(value, datetime) else value


def _sql_value(field: str, value: Any) -> tuple[str, Any]:
    """(SQL expression with one parameter, parameter) that sets `field` to `value`."""
    kind = schema.MEMORY_COLUMNS[field].replace(" NOT NULL", "")
    if field == "extra":
        return "CAST(? AS JSON)", None if value is None else json.dumps(value, ensure_ascii=False)
    return f"CAST(? AS {kind})", value


def _content_hash(con, content: str) -> str:
    from ..text import normalise_content

    norm = pl.select(normalise_content(pl.lit(content))).item()
    return con.execute("SELECT sha256(?)", [norm]).fetchone()[0]


def _update(con, memory_id: str, sets: dict[str, Any], *, operator: str, as_of: datetime, run_id: str,
            reason: str, label: str) -> None:
    """A user's versioned write of `sets` to one memory, with its history row."""
    assignments, params = [], []
    for field, value in sets.items():
        sql, param = _sql_value(field, value)
        assignments.append(f"{field} = {sql}")
        params.append(param)
    if "content" in sets:
        assignments.append("content_hash = ?")
        params.append(_content_hash(con, sets["content"]))
    con.execute("CREATE OR REPLACE TEMP TABLE resolve_before AS SELECT * FROM memories WHERE id = ?", [memory_id])
    con.execute(
        f"UPDATE memories SET {', '.join(assignments)}, version = version + 1, operator = ?, "
        f"updated_at = greatest(updated_at, ?) WHERE id = ?", [*params, operator, as_of, memory_id])
    con.execute(
        f"""
        INSERT INTO memory_history ({HISTORY_COLUMNS})
        SELECT ?, m.id, m.tenant, m.version, 'update', ?, ?, ?, ?, ?, {row_image('b')}, {row_image('m')}, ?, NULL, m.trace_id
        FROM memories m JOIN resolve_before b USING (id)
        """,
        [next_history_seq(con) + 1, sorted(sets), operator, run_id, reason, as_of, label])
    con.execute("DROP TABLE resolve_before")


def _insert_copy(con, memory_id: str, new_id: str, field: str, value: Any, *, status: str, operator: str,
                 trace_id: str | None, as_of: datetime, run_id: str, reason: str, label: str) -> None:
    """A second memory: a copy of `memory_id` whose `field` is `value` (resolution "both")."""
    if con.execute("SELECT 1 FROM memories WHERE id = ?", [new_id]).fetchone():
        raise InputError(f"memory {new_id} exists already")
    sql, param = _sql_value(field, value)
    replace = {field: sql, "id": "?", "version": "1", "status": "?", "operator": "?", "trace_id": "?",
               "created_at": "?", "updated_at": "?", "last_accessed_at": "?", "access_count": "0",
               "reference_count": "0", "merged_into": "NULL", "published_at": "NULL", "publish_meta": "NULL"}
    params = {field: param, "id": new_id, "status": status, "operator": operator, "trace_id": trace_id,
              "created_at": as_of, "updated_at": as_of, "last_accessed_at": as_of}
    if field == "content":
        replace["content_hash"] = "?"
        params["content_hash"] = _content_hash(con, value)
    columns = list(schema.MEMORY_COLUMNS)
    select = ", ".join(replace.get(c, c) for c in columns)
    ordered = [params[c] for c in columns if c in params and "?" in replace.get(c, "")]
    con.execute(f"INSERT INTO memories SELECT {select} FROM memories WHERE id = ?", [*ordered, memory_id])
    con.execute(
        f"""
        INSERT INTO memory_history ({HISTORY_COLUMNS})
        SELECT ?, m.id, m.tenant, m.version, 'insert', NULL, ?, ?, ?, ?, NULL, {row_image('m')}, ?, NULL, m.trace_id
        FROM memories m WHERE m.id = ?
        """,
        [next_history_seq(con) + 1, operator, run_id, reason, as_of, label, new_id])


# ---------------------------------------------------------------- forget (store.registry)
@register_scrubber("conflicts")
def _scrub_conflicts(con: duckdb.DuckDBPyConnection) -> None:
    # Every value of a conflict on a forgotten memory is its text (or, for a contradiction, the
    # other side's, which stays in that memory): all go. An open one is closed as ``forgotten``:
    # nothing is left to decide, and the other side of a contradiction stays as it is.
    con.execute(
        """
        UPDATE conflicts SET base_value = NULL, lake_value = NULL, incoming_value = NULL, resolved_value = NULL,
               status = 'resolved',
               resolution = CASE WHEN conflicts.status = 'open' THEN 'forgotten' ELSE conflicts.resolution END,
               resolved_at = CASE WHEN conflicts.status = 'open' THEN f.as_of ELSE conflicts.resolved_at END,
               resolved_by = CASE WHEN conflicts.status = 'open' THEN f.operator ELSE conflicts.resolved_by END
        FROM (SELECT c.conflict_id, max(f.as_of) AS as_of, min(f.operator) AS operator
              FROM conflicts c JOIN forget_ids f ON f.id = c.memory_id OR f.id = c.other_memory_id
              GROUP BY c.conflict_id) f
        WHERE conflicts.conflict_id = f.conflict_id
        """
    )


