"""The report's "Over time" section: line charts of the health snapshots and the nightly runs of the
last N runs (`history.health_history`, `history.run_history`), overall and per tenant.

Each chart is an inline SVG (Altair + vl-convert, offline) with one point per run, and below it the
same numbers as a table (``<table class="series" data-chart=NAME>``, one row per run, each value in
``data-value``), so that the numbers can be read exactly, by a person, a screen reader or a test.
A chart with fewer than two points is a sentence instead: a line needs two runs.
"""

from __future__ import annotations

import html
from typing import Any

from ..store import views as lake_views

# The Vega-Lite version the charts are drawn with (vl-convert reads it from the spec): the one Altair
# 6.3 writes (tests/observe/test_trends.py compares).
VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
_COLOURS = ["#3b6ea8", "#c2410c", "#15803d", "#7c3aed", "#b45309", "#0e7490", "#be185d", "#4b5563", "#65a30d"]
_HEALTH_EXPLAIN = {name: what for name, _, _, what in lake_views.HEALTH_COLUMNS}
_RUN_EXPLAIN = {name: what for name, _, _, what in lake_views.RUN_COLUMNS}

# (chart id, title, y axis, [(column, legend label)], percent, threshold line (value, label) or None)
HEALTH_CHARTS: tuple[tuple[str, str, str, list[tuple[str, str]], bool, tuple[float, str] | None], ...] = (
    ("capacity", "Memories per tier", "memories",
     [("working_used", "working"), ("short_term_used", "short_term"), ("long_term_used", "long_term"),
      ("important_used", "important")], False, None),
    ("utilization", "Capacity used (working and short_term)", "share of capacity",
     [("working_utilization", "working"), ("short_term_utilization", "short_term")], True, (0.85, "warning above 85%")),
    ("hit_rate", "Hit rate", "share of searches with a relevant result",
     [("hit_rate_7d", "last 7 days"), ("hit_rate_30d", "last 30 days")], True, (0.30, "warning below 30%")),
    ("staleness", "Stale memories", "share not accessed for 30 days",
     [("stale_ratio", "stale ratio")], True, (0.10, "info above 10%")),
    ("quarantine", "Quarantined lines waiting", "open lines", [("quarantine_open", "open")], False, None),
    ("conflicts", "Open conflicts", "conflicts",
     [("conflicts_open", "open"), ("conflicts_over_7d", "open > 7 days")], False, None),
    ("summary_quality", "Summary quality (mean of the published)", "score",
     [("summary_retention", "retention"), ("summary_readability", "readability"), ("summary_accuracy", "accuracy")],
     False, None),
)
TENANT_CHARTS = ("capacity", "hit_rate", "staleness", "conflicts", "quarantine")
MAX_TENANTS = 12

RUN_CHARTS: tuple[tuple[str, str, str, list[tuple[str, str]]], ...] = (
    ("ingest", "Ingest volume per run", "lines", [("ingested", "ingested"), ("quarantined", "quarantined")]),
    ("merges", "Dedup per run", "memories", [("merged", "merged"), ("contradictions_filed", "contradictions filed")]),
    ("moves", "Moves per tier rule per run", "memories",
     [(f"moved_{rule}", rule) for rule in (*lake_views.TIER_RULES, "patrol")]),
)


