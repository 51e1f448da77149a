"""Forgetting: one function that removes a forgotten memory's text from everything that holds it.

Seed 003 (user self-service forgetting): DELETE, not DROP; the audit stays complete. A forgotten
memory becomes a tombstone (status ``deleted``, empty content) with a history row that keeps the
id, content hash, operator, time and reason, never the text. Every table or file that can hold the
text registers a scrubber here (DESIGN "Forget reaches everything"), so a new store cannot be
missed by the forget:

- **table scrubbers** (``register_scrubber``) run inside the forget's transaction, on the ids in
  the temp table ``forget_ids`` (id, operator, reason, line, as_of). A table scrubber is named
  after the table it cleans and touches only that table, because it is replayed on the table's
  exported copy (``exports/v<N>/tables/<name>.parquet``) in every kept version;
- **file scrubbers** (``register_file_scrubber``) run after the commit (``scrub_files``): raw
  copies, the search log, every kept export version and HTML reports. They run after the commit
  so that a rolled-back forget never destroys a file, and they are idempotent, so forgetting an
  already-forgotten id again finishes an interrupted scrub;
- ``compact_database`` rewrites ``lake.duckdb`` from its live rows last: DuckDB frees the blocks
  of updated rows but does not wipe them, so the old text would otherwise stay in the file. The
  forget's transaction records what it owes after its commit in ``pending_compactions``; whichever
  comes next (a later forget, or the nightly run after its hold) scrubs any files left and
  compacts, so a process killed before its compaction leaves no text behind for good.

Memories dedup merged into a forgotten memory hold a near-copy of its text and are forgotten with
it; a forgotten memory's conflicts lose their values and are closed as ``forgotten``.

``forget`` is the entry point (API and CLI): it resolves ids or a scope, refuses important
memories unless the operator is ``user``, and queues the request in ``inbox/decisions/`` when
another process holds the lake (``decisions.apply_decisions`` applies it first in the next run).
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ..store import schema
from ..store import iso, resolve_as_of
from ..store import InputError, LakeBusy
from ..store import CRASH_AT_ENV, crash_point, transaction  # noqa: F401 (CRASH_AT_ENV: tests)
from ..store import HISTORY_COLUMNS, next_history_seq, row_image
from ..text import redact_text

# Columns that can hold a memory's text; emptied in every history image of a forgotten memory.
TEXT_COLUMNS = ("content", "summary", "tags", "extra")
_NO_TEXT = {column: "NULL" for column in TEXT_COLUMNS}
# What a scrubbed query or quarantined line says instead of the text.
FORGOTTEN = "[forgotten]"
# How long `forget` waits for the write lock when the lake is free but a reader is finishing.
FORGET_WAIT_S = 10.0

Scrubber = Callable[[duckdb.DuckDBPyConnection], None]
_SCRUBBERS: list[tuple[str, Scrubber]] = []


def register_scrubber(name: str) -> Callable[[Scrubber], Scrubber]:
    """Register a function that removes forgotten text (ids in temp table ``forget_ids``) from a
    table. `name` is the table it cleans; it touches only that table, so it can be replayed on the
    table's exported copy in every kept export version."""

    def wrap(fn: Scrubber) -> Scrubber:
        _SCRUBBERS.append((name, fn))
        return fn

    return wrap


def scrubbers() -> list[str]:
    """Names of every table the forget reaches (for audits and tests)."""
    return [name for name, _ in _SCRUBBERS]


@register_scrubber("memory_history")
def _scrub_history(con: duckdb.DuckDBPyConnection) -> None:
    # struct_update touches only the text fields, so the same statement also fits an older export's
    # copy of the table, whose images lack the memory columns added since.
    cleared = ", ".join(f"{column} := NULL" for column in TEXT_COLUMNS)
    con.execute(
        f"""
        UPDATE memory_history
        SET before = CASE WHEN before IS NULL THEN NULL ELSE struct_update(before, {cleared}) END,
            after = CASE WHEN after IS NULL THEN NULL ELSE struct_update(after, {cleared}) END
        WHERE memory_id IN (SELECT id FROM forget_ids)
        """
    )


@register_scrubber("quarantine")
def _scrub_quarantine(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"UPDATE quarantine SET raw = '{FORGOTTEN}' WHERE memory_id IN (SELECT id FROM forget_ids)")


def _scrub_by_content_hash(con: duckdb.DuckDBPyConnection, table: str) -> None:
    # Entries of content no remaining memory shares go (DESIGN: embeddings no other memory
    # shares; the same holds for the postings, whose terms spell the content). On an exported copy
    # `memories` is a view of that version's memories.parquet, which still holds the rows then.
    if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'memories'").fetchone()[0]:
        return
    con.execute(
        f"""
        DELETE FROM {table}
        WHERE text_hash IN (SELECT content_hash FROM memories WHERE id IN (SELECT id FROM forget_ids))
          AND text_hash NOT IN (SELECT content_hash FROM memories
                                WHERE status <> 'deleted' AND id NOT IN (SELECT id FROM forget_ids))
        """
    )


@register_scrubber("embeddings")
def _scrub_embeddings(con: duckdb.DuckDBPyConnection) -> None:
    _scrub_by_content_hash(con, "embeddings")


@register_scrubber("postings")
def _scrub_postings(con: duckdb.DuckDBPyConnection) -> None:
    _scrub_by_content_hash(con, "postings")


@register_scrubber("keyword_docs")
def _scrub_keyword_docs(con: duckdb.DuckDBPyConnection) -> None:
    _scrub_by_content_hash(con, "keyword_docs")


