"""Usage events: how agents report use without re-sending memories, and the search log.

Sources, read by the nightly run before any rule looks at usage:
- ``inbox/*.events.jsonl``: complete files written by agents (temporary name, then rename); they
  are moved into ``events/`` and read from there;
- ``events/*.jsonl``: append-only files (``search`` appends one line per search); each is read
  from the byte offset the previous run stopped at, complete lines only.

Lines: ``{"ts", "tenant", "event": "access" | "reference", "memory_id"}`` counts a use;
``{"ts", "tenant", "event": "hit", "search_id"}`` confirms a search found what the agent needed;
a search log line (``search_id``, ``query``, ``result_ids`` ...) goes to ``retrieval_log`` and
counts every returned memory as accessed (DESIGN "Search"). Usage moves counters and
``last_accessed_at`` forward, never the version (history operator ``system``). Bad lines go to
quarantine with file, line and reason. An event only touches its own tenant: one that names another
tenant's memory or search (or a search line returning another tenant's memory) is quarantined as
``id belongs to another tenant`` and changes nothing.

No raw PII reaches disk (DESIGN): an inbox event file is redacted line by line, tenant names
included, by the ingest's rules (``redact.redact_records``) before its copy is written to
``events/`` under a redacted name, and only then does the original leave the inbox. Lines read
from ``events/`` are redacted again before they are parsed (a no-op for what this lake wrote), so
nothing an agent appended there raw reaches ``retrieval_log`` or ``quarantine``.
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from ..text import redact_records, redact_text
from ..store import FORGOTTEN, FileScrub, connect, register_file_scrubber, register_scrubber, transaction
from ..store import HISTORY_COLUMNS, next_history_seq, row_image
from ..store import Policy
from ..store import StepReport
from ..store import InputError, resolve_as_of
from .tiers import append_cleanup_log, apply_moves

EVENT_KINDS = ("access", "reference", "hit")
# An event may only touch its own tenant: one naming another tenant's memory or search is
# quarantined with this reason (ingest's own reason for the same offence) and changes nothing.
FOREIGN_ID = "id belongs to another tenant"


def apply_events(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """Load new event lines and apply them; returns counts per kind."""
    run_id = run_id or lake.new_run_id("events", as_of)
    report = StepReport("apply_events", as_of, run_id)
    with lake.writer(purpose="apply events") as con:
        _collect_inbox_events(lake, con)
        offsets = dict(con.execute("SELECT file, bytes_read FROM event_offsets").fetchall())
        chunks, new_offsets, waiting = _read_new_lines(lake, offsets, as_of)
        if not chunks:
            if waiting:
                report.counts = {"waiting": waiting}
            return report
        log_lines: list[str] = []
        with transaction(con):
            con.register("event_lines", _redact_lines(lake, con, pl.concat(chunks)))
            con.execute(_PARSE)
            con.unregister("event_lines")
            report.counts = _apply(con, as_of, run_id, log_lines)
            if waiting:
                report.counts["waiting"] = waiting      # lines dated after as_of: a later run reads them
            con.executemany("DELETE FROM event_offsets WHERE file = ?", [[f] for f in new_offsets])
            con.executemany("INSERT INTO event_offsets VALUES (?, ?)", list(new_offsets.items()))
    append_cleanup_log(lake.root, log_lines)
    return report


def _collect_inbox_events(lake, con: duckdb.DuckDBPyConnection) -> None:
    """Complete event files leave the inbox for events/, redacted (named by the original's hash:
    no double counting; the name is redacted too). The copy is written under a temporary name and
    renamed, and the original removed only after that: a crash in between re-runs cleanly."""
    lake_salt = lake.tenant_salts([])[""]
    for path in sorted(lake.inbox.glob("*.events.jsonl")):
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()[:16]
        target = lake.events / f"inbox-{digest}-{redact_text(path.name, lake_salt)}"
        if not target.exists():
            lines = pl.DataFrame({"raw": data.decode("utf-8", "replace").split("\n")})
            body = "\n".join(_redact_lines(lake, con, lines)["raw"].to_list())
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.write_text(body, encoding="utf-8")
            os.replace(tmp, target)
        path.unlink()


def _redact_lines(lake, con: duckdb.DuckDBPyConnection, lines: pl.DataFrame) -> pl.DataFrame:
    """`lines` with column ``raw`` redacted by the ingest's rules, each line with its tenant's salt."""
    tenants = lines.select(
        pl.col("raw").str.json_path_match("$.tenant").alias("tenant")
    ).to_series()
    return lines.with_columns(raw=redact_records(lines["raw"], tenants,
                                                        lambda names: lake.tenant_salts(names)))


# The time of an event line, read without parsing the whole line (a search log grows long).
_TS = re.compile(rb'"ts"\s*:\s*"([^"]{1,40})"')


def _after(line: bytes, as_of: datetime) -> bool:
    """Whether an event line is dated after `as_of` (a line without a readable ts is not: it goes
    to quarantine as a bad timestamp)."""
    found = _TS.search(line)
    if not found:
        return False
    try:
        return resolve_as_of(found.group(1).decode("utf-8", "replace")) > as_of
    except InputError:
        return False


def _read_new_lines(lake, offsets: dict[str, int],
                    as_of: datetime) -> tuple[list[pl.DataFrame], dict[str, int], int]:
    """Complete lines of each event file past its offset, up to the first line dated after `as_of`:
    a run applies no use that happened after its own time (a search run today does not change a
    rerun of last night), and that line and the ones after it wait for a later run. Returns the
    chunks, the new offsets and how many lines wait."""
    chunks, new_offsets, waiting = [], {}, 0
    as_of = resolve_as_of(as_of)                       # naive UTC, as the lines' times are read
    for path in sorted(lake.events.glob("*.jsonl")):
        name = str(path.relative_to(lake.root))
        start = offsets.get(name, 0)
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read()
        end = data.rfind(b"\n") + 1  # a line still being appended waits for the next run
        if end == 0:
            continue
        lines = data[:end].split(b"\n")[:-1]
        taken, cut = 0, 0
        for line in lines:
            if _after(line, as_of):
                waiting += len(lines) - taken
                break
            taken += 1
            cut += len(line) + 1
        if taken == 0:
            continue
        first_line = 1 + _count_lines(path, start)
        text = data[:cut].decode("utf-8", "replace")
        frame = pl.DataFrame({"raw": text.split("\n")[:-1]}).with_row_index("line", offset=first_line)
        chunks.append(frame.with_columns(pl.col("line").cast(pl.Int64), file=pl.lit(name)))
        new_offsets[name] = start + cut
    return chunks, new_offsets, waiting


def _count_lines(path: Path, upto: int) -> int:
    if upto == 0:
        return 0
    with open(path, "rb") as handle:
        return handle.read(upto).count(b"\n")


_PARSE = """
CREATE OR REPLACE TEMP TABLE event_parsed AS
WITH typed AS (
    SELECT file, line, raw, json_valid(raw) AND regexp_matches(raw, '^\\s*\\{') AS is_object FROM event_lines
), fields AS (
    SELECT file, line, raw, is_object,
           CASE WHEN is_object THEN raw ->> '$.event' END AS event,
           CASE WHEN is_object THEN raw ->> '$.tenant' END AS tenant,
           CASE WHEN is_object THEN raw ->> '$.memory_id' END AS memory_id,
           CASE WHEN is_object THEN raw ->> '$.search_id' END AS search_id,
           CASE WHEN is_object THEN try_cast(raw ->> '$.ts' AS TIMESTAMPTZ) AT TIME ZONE 'UTC' END AS ts,
           coalesce(CASE WHEN is_object THEN json_type(raw, '$.result_ids') = 'ARRAY' END, false) AS is_search
    FROM typed
)
SELECT *, CASE
    WHEN NOT is_object THEN 'bad JSON'
    WHEN tenant IS NULL THEN 'missing tenant'
    WHEN ts IS NULL THEN 'bad timestamp'
    WHEN is_search AND search_id IS NOT NULL THEN NULL
    WHEN event IS NULL OR event NOT IN ('access', 'reference', 'hit') THEN 'unknown event'
    WHEN event IN ('access', 'reference') AND memory_id IS NULL THEN 'missing memory_id'
    WHEN event = 'hit' AND search_id IS NULL THEN 'missing search_id'
