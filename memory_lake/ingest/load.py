"""Ingest: snapshot files from the inbox into the lake's tables.

For each file, oldest name first (writers name files so that this is their write order):

1. read  - JSON Lines, a memory-orchestrator save file (``{"memories": [...]}``, its top-level
           ``tenant`` / ``agent_id`` / ``user_id`` are defaults for its records), or Parquet;
           every record becomes one JSON text with its 1-based line (record position in a document).
2. redact - PII and secrets are replaced in the whole text before anything is parsed or written
           (``text/redact``); the raw copy and quarantine keep only redacted text, and no invisible
           characters (tag-block instructions, bidi controls ...): the report counts those removed.
3. parse and validate - set-based in DuckDB: every bad record gets a reason (bad JSON, missing
           tenant, missing content, unknown tier, bad timestamp, future timestamp, wrong type, content too large,
           duplicate id in file, duplicate memory in file ...) and goes to ``quarantine``; the good ones go on.
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

import dataclasses
import hashlib
import json
import os
import secrets
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

import duckdb
import polars as pl

from ..text import beyond_ascii, redact_records, redact_text, without_hidden_characters
from ..store import crash_point, iso
from ..store import InputError, keys
from .merge import MASS_FORGET_HELD, merge_records
from ..store import IngestPolicy
from .formats import NEEDS_TENANT, format_of, read_counted
from .formats.hottree import tree_units
from .scan import discover_snapshots, file_label, path_scope, scan_inbox, waiting_trees
from .formats.mem0 import lake_versions
from .snapshot import assign_ids, not_strict_sql, parse_records, shape_hints, shape_sql
from ..store import StepReport

UNREADABLE = "unreadable file"
TEMP_TABLES = ("snap_texts", "snap_parsed", "snap_extra", "snap_ids", "snap_dups",
               "merge_checked", "merge_changed", "merge_final", "replay_links", "replay_kept")
TEMP_VIEWS = ("snap_valid",)
# A file of fewer records is parsed and merged on one DuckDB thread. Its statements are small, and
# waking DuckDB's workers for each cost more CPU than it saved: one-record files 0.164 -> 0.128 s
# CPU each (2 cores), into a 200,000-memory lake 0.205 -> 0.157 s with no more wall time; a 2,000-record
# file 0.82 -> 0.65 s. (A DuckDB task is a row group of 122,880 rows: a file this small is one task.)
ONE_THREAD_RECORDS = 10_000
# Where `quarantine export` puts a line's quarantine id; `replay` finds it there in any line,
# valid JSON or not (a string value holding the same text has its quotes escaped, so it never matches).
QUARANTINE_ID_RE = r'"_quarantine_id"\s*:\s*(\d+)'
# How `quarantine export` writes a line that is no JSON object at all (so that it cannot carry
# the key itself): {"_quarantine_id": N, "_raw": "<the line>"}. `replay` reads such a line as its
# `_raw` text, so a user may fix the text inside `_raw` or replace the whole line with the record.
WRAPPED_KEYS = ["_quarantine_id", "_raw"]


@dataclass
class FileReport:
    """What ingest did with one file."""

    file: str
    file_hash: str
    format: str
    status: str  # ingested | already ingested | dry run | unreadable | empty
    records: int = 0
    ingested: int = 0
    updated: int = 0
    unchanged: int = 0
    forgotten: int = 0
    conflicted: int = 0
    quarantined: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    replayed: int = 0  # replay: open quarantine rows this file's lines fixed (closed)
    still_failing: int = 0  # replay: open rows whose line failed again (kept open, brought up to date)
    # issue 37.5: invisible characters (tag block, bidi controls, zero-width ...) dropped from the records
    invisible_chars_removed: int = 0
    # issue 37.4: records claiming operator user in a file no user's edit signed: taken as an agent's
    unsigned_user: int = 0
    # issue 41: inputs the format's reader left out on purpose, by kind (a transcript's pleasantries,
    # a Letta export's deleted passages): never memories, never quarantined, counted here
    skipped: dict[str, int] = field(default_factory=dict)
    error: str | None = None  # an unreadable file: why (the quarantine row's detail); a skipped one: a note


@dataclass
class IngestReport:
    """What one ingest did, per file and in total (``as_dict()`` is the `--json` shape)."""

    run_id: str
    as_of: datetime
    dry_run: bool
    files: list[FileReport] = field(default_factory=list)
    duration_s: float = 0.0
    unrecognised: list[str] = field(default_factory=list)  # files found that ingest does not read
    waiting_trees: list[str] = field(default_factory=list)  # hot-memory trees without their index.json yet
    replay: bool = False

    def total(self, name: str) -> int:
        return sum(getattr(f, name) for f in self.files)

    @property
    def reasons(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for f in self.files:
            counts.update(f.reasons)
        return dict(sorted(counts.items()))

    def per_format(self) -> dict[str, dict[str, Any]]:
        """Per format read (jsonl, json, parquet, mem0 ...): files, what their records did, why
        records were quarantined (``reasons``) and what the reader skipped on purpose (``skipped``)."""
        out: dict[str, dict[str, Any]] = {}
        for f in self.files:
            row = out.setdefault(f.format, {"files": 0, "records": 0, "ingested": 0, "updated": 0, "unchanged": 0,
                                            "quarantined": 0, "reasons": Counter(), "skipped": Counter()})
            row["files"] += 1
            for key in ("records", "ingested", "updated", "unchanged", "quarantined"):
                row[key] += getattr(f, key)
            row["reasons"].update(f.reasons)
            row["skipped"].update(f.skipped)
        for row in out.values():
            row["reasons"] = dict(sorted(row["reasons"].items()))
            row["skipped"] = dict(sorted(row["skipped"].items()))
        return dict(sorted(out.items()))

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "as_of": iso(self.as_of),
            "dry_run": self.dry_run,
            "files": len(self.files),
            "files_skipped": sum(f.status == "already ingested" for f in self.files),
            "files_empty": sum(f.status == "empty" for f in self.files),
            "records": self.total("records"),
            "ingested": self.total("ingested"),
            "updated": self.total("updated"),
            "unchanged": self.total("unchanged"),
            "forgotten": self.total("forgotten"),
            "conflicted": self.total("conflicted"),
            "quarantined": self.total("quarantined"),
            "quarantine_reasons": self.reasons,
            "formats": self.per_format(),
            "invisible_chars_removed": self.total("invisible_chars_removed"),
            "duration_s": round(self.duration_s, 3),
            "per_file": [asdict(f) for f in self.files],
            "unrecognised_files": self.unrecognised,
            "waiting_trees": self.waiting_trees,
            # left in the inbox: read once, quarantined as a whole ("unreadable file"), never copied
            "unreadable_files": [f.file for f in self.files if f.status == "unreadable"],
            "unreadable_why": {f.file: f.error for f in self.files if f.status == "unreadable"},
            "notes": {f.file: f.error for f in self.files if f.status == "already ingested" and f.error},
            **({"replayed": self.total("replayed"), "still_failing": self.total("still_failing")}
               if self.replay else {}),
        }


# ============================================================================ entry points
def ingest_paths(lake, paths: Sequence[str | os.PathLike] | None, *, as_of: datetime, dry_run: bool = False,
                 wait_s: float, progress: bool = False, replay: bool = False, run_id: str | None = None,
                 record: bool = True, on_progress: Callable[[str, int, int], None] | None = None,
                 fmt: str | None = None, tenant: str | None = None, agent: str | None = None,
                 user: str | None = None) -> IngestReport:
    """Ingest files or folders (default: the inbox) under the write lock; one transaction per file.
    `record` writes a `runs` row (a nightly run records its own instead); `on_progress("read",
    done, total)` hears each file read (ingested, or skipped as already ingested). `fmt` reads
    every file in that format (``formats.READERS``) instead of the one its name and shape say;
    `tenant` is the tenant of formats that carry none (a Mem0, Letta or Zep export), `agent` and
    `user` their agent and user where the export has none (Letta's passages, a Zep graph)."""
    from .forget import compact_database
    from .formats import READERS

    fmt = fmt.strip().lower() if isinstance(fmt, str) else fmt  # --format Mem0 is mem0
    if fmt is not None and fmt not in READERS:
        raise InputError(f"--format {fmt!r}: one of {', '.join(READERS)}")
    started = time.monotonic()
    discover_snapshots(lake, paths)  # a wrong path fails before waiting for the lake
    with lake.writer(wait_s=wait_s, purpose="ingest") as con:
        # Listed under the lock: a concurrent ingest that held it has taken its files already.
        files, unrecognised = scan_inbox(lake, paths)
        report = IngestReport(run_id=run_id or lake.new_run_id("ingest", as_of), as_of=as_of, dry_run=dry_run,
                              unrecognised=unrecognised, replay=replay, waiting_trees=waiting_trees(lake, paths))
        policy = lake.policy.ingest
        if dry_run:
            # one transaction for all files, rolled back at the end: a later file sees what an
            # earlier one would have written (a.jsonl inserts x, b.jsonl updates it: 1 new, 1 updated)
            con.execute("BEGIN TRANSACTION")
        try:
            for done_paths, path in enumerate(_progress(files, progress), 1):
                named = path_scope(path)  # inbox/tenant=acme/agent=coach/dump.json
                owner = tenant or named.get("tenant")
                if path.is_dir():  # a hot-memory tree: one unit per memory
                    report.files.extend(ingest_tree(lake, con, path, as_of=as_of, run_id=report.run_id, policy=policy,
                                                    dry_run=dry_run, tenant=owner))
                else:
                    done = ingest_file(lake, con, path, as_of=as_of, run_id=report.run_id, policy=policy,
                                       dry_run=dry_run, replay=replay, fmt=fmt, tenant=owner,
                                       scope={"agent_id": agent or named.get("agent_id"),
                                              "user_id": user or named.get("user_id")})
                    if done is not None:
                        report.files.append(done)
                if on_progress:
                    on_progress("read (dry run)" if dry_run else "read", done_paths, len(files))
        finally:
            if dry_run and _in_transaction(con):
                con.execute("ROLLBACK")
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
    if report["unreadable_files"]:
        counts["unreadable files"] = len(report["unreadable_files"])
    if report["invisible_chars_removed"]:
        counts["invisible characters removed"] = report["invisible_chars_removed"]
    skipped = sum(sum(row["skipped"].values()) for row in report["formats"].values())
    if skipped:  # a transcript's pleasantries, a Letta export's deleted passages (per format: the report)
        counts["skipped, not memories"] = skipped
    for fmt, row in report["formats"].items():  # issue 41: what came from other systems' shapes
        if fmt not in ("jsonl", "json", "parquet") and row["ingested"] + row["updated"]:
            counts[f"from {fmt}"] = row["ingested"] + row["updated"]
    if report["quarantine_reasons"].get(MASS_FORGET_HELD):  # issue 37.3: the run's output says so
        counts["forgets held for a user"] = report["quarantine_reasons"][MASS_FORGET_HELD]
    return StepReport("ingest_inbox", as_of, report["run_id"], counts, report)


ingest_step.step_name = "ingest_inbox"  # the name its report, the run summary and the progress lines use


def replay_quarantine(lake, path: Path, *, as_of: datetime, wait_s: float) -> IngestReport:
    """Ingest fixed lines (``export_quarantine``'s file, edited). A line is linked to its quarantine
    row by its ``_quarantine_id`` (else by memory id): a line that now ingests closes its row
    (status ``replayed``); one that fails again keeps its row open with the new reason, detail and
    text, so a bad record is one open row however often it is replayed. Only a failing line with
    no open row to go to gets a row of its own."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return ingest_paths(lake, [path], as_of=as_of, wait_s=wait_s, replay=True)


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
                policy: IngestPolicy, dry_run: bool = False, replay: bool = False, fmt: str | None = None,
                tenant: str | None = None, scope: dict | None = None) -> FileReport | None:
    """Ingest one snapshot file inside one transaction. Re-ingesting a known file changes nothing;
    a file gone since it was listed (someone else took it) is skipped (None)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return ingest_bytes(lake, con, path, data, as_of=as_of, run_id=run_id, policy=policy, dry_run=dry_run,
                        replay=replay, fmt=fmt, tenant=tenant, scope=scope)


def ingest_tree(lake, con: duckdb.DuckDBPyConnection, root: Path, *, as_of: datetime, run_id: str,
                policy: IngestPolicy, dry_run: bool = False, tenant: str | None = None) -> list[FileReport]:
    """Ingest a hot-memory tree (``formats.hottree``): one unit per memory, named by its sub-file,
    each in its own transaction like a file; a tree in the inbox leaves it once every unit is in."""
    label = file_label(lake, root)
    try:
        units = tree_units(root, tenant, lambda ids: lake_versions(con, ids))
    except (ValueError, OSError) as exc:
        data = (root / "index.json").read_bytes() if (root / "index.json").is_file() else b""
        return [_reject_unreadable(con, label, hashlib.sha256(data).hexdigest(), "hottree", str(exc), as_of=as_of,
                                   run_id=run_id, dry_run=dry_run)]
    reports = []
    for unit in units:
        unit_path = root.parent / unit.label.split("#")[0]
        data = ("\n".join(unit.lines) + "\n").encode("utf-8") if unit.lines else b""
        known_by = ("\n".join(unit.plain) + "\n").encode("utf-8") if unit.plain else None
        reports.append(ingest_bytes(lake, con, unit_path, data, as_of=as_of, run_id=run_id, policy=policy, known_by=known_by,
                                    dry_run=dry_run, fmt="jsonl", label=f"{label}/{unit.label.split('/', 1)[1]}"
                                    if "/" in unit.label else label, problem=unit.problem, raw=unit.raw,
                                    shown_format="hottree", retire=False))
    if not dry_run and lake.inbox in root.parents and all(r.status in ("ingested", "already ingested", "empty")
                                                          for r in reports):
        import shutil
        shutil.rmtree(root, ignore_errors=True)
    return reports


def ingest_bytes(lake, con: duckdb.DuckDBPyConnection, path: Path, data: bytes, *, as_of: datetime, run_id: str,
                 policy: IngestPolicy, dry_run: bool = False, replay: bool = False, fmt: str | None = None,
                 tenant: str | None = None, label: str | None = None, problem: str | None = None, raw: str = "",
                 shown_format: str | None = None, retire: bool = True, known_by: bytes | None = None,
                 scope: dict | None = None) -> FileReport:
    """Ingest one file's bytes (`ingest_file`), or one unit of a tree: `label` names it, `problem`
    (with its `raw` text) quarantines the unit whole (a broken pointer), `retire` False leaves the
    path alone (a tree leaves the inbox as a whole), `known_by` is what the unit is known by when
    its bytes carry the lake's versions (a re-read of the same tree is then already ingested)."""
    from .forget import forgotten_ids, scrub_files
    if problem is not None:
        data = json.dumps({"problem": problem, "raw": raw}, ensure_ascii=False).encode("utf-8")
    file_hash = hashlib.sha256(known_by if known_by is not None else data).hexdigest()
    forced = fmt
    fmt = fmt or format_of(path, data)
    salts_for = _salts(lake, dry_run)
    label = redact_text(label or file_label(lake, path), salts_for([])[""])  # names can hold PII too
    shown = shown_format or fmt
    if not data.strip():
        # nothing in it: every empty file has one hash, so it was read as "already ingested"
        if not dry_run and retire and lake.inbox in path.parents:
            path.unlink(missing_ok=True)
        return FileReport(label, file_hash, shown, "empty")
    before = con.execute("SELECT format, strftime(as_of, '%Y-%m-%d') FROM ingested_files WHERE file_hash = ? LIMIT 1",
                         [file_hash]).fetchone()
    if before:
        if not dry_run and retire:
            _retire_from_inbox(lake, path, file_hash, known=True)
        done = FileReport(label, file_hash, shown, "already ingested")
        if forced or (tenant and fmt in NEEDS_TENANT):  # the options a stranger expected to re-read it
            done.error = (f"ingested before ({before[0]}, as of {before[1]}): the same bytes are read once, so "
                          "--tenant and --format do not apply again; `memory-lake forget` what it brought first "
                          "to read it differently")
        return done

    try:
        lines, skipped = read_counted(con, data, fmt, tenant, scope)
    except InputError as exc:
        return _reject_unreadable(con, label, file_hash, shown, str(exc), as_of=as_of, run_id=run_id, dry_run=dry_run)
    if problem is not None:  # the unit as a whole is bad (a broken pointer): one record, quarantined with it
        lines = pl.DataFrame({"line": [1], "raw": [raw], "ok": [True], "problem": [problem]},
                             schema={"line": pl.Int64, "raw": pl.String, "ok": pl.Boolean, "problem": pl.String})
    report = FileReport(label, file_hash, shown, "dry run" if dry_run else "ingested", records=lines.height,
                        skipped=skipped)
    if fmt in policy.history_formats and not policy.history:
        policy = dataclasses.replace(policy, history=True)  # [ingest] history_formats: this file is history
    unwrapped = None
    if replay:
        lines, unwrapped = _unwrap_exported(con, lines)
    threads = _one_thread(con) if lines.height < ONE_THREAD_RECORDS else None
    try:
        # Salts are created inside the file's transaction; parsing works on temp tables only, so it
        # runs outside it (DuckDB tracks transaction-local temp data at a high cost in bulk).
        if not dry_run:  # a dry run is inside the transaction of all its files (ingest_paths)
            con.execute("BEGIN TRANSACTION")
        texts, report.invisible_chars_removed = _redact(con, lines, salts_for)
        if not dry_run:
            con.execute("COMMIT")
        parse_records(con, texts, policy, as_of=as_of)
        assign_ids(con)
        report.unsigned_user = _unsigned_user(lake, con, path, data)
        if not dry_run:
            con.execute("BEGIN TRANSACTION")
        counts = merge_records(con, as_of=as_of, run_id=run_id, label=label, policy=policy,
                               forget_limits=lambda tenants: _forget_limits(lake, tenants))
        kept: list[int] = []
        if replay:
            report.replayed, kept = _replay_rows(con, run_id, unwrapped)
            report.still_failing = len(kept)
        quarantined = _quarantine(con, run_id=run_id, as_of=as_of, label=label, file_hash=file_hash,
                                  replay=replay)
        report.ingested, report.updated, report.unchanged, report.forgotten, report.conflicted = counts
        report.quarantined = sum(quarantined.values())
        report.reasons = quarantined
        if dry_run:
            return report
        # A line that failed again lives on in its quarantine row (and the edited file); it leaves
        # this raw copy blank, so that `forget` finds every copy of it through that row.
        raw_path = _write_raw_copy(lake, file_hash, texts, blank=kept)
        # read at last (given the tenant it lacked, say): its "unreadable file" row is closed
        con.execute("UPDATE quarantine SET status = 'replayed', replayed_run_id = ? WHERE file_hash = ? AND reason = ? "
                    "AND status = 'open'", [run_id, file_hash, UNREADABLE])
        con.execute(
            "INSERT INTO ingested_files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [file_hash, label, shown, str(raw_path.relative_to(lake.root)), report.records, report.ingested,
             report.updated, report.unchanged, report.forgotten, report.quarantined, run_id, as_of],
        )
        con.execute("COMMIT")
    except BaseException:
        if _in_transaction(con) and not dry_run:
            con.execute("ROLLBACK")
        raise
    finally:
        con.execute("; ".join([*(f"DROP VIEW IF EXISTS {view}" for view in TEMP_VIEWS),
                               *(f"DROP TABLE IF EXISTS {table}" for table in TEMP_TABLES)]))
        if threads is not None:
            con.execute(f"SET threads = {threads}")
    if report.forgotten:
        # The forgotten text leaves the raw copies, search log and exports too (DESIGN: forget
        # reaches everything); this file's own raw copy is already redacted and holds no text of it.
        scrub_files(lake, forgotten_ids(con, run_id=run_id, source=label), as_of=as_of, run_id=run_id, con=con)
    crash_point("ingest:file-committed")  # tests/test_crash_safety.py kills here
    if retire:
        _retire_from_inbox(lake, path, file_hash)
    return report


