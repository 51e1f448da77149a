"""The lake's tables, their vocabularies and the versioned migrations that create them.

Table and column names are part of the public contract (DESIGN.md, "Memory record"): analysts
query them, exports carry them. Later features add tables and columns by appending a migration
to ``MIGRATIONS``; a migration never changes once released.
"""

from __future__ import annotations

import duckdb

from . import keys, views
from .db import transaction

TIERS = ("working", "short_term", "long_term", "important")
TYPES = ("preference", "decision", "fact", "lesson", "event", "todo", "summary", "other")
# ``merged``: merged into another memory by dedup (``merged_into`` names it); unmerge restores
# the status it had before. Migration 1 knew the first five; migration 10 adds ``merged``.
STATUSES = ("active", "dormant", "archived", "deleted", "conflicted", "merged")
# The statuses a snapshot, an edit or a resolution may set; ``merged`` comes only from dedup.
INPUT_STATUSES = tuple(s for s in STATUSES if s != "merged")
# ``dedup_merges.unmerged_by`` of a member that left its merge because a write changed its content
# (ingest): it says something new now, so it is a memory again; unlike a person's unmerge, it does
# not keep the pair apart for ever (if the new text is a duplicate again, dedup merges it again).
UNMERGED_BY_WRITE = "write"
OPERATORS = ("user", "agent", "system")

# Inputs are tolerant (DESIGN "Memory record"): spelling variants of the four tiers. Keys are
# compared after lower-casing and removing "-", "_" and spaces.
TIER_ALIASES = {
    "working": "working",
    "work": "working",
    "shortterm": "short_term",
    "short": "short_term",
    "longterm": "long_term",
    "long": "long_term",
    "important": "important",
}
TYPE_ALIASES = {t: t for t in TYPES} | {
    "preferences": "preference",
    "pref": "preference",
    "decisions": "decision",
    "facts": "fact",
    "lessons": "lesson",
    "events": "event",
    "todos": "todo",
    "task": "todo",
    "summaries": "summary",
}

# Core memory columns, in contract order, with their DuckDB types.
MEMORY_COLUMNS: dict[str, str] = {
    "id": "VARCHAR NOT NULL",
    "tenant": "VARCHAR NOT NULL",
    "agent_id": "VARCHAR",
    "user_id": "VARCHAR",
    "context_id": "VARCHAR",
    "session_id": "VARCHAR",
    "tier": "VARCHAR NOT NULL",
    "type": "VARCHAR NOT NULL",
    "content": "VARCHAR NOT NULL",
    "summary": "VARCHAR",
    "tags": "VARCHAR[]",
    "importance": "DOUBLE NOT NULL",
    "source": "VARCHAR",
    "created_at": "TIMESTAMP NOT NULL",
    "updated_at": "TIMESTAMP NOT NULL",
    "last_accessed_at": "TIMESTAMP NOT NULL",
    "access_count": "BIGINT NOT NULL",
    "reference_count": "BIGINT NOT NULL",
    "expires_at": "TIMESTAMP",
    "version": "BIGINT NOT NULL",
    "status": "VARCHAR NOT NULL",
    "content_hash": "VARCHAR NOT NULL",
    "merged_into": "VARCHAR",
    "operator": "VARCHAR NOT NULL",
    "trace_id": "VARCHAR",
    "extra": "JSON",
    "published_at": "TIMESTAMP",
    "publish_meta": "JSON",
}

# Fields an agent or user changes; a change to any of them bumps `version` (DESIGN: version counts
# changes by agents and users only). Compared per field against the base version (three-way).
VERSIONED_FIELDS = (
    "agent_id", "user_id", "context_id", "session_id", "tier", "type", "content", "summary",
    "tags", "importance", "source", "expires_at", "status", "extra",
)
# Usage counters: merged by adding the writer's delta, never bump the version.
COUNTER_FIELDS = ("access_count", "reference_count")


