"""Ingest: snapshot files from the inbox into the lake's tables.

For each file, oldest name first (writers name files so that this is their write order):

1. read  - JSON Lines, a memory-orchestrator save file (``{"memories": [...]}``, its top-level
           ``tenant`` / ``agent_id`` / ``user_id`` are defaults for its records), or Parquet;
           every record becomes one JSON text with its 1-based line (record position in a document).
2. redact - PII and secrets are replaced in the whole text before anything is parsed or written
           (``redact.py``); the raw copy and quarantine keep only redacted text.
3. parse and validate - set-based in DuckDB: every bad record gets a reason (bad JSON, missing
           tenant, missing content, unknown tier, bad timestamp, wrong type, content too large,
           duplicate id in file ...) and goes to ``quarantine``; the good ones go on.
4. merge - against ``memories``, per field and three-way (DESIGN "Memory record"): an incoming
           value applies only where it differs from the value at the version the writer based
           its write on, so re-sending a snapshot never undoes a system move. New ids insert,
           changes bump ``version`` and write ``memory_history``; counters add the writer's
           delta without a version bump; ``deleted: true`` makes a tombstone.
5. keep  - the redacted copy goes to ``raw/<sha256 of the original>.jsonl``, the file's hash to
           ``ingested_files`` (re-ingesting it changes nothing), and only then does the original
           leave the inbox. One transaction per file: a crash at any point re-runs cleanly.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

import duckdb
import polars as pl

from . import redact
from ..store import crash_point, iso
from ..store import InputError
from .merge import merge_records
from ..store import IngestPolicy
from .formats import format_of, read_records
from .snapshot import assign_ids, not_strict_sql, parse_records, shape_hints, shape_sql
from ..store import StepReport

SNAPSHOT_SUFFIXES = (".jsonl", ".ndjson", ".json", ".parquet")
# Files agents are still writing (the inbox convention: write a temporary name, then rename).
IN_PROGRESS_SUFFIXES = (".tmp", ".part", ".partial")
# Usage events are read by the events step, not as snapshots.
EVENTS_SUFFIX = ".events.jsonl"
UNREADABLE = "unreadable file"
TEMP_TABLES = ("snap_texts", "snap_parsed", "snap_extra", "snap_valid", "snap_dups",
               "merge_checked", "merge_changed", "merge_final")


@dataclass
class FileReport:
    """What ingest did with one file."""

    file: str
    file_hash: str
    format: str
    status: str  # ingested | already ingested | dry run | unreadable
    records: int = 0
    ingested: int = 0
    updated: int = 0
    unchanged: int = 0
    forgotten: int = 0
    conflicted: int = 0
    quarantined: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


@dataclass
class IngestReport:
    """What one ingest did, per file and in total (``as_dict()`` is the `--json` shape)."""

    run_id: str
    as_of: datetime
    dry_run: bool
    files: list[FileReport] = field(default_factory=list)
    duration_s: float = 0.0
    unrecognised: list[str] = field(default_factory=list)  # files found that ingest does not read

    def total(self, name: str) -> int:
        return sum(getattr(f, name) for f in self.files)

    @property
    def reasons(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for f in self.files:
            counts.update(f.reasons)
        return dict(sorted(counts.items()))

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "as_of": iso(self.as_of),
            "dry_run": self.dry_run,
            "files": len(self.files),
            "files_skipped": sum(f.status == "already ingested" for f in self.files),
            "records": self.total("records"),
            "ingested": self.total("ingested"),
            "updated": self.total("updated"),
            "unchanged": self.total("unchanged"),
            "forgotten": self.total("forgotten"),
            "conflicted": self.total("conflicted"),
            "quarantined": self.total("quarantined"),
            "quarantine_reasons": self.reasons,
            "duration_s": round(self.duration_s, 3),
            "per_file": [asdict(f) for f in self.files],
            "unrecognised_files": self.unrecognised,
        }


# ============================================================================ entry points
def ingest_paths(lake, paths: Sequence[str | os.PathLike] | None, *, as_of: datetime, dry_run: bool = False,
                 wait_s: float, progress: bool = False, replay: bool = False, run_id: str | None = None,
                 record: bool = True, on_progress: Callable[[str, int, int], None] | None = None) -> IngestReport:
    """Ingest files or folders (default: the inbox) under the write lock; one transaction per file.
    `record` writes a `runs` row (a nightly run records its own instead); `on_progress("ingested",
    done, total)` hears each file ingested."""
    from ..maintain import compact_database  # lazy: maintain builds on ingest
    started = time.monotonic()
    discover_snapshots(lake, paths)  # a wrong path fails before waiting for the lake
    with lake.writer(wait_s=wait_s, purpose="ingest") as con:
        # Listed under the lock: a concurrent ingest that held it has taken its files already.
        files, unrecognised = scan_inbox(lake, paths)
        report = IngestReport(run_id=run_id or lake.new_run_id("ingest", as_of), as_of=as_of, dry_run=dry_run,
                              unrecognised=unrecognised)
        policy = lake.policy.ingest
        for path in _progress(files, progress):
            done = ingest_file(lake, con, path, as_of=as_of, run_id=report.run_id, policy=policy,
                               dry_run=dry_run, replay=replay)
            if done is not None:
                report.files.append(done)
            if on_progress:
                on_progress("ingested", len(report.files), len(files))
        report.duration_s = time.monotonic() - started
        if record and not dry_run:
            con.execute("INSERT INTO runs VALUES (?, ?, ?, 'ok', ?, ?)",
                        [report.run_id, "replay" if replay else "ingest", as_of, report.duration_s,
                         json.dumps(report.as_dict())])
    if report.total("forgotten") and not dry_run:
        compact_database(lake)  # freed blocks of the DuckDB file may still hold forgotten text
    return report


def ingest_step(lake, as_of: datetime, policy=None, run_id: str | None = None) -> StepReport:
    """The nightly step: ingest everything waiting in the inbox."""
    report = ingest_paths(lake, None, as_of=as_of, wait_s=0, run_id=run_id, record=False).as_dict()
    counts = {k: report[k] for k in ("files", "ingested", "updated", "unchanged", "forgotten", "quarantined")}
    if report["unrecognised_files"]:
        counts["unrecognised files"] = len(report["unrecognised_files"])
    return StepReport("ingest_inbox", as_of, report["run_id"], counts, report)


def replay_quarantine(lake, path: Path, *, as_of: datetime, wait_s: float) -> IngestReport:
    """Ingest fixed lines; quarantine rows they fix (by ``_quarantine_id`` or memory id) become replayed."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return ingest_paths(lake, [path], as_of=as_of, wait_s=wait_s, replay=True)


