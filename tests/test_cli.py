"""The CLI contract: --lake/--json anywhere, JSON-only stdout, one-line errors, every --help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_lake.cli import app, main

from .conftest import write_jsonl


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
    lake = str(tmp_path / "lake")
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
    code, out, _ = run(capsys, "ingest", str(snapshot), "--lake", str(tmp_path / "lake"), "--dry-run")
    assert code == 0
    assert "would ingest 1 file(s) (0 already ingested): 1 new, 0 updated, 0 unchanged, 0 forgotten, 0 quarantined" in out


def test_errors_are_one_line_and_non_zero(capsys, tmp_path):
    code, out, err = run(capsys, "--lake", str(tmp_path / "lake"), "ingest", str(tmp_path / "missing.jsonl"))
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and err.startswith("error: ") and "no such file" in err

    code, _, err = run(capsys, "--lake", str(tmp_path / "lake"), "sql", "DELETE FROM memories")
    assert code == 2 and "read-only" in err

    code, _, err = run(capsys, "--lake", str(tmp_path / "lake"), "ingest", "--as-of", "tomorrow")
    assert code == 2 and "--as-of 'tomorrow' is not an ISO 8601 timestamp" in err


def test_busy_lake_is_a_clear_error(capsys, tmp_path):
    from memory_lake import Lake

    lake = Lake.open(tmp_path / "lake")
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
    lake = str(tmp_path / "lake")
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
    lake = str(tmp_path / "lake")
    write_jsonl(Path(lake) / "inbox" / "0001.jsonl", [{"tenant": "acme", "content": "x"}])
    code, out, _ = run(capsys, "--lake", lake, "--json", "status")
    data = json.loads(out)
    assert (code, data["inbox_files"], data["memories"]) == (0, 1, 0)


def test_console_script_never_prints_a_traceback(tmp_path):
    script = Path(sys.executable).parent / "memory-lake"
    proc = subprocess.run([str(script), "--lake", str(tmp_path / "lake"), "sql", "SELEC nonsense"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: query failed")


def test_demo_twice_changes_nothing_the_second_time(capsys, tmp_path):
    lake = str(tmp_path / "lake")
    code, out, _ = run(capsys, "--lake", lake, "--json", "demo", "--seed", "7")
    first = json.loads(out)
    assert code == 0 and first["ingest"]["ingested"] > 800 and first["as_of"] == "2026-11-30T00:00:00Z"
    code, out, _ = run(capsys, "--lake", lake, "--json", "demo", "--seed", "7")
    second = json.loads(out)
    assert second["ingest"]["files_skipped"] == second["generated_files"] == first["generated_files"]
    assert (second["ingest"]["ingested"], second["ingest"]["updated"], second["ingest"]["quarantined"]) == (0, 0, 0)
    assert second["memories_by_tier"] == first["memories_by_tier"]
