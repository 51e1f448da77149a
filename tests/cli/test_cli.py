"""The CLI contract: --lake/--json anywhere, JSON-only stdout, one-line errors, every --help."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_lake.cli import app, main

from ..conftest import cli_process, held_by_another_process, write_jsonl



def new_lake(tmp_path: Path) -> str:
    """A created lake's folder (commands other than init and demo refuse a path without a lake)."""
    from memory_lake import Lake

    return str(Lake.init(tmp_path / "lake").root)

def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def command_paths(group=app, prefix=()):
    import typer.main

    click_group = typer.main.get_command(group)
    paths = []

    def walk(cmd, path):
        paths.append(path)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, (*path, name))

    walk(click_group, prefix)
    return paths


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "memory-lake")
def test_every_command_has_help(capsys, path):
    code, out, _ = run(capsys, *path, "--help")
    assert code == 0
    assert "Usage:" in out and "--help" in out


def test_ingest_json_with_lake_before_or_after(capsys, tmp_path):
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "acme", "content": "hello"}, "broken"])
    lake = new_lake(tmp_path)
    code, out, err = run(capsys, "--lake", lake, "ingest", str(snapshot), "--json", "--as-of", "2026-11-30T00:00:00Z")
    assert code == 0, err
    report = json.loads(out)
    assert {k: report[k] for k in ("files", "ingested", "updated", "unchanged", "quarantined")} == {
        "files": 1, "ingested": 1, "updated": 0, "unchanged": 0, "quarantined": 1}
    assert report["quarantine_reasons"] == {"bad JSON": 1}

    code, out, _ = run(capsys, "sql", "SELECT tenant, content FROM memories", "--lake", lake, "--json")
    assert (code, json.loads(out)) == (0, [{"tenant": "acme", "content": "hello"}])

    code, out, _ = run(capsys, "--json", "quarantine", "list", "--lake", lake)
    (row,) = json.loads(out)
    assert (row["line"], row["reason"], row["raw"], row["status"]) == (2, "bad JSON", "broken", "open")


def test_human_output_is_a_summary(capsys, tmp_path):
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "acme", "content": "hello"}])
    code, out, _ = run(capsys, "ingest", str(snapshot), "--lake", new_lake(tmp_path), "--dry-run")
    assert code == 0
    assert "would ingest 1 file(s): 1 new, 0 updated, 0 unchanged, 0 forgotten, 0 quarantined" in out


def test_errors_are_one_line_and_non_zero(capsys, tmp_path):
    code, out, err = run(capsys, "--lake", new_lake(tmp_path), "ingest", str(tmp_path / "missing.jsonl"))
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and err.startswith("error: ") and "no such file" in err

    code, _, err = run(capsys, "--lake", new_lake(tmp_path), "sql", "DELETE FROM memories")
    assert code == 2 and "read-only" in err

    code, _, err = run(capsys, "--lake", new_lake(tmp_path), "ingest", "--as-of", "tomorrow")
    assert code == 2 and "--as-of 'tomorrow' is not an ISO 8601 timestamp" in err


def test_busy_lake_is_a_clear_error(capsys, tmp_path):
    from memory_lake import Lake

    lake = Lake.open(tmp_path / "lake", create=True)
    os.environ["MEMORY_LAKE_WAIT_S"] = "0"
    try:
        with lake.writer(purpose="nightly run"):
            code, _, err = run(capsys, "--lake", str(lake.root), "ingest")
            assert code == 3 and "holds the write lock" in err and "nightly run" in err
            code, _, err = run(capsys, "--lake", str(lake.root), "sql", "SELECT 1")
            assert code == 3 and "nothing is published yet" in err
    finally:
        del os.environ["MEMORY_LAKE_WAIT_S"]


def test_replay_and_export_via_cli(capsys, tmp_path):
    lake = new_lake(tmp_path)
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "acme", "content": "x", "tier": "forever"}])
    run(capsys, "--lake", lake, "ingest", str(snapshot))
    fixed = tmp_path / "fixed.jsonl"
    code, out, _ = run(capsys, "--lake", lake, "--json", "quarantine", "export", str(fixed))
    assert (code, json.loads(out)) == (0, {"file": str(fixed), "lines": 1})
    fixed.write_text(fixed.read_text().replace("forever", "working"))
    code, out, _ = run(capsys, "--lake", lake, "--json", "quarantine", "replay", str(fixed))
    assert code == 0 and json.loads(out)["ingested"] == 1
    code, out, _ = run(capsys, "--lake", lake, "--json", "quarantine", "list")
    assert json.loads(out) == []


def test_status(capsys, tmp_path):
    lake = new_lake(tmp_path)
    write_jsonl(Path(lake) / "inbox" / "0001.jsonl", [{"tenant": "acme", "content": "x"}])
    code, out, _ = run(capsys, "--lake", lake, "--json", "status")
    data = json.loads(out)
    assert (code, data["inbox_files"], data["memories"]) == (0, 1, 0)


