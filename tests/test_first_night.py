"""The first night of a new install, as an operator and an agent meet it (issue 11's acceptance):
a fresh lake -> `init` -> `run nightly` on the empty lake -> ingest one memory -> `run nightly` ->
read commands while another process holds the lake. Every step exits 0 with output a stranger can read.

The CLI runs in this process (`memory_lake.cli.main`) so that the nightly flow uses the session's
Prefect harness; the process that holds the lake is a real second process.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from memory_lake.cli import main

from .conftest import held_by_another_process, write_jsonl

AS_OF_1 = "2026-11-30T03:02:00Z"
AS_OF_2 = "2026-12-01T03:02:00Z"


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
def test_first_night_of_a_new_install(prefect_harness, capsys, tmp_path):
    lake = tmp_path / "lake"
    reports = tmp_path / "reports"

    # a wrong path is refused and creates nothing
    code, out, err = cli(capsys, "--lake", str(lake), "status")
    assert (code, out) == (2, "") and f"no lake at {lake}" in err and not lake.exists()

    code, out, err = cli(capsys, "--lake", str(lake), "init")
    assert code == 0 and f"lake ready at {lake}" in out

    # night one: nothing in the lake yet
    code, out, err = cli(capsys, "--lake", str(lake), "--json", "run", "nightly", "--as-of", AS_OF_1,
                         "--reports", str(reports))
    assert code == 0, err
    first = json.loads(out)
    assert first["status"] == "ok"
    assert sorted(p.name for p in (lake / "exports").iterdir()) == ["CURRENT", "v1"]
    assert sorted(p.name for p in reports.iterdir()) == ["2026-11-30", "index.html", "latest.html"]
    assert [p.name for p in (reports / "2026-11-30").iterdir()] == [f"{first['run_id']}.html"]
    manifest = json.loads((lake / "exports" / "CURRENT" / "manifest.json").read_text())
    assert manifest["version"] == "v1"
    assert pl.read_parquet(lake / "exports" / "CURRENT" / "memories.parquet").height == 0
    code, out, _ = cli(capsys, "--lake", str(lake), "--json", "sql", "SELECT kind, status FROM runs")
    assert json.loads(out) == [{"kind": "nightly", "status": "ok"}]

    # an agent drops one memory; night two publishes it
    write_jsonl(lake / "inbox" / "20261130T1200-bot.jsonl", [
        {"id": "pref-1", "tenant": "acme", "agent_id": "bot", "user_id": "alice",
         "content": "Alice prefers dark mode in the editor", "created_at": "2026-11-30T12:00:00Z"}])
    code, out, err = cli(capsys, "--lake", str(lake), "--json", "run", "nightly", "--as-of", AS_OF_2,
                         "--reports", str(reports))
    assert code == 0, err
    second = json.loads(out)
    assert second["status"] == "ok"
    current = (lake / "exports" / "CURRENT").resolve()
    assert current.name == "v2"
    published = pl.read_parquet(current / "memories.parquet")
    assert published.select("id", "tenant", "content", "status").to_dicts() == [
        {"id": "pref-1", "tenant": "acme", "content": "Alice prefers dark mode in the editor", "status": "active"}]
    assert not list((lake / "exports").glob(".staging-*"))

    # another process holds the lake: reads answer from the published version and say so
    with held_by_another_process(lake):
        for args in (["status"], ["sql", "SELECT id FROM memories"], ["conflicts", "list"], ["quarantine", "list"],
                     ["health"], ["search", "dark mode", "--tenant", "acme"]):
            code, out, err = cli(capsys, "--lake", str(lake), *args)
            assert code == 0, (args, err)
            assert "published v2" in out + err, (args, out, err)
        code, out, err = cli(capsys, "--lake", str(lake), "--json", "search", "dark mode", "--tenant", "acme")
        assert code == 0, err
        assert [r["id"] for r in json.loads(out)["results"]] == ["pref-1"]
        code, out, err = cli(capsys, "--lake", str(lake), "--json", "sql", "SELECT id FROM memories")
        assert code == 0 and json.loads(out) == [{"id": "pref-1"}]
