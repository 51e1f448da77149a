"""The nightly dedup step (seed 004): `plan_dedup` and `dedup`.

Per scope (tenant, agent_id, user_id), over active memories that are not merged and not important
(automation never changes an important memory, on either side of a merge), and not system
summaries: the merge plan (``clustering``), with each memory compared in the space of the first
embedding model that covers its language. A cluster a person unmerged stays apart. When the plan
over every scope raises, it is made scope by scope, and a scope that raises is left out with its
error. The step files the contradictions (kind ``contradiction``, once per pair) and applies the
merges in one transaction, planning the scopes that merged again until a round merges nothing; ``--dry-run`` shows the clusters, the contradictions and the pairs kept
apart, and writes nothing.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ...store import schema, crash_point, transaction, MemoryLakeError, step_error, Policy, StepReport
from .clustering import Plan, find_duplicates
from .helpers import GuardHelpers
from .unmerge import _apply_merges
from .settled import SCOPE, drop_left_verdicts, keep_settled, scope_digests, settled_fingerprint, unsettled
from .verdictcache import load_verdicts, save_verdicts


PASSES = ("exact", "near", "semantic")
# At most this many kept-apart pairs are listed in a dedup report (all are counted).
KEPT_APART_SHOWN = 1000
_COLUMNS = "m.id, m.tenant, m.agent_id, m.user_id, m.type, m.tags, m.content, m.importance, m.created_at, m.content_hash"


# Memories are planned a batch of whole scopes at a time (pairs never cross a scope), about this
# many per batch, so that only one batch's vectors are in memory (1M at once took gigabytes).
PLAN_BATCH_ROWS = 50_000
_ELIGIBLE = """m.status = 'active' AND m.merged_into IS NULL AND m.tier <> 'important'
               AND NOT (m.type = 'summary' AND m.operator = 'system')"""


def plan_dedup(con, policy: Policy, only: pl.DataFrame | None = None, cache=None) -> tuple[Plan, pl.DataFrame]:
    """Read the eligible memories and, per embedding model, the vectors of those whose language it
    covers, on `con`; return (plan, the rows read). The semantic pass runs in each model's space, each
    memory in that of the first model covering its language
    (``semantic_cosine`` for ``[search] model``, ``multilingual_semantic_cosine`` for the
    multilingual one), so Chinese memories are compared through the multilingual model. `only`
    (tenant, agent_id, user_id): plan those scopes alone (``settled.py``). `cache`: the verdicts to
    read (the kept ones when None). Planned a batch of whole scopes at a time (PLAN_BATCH_ROWS): the
    same plan as all at once."""
    from ...text import embedding_models

    has_embeddings = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'embeddings'").fetchone()[0]
    in_only = ""
    if only is not None:
        con.register("dedup_only_scopes", only)
        in_only = ("AND EXISTS (SELECT 1 FROM dedup_only_scopes o WHERE o.tenant = m.tenant "
                   "AND o.agent_id IS NOT DISTINCT FROM m.agent_id AND o.user_id IS NOT DISTINCT FROM m.user_id)")
    try:
        frame = con.execute(f"""SELECT {_COLUMNS}, false AS covered FROM memories m WHERE {_ELIGIBLE} {in_only}
                                ORDER BY m.tenant, m.agent_id, m.user_id, m.id""").pl()
    finally:
        if only is not None:
            con.unregister("dedup_only_scopes")
    names = embedding_models(policy) if has_embeddings else ()
    cache, apart = cache if cache is not None else load_verdicts(con, policy), _kept_apart(con)
    absorbed = _absorbed(con)
    plans, parts = [], []
    with GuardHelpers(policy, policy.dedup.paraphrase_window) as helpers:
        for part in _scope_batches(frame, PLAN_BATCH_ROWS):
            spaces = _spaces(con, policy, names, part)
            if names:
                covered = set(spaces[names[0]][0]) if names[0] in spaces else set()
                part = part.with_columns(covered=pl.col("id").is_in(list(covered)))
            parts.append(part)
            plans.append(_isolated_plan(part, policy, apart, spaces, cache, helpers, absorbed))
    plan = _joined(plans, frame, policy, apart)
    plan.verdicts = cache
    return plan, (pl.concat(parts) if parts else frame)


def _scope_batches(frame: pl.DataFrame, rows: int) -> list[pl.DataFrame]:
    """`frame` (ordered by scope) cut into batches of whole scopes of about `rows` memories."""
    if frame.height <= rows:
        return [frame] if frame.height else []
    scope = pl.struct(*SCOPE).rle_id()
    sizes = frame.select(scope=scope).group_by("scope", maintain_order=True).len()
    batches = sizes.select("scope", batch=(pl.col("len").cum_sum() - 1) // rows)
    return (frame.with_columns(scope=scope).join(batches, on="scope", how="left", maintain_order="left")
            .drop("scope").partition_by("batch", maintain_order=True, include_key=False))


def _spaces(con, policy: Policy, names: tuple[str, ...], part: pl.DataFrame) -> dict[str, tuple[dict[str, np.ndarray], float]]:
    """Per model: the vectors of `part`'s memories compared in its space (those whose language it
    covers and no earlier model did), and its threshold."""
    spaces: dict[str, tuple[dict[str, np.ndarray], float]] = {}
    taken: set[str] = set()
    con.register("dedup_part_ids", part.select("id"))
    try:
        for name in names:
            found = con.execute(
                """SELECT m.id, e.vector FROM dedup_part_ids p JOIN memories m ON m.id = p.id
                   JOIN embeddings e ON e.text_hash = m.content_hash AND e.model = ?
                   WHERE len(e.vector) > 0 AND e.unknown_ratio <= ?""",
                [name, policy.search.max_unknown_ratio]).pl()
            # each memory is compared in one space only: that of the first model covering its language
            # (MiniLM for English, the multilingual model for what MiniLM does not cover)
            found = found.filter(~pl.col("id").is_in(list(taken)))
            if not found.height:
                continue
            taken.update(found["id"].to_list())
            width = found["vector"].list.len().max()
            matrix = found["vector"].list.to_array(width).to_numpy().astype(np.float32)
            threshold = (policy.dedup.semantic_cosine if name == policy.search.model
                         else policy.dedup.multilingual_semantic_cosine)
            spaces[name] = (dict(zip(found["id"].to_list(), matrix)), threshold)
    finally:
        con.unregister("dedup_part_ids")
    return spaces


def _joined(plans: list[Plan], frame: pl.DataFrame, policy: Policy, apart: set, errors: list | None = None) -> Plan:
    """One plan of `frame`'s plans (of its batches, or of its scopes) with `errors` first (the plan
    of an empty frame when there are none)."""
    if len(plans) == 1 and not errors:
        return plans[0]
    empty = find_duplicates(frame.head(0), None, policy, apart, spaces={})
    return Plan(pl.concat([empty.merges, *(p.merges for p in plans)]),
                pl.concat([empty.contradictions, *(p.contradictions for p in plans)]),
                candidates=sum(p.candidates for p in plans), examined=frame.height,
                different=sum(p.different for p in plans), left_out=sum(p.left_out for p in plans),
                errors=(errors or []) + [e for p in plans for e in p.errors], apart=[x for p in plans for x in p.apart],
                open_scopes=set().union(*(p.open_scopes for p in plans)))


def _kept_apart(con) -> set[tuple[str, str]]:
    """A cluster a person unmerged stays apart: no two of its memories are merged again (a member
    that left because a write changed its content may be merged again if it is a duplicate again)."""
    kept_apart = set()
    for (members,) in con.execute(
            "SELECT list_distinct(list(member_id) || list(canonical_id)) FROM dedup_merges "
            "WHERE unmerged_at IS NOT NULL AND unmerged_by IS DISTINCT FROM ? GROUP BY cluster_id",
            [schema.UNMERGED_BY_WRITE]).fetchall():
        kept_apart |= {(x, y) for x in members for y in members if x != y}
    return kept_apart


def _absorbed(con) -> dict[str, list[tuple[str, str]]]:
    """Per memory, the (id, content) of every memory merged into it and still merged, through
    chains (A into B, then B into D: D absorbed B and A)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for root, member, content in con.execute(
            """WITH RECURSIVE up(id, root) AS (
                   SELECT id, merged_into FROM memories WHERE status = 'merged' AND merged_into IS NOT NULL
                   UNION ALL
                   SELECT up.id, m.merged_into FROM up JOIN memories m ON m.id = up.root
                   WHERE m.status = 'merged' AND m.merged_into IS NOT NULL)
               SELECT up.root, up.id, m.content FROM up JOIN memories m ON m.id = up.id
               JOIN memories r ON r.id = up.root WHERE r.status = 'active' AND r.merged_into IS NULL
               ORDER BY up.root, up.id""").fetchall():
        found.setdefault(root, []).append((member, content))
    return found


