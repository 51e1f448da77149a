"""The nightly health report: one self-contained HTML page for the operator who scheduled the run.

The ``health --json`` document answers "is the memory healthy?" for machines; this page answers it
for a person reading it the next morning: did the run work, what needs attention (alerts), how
full is each tier, how old and how used are the memories, what went to quarantine, and did the
publish go through (and if not, which expectations blocked it). See DESIGN "Health dashboard".

The page has to open anywhere, including from an archive or a mail attachment, and must not leak
that someone looked at it: CSS is inline, charts are inline SVG rendered offline by Altair +
vl-convert, and nothing is fetched from the network. Every string from the data (tenant names,
alert messages, step summaries, check output) is HTML-escaped. Memory contents are never passed
in, so they cannot appear here.

The input is already aggregated (per tier, per type, per reason, per scope); this module only
formats it, so its loops run over tiers, tenants and scopes, never over memories.
"""

from __future__ import annotations

import heapq
import html
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..maintain import REPORT_LAKE_META
from ..store import HealthPolicy
from ..store import TIERS
from .reportindex import duration as _duration
from .verdict import _get, alert_groups, verdict

AGE_BUCKETS = ("last_7d", "last_30d", "older")
# The health alerts' thresholds (one home: policy.HealthPolicy), so a highlighted cell and a
# warning always agree.
UTILIZATION_WARN = HealthPolicy.utilization_warning
HIT_RATE_WARN = HealthPolicy.hit_rate_warning
STALE_RATIO_INFO = HealthPolicy.stale_ratio_info
# The per-scope table is for spotting the fullest scopes, not for listing a million rows.
MAX_SCOPE_ROWS = 200

# One palette for the whole page; the CSS uses the same values so charts and badges match.
_ACCENT = "#3b6ea8"
_WARN = "#c2410c"
_FONT = 'system-ui, "Segoe UI", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif'

# One line per figure the page shows: the tooltip of its header, and the "What the numbers mean" list.
EXPLAIN = {
    "run status": "ok; degraded: a step skipped a scope after an error; blocked: the publish was stopped by failed checks",
    "duration": "seconds the run's steps took together (or this step)",
    "used": "live memories (active or conflicted) in the tier",
    "limit": "the tier's capacity per scope, summed over the scopes (long_term and important have none)",
    "util.": "used / limit; above 85 % is a warning (seed 000)",
    "memories used": "live memories (active or conflicted) per tier",
    "last_7d": "memories created in the last 7 days",
    "last_30d": "memories created 7 to 30 days ago",
    "older": "memories created more than 30 days ago",
    "hit rate 7 d": "share of the searches of the last 7 days that found a relevant memory; below 30 % is a warning",
    "hit rate 30 d": "the same over 30 days",
    "trend": "the slope of the 7-day hit rate over the last 7 snapshots, per day (±0.5 points per day is stable); "
             "empty until 7 snapshots have a hit rate",
    "stale": "live memories outside the important tier not accessed for 30 days",
    "stale ratio": "stale / live memories outside the important tier; above 10 % is information",
    "oldest unaccessed (days)": "days since the least recently used memory was last accessed",
    "records": "quarantined lines for this reason (file, line and reason in memory-lake quarantine list)",
    "open": "conflicts waiting for a user to choose a value",
    "under 1 day": "open conflicts filed in the last day",
    "1 to 7 days": "open conflicts filed 1 to 7 days ago",
    "over 7 days": "open conflicts older than 7 days: a warning",
    "on important memories": "open conflicts on important memories (an agent tried to change one)",
    "new version": "the export version this run published (— when nothing changed or the publish was blocked)",
    "CURRENT": "the version agents load (exports/CURRENT)",
    "working used / limit": "the scope's working memories and its working capacity",
    "short_term used / limit": "the scope's short-term memories and its short-term capacity",
    "long_term": "the scope's long-term memories (no capacity)",
    "important": "the scope's important memories (never cleaned automatically)",
}

_LEVEL_ORDER = {"warning": 0, "info": 1}
_STATUS_CLASS = {
    "ok": "good",
    "published": "good",
    "unchanged": "neutral",
    "blocked": "bad",
    "failed": "bad",
}

