"""Health: the seed's JSON keys per scope, tenant and overall; alerts; hit rate; stored history."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memory_lake.maintain.events import apply_events
from memory_lake.observe.health import NO_LOG_NOTE, compute_health, latest_health, snapshot_health

from ..conftest import AS_OF, signed_by_user, write_jsonl


def mem(i, tier, *, days_old, accessed_days_ago=None, tenant="acme", user="alice", type_="fact"):
    created = AS_OF - timedelta(days=days_old)
    accessed = AS_OF - timedelta(days=accessed_days_ago if accessed_days_ago is not None else days_old)
    return {"id": f"{tenant}-{user}-{tier}-{i}", "tenant": tenant, "agent_id": "bot", "user_id": user, "tier": tier,
            "type": type_, "content": f"{tier} {i} {user} {tenant}", "created_at": created.isoformat() + "Z",
            "last_accessed_at": accessed.isoformat() + "Z"}


def build(lake, tmp_path):
    records = [mem(i, "working", days_old=1) for i in range(18)]                      # 90 %: warning
    records += [mem(i, "short_term", days_old=10, type_="preference") for i in range(5)]
    records += [mem(i, "long_term", days_old=40, accessed_days_ago=35) for i in range(3)]  # stale
    records += [mem(0, "important", days_old=100)]                                      # never stale
    records += [mem(i, "working", days_old=2, user="bob") for i in range(2)]
    records += [mem(0, "short_term", days_old=3, tenant="globex")]
    lake.ingest([write_jsonl(tmp_path / "h.jsonl", records)], as_of=AS_OF)


def test_scope_tenant_and_overall_metrics(lake, tmp_path):
    build(lake, tmp_path)
    with lake.reader() as con:
        health = compute_health(con, AS_OF, lake.policy)
    assert health["as_of"] == "2026-11-30T00:00:00Z"
    alice = next(s for s in health["scopes"] if s["user_id"] == "alice")
    assert alice == {
        "tenant": "acme", "agent_id": "bot", "user_id": "alice",
        "capacity": {"working": {"used": 18, "limit": 20, "utilization": 0.9},
                     "short_term": {"used": 5, "limit": 100, "utilization": 0.05},
                     "long_term": {"used": 3, "limit": None, "utilization": None},
                     "important": {"used": 1, "limit": None, "utilization": None}},
        "distribution": {"by_type": {"fact": 22, "preference": 5},
                         "by_age": {"last_7d": 18, "last_30d": 5, "older": 4}},
        "hit_rate": {"last_7d": None, "last_30d": None, "trend": None, "note": NO_LOG_NOTE, "trend_slope": None,
                     "trend_note": "0 of 7 snapshots with a 7-day hit rate needed"},
        "staleness": {"stale_count": 3, "stale_ratio": round(3 / 26, 4), "oldest_unaccessed_days": 35,
                      "suggest_archive": 0},
        "total": 27,
        "conflicts": {"open": 0, "by_age": {"under_1d": 0, "1_to_7d": 0, "over_7d": 0}, "important": 0, "oldest_days": 0,
                      "overdue": 0},
        "inactive": {"dormant": 0, "archived": 0},
        "alerts": [
            {"level": "warning", "code": "working_capacity", "message": "working memory at 90% of capacity (18/20)",
             "action": "memory-lake patrol moves the oldest working memories to short_term until 75% "
                       "(--dry-run shows which)"},
            {"level": "info", "code": "stale_ratio",
             "message": "3 memories not accessed for 30 days (12%, above 10%)",
             "action": "review them for archiving: memory-lake sql \"SELECT id, tier, last_accessed_at FROM memories "
                       "WHERE status = 'active' ORDER BY last_accessed_at LIMIT 50\"; archive one with memory-lake edit "
                       "ID --set expires_at=YYYY-MM-DD"},
        ],
    }
    acme = health["tenants"]["acme"]
    # tenant limits are the sums of its scopes' limits
    assert acme["capacity"]["working"] == {"used": 20, "limit": 40, "utilization": 0.5}
    assert acme["alerts"][0] == {"level": "warning", "code": "working_capacity_scopes",
                                 "message": "1 scope(s) with working memory above 85% of capacity",
                                 "action": "memory-lake patrol moves their oldest working memories to short_term until 75%"}
    assert health["overall"]["capacity"]["short_term"] == {"used": 6, "limit": 300, "utilization": 0.02}
    assert set(health["tenants"]) == {"acme", "globex"} and len(health["scopes"]) == 3


def test_hit_rate_comes_from_the_search_log(lake, tmp_path):
    build(lake, tmp_path)
    searches = []
    for day, hit in [(1, True), (2, False), (3, False), (20, True), (21, True)]:
        searches.append({"search_id": f"s{day}", "ts": (AS_OF - timedelta(days=day)).isoformat() + "Z",
                         "tenant": "acme", "agent_id": "bot", "user_id": "alice", "query": "q", "mode": "keyword",
                         "mode_used": "keyword", "filters": {}, "result_ids": [], "raw_scores": [],
                         "keyword_match": hit})
    write_jsonl(lake.events / "searches-test.jsonl", searches)
    apply_events(lake, AS_OF)
    with lake.reader() as con:
        health = compute_health(con, AS_OF, lake.policy)
    alice = next(s for s in health["scopes"] if s["user_id"] == "alice")
    # one snapshot: no trend yet (it needs the 7-day hit rate of 7 snapshots), and it says so
    assert alice["hit_rate"] == {"last_7d": 0.3333, "last_30d": 0.6, "trend": None, "trend_slope": None,
                                 "trend_note": "1 of 7 snapshots with a 7-day hit rate needed",
                                 "searches_7d": 3, "searches_30d": 5}
    assert not any("hit rate" in alert["message"] for alert in alice["alerts"])  # 33 % is above the 30 % line
    bob = next(s for s in health["scopes"] if s["user_id"] == "bob")
    assert bob["hit_rate"]["last_7d"] is None and bob["hit_rate"]["note"] == NO_LOG_NOTE


def test_low_hit_rate_raises_a_warning(lake, tmp_path):
    build(lake, tmp_path)
    write_jsonl(lake.events / "searches-test.jsonl", [
        {"search_id": f"s{i}", "ts": "2026-11-29T00:00:00Z", "tenant": "globex", "query": "q", "result_ids": [],
         "raw_scores": [], "keyword_match": i == 0} for i in range(4)])
    apply_events(lake, AS_OF)
    with lake.reader() as con:
        globex = compute_health(con, AS_OF, lake.policy)["tenants"]["globex"]
    assert {"level": "warning", "code": "hit_rate_low", "message": "7-day hit rate 25% is below 30% (4 searches)",
            "action": "search in hybrid mode (memory-lake search QUERY --mode hybrid, the default; the HTTP and MCP "
                      "services use it too) and archive stale memories (see the stale alert)"} in globex["alerts"]


def test_snapshot_is_stored_per_level_and_replaced_on_rerun(lake, tmp_path):
    build(lake, tmp_path)
    snapshot_health(lake, AS_OF, run_id="r1")
    snapshot_health(lake, AS_OF, run_id="r2")
    levels = dict(lake.sql("SELECT level, count(*) FROM health_snapshots GROUP BY 1").rows())
    assert levels == {"overall": 1, "tenant": 2, "scope": 3}
    assert lake.sql("SELECT DISTINCT run_id FROM health_snapshots").item() == "r2"
    stored = latest_health(lake)
    with lake.reader() as con:
        live = compute_health(con, AS_OF, lake.policy)
    assert json.loads(json.dumps(stored)) == json.loads(json.dumps(live))
    only = latest_health(lake, tenant="globex")
    assert list(only["tenants"]) == ["globex"] and only["overall"] == live["tenants"]["globex"]


def test_a_user_change_to_an_important_memory_raises_an_info_alert(lake, tmp_path):
    build(lake, tmp_path)
    snapshot_health(lake, AS_OF)
    later = AS_OF + timedelta(hours=12)
    lake.ingest([signed_by_user(lake, write_jsonl(tmp_path / "edit.jsonl", [
        {**mem(0, "important", days_old=100), "version": 1, "content": "edited by the user", "operator": "user"}]))],
        as_of=later)
    with lake.reader() as con:
        alerts = compute_health(con, later, lake.policy)["overall"]["alerts"]
    assert {"level": "info", "code": "important_changed", "message": "1 change(s) to important memories since the "
            "last snapshot", "action": "review the audit trail: memory-lake sql \"SELECT * FROM memory_history WHERE "
            "before.tier = 'important' ORDER BY as_of DESC\""} in alerts


def test_suggest_archive_flags_raise_an_info_alert(lake, tmp_path):
    from memory_lake.maintain.tiers import enforce_tiers

    lake.ingest([write_jsonl(tmp_path / "old.jsonl", [mem(0, "long_term", days_old=400, accessed_days_ago=200)])],
                as_of=AS_OF)
    enforce_tiers(lake, AS_OF)
    with lake.reader() as con:
        overall = compute_health(con, AS_OF, lake.policy)["overall"]
    assert overall["staleness"]["suggest_archive"] == 1
    # the one memory is dormant too: its scope holds nothing an agent can load (a stranger's agents
    # loaded [] after a quiet period, and health said nothing above info)
    assert overall["alerts"][-2:] == [
        {"level": "info", "code": "suggest_archive", "message": "1 long-term memories not used for 180 days",
         "action": "review them (memory-lake sql \"SELECT * FROM memory_flags\"), then archive one "
                   "(memory-lake edit ID --set expires_at=YYYY-MM-DD: the next run archives it), "
                   "forget it (memory-lake forget ID --reason TEXT) or keep it"},
        {"level": "warning", "code": "dormant_scopes", "message": "1 scope(s) hold no live memory, only 1 dormant ones (unused for 60 days): "
                                        "search, the context pack and the export give them nothing",
         "action": "memory-lake search QUERY --tenant T --user U --include-inactive to see them; memory-lake restore "
                   "ID... brings them back (a use or a write wakes a dormant one)"}]


def test_the_conflict_queue_by_age_and_the_important_alert(lake, tmp_path):
    from datetime import timedelta

    base = {"id": "p", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "content": "dark mode",
            "created_at": "2026-11-01T00:00:00Z"}
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [base, {**base, "id": "imp", "content": "never change", "tier": "important"}])],
                as_of=AS_OF - timedelta(days=10))
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [{**base, "version": 1, "content": "light mode"}])],
                as_of=AS_OF - timedelta(days=10))
    lake.ingest([write_jsonl(tmp_path / "c.jsonl", [{**base, "version": 1, "content": "auto mode"}])],
                as_of=AS_OF - timedelta(days=9))   # a writers' conflict, 9 days old
    lake.ingest([write_jsonl(tmp_path / "d.jsonl", [{**base, "id": "imp", "content": "agent edit", "tier": "important",
                                                      "version": 1}])], as_of=AS_OF)  # today, on an important memory
    with lake.reader() as con:
        health = compute_health(con, AS_OF, lake.policy)
    (scope,) = health["scopes"]
    assert scope["conflicts"] == {"open": 2, "by_age": {"under_1d": 1, "1_to_7d": 0, "over_7d": 1}, "important": 1,
                                  "oldest_days": 9, "overdue": 1}
    assert health["overall"]["conflicts"] == scope["conflicts"]
    # the 9-day-old one is overdue (a warning: agents read the lake's value meanwhile); the one on an
    # important memory is information; none is left merely waiting
    assert [a for a in scope["alerts"] if "conflict" in a["code"]] == [
        {"level": "warning", "code": "conflicts_overdue",
         "message": "1 conflict(s) open for 7 days or more (oldest 9 days): agents read the lake's value meanwhile",
         "action": "memory-lake conflicts list (oldest first), then memory-lake conflicts resolve ID "
                   "--take lake|incoming|both|value=TEXT"},
        {"level": "info", "code": "important_conflicts",
         "message": "important memory modified: 1 agent change(s) to important memories wait for a user",
         "action": "memory-lake conflicts list; resolve with memory-lake conflicts resolve ID --take lake|incoming|both"}]


def test_an_empty_lake_has_a_health_snapshot(lake):
    """Issue 11.4: every nightly step works on the first night of a new install (no memories)."""
    report = snapshot_health(lake, AS_OF)
    assert report.counts == {"scopes": 0, "tenants": 0, "alerts": 0}
    health = latest_health(lake)
    assert (health["as_of"], health["tenants"], health["scopes"]) == ("2026-11-30T00:00:00Z", {}, [])
    overall = health["overall"]
    assert overall["total"] == 0 and overall["alerts"] == []
    assert {tier: cap["used"] for tier, cap in overall["capacity"].items()} == {
        "working": 0, "short_term": 0, "long_term": 0, "important": 0}
    assert overall["hit_rate"] == {"last_7d": None, "last_30d": None, "trend": None, "note": NO_LOG_NOTE,
                                   "trend_slope": None, "trend_note": "0 of 7 snapshots with a 7-day hit rate needed"}
    assert (overall["quarantine"], overall["summaries"]) == ({"open": 0}, {
        "published": 0, "failed": 0,
        "mean": {"retention": None, "compression": None, "readability": None, "accuracy": None}})


@pytest.mark.models
def test_imported_history_that_goes_dormant_is_counted_not_hidden(lake, tmp_path, capsys):
    """History imported with old dates: never used for 180 days, every long-term memory goes dormant
    on the first nightly run. The dashboard counts live memories only; it says how many rest, per
    tenant too (a tenant with no live memory is no unknown tenant), and an empty search says why."""
    from memory_lake.cli import main
    from memory_lake.maintain.tiers import enforce_tiers
    from memory_lake.search import search

    lake.ingest([write_jsonl(tmp_path / "old.jsonl", [mem(i, "long_term", days_old=270) for i in range(3)]
                             + [mem(0, "working", days_old=1, tenant="globex")])], as_of=AS_OF)
    enforce_tiers(lake, AS_OF)
    snapshot_health(lake, AS_OF)
    health = latest_health(lake)
    assert (health["overall"]["total"], health["overall"]["inactive"]) == (1, {"dormant": 3, "archived": 0})
    assert health["tenants"]["acme"]["total"] == 0
    assert health["tenants"]["acme"]["inactive"] == {"dormant": 3, "archived": 0}
    assert health["tenants"]["globex"]["inactive"] == {"dormant": 0, "archived": 0}
    assert [a["level"] + " " + a["message"][:40] for a in health["tenants"]["acme"]["alerts"]][-1:] == [
        "warning 1 scope(s) hold no live memory, only 3 d"]
    assert not any("no live memory" in a["message"] for a in health["tenants"]["globex"]["alerts"])
    assert main(["--lake", str(lake.root), "health", "--tenant", "acme"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:5] == ["health as of 2026-11-30T00:00:00Z for tenant acme", "  working     0", "  short_term  0",
                         "  long_term   0", "  important   0"]
    assert ("  not counted above: 3 dormant, 0 archived (search leaves them out; `memory-lake restore ID...` makes "
            "them active again)") in lines
    found = search(lake, "long_term", tenant="acme", as_of=AS_OF)
    assert (found.results, found.notes) == ([], [
        "no memory to search in scope tenant acme: none is active or conflicted",
        "3 dormant or archived memories are in this scope: include_inactive (--include-inactive) searches them, "
        "`memory-lake restore ID...` makes them active again"])
    assert len(search(lake, "long_term", tenant="acme", include_inactive=True, as_of=AS_OF).results) == 3


def test_the_cli_says_an_overall_limit_is_the_sum_of_the_scopes_limits(lake, tmp_path, capsys):
    """Capacity is per scope: two users at 20 working memories each give 40 overall, and the line
    says so (a stranger read "132/340" as a limit of 340 nobody had set)."""
    from memory_lake.cli import main

    lake.ingest([write_jsonl(tmp_path / "two.jsonl", [mem(i, "working", days_old=1) for i in range(3)]
                             + [mem(i, "working", days_old=1, user="bob") for i in range(2)])], as_of=AS_OF)
    snapshot_health(lake, AS_OF)
    assert main(["--lake", str(lake.root), "health"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:3] == ["  working     5/40 (12%)  limit 20 each in 2 scopes",
                          "  short_term  0/200 (0%)  limit 100 each in 2 scopes"]
