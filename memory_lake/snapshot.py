"""The snapshot contract: how a file becomes typed, validated memory records.

Formats: JSON Lines (one memory per line), a memory-orchestrator save file (a JSON document whose
``memories`` array holds the records; its top-level ``tenant`` / ``agent_id`` / ``user_id`` fill
the records' gaps; ``type`` may carry the tier, as in seed 000's ``type: "long-term"``), and
Parquet (one record per row). Fields and defaults follow DESIGN "Memory record"; unknown fields
are kept in ``extra``. ``version`` is the version a write was based on; ``deleted: true`` (or
``status: "deleted"``) is a forget request.

Validation is set-based in DuckDB: each record is parsed once into a struct of JSON values,
typed, and given the first failing check as its quarantine ``reason`` (with a ``detail``).
"""

from __future__ import annotations

import io

import duckdb
import polars as pl

from . import schema
from .errors import InputError
from .policy import IngestPolicy

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
WRONG_TYPE = "wrong type"
OUT_OF_RANGE = "out of range"
TOO_LARGE = "content too large"
DUPLICATE_ID = "duplicate id in file"

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
INTEGER_FIELDS = {"access_count": 0, "reference_count": 0, "version": 1, "quarantine_id": 0}  # name -> minimum
BOOL_FIELDS = ("important", "deleted")
NUMBERS = "('UBIGINT', 'BIGINT', 'DOUBLE')"


# ============================================================================ read
def read_records(con: duckdb.DuckDBPyConnection, data: bytes, fmt: str) -> pl.DataFrame:
    """Records of a file as (line, raw, ok): 1-based line (record position in a document),
    the record's text, and whether it decoded as UTF-8. Blank lines are skipped."""
    if fmt == "parquet":
        return _parquet_records(con, data)
    try:
        text, decoded = data.decode("utf-8-sig"), True
    except UnicodeDecodeError:
        text, decoded = "", False
    if fmt == "json" and decoded:
        records = _document_records(con, text)
        if records is not None:
            return records
        if not text.strip():
            return _frame([], [], [])
        if "\n" not in text.strip():
            return _frame([1], [text.strip()], [True])  # one broken document: one bad record
    if decoded:
        frame = pl.DataFrame({"raw": text.split("\n")}).with_columns(ok=pl.lit(True))
    else:
        frame = _decode_lines(data)
    frame = frame.with_row_index("line", offset=1).with_columns(
        pl.col("line").cast(pl.Int64), pl.col("raw").str.strip_chars_end("\r")
    )
    return frame.filter(pl.col("raw").str.strip_chars() != "").select("line", "raw", "ok")


def _decode_lines(data: bytes) -> pl.DataFrame:
    # Rare path: one undecodable byte costs its line, not the file.
    raws, oks = [], []
    for chunk in data.split(b"\n"):
        try:
            raws.append(chunk.decode("utf-8"))
            oks.append(True)
        except UnicodeDecodeError:
            raws.append(chunk.decode("utf-8", "replace"))
            oks.append(False)
    return pl.DataFrame({"raw": raws, "ok": oks})


def _frame(lines: list[int], raws: list[str], oks: list[bool]) -> pl.DataFrame:
    return pl.DataFrame({"line": lines, "raw": raws, "ok": oks},
                        schema={"line": pl.Int64, "raw": pl.String, "ok": pl.Boolean})