_CSS = f"""
:root {{ --accent: {_ACCENT}; --warn: {_WARN}; --bad: #b91c1c; --good: #15803d;
         --muted: #6b7280; --line: #e5e7eb; --bg-warn: #fff7ed; --bg-info: #eff6ff; }}
* {{ box-sizing: border-box; }}
body {{ font-family: {_FONT}; color: #111827; margin: 0 auto; max-width: 1160px; padding: 24px;
        line-height: 1.45; }}
h1 {{ font-size: 1.6rem; margin: 0 0 .5rem; }}
h2 {{ font-size: 1.2rem; margin: 2rem 0 .6rem; padding-bottom: .2rem;
      border-bottom: 2px solid var(--line); }}
h3 {{ font-size: 1rem; margin: 1rem 0 .4rem; }}
dl.facts {{ display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }}
dl.facts dt {{ color: var(--muted); }}
dl.facts dd {{ margin: 0; }}
table {{ border-collapse: collapse; margin: .4rem 0 1rem; font-size: .9rem; }}
th, td {{ border-bottom: 1px solid var(--line); padding: .3rem .6rem; text-align: left;
          vertical-align: top; }}
thead th {{ background: #f9fafb; }}
td.num, th.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
tfoot td, tfoot th {{ font-weight: 600; }}
.hot {{ color: var(--warn); font-weight: 600; }}
.muted {{ color: var(--muted); }}
.badge {{ display: inline-block; padding: .1rem .6rem; border-radius: 999px; font-weight: 600;
          color: #fff; background: var(--muted); }}
.badge.good {{ background: var(--good); }}
.badge.bad {{ background: var(--bad); }}
.badge.big {{ font-size: 1.3rem; padding: .2rem 1rem; }}
tr.alert-warning td {{ background: var(--bg-warn); }}
tr.alert-warning td.level {{ color: var(--warn); font-weight: 700; }}
tr.alert-info td {{ background: var(--bg-info); }}
tr.alert-info td.level {{ color: var(--accent); font-weight: 700; }}
.failed {{ color: var(--bad); font-weight: 600; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }}
figure {{ margin: 0; }}
figcaption {{ color: var(--muted); font-size: .85rem; margin-bottom: .2rem; }}
code {{ font-size: .85rem; }}
.verdict {{ font-size: 1.15rem; font-weight: 600; padding: .6rem 1rem; border-radius: 8px; margin: .4rem 0 1rem; }}
.verdict.good {{ background: #f0fdf4; color: var(--good); border: 1px solid #bbf7d0; }}
.verdict.warn {{ background: var(--bg-warn); color: var(--warn); border: 1px solid #fed7aa; }}
.verdict.bad {{ background: #fef2f2; color: var(--bad); border: 1px solid #fecaca; }}
.badge.warn {{ background: var(--warn); }}
nav.top {{ font-size: .9rem; margin-bottom: .4rem; }}
nav.top a {{ margin-right: 1rem; }}
figure.trend {{ max-width: 460px; }}
figcaption .note {{ font-size: .8rem; }}
details.numbers summary, details.tenant summary {{ cursor: pointer; color: var(--muted); font-size: .85rem; }}
details.tenant {{ margin: .8rem 0; }}
details.tenant > summary {{ font-size: 1rem; color: inherit; }}
table.series {{ font-size: .8rem; }}
table.series th {{ white-space: nowrap; }}
[title] {{ text-decoration-style: dotted; }}
th[title], dt[title] {{ text-decoration: underline dotted var(--muted); cursor: help; }}
ol.notes {{ font-size: .85rem; color: var(--muted); }}
"""


