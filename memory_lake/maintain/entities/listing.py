"""Reading entity memory (seed 002 "实体记忆"): a scope's entities with their facts, merged (one
fact with its sources and mention count) and with their history (superseded facts, what changed and
when). ``scope_entity_facts`` is the one query listings and context packs read (also over a
published version: ``published_entity_facts``); ``group_facts`` turns an entity's rows into merged
facts, optionally only the mentions of allowed memories; ``list_entities`` is the read-only
listing, whose facts name dedup's open contradiction when one disputes a superseding.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ...store import check_scope, iso, parquet_sql, set_digest_sql, table_files


def has_entity_tables(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `con` has the entity tables (a version published before them has not)."""
    return con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name IN ('entities', 'entity_facts')"
                       ).fetchone()[0] == 2


def scope_entity_facts(con: duckdb.DuckDBPyConnection, where: str = "", params: list | None = None) -> pl.DataFrame:
    """Entities with their facts, one row per fact (canonical or not), for `where` over ``e``
    (entities) - what listings and context packs read. Empty when the lake has no entity tables
    (a version published before them)."""
    columns = {"entity_id": pl.String, "tenant": pl.String, "agent_id": pl.String, "user_id": pl.String,
               "name": pl.String, "kind": pl.String, "mention_count": pl.Int64, "first_mentioned": pl.Datetime("us"),
               "last_mentioned": pl.Datetime("us"), "fact_id": pl.String, "memory_id": pl.String,
               "content": pl.String, "confidence": pl.Float64, "mentioned_at": pl.Datetime("us"),
               "merged_into": pl.String, "superseded_by": pl.String, "change": pl.String,
               "valid_from": pl.Datetime("us"), "valid_to": pl.Datetime("us")}
    if not has_entity_tables(con):
        return pl.DataFrame(schema=columns)
    return con.execute(
        f"""
        SELECT {_FACT_COLUMNS}
        FROM entities e JOIN entity_facts f USING (entity_id)
        {('WHERE ' + where) if where else ''}
        ORDER BY e.tenant, e.agent_id NULLS FIRST, e.user_id NULLS FIRST, {_FACT_ORDER}
        """, params or []).pl().cast(columns)


_FACT_FIELDS = ("e.entity_id", "e.tenant", "e.agent_id", "e.user_id", "e.name", "e.kind", "e.mention_count",
                "e.first_mentioned", "e.last_mentioned", "f.fact_id", "f.memory_id", "f.content", "f.confidence",
                "f.mentioned_at", "f.merged_into", "f.superseded_by", "f.change", "f.valid_from", "f.valid_to")
_FACT_COLUMNS = ", ".join(_FACT_FIELDS)
_FACT_ORDER = "e.entity_id, f.mentioned_at, f.fact_id"


def scope_fact_digests(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str | None, str | None], str]:
    """Per scope with entity facts: a digest of its rows of ``scope_entity_facts`` (what tells that a
    context pack's facts did not change without reading them; publish/packs.py): the row count and
    the sums of both halves of each row's md5. A row holds the fields its order is read by, so the
    set of rows fixes their order, and sums need no sort (an ordered concatenation took twice as long)."""
    if not has_entity_tables(con):
        return {}
    rows = con.execute(
        f"""
        SELECT tenant, agent_id, user_id,
               {set_digest_sql('row')}
        FROM (SELECT e.tenant, e.agent_id, e.user_id,
                     to_json(struct_pack({', '.join(f'{c[2:]} := {c}' for c in _FACT_FIELDS)}))::VARCHAR AS row
              FROM entities e JOIN entity_facts f USING (entity_id))
        GROUP BY ALL
        """).fetchall()
    return {(t, a, u): digest for t, a, u, digest in rows}


def published_entity_facts(version: Path) -> pl.DataFrame:
    """``scope_entity_facts`` of an export version folder (its ``tables/*.parquet``), e.g. to
    rebuild a scope's context.md after a forget."""
    con = duckdb.connect(":memory:")
    try:
        files = table_files(version)  # a table's file or its parts (format 1.4.0: entity_facts)
        for name in ("entities", "entity_facts"):
            if files.get(name):
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM {parquet_sql(files[name])}")
        return scope_entity_facts(con)
    finally:
        con.close()


# What group_facts reads of a row (a context pack converts only these: publish/packs.py).
FACT_ROW_FIELDS = ("fact_id", "memory_id", "content", "confidence", "mentioned_at", "merged_into", "superseded_by",
                   "change", "valid_to")