# The type of a history image: one field per core column, all nullable. A migration that adds a
# memory column adds the field to memory_history.before/after too (`add_memory_column`).
MEMORY_ROW_TYPE = "STRUCT(" + ", ".join(f"{name} {kind.replace(' NOT NULL', '')}" for name, kind in MEMORY_COLUMNS.items()) + ")"


def _in(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _image(alias: str, **replace: str) -> str:
    """A history image of `alias` (as history.row_image, which imports this module)."""
    return "struct_pack(" + ", ".join(
        f"{name} := ({replace.get(name, f'{alias}.{name}')})::{kind.replace(' NOT NULL', '')}"
        for name, kind in MEMORY_COLUMNS.items()) + ")"


_MEMORIES_DDL = ",\n    ".join(f"{name} {kind}" for name, kind in MEMORY_COLUMNS.items())

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "core tables: memories, memory_history, quarantine, runs, ingested_files, tenant_salts",
        f"""
        CREATE TABLE memories (
            {_MEMORIES_DDL},
            CHECK (tier IN ({_in(TIERS)})),
            CHECK (type IN ({_in(TYPES)})),
            CHECK (status IN ({_in(STATUSES[:5])})),
            CHECK (operator IN ({_in(OPERATORS)})),
            CHECK (importance BETWEEN 0 AND 1)
        );
        CREATE TABLE memory_history (
            seq BIGINT NOT NULL,              -- numbered by history.next_history_seq
            memory_id VARCHAR NOT NULL,
            tenant VARCHAR NOT NULL,
            version BIGINT NOT NULL,
            change VARCHAR NOT NULL,          -- insert | update | counters | forget | tier | status ...
            changed_fields VARCHAR[],
            operator VARCHAR NOT NULL,
            run_id VARCHAR NOT NULL,
            reason VARCHAR NOT NULL,
            as_of TIMESTAMP NOT NULL,
            before {MEMORY_ROW_TYPE},         -- the row before the change (NULL for an insert)
            after {MEMORY_ROW_TYPE},          -- the row after the change
            source_file VARCHAR,
            source_line BIGINT,
            trace_id VARCHAR
        );
        CREATE TABLE quarantine (
            quarantine_id BIGINT NOT NULL,    -- max + row_number, as history
            run_id VARCHAR NOT NULL,
            as_of TIMESTAMP NOT NULL,
            file VARCHAR NOT NULL,
            file_hash VARCHAR NOT NULL,
            line BIGINT NOT NULL,             -- 1-based line (record position for JSON documents)
            reason VARCHAR NOT NULL,
            detail VARCHAR,
            tenant VARCHAR,
            memory_id VARCHAR,
            raw VARCHAR NOT NULL,             -- the line, redacted by the same rules as everything else
            status VARCHAR NOT NULL DEFAULT 'open',   -- open | replayed
            replayed_run_id VARCHAR
        );
        CREATE TABLE runs (
            run_id VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            as_of TIMESTAMP NOT NULL,
            status VARCHAR NOT NULL,          -- ok | failed | blocked
            duration_s DOUBLE,
            report JSON
        );
        CREATE TABLE ingested_files (
            file_hash VARCHAR NOT NULL,       -- sha256 of the original bytes: the idempotency key
            file_name VARCHAR NOT NULL,
            format VARCHAR NOT NULL,
            raw_path VARCHAR NOT NULL,
            records BIGINT NOT NULL,
            ingested BIGINT NOT NULL,
            updated BIGINT NOT NULL,
            unchanged BIGINT NOT NULL,
            forgotten BIGINT NOT NULL,
            quarantined BIGINT NOT NULL,
            run_id VARCHAR NOT NULL,
            as_of TIMESTAMP NOT NULL
        );
        CREATE TABLE tenant_salts (
            tenant VARCHAR NOT NULL,          -- '' is the lake-wide salt for lines with no tenant
            salt BLOB NOT NULL
        );
        """,
    ),
    (
        2,
        "maintenance and publish: cleanup_log, health_snapshots, publishes, retrieval_log, event_offsets",
        """
        CREATE TABLE cleanup_log (
            memory_id VARCHAR NOT NULL,
            tenant VARCHAR NOT NULL,
            agent_id VARCHAR,
            user_id VARCHAR,
            from_tier VARCHAR NOT NULL,
            to_tier VARCHAR NOT NULL,
            from_status VARCHAR NOT NULL,
            to_status VARCHAR NOT NULL,
            rule VARCHAR NOT NULL,            -- the policy rule that fired, e.g. working_overflow
            run_id VARCHAR NOT NULL,
            as_of TIMESTAMP NOT NULL
        );
        CREATE TABLE health_snapshots (
            as_of TIMESTAMP NOT NULL,
            level VARCHAR NOT NULL,           -- overall | tenant | scope
            tenant VARCHAR,
            agent_id VARCHAR,
            user_id VARCHAR,
            metrics JSON NOT NULL,            -- the seed's keys: capacity, distribution, hit_rate, staleness, alerts
            run_id VARCHAR NOT NULL
        );
        CREATE TABLE publishes (
            version INTEGER,                  -- NULL when nothing new was published
            run_id VARCHAR NOT NULL,
            as_of TIMESTAMP NOT NULL,
            status VARCHAR NOT NULL,          -- published | unchanged | blocked
            content_hash VARCHAR,
            failed VARCHAR[],
            manifest JSON
        );
        CREATE TABLE retrieval_log (
            search_id VARCHAR NOT NULL,
            ts TIMESTAMP NOT NULL,
            tenant VARCHAR NOT NULL,
            agent_id VARCHAR,
            user_id VARCHAR,
            query VARCHAR,
            mode VARCHAR,
            mode_used VARCHAR,
            result_ids VARCHAR[],
            raw_scores DOUBLE[],
            keyword_match BOOLEAN,
            confirmed_hit BOOLEAN NOT NULL DEFAULT false,
            run_id VARCHAR NOT NULL
        );
        CREATE TABLE event_offsets (
            file VARCHAR NOT NULL,            -- path relative to the lake
            bytes_read BIGINT NOT NULL        -- append-only event files are read from here on
        );
        """,
    ),
    (
        3,
        "tier lifecycle: memory_flags (suggestions such as suggest_archive)",
        """
        CREATE TABLE memory_flags (
            memory_id VARCHAR NOT NULL,
            tenant VARCHAR NOT NULL,
            flag VARCHAR NOT NULL,            -- suggest_archive: a suggestion and an alert, never a move
            since TIMESTAMP NOT NULL,         -- as_of of the run that first raised it
            run_id VARCHAR NOT NULL
        );
        """,
    ),
    (
        4,
        "search index: embeddings cached by content hash and model",
        """
        CREATE TABLE embeddings (
            text_hash VARCHAR NOT NULL,       -- memories.content_hash: embedded once per content
            model VARCHAR NOT NULL,
            vector FLOAT[] NOT NULL,          -- L2-normalised
            unknown_ratio DOUBLE NOT NULL,    -- share of the model's [UNK] tokens: language coverage
            as_of TIMESTAMP NOT NULL
        );
        """,
    ),
    (
        5,
        "retrieval_log.semantic_match: a hit by raw cosine where the model covers the language",
        "ALTER TABLE retrieval_log ADD COLUMN semantic_match BOOLEAN DEFAULT false;",
    ),
    (
        6,
        "search index: keyword postings per content hash (BM25), kept by the index step",
        """
        CREATE TABLE keyword_docs (
            text_hash VARCHAR NOT NULL,       -- memories.content_hash: tokenised once per content
            tokenizer VARCHAR NOT NULL,       -- text.TOKENIZER_VERSION that made the postings
            length INTEGER NOT NULL,          -- number of tokens (BM25's document length)
            as_of TIMESTAMP NOT NULL
        );
        CREATE TABLE postings (
            text_hash VARCHAR NOT NULL,
            term VARCHAR NOT NULL,            -- a token of text.tokenize
            tf INTEGER NOT NULL               -- its count in the content
        );
        """,
    ),
    (
        7,
        "conflicts: the queue of disputed values a person resolves (concurrent writes, important memories)",
        """
        CREATE TABLE conflicts (
            conflict_id VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,            -- write | important | contradiction
            status VARCHAR NOT NULL,          -- open | resolved
            tenant VARCHAR NOT NULL,
            memory_id VARCHAR NOT NULL,
            other_memory_id VARCHAR,          -- contradiction: the other memory of the pair
            field VARCHAR NOT NULL,
            base_version BIGINT,              -- the version the incoming write was based on
            lake_version BIGINT,              -- the lake's version when the write arrived
            base_value VARCHAR,               -- JSON text of the field at the base version
            lake_value VARCHAR,               -- JSON text: kept in the memory until resolved
            incoming_value VARCHAR,           -- JSON text: the disputed value
            lake_operator VARCHAR,
            incoming_operator VARCHAR,
            lake_trace_id VARCHAR,
            incoming_trace_id VARCHAR,
            lake_status VARCHAR,              -- the memory's status before it became conflicted
            source_file VARCHAR,
            source_line BIGINT,
            created_at TIMESTAMP NOT NULL,    -- as_of of the run that found it
            run_id VARCHAR NOT NULL,
            resolved_at TIMESTAMP,
            resolution VARCHAR,               -- lake | incoming | both | value
            resolved_by VARCHAR,
            resolved_value VARCHAR,           -- JSON text of the value the field got
            new_memory_id VARCHAR             -- resolution "both": the memory that keeps the incoming value
        );
        """,
    ),
    (
        8,
        "dedup: merges and what unmerge separated",
        """
        CREATE TABLE dedup_merges (
            cluster_id VARCHAR NOT NULL,
            canonical_id VARCHAR NOT NULL,    -- the memory the others were merged into
            member_id VARCHAR NOT NULL,       -- memories.merged_into = canonical_id
            pass VARCHAR NOT NULL,            -- exact | near | semantic
            score DOUBLE,                     -- 1, the Jaccard of 3-grams, or the cosine
            run_id VARCHAR NOT NULL,
            as_of TIMESTAMP NOT NULL,
            unmerged_at TIMESTAMP,            -- set by unmerge: the pair is never merged again
            unmerged_by VARCHAR
        );
        """,
    ),
    (
        9,
        "forget: the work a forget owes after its commit (file scrub, compaction), written in its transaction",
        """
        CREATE TABLE pending_compactions (
            run_id VARCHAR NOT NULL,          -- the forget (its history rows name the ids)
            as_of TIMESTAMP NOT NULL,
            memories BIGINT NOT NULL,         -- how many memories it forgot
            files_scrubbed BOOLEAN NOT NULL DEFAULT false   -- set by ingest.forget.scrub_files for the run
        );                                    -- a row leaves when lake.duckdb is compacted
        """,
    ),
    (
        10,
        "memories.status merged: a memory merged into another has status merged, not active",
        # DuckDB cannot alter a CHECK constraint: the table is rebuilt with the new set. A merged
        # row (merged_into set, not forgotten) moves to merged, with a system history row as of
        # its merge.
        f"""
        CREATE TABLE memories_v10 (
            {_MEMORIES_DDL},
            CHECK (tier IN ({_in(TIERS)})),
            CHECK (type IN ({_in(TYPES)})),
            CHECK (status IN ({_in(STATUSES)})),
            CHECK (operator IN ({_in(OPERATORS)})),
            CHECK (importance BETWEEN 0 AND 1)
        );
        INSERT INTO memories_v10 BY NAME SELECT * FROM memories;
        INSERT INTO memory_history
            (seq, memory_id, tenant, version, change, changed_fields, operator, run_id, reason, as_of,
             before, after, source_file, source_line, trace_id)
        SELECT (SELECT coalesce(max(seq), 0) FROM memory_history) + row_number() OVER (ORDER BY m.id),
               m.id, m.tenant, m.version, 'status', ['status'], 'system', 'migration-10',
               'merged into ' || m.merged_into || ': status merged (migration 10)',
               coalesce((SELECT max(d.as_of) FROM dedup_merges d WHERE d.member_id = m.id), m.updated_at),
               {_image("m")}, {_image("m", status="'merged'")}, NULL, NULL, m.trace_id
        FROM memories m WHERE m.merged_into IS NOT NULL AND m.status NOT IN ('deleted', 'merged');
        UPDATE memories_v10 SET status = 'merged' WHERE merged_into IS NOT NULL AND status <> 'deleted';
        DROP TABLE memories;
        ALTER TABLE memories_v10 RENAME TO memories;
        """,
    ),
    (
        11,
        "summaries: the state of each scope's and session's summary, and the sources every summary drew on",
        """
        CREATE TABLE summary_state (
            tenant VARCHAR NOT NULL,
            agent_id VARCHAR,
            user_id VARCHAR,
            session_id VARCHAR,               -- NULL: the scope's short-term summary; else that session's
            source_hash VARCHAR NOT NULL,     -- of the sources' ids and content hashes (and the budget)
            source_ids VARCHAR[] NOT NULL,    -- the sources of the latest attempt
            status VARCHAR NOT NULL,          -- published | failed (the previous summary stays) | skipped
            reason VARCHAR,                   -- skipped: why no summary of the sources can pass
            method VARCHAR,                   -- extractive | llm
            fallback VARCHAR,                 -- why the LLM summary was not used
            summary_id VARCHAR,               -- the published summary memory, if any
            retention DOUBLE,
            compression DOUBLE,
            readability DOUBLE,
            accuracy DOUBLE,
            passed BOOLEAN,
            failed VARCHAR[],                 -- the thresholds the latest attempt failed
            missing_facts VARCHAR[],          -- text of the sources: scrubbed by forget
            unsupported_statements VARCHAR[],
            source_tokens BIGINT,
            summary_tokens BIGINT,
            as_of TIMESTAMP NOT NULL,
            run_id VARCHAR NOT NULL
        );
        CREATE TABLE summary_sources (
            summary_id VARCHAR NOT NULL,      -- a memory of type summary
            source_id VARCHAR NOT NULL,       -- a memory one of its versions drew on (forget follows this)
            as_of TIMESTAMP NOT NULL,
            run_id VARCHAR NOT NULL
        );
        """,
    ),
    (
        12,
        "entity memory: entities, entity_facts (merged, superseded) and entity_extractions (what was read)",
        """
        CREATE TABLE entities (
            entity_id VARCHAR NOT NULL,       -- 'e_' + hash of the scope and the normalised name
            tenant VARCHAR NOT NULL,
            agent_id VARCHAR,
            user_id VARCHAR,
            name VARCHAR NOT NULL,            -- the spelling most mentions use
            kind VARCHAR NOT NULL,            -- person | place | organisation | thing
            mention_count BIGINT NOT NULL,    -- memories that mention it (= len(memory_ids))
            memory_ids VARCHAR[] NOT NULL,    -- those memories: the sources of its facts
            first_mentioned TIMESTAMP NOT NULL,
            last_mentioned TIMESTAMP NOT NULL,
            as_of TIMESTAMP NOT NULL          -- the extraction run that last changed it
        );
        CREATE TABLE entity_facts (
            fact_id VARCHAR NOT NULL,         -- one mention: entity x memory x sentence
            entity_id VARCHAR NOT NULL,
            tenant VARCHAR NOT NULL,
            agent_id VARCHAR,
            user_id VARCHAR,
            memory_id VARCHAR NOT NULL,       -- the source memory
            content VARCHAR NOT NULL,         -- the sentence of the memory that mentions the entity
            surface VARCHAR NOT NULL,         -- how the sentence spells the entity
            mention_kind VARCHAR NOT NULL,    -- what this mention says the entity is
            slot_values VARCHAR[] NOT NULL,   -- places and PII placeholders in the sentence (changed values)
            confidence DOUBLE NOT NULL,       -- of the extraction (a pattern or a tag)
            mentioned_at TIMESTAMP NOT NULL,  -- the source memory's created_at
            merged_into VARCHAR,              -- the fact this one repeats (NULL: a fact of its own)
            superseded_by VARCHAR,            -- the newer fact that changed its value (NULL: current)
            change VARCHAR,                   -- what changed: place, number, date, phone, negation ...
            valid_from TIMESTAMP NOT NULL,    -- its first mention
            valid_to TIMESTAMP,               -- when the newer fact was first mentioned
            as_of TIMESTAMP NOT NULL
        );
        CREATE TABLE entity_extractions (
            memory_id VARCHAR NOT NULL,       -- a memory read by the extraction, with what it was then
            tenant VARCHAR NOT NULL,
            agent_id VARCHAR,
            user_id VARCHAR,
            content_hash VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL,
            extractor VARCHAR NOT NULL,       -- entities.EXTRACTOR_VERSION and the user dictionary's hash
            as_of TIMESTAMP NOT NULL
        );
        """,
    ),
    (
        13,
        "publish rollbacks: who pointed CURRENT back at which version, and why",
        """
        CREATE TABLE rollbacks (
            as_of TIMESTAMP NOT NULL,
            from_version INTEGER,             -- what CURRENT pointed at before
            to_version INTEGER NOT NULL,      -- what it points at since
            rolled_back_by VARCHAR NOT NULL,  -- --by, else $USER (PII redacted)
            reason VARCHAR NOT NULL,          -- --reason (PII redacted)
            run_id VARCHAR NOT NULL
        );
        """,
    ),
    (
        14,
        "step errors: a scope a maintenance step skipped because it raised (the run ends degraded)",
        """
        CREATE TABLE step_errors (
            run_id VARCHAR NOT NULL,
            as_of TIMESTAMP NOT NULL,
            step VARCHAR NOT NULL,            -- summarize, extract_entities, dedup ...
            tenant VARCHAR,                   -- the scope skipped (NULL: the whole step)
            agent_id VARCHAR,
            user_id VARCHAR,
            session_id VARCHAR,
            item VARCHAR,                     -- what within it, when narrower (a summary key)
            error VARCHAR NOT NULL,           -- the exception, one line
            traceback_file VARCHAR            -- under the lake: logs/step-errors/<run_id>/...
        );
        """,
    ),
    (
        15,
        "secrets out of the database: the PII salts move to secrets.json (store/keys.py)",
        "DROP TABLE IF EXISTS tenant_salts;",
    ),
    (
        16,
        "publish holds: a scope the diff gate keeps at its published state until it passes or a user releases it",
        """
        CREATE TABLE publish_holds (
            tenant VARCHAR NOT NULL,
            agent_id VARCHAR,
            user_id VARCHAR,
            since TIMESTAMP NOT NULL,         -- as_of of the last version that published the scope as held
            since_version VARCHAR NOT NULL,
            reason VARCHAR NOT NULL,          -- why, in ids and counts (never memory text)
            held_run_id VARCHAR NOT NULL,
            held_at TIMESTAMP NOT NULL,       -- the first night held
            last_held_at TIMESTAMP NOT NULL,
            released_at TIMESTAMP,            -- NULL while held
            released_by VARCHAR,              -- a user (publishes release), or 'system' when the scope passes again
            released_reason VARCHAR
        );
        """,
    ),
]

