"""Backup and restore (store/backup.py, issue 14), read whole: the manifest of a published lake
checked file by file against the real bytes, and every refusal and damage message in full."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from memory_lake.publish import publish
from memory_lake import Lake
from memory_lake.store import BackupError, FORGET_WARNING, backup, restore_backup
from memory_lake.store import schema
from memory_lake.store.backup import MANIFEST, _verify_subset, file_sha256, read_manifest

from ..conftest import AS_OF, copy_lake, write_jsonl


@pytest.fixture(scope="module")
def lake_dir(tmp_path_factory) -> Path:
    """A lake with memories, a policy file, a report-folders registry and a published version."""
    root = tmp_path_factory.mktemp("backup") / "lake"
    lake = Lake.init(root)
    lake.ingest([write_jsonl(root.parent / "m.jsonl", [
        {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "id": "m1", "content": "likes tea"}])], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"
    (root / "memory-lake.toml").write_text("[retention]\ndays = 10\n", encoding="utf-8")
    (root / "report-folders").write_text("/tmp/reports\n", encoding="utf-8")
    return root


@pytest.fixture
def lake(lake_dir, tmp_path) -> Lake:
    return copy_lake(lake_dir, tmp_path / "lake")


def on_disk(root: Path) -> dict[str, str]:
    """Every file under `root` but the manifest: its SHA-256 from its bytes, a link by its target."""
    found = {}
    for path in root.rglob("*"):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "link:" + os.readlink(path)
        elif path.is_file() and rel != MANIFEST:
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def test_the_manifest_lists_every_file_by_its_sha256_and_links_by_their_target(lake, tmp_path):
    (lake.exports / ".CURRENT.tmp").write_text("half written")  # temporary files stay behind
    (lake.raw / "partial.tmp").write_text("half written")
    (lake.inbox / "waiting.jsonl").write_text('{"content": "call +1 415 555 0100"}\n')  # not redacted yet
    manifest = backup(lake, tmp_path / "new" / "bk", AS_OF)  # a folder that does not exist yet, nested
    dest = tmp_path / "new" / "bk"
    assert manifest == {"format": 1, "as_of": "2026-11-30T00:00:00Z", "schema_version": schema.SCHEMA_VERSION,
                        "lake": str(lake.root), "files": on_disk(dest), "warning": FORGET_WARNING}
    files = manifest["files"]
    assert files["exports/CURRENT"] == "link:v1"
    assert files["lake.duckdb"] == hashlib.sha256((lake.root / "lake.duckdb").read_bytes()).hexdigest()
    assert files["report-folders"] == hashlib.sha256(b"/tmp/reports\n").hexdigest()
    assert {p.split("/")[0] for p in files} == {"lake.duckdb", "memory-lake.toml", "secrets.json", "report-folders", "raw", "exports"}
    assert not [p for p in files if p.endswith(".tmp")] and "exports/v1/manifest.json" in files
    assert json.loads((dest / MANIFEST).read_text(encoding="utf-8")) == manifest
    assert read_manifest(dest) == manifest


def test_file_sha256_reads_big_files_whole(tmp_path):
    path = tmp_path / "big"
    data = os.urandom((1 << 20) * 2 + 17)  # more than two blocks
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
    (tmp_path / "empty").write_bytes(b"")
    assert file_sha256(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()


def test_backup_refuses_a_folder_that_is_not_empty_or_inside_the_lake(lake, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    (tmp_path / "file").write_text("x")
    for dest in (tmp_path / "full", tmp_path / "file"):
        with pytest.raises(BackupError) as error:
            backup(lake, dest, AS_OF)
        assert str(error.value) == f"{dest} is not an empty folder: back up into a new or empty folder"
    (lake.root / "empty").mkdir()
    for dest in (lake.root / "empty", lake.root / "backups" / "b1"):
        with pytest.raises(BackupError) as error:
            backup(lake, dest, AS_OF)
        assert str(error.value) == f"{dest} is inside the lake {lake.root}: back up to a folder outside it"
    assert not (lake.root / "backups").exists()
    (tmp_path / "empty").mkdir()
    assert backup(lake, tmp_path / "empty", AS_OF)["files"]  # an empty folder is fine


def test_restore_gives_back_the_lake_and_makes_its_folders(lake, tmp_path):
    manifest = backup(lake, tmp_path / "bk", AS_OF)
    (tmp_path / "copy" / "inbox").mkdir(parents=True)  # a folder holding only an inbox is not a lake yet
    (tmp_path / "copy" / ".lock").write_text("")
    (tmp_path / "copy" / "inbox" / "keep.jsonl").write_text("{}\n")
    restored = restore_backup(tmp_path / "bk", tmp_path / "copy")
    assert restored == {**manifest, "restored_to": str(tmp_path / "copy")}
    copy = tmp_path / "copy"
    assert {k: v for k, v in on_disk(copy).items() if not k.startswith("inbox/")
            and k not in (".lock", ".generation")}  # the lock's files == manifest["files"]
    assert sorted(p.name for p in copy.iterdir()) == sorted(
        [".generation", ".lock", "events", "exports", "inbox", "lake.duckdb", "memory-lake.toml", "raw", "report-folders",
         "secrets.json"])
    assert (copy / "inbox" / "keep.jsonl").read_text() == "{}\n" and (copy / "inbox" / "decisions").is_dir()
    assert os.readlink(copy / "exports" / "CURRENT") == "v1"
    assert Lake.open(copy).sql("SELECT id, content FROM memories").to_dicts() == [{"id": "m1", "content": "likes tea"}]


def test_a_forced_restore_replaces_the_lake_there_wal_and_folders_included(lake, tmp_path):
    backup(lake, tmp_path / "bk", AS_OF)
    (lake.root / "lake.duckdb.wal").write_bytes(b"not a wal of this file")
    (lake.raw / "later.jsonl").write_text("{}\n")
    (lake.exports / "v2").mkdir()
    (lake.root / "memory-lake.toml").unlink()
    restore_backup(tmp_path / "bk", lake.root, force=True)
    assert not (lake.root / "lake.duckdb.wal").exists()
    assert not (lake.raw / "later.jsonl").exists() and not (lake.exports / "v2").exists()
    assert (lake.root / "memory-lake.toml").read_text() == "[retention]\ndays = 10\n"
    assert Lake.open(lake.root).sql("SELECT count(*) AS n FROM memories").item() == 1


def test_restore_refuses_a_file_and_a_folder_that_is_not_a_backup(lake, tmp_path):
    backup(lake, tmp_path / "bk", AS_OF)
    (tmp_path / "file").write_text("x")
    with pytest.raises(BackupError) as error:
        restore_backup(tmp_path / "bk", tmp_path / "file")
    assert str(error.value) == f"{tmp_path / 'file'} is a file, not a lake folder"
    with pytest.raises(BackupError) as error:
        restore_backup(tmp_path, tmp_path / "copy")
    assert str(error.value) == (f"{tmp_path} is not a memory-lake backup (no backup-manifest.json): give the folder "
                                "`backup` wrote")
    assert not (tmp_path / "copy").exists()


@pytest.mark.parametrize(("change", "message"), [
    (lambda m: "{not json", "{path} is not valid JSON: the backup is damaged"),
    (lambda m: {**m, "format": 2}, "{path}: backup format 2 is not 1"),
    (lambda m: {k: v for k, v in m.items() if k != "format"}, "{path}: backup format None is not 1"),
    (lambda m: {**m, "schema_version": schema.SCHEMA_VERSION + 1},
     "{src} was taken with schema version {newer}, newer than this memory-lake's {ours}: upgrade memory-lake to "
     "restore it"),
])
def test_a_manifest_that_cannot_be_trusted_is_refused(lake, tmp_path, change, message):
    manifest = backup(lake, tmp_path / "bk", AS_OF)
    changed = change(manifest)
    (tmp_path / "bk" / MANIFEST).write_text(changed if isinstance(changed, str) else json.dumps(changed))
    with pytest.raises(BackupError) as error:
        restore_backup(tmp_path / "bk", tmp_path / "copy")
    assert str(error.value) == message.format(path=tmp_path / "bk" / MANIFEST, src=tmp_path / "bk",
                                              newer=schema.SCHEMA_VERSION + 1, ours=schema.SCHEMA_VERSION)
    assert not (tmp_path / "copy").exists()


def test_an_older_schema_restores_and_a_missing_one_too(lake, tmp_path):
    manifest = backup(lake, tmp_path / "bk", AS_OF)
    for version in (schema.SCHEMA_VERSION - 1, None):
        (tmp_path / "bk" / MANIFEST).write_text(json.dumps({**manifest, "schema_version": version}))
        assert read_manifest(tmp_path / "bk")["schema_version"] == version


def test_a_damaged_backup_names_what_is_missing_and_what_changed(lake, tmp_path):
    manifest = backup(lake, tmp_path / "bk", AS_OF)
    bk = tmp_path / "bk"
    (bk / "memory-lake.toml").write_text("[retention]\ndays = 1\n")
    (bk / "report-folders").unlink()
    with pytest.raises(BackupError) as error:
        restore_backup(bk, tmp_path / "copy")
    assert str(error.value) == (f"backup {bk} does not match its manifest (missing: report-folders; checksum differs: "
                                "memory-lake.toml): it is damaged; use another backup")
    (bk / "report-folders").write_text("/tmp/other-reports\n")  # two files changed: both named
    with pytest.raises(BackupError) as error:
        read_manifest(bk)
    assert str(error.value) == (f"backup {bk} does not match its manifest (checksum differs: memory-lake.toml, "
                                "report-folders): it is damaged; use another backup")
    (bk / "report-folders").write_text("/tmp/reports\n")
    (bk / "memory-lake.toml").write_text("[retention]\ndays = 10\n")
    os.remove(bk / "exports" / "CURRENT")
    os.symlink("v2", bk / "exports" / "CURRENT")  # a link to another target is a change too
    with pytest.raises(BackupError) as error:
        read_manifest(bk)
    assert str(error.value) == (f"backup {bk} does not match its manifest (checksum differs: exports/CURRENT): it is "
                                "damaged; use another backup")
    os.remove(bk / "exports" / "CURRENT")
    raws = sorted(p for p in manifest["files"] if p.startswith(("raw/", "exports/v1/tables/")))
    for rel in raws:
        (bk / rel).unlink()
    with pytest.raises(BackupError) as error:
        read_manifest(bk)
    missing = sorted([*raws, "exports/CURRENT"])[:5]
    assert str(error.value) == (f"backup {bk} does not match its manifest (missing: {', '.join(missing)}): it is "
                                "damaged; use another backup")
    assert len(raws) > 5


def test_restore_makes_a_nested_new_folder(lake, tmp_path):
    manifest = backup(lake, tmp_path / "bk", AS_OF)
    restored = restore_backup(tmp_path / "bk", tmp_path / "a" / "b" / "lake")
    assert restored["restored_to"] == str(tmp_path / "a" / "b" / "lake")
    assert Lake.open(tmp_path / "a" / "b" / "lake").sql("SELECT count(*) AS n FROM memories").item() == 1
    assert manifest["files"].items() <= on_disk(tmp_path / "a" / "b" / "lake").items()


def test_the_check_after_copying_names_what_the_copy_lost_or_changed(lake, tmp_path):
    """The check a restore runs on what it copied (a copy can fail half way: a full disk, a pulled
    drive), here on a restored lake really damaged after its copy."""
    manifest = backup(lake, tmp_path / "bk", AS_OF)
    target = tmp_path / "copy"
    restore_backup(tmp_path / "bk", target)
    copied = {k: v for k, v in on_disk(target).items() if k in manifest["files"]}
    _verify_subset(target, manifest["files"], copied)  # the same: nothing to say
    (target / "memory-lake.toml").write_text("[retention]\ndays = 1\n")
    (target / "report-folders").unlink()
    copied = {k: v for k, v in on_disk(target).items() if k in manifest["files"]}
    with pytest.raises(BackupError) as error:
        _verify_subset(target, manifest["files"], copied)
    assert str(error.value) == (f"restored lake {target} does not match the backup's manifest (missing: report-folders; "
                                "checksum differs: memory-lake.toml); the copy failed: restore again")
    (target / "report-folders").write_text("/tmp/reports\n")
    copied = {k: v for k, v in on_disk(target).items() if k in manifest["files"]}
    with pytest.raises(BackupError) as error:
        _verify_subset(target, manifest["files"], copied)
    assert str(error.value) == (f"restored lake {target} does not match the backup's manifest (missing: -; "
                                "checksum differs: memory-lake.toml); the copy failed: restore again")
    raws = sorted(p for p in manifest["files"] if p.startswith("exports/v1/tables/"))
    for rel in raws:
        (target / rel).unlink()
    (target / "memory-lake.toml").write_text("[retention]\ndays = 10\n")
    copied = {k: v for k, v in on_disk(target).items() if k in manifest["files"]}
    with pytest.raises(BackupError) as error:
        _verify_subset(target, manifest["files"], copied)
    assert len(raws) > 5 and str(error.value) == (
        f"restored lake {target} does not match the backup's manifest (missing: {', '.join(raws[:5])}; "
        "checksum differs: -); the copy failed: restore again")
