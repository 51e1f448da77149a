"""Finding what to ingest: the snapshots, hot-memory trees and unrecognised files under the inbox (or
the paths given), the trees still waiting for their index.json, the scope a folder names
(``tenant=T/agent=A/user=U``), and how a file is named in reports."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

from ..store import InputError, keys
from .formats.hottree import is_hot_tree, trees_under

SNAPSHOT_SUFFIXES = (".jsonl", ".ndjson", ".json", ".parquet")
# Files agents are still writing (the inbox convention: write a temporary name, then rename).
IN_PROGRESS_SUFFIXES = (".tmp", ".part", ".partial")
# Usage events are read by the events step, not as snapshots.
EVENTS_SUFFIX = ".events.jsonl"
# Folder names that give a scope: tenant=T, agent=A, user=U (ingest's path_scope)
PATH_SCOPE_KEYS = {"tenant": "tenant", "agent": "agent_id", "user": "user_id"}


def path_scope(path: Path) -> dict[str, str]:
    """The tenant, agent and user a file's folders name, Hive-style (``tenant=acme/agent=coach/``):
    the scope of an export that carries none when it is dropped in the inbox, where no `--tenant`
    can be given. The innermost folder wins; `ingest --tenant/--agent/--user` win over both."""
    found: dict[str, str] = {}
    for part in Path(path).parts[:-1] if Path(path).is_file() else Path(path).parts:
        key, sep, value = part.partition("=")
        if sep and value and key in PATH_SCOPE_KEYS:
            found[PATH_SCOPE_KEYS[key]] = value
    return found


def discover_snapshots(lake, paths: Sequence[str | os.PathLike] | None) -> list[Path]:
    """Snapshot files under the given paths (default the inbox), in name order, complete files only."""
    return scan_inbox(lake, paths)[0]


def scan_inbox(lake, paths: Sequence[str | os.PathLike] | None = None) -> tuple[list[Path], list[str]]:
    """(snapshots in name order, names of unrecognised files) under the given paths (default the
    inbox). Nothing is ignored silently: a file that is not a snapshot, not a usage events file
    and not a temporary name is named, so that its writer can be told."""
    if not paths:
        paths = [lake.inbox]
    found: list[Path] = []
    unrecognised: list[str] = []
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        _refuse_the_lakes_own(lake, path)
        if path.is_dir() and is_hot_tree(path):
            found.append(path)  # seed 004's hot-memory tree: one unit, read by ingest_tree
        elif path.is_dir():
            # a tree in the folder (at any depth) is one unit; one still being written (no index.json yet) waits
            trees = trees_under(path)
            found.extend(d for d in trees if is_hot_tree(d))
            candidates = sorted(p for p in path.rglob("*") if p.is_file() and lake.decisions not in p.parents
                                and not any(t in p.parents for t in trees))
            kinds = [(p, _kind(lake, p)) for p in candidates]
            found.extend(p for p, kind in kinds if kind == "snapshot")
            unrecognised.extend(file_label(lake, p) for p, kind in kinds if kind == "unrecognised")
        elif path.is_file():
            if _kind(lake, path) != "snapshot":
                raise InputError(f"{path}: not a snapshot (expected {', '.join(SNAPSHOT_SUFFIXES)})")
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    unique = list(dict.fromkeys(found))
    return sorted(unique, key=lambda p: (str(p.parent), p.name)), sorted(set(unrecognised))


def waiting_trees(lake, paths: Sequence[str | os.PathLike] | None = None) -> list[str]:
    """Hot-memory trees under the given folders (default the inbox) still waiting for their
    ``index.json`` (written last): named by ingest and status, never read half-written."""
    folders = [Path(p).expanduser().resolve() for p in (paths or [lake.inbox])]
    return sorted(file_label(lake, tree) for folder in folders if folder.is_dir()
                  for tree in trees_under(folder) if not is_hot_tree(tree))


def _refuse_the_lakes_own(lake, path: Path) -> None:
    """The lake's folder itself and its copies of what it read (raw/, events/) are not snapshots to
    ingest: raw/ holds the redacted copies of ingested files, which would be read as new files and
    quarantine the same bad rows again. Its inbox is, and so is an export's memory.json (written
    back, it changes nothing) or any file elsewhere."""
    root = lake.root.resolve()
    if path == root:
        raise InputError(f"{path} is the lake itself: `memory-lake ingest` with no path reads its inbox/, or give "
                         "the folder or files of new snapshots")
    for own in (lake.raw, lake.events):
        own = own.resolve()
        if path == own or own in path.parents:
            raise InputError(f"{path} is inside the lake's own {own.name}/ folder (copies of what it already "
                             "read, not new snapshots): drop new snapshots in its inbox/, or give a folder "
                             "outside the lake")


def _kind(lake, path: Path) -> str:
    """snapshot | events | temporary | unrecognised. Suffixes match in any case (``.JSONL``);
    usage events are what the events step collects: ``*.events.jsonl`` at the inbox's top."""
    name = path.name
    lower = name.lower()
    if name.startswith(".") or lower.endswith(IN_PROGRESS_SUFFIXES):
        return "temporary"
    if name.endswith(EVENTS_SUFFIX) and path.parent == lake.inbox:
        return "events"
    if lower.endswith(SNAPSHOT_SUFFIXES) and not lower.endswith(EVENTS_SUFFIX):
        return "snapshot"
    return "unrecognised"


def file_label(lake, path: Path) -> str:
    """How a file is named in reports: relative to the inbox when it came from there, without the
    signature a user's edit carries in its name (the history's operator says it was a user's)."""
    try:
        label = str(path.relative_to(lake.inbox))
    except ValueError:
        label = str(path)
    return re.sub(rf"{re.escape(keys.USER_MARK)}[0-9a-f]{{32}}(?=\.[^./]+$)", "", label)


__all__ = ["EVENTS_SUFFIX", "IN_PROGRESS_SUFFIXES", "PATH_SCOPE_KEYS", "SNAPSHOT_SUFFIXES", "discover_snapshots",
           "file_label", "path_scope", "scan_inbox", "waiting_trees"]
