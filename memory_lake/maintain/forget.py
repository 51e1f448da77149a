"""Forget, the user's entry point (seed 003, user self-service forgetting; DESIGN "Forget reaches
everything"): ``forget`` resolves ids or a scope, refuses important memories unless the operator
is ``user``, and queues the request in ``inbox/decisions/`` when another process holds the lake
(``decisions.apply_decisions`` applies it first in the next run).

The writing itself (tombstones, every registered scrubber, the compaction of the database file) is
`memory_lake.ingest.forget`, which ingest also uses for a snapshot record with ``deleted: true``.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import duckdb
import polars as pl

from ..store import schema
from ..store import iso, resolve_as_of
from ..store import InputError, LakeBusy, write_wait_s
from ..store import CRASH_AT_ENV, crash_point, transaction  # noqa: F401 (CRASH_AT_ENV: tests)
from ..store import file_scrubbers, scrubbers  # noqa: F401 (tests audit the registry here)
from ..ingest import (IMPORTANT_NEEDS_USER, FORGET_WAIT_S, MERGED_MEMBERS_SQL, MERGED_REASON as _MERGED_REASON, compact_database,
                      compaction_owed, forget_memories, forgotten_ids, scrub_files)
from ..text import redact_text


def forget(lake, *, ids: Sequence[str] | str | None = None, tenant: str | None = None, agent: str | None = None,
           user: str | None = None, operator: str = "user", reason: str | None = None,
           as_of: datetime | str | None = None, run_id: str | None = None, source: str | None = None,
           scrub: bool = True, compact: bool = True, record: bool = True,
           wait_s: float | None = None) -> dict[str, Any]:
    """Forget memories by id, or every memory of a scope, everywhere the lake holds their text.

    Targets: the given `ids` (narrowed to `tenant` / `agent` / `user` when given: an id outside
    them counts as unknown), or, without ids, every memory of the scope that is not deleted yet
    (`tenant` required; `agent` and `user` narrow it), and with them every memory dedup merged into
    one (a near-copy of its text). An important memory is forgotten only by operator ``user``;
    otherwise it is refused, and the rest proceed. The tombstones, their history rows (id, content
    hash, operator, time, reason; no text), the table scrubbers and a ``pending_compactions`` row
    commit in one transaction; then the files are scrubbed (``scrub_files``, also for ids that were
    already deleted, so a second forget finishes an interrupted one) and the database file
    compacted, as is any compaction an interrupted forget still owes.

    Returns ``{"run_id", "forgotten", "refused": [{"id", "reason"}], "already_deleted", "unknown",
    "files"}``, plus ``"compaction": "done" | "pending"`` when a compaction was owed (pending
    inside a run of this process, which compacts after its hold; see ``compact_database``). When
    another process holds the lake, the request is queued instead and the result is
    ``{"queued": path}`` (applied first by the next run, see ``decisions.apply_decisions``).
    `source` names the request in history (a decision file); `scrub`, `compact` and `record` (a
    ``runs`` row) let a batch of forgets do those once. `wait_s`: how long to wait for a finishing
    reader before queueing; $MEMORY_LAKE_WAIT_S, else FORGET_WAIT_S (10 s).
    """

    wait_s = write_wait_s(FORGET_WAIT_S) if wait_s is None else wait_s
    as_of = resolve_as_of(as_of)
    ids = _check_request(ids, tenant, operator, reason)
    if not lake.held_here() and lake.is_busy():
        return _queue(lake, ids, tenant, agent, user, operator, reason, as_of)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(lake.hold("forget", wait_s=wait_s))
        except LakeBusy:
            return _queue(lake, ids, tenant, agent, user, operator, reason, as_of)
        run_id = run_id or lake.new_run_id("forget", as_of)
        with lake.writer(purpose="forget") as con:
            targets = _resolve_targets(con, ids, tenant, agent, user, operator)
            todo = targets.filter(pl.col("outcome") == "forget")
            result = {
                "run_id": run_id,
                "forgotten": todo["id"].to_list(),
                "refused": [{"id": i, "reason": IMPORTANT_NEEDS_USER}
                            for i in targets.filter(pl.col("outcome") == "refused")["id"].to_list()],
                "already_deleted": targets.filter(pl.col("outcome") == "already_deleted")["id"].to_list(),
                "unknown": targets.filter(pl.col("outcome") == "unknown")["id"].to_list(),
            }
            with transaction(con):
                if todo.height:
                    # the reason is free text: kept in history, redacted like everything on disk,
                    # with each memory's tenant salt (one e-mail, one placeholder in a tenant)
                    tenants = sorted(set(todo["tenant"].drop_nulls()))
                    said = {t: redact_text(reason, salt) for t, salt in lake.tenant_salts(tenants).items()}
                    todo = todo.with_columns(said=pl.col("tenant").fill_null("").replace_strict(said))
                    requests = todo.select("id", operator=pl.lit(operator), reason=pl.when(
                        pl.col("canonical").is_null()).then(pl.col("said")).otherwise(
                        pl.format(_MERGED_REASON, pl.col("canonical"), pl.col("said"))))
                    forget_memories(con, requests, as_of=as_of, run_id=run_id, source=source)
                if record:
                    # ids and counts only: the reason is the requester's text and stays in history
                    report = {k: result[k] for k in ("forgotten", "already_deleted", "unknown")}
                    report["refused"] = [r["id"] for r in result["refused"]]
                    con.execute("INSERT INTO runs VALUES (?, 'forget', ?, 'ok', ?, ?)",
                                [run_id, as_of, time.monotonic() - started, json.dumps(report)])
            crash_point("forget:committed")  # a test kills here: the next command finishes the scrub
            # with the summaries forgotten along (forget_memories adds them)
            scrubbed = sorted(set(result["forgotten"] + result["already_deleted"])
                              | set(forgotten_ids(con, run_id=run_id)))
            result["files"] = (scrub_files(lake, scrubbed, as_of=as_of, run_id=run_id, con=con)
                               if scrub and scrubbed else {})
            owed = compaction_owed(con)
    # after the hold: its shared connection is closed only when the hold ends; a compaction an
    # earlier, interrupted forget still owes is done here too
    if compact and owed:
        done = compact_database(lake, wait_s=wait_s)
        result["files"]["database"] = [lake.db_path.name] if done else []
        result["compaction"] = "done" if done else "pending"
    return result


def _check_request(ids, tenant, operator, reason) -> list[str] | None:
    if isinstance(ids, str):
        ids = [ids]
    if ids is not None:
        ids = [str(i) for i in ids]
        if not ids:
            ids = None
    if ids is None and not tenant:
        raise InputError("forget needs memory ids, or a tenant (optionally with an agent and a user)")
    if operator not in schema.OPERATORS:
        raise InputError(f"operator must be one of {', '.join(schema.OPERATORS)}, not {operator!r}")
    if not isinstance(reason, str) or not reason.strip():
        raise InputError("forget needs a reason (it is kept in the audit history)")
    return ids


def _queue(lake, ids, tenant, agent, user, operator, reason, as_of: datetime) -> dict[str, str]:
    from .queue import queue_decision

    decision = {"kind": "forget", "ids": ids, "tenant": tenant, "agent": agent, "user": user,
                "operator": operator, "reason": reason, "requested_at": iso(as_of)}
    return {"queued": str(queue_decision(lake, decision, as_of))}


def _resolve_targets(con: duckdb.DuckDBPyConnection, ids: list[str] | None, tenant, agent, user,
                     operator: str) -> pl.DataFrame:
    """(id, outcome, canonical) per target, ordered by id: outcome forget | refused | already_deleted |
    unknown; `canonical` names the forgotten memory a target was merged into (it goes with it), or
    is null for a memory asked for."""
    params = {"tenant": tenant, "agent": agent, "user": user, "operator": operator}
    scope = ("($tenant::VARCHAR IS NULL OR m.tenant = $tenant) AND ($agent::VARCHAR IS NULL OR m.agent_id = $agent) "
             "AND ($user::VARCHAR IS NULL OR m.user_id = $user)")
    outcome = """CASE WHEN m.id IS NULL THEN 'unknown' WHEN m.status = 'deleted' THEN 'already_deleted'
                      WHEN m.tier = 'important' AND $operator <> 'user' THEN 'refused' ELSE 'forget' END"""
    if ids is not None:
        params["ids"] = ids
        asked = "SELECT DISTINCT unnest($ids::VARCHAR[]) AS id, NULL::VARCHAR AS canonical"
    else:
        asked = f"SELECT m.id, NULL::VARCHAR AS canonical FROM memories m WHERE {scope} AND m.status <> 'deleted'"
    # members of a refused memory stay with it
    seeds = (f"SELECT m.id FROM ({asked}) a JOIN memories m ON m.id = a.id AND {scope} "
             "WHERE m.tier <> 'important' OR $operator = 'user'")
    query = f"""
        WITH asked AS ({asked}),
        targets AS (
            SELECT id, canonical FROM asked
            UNION ALL
            SELECT id, canonical FROM ({MERGED_MEMBERS_SQL.format(seed=seeds)}) WHERE id NOT IN (SELECT id FROM asked)
        )
        SELECT t.id, {outcome} AS outcome, t.canonical, m.tenant
        FROM targets t LEFT JOIN memories m ON m.id = t.id AND {scope}
        ORDER BY t.id
    """
    return con.execute(query, params).pl()