def _one_thread(con: duckdb.DuckDBPyConnection) -> int | None:
    """Run DuckDB on one thread; returns the number of threads to go back to (None: it had one)."""
    (threads,) = con.execute("SELECT current_setting('threads')").fetchone()
    if int(threads) <= 1:
        return None
    con.execute("SET threads = 1")
    return int(threads)


def _reject_unreadable(con: duckdb.DuckDBPyConnection, label: str, file_hash: str, fmt: str, error: str, *,
                       as_of: datetime, run_id: str, dry_run: bool) -> FileReport:
    """A file that cannot be read at all (a damaged Parquet file) is quarantined once as a whole
    and left in place for the operator; its bytes are never copied, since they cannot be redacted."""
    report = FileReport(label, file_hash, fmt, "unreadable", quarantined=1, reasons={UNREADABLE: 1}, error=error)
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


def _retire_from_inbox(lake, path: Path, file_hash: str, known: bool = False) -> None:
    """The original leaves the inbox once its redacted copy is in raw/ (never files elsewhere);
    a `known` file (in ingested_files) had its copy written, though retention may have pruned it."""
    if lake.inbox in path.parents and (known or (lake.raw / f"{file_hash}.jsonl").exists()):
        path.unlink(missing_ok=True)


def _write_raw_copy(lake, file_hash: str, texts: pl.DataFrame, blank: Sequence[int] = ()) -> Path:
    """The redacted copy, written atomically, one record per line and line k holding the
    original's record k (blank where the original was blank, and on the lines in `blank`), so
    that `forget` can find the lines of a memory from its history's source line."""
    target = lake.raw / f"{file_hash}.jsonl"
    tmp = target.with_suffix(".jsonl.tmp")
    last = int(texts["line"].max() or 0)
    if not blank and texts.height == last and texts["line"].is_sorted():
        full = texts.select("text")  # every line a record (no blank lines): as they are
    else:
        full = pl.DataFrame({"line": pl.int_range(1, last + 1, eager=True, dtype=pl.Int64)}).join(
            texts.select("line", "text").filter(~pl.col("line").is_in(list(blank))), on="line", how="left",
        ).with_columns(pl.col("text").fill_null(""))
    # Records hold no raw newlines (lines were split on them; documents are re-serialised).
    full.select("text").write_csv(tmp, include_header=False, quote_style="never")
    os.replace(tmp, target)
    return target


