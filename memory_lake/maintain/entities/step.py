"""The nightly ``extract_entities`` step (seed 002 "实体记忆") and the forget of entity memory.

**Incremental**: ``entity_extractions`` records each memory read, with its content hash, scope,
creation time and the extractor version (with the user dictionary's hash). A run reads only new or
changed memories, drops the facts of memories that were forgotten or merged since, and recomputes
only the entities they touch; a second run with nothing new reads nothing. Summaries are not read:
they restate other memories, and would count every mention twice. A scope whose extraction raises
is left out with its error and read again by the next run.

Forget reaches both tables (scrubbers registered here): a forgotten memory's facts go, the facts
that repeated or superseded them are repaired, and an entity with no source left goes.
"""

from __future__ import annotations

from datetime import datetime

import duckdb
import polars as pl

from ...store import MemoryLakeError, Policy, StepReport, register_scrubber, step_error, transaction
from .extract import extract_mentions
from .facts import link_facts
from .rows import extractor_key

_SOURCE = """
    SELECT id, tenant, agent_id, user_id, content, content_hash, created_at FROM memories
    WHERE status NOT IN ('deleted', 'merged') AND type <> 'summary'
"""


def extract_entities(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """The nightly entity step: read new or changed memories, drop the facts of memories gone or
    changed since, and re-merge the facts of every entity they touch (see the module docstring)."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("entities", as_of)
    extractor = extractor_key(policy)
    report = StepReport("extract_entities", as_of, run_id,
                        {"memories_read": 0, "memories_gone": 0, "mentions": 0, "entities_changed": 0})
    with lake.writer(purpose="extract entities") as con:
        todo = con.execute(
            f"""
            SELECT s.id, s.tenant, s.agent_id, s.user_id, s.content, s.content_hash, s.created_at
            FROM ({_SOURCE}) s LEFT JOIN entity_extractions e ON e.memory_id = s.id
            WHERE e.memory_id IS NULL OR e.content_hash <> s.content_hash OR e.extractor <> $x
               OR e.created_at <> s.created_at OR e.agent_id IS DISTINCT FROM s.agent_id
               OR e.user_id IS DISTINCT FROM s.user_id
            ORDER BY s.id
            """, {"x": extractor}).pl()
        (gone,) = con.execute(f"SELECT count(*) FROM entity_extractions WHERE memory_id NOT IN (SELECT id FROM ({_SOURCE}))"
                              ).fetchone()
        if todo.height == 0 and gone == 0:
            return report
        known = frozenset(name for (name,) in con.execute("SELECT DISTINCT lower(name) FROM entities").fetchall())
        mentions, todo, report.errors = _mentions_isolated(todo, policy, known)
        with transaction(con):
            con.execute(f"CREATE OR REPLACE TEMP TABLE entity_stale AS SELECT memory_id FROM entity_extractions "
                        f"WHERE memory_id NOT IN (SELECT id FROM ({_SOURCE}))")
            con.register("entity_todo", todo.select("id"))
            con.register("entity_mentions", mentions)
            con.execute(
                """
                CREATE OR REPLACE TEMP TABLE entity_touched AS
                SELECT DISTINCT entity_id FROM entity_facts
                WHERE memory_id IN (SELECT id FROM entity_todo) OR memory_id IN (SELECT memory_id FROM entity_stale)
                UNION SELECT DISTINCT entity_id FROM entity_mentions
                """)
            con.execute("DELETE FROM entity_facts WHERE memory_id IN (SELECT id FROM entity_todo) "
                        "OR memory_id IN (SELECT memory_id FROM entity_stale)")
            con.execute("DELETE FROM entity_extractions WHERE memory_id IN (SELECT id FROM entity_todo) "
                        "OR memory_id IN (SELECT memory_id FROM entity_stale)")
            con.execute(
                """
                INSERT INTO entity_facts BY NAME
                SELECT fact_id, entity_id, tenant, agent_id, user_id, memory_id, content, surface, mention_kind,
                       slot_values, confidence, mentioned_at, mentioned_at AS valid_from, $as_of AS as_of
                FROM entity_mentions
                """, {"as_of": as_of})
            con.register("entity_read", todo.select("id", "tenant", "agent_id", "user_id", "content_hash", "created_at"))
            con.execute("INSERT INTO entity_extractions SELECT id, tenant, agent_id, user_id, content_hash, created_at, "
                        "$x, $as_of FROM entity_read", {"x": extractor, "as_of": as_of})
            _relink(con, policy, as_of)
            report.counts = {"memories_read": todo.height, "memories_gone": int(gone), "mentions": mentions.height,
                             "entities_changed": con.execute("SELECT count(*) FROM entity_touched").fetchone()[0]}
            for name in ("entity_todo", "entity_mentions", "entity_read"):
                con.unregister(name)
            con.execute("DROP TABLE entity_touched")
            con.execute("DROP TABLE entity_stale")
    return report


def _mentions_isolated(todo: pl.DataFrame, policy: Policy, known: frozenset[str] = frozenset()
                       ) -> tuple[pl.DataFrame, pl.DataFrame, list[dict]]:
    """`extract_mentions` of all of `todo` at once (the words seen across it inform each scope's
    reading); when that raises, scope by scope, and a scope that raises is left out with its error
    (`step_error`): its memories are not marked read, so the next run reads them again. Returns
    the mentions, the memories read and the errors."""
    try:
        return extract_mentions(todo, policy, known), todo, []
    except MemoryLakeError:
        raise  # the lake's own settings (a bad user dictionary entry): one clear error, not a scope's
    except Exception:
        pass
    found, read, errors = [], [], []
    for (tenant, agent, user), part in todo.group_by(["tenant", "agent_id", "user_id"], maintain_order=True):
        try:
            found.append(extract_mentions(part, policy, known))
            read.append(part)
        except MemoryLakeError:
            raise
        except Exception as exc:
            errors.append(step_error("extract_entities", exc, item=f"{part.height} memor{'y' if part.height == 1 else 'ies'}", tenant=tenant,
                                     agent_id=agent, user_id=user))
    mentions = pl.concat(found, how="vertical_relaxed") if found else extract_mentions(todo.head(0), policy)
    return mentions, pl.concat(read) if read else todo.head(0), errors


def _relink(con: duckdb.DuckDBPyConnection, policy: Policy, as_of: datetime) -> None:
    """Re-merge the facts of the entities in temp table ``entity_touched`` and rebuild their rows
    in ``entities`` (an entity without facts left goes)."""
    # `written`: the history row of the memory's last write, so that two memories of one time (a
    # file's lines without created_at) are read in the order they were written
    facts = con.execute(
        "SELECT f.fact_id, f.entity_id, f.content, f.slot_values, f.mentioned_at, coalesce(w.seq, 0) AS written "
        "FROM entity_facts f LEFT JOIN (SELECT memory_id, max(seq) AS seq FROM memory_history "
        "WHERE change IN ('insert', 'update') GROUP BY memory_id) w ON w.memory_id = f.memory_id "
        "WHERE f.entity_id IN (SELECT entity_id FROM entity_touched)").pl()
    links = link_facts(facts, policy)
    con.register("entity_links", links)
    con.execute(
        """
        UPDATE entity_facts SET merged_into = l.merged_into, superseded_by = l.superseded_by, change = l.change,
               valid_from = l.valid_from, valid_to = l.valid_to
        FROM entity_links l WHERE entity_facts.fact_id = l.fact_id
        """)
    con.unregister("entity_links")
    con.execute("DELETE FROM entities WHERE entity_id IN (SELECT entity_id FROM entity_touched)")
    # the name: the spelling most mentions use (then the earliest); the kind: the most frequent one a
    # pattern or tag gave ("thing" only when nothing said more)
    con.execute(
        """
        INSERT INTO entities
        WITH spelled AS (
            SELECT entity_id, surface, count(*) AS n, min(mentioned_at) AS first FROM entity_facts
            WHERE entity_id IN (SELECT entity_id FROM entity_touched) GROUP BY ALL),
        kinds AS (
            SELECT entity_id, mention_kind, count(*) AS n FROM entity_facts
            WHERE entity_id IN (SELECT entity_id FROM entity_touched) GROUP BY ALL)
        SELECT f.entity_id, any_value(f.tenant), any_value(f.agent_id), any_value(f.user_id),
               (SELECT arg_max(surface, (n, -epoch(first), surface)) FROM spelled s WHERE s.entity_id = f.entity_id),
               (SELECT arg_max(mention_kind, (mention_kind <> 'thing', n, mention_kind)) FROM kinds k
                WHERE k.entity_id = f.entity_id),
               count(DISTINCT f.memory_id), list(DISTINCT f.memory_id ORDER BY f.memory_id),
               min(f.mentioned_at), max(f.mentioned_at), $as_of
        FROM entity_facts f WHERE f.entity_id IN (SELECT entity_id FROM entity_touched)
        GROUP BY f.entity_id
        """, {"as_of": as_of})


# ---------------------------------------------------------------------------- forget
@register_scrubber("entity_facts")
def _scrub_entity_facts(con: duckdb.DuckDBPyConnection) -> None:
    # A forgotten memory's facts go. A fact that repeated one of them now repeats the earliest
    # remaining repeat, which takes over its place in history; a fact it had superseded is
    # superseded by that heir, or current again when none is left. Only this table is read, so
    # the same statements clean every exported copy.
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE fact_heirs AS
        SELECT c.fact_id AS old_id, h.heir, c.superseded_by, c.change, c.valid_to, h.valid_from
        FROM entity_facts c
        JOIN (SELECT merged_into, arg_min(fact_id, (mentioned_at, fact_id)) AS heir,
                     min(mentioned_at) AS valid_from
              FROM entity_facts WHERE merged_into IS NOT NULL AND memory_id NOT IN (SELECT id FROM forget_ids)
              GROUP BY merged_into) h ON h.merged_into = c.fact_id
        WHERE c.memory_id IN (SELECT id FROM forget_ids) AND c.merged_into IS NULL
        """)
    con.execute(
        """
        UPDATE entity_facts SET merged_into = CASE WHEN entity_facts.fact_id = h.heir THEN NULL ELSE h.heir END,
               superseded_by = CASE WHEN entity_facts.fact_id = h.heir THEN h.superseded_by ELSE NULL END,
               change = CASE WHEN entity_facts.fact_id = h.heir THEN h.change ELSE NULL END,
               valid_to = CASE WHEN entity_facts.fact_id = h.heir THEN h.valid_to ELSE NULL END,
               valid_from = h.valid_from
        FROM fact_heirs h WHERE entity_facts.merged_into = h.old_id
        """)
    con.execute(
        """
        UPDATE entity_facts SET superseded_by = h.heir, valid_to = h.valid_from
        FROM fact_heirs h WHERE entity_facts.superseded_by = h.old_id
        """)
    con.execute(
        """
        UPDATE entity_facts SET superseded_by = NULL, change = NULL, valid_to = NULL
        WHERE superseded_by IN (SELECT fact_id FROM entity_facts WHERE memory_id IN (SELECT id FROM forget_ids))
        """)
    con.execute("DELETE FROM entity_facts WHERE memory_id IN (SELECT id FROM forget_ids)")
    con.execute("DROP TABLE fact_heirs")


@register_scrubber("entities")
def _scrub_entities(con: duckdb.DuckDBPyConnection) -> None:
    # An entity keeps only its other sources; one with none left goes (its name came from them).
    con.execute("CREATE OR REPLACE TEMP TABLE forgotten_list AS SELECT coalesce(list(id), []::VARCHAR[]) AS ids "
                "FROM forget_ids")
    con.execute(
        """
        UPDATE entities SET memory_ids = list_filter(memory_ids, m -> NOT list_contains(f.ids, m))
        FROM forgotten_list f WHERE list_has_any(entities.memory_ids, f.ids)
        """)
    con.execute("UPDATE entities SET mention_count = len(memory_ids) WHERE mention_count <> len(memory_ids)")
    con.execute("DELETE FROM entities WHERE mention_count = 0")
    con.execute("DROP TABLE forgotten_list")