def discover_snapshots(lake, paths: Sequence[str | os.PathLike] | None) -> list[Path]:
    """Snapshot files under the given paths (default the inbox), in name order, complete files only."""
    return scan_inbox(lake, paths)[0]


def scan_inbox(lake, paths: Sequence[str | os.PathLike] | None = None) -> tuple[list[Path], list[str]]:
    """(snapshots in name order, names of unrecognised files) under the given paths (default the
    inbox). Nothing is ignored silently: a file that is not a snapshot, not a usage events file
    and not a temporary name is named, so that its writer can be told."""
    if not paths:
        paths = [lake.inbox]
    found: list[Path] = []
    unrecognised: list[str] = []
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        if path.is_dir():
            candidates = sorted(p for p in path.rglob("*") if p.is_file() and lake.decisions not in p.parents)
            kinds = [(p, _kind(lake, p)) for p in candidates]
            found.extend(p for p, kind in kinds if kind == "snapshot")
            unrecognised.extend(_label(lake, p) for p, kind in kinds if kind == "unrecognised")
        elif path.is_file():
            if _kind(lake, path) != "snapshot":
                raise InputError(f"{path}: not a snapshot (expected {', '.join(SNAPSHOT_SUFFIXES)})")
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    unique = list(dict.fromkeys(found))
    return sorted(unique, key=lambda p: (str(p.parent), p.name)), sorted(set(unrecognised))