# ============================================================================ 2. redact
def _unsigned_user(lake, con: duckdb.DuckDBPyConnection, path: Path, data: bytes) -> int:
    """Issue 37.4: ``operator: user`` is a user's only in a snapshot a user's edit wrote (signed with
    the lake's key: `store.keys.name_signature`); anywhere else an agent wrote it, and it counts as the
    agent's (so it cannot change or forget an important memory). Returns how many records claimed it."""
    (claimed,) = con.execute("SELECT count(*) FROM snap_valid WHERE operator = 'user'").fetchone()
    if not claimed or lake.signed(data, keys.name_signature(path)):
        return 0
    con.execute("UPDATE snap_parsed SET operator = 'agent' WHERE operator = 'user' AND reason IS NULL")  # snap_valid's rows
    return claimed


def _forget_limits(lake, tenants: Sequence[str]) -> dict[str, tuple]:
    """Each tenant's [publish] numbers an agent's forgets are held by (merge._hold_mass_forgets)."""
    rules = {t: lake.policy.for_tenant(t).publish for t in tenants}
    return {t: (r.max_active_drop, r.min_drop_allowance, r.drain_days, r.max_drain) for t, r in rules.items()}


def _salts(lake, dry_run: bool) -> Callable[[Sequence[str]], dict[str, bytes]]:
    """The tenant salts for redaction. A dry run stores none: a tenant without one gets a salt for
    this run only (its placeholders are shown, never kept)."""
    one_off: dict[str, bytes] = {}

    def salts_for(names: Sequence[str]) -> dict[str, bytes]:
        found = lake.tenant_salts(names, create=not dry_run)
        return {n: found.get(n) or one_off.setdefault(n, secrets.token_bytes(32)) for n in {*names, ""}}

    return salts_for


