"""Deterministic demo snapshots for memory-lake.

`generate_demo(inbox, seed)` writes a handful of agent memory snapshots into a lake's inbox: JSON Lines
files from three tenants plus one memory-orchestrator save file. The data is built to exercise every
later step on realistic-looking memory: tier capacities (a scope over 20 working and over 100
short_term items), staleness and expiry, exact and near duplicates (English and Chinese),
contradictions, PII and secrets for the redactor, malformed rows for the quarantine, an optimistic
version edit followed by a conflicting late write, a forget request, and two long support
conversations written by hand (English and Chinese, ``data/conversations.json``: one session each,
a turn per short-term memory) for the summariser.

Only the standard library is used, and nothing reads the clock: the same seed gives byte-identical
files, and every timestamp is placed relative to `DEMO_AS_OF`.

This module writes the files and says what was planted (`DemoData`); ``records.py`` holds the seeded
record builder (word lists, templates, check digits) and ``scenario.py`` the tenants, scopes and
what each file holds.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .records import _Builder
from .scenario import (
    DEMO_TENANTS,
    _EDITED_ID,
    _FORGOTTEN_ID,
    _Line,
    _file_acme,
    _file_acme_edits,
    _file_acme_late_sync,
    _file_conversations,
    _file_globex,
    _file_zhongke,
    _save_orchestrator,
)

__all__ = ["DEMO_AS_OF", "DEMO_TENANTS", "DEMO_WINDOW_DAYS", "MALFORMED_REASONS", "DemoData", "generate_demo"]

DEMO_AS_OF = datetime(2026, 11, 30, 0, 0, tzinfo=timezone.utc)
# Every created/updated/accessed timestamp falls inside this window before DEMO_AS_OF.
DEMO_WINDOW_DAYS = 90

# The quarantine reasons this generator plants, one line each (the ingest's vocabulary).
MALFORMED_REASONS = (
    "bad JSON",
    "missing content",
    "missing tenant",
    "unknown tier",
    "bad timestamp",
    "wrong type",
    "content too large",
    "duplicate id in file",
)


@dataclass(frozen=True)
class DemoData:
    """What `generate_demo` wrote and what a correct pipeline should make of it.

    files: snapshot paths in the order they must be ingested (sorted by name).
    as_of: the instant the data was generated for (`DEMO_AS_OF`).
    planted_pii: every raw PII or secret value, exactly as it appears in the files.
    malformed: (file name, 1-based line, expected quarantine reason) for each bad line.
    conflicts: (file name, 1-based line, field) for each write that must end in the conflict queue
        (the late sync based on version 1 of the edited memory).
    edited_id: the memory created in one file and edited (with `version: 1`) in a later one.
    forgotten_id: the memory a later file asks to forget.
    good_lines: records that should land as memories or updates: JSON Lines records plus the save
        file's records, excluding malformed, stale and forget lines.
    tenants: the tenants present in the data.
    """

    files: list[Path]
    as_of: datetime
    planted_pii: list[str]
    malformed: list[tuple[str, int, str]]
    conflicts: list[tuple[str, int, str]]
    edited_id: str
    forgotten_id: str
    good_lines: int
    tenants: list[str]


def _dump(line: _Line) -> str:
    if isinstance(line.payload, str):
        return line.payload
    return json.dumps(line.payload, ensure_ascii=False)


def write_lines(inbox: Path, files: list[tuple[str, list[_Line]]], bad_kinds
                ) -> tuple[list[Path], list[tuple[str, int, str]], list[tuple[str, int, str]], int]:
    """Write each (name, lines) JSON Lines file into `inbox` (atomically); (paths, malformed lines
    as (file, line, reason) for the kinds in `bad_kinds`, conflicting lines as (file, line, field),
    the number of good lines)."""
    written: list[Path] = []
    malformed: list[tuple[str, int, str]] = []
    conflicts: list[tuple[str, int, str]] = []
    good = 0
    for name, lines in files:
        for number, line in enumerate(lines, start=1):
            if line.kind in bad_kinds:
                malformed.append((name, number, line.kind))
            elif line.kind == "conflict":
                conflicts.append((name, number, "content"))
            elif line.kind == "good":
                good += 1
        path = inbox / name
        _write_atomic(path, "".join(_dump(line) + "\n" for line in lines))
        written.append(path)
    return written, malformed, conflicts, good


def _write_atomic(path: Path, text: str) -> None:
    # The inbox convention: a reader never sees a half-written snapshot.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(text.encode("utf-8"))
    os.replace(tmp, path)


def _first_night_files(b: _Builder) -> tuple[list[tuple[str, list[_Line]]], tuple[str, dict]]:
    """The first night's JSON Lines files (name, lines) and its save file (name, document), drawn
    from `b` in the order that gives a seed its meaning. ``nights.py`` replays this, writing nothing,
    to learn what the later nights build on (ids, texts, the records they edit)."""
    acme = _file_acme(b)
    edited = next(line.payload for line in acme
                  if isinstance(line.payload, dict) and line.payload.get("id") == _EDITED_ID)
    jsonl: list[tuple[str, list[_Line]]] = [
        ("0001-acme-support.jsonl", acme),
        ("0002-globex-ops.jsonl", _file_globex(b)),
        ("0003-zhongke-assistant.jsonl", _file_zhongke(b)),
        ("0004-acme-support-edits.jsonl", _file_acme_edits(b, edited)),
    ]
    save = ("0005-orchestrator-save.json", _save_orchestrator(b))
    jsonl.append(("0006-acme-late-sync.jsonl", _file_acme_late_sync(b, edited)))
    jsonl.append(("0007-support-conversations.jsonl", _file_conversations()))
    return jsonl, save


def generate_demo(inbox: Path, seed: int = 7) -> DemoData:
    """Write the demo snapshots into `inbox` (created if missing) and describe what was planted.

    The same seed writes byte-identical files; no clock is read (timestamps are relative to
    `DEMO_AS_OF`). Files are named so that sorted name order is ingest order, and each is written
    to `<name>.tmp` first and then renamed, as the inbox convention requires.
    Returns a `DemoData` with the files, the planted PII values, the malformed lines with their
    expected quarantine reasons, the edited and forgotten ids and the number of good records.
    """
    inbox = Path(inbox)
    inbox.mkdir(parents=True, exist_ok=True)
    b = _Builder(seed, DEMO_AS_OF)
    jsonl, (save_name, save_doc) = _first_night_files(b)

    files, malformed, conflicts, good = write_lines(inbox, jsonl, MALFORMED_REASONS)
    good += len(save_doc["memories"])
    save_path = inbox / save_name
    _write_atomic(save_path, json.dumps(save_doc, ensure_ascii=False, indent=2) + "\n")
    files.append(save_path)

    return DemoData(
        files=sorted(files, key=lambda p: p.name),
        as_of=DEMO_AS_OF,
        planted_pii=list(b.pii),
        malformed=sorted(malformed),
        conflicts=conflicts,
        edited_id=_EDITED_ID,
        forgotten_id=_FORGOTTEN_ID,
        good_lines=good,
        tenants=["acme", "globex", "zhongke"],
    )
