"""The HTML health report: self-contained, escaped, and showing what the operator needs."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from memory_lake.observe.report import MAX_SCOPE_ROWS, render_report

from ..conftest import write_jsonl

AS_OF = "2026-11-30T00:00:00Z"


def _cap(used: int, limit: int | None) -> dict:
    return {"used": used, "limit": limit, "utilization": None if limit is None else used / limit}


def _stats(
    working: tuple[int, int],
    short_term: tuple[int, int],
    long_term: int,
    important: int,
    *,
    alerts: list | None = None,
    hit_7d: float | None = None,
) -> dict:
    return {
        "capacity": {
            "working": _cap(*working),
            "short_term": _cap(*short_term),
            "long_term": _cap(long_term, None),
            "important": _cap(important, None),
        },
        "distribution": {
            "by_type": {"preference": 45, "fact": 20, "decision": 7},
            "by_age": {"older": 200, "last_7d": 60, "last_30d": 120},
        },
        "hit_rate": (
            {"last_7d": None, "last_30d": None, "trend": None, "note": "no retrieval log yet"}
            if hit_7d is None
            else {"last_7d": hit_7d, "last_30d": 0.4, "trend": hit_7d - 0.4, "note": None}
        ),
        "staleness": {"stale_count": 23, "stale_ratio": 0.06, "oldest_unaccessed_days": 45},
        "alerts": alerts or [],
    }


def _scope(tenant: str, agent: str | None, user: str | None, working_used: int) -> dict:
    return {"tenant": tenant, "agent_id": agent, "user_id": user} | _stats(
        (working_used, 20), (30, 100), 12, 2
    )


@pytest.fixture
def health() -> dict:
    return {
        "as_of": AS_OF,
        "overall": _stats(
            (18, 20),
            (90, 200),
            342,
            9,
            alerts=[
                {
                    "level": "warning",
                    "message": "working tier at 90 % of its limit",
                    "action": "run maintenance to move old working memories to short_term",
                }
            ],
        ),
        "tenants": {
            "acme": _stats(
                (17, 10),
                (60, 100),
                300,
                7,
                alerts=[
                    {
                        "level": "info",
                        "message": "stale ratio 12 % above 10 %",
                        "action": "review unaccessed memories",
                    }
                ],
                hit_7d=0.22,
            ),
            "研发部": _stats(
                (1, 10),
                (30, 100),
                42,
                2,
                alerts=[
                    {
                        "level": "warning",
                        "message": "研发部 7 天命中率低于 30 %",
                        "action": "检查检索配置",
                    }
                ],
            ),
        },
        "scopes": [
            _scope("acme", "support-bot", "alice", 9),
            _scope("acme", "support-bot", None, 8),
            _scope("研发部", None, "王伟", 1),
        ],
    }


@pytest.fixture
def run() -> dict:
    return {
        "run_id": "run-20261130-0200",
        "status": "blocked",
        "duration_s": 187.4,
        "steps": [
            {"name": "ingest", "duration_s": 42.0, "summary": "3 files, 1,204 rows, 5 quarantined"},
            {"name": "maintain", "duration_s": 120.1, "summary": {"moved": 14, "merged": 3}},
            {"name": "publish", "duration_s": 25.3, "summary": "blocked by 2 expectations"},
        ],
    }


@pytest.fixture
def publish() -> dict:
    return {
        "status": "blocked",
        "version": None,
        "current": "v3",
        "path": None,
        "failed": ["expect_no_pii_in_content", "expect_scope_counts_match_lake"],
        "checks": [
            {"expectation": "expect_ids_unique", "success": True, "observed": "0 duplicates"},
            {"expectation": "expect_no_pii_in_content", "success": False, "observed": "2 rows"},
            {
                "expectation": "expect_scope_counts_match_lake",
                "success": False,
                "observed": "acme/support-bot/alice: 9 != 10",
            },
        ],
    }


QUARANTINE = {"bad JSON": 3, "missing tenant": 1, "unknown base version": 2}


def _render(tmp_path: Path, health, run, publish, quarantine=QUARANTINE) -> tuple[Path, str]:
    path = render_report(
        health, publish=publish, quarantine=quarantine, run=run, out_dir=tmp_path / "reports"
    )
    return path, path.read_text(encoding="utf-8")


def test_file_name_and_atomic_write(tmp_path, health, run, publish):
    path, text = _render(tmp_path, health, run, publish)
    # one page per run under its date, and the same page as latest.html; both readable by others
    assert path == tmp_path / "reports" / "2026-11-30" / f"{run['run_id']}.html"
    assert text.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in text
    latest = (tmp_path / "reports" / "latest.html").read_text(encoding="utf-8")
    assert latest == text.replace('href="../index.html"', 'href="index.html"').replace('href="../latest.html"',
                                                                                         'href="latest.html"')
    assert {oct(p.stat().st_mode & 0o777) for p in (path, tmp_path / "reports" / "latest.html")} == {"0o644"}
    # No temp file left behind; a second render of the same run replaces its page, another run adds one.
    _render(tmp_path, health, run, None)
    _render(tmp_path, health, {**run, "run_id": "run-2"}, None)
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["2026-11-30", "latest.html"]
    assert sorted(p.name for p in (tmp_path / "reports" / "2026-11-30").iterdir()) == [
        "run-2.html", f"{run['run_id']}.html"]


def test_charts_inline_and_no_external_resources(tmp_path, health, run, publish):
    _, text = _render(tmp_path, health, run, publish)
    # capacity, by type, by age, quarantine
    assert text.count("<svg") >= 4
    for match in re.finditer(r"https?://", text):
        before = text[max(0, match.start() - 20) : match.start()]
        assert re.search(r'xmlns(:xlink)?="$', before), text[match.start() - 60 : match.end() + 60]
    lowered = text.lower()
    for needle in ("src=", "<link", "<script", "@import", "url(http"):
        assert needle not in lowered, needle
    assert text.count("<style>") == 1


def test_header_and_steps(tmp_path, health, run, publish):
    _, text = _render(tmp_path, health, run, publish)
    assert AS_OF in text
    assert "run-20261130-0200" in text
    assert "3 min 07 s" in text
    for name in ("ingest", "maintain", "publish"):
        assert f"<td>{name}</td>" in text
    assert "moved: 14, merged: 3" in text


def test_blocked_publish_shows_failed_expectations(tmp_path, health, run, publish):
    _, text = _render(tmp_path, health, run, publish)
    assert '<span class="badge bad big">blocked</span>' in text
    assert "CURRENT was left untouched" in text
    for name in publish["failed"]:
        assert name in text
    assert "acme/support-bot/alice: 9 != 10" in text


def test_alerts_with_levels(tmp_path, health, run, publish):
    _, text = _render(tmp_path, health, run, publish)
    assert '<tr class="alert-warning" data-code=""><td class="level">warning</td><td>overall</td>' in text
    assert '<tr class="alert-info" data-code=""><td class="level">info</td><td>acme</td>' in text
    assert "研发部 7 天命中率低于 30 %" in text
    # Warnings before info.
    assert text.index("检查检索配置") < text.index("review unaccessed memories")


def test_capacity_distribution_and_rates(tmp_path, health, run, publish):
    _, text = _render(tmp_path, health, run, publish)
    assert "no limit" in text
    assert '<td class="num hot">170.0 %</td>' in text  # acme working over its limit
    assert "no retrieval log yet" in text
    assert '<td class="num hot">22.0 %</td>' in text  # acme 7-day hit rate below 30 %
    # Age buckets in their natural order in the chart, whatever the dict order.
    svg_text = re.findall(r">(last_7d|last_30d|older)</text>", text)
    assert svg_text[:3] == ["last_7d", "last_30d", "older"]
    # Chinese stays text, in the table and in the SVG.
    assert "<th scope=\"row\">研发部</th>" in text


def test_escapes_data(tmp_path, health, run, publish):
    health = copy.deepcopy(health)
    health["tenants"]["<script>"] = health["tenants"].pop("acme")
    health["scopes"][0]["tenant"] = "<script>"
    run = run | {"run_id": 'x" onmouseover="alert(1)'}
    quarantine = {"<b>bad</b>": 2}
    _, text = _render(tmp_path, health, run, publish, quarantine)
    assert "&lt;script&gt;" in text
    assert "<script>" not in text
    assert "<b>bad</b>" not in text
    assert 'x&quot; onmouseover=&quot;alert(1)' in text


def test_empty_quarantine_and_no_publish(tmp_path, health, run):
    _, text = _render(tmp_path, health, run | {"status": "ok"}, None, {})
    assert "nothing quarantined" in text
    assert "Publish not run" in text
    # capacity, by type, by age
    assert text.count("<svg") == 3


def test_scope_table_is_capped(tmp_path, health, run, publish):
    health = copy.deepcopy(health)
    health["scopes"] = [_scope("acme", "bot", f"user-{i:03d}", i % 21) for i in range(250)]
    # One scope without a working limit must sort below every limited one.
    health["scopes"][0]["capacity"]["working"] = _cap(99, None)
    _, text = _render(tmp_path, health, run, publish)
    scopes_html = text[text.index('<section id="scopes">') :]
    assert "of 250; 50 left out" in scopes_html
    assert scopes_html.count("<tr>") - 1 == MAX_SCOPE_ROWS  # minus the header row
    assert "user-000" not in scopes_html
    first_row = scopes_html[scopes_html.index("<tbody>") :]
    assert '<td class="num hot">20 / 20</td>' in first_row[:200]  # fullest first, highlighted


@pytest.mark.process  # starts a process (the subject here)
def test_screenshot_with_headless_chromium(tmp_path, health, run, publish):
    candidates = ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
    chromium = next((p for p in candidates if p and Path(p).exists()), None)
    if chromium is None:
        pytest.skip("headless Chromium not installed")
    path, _ = _render(tmp_path, health, run, publish)
    png = tmp_path / "report.png"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            f"--screenshot={png}",
            "--window-size=1200,2000",
            f"file://{path}",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert png.exists()
    assert png.stat().st_size > 10_000


def test_the_conflict_queue_from_a_real_lake(lake, tmp_path):
    from memory_lake.observe.runs import write_report

    from ..conftest import AS_OF, write_jsonl

    base = {"id": "p", "tenant": "acme", "content": "用户偏好浅色模式"}
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [base])], as_of=AS_OF)
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [{**base, "version": 1, "content": "用户偏好深色模式"}])], as_of=AS_OF)
    lake.ingest([write_jsonl(tmp_path / "c.jsonl", [{**base, "version": 1, "content": "<b>auto</b>"}])], as_of=AS_OF)
    (conflict_id,) = lake.conflicts()["conflict_id"].to_list()
    page = Path(write_report(lake, AS_OF, "r1", out_dir=tmp_path / "reports").details["path"]).read_text()
    section = page[page.index('<section id="conflicts">'):]
    section = section[:section.index("</section>")]
    assert "<dt>open</dt><dd>1</dd>" in _untitled(section.replace("\n", ""))
    # ids, kind and field: never the values, which are memory text (a report outlives a forget)
    assert (f"<tr><td>{conflict_id}</td><td>write</td><td>p</td><td>-</td><td>content</td><td>agent</td>"
            "<td>2026-11-30 00:00</td></tr>") in section
    assert "偏好" not in page and "&lt;b&gt;auto" not in page and "<b>auto" not in page
    lake.resolve_conflict(conflict_id, "lake", as_of=AS_OF)
    page = Path(write_report(lake, AS_OF, "r2", out_dir=tmp_path / "reports").details["path"]).read_text()
    assert "no open conflicts" in page


def test_conflict_values_never_reach_the_page(tmp_path, health, run, publish):
    health = copy.deepcopy(health)
    health["overall"]["conflicts"] = {"open": 1, "by_age": {"under_1d": 1}, "important": 0}
    conflict = {"conflict_id": "c1", "kind": "contradiction", "memory_id": "a2", "other_memory_id": "b1",
                "field": "content", "incoming_operator": "agent", "created_at": "2026-11-30T00:00:00",
                # a caller that still passes the values (as reports before this one showed them)
                "lake_value": '"user prefers dark mode"', "incoming_value": '"user prefers light mode"',
                "base_value": '"user prefers a mode"'}
    path = render_report(health, publish=publish, quarantine=QUARANTINE, run=run, out_dir=tmp_path / "reports",
                         conflicts=[conflict])
    text = path.read_text(encoding="utf-8")
    assert ("<tr><td>c1</td><td>contradiction</td><td>a2</td><td>b1</td><td>content</td><td>agent</td>"
            "<td>2026-11-30T00:00</td></tr>") in text
    assert "prefers" not in text


def test_an_empty_lake_gets_a_report(lake, tmp_path):
    """Issue 11.4: the first night of a new install (no memories) ends with a report too."""
    from memory_lake.publish.export import publish
    from memory_lake.observe.runs import write_report, timed

    from ..conftest import AS_OF as LAKE_AS_OF

    steps = [timed(publish, lake, LAKE_AS_OF, run_id="first-night")]
    result = write_report(lake, LAKE_AS_OF, "first-night", steps, out_dir=tmp_path / "reports")
    page = Path(result.details["path"]).read_text()
    assert result.details["path"] == str(tmp_path / "reports" / "2026-11-30" / "first-night.html")
    assert "No scopes." in page and "nothing quarantined" in page and "no open conflicts" in page
    assert "<dt>new version</dt><dd>v1</dd><dt>CURRENT</dt><dd>v1</dd>" in _untitled(page)


def _untitled(page: str) -> str:
    """The page without its tooltips (each figure's label carries a title="explanation")."""
    return re.sub(r' title="[^"]*"', "", page)


def _section_text(page: str, anchor: str) -> str:
    section = _untitled(page)[_untitled(page).index(f'<section id="{anchor}">'):]
    return section[:section.index("</section>") + len("</section>")]


def test_the_summaries_section_says_how_many_were_regenerated(lake, tmp_path):
    """It said "every summary regenerated passed all four thresholds" when none was regenerated."""
    from memory_lake.maintain import summarize
    from memory_lake.observe.runs import timed, write_report

    from ..conftest import AS_OF as LAKE_AS_OF, write_jsonl
    from ..maintain.test_summaries import _turn_memories

    def summaries_of(steps, run_id):
        path = write_report(lake, LAKE_AS_OF, run_id, steps, out_dir=tmp_path / "reports").details["path"]
        return _section_text(Path(path).read_text(encoding="utf-8"), "summaries")

    assert summaries_of(None, "r0") == ('<section id="summaries"><h2>Summaries</h2><p>no summary published yet and '
                                        'none failed the gate</p></section>')
    write_jsonl(lake.inbox / "a.jsonl", _turn_memories())
    lake.ingest(as_of=LAKE_AS_OF)
    first = timed(summarize, lake, LAKE_AS_OF, run_id="r1")
    assert summaries_of([first], "r1") == (
        '<section id="summaries"><h2>Summaries</h2><p>1 summary regenerated this run; it passed all four '
        'thresholds and was published</p></section>')
    again = timed(summarize, lake, LAKE_AS_OF, run_id="r2")
    assert again["counts"]["regenerated"] == 0
    assert summaries_of([again], "r2") == (
        '<section id="summaries"><h2>Summaries</h2><p>no summary regenerated this run (of 1 scope or session: 1 '
        'unchanged since its last summary); 1 published summary stays as it was</p></section>')
    assert summaries_of(None, "r3") == ('<section id="summaries"><h2>Summaries</h2><p>1 summary published; none '
                                        'failed the gate at its latest attempt</p></section>')


def test_after_a_rollback_the_publish_section_says_current_was_rolled_back(lake, tmp_path):
    """After `rollback v1`, a report said "published new version v2 ... CURRENT v1" without a word
    of the rollback; the lake's rollbacks table says who rolled it back, when and why."""
    from memory_lake.observe.runs import timed, write_report
    from memory_lake.publish.export import publish

    from ..conftest import AS_OF as LAKE_AS_OF, write_jsonl

    def publish_of(steps, run_id):
        path = write_report(lake, LAKE_AS_OF, run_id, steps, out_dir=tmp_path / "reports").details["path"]
        return _section_text(Path(path).read_text(encoding="utf-8"), "publish")

    lake.publish(as_of="2026-11-29T00:00:00Z")
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [{"id": "m1", "tenant": "acme", "content": "Lunch is at noon"}])],
                as_of=LAKE_AS_OF)
    lake.publish(as_of=LAKE_AS_OF)
    assert "rolled back" not in publish_of(None, "r0")
    lake.rollback("v1", reason="v2 lost a tenant", by="ops", as_of="2026-11-30T01:00:00Z")
    section = publish_of(None, "r1")
    assert "<dt>new version</dt><dd>v2</dd><dt>CURRENT</dt><dd>v1 (rolled back from v2)</dd>" in section
    assert ("<p>CURRENT was rolled back from v2 to v1 at 2026-11-30T01:00:00Z by ops: v2 lost a tenant. Agents "
            "read v1; the next publish with changes makes a new version.</p>") in section
    # a run after the rollback publishes forward: CURRENT is the newest version again, no rollback to tell
    step = timed(publish, lake, LAKE_AS_OF, run_id="r2")
    section = publish_of([step], "r2")
    assert "<dt>new version</dt><dd>v3</dd><dt>CURRENT</dt><dd>v3</dd>" in section and "rolled back" not in section