MIGRATIONS.append((
    17,
    "typed views over the stored JSON: health_series, health_alerts, run_series, run_step_durations (store/views.py)",
    views.VIEWS_DDL,
))

MIGRATIONS.append((
    18,
    "the contradiction guard's verdicts kept between nights (maintain/dedup/verdictcache.py)",
    """
    CREATE TABLE dedup_verdicts (
        fingerprint VARCHAR NOT NULL,     -- the guard's code, dictionaries and policy they hold for
        a_key VARCHAR NOT NULL,           -- sha256 of the first text as the guard read it
        b_key VARCHAR NOT NULL,
        a_memory_id VARCHAR NOT NULL,     -- the memories it was judged for tonight (forget removes the row)
        b_memory_id VARCHAR NOT NULL,
        verdict VARCHAR                   -- why the two must not merge; NULL: they may
    );
    """,
))

MIGRATIONS.append((
    19,
    "the context packs of the last staged export, kept for the next (publish/packs.py)",
    """
    CREATE TABLE export_packs (
        folder VARCHAR NOT NULL,          -- the scope's folder below scopes/
        pack_key VARCHAR NOT NULL,        -- sha256 of what the pack is built from, as_of aside
        sha256 VARCHAR NOT NULL,          -- of the context.md written
        version VARCHAR NOT NULL          -- the version it was staged for
    );
    """,
))

