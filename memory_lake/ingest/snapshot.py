"""The snapshot contract: how a file's records become typed, validated memory records.

The formats (JSON Lines, the memory-orchestrator save file, Parquet) are read by the modules of
``formats/``, each into records as (line, raw, ok, problem); this module holds what every format
shares from there on. Fields and defaults follow DESIGN "Memory record"; unknown fields are kept
in ``extra``. A save file's ``type`` may carry the tier, as in seed 000's ``type: "long-term"``.
``version`` is the version a write was based on; ``deleted: true`` (or ``status: "deleted"``) is
a forget request.

Validation is set-based in DuckDB: each record is parsed once into a struct of JSON values,
typed, and given the first failing check as its quarantine ``reason`` (with a ``detail``).
JSON is read strictly (RFC 8259): DuckDB's reader accepts trailing commas and NaN/Infinity, so
those are looked for outside strings and quarantined as ``bad JSON``. Every value a record can
carry has a documented range (README "The snapshot contract"), so that nothing stored can break
a later step or a reader: out-of-range numbers and timestamps, and values nested deeper than
``MAX_DEPTH``, are quarantined, never passed on. An event time (``EVENT_TIMESTAMPS``) later than
the ingest's ``as_of`` plus ``[ingest] future_horizon_h`` is a wrong clock or a forged date (issue
37.5: a memory dated 9999-12-31 sorted first everywhere and never went idle) and is quarantined too;
``expires_at`` is a deadline and may lie any time ahead.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import duckdb
import polars as pl

from ..store import schema
from ..store import IngestPolicy
from ..text import normalise_contents, redact_text
from ..store import InputError, resolve_as_of

# Quarantine reasons, as users see them in `memory-lake quarantine list`.
BAD_ENCODING = "bad encoding"
BAD_JSON = "bad JSON"
MISSING_TENANT = "missing tenant"
MISSING_CONTENT = "missing content"
MISSING_ID = "missing id"
UNKNOWN_TIER = "unknown tier"
UNKNOWN_TYPE = "unknown type"
UNKNOWN_STATUS = "unknown status"
UNKNOWN_OPERATOR = "unknown operator"
BAD_TIMESTAMP = "bad timestamp"
FUTURE_TIMESTAMP = "future timestamp"
WRONG_TYPE = "wrong type"
OUT_OF_RANGE = "out of range"
TOO_LARGE = "content too large"
TOO_DEEP = "too deeply nested"
# A hot-memory tree's content_ptr that names no file inside the tree (formats/hottree.py).
BROKEN_POINTER = "broken pointer"
DUPLICATE_ID = "duplicate id in file"
# A line with no id repeating an earlier one: same tenant, agent, user and text give the same
# derived id, so the later line says nothing new (a snapshot that lists a memory twice).
DUPLICATE_MEMORY = "duplicate memory in file"

# Accepted ranges (README "The snapshot contract"). Timestamps: what every reader (DuckDB,
# Python's datetime, Parquet) can hold; epoch numbers are seconds. Integers: exact in any JSON
# reader (RFC 8259 section 6: up to 2^53 - 1), and a version or a sum of counters stays far from
# BIGINT overflow. Depth: a record object counts as level 1; the redaction's JSON reader stops
# at 128 levels, and no memory needs more than a few.
MIN_TIMESTAMP, MAX_TIMESTAMP = "1970-01-01 00:00:00", "9999-12-31 23:59:59.999999"
MAX_EPOCH_S = 253402300800  # 10000-01-01T00:00:00Z in seconds
MAX_INTEGER = 2**53 - 1
MAX_DEPTH = 64
TOO_DEEP_DETAIL = f"nested deeper than {MAX_DEPTH} levels"
# A save file (an object with `memories`) whose `memories` is no list: the reader passes the whole
# document on as one record with this problem, so that it is quarantined as what it is.
MEMORIES_NOT_A_LIST = "memories must be a list of records"

# Accepted keys per field: snake_case first, then camelCase as JavaScript agents write them.
FIELD_KEYS: dict[str, tuple[str, ...]] = {
    "id": ("id",),
    "tenant": ("tenant",),
    "agent_id": ("agent_id", "agentId"),
    "user_id": ("user_id", "userId"),
    "context_id": ("context_id", "contextId"),
    "session_id": ("session_id", "sessionId"),
    "tier": ("tier",),
    "type": ("type",),
    "content": ("content",),
    "summary": ("summary",),
    "tags": ("tags",),
    "importance": ("importance",),
    "source": ("source",),
    "created_at": ("created_at", "createdAt"),
    "updated_at": ("updated_at", "updatedAt"),
    "last_accessed_at": ("last_accessed_at", "lastAccessedAt"),
    "access_count": ("access_count", "accessCount"),
    "reference_count": ("reference_count", "referenceCount"),
    "expires_at": ("expires_at", "expiresAt"),
    "version": ("version",),
    "status": ("status",),
    "important": ("important",),
    "deleted": ("deleted",),
    "operator": ("operator",),
    "trace_id": ("trace_id", "traceId"),
    "reason": ("reason",),  # why a forget was asked for
    "quarantine_id": ("_quarantine_id",),  # set by `quarantine export`, read by `quarantine replay`
    # Set by `memory-lake edit` and carried by every exported record: the memory's latest history
    # row when it was read; the merge takes that row's image as the base, so system moves and usage
    # counters made before the read are not the lake's side (nor counted twice).
    "base_seq": ("base_seq", "_base_seq"),
    # Marks an export adds (publish.py): derived from the conflict queue, so ignored on ingest
    # rather than kept in `extra` (a re-ingested memory.json then changes nothing).
    "conflict": ("conflict",),
    "conflict_with": ("conflict_with", "conflictWith"),
}
KNOWN_KEYS = sorted({key for keys in FIELD_KEYS.values() for key in keys})

TEXT_FIELDS = ("id", "tenant", "agent_id", "user_id", "context_id", "session_id", "content", "summary",
               "source", "trace_id", "reason", "tier", "type", "status", "operator")
# Identifiers that some agents write as JSON numbers; accepted as text.
NUMERIC_TEXT_FIELDS = ("id", "tenant", "agent_id", "user_id", "context_id", "session_id", "trace_id")
TIMESTAMP_FIELDS = ("created_at", "updated_at", "last_accessed_at", "expires_at")
# When something happened, so never after the ingest's as_of + [ingest] future_horizon_h;
# expires_at is when something is due, and lies ahead by nature.
EVENT_TIMESTAMPS = ("created_at", "updated_at", "last_accessed_at")
# name -> minimum (the maximum is MAX_INTEGER)
INTEGER_FIELDS = {"access_count": 0, "reference_count": 0, "version": 1, "quarantine_id": 0, "base_seq": 1}
BOOL_FIELDS = ("important", "deleted")
NUMERIC_FIELDS = (*TIMESTAMP_FIELDS, *INTEGER_FIELDS, "importance")
NUMBERS = "('UBIGINT', 'BIGINT', 'DOUBLE')"


# ============================================================================ record shape
# DuckDB's JSON reader (yyjson) accepts trailing commas and NaN/Infinity (any case). Outside JSON
# strings neither can hide. Both patterns match only where a value may stand (after ":", "[" or
# ","), so that ordinary text ("tenant" holds "nan") rarely pays for stripping the strings.
_STRING_RE = r'"([^"\\]|\\.)*"'
_COMMA_RE = r",\s*[\]}]"
_NAN_RE = r"[:\[,]\s*[-+]?(?i:nan|inf)"


def _outside_strings(text: str, pattern: str) -> str:
    """SQL: true where regex `pattern` matches `text` outside its JSON strings."""
    return (f"(regexp_matches({text}, '{pattern}') AND "
            f"""regexp_matches(regexp_replace({text}, '{_STRING_RE}', '""', 'g'), '{pattern}'))""")


def not_strict_sql(text: str) -> str:
    """SQL: true where `text`, JSON to DuckDB, holds a trailing comma or NaN/Infinity (not JSON)."""
    return f"({_outside_strings(text, _COMMA_RE)} OR {_outside_strings(text, _NAN_RE)})"


def shape_hints(lines: pl.DataFrame) -> pl.DataFrame:
    """`lines` (line, raw, ok, problem) with the cheap pre-tests ``shape_sql`` needs: whether a
    record may hold a trailing comma or NaN, and whether it has more than MAX_DEPTH brackets
    at all (Polars' regex engine does these scans far faster than DuckDB's)."""
    return lines.with_columns(
        suspect=pl.col("raw").str.contains(f"{_COMMA_RE}|{_NAN_RE}"),
        bracketed=pl.col("raw").str.count_matches(r"[\[{]") > MAX_DEPTH,
    )


def shape_sql(source: str) -> str:
    """SQL: the records of `source` (``shape_hints``) as (line, ok, raw, problem), ``problem``
    saying why a record is not a strict JSON object of at most MAX_DEPTH levels (NULL when it
    is one). Depth is counted from the brackets outside strings, one row per bracket, and only
    for records with enough brackets."""
    residue = f"""regexp_replace(raw, '{_STRING_RE}', '""', 'g')"""
    return rf"""
        WITH src AS (
            SELECT line, ok, raw, problem, suspect, bracketed, ok AND json_valid(raw) AS valid FROM {source}
        ), deep AS (
            SELECT line, max(depth) > {MAX_DEPTH} AS too_deep
            FROM (SELECT line, sum(CASE WHEN c IN ('[', '{{') THEN 1 ELSE -1 END) OVER (PARTITION BY line ORDER BY i) AS depth
                  FROM (SELECT line, unnest(string_split(b, '')) AS c, unnest(range(strlen(b))) AS i
                        FROM (SELECT line, regexp_replace({residue}, '[^\[\]{{}}]', '', 'g') AS b
                              FROM src WHERE valid AND bracketed)))
            GROUP BY line
        )
        SELECT line, ok, raw, CASE
            WHEN NOT ok THEN coalesce(problem, 'line is not valid UTF-8')
            WHEN problem IS NOT NULL THEN problem  -- the reader's verdict on the document's shape
            WHEN NOT valid THEN 'not valid JSON'
            WHEN suspect AND {_outside_strings('raw', _COMMA_RE)} THEN 'not valid JSON: a trailing comma'
            WHEN suspect AND {_outside_strings('raw', _NAN_RE)} THEN 'not valid JSON: NaN and Infinity are not JSON numbers'
            WHEN NOT regexp_matches(raw, '^\s*\{{') THEN 'not a JSON object'
            WHEN too_deep THEN '{TOO_DEEP_DETAIL}'
        END AS problem
        FROM src LEFT JOIN deep USING (line)
    """


# ============================================================================ parse and validate
def parse_records(con: duckdb.DuckDBPyConnection, texts: pl.DataFrame, policy: IngestPolicy, *,
                  as_of: datetime | None) -> None:
    """Typed columns plus the first failing check per record, into temp table ``snap_parsed``.

    `texts` has (line, ok, is_object, problem, text) (``shape_sql``, then redacted), and may say
    which texts redaction `changed` (only those are checked for JSON again); it stays in
    ``snap_texts`` for the quarantine. `as_of` is the ingest's instant: an event time more than
    ``policy.future_horizon_h`` after it is a ``future timestamp``; None checks no horizon (a
    re-read of a raw copy, which only needs the ids ingest gave). Output columns: line, reason,
    detail, the memory fields (NULL where the record leaves them out), is_forget, forget_reason,
    quarantine_id, base_seq and has_extra; ``snap_extra`` holds the JSON of unknown keys per line. One statement, so DuckDB
    parses each record once and materialises only the result.
    """
    changed = "changed" if "changed" in texts.columns else "true"
    # An upper bound on each record's keys (``_parse_sql``): every key, at any depth, is a string
    # followed by a colon, and a value's text can only add matches. Polars counts them far faster
    # than DuckDB parses each record again for json_keys.
    texts = texts.with_columns(n_keys=pl.col("text").str.count_matches(r'"\s*:').fill_null(0))
    con.register("snap_texts_frame", texts)
    try:
        # Redaction keeps JSON valid; should a placeholder ever break a line, that line is bad
        # JSON, not a failed run.
        con.execute(
            f"""
            CREATE OR REPLACE TEMP TABLE snap_texts AS
            SELECT line, ok, is_object AND still_valid AS is_object,
                   CASE WHEN is_object AND NOT still_valid THEN 'not valid JSON after redaction' ELSE problem END AS problem,
                   text, n_keys
            FROM (SELECT *, CASE WHEN is_object AND {changed} THEN json_valid(text) WHEN is_object THEN true END AS still_valid
                  FROM snap_texts_frame)
            """
        )
    finally:
        con.unregister("snap_texts_frame")
    con.execute(f"CREATE OR REPLACE TEMP TABLE snap_parsed AS {_parse_sql(policy, as_of)}")
    _collect_extra(con)


def _first_key(name: str) -> str:
    keys = [f'"{key}"' for key in FIELD_KEYS[name]]
    return keys[0] if len(keys) == 1 else f"coalesce({', '.join(keys)})"


def _kind_sql(name: str) -> str:
    """JSON type of a raw value from its first character (values come minified from the parser),
    far cheaper than parsing each value again with json_type(); starts_with compares bytes, where
    left() would count characters."""
    j = f"j_{name}"
    return (f"CASE WHEN {j} IS NOT NULL THEN CASE WHEN starts_with({j}, '\"') THEN 'VARCHAR' "
            f"WHEN starts_with({j}, '[') THEN 'ARRAY' WHEN starts_with({j}, '{{') THEN 'OBJECT' "
            f"WHEN starts_with({j}, 't') OR starts_with({j}, 'f') THEN 'BOOLEAN' "
            f"WHEN starts_with({j}, 'n') OR {j} = '' THEN NULL "
            f"WHEN contains({j}, '.') OR contains({j}, 'e') OR contains({j}, 'E') THEN 'DOUBLE' ELSE 'BIGINT' END END "
            f"AS jt_{name}")


def _string_sql(name: str) -> str:
    """The text of a JSON string value; unescaped by the JSON reader only when it holds escapes."""
    return f"CASE WHEN contains(j_{name}, '\\') THEN j_{name}::JSON ->> '$' ELSE j_{name}[2:-2] END"


def _typed_sql() -> list[str]:
    """Typed value per field, NULL when absent or of the wrong JSON type (jt_* tells which)."""
    typed = []
    for name in TEXT_FIELDS:
        numbers = f"WHEN jt_{name} IN {NUMBERS} THEN j_{name} " if name in NUMERIC_TEXT_FIELDS else ""
        typed.append(f"CASE WHEN jt_{name} = 'VARCHAR' THEN {_string_sql(name)} {numbers}END AS s_{name}")
    for name in TIMESTAMP_FIELDS:  # v_* (stamps) is the parsed value, t_* the value in range
        typed.append(f"CASE WHEN v_{name} BETWEEN TIMESTAMP '{MIN_TIMESTAMP}' AND TIMESTAMP '{MAX_TIMESTAMP}' "
                     f"THEN v_{name} END AS t_{name}")
        typed.append(f"left(j_{name}, 60) AS {name}_text")
    for name, low in INTEGER_FIELDS.items():
        typed.append(
            f"CASE WHEN d_{name} = floor(d_{name}) AND d_{name} BETWEEN {low} AND {MAX_INTEGER} "
            f"THEN coalesce(try_cast(j_{name} AS BIGINT), try_cast(d_{name} AS BIGINT)) END AS n_{name}"
        )
    for name in BOOL_FIELDS:
        typed.append(f"CASE WHEN jt_{name} = 'BOOLEAN' THEN j_{name} = 'true' END AS b_{name}")
    typed.append("d_importance AS x_importance")
    typed.append(
        "CASE WHEN jt_tags = 'VARCHAR' THEN [j_tags::JSON ->> '$'] "
        "WHEN jt_tags = 'ARRAY' AND list_bool_and(list_transform(json_type(j_tags, '$[*]'), "
        "x -> x = 'VARCHAR')) IS NOT false THEN json_extract_string(j_tags, '$[*]') END AS l_tags"
    )
    return typed


def _numbers_sql() -> str:
    """d_*: the value of a JSON number as DOUBLE (NULL for other JSON types); +-inf beyond it."""
    return ", ".join(f"CASE WHEN jt_{name} IN {NUMBERS} THEN try_cast(j_{name} AS DOUBLE) END AS d_{name}"
                     for name in NUMERIC_FIELDS)


def _stamps_sql() -> str:
    """v_*: a timestamp as given (ISO text, any zone, to UTC; or epoch seconds), before its range
    check; NULL when it is none. Epochs beyond year 9999 are not converted (they would not fit)."""
    return ", ".join(
        f"CASE WHEN jt_{name} = 'VARCHAR' THEN try_cast({_string_sql(name)} AS TIMESTAMPTZ) AT TIME ZONE 'UTC' "
        f"WHEN d_{name} BETWEEN 0 AND {MAX_EPOCH_S} THEN to_timestamp(d_{name}) AT TIME ZONE 'UTC' END AS v_{name}"
        for name in TIMESTAMP_FIELDS
    )


def future_limit(as_of: datetime | None, hours: float) -> datetime | None:
    """The latest event time a record may carry: `as_of` + `hours` ([ingest] future_horizon_h).
    None (no limit) without an `as_of`, or when the sum lies beyond every timestamp."""
    if as_of is None:
        return None
    try:
        return as_of + timedelta(hours=hours)
    except OverflowError:
        return None


def _parse_sql(policy: IngestPolicy, as_of: datetime | None) -> str:
    struct = "{" + ", ".join(f'"{key}": "JSON"' for key in KNOWN_KEYS) + "}"
    raw = ", ".join(f"{_first_key(name)}::VARCHAR AS j_{name}" for name in FIELD_KEYS)
    kinds = ", ".join(_kind_sql(name) for name in FIELD_KEYS)
    checks = _checks(policy, as_of)
    reason = "CASE " + " ".join(f"WHEN {c} THEN '{r}'" for c, r, _ in checks) + " END"
    detail = "CASE " + " ".join(f"WHEN reason = '{r}' AND {c} THEN {d}" for c, r, d in checks) + " END"
    key = "lower(replace(replace(replace({}, '-', ''), '_', ''), ' ', ''))"
    # A record may hold unknown keys when it has more keys than known ones with a value: a cheap
    # over-estimate (a known key holding null, or given twice, a nested key or a value's '":' counts
    # as unknown: ``n_keys`` is an upper bound, ``parse_records``), which only makes `_collect_extra`
    # look at the record (list_has_all over KNOWN_KEYS costs 3x the parse).
    known = " + ".join(f'("{key}" IS NOT NULL)::INTEGER' for key in KNOWN_KEYS)
    return f"""
        WITH parsed AS (
            -- one JSON parse per record, into a struct of raw JSON values
            SELECT line, ok, is_object, problem, n_keys, unnest(from_json(j, '{struct}'))
            FROM (SELECT *, CASE WHEN is_object THEN text ELSE '{{}}' END AS j FROM snap_texts)
        ), raw AS (
            SELECT line, ok, is_object, problem, n_keys > {known} AS has_extra, {raw} FROM parsed
        ), kinds AS (
            SELECT *, {kinds} FROM raw
        ), numbers AS (
            SELECT *, {_numbers_sql()} FROM kinds
        ), stamps AS (
            SELECT *, {_stamps_sql()} FROM numbers
        ), typed AS (
            SELECT *, {', '.join(_typed_sql())} FROM stamps
        ), mapped AS (
            SELECT *,
                   {_alias_case(key.format('s_tier'), schema.TIER_ALIASES)} AS tier_alias,
                   {_alias_case(key.format('s_type'), _squash(schema.TYPE_ALIASES))} AS type_alias,
                   {_alias_case(key.format('s_type'), schema.TIER_ALIASES)} AS tier_from_type,
                   coalesce(b_deleted, false) OR coalesce(s_status = 'deleted', false) AS is_forget
            FROM typed
        ), judged AS (
            SELECT *, {reason} AS reason FROM mapped
        )
        SELECT line, reason, CASE WHEN reason IS NOT NULL THEN {detail} END AS detail,
               nullif(trim(s_id), '') AS id, trim(s_tenant) AS tenant,
               s_agent_id AS agent_id, s_user_id AS user_id, s_context_id AS context_id, s_session_id AS session_id,
               -- seed 000 save files carry the tier in `type`; `important: true` means tier important
               CASE WHEN b_important THEN 'important' ELSE coalesce(tier_alias, tier_from_type) END AS tier,
               type_alias AS type,
               s_content AS content, s_summary AS summary, list_sort(list_distinct(l_tags)) AS tags,
               x_importance AS importance, s_source AS source,
               t_created_at AS created_at, t_updated_at AS updated_at, t_last_accessed_at AS last_accessed_at,
               n_access_count AS access_count, n_reference_count AS reference_count, t_expires_at AS expires_at,
               n_version AS version, CASE WHEN s_status <> 'deleted' THEN s_status END AS status,
               is_forget, coalesce(s_operator, 'agent') AS operator, s_trace_id AS trace_id,
               s_reason AS forget_reason, n_quarantine_id AS quarantine_id, n_base_seq AS base_seq, has_extra
        FROM judged
    """


def _alias_case(column: str, aliases: dict[str, str]) -> str:
    whens = " ".join(f"WHEN '{key}' THEN '{value}'" for key, value in aliases.items())
    return f"CASE {column} {whens} END"


def _checks(policy: IngestPolicy, as_of: datetime | None) -> list[tuple[str, str, str]]:
    """(condition, reason, detail) in the order they are tried; the first that holds wins."""
    forget = "is_forget"
    checks = [
        ("NOT ok", BAD_ENCODING, "problem"),
        (f"starts_with(coalesce(problem, ''), '{BROKEN_POINTER}: ')", BROKEN_POINTER, "problem"),
        (f"problem = '{TOO_DEEP_DETAIL}'", TOO_DEEP, "problem"),
        (f"problem = '{MEMORIES_NOT_A_LIST}'", WRONG_TYPE, "problem"),
        ("NOT is_object", BAD_JSON, "coalesce(problem, 'not a JSON object')"),
        # a record with neither tenant nor content is likely not a memory at all (a raw chat dataset,
        # an export read as JSON Lines): the detail says where the formats and --tenant are
        ("jt_tenant IS NULL", MISSING_TENANT,
         "CASE WHEN jt_content IS NULL AND NOT coalesce(is_forget, false) THEN 'tenant is required, and the record has "
         "no content either, so it may not be a memory: `memory-lake ingest --help` lists the formats read (chat "
         "transcripts, Mem0, Letta and Zep exports) and --tenant' ELSE 'tenant is required' END"),
    ]
    for name in TEXT_FIELDS:
        checks.append((f"jt_{name} IS NOT NULL AND s_{name} IS NULL", WRONG_TYPE, f"'{name} must be text'"))
    stamp_range = f"{MIN_TIMESTAMP[:10]}..{MAX_TIMESTAMP[:10]}"
    for name in TIMESTAMP_FIELDS:
        checks.append((f"jt_{name} IS NOT NULL AND jt_{name} NOT IN {NUMBERS} AND v_{name} IS NULL", BAD_TIMESTAMP,
                       f"'{name}: ' || {name}_text"))
        checks.append((f"jt_{name} IS NOT NULL AND t_{name} IS NULL", OUT_OF_RANGE,
                       f"'{name} ' || {name}_text || ' is outside {stamp_range}' || "
                       f"CASE WHEN d_{name} > {MAX_EPOCH_S} THEN ' (a number is read as epoch seconds)' ELSE '' END"))
    checks += _future_checks(policy, as_of)
    for name, low in INTEGER_FIELDS.items():
        checks.append((f"jt_{name} IS NOT NULL AND (jt_{name} NOT IN {NUMBERS} OR d_{name} <> floor(d_{name}))",
                       WRONG_TYPE, f"'{name} must be an integer'"))
        checks.append((f"jt_{name} IS NOT NULL AND n_{name} IS NULL", OUT_OF_RANGE,
                       f"'{name} ' || left(j_{name}, 60) || ' is outside {low}..{MAX_INTEGER}'"))
    for name in BOOL_FIELDS:
        checks.append((f"jt_{name} IS NOT NULL AND b_{name} IS NULL", WRONG_TYPE, f"'{name} must be true or false'"))
    checks += [
        ("jt_importance IS NOT NULL AND x_importance IS NULL", WRONG_TYPE, "'importance must be a number'"),
        ("NOT (x_importance BETWEEN 0 AND 1)", OUT_OF_RANGE, "'importance ' || left(j_importance, 60) || ' is outside 0..1'"),
        ("jt_tags IS NOT NULL AND l_tags IS NULL", WRONG_TYPE, "'tags must be a list of text'"),
        ("nullif(trim(s_tenant), '') IS NULL", MISSING_TENANT, "'tenant is empty'"),
        (f"{forget} AND nullif(trim(s_id), '') IS NULL", MISSING_ID, "'a forget request needs the id'"),
        (f"NOT {forget} AND nullif(trim(s_content), '') IS NULL", MISSING_CONTENT, "'content is required'"),
        ("s_tier IS NOT NULL AND tier_alias IS NULL", UNKNOWN_TIER, "'tier ' || s_tier"),
        ("s_type IS NOT NULL AND type_alias IS NULL AND tier_from_type IS NULL", UNKNOWN_TYPE, "'type ' || s_type"),
        (f"s_status IS NOT NULL AND s_status NOT IN {tuple(schema.INPUT_STATUSES)!r}", UNKNOWN_STATUS, "'status ' || s_status"),
        (f"s_operator IS NOT NULL AND s_operator NOT IN {tuple(schema.OPERATORS)!r}", UNKNOWN_OPERATOR,
         "'operator ' || s_operator"),
        (f"strlen(s_content) > {int(policy.max_content_bytes)}", TOO_LARGE,
         f"strlen(s_content) || ' bytes > {int(policy.max_content_bytes)}'"),
    ]
    return checks


def _future_checks(policy: IngestPolicy, as_of: datetime | None) -> list[tuple[str, str, str]]:
    """An event time after `as_of` + the horizon: the detail names the value (UTC), the horizon,
    the as_of, and the two ways out."""
    limit = future_limit(as_of, policy.future_horizon_h)
    if limit is None:
        return []
    after = (f" is more than {policy.future_horizon_h:g} h after as_of {as_of:%Y-%m-%dT%H:%M:%S}Z: a wrong clock or "
             "a forged date; fix the record and replay it, or raise [ingest] future_horizon_h")
    return [(f"t_{name} > TIMESTAMP '{limit.isoformat(sep=' ')}'", FUTURE_TIMESTAMP,
             f"'{name} ' || strftime(t_{name}, '%Y-%m-%dT%H:%M:%S') || 'Z{after}'")
            for name in EVENT_TIMESTAMPS]


def _squash(aliases: dict[str, str]) -> dict[str, str]:
    return {key.replace("_", "").replace("-", ""): value for key, value in aliases.items()}


def _collect_extra(con: duckdb.DuckDBPyConnection) -> None:
    """Unknown fields are kept, not rejected (DESIGN): one JSON object per record, keys sorted
    so that equal extras compare equal. A field ``extra`` holding a JSON object, or its text (as
    an export writes it), gives its members (a field beside it wins), so an export re-ingests."""
    if not con.execute("SELECT count(*) FROM snap_parsed WHERE has_extra AND reason IS NULL").fetchone()[0]:
        # no record may hold one: the table of none, without planning the query below (a small
        # file's ingest is mostly planning)
        con.execute("CREATE OR REPLACE TEMP TABLE snap_extra AS SELECT line, NULL::JSON AS extra FROM snap_parsed LIMIT 0")
        return
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE snap_extra AS
        WITH entries AS (
            SELECT t.line, e.key, e.value, e.type
            FROM snap_parsed p JOIN snap_texts t USING (line), json_each(t.text) e
            WHERE p.has_extra AND p.reason IS NULL AND e.type <> 'NULL' AND NOT list_contains({KNOWN_KEYS!r}, e.key)
        ), nested AS (
            SELECT line, CASE WHEN type = 'OBJECT' THEN value
                              WHEN type = 'VARCHAR' AND json_valid(value ->> '$')
                                   AND json_type(value ->> '$') = 'OBJECT' THEN json(value ->> '$') END AS object
            FROM entries WHERE key = 'extra'
        ), members AS (
            SELECT line, key, value, 1 AS own FROM entries
            WHERE NOT (key = 'extra' AND line IN (SELECT line FROM nested WHERE object IS NOT NULL))
            UNION ALL
            SELECT n.line, x.key, x.value, 0 FROM nested n, json_each(n.object) x
            WHERE n.object IS NOT NULL AND x.type <> 'NULL'
        )
        SELECT line, to_json(map_from_entries(list(struct_pack(k := key, v := value) ORDER BY key))) AS extra
        FROM (SELECT line, key, arg_max(value, own) AS value FROM members GROUP BY line, key)
        GROUP BY line
        """
    )