@pytest.mark.process  # starts a process (the subject here)
def test_console_script_never_prints_a_traceback(tmp_path):
    script = Path(sys.executable).parent / "memory-lake"
    proc = subprocess.run([str(script), "--lake", new_lake(tmp_path), "sql", "SELEC nonsense"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: query failed")


@pytest.mark.slow
def test_demo_runs_the_nightly_flow_and_a_second_demo_changes_nothing(prefect_harness, capsys, tmp_path):
    lake = new_lake(tmp_path)
    args = ("--lake", lake, "--json", "demo", "--seed", "7", "--nights", "1", "--reports", str(tmp_path / "reports"))
    code, out, _ = run(capsys, *args)
    first = json.loads(out)
    assert code == 0 and first["as_of"] == "2026-11-30T00:00:00Z"
    assert first["run"]["steps"]["ingest_inbox"]["counts"]["ingested"] > 800
    assert first["report"] == str(tmp_path / "reports" / "2026-11-30" / f"{first['run']['run_id']}.html")
    assert first["export"] == str(Path(lake).resolve() / "exports" / "CURRENT")
    assert first["run"]["publish"]["version"] == "v1"
    code, out, _ = run(capsys, *args)
    second = json.loads(out)
    assert second["run"]["publish"]["status"] == "unchanged"
    assert second["run"]["steps"]["ingest_inbox"]["counts"]["ingested"] == 0
    assert second["memories_by_tier"] == first["memories_by_tier"]
    assert sorted(p.name for p in (Path(lake) / "exports").iterdir()) == ["CURRENT", "v1"]


def test_publish_blocked_exits_4_and_health_json_layout(capsys, tmp_path):
    lake = Path(new_lake(tmp_path))
    (lake / "memory-lake.toml").write_text('[tiers]\ndisabled_rules = ["working_overflow"]\n')
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "acme", "agent_id": "a", "user_id": "u", "tier": "working",
                                                   "content": f"item {i}"} for i in range(25)])
    run(capsys, "--lake", str(lake), "ingest", str(snapshot), "--as-of", "2026-11-30T00:00:00Z")
    code, out, err = run(capsys, "--lake", str(lake), "--json", "publish", "--as-of", "2026-11-30T00:00:00Z")
    result = json.loads(out)
    assert code == 4 and (result["status"], result["failed"]) == ("blocked", ["working within capacity per scope"])
    code, out, _ = run(capsys, "--lake", str(lake), "publish", "--as-of", "2026-11-30T00:00:00Z")
    assert (code, out.splitlines()[0]) == (4, "publish blocked by a failed check: nothing published, CURRENT stays (none)")
    (lake / "memory-lake.toml").write_text('[tiers]\ndisabled_rules = ["working_overflow"]\nworking_capacity = 30\n')
    for expected in ("published v1: exports/CURRENT now points at it",
                     "nothing new to publish: the lake's content equals CURRENT (v1)"):
        code, out, _ = run(capsys, "--lake", str(lake), "publish", "--as-of", "2026-11-30T00:00:00Z")
        assert (code, out.splitlines()[0]) == (0, expected)
    (lake / "memory-lake.toml").write_text('[tiers]\ndisabled_rules = ["working_overflow"]\n')
    code, out, _ = run(capsys, "--lake", str(lake), "--json", "health", "--as-of", "2026-11-30T00:00:00Z")
    health = json.loads(out)
    assert code == 0 and list(health) == ["as_of", "overall", "tenants", "scopes"]
    assert list(health["overall"]) == ["capacity", "distribution", "hit_rate", "staleness", "total", "conflicts", "inactive",
                                       "quarantine", "summaries", "alerts"]
    assert health["scopes"][0]["capacity"]["working"] == {"used": 25, "limit": 20, "utilization": 1.25}


def test_search_json_shape(capsys, tmp_path):
    lake = new_lake(tmp_path)
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"id": "c1", "tenant": "zk", "content": "用户喜欢喝咖啡", "type": "preference"},
                                                  {"id": "c2", "tenant": "zk", "content": "项目截止日期是下周五"}])
    run(capsys, "--lake", lake, "ingest", str(snapshot))
    code, out, _ = run(capsys, "--lake", lake, "--json", "search", "咖啡", "--tenant", "zk", "--explain", "--mode", "keyword")
    data = json.loads(out)
    assert code == 0 and list(data) == ["search_id", "mode_used", "notes", "results"]
    assert data["mode_used"] == "keyword" and data["notes"] == []
    (hit,) = data["results"]
    assert (hit["id"], hit["content"], hit["tier"], hit["type"], hit["score"]) == ("c1", "用户喜欢喝咖啡", "short_term",
                                                                                  "preference", 1.0)
    assert set(hit["parts"]) == {"keyword", "keyword_norm"}


def test_policy_overrides_from_the_command_line():
    from memory_lake.cli import parse_overrides
    from memory_lake.store.policy import Policy

    overrides = parse_overrides(["tiers.working_capacity=30", "tenants.acme.tiers.short_term_capacity=200",
                                 'tiers.disabled_rules=["expire"]', "publish.keep_versions=2"])
    assert overrides == {"tiers": {"working_capacity": 30, "disabled_rules": ["expire"]},
                         "tenants": {"acme": {"tiers": {"short_term_capacity": 200}}}, "publish": {"keep_versions": 2}}
    policy = Policy().with_overrides(overrides)
    assert (policy.tiers.working_capacity, policy.tiers.disabled_rules, policy.publish.keep_versions) == (30, ("expire",), 2)
    assert policy.for_tenant("acme").tiers.short_term_capacity == 200


def test_bad_override_and_restore_via_cli(capsys, tmp_path):
    lake = new_lake(tmp_path)
    code, _, err = run(capsys, "--lake", lake, "run", "nightly", "--set", "tiers.nope=3")
    assert code == 2 and "unknown policy key(s) in [tiers]: nope" in err
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"id": "a", "tenant": "t", "content": "x", "status": "archived"}])
    run(capsys, "--lake", lake, "ingest", str(snapshot))
    code, out, err = run(capsys, "--lake", lake, "--json", "restore", "a", "b")
    assert (code, out) == (2, "") and err.startswith("error: unknown memory id 'b'")
    code, out, _ = run(capsys, "--lake", lake, "--json", "restore", "a")
    assert (code, json.loads(out)) == (0, {"restored": ["a"], "not_restorable": [], "unknown": [],
                                           "moved_to_long_term": ["a"]})
    run(capsys, "--lake", lake, "ingest", str(write_jsonl(tmp_path / "c.jsonl", [
        {"id": "c", "tenant": "t", "content": "y", "status": "archived", "tier": "short_term"}])))
    code, out, _ = run(capsys, "--lake", lake, "restore", "c")
    assert out.splitlines() == ["restored 1; not archived or dormant: -; unknown: -",
                                "  back in long_term, not short_term: c (short_term's FIFO would archive an old memory "
                                "again at the next run; long_term has no capacity limit)"]


def test_forget_via_cli(capsys, tmp_path):
    lake = new_lake(tmp_path)
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"id": "a", "tenant": "t", "content": "forget me ZEBRA"},
                                                  {"id": "v", "tenant": "t", "content": "vip", "important": True}])
    run(capsys, "--lake", lake, "ingest", str(snapshot))
    code, out, _ = run(capsys, "--lake", lake, "--json", "forget", "a", "v", "--operator", "agent", "--reason", "asked")
    result = json.loads(out)
    # exit 1: done in part (the important memory needs the user); the JSON still says what happened
    assert code == 1 and result["forgotten"] == ["a"] and [r["id"] for r in result["refused"]] == ["v"]
    code, out, _ = run(capsys, "--lake", lake, "--json", "sql", "SELECT id, status, content FROM memories ORDER BY id")
    assert json.loads(out) == [{"id": "a", "status": "deleted", "content": ""}, {"id": "v", "status": "active", "content": "vip"}]
    code, _, err = run(capsys, "--lake", lake, "forget", "a")
    assert code == 2 and "reason" in err