@register_scrubber("retrieval_log")
def _scrub_retrieval_log(con: duckdb.DuckDBPyConnection) -> None:
    # A query that found a forgotten memory usually names what it was about (the user searched for
    # it), so the query goes; the search itself stays, for the hit rate.
    con.execute(
        f"""
        UPDATE retrieval_log SET query = '{FORGOTTEN}'
        WHERE query IS DISTINCT FROM '{FORGOTTEN}'
          AND list_has_any(result_ids, (SELECT coalesce(list(id), []::VARCHAR[]) FROM forget_ids))
        """
    )


@register_scrubber("conflicts")
def _scrub_conflicts(con: duckdb.DuckDBPyConnection) -> None:
    # Every value of a conflict on a forgotten memory is its text (or, for a contradiction, the
    # other side's, which stays in that memory): all go. An open one is closed as ``forgotten``:
    # nothing is left to decide, and the other side of a contradiction stays as it is.
    con.execute(
        """
        UPDATE conflicts SET base_value = NULL, lake_value = NULL, incoming_value = NULL, resolved_value = NULL,
               status = 'resolved',
               resolution = CASE WHEN conflicts.status = 'open' THEN 'forgotten' ELSE conflicts.resolution END,
               resolved_at = CASE WHEN conflicts.status = 'open' THEN f.as_of ELSE conflicts.resolved_at END,
               resolved_by = CASE WHEN conflicts.status = 'open' THEN f.operator ELSE conflicts.resolved_by END
        FROM (SELECT c.conflict_id, max(f.as_of) AS as_of, min(f.operator) AS operator
              FROM conflicts c JOIN forget_ids f ON f.id = c.memory_id OR f.id = c.other_memory_id
              GROUP BY c.conflict_id) f
        WHERE conflicts.conflict_id = f.conflict_id
        """
    )


# Tables checked and found to hold no memory text, so they need no scrubber (the forget test scans
# every text column of every table to keep this list honest):
#   runs.report          counts, file labels and step summaries only;
#   publishes.manifest   version, counts, scope names and check results (GX examples are ids,
#                        tiers, statuses or empty strings, never content);
#   cleanup_log, memory_flags, event_offsets, ingested_files   ids, rules, file names, offsets;
#   health_snapshots     numbers and alert messages built from counts.


# The history reason of a memory forgotten because it was merged into a forgotten one (canonical,
# requester's reason), for SQL's format() and Polars' pl.format.
_MERGED_REASON = "merged into {}, forgotten with it: {}"
# (id, canonical) of every memory merged into one of `seed` (a query of ids), directly or through a
# memory merged in turn; a template for str.format.
MERGED_MEMBERS_SQL = """
    WITH RECURSIVE merged(id, canonical) AS (
        SELECT m.id, s.id FROM memories m JOIN ({seed}) s ON m.merged_into = s.id
        UNION
        SELECT m.id, p.canonical FROM memories m JOIN merged p ON m.merged_into = p.id
    )
    SELECT id, min(canonical) AS canonical FROM merged GROUP BY id
"""


def forget_memories(con: duckdb.DuckDBPyConnection, requests: pl.DataFrame, *, as_of: datetime, run_id: str,
                    source: str | None = None) -> int:
    """Tombstone the memories in `requests` (columns id, operator, reason[, line]); return how many.

    The caller checks permissions (important memories need operator ``user``) and holds the write
    transaction. Memories already deleted are left as they are. Files are not touched here: the
    caller runs ``scrub_files`` after its commit.
    """
    if "line" not in requests.columns:
        requests = requests.with_columns(line=pl.lit(None, dtype=pl.Int64))
    con.register("forget_requests", requests)
    try:
        con.execute(
            """
            CREATE OR REPLACE TEMP TABLE forget_ids AS
            SELECT r.id, any_value(r.operator) AS operator, any_value(r.reason) AS reason, min(r.line) AS line,
                   $as_of::TIMESTAMP AS as_of
            FROM forget_requests r JOIN memories m ON m.id = r.id AND m.status <> 'deleted'
            GROUP BY r.id
            """,
            {"as_of": as_of},
        )
    finally:
        con.unregister("forget_requests")
    # Memories merged into a forgotten one hold a near-copy of its text: they go with it (an
    # important one only when a user asks, as for any forget).
    con.execute(
        f"""
        INSERT INTO forget_ids
        SELECT m.id, f.operator, format('{_MERGED_REASON}', x.canonical, f.reason), NULL, f.as_of
        FROM ({MERGED_MEMBERS_SQL.format(seed="SELECT id FROM forget_ids")}) x
        JOIN memories m ON m.id = x.id JOIN forget_ids f ON f.id = x.canonical
        WHERE m.status <> 'deleted' AND m.id NOT IN (SELECT id FROM forget_ids)
          AND (m.tier <> 'important' OR f.operator = 'user')
        """
    )
    # Summaries that ever drew on a forgotten memory hold its sentences: they go with it (the next
    # nightly run summarises what is left).
    from .summaries import SUMMARIES_OF_SQL

    con.execute(
        f"""
        INSERT INTO forget_ids
        SELECT x.id, f.operator, format('summary of {{}}, forgotten with it: {{}}', x.source_id, f.reason), NULL, f.as_of
        FROM ({SUMMARIES_OF_SQL.format(seed="SELECT id FROM forget_ids")}) x JOIN forget_ids f ON f.id = x.source_id
        WHERE x.id NOT IN (SELECT id FROM forget_ids)
        """
    )
    (count,) = con.execute("SELECT count(*) FROM forget_ids").fetchone()
    if count == 0:
        return 0
    # Owed until the files are scrubbed and compact_database rewrites the file: committed with the
    # tombstones, so a process killed before either leaves the debt for the next forget or nightly run.
    con.execute("INSERT INTO pending_compactions (run_id, as_of, memories) VALUES (?, ?, ?)", [run_id, as_of, count])
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