def group_facts(rows: list[dict[str, Any]], allowed: set[str] | None = None) -> list[dict[str, Any]]:
    """One entity's fact rows as merged facts: each fact with its text (the earliest mention), its
    sources, mention count, confidence, valid_from / valid_to and whether it is current, oldest
    first. With `allowed` (memory ids), only mentions from those memories count; a fact whose
    superseding fact has no allowed mention is current again."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if allowed is None or row["memory_id"] in allowed:
            groups[row["merged_into"] or row["fact_id"]].append(row)
    head_of = {row["fact_id"]: row for row in rows}
    facts = []
    for head_id, members in groups.items():
        if len(members) > 1:  # most facts have one mention (a context pack groups thousands)
            members.sort(key=_mention_order)
        head = head_of.get(head_id, members[0])
        by = head.get("superseded_by")
        current = by is None or by not in groups
        confidence = 1.0
        for member in members:
            confidence *= 1.0 - member["confidence"]
        facts.append({
            "fact_id": head_id, "content": members[0]["content"],
            "sources": sorted({m["memory_id"] for m in members}), "mentions": len(members),
            "confidence": round(1.0 - confidence, 3), "valid_from": members[0]["mentioned_at"],
            "valid_to": None if current else head.get("valid_to"), "current": current,
            "superseded_by": None if current else by, "change": None if current else head.get("change"),
        })
    facts.sort(key=_fact_order)
    return facts


def _mention_order(row: dict[str, Any]) -> tuple:
    return row["mentioned_at"], row["fact_id"]


def _fact_order(fact: dict[str, Any]) -> tuple:
    return fact["valid_from"], fact["fact_id"]


def list_entities(lake, *, tenant: str | None = None, agent: str | None = None, user: str | None = None
                  ) -> dict[str, Any]:
    """The entities of a scope (read-only, also while a run holds the lake): ``{"entities": [...],
    "notes": [...]}``, most mentioned first; each with its current facts (merged: sources and
    counts) and its history (superseded facts, with what changed and when). An unknown tenant,
    agent or user is an InputError naming the known ones."""
    check_scope(lake, tenant, agent, user)
    where, params = [], []
    for column, value in (("tenant", tenant), ("agent_id", agent), ("user_id", user)):
        if value is not None:
            where.append(f"e.{column} = ?")
            params.append(value)
    with lake.reading() as (con, _source, note):
        rows = scope_entity_facts(con, " AND ".join(where), params)
        (memories,) = con.execute(
            "SELECT count(*) FROM memories WHERE status NOT IN ('deleted', 'merged')"
            + "".join(f" AND {w[2:]}" for w in where), params).fetchone()
        read = 0
        if con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'entity_extractions'"
                       ).fetchone()[0]:
            (read,) = con.execute("SELECT count(*) FROM entity_extractions e"
                                  + (" WHERE " + " AND ".join(where) if where else ""), params).fetchone()
        disputes: dict[frozenset, str] = {}
        if con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'conflicts'").fetchone()[0]:
            # dedup's open contradictions: a user decides between the two memories, so a fact the
            # other one supersedes here is disputed, not settled (the conflict queue says so too)
            disputes = {frozenset(pair): cid for cid, *pair in con.execute(
                "SELECT conflict_id, memory_id, other_memory_id FROM conflicts WHERE status = 'open' "
                "AND kind = 'contradiction' AND other_memory_id IS NOT NULL").fetchall()}
    entities = []
    for (entity_id,), part in rows.group_by(["entity_id"], maintain_order=True):
        first = part.row(0, named=True)
        facts = _disputed(group_facts(part.to_dicts()), disputes)
        entities.append({
            "entity_id": entity_id, "tenant": first["tenant"], "agent_id": first["agent_id"],
            "user_id": first["user_id"], "name": first["name"], "kind": first["kind"],
            "mention_count": first["mention_count"], "first_mentioned": iso(first["first_mentioned"]),
            "last_mentioned": iso(first["last_mentioned"]),
            "facts": [_fact_json(f) for f in reversed(facts) if f["current"]],
            "history": [_fact_json(f) for f in reversed(facts) if not f["current"]],
        })
    entities.sort(key=lambda e: (-e["mention_count"], e["tenant"], e["agent_id"] or "", e["user_id"] or "", e["name"]))
    notes = [note] if note else []
    if not entities:
        scope = _scope_text(tenant, agent, user)
        if memories == 0:
            notes.append(f"no entities in {scope}: it has no active memories")
        elif read == 0:
            its = "its one memory was" if memories == 1 else f"its {memories} memories were"
            notes.append(f"no entities in {scope}: {its} not read for entities yet "
                         f"(the nightly run's extract_entities step does it: memory-lake run nightly)")
        else:
            its = "its one memory names" if memories == 1 else f"none of its {memories} memories names"
            what = "no person, place, organisation or thing" if memories == 1 else "a person, place, organisation or thing"
            notes.append(f"no entities in {scope}: {its} {what}")
    return {"entities": entities, "notes": notes}


def _disputed(facts: list[dict[str, Any]], disputes: dict[frozenset, str]) -> list[dict[str, Any]]:
    """`facts` with ``disputed``: the open contradiction between a superseded fact's memory and the
    memory of the fact that superseded it (None when there is none)."""
    by_id = {f["fact_id"]: f for f in facts}
    for fact in facts:
        newer = by_id.get(fact.get("superseded_by") or "")
        fact["disputed"] = next((disputes[frozenset((a, b))] for a in fact["sources"] for b in (newer or {}).get(
            "sources", ()) if frozenset((a, b)) in disputes), None)
    return facts


def _fact_json(fact: dict[str, Any]) -> dict[str, Any]:
    return {"fact_id": fact["fact_id"], "content": fact["content"], "sources": fact["sources"],
            "mentions": fact["mentions"], "confidence": fact["confidence"], "valid_from": iso(fact["valid_from"]),
            "valid_to": iso(fact["valid_to"]), "superseded_by": fact["superseded_by"], "change": fact["change"],
            "disputed": fact.get("disputed")}


def _scope_text(tenant: str | None, agent: str | None, user: str | None) -> str:
    named = [f"{label} {value}" for label, value in (("tenant", tenant), ("agent", agent), ("user", user))
             if value is not None]
    return "scope " + ", ".join(named) if named else "the lake"