def _isolated_plan(frame: pl.DataFrame, policy: Policy, kept_apart: set, spaces: dict, cache=None,
                   helpers=None, absorbed=None) -> Plan:
    """`find_duplicates` over every scope at once; when that raises, scope by scope (pairs never
    cross a scope), and a scope that raises is left out of tonight's plan with its error."""
    try:
        return find_duplicates(frame, None, policy, kept_apart, spaces=spaces, cache=cache, helpers=helpers,
                               absorbed=absorbed)
    except MemoryLakeError:
        raise
    except Exception:
        pass
    plans, errors = [], []
    for (tenant, agent, user), part in frame.group_by(["tenant", "agent_id", "user_id"], maintain_order=True):
        mine = set(part["id"].to_list())
        own = {name: ({i: v for i, v in vectors.items() if i in mine}, threshold)
               for name, (vectors, threshold) in spaces.items()}
        try:
            plans.append(find_duplicates(part, None, policy, kept_apart, spaces=own, cache=cache, helpers=helpers,
                                         absorbed=absorbed))
        except MemoryLakeError:
            raise
        except Exception as exc:
            errors.append(step_error("dedup", exc, item=f"{part.height} memor{'y' if part.height == 1 else 'ies'}",
                                     tenant=tenant, agent_id=agent, user_id=user))
    return _joined(plans, frame, policy, kept_apart, errors)


