"""Snapshot formats: one module per format, each reading a file's bytes into the records the
snapshot contract (``snapshot.py``) then checks, redacts and validates.

Every reader returns the same frame: (line, raw, ok, problem), one row per record, ``line``
1-based (the record's position in a document), ``raw`` the record's JSON text, ``ok`` whether it
decoded as UTF-8 and, when not, ``problem`` saying where it failed. A file no reader can open at
all raises InputError (the ingest step records it as an ``unreadable file``).

A new format (the hot-memory tree, a transcript, a Mem0 export) plugs in as one more module here
exposing ``read_<format>(con, data) -> frame`` with that contract (``(con, data, scope)`` for a
format that carries no tenant: ``NEEDS_TENANT``; a reader that skips inputs on purpose, such as a
transcript's pleasantries, returns ``(frame, skipped counts by kind)``), one entry in ``READERS``
and its suffix in ``FORMAT_OF_SUFFIX`` or its shape in ``format_of`` (and in
``scan.SNAPSHOT_SUFFIXES``, which the inbox scan accepts); validation, redaction, merge and
quarantine then work unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import duckdb
import polars as pl

from .jsonl import decode, read_jsonl
from .letta import is_letta, read_letta
from .mem0 import is_mem0, read_mem0
from .transcript import is_transcript, read_transcript
from .zep import is_zep, read_zep
from .parquet import read_parquet
from .savefile import read_savefile

READERS: dict[str, Callable[..., pl.DataFrame]] = {
    "jsonl": read_jsonl,
    "json": read_savefile,
    "parquet": read_parquet,
    "mem0": read_mem0,
    "letta": read_letta,
    "zep": read_zep,
    "transcript": read_transcript,
}
# Formats that carry no tenant: their reader takes `ingest --tenant T` (and --agent, --user).
NEEDS_TENANT = frozenset({"mem0", "letta", "zep", "transcript"})
# A file's format from its suffix (any case); anything else the inbox takes is JSON Lines.
FORMAT_OF_SUFFIX = {".json": "json", ".parquet": "parquet"}
# A JSON document larger than this is not parsed to see its shape (it is read as a save file).
_SNIFF_LIMIT = 256 * 1024 * 1024
# How much of a JSON Lines file is read to see whether its first record is a chat message.
_FIRST_LINE_LIMIT = 1024 * 1024


def read_records(con: duckdb.DuckDBPyConnection, data: bytes, fmt: str, tenant: str | None = None,
                 scope: dict[str, str | None] | None = None) -> pl.DataFrame:
    """Records of a file in format `fmt` (``READERS``) as (line, raw, ok, problem): 1-based line
    (record position in a document), the record's text, whether it decoded as UTF-8 and, when
    not, where it failed. Blank lines are skipped. `tenant` (and `scope`'s agent_id, user_id) are
    for formats that carry none."""
    return read_counted(con, data, fmt, tenant, scope)[0]


def read_counted(con: duckdb.DuckDBPyConnection, data: bytes, fmt: str, tenant: str | None = None,
                 scope: dict[str, str | None] | None = None) -> tuple[pl.DataFrame, dict[str, int]]:
    """``read_records`` and the inputs the reader skipped on purpose, counted by kind (a
    transcript's ``pleasantry``, a Letta export's ``deleted`` passage); {} for most formats."""
    if fmt in NEEDS_TENANT:
        result = READERS[fmt](con, data, {"tenant": tenant, **(scope or {})})
    else:
        result = READERS[fmt](con, data)
    return result if isinstance(result, tuple) else (result, {})


def format_of(path: Path, data: bytes | None = None) -> str:
    """The format of a snapshot file: from its name, and for a ``.json`` document from its shape
    when `data` is given (a Mem0 ``get_all`` result is ``mem0``; a save file or a list of records
    is ``json``), and for JSON Lines from its first record (a chat message: ``transcript``)."""
    fmt = FORMAT_OF_SUFFIX.get(path.suffix.lower(), "jsonl")
    if fmt == "jsonl" and data is not None and _first_record_is_message(data):
        return "transcript"
    if fmt == "json" and data is not None and len(data) <= _SNIFF_LIMIT:
        _, text, decoded = decode(data)
        try:
            document = json.loads(text) if decoded else None
        except ValueError:
            document = None
        for name, test in (("mem0", is_mem0), ("letta", is_letta), ("zep", is_zep)):
            if test(document):
                return name
    return fmt


def _first_record_is_message(data: bytes) -> bool:
    """Whether the first non-blank line of a JSON Lines file is a chat message (``is_transcript``)."""
    head = data[:_FIRST_LINE_LIMIT].lstrip(b"\xef\xbb\xbf \t\r\n")
    first = head.split(b"\n", 1)[0]
    try:
        record = json.loads(first)
    except ValueError:  # not JSON, or not UTF-8: the JSON Lines reader says which line and why
        return False
    return isinstance(record, dict) and is_transcript(record)


__all__ = ["NEEDS_TENANT", "READERS", "format_of", "read_counted", "read_records"]
