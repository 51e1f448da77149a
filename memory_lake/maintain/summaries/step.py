"""The nightly ``summarize`` step of seed 000 "自动摘要生成与质量评估" (after dedup) and its gate (DESIGN
"Summaries and their quality": a summary that fails stays unpublished; the previous one is kept).

A scope's or session's summary is regenerated only when the hash of its sources (ids and content
hashes, plus the budget) changed. One that passes all four thresholds is published as a memory of
type ``summary``, tier ``long_term``, operator ``system``, linked to its sources (``extra.summary_of``
and the ``summary_sources`` table, which keeps every source a summary ever drew on). One that fails
is not published: the previous summary stays, and ``summary_state`` keeps the scores, the failed
thresholds, the missing facts and the unsupported statements, which the run result and the report
show. A key skipped by the skip rule is recorded as ``skipped`` with its reason; the summary of a
key that no longer needs one (its sources fit the budget, are gone, or are too dense) is archived.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

import polars as pl

from ...store import (HISTORY_COLUMNS, MemoryLakeError, Policy, StepReport, next_history_seq, row_image,
                      step_error, transaction)
from .plan import _KEY, SUMMARY_SOURCE, Planned, make_summary, plan_summaries, summary_id


_STATE_COLUMNS = ("tenant", "agent_id", "user_id", "session_id", "source_hash", "source_ids", "status", "reason", "method",
                  "fallback", "summary_id", "retention", "compression", "readability", "accuracy", "passed", "failed",
                  "missing_facts", "unsupported_statements", "source_tokens", "summary_tokens", "as_of", "run_id")
_KEY_MATCH = " AND ".join(f"s.{k} IS NOT DISTINCT FROM k.{k}" for k in _KEY)


def summarize(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """The nightly summary step (see the module docstring): regenerate the summary of each scope
    and session whose sources changed, publish the ones that pass the gate, keep the previous one
    where the new one fails, archive the summaries of keys that no longer need one."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("summarize", as_of)
    report = StepReport("summarize", as_of, run_id, {})
    with lake.writer(purpose="summaries") as con:
        planned, small = plan_summaries(con, policy)
        state = con.execute(f"SELECT {', '.join(_KEY)}, source_hash, summary_id FROM summary_state").pl()
        known = {tuple(r[k] for k in _KEY): (r["source_hash"], r["summary_id"]) for r in state.iter_rows(named=True)}
        todo = [p for p in planned if known.get(tuple(p.key[k] for k in _KEY), (None,))[0] != p.source_hash]
        for item in todo:
            try:
                make_summary(item, policy.for_tenant(item.key["tenant"]), policy.summaries.max_tokens)
            except MemoryLakeError:
                raise  # the lake's own settings (an LLM endpoint misconfigured): one clear error
            except Exception as exc:  # one key's text must not stop every other key's summary
                item.error = step_error("summarize", exc, item="session summary" if item.key["session_id"]
                                        else "scope summary", **item.key)
        errors = [p for p in todo if p.error]
        todo = [p for p in todo if not p.error]  # an errored key keeps its summary and state: tried next run
        wanted = {tuple(p.key[k] for k in _KEY) for p in planned}
        gone = [key for key in known if key not in wanted]
        skipped = [p for p in todo if p.status == "skipped"]
        with transaction(con):
            published = _publish(con, [p for p in todo if p.status == "passed"], known, as_of, run_id)
            # a key whose sources became too dense to summarise needs no summary: its old one goes too
            archived = _retire(con, gone + [k for k in (tuple(p.key[c] for c in _KEY) for p in skipped) if k in known],
                               known, as_of, run_id)
            _record_state(con, todo, published, known, as_of, run_id)
    failed = [p for p in todo if p.status == "failed"]
    report.counts = {"keys": len(planned) + len(small), "unchanged": len(planned) - len(todo) - len(errors),
                     "regenerated": len(todo) - len(skipped), "published": len(published), "failed": len(failed),
                     "skipped": len(skipped), "fits_budget": len(small), "archived": archived}
    report.errors = [p.error for p in errors]
    report.details = {"published": [dict(p.key, summary_id=published[id(p)]) for p in todo if id(p) in published],
                      "failed": [_failure(p) for p in failed], "skipped": [p.skipped() for p in skipped],
                      "fallbacks": [dict(p.key, reason=p.result.fallback) for p in todo
                                    if p.result is not None and p.result.fallback]}
    return report


def _failure(item: Planned) -> dict[str, Any]:
    entry = item.entry()
    return {k: entry[k] for k in (*_KEY, "scores", "failed", "missing_facts", "unsupported_statements", "method",
                                  "fallback")}