def test_the_last_publish_of_two_at_one_as_of_is_the_higher_version(lake, tmp_path):
    """Two publishes with the same as_of (a night run twice) were ordered by their run ids, whose
    suffix is random: the report could name the older version as the last publish."""
    from memory_lake.observe.runs import last_publish

    for n in range(1, 4):
        lake.ingest([write_jsonl(tmp_path / f"{n}.jsonl", [{"tenant": "acme", "content": f"fact number {n}"}])],
                    as_of=AS_OF)
        assert lake.publish(as_of=AS_OF).details["version"] == f"v{n}"
        assert last_publish(lake)["version"] == f"v{n}"


def test_a_run_that_regenerates_no_summary_says_why_from_the_step_counts():
    """The first night of a lake of short scopes regenerates nothing because nothing needs a
    summary, not because "no source changed"."""
    from memory_lake.observe.report import _summaries_made_text

    first_night = {"regenerated": 0, "published": 0, "keys": 3, "unchanged": 0, "fits_budget": 3, "skipped": 0}
    assert _summaries_made_text(first_night) == (
        "no summary regenerated this run (of 3 scopes and sessions: 3 small enough to read whole, so none is "
        "needed); no summary is published yet")
    mixed = {"regenerated": 0, "published": 2, "keys": 4, "unchanged": 2, "fits_budget": 1, "skipped": 1}
    assert _summaries_made_text(mixed) == (
        "no summary regenerated this run (of 4 scopes and sessions: 2 unchanged since their last summary, 1 small "
        "enough to read whole, so none is needed, 1 skipped: no summary could pass (`memory-lake summarize --json` "
        "says why)); 2 published summaries stay as they were")
    assert _summaries_made_text({"regenerated": 0, "published": 0, "keys": 0}) == (
        "no summary regenerated this run (no scope or session has memories to summarise); no summary is published yet")


