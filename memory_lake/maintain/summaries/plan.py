"""Scopes and sessions: what is summarised (seed 000 "自动摘要生成与质量评估").

A scope's summary covers its active short-term memories (seed 000 example 1: the short-term memory
is what gets compressed; working memory stays verbatim); a session's covers the active memories of
that session, any tier. A scope or session is summarised only when its sources hold more tokens than
the budget (below that they fit as they are and there is nothing to compress) and a summary of them
can pass (the skip rule, ``coverage.py``). A summary memory of the lake itself (type ``summary``,
operator ``system``) is never a source. A scope whose short-term memories are exactly one session's
is left to that session's summary.

Each key's sources are hashed (ids and content hashes, plus the budget and the summariser's
version): the nightly step regenerates a summary only when that hash changed. `preview_summaries`
is what ``memory-lake summarize`` prints: the summaries made and scored now, written nowhere.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import polars as pl

from ...store import Policy
from .cues import language
from .coverage import key_fact_coverage, why_not_summarised
from .extract import Source, title_for
from .gate import SummaryResult, summarize_sources


# The lake's own summaries, in SQL: never a source, never touched by tier rules or dedup.
LAKE_SUMMARY_SQL = "(type = 'summary' AND operator = 'system')"
SUMMARY_SOURCE = "memory-lake summarize"
# Bumped when the summariser's output for the same sources changes: every summary is regenerated.
SUMMARISER_VERSION = "3"

# ---------------------------------------------------------------------------- scopes and sessions
_KEY = ("tenant", "agent_id", "user_id", "session_id")
_SOURCE_COLUMNS = "id, tenant, agent_id, user_id, session_id, tier, type, content, content_hash, importance, created_at"


def _source_frame(con, *, tenant: str | None = None, agent: str | None = None, user: str | None = None,
                  session: str | None = None) -> pl.DataFrame:
    """Every source row: a row per (summary key, memory). A scope's key has session_id NULL and its
    short-term memories; a session's key has its active memories of any tier."""
    where = [f"status = 'active'", f"NOT {LAKE_SUMMARY_SQL}"]
    params: dict[str, Any] = {}
    for column, value in (("tenant", tenant), ("agent_id", agent), ("user_id", user)):
        if value is not None:
            where.append(f"{column} = ${column}")
            params[column] = value
    base = f"SELECT {_SOURCE_COLUMNS} FROM memories WHERE {' AND '.join(where)}"
    scope_part = f"SELECT * REPLACE (NULL::VARCHAR AS session_id) FROM ({base}) WHERE tier = 'short_term'"
    session_part = f"SELECT * FROM ({base}) WHERE session_id IS NOT NULL"
    if session is not None:
        params["session"] = session
        query = f"{session_part} AND session_id = $session"
    else:
        query = f"{scope_part} UNION ALL {session_part}"
    return con.execute(f"SELECT * FROM ({query}) ORDER BY tenant, agent_id, user_id, session_id NULLS FIRST, "
                       "created_at, id", params).pl()


def _source_hashes(frame: pl.DataFrame, max_tokens: int) -> pl.DataFrame:
    """Per key: the source ids (in time order) and the hash of ids, content hashes, budget and
    summariser version (a change to any of them regenerates the summary)."""
    salt = f"v{SUMMARISER_VERSION}|{max_tokens}|"
    return (frame.group_by(list(_KEY), maintain_order=True)
            .agg(source_ids=pl.col("id"),
                 fingerprint=(pl.col("id") + ":" + pl.col("content_hash")).sort().str.join(","))
            .with_columns(source_hash=(pl.lit(salt) + pl.col("fingerprint"))
                          .map_elements(lambda s: hashlib.sha256(s.encode()).hexdigest(), return_dtype=pl.String))
            .drop("fingerprint"))


def _sources_of(frame: pl.DataFrame) -> list[Source]:
    return [Source(r["id"], r["content"], r["type"], r["created_at"], float(r["importance"]))
            for r in frame.iter_rows(named=True)]


def _scope_title(key: dict[str, Any], lang: str) -> str:
    return title_for((key["tenant"], key["agent_id"], key["user_id"]), key["session_id"], lang)


def summary_id(key: dict[str, Any], source_hash: str) -> str:
    """The id of a new summary memory: derived from its key and the sources it was first made from."""
    text = "\x1f".join(str(key[k] or "") for k in _KEY) + "\x1f" + source_hash
    return "sum_" + hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass
class Planned:
    """A key to summarise, its sources and (once made) its result."""

    key: dict[str, Any]
    source_hash: str
    sources: list[Source]
    source_tokens: int
    result: SummaryResult | None = None
    skip_reason: str | None = None  # why no summary can pass (why_not_summarised)
    key_facts: int = 0
    error: dict[str, Any] | None = None  # making it raised (`step_error`): left as it was, tried next run

    @property
    def status(self) -> str:
        """passed | failed | skipped (no summary can pass: see the module docstring) | error."""
        if self.error:
            return "error"
        if self.skip_reason:
            return "skipped"
        return "passed" if self.result is not None and self.result.passed else "failed"

    def skipped(self) -> dict[str, Any]:
        """The key and why it was skipped, as the step's details and `summarize` show it."""
        return dict(self.key) | {"status": "skipped", "reason": self.skip_reason, "source_tokens": self.source_tokens,
                                 "key_facts": self.key_facts, "sources": len(self.sources)}

    def entry(self) -> dict[str, Any]:
        """The key, the scores and the failure, as `summarize --json` and the step's details show it."""
        out = dict(self.key) | {"status": self.status}
        if self.result is None:
            return out | {"summary": None, "scores": None, "passed": False, "missing_facts": [],
                          "unsupported_statements": [], "source_tokens": self.source_tokens}
        score = self.result.score
        return out | {"summary": self.result.markdown, "scores": {k: round(v, 4) for k, v in self.result.scores().items()},
                      "passed": self.result.passed, "failed": list(score.failed),
                      "missing_facts": list(score.missing_facts),
                      "unsupported_statements": list(score.unsupported_statements),
                      "method": self.result.method, "fallback": self.result.fallback,
                      "source_tokens": score.source_tokens, "summary_tokens": score.summary_tokens,
                      "sources": len(self.sources)}


