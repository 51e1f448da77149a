"""`memory_history` helpers shared by every step that changes memories.

History rows are numbered explicitly (max + row_number) rather than by a sequence default:
DuckDB draws sequence values one row at a time, which dominates bulk inserts of millions of rows.
"""

from __future__ import annotations

import duckdb

from . import schema

HISTORY_COLUMNS = ("seq, memory_id, tenant, version, change, changed_fields, operator, run_id, reason, as_of, "
                   "before, after, source_file, source_line, trace_id")


def next_history_seq(con: duckdb.DuckDBPyConnection) -> int:
    """The highest seq so far; new rows number from it (by file line, unique within a file)."""
    return con.execute("SELECT coalesce(max(seq), 0) FROM memory_history").fetchone()[0]


def row_json(alias: str, prefix: str = "", exclude: tuple[str, ...] = ()) -> str:
    """SQL for the JSON image of a memory row (core columns) from `alias`.`prefix<column>`."""
    fields = ", ".join(f"{c} := {alias}.{prefix}{c}" for c in schema.MEMORY_COLUMNS if c not in exclude)
    return f"to_json(struct_pack({fields}))"