def _kind(lake, path: Path) -> str:
    """snapshot | events | temporary | unrecognised. Suffixes match in any case (``.JSONL``);
    usage events are what the events step collects: ``*.events.jsonl`` at the inbox's top."""
    name = path.name
    lower = name.lower()
    if name.startswith(".") or lower.endswith(IN_PROGRESS_SUFFIXES):
        return "temporary"
    if name.endswith(EVENTS_SUFFIX) and path.parent == lake.inbox:
        return "events"
    if lower.endswith(SNAPSHOT_SUFFIXES) and not lower.endswith(EVENTS_SUFFIX):
        return "snapshot"
    return "unrecognised"


def _progress(files: list[Path], enabled: bool):
    if not enabled or len(files) < 2:
        yield from files
        return
    from rich.progress import Progress

    with Progress(transient=True, console=_stderr_console()) as bar:
        task = bar.add_task("ingest", total=len(files))
        for path in files:
            bar.update(task, description=f"ingest {path.name}")
            yield path
            bar.advance(task)


def _stderr_console():
    from rich.console import Console

    return Console(file=sys.stderr)


# ============================================================================ one file
def ingest_file(lake, con: duckdb.DuckDBPyConnection, path: Path, *, as_of: datetime, run_id: str,
                policy: IngestPolicy, dry_run: bool = False, replay: bool = False) -> FileReport | None:
    """Ingest one snapshot file inside one transaction. Re-ingesting a known file changes nothing;
    a file gone since it was listed (someone else took it) is skipped (None)."""
    from ..maintain import forgotten_ids, scrub_files  # lazy: maintain builds on ingest
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    file_hash = hashlib.sha256(data).hexdigest()
    fmt = format_of(path)
    label = redact.redact_text(_label(lake, path), lake.tenant_salts(con, [])[""])  # names can hold PII too
    if con.execute("SELECT 1 FROM ingested_files WHERE file_hash = ?", [file_hash]).fetchone():
        if not dry_run:
            _retire_from_inbox(lake, path, file_hash, known=True)
        return FileReport(label, file_hash, fmt, "already ingested")

    try:
        lines = read_records(con, data, fmt)
    except InputError as exc:
        return _reject_unreadable(con, label, file_hash, fmt, str(exc), as_of=as_of, run_id=run_id, dry_run=dry_run)
    report = FileReport(label, file_hash, fmt, "dry run" if dry_run else "ingested", records=lines.height)
    try:
        # Salts are created inside the file's transaction; parsing works on temp tables only, so it
        # runs outside it (DuckDB tracks transaction-local temp data at a high cost in bulk).
        con.execute("BEGIN TRANSACTION")
        texts = _redact(lake, con, lines)
        con.execute("COMMIT" if not dry_run else "ROLLBACK")
        parse_records(con, texts, policy)
        assign_ids(con)
        con.execute("BEGIN TRANSACTION")
        counts = merge_records(con, as_of=as_of, run_id=run_id, label=label, policy=policy)
        quarantined = _quarantine(con, run_id=run_id, as_of=as_of, label=label, file_hash=file_hash)
        report.ingested, report.updated, report.unchanged, report.forgotten, report.conflicted = counts
        report.quarantined = sum(quarantined.values())
        report.reasons = quarantined
        if dry_run:
            con.execute("ROLLBACK")
            return report
        if replay:
            _mark_replayed(con, run_id)
        raw_path = _write_raw_copy(lake, file_hash, texts)
        con.execute(
            "INSERT INTO ingested_files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [file_hash, label, fmt, str(raw_path.relative_to(lake.root)), report.records, report.ingested,
             report.updated, report.unchanged, report.forgotten, report.quarantined, run_id, as_of],
        )
        con.execute("COMMIT")
    except BaseException:
        if _in_transaction(con):
            con.execute("ROLLBACK")
        raise
    finally:
        for table in TEMP_TABLES:
            con.execute(f"DROP TABLE IF EXISTS {table}")
    if report.forgotten:
        # The forgotten text leaves the raw copies, search log and exports too (DESIGN: forget
        # reaches everything); this file's own raw copy is already redacted and holds no text of it.
        scrub_files(lake, forgotten_ids(con, run_id=run_id, source=label), as_of=as_of, run_id=run_id, con=con)
    crash_point("ingest:file-committed")  # tests/test_crash_safety.py kills here
    _retire_from_inbox(lake, path, file_hash)
    return report