def render_report(
    health: dict,
    *,
    publish: dict | None,
    quarantine: dict[str, int],
    run: dict,
    out_dir: Path,
    conflicts: list[dict] | None = None,
    summaries: list[dict] | None = None,
    lake_root: Path | None = None,
    summaries_made: dict | None = None,
    history: dict | None = None,
    language: str = "en",
    latest: bool = True,
    ingest: dict | None = None,
) -> Path:
    """Write the run's health report page (see below where); return its path.

    ``health`` is the ``health --json`` document, ``publish`` the publish result (``None`` when the
    publish step did not run), ``quarantine`` the quarantined-record count per reason and ``run``
    the run record (id, status, duration, steps), ``conflicts`` the oldest open conflicts (ids, kind,
    field, operator and time; never their values; the queue's counts by age come from ``health``).
    ``summaries_made`` says how many summaries the run regenerated (``regenerated``; None outside a
    run) and how many are published (``published``), so the section never claims what did not happen;
    ``publish["rolled_back"]`` (from, to, as_of, by, reason) is the rollback CURRENT is at, if any.
    ``lake_root`` is the folder of the lake the page is about: shown in the header and marked in
    the head (``REPORT_LAKE_META``), so housekeeping prunes only its own lake's reports.
    ``history`` (``{"health", "runs", "last_n"}``: `history.health_history` and `history.run_history`)
    draws the "Over time" charts; ``language`` is the alerts' (``[report] language``). ``ingest``
    (``{"run": the run's ingest --json or None, "lake": reportingest.lake_formats}``) gives the
    "Ingest by format" section.

    The page goes to ``out_dir/<date of as_of>/<run id>.html`` (one page per run: a rerun of a night
    keeps the first run's page) and the same page to ``out_dir/latest.html``. Writes are atomic
    (readers see the old page or the new one, never half of one) and the files are 0644.
    """
    from .reportindex import report_relpath, write_public

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    as_of = str(health.get("as_of", ""))
    path = out_dir / report_relpath(as_of, str(run.get("run_id") or "report"))
    body = [
            _alerts_section(health, language),
            _capacity_section(health),
            _distribution_section(health),
            _usage_section(health),
            *([_ingest_section(ingest)] if ingest is not None else []),
            _quarantine_section(quarantine),
            _conflicts_section(health, conflicts or []),
            _publish_section(publish),
            _summaries_section(summaries or [], summaries_made),
            _scopes_section(health.get("scopes") or []),
    ]
    if history is not None:
        from .trends import trends_section

        body.insert(1, trends_section(history.get("health") or {}, history.get("runs") or [], history.get("last_n") or 30))
    body.append(_notes_section())

    def page(root: str) -> str:
        return "\n".join([
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            *([f'<meta name="{REPORT_LAKE_META}" content="{_e(Path(lake_root).resolve())}">'] if lake_root else []),
            f"<title>memory-lake health {_e(as_of[:10])}</title>",
            f"<style>{_CSS}</style>",
            "</head>",
            "<body>",
            f'<nav class="top"><a href="{root}index.html">All runs</a><a href="{root}latest.html">Latest</a></nav>',
            _header_section(as_of, run, lake_root, health=health, publish=publish),
            *body,
            "</body>",
            "</html>",
            "",
        ])

    write_public(path, page("../"))
    if latest:  # the newest nightly run's page (a page rendered outside a run leaves it)
        write_public(out_dir / "latest.html", page(""))
    return path


def _notes_section() -> str:
    """Every figure of the page with its one-line explanation (the same words as the tooltips)."""
    items = "".join(f"<li><b>{_e(k)}</b>: {_e(v)}</li>" for k, v in EXPLAIN.items())
    return _section("notes", "What the numbers mean", f'<ol class="notes">{items}</ol>')


# --- sections ---------------------------------------------------------------------------------


def _header_section(as_of: str, run: Mapping[str, Any], lake_root: Path | None = None,
                    health: Mapping[str, Any] | None = None, publish: Mapping[str, Any] | None = None) -> str:
    status = str(run.get("status", "unknown"))
    css, line = verdict(run, publish, health or {})
    facts = _facts(
        [
            *([("lake", f"<code>{_e(Path(lake_root).resolve())}</code>")] if lake_root else []),
            ("as of", _e(as_of)),
            ("run id", f"<code>{_e(run.get('run_id', '—'))}</code>"),
            *([("run status", _badge(status)), ("duration", _e(_duration(run.get("duration_s"))) + (
                ' <span class="muted">so far: the report and the notification come after this page (the index '
                "has the whole run)</span>" if run.get("steps") else ""))]
              if run.get("steps") and not run.get("steps_of") else
              [("run", _e("none: this page was rendered outside a run, from the lake's state"))]),
        ]
    )
    steps = run.get("steps") or []
    if steps:
        rows = [
            [
                _e(step.get("name", "")),
                _num(_duration(step.get("duration_s"))),
                _e(_summary_text(step.get("summary"))),
            ]
            for step in steps
        ]
        title = (f"Steps of {_e(run['steps_of'])}<br><span class=\"muted\">this page was rendered outside a run"
                 "</span>") if run.get("steps_of") else "Steps"
        steps_html = f"<h3>{title}</h3>" + _table(["step", ("duration", "num"), "summary"], rows)
    else:
        steps_html = '<p class="muted">No steps recorded.</p>'
    errors = [error for step in steps for error in step.get("errors") or []]
    if errors:  # a degraded run: what it skipped, where, why, and where the traceback is
        from ..store import error_scope

        rows = [[_e(e.get("step", "")), _e(error_scope(e) or "the whole step"),
                 _e(e.get("session_id") or ""), _e(e.get("error", "")), f"<code>{_e(e.get('traceback_file') or '')}</code>"]
                for e in errors]
        steps_html += ("<h3>Skipped after an error</h3><p>These steps skipped what is listed (it keeps its last "
                       "published state) and the run went on; the next run tries again.</p>"
                       + _table(["step", "scope", "session", "error", "traceback"], rows))
    return (
        "<header>"
        f"<h1>memory-lake health — {_e(as_of[:10])}</h1>"
        f'<p class="verdict {css}" id="verdict">{_e(line)}</p>{facts}'
        f"<details><summary>Steps of the run</summary>{steps_html}</details>"
        "</header>"
    )