def _redact(con: duckdb.DuckDBPyConnection, lines: pl.DataFrame, salts_for) -> tuple[pl.DataFrame, int]:
    """Canonical, redacted text per record: (line, ok, is_object, problem, text, changed), and how many
    invisible characters the redaction's plain form dropped from them. `problem` says why a record
    is not a strict JSON object within the depth limit (``snapshot.shape_sql``)."""
    if not lines["line"].is_sorted():
        lines = lines.sort("line")
    con.register("redact_raw", shape_hints(lines))
    try:
        # A JSON text with backslash escapes is re-serialised first (json() unescapes \\uXXXX), so
        # that PII cannot hide behind escapes; other texts are kept byte for byte (and stay in
        # Polars: only the re-serialised ones come back from DuckDB).
        canon = con.execute(
            f"""
            SELECT line, ok, is_object, problem,
                   CASE WHEN is_object AND contains(raw, '\\') THEN json(raw)::VARCHAR END AS rewritten,
                   CASE WHEN is_object THEN json_extract_string(raw, '$.tenant') END AS tenant
            FROM (SELECT *, problem IS NULL AS is_object FROM ({shape_sql("redact_raw")}))
            ORDER BY line
            """
        ).pl()
    finally:
        con.unregister("redact_raw")
    if canon.height == lines.height and (canon["line"] == lines["line"]).all():
        canon = canon.with_columns(text=pl.coalesce("rewritten", lines["raw"]))
    else:  # lines numbered twice (no reader does that): matched by number
        canon = canon.join(lines.select("line", "raw"), on="line", how="left").with_columns(
            text=pl.coalesce("rewritten", "raw")).drop("raw")
    canon = canon.drop("rewritten").select("line", "ok", "is_object", "problem", "text", "tenant")
    bad = (canon["problem"] == "not valid JSON").fill_null(False).arg_true()
    if bad.len():  # only the bad lines are read again
        canon = canon.with_columns(problem=canon["problem"].scatter(bad, [_json_error(t) for t in canon["text"].gather(bad)]))
    removed = count_invisible(canon["text"])
    redacted = redact_records(canon["text"], canon["tenant"], salts_for)
    # `changed`: the texts redaction rewrote, the only ones parse_records checks for JSON again
    return canon.with_columns(text=redacted, changed=(redacted != canon["text"]).fill_null(True)).drop("tenant"), removed


