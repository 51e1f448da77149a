"""Backups (issue 14 item 6): a consistent copy under the lock and a checked restore; the round
trip gives back every table whole."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from memory_lake.store import BackupError, FORGET_WARNING, Lake, backup, restore_backup
from memory_lake.cli import main
from memory_lake.store.backup import MANIFEST

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
    assert before["quarantine"] and len(before["memories"]) == 2
    salts = lake.tenant_salts(["acme"], create=False)
    manifest = backup(lake, tmp_path / "bk", AS_OF)
    assert (manifest["as_of"], manifest["format"], manifest["warning"]) == ("2026-11-30T00:00:00Z", 1, FORGET_WARNING)
    assert sorted(manifest["files"]) == sorted(
        ["lake.duckdb", "memory-lake.toml", "secrets.json", *(f"raw/{p.name}" for p in lake.raw.iterdir())])
    restored = restore_backup(tmp_path / "bk", tmp_path / "copy")
    assert restored["restored_to"] == str(tmp_path / "copy")
    copy = Lake.open(tmp_path / "copy")
    assert all_tables(copy) == before
    assert copy.tenant_salts(["acme"], create=False) == salts and salts  # the placeholders stay the same
    assert (copy.root / "secrets.json").stat().st_mode & 0o777 == 0o600
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


# ---------------------------------------------------------------- issue 37.8: links and failed restores
def on_disk(root: Path) -> dict[str, str]:
    """Every entry under `root` but the lock's own files: a file by its SHA-256, a link by its
    target, a folder as a folder."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if rel in (".lock", ".generation"):
            continue
        if path.is_symlink():
            found[rel] = "link:" + os.readlink(path)
        elif path.is_dir():
            found[rel] = "folder"
        else:
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def reseal(bk: Path) -> None:
    """List in the manifest what the backup holds now: a crafted backup whose checksums all match."""
    manifest = json.loads((bk / MANIFEST).read_text(encoding="utf-8"))
    files = {rel: sha for rel, sha in on_disk(bk).items() if sha != "folder" and rel != MANIFEST}
    (bk / MANIFEST).write_text(json.dumps({**manifest, "files": files}), encoding="utf-8")


def make_link(bk: Path, rel: str, target: str) -> None:
    path = bk / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    os.symlink(target, path)


@pytest.fixture
def changed_since_backup(lake, tmp_path):
    """A lake, its backup in tmp_path/bk, then a change to the lake: a restore would replace it."""
    filled(lake, tmp_path)
    backup(lake, tmp_path / "bk", AS_OF)
    lake.ingest([write_jsonl(tmp_path / "n.jsonl", [{"tenant": "acme", "id": "m3", "content": "later"}])], as_of=AS_OF)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("not the lake's\n", encoding="utf-8")
    return lake


LINK_MESSAGE = ("backup {bk}: {rel} is a link (to {target}); a backup holds no links but exports/CURRENT, so it was "
                "altered: use another backup")
CURRENT_MESSAGE = ("backup {bk}: exports/CURRENT points at {target}, not at a version folder inside its exports/: it "
                   "was altered; use another backup")


@pytest.mark.parametrize(("rel", "target", "listed", "message"), [
    ("raw/x", "{outside}/secret", False, LINK_MESSAGE),             # a link the manifest does not list
    ("raw/x", "{outside}/secret", True, LINK_MESSAGE),              # ... and one it lists as a link
    ("memory-lake.toml", "{outside}/secret", True, LINK_MESSAGE),   # was copied through the link, then refused
    ("raw/y", "../../outside/secret", True, LINK_MESSAGE),          # relative, out of the backup
    ("raw/z", "a.jsonl", True, LINK_MESSAGE),                       # even inside the backup
    ("raw", "{outside}", True, LINK_MESSAGE),                       # a whole folder
    ("exports/CURRENT", "{outside}", True, CURRENT_MESSAGE),
    ("exports/CURRENT", "../raw", True, CURRENT_MESSAGE),
    ("exports/CURRENT", "v9", True, CURRENT_MESSAGE),               # a version the backup does not hold
    ("exports/CURRENT", ".", True, CURRENT_MESSAGE),
])
def test_a_link_in_a_backup_is_refused_before_the_lake_is_touched(changed_since_backup, tmp_path, rel, target,
                                                                    listed, message):
    lake, bk = changed_since_backup, tmp_path / "bk"
    target = target.format(outside=tmp_path / "outside")
    make_link(bk, rel, target)
    if listed:
        reseal(bk)
    before, tables = on_disk(lake.root), all_tables(lake)
    for into, force in ((tmp_path / "new", False), (lake.root, True)):
        with pytest.raises(BackupError) as error:
            restore_backup(bk, into, force=force)
        assert str(error.value) == message.format(bk=bk, rel=rel, target=target)
    assert not (tmp_path / "new").exists()
    assert on_disk(lake.root) == before and all_tables(Lake.open(lake.root)) == tables
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bk", "lake", "m.jsonl", "n.jsonl", "outside"]


def test_exports_current_restores_as_a_link_to_a_version_of_the_backup(changed_since_backup, tmp_path):
    bk = tmp_path / "bk"
    (bk / "exports" / "v1").mkdir(parents=True)
    (bk / "exports" / "v1" / "manifest.json").write_text("{}", encoding="utf-8")
    make_link(bk, "exports/CURRENT", "v1")
    reseal(bk)
    restore_backup(bk, tmp_path / "new")
    assert os.readlink(tmp_path / "new" / "exports" / "CURRENT") == "v1"
    assert (tmp_path / "new" / "exports" / "CURRENT" / "manifest.json").read_text() == "{}"


def test_a_restore_that_fails_half_way_leaves_the_lake_as_it_was(changed_since_backup, tmp_path, monkeypatch):
    lake, bk = changed_since_backup, tmp_path / "bk"
    before, tables = on_disk(lake.root), all_tables(lake)
    real_copy, real_replace = shutil.copy2, os.replace

    def full_disk(src, dst, *args, **kwargs):
        if Path(src).name == "lake.duckdb":
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return real_copy(src, dst, *args, **kwargs)

    def pulled_drive(src, dst, *args, **kwargs):  # the swap: the second entry to move into the lake fails
        if Path(dst).parent == into and ".restore-" in str(src):
            moved.append(Path(dst).name)
            if len(moved) == 2:
                raise OSError(errno.EIO, "Input/output error", str(src))
        return real_replace(src, dst, *args, **kwargs)

    for patch in ((shutil, "copy2", full_disk), (os, "replace", pulled_drive)):
        moved: list[str] = []
        for into, force in ((tmp_path / "new" / "lake", False), (lake.root, True)):
            with monkeypatch.context() as patched:
                patched.setattr(*patch)
                with pytest.raises(BackupError) as error:
                    restore_backup(bk, into, force=force)
            assert str(error.value).startswith(f"restore into {into} failed (")
            assert str(error.value).endswith("): nothing was changed there")
            moved.clear()
        assert not (tmp_path / "new").exists()
        assert on_disk(lake.root) == before and all_tables(Lake.open(lake.root)) == tables
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bk", "lake", "m.jsonl", "n.jsonl", "outside"]
    restore_backup(bk, lake.root, force=True)  # and then it works
    assert on_disk(lake.root) != before and sorted(p.name for p in tmp_path.iterdir()) == [
        "bk", "lake", "m.jsonl", "n.jsonl", "outside"]