def forgotten_ids(con: duckdb.DuckDBPyConnection, *, run_id: str, source: str | None = None) -> list[str]:
    """Ids a run forgot (from its history rows), optionally only those asked for by one file;
    what ingest passes to ``scrub_files`` after a file's commit."""
    where = " AND source_file = $source" if source is not None else ""
    params = {"run_id": run_id} | ({"source": source} if source is not None else {})
    return [i for (i,) in con.execute(
        f"SELECT DISTINCT memory_id FROM memory_history WHERE change = 'forget' AND run_id = $run_id{where} "
        "ORDER BY 1", params).fetchall()]


# ============================================================================ file scrubbers
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
_FILE_SCRUBBERS: list[tuple[str, FileScrubber]] = []


def register_file_scrubber(name: str) -> Callable[[FileScrubber], FileScrubber]:
    """Register a function that removes forgotten text from files; it returns the paths it
    rewrote (relative to the lake) and must change nothing when there is nothing to remove."""

    def wrap(fn: FileScrubber) -> FileScrubber:
        _FILE_SCRUBBERS.append((name, fn))
        return fn

    return wrap


def file_scrubbers() -> list[str]:
    """Names of every kind of file the forget reaches (for audits and tests)."""
    return [name for name, _ in _FILE_SCRUBBERS]


def scrub_files(lake, ids: Iterable[str], *, as_of: datetime, run_id: str,
                con: duckdb.DuckDBPyConnection | None = None) -> dict[str, list[str]]:
    """Run every file scrubber for `ids` (already tombstoned and committed); return, per scrubber,
    the files it rewrote (paths relative to the lake).

    `con` is a connection of the caller that holds the write lock (ingest passes its own, after a
    file's COMMIT); without it, the lake's writer is opened here. The write lock keeps publish and
    the events step away while files are rewritten.
    """
    ids = sorted(set(ids))
    if not ids:
        return {name: [] for name, _ in _FILE_SCRUBBERS}
    with contextlib.nullcontext(con) if con is not None else lake.writer(purpose="forget files") as live:
        job = FileScrub(lake=lake, con=live, ids=ids, as_of=as_of, run_id=run_id)
        rewritten = {name: sorted(fn(job)) for name, fn in _FILE_SCRUBBERS}
        live.execute("UPDATE pending_compactions SET files_scrubbed = true WHERE run_id = ?", [run_id])
        return rewritten