def _alerts_section(health: Mapping[str, Any], language: str = "en") -> str:
    alerts, repeated = alert_groups(health)
    if not alerts:
        return _section("alerts", "Alerts", '<p class="muted">No alerts.</p>')
    # Warnings first: the operator reads top-down and may stop early. sorted() is stable, so the
    # overall alerts stay ahead of the per-tenant ones within a level.
    alerts.sort(key=lambda item: _LEVEL_ORDER.get(str(item[1].get("level")), len(_LEVEL_ORDER)))
    lang = ' lang="zh"' if language == "zh" else ""

    def table(items: list[tuple[str, Mapping[str, Any]]]) -> str:
        rows = []
        for where, alert in items:
            level = str(alert.get("level", ""))
            css = f"alert-{level}" if level in _LEVEL_ORDER else "alert-other"
            rows.append(
                f'<tr class="{css}" data-code="{_e(alert.get("code") or "")}"><td class="level">{_e(level)}</td>'
                f"<td>{_e(where)}</td><td{lang}>{_e(alert.get('message', ''))}</td>"
                f"<td{lang}><code>{_e(alert.get('action', ''))}</code></td></tr>")
        return ("<table><thead><tr><th>level</th><th>where</th><th>message</th><th>action</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>")

    body = table(alerts)
    if repeated:
        repeated.sort(key=lambda item: _LEVEL_ORDER.get(str(item[1].get("level")), len(_LEVEL_ORDER)))
        body += (f'<details class="numbers"><summary>The same conditions per tenant ({len(repeated)}): the lake-wide '
                 f"alerts above add them up</summary>{table(repeated)}</details>")
    return _section("alerts", "Alerts", body)


def _capacity_section(health: Mapping[str, Any]) -> str:
    overall = _get(health, "overall", "capacity") or {}
    chart = _bar_chart(
        [(tier, _get(overall, tier, "used") or 0) for tier in TIERS],
        x_title="memories used",
        caption="Used per tier (all tenants)",
    )
    head = (
        '<thead><tr><th rowspan="2">tenant</th>'
        + "".join(f'<th colspan="3">{tier}</th>' for tier in TIERS)
        + "</tr><tr>"
        + (f'<th class="num"{_tip("used")}>used</th><th class="num"{_tip("limit")}>limit</th>'
           f'<th class="num"{_tip("util.")}>util.</th>' * len(TIERS))
        + "</tr></thead>"
    )
    body_rows = [
        _capacity_row(_e(tenant), stats.get("capacity") or {})
        for tenant, stats in (health.get("tenants") or {}).items()
    ]
    foot = f"<tfoot>{_capacity_row('overall', overall)}</tfoot>"
    table = f"<table>{head}<tbody>{''.join(body_rows)}</tbody>{foot}</table>"
    note = '<p class="muted">long_term and important have no limit.</p>'
    return _section("capacity", "Capacity per tier", chart + "<h3>Per tenant</h3>" + table + note)


def _capacity_row(label_html: str, capacity: Mapping[str, Any]) -> str:
    cells = []
    for tier in TIERS:
        cap = capacity.get(tier) or {}
        limit = cap.get("limit")
        util = cap.get("utilization")
        hot = util is not None and util > UTILIZATION_WARN
        cells.append(
            f'<td class="num">{_e(_int(cap.get("used")))}</td>'
            f'<td class="num">{"no limit" if limit is None else _e(_int(limit))}</td>'
            f'<td class="num{" hot" if hot else ""}">{_e(_pct(util))}</td>'
        )
    return f'<tr><th scope="row">{label_html}</th>{"".join(cells)}</tr>'


def _distribution_section(health: Mapping[str, Any]) -> str:
    dist = _get(health, "overall", "distribution") or {}
    by_type = dist.get("by_type") or {}
    by_age = dist.get("by_age") or {}
    charts = []
    if by_type:
        # Most common type on top; types are few (an enum), so this stays short.
        ordered = sorted(by_type.items(), key=lambda kv: (-(kv[1] or 0), kv[0]))
        charts.append(_bar_chart(ordered, x_title="memories", caption="By type"))
    else:
        charts.append('<p class="muted">No memories by type.</p>')
    # Age buckets keep their natural order (newest first), never sorted by size.
    charts.append(
        _bar_chart(
            [(bucket, by_age.get(bucket) or 0) for bucket in AGE_BUCKETS],
            x_title="memories",
            caption="By age",
        )
    )
    rows = [
        [_e(tenant)] + [_num(_int(_get(stats, "distribution", "by_age", b))) for b in AGE_BUCKETS]
        for tenant, stats in (health.get("tenants") or {}).items()
    ]
    table = _table(["tenant"] + [(b, "num") for b in AGE_BUCKETS], rows) if rows else ""
    body = f'<div class="charts">{"".join(charts)}</div>'
    if table:
        body += "<h3>Age per tenant</h3>" + table
    return _section("distribution", "Distribution", body)


