"""Issue 40: health over time on a 14-night simulation (the demo data, with the demo agents'
searches between the nights: `fourteen_nights`). The reports folder has one page per run, an index
of the 14 runs and latest.html; the report's history charts hold 14 points whose numbers, read
back out of the page (the SVG's points and the table under each chart), equal the stored snapshots,
their JSON and the runs; the hit-rate trend is null with its reason for the first nights, then the
least-squares slope of the documented formula, computed here independently with NumPy."""

from __future__ import annotations

import html
import json
import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from memory_lake.store import Lake

K, DEAD_BAND = 7, 0.005  # the policy's defaults ([health] trend_snapshots, trend_dead_band)


@pytest.fixture(scope="module")
def folder(fourteen_nights) -> Path:
    return fourteen_nights.root.parent / "reports"


@pytest.fixture(scope="module")
def lake(fourteen_nights) -> Lake:
    return Lake.open(fourteen_nights.root)


def figures(page: str) -> dict[str, str]:
    """Each trend chart's <figure> by its data-chart name."""
    return {html.unescape(m.group(1)): m.group(0) for m in
            re.finditer(r'<figure class="trend" data-chart="([^"]*)">.*?</figure>', page, re.S)}


def table_rows(figure: str) -> list[tuple[str, str, dict[str, str]]]:
    """(as_of, run id, {column: data-value}) per row of the chart's number table."""
    rows = []
    for m in re.finditer(r'<tr data-as-of="([^"]*)" data-run="([^"]*)">(.*?)</tr>', figure, re.S):
        cells = dict(re.findall(r'data-column="([^"]*)" data-value="([^"]*)"', m.group(3)))
        rows.append((m.group(1), m.group(2), cells))
    return rows


def svg_points(figure: str) -> list[tuple[str, str, str]]:
    """(run label, series, value as drawn) of every point of the chart's SVG."""
    return re.findall(r'aria-label="run: ([^;"]*);[^"]*series: ([^;"]*); value: ([^"]*)" role="graphics-symbol" '
                      r'aria-roledescription="point"', figure)


def seconds(value: float) -> str:
    """A duration as the index writes it: "12.9 s", or "1 min 06 s" from a minute on."""
    return f"{value:.1f} s" if value < 60 else f"{round(value) // 60} min {round(value) % 60:02d} s"


def number(text: str):
    return None if text == "" else float(text)