def test_a_report_rendered_outside_a_run_shows_the_last_runs_steps(lake, tmp_path):
    """`memory-lake report` after the nightly of the same day rewrites that day's page; it read "No
    steps recorded" and the nightly's step table was gone (a stranger's trial). It shows the
    latest run's steps now, saying whose they are."""
    from datetime import timedelta

    from memory_lake.publish.export import publish
    from memory_lake.observe.runs import record_run, write_report, timed

    from ..conftest import AS_OF as LAKE_AS_OF

    assert "No steps recorded." in Path(write_report(lake, LAKE_AS_OF, "adhoc-0", None,
                                                     out_dir=tmp_path / "r0").details["path"]).read_text()
    steps = [timed(publish, lake, LAKE_AS_OF, run_id="night-1")]
    record_run(lake, "night-1", "nightly", LAKE_AS_OF, steps)
    later = LAKE_AS_OF + timedelta(hours=9)
    page = Path(write_report(lake, later, "adhoc-1", None, out_dir=tmp_path / "r1").details["path"]).read_text()
    assert ("<h3>Steps of the last nightly run, night-1 as of 2026-11-30T00:00:00Z (ok)<br><span class=\"muted\">"
            "this page was rendered outside a run</span></h3>") in page
    assert "<tr><td>publish_export</td>" in page and "No steps recorded." not in page
    # a run after the page's as_of is not shown as its steps
    early = Path(write_report(lake, LAKE_AS_OF - timedelta(hours=1), "adhoc-2", None,
                              out_dir=tmp_path / "r2").details["path"]).read_text()
    assert "No steps recorded." in early