# ---------------------------------------------------------------- issue 11.7: a wrong path is an error
WRONG_PATH_COMMANDS = [
    ("status",), ("sql", "SELECT 1"), ("search", "x", "--tenant", "acme"), ("health",), ("ingest",),
    ("conflicts", "list"), ("quarantine", "list"), ("run", "nightly"), ("index",), ("publish",), ("report",),
    ("dedup",), ("forget", "a", "--reason", "x"), ("restore", "a"), ("unmerge", "a"), ("edit", "a", "--set", "content=x"),
    ("conflicts", "resolve", "c1", "--take", "lake"), ("quarantine", "export", "out.jsonl"),
]


@pytest.mark.parametrize("command", WRONG_PATH_COMMANDS, ids=" ".join)
def test_a_path_without_a_lake_is_refused_and_nothing_is_created(capsys, tmp_path, monkeypatch, command):
    wrong = tmp_path / "typo"
    code, out, err = run(capsys, "--lake", str(wrong), *command)
    assert (code, out) == (2, "")
    assert err == (f"error: no lake at {wrong}: create one with `memory-lake init --lake {wrong}`, or point --lake "
                   f"(or $MEMORY_LAKE_DIR) at an existing lake\n")
    # the default (./lake) from a wrong working directory, with --json
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMORY_LAKE_DIR", raising=False)
    code, out, err = run(capsys, *command, "--json")
    assert (code, out) == (2, "") and err.startswith(f"error: no lake at {tmp_path / 'lake'}: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_only_init_and_demo_create_a_lake(capsys, tmp_path):
    code, out, _ = run(capsys, "--lake", str(tmp_path / "new"), "--json", "init")
    assert code == 0 and json.loads(out)["db"] == str(tmp_path / "new" / "lake.duckdb")
    code, out, _ = run(capsys, "--lake", str(tmp_path / "new"), "--json", "sql", "SELECT count(*) AS n FROM memories")
    assert (code, json.loads(out)) == (0, [{"n": 0}])


# ---------------------------------------------------------------- issue 11.8: unknown names are errors
def scoped_lake(capsys, tmp_path) -> str:
    lake = new_lake(tmp_path)
    snapshot = write_jsonl(tmp_path / "s.jsonl", [
        {"id": "pref-1", "tenant": "acme", "agent_id": "support-bot", "user_id": "alice", "content": "likes tea"},
        {"id": "pref-2", "tenant": "acme", "agent_id": "support-bot", "user_id": "bob", "content": "likes coffee",
         "status": "archived"},
        {"id": "note-1", "tenant": "globex", "content": "hello"}])
    code, _, err = run(capsys, "--lake", lake, "ingest", str(snapshot), "--as-of", "2026-11-30T00:00:00Z")
    assert code == 0, err
    return lake


@pytest.mark.parametrize(("command", "message"), [
    (("search", "tea", "--tenant", "nosuch"), "unknown tenant 'nosuch': known tenants: acme, globex"),
    (("search", "tea", "--tenant", "acmee"), "unknown tenant 'acmee': did you mean 'acme'? known tenants: acme, globex"),
    (("search", "tea", "--tenant", "acme", "--agent", "support-bto"),
     "unknown agent 'support-bto': did you mean 'support-bot'? known agents in tenant 'acme': support-bot"),
    (("search", "tea", "--tenant", "acme", "--agent", "support-bot", "--user", "alcie"),
     "unknown user 'alcie': did you mean 'alice'? known users in tenant 'acme', agent 'support-bot': alice, bob"),
    (("health", "--tenant", "nosuch", "--json"), "unknown tenant 'nosuch': known tenants: acme, globex"),
    (("conflicts", "list", "--tenant", "globx"), "unknown tenant 'globx': did you mean 'globex'? known tenants: acme, globex"),
    (("restore", "no-such-id"), "unknown memory id 'no-such-id'; the lake holds 3 memories: see "
                                '`memory-lake sql "SELECT id, tenant, content FROM memories"`'),
    (("restore", "pref-2", "pref-3"), "unknown memory id 'pref-3' (did you mean 'pref-2', 'pref-1'?); the lake holds "
                                      '3 memories: see `memory-lake sql "SELECT id, tenant, content FROM memories"`'),
    (("forget", "pref-7", "note-2", "--reason", "asked"),
     "unknown memory ids 'note-2' (did you mean 'note-1'?), 'pref-7' (did you mean 'pref-2', 'pref-1'?); the lake "
     'holds 3 memories: see `memory-lake sql "SELECT id, tenant, content FROM memories"`'),
    (("forget", "--tenant", "acme", "--user", "carol", "--reason", "asked"),
     "unknown user 'carol': known users in tenant 'acme': alice, bob"),
    (("unmerge", "pref-11"), "unknown memory id 'pref-11' (did you mean 'pref-1', 'pref-2'?); the lake holds "
                             '3 memories: see `memory-lake sql "SELECT id, tenant, content FROM memories"`'),
    (("edit", "pref1", "--set", "content=x"), "unknown memory id 'pref1' (did you mean 'pref-1', 'pref-2'?); the "
                                              'lake holds 3 memories: see `memory-lake sql "SELECT id, tenant, content FROM memories"`'),
    (("conflicts", "resolve", "no-such-id", "--take", "lake"),
     "unknown conflict id 'no-such-id'; the lake holds 0 conflicts: see `memory-lake conflicts list --all`"),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_unknown_tenants_scopes_and_ids_are_errors_that_suggest(capsys, tmp_path, command, message):
    lake = scoped_lake(capsys, tmp_path)
    before = run(capsys, "--lake", lake, "--json", "sql", "SELECT id, status, version FROM memories ORDER BY id")[1]
    code, out, err = run(capsys, "--lake", lake, *command)
    assert (code, out, err) == (2, "", f"error: {message}\n")
    after = run(capsys, "--lake", lake, "--json", "sql", "SELECT id, status, version FROM memories ORDER BY id")[1]
    assert after == before  # nothing done, not even for the known ids
    assert not list((Path(lake) / "inbox").glob("*.jsonl")) and not list((Path(lake) / "inbox" / "decisions").glob("*"))


@pytest.mark.models
def test_known_names_still_work(capsys, tmp_path):
    lake = scoped_lake(capsys, tmp_path)
    code, out, _ = run(capsys, "--lake", lake, "--json", "restore", "pref-2")
    assert (code, json.loads(out)) == (0, {"restored": ["pref-2"], "not_restorable": [], "unknown": [],
                                           "moved_to_long_term": ["pref-2"]})
    code, out, _ = run(capsys, "--lake", lake, "--json", "search", "tea", "--tenant", "acme", "--user", "alice")
    assert code == 0 and [r["id"] for r in json.loads(out)["results"]] == ["pref-1"]
    code, out, _ = run(capsys, "--lake", lake, "--json", "health", "--tenant", "globex", "--as-of", "2026-11-30T00:00:00Z")
    assert code == 0 and json.loads(out)["overall"]["capacity"]["short_term"]["used"] == 1


# ---------------------------------------------------------------- issue 11.9: usage errors exit 2
@pytest.mark.parametrize(("args", "message"), [
    (("status", "--foo"), "error: No such option: --foo (see `memory-lake status --help`)"),
    (("conflicts", "list", "--tenat", "x"), "error: No such option: --tenat (Possible options: --tenant) "
                                           "(see `memory-lake conflicts list --help`)"),
    (("sql",), "error: Missing argument 'query'. (see `memory-lake sql --help`)"),
    (("search", "tea"), "error: Missing option '--tenant'. (see `memory-lake search --help`)"),
    (("health", "--tenant"), "error: Option '--tenant' requires an argument. (see `memory-lake health --help`)"),
    (("ingest", "--max-content-bytes", "abc"), "error: Invalid value for '--max-content-bytes': Input should be a valid "
                                               "integer, unable to parse string as an integer "
                                               "(see `memory-lake ingest --help`)"),
    (("statsu",), "error: No such command 'statsu'. Did you mean 'status', 'targets'? (see `memory-lake --help`)"),
    (("conflicts", "lst"), "error: No such command 'lst'. Did you mean 'list'? (see `memory-lake conflicts --help`)"),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_usage_errors_are_one_line_and_exit_2(capsys, tmp_path, args, message):
    code, out, err = run(capsys, "--lake", new_lake(tmp_path), *args)
    assert (code, out, err) == (2, "", message + "\n")


@pytest.mark.parametrize("where", ["before", "between", "after"])
def test_json_and_lake_before_between_and_after_every_group(capsys, tmp_path, where):
    lake = scoped_lake(capsys, tmp_path)

    def place(group, sub, *rest):
        opts = ("--lake", lake, "--json")
        return {"before": (*opts, group, sub, *rest), "between": (group, *opts, sub, *rest),
                "after": (group, sub, *rest, *opts)}[where]

    code, out, err = run(capsys, *place("quarantine", "list"))
    assert (code, json.loads(out)) == (0, []), err
    code, out, err = run(capsys, *place("conflicts", "list"))
    assert (code, json.loads(out)) == (0, []), err
    code, out, err = run(capsys, *place("conflicts", "list", "--tenant", "acme"))
    assert (code, json.loads(out)) == (0, []), err
    # run: the overrides are checked on the lake named by --lake before Prefect starts
    code, out, err = run(capsys, *place("run", "nightly", "--set", "tiers.nope=3"))
    assert (code, out) == (2, "") and err.startswith("error: unknown policy key(s) in [tiers]: nope"), err


# ---------------------------------------------------------------- issue 12.11: sql reads only
def test_sql_refuses_writes_files_and_settings_with_one_line(capsys, tmp_path):
    lake = scoped_lake(capsys, tmp_path)
    export = Path(lake) / "exports" / "v1" / "memories.parquet"
    export.parent.mkdir(parents=True)
    export.write_bytes(b"published")
    refused = {
        f"COPY memories TO '{export}'": "sql is read-only: COPY is not allowed",
        "SELECT * FROM read_text('/etc/passwd')": "sql reads only the lake's tables: Permission Error",
        f"SELECT * FROM read_csv('{tmp_path / 's.jsonl'}')": "sql reads only the lake's tables: Permission Error",
        f"ATTACH '{tmp_path / 'x.duckdb'}'": "sql is read-only: ATTACH is not allowed",
        "INSTALL httpfs": "sql is read-only: INSTALL is not allowed",
        "LOAD httpfs": "sql is read-only: LOAD is not allowed",
        "SET enable_external_access = true": "sql is read-only: SET is not allowed",
        "PRAGMA version": "sql is read-only: PRAGMA is not allowed",
    }
    for query, start in refused.items():
        code, out, err = run(capsys, "--lake", lake, "sql", query)
        assert (code, out) == (2, ""), query
        assert err.startswith(f"error: {start}") and err.count("\n") == 1, err
    assert export.read_bytes() == b"published"
    assert not (tmp_path / "x.duckdb").exists()
    code, out, _ = run(capsys, "--lake", lake, "--json", "sql", "SELECT id FROM memories ORDER BY id")
    assert (code, json.loads(out)) == (0, [{"id": "note-1"}, {"id": "pref-1"}, {"id": "pref-2"}])


def test_sql_help_says_what_is_allowed(capsys):
    code, out, _ = run(capsys, "sql", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert ("Allowed: a single SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE or EXPLAIN over the "
            "lake's tables. Refused with exit 2: writes, COPY, ATTACH, SET, PRAGMA, INSTALL/LOAD, several statements, "
            "and functions that reach files or the network (read_csv, read_text, ...).") in text


# ---------------------------------------------------------------- issue 12.5: user text is never markup
MARKUP = ["[/x]", "[bold]x[/bold]"]


def test_markup_in_content_is_printed_as_it_is(capsys, tmp_path, monkeypatch):
    from memory_lake.cli import common

    monkeypatch.setattr(common.out, "width", 200)  # whole cells on one line
    lake = new_lake(tmp_path)
    snapshot = write_jsonl(tmp_path / "s.jsonl", [
        {"id": "m1", "tenant": "[/x]", "content": "[/x]", "version": 1},
        {"id": "m2", "tenant": "[bold]x[/bold]", "content": "[bold]x[/bold] :smile:"},
    ], raw_lines={3: "[/x] not json"})
    assert run(capsys, "--lake", lake, "ingest", str(snapshot), "--as-of", "2026-11-30T00:00:00Z")[0] == 0
    # a write conflict on m1: two writers from version 1 (the lake is at 2 after the first)
    for name, text in (("a.jsonl", "[bold]a"), ("b.jsonl", "[/x] b")):
        write_jsonl(tmp_path / name, [{"id": "m1", "tenant": "[/x]", "content": text, "version": 1}])
        assert run(capsys, "--lake", lake, "ingest", str(tmp_path / name), "--as-of", "2026-11-30T00:00:00Z")[0] == 0

    def cells(out: str) -> list[list[str]]:
        return [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]

    code, out, err = run(capsys, "--lake", lake, "sql", "SELECT id, tenant, content FROM memories ORDER BY id")
    assert code == 0, err
    assert cells(out) == [["m1", "[/x]", "[bold]a"], ["m2", "[bold]x[/bold]", "[bold]x[/bold] :smile:"]]
    code, out, err = run(capsys, "--lake", lake, "quarantine", "list")
    assert code == 0, err
    assert [row[2:4] + row[6:] for row in cells(out)] == [["3", "bad JSON", "[/x] not json"]]
    code, out, err = run(capsys, "--lake", lake, "conflicts", "list")
    assert code == 0, err
    assert [row[1:7] for row in cells(out)] == [["write", "m1", "", "content", '"[bold]a"', '"[/x] b"']]
    code, out, err = run(capsys, "--lake", lake, "status")
    assert code == 0, err
    assert cells(out) == [["[/x]", "short_term", "conflicted", "1"], ["[bold]x[/bold]", "short_term", "active", "1"]]
    code, out, err = run(capsys, "--lake", lake, "conflicts", "list", "--tenant", "[/y]")
    assert (code, err) == (2, "error: unknown tenant '[/y]': did you mean '[/x]'? known tenants: [/x], [bold]x[/bold]\n")


# ---------------------------------------------------------------- issue 11.10: progress on stderr
@pytest.mark.models
def test_ingest_and_index_report_progress_on_stderr_never_stdout(capsys, tmp_path):
    lake = new_lake(tmp_path)
    for n in range(3):
        write_jsonl(Path(lake) / "inbox" / f"{n:04}.jsonl", [{"tenant": "acme", "content": f"memory number {n}"}])
    code, out, err = run(capsys, "--lake", lake, "--json", "ingest", "--as-of", "2026-11-30T00:00:00Z")
    assert code == 0 and json.loads(out)["ingested"] == 3
    assert err == "ingest: read 1/3 files\ningest: read 3/3 files\n"
    code, out, err = run(capsys, "--lake", lake, "index", "--json", "--as-of", "2026-11-30T00:00:00Z")
    report = json.loads(out)
    assert code == 0 and report["counts"]["tokenized"] == 3
    ours = [line for line in err.splitlines() if line.startswith("index: ")]  # the model's loader has its own bar
    assert ours == ["index: tokenised 3/3 texts"] + (["index: embedded 3/3 texts"] if report["counts"]["embedded"] else [])


@pytest.mark.slow
def test_run_nightly_prints_a_line_per_step_on_stderr_and_only_json_on_stdout(prefect_harness, capsys, tmp_path):
    lake = new_lake(tmp_path)
    write_jsonl(Path(lake) / "inbox" / "0001.jsonl", [{"tenant": "acme", "content": "hello"}])
    code, out, err = run(capsys, "--lake", lake, "run", "--json", "nightly", "--as-of", "2026-11-30T00:00:00Z",
                         "--reports", str(tmp_path / "reports"))
    summary = json.loads(out)
    assert code == 0 and summary["status"] == "ok"
    import re

    ours = [line for line in err.splitlines() if line.startswith("nightly: step ")]
    summaries = [step["summary"] for step in summary["steps"].values()]
    assert len(ours) == 2 * len(summaries) and len(summaries) >= 11
    for number, (start, done, step_summary) in enumerate(zip(ours[::2], ours[1::2], summaries), 1):
        name = re.fullmatch(rf"nightly: step {number} (\w+) …", start)[1]
        assert re.fullmatch(rf"nightly: step {number} {name} done in [0-9.]+ s: {re.escape(step_summary)}", done), done
    assert ours[0] == "nightly: step 1 apply_decisions …" and ours[2] == "nightly: step 2 ingest_inbox …"


def test_a_command_waiting_for_the_lock_says_so_at_once(tmp_path, warm_python):
    """A stranger's `ingest` on a held lake stayed silent for up to 600 s and looked hung."""
    import time

    from memory_lake import Lake

    lake = Lake.init(tmp_path / "lake")
    with held_by_another_process(lake, seconds=3):
        started = time.monotonic()
        proc = cli_process(warm_python, "--lake", str(lake.root), "ingest", env={"MEMORY_LAKE_WAIT_S": "30"}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith("lake busy: pid ") and first.endswith(
        "(nightly run) holds the write lock; waiting up to 30 s for it (MEMORY_LAKE_WAIT_S sets how long)")
    assert time.monotonic() - started < 30


def test_quarantine_list_with_an_unknown_reason_is_an_error_that_suggests(capsys, tmp_path):
    """`quarantine list --reason "bad jsn"` answered 0 rows with exit 0."""
    lake = new_lake(tmp_path)
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "acme", "content": "hello"}, "broken"])
    run(capsys, "--lake", lake, "ingest", str(snapshot))
    code, out, err = run(capsys, "--lake", lake, "quarantine", "list", "--reason", "bad jsn")
    assert (code, out, err) == (2, "", "error: no quarantined line has reason 'bad jsn': did you mean 'bad JSON'? "
                                       "reasons in the quarantine: bad JSON\n")
    code, out, _ = run(capsys, "--lake", lake, "--json", "quarantine", "list", "--reason", "BAD json")
    assert code == 0 and [r["reason"] for r in json.loads(out)] == ["bad JSON"]


@pytest.mark.process  # starts a process (the subject here)
def test_a_wide_listing_keeps_every_id_whole_at_80_columns(tmp_path):
    """`conflicts list` split a 16-character conflict id over four lines at 80 columns (piped)."""
    from memory_lake import Lake

    lake = Lake.init(tmp_path / "lake")
    base = {"id": "pref-theme", "tenant": "acme", "agent_id": "support-bot", "user_id": "alice"}
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [{**base, "content": "Alice prefers dark mode"}])])
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [{**base, "content": "Alice prefers light mode", "version": 1}])])
    lake.ingest([write_jsonl(tmp_path / "c.jsonl", [{**base, "content": "Alice prefers sepia mode", "version": 1}])])
    (conflict_id,) = lake.conflicts()["conflict_id"].to_list()
    proc = subprocess.run([str(Path(sys.executable).parent / "memory-lake"), "--lake", str(lake.root), "conflicts", "list"],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert f"conflict_id        {conflict_id}" in lines and "memory_id          pref-theme" in lines
    assert 'incoming_value     "Alice prefers sepia mode"' in lines


def test_index_honours_the_lock_wait(tmp_path, warm_python):
    """`MEMORY_LAKE_WAIT_S` was ignored by `index` (issue 14): it waited the default 600 s."""
    from memory_lake import Lake

    lake = Lake.init(tmp_path / "lake")
    with held_by_another_process(lake, seconds=30):
        proc = cli_process(warm_python, "--lake", str(lake.root), "index", env={"MEMORY_LAKE_WAIT_S": "1"}, timeout=60)
    assert proc.returncode == 3
    assert proc.stderr.splitlines()[-1].startswith(f"error: lake {lake.root} is busy: pid ")


def test_conflicts_list_says_what_found_each_conflict(tmp_path, capsys):
    """A person deciding a conflict sees what found it: the snapshot file and line of a write, or
    the dedup pass with the guard's reason ("unit pounds/kilos")."""
    from memory_lake import Lake

    lake = Lake.init(tmp_path / "lake")
    base = {"id": "pref-theme", "tenant": "acme", "agent_id": "support-bot", "user_id": "alice"}
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [{**base, "content": "Alice prefers dark mode"}])])
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [{**base, "content": "Alice prefers light mode", "version": 1}])])
    lake.ingest([write_jsonl(tmp_path / "c.jsonl", [{**base, "content": "Alice prefers sepia mode", "version": 1}])])
    weights = [{"id": f"bag-{n}", "tenant": "acme", "user_id": "bob", "type": "fact",
                "content": f"Bob's suitcase weighed 23 {unit} at check-in.", "created_at": f"2026-11-0{n}T00:00:00Z"}
               for n, unit in ((1, "pounds"), (2, "kilos"))]
    lake.ingest([write_jsonl(tmp_path / "d.jsonl", weights)])
    lake.dedup(as_of="2026-11-30")
    frame = lake.conflicts().sort("kind")
    (source, line), = frame.filter(kind="write").select("source_file", "source_line").rows()
    code, out, err = run(capsys, "--lake", str(lake.root), "conflicts", "list")
    assert code == 0, err
    found = [line_.split(None, 1)[1] for line_ in out.splitlines() if line_.startswith("found_by")]
    write, dedup = sorted(found, key=lambda f: f.startswith("dedup"))
    assert write == f"c.jsonl:{line}" and source == str(tmp_path / "c.jsonl")    # the whole path in --json
    assert dedup.startswith("dedup near (unit pounds/kilos, 0.") and dedup.endswith(")")