def _reject_unreadable(con: duckdb.DuckDBPyConnection, label: str, file_hash: str, fmt: str, error: str, *,
                       as_of: datetime, run_id: str, dry_run: bool) -> FileReport:
    """A file that cannot be read at all (a damaged Parquet file) is quarantined once as a whole
    and left in place for the operator; its bytes are never copied, since they cannot be redacted."""
    report = FileReport(label, file_hash, fmt, "unreadable", quarantined=1, reasons={UNREADABLE: 1})
    known = con.execute("SELECT count(*) FROM quarantine WHERE file_hash = ? AND reason = ? AND status = 'open'",
                        [file_hash, UNREADABLE]).fetchone()[0]
    if known or dry_run:
        report.quarantined, report.reasons = (0, {}) if known else (1, {UNREADABLE: 1})
        return report
    con.execute(
        """
        INSERT INTO quarantine (quarantine_id, run_id, as_of, file, file_hash, line, reason, detail, raw)
        SELECT coalesce(max(quarantine_id), 0) + 1, ?, ?, ?, ?, 0, ?, ?, '' FROM quarantine
        """,
        [run_id, as_of, label, file_hash, UNREADABLE, error[:500]],
    )
    return report


def _in_transaction(con: duckdb.DuckDBPyConnection) -> bool:
    try:
        con.execute("BEGIN TRANSACTION")
    except duckdb.TransactionException:
        return True
    con.execute("ROLLBACK")
    return False


def _label(lake, path: Path) -> str:
    """How a file is named in reports: relative to the inbox when it came from there."""
    try:
        return str(path.relative_to(lake.inbox))
    except ValueError:
        return str(path)


def _retire_from_inbox(lake, path: Path, file_hash: str, known: bool = False) -> None:
    """The original leaves the inbox once its redacted copy is in raw/ (never files elsewhere);
    a `known` file (in ingested_files) had its copy written, though retention may have pruned it."""
    if lake.inbox in path.parents and (known or (lake.raw / f"{file_hash}.jsonl").exists()):
        path.unlink(missing_ok=True)


def _write_raw_copy(lake, file_hash: str, texts: pl.DataFrame) -> Path:
    """The redacted copy, written atomically, one record per line and line k holding the
    original's record k (blank where the original was blank), so that `forget` can find the
    lines of a memory from its history's source line."""
    target = lake.raw / f"{file_hash}.jsonl"
    tmp = target.with_suffix(".jsonl.tmp")
    last = int(texts["line"].max() or 0)
    full = pl.DataFrame({"line": pl.int_range(1, last + 1, eager=True, dtype=pl.Int64)}).join(
        texts.select("line", "text"), on="line", how="left").with_columns(pl.col("text").fill_null(""))
    # Records hold no raw newlines (lines were split on them; documents are re-serialised).
    full.select("text").write_csv(tmp, include_header=False, quote_style="never")
    os.replace(tmp, target)
    return target


