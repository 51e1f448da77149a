"""The memory-orchestrator save file (``.json``): one JSON document, ``{"tenant": ..., "agent_id":
..., "user_id": ..., "memories": [...]}`` (README "The snapshot contract").

Its ``memories`` array holds the records, one record per element (its 1-based position is the
record's line); the top-level ``tenant`` / ``agent_id`` / ``user_id`` fill the records' gaps (a
record's own values win). A record's ``type`` may carry the tier, as in seed 000's ``type:
"long-term"`` (the contract maps it). A plain JSON array of records is read the same way. A save
file whose ``memories`` is no list (an object, a string, null) is one record of the ``wrong type``
(``memories must be a list of records``), never read as a memory itself.

A save file that is not strict JSON (a trailing comma, NaN ...) is one bad record, its line
breaks read as JSON whitespace; a ``.json`` file that is no document but several lines is read
as JSON Lines, so that each of its lines gets its own verdict.
"""

from __future__ import annotations

import duckdb
import polars as pl

from ..snapshot import MEMORIES_NOT_A_LIST, not_strict_sql
from .jsonl import decode, frame, line_records


def read_savefile(con: duckdb.DuckDBPyConnection, data: bytes) -> pl.DataFrame:
    """Records of a save file (or a JSON array of records) as (line, raw, ok, problem)."""
    data, text, decoded = decode(data)
    if decoded:
        records = _document_records(con, text)
        if records is not None:
            return records
        if not text.strip():
            return frame([], [], [])
        if "\n" not in text.strip() or _is_lenient_document(con, text):
            # one broken document is one bad record; its line breaks are JSON whitespace
            return frame([1], [text.strip().replace("\n", " ")], [True])
    return line_records(data, decoded)


def _document_records(con: duckdb.DuckDBPyConnection, text: str) -> pl.DataFrame | None:
    """Records of a save file (or a JSON array of records); None when it is not one (strict JSON)."""
    shape = con.execute(
        f"SELECT CASE WHEN NOT json_valid($t) OR {not_strict_sql('$t')} THEN NULL "
        "WHEN json_type($t::JSON) = 'ARRAY' THEN 'array' "
        "WHEN json_type($t::JSON, '$.memories') = 'ARRAY' THEN 'save' "
        "WHEN json_type($t::JSON) = 'OBJECT' AND json_exists($t::JSON, '$.memories') THEN 'bad save' END",
        {"t": text},
    ).fetchone()[0]
    if shape is None:
        return None
    if shape == "bad save":  # one record: the document, to be quarantined as the wrong type
        return frame([1], [text.strip().replace("\n", " ")], [True]).with_columns(
            problem=pl.lit(MEMORIES_NOT_A_LIST))
    return con.execute(
        """
        WITH doc AS (SELECT $t::JSON AS j),
        items AS (
            SELECT CASE WHEN $shape = 'array' THEN j ELSE j -> '$.memories' END AS arr,
                   CASE WHEN $shape = 'save'
                        THEN json_object('tenant', j -> '$.tenant', 'agent_id', j -> '$.agent_id',
                                         'user_id', j -> '$.user_id') END AS defaults
            FROM doc
        ),
        records AS (
            SELECT unnest(range(1, json_array_length(arr)::BIGINT + 1)) AS line,
                   unnest(json_extract(arr, '$[*]')) AS rec, defaults
            FROM items
        )
        SELECT line::BIGINT AS line,
               CASE WHEN json_type(rec) = 'OBJECT' AND defaults IS NOT NULL
                    THEN json_merge_patch(defaults, rec)::VARCHAR  -- the record's own values win
                    ELSE rec::VARCHAR END AS raw,
               true AS ok, NULL::VARCHAR AS problem
        FROM records ORDER BY line
        """,
        {"t": text, "shape": shape},
    ).pl()


def _is_lenient_document(con: duckdb.DuckDBPyConnection, text: str) -> bool:
    """A document DuckDB reads but strict JSON does not (a trailing comma, NaN ...)."""
    return con.execute(f"SELECT json_valid($t) AND {not_strict_sql('$t')}", {"t": text}).fetchone()[0]