def test_an_empty_conflicts_list_is_one_line_that_says_why(tmp_path, capsys):
    """An empty `conflicts list` printed a 12-column table with its headers broken into 2-letter
    pieces: it is one line, which points at the resolved ones under --all; --json stays []."""
    from memory_lake import Lake

    lake = Lake.init(tmp_path / "lake")
    root = str(lake.root)
    assert run(capsys, "--lake", root, "conflicts", "list") == (
        0, "no open conflicts (none resolved either: a conflict appears when an incoming write or dedup "
           "disputes a memory)\n", "")
    assert run(capsys, "--lake", root, "conflicts", "list", "--all") == (0, "no conflicts recorded\n", "")
    base = {"id": "pref-theme", "tenant": "acme", "agent_id": "support-bot", "user_id": "alice"}
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [{**base, "content": "Alice prefers dark mode"}])])
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [{**base, "content": "Alice prefers light mode", "version": 1}])])
    lake.ingest([write_jsonl(tmp_path / "c.jsonl", [{**base, "content": "Alice prefers sepia mode", "version": 1}])])
    (conflict_id,) = lake.conflicts()["conflict_id"].to_list()
    lake.resolve_conflict(conflict_id, "lake")
    assert run(capsys, "--lake", root, "conflicts", "list") == (
        0, "no open conflicts (1 resolved: conflicts list --all)\n", "")
    assert run(capsys, "--lake", root, "conflicts", "list", "--tenant", "acme") == (
        0, "no open conflicts for tenant acme (1 resolved: conflicts list --all)\n", "")
    assert run(capsys, "--lake", root, "--json", "conflicts", "list") == (0, "[]\n", "")
    code, out, _ = run(capsys, "--lake", root, "conflicts", "list", "--all")
    assert code == 0 and out.startswith("1 conflict(s)") and f"conflict_id        {conflict_id}" in out


