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
that were not settled. A test runs both ways on the same lake and compares every table.
"""

from __future__ import annotations

import hashlib

import duckdb
import polars as pl

from ...store import Policy, set_digest_sql
from .verdictcache import guard_fingerprint

SCOPE = ("tenant", "agent_id", "user_id")
ELIGIBLE = """m.status = 'active' AND m.merged_into IS NULL AND m.tier <> 'important'
              AND NOT (m.type = 'summary' AND m.operator = 'system')"""


def settled_fingerprint(policy: Policy, kept_apart: set[tuple[str, str]]) -> str:
    """What a settled scope's plan depends on besides its rows: code, dictionaries and policy (as
    the kept verdicts), and the unmerged clusters kept apart."""
    apart = "\x1e".join(sorted(f"{a}\x1f{b}" for a, b in kept_apart))
    return hashlib.sha256(f"{guard_fingerprint(policy)}\x1d{apart}".encode()).hexdigest()[:32]


def scope_digests(con: duckdb.DuckDBPyConnection, policy: Policy, only: str | None = None) -> pl.DataFrame:
    """Per scope with eligible memories: tenant, agent_id, user_id and the digest of what its plan
    reads; `only`: a registered table of the scopes to digest (all when None)."""
    has_embeddings = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'embeddings'").fetchone()[0]
    vectors = ("SELECT text_hash, string_agg(model, ',' ORDER BY model) AS models FROM embeddings "
               "WHERE len(vector) > 0 AND unknown_ratio <= $ratio GROUP BY text_hash") if has_embeddings else \
        "SELECT NULL::VARCHAR AS text_hash, NULL::VARCHAR AS models WHERE false"
    fields = ", ".join(f"coalesce(({sql})::VARCHAR, '\x01')" for sql in (
        "m.id", "md5(m.content)", "m.content_hash", "m.type", "list_sort(m.tags)", "m.importance", "m.created_at",
        "v.models"))
    # each memory's fields (its id among them) hashed, and the md5 halves summed per scope with the
    # count: the same set of rows gives the same digest, and no sort by id is needed (1M memories:
    # 7.2 s with an ordered concatenation, 4.3 s so)
    return con.execute(
        f"""WITH v AS ({vectors})
            SELECT tenant, agent_id, user_id,
                   {set_digest_sql('row')} AS digest
            FROM (SELECT m.tenant, m.agent_id, m.user_id, concat_ws(chr(31), {fields}) AS row
                  FROM memories m LEFT JOIN v ON v.text_hash = m.content_hash
                  WHERE {ELIGIBLE}{_within(only)})
            GROUP BY ALL ORDER BY ALL""",
        {"ratio": policy.search.max_unknown_ratio} if has_embeddings else {}).pl()


def _within(only: str | None) -> str:
    if only is None:
        return ""
    return (f" AND EXISTS (SELECT 1 FROM {only} o WHERE o.tenant = m.tenant AND o.agent_id IS NOT DISTINCT FROM "
            "m.agent_id AND o.user_id IS NOT DISTINCT FROM m.user_id)")


def unsettled(con: duckdb.DuckDBPyConnection, digests: pl.DataFrame, fingerprint: str) -> pl.DataFrame:
    """The scopes of `digests` to plan tonight: new, changed, planned under another fingerprint, or
    not settled."""
    kept = con.execute("SELECT tenant, agent_id, user_id, digest AS kept FROM dedup_scopes "
                       "WHERE settled AND fingerprint = ?", [fingerprint]).pl()
    joined = digests.join(kept, on=list(SCOPE), how="left", nulls_equal=True)
    return joined.filter(pl.col("kept").is_null() | (pl.col("kept") != pl.col("digest"))).select(*SCOPE)


def keep_settled(con: duckdb.DuckDBPyConnection, policy: Policy, planned: pl.DataFrame, fingerprint: str,
                 restless: set[tuple]) -> None:
    """After tonight's merges (inside the caller's transaction): the digests of the planned scopes,
    settled unless in `restless` (merged or raised tonight); scopes with no eligible memory left go."""
    con.register("planned_scopes", planned)
    try:
        mine = scope_digests(con, policy, only="planned_scopes")
        rows = mine.with_columns(fingerprint=pl.lit(fingerprint), settled=pl.Series(
            [tuple(r) not in restless for r in mine.select(*SCOPE).iter_rows()], dtype=pl.Boolean))
        con.register("settled_tonight", rows)
        con.execute("""DELETE FROM dedup_scopes d WHERE EXISTS (SELECT 1 FROM planned_scopes p
                       WHERE p.tenant = d.tenant AND p.agent_id IS NOT DISTINCT FROM d.agent_id
                         AND p.user_id IS NOT DISTINCT FROM d.user_id)
                       OR NOT EXISTS (SELECT 1 FROM memories m WHERE m.tenant = d.tenant
                         AND m.agent_id IS NOT DISTINCT FROM d.agent_id AND m.user_id IS NOT DISTINCT FROM d.user_id
                         AND """ + ELIGIBLE + ")")
        con.execute("INSERT INTO dedup_scopes SELECT tenant, agent_id, user_id, digest, fingerprint, settled "
                    "FROM settled_tonight")
    finally:
        con.unregister("planned_scopes")
        con.unregister("settled_tonight")


__all__ = ["keep_settled", "scope_digests", "settled_fingerprint", "unsettled"]
