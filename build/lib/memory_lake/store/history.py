"""`memory_history` helpers shared by every step that changes memories.

Images (before/after) are typed structs with one field per core column, so analysts read
``after.content`` directly and bulk writes cost no JSON serialisation.

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


def row_image(alias: str, prefix: str = "", **replace: str) -> str:
    """SQL for the history image (a struct of every core column) of `alias`.`prefix<column>`;
    `replace` gives SQL for fields that differ (e.g. ``content="NULL"``)."""
    fields = []
    for name, kind in schema.MEMORY_COLUMNS.items():
        value = replace.get(name, f"{alias}.{prefix}{name}")
        fields.append(f"{name} := ({value})::{kind.replace(' NOT NULL', '')}")
    return f"struct_pack({', '.join(fields)})"
