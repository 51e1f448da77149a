"""Writing to the inbox safely, and a user's manual edit through the same versioned write path.

The inbox convention (README "Writing snapshots"): a writer puts a file in ``<lake>/inbox/``
under a temporary name (a leading dot, or a ``.tmp`` / ``.part`` suffix), writes it whole, flushes
it to disk and renames it to its final ``*.jsonl`` name. A rename within one folder is atomic, so
ingest only ever sees complete files: it skips temporary names, ingests each complete file once
(keyed by its content hash), keeps a redacted copy in ``raw/`` and only then removes the original
from the inbox; a crash anywhere in between re-runs to the same result.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any, Callable

from ..store import DEFAULT_WRITE_WAIT_S, iso, resolve_as_of
from ..store import InputError, keys
from ..store import is_lake, lake_not_found

EDITABLE = ("content", "summary", "tags", "importance", "tier", "type", "expires_at", "context_id")


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def write_snapshot(records: Iterable[Mapping[str, Any]] | Mapping[str, Any], lake_dir: str | os.PathLike, *,
                   name: str | None = None, signer: Callable[[bytes], str] | None = None) -> Path:
    """Write `records` (a list of dicts, one per memory; a single dict is one memory) as one JSON
    Lines snapshot into the inbox of the lake at `lake_dir`, atomically. With `signer` (the lake's
    ``sign``: the CLI's and the API's user edits) the name carries the signature of the bytes, so
    its ``operator: user`` is honoured; an unsigned record's ``operator: user`` counts as an agent's.

    `lake_dir` is an existing lake's folder or its ``inbox`` folder. A path with no lake is refused
    (`LakeNotFound`) and nothing is created there: a snapshot written where no lake reads it would
    be lost without a word. Records that are not dicts are refused (TypeError) before anything is
    written. The file is written under a hidden temporary name, flushed to disk, then renamed to
    ``<name>.jsonl`` (default: UTC time + a random suffix, so names sort by arrival and never
    collide). Returns the final path. Ingest never sees a half-written file.
    """
    inbox = _inbox_of(Path(lake_dir))
    lines = [json.dumps(dict(r), ensure_ascii=False, default=_default) for r in _as_records(records)]
    inbox.mkdir(exist_ok=True)
    stem = name or f"{datetime.utcnow():%Y%m%dT%H%M%S%f}-{uuid.uuid4().hex[:12]}"
    stem = stem.removesuffix(".jsonl")
    text = "\n".join(lines) + ("\n" if lines else "")
    if signer is not None:
        stem += keys.USER_MARK + signer(text.encode("utf-8"))
    target = inbox / f"{stem}.jsonl"
    tmp = inbox / f".{stem}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def _inbox_of(path: Path) -> Path:
    """The inbox of the lake at `path` (the lake's folder, or its ``inbox`` folder), else LakeNotFound."""
    if is_lake(path):
        return path / "inbox"
    if path.name == "inbox" and is_lake(path.parent):
        return path
    root = path.parent if path.name == "inbox" else path
    raise lake_not_found(root.expanduser().resolve(),
                         "give write_snapshot an existing lake's folder or its inbox folder")


def _as_records(records: Any) -> list[Mapping[str, Any]]:
    """`records` as a list of dicts: one dict is one record; anything else than dicts is a TypeError
    that says what was given (``dict()`` of a string or a pair list fails with a puzzling message)."""
    if isinstance(records, Mapping):
        return [records]
    wanted = "write_snapshot wants a list of records (dicts, one per memory) or one record as a dict; got "
    if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise TypeError(wanted + type(records).__name__)
    listed = list(records)
    for number, record in enumerate(listed):
        if not isinstance(record, Mapping):
            raise TypeError(f"{wanted}{type(records).__name__} whose item #{number} is {type(record).__name__}")
    return listed


def edit_memory(lake, memory_id: str, changes: Mapping[str, str], *, operator: str = "user",
                as_of: datetime | str | None = None) -> dict[str, Any]:
    """A manual edit: `changes` (field -> text, as typed) written as a snapshot based on the memory
    as the lake shows it now, then ingested at once, so it takes the versioned write path (three-way
    merge, history, conflicts). While another process holds the lake the snapshot waits in the
    inbox and the next run ingests it (``{"queued": path}``). Pin a memory with ``tier=important``.

    A person edits what they see, moves of the tier rules included (they bump no version): the
    record carries ``_base_seq``, the memory's latest history row when it was read, and the merge
    takes that row's image as the base. Only a write that lands between the read and the ingest
    (an agent's, another person's, a rule's in a run that held the lake) is the lake's side.
    """
    from .snapshot import parse_field_value

    as_of = resolve_as_of(as_of)
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise InputError(f"cannot edit {', '.join(unknown)}: editable fields are {', '.join(EDITABLE)}")
    if not changes:
        raise InputError("nothing to edit: give --set field=value")
    if operator not in ("user", "agent"):
        raise InputError(f"operator must be user or agent, not {operator!r}")
    # While a run holds the lake this reads the published version, history included: its image is
    # what the person saw.
    found = lake.read("SELECT tenant, agent_id, user_id, version, status, content, "
                      "(SELECT max(seq) FROM memory_history h WHERE h.memory_id = m.id) AS base_seq "
                      "FROM memories m WHERE id = ?", [memory_id]).frame
    if found.height == 0:
        raise InputError(f"no memory {memory_id!r}")
    row = found.row(0, named=True)
    if row["status"] == "deleted":
        raise InputError(f"memory {memory_id} is deleted")
    # The snapshot contract needs content: the current one, unchanged unless edited.
    record: dict[str, Any] = {"id": memory_id, "tenant": row["tenant"], "version": row["version"], "content": row["content"],
                              "operator": operator, "updated_at": iso(as_of),
                              "trace_id": f"edit-{uuid.uuid4().hex[:12]}"}
    if row["base_seq"] is not None:
        record["_base_seq"] = row["base_seq"]
    for field, text in changes.items():
        # validated here for a clear error; the text goes as typed: the ingest redacts the line
        value = parse_field_value(field, text, b"validation-only")
        if field == "tags":
            value = json.loads(text) if text.strip().startswith("[") else [t.strip() for t in text.split(",") if t.strip()]
        elif field in ("content", "summary", "context_id"):
            value = text
        record[field] = iso(value) if isinstance(value, datetime) else value
    path = write_snapshot([record], lake.root, name=f"{as_of:%Y%m%dT%H%M%S}-edit-{memory_id}-{uuid.uuid4().hex[:8]}",
                          signer=lake.sign if operator == "user" else None)
    if not lake.held_here() and lake.is_busy():
        return {"queued": str(path), "memory_id": memory_id, "base_version": row["version"]}
    from .load import ingest_paths

    report = ingest_paths(lake, [path], as_of=resolve_as_of(as_of), wait_s=DEFAULT_WRITE_WAIT_S).as_dict()
    after = lake.read("SELECT version, status FROM memories WHERE id = ?", [memory_id]).frame.row(0, named=True)
    return {"memory_id": memory_id, "base_version": row["version"], "version": after["version"],
            "status": after["status"], "updated": report["updated"], "conflicted": report["conflicted"],
            "quarantined": report["quarantined"], "quarantine_reasons": report["quarantine_reasons"],
            "trace_id": record["trace_id"]}