def _document_records(con: duckdb.DuckDBPyConnection, text: str) -> pl.DataFrame | None:
    """Records of a save file (or a JSON array of records); None when it is not one."""
    shape = con.execute(
        "SELECT CASE WHEN NOT json_valid($t) THEN NULL WHEN json_type($t::JSON) = 'ARRAY' THEN 'array' "
        "WHEN json_type($t::JSON, '$.memories') = 'ARRAY' THEN 'save' END",
        {"t": text},
    ).fetchone()[0]
    if shape is None:
        return None
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
               true AS ok
        FROM records ORDER BY line
        """,
        {"t": text, "shape": shape},
    ).pl()


def _parquet_records(con: duckdb.DuckDBPyConnection, data: bytes) -> pl.DataFrame:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise InputError(f"not a readable Parquet file ({exc})") from None
    con.register("snapshot_parquet", table)
    try:
        return con.execute(
            "SELECT (row_number() OVER ())::BIGINT AS line, to_json(t)::VARCHAR AS raw, true AS ok "
            "FROM snapshot_parquet t"
        ).pl()
    finally:
        con.unregister("snapshot_parquet")


# ============================================================================ parse and validate
def parse_records(con: duckdb.DuckDBPyConnection, texts: pl.DataFrame, policy: IngestPolicy) -> None:
    """Typed columns plus the first failing check per record, into temp table ``snap_parsed``.

    `texts` has (line, ok, is_object, text); it stays in ``snap_texts`` for the quarantine. Output columns: line, reason, detail, the memory
    fields (NULL where the record leaves them out), is_forget, forget_reason, quarantine_id and
    has_extra; ``snap_extra`` holds the JSON of unknown keys per line. One statement, so DuckDB
    parses each record once and materialises only the result.
    """
    con.register("snap_texts_frame", texts)
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE snap_texts AS SELECT * FROM snap_texts_frame")
    finally:
        con.unregister("snap_texts_frame")
    con.execute(f"CREATE OR REPLACE TEMP TABLE snap_parsed AS {_parse_sql(policy)}")
    _collect_extra(con)


def _first_key(name: str) -> str:
    keys = [f'"{key}"' for key in FIELD_KEYS[name]]
    return keys[0] if len(keys) == 1 else f"coalesce({', '.join(keys)})"


def _kind_sql(name: str) -> str:
    """JSON type of a raw value from its first character (values come minified from the parser),
    far cheaper than parsing each value again with json_type()."""
    return (f"CASE coalesce(left(j_{name}, 1), '') WHEN '\"' THEN 'VARCHAR' WHEN '[' THEN 'ARRAY' WHEN '{{' THEN 'OBJECT' "
            f"WHEN 't' THEN 'BOOLEAN' WHEN 'f' THEN 'BOOLEAN' WHEN 'n' THEN NULL "
            f"WHEN '' THEN NULL ELSE CASE WHEN contains(j_{name}, '.') OR contains(lower(j_{name}), 'e') "
            f"THEN 'DOUBLE' ELSE 'BIGINT' END END "
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
    for name in TIMESTAMP_FIELDS:
        typed.append(
            f"CASE WHEN jt_{name} = 'VARCHAR' THEN try_cast({_string_sql(name)} AS TIMESTAMPTZ) AT TIME ZONE 'UTC' "
            f"WHEN jt_{name} IN {NUMBERS} THEN to_timestamp(try_cast(j_{name} AS DOUBLE)) AT TIME ZONE 'UTC' "
            f"END AS t_{name}"
        )
        typed.append(f"left(j_{name}, 60) AS {name}_text")
    for name in INTEGER_FIELDS:
        typed.append(
            f"CASE WHEN jt_{name} = 'BIGINT' THEN try_cast(j_{name} AS BIGINT) "
            f"WHEN jt_{name} = 'DOUBLE' AND try_cast(j_{name} AS DOUBLE) = floor(try_cast(j_{name} AS DOUBLE)) "
            f"THEN try_cast(j_{name} AS DOUBLE)::BIGINT END AS n_{name}"
        )
    for name in BOOL_FIELDS:
        typed.append(f"CASE WHEN jt_{name} = 'BOOLEAN' THEN j_{name} = 'true' END AS b_{name}")
    typed.append(f"CASE WHEN jt_importance IN {NUMBERS} THEN try_cast(j_importance AS DOUBLE) END AS x_importance")
    typed.append(
        "CASE WHEN jt_tags = 'VARCHAR' THEN [j_tags::JSON ->> '$'] "
        "WHEN jt_tags = 'ARRAY' AND list_bool_and(list_transform(json_extract(j_tags, '$[*]'), "
        "x -> json_type(x) = 'VARCHAR')) IS NOT false THEN json_extract_string(j_tags, '$[*]') END AS l_tags"
    )
    return typed


def _parse_sql(policy: IngestPolicy) -> str:
    struct = "{" + ", ".join(f'"{key}": "JSON"' for key in KNOWN_KEYS) + "}"
    raw = ", ".join(f"{_first_key(name)}::VARCHAR AS j_{name}" for name in FIELD_KEYS)
    kinds = ", ".join(_kind_sql(name) for name in FIELD_KEYS)
    checks = _checks(policy)
    reason = "CASE " + " ".join(f"WHEN {c} THEN '{r}'" for c, r, _ in checks) + " END"
    detail = "CASE " + " ".join(f"WHEN reason = '{r}' AND {c} THEN {d}" for c, r, d in checks) + " END"
    key = "lower(replace(replace(replace({}, '-', ''), '_', ''), ' ', ''))"
    return f"""
        WITH parsed AS (
            -- one JSON parse per record, into a struct of raw JSON values
            SELECT line, ok, is_object, NOT list_has_all({KNOWN_KEYS!r}, json_keys(j)) AS has_extra,
                   unnest(from_json(j, '{struct}'))
            FROM (SELECT *, CASE WHEN is_object THEN text ELSE '{{}}' END AS j FROM snap_texts)
        ), raw AS (
            SELECT line, ok, is_object, has_extra, {raw} FROM parsed
        ), kinds AS (
            SELECT *, {kinds} FROM raw
        ), typed AS (
            SELECT *, {', '.join(_typed_sql())} FROM kinds
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
               s_reason AS forget_reason, n_quarantine_id AS quarantine_id, has_extra
        FROM judged
    """


def _alias_case(column: str, aliases: dict[str, str]) -> str:
    whens = " ".join(f"WHEN '{key}' THEN '{value}'" for key, value in aliases.items())
    return f"CASE {column} {whens} END"


def _checks(policy: IngestPolicy) -> list[tuple[str, str, str]]:
    """(condition, reason, detail) in the order they are tried; the first that holds wins."""
    forget = "is_forget"
    checks = [
        ("NOT ok", BAD_ENCODING, "'line is not valid UTF-8'"),
        ("NOT is_object", BAD_JSON, "'not a JSON object'"),
        ("jt_tenant IS NULL", MISSING_TENANT, "'tenant is required'"),
    ]
    for name in TEXT_FIELDS:
        checks.append((f"jt_{name} IS NOT NULL AND s_{name} IS NULL", WRONG_TYPE, f"'{name} must be text'"))
    for name in TIMESTAMP_FIELDS:
        checks.append((f"jt_{name} IS NOT NULL AND t_{name} IS NULL", BAD_TIMESTAMP, f"'{name}: ' || {name}_text"))
    for name, low in INTEGER_FIELDS.items():
        checks.append((f"jt_{name} IS NOT NULL AND n_{name} IS NULL", WRONG_TYPE, f"'{name} must be an integer'"))
        checks.append((f"n_{name} < {low}", OUT_OF_RANGE, f"'{name} must be >= {low}'"))
    for name in BOOL_FIELDS:
        checks.append((f"jt_{name} IS NOT NULL AND b_{name} IS NULL", WRONG_TYPE, f"'{name} must be true or false'"))
    checks += [
        ("jt_importance IS NOT NULL AND x_importance IS NULL", WRONG_TYPE, "'importance must be a number'"),
        ("NOT (x_importance BETWEEN 0 AND 1)", OUT_OF_RANGE, "'importance must be within 0..1'"),
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


def _squash(aliases: dict[str, str]) -> dict[str, str]:
    return {key.replace("_", "").replace("-", ""): value for key, value in aliases.items()}


def _collect_extra(con: duckdb.DuckDBPyConnection) -> None:
    """Unknown fields are kept, not rejected (DESIGN): one JSON object per record, keys sorted
    so that equal extras compare equal."""
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE snap_extra AS
        SELECT t.line, to_json(map_from_entries(list(struct_pack(k := e.key, v := e.value) ORDER BY e.key))) AS extra
        FROM snap_parsed p JOIN snap_texts t USING (line), json_each(t.text) e
        WHERE p.has_extra AND p.reason IS NULL AND e.type <> 'NULL' AND NOT list_contains({KNOWN_KEYS!r}, e.key)
        GROUP BY t.line
        """
    )


