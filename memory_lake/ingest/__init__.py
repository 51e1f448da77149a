"""Ingest: snapshots in, versioned memories out. The snapshot contract and its readers (one
module per format, ``formats/``), PII redaction, the versioned write path (merge), the inbox
(``write_snapshot``, manual edits), the ingest step with its quarantine, and forget's writing part
(tombstones, the registered scrubbers, compaction), which a snapshot's ``deleted: true`` uses too."""

from .forget import (FORGET_WAIT_S, MERGED_MEMBERS_SQL, MERGED_REASON, SUMMARIES_OF_SQL, compact_database, compaction_owed,
                     forget_memories, forgotten_ids, scrub_files)
from .formats import read_records
from .inbox import edit_memory, write_snapshot
from .load import export_quarantine, file_label, ingest_paths, ingest_step, replay_quarantine, scan_inbox, waiting_trees
from .merge import IMPORTANT_NEEDS_USER
from .snapshot import assign_ids, parse_field_value, parse_records, shape_hints, shape_sql

__all__ = [
    "FORGET_WAIT_S", "MERGED_MEMBERS_SQL", "MERGED_REASON", "SUMMARIES_OF_SQL", "compact_database", "compaction_owed",
    "forget_memories", "forgotten_ids", "scrub_files",
    "edit_memory", "write_snapshot",
    "export_quarantine", "file_label", "ingest_paths", "ingest_step", "replay_quarantine", "scan_inbox", "waiting_trees",
    "IMPORTANT_NEEDS_USER",
    "assign_ids", "parse_field_value", "parse_records", "read_records", "shape_hints", "shape_sql",
]
