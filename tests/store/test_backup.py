"""Backups (issue 14 item 6): a consistent copy under the lock and a checked restore; the round
trip gives back every table whole."""

from __future__ import annotations

import json

import pytest

from memory_lake.store import BackupError, FORGET_WARNING, Lake, backup, restore_backup
from memory_lake.cli import main

from ..conftest import AS_OF, write_jsonl


def all_tables(lake) -> dict[str, list[tuple]]:
    with lake.reader() as con:
        names = [n for (n,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        return {n: con.execute(f'SELECT * FROM "{n}" ORDER BY ALL').fetchall() for n in names}


def filled(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [
        {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "id": "m1", "content": "call +1 415 555 0100"},
        {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "id": "m2", "content": "likes tea"},
        "not json"])], as_of=AS_OF)
    (lake.root / "memory-lake.toml").write_text("[retention]\ndays = 10\n", encoding="utf-8")
    return lake


def test_backup_round_trip_gives_back_every_table(lake, tmp_path):
    filled(lake, tmp_path)
    before = all_tables(lake)
    assert before["quarantine"] and before["tenant_salts"] and len(before["memories"]) == 2
    manifest = backup(lake, tmp_path / "bk", AS_OF)
    assert (manifest["as_of"], manifest["format"], manifest["warning"]) == ("2026-11-30T00:00:00Z", 1, FORGET_WARNING)
    assert sorted(manifest["files"]) == sorted(
        ["lake.duckdb", "memory-lake.toml", *(f"raw/{p.name}" for p in lake.raw.iterdir())])
    restored = restore_backup(tmp_path / "bk", tmp_path / "copy")
    assert restored["restored_to"] == str(tmp_path / "copy")
    copy = Lake.open(tmp_path / "copy")
    assert all_tables(copy) == before
    assert copy.policy.retention.days == 10
    assert sorted(p.name for p in copy.raw.iterdir()) == sorted(p.name for p in lake.raw.iterdir())


def test_restore_refuses_a_lake_and_a_damaged_backup(lake, tmp_path):
    filled(lake, tmp_path)
    backup(lake, tmp_path / "bk", AS_OF)
    with pytest.raises(BackupError, match="is not empty: restore into a new folder, or pass --force"):
        restore_backup(tmp_path / "bk", lake.root)
    with pytest.raises(BackupError, match="is not an empty folder"):
        backup(lake, tmp_path / "bk", AS_OF)
    # --force replaces the lake there, after a change made since the backup
    before = all_tables(lake)
    lake.ingest([write_jsonl(tmp_path / "n.jsonl", [{"tenant": "acme", "id": "m3", "content": "later"}])], as_of=AS_OF)
    restore_backup(tmp_path / "bk", lake.root, force=True)
    assert all_tables(Lake.open(lake.root)) == before
    # a damaged file is caught before anything is copied
    (tmp_path / "bk" / "memory-lake.toml").write_text("[retention]\ndays = 1\n", encoding="utf-8")
    with pytest.raises(BackupError, match=r"does not match its manifest \(checksum differs: memory-lake.toml\)"):
        restore_backup(tmp_path / "bk", tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_the_commands_warn_that_forget_cannot_reach_backups(lake, tmp_path, capsys):
    filled(lake, tmp_path)
    assert main(["backup", str(tmp_path / "bk"), "--lake", str(lake.root), "--as-of", "2026-11-30T00:00:00Z"]) == 0
    captured = capsys.readouterr()
    assert FORGET_WARNING in captured.err
    assert main(["--json", "restore-backup", str(tmp_path / "bk"), "--lake", str(tmp_path / "copy")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == {"lake": str(tmp_path / "copy"), "as_of": "2026-11-30T00:00:00Z", "files": data["files"]}
    assert main(["restore-backup", str(tmp_path / "bk"), "--lake", str(lake.root)]) == 2
    assert "pass --force" in capsys.readouterr().err