def dedup(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None,
          dry_run: bool = False) -> StepReport:
    """The nightly dedup step (see the module docstring). `dry_run` shows the clusters and
    contradictions a run would make and writes nothing."""
    from ..tiers import append_cleanup_log

    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("dedup", as_of)
    report = StepReport("dedup", as_of, run_id, {})
    opener = lake.reader if dry_run else lambda: lake.writer(purpose="dedup")
    with opener() as con:
        planned = fingerprint = None
        if not dry_run:  # a dry run shows every scope's plan; a run plans the scopes not settled
            fingerprint = settled_fingerprint(policy, _kept_apart(con))
            digests = scope_digests(con, policy, fingerprint=fingerprint)
            planned, shrunk = unsettled(con, digests, fingerprint)
        plan, frame = plan_dedup(con, policy, only=planned)
        counts = {p: int(plan.merges.filter(pl.col("pass") == p).height) for p in PASSES}
        report.counts = {"examined": plan.examined, "candidates": plan.candidates, "clusters":
                         plan.merges["cluster"].n_unique() if plan.merges.height else 0,
                         "merged": plan.merges.height, **{f"merged_{p}": n for p, n in counts.items()},
                         "contradictions": plan.contradictions.height, "kept_apart_different": plan.different,
                         "left_out_of_clusters": plan.left_out,
                         "pairs_judged_before": plan.verdicts.hits if plan.verdicts is not None else 0}
        if planned is not None:
            report.counts["scopes_settled"] = digests.height - planned.height  # not planned: nothing changed
            # not planned either: they only lost memories since a plan that left them closed (settled.py)
            report.counts["scopes_settled_after_removals"] = shrunk.height
        report.details["clusters"] = _cluster_details(plan.merges)
        report.details["contradictions"] = plan.contradictions.to_dicts()
        # the similar pairs kept apart and why (another speaker, states nothing, another thing, an
        # identifier, a changed value): `dedup --dry-run --json` shows them
        report.details["kept_apart"] = plan.apart[:KEPT_APART_SHOWN]
        report.details["kept_apart_reasons"] = dict(Counter(
            p["reason"].split(" ")[0] if p["reason"].startswith(("unit", "antonym")) else p["reason"] for p in plan.apart))
        report.details["dry_run"] = dry_run
        report.errors = plan.errors
        if dry_run:
            return report
        log_lines: list[str] = []
        with transaction(con):
            filed = _file_contradictions(con, plan.contradictions, as_of, run_id)
            if plan.merges.height:
                _apply_merges(con, plan.merges, as_of, run_id, log_lines)
            restless, still_open = _restless(plan, frame, planned), set(plan.open_scopes)
            filed += _later_rounds(con, policy, plan, frame, restless, still_open, report, as_of, run_id, log_lines)
            con.register("planned_scopes_tonight", planned)
            try:
                if plan.verdicts is not None:  # the next night reads these pairs' verdicts instead of judging them
                    save_verdicts(con, plan.verdicts, "planned_scopes_tonight")
            finally:
                con.unregister("planned_scopes_tonight")
            drop_left_verdicts(con, shrunk)
            keep_settled(con, policy, pl.concat([planned, shrunk]), fingerprint, restless, still_open)
        report.counts["contradictions_filed"] = filed
        crash_point("dedup:merged")  # tests/test_crash_safety.py kills here
    append_cleanup_log(lake.root, log_lines)
    return report


