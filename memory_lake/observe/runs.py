"""Run bookkeeping shared by the nightly flow and the CLI: the ordered nightly steps (one list, which
the Prefect flow wires as tasks and `run nightly --no-prefect` calls directly), timing a step, the
HTML report step, and the `runs` row that records what a run did - also when it failed."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable

from ..store import iso
from ..maintain import failed_summaries
from .forget import record_report
from ..store import MemoryLakeError
from .health import compute_health, latest_health
from .notify import run_status
from ..store import StepReport

REPORTS_ENV = "MEMORY_LAKE_REPORTS"


class RunFailed(MemoryLakeError):
    """A run stopped on an error; its `runs` row (status failed) records the step and the error."""


class PublishBlocked(MemoryLakeError):
    """The run finished but a failed check blocked its publish (CURRENT left as it was); the `runs`
    row (status blocked) and `summary` say which checks failed."""

    exit_code = 4

    def __init__(self, message: str, summary: dict[str, Any] | None = None):
        super().__init__(message)
        self.summary = summary or {}


def blocked_message(summary: dict[str, Any]) -> str:
    """One line for a blocked publish: the run, the failed checks and what CURRENT still is."""
    publish = summary.get("publish") or {}
    current = publish.get("current")
    return (f"nightly run {summary['run_id']} published nothing: blocked by failed check(s) "
            f"{', '.join(publish.get('failed') or []) or '(unnamed)'}; "
            + (f"CURRENT still points at {current}" if current else "nothing is published yet")
            + (" and no longer passes them (the policy changed since; nothing else did)"
               if publish.get("current_invalid") else "")
            + f"; see the report {summary.get('report')}")


def reports_dir(path: str | os.PathLike | None = None, lake=None) -> Path:
    """Where HTML reports go: the argument, else $MEMORY_LAKE_REPORTS, else the lake's own
    ``<lake>/reports`` (never the current folder: two lakes would overwrite each other's reports)."""
    default = lake.root / "reports" if lake is not None else "reports"
    return Path(path or os.environ.get(REPORTS_ENV) or default).expanduser().resolve()


# Told as each timed step starts and ends: ``listener(event, step_name, result)`` with event
# "start" (result None), "end" (the step's dict) or "failed" (None). The CLI prints a line each.
STEP_LISTENERS: list[Callable[[str, str, dict[str, Any] | None], None]] = []


def timed(step: Callable[..., StepReport], *args, **kwargs) -> dict[str, Any]:
    """Run a step and return its report as a dict with its wall duration (operational metadata,
    never an input to a rule); STEP_LISTENERS hear when it starts and ends, by the name the step's
    report carries (``step_name`` where it differs from the function's: ingest_step -> ingest_inbox)."""
    name = getattr(step, "step_name", None) or getattr(step, "__name__", str(step))
    for listener in list(STEP_LISTENERS):
        listener("start", name, None)
    started = time.monotonic()
    try:
        report = step(*args, **kwargs)
    except BaseException as exc:
        # the run's failure record names the step (Prefect hands the same exception to the flow)
        if isinstance(exc, Exception) and not hasattr(exc, "failed_step"):
            try:
                exc.failed_step = name
            except AttributeError:
                pass
        for listener in list(STEP_LISTENERS):
            listener("failed", name, {"duration_s": round(time.monotonic() - started, 3)})
        raise
    result = {**report.as_dict(), "duration_s": round(time.monotonic() - started, 3)}
    for listener in list(STEP_LISTENERS):
        listener("end", name, result)
    return result


# The maintenance steps a run survives: when one raises as a whole (a scope of it that raises the
# step records itself and goes on), the run records the error (`step_errors`), skips the step for
# tonight and goes on; the gate still checks what is published, and the run ends degraded. Ingest,
# staging, the checks, the publish and the report are not among them: a failure there fails the run.
# The target sync after the publish is (issue 38.4): a vector store never fails the lake's run.
ISOLATED_STEPS = frozenset({"apply_events", "enforce_tiers", "index", "dedup", "extract_entities", "summarize",
                            "index_summaries", "snapshot_health", "patrol", "sync_targets"})


def skipped_step(name: str, as_of: datetime, run_id: str, exc: Exception) -> dict[str, Any]:
    """The dict of an isolated step that raised: no counts, the error (with its traceback)."""
    from ..store import StepReport, step_error

    report = StepReport(name, as_of, run_id, details={"skipped": "the step raised; tonight it did nothing"})
    report.errors = [step_error(name, exc)]
    return {**report.as_dict(), "duration_s": 0.0}


def record_step_errors(lake, run_id: str, as_of: datetime, step: dict[str, Any]) -> None:
    """Write a step's errors to `step_errors`, each traceback to a file under the lake
    (``logs/step-errors/<run_id>/<step>-<n>.txt``); in the step dict the traceback becomes that path."""
    errors = step.get("errors") or []
    if not errors:
        return
    folder = lake.root / "logs" / "step-errors" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for n, error in enumerate(errors, 1):
        path = folder / f"{error['step']}-{n}.txt"
        if "traceback" in error:
            path.write_text(error.pop("traceback"), encoding="utf-8")
            error["traceback_file"] = str(path.relative_to(lake.root))
        rows.append([run_id, as_of, error["step"], error.get("tenant"), error.get("agent_id"), error.get("user_id"),
                     error.get("session_id"), error.get("item"), error["error"], error.get("traceback_file")])
    with lake.writer(purpose="record step errors") as con:
        con.execute("DELETE FROM step_errors WHERE run_id = ? AND step = ?", [run_id, step["name"]])
        con.executemany("INSERT INTO step_errors VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


def write_report(lake, as_of: datetime, run_id: str, steps: list[dict[str, Any]] | None = None,
                 out_dir: str | os.PathLike | None = None) -> StepReport:
    """Render ``reports/<date>/<run id>.html`` (and latest.html, index.html) from the stored health snapshot, the quarantine and
    the run's steps (or, outside a run, the last publish)."""
    from .report import render_report

    steps = steps or []
    health = latest_health(lake)
    if health is None or health["as_of"] != iso(as_of):
        with lake.reading() as (con, _source, _note):  # the published version while a run holds the lake
            health = compute_health(con, as_of, lake.policy)
    quarantine = dict(lake.sql("SELECT reason, count(*) FROM quarantine WHERE status = 'open' "
                               "GROUP BY reason ORDER BY 2 DESC, 1").rows())
    conflicts = lake.sql(
        "SELECT conflict_id, kind, memory_id, other_memory_id, field, incoming_operator, created_at "
        "FROM conflicts WHERE status = 'open' ORDER BY created_at, source_file, source_line, field LIMIT 20").to_dicts()
    publish = next((s["details"] for s in steps if s["name"] in ("publish_export", "publish")), None)
    if publish is None and not steps:
        publish = last_publish(lake)
    run = {"run_id": run_id, "status": run_status(steps) if steps else "ok",
           "duration_s": round(sum(s.get("duration_s", 0) for s in steps), 3),
           "steps": [{"name": s["name"], "duration_s": s.get("duration_s"), "summary": s["summary"],
                      **({"errors": s["errors"]} if s.get("errors") else {})} for s in steps]}
    if not steps:
        # rendered outside a run (`memory-lake report`): the page of that day would lose the
        # nightly's steps; it shows the latest run's steps, saying whose they are
        run |= _last_run_steps(lake, as_of)
    if publish is not None:
        publish = {**publish, "rolled_back": rollback_of_current(lake, publish.get("current"))}
    with lake.reading() as (con, _source, _note):
        from .reportingest import lake_formats

        ingest = {"run": next((s["details"] for s in steps if s["name"] == "ingest_inbox"), None),
                  "lake": lake_formats(con)}
        summaries = failed_summaries(con)  # not published: the previous summary stays
        counts = next((s["counts"] for s in steps if s["name"] == "summarize"), None)
        made = {**(counts or {}), "regenerated": None if counts is None else counts.get("regenerated", 0),
                "published": _published_summaries(con)}
    language = lake.policy.report.language
    extra = run_alerts(publish, steps, language)
    if extra and health.get("overall"):
        health = {**health, "overall": {**health["overall"], "alerts": [*health["overall"]["alerts"], *extra]}}
    from .history import health_history, run_history, run_summary
    from .report import alert_groups, verdict

    alerts = [a for _, a in alert_groups(health)[0]]  # the lake's, and a tenant's only where they add to it
    folder = reports_dir(out_dir, lake)
    from .reportindex import report_relpath, write_index

    last_n = lake.policy.report.history_runs
    page_path = folder / report_relpath(str(health.get("as_of", "")), run_id)
    counts = {"alert_count": len(alerts), "warning_count": sum(a.get("level") == "warning" for a in alerts),
              "headline": verdict(run, publish, health)[1]}
    current = None
    if steps:
        current = run_summary(run_id, "nightly", as_of, steps)
        current.update(counts, report=str(page_path))
    with lake.reading() as (con, _source, _note):
        history = {"health": health_history(con, as_of, last_n), "runs": run_history(con, as_of, last_n, current),
                   "last_n": last_n}
        every_run = run_history(con, as_of, None, current)
    path = render_report(health, publish=publish, quarantine=quarantine, run=run, out_dir=folder,
                         conflicts=conflicts, summaries=summaries, lake_root=lake.root, summaries_made=made,
                         history=history, language=language, latest=bool(steps), ingest=ingest)
    record_report(lake, path)  # a later forget reaches the reports folder (store.REPORT_FOLDERS)
    record_report(lake, folder / "latest.html")
    index = write_index(folder, every_run, report_css(), lake.root)
    where = {"path": str(path), "index": str(index)}
    if steps:
        where["latest"] = str(folder / "latest.html")
    return StepReport("write_report", as_of, run_id, {"alerts": len(alerts)}, {**where, **counts})


def refresh_index(lake, as_of: datetime, out_dir: str | os.PathLike | None = None) -> Path:
    """Write ``reports/index.html`` again from the ``runs`` table (after a run's row is recorded)."""
    from .history import run_history
    from .reportindex import write_index

    with lake.reading() as (con, _source, _note):
        every_run = run_history(con, as_of, None)
    return write_index(reports_dir(out_dir, lake), every_run, report_css(), lake.root)


def run_alerts(publish: dict[str, Any] | None, steps: list[dict[str, Any]], language: str = "en") -> list[dict[str, Any]]:
    """The alerts of the run itself, known only after its publish: a blocked publish (which checks),
    scopes the publish gate held, publish targets that failed."""
    from .alerts import make_alert

    alerts = []
    if publish and publish.get("status") == "blocked":
        failed = list(publish.get("failed") or [])
        alerts.append(make_alert("publish_blocked", language, count=len(failed) or 1,
                                 failed=", ".join(failed) or "the current version no longer passes",
                                 current=publish.get("current") or "nothing (no version yet)"))
    if publish and publish.get("held"):
        alerts.append(held_alert(publish["held"], language))
    for step in steps:
        if step["name"] == "sync_targets":
            for target in (step.get("details") or {}).get("targets") or []:
                if target.get("state") in ("failed", "invalid"):
                    alerts.append(make_alert("target_failed", language, name=target.get("name"),
                                             error=target.get("error") or target.get("state")))
    return alerts


def report_css() -> str:
    from .report import _CSS
    return _CSS


def held_alert(held: list[dict[str, Any]], language: str = "en") -> dict[str, str]:
    """The alert for scopes the publish gate held (issue 37.3): which, and what to do."""
    from .alerts import make_alert

    names = ", ".join("/".join(p or "_" for p in (h["tenant"], h["agent_id"], h["user_id"])) for h in held[:5])
    more = f" and {len(held) - 5} more" if len(held) > 5 else ""
    return make_alert("scopes_held", language, count=len(held), names=names + more)


def _published_summaries(con) -> int:
    """How many summaries are published now (``summary_state``; 0 where the table is missing)."""
    if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'summary_state'").fetchone()[0]:
        return 0
    return con.execute("SELECT count(*) FROM summary_state WHERE status = 'published'").fetchone()[0]


def rollback_of_current(lake, current: str | None) -> dict[str, Any] | None:
    """When CURRENT (``"v<N>"``) is older than the newest published version, the rollback that put
    it there (the latest ``rollbacks`` row to it): from, to, as_of, by, reason. None otherwise."""
    if not current or not current[1:].isdigit():
        return None
    frame = lake.sql(
        "SELECT r.as_of, r.from_version, r.to_version, r.rolled_back_by, r.reason FROM rollbacks r "
        "WHERE r.to_version = ? AND r.to_version < (SELECT max(version) FROM publishes WHERE status = 'published') "
        "ORDER BY r.as_of DESC, r.run_id DESC LIMIT 1", [int(current[1:])])
    if frame.height == 0:
        return None
    row = frame.row(0, named=True)
    return {"from": f"v{row['from_version']}" if row["from_version"] is not None else None,
            "to": f"v{row['to_version']}", "as_of": iso(row["as_of"]), "by": row["rolled_back_by"],
            "reason": row["reason"]}


def _last_run_steps(lake, as_of: datetime) -> dict[str, Any]:
    """{"steps", "steps_of"} of the latest nightly or ingest run as of `as_of`, or {}."""
    frame = lake.sql("SELECT run_id, kind, as_of, status, report FROM runs WHERE kind IN ('nightly', 'ingest') "
                     "AND as_of <= ? ORDER BY as_of DESC, run_id DESC LIMIT 1", [as_of.replace(tzinfo=None)])
    if frame.height == 0:
        return {}
    row = frame.row(0, named=True)
    try:
        steps = json.loads(row["report"] or "{}").get("steps") or {}
    except ValueError:
        return {}
    return {"steps": [{"name": name, "duration_s": None, "summary": step.get("summary")} for name, step in steps.items()],
            "steps_of": f"the last {row['kind']} run, {row['run_id']} as of {iso(row['as_of'])} ({row['status']})"}


def last_publish(lake) -> dict[str, Any] | None:
    """The most recent publish outcome, in the shape the report shows."""
    # the same as_of twice (a rerun of one night): the higher version is the later one
    frame = lake.sql("SELECT version, status, failed, manifest FROM publishes "
                     "ORDER BY as_of DESC, coalesce(version, 0) DESC, run_id DESC LIMIT 1")
    if frame.height == 0:
        return None
    row = frame.row(0, named=True)
    manifest = json.loads(row["manifest"]) if row["manifest"] else {}
    version = f"v{row['version']}" if row["version"] else None
    current = lake.exports / "CURRENT"
    return {"status": row["status"], "version": version,
            "current": os.readlink(current) if current.is_symlink() else None,
            "path": str(lake.exports / version) if version else None, "failed": list(row["failed"] or []),
            "checks": manifest.get("checks", [])}


def record_run(lake, run_id: str, kind: str, as_of: datetime, steps: list[dict[str, Any]],
               error: BaseException | None = None) -> dict[str, Any]:
    """One `runs` row for the whole run; returns the run summary. With `error` the run failed:
    status ``failed``, and the summary names the step that failed and the error."""
    from .history import run_summary

    summary = run_summary(run_id, kind, as_of, steps)
    if error is not None:
        summary["status"] = "failed"
    if error is not None:
        summary["failed_step"] = getattr(error, "failed_step", None)
        message = (str(error).strip().splitlines() or [""])[0]
        summary["error"] = f"{type(error).__name__}: {message}" if message else type(error).__name__
    with lake.writer(purpose="record run") as con:
        con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)",
                    [run_id, kind, as_of, summary["status"], summary["duration_s"],
                     json.dumps(summary, ensure_ascii=False, default=str)])
    return summary