# Unicode's invisible (default-ignorable) characters: a superset of those the plain form drops, and
# rare in text, so that only the distinct ones found are put to the rule (text.without_hidden_characters).
_IGNORABLE = r"\p{Default_Ignorable_Code_Point}"


def count_invisible(texts: pl.Series) -> int:
    """How many characters of `texts` the plain form (redaction's first step) removes as invisible:
    tag characters, bidi controls, zero-width spaces and joiners, soft hyphens ... Folded spaces
    and hyphens are not counted (they are replaced, not removed)."""
    texts = beyond_ascii(texts)  # ASCII holds none of them
    texts = texts.filter(texts.str.contains(_IGNORABLE).fill_null(False))  # rare: lists only for those
    found = texts.str.extract_all(_IGNORABLE).explode().drop_nulls()
    if found.is_empty():
        return 0
    return sum(n for char, n in found.value_counts().iter_rows() if not without_hidden_characters(char))


def _json_error(text: str | None) -> str:
    """Where a record stops being JSON, as Python's reader says it ("not valid JSON: Expecting ','
    delimiter at column 45"), so that a long line can be fixed; its text is not repeated."""
    import json

    try:
        json.loads(text or "")
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        return f"not valid JSON: {exc.msg}{'' if exc.msg.endswith(' at') else ' at'} {where}"
    except (ValueError, RecursionError):
        pass
    return "not valid JSON"