# A scope that merged is planned again the same night, at most this many rounds in all (see
# `_later_rounds`); one still merging after them is planned again the next night.
MAX_ROUNDS = 5


def _later_rounds(con, policy: Policy, plan: Plan, frame: pl.DataFrame, restless: set[tuple], still_open: set[tuple],
                  report: StepReport, as_of: datetime, run_id: str, log_lines: list[str]) -> int:
    """Plan the scopes that merged again, inside the step's transaction, until a round merges
    nothing (at most MAX_ROUNDS in all). A merge takes memories out of their LSH buckets and
    clusters, so a second plan can pair what the first did not (a bucket's window reaches further;
    a memory left out of a cluster meets its canonical one): at 1M memories, 23 merges came a night
    later in scopes where nothing had changed. Planned to the end here, a scope settles tonight and
    a night where little changed plans only what changed, not every scope that merged the night
    before. The pairs of the first round are not judged again (their verdicts are in `plan`'s
    cache). Updates `restless` (the scopes still merging, or that raised), `still_open` (the
    scopes the last plan left open, ``Plan.open_scopes``) and `report` (merges, clusters and
    contradictions of every round, and ``rounds``); returns the contradictions filed."""
    filed, rounds = 0, 1
    report.counts["merged_in_later_rounds"] = 0
    merging = _merged_scopes(plan, frame)
    while merging and rounds < MAX_ROUNDS:
        rounds += 1
        again = pl.DataFrame(sorted(merging, key=repr), schema={k: pl.String for k in SCOPE}, orient="row")
        cache = plan.verdicts
        if cache is not None:  # tonight's verdicts are known now
            cache.known.update({key: why for key, (why, _, _) in cache.tonight.items()})
        more, rows = plan_dedup(con, policy, only=again, cache=cache)
        filed += _file_contradictions(con, more.contradictions, as_of, run_id)
        if more.merges.height:
            _apply_merges(con, more.merges, as_of, run_id, log_lines)
        _add_round(report, more)
        restless -= merging
        restless |= _errored(more, again)
        still_open -= merging
        still_open |= more.open_scopes
        merging = _merged_scopes(more, rows)
    restless |= merging  # still merging after MAX_ROUNDS: planned again the next night
    report.counts["rounds"] = rounds
    return filed