END AS reason
FROM fields
"""


def _check_tenants(con: duckdb.DuckDBPyConnection) -> None:
    """Quarantine reasons for events that reach outside their tenant: an access or reference to
    another tenant's memory (or to no memory: ``unknown id``), and a search log line whose results
    include another tenant's memory (it would count as an access there). Hits are checked once
    this batch's searches are in ``retrieval_log``."""
    con.execute(
        f"""
        UPDATE event_parsed SET reason = CASE WHEN EXISTS (SELECT 1 FROM memories m WHERE m.id = event_parsed.memory_id)
                                              THEN '{FOREIGN_ID}' ELSE 'unknown id' END
        WHERE reason IS NULL AND NOT is_search AND event IN ('access', 'reference')
          AND NOT EXISTS (SELECT 1 FROM memories m
                          WHERE m.id = event_parsed.memory_id AND m.tenant = event_parsed.tenant)
        """
    )
    con.execute(
        f"""
        UPDATE event_parsed SET reason = '{FOREIGN_ID}'
        FROM (SELECT DISTINCT r.file, r.line
              FROM (SELECT file, line, tenant, unnest(json_extract_string(raw, '$.result_ids[*]')) AS id
                    FROM event_parsed WHERE reason IS NULL AND is_search) r
              JOIN memories m ON m.id = r.id AND m.tenant <> r.tenant) f
        WHERE event_parsed.file = f.file AND event_parsed.line = f.line
        """
    )