def _atomic_write(path: Path, data: bytes) -> None:
    """Write a file whole or not at all: a temporary sibling, fsync, rename."""
    tmp = path.with_name(f".{path.name}.forget-tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


def _private_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB for file work, so nothing touches the caller's temp tables."""
    from ..store import connect

    return connect(Path(":memory:"))


# ---------------------------------------------------------------------------- raw copies
@register_file_scrubber("raw")
def _scrub_raw(job: FileScrub) -> list[str]:
    """Empty every line of ``raw/<sha256>.jsonl`` that holds a forgotten memory.

    Line k of a raw copy is record k of the original, so lines are found from the history rows
    (source file and line, joined to ``ingested_files`` by label and run) and quarantine rows of the
    ids. A record that changed nothing (a re-sent snapshot) leaves no history row, so files with
    unchanged records are also re-parsed with ingest's own parser and id rule, which finds those
    lines by id (derived ids included). The line becomes empty: line numbers stay, and ingest skips
    empty lines.
    """
    lake, con = job.lake, job.con
    params = {"ids": job.ids}
    located = con.execute(
        """
        WITH ids AS (SELECT unnest($ids::VARCHAR[]) AS id)
        SELECT f.raw_path AS path, h.source_line AS line
        FROM memory_history h JOIN ingested_files f ON f.file_name = h.source_file AND f.run_id = h.run_id
        WHERE h.memory_id IN (SELECT id FROM ids) AND h.source_line IS NOT NULL
        UNION
        SELECT 'raw/' || q.file_hash || '.jsonl', q.line FROM quarantine q
        WHERE q.memory_id IN (SELECT id FROM ids) AND q.file_hash <> ''
        """,
        params,
    ).pl()
    rescan = [p for (p,) in con.execute(
        """
        SELECT raw_path FROM ingested_files
        WHERE unchanged > 0
          AND as_of >= (SELECT min(as_of) FROM memory_history WHERE memory_id IN (SELECT unnest($ids::VARCHAR[])))
        """,
        params,
    ).fetchall()]
    paths = sorted(set(located["path"].to_list()) | set(rescan))
    if not paths:
        return []
    policy = lake.policy.ingest
    rewritten = []
    parser = _private_connection()
    try:
        for rel in paths:  # one file at a time: raw copies can be large
            path = lake.root / rel
            if not path.is_file():
                continue
            data = path.read_bytes()
            lines = located.filter(pl.col("path") == rel)["line"]
            if rel in rescan:
                lines = pl.concat([lines, _lines_of_ids(parser, data, job.ids, policy)])
            new = _blank_lines(data, lines)
            if new != data:
                _atomic_write(path, new)
                rewritten.append(rel)
    finally:
        parser.close()
    return rewritten


def _lines_of_ids(con: duckdb.DuckDBPyConnection, data: bytes, ids: list[str], policy) -> pl.Series:
    """Lines of a raw copy whose record has one of `ids`, as ingest would assign it."""
    from ..ingest import assign_ids, parse_records, read_records, shape_hints, shape_sql

    records = read_records(con, data, "jsonl")
    con.register("raw_records", shape_hints(records))
    try:
        # the same shape checks as ingest's, so a line gets the id (or the reason) it got there
        texts = con.execute(
            f"SELECT line, ok, problem IS NULL AS is_object, problem, raw AS text FROM ({shape_sql('raw_records')})"
        ).pl()
    finally:
        con.unregister("raw_records")
    parse_records(con, texts, policy)
    assign_ids(con)
    return con.execute(
        """
        SELECT line FROM (SELECT line, id FROM snap_valid
                          UNION ALL SELECT line, id FROM snap_parsed WHERE reason IS NOT NULL)
        WHERE id IN (SELECT unnest($ids::VARCHAR[]))
        """,
        {"ids": ids},
    ).pl()["line"].cast(pl.Int64)


def _blank_lines(data: bytes, lines: pl.Series) -> bytes:
    """`data` with the given 1-based lines emptied (the newlines stay)."""
    if lines.len() == 0:
        return data
    text = data.decode("utf-8")  # ingest writes raw copies from Polars strings: valid UTF-8
    frame = pl.DataFrame({"text": text.split("\n")}).with_row_index("line", offset=1)
    frame = frame.with_columns(
        pl.when(pl.col("line").cast(pl.Int64).is_in(lines.unique().implode())).then(pl.lit(""))
        .otherwise(pl.col("text")).alias("text"))
    return "\n".join(frame["text"].to_list()).encode("utf-8")


# ---------------------------------------------------------------------------- the search log
# The query's JSON string, escapes included (RE2).
_QUERY_FIELD = r'"query"\s*:\s*"(?:[^"\\]|\\.)*"'


@register_file_scrubber("events")
def _scrub_events(job: FileScrub) -> list[str]:
    """Replace the query of every search log line whose results include a forgotten memory.

    ``events/*.jsonl`` files are append-only: searches append to them without the lock, and the
    events step remembers how many bytes of each file it has read (``event_offsets``). So lines
    are rewritten in place, each keeping its byte length: the query becomes ``[forgotten]`` (or
    ``""`` when the query was shorter than that) and the line is padded with spaces after its
    closing brace, which JSON allows. A rename of a rewritten copy would lose a line appended
    meanwhile, and a shorter line would shift every offset after it.
    """
    lake = job.lake
    rewritten = []
    con = _private_connection()
    try:
        for path in sorted(lake.events.glob("*.jsonl")):  # one file at a time
            with open(path, "rb") as handle:
                data = handle.read()
            end = data.rfind(b"\n") + 1  # a line still being appended is left alone
            if end == 0:
                continue
            # byte lengths from the bytes, text from one decode: a bad byte costs only its line
            frame = pl.DataFrame({
                "raw": data[:end].decode("utf-8", "replace").split("\n")[:-1],
                "nbytes": pl.Series(data[:end].split(b"\n")[:-1], dtype=pl.Binary).bin.size(),
            }).with_row_index("idx").with_columns(
                pos=(pl.col("nbytes") + 1).cum_sum() - (pl.col("nbytes") + 1))
            con.register("log_lines", frame)
            try:
                changes = con.execute(
                    f"""
                    WITH hit AS (
                        SELECT idx, pos, nbytes, raw, rtrim(raw, ' ') AS base FROM log_lines
                        WHERE json_valid(raw) AND json_type(raw, '$.result_ids') = 'ARRAY'
                          AND list_has_any(json_extract_string(raw, '$.result_ids[*]'), $ids::VARCHAR[])
                    ), candidates AS (
                        SELECT *, regexp_replace(base, $field, '"query":"{FORGOTTEN}"') AS marked,
                                  regexp_replace(base, $field, '"query":""') AS emptied
                        FROM hit
                    ), fitted AS (
                        SELECT pos, raw, CASE
                            WHEN strlen(marked) <= nbytes THEN marked || repeat(' ', (nbytes - strlen(marked))::BIGINT)
                            WHEN strlen(emptied) <= nbytes THEN emptied || repeat(' ', (nbytes - strlen(emptied))::BIGINT)
                            ELSE repeat(' ', nbytes::BIGINT) END AS new
                        FROM candidates
                    )
                    SELECT pos, new FROM fitted WHERE new <> raw ORDER BY pos
                    """,
                    {"ids": job.ids, "field": _QUERY_FIELD},
                ).fetchall()
            finally:
                con.unregister("log_lines")
            if not changes:
                continue
            fd = os.open(path, os.O_WRONLY)
            try:
                for pos, new in changes:  # in place; each write keeps its line's length
                    os.pwrite(fd, new.encode("utf-8"), pos)
                os.fsync(fd)
            finally:
                os.close(fd)
            rewritten.append(str(path.relative_to(lake.root)))
    finally:
        con.close()
    return rewritten


# ---------------------------------------------------------------------------- exports
@register_file_scrubber("exports")
def _scrub_exports(job: FileScrub) -> list[str]:
    """Remove forgotten memories from every kept export version (and any leftover staging folder).

    Per version: ``memories.parquet`` drops their rows (agents do not load tombstones); each
    ``tables/<table>.parquet`` gets that table's scrubber replayed on it; the affected scopes'
    ``memory.json`` lose their records and ``context.md`` is rebuilt from the rest (a scope left
    empty is removed, as publish would not have written it); the manifest gets new checksums and
    counts, and a ``rewrites`` entry that names the files and how many memories, never their text.
    """
    exports = job.lake.exports
    rewritten: list[str] = []
    con = _private_connection()
    try:
        con.execute("CREATE TEMP TABLE forget_ids (id VARCHAR, operator VARCHAR, reason VARCHAR, line BIGINT, "
                    "as_of TIMESTAMP)")
        con.executemany("INSERT INTO forget_ids (id, as_of) VALUES (?, ?)", [[i, job.as_of] for i in job.ids])
        for folder in sorted(p for p in exports.iterdir() if p.is_dir() and not p.is_symlink()):
            changed = _scrub_version(con, folder, job)
            rewritten += [str((folder / name).relative_to(job.lake.root)) for name in changed]
    finally:
        con.close()
    return rewritten


def _scrub_version(con: duckdb.DuckDBPyConnection, folder: Path, job: FileScrub) -> list[str]:
    """Scrub one export version; return the files it rewrote or removed (relative to `folder`).

    ``memories.parquet`` is rewritten last, because it tells which scopes held a forgotten memory:
    a scrub interrupted before it is finished by the next forget of the same ids. The manifest is
    reconciled with the files on disk, so an interrupted scrub's files are recorded too.
    """
    changed: list[str] = []
    memories = folder / "memories.parquet"
    source = f"read_parquet('{_sql_path(memories)}')"
    scopes = pl.DataFrame(schema={"tenant": pl.String, "agent_id": pl.String, "user_id": pl.String})
    if memories.is_file():
        scopes = con.execute(
            f"SELECT DISTINCT tenant, agent_id, user_id FROM {source} WHERE id IN (SELECT id FROM forget_ids)").pl()
    changed += _scrub_scopes(folder, scopes, job.ids, job.lake.policy)
    names = dict(_SCRUBBERS)
    # Scrubbers keyed by content hash read the version's memories, still whole at this point.
    con.execute("DROP VIEW IF EXISTS memories")
    if memories.is_file():
        con.execute(f"CREATE TEMP VIEW memories AS SELECT * FROM {source}")
    for table in sorted((folder / "tables").glob("*.parquet")):
        scrub = names.get(table.stem)
        if scrub is not None and _replay_scrubber(con, table, scrub):
            changed.append(f"tables/{table.name}")
    con.execute("DROP VIEW IF EXISTS memories")
    if scopes.height:
        _copy_parquet(con, f"SELECT * FROM {source} WHERE id NOT IN (SELECT id FROM forget_ids)", memories)
        changed.append("memories.parquet")
    if (folder / "manifest.json").is_file():
        changed = _update_manifest(folder, changed, job)
    return changed


def _copy_parquet(con: duckdb.DuckDBPyConnection, query: str, target: Path) -> None:
    """Write `query` to `target` atomically (DuckDB keeps the column types publish wrote)."""
    tmp = target.with_name(f".{target.name}.forget-tmp")
    con.execute(f"COPY ({query}) TO '{_sql_path(tmp)}' (FORMAT parquet)")
    os.replace(tmp, target)


def _replay_scrubber(con: duckdb.DuckDBPyConnection, table: Path, scrub: Scrubber) -> bool:
    """Run a table scrubber on an exported copy of its table; rewrite the file if anything changed."""
    name = table.stem
    con.execute(f'CREATE OR REPLACE TABLE "{name}" AS SELECT * FROM read_parquet(\'{_sql_path(table)}\')')
    con.execute(f'CREATE OR REPLACE TEMP TABLE scrub_before AS SELECT * FROM "{name}"')
    try:
        scrub(con)
        # changed rows, and removed ones (a scrubber may delete)
        (changed,) = con.execute(f'SELECT (SELECT count(*) FROM (SELECT * FROM "{name}" EXCEPT ALL SELECT * FROM scrub_before)) '
                                 f'+ (SELECT count(*) FROM (SELECT * FROM scrub_before EXCEPT ALL SELECT * FROM "{name}"))').fetchone()
        if changed:
            _copy_parquet(con, f'SELECT * FROM "{name}"', table)
        return bool(changed)
    finally:
        con.execute(f'DROP TABLE IF EXISTS "{name}"')
        con.execute("DROP TABLE IF EXISTS scrub_before")


def _scrub_scopes(folder: Path, scopes: pl.DataFrame, ids: list[str], policy=None) -> list[str]:
    """Rewrite the scope files of the scopes that held a forgotten memory (loop per scope)."""
    from ..publish import context_pack as _context_pack, folder_name as _segment
    from ..store import Policy
    from .entities import published_entity_facts

    policy = policy or Policy()
    facts = published_entity_facts(folder) if scopes.height else None

    gone = set(ids)
    changed = []
    for tenant, agent, user in scopes.iter_rows():
        scope_dir = folder / "scopes" / _segment(tenant) / _segment(agent) / _segment(user)
        memory_json = scope_dir / "memory.json"
        if not memory_json.is_file():
            continue  # the memory was not active there (e.g. archived): no scope file holds it
        document = json.loads(memory_json.read_text(encoding="utf-8"))
        records = [r for r in document.get("memories", []) if r.get("id") not in gone]
        if len(records) == len(document.get("memories", [])):
            continue
        rel = str(scope_dir.relative_to(folder))
        if not records:
            # publish writes no folder for a scope without active memories
            shutil.rmtree(scope_dir)
            for parent in (scope_dir.parent, scope_dir.parent.parent):
                with contextlib.suppress(OSError):
                    parent.rmdir()  # only when empty
            changed += [f"{rel}/memory.json", f"{rel}/context.md"]
            continue
        header = {k: v for k, v in document.items() if k != "memories"}
        _atomic_write(memory_json, json.dumps({**header, "memories": records}, ensure_ascii=False).encode("utf-8"))
        # the records carry what context.md shows (tier, type, content, dates and the dispute marks);
        # the entity facts count only from the records that stay
        rows = facts.filter((pl.col("tenant") == tenant) & pl.col("agent_id").eq_missing(agent)
                            & pl.col("user_id").eq_missing(user)).to_dicts()
        pack = _context_pack(header, records, rows, policy.for_tenant(tenant).context.max_tokens)
        _atomic_write(scope_dir / "context.md", pack.encode("utf-8"))
        changed += [f"{rel}/memory.json", f"{rel}/context.md"]
    return changed


def _update_manifest(folder: Path, changed: list[str], job: FileScrub) -> list[str]:
    """New checksums and counts for a rewritten version, and a ``rewrites`` entry (ids' count
    only); returns the files recorded as rewritten (with the manifest), or [] when none."""
    from ..store import file_sha256 as _sha256

    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    old = manifest.get("files", {})
    files = {str(p.relative_to(folder)): _sha256(p) for p in sorted(folder.rglob("*"))
             if p.is_file() and p.name != "manifest.json"}
    # files this scrub changed, plus any a previous, interrupted scrub changed without recording
    rewritten = sorted(set(changed) | {name for name in set(old) | set(files) if old.get(name) != files.get(name)})
    if not rewritten:
        return []
    manifest["files"] = files
    memories = folder / "memories.parquet"
    if memories.is_file():
        rows = pl.read_parquet(memories, columns=["tier", "status"])
        by_tier = dict(sorted(rows["tier"].value_counts().iter_rows()))
        by_status = dict(sorted(rows["status"].value_counts().iter_rows()))
        counts = manifest.setdefault("counts", {})
        counts.update(rows=sum(by_tier.values()), by_tier=by_tier, by_status=by_status)
        counts["scopes"] = [_recount_scope(folder, s) for s in counts.get("scopes", [])
                            if (folder / s["path"] / "memory.json").is_file()]
    manifest.setdefault("rewrites", []).append({
        "as_of": iso(job.as_of), "run_id": job.run_id, "reason": "forget", "memories": len(job.ids),
        "files": rewritten})
    _atomic_write(path, json.dumps(manifest, ensure_ascii=False, indent=1).encode("utf-8"))
    return rewritten + ["manifest.json"]


def _recount_scope(folder: Path, scope: dict[str, Any]) -> dict[str, Any]:
    records = json.loads((folder / scope["path"] / "memory.json").read_text(encoding="utf-8"))["memories"]
    by_tier: dict[str, int] = {}
    for record in records:
        by_tier[record["tier"]] = by_tier.get(record["tier"], 0) + 1
    return {**scope, "by_tier": by_tier}


# ---------------------------------------------------------------------------- reports
# Folders HTML reports were written to (reports live outside the lake, wherever --reports says),
# one per line; `record_report` keeps it so a forget can find them.
REPORT_FOLDERS = "report-folders"
# A conflict row of reports written before reports left memory text out: id, kind, memory, field,
# two values (escaped text: no "<"), operator, time.
_VALUE_ROW = re.compile(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>"
                        r"<td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td></tr>")


def record_report(lake, path: Path) -> None:
    """Remember the folder of a report just written (idempotent), so a later forget reaches it."""
    registry = lake.root / REPORT_FOLDERS
    folder = str(Path(path).resolve().parent)
    known = registry.read_text(encoding="utf-8").splitlines() if registry.is_file() else []
    if folder not in known:
        _atomic_write(registry, "".join(f"{line}\n" for line in [*known, folder]).encode("utf-8"))


@register_file_scrubber("reports")
def _scrub_reports(job: FileScrub) -> list[str]:
    """Take a forgotten memory's text out of HTML reports already written.

    A report shows conflicts by id, kind and field, never their values; reports written before
    that showed the two values of each conflict. In those, the row of every conflict on a
    forgotten memory (either side of a contradiction) keeps its ids and loses its values
    (``[forgotten]``). The folders are those reports were written to (``record_report``) and those
    nightly runs recorded; paths are returned as they are (reports live outside the lake). A failed
    summary's missing facts and unsupported statements go the same way (``summaries.scrub_summary_report``).
    """
    lake, con = job.lake, job.con
    conflicts = {c for (c,) in con.execute(
        "SELECT conflict_id FROM conflicts WHERE memory_id IN (SELECT unnest($ids::VARCHAR[])) "
        "OR other_memory_id IN (SELECT unnest($ids::VARCHAR[]))", {"ids": job.ids}).fetchall()}
    from .summaries import scrub_summary_report

    registry = lake.root / REPORT_FOLDERS
    folders = set(registry.read_text(encoding="utf-8").splitlines()) if registry.is_file() else set()
    folders |= {str(Path(p).parent) for (p,) in con.execute(
        "SELECT DISTINCT json_extract_string(report, '$.report') FROM runs WHERE kind = 'nightly'").fetchall() if p}
    rewritten = []
    for folder in sorted(folders):
        for path in sorted(Path(folder).glob("health-*.html")) if Path(folder).is_dir() else []:
            original = path.read_text(encoding="utf-8")
            page = scrub_summary_report(original, job.ids)  # a failed summary's missing facts
            start = page.find('<section id="conflicts">')
            end = page.find("</section>", start)
            if conflicts and start >= 0 and end >= 0:
                section = _VALUE_ROW.sub(lambda m: (
                    m.group(0) if html.unescape(m.group(1)) not in conflicts else
                    "<tr>" + "".join(f"<td>{m.group(k)}</td>" for k in (1, 2, 3, 4))
                    + f"<td>{FORGOTTEN}</td><td>{FORGOTTEN}</td>"
                    + "".join(f"<td>{m.group(k)}</td>" for k in (5, 6)) + "</tr>"), page[start:end])
                page = page[:start] + section + page[end:]
            if page != original:
                _atomic_write(path, page.encode("utf-8"))
                rewritten.append(str(path))
    return rewritten


# ============================================================================ the database file
def compact_database(lake, *, only_if_pending: bool = False, wait_s: float = FORGET_WAIT_S) -> bool:
    """Rewrite ``lake.duckdb`` from its live rows; True when done now.

    DuckDB marks the blocks of updated rows free but leaves their bytes in the file until they are
    reused, so a forgotten text survives an UPDATE on disk. A copy of the database (DuckDB's own
    ``COPY FROM DATABASE``, which keeps tables, constraints and defaults) holds only live rows; it
    replaces the file under the write lock with no connection open. Its cost is one pass over the
    lake, which is why a batch of forgets compacts once.

    What is owed is recorded in ``pending_compactions``, by the forget's own transaction
    (``forget_memories``). A forget whose process stopped before it scrubbed its files has them
    scrubbed first (``_finish_scrubs``); the copy leaves the table empty, so the debt is cleared
    exactly when the new file is in place. When this process holds the lake for a run, the run's shared
    connection is open and the file cannot be swapped: the compaction is deferred (False) and the
    run calls ``compact_database(lake, only_if_pending=True)`` after its hold ends. A busy lake
    (False) or a crash leaves the debt for the next forget or nightly run.
    """
    if lake.held_here():
        return False
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(lake.hold("compact after forget", wait_s=wait_s))
        except LakeBusy:
            return False
        # No lake.writer() in here: inside a hold it opens the hold's shared connection, which
        # would stay open until the hold ends. Private connections open the file instead.
        owed = _finish_scrubs(lake)
        if only_if_pending and not owed:
            return False
        db = lake.db_path
        tmp = db.with_name(db.name + ".compact")
        tmp.unlink(missing_ok=True)
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"ATTACH '{_sql_path(db)}' AS src")
            con.execute(f"ATTACH '{_sql_path(tmp)}' AS dst")
            con.execute("COPY FROM DATABASE src TO dst")
            if _owed(con, "dst") is not None:
                con.execute("DELETE FROM dst.pending_compactions")
            con.execute("DETACH dst")
            con.execute("DETACH src")  # checkpoints: no write-ahead log is left beside the old file
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        finally:
            con.close()
        if db.with_name(db.name + ".wal").exists() or tmp.with_name(tmp.name + ".wal").exists():
            tmp.unlink(missing_ok=True)
            return False  # never swap a file under a write-ahead log
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, db)
    return True