def record_failed_run(lake, run_id: str, kind: str, as_of: datetime, steps: list[dict[str, Any]],
                      error: BaseException) -> RunFailed:
    """After a step raised: remove the half-written staging folder, record the `runs` row with
    status failed, and return the one-line error to raise (CURRENT is left as it was)."""
    from ..publish import current_version, remove_staging

    remove_staging(lake)
    summary = record_run(lake, run_id, kind, as_of, steps, error)
    current = current_version(lake)
    published = f"CURRENT still points at {current}" if current else "nothing is published yet"
    where = f" in step {summary['failed_step']}" if summary.get("failed_step") else ""
    failed = RunFailed(f"{kind} run {run_id} failed{where}: {summary['error']}; {published}; the runs table "
                       f"records it (MEMORY_LAKE_DEBUG=1 shows the traceback)")
    failed.summary = summary
    return failed


# --- the nightly run, in order ------------------------------------------------------------------

@dataclass(frozen=True)
class NightlyStep:
    """One step of the nightly run. `run(lake, as_of, run_id, done, reports_dir)` returns the timed
    step dict; `done` holds the earlier steps' dicts by name, in order. `io`: the step reads or
    writes files outside the database (inbox, reports), so an orchestrator may retry it."""

    name: str
    run: Callable[..., dict[str, Any]]
    io: bool = False