def _apply(con: duckdb.DuckDBPyConnection, as_of: datetime, run_id: str, log_lines: list[str]) -> dict[str, int]:
    params = {"as_of": as_of, "run_id": run_id}
    _check_tenants(con)
    # searches -> retrieval_log (idempotent on search_id)
    con.execute(
        """
        INSERT INTO retrieval_log (search_id, ts, tenant, agent_id, user_id, query, mode, mode_used, result_ids,
                                   raw_scores, keyword_match, confirmed_hit, run_id, semantic_match)
        SELECT raw ->> '$.search_id', ts, tenant, raw ->> '$.agent_id', raw ->> '$.user_id', raw ->> '$.query',
               raw ->> '$.mode', raw ->> '$.mode_used', json_extract_string(raw, '$.result_ids[*]'),
               list_transform(json_extract(raw, '$.raw_scores[*]'), x -> try_cast(x AS DOUBLE)),
               coalesce(try_cast(raw ->> '$.keyword_match' AS BOOLEAN), false), false, $run_id,
               coalesce(try_cast(raw ->> '$.semantic_match' AS BOOLEAN), false)
        FROM event_parsed e
        WHERE reason IS NULL AND is_search
          AND NOT EXISTS (SELECT 1 FROM retrieval_log r WHERE r.search_id = e.search_id)
        """,
        {"run_id": run_id},
    )
    searches = con.execute("SELECT count(*) FROM event_parsed WHERE reason IS NULL AND is_search").fetchone()[0]
    # A hit on a search of another tenant (searches of this batch included, now in retrieval_log)
    # is quarantined; the tenant is matched again here so that no path confirms a foreign search.
    con.execute(
        f"""
        UPDATE event_parsed SET reason = '{FOREIGN_ID}'
        WHERE reason IS NULL AND event = 'hit'
          AND EXISTS (SELECT 1 FROM retrieval_log r WHERE r.search_id = event_parsed.search_id)
          AND NOT EXISTS (SELECT 1 FROM retrieval_log r WHERE r.search_id = event_parsed.search_id
                                                          AND r.tenant = event_parsed.tenant)
        """
    )
    hits = con.execute(
        """
        UPDATE retrieval_log SET confirmed_hit = true
        FROM (SELECT DISTINCT search_id, tenant FROM event_parsed WHERE reason IS NULL AND event = 'hit') h
        WHERE retrieval_log.search_id = h.search_id AND retrieval_log.tenant = h.tenant
        """
    ).fetchone()[0]
    # uses: explicit events plus every memory a search returned (searches count as accesses)
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE event_uses AS
        SELECT file, line, tenant, memory_id, ts, event FROM event_parsed
        WHERE reason IS NULL AND event IN ('access', 'reference')
        UNION ALL
        SELECT file, line, tenant, unnest(list_filter(json_extract_string(raw, '$.result_ids[*]'),
               x -> NOT list_contains(coalesce(json_extract_string(raw, '$.resting_ids[*]'), []::VARCHAR[]), x))),
               ts, 'access'
        FROM event_parsed WHERE reason IS NULL AND is_search
        """
    )
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE event_usage AS
        WITH per_memory AS (
            SELECT memory_id, tenant, count(*) FILTER (WHERE event = 'access') AS accesses,
                   count(*) FILTER (WHERE event = 'reference') AS references_, max(ts) AS last_ts
            FROM event_uses GROUP BY memory_id, tenant
        )
        SELECT m.*, p.accesses, p.references_, p.last_ts
        FROM per_memory p JOIN memories m ON m.id = p.memory_id AND m.tenant = p.tenant
        """
    )
    # A use wakes a dormant memory (seed 003: dormant is kept, and comes back when used).
    con.execute("CREATE OR REPLACE TEMP TABLE tier_moves AS SELECT id, tier AS to_tier, 'active' AS to_status, "
                "'wake_on_use' AS rule FROM event_usage WHERE status = 'dormant'")
    woken = apply_moves(con, as_of=as_of, run_id=run_id, log_lines=log_lines)
    con.execute("UPDATE event_usage SET status = 'active' WHERE status = 'dormant'")
    changed = {"access_count": "f.access_count + f.accesses", "reference_count": "f.reference_count + f.references_",
               "last_accessed_at": "greatest(f.last_accessed_at, f.last_ts)"}
    con.execute(
        f"""
        INSERT INTO memory_history ({HISTORY_COLUMNS})
        SELECT $seq + row_number() OVER (ORDER BY id), id, tenant, version, 'usage',
               ['access_count', 'reference_count', 'last_accessed_at'], 'system', $run_id, 'usage events', $as_of,
               {row_image('f')}, {row_image('f', **changed)}, NULL, NULL, NULL
        FROM event_usage f
        """,
        {**params, "seq": next_history_seq(con)},
    )
    con.execute(
        """
        UPDATE memories SET access_count = memories.access_count + f.accesses,
                            reference_count = memories.reference_count + f.references_,
                            last_accessed_at = greatest(memories.last_accessed_at, f.last_ts)
        FROM event_usage f WHERE memories.id = f.id
        """
    )
    con.execute(
        """
        INSERT INTO quarantine (quarantine_id, run_id, as_of, file, file_hash, line, reason, detail, tenant, memory_id, raw)
        SELECT (SELECT coalesce(max(quarantine_id), 0) FROM quarantine) + row_number() OVER (ORDER BY file, line),
               $run_id, $as_of, file, '', line, reason,
               CASE reason
                   WHEN 'unknown event' THEN coalesce('event ' || to_json(event)::VARCHAR, 'no "event" field')
                        || ' is not one of access, reference, hit (or a search record with search_id and result_ids)'
                   WHEN 'bad timestamp' THEN '"ts" must be an ISO 8601 time, e.g. 2026-11-29T10:00:00Z'
                   WHEN 'bad JSON' THEN 'each line must be one JSON object'
                   WHEN 'missing tenant' THEN 'every event names its "tenant"'
                   WHEN 'missing memory_id' THEN 'an access or reference names its "memory_id"'
                   WHEN 'missing search_id' THEN 'a hit names its "search_id"'
               END, tenant, memory_id, raw
        FROM event_parsed WHERE reason IS NOT NULL
        """,
        params,
    )
    counts = dict(con.execute(
        "SELECT event, count(*) FROM event_parsed WHERE reason IS NULL AND NOT coalesce(is_search, false) "
        "GROUP BY event").fetchall())
    bad = con.execute("SELECT count(*) FROM event_parsed WHERE reason IS NOT NULL").fetchone()[0]
    touched = con.execute("SELECT count(*) FROM event_usage").fetchone()[0]
    return {"searches": searches, "access_events": counts.get("access", 0),
            "reference_events": counts.get("reference", 0), "hit_events": hits, "memories_used": touched,
            "woken": woken, "quarantined": bad}


# ---------------------------------------------------------------- forget (store.registry)
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
    con = connect(Path(":memory:"))
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