def trends_section(health: dict[str, Any], runs: list[dict[str, Any]], last_n: int) -> str:
    """The whole "Over time" section: overall health charts, run charts, step durations, then one
    collapsible block per tenant."""
    overall = health.get("overall") or []
    parts = [f'<p class="muted">The last {len(runs)} nightly run(s) and {len(overall)} health snapshot(s), at most '
             f"{last_n} (policy <code>[report] history_runs</code>); one point per run. The numbers of each chart are "
             "in the table under it.</p>"]
    charts = [_chart(name, title, y, _points(overall, series), percent, rule, _HEALTH_EXPLAIN)
              for name, title, y, series, percent, rule in HEALTH_CHARTS]
    for name, title, y, series in RUN_CHARTS:
        used = [(c, label) for c, label in series if any(r.get(c) for r in runs)]
        charts.append(_chart(name, title, y, _points(runs, used or series[:1]), False, None, _RUN_EXPLAIN))
    charts.append(_durations_chart(runs))
    parts.append(f'<div class="charts">{"".join(charts)}</div>')
    tenants = health.get("tenants") or {}
    # the largest tenants (by live memories at the last snapshot): a lake of a thousand tenants
    # keeps a page a person reads (and a run that does not spend minutes drawing)
    shown = sorted(tenants, key=lambda t: (-(tenants[t][-1].get("total") or 0), t))[:MAX_TENANTS]
    if len(tenants) > len(shown):
        parts.append(f'<p class="muted">Per tenant: the {len(shown)} largest of {len(tenants)} tenants; the others are in '
                     "<code>memory-lake sql \"SELECT * FROM health_series WHERE level = 'tenant' AND tenant = 'T'\"</code>."
                     "</p>")
    for tenant, rows in ((t, tenants[t]) for t in shown):
        tenant_charts = [_chart(f"{name}:{tenant}", title, y, _points(rows, series), percent, rule, _HEALTH_EXPLAIN)
                         for name, title, y, series, percent, rule in HEALTH_CHARTS if name in TENANT_CHARTS]
        parts.append(f'<details class="tenant"><summary>Tenant <b>{_e(tenant)}</b></summary>'
                     f'<div class="charts">{"".join(tenant_charts)}</div></details>')
    return f'<section id="trends"><h2>Over time</h2>{"".join(parts)}</section>'


def _points(rows: list[dict[str, Any]], series: list[tuple[str, str]]) -> dict[str, Any]:
    """{"x": [label per row], "as_of": [...], "series": [(column, label, [value per row])]}."""
    xs = _labels([str(r.get("as_of") or "") for r in rows])
    return {"x": xs, "as_of": [str(r.get("as_of") or "") for r in rows], "run_id": [r.get("run_id") for r in rows],
            "series": [(column, label, [r.get(column) for r in rows]) for column, label in series]}


def _labels(instants: list[str]) -> list[str]:
    """An x label per point: the date (MM-DD); with the time when one date has points at several
    times; and a rerun of the same instant numbered ("12-02 #2"), so each point has its own."""
    days = [i[5:10] for i in instants]
    labels, seen = [], {}
    for day, instant in zip(days, instants):
        times = {i for i, d in zip(instants, days) if d == day}
        label = f"{day} {instant[11:16]}" if len(times) > 1 else day
        seen[instant] = seen.get(instant, 0) + 1
        labels.append(label if seen[instant] == 1 else f"{label} #{seen[instant]}")
    return labels


def _chart(name: str, title: str, y_title: str, points: dict[str, Any], percent: bool,
           rule: tuple[float, str] | None, explain: dict[str, str]) -> str:
    notes = "; ".join(f"{label}: {_without(explain[column], label)}" for column, label, _ in points["series"]
                      if column in explain)
    caption = f'<figcaption><b>{_e(title)}</b><br><span class="note">{_e(notes)}</span></figcaption>'
    present = sum(1 for i in range(len(points["x"])) if any(v[i] is not None for _, _, v in points["series"]))
    if present < 2:
        body = (f'<p class="muted">A line needs two runs with a value: {present} so far.</p>')
    else:
        body = _svg(points, y_title, percent, rule)
    return f'<figure class="trend" data-chart="{_e(name)}">{caption}{body}{_table(name, points, percent)}</figure>'


def _svg(points: dict[str, Any], y_title: str, percent: bool, rule: tuple[float, str] | None) -> str:
    import vl_convert  # heavy: only the report needs it

    return vl_convert.vegalite_to_svg(_spec(points, y_title, percent, rule))


