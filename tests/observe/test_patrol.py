"""The daily patrol (seed 000 示例三 记忆健康度巡检, issue 40.5) on real lakes: the seed's example
end to end, a dry run that writes nothing, a second patrol that moves nothing, an overflow only
important memories keep, the nightly switch, the command (JSON, --dry-run, errors) and the flow."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_lake import Lake
from memory_lake.maintain import apply_events
from memory_lake.observe import compute_health, nightly_patrol, patrol, snapshot_health

from ..conftest import AS_OF, held_by_another_process, rows, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
SCOPE = {"tenant": "acme", "agent_id": "bot", "user_id": "alice"}
CAPACITIES = {"tiers": {"working_capacity": 20, "short_term_capacity": 100}}


def ts(**delta) -> str:
    return (AS_OF - timedelta(**delta)).isoformat() + "Z"


def mem(memory_id: str, tier: str, *, created: str, accessed: str, importance: float = 0.5, type_: str = "fact",
        scope: dict | None = None) -> dict:
    return {"id": memory_id, **(scope or SCOPE), "tier": tier, "type": type_, "content": f"{tier} memory {memory_id}",
            "importance": importance, "created_at": created, "last_accessed_at": accessed}


def seed_records() -> list[dict]:
    """Seed 000 example 3 in one scope: working 18/20, short_term 87/100, long_term 87 (23 of them not
    accessed for 40 days: 23 stale of 192 live non-important = 12%), important 15."""
    # working: created in the reverse order of their last access, so "oldest" can only mean the
    # least recently accessed (the working_overflow rule's order): w00 was used longest ago
    records = [mem(f"w{i:02d}", "working", created=ts(hours=41 + i), accessed=ts(hours=40 - i)) for i in range(18)]
    # short_term: ids in another order than their creation, so "oldest" can only mean created first
    records += [mem(f"s{(i * 37) % 87:02d}", "short_term", created=ts(days=20, hours=-i), accessed=ts(days=1))
                for i in range(87)]
    records += [mem(f"l{i:02d}", "long_term", created=ts(days=60), accessed=ts(days=40 if i < 23 else 2))
                for i in range(87)]
    records += [mem(f"i{i:02d}", "important", created=ts(days=90), accessed=ts(days=50), importance=1.0,
                    type_="preference") for i in range(15)]
    return records


def searches(n: int = 100, hits: int = 28) -> list[dict]:
    """`n` searches of the scope over the last 7 days, `hits` of them hits: a 7-day hit rate of 28%."""
    return [{"search_id": f"q{i:03d}", "ts": ts(hours=1 + i), **SCOPE, "query": f"question {i}", "mode": "hybrid",
             "mode_used": "hybrid", "filters": {}, "result_ids": [], "raw_scores": [], "keyword_match": i < hits}
            for i in range(n)]


def seed_lake(root: Path) -> Lake:
    lake = Lake.open(root, create=True, policy_overrides=CAPACITIES)
    lake.ingest([write_jsonl(root.parent / "seed.jsonl", seed_records())], as_of=AS_OF)
    write_jsonl(lake.events / "searches-seed.jsonl", searches())
    apply_events(lake, AS_OF)
    return lake


@pytest.fixture
def seeded(tmp_path) -> Lake:
    return seed_lake(tmp_path / "lake")


def alerts_now(lake: Lake) -> list[dict]:
    with lake.reader() as con:
        return compute_health(con, AS_OF, lake.policy)["overall"]["alerts"]


def capacity(lake: Lake) -> dict[str, int]:
    return dict(lake.sql("SELECT tier, count(*) FROM memories WHERE status = 'active' GROUP BY tier").rows())


# the seed's oldest: 3 working by last access, then 13 short_term by creation (87 + 3 = 90 -> 77)
OLDEST_WORKING = ["w00", "w01", "w02"]
OLDEST_SHORT_TERM = [f"s{(i * 37) % 87:02d}" for i in range(13)]


def test_seed_example_3_end_to_end(seeded):
    lake = seeded
    with lake.reader() as con:
        health = compute_health(con, AS_OF, lake.policy)
    overall = health["overall"]
    assert [(a["level"], a["code"]) for a in overall["alerts"]] == [
        ("warning", "working_capacity"), ("warning", "short_term_capacity"), ("warning", "hit_rate_low"),
        ("info", "stale_ratio")]
    assert {t: (c["used"], c["limit"]) for t, c in overall["capacity"].items()} == {
        "working": (18, 20), "short_term": (87, 100), "long_term": (87, None), "important": (15, None)}
    assert (overall["hit_rate"]["last_7d"], overall["hit_rate"]["searches_7d"]) == (0.28, 100)
    assert overall["staleness"]["stale_count"] == 23 and overall["staleness"]["stale_ratio"] == round(23 / 192, 4)
    advice_before = overall["alerts"][2:]
    assert "28%" in advice_before[0]["message"] and "12%" in advice_before[1]["message"]
    important_before = rows(lake, "SELECT * FROM memories WHERE tier = 'important' ORDER BY id")

    snapshot_health(lake, AS_OF, run_id="nightly-health")  # the patrol reads the stored snapshot
    report = patrol(lake, AS_OF, run_id="patrol-1")

    assert report.counts == {"moved": 16, "working_to_short_term": 3, "short_term_to_long_term": 13, "scopes": 1,
                             "held": 0, "advice": 2}
    assert report.summary == ("16 moved, 3 working → short_term, 13 short_term → long_term, 1 scope acted on, "
                              "0 scopes held above target, 2 advice")
    d = report.details
    assert d["alerts_from"] == {"source": "snapshot", "as_of": "2026-11-30T00:00:00Z"}
    (scope,) = d["scopes"]
    assert {k: scope[k] for k in SCOPE} == SCOPE
    assert {k: scope["working"][k] for k in ("before", "after", "limit", "target", "moved", "to")} == {
        "before": 18, "after": 15, "limit": 20, "target": 15, "moved": OLDEST_WORKING, "to": "short_term"}
    assert {k: scope["short_term"][k] for k in ("before", "arrived", "measured", "after", "limit", "target", "moved", "to")} == {
        "before": 87, "arrived": 3, "measured": 90, "after": 77, "limit": 100, "target": 77, "moved": OLDEST_SHORT_TERM,
        "to": "long_term"}
    assert scope["working"]["done"] == "working 18/20 (90%) → 15/20: moved 3 oldest to short_term"
    assert scope["short_term"]["done"] == ("short_term 87/100 (87%) + 3 from working = 90/100 (90%) → 77/100: "
                                           "moved 13 oldest to long_term")
    # every alert read, with what was done for it; the advice is the two alerts' own words
    assert [(a["code"], a["done"]) for a in d["alerts"]] == [
        ("working_capacity", "working 18/20 (90%) → 15/20: moved 3 oldest to short_term (acme/bot/alice)"),
        ("short_term_capacity", "short_term 87/100 (87%) + 3 from working = 90/100 (90%) → 77/100: moved 13 oldest to "
                                "long_term (acme/bot/alice)"),
        ("hit_rate_low", "advice only: nothing moved"), ("stale_ratio", "advice only: nothing moved")]
    assert d["advice"] == advice_before
    assert d["unannounced"] == []

    # seed step 4: 工作记忆降至 15/20（75%）, 短期记忆降至 77/100（77%）, the capacity alerts gone
    after = alerts_now(lake)
    assert after == advice_before
    assert capacity(lake) == {"working": 15, "short_term": 77, "long_term": 100, "important": 15}
    assert rows(lake, "SELECT * FROM memories WHERE tier = 'important' ORDER BY id") == important_before

    logged = rows(lake, "SELECT * FROM cleanup_log WHERE rule = 'patrol' ORDER BY from_tier DESC, memory_id")
    expected = [{"memory_id": i, **SCOPE, "from_tier": "working", "to_tier": "short_term", "from_status": "active",
                 "to_status": "active", "rule": "patrol", "run_id": "patrol-1", "as_of": AS_OF} for i in OLDEST_WORKING]
    expected += [{"memory_id": i, **SCOPE, "from_tier": "short_term", "to_tier": "long_term", "from_status": "active",
                  "to_status": "active", "rule": "patrol", "run_id": "patrol-1", "as_of": AS_OF}
                 for i in sorted(OLDEST_SHORT_TERM)]
    assert logged == expected
    assert rows(lake, "SELECT count(*) AS n FROM cleanup_log") == [{"n": 16}]  # nothing else moved
    history = rows(lake, "SELECT memory_id, change, operator FROM memory_history WHERE run_id = 'patrol-1' "
                         "ORDER BY memory_id")
    assert history == [{"memory_id": i, "change": "tier", "operator": "system"}
                       for i in sorted(OLDEST_WORKING + OLDEST_SHORT_TERM)]
    lines = (lake.root / "memory-cleanup.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 16 and all(" run=patrol-1 rule=patrol id=" in line for line in lines)
    assert "id=w00 tenant=acme working/active -> short_term/active" in lines[-3]


def test_a_second_patrol_at_the_same_as_of_moves_nothing(seeded):
    first = patrol(seeded, AS_OF)
    state = rows(seeded, "SELECT * FROM memories ORDER BY id")
    again = patrol(seeded, AS_OF)
    assert first.counts["moved"] == 16
    assert again.counts == {"moved": 0, "working_to_short_term": 0, "short_term_to_long_term": 0, "scopes": 0,
                            "held": 0, "advice": 2}
    assert again.details["scopes"] == []
    assert rows(seeded, "SELECT * FROM memories ORDER BY id") == state
    assert rows(seeded, "SELECT count(*) AS n FROM cleanup_log") == [{"n": 16}]
    assert len((seeded.root / "memory-cleanup.log").read_text().splitlines()) == 16


def test_a_dry_run_writes_nothing_and_reports_the_same_moves(seeded):
    memories = rows(seeded, "SELECT * FROM memories ORDER BY id")
    history = rows(seeded, "SELECT count(*) AS n FROM memory_history")
    dry = patrol(seeded, AS_OF, dry_run=True)
    assert rows(seeded, "SELECT * FROM memories ORDER BY id") == memories
    assert rows(seeded, "SELECT * FROM cleanup_log") == []
    assert rows(seeded, "SELECT count(*) AS n FROM memory_history") == history
    assert not (seeded.root / "memory-cleanup.log").exists()
    # no snapshot yet: the alerts were computed at as_of
    assert dry.details["alerts_from"] == {"source": "computed", "as_of": "2026-11-30T00:00:00Z",
                                          "why": "no health snapshot at or before 2026-11-30T00:00:00Z"}
    assert dry.details["dry_run"] is True
    assert dry.details["scopes"][0]["working"]["done"] == "working 18/20 (90%) → 15/20: would move 3 oldest to short_term"

    real = patrol(seeded, AS_OF)
    assert real.counts == dry.counts
    strip = lambda scopes: [{k: ({**v, "done": None} if isinstance(v, dict) else v) for k, v in s.items()} for s in scopes]  # noqa: E731
    assert strip(real.details["scopes"]) == strip(dry.details["scopes"])
    assert [a["code"] for a in real.details["alerts"]] == [a["code"] for a in dry.details["alerts"]]


def test_an_overflow_only_important_memories_keep_is_left_alone_and_said(tmp_path):
    """18 working memories marked important (the nightly's mark_important has not moved them yet)
    and 2 ordinary ones: the 2 move, the 18 stay, and the report says why the scope stays above 75%."""
    lake = Lake.open(tmp_path / "lake", create=True, policy_overrides=CAPACITIES)
    records = [mem(f"m{i:02d}", "working", created=ts(days=3), accessed=ts(hours=50 - i), importance=1.0)
               for i in range(18)]
    records += [mem(f"n{i}", "working", created=ts(days=1), accessed=ts(hours=1 + i)) for i in range(2)]
    records += [mem("i00", "important", created=ts(days=9), accessed=ts(days=9), importance=1.0)]
    lake.ingest([write_jsonl(tmp_path / "marked.jsonl", records)], as_of=AS_OF)
    marked = rows(lake, "SELECT * FROM memories WHERE importance >= 1 ORDER BY id")

    report = patrol(lake, AS_OF)

    (scope,) = report.details["scopes"]
    assert scope["working"]["moved"] == ["n1", "n0"]  # the ordinary ones, least recently accessed first
    assert (scope["working"]["after"], scope["working"]["held"], scope["working"]["kept"]) == (18, True, {"marked_important": 18})
    assert scope["working"]["done"] == (
        "working 20/20 (100%) → 18/20: moved 2 oldest to short_term; still above the 15/20 target, and the patrol may "
        "not move the rest: 18 marked important (the nightly's mark_important moves them to the important tier)")
    assert report.counts["held"] == 1 and "1 scope(s) stay above the target" in report.details["final"]
    assert rows(lake, "SELECT * FROM memories WHERE importance >= 1 ORDER BY id") == marked
    # only those left: the next patrol moves nothing and says the same
    again = patrol(lake, AS_OF)
    assert again.counts["moved"] == 0 and again.details["scopes"][0]["working"]["done"] == (
        "working 18/20 (90%) → 18/20: nothing moved; still above the 15/20 target, and the patrol may not move the "
        "rest: 18 marked important (the nightly's mark_important moves them to the important tier)")


def test_what_the_patrol_moved_into_short_term_is_not_passed_on_to_long_term(tmp_path):
    """short_term full of memories marked important, working full: the 5 oldest working move to
    short_term (105/100), and stay there (the newest), at this patrol and the next at the same as_of."""
    lake = Lake.open(tmp_path / "lake", create=True, policy_overrides=CAPACITIES)
    records = [mem(f"w{i:02d}", "working", created=ts(days=1), accessed=ts(hours=30 - i)) for i in range(20)]
    records += [mem(f"s{i:03d}", "short_term", created=ts(days=5, hours=i), accessed=ts(days=1), importance=1.0)
                for i in range(100)]
    lake.ingest([write_jsonl(tmp_path / "full.jsonl", records)], as_of=AS_OF)
    first = patrol(lake, AS_OF)
    (scope,) = first.details["scopes"]
    assert scope["working"]["moved"] == ["w00", "w01", "w02", "w03", "w04"]
    assert (scope["short_term"]["measured"], scope["short_term"]["moved"], scope["short_term"]["kept"]) == (
        105, [], {"marked_important": 100, "just_arrived": 5})
    again = patrol(lake, AS_OF)
    assert again.counts["moved"] == 0 and again.details["scopes"][0]["short_term"]["done"] == (
        "short_term 105/100 (105%) → 105/100: nothing moved; still above the 77/100 target, and the patrol may not move "
        "the rest: 100 marked important (the nightly's mark_important moves them to the important tier); 5 new in "
        "short_term at this as_of (the newest there)")
    assert capacity(lake) == {"working": 15, "short_term": 105}


def test_only_the_tenant_asked_for_is_patrolled(tmp_path):
    lake = Lake.open(tmp_path / "lake", create=True)
    other = {"tenant": "globex", "agent_id": "bot", "user_id": "bob"}
    records = [mem(f"a{i:02d}", "working", created=ts(days=1), accessed=ts(hours=i + 1)) for i in range(20)]
    records += [mem(f"g{i:02d}", "working", created=ts(days=1), accessed=ts(hours=i + 1), scope=other) for i in range(20)]
    lake.ingest([write_jsonl(tmp_path / "two.jsonl", records)], as_of=AS_OF)
    report = patrol(lake, AS_OF, tenant="globex")
    assert [s["tenant"] for s in report.details["scopes"]] == ["globex"] and report.counts["moved"] == 5
    assert dict(lake.sql("SELECT tenant, count(*) FROM memories WHERE tier = 'working' GROUP BY 1").rows()) == {
        "acme": 20, "globex": 15}


def test_the_nightly_step_is_off_unless_the_policy_says_after_nightly(seeded):
    off = nightly_patrol(seeded, AS_OF, "nightly-1")
    assert (off.name, off.counts, off.summary) == ("patrol", {}, "off ([patrol] after_nightly = false)")
    assert off.as_dict()["summary"] == "off ([patrol] after_nightly = false)" and off.details["status"] == "off"
    assert rows(seeded, "SELECT count(*) AS n FROM cleanup_log") == [{"n": 0}]

    on = Lake.open(seeded.root, policy_overrides={"patrol": {"after_nightly": True}})
    snapshot_health(on, AS_OF, run_id="nightly-1")
    report = nightly_patrol(on, AS_OF, "nightly-1")
    assert (report.name, report.run_id, report.counts["moved"]) == ("patrol", "nightly-1", 16)
    assert rows(on, "SELECT DISTINCT run_id, rule FROM cleanup_log") == [{"run_id": "nightly-1", "rule": "patrol"}]


# ---------------------------------------------------------------------------- the command
def cli(*args: str):
    from memory_lake.cli import app

    return CliRunner().invoke(app, list(args))


def test_the_command_json_is_the_step_report(seeded):
    result = cli("--lake", str(seeded.root), "--json", "patrol", "--as-of", "2026-11-30T00:00:00Z")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert sorted(data) == ["as_of", "counts", "details", "name", "run_id", "summary"]
    assert (data["name"], data["as_of"], data["counts"]["moved"]) == ("patrol", "2026-11-30T00:00:00Z", 16)
    assert data["run_id"].startswith("patrol-20261130T000000-")
    assert sorted(data["details"]) == ["advice", "alerts", "alerts_from", "as_of", "dry_run", "final", "scopes",
                                       "targets", "threshold", "unannounced"]
    assert data["details"]["scopes"][0]["working"]["moved"] == OLDEST_WORKING
    assert [a["code"] for a in data["details"]["advice"]] == ["hit_rate_low", "stale_ratio"]
    assert capacity(seeded)["working"] == 15


def test_the_command_dry_run_says_what_would_move(seeded):
    result = cli("--lake", str(seeded.root), "patrol", "--dry-run", "--as-of", "2026-11-30T00:00:00Z")
    assert result.exit_code == 0, result.output
    advice = alerts_now(seeded)[2:]
    assert result.stdout.splitlines() == [
        "alerts computed as of 2026-11-30T00:00:00Z (no health snapshot at or before 2026-11-30T00:00:00Z)",
        "[warning] working_capacity: working 18/20 (90%) → 15/20: would move 3 oldest to short_term (acme/bot/alice)",
        "[warning] short_term_capacity: short_term 87/100 (87%) + 3 from working = 90/100 (90%) → 77/100: would move "
        "13 oldest to long_term (acme/bot/alice)",
        *[f"advice [{a['level']}] {a['code']}: {a['message']} → {a['action']}" for a in advice],
        "dry run as of 2026-11-30T00:00:00Z: would move 16 memories in 1 scope(s) (3 working → short_term, "
        "13 short_term → long_term); 2 advice; nothing written",
    ]
    assert capacity(seeded)["working"] == 18 and not (seeded.root / "memory-cleanup.log").exists()


def test_the_command_help_names_the_rule_and_the_thresholds():
    result = cli("patrol", "--help")
    text = " ".join(result.stdout.split())
    for words in ("85%", "75%", "77%", "30%", "10%", "--dry-run", "[patrol] working_target", "oldest"):
        assert words in text


def test_the_command_errors_are_one_line(tmp_path, seeded, capsys, monkeypatch):
    from memory_lake.cli import main

    assert main(["--lake", str(tmp_path / "nowhere"), "patrol"]) == 2
    assert capsys.readouterr().err.startswith(f"error: no lake at {tmp_path / 'nowhere'}")
    assert main(["--lake", str(seeded.root), "patrol", "--tenant", "nobody"]) == 2
    assert "error: unknown tenant 'nobody'" in capsys.readouterr().err

    monkeypatch.setenv("MEMORY_LAKE_WAIT_S", "0.3")
    with held_by_another_process(seeded) as pid:
        for args in (["patrol"], ["patrol", "--dry-run"]):
            assert main(["--lake", str(seeded.root), *args]) == 3
            err = capsys.readouterr().err.splitlines()
            assert err[0] == f"lake busy: pid {pid} (nightly run) holds the write lock; waiting up to 0.3 s for it " \
                             "(MEMORY_LAKE_WAIT_S sets how long)"
            assert err[1].startswith(f"error: lake {seeded.root} is busy: pid {pid} (nightly run) holds the write lock")
    assert capacity(seeded)["working"] == 18


# ---------------------------------------------------------------------------- the deployment
def test_the_patrol_deployment_runs_daily_after_the_nightly():
    import yaml

    from flows.deploy import deployment_specs
    from flows.patrol import patrol as patrol_flow

    (spec,) = [s for s in deployment_specs() if s.name == "patrol"]
    assert (spec.entrypoint, spec.cron) == ("flows/patrol.py:patrol", "30 6 * * *")
    assert spec.load_flow() is patrol_flow and patrol_flow.name == "patrol"
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    assert [d["name"] for d in config["deployments"]] == ["nightly", "sync", "patrol"]


def test_the_patrol_flow_runs_under_prefect(prefect_harness, seeded):
    from flows.patrol import patrol as patrol_flow

    report = patrol_flow(str(seeded.root), as_of="2026-11-30T00:00:00Z")
    assert report["counts"]["moved"] == 16 and report["as_of"] == "2026-11-30T00:00:00Z"
    assert capacity(seeded)["working"] == 15
