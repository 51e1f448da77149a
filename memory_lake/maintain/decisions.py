"""Decisions made while the lake is busy: queued as files, applied first by the next run.

DESIGN "The way data flows": resolve / unmerge / edit / forget are applied at once when the lake
is free, else queued in ``inbox/decisions/`` and applied first by the next run. Agents and
analysts never write the DuckDB file directly, so a decision is a small JSON file, written under
a temporary name and renamed (a run never sees half of one). Files are applied in name order
(named ``<as_of>-<kind>-<uuid8>.json``, so name order is request order) and then moved to
``inbox/decisions/applied/``, which keeps them as the audit of who asked for what.

A decision is checked before it is queued, against the latest published version (the live file
is busy): resolving a conflict that version does not hold, or holds as resolved, is refused at
once. The lake may still move on before the next run, so a decision the lake refuses when it is
applied (an unknown id, a conflict already resolved, a forgotten memory, a canonical id with no
merge left to undo) is moved to ``inbox/decisions/failed/``, the file's object with a ``failure``
member added (reason, run id, as_of), and counted as ``failed`` with its reason in the step
report: it is never applied later and never retried.

Kinds known so far: ``forget`` (``{"kind": "forget", "ids", "tenant", "agent", "user", "operator",
"reason", "requested_at"}``) and ``resolve`` (``{"kind": "resolve", "conflict_id", "take", "value",
"operator", "requested_at"}``) and ``unmerge`` (``{"kind": "unmerge", "canonical_id", "operator",
"requested_at"}``). A manual edit needs no decision file: it is a snapshot, and waits in
the inbox itself. A file of an unknown kind, or a malformed one (bad JSON, missing reason ...),
stays where it is and is reported (``left``) on every run until someone fixes or removes it.

No raw PII goes into a decision file: see ``queue.py``, which writes them.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from ..store import iso
from ..store import InputError, NotApplicable
from ..store import Policy
from .queue import apply_or_queue, canonical_decision, pending_decisions, queue_decision  # noqa: F401 (the queue's side)

APPLIED_DIR = "applied"
FAILED_DIR = "failed"
UNKNOWN_KIND = "unknown kind"
BAD_DECISION = "bad decision"
UNSIGNED = "not signed by the lake's key"
from ..store import StepReport

def apply_decisions(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """The nightly step that runs first: apply every queued decision file, in name order.

    A forget is applied with the run's `as_of` and run id, its history rows name the decision file
    as their source, and the files of all forgotten memories are scrubbed and the database
    compacted once for the whole batch (inside a run's hold the compaction stays pending, and the
    run calls ``ingest.compact_database(lake, only_if_pending=True)`` after its hold ends). Each
    applied file moves to ``inbox/decisions/applied/``; one the lake refuses (NotApplicable: an
    unknown id, a conflict already resolved, a forgotten memory) moves to ``failed/`` with its
    reason and is listed under ``details["failed"]``; a malformed one stays and is listed under
    ``details["left"]``. Applying the same forget again changes nothing (its memories are
    already deleted).
    """
    from ..ingest import compact_database, scrub_files
    from .forget import forget

    run_id = run_id or lake.new_run_id("decisions", as_of)
    report = StepReport("apply_decisions", as_of, run_id)
    files = pending_decisions(lake)
    if not files:
        return report
    applied: list[dict[str, Any]] = []
    failed: list[dict[str, str]] = []
    left: list[dict[str, str]] = []
    with lake.hold("apply decisions"):
        for path in files:  # one decision at a time, in request order
            decision, problem = _read(path)
            if problem:
                left.append({"file": path.name, "reason": problem})
                continue
            if not lake.signed(canonical_decision(decision), decision.get("signature")):
                # issue 37.4: hand-written into the inbox (an agent acting as the user): never applied
                reason = (f"{UNSIGNED}: queue decisions with the CLI or the Python API (memory-lake forget, "
                          "conflicts resolve, unmerge), which sign them with the lake's key")
                failed.append({"file": path.name, "kind": decision["kind"], "reason": reason})
                _fail(lake, path, decision, reason, as_of=as_of, run_id=run_id)
                continue
            try:
                if decision["kind"] == "unmerge":
                    from .dedup import unmerge

                    outcome = unmerge(lake, decision.get("canonical_id"), operator=decision.get("operator") or "user",
                                      as_of=as_of, run_id=run_id, source=f"inbox/decisions/{path.name}")
                    applied.append({"file": path.name, "kind": "unmerge", **outcome, "forgotten": [], "refused": [],
                                    "already_deleted": []})
                elif decision["kind"] == "resolve":
                    from .conflicts import resolve_conflict

                    outcome = resolve_conflict(lake, decision.get("conflict_id"), decision.get("take"),
                                               value=decision.get("value"),
                                               operator=decision.get("operator") or "user", as_of=as_of,
                                               run_id=run_id, source=f"inbox/decisions/{path.name}")
                    applied.append({"file": path.name, "kind": "resolve", **outcome, "forgotten": [], "refused": [],
                                    "already_deleted": []})
                else:
                    outcome = forget(lake, ids=decision.get("ids"), tenant=decision.get("tenant"),
                                     agent=decision.get("agent"), user=decision.get("user"),
                                     operator=decision.get("operator") or "user", reason=decision.get("reason"),
                                     as_of=as_of, run_id=run_id, source=f"inbox/decisions/{path.name}",
                                     scrub=False, compact=False, record=False)
                    applied.append({"file": path.name, "kind": "forget",
                                    **{k: outcome[k] for k in ("forgotten", "refused", "already_deleted", "unknown")}})
            except NotApplicable as exc:
                failed.append({"file": path.name, "kind": decision["kind"], "reason": str(exc)})
                _fail(lake, path, decision, str(exc), as_of=as_of, run_id=run_id)
                continue
            except InputError as exc:
                left.append({"file": path.name, "reason": f"{BAD_DECISION}: {exc}"})
                continue
            _archive(lake, path)
        # One scrub and one compaction for the batch: both pass over every file / the whole lake.
        ids = sorted({i for a in applied for i in a["forgotten"] + a["already_deleted"]})
        scrubbed = scrub_files(lake, ids, as_of=as_of, run_id=run_id) if ids else {}
    forgotten = sum(len(a["forgotten"]) for a in applied)
    report.counts = {"applied": len(applied), "forgotten": forgotten,
                     "resolved": sum(a["kind"] == "resolve" for a in applied),
                     "refused": sum(len(a["refused"]) for a in applied), "failed": len(failed), "left": len(left)}
    report.details = {"applied": applied, "failed": failed, "left": left, "files": scrubbed}
    if forgotten:
        # After the hold, whose shared connection closes only when it ends; inside a run the
        # compaction stays pending and the run does it after its own hold.
        done = compact_database(lake)
        scrubbed["database"] = [lake.db_path.name] if done else []
        report.details["compaction"] = "done" if done else "pending"
    return report


def _read(path: Path) -> tuple[dict[str, Any], str | None]:
    """The decision in `path`, or why it cannot be applied."""
    try:
        decision = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return {}, f"{BAD_DECISION}: not a JSON document ({type(exc).__name__})"
    if not isinstance(decision, dict):
        return {}, f"{BAD_DECISION}: not a JSON object"
    kind = decision.get("kind")
    if kind not in ("forget", "resolve", "unmerge"):
        return decision, f"{UNKNOWN_KIND} {kind!r}"
    return decision, None


def _archive(lake, path: Path) -> None:
    """Move an applied decision to ``applied/``, never over a different file of the same name."""
    folder = lake.decisions / APPLIED_DIR
    folder.mkdir(exist_ok=True)
    target = folder / path.name
    if target.exists() and target.read_bytes() != path.read_bytes():
        n = 1
        while (folder / f"{path.stem}-{n}{path.suffix}").exists():
            n += 1
        target = folder / f"{path.stem}-{n}{path.suffix}"
    os.replace(path, target)


def _fail(lake, path: Path, decision: dict[str, Any], reason: str, *, as_of: datetime, run_id: str) -> None:
    """Move a decision the lake refused to ``failed/``, with why, when and in which run (written
    whole under a temporary name first; should the run stop before the original goes, the next
    run refuses it again and writes the file anew)."""
    folder = lake.decisions / FAILED_DIR
    folder.mkdir(exist_ok=True)
    tmp = folder / f".{path.name}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({**decision, "failure": {"reason": reason, "as_of": iso(as_of), "run_id": run_id}}, handle,
                  ensure_ascii=False, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, folder / path.name)
    path.unlink()