def test_two_lakes_run_from_one_folder_keep_their_reports_apart(tmp_path, capsys, monkeypatch):
    """`run nightly` and `report` wrote ./reports/health-<date>.html in the current folder, so a
    second lake's run replaced the first lake's report. The default is <lake>/reports; --reports
    DIR still chooses the folder."""
    from memory_lake import Lake

    monkeypatch.delenv("MEMORY_LAKE_REPORTS", raising=False)
    monkeypatch.chdir(tmp_path)
    first, second = (str(Lake.init(tmp_path / name).root.resolve()) for name in ("first", "second"))
    for root in (first, second):
        code, out, err = run(capsys, "--lake", root, "--json", "run", "nightly", "--no-prefect",
                             "--as-of", "2026-11-30T00:00:00Z")
        assert code == 0, err
        summary = json.loads(out)
        assert summary["report"] == f"{root}/reports/2026-11-30/{summary['run_id']}.html"
        code, out, err = run(capsys, "--lake", root, "report", "--as-of", "2026-11-30T00:00:00Z")
        assert (code, err) == (0, "") and re.fullmatch(rf"report: {root}/reports/2026-11-30/report-20261130T000000-\w+\.html\n", out)
    for root in (first, second):
        page = Path(root, "reports", "latest.html").read_text(encoding="utf-8")
        assert f"<dt>lake</dt><dd><code>{root}</code></dd>" in page
    assert not (tmp_path / "reports").exists()
    code, out, _ = run(capsys, "--lake", first, "report", "--reports", "elsewhere")
    assert code == 0 and out.startswith(f"report: {tmp_path.resolve()}/elsewhere/")