# ============================================================================ quarantine
def _quarantine(con: duckdb.DuckDBPyConnection, *, run_id: str, as_of: datetime, label: str,
                file_hash: str, replay: bool = False) -> dict[str, int]:
    """Every rejected record to `quarantine` with file, line, reason and its redacted text; in a
    `replay`, not the lines in ``replay_kept`` (their open rows were brought up to date) and the
    text without the ``_quarantine_id`` export added. Returns the rejected records per reason (all)."""
    rows = con.execute(
        "SELECT reason, count(*) FROM snap_parsed WHERE reason IS NOT NULL GROUP BY reason ORDER BY reason"
    ).fetchall()
    if not rows:
        return {}  # nothing rejected: the insert, whose planning costs more than the count, is skipped
    skipped = "AND p.line NOT IN (SELECT line FROM replay_kept)" if replay else ""
    text = _without_link_sql("t.text") if replay else "t.text"
    con.execute(
        f"""
        INSERT INTO quarantine (quarantine_id, run_id, as_of, file, file_hash, line, reason, detail, tenant,
                                memory_id, raw)
        SELECT (SELECT coalesce(max(quarantine_id), 0) FROM quarantine) + row_number() OVER (ORDER BY p.line),
               $run_id, $as_of, $label, $file_hash, p.line, p.reason, p.detail, nullif(p.tenant, ''), p.id, {text}
        FROM snap_parsed p JOIN snap_texts t USING (line) WHERE p.reason IS NOT NULL {skipped}
        """,
        {"run_id": run_id, "as_of": as_of, "label": label, "file_hash": file_hash},
    )
    return dict(rows)


