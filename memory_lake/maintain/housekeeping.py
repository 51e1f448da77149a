"""Housekeeping (issue 14): retention of the lake's working files.

With ``[retention] days = N`` (0: keep forever), a run prunes what is older than its as_of minus N
days:

- ``raw/<sha256>.jsonl``: redacted copies of ingested snapshots, aged by the as_of of their ingest
  in ``ingested_files`` (never a file time). Nothing else needs them: ``ingested_files`` keeps the
  hash, so a re-sent snapshot is still recognised as ingested; dedup's unmerge restores from
  history images; forget skips a copy that is gone.
- ``events/*.jsonl`` once fully consumed (``event_offsets`` reached the file's end), aged by the as_of
  of the run that first saw it consumed (kept in ``<lake>/housekeeping.json``). A pruned agent
  event file keeps its offset row, so the same file sent again counts nothing twice; a pruned search
  log forgets its offset, so a new file of that name is read from its start.
- report pages of this lake (``<YYYY-MM-DD>/<run id>.html``, and ``health-<YYYY-MM-DD>.html`` from before
  issue 40), by their date, in ``<lake>/reports``,
  every folder reports were written to (the ``report-folders`` registry) and `reports_dir`. A report
  is this lake's when its ``REPORT_LAKE_META`` names this lake's folder; a report without the mark
  (written before reports carried it) only when it lies in ``<lake>/reports``. Another lake's
  reports in a shared folder are never touched.

Tables are never pruned: ``memory_history``, ``ingested_files``, ``conflicts`` and the rest stay.
"""

from __future__ import annotations

import html
import json
import os
import re
from datetime import datetime, timedelta
from pathlib import Path

from ..store import Policy, StepReport, iso, resolve_as_of
from ..store import REPORT_FOLDERS

STATE_FILE = "housekeeping.json"
DAY_FOLDER = re.compile(r"^\d{4}-\d{2}-\d{2}$")
REPORT_NAME = re.compile(r"^health-(\d{4}-\d{2}-\d{2})\.html$")
# The <meta name=...> a health report carries, whose content is the resolved folder of the lake that
# wrote it: housekeeping prunes only its own lake's reports from a folder several lakes write to.
REPORT_LAKE_META = "memory-lake-lake"
_LAKE_MARK = re.compile(rf'<meta name="{REPORT_LAKE_META}" content="([^"]*)">')
AGENT_EVENT_PREFIX = "inbox-"  # events.py names copies of agents' inbox event files so


def housekeeping(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None,
                 reports_dir: str | os.PathLike | None = None) -> StepReport:
    """Prune raw copies, consumed event files and health reports past the retention window."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("housekeeping", as_of)
    report = StepReport("housekeeping", as_of, run_id)
    days = policy.retention.days
    if days <= 0:
        report.details = {"retention_days": days, "note": "retention is off (days = 0): nothing is pruned"}
        return report
    cutoff = as_of - timedelta(days=days)
    with lake.writer(purpose="housekeeping") as con:
        raw = _prune_raw(lake, con, cutoff)
        events = _prune_events(lake, con, as_of, cutoff)
    reports = _prune_reports(lake, cutoff, reports_dir)
    report.counts = {"raw_copies_pruned": len(raw), "event_files_pruned": len(events),
                     "reports_pruned": len(reports)}
    report.details = {"retention_days": days, "cutoff": iso(cutoff), "raw": raw, "events": events, "reports": reports}
    return report


def _prune_raw(lake, con, cutoff: datetime) -> list[str]:
    old = [p for (p,) in con.execute(
        "SELECT raw_path FROM ingested_files GROUP BY raw_path HAVING max(as_of) < ? ORDER BY raw_path",
        [cutoff]).fetchall()]
    pruned = []
    for rel in old:
        path = lake.root / rel
        if path.parent == lake.raw and path.is_file():
            path.unlink()
            pruned.append(rel)
    return pruned


def _prune_events(lake, con, as_of: datetime, cutoff: datetime) -> list[str]:
    state_path = lake.root / STATE_FILE
    try:
        state = json.loads(state_path.read_text(encoding="utf-8")) if state_path.is_file() else {}
    except ValueError:
        state = {}
    seen: dict = state.get("consumed", {})
    offsets = dict(con.execute("SELECT file, bytes_read FROM event_offsets").fetchall())
    current, pruned = {}, []
    for path in sorted(lake.events.glob("*.jsonl")):
        name = str(path.relative_to(lake.root))
        size = path.stat().st_size
        if offsets.get(name) != size:
            continue  # lines still to load (or none read yet): never pruned
        entry = seen.get(name)
        if entry is None or entry.get("size") != size:
            entry = {"size": size, "consumed_as_of": iso(as_of)}
        if resolve_as_of(entry["consumed_as_of"]) < cutoff:
            path.unlink()
            pruned.append(name)
            if not path.name.startswith(AGENT_EVENT_PREFIX):
                con.execute("DELETE FROM event_offsets WHERE file = ?", [name])
            continue
        current[name] = entry
    state["consumed"] = current
    tmp = state_path.with_name(f".{STATE_FILE}.tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, state_path)
    return pruned


def _prune_reports(lake, cutoff: datetime, reports_dir: str | os.PathLike | None) -> list[str]:
    registry = lake.root / REPORT_FOLDERS
    folders = set(registry.read_text(encoding="utf-8").splitlines()) if registry.is_file() else set()
    own = (lake.root / "reports").resolve()
    folders.add(str(own))
    if reports_dir is not None:
        folders.add(str(Path(reports_dir).expanduser().resolve()))
    limit = cutoff.date().isoformat()
    pruned = []
    for folder in sorted(f for f in folders if f):
        for path, day in _dated_pages(Path(folder)):
            if day < limit and _written_by(path, lake.root.resolve(), own) and path.exists():
                path.unlink()
                pruned.append(str(path))
                if DAY_FOLDER.match(path.parent.name) and not any(path.parent.iterdir()):
                    path.parent.rmdir()  # reports/<date>/ emptied
    return pruned


def _dated_pages(folder: Path) -> list[tuple[Path, str]]:
    """The report pages in `folder` with their date: ``health-<date>.html`` (before issue 40), and
    ``<date>/<run id>.html`` below it or in it (one page per run)."""
    if not folder.is_dir():
        return []
    pages = [(p, m.group(1)) for p in sorted(folder.glob("health-*.html")) if (m := REPORT_NAME.match(p.name))]
    pages += [(p, p.parent.name) for p in sorted(folder.glob("*/*.html")) if DAY_FOLDER.match(p.parent.name)]
    if DAY_FOLDER.match(folder.name):
        pages += [(p, folder.name) for p in sorted(folder.glob("*.html"))]
    return pages


def _written_by(path: Path, root: Path, own: Path) -> bool:
    """Whether the report at `path` is this lake's: its mark names `root`, or it has no mark and
    lies in the lake's own reports folder `own`. The mark sits in the page's head."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    mark = _LAKE_MARK.search(head)
    if mark is None:
        return path.parent.resolve() == own
    return html.unescape(mark.group(1)) == str(root)