def _finish_scrubs(lake) -> int:
    """Scrub the files of owed forgets whose process stopped before it did (their ids from their
    history rows); return how many forgets still owe a compaction. The caller holds the lake."""
    from ..store import connect

    con = connect(lake.db_path)  # read-write: a WAL a killed process left is replayed here
    try:
        if not _owed(con):
            return 0
        for run_id, as_of in con.execute("SELECT run_id, max(as_of) FROM pending_compactions WHERE NOT files_scrubbed "
                                         "GROUP BY run_id ORDER BY 2, 1").fetchall():
            scrub_files(lake, forgotten_ids(con, run_id=run_id), as_of=as_of, run_id=run_id, con=con)
        return _owed(con)
    finally:
        con.close()


def _owed(con: duckdb.DuckDBPyConnection, database: str | None = None) -> int | None:
    """Forgets whose compaction is owed, in the connection's database or an attached one (None
    before the table exists)."""
    name = database or con.execute("SELECT current_database()").fetchone()[0]
    (exists,) = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = ? "
                            "AND table_name = 'pending_compactions'", [name]).fetchone()
    if not exists:
        return None
    return con.execute(f"SELECT count(*) FROM {name}.pending_compactions").fetchone()[0]


def compaction_owed(con: duckdb.DuckDBPyConnection) -> bool:
    """True when a forget's compaction is still owed (see ``compact_database``)."""
    return bool(con.execute("SELECT count(*) FROM pending_compactions").fetchone()[0])