def test_a_nightly_dated_before_the_last_one_says_so(tmp_path, capsys):
    """A stranger ran `run nightly --as-of 2026-12-01` after a run of 12-03: it published v2 with an
    earlier as_of than v1, and health kept showing the 12-03 snapshot, without a word. It still runs
    (a backfill is legitimate) and says what it means; a later run says nothing."""
    lake = new_lake(tmp_path)
    args = ("--lake", lake, "run", "nightly", "--no-prefect", "--as-of")
    code, _, err = run(capsys, *args, "2026-12-03T03:00:00Z")
    assert code == 0 and "note: as_of" not in err
    code, _, err = run(capsys, *args, "2026-12-01T03:00:00Z")
    assert code == 0
    assert ("note: as_of 2026-12-01T03:00:00Z is before the last nightly run's (2026-12-03T03:00:00Z): this run "
            "reads and ages the memories as of then and publishes a new version; `memory-lake health` keeps showing "
            "the newest snapshot (2026-12-03T03:00:00Z)") in err.replace("\n", " ")
    code, _, err = run(capsys, *args, "2026-12-04T03:00:00Z")
    assert code == 0 and "note: as_of" not in err


def test_quarantine_export_refuses_an_existing_file_without_force(capsys, tmp_path):
    """Finding 13: a second export must not wipe the edits in the first one."""
    lake = new_lake(tmp_path)
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "acme", "content": "x", "tier": "forever"}])
    run(capsys, "--lake", lake, "ingest", str(snapshot))
    fixed = tmp_path / "fix.jsonl"
    fixed.write_text("edits in progress\n", encoding="utf-8")
    code, out, err = run(capsys, "--lake", lake, "quarantine", "export", str(fixed))
    assert (code, out) == (2, "")
    assert err == (f"error: {fixed} already exists (it may hold edits in progress): "
                   "choose another file, or pass --force to replace it\n")
    assert fixed.read_text(encoding="utf-8") == "edits in progress\n"
    code, out, _ = run(capsys, "--lake", lake, "quarantine", "export", str(fixed), "--force")
    assert (code, out) == (0, f"wrote 1 line(s) to {fixed}\n")
    assert json.loads(fixed.read_text(encoding="utf-8"))["tier"] == "forever"
    code, out, _ = run(capsys, "quarantine", "export", "--help")
    assert "--force" in out and "already exists" in out


