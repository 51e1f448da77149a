"""Issue 40.4: alerts people act on. Each names the command that acts on it and has a stable code;
the words are English or, with ``[report] language = "zh"``, the seed's Chinese. New alerts: a
blocked publish (naming the checks, at the top of the page), a failed publish target, summaries
that failed their gate, quarantine that keeps growing, and a nightly run that did not happen."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memory_lake.observe.health import compute_health, snapshot_health
from memory_lake.observe.report import verdict
from memory_lake.observe.runs import record_run, run_alerts, write_report
from memory_lake import Lake
from memory_lake.store import InputError

from ..conftest import AS_OF, write_jsonl


def mem(i: int, tier: str = "working", tenant: str = "acme", user: str = "alice", days_old: int = 1) -> dict:
    at = (AS_OF - timedelta(days=days_old)).isoformat() + "Z"
    return {"id": f"{tenant}-{user}-{i}", "tenant": tenant, "agent_id": "bot", "user_id": user, "tier": tier,
            "content": f"note {i} of {user}", "created_at": at, "last_accessed_at": at}


def codes(alerts: list[dict]) -> list[str]:
    return [a["code"] for a in alerts]


def test_quarantine_that_grows_at_each_of_the_last_three_runs_is_a_warning(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "ok.jsonl", [mem(0)])], as_of=AS_OF)
    seen = []
    for night in range(6):
        when = AS_OF + timedelta(days=night)
        if night < 4:  # nights 0-3 each bring one more bad line; then the agent is fixed
            lake.ingest([write_jsonl(tmp_path / f"bad-{night}.jsonl", [mem(10 + night)], raw_lines={1: "{not json"})],
                        as_of=when)
        snapshot_health(lake, when)
        with lake.reader() as con:
            overall = compute_health(con, when, lake.policy)["overall"]
        seen.append((overall["quarantine"]["open"], [a["message"] for a in overall["alerts"]
                                                     if a["code"] == "quarantine_growing"]))
    assert seen == [
        (1, []), (2, []), (3, []),
        (4, ["quarantine grew at each of the last 3 runs (1 → 2 → 3 → 4 open lines): an agent keeps writing lines "
             "that fail the contract"]),
        (4, []), (4, [])]


def test_no_successful_nightly_for_26_hours_is_a_warning(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "ok.jsonl", [mem(0)])], as_of=AS_OF)
    record_run(lake, "nightly-1", "nightly", AS_OF, [])
    record_run(lake, "nightly-2", "nightly", AS_OF + timedelta(hours=24), [], error=RuntimeError("disk full"))

    def overdue(hours: int) -> list[dict]:
        with lake.reader() as con:
            alerts = compute_health(con, AS_OF + timedelta(hours=hours), lake.policy)["overall"]["alerts"]
        return [a for a in alerts if a["code"] == "run_overdue"]

    assert overdue(25) == []
    # the failed run of hour 24 does not count: the last successful one is 30 hours old
    assert overdue(30) == [{
        "level": "warning", "code": "run_overdue",
        "message": "no successful nightly run for 30 hours (the last was as of 2026-11-30T00:00:00Z; the schedule is "
                   "daily)",
        "action": "memory-lake sql \"SELECT run_id, as_of, status FROM runs ORDER BY as_of DESC LIMIT 5\"; check the "
                  "worker (memory-lake serve-flows) or run it now: memory-lake run nightly"}]


def test_summaries_that_failed_their_gate_are_a_warning_and_their_scores_are_in_the_snapshot(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "ok.jsonl", [mem(0)])], as_of=AS_OF)
    with lake.writer(purpose="test: two summary keys") as con:
        con.execute(
            """INSERT INTO summary_state (tenant, agent_id, user_id, session_id, source_hash, source_ids, status, method,
                   summary_id, retention, compression, readability, accuracy, passed, failed, as_of, run_id)
               VALUES ('acme', 'bot', 'alice', NULL, 'h1', ['a'], 'published', 'extractive', 's1', 1.0, 4.0, 0.9, 1.0,
                       true, [], ?, 'r'),
                      ('acme', 'bot', 'bob', NULL, 'h2', ['b'], 'failed', 'extractive', NULL, 0.5, 2.0, 0.9, 0.9,
                       false, ['retention', 'compression', 'accuracy'], ?, 'r')""", [AS_OF, AS_OF])
    with lake.reader() as con:
        health = compute_health(con, AS_OF, lake.policy)
    acme = health["tenants"]["acme"]
    assert acme["summaries"] == {"published": 1, "failed": 1, "mean": {
        "retention": 1.0, "compression": 4.0, "readability": 0.9, "accuracy": 1.0}}
    assert [a for a in acme["alerts"] if a["code"] == "summaries_failed"] == [{
        "level": "warning", "code": "summaries_failed",
        "message": "1 summary failed the quality gate (accuracy, compression, retention): not published, the previous "
                   "one stays",
        "action": "memory-lake summarize --tenant T --json shows each summary's scores and missing facts"}]
    assert health["overall"]["summaries"] == acme["summaries"]


def test_a_blocked_publish_and_a_failed_target_are_the_runs_own_alerts():
    publish = {"status": "blocked", "failed": ["working within capacity per scope"], "current": "v3"}
    steps = [{"name": "sync_targets", "details": {"targets": [
        {"name": "vectors", "state": "failed", "error": "ConnectionError: refused"},
        {"name": "other", "state": "in_sync"}]}}]
    alerts = run_alerts(publish, steps)
    assert [(a["code"], a["message"]) for a in alerts] == [
        ("publish_blocked", "publish blocked by 1 failed check(s): working within capacity per scope; agents keep "
                            "reading v3"),
        ("target_failed", "publish target vectors failed: ConnectionError: refused")]
    assert alerts[1]["action"] == "memory-lake targets status; after fixing it, memory-lake targets sync vectors"
    # the page's first line names the failed check
    assert verdict({"status": "blocked", "steps": []}, publish, {"overall": {"alerts": alerts}}) == (
        "bad", "✗ Publish blocked: working within capacity per scope failed. Agents keep reading v3; the checks are "
               "under Publish below.")


def test_the_verdict_line(lake):
    ok = {"status": "ok", "steps": [{"name": "publish_export"}]}
    published = {"status": "published", "version": "v4", "current": "v4"}
    info = {"level": "info", "code": "stale_ratio", "message": "m"}
    warning = {"level": "warning", "code": "hit_rate_low", "message": "7-day hit rate 20% is below 30% (9 searches)"}
    assert verdict(ok, published, {"overall": {"alerts": [info]}}) == (
        "good", "✓ All fine: the run published v4, no warning; 1 note(s) for information.")
    assert verdict(ok, {"status": "unchanged", "version": None, "current": "v4"}, {"overall": {"alerts": []}}) == (
        "good", "✓ All fine: the run nothing new to publish (v4), no warning.")
    # a tenant's alert of a condition the lake's alerts already name adds it up, it is no second warning;
    # a condition only a tenant has is its own
    assert verdict(ok, published, {"overall": {"alerts": [warning]}, "tenants": {"t": {"alerts": [warning]}}}) == (
        "warn", "⚠ 1 warning(s) need attention: 7-day hit rate 20% is below 30% (9 searches). Run published v4.")
    overdue = {"level": "warning", "code": "conflicts_overdue", "message": "2 conflict(s) open for more than 7 days"}
    assert verdict(ok, published, {"overall": {"alerts": [warning]}, "tenants": {"t": {"alerts": [warning, overdue]}}}) == (
        "warn", "⚠ 2 warning(s) need attention: 7-day hit rate 20% is below 30% (9 searches) (+1 more). Run published v4.")
    degraded = {"status": "degraded", "steps": [{"errors": [{"step": "dedup"}]}]}
    assert verdict(degraded, published, {})[0] == "warn"


def test_alerts_in_the_seeds_chinese(tmp_path):
    lake = Lake.open(tmp_path / "lake", create=True, policy_overrides={"report": {"language": "zh"}})
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [mem(i) for i in range(18)])], as_of=AS_OF)
    snapshot_health(lake, AS_OF)
    with lake.reader() as con:
        (alert,) = [a for a in compute_health(con, AS_OF, lake.policy)["scopes"][0]["alerts"]]
    assert alert == {"level": "warning", "code": "working_capacity", "message": "工作记忆使用率 90%（18/20），建议晋升到短期",
                     "action": "memory-lake patrol：最旧的工作记忆移到短期，直到 75%（--dry-run 先看会移哪些）"}
    page = Path(write_report(lake, AS_OF, "r1", out_dir=tmp_path / "reports").details["path"]).read_text("utf-8")
    assert "<td lang=\"zh\">工作记忆使用率 90%（18/20），建议晋升到短期</td>" in page


def test_a_language_the_report_does_not_have_is_refused(tmp_path):
    with pytest.raises(InputError, match=r'\[report\] language = .fr.: "en" \(English\) or "zh"'):
        Lake.open(tmp_path / "lake", create=True, policy_overrides={"report": {"language": "fr"}}).policy


def test_a_scope_whose_searches_find_nothing_reaches_the_lake_wide_alerts(lake, tmp_path):
    """The lake's hit rate was fine while two scopes' agents found nothing, night after night: the
    warning was only in the scopes' own rows, which no page showed."""
    from memory_lake.maintain.events import apply_events

    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [mem(0), mem(1, user="bob"), mem(2, user="carol")])], as_of=AS_OF)
    searches = [{"search_id": f"s-{user}-{i}", "ts": "2026-11-29T00:00:00Z", "tenant": "acme", "agent_id": "bot",
                 "user_id": user, "query": "q", "result_ids": [], "raw_scores": [], "keyword_match": user != "bob"}
                for user in ("alice", "bob", "carol") for i in range(4)]
    write_jsonl(lake.events / "searches-test.jsonl", searches)
    apply_events(lake, AS_OF)
    with lake.reader() as con:
        health = compute_health(con, AS_OF, lake.policy)
    assert health["overall"]["hit_rate"]["last_7d"] == round(8 / 12, 4)  # the whole is fine
    bob = next(s for s in health["scopes"] if s["user_id"] == "bob")
    assert [a["message"] for a in bob["alerts"] if a["code"] == "hit_rate_low"] == [
        "7-day hit rate 0% is below 30% (4 searches)"]
    (rolled,) = [a for a in health["overall"]["alerts"] if a["code"].startswith("hit_rate")]
    assert (rolled["level"], rolled["code"], rolled["message"]) == (
        "warning", "hit_rate_low_scopes",
        "1 scope(s) with a 7-day hit rate below 30%: their agents rarely find what they search for")
    assert "code = 'hit_rate_low'" in rolled["action"]