def _unwrap_exported(con: duckdb.DuckDBPyConnection, lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Replay: a line written by ``export_quarantine`` as {"_quarantine_id": N, "_raw": text} is read
    as its text. Returns (the lines, (line, quarantine_id) of the unwrapped ones)."""
    con.register("replay_lines", lines)
    try:
        read = con.execute(
            rf"""
            SELECT line, CASE WHEN wrapped THEN raw::JSON ->> '$._raw' ELSE raw END AS raw, ok, problem,
                   CASE WHEN wrapped THEN try_cast(raw::JSON ->> '$._quarantine_id' AS BIGINT) END AS quarantine_id
            FROM (SELECT *, coalesce(CASE WHEN ok AND json_valid(raw) AND regexp_matches(raw, '^\s*\{{')
                                          THEN list_sort(json_keys(raw)) = {WRAPPED_KEYS!r}
                                               AND json_type(raw, '$._raw') = 'VARCHAR' END, false) AS wrapped
                  FROM replay_lines)
            ORDER BY line
            """
        ).pl()
    finally:
        con.unregister("replay_lines")
    return read.drop("quarantine_id"), read.filter(pl.col("quarantine_id").is_not_null()).select("line", "quarantine_id")


def _replay_rows(con: duckdb.DuckDBPyConnection, run_id: str, unwrapped: pl.DataFrame) -> tuple[int, list[int]]:
    """Replay: link each line to its open quarantine row (``_quarantine_id``; else, for a line with
    no link, the memory id), close the rows of lines that now ingest and bring the rows of lines
    that fail again up to date (reason, detail, text), so no bad record gets a second open row.
    Returns (rows closed, lines whose row was kept: ``_quarantine`` adds no row for them)."""
    params = {"run_id": run_id}
    con.register("replay_unwrapped", unwrapped)
    try:
        con.execute(
            f"""
            CREATE OR REPLACE TEMP TABLE replay_links AS
            SELECT p.line, p.reason, p.id,
                   coalesce(u.quarantine_id, p.quarantine_id,
                            try_cast(regexp_extract(t.text, '{QUARANTINE_ID_RE}', 1) AS BIGINT)) AS quarantine_id
            FROM snap_parsed p JOIN snap_texts t USING (line) LEFT JOIN replay_unwrapped u USING (line)
            """
        )
    finally:
        con.unregister("replay_unwrapped")
    open_rows = "SELECT quarantine_id FROM quarantine WHERE status = 'open' AND run_id <> $run_id"
    (closed,) = con.execute(
        f"""
        UPDATE quarantine SET status = 'replayed', replayed_run_id = $run_id
        WHERE quarantine_id IN ({open_rows}) AND (
              quarantine_id IN (SELECT quarantine_id FROM replay_links WHERE reason IS NULL)
           OR memory_id IN (SELECT v.id FROM snap_valid v JOIN replay_links l USING (line)
                            WHERE l.reason IS NULL AND l.quarantine_id IS NULL))
        """,
        params,
    ).fetchone()
    # One line per open row (the first, should a row's line be there twice); the others are new rows.
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE replay_kept AS
        SELECT quarantine_id, min(line) AS line
        FROM (SELECT l.line, coalesce(l.quarantine_id,
                                      (SELECT min(q.quarantine_id) FROM quarantine q
                                       WHERE q.memory_id = l.id AND q.quarantine_id IN ({open_rows}))) AS quarantine_id
              FROM replay_links l WHERE l.reason IS NOT NULL)
        WHERE quarantine_id IN ({open_rows})
        GROUP BY quarantine_id
        """,
        params,
    )
    con.execute(
        f"""
        UPDATE quarantine SET reason = p.reason, detail = p.detail, raw = {_without_link_sql("t.text")},
                              tenant = coalesce(nullif(p.tenant, ''), quarantine.tenant),
                              memory_id = coalesce(p.id, quarantine.memory_id)
        FROM replay_kept k JOIN snap_parsed p USING (line) JOIN snap_texts t USING (line)
        WHERE quarantine.quarantine_id = k.quarantine_id
        """
    )
    kept = [line for (line,) in con.execute("SELECT line FROM replay_kept ORDER BY line").fetchall()]
    return int(closed), kept