def test_quarantine_list_cuts_long_raw_text_for_people_not_for_json(capsys, tmp_path):
    """Finding 15: a 70 KB line must not flood the terminal; --json keeps it whole."""
    lake = new_lake(tmp_path)
    big = json.dumps({"tenant": "acme", "content": "x" * 70_000})
    snapshot = write_jsonl(tmp_path / "s.jsonl", [big])
    run(capsys, "--lake", lake, "ingest", str(snapshot))
    code, out, _ = run(capsys, "--lake", lake, "quarantine", "list")
    assert code == 0
    assert len(out) < 2_000 and "x" * 300 not in out
    assert f"… ({len(big):,} characters; --json shows all)" in out
    assert "content too large" in out
    code, out, _ = run(capsys, "--lake", lake, "--json", "quarantine", "list")
    assert [r["raw"] for r in json.loads(out)] == [big]


def test_entities_context_and_report_say_when_they_answer_from_the_published_version(tmp_path, warm_python):
    """Every read that answers from the published version while a run holds the lake says so,
    once (a stranger saw `report` answer from it without a word)."""
    from memory_lake import Lake

    lake = Lake.init(tmp_path / "lake")
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [{"tenant": "acme", "agent_id": "bot", "user_id": "alice",
                                                      "content": "Alice moved to Lisbon in May."}])],
                as_of="2026-11-30T00:00:00Z")
    assert lake.publish(as_of="2026-11-30T00:00:00Z").details["version"] == "v1"
    scope = ["--tenant", "acme", "--agent", "bot", "--user", "alice"]
    with held_by_another_process(lake, seconds=60):
        for command in (["entities", *scope], ["context", "Lisbon", *scope],
                        ["report", "--reports", str(tmp_path / "r")]):
            proc = cli_process(warm_python, "--lake", str(lake.root), *command, timeout=120)
            assert proc.returncode == 0, (command, proc.stderr)
            note = "note: the lake is busy (a run holds it); answered from published v1"
            assert proc.stderr.splitlines().count(note) == 1, (command, proc.stderr)


def test_edit_says_what_it_set_or_that_nothing_changed(capsys, tmp_path):
    """A stranger's edit printed only "m-en-5 is at version 2 (active)"."""
    lake = new_lake(tmp_path)
    snapshot = write_jsonl(tmp_path / "s.jsonl", [{"id": "pref-1", "tenant": "acme", "content": "likes tea"}])
    run(capsys, "--lake", lake, "ingest", str(snapshot), "--as-of", "2026-11-30T00:00:00Z")
    for expected in ("pref-1 is at version 2 (active): set tier=long_term",
                     "pref-1 unchanged: it already had those values (version 2, active)"):
        code, out, _ = run(capsys, "--lake", lake, "edit", "pref-1", "--set", "tier=long_term",
                           "--as-of", "2026-11-30T01:00:00Z")
        assert (code, out.strip()) == (0, expected)


def test_a_table_measures_chinese_text_by_its_width_on_screen(capsys):
    """Piped output is 80 columns wide. 用户住在杭州，周末常去西湖边跑步，偶尔去灵隐寺附近喝茶 is 27 characters but 54
    columns: a table that counted characters would fit on paper and fold every Chinese cell over
    lines; measured in columns it falls back to one `column: value` block per row."""
    import polars as pl

    from memory_lake.cli.common import out, print_frame

    assert out.width == 80                                  # captured: not a terminal
    frame = pl.DataFrame({"memory_id": ["m_0123456789abcdef"], "tier": ["long_term"],
                          "content": ["用户住在杭州，周末常去西湖边跑步，偶尔去灵隐寺附近喝茶"], "score": ["0.91"]})
    print_frame(frame, title="1 result(s)")
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["1 result(s)", "-- row 1 " + "-" * 49, "memory_id  m_0123456789abcdef", "tier       long_term",
                     "content    用户住在杭州，周末常去西湖边跑步，偶尔去灵隐寺附近喝茶", "score      0.91", "1 row(s)"]
    english = frame.with_columns(pl.lit("lives in Hangzhou, runs by the lake").alias("content"))
    print_frame(english, title="1 result(s)")
    table = capsys.readouterr().out.splitlines()
    assert any("lives in Hangzhou, runs by the lake" in line for line in table) and table[-1] == "1 row(s)"


