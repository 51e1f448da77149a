"""Scopes dedup need not plan again (issue 42: a night where little changed costs little).

Pairs never cross a scope, so a scope's plan depends only on its own eligible memories (their ids,
texts, content hashes, types, tags, importance and creation), on which models hold a vector for
each text, on the clusters a person unmerged, on the policy and on the code: ``scope_digests``
hashes the first two per scope, ``settled_fingerprint`` the rest. After a night's merges the
scope's digest is kept in ``dedup_scopes``, ``settled`` when that night's last plan for it (a
scope that merged is planned again the same night, ``step._later_rounds``) merged nothing and
raised nothing: planning the same rows again would merge nothing either (every
similar pair was kept apart by a verdict that depends on the two texts only, and a contradiction
is filed once), so the next night plans only the scopes whose digest or fingerprint changed, or
that were not settled.

Most changed scopes only lost memories (a memory went dormant or was archived). Their plan is not
made again either when the settled plan left the scope **closed** (not in ``Plan.open_scopes``): no
two of its memories shared a strict key, every LSH bucket was small enough to be paired whole
(``candidates.WHOLE_BUCKET``) and the guard let no pair through. Then every candidate pair of any
subset of those memories was a candidate pair of the whole set (a bucket of the subset is part of
a bucket of the set, and a pair's filters read the two memories alone), and was kept apart. So a
closed scope keeps the hash of each row its plan read (``members``), and while each of its
eligible rows now is one of them, it is recorded as if planned (its new digest and members). A
test runs both ways on the same lake and compares every table.
"""

from __future__ import annotations

import hashlib

import duckdb
import polars as pl

from ...store import Policy, code_fingerprint
from .verdictcache import guard_fingerprint

SCOPE = ("tenant", "agent_id", "user_id")
ELIGIBLE = """m.status = 'active' AND m.merged_into IS NULL AND m.tier <> 'important'
              AND NOT (m.type = 'summary' AND m.operator = 'system')"""


def settled_fingerprint(policy: Policy, kept_apart: set[tuple[str, str]]) -> str:
    """What a settled scope's plan depends on besides its rows: the guard's code, dictionaries and
    policy (as the kept verdicts), the rest of dedup's code (candidates, clusters, this file), and
    the unmerged clusters kept apart."""
    apart = "\x1e".join(sorted(f"{a}\x1f{b}" for a, b in kept_apart))
    code = code_fingerprint(("maintain/dedup",))
    return hashlib.sha256(f"{guard_fingerprint(policy)}\x1d{code}\x1d{apart}".encode()).hexdigest()[:32]


def scope_digests(con: duckdb.DuckDBPyConnection, policy: Policy, only: str | None = None,
                  fingerprint: str | None = None) -> pl.DataFrame:
    """Per scope with eligible memories: tenant, agent_id, user_id and the digest of what its plan
    reads; `only`: a registered table of the scopes to digest (all when None). With `fingerprint`,
    also ``within``: whether each of the scope's rows is one of the ``members`` its settled plan
    under that fingerprint kept."""
    sql, params = _digests_sql(con, policy, only, fingerprint)
    return con.execute(sql, params).pl()


def _digests_sql(con: duckdb.DuckDBPyConnection, policy: Policy, only: str | None, fingerprint: str | None,
                 members: bool = False) -> tuple[str, dict]:
    """The query of `scope_digests` and its parameters; with `members`, each scope's ``members``
    too (the hashes of its rows, sorted)."""
    has_embeddings = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'embeddings'").fetchone()[0]
    vectors = ("SELECT text_hash, string_agg(model, ',' ORDER BY model) AS models FROM embeddings "
               "WHERE len(vector) > 0 AND unknown_ratio <= $ratio GROUP BY text_hash") if has_embeddings else \
        "SELECT NULL::VARCHAR AS text_hash, NULL::VARCHAR AS models WHERE false"
    fields = ", ".join(f"coalesce(({sql})::VARCHAR, '\x01')" for sql in (
        "m.id", "md5(m.content)", "m.content_hash", "m.type", "list_sort(m.tags)", "m.importance", "m.created_at",
        "v.models"))
    kept = ("SELECT tenant, agent_id, user_id, unnest(members) AS h FROM dedup_scopes "
            "WHERE settled AND fingerprint = $fingerprint AND members IS NOT NULL") if fingerprint else \
        "SELECT NULL::VARCHAR AS tenant, NULL::VARCHAR AS agent_id, NULL::VARCHAR AS user_id, NULL::UBIGINT AS h WHERE false"
    extra = (", bool_and(k.h IS NOT NULL) AS within" if fingerprint else "") + (
        ", list(r.member ORDER BY r.member) AS members" if members else "")
    # each memory's fields (its id among them) hashed once, and the two halves of the hashes summed
    # per scope with the count: the same set of rows gives the same digest, and no sort by id is
    # needed (1M memories: 7.2 s with an ordered concatenation, 4.3 s so). A member is a row's hash
    # cut to 64 bits (a table the export writes to Parquet, which has no 128-bit integer).
    params = ({"ratio": policy.search.max_unknown_ratio} if has_embeddings else {}) | (
        {"fingerprint": fingerprint} if fingerprint else {})
    return f"""WITH v AS ({vectors}),
                    r AS (SELECT *, (h >> 64)::UBIGINT AS member FROM (
                              SELECT m.tenant, m.agent_id, m.user_id, md5_number(concat_ws(chr(31), {fields})) AS h
                              FROM memories m LEFT JOIN v ON v.text_hash = m.content_hash
                              WHERE {ELIGIBLE}{_within(only)})),
                    k AS ({kept})
               SELECT r.tenant, r.agent_id, r.user_id,
                      md5(concat_ws(',', count(*), sum((r.h >> 64)::UBIGINT),
                                    sum((r.h & {(1 << 64) - 1}::UHUGEINT)::UBIGINT))) AS digest{extra}
               FROM r LEFT JOIN k ON k.h = r.member AND k.tenant = r.tenant AND k.agent_id IS NOT DISTINCT FROM r.agent_id
                                    AND k.user_id IS NOT DISTINCT FROM r.user_id
               GROUP BY ALL ORDER BY ALL""", params