def _without_link_sql(text: str) -> str:
    """SQL: `text` without the ``_quarantine_id`` export gave it, so that a row keeps the record
    as its writer (or fixer) wrote it: a key in front (not valid JSON) is cut off byte for byte; a
    valid object loses the key (``json_merge_patch`` with null), its text minified."""
    front = r"""'^(\s*\{)\s*"_quarantine_id"\s*:\s*\d+\s*,?'"""
    return (f"CASE WHEN regexp_matches({text}, {front}) THEN regexp_replace({text}, {front}, '\\1') "
            f"WHEN NOT json_valid({text}) THEN {text} "  # each WHEN sees only the rows left: no parse errors
            f"WHEN {not_strict_sql(text)} OR json_type({text}) <> 'OBJECT' "
            f"OR NOT json_exists({text}, '$._quarantine_id') THEN {text} "
            f"ELSE json_merge_patch({text}, '{{\"_quarantine_id\": null}}')::VARCHAR END")


def export_quarantine(lake, output: Path, *, reason: str | None = None, overwrite: bool = False) -> int:
    """Write open quarantined lines to `output` for fixing, each carrying its ``_quarantine_id``
    so that ``replay_quarantine`` links it back to its row: a JSON object gets the key; one that
    is not valid JSON (a trailing comma, a missing quote ...) gets it in front, its text kept as it
    was, so that the fault is still there to fix; a line that is no object at all is written as
    {"_quarantine_id": N, "_raw": "<the line>"}. An existing `output` is replaced only with
    `overwrite` (it may hold edits in progress). Unreadable files (no line to fix) are left out."""
    output = Path(output)
    if output.exists() and not overwrite:
        raise InputError(f"{output} already exists (it may hold edits in progress): "
                         "choose another file, or pass --force to replace it")
    where = f"status = 'open' AND reason <> '{UNREADABLE}'" + (" AND reason = ?" if reason else "")
    is_object = "regexp_matches(raw, '^\\s*\\{')"
    frame = lake.sql(
        f"""
        SELECT CASE WHEN json_valid(raw) AND {is_object} AND NOT {not_strict_sql("raw")}
                    THEN json_merge_patch(raw, json_object('_quarantine_id', quarantine_id))::VARCHAR
                    WHEN regexp_matches(raw, '^\\s*\\{{\\s*"_quarantine_id"\\s*:') THEN raw
                    WHEN {is_object}
                    THEN regexp_replace(raw, '^\\s*\\{{', '{{"_quarantine_id":' || quarantine_id || ',')
                    ELSE json_object('_quarantine_id', quarantine_id, '_raw', raw)::VARCHAR END AS line
        FROM quarantine WHERE {where} ORDER BY quarantine_id
        """,
        [reason] if reason else None,
    )
    tmp = output.with_name(output.name + ".tmp")
    body = "\n".join(frame["line"].to_list())
    tmp.write_text(body + ("\n" if body else ""), encoding="utf-8")
    os.replace(tmp, output)
    return frame.height