def test_the_index_lists_the_fourteen_runs_newest_first_with_their_pages(fourteen_nights, folder, lake):
    index = (folder / "index.html").read_text(encoding="utf-8")
    rows = re.findall(r'<tr data-run="([^"]*)">(.*?)</tr>', index, re.S)
    runs = lake.sql("SELECT run_id, as_of, status, report->>'$.publish.version' AS version, duration_s FROM runs "
                    "WHERE kind = 'nightly' ORDER BY as_of DESC").to_dicts()
    assert [r for r, _ in rows] == [r["run_id"] for r in runs] and len(rows) == 14
    assert [fourteen_nights.runs[n]["run_id"] for n in range(14, 0, -1)] == [r for r, _ in rows]
    for (run_id, cells), run in zip(rows, runs):
        texts = [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", cells, re.S)]
        assert texts[0] == f"{run['as_of']:%Y-%m-%d}" and texts[1] == run["status"] == "ok"
        assert texts[3] == f"published {run['version']}" and texts[4] == seconds(run["duration_s"])
        (link,) = re.findall(r'href="([^"]*)"', cells)
        assert link == f"{run['as_of']:%Y-%m-%d}/{run_id}.html" and (folder / link).is_file()
    # 0644: any web server can serve the folder
    pages = [folder / "index.html", folder / "latest.html", *folder.glob("*/*.html")]
    assert len(pages) == 16 and {p.stat().st_mode & 0o777 for p in pages} == {0o644}


def test_latest_is_the_last_nights_page(fourteen_nights, folder):
    last = fourteen_nights.runs[14]
    page = Path(last["report"]).read_text(encoding="utf-8")
    latest = (folder / "latest.html").read_text(encoding="utf-8")
    assert latest == page.replace('href="../index.html"', 'href="index.html"').replace(
        'href="../latest.html"', 'href="latest.html"')
    assert re.search(r'<p class="verdict (good|warn|bad)" id="verdict">', latest)


def test_the_health_charts_hold_fourteen_points_equal_to_the_snapshots(folder, lake):
    page = (folder / "latest.html").read_text(encoding="utf-8")
    charts = figures(page)
    stored = lake.sql("SELECT * FROM health_series WHERE level = 'overall' ORDER BY as_of").to_dicts()
    raw = lake.sql("SELECT as_of, metrics FROM health_snapshots WHERE level = 'overall' ORDER BY as_of").rows()
    assert len(stored) == len(raw) == 14
    for name, columns in {"capacity": ["working_used", "short_term_used", "long_term_used", "important_used"],
                          "utilization": ["working_utilization", "short_term_utilization"],
                          "hit_rate": ["hit_rate_7d", "hit_rate_30d"], "staleness": ["stale_ratio"],
                          "quarantine": ["quarantine_open"], "conflicts": ["conflicts_open", "conflicts_over_7d"],
                          "summary_quality": ["summary_retention", "summary_readability", "summary_accuracy"]}.items():
        rows = table_rows(charts[name])
        assert len(rows) == 14, name
        assert [a for a, _, _ in rows] == [f"{s['as_of']:%Y-%m-%dT%H:%M:%SZ}" for s in stored]
        for (_, _, cells), snapshot in zip(rows, stored):
            assert {c: number(cells[c]) for c in columns} == {
                c: None if snapshot[c] is None else float(snapshot[c]) for c in columns}, name
    # the same numbers in the stored JSON (what `memory-lake health --json` shows of each night)
    capacity = table_rows(charts["capacity"])
    for (_, _, cells), (_, metrics) in zip(capacity, raw):
        metrics = json.loads(metrics)
        assert [number(cells[f"{t}_used"]) for t in ("working", "short_term", "long_term", "important")] == [
            metrics["capacity"][t]["used"] for t in ("working", "short_term", "long_term", "important")]
    # and drawn: 14 points per tier line, each at the snapshot's number
    points = svg_points(charts["capacity"])
    assert len(points) == 4 * 14
    drawn = {(series, run): float(value.replace(",", "")) for run, series, value in points}
    for snapshot in stored:
        label = f"{snapshot['as_of']:%m-%d}"
        assert [drawn[(t, label)] for t in ("working", "short_term", "long_term", "important")] == [
            snapshot[f"{t}_used"] for t in ("working", "short_term", "long_term", "important")]
    # the night-1 snapshot has no 7-day hit rate (nobody searched yet): 13 points on that line
    assert sum(1 for _, series, _ in svg_points(charts["hit_rate"]) if series == "last 7 days") == 13


def test_the_run_charts_hold_the_fourteen_runs(fourteen_nights, folder):
    charts = figures((folder / "latest.html").read_text(encoding="utf-8"))
    runs = [fourteen_nights.runs[n] for n in range(1, 15)]
    ingest = table_rows(charts["ingest"])
    assert [r for _, r, _ in ingest] == [run["run_id"] for run in runs]
    assert [number(c["ingested"]) for _, _, c in ingest] == [
        run["steps"]["ingest_inbox"]["counts"]["ingested"] for run in runs]
    assert [number(c["merged"]) for _, _, c in table_rows(charts["merges"])] == [
        run["steps"]["dedup"]["counts"]["merged"] for run in runs]
    moves = table_rows(charts["moves"])
    for (_, _, cells), run in zip(moves, runs):
        counts = run["steps"]["enforce_tiers"]["counts"]
        assert {c: number(v) for c, v in cells.items()} == {c: counts[c[len("moved_"):]] for c in cells}
    durations = table_rows(charts["durations"])
    assert len(durations) == 14
    # the whole run's seconds, as the run recorded them (the last night's report is written before
    # its run's total is final: its own write_report and notify steps are not in it yet)
    assert [number(c["duration_s"]) for _, _, c in durations][:13] == [run["duration_s"] for run in runs][:13]


def test_each_tenant_has_its_own_history(folder, lake):
    charts = figures((folder / "latest.html").read_text(encoding="utf-8"))
    for tenant in ("acme", "globex", "zhongke"):
        stored = lake.sql("SELECT working_used, hit_rate_7d FROM health_series WHERE level = 'tenant' AND tenant = ? "
                          "ORDER BY as_of", [tenant]).to_dicts()
        rows = table_rows(charts[f"capacity:{tenant}"])
        assert [number(c["working_used"]) for _, _, c in rows] == [s["working_used"] for s in stored]
        assert len(rows) == 14
        assert [number(c["hit_rate_7d"]) for _, _, c in table_rows(charts[f"hit_rate:{tenant}"])] == [
            s["hit_rate_7d"] for s in stored]


def test_the_trend_is_null_with_its_reason_then_the_documented_slope(lake):
    stored = lake.sql("SELECT as_of, metrics FROM health_snapshots WHERE level = 'overall' ORDER BY as_of").rows()
    history: list[tuple[datetime, float | None]] = []
    seen = []
    for night, (as_of, metrics) in enumerate(stored, start=1):
        hit = json.loads(metrics)["hit_rate"]
        history.append((as_of, hit["last_7d"]))
        window = history[-K:]
        rated = [(t, r) for t, r in window if r is not None]
        if len(rated) < K:
            assert (hit["trend"], hit["trend_slope"], hit["trend_note"]) == (
                None, None, f"{len(rated)} of {K} snapshots with a 7-day hit rate needed"), night
            seen.append(None)
            continue
        days = np.array([(t - rated[0][0]).total_seconds() / 86400 for t, _ in rated])
        slope = np.polyfit(days, np.array([r for _, r in rated]), 1)[0]
        expected = "improving" if slope > DEAD_BAND else "declining" if slope < -DEAD_BAND else "stable"
        assert hit["trend"] == expected and hit["trend_slope"] == pytest.approx(slope, abs=1e-6), night
        assert hit["trend_window"] == {"snapshots": K, "from": f"{rated[0][0]:%Y-%m-%dT%H:%M:%SZ}",
                                       "to": f"{as_of:%Y-%m-%dT%H:%M:%SZ}"}
        seen.append(expected)
    # night 1 has no searches yet, so the first trend is night 8's (7 rated snapshots: nights 2 to 8)
    assert seen[:7] == [None] * 7 and all(s is not None for s in seen[7:])


def test_the_report_and_the_index_open_clean_in_chromium(folder, tmp_path):
    from ..browser import blank_ratio, chromium_or_skip, non_white_ratio, open_page

    chromium_or_skip()
    for name in ("latest.html", "index.html"):
        page = open_page(folder / name, tmp_path / f"{name}.png")
        assert page.problems == [] and page.page_errors == [] and page.failed == [], name
        assert page.other_requests == [], page.other_requests  # nothing fetched but the file itself
        assert blank_ratio(page.png) < 0.97 and non_white_ratio(page.png) > 0.02, name
