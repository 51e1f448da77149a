"""Seed 004's hot-memory tree: a folder with ``index.json`` (the skeletons: ``memory_id``,
``timestamp``, ``summary``, ``tags``, ``priority``, ``content_ptr``, ``ttl``) and one JSON sub-file
per memory under ``YYYY/MM/DD/`` (``meta`` {memory_id, session_id, created_at, version},
``summary``, ``tags``, ``content`` [{role, msg, ts}], ``decisions``, ``references``). Issue 41.2.

A tree is read as one unit per index entry, named by its sub-file's path in the tree (the
quarantine's file), so a broken sub-file costs that memory and the rest of the tree lands:

| hot tree | memory-lake |
|---|---|
| `memory_id` | `id` |
| `summary` (the sub-file's, else the index's) | `content` |
| `content` turns | `extra.source_text` ("role: msg" lines) |
| each of `decisions` | a memory of type `decision`, id `<memory_id>-d<n>`, `extra.parent_id` = the memory |
| `tags`, `meta.session_id` | `tags`, `session_id` |
| `priority` (0-10) | `importance` = priority / 10 |
| `timestamp` / `meta.created_at` (epoch ms, epoch s or ISO) | `created_at` |
| `ttl` (ms) | `expires_at` = created_at + ttl |
| `references`, `content_ptr`, `meta` | `extra.hot` |
| — | `tenant` (and `agent_id`, `user_id`): the index's own, else `ingest --tenant T` |

``content_ptr`` (``{"file": ...}`` or a path) is resolved inside the tree: the path as given under
the tree, then without its leading folders one by one (``/memory/2026/05/10/x.json`` finds
``2026/05/10/x.json``); a pointer that leaves the tree or names no file is a ``broken pointer``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from typing import Any

INDEX = "index.json"
BROKEN_POINTER = "broken pointer"
_EPOCH_MS = 100_000_000_000  # a number above this is epoch milliseconds (year 5138 in seconds)


@dataclass(frozen=True)
class TreeUnit:
    """One memory of a tree: `label` (its sub-file, relative to the tree's parent), the JSON Lines
    of its records (the memory, then its decisions), or a `problem` with the `raw` text to
    quarantine instead."""

    label: str
    lines: tuple[str, ...] = ()
    problem: str | None = None
    raw: str = ""
    # the lines as read, without the lake's versions: what a re-read of the same tree is known by
    plain: tuple[str, ...] = ()


def is_hot_tree(folder: Path) -> bool:
    """A folder whose ``index.json`` lists skeletons (entries with ``memory_id``)."""
    index = folder / INDEX
    if not index.is_file():
        return False
    try:
        entries = _entries(json.loads(index.read_text(encoding="utf-8")))
    except (ValueError, OSError, UnicodeDecodeError):
        return False
    return entries is not None


def pending_tree(folder: Path) -> bool:
    """A tree still being written: ``YYYY/MM/DD`` folders holding JSON sub-files only (or nothing
    yet) and no ``index.json`` yet (written last). A folder of dated JSON Lines snapshots
    (``2026/11/30/a.jsonl``) is no tree."""
    if (folder / INDEX).exists():
        return False
    years = [p for p in folder.iterdir() if p.is_dir() and p.name.isdigit() and len(p.name) == 4]
    return bool(years) and all(f.suffix.lower() in (".json", ".tmp") or f.name.startswith(".")
                               for year in years for f in year.rglob("*") if f.is_file())


def trees_under(root: Path) -> list[Path]:
    """Every tree (complete or pending) in the folders below `root`, outermost only (a tree's own
    folders are its parts)."""
    import os

    found: list[Path] = []
    for here, folders, _files in os.walk(root):
        for name in sorted(folders):
            folder = Path(here) / name
            if is_hot_tree(folder) or pending_tree(folder):
                found.append(folder)
        folders[:] = sorted(f for f in folders if Path(here) / f not in found)
    return found


def tree_units(root: Path, tenant: str | None, versions=None) -> list[TreeUnit]:
    """The units of the tree at `root`; `versions(ids)` gives the lake's version of memories it
    already holds (a re-read tree then updates them). Raises ValueError for an index that is no
    list of skeletons, and when neither the index nor `tenant` names the tenant."""
    document = json.loads((root / INDEX).read_text(encoding="utf-8"))
    entries = _entries(document)
    if entries is None:
        raise ValueError(f"{root / INDEX}: no list of skeletons with memory_id")
    scope = {k: document.get(k) for k in ("tenant", "agent_id", "user_id")} if isinstance(document, dict) else {}
    scope["tenant"] = scope.get("tenant") or tenant
    if not scope["tenant"]:
        raise ValueError("a hot-memory tree names no tenant (no \"tenant\" in its index.json): ingest it with "
                         "`memory-lake ingest TREE --tenant T`, or drop it in the inbox in a folder named `tenant=T`")
    known = versions([str(e.get("memory_id")) for e in entries if isinstance(e, dict)]) if versions else {}
    base = root.name
    return [_unit(root, base, n, entry, scope, known) for n, entry in enumerate(entries, 1)]


def _entries(document: Any) -> list | None:
    if isinstance(document, dict):
        for key in ("memories", "entries", "index", "items"):
            if isinstance(document.get(key), list):
                document = document[key]
                break
        else:
            values = list(document.values())
            if values and all(isinstance(v, dict) and "memory_id" in v for v in values):
                return values
            return None
    if isinstance(document, list) and all(isinstance(e, dict) for e in document) and \
            any("memory_id" in e for e in document):
        return document
    return None


def _unit(root: Path, base: str, n: int, entry: Any, scope: dict, known: dict) -> TreeUnit:
    label = f"{base}/{INDEX}#{n}"
    if not isinstance(entry, dict):
        return TreeUnit(label, problem="an index entry must be an object", raw=json.dumps(entry, ensure_ascii=False))
    pointer = entry.get("content_ptr")
    sub: dict[str, Any] = {}
    if pointer is not None:
        target = resolve_pointer(root, pointer)
        if target is None:
            where = pointer.get("file") if isinstance(pointer, dict) else pointer
            return TreeUnit(label, problem=f"{BROKEN_POINTER}: content_ptr {where!r} names no file inside the tree",
                            raw=json.dumps(entry, ensure_ascii=False))
        label = f"{base}/{target.relative_to(root).as_posix()}"
        text = target.read_bytes().decode("utf-8", "replace")
        try:
            sub = json.loads(text)
        except ValueError:
            return TreeUnit(label, lines=(text.strip().replace("\n", " "),))
        if not isinstance(sub, dict):
            return TreeUnit(label, lines=(json.dumps(sub, ensure_ascii=False),))
    meta = sub.get("meta") if isinstance(sub.get("meta"), dict) else {}
    memory_id = str(entry.get("memory_id") or meta.get("memory_id") or "") or None
    created = _stamp(entry.get("timestamp") if entry.get("timestamp") is not None else meta.get("created_at"))
    record: dict[str, Any] = {**{k: v for k, v in scope.items() if v}, "source": "hot-memory tree"}
    if memory_id:
        record["id"] = memory_id
    summary = sub.get("summary") if sub.get("summary") is not None else entry.get("summary")
    if summary is not None:
        record["content"] = summary
    tags = sub.get("tags") if isinstance(sub.get("tags"), list) else entry.get("tags")
    if tags is not None:
        record["tags"] = tags
    if meta.get("session_id"):
        record["session_id"] = meta["session_id"]
    if isinstance(entry.get("priority"), (int, float)) and not isinstance(entry.get("priority"), bool):
        record["importance"] = max(0.0, min(1.0, entry["priority"] / 10))
    elif entry.get("priority") is not None:
        record["importance"] = entry["priority"]  # the contract says what is wrong with it
    if created is not None:
        record["created_at"] = created
    expires = _expires(created, entry.get("ttl"))
    if expires is not None:
        record["expires_at"] = expires
    turns = sub.get("content") if isinstance(sub.get("content"), list) else []
    text_turns = [f"{t.get('role', '?')}: {t.get('msg', t.get('content', ''))}" for t in turns if isinstance(t, dict)]
    extra: dict[str, Any] = {"hot": {k: v for k, v in (("content_ptr", pointer), ("references", sub.get("references")),
                                                        ("meta", meta or None)) if v is not None}}
    if text_turns:
        extra["source_text"] = "\n".join(text_turns)
    record["extra"] = extra
    plain = [json.dumps(record, ensure_ascii=False)]
    if memory_id and memory_id in known:
        record["version"] = known[memory_id]
    lines = [json.dumps(record, ensure_ascii=False)]
    decisions = sub.get("decisions") if isinstance(sub.get("decisions"), list) else []
    for k, decision in enumerate(decisions, 1):
        child: dict[str, Any] = {**{key: record[key] for key in ("tenant", "agent_id", "user_id", "session_id", "tags",
                                                                "importance", "created_at", "expires_at", "source")
                                   if key in record},
                                 "type": "decision", "content": decision,
                                 "extra": {"parent_id": memory_id, "hot": {"decision": k}}}
        if memory_id:
            child["id"] = f"{memory_id}-d{k}"
        plain.append(json.dumps(child, ensure_ascii=False))
        if memory_id and child["id"] in known:
            child["version"] = known[child["id"]]
        lines.append(json.dumps(child, ensure_ascii=False))
    return TreeUnit(label, lines=tuple(lines), plain=tuple(plain))


def resolve_pointer(root: Path, pointer: Any) -> Path | None:
    """The sub-file `pointer` names, inside `root` only; None when it names none there."""
    raw = pointer.get("file") if isinstance(pointer, dict) else pointer
    if not isinstance(raw, str) or not raw.strip():
        return None
    parts = [p for p in PurePosixPath(raw.replace("\\", "/")).parts if p not in ("/", "")]
    if ".." in parts:
        return None
    top = root.resolve()
    for start in range(len(parts)):
        candidate = (root / Path(*parts[start:])).resolve()
        if top in candidate.parents and candidate.is_file():
            return candidate
    return None


def _stamp(value: Any) -> Any:
    """Epoch milliseconds as ISO 8601 UTC; seconds and ISO text as they are (the contract reads them)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) > _EPOCH_MS:
        try:
            return datetime.fromtimestamp(value / 1000, tz=timezone.utc).isoformat().replace("+00:00", "Z")
        except (OverflowError, OSError, ValueError):
            return value
    return value


def _expires(created: Any, ttl: Any) -> str | None:
    if created is None or not isinstance(ttl, (int, float)) or isinstance(ttl, bool) or ttl <= 0:
        return None
    try:
        start = (datetime.fromtimestamp(created, tz=timezone.utc) if isinstance(created, (int, float))
                 else datetime.fromisoformat(str(created).replace("Z", "+00:00")))
    except (ValueError, OverflowError, OSError):
        return None
    if start.tzinfo is None:
        start = start.replace(tzinfo=timezone.utc)
    return (start + timedelta(milliseconds=ttl)).astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