def _usage_section(health: Mapping[str, Any]) -> str:
    entries = [("overall", health.get("overall") or {})]
    entries += list((health.get("tenants") or {}).items())
    rows = []
    for name, stats in entries:
        hit = stats.get("hit_rate") or {}
        stale = stats.get("staleness") or {}
        rows.append(
            [
                _e(name),
                _rate_cell(hit.get("last_7d"), hit.get("note"), warn_below=HIT_RATE_WARN),
                _rate_cell(hit.get("last_30d"), hit.get("note")),
                _trend_cell(hit),
                _num(_int(stale.get("stale_count"))),
                _rate_cell(stale.get("stale_ratio"), None, warn_above=STALE_RATIO_INFO),
                _num(_int(stale.get("oldest_unaccessed_days"))),
            ]
        )
    headers = [
        "",
        ("hit rate 7 d", "num"),
        ("hit rate 30 d", "num"),
        ("trend", "num"),
        ("stale", "num"),
        ("stale ratio", "num"),
        ("oldest unaccessed (days)", "num"),
    ]
    return _section("usage", "Hit rate and staleness", _table(headers, rows))


def _rate_cell(
    value: float | None,
    note: str | None,
    *,
    warn_below: float | None = None,
    warn_above: float | None = None,
) -> str:
    if value is None:
        # A null rate is not zero: say why it is missing (e.g. no retrieval log yet).
        return f'<td class="num muted">{_e(note) if note else "—"}</td>'
    hot = (warn_below is not None and value < warn_below) or (
        warn_above is not None and value > warn_above
    )
    return f'<td class="num{" hot" if hot else ""}">{_e(_pct(value))}</td>'


def _ingest_section(ingest: Mapping[str, Any]) -> str:
    """This run's ingest per format, and the lake's over every ingest (``reportingest``)."""
    from .reportingest import ingest_tables

    note, tables = ingest_tables(ingest.get("run"), ingest.get("lake") or [])
    parts = [f'<p class="muted">{_e(note)}</p>'] if note else []
    for title, headers, rows, foot in tables:
        cells = [[_num(c) if isinstance(h, tuple) else _e(c) for h, c in zip(headers, row)] for row in rows]
        bottom = [_num(c) if isinstance(h, tuple) else _e(c) for h, c in zip(headers, foot)] if foot else None
        parts.append(f"<h3>{_e(title)}</h3>" + _table(headers, cells, foot=bottom))
    parts.append('<p class="muted">Formats are found by shape (<code>memory-lake ingest --format</code> overrides); '
                 "an export with no tenant goes in an inbox folder named <code>tenant=T</code>.</p>")
    return _section("ingest", "Ingest by format", "".join(parts))


def _quarantine_section(quarantine: Mapping[str, int]) -> str:
    counts = {reason: n for reason, n in (quarantine or {}).items() if n}
    if not counts:
        return _section("quarantine", "Quarantine", "<p>nothing quarantined</p>")
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    chart = _bar_chart(ordered, x_title="records", caption="Quarantined by reason", colour=_WARN)
    rows = [[_e(reason), _num(_int(n))] for reason, n in ordered]
    table = _table(
        ["reason", ("records", "num")],
        rows,
        foot=["total", _num(_int(sum(counts.values())))],
    )
    hint = (
        '<p class="muted">To fix and re-ingest: '
        "<code>memory-lake quarantine export fix.jsonl</code>, edit the file, then "
        "<code>memory-lake quarantine replay fix.jsonl</code>.</p>"
    )
    return _section("quarantine", "Quarantine", f'<div class="charts">{chart}{table}</div>{hint}')


