"""The storage layer: the lake folder, its write lock and connections, schema and migrations,
policy, the clock rule, errors, backups, history helpers, the transaction helper, and the registry of
what forget must reach (each store's owner registers its scrubber).

It knows no rules of the data flow and imports nothing above it: every stage package builds on
what this ``__init__`` exports (``schema`` is exported as a namespace of table definitions).
"""

from . import keys, schema, views
from .backup import FORGET_WARNING, BackupError, backup, file_sha256, restore_backup
from .clock import iso, resolve_as_of
from .crash import CRASH_AT_ENV, crash_point
from .db import transaction
from .deadline import within
from .fingerprint import code_fingerprint, set_digest_sql
from .urls import check_resolved_host, check_url
from .errors import InputError, LakeBusy, LakeNotFound, MemoryLakeError, NotApplicable
from .history import HISTORY_COLUMNS, next_history_seq, row_image
from .lake import DEFAULT_WRITE_WAIT_S, WAIT_ENV, WAIT_LISTENERS, Lake, write_wait_s, ReadSource, check_held_query, connect
from .names import LISTED, SUGGESTIONS, check_ids, check_scope
from .lake import is_lake, lake_not_found, parquet_sql, published_views, resolve_lake_dir, table_files
from .names import unknown_message
from .registry import (FORGOTTEN, READS_MEMORIES, REPORT_FOLDERS, SCRUBBED_FILES, SCRUBBED_TABLES, FileScrub, Scrubber, atomic_write, file_scrubber_list,
                       file_scrubbers, register_file_scrubber, register_scrubber, scrubbers, sql_path, table_scrubbers)
from .processes import main_hidden, spawn_pool
from .policy import INVALID_TARGET_LISTENERS, HealthPolicy, IngestPolicy, InvalidTarget, Policy, load_policy
from .schema import PUBLISHED_STATUSES, TIERS, TYPES
from .steps import SCOPE_FIELDS, StepReport, describe_error, error_scope, step_error, tenant_limits

__all__ = [
    "keys", "schema", "views", "FORGET_WARNING", "BackupError", "backup", "file_sha256", "restore_backup", "iso", "resolve_as_of",
    "CRASH_AT_ENV", "crash_point", "transaction", "within", "code_fingerprint", "set_digest_sql", "check_resolved_host", "check_url",
    "InputError", "LakeBusy", "LakeNotFound", "MemoryLakeError", "NotApplicable",
    "HISTORY_COLUMNS", "next_history_seq", "row_image",
    "DEFAULT_WRITE_WAIT_S", "WAIT_ENV", "WAIT_LISTENERS", "write_wait_s", "Lake", "ReadSource", "check_held_query", "connect",
    "check_ids", "check_scope", "LISTED", "SUGGESTIONS",
    "is_lake", "lake_not_found", "parquet_sql", "published_views", "resolve_lake_dir", "table_files", "unknown_message",
    "FORGOTTEN", "READS_MEMORIES", "REPORT_FOLDERS", "SCRUBBED_FILES", "SCRUBBED_TABLES", "FileScrub", "Scrubber", "atomic_write", "file_scrubber_list",
    "file_scrubbers", "register_file_scrubber", "register_scrubber", "scrubbers", "sql_path", "table_scrubbers",
    "main_hidden", "spawn_pool",
    "INVALID_TARGET_LISTENERS", "HealthPolicy", "IngestPolicy", "InvalidTarget", "Policy", "load_policy",
    "PUBLISHED_STATUSES", "TIERS", "TYPES",
    "SCOPE_FIELDS", "StepReport", "describe_error", "error_scope", "step_error", "tenant_limits",
]