MIGRATIONS.append((
    20,
    "the scopes dedup need not plan again (maintain/dedup/settled.py)",
    """
    CREATE TABLE dedup_scopes (
        tenant VARCHAR NOT NULL,
        agent_id VARCHAR,
        user_id VARCHAR,
        digest VARCHAR NOT NULL,          -- sha256 of what the scope's plan reads, after the night's merges
        fingerprint VARCHAR NOT NULL,     -- the code, dictionaries, policy and unmerged clusters it holds for
        settled BOOLEAN NOT NULL          -- that night's plan merged nothing and raised nothing
    );
    """,
))

MIGRATIONS.append((
    21,
    "the tables and scope records of the last staged export, kept for the next (publish/kept.py)",
    """
    CREATE TABLE export_files (
        kind VARCHAR NOT NULL,            -- 'table' (tables/<name>.parquet) or 'scope' (a memory.json's records)
        name VARCHAR NOT NULL,            -- the table, or the scope's folder below scopes/
        digest VARCHAR NOT NULL,          -- of what the file is made from
        sha256 VARCHAR NOT NULL,          -- of the table file, or of the records' text
        size BIGINT NOT NULL,             -- bytes of the same
        version VARCHAR NOT NULL          -- the version that holds it
    );
    """,
))

MIGRATIONS.append((
    22,
    "the rows a closed settled scope's plan read, so that one that only lost memories is not planned again "
    "(maintain/dedup/settled.py)",
    """
    -- 64 bits of the md5 of each eligible row the plan read (sorted) when it left the scope closed; NULL otherwise
    ALTER TABLE dedup_scopes ADD COLUMN members UBIGINT[];
    """,
))