def test_a_page_rendered_outside_a_run_says_so_and_leaves_latest_to_the_runs(lake, tmp_path):
    from memory_lake.observe.runs import timed
    from memory_lake.publish.export import publish

    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [mem(0)])], as_of=AS_OF)
    steps = [timed(publish, lake, AS_OF, run_id="nightly-1")]
    night = write_report(lake, AS_OF, "nightly-1", steps, out_dir=tmp_path / "reports").details
    assert night["latest"] == str(tmp_path / "reports" / "latest.html")
    page = Path(night["path"]).read_text("utf-8")
    assert '<p class="verdict good" id="verdict">✓ All fine: the run published v1, no warning.</p>' in page
    assert "so far: the report and the notification come after this page" in page
    by_hand = write_report(lake, AS_OF + timedelta(hours=9), "report-1", None, tmp_path / "reports").details
    assert "latest" not in by_hand and (tmp_path / "reports" / "latest.html").read_text("utf-8") == page.replace(
        'href="../index.html"', 'href="index.html"').replace('href="../latest.html"', 'href="latest.html"')
    own = Path(by_hand["path"]).read_text("utf-8")
    assert '<p class="verdict good" id="verdict">✓ No warning. Agents read v1.</p>' in own
    assert "none: this page was rendered outside a run, from the lake&#x27;s state" in own


def test_a_patrol_target_at_or_above_the_warning_is_refused(tmp_path):
    """working_target = 0.95 was accepted: the patrol would act above 85 % and move nothing."""
    with pytest.raises(InputError, match=r"\[patrol\] working_target = 0.95: must be below \[health\] "
                                         r"utilization_warning \(0.85\)"):
        Lake.open(tmp_path / "lake", create=True, policy_overrides={"patrol": {"working_target": 0.95}}).policy
    with pytest.raises(InputError, match=r"\[patrol\] working_target = 0.75: must be below \[health\] "
                                         r"utilization_warning \(0.7\)"):
        Lake.open(tmp_path / "lake2", create=True, policy_overrides={"health": {"utilization_warning": 0.7}}).policy
    lowered = Lake.open(tmp_path / "lake3", create=True, policy_overrides={
        "health": {"utilization_warning": 0.7}, "patrol": {"working_target": 0.6, "short_term_target": 0.65}}).policy
    assert (lowered.patrol.working_target, lowered.patrol.short_term_target) == (0.6, 0.65)