# ============================================================================ identity
def normalise_content(expr: pl.Expr) -> pl.Expr:
    """Content as compared for identity: NFKC (full/half width), lower case, single spaces."""
    return expr.str.normalize("NFKC").str.to_lowercase().str.replace_all(r"\s+", " ").str.strip_chars()


def assign_ids(con: duckdb.DuckDBPyConnection) -> None:
    """Good records get their id (derived when absent) and content hash -> ``snap_valid``;
    a second record with the same id in one file is quarantined (the later line is the bad one).

    A derived id is ``m_`` + hash(tenant, agent_id, user_id, normalised content) (DESIGN).
    """
    good = con.execute("SELECT line, content FROM snap_parsed WHERE reason IS NULL AND content IS NOT NULL").pl()
    norm = good.select("line", norm=normalise_content(pl.col("content")))
    con.register("snap_norm", norm)
    try:
        con.execute(
            """
            CREATE OR REPLACE TEMP TABLE snap_valid AS
            SELECT p.* EXCLUDE (id, has_extra, reason, detail), x.extra,
                   sha256(n.norm) AS content_hash,
                   coalesce(p.id, 'm_' || left(sha256(concat_ws(chr(31), p.tenant, coalesce(p.agent_id, ''),
                            coalesce(p.user_id, ''), n.norm)), 32)) AS id
            FROM snap_parsed p LEFT JOIN snap_norm n USING (line) LEFT JOIN snap_extra x USING (line)
            WHERE p.reason IS NULL
            """
        )
    finally:
        con.unregister("snap_norm")
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE snap_dups AS
        SELECT line, id, 'id ' || id || ' first seen on line ' || first_line AS detail
        FROM (SELECT line, id, row_number() OVER w AS n, first_value(line) OVER w AS first_line
              FROM snap_valid WINDOW w AS (PARTITION BY id ORDER BY line))
        WHERE n > 1
        """
    )
    if con.execute("SELECT count(*) FROM snap_dups").fetchone()[0]:
        con.execute(
            f"""
            UPDATE snap_parsed SET reason = '{DUPLICATE_ID}', detail = d.detail, id = d.id
            FROM snap_dups d WHERE snap_parsed.line = d.line
            """
        )
        con.execute("DELETE FROM snap_valid WHERE line IN (SELECT line FROM snap_dups)")
    con.execute("DROP TABLE snap_dups")