# Python that runs in a migration's transaction before its DDL (data the DDL would drop).
MIGRATION_STEPS = {15: keys.move_salts_out}

SCHEMA_VERSION = MIGRATIONS[-1][0]

# A forgotten memory (deleted) and a merged one are not published: the kept memory stands for it.
# (The Great Expectations suite that gates a publish lives beside its runner, publish/checks.py.)
PUBLISHED_STATUSES = tuple(s for s in STATUSES if s not in ("deleted", "merged"))


def add_memory_column(name: str, kind: str) -> str:
    """DDL for a later migration that adds a core memory column and its history-image fields."""
    nullable = kind.replace(" NOT NULL", "")
    return (f"ALTER TABLE memories ADD COLUMN {name} {kind};\n"
            f"ALTER TABLE memory_history ADD COLUMN before.{name} {nullable};\n"
            f"ALTER TABLE memory_history ADD COLUMN after.{name} {nullable};")


def migrate(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply every migration newer than the lake's; return the versions applied."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER NOT NULL, name VARCHAR NOT NULL)"
    )
    (current,) = con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    applied = []
    for version, name, ddl in MIGRATIONS:
        if version <= current:
            continue
        with transaction(con):
            if version in MIGRATION_STEPS:
                MIGRATION_STEPS[version](con)
            con.execute(ddl)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?)", [version, name])
        applied.append(version)
    return applied
