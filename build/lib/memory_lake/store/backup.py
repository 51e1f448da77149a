"""Backups of a whole lake (issue 14): ``memory-lake backup DIR`` and ``restore-backup DIR``.

A backup is taken under the write lock after a checkpoint, so it is one consistent state: the
DuckDB file, ``memory-lake.toml``, ``raw/``, ``events/``, ``exports/`` (``CURRENT`` stays a link)
and the report-folders registry, as they are. The inbox is left out: files there are not yet
redacted and would carry raw PII into the backup. ``backup-manifest.json`` lists every file with
its SHA-256, the as_of and the schema version; a restore verifies them before and after copying.

A backup is a copy outside the lake: a later ``forget`` cannot reach it (the warning says so).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

from . import schema
from .clock import iso
from .errors import InputError, MemoryLakeError
from .lake import DB_FILE, LOCK_FILE, Lake, resolve_lake_dir
from .policy import CONFIG_FILE

MANIFEST = "backup-manifest.json"
BACKUP_FORMAT = 1
# What a backup holds, relative to the lake (folders copied whole, links kept as links).
BACKUP_FILES = (DB_FILE, CONFIG_FILE, "report-folders")
BACKUP_FOLDERS = ("raw", "events", "exports")
FORGET_WARNING = ("warning: forget cannot reach backups: a memory forgotten later stays in this copy; "
                  "delete or re-take backups after a forget")


class BackupError(MemoryLakeError):
    """A backup that cannot be taken or restored as asked (exit 2: the input is at fault)."""

    exit_code = InputError.exit_code


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks (export manifests and backups)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(root: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every regular file of a backup (links are listed by target)."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if rel == MANIFEST:
            continue
        if path.is_symlink():
            found[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            found[rel] = file_sha256(path)
    return found


def backup(lake: Lake, dest: str | os.PathLike, as_of: datetime) -> dict[str, Any]:
    """Copy the lake into `dest` (absent or empty) under the write lock; returns the manifest."""
    dest = Path(dest).expanduser().resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BackupError(f"{dest} is not an empty folder: back up into a new or empty folder")
    if dest == lake.root or lake.root in dest.parents:
        raise BackupError(f"{dest} is inside the lake {lake.root}: back up to a folder outside it")
    with lake.writer(purpose="backup") as con:
        con.execute("CHECKPOINT")  # everything in the .duckdb file, nothing left in the WAL
        (version,) = con.execute("SELECT max(version) FROM schema_migrations").fetchone()
        dest.mkdir(parents=True, exist_ok=True)
        for name in BACKUP_FILES:
            if (lake.root / name).is_file():
                shutil.copy2(lake.root / name, dest / name)
        for name in BACKUP_FOLDERS:
            if (lake.root / name).is_dir():
                shutil.copytree(lake.root / name, dest / name, symlinks=True,
                                ignore=shutil.ignore_patterns("*.tmp", ".*.tmp"))
    manifest = {"format": BACKUP_FORMAT, "as_of": iso(as_of), "schema_version": version,
                "lake": str(lake.root), "files": _files(dest), "warning": FORGET_WARNING}
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return manifest


def read_manifest(src: Path) -> dict[str, Any]:
    """The backup's manifest, after checking every file it lists against its checksum."""
    path = src / MANIFEST
    if not path.is_file():
        raise BackupError(f"{src} is not a memory-lake backup (no {MANIFEST}): give the folder `backup` wrote")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise BackupError(f"{path} is not valid JSON: the backup is damaged") from None
    if manifest.get("format") != BACKUP_FORMAT:
        raise BackupError(f"{path}: backup format {manifest.get('format')!r} is not {BACKUP_FORMAT}")
    if (manifest.get("schema_version") or 0) > schema.SCHEMA_VERSION:
        raise BackupError(f"{src} was taken with schema version {manifest['schema_version']}, newer than this "
                          f"memory-lake's {schema.SCHEMA_VERSION}: upgrade memory-lake to restore it")
    _verify(src, manifest["files"], f"backup {src}")
    return manifest


def _verify(root: Path, expected: dict[str, str], what: str) -> None:
    actual = _files(root)
    missing = sorted(set(expected) - set(actual))
    changed = sorted(k for k in expected if k in actual and actual[k] != expected[k])
    if missing or changed:
        detail = "; ".join(filter(None, [f"missing: {', '.join(missing[:5])}" if missing else "",
                                         f"checksum differs: {', '.join(changed[:5])}" if changed else ""]))
        raise BackupError(f"{what} does not match its manifest ({detail}): it is damaged; use another backup")


def restore_backup(src: str | os.PathLike, lake_dir: str | os.PathLike | None, *, force: bool = False) -> dict[str, Any]:
    """Restore the backup in `src` into `lake_dir`. Refuses a folder that is not empty unless
    `force`; then the lake there is replaced under its write lock (its inbox is kept)."""
    src = Path(src).expanduser().resolve()
    manifest = read_manifest(src)
    target = resolve_lake_dir(lake_dir)
    if target.exists() and not target.is_dir():
        raise BackupError(f"{target} is a file, not a lake folder")
    occupied = target.is_dir() and any(p.name not in ("inbox", LOCK_FILE) for p in target.iterdir())
    if occupied and not force:
        raise BackupError(f"{target} is not empty: restore into a new folder, or pass --force to replace the lake there")
    target.mkdir(parents=True, exist_ok=True)
    holder = Lake(target, None)  # only its lock: the lake may be absent or about to be replaced
    with holder._flock(exclusive=True, wait_s=None, purpose="restore backup"):  # $MEMORY_LAKE_WAIT_S
        for name in (*BACKUP_FILES, DB_FILE + ".wal", *BACKUP_FOLDERS):
            path = target / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
        for rel in manifest["files"]:
            top = rel.split(os.sep, 1)[0]
            if top in BACKUP_FOLDERS and not (target / top).exists():
                shutil.copytree(src / top, target / top, symlinks=True)
            elif top not in BACKUP_FOLDERS:
                shutil.copy2(src / rel, target / rel)
        for name in ("inbox", "inbox/decisions", *BACKUP_FOLDERS):
            (target / name).mkdir(parents=True, exist_ok=True)
        copied = {k: v for k, v in _files(target).items() if k in manifest["files"]}
        _verify_subset(target, manifest["files"], copied)
    return {**manifest, "restored_to": str(target)}


def _verify_subset(target: Path, expected: dict[str, str], copied: dict[str, str]) -> None:
    if copied != expected:
        _verify_dict(expected, copied, f"restored lake {target}")


def _verify_dict(expected: dict[str, str], actual: dict[str, str], what: str) -> None:
    missing = sorted(set(expected) - set(actual))
    changed = sorted(k for k in expected if k in actual and actual[k] != expected[k])
    raise BackupError(f"{what} does not match the backup's manifest (missing: {', '.join(missing[:5]) or '-'}; "
                      f"checksum differs: {', '.join(changed[:5]) or '-'}); the copy failed: restore again")