def plan_summaries(con, policy: Policy, *, max_tokens: int | None = None, tenant: str | None = None,
                   agent: str | None = None, user: str | None = None, session: str | None = None
                   ) -> tuple[list[Planned], list[dict[str, Any]]]:
    """The keys worth summarising (sources over the budget) with their sources, and the keys left
    out because their sources fit the budget as they are (``{key, source_tokens, reason}``)."""
    from ...text import count_tokens_many

    budget = max_tokens or policy.summaries.max_tokens
    frame = _source_frame(con, tenant=tenant, agent=agent, user=user, session=session)
    if frame.height == 0:
        return [], []
    frame = frame.with_columns(tokens=pl.Series(count_tokens_many(frame["content"].to_list()), dtype=pl.Int64))
    hashes = _source_hashes(frame, budget)
    totals = frame.group_by(list(_KEY), maintain_order=True).agg(source_tokens=pl.col("tokens").sum())
    keys = hashes.join(totals, on=list(_KEY), nulls_equal=True, maintain_order="left")
    # a scope whose short-term memories are exactly one session's would get that session's summary twice
    sessions = {(r["tenant"], r["agent_id"], r["user_id"], frozenset(r["source_ids"])): r["session_id"]
                for r in keys.iter_rows(named=True) if r["session_id"] is not None}
    planned, small = [], []
    for row in keys.iter_rows(named=True):
        key = {k: row[k] for k in _KEY}
        same = (sessions.get((row["tenant"], row["agent_id"], row["user_id"], frozenset(row["source_ids"])))
                if row["session_id"] is None else None)
        if row["source_tokens"] <= budget or same:
            reason = (f"its short-term memories are exactly those of session {same}, summarised as that session"
                      if same else f"its sources hold {row['source_tokens']} tokens, within the {budget}-token "
                                   "budget: nothing to compress")
            small.append(key | {"status": "skipped", "source_tokens": row["source_tokens"], "reason": reason})
            continue
        rows = frame.filter(*[(pl.col(k) == key[k]) if key[k] is not None else pl.col(k).is_null() for k in _KEY])
        planned.append(Planned(key, row["source_hash"], _sources_of(rows), int(row["source_tokens"])))
    return planned, small


def make_summary(item: Planned, policy: Policy, max_tokens: int | None = None) -> Planned:
    """Summarise and score one planned key, or say why no summary of it can pass (`skip_reason`,
    the skip rule of the module docstring). In place; returned for chaining."""
    lang = language(s.content for s in item.sources)
    title = _scope_title(item.key, lang)
    budget = max_tokens or policy.summaries.max_tokens
    coverage = key_fact_coverage([s.content for s in item.sources])
    item.key_facts = len(coverage.facts)
    n = len(item.sources)
    what = (f"the {n} memories of session {item.key['session_id']}" if item.key["session_id"]
            else f"{n} short-term memories")
    item.skip_reason = why_not_summarised(coverage, what=what, title=title, policy=policy, lang=lang)
    if item.skip_reason is None:
        item.result = summarize_sources(item.sources, title=title, max_tokens=budget, policy=policy, lang=lang,
                                        coverage=coverage)
    return item


def preview_summaries(lake, *, tenant: str, agent: str | None = None, user: str | None = None,
                      session: str | None = None, max_tokens: int | None = None) -> dict[str, Any]:
    """What `memory-lake summarize` prints: the summaries of the scope(s) and sessions asked for,
    made and scored now, written nowhere (a read: while a run holds the lake, from the published
    version). ``{"scopes": [...], "skipped": [...], "note"}``: `scopes` the summaries made (status
    passed or failed), `skipped` the keys not summarised and why (their sources fit the budget, or
    no summary of them can pass); `note` says why `scopes` is empty."""
    policy = lake.policy.for_tenant(tenant)
    with lake.reading() as (con, _source, read_note):
        planned, small = plan_summaries(con, policy, max_tokens=max_tokens, tenant=tenant, agent=agent,
                                        user=user, session=session)
    made = [make_summary(p, policy, max_tokens) for p in planned]
    scopes = [p.entry() for p in made if p.status != "skipped"]
    dense = [p.skipped() for p in made if p.status == "skipped"]
    note = read_note
    if not scopes:
        what = f"session {session}" if session else "scope"
        if dense:
            note = (f"nothing summarised: no summary of the {what}s asked for can pass the gate "
                    f"(their memories are already dense facts; 'skipped' says why for each)")
        elif small:
            note = (f"nothing to summarise: every {what} asked for fits within the budget as it is "
                    f"(largest {max(s['source_tokens'] for s in small)} tokens; --max-tokens lower summarises it)")
        else:
            note = (f"nothing to summarise: no active short-term memories{' in that session' if session else ''} "
                    f"for the {what} asked for")
    return {"scopes": scopes, "skipped": dense + small, "note": note}
