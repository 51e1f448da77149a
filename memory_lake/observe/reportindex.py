"""The reports folder's front pages: ``index.html`` (every nightly run: date, outcome, alerts,
published version, duration and a link to its page) and ``latest.html`` (the newest run's page,
its links made relative to the folder). Written after each report, atomically, readable by
everyone (0644), so any web server can serve the folder as it is.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

_OUTCOME = {"ok": "good", "degraded": "warn", "blocked": "bad", "failed": "bad"}


def report_relpath(as_of: str, run_id: str) -> str:
    """Where a run's page lies under the reports folder: ``<YYYY-MM-DD>/<run id>.html``."""
    return f"{as_of[:10]}/{run_id}.html"


def write_index(out_dir: Path, runs: list[dict[str, Any]], css: str, lake_root: Path | None = None,
                meta: str = "") -> Path:
    """``out_dir/index.html``: one row per run of `runs` (`store.views.run_point` rows), newest first."""
    out_dir = Path(out_dir)
    rows = []
    for run in reversed(runs):
        link = _link(out_dir, run)
        status = str(run.get("status") or "unknown")
        alerts = run.get("alerts")
        warnings = run.get("warnings")
        alert_text = "—" if alerts is None else f"{alerts}" + (f" ({warnings} warning{'s' if warnings != 1 else ''})"
                                                               if warnings else "")
        published = run.get("published_version")
        publish_status = run.get("publish_status")
        if published:
            version = f"published {published}"
        elif publish_status == "blocked":
            version = f"blocked (agents read {run.get('current_version') or 'nothing'})"
        elif publish_status:
            version = f"{publish_status} ({run.get('current_version') or '—'})"
        else:
            version = "—"
        as_of = str(run.get("as_of") or "")
        cells = [
            f"<td>{_e(as_of[:10])}</td>",
            f'<td><span class="badge {_OUTCOME.get(status, "neutral")}">{_e(status)}</span></td>',
            f'<td class="num">{_e(alert_text)}</td>',
            f"<td>{_e(version)}</td>",
            f'<td class="num">{_e(duration(run.get("duration_s")))}</td>',
            f'<td><a href="{_e(link)}">{_e(run.get("run_id"))}</a></td>' if link else
            f'<td class="muted">{_e(run.get("run_id"))} (page not kept)</td>',
        ]
        rows.append(f'<tr data-run="{_e(run.get("run_id"))}">{"".join(cells)}</tr>')
    head = "".join(f"<th{cls}{tip}>{name}</th>" for name, cls, tip in (
        ("date", "", ' title="the night the run was for (its as_of, UTC)"'),
        ("outcome", "", ' title="ok; degraded: a step skipped a scope after an error; blocked: the publish was stopped '
                        'by failed checks; failed: the run stopped"'),
        ("alerts", ' class="num"', ' title="alerts the run&#x27;s report showed (warnings among them)"'),
        ("published version", "", ' title="the export version the run published, or what agents read instead"'),
        ("duration", ' class="num"', ' title="seconds the run&#x27;s steps took together"'),
        ("report", "", ' title="the run&#x27;s own page"')))
    latest = ('<p><a href="latest.html">The latest report</a></p>' if (out_dir / "latest.html").exists() else "")
    lake = f"<p class=\"muted\">lake <code>{_e(Path(lake_root).resolve())}</code></p>" if lake_root else ""
    body = (f"<h1>memory-lake reports</h1>{lake}{latest}"
            f"<p>{len(runs)} nightly run(s), newest first.</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"{meta}<title>memory-lake reports</title>\n<style>{css}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
    path = out_dir / "index.html"
    write_public(path, page)
    return path


def _link(out_dir: Path, run: dict[str, Any]) -> str | None:
    """The run's page relative to `out_dir`, when it exists there."""
    report = run.get("report")
    if report:
        path = Path(report)
        try:
            relative = path.resolve().relative_to(out_dir.resolve())
            if path.exists():
                return relative.as_posix()
        except ValueError:
            pass
    # the page where this folder keeps it (a reports folder copied or moved with its lake)
    if run.get("as_of") and run.get("run_id"):
        here = report_relpath(str(run["as_of"]), str(run["run_id"]))
        if (out_dir / here).exists():
            return here
    return None


def write_public(path: Path, text: str) -> None:
    """Write atomically, mode 0644 (readable by a web server), whatever the umask."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    for folder in (path.parent,):
        try:
            os.chmod(folder, os.stat(folder).st_mode | 0o755)
        except OSError:
            pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def duration(seconds: Any) -> str:
    """Seconds as a person reads them: "12.9 s", "1 min 06 s", "2 h 03 min"."""
    if seconds is None:
        return "—"
    seconds = float(seconds)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)