def _apply_decisions(lake, as_of, run_id, done, reports):
    from ..maintain import apply_decisions
    return timed(apply_decisions, lake, as_of, run_id=run_id)


def _ingest_inbox(lake, as_of, run_id, done, reports):
    from ..ingest import ingest_step
    return timed(ingest_step, lake, as_of, run_id=run_id)


def _apply_events(lake, as_of, run_id, done, reports):
    from ..maintain import apply_events
    return timed(apply_events, lake, as_of, run_id=run_id)


def _enforce_tiers(lake, as_of, run_id, done, reports):
    from ..maintain import enforce_tiers
    return timed(enforce_tiers, lake, as_of, run_id=run_id)


def _index(lake, as_of, run_id, done, reports):
    from ..search import index
    return timed(index, lake, as_of, run_id=run_id)


def _dedup(lake, as_of, run_id, done, reports):
    from ..maintain import dedup
    return timed(dedup, lake, as_of, run_id=run_id)


def _extract_entities(lake, as_of, run_id, done, reports):
    from ..maintain import extract_entities
    return timed(extract_entities, lake, as_of, run_id=run_id)


def _summarize(lake, as_of, run_id, done, reports):
    from ..maintain import summarize
    return timed(summarize, lake, as_of, run_id=run_id)


def index_summaries(lake, as_of: datetime, policy=None, run_id: str | None = None) -> StepReport:
    """The ``index`` step again, after ``summarize`` (DESIGN "Search": what search and the targets
    read is indexed before it is published). Summaries are written after the first ``index`` (dedup
    needs its vectors first), so they were published without postings or vectors until the next
    night. The index only takes what it lacks: tonight's summaries (and anything else written since),
    nothing at all on unchanged content. Its report and errors are named ``index_summaries``."""
    from ..search import index

    report = index(lake, as_of, policy, run_id=run_id)
    report.name = "index_summaries"
    for error in report.errors:
        error["step"] = "index_summaries"
    return report


