"""Ingest: snapshots in, versioned memories out. The snapshot contract and its readers (one
module per format, ``formats/``), PII redaction, the versioned write path (merge), the inbox
(``write_snapshot``, manual edits) and the ingest step with its quarantine."""

from .formats import read_records
from .inbox import edit_memory, write_snapshot
from .load import export_quarantine, file_label, ingest_paths, ingest_step, replay_quarantine, scan_inbox
from .merge import IMPORTANT_NEEDS_USER
from .snapshot import assign_ids, parse_records, shape_hints, shape_sql

__all__ = [
    "edit_memory", "write_snapshot",
    "export_quarantine", "file_label", "ingest_paths", "ingest_step", "replay_quarantine", "scan_inbox",
    "IMPORTANT_NEEDS_USER",
    "assign_ids", "parse_records", "read_records", "shape_hints", "shape_sql",
]