def _merged_scopes(plan: Plan, frame: pl.DataFrame) -> set[tuple]:
    scope_of = dict(zip(frame["id"].to_list(), frame.select(*SCOPE).iter_rows()))
    return {scope_of[m] for m in plan.merges["member"].to_list() if m in scope_of}


def _add_round(report: StepReport, more: Plan) -> None:
    """A later round's merges, clusters, contradictions and errors added to the step's report."""
    report.counts["merged"] += more.merges.height
    for p in PASSES:
        report.counts[f"merged_{p}"] += int(more.merges.filter(pl.col("pass") == p).height)
    clusters = _cluster_details(more.merges)
    report.counts["clusters"] += len(clusters)
    report.details["clusters"] += clusters
    seen = {(c["a"], c["b"]) for c in report.details["contradictions"]}
    report.details["contradictions"] += [c for c in more.contradictions.to_dicts() if (c["a"], c["b"]) not in seen]
    report.counts["contradictions"] = len(report.details["contradictions"])
    report.counts["merged_in_later_rounds"] += more.merges.height
    report.errors += more.errors


def _restless(plan: Plan, frame: pl.DataFrame, planned: pl.DataFrame) -> set[tuple]:
    """The planned scopes not settled tonight: those with a merge, or an error."""
    return _merged_scopes(plan, frame) | _errored(plan, planned)


def _errored(plan: Plan, planned: pl.DataFrame) -> set[tuple]:
    """The planned scopes with an error (an error that names no scope: all of them)."""
    if any(not error.get("tenant") for error in plan.errors):
        return set(planned.iter_rows())
    return {(error.get("tenant"), error.get("agent_id"), error.get("user_id")) for error in plan.errors}


def _cluster_details(merges: pl.DataFrame) -> list[dict[str, Any]]:
    if merges.height == 0:
        return []
    grouped = merges.group_by("cluster", "canonical", maintain_order=True).agg(
        members=pl.col("member").sort(), passes=pl.col("pass").unique().sort())
    return grouped.to_dicts()


def _file_contradictions(con, pairs: pl.DataFrame, as_of: datetime, run_id: str) -> int:
    """Open a ``contradiction`` conflict per pair not filed before (a person decides once)."""
    if pairs.height == 0:
        return 0
    con.register("dedup_contradictions", pairs)
    try:
        before = con.execute("SELECT count(*) FROM conflicts").fetchone()[0]
        con.execute(
            """
            INSERT INTO conflicts
            SELECT substr(sha256('contradiction:' || p.a || ':' || p.b), 1, 16), 'contradiction', 'open', ma.tenant,
                   p.a, p.b, 'content', ma.version, mb.version, NULL, to_json(ma.content)::VARCHAR,
                   to_json(mb.content)::VARCHAR, ma.operator, mb.operator, ma.trace_id, mb.trace_id, ma.status,
                   'dedup ' || p.pass || ' (' || p.reason || ', ' || round(p.score, 3) || ')', NULL, ?, ?,
                   NULL, NULL, NULL, NULL, NULL
            FROM dedup_contradictions p JOIN memories ma ON ma.id = p.a JOIN memories mb ON mb.id = p.b
            WHERE NOT EXISTS (
                -- filed before, maybe between memories merged since into these two
                SELECT 1 FROM conflicts c
                JOIN memories x ON x.id = c.memory_id JOIN memories y ON y.id = c.other_memory_id
                WHERE c.kind = 'contradiction'
                  AND least(coalesce(x.merged_into, x.id), coalesce(y.merged_into, y.id)) = p.a
                  AND greatest(coalesce(x.merged_into, x.id), coalesce(y.merged_into, y.id)) = p.b)
            """,
            [as_of, run_id])
        return con.execute("SELECT count(*) FROM conflicts").fetchone()[0] - before
    finally:
        con.unregister("dedup_contradictions")