def _publish(con, passed: list[Planned], known: dict, as_of: datetime, run_id: str) -> dict[int, str]:
    """Insert or update the summary memories of `passed`; history rows and source links. Returns
    {id(planned): summary memory id}."""
    from ...text import normalise_content

    if not passed:
        return {}
    live = {i for (i,) in con.execute("SELECT id FROM memories WHERE status <> 'deleted' AND id IN (SELECT unnest(?))",
                                      [[v[1] for v in known.values() if v[1]]]).fetchall()}
    rows, ids = [], {}
    for item in passed:
        previous = known.get(tuple(item.key[k] for k in _KEY), (None, None))[1]
        memory_id = previous if previous in live else summary_id(item.key, item.source_hash)
        ids[id(item)] = memory_id
        extra = {"summary_of": item.result.source_ids, "source_hash": item.source_hash,
                 "method": item.result.method, "scores": {k: round(v, 4) for k, v in item.result.scores().items()}}
        rows.append({"id": memory_id, **item.key, "content": item.result.markdown,
                     "extra": json.dumps(extra, ensure_ascii=False), "update": memory_id == previous})
    frame = pl.DataFrame(rows, schema={"id": pl.String, "tenant": pl.String, "agent_id": pl.String,
                                       "user_id": pl.String, "session_id": pl.String, "content": pl.String,
                                       "extra": pl.String, "update": pl.Boolean})
    frame = frame.with_columns(content_hash=normalise_content(pl.col("content")).map_elements(
        lambda s: hashlib.sha256(s.encode()).hexdigest(), return_dtype=pl.String))
    con.register("summary_rows", frame)
    try:
        params = {"as_of": as_of, "run_id": run_id}
        changed = ("content", "extra", "status")
        new = {"content": "r.content", "content_hash": "r.content_hash", "extra": "r.extra::JSON", "status": "'active'",
               "version": "m.version + 1", "updated_at": "$as_of"}
        con.execute(
            f"""INSERT INTO memory_history ({HISTORY_COLUMNS})
                SELECT $seq + row_number() OVER (ORDER BY m.id), m.id, m.tenant, m.version + 1, 'update',
                       {list(changed)!r}, 'system', $run_id, 'summary regenerated: its sources changed', $as_of,
                       {row_image('m')}, {row_image('m', **new)}, NULL, NULL, NULL
                FROM memories m JOIN summary_rows r ON r.id = m.id AND r.update""",
            params | {"seq": next_history_seq(con)})
        con.execute(
            """UPDATE memories SET content = r.content, content_hash = r.content_hash, extra = r.extra::JSON,
                      status = 'active', version = memories.version + 1, updated_at = $as_of
               FROM summary_rows r WHERE memories.id = r.id AND r.update""", {"as_of": as_of})
        con.execute(
            """INSERT INTO memories (id, tenant, agent_id, user_id, context_id, session_id, tier, type, content, summary,
                                     tags, importance, source, created_at, updated_at, last_accessed_at, access_count,
                                     reference_count, expires_at, version, status, content_hash, merged_into, operator,
                                     trace_id, extra)
               SELECT id, tenant, agent_id, user_id, NULL, session_id, 'long_term', 'summary', content, NULL,
                      []::VARCHAR[], 0.5, $source, $as_of, $as_of, $as_of, 0, 0, NULL, 1, 'active', content_hash,
                      NULL, 'system', NULL, extra::JSON
               FROM summary_rows WHERE NOT update""", {"as_of": as_of, "source": SUMMARY_SOURCE})
        con.execute(
            f"""INSERT INTO memory_history ({HISTORY_COLUMNS})
                SELECT $seq + row_number() OVER (ORDER BY m.id), m.id, m.tenant, 1, 'insert', NULL, 'system', $run_id,
                       'summary published', $as_of, NULL, {row_image('m')}, NULL, NULL, NULL
                FROM memories m JOIN summary_rows r ON r.id = m.id AND NOT r.update""",
            params | {"seq": next_history_seq(con)})
    finally:
        con.unregister("summary_rows")
    links = pl.DataFrame([(ids[id(item)], source) for item in passed for source in item.result.source_ids],
                         schema={"summary_id": pl.String, "source_id": pl.String}, orient="row")
    con.register("summary_links", links)
    try:
        con.execute("""INSERT INTO summary_sources SELECT DISTINCT l.summary_id, l.source_id, $as_of, $run_id
                       FROM summary_links l WHERE NOT EXISTS (SELECT 1 FROM summary_sources s
                           WHERE s.summary_id = l.summary_id AND s.source_id = l.source_id)""",
                    {"as_of": as_of, "run_id": run_id})
    finally:
        con.unregister("summary_links")
    return ids


