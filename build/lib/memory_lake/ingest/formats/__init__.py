"""Snapshot formats: one module per format, each reading a file's bytes into the records the
snapshot contract (``snapshot.py``) then checks, redacts and validates.

Every reader returns the same frame: (line, raw, ok, problem), one row per record, ``line``
1-based (the record's position in a document), ``raw`` the record's JSON text, ``ok`` whether it
decoded as UTF-8 and, when not, ``problem`` saying where it failed. A file no reader can open at
all raises InputError (the ingest step records it as an ``unreadable file``).

A new format (the hot-memory tree, a transcript, a Mem0 export) plugs in as one more module here
exposing ``read_<format>(con, data) -> frame`` with that contract, one entry in ``READERS`` and
its suffix in ``FORMAT_OF_SUFFIX`` (and in ``load.SNAPSHOT_SUFFIXES``, which the inbox scan
accepts); validation, redaction, merge and quarantine then work unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import duckdb
import polars as pl

from .jsonl import read_jsonl
from .parquet import read_parquet
from .savefile import read_savefile

READERS: dict[str, Callable[[duckdb.DuckDBPyConnection, bytes], pl.DataFrame]] = {
    "jsonl": read_jsonl,
    "json": read_savefile,
    "parquet": read_parquet,
}
# A file's format from its suffix (any case); anything else the inbox takes is JSON Lines.
FORMAT_OF_SUFFIX = {".json": "json", ".parquet": "parquet"}


def read_records(con: duckdb.DuckDBPyConnection, data: bytes, fmt: str) -> pl.DataFrame:
    """Records of a file in format `fmt` (``READERS``) as (line, raw, ok, problem): 1-based line
    (record position in a document), the record's text, whether it decoded as UTF-8 and, when
    not, where it failed. Blank lines are skipped."""
    return READERS[fmt](con, data)


def format_of(path: Path) -> str:
    """The format of a snapshot file, from its name."""
    return FORMAT_OF_SUFFIX.get(path.suffix.lower(), "jsonl")


__all__ = ["READERS", "format_of", "read_records"]