def _within(only: str | None) -> str:
    if only is None:
        return ""
    return (f" AND EXISTS (SELECT 1 FROM {only} o WHERE o.tenant = m.tenant AND o.agent_id IS NOT DISTINCT FROM "
            "m.agent_id AND o.user_id IS NOT DISTINCT FROM m.user_id)")


def unsettled(con: duckdb.DuckDBPyConnection, digests: pl.DataFrame, fingerprint: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The scopes of `digests` (``scope_digests`` with `fingerprint`) to plan tonight: new, changed,
    planned under another fingerprint, or not settled; and the changed ones not to plan: those
    whose memories only left since a settled plan that left no scope open (``Plan.open_scopes``),
    so that any of its memories would merge nothing (see the module docstring)."""
    kept = con.execute("SELECT tenant, agent_id, user_id, digest AS kept FROM dedup_scopes "
                       "WHERE settled AND fingerprint = ?", [fingerprint]).pl()
    joined = digests.join(kept, on=list(SCOPE), how="left", nulls_equal=True)
    changed = joined.filter(pl.col("kept").is_null() | (pl.col("kept") != pl.col("digest")))
    return (changed.filter(~pl.col("within")).select(*SCOPE),
            changed.filter(pl.col("within")).select(*SCOPE))


def keep_settled(con: duckdb.DuckDBPyConnection, policy: Policy, scopes: pl.DataFrame, fingerprint: str,
                 restless: set[tuple], open_scopes: set[tuple]) -> None:
    """After tonight's merges (inside the caller's transaction): the digests of `scopes` (those
    planned tonight and those that only lost memories), settled unless in `restless` (merged or
    raised tonight), with their members unless in `open_scopes` too; scopes with no eligible
    memory left go."""
    unsettled_rows = pl.DataFrame(
        [(*key, False, False) for key in restless] + [(*key, True, False) for key in open_scopes - restless],
        schema={**{k: pl.String for k in SCOPE}, "settled": pl.Boolean, "closed": pl.Boolean}, orient="row")
    con.register("planned_scopes", scopes)
    con.register("restless_scopes", unsettled_rows)
    try:
        sql, params = _digests_sql(con, policy, "planned_scopes", None, members=True)
        con.execute("""DELETE FROM dedup_scopes d WHERE EXISTS (SELECT 1 FROM planned_scopes p
                       WHERE p.tenant = d.tenant AND p.agent_id IS NOT DISTINCT FROM d.agent_id
                         AND p.user_id IS NOT DISTINCT FROM d.user_id)
                       OR NOT EXISTS (SELECT 1 FROM memories m WHERE m.tenant = d.tenant
                         AND m.agent_id IS NOT DISTINCT FROM d.agent_id AND m.user_id IS NOT DISTINCT FROM d.user_id
                         AND """ + ELIGIBLE + ")")
        con.execute(f"""INSERT INTO dedup_scopes
                        SELECT d.tenant, d.agent_id, d.user_id, d.digest, $fp, coalesce(u.settled, true),
                               CASE WHEN coalesce(u.closed, true) THEN d.members END
                        FROM ({sql}) d LEFT JOIN restless_scopes u ON u.tenant = d.tenant
                          AND u.agent_id IS NOT DISTINCT FROM d.agent_id AND u.user_id IS NOT DISTINCT FROM d.user_id""",
                    params | {"fp": fingerprint})
    finally:
        con.unregister("planned_scopes")
        con.unregister("restless_scopes")


def drop_left_verdicts(con: duckdb.DuckDBPyConnection, shrunk: pl.DataFrame) -> None:
    """The kept verdicts of the pairs of `shrunk`'s scopes (not planned: they only lost memories)
    that a memory left, as a plan of what is left would have dropped them (inside the caller's
    transaction)."""
    if shrunk.height == 0:
        return
    con.register("shrunk_scopes", shrunk)
    try:
        eligible = {side: ELIGIBLE.replace("m.", f"{side}.") for side in "ab"}
        con.execute(f"""DELETE FROM dedup_verdicts v
                        WHERE v.a_memory_id IN (SELECT m.id FROM memories m JOIN shrunk_scopes p ON p.tenant = m.tenant
                                                AND p.agent_id IS NOT DISTINCT FROM m.agent_id
                                                AND p.user_id IS NOT DISTINCT FROM m.user_id)
                          AND (NOT EXISTS (SELECT 1 FROM memories a WHERE a.id = v.a_memory_id AND {eligible['a']})
                               OR NOT EXISTS (SELECT 1 FROM memories b WHERE b.id = v.b_memory_id AND {eligible['b']}))""")
    finally:
        con.unregister("shrunk_scopes")


__all__ = ["drop_left_verdicts", "keep_settled", "scope_digests", "settled_fingerprint", "unsettled"]