def test_demo_refuses_a_lake_that_holds_other_tenants(capsys, tmp_path):
    """A stranger ran `demo` on a lake with real data (the default ./lake): 944 made-up memories
    were mixed into it without a word. Now it is refused, and nothing is written to the inbox."""
    lake = new_lake(tmp_path)
    run(capsys, "--lake", lake, "ingest", str(write_jsonl(tmp_path / "s.jsonl", [
        {"id": "p-1", "tenant": "mycorp", "content": "a real memory"}])))
    before = sorted(p.name for p in (Path(lake) / "inbox").iterdir())
    code, out, err = run(capsys, "--lake", lake, "demo")
    assert (code, out) == (2, "")
    assert err.strip() == (f"error: {lake} already holds memories of other tenants (mycorp): the demo would mix "
                           "made-up memories into them. Run it on a new folder (memory-lake --lake demo-lake demo), "
                           "or pass --force to add it anyway")
    assert sorted(p.name for p in (Path(lake) / "inbox").iterdir()) == before


def test_an_unreadable_file_left_in_the_inbox_is_named_by_ingest_and_status(capsys, tmp_path):
    """A damaged file stays in the inbox (its bytes cannot be redacted, so they are never copied):
    every later ingest said "ingested 1 file(s): 0 new ..." and status "1 file(s) waiting" without
    naming it. Both name it now, and status shows decisions queued for the next run."""
    lake = new_lake(tmp_path)
    (Path(lake) / "inbox" / "0001-broken.parquet").write_bytes(b"PAR1 this is not parquet")
    code, out, _ = run(capsys, "--lake", lake, "ingest")
    assert code == 0 and out.splitlines()[0] == "ingested 0 file(s): 0 new, 0 updated, 0 unchanged, 0 forgotten, 1 quarantined"
    code, out, _ = run(capsys, "--lake", lake, "ingest")
    assert out.splitlines() == [
        "ingested 0 file(s): 0 new, 0 updated, 0 unchanged, 0 forgotten, 0 quarantined",
        "  not ingested, unreadable file(s) left where they are: 0001-broken.parquet (quarantined once as 'unreadable "
        "file', see `memory-lake quarantine list`; mend what the reason below names, or remove the file; once it "
        "reads, its row is closed)",
        "    0001-broken.parquet: not a readable Parquet file (Could not open Parquet input source '<Buffer>': Parquet "
        "magic bytes not found in footer. Either the file is corrupted or this is not a parquet file.)"]
    (Path(lake) / "inbox" / "decisions" / "20261203T085022-forget-ab12.json").write_text("{}")
    code, out, _ = run(capsys, "--lake", lake, "--json", "status")
    data = json.loads(out)
    assert (data["inbox_files"], data["inbox_unreadable"], data["pending_decisions"]) == (
        1, ["0001-broken.parquet"], ["20261203T085022-forget-ab12.json"])
    code, out, _ = run(capsys, "--lake", lake, "status")
    assert out.splitlines()[:3] == [
        f"lake {lake} (live); 1 file(s) waiting in the inbox: 0001-broken.parquet",
        "unreadable file(s) in inbox: 0001-broken.parquet (quarantined as 'unreadable file'; replace with a readable "
        "file or remove)",
        "1 decision(s) queued for the next run (forget, restore, resolve, edit made while a run held the lake): "
        "20261203T085022-forget-ab12.json"]


def test_status_finds_an_unreadable_file_whose_name_holds_pii(capsys, tmp_path):
    """Quarantine keeps a file's name redacted (names can hold PII), so status, which matched the
    inbox's names against it, missed an unreadable file named after an e-mail address. It matches
    by content now and shows the name the operator sees in the inbox."""
    lake = new_lake(tmp_path)
    (Path(lake) / "inbox" / "jane.doe@example.com.parquet").write_bytes(b"PAR1 this is not parquet")
    run(capsys, "--lake", lake, "ingest")
    quarantined = run(capsys, "--lake", lake, "--json", "sql", "SELECT file FROM quarantine")[1]
    assert "jane.doe@example.com" not in quarantined
    code, out, _ = run(capsys, "--lake", lake, "--json", "status")
    assert (code, json.loads(out)["inbox_unreadable"]) == (0, ["jane.doe@example.com.parquet"])


def test_a_forget_queued_while_a_run_held_the_lake_is_applied_on_demand(capsys, tmp_path):
    """A stranger's forget was queued during a run that ended seconds later; nothing applied it
    until the next nightly (the phone number stayed for up to a day). The queued message names
    `apply-decisions`, which applies the queue at once."""
    from memory_lake import Lake

    lake = new_lake(tmp_path)
    run(capsys, "--lake", lake, "ingest", str(write_jsonl(tmp_path / "s.jsonl", [
        {"id": "p-1", "tenant": "acme", "content": "call me at +1 415 555 0100"},
        {"id": "p-2", "tenant": "acme", "content": "likes tea"}])))
    code, out, _ = run(capsys, "--lake", lake, "apply-decisions")
    assert (code, out) == (0, "no decision is queued in inbox/decisions/\n")
    with Lake.open(lake).writer():   # a run holds the lake
        code, out, _ = run(capsys, "--lake", lake, "forget", "p-1", "--reason", "user asked")
    queued = next((Path(lake) / "inbox" / "decisions").glob("*.json"))
    assert (code, " ".join(out.split())) == (0, f"the lake is busy: queued as {queued}; the next nightly run applies "
                                                "it first, or `memory-lake apply-decisions` once the lake is free")
    code, out, _ = run(capsys, "--lake", lake, "apply-decisions")
    assert (code, out) == (0, "applied 1 decision(s): forgot 1, resolved 0; refused 0, failed 0, left 0\n")
    code, out, _ = run(capsys, "--lake", lake, "--json", "sql", "SELECT id, status FROM memories ORDER BY id")
    assert json.loads(out) == [{"id": "p-1", "status": "deleted"}, {"id": "p-2", "status": "active"}]
    assert [p.name for p in (Path(lake) / "inbox" / "decisions" / "applied").glob("*.json")] == [queued.name]
    code, out, _ = run(capsys, "--lake", lake, "--json", "apply-decisions")
    assert (code, json.loads(out)) == (0, {"counts": {"applied": 0}})