def _index_summaries(lake, as_of, run_id, done, reports):
    def step(*args, **kwargs) -> StepReport:
        report = index_summaries(*args, **kwargs)
        report.errors = _unreported(report.errors, done)
        return report

    step.step_name = "index_summaries"
    return timed(step, lake, as_of, run_id=run_id)


def _unreported(errors: list[dict[str, Any]], done: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """`errors` less those an earlier step of the run reported: a text the index could not take
    fails again in each later index of the night, and the run names it once."""
    seen = {(e.get("item"), e["error"]) for step in done.values() for e in step.get("errors") or []}
    return [e for e in errors if (e.get("item"), e["error"]) not in seen]


def _snapshot_health(lake, as_of, run_id, done, reports):
    from .health import snapshot_health
    return timed(snapshot_health, lake, as_of, run_id=run_id)


def _patrol(lake, as_of, run_id, done, reports):
    """The patrol (seed 000 example 3) when ``[patrol] after_nightly = true``: it acts on the
    snapshot's capacity alerts; when it moved memories, the health is measured again, so the
    stored snapshot, the export and the report show the lake after it."""
    from .health import snapshot_health
    from .patrol import nightly_patrol

    step = timed(nightly_patrol, lake, as_of, run_id)
    if (step.get("counts") or {}).get("moved"):
        again = snapshot_health(lake, as_of, run_id=run_id).as_dict()
        step["details"] = {**(step.get("details") or {}), "health_measured_again": again["counts"]}
    return step


def _stage_export(lake, as_of, run_id, done, reports):
    from ..maintain import apply_decisions, pending_decisions
    from ..publish import stage_export
    from ..search import index

    # a forget or decision queued while this run held the lake (after its first step) is applied
    # before the export is staged: a forget is never published by the run it waited for; a resolve
    # may write new content, which is indexed too, so the publish carries its vectors
    late = apply_decisions(lake, as_of, run_id=run_id) if pending_decisions(lake) else None
    indexed = index(lake, as_of, run_id=run_id) if late is not None else None
    result = timed(stage_export, lake, as_of, run_id=run_id)
    if late is not None:
        result["details"]["late_decisions"] = late.as_dict()["counts"]
        result["details"]["late_index"] = indexed.counts
        result["summary"] += f"; applied first {late.summary} (queued during the run)"
        errors = [{**e, "step": "stage_export"} for e in _unreported(indexed.errors, done)]  # as this step's
        if errors:
            result["errors"] = [*(result.get("errors") or []), *errors]
    return result


def _check_export(lake, as_of, run_id, done, reports):
    from ..publish import check_export
    return timed(check_export, lake, done["stage_export"]["details"]["staging"], run_id=run_id, as_of=as_of)


def _publish_export(lake, as_of, run_id, done, reports):
    from ..publish import publish_export
    return timed(publish_export, lake, as_of, done["stage_export"]["details"], done["check_export"]["details"],
                 run_id=run_id)


def _sync_targets(lake, as_of, run_id, done, reports):
    from ..targets import sync_targets
    return timed(sync_targets, lake, as_of, run_id=run_id)


def _housekeeping(lake, as_of, run_id, done, reports):
    from ..maintain import housekeeping
    return timed(housekeeping, lake, as_of, run_id=run_id, reports_dir=reports)


def _write_report(lake, as_of, run_id, done, reports):
    return timed(write_report, lake, as_of, run_id, list(done.values()), reports)


def _notify(lake, as_of, run_id, done, reports):
    from .notify import notify
    return timed(notify, lake, as_of, run_id, list(done.values()))


NIGHTLY_STEPS: tuple[NightlyStep, ...] = (
    NightlyStep("apply_decisions", _apply_decisions),
    NightlyStep("ingest_inbox", _ingest_inbox, io=True),
    NightlyStep("apply_events", _apply_events),
    NightlyStep("enforce_tiers", _enforce_tiers),
    NightlyStep("index", _index),
    NightlyStep("dedup", _dedup),
    NightlyStep("extract_entities", _extract_entities),
    NightlyStep("summarize", _summarize),
    NightlyStep("index_summaries", _index_summaries),  # what summarize wrote, indexed before the publish
    NightlyStep("snapshot_health", _snapshot_health),
    NightlyStep("patrol", _patrol),  # off unless [patrol] after_nightly = true
    NightlyStep("stage_export", _stage_export),
    NightlyStep("check_export", _check_export),
    NightlyStep("publish_export", _publish_export),
    NightlyStep("sync_targets", _sync_targets),  # records a target's failure, never raises it
    NightlyStep("housekeeping", _housekeeping, io=True),
    NightlyStep("write_report", _write_report, io=True),
    NightlyStep("notify", _notify),  # retries on its own, within a bounded time
)

# Runs one step: ``runner(step, run_id, done) -> dict``. The Prefect flow passes one that submits
# the step as a task; without one the step is called here.
StepRunner = Callable[[NightlyStep, str, dict[str, dict[str, Any]]], dict[str, Any]]


def run_nightly_steps(lake, as_of: datetime, reports_dir: str | os.PathLike | None = None,
                      runner: StepRunner | None = None, wait_s: float | None = None) -> dict[str, Any]:
    """The nightly run: every step of NIGHTLY_STEPS in order under the lake's hold, then the `runs`
    row and a compaction a forget still owes. Returns the run summary (status ok or blocked);
    raises RunFailed (recorded, staging removed, CURRENT untouched) when a step fails."""
    from ..ingest import compact_database
    from ..store import DEFAULT_WRITE_WAIT_S, InputError, MemoryLakeError, crash_point, resolve_as_of

    from .notify import check_webhook_url, webhook_url

    if as_of is None:
        raise InputError("run_nightly_steps needs as_of (the run's instant); only the CLI fills in now")
    as_of = resolve_as_of(as_of)  # naive UTC, as every step compares: an aware or ISO as_of is welcome
    target = webhook_url(lake.policy)
    if target:
        check_webhook_url(target)  # a bad URL is a config error now, not a failed run after the publish
    reports = str(reports_dir) if reports_dir else None
    run_id = lake.new_run_id("nightly", as_of)
    call = runner or (lambda step, rid, done: step.run(lake, as_of, rid, done, reports))
    with lake.hold("nightly run", wait_s=DEFAULT_WRITE_WAIT_S if wait_s is None else wait_s):
        done: dict[str, dict[str, Any]] = {}
        try:
            for step in NIGHTLY_STEPS:
                try:
                    done[step.name] = call(step, run_id, dict(done))
                except Exception as exc:
                    if step.name not in ISOLATED_STEPS or isinstance(exc, MemoryLakeError):
                        # not a step's own failure: a busy lake, the lake's settings (bad input)
                        raise
                    done[step.name] = skipped_step(step.name, as_of, run_id, exc)
                record_step_errors(lake, run_id, as_of, done[step.name])
                crash_point(f"after:{step.name}")  # crash-safety tests kill the run here
        except Exception as exc:
            # a failed run is recorded too (status failed, the step and the error), CURRENT untouched,
            # and the webhook hears of it (never raising)
            from .notify import notify

            failed = record_failed_run(lake, run_id, "nightly", as_of, list(done.values()), exc)
            notify(lake, as_of, run_id, list(done.values()), error=exc)
            raise failed from exc
        summary = record_run(lake, run_id, "nightly", as_of, list(done.values()))
        if summary.get("report"):
            refresh_index(lake, as_of, reports)  # the run's row now has its whole duration and status
        crash_point("after:record_run")
    compact_database(lake, only_if_pending=True)  # after the hold: a forget's freed blocks are rewritten
    crash_point("after:compact_database")
    return summary


def lake_for_run(lake_dir: str | os.PathLike | None, policy: dict | None = None):
    """The lake a scheduled run works on: `lake_dir` must be an absolute path to an existing lake
    (a relative one would resolve against wherever the worker happens to run)."""
    from ..store import InputError, Lake

    if not lake_dir or not Path(str(lake_dir)).expanduser().is_absolute():
        raise InputError(f"lake_dir must be an absolute path to a lake, got {str(lake_dir)!r}; set the deployment's "
                         f"lake_dir parameter (memory-lake deploy --lake /abs/path/to/lake does)")
    return Lake.open(Path(str(lake_dir)).expanduser(), policy_overrides=policy)


def run_digest(lake, summary: dict[str, Any]) -> dict[str, Any]:
    """What an orchestrator shows of a run: a Markdown headline with the alerts, failed checks and
    step errors, a table of per-step counts, and the report's path."""
    from ..store import describe_error
    publish = summary.get("publish") or {}
    status = summary["status"]
    if status == "failed":
        headline = f"nightly {summary['run_id']} FAILED in step {summary.get('failed_step')}: {summary.get('error')}"
    elif status == "blocked":
        headline = f"nightly {summary['run_id']} BLOCKED: publish stopped by failed check(s)"
    else:
        what = {"published": f"published {publish.get('version')}",
                "unchanged": f"nothing changed since {publish.get('current')}"}.get(publish.get("status"), "done")
        headline = f"nightly {summary['run_id']} {status if status == 'ok' else status.upper()}: {what}"
        if status == "degraded":
            headline += f"; {len(summary.get('errors') or [])} skipped after an error (see Step errors)"
    health = latest_health(lake)
    alerts = (health or {}).get("overall") or {}
    alerts = alerts.get("alerts") or [] if alerts else []
    lines = [f"# {headline}", "", f"as_of {summary['as_of']}, {summary['duration_s']} s", "", "## Failed checks", ""]
    lines += [f"- {name}" for name in publish.get("failed") or []] or ["none"]
    held = publish.get("held") or []
    if held:
        lines += ["", "## Held scopes (published as they were; the rest published)", ""]
        lines += [f"- {'/'.join(p or '_' for p in (h['tenant'], h['agent_id'], h['user_id']))}: {h['reason']} - "
                  f"to let it through: {h['action']}" for h in held]
    lines += ["", "## Step errors", ""]
    lines += [f"- {error['step']}, {describe_error(error)} (traceback: {error.get('traceback_file')})"
              for error in summary.get("errors") or []] or ["none"]
    lines += ["", "## Alerts", ""]
    if held:
        alerts = [*alerts, held_alert(held)]
    lines += [f"- [{a['level']}] {a['message']} - {a['action']}" for a in alerts] or ["none"]
    table = [{"step": name, "summary": step["summary"],
              "counts": ", ".join(f"{k}={v}" for k, v in (step.get("counts") or {}).items())}
             for name, step in summary["steps"].items()]
    return {"headline": headline, "markdown": "\n".join(lines), "table": table, "report": summary.get("report")}