# ============================================================================ the entry point
def forget(lake, *, ids: Sequence[str] | str | None = None, tenant: str | None = None, agent: str | None = None,
           user: str | None = None, operator: str = "user", reason: str | None = None,
           as_of: datetime | str | None = None, run_id: str | None = None, source: str | None = None,
           scrub: bool = True, compact: bool = True, record: bool = True,
           wait_s: float | None = None) -> dict[str, Any]:
    """Forget memories by id, or every memory of a scope, everywhere the lake holds their text.

    Targets: the given `ids` (narrowed to `tenant` / `agent` / `user` when given: an id outside
    them counts as unknown), or, without ids, every memory of the scope that is not deleted yet
    (`tenant` required; `agent` and `user` narrow it), and with them every memory dedup merged into
    one (a near-copy of its text). An important memory is forgotten only by operator ``user``;
    otherwise it is refused, and the rest proceed. The tombstones, their history rows (id, content
    hash, operator, time, reason; no text), the table scrubbers and a ``pending_compactions`` row
    commit in one transaction; then the files are scrubbed (``scrub_files``, also for ids that were
    already deleted, so a second forget finishes an interrupted one) and the database file
    compacted, as is any compaction an interrupted forget still owes.

    Returns ``{"run_id", "forgotten", "refused": [{"id", "reason"}], "already_deleted", "unknown",
    "files"}``, plus ``"compaction": "done" | "pending"`` when a compaction was owed (pending
    inside a run of this process, which compacts after its hold; see ``compact_database``). When
    another process holds the lake, the request is queued instead and the result is
    ``{"queued": path}`` (applied first by the next run, see ``decisions.apply_decisions``).
    `source` names the request in history (a decision file); `scrub`, `compact` and `record` (a
    ``runs`` row) let a batch of forgets do those once. `wait_s`: how long to wait for a finishing
    reader before queueing; $MEMORY_LAKE_WAIT_S, else FORGET_WAIT_S (10 s).
    """
    from ..ingest import IMPORTANT_NEEDS_USER
    from ..store import write_wait_s

    wait_s = write_wait_s(FORGET_WAIT_S) if wait_s is None else wait_s
    as_of = resolve_as_of(as_of)
    ids = _check_request(ids, tenant, operator, reason)
    if not lake.held_here() and lake.is_busy():
        return _queue(lake, ids, tenant, agent, user, operator, reason, as_of)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(lake.hold("forget", wait_s=wait_s))
        except LakeBusy:
            return _queue(lake, ids, tenant, agent, user, operator, reason, as_of)
        run_id = run_id or lake.new_run_id("forget", as_of)
        with lake.writer(purpose="forget") as con:
            targets = _resolve_targets(con, ids, tenant, agent, user, operator)
            todo = targets.filter(pl.col("outcome") == "forget")
            result = {
                "run_id": run_id,
                "forgotten": todo["id"].to_list(),
                "refused": [{"id": i, "reason": IMPORTANT_NEEDS_USER}
                            for i in targets.filter(pl.col("outcome") == "refused")["id"].to_list()],
                "already_deleted": targets.filter(pl.col("outcome") == "already_deleted")["id"].to_list(),
                "unknown": targets.filter(pl.col("outcome") == "unknown")["id"].to_list(),
            }
            with transaction(con):
                if todo.height:
                    # the reason is free text: kept in history, redacted like everything on disk,
                    # with each memory's tenant salt (one e-mail, one placeholder in a tenant)
                    tenants = sorted(set(todo["tenant"].drop_nulls()))
                    said = {t: redact_text(reason, salt) for t, salt in lake.tenant_salts(con, tenants).items()}
                    todo = todo.with_columns(said=pl.col("tenant").fill_null("").replace_strict(said))
                    requests = todo.select("id", operator=pl.lit(operator), reason=pl.when(
                        pl.col("canonical").is_null()).then(pl.col("said")).otherwise(
                        pl.format(_MERGED_REASON, pl.col("canonical"), pl.col("said"))))
                    forget_memories(con, requests, as_of=as_of, run_id=run_id, source=source)
                if record:
                    # ids and counts only: the reason is the requester's text and stays in history
                    report = {k: result[k] for k in ("forgotten", "already_deleted", "unknown")}
                    report["refused"] = [r["id"] for r in result["refused"]]
                    con.execute("INSERT INTO runs VALUES (?, 'forget', ?, 'ok', ?, ?)",
                                [run_id, as_of, time.monotonic() - started, json.dumps(report)])
            crash_point("forget:committed")  # a test kills here: the next command finishes the scrub
            # with the summaries forgotten along (forget_memories adds them)
            scrubbed = sorted(set(result["forgotten"] + result["already_deleted"])
                              | set(forgotten_ids(con, run_id=run_id)))
            result["files"] = (scrub_files(lake, scrubbed, as_of=as_of, run_id=run_id, con=con)
                               if scrub and scrubbed else {})
            owed = compaction_owed(con)
    # after the hold: its shared connection is closed only when the hold ends; a compaction an
    # earlier, interrupted forget still owes is done here too
    if compact and owed:
        done = compact_database(lake, wait_s=wait_s)
        result["files"]["database"] = [lake.db_path.name] if done else []
        result["compaction"] = "done" if done else "pending"
    return result


