"""Forget, the part that writes (seed 003, user self-service forgetting: DELETE, not DROP; the
audit stays complete): tombstones, the scrub of every store that holds the text, and the compaction
of the database file.

A forgotten memory becomes a tombstone (status ``deleted``, empty content) with a history row that
keeps the id, content hash, operator, time and reason, never the text. Every table or file that can
hold the text has a scrubber, registered by the stage that owns it (`memory_lake.store.registry`);
this module runs them, and owns the scrubbers of ingest's own stores (history images, quarantine,
raw copies):

- ``forget_memories`` tombstones and runs the table scrubbers inside the caller's transaction;
- ``scrub_files`` runs the file scrubbers after the commit, so that a rolled-back forget never
  destroys a file; they are idempotent, so forgetting an already-forgotten id again finishes an
  interrupted scrub;
- ``compact_database`` rewrites ``lake.duckdb`` from its live rows last: DuckDB frees the blocks
  of updated rows but does not wipe them, so the old text would otherwise stay in the file. The
  forget's transaction records what it owes after its commit in ``pending_compactions``; whichever
  comes next (a later forget, or the nightly run after its hold) scrubs any files left and
  compacts, so a process killed before its compaction leaves no text behind for good.

Memories dedup merged into a forgotten memory hold a near-copy of its text and are forgotten with
it, and so are the summaries that drew on it. It sits in ingest because ingest forgets too (a
snapshot record with ``deleted: true``); the user's entry point, ``maintain.forget``, builds on it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from ..store import FORGOTTEN, FileScrub, atomic_write, connect, file_scrubber_list, sql_path, table_scrubbers
from ..store import register_file_scrubber, register_scrubber
from ..store import LakeBusy
from ..store import HISTORY_COLUMNS, next_history_seq, row_image

# Columns that can hold a memory's text; emptied in every history image of a forgotten memory.
TEXT_COLUMNS = ("content", "summary", "tags", "extra")
_NO_TEXT = {column: "NULL" for column in TEXT_COLUMNS}
# How long `forget` waits for the write lock when the lake is free but a reader is finishing.
FORGET_WAIT_S = 10.0


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


# The history reason of a memory forgotten because it was merged into a forgotten one (canonical,
# requester's reason), for SQL's format() and Polars' pl.format.
_MERGED_REASON = "merged into {}, forgotten with it: {}"
MERGED_REASON = _MERGED_REASON
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


# (summary id, source id) of every live summary drawn from one of `seed` (a query of ids): summaries
# hold their sources' sentences, so they are forgotten with them; a template for str.format.
SUMMARIES_OF_SQL = """
    SELECT s.summary_id AS id, min(s.source_id) AS source_id
    FROM summary_sources s JOIN memories m ON m.id = s.summary_id AND m.status <> 'deleted'
    WHERE s.source_id IN ({seed}) GROUP BY s.summary_id
"""


def forget_memories(con: duckdb.DuckDBPyConnection, requests: pl.DataFrame, *, as_of: datetime, run_id: str,
                    source: str | None = None) -> int:
    """Tombstone the memories in `requests` (columns id, operator, reason[, line]); return how many.

    The caller checks permissions (important memories need operator ``user``) and holds the write
    transaction. Memories already deleted are left as they are. Files are not touched here: the
    caller runs ``scrub_files`` after its commit. Raises MemoryLakeError before anything is written
    when a declared store has no scrubber registered (store.registry): a forget that cannot reach
    every copy of the text does not start.
    """
    tables = table_scrubbers()
    file_scrubber_list()  # the files are scrubbed after the commit: check they can be now
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
    for _, scrub in tables:
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
        return {name: [] for name, _ in file_scrubber_list()}
    with contextlib.nullcontext(con) if con is not None else lake.writer(purpose="forget files") as live:
        job = FileScrub(lake=lake, con=live, ids=ids, as_of=as_of, run_id=run_id)
        rewritten = {name: sorted(fn(job)) for name, fn in file_scrubber_list()}
        live.execute("UPDATE pending_compactions SET files_scrubbed = true WHERE run_id = ?", [run_id])
        return rewritten


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
    parser = connect(Path(":memory:"))
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
                atomic_write(path, new)
                rewritten.append(rel)
    finally:
        parser.close()
    return rewritten


def _lines_of_ids(con: duckdb.DuckDBPyConnection, data: bytes, ids: list[str], policy) -> pl.Series:
    """Lines of a raw copy whose record has one of `ids`, as ingest would assign it."""
    from .formats import read_records
    from .snapshot import assign_ids, parse_records, shape_hints, shape_sql

    records = read_records(con, data, "jsonl")
    con.register("raw_records", shape_hints(records))
    try:
        # the same shape checks as ingest's, so a line gets the id (or the reason) it got there
        texts = con.execute(
            f"SELECT line, ok, problem IS NULL AS is_object, problem, raw AS text FROM ({shape_sql('raw_records')})"
        ).pl()
    finally:
        con.unregister("raw_records")
    # no horizon: a line quarantined as a future timestamp has the id it would have had, and both
    # kinds of line are looked at here
    parse_records(con, texts, policy, as_of=None)
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
            con.execute(f"ATTACH '{sql_path(db)}' AS src")
            con.execute(f"ATTACH '{sql_path(tmp)}' AS dst")
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


