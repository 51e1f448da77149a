"""What forget must reach, declared here and registered by the stage that owns each store (DESIGN
"Forget reaches everything"; seed 003, user self-service forgetting).

A forget starts low (ingest tombstones a memory a snapshot deletes; `forget` and the decision queue
do it for a user) but the text it removes also sits in stores higher stages own: search's postings
and vectors, maintain's entities and summaries, publish's export versions, observe's reports. A
lower stage never imports a higher one, so the owners register here instead, when their module is
imported (importing `memory_lake` imports every stage):

- **table scrubbers** (``register_scrubber``) run inside the forget's transaction, on the ids in
  the temp table ``forget_ids`` (id, operator, reason, line, as_of). A table scrubber is named
  after the table it cleans and touches only that table, because it is replayed on the table's
  exported copy (``exports/v<N>/tables/<name>.parquet``) in every kept version;
- **file scrubbers** (``register_file_scrubber``) run after the commit: raw copies, the search log,
  every kept export version and HTML reports; they return the paths they rewrote.

The stores are declared in ``SCRUBBED_TABLES`` and ``SCRUBBED_FILES`` (the order they run in): a
name that is not declared cannot register, and a forget refuses to start while a declared store has
no scrubber (`table_scrubbers`, `file_scrubber_list`), so a store cannot be missed silently.

Tables checked and found to hold no memory text, so they need no scrubber (the forget test scans
every text column of every table to keep this list honest):
  runs.report          counts, file labels and step summaries only;
  publishes.manifest   version, counts, scope names and check results (GX examples are ids,
                       tiers, statuses or empty strings, never content);
  cleanup_log, memory_flags, event_offsets, ingested_files   ids, rules, file names, offsets;
  health_snapshots     numbers and alert messages built from counts;
  publish_holds        scope names, counts and the releasing user's name and reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from .errors import MemoryLakeError

# Every table that can hold a memory's text, and its owner, in the order the scrubbers run.
SCRUBBED_TABLES = (
    "memory_history", "quarantine",            # ingest
    "embeddings", "postings", "keyword_docs",  # search
    "retrieval_log", "conflicts", "entity_facts", "entities", "summary_state", "dedup_verdicts",  # maintain
)
# The table scrubbers that read more than their own table and ``forget_ids``: the ones keyed by content
# hash also read ``memories`` (a hash goes only when no memory left holds it). Every other scrubber
# reads only its own table and the ids, so its replay on an exported part depends on that part
# alone, and a part hard-linked into several export versions is replayed once (publish.forget).
# Kept honest by a test that runs every other scrubber with no other table there.
READS_MEMORIES = ("embeddings", "postings", "keyword_docs")
# Every kind of file that can hold it: raw copies (ingest), the search log (maintain's events),
# export versions (publish), HTML reports (observe).
SCRUBBED_FILES = ("raw", "events", "exports", "reports")
# What a scrubbed query, quarantined line or report value says instead of the text.
FORGOTTEN = "[forgotten]"
# The file in the lake that lists the folders HTML reports were written to (reports live outside the
# lake, wherever --reports says), one per line: a forget and housekeeping find them there.
REPORT_FOLDERS = "report-folders"

Scrubber = Callable[[duckdb.DuckDBPyConnection], None]
_SCRUBBERS: dict[str, Scrubber] = {}


@dataclass
class FileScrub:
    """What a file scrubber gets: the lake, a connection to its tables (read only by scrubbers),
    the forgotten ids, and when and by which run the forget happened."""

    lake: Any
    con: duckdb.DuckDBPyConnection
    ids: list[str]
    as_of: datetime
    run_id: str


FileScrubber = Callable[[FileScrub], list[str]]
_FILE_SCRUBBERS: dict[str, FileScrubber] = {}


def _register(kind: str, declared: tuple[str, ...], registry: dict, name: str) -> Callable:
    if name not in declared:
        raise ValueError(f"{kind} {name!r} is not declared in store.registry ({', '.join(declared)}): "
                         "declare the new store there first")

    def wrap(fn):
        registry[name] = fn
        return fn

    return wrap


def register_scrubber(name: str) -> Callable[[Scrubber], Scrubber]:
    """Register a function that removes forgotten text (ids in temp table ``forget_ids``) from a
    table. `name` is the table it cleans; it touches only that table, so it can be replayed on the
    table's exported copy in every kept export version. It reads only that table and the ids,
    unless `name` is in ``READS_MEMORIES``."""
    return _register("table", SCRUBBED_TABLES, _SCRUBBERS, name)


def register_file_scrubber(name: str) -> Callable[[FileScrubber], FileScrubber]:
    """Register a function that removes forgotten text from files; it returns the paths it
    rewrote (relative to the lake) and must change nothing when there is nothing to remove."""
    return _register("file kind", SCRUBBED_FILES, _FILE_SCRUBBERS, name)


def scrubbers() -> list[str]:
    """Names of every table the forget reaches (for audits and tests), in the order they run."""
    return [name for name in SCRUBBED_TABLES if name in _SCRUBBERS]


def file_scrubbers() -> list[str]:
    """Names of every kind of file the forget reaches (for audits and tests), in the order they run."""
    return [name for name in SCRUBBED_FILES if name in _FILE_SCRUBBERS]


def _complete(declared: tuple[str, ...], registry: dict) -> list[tuple[str, Callable]]:
    missing = [name for name in declared if name not in registry]
    if missing:
        raise MemoryLakeError(
            f"forget cannot reach {', '.join(missing)}: the stage that owns it registered no scrubber "
            "(import memory_lake, which loads every stage, before forgetting)")
    return [(name, registry[name]) for name in declared]


def table_scrubbers() -> list[tuple[str, Scrubber]]:
    """(table, scrubber) of every declared table, in order; refuses while one is unregistered."""
    return _complete(SCRUBBED_TABLES, _SCRUBBERS)


def file_scrubber_list() -> list[tuple[str, FileScrubber]]:
    """(kind, scrubber) of every declared kind of file, in order; refuses while one is unregistered."""
    return _complete(SCRUBBED_FILES, _FILE_SCRUBBERS)


def atomic_write(path: Path, data: bytes) -> None:
    """Write a file whole or not at all: a temporary sibling, fsync, rename (what every file
    scrubber rewrites with)."""
    tmp = path.with_name(f".{path.name}.forget-tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def sql_path(path: Path) -> str:
    """A path inside a single-quoted SQL string."""
    return str(path).replace("'", "''")