def _check_request(ids, tenant, operator, reason) -> list[str] | None:
    if isinstance(ids, str):
        ids = [ids]
    if ids is not None:
        ids = [str(i) for i in ids]
        if not ids:
            ids = None
    if ids is None and not tenant:
        raise InputError("forget needs memory ids, or a tenant (optionally with an agent and a user)")
    if operator not in schema.OPERATORS:
        raise InputError(f"operator must be one of {', '.join(schema.OPERATORS)}, not {operator!r}")
    if not isinstance(reason, str) or not reason.strip():
        raise InputError("forget needs a reason (it is kept in the audit history)")
    return ids


def _queue(lake, ids, tenant, agent, user, operator, reason, as_of: datetime) -> dict[str, str]:
    from .decisions import queue_decision

    decision = {"kind": "forget", "ids": ids, "tenant": tenant, "agent": agent, "user": user,
                "operator": operator, "reason": reason, "requested_at": iso(as_of)}
    return {"queued": str(queue_decision(lake, decision, as_of))}


def _resolve_targets(con: duckdb.DuckDBPyConnection, ids: list[str] | None, tenant, agent, user,
                     operator: str) -> pl.DataFrame:
    """(id, outcome, canonical) per target, ordered by id: outcome forget | refused | already_deleted |
    unknown; `canonical` names the forgotten memory a target was merged into (it goes with it), or
    is null for a memory asked for."""
    params = {"tenant": tenant, "agent": agent, "user": user, "operator": operator}
    scope = ("($tenant::VARCHAR IS NULL OR m.tenant = $tenant) AND ($agent::VARCHAR IS NULL OR m.agent_id = $agent) "
             "AND ($user::VARCHAR IS NULL OR m.user_id = $user)")
    outcome = """CASE WHEN m.id IS NULL THEN 'unknown' WHEN m.status = 'deleted' THEN 'already_deleted'
                      WHEN m.tier = 'important' AND $operator <> 'user' THEN 'refused' ELSE 'forget' END"""
    if ids is not None:
        params["ids"] = ids
        asked = "SELECT DISTINCT unnest($ids::VARCHAR[]) AS id, NULL::VARCHAR AS canonical"
    else:
        asked = f"SELECT m.id, NULL::VARCHAR AS canonical FROM memories m WHERE {scope} AND m.status <> 'deleted'"
    # members of a refused memory stay with it
    seeds = (f"SELECT m.id FROM ({asked}) a JOIN memories m ON m.id = a.id AND {scope} "
             "WHERE m.tier <> 'important' OR $operator = 'user'")
    query = f"""
        WITH asked AS ({asked}),
        targets AS (
            SELECT id, canonical FROM asked
            UNION ALL
            SELECT id, canonical FROM ({MERGED_MEMBERS_SQL.format(seed=seeds)}) WHERE id NOT IN (SELECT id FROM asked)
        )
        SELECT t.id, {outcome} AS outcome, t.canonical, m.tenant
        FROM targets t LEFT JOIN memories m ON m.id = t.id AND {scope}
        ORDER BY t.id
    """
    return con.execute(query, params).pl()