def _record_state(con, todo: list[Planned], published: dict[int, str], known: dict, as_of: datetime,
                  run_id: str) -> None:
    """One `summary_state` row per key attempted: its source hash (so unchanged sources are not
    summarised again), scores and failure; a failed key keeps the summary id it had."""
    if not todo:
        return
    rows = []
    for item in todo:
        if item.result is None:  # skipped: no summary can pass (the reason says why); none kept
            rows.append({**item.key, "source_hash": item.source_hash, "source_ids": [s.id for s in item.sources],
                         "status": "skipped", "reason": item.skip_reason, "failed": [], "missing_facts": [],
                         "unsupported_statements": [], "source_tokens": item.source_tokens, "as_of": as_of,
                         "run_id": run_id})
            continue
        score = item.result.score
        previous = known.get(tuple(item.key[k] for k in _KEY), (None, None))[1]
        rows.append({**item.key, "source_hash": item.source_hash, "source_ids": item.result.source_ids,
                     "status": "published" if id(item) in published else "failed", "reason": None,
                     "method": item.result.method,
                     "fallback": item.result.fallback, "summary_id": published.get(id(item), previous),
                     **{k: float(v) for k, v in item.result.scores().items()}, "passed": item.result.passed,
                     "failed": list(score.failed), "missing_facts": [str(f) for f in score.missing_facts],
                     "unsupported_statements": [str(s) for s in score.unsupported_statements],
                     "source_tokens": int(score.source_tokens), "summary_tokens": int(score.summary_tokens),
                     "as_of": as_of, "run_id": run_id})
    frame = pl.DataFrame(rows, schema={"tenant": pl.String, "agent_id": pl.String, "user_id": pl.String,
                                       "session_id": pl.String, "source_hash": pl.String,
                                       "source_ids": pl.List(pl.String), "status": pl.String, "reason": pl.String,
                                       "method": pl.String,
                                       "fallback": pl.String, "summary_id": pl.String, "retention": pl.Float64,
                                       "compression": pl.Float64, "readability": pl.Float64, "accuracy": pl.Float64,
                                       "passed": pl.Boolean, "failed": pl.List(pl.String),
                                       "missing_facts": pl.List(pl.String),
                                       "unsupported_statements": pl.List(pl.String), "source_tokens": pl.Int64,
                                       "summary_tokens": pl.Int64, "as_of": pl.Datetime("us"), "run_id": pl.String})
    con.register("state_rows", frame)
    try:
        con.execute(f"DELETE FROM summary_state s WHERE EXISTS (SELECT 1 FROM state_rows k WHERE {_KEY_MATCH})")
        con.execute(f"INSERT INTO summary_state ({', '.join(_STATE_COLUMNS)}) "
                    f"SELECT {', '.join(_STATE_COLUMNS)} FROM state_rows")
    finally:
        con.unregister("state_rows")


def _retire(con, gone: list[tuple], known: dict, as_of: datetime, run_id: str) -> int:
    """Keys that no longer need a summary (their sources fit the budget, or are gone): the state
    row goes and the summary memory is archived (a system move, kept for its history)."""
    if not gone:
        return 0
    frame = pl.DataFrame([dict(zip(_KEY, key)) | {"summary_id": known[key][1]} for key in gone],
                         schema={**{k: pl.String for k in _KEY}, "summary_id": pl.String})
    con.register("gone_keys", frame)
    try:
        con.execute(f"DELETE FROM summary_state s WHERE EXISTS (SELECT 1 FROM gone_keys k WHERE {_KEY_MATCH})")
        con.execute(
            f"""CREATE OR REPLACE TEMP TABLE retired AS
                SELECT m.* FROM memories m JOIN gone_keys g ON g.summary_id = m.id WHERE m.status = 'active'""")
        count = con.execute("SELECT count(*) FROM retired").fetchone()[0]
        con.execute(
            f"""INSERT INTO memory_history ({HISTORY_COLUMNS})
                SELECT $seq + row_number() OVER (ORDER BY id), id, tenant, version, 'status', ['status'], 'system',
                       $run_id, 'summary archived: its sources fit the budget, are gone, or are too dense to summarise', $as_of, {row_image('r')},
                       {row_image('r', status="'archived'")}, NULL, NULL, NULL
                FROM retired r""", {"seq": next_history_seq(con), "run_id": run_id, "as_of": as_of})
        con.execute("INSERT INTO cleanup_log SELECT id, tenant, agent_id, user_id, tier, tier, status, 'archived', "
                    "'summary_retired', $run_id, $as_of FROM retired", {"run_id": run_id, "as_of": as_of})
        con.execute("UPDATE memories SET status = 'archived' WHERE id IN (SELECT id FROM retired)")
        con.execute("DROP TABLE retired")
    finally:
        con.unregister("gone_keys")
    return count