# ============================================================================ 2. redact
def _redact(lake, con: duckdb.DuckDBPyConnection, lines: pl.DataFrame) -> pl.DataFrame:
    """Canonical, redacted text per record: (line, ok, is_object, problem, text); `problem` says why
    a record is not a strict JSON object within the depth limit (``snapshot.shape_sql``)."""
    con.register("redact_raw", shape_hints(lines))
    try:
        # A JSON text with backslash escapes is re-serialised first (json() unescapes \\uXXXX), so
        # that PII cannot hide behind escapes; other texts are kept byte for byte.
        canon = con.execute(
            f"""
            SELECT line, ok, is_object, problem,
                   CASE WHEN is_object AND contains(raw, '\\') THEN json(raw)::VARCHAR ELSE raw END AS text,
                   CASE WHEN is_object THEN json_extract_string(raw, '$.tenant') END AS tenant
            FROM (SELECT *, problem IS NULL AS is_object FROM ({shape_sql("redact_raw")}))
            ORDER BY line
            """
        ).pl()
    finally:
        con.unregister("redact_raw")
    return canon.with_columns(
        text=redact.redact_records(canon["text"], canon["tenant"], lambda names: lake.tenant_salts(con, names))
    ).drop("tenant")


# ============================================================================ quarantine
def _quarantine(con: duckdb.DuckDBPyConnection, *, run_id: str, as_of: datetime, label: str,
                file_hash: str) -> dict[str, int]:
    """Every rejected record to `quarantine` with file, line, reason and its redacted text."""
    con.execute(
        """
        INSERT INTO quarantine (quarantine_id, run_id, as_of, file, file_hash, line, reason, detail, tenant,
                                memory_id, raw)
        SELECT (SELECT coalesce(max(quarantine_id), 0) FROM quarantine) + row_number() OVER (ORDER BY p.line),
               $run_id, $as_of, $label, $file_hash, p.line, p.reason, p.detail, nullif(p.tenant, ''), p.id, t.text
        FROM snap_parsed p JOIN snap_texts t USING (line) WHERE p.reason IS NOT NULL
        """,
        {"run_id": run_id, "as_of": as_of, "label": label, "file_hash": file_hash},
    )
    rows = con.execute(
        "SELECT reason, count(*) FROM snap_parsed WHERE reason IS NOT NULL GROUP BY reason ORDER BY reason"
    ).fetchall()
    return dict(rows)


def _mark_replayed(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    con.execute(
        """
        UPDATE quarantine SET status = 'replayed', replayed_run_id = $run_id
        WHERE status = 'open' AND run_id <> $run_id AND (
              quarantine_id IN (SELECT quarantine_id FROM snap_valid WHERE quarantine_id IS NOT NULL)
           OR memory_id IN (SELECT id FROM snap_valid))
        """,
        {"run_id": run_id},
    )


def export_quarantine(lake, output: Path, *, reason: str | None = None) -> int:
    """Write open quarantined lines to `output` for fixing; JSON objects get ``_quarantine_id``.
    An object that is not strict JSON (a trailing comma ...) gets it in front, its text kept as
    it was, so that the fault is still there to fix."""
    where = "status = 'open'" + (" AND reason = ?" if reason else "")
    frame = lake.sql(
        f"""
        SELECT CASE WHEN json_valid(raw) AND regexp_matches(raw, '^\\s*\\{{') AND {not_strict_sql("raw")}
                    THEN regexp_replace(raw, '^\\s*\\{{', '{{"_quarantine_id":' || quarantine_id || ',')
                    WHEN json_valid(raw) AND regexp_matches(raw, '^\\s*\\{{')
                    THEN json_merge_patch(raw, json_object('_quarantine_id', quarantine_id))::VARCHAR
                    ELSE raw END AS line
        FROM quarantine WHERE {where} ORDER BY quarantine_id
        """,
        [reason] if reason else None,
    )
    output = Path(output)
    tmp = output.with_name(output.name + ".tmp")
    body = "\n".join(frame["line"].to_list())
    tmp.write_text(body + ("\n" if body else ""), encoding="utf-8")
    os.replace(tmp, output)
    return frame.height