# ============================================================================ identity
def assign_ids(con: duckdb.DuckDBPyConnection) -> None:
    """Good records get their id (derived when absent) and content hash -> ``snap_valid``;
    a second record with the same id in one file is quarantined (the later line is the bad one).

    A derived id is ``m_`` + hash(tenant, agent_id, user_id, normalised content) (DESIGN).
    ``snap_valid`` is a view: the records of ``snap_parsed`` without a reason, with their id,
    hash (``snap_ids``) and extra, so that a record quarantined later (``snap_parsed.reason``)
    leaves it, and its rows are not copied (the merge reads them once).
    """
    good = con.execute("SELECT line, content FROM snap_parsed WHERE reason IS NULL AND content IS NOT NULL").pl()
    norm = pl.DataFrame({"line": good["line"], "norm": normalise_contents(good["content"])})
    con.register("snap_norm", norm)
    try:
        con.execute(
            """
            CREATE OR REPLACE TEMP TABLE snap_ids AS
            SELECT p.line, sha256(n.norm) AS content_hash,
                   coalesce(p.id, 'm_' || left(sha256(concat_ws(chr(31), p.tenant, coalesce(p.agent_id, ''),
                            coalesce(p.user_id, ''), n.norm)), 32)) AS id
            FROM snap_parsed p LEFT JOIN snap_norm n USING (line)
            WHERE p.reason IS NULL
            """
        )
    finally:
        con.unregister("snap_norm")
    con.execute(
        """
        CREATE OR REPLACE TEMP VIEW snap_valid AS
        SELECT p.* EXCLUDE (id, has_extra, reason, detail), x.extra, i.content_hash, i.id
        FROM snap_parsed p JOIN snap_ids i USING (line) LEFT JOIN snap_extra x USING (line)
        WHERE p.reason IS NULL
        """
    )
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE snap_dups AS
        SELECT v.line, v.id,
               CASE WHEN p.id IS NULL
                    THEN 'same tenant, agent, user and text as line ' || first_line
                         || ' (no id given: the id is derived from them)'
                    ELSE 'id ' || v.id || ' first seen on line ' || first_line END AS detail,
               CASE WHEN p.id IS NULL THEN '{DUPLICATE_MEMORY}' ELSE '{DUPLICATE_ID}' END AS reason
        FROM (SELECT line, id, row_number() OVER w AS n, first_value(line) OVER w AS first_line
              FROM snap_ids WINDOW w AS (PARTITION BY id ORDER BY line)) v
        JOIN snap_parsed p USING (line)
        WHERE n > 1
        """
    )
    if con.execute("SELECT count(*) FROM snap_dups").fetchone()[0]:
        con.execute(  # which takes them out of snap_valid
            """
            UPDATE snap_parsed SET reason = d.reason, detail = d.detail, id = d.id
            FROM snap_dups d WHERE snap_parsed.line = d.line
            """
        )
    con.execute("DROP TABLE snap_dups")


# ---------------------------------------------------------------- a field a person typed (edit, resolve)
# Fields a person may set by hand (`memory-lake edit`, `--take value=`), with how text becomes a value.
EDITED_TEXT_FIELDS = ("content", "summary", "source", "context_id", "session_id", "agent_id", "user_id")


def parse_field_value(field: str, text: str | None, salt: bytes) -> Any:
    """The value of `field` a person typed: text fields are redacted like ingest's; tags are a
    JSON list or comma-separated; importance 0..1; tier and type by the ingest's spellings."""
    if text is None:
        raise InputError(f"{field} needs a value")
    if field in EDITED_TEXT_FIELDS:
        value = redact_text(text, salt).strip()
        if field == "content" and not value:
            raise InputError("content cannot be empty")
        return value or None
    if field == "tags":
        try:
            tags = json.loads(text) if text.strip().startswith("[") else [t for t in text.split(",")]
        except ValueError:
            raise InputError(f"tags {text!r}: a JSON list or comma-separated words") from None
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise InputError(f"tags {text!r}: a JSON list or comma-separated words")
        return sorted({redact_text(t.strip(), salt) for t in tags if t.strip()})
    if field == "importance":
        try:
            number = float(text)
        except ValueError:
            raise InputError(f"importance {text!r} is not a number") from None
        if not 0 <= number <= 1:
            raise InputError(f"importance {number} is outside 0..1")
        return number
    if field in ("tier", "type", "status"):
        key = text.strip().lower()
        if field == "tier":
            squashed = key.replace("-", "").replace("_", "").replace(" ", "")
            value = schema.TIER_ALIASES.get(squashed, squashed if squashed in schema.TIERS else None)
        elif field == "type":
            value = schema.TYPE_ALIASES.get(key, key if key in schema.TYPES else None)
        else:
            value = key if key in schema.INPUT_STATUSES and key != "deleted" else None
        if value is None:
            raise InputError(f"unknown {field} {text!r}")
        return value
    if field == "expires_at":
        return resolve_as_of(text) if text.strip() else None
    if field == "extra":
        try:
            return json.loads(text)
        except ValueError:
            raise InputError(f"extra {text!r} is not JSON") from None
    raise InputError(f"{field} cannot be set by hand")
