"""Forgetting: one function that removes a forgotten memory's text from everything that holds it.

Seed 003 (user self-service forgetting): DELETE, not DROP; the audit stays complete. A forgotten
memory becomes a tombstone (status ``deleted``, empty content) with a history row that keeps the
id, content hash, operator, time and reason, never the text. Every table or file that can hold the
text registers a scrubber here (DESIGN "Forget reaches everything"), so a new table cannot be
forgotten by the forget.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import duckdb
import polars as pl

from . import schema
from .history import HISTORY_COLUMNS, next_history_seq, row_image

# Columns that can hold a memory's text; emptied in every history image of a forgotten memory.
TEXT_COLUMNS = ("content", "summary", "tags", "extra")
_NO_TEXT = {column: "NULL" for column in TEXT_COLUMNS}

Scrubber = Callable[[duckdb.DuckDBPyConnection], None]
_SCRUBBERS: list[tuple[str, Scrubber]] = []


def register_scrubber(name: str) -> Callable[[Scrubber], Scrubber]:
    """Register a function that removes forgotten text (ids in temp table ``forget_ids``) from a store."""

    def wrap(fn: Scrubber) -> Scrubber:
        _SCRUBBERS.append((name, fn))
        return fn

    return wrap


def scrubbers() -> list[str]:
    """Names of every store the forget reaches (for audits and tests)."""
    return [name for name, _ in _SCRUBBERS]


@register_scrubber("memory_history")
def _scrub_history(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        f"""
        UPDATE memory_history
        SET before = CASE WHEN before IS NULL THEN NULL ELSE {row_image('memory_history.before', **_NO_TEXT)} END,
            after = CASE WHEN after IS NULL THEN NULL ELSE {row_image('memory_history.after', **_NO_TEXT)} END
        WHERE memory_id IN (SELECT id FROM forget_ids)
        """
    )


@register_scrubber("quarantine")
def _scrub_quarantine(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("UPDATE quarantine SET raw = '[forgotten]' WHERE memory_id IN (SELECT id FROM forget_ids)")


def forget_memories(con: duckdb.DuckDBPyConnection, requests: pl.DataFrame, *, as_of: datetime, run_id: str,
                    source: str | None = None) -> int:
    """Tombstone the memories in `requests` (columns id, operator, reason[, line]); return how many.

    The caller checks permissions (important memories need operator ``user``) and holds the write
    transaction. Memories already deleted are left as they are.
    """
    if "line" not in requests.columns:
        requests = requests.with_columns(line=pl.lit(None, dtype=pl.Int64))
    con.register("forget_requests", requests)
    try:
        con.execute(
            """
            CREATE OR REPLACE TEMP TABLE forget_ids AS
            SELECT r.id, any_value(r.operator) AS operator, any_value(r.reason) AS reason, min(r.line) AS line
            FROM forget_requests r JOIN memories m ON m.id = r.id AND m.status <> 'deleted'
            GROUP BY r.id
            """
        )
    finally:
        con.unregister("forget_requests")
    (count,) = con.execute("SELECT count(*) FROM forget_ids").fetchone()
    if count == 0:
        return 0
    tombstone = {**_NO_TEXT, "status": "'deleted'", "version": "m.version + 1", "operator": "f.operator",
                 "content": "''", "tags": "[]"}
    con.execute(
        f"""
        INSERT INTO memory_history ({HISTORY_COLUMNS})
        SELECT $seq + row_number() OVER (ORDER BY m.id), m.id, m.tenant, m.version + 1, 'forget',
               ['content', 'summary', 'tags', 'extra', 'status'], f.operator, $run_id, f.reason, $as_of,
               {row_image('m', **_NO_TEXT)}, {row_image('m', **tombstone)},
               $source, f.line, NULL
        FROM memories m JOIN forget_ids f USING (id)
        """,
        {"run_id": run_id, "as_of": as_of, "source": source, "seq": next_history_seq(con)},
    )
    con.execute(
        """
        UPDATE memories SET content = '', summary = NULL, tags = []::VARCHAR[], extra = NULL, status = 'deleted',
               version = memories.version + 1, operator = f.operator, updated_at = greatest(memories.updated_at, $as_of)
        FROM forget_ids f WHERE memories.id = f.id
        """,
        {"as_of": as_of},
    )
    for _, scrub in _SCRUBBERS:
        scrub(con)
    con.execute("DROP TABLE forget_ids")
    return count