def _spec(points: dict[str, Any], y_title: str, percent: bool, rule: tuple[float, str] | None) -> dict[str, Any]:
    """The chart's Vega-Lite spec: a line per series (a point per run) and the threshold `rule`.

    Written out as the dict Altair's ``Chart.to_dict()`` gives for the same chart, key for key and
    in the same order (tests/observe/test_trends.py compares the two): building it with Altair's
    classes, which check every part against the Vega-Lite schema, took more of a report's 26 charts
    than drawing them, and importing Altair took a third of a second of every process that wrote one."""
    records = [{"run": x, "series": label, "value": values[i]}
               for column, label, values in points["series"] for i, x in enumerate(points["x"])
               if values[i] is not None]
    order = [label for _, label, _ in points["series"]]
    line = {
        "mark": {"type": "line", "point": {"size": 28}, "strokeWidth": 2},
        "encoding": {
            "color": {"field": "series", "legend": {"columns": 3, "orient": "bottom"},
                      "scale": {"domain": order, "range": _COLOURS[:len(order)]}, "sort": order, "title": None,
                      "type": "nominal"},
            "tooltip": [{"field": "run", "title": "run", "type": "ordinal"}, {"field": "series", "type": "nominal"},
                        {"field": "value", "format": ".1%" if percent else ",", "type": "quantitative"}],
            "x": {"axis": {"labelAngle": -45}, "field": "run", "sort": points["x"], "title": None, "type": "ordinal"},
            "y": {"axis": {"format": ".0%" if percent else "~s", "tickMinStep": 0.01 if percent else 1},
                  "field": "value", "title": y_title, "type": "quantitative"},
        },
    }
    config = {"view": {"continuousWidth": 300, "continuousHeight": 300, "stroke": None}, "background": "white",
              "font": "sans-serif"}
    data = {"values": records}
    if rule is None:  # one layer: its data sits on the chart
        return {"config": config, "layer": [line], "data": data, "height": 170, "width": 330, "$schema": VEGA_LITE_SCHEMA}
    threshold = {"data": {"values": [{"y": rule[0], "label": rule[1]}]},
                 "mark": {"type": "rule", "color": "#9ca3af", "strokeDash": [4, 3]},
                 "encoding": {"y": {"field": "y", "type": "quantitative"}}}
    return {"config": config, "layer": [{"data": data, **line}, threshold], "height": 170, "width": 330,
            "$schema": VEGA_LITE_SCHEMA}


def _table(name: str, points: dict[str, Any], percent: bool) -> str:
    head = "".join(f'<th class="num" title="{_e(c)}">{_e(label)}</th>' for c, label, _ in points["series"])
    rows = []
    for i, x in enumerate(points["x"]):
        cells = "".join(f'<td class="num" data-column="{_e(c)}" data-value="{"" if v[i] is None else _e(v[i])}">'
                        f"{_e(_fmt(v[i], percent))}</td>" for c, _, v in points["series"])
        rows.append(f'<tr data-as-of="{_e(points["as_of"][i])}" data-run="{_e(points["run_id"][i] or "")}">'
                    f"<th>{_e(x)}</th>{cells}</tr>")
    return (f'<details class="numbers"><summary>numbers</summary><table class="series" data-chart="{_e(name)}">'
            f"<thead><tr><th>run</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></details>")


def _durations_chart(runs: list[dict[str, Any]]) -> str:
    """Seconds per step, for the steps that took longest at their slowest (the rest summed as
    "other steps"), and the whole run."""
    slowest: dict[str, float] = {}
    for run in runs:
        for step, seconds in (run.get("steps") or {}).items():
            slowest[step] = max(slowest.get(step, 0.0), float(seconds or 0))
    top = sorted(slowest, key=lambda s: -slowest[s])[:5]
    rows = []
    for run in runs:
        steps = run.get("steps") or {}
        row = {"as_of": run.get("as_of"), "run_id": run.get("run_id"), "duration_s": run.get("duration_s")}
        for step in top:
            row[f"step:{step}"] = steps.get(step)
        rest = [float(v) for s, v in steps.items() if s not in top and v is not None]
        row["step:other"] = round(sum(rest), 3) if rest else None
        rows.append(row)
    series = [("duration_s", "whole run")] + [(f"step:{s}", s) for s in top] + [("step:other", "other steps")]
    explain = {"duration_s": "seconds the steps took together", **{f"step:{s}": f"seconds of the {s} step" for s in top},
               "step:other": "seconds of the other steps together"}
    return _chart("durations", "Run duration per step", "seconds", _points(rows, series), False, None, explain)


def _without(text: str, label: str) -> str:
    """An explanation without its own leading "label: " (the caption puts the label first)."""
    return text[len(label) + 2:] if text.startswith(f"{label}: ") else text


def _fmt(value: Any, percent: bool) -> str:
    if value is None:
        return "—"
    if percent:
        return f"{float(value) * 100:.1f} %"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    return f"{value:,}" if isinstance(value, int) else str(value)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)