def _conflicts_section(health: Mapping[str, Any], oldest: list[Mapping[str, Any]]) -> str:
    queue = _get(health, "overall", "conflicts") or {}
    if not queue.get("open"):
        return _section("conflicts", "Conflict queue", "<p>no open conflicts</p>")
    ages = queue.get("by_age") or {}
    facts = _facts([("open", _int(queue.get("open"))), ("under 1 day", _int(ages.get("under_1d"))),
                    ("1 to 7 days", _int(ages.get("1_to_7d"))), ("over 7 days", _int(ages.get("over_7d"))),
                    ("on important memories", _int(queue.get("important")))])
    # Ids, kinds and fields only: the disputed values are memory text, which never enters a report
    # (a report outlives a forget); `conflicts list` shows them.
    rows = [[_e(c["conflict_id"]), _e(c["kind"]), _e(c["memory_id"]), _e(c.get("other_memory_id") or "-"),
             _e(c["field"]), _e(c["incoming_operator"]), _e(str(c["created_at"])[:16])] for c in oldest]
    table = _table(["conflict", "kind", "memory", "other memory", "field", "from", "since"], rows)
    hint = ('<p class="muted">See the values: <code>memory-lake conflicts list</code>; resolve: '
            "<code>memory-lake conflicts resolve ID --take lake|incoming|both|value=TEXT --operator user</code>; "
            "the oldest are listed first.</p>")
    return _section("conflicts", "Conflict queue", f"{facts}{table}{hint}")


def _publish_section(publish: Mapping[str, Any] | None) -> str:
    if publish is None:
        return _section("publish", "Publish", '<p class="muted">Publish not run.</p>')
    status = str(publish.get("status", "unknown"))
    facts = [("status", _badge(status, big=True))]
    facts.append(("new version", _e(publish.get("version") or "—")))
    rolled = publish.get("rolled_back")
    current = _e(publish.get("current") or "—")
    facts.append(("CURRENT", f"{current} (rolled back from {_e(rolled['from'])})" if rolled else current))
    if publish.get("path"):
        facts.append(("path", f"<code>{_e(publish['path'])}</code>"))
    parts = [_facts(facts)]
    if rolled:
        parts.append(
            f"<p>CURRENT was rolled back from {_e(rolled['from'])} to {_e(rolled['to'])} at {_e(rolled['as_of'])} "
            f"by {_e(rolled['by'])}: {_e(rolled['reason'])}. Agents read {_e(rolled['to'])}; the next publish "
            "with changes makes a new version.</p>"
        )
    if status == "blocked" and publish.get("current_invalid"):
        parts.append(
            '<p class="failed">Nothing changed, but CURRENT no longer passes the checks under the current '
            "policy: fix the policy or the data; agents keep reading it meanwhile.</p>"
        )
    elif status == "blocked":
        parts.append(
            '<p class="failed">Data checks failed: CURRENT was left untouched, agents keep '
            "reading the previous version.</p>"
        )
    held = publish.get("held") or []
    if held:
        rows = [[_e("/".join(p or "_" for p in (h["tenant"], h["agent_id"], h["user_id"]))), _e(h["reason"]),
                 _e(h["since"]), f"<code>{_e(h['action'])}</code>"] for h in held]
        parts.append('<h3 class="failed">Held scopes</h3><p>The publish gate kept these scopes as they were last '
                     "published (agents still load those memories); every other scope published. A scope stays held "
                     "until it passes the gate again or a user releases it.</p>"
                     + _table(["scope", "why", "published as of", "to let it through"], rows))
    failed = publish.get("failed") or []
    if failed:
        items = "".join(f"<li><code>{_e(name)}</code></li>" for name in failed)
        parts.append(f'<h3>Failed expectations</h3><ul class="failed">{items}</ul>')
    checks = publish.get("checks") or []
    if checks:
        rows = [
            [
                f"<code>{_e(check.get('expectation', ''))}</code>",
                '<span class="badge good">pass</span>'
                if check.get("success")
                else '<span class="badge bad">fail</span>',
                _e(check.get("observed", "")),
            ]
            for check in checks
        ]
        parts.append("<h3>Checks</h3>" + _table(["expectation", "result", "observed"], rows))
    return _section("publish", "Publish", "".join(parts))


