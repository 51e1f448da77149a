"""Backups of a whole lake (issue 14): ``memory-lake backup DIR`` and ``restore-backup DIR``.

A backup is taken under the write lock after a checkpoint, so it is one consistent state: the
DuckDB file, ``memory-lake.toml``, ``secrets.json`` (the PII salts, so placeholders stay the same), ``raw/``, ``events/``, ``exports/`` (``CURRENT`` stays a link)
and the report-folders registry, as they are. The inbox is left out: files there are not yet
redacted and would carry raw PII into the backup. ``backup-manifest.json`` lists every file with
its SHA-256, the as_of and the schema version; a restore verifies them before and after copying.
A restore refuses a backup holding any link but ``exports/CURRENT`` (to one of its versions), and
swaps the copy in only when it is complete: a failed restore leaves the target as it was.

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
from .keys import SECRETS_FILE
from .lake import DB_FILE, LOCK_FILE, Lake, resolve_lake_dir
from .policy import CONFIG_FILE

MANIFEST = "backup-manifest.json"
BACKUP_FORMAT = 1
# What a backup holds, relative to the lake (folders copied whole, links kept as links).
BACKUP_FILES = (DB_FILE, CONFIG_FILE, SECRETS_FILE, "report-folders")
BACKUP_FOLDERS = ("raw", "events", "exports")
# What a restore replaces in the lake folder (its inbox and lock stay), and the one link a backup holds.
LAKE_ENTRIES = (*BACKUP_FILES, DB_FILE + ".wal", *BACKUP_FOLDERS)
CURRENT_LINK = os.path.join("exports", "CURRENT")
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
    """The backup's manifest, after checking the whole backup: every file it lists against its
    checksum, nothing listed that a backup does not hold, and no link but ``exports/CURRENT``."""
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
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise BackupError(f"{path}: 'files' is not a map of paths to checksums: the backup is damaged")
    actual = _verify(src, files, f"backup {src}")
    _check_links(src, actual)
    for rel in files:
        top, _, rest = rel.partition(os.sep)
        if not (top in BACKUP_FILES and not rest or top in BACKUP_FOLDERS and rest):
            raise BackupError(f"{path} lists {rel}, which no backup holds: it was altered; use another backup")
    return manifest


def _verify(root: Path, expected: dict[str, str], what: str) -> dict[str, str]:
    """What `root` holds (as `_files`), after checking it against `expected`."""
    actual = _files(root)
    missing = sorted(set(expected) - set(actual))
    changed = sorted(k for k in expected if k in actual and actual[k] != expected[k])
    if missing or changed:
        detail = "; ".join(filter(None, [f"missing: {', '.join(missing[:5])}" if missing else "",
                                         f"checksum differs: {', '.join(changed[:5])}" if changed else ""]))
        raise BackupError(f"{what} does not match its manifest ({detail}): it is damaged; use another backup")
    return actual


def _check_links(src: Path, found: dict[str, str]) -> None:
    """Refuse every link of the backup but ``exports/CURRENT``, and that one unless it names a
    version folder of the backup's own ``exports/``: a link restored into a lake makes the lake
    read (or a later write overwrite) whatever it points at."""
    for rel, what in found.items():
        if not what.startswith("link:"):
            continue
        to = what.removeprefix("link:")
        if rel != CURRENT_LINK:
            raise BackupError(f"backup {src}: {rel} is a link (to {to}); a backup holds no links but exports/CURRENT, "
                              "so it was altered: use another backup")
        version = src / "exports" / to
        if not to or os.sep in to or to in (".", "..") or version.is_symlink() or not version.is_dir():
            raise BackupError(f"backup {src}: exports/CURRENT points at {to}, not at a version folder inside its "
                              "exports/: it was altered; use another backup")


def restore_backup(src: str | os.PathLike, lake_dir: str | os.PathLike | None, *, force: bool = False) -> dict[str, Any]:
    """Restore the backup in `src` into `lake_dir`. Refuses a folder that is not empty unless
    `force`; then the lake there is replaced under its write lock (its inbox is kept).

    The whole backup is checked before the target is touched (`read_manifest`); the files are
    copied into a temporary folder and checked again, then swapped in: the old lake's entries
    moved aside, the new ones moved in, the old ones removed. Any failure puts the old entries
    back, so the target is left as it was (a folder this restore made is removed). The temporary
    folders sit inside the target, so every move is a rename on one file system (a lake folder
    can be a mount point)."""
    src = Path(src).expanduser().resolve()
    manifest = read_manifest(src)
    target = resolve_lake_dir(lake_dir)
    if target.exists() and not target.is_dir():
        raise BackupError(f"{target} is a file, not a lake folder")
    occupied = target.is_dir() and any(p.name not in ("inbox", LOCK_FILE) for p in target.iterdir())
    if occupied and not force:
        raise BackupError(f"{target} is not empty: restore into a new folder, or pass --force to replace the lake there")
    made = next((p for p in reversed((target, *target.parents)) if not p.exists()), None)
    staging = target / f".restore-{os.getpid()}.tmp"
    restored = False
    try:
        target.mkdir(parents=True, exist_ok=True)
        _stage(src, manifest["files"], staging, target)
        (target / "inbox" / "decisions").mkdir(parents=True, exist_ok=True)
        holder = Lake(target, None)  # only its lock: the lake may be absent or about to be replaced
        with holder._flock(exclusive=True, wait_s=None, purpose="restore backup"):  # $MEMORY_LAKE_WAIT_S
            _swap_in(staging, target, target / f".replaced-{os.getpid()}.tmp")
        restored = True
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        raise BackupError(f"restore into {target} failed ({exc.strerror or exc}{where}): nothing was changed "
                          "there") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if not restored and made is not None:
            shutil.rmtree(made, ignore_errors=True)
    return {**manifest, "restored_to": str(target)}


def _stage(src: Path, files: dict[str, str], staging: Path, target: Path) -> None:
    """Copy the files the manifest lists (``exports/CURRENT`` as a link) into `staging`, with every
    folder a lake has, and check the copy against the manifest."""
    staging.mkdir()
    for rel in sorted(files):
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        if files[rel].startswith("link:"):
            os.symlink(os.readlink(src / rel), staging / rel)
        else:
            shutil.copy2(src / rel, staging / rel, follow_symlinks=False)
    for name in BACKUP_FOLDERS:
        (staging / name).mkdir(exist_ok=True)
    _verify_subset(target, files, {k: v for k, v in _files(staging).items() if k in files})


def _swap_in(staging: Path, target: Path, aside: Path) -> None:
    """Move the lake's entries out of `target` into `aside`, then the staged ones in, then remove
    the old ones. On a failure every entry goes back where it was, so `target` holds the old lake
    or the new one, never a mix (renames within one file system: no copy can half fail)."""
    aside.mkdir()
    moved_aside: list[str] = []
    moved_in: list[str] = []
    try:
        for name in LAKE_ENTRIES:
            if (target / name).exists() or (target / name).is_symlink():
                os.replace(target / name, aside / name)
                moved_aside.append(name)
        for name in sorted(os.listdir(staging)):
            os.replace(staging / name, target / name)
            moved_in.append(name)
    except BaseException:
        try:
            for name in reversed(moved_in):
                os.replace(target / name, staging / name)
            for name in list(reversed(moved_aside)):
                os.replace(aside / name, target / name)
                moved_aside.remove(name)
            aside.rmdir()
        except OSError as exc:  # the disk failed twice: say where the old lake is, never remove it
            raise BackupError(f"restore into {target} failed half way and the old lake could not be put back "
                              f"({exc.strerror or exc}): its {', '.join(moved_aside)} are in {aside}; move them "
                              "back into the lake folder") from None
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _verify_subset(target: Path, expected: dict[str, str], copied: dict[str, str]) -> None:
    if copied != expected:
        _verify_dict(expected, copied, f"restored lake {target}")


def _verify_dict(expected: dict[str, str], actual: dict[str, str], what: str) -> None:
    missing = sorted(set(expected) - set(actual))
    changed = sorted(k for k in expected if k in actual and actual[k] != expected[k])
    raise BackupError(f"{what} does not match the backup's manifest (missing: {', '.join(missing[:5]) or '-'}; "
                      f"checksum differs: {', '.join(changed[:5]) or '-'}); the copy failed: restore again")