def test_each_bar_chart_spec_is_the_one_altair_writes_and_draws_the_same_svg():
    """`_bar_spec` is written out by hand; it must be what Altair's classes built before (the
    reference below, as report.py had it), key for key and in order, so the picture is the same."""
    import json

    import altair as alt
    import vl_convert

    from memory_lake.observe.report import _ACCENT, _WARN, _bar_spec

    def altair_bars(values, x_title, colour):
        records = [{"category": str(k), "value": v or 0} for k, v in values]
        base = alt.Chart(alt.Data(values=records)).encode(
            y=alt.Y("category:N", sort=None, title=None, axis=alt.Axis(labelLimit=220)),
            x=alt.X("value:Q", title=x_title, axis=alt.Axis(tickMinStep=1, format="~s")))
        bars = base.mark_bar(color=colour, height={"band": 0.75})
        labels = base.mark_text(align="left", dx=4, fontSize=11, color="#111827").encode(
            text=alt.Text("value:Q", format=","))
        return ((bars + labels).properties(width=320, height={"step": 24})
                .configure(font="sans-serif", background="white").configure_view(stroke=None))

    cases = [([("working", 20), ("short_term", 100), ("long_term", None), ("important", 0)], "memories", _ACCENT),
             ([("0-7 d", 3.5), ("7-30 d", 12), ("> 1 year", 1234567)], "memories", _ACCENT),
             ([("bad JSON", 2), ("tenant is required & <missing>", 1), ("中文 原因", 7)], "records", _WARN),
             ([], "nothing", "#123456")]
    for n, (values, x_title, colour) in enumerate(cases):
        spec = _bar_spec(values, x_title, colour)
        reference = altair_bars(values, x_title, colour).to_dict()
        assert json.dumps(spec) == json.dumps(reference), values
        if n in (0, 2):
            assert vl_convert.vegalite_to_svg(spec) == vl_convert.vegalite_to_svg(reference)