def _summaries_section(failed: list[Mapping[str, Any]], made: Mapping[str, Any] | None = None) -> str:
    """Summaries whose latest attempt failed the gate: not published, the previous one (if any)
    stays. Missing facts and unsupported statements are pieces of memory text, so each row names
    its sources (``data-sources``): a forget of one blanks them (``summaries.scrub_summary_report``).
    With none failed, one line of what `made` says happened."""
    if not failed:
        return _section("summaries", "Summaries", f"<p>{_summaries_made_text(made or {})}</p>")
    rows = []
    for f in failed:
        scope = " / ".join(_e(f.get(k) or "_") for k in ("tenant", "agent_id", "user_id"))
        scope += f" · session {_e(f['session_id'])}" if f.get("session_id") else ""
        scores = ", ".join(f"{k} {float(f.get(k) or 0):.2f}" for k in ("retention", "compression", "readability",
                                                                       "accuracy"))
        kept = _e(f.get("summary_id") or "none published yet")
        cells = [scope, _e(scores), _e(", ".join(f.get("failed") or [])), kept,
                 "<br>".join(_e(x) for x in f.get("missing_facts") or []) or "-",
                 "<br>".join(_e(x) for x in f.get("unsupported_statements") or []) or "-"]
        sources = _e(" ".join(f.get("source_ids") or []))
        rows.append(f'<tr data-sources="{sources}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("scope", "scores", "failed", "still published", "missing facts",
                                             "unsupported statements"))
    hint = ('<p class="muted">A summary below a threshold is not published; the previous one stays. '
            "<code>memory-lake summarize --tenant T --json</code> shows the summary it would make now.</p>")
    return _section("summaries", "Summaries not published",
                    f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{hint}")


def _summaries_made_text(made: Mapping[str, Any]) -> str:
    """What happened to summaries when none failed: in a run, how many it regenerated; outside a
    run (``regenerated`` None), how many are published."""
    regenerated, published = made.get("regenerated"), int(made.get("published") or 0)
    if regenerated is None:
        if not published:
            return "no summary published yet and none failed the gate"
        return f"{_plural(published, 'summary', 'summaries')} published; none failed the gate at its latest attempt"
    if not regenerated:
        stays = (_plural(published, "published summary stays as it was", "published summaries stay as they were")
                 if published else "no summary is published yet")
        keys = int(made.get("keys") or 0)
        why = [f"{n} {one if n == 1 else many}" for n, one, many in (
            (int(made.get("unchanged") or 0), "unchanged since its last summary", "unchanged since their last summary"),
            (int(made.get("fits_budget") or 0), "small enough to read whole, so none is needed",
             "small enough to read whole, so none is needed"),
            (int(made.get("skipped") or 0), "skipped: no summary could pass", "skipped: no summary could pass"))
            if n]
        if made.get("skipped"):
            why[-1] += " (`memory-lake summarize --json` says why)"
        if why:
            reason = f"of {_plural(keys, 'scope or session', 'scopes and sessions')}: {', '.join(why)}"
        elif "keys" in made and not keys:
            reason = "no scope or session has memories to summarise"
        else:
            reason = "no source changed"
        return f"no summary regenerated this run ({reason}); {stays}"
    if regenerated == 1:
        return "1 summary regenerated this run; it passed all four thresholds and was published"
    return f"{regenerated} summaries regenerated this run; all passed all four thresholds and were published"


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _scopes_section(scopes: list[Mapping[str, Any]]) -> str:
    if not scopes:
        return _section("scopes", "Scopes", '<p class="muted">No scopes.</p>')
    # nlargest keeps this O(n log k) for large lakes; scopes without a working limit sort last,
    # and among equals the fuller one (more used) comes first.
    shown = heapq.nlargest(MAX_SCOPE_ROWS, scopes, key=_working_pressure)
    left_out = len(scopes) - len(shown)
    rows = []
    for scope in shown:
        cap = scope.get("capacity") or {}
        work = cap.get("working") or {}
        util = work.get("utilization")
        hot = util is not None and util > UTILIZATION_WARN
        rows.append(
            [
                _e(scope.get("tenant", "")),
                _e(scope.get("agent_id") or "—"),
                _e(scope.get("user_id") or "—"),
                f'<td class="num{" hot" if hot else ""}">{_e(_used_limit(work))}</td>',
                _num(_used_limit(cap.get("short_term") or {})),
                _num(_int(_get(cap, "long_term", "used"))),
                _num(_int(_get(cap, "important", "used"))),
                _num(_int(_get(scope, "staleness", "stale_count"))),
            ]
        )
    headers = [
        "tenant",
        "agent",
        "user",
        ("working used / limit", "num"),
        ("short_term used / limit", "num"),
        ("long_term", "num"),
        ("important", "num"),
        ("stale", "num"),
    ]
    if left_out:
        intro = (
            f"<p>The {len(shown)} scopes with the highest working-tier utilization, "
            f"of {len(scopes)}; {left_out} left out.</p>"
        )
    else:
        intro = f"<p>All {len(scopes)} scopes, highest working-tier utilization first.</p>"
    return _section("scopes", "Scopes", intro + _table(headers, rows))


def _working_pressure(scope: Mapping[str, Any]) -> tuple[float, float]:
    work = _get(scope, "capacity", "working") or {}
    util = work.get("utilization")
    return (-1.0 if util is None else float(util), float(work.get("used") or 0))


# --- charts -----------------------------------------------------------------------------------


def _bar_chart(
    values: Iterable[tuple[str, float]],
    *,
    x_title: str,
    caption: str,
    colour: str = _ACCENT,
) -> str:
    """A horizontal bar chart (one bar per category, in the given order) as an inline SVG figure."""
    import vl_convert  # heavy: only the report needs it

    svg = vl_convert.vegalite_to_svg(_bar_spec(values, x_title, colour))
    return f"<figure><figcaption>{_e(caption)}</figcaption>{svg}</figure>"


def _bar_spec(values: Iterable[tuple[str, float]], x_title: str, colour: str) -> dict[str, Any]:
    """The bar chart's Vega-Lite spec (bars, and each bar's number beside it), written out as the dict
    Altair gives for it, key for key and in order (tests/observe/test_report.py compares the two), as
    `trends._spec` does: a process that writes a report then never imports Altair."""
    from .trends import VEGA_LITE_SCHEMA

    # sort None keeps the caller's order (tiers, age buckets are meaningful orders)
    encoding = {"x": {"axis": {"format": "~s", "tickMinStep": 1}, "field": "value", "title": x_title,
                      "type": "quantitative"},
                "y": {"axis": {"labelLimit": 220}, "field": "category", "sort": None, "title": None, "type": "nominal"}}
    return {
        "config": {"view": {"continuousWidth": 300, "continuousHeight": 300, "stroke": None}, "background": "white",
                   "font": "sans-serif"},
        "layer": [{"mark": {"type": "bar", "color": colour, "height": {"band": 0.75}}, "encoding": encoding},
                  {"mark": {"type": "text", "align": "left", "color": "#111827", "dx": 4, "fontSize": 11},
                   "encoding": {"text": {"field": "value", "format": ",", "type": "quantitative"}, **encoding}}],
        "data": {"values": [{"category": str(k), "value": v or 0} for k, v in values]},
        "height": {"step": 24}, "width": 320, "$schema": VEGA_LITE_SCHEMA,
    }


# --- formatting helpers -----------------------------------------------------------------------


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{_e(title)}</h2>{body}</section>'


def _facts(pairs: list[tuple[str, str]]) -> str:
    """A definition list; values are already HTML."""
    items = "".join(f"<dt{_tip(k)}>{_e(k)}</dt><dd>{v}</dd>" for k, v in pairs)
    return f'<dl class="facts">{items}</dl>'


def _table(headers: list, rows: list[list[str]], *, foot: list[str] | None = None) -> str:
    """A table. A header is a name or (name, css class); cells are HTML, and a cell that is
    already a ``<td ...>`` (to carry a class) is used as is."""

    def th(h: Any) -> str:
        name, css = (h, "") if isinstance(h, str) else h
        return f'<th class="{css}"{_tip(name)}>{_e(name)}</th>' if css else f"<th{_tip(name)}>{_e(name)}</th>"

    def tr(cells: list[str]) -> str:
        tds = "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in cells)
        return f"<tr>{tds}</tr>"

    head = "<thead><tr>" + "".join(th(h) for h in headers) + "</tr></thead>"
    body = "<tbody>" + "".join(tr(r) for r in rows) + "</tbody>"
    tfoot = f"<tfoot>{tr(foot)}</tfoot>" if foot else ""
    return f"<table>{head}{body}{tfoot}</table>"


def _tip(label: str) -> str:
    """The tooltip attribute of a figure's label (EXPLAIN), or nothing."""
    return f' title="{_e(EXPLAIN[label])}"' if label in EXPLAIN else ""


def _num(text: str) -> str:
    return f'<td class="num">{_e(text)}</td>'


def _badge(status: str, *, big: bool = False) -> str:
    css = _STATUS_CLASS.get(status, "neutral") + (" big" if big else "")
    return f'<span class="badge {css}">{_e(status)}</span>'


def _int(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, (int, float)):
        return f"{value:,.0f}"
    return str(value)


def _pct(value: Any) -> str:
    if value is None:
        return "—"
    return f"{float(value) * 100:.1f} %"


def _trend_cell(hit: Mapping[str, Any]) -> str:
    """The trend word with its slope in points per day, or why there is none yet."""
    if hit.get("trend") is None:
        return f'<td class="num muted">{_e(hit.get("trend_note") or "—")}</td>'
    slope = hit.get("trend_slope")
    per_day = f" ({float(slope) * 100:+.2f} pp/day)" if isinstance(slope, (int, float)) else ""
    return f'<td class="num">{_e(str(hit["trend"]) + per_day)}</td>'


def _used_limit(cap: Mapping[str, Any]) -> str:
    limit = cap.get("limit")
    return f"{_int(cap.get('used'))} / {'—' if limit is None else _int(limit)}"


def _summary_text(summary: Any) -> str:
    if summary is None:
        return ""
    if isinstance(summary, Mapping):
        return ", ".join(f"{k}: {v}" for k, v in summary.items())
    return str(summary)
