"""Issue 35.5: history imported with its real (old) dates goes dormant on its first night; bringing
it back took 788 ids piped into `restore`. `restore --all-dormant --tenant T [--agent A] [--user U]`
restores a scope's dormant memories in one go."""

from __future__ import annotations

import json

from memory_lake.cli import main
from memory_lake.maintain import enforce_tiers

from ..conftest import AS_OF, rows, write_jsonl

OLD = "2025-01-15T10:00:00Z"


def _history(lake, tmp_path) -> None:
    records = [{"id": f"{user}-{n}", "tenant": tenant, "agent_id": "bot", "user_id": user, "tier": "long_term",
                "content": f"{user} memory {n} from last year", "created_at": OLD}
               for tenant, user, count in (("acme", "alice", 3), ("acme", "bob", 2), ("globex", "gina", 1))
               for n in range(count)]
    lake.ingest([write_jsonl(tmp_path / "history.jsonl", records)], as_of=AS_OF)
    enforce_tiers(lake, AS_OF)
    assert rows(lake, "SELECT count(*) AS n FROM memories WHERE status = 'dormant'") == [{"n": 6}]


def test_all_dormant_restores_one_scope_and_nothing_else(lake, tmp_path, capsys):
    _history(lake, tmp_path)
    code = main(["--lake", str(lake.root), "--json", "restore", "--all-dormant", "--tenant", "acme", "--user", "alice",
                 "--as-of", "2026-11-30T01:00:00Z"])
    assert code == 0
    assert sorted(json.loads(capsys.readouterr().out)["restored"]) == ["alice-0", "alice-1", "alice-2"]
    assert rows(lake, "SELECT id, status FROM memories ORDER BY id") == [
        {"id": "alice-0", "status": "active"}, {"id": "alice-1", "status": "active"}, {"id": "alice-2", "status": "active"},
        {"id": "bob-0", "status": "dormant"}, {"id": "bob-1", "status": "dormant"}, {"id": "gina-0", "status": "dormant"}]
    # a scope with none left: one line, nothing changed
    assert main(["--lake", str(lake.root), "restore", "--all-dormant", "--tenant", "acme", "--user", "alice"]) == 0
    assert capsys.readouterr().out.strip() == "no dormant memories in tenant acme, user alice: nothing to restore"


def test_all_dormant_needs_a_tenant_and_not_ids_too(lake, tmp_path, capsys):
    _history(lake, tmp_path)
    assert main(["--lake", str(lake.root), "restore", "--all-dormant"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --all-dormant needs --tenant (and optionally --agent, --user): the scope to restore")
    assert main(["--lake", str(lake.root), "restore", "bob-0", "--all-dormant", "--tenant", "acme"]) == 2
    assert "ids, or --all-dormant" in capsys.readouterr().err
    assert main(["--lake", str(lake.root), "restore", "--all-dormant", "--tenant", "acmee"]) == 2
    assert "acme" in capsys.readouterr().err  # the closest known tenant is suggested
    assert rows(lake, "SELECT count(*) AS n FROM memories WHERE status = 'dormant'") == [{"n": 6}]


def test_ingest_history_starts_the_idle_clock_at_ingest_so_the_first_night_keeps_it_active(lake, tmp_path, capsys):
    records = [{"id": f"h{n}", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "long_term",
                "content": f"alice memory {n} from last year", "created_at": OLD} for n in range(3)]
    path = write_jsonl(tmp_path / "history.jsonl", records)
    assert main(["--lake", str(lake.root), "ingest", str(path), "--history", "--as-of", "2026-11-30T00:00:00Z"]) == 0
    enforce_tiers(lake, AS_OF)
    assert rows(lake, "SELECT id, status, created_at::VARCHAR AS created, last_accessed_at::VARCHAR AS idle_since "
                      "FROM memories ORDER BY id") == [
        {"id": f"h{n}", "status": "active", "created": "2025-01-15 10:00:00", "idle_since": "2026-11-30 00:00:00"}
        for n in range(3)]
    # without --history the same file's memories are as idle as their age: dormant on the first night
    plain = tmp_path / "plain"
    assert main(["--lake", str(plain), "init"]) == 0
    assert main(["--lake", str(plain), "ingest", str(path), "--as-of", "2026-11-30T00:00:00Z"]) == 0
    from memory_lake import Lake

    enforce_tiers(Lake.open(plain), AS_OF)
    assert {r["status"] for r in rows(Lake.open(plain), "SELECT status FROM memories")} == {"dormant"}


def test_history_formats_make_every_file_of_a_format_history(tmp_path):
    """`[ingest] history_formats = ["json"]`: a save file (an agent's whole past, imported) starts
    its idle clock at ingest; a JSON Lines snapshot of the same lake keeps its own dates. An
    unknown format is refused with the known ones."""
    from memory_lake import Lake
    from memory_lake.store import InputError

    lake = Lake.init(tmp_path / "lake")
    (lake.root / "memory-lake.toml").write_text('[ingest]\nhistory_formats = ["json"]\n', encoding="utf-8")
    lake = Lake.open(lake.root)
    save = tmp_path / "past.json"
    save.write_text(json.dumps({"tenant": "acme", "agent_id": "bot", "user_id": "alice", "memories": [
        {"id": "s0", "tier": "long_term", "content": "alice memory from the save file", "created_at": OLD}]}),
        encoding="utf-8")
    snapshot = write_jsonl(tmp_path / "now.jsonl", [
        {"id": "j0", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "long_term",
         "content": "alice memory from the snapshot", "created_at": OLD}])
    lake.ingest([save, snapshot], as_of=AS_OF)
    enforce_tiers(lake, AS_OF)
    assert rows(lake, "SELECT id, status FROM memories ORDER BY id") == [
        {"id": "j0", "status": "dormant"}, {"id": "s0", "status": "active"}]

    (lake.root / "memory-lake.toml").write_text('[ingest]\nhistory_formats = ["xml"]\n', encoding="utf-8")
    import pytest

    with pytest.raises(InputError) as error:
        Lake.open(lake.root)
    assert "history_formats" in str(error.value) and "json, jsonl, parquet" in str(error.value)
