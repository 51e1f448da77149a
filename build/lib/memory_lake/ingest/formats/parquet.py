"""Parquet (``.parquet``): one memory per row, its columns the record's fields (README "The
snapshot contract"). A row's line is its 1-based position in the file.

Each row becomes the JSON text of its record, so Parquet records go through the same shape
checks, redaction and validation as JSON ones. A file pyarrow cannot read is one ``unreadable
file`` (an InputError the ingest step records), never a failed run.
"""

from __future__ import annotations

import io

import duckdb
import polars as pl

from ...store import InputError


def read_parquet(con: duckdb.DuckDBPyConnection, data: bytes) -> pl.DataFrame:
    """Records of a Parquet file as (line, raw, ok, problem); InputError when it is unreadable."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise InputError(f"not a readable Parquet file ({exc})") from None
    con.register("snapshot_parquet", table)
    try:
        return con.execute(
            "SELECT (row_number() OVER ())::BIGINT AS line, to_json(t)::VARCHAR AS raw, true AS ok, "
            "NULL::VARCHAR AS problem FROM snapshot_parquet t"
        ).pl()
    finally:
        con.unregister("snapshot_parquet")
