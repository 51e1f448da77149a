"""The decision queue (DESIGN "The way data flows"): resolve / unmerge / forget are applied at
once when the lake is free, else queued as a small JSON file in ``inbox/decisions/`` (written under a
temporary name and renamed, so a run never sees half of one) and applied first by the next run
(`memory_lake.maintain.decisions.apply_decisions`). Files are named ``<as_of>-<kind>-<uuid8>.json``,
so name order is request order.

A decision file carries ``signature``, the lake's mark (store/keys.py) on its other fields: only the
CLI and the Python API, which read the lake's key, can queue one. A file written into
``inbox/decisions/`` by anyone else (an agent claiming to be the user) is refused when applied.

No raw PII goes into a decision file (they are kept for good, in ``applied/``). Free text (a
forget's reason, a resolution's value) is redacted by the ingest's rules when the file is
written; the lake is busy then, so its salts cannot be read and a one-off salt is used (the
placeholder reveals nothing and links to nothing). Values that name what to change (ids,
tenant, agent, user, conflict or canonical id) must match the lake's values, which hold
placeholders, so one holding raw PII is refused with a message to pass the stored value.
"""

from __future__ import annotations

import json
import os
import secrets
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from ..store import InputError, LakeBusy, transaction
from ..text import redact_text

# Decision fields that only say what kind of change it is; they are written as given.
STRUCTURE_FIELDS = ("kind", "take", "operator", "requested_at")
# Decision fields that name what to change: they must match stored (already redacted) values.
NAMING_FIELDS = ("ids", "tenant", "agent", "user", "conflict_id", "canonical_id")


def queue_decision(lake, decision: dict[str, Any], as_of: datetime) -> Path:
    """Write `decision` to ``inbox/decisions/<as_of>-<kind>-<uuid8>.json`` atomically; return the path.

    Free-text values are redacted first; a naming value that holds PII raises InputError (see the
    module docstring)."""
    decision = _redacted(decision)
    decision = {**decision, "signature": lake.sign(canonical_decision(decision))}  # a user's, not the inbox's
    kind = str(decision.get("kind") or "decision")
    folder = lake.decisions
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{as_of:%Y%m%dT%H%M%S}-{kind}-{uuid.uuid4().hex[:8]}.json"
    target = folder / name
    # A leading dot and a .tmp suffix: neither this step nor ingest picks up a file being written.
    tmp = folder / f".{name}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(decision, handle, ensure_ascii=False, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, target)
    return target


def canonical_decision(decision: dict[str, Any]) -> bytes:
    """The bytes a decision's signature covers: every field but the signature, keys sorted."""
    fields = {k: v for k, v in decision.items() if k != "signature"}
    return json.dumps(fields, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def apply_or_queue(lake, decision: dict[str, Any], as_of: datetime, apply, check=None) -> dict[str, Any]:
    """Apply a decision at once when the lake is free, else queue it (``{"queued": path}``).

    `apply(con)` runs inside one transaction on the writer connection (a run's shared one when
    this process holds the lake). `check()`, when given, runs before queuing and raises
    InputError for a decision that could not apply (checked against what can be read while the
    lake is busy). Used by resolve and unmerge; forget has its own batch path."""
    def queue() -> dict[str, Any]:
        if check is not None:
            check()
        return {"queued": str(queue_decision(lake, decision, as_of))}

    held = lake.held_here()
    if not held and lake.is_busy():
        return queue()
    try:
        with lake.writer(purpose=str(decision.get("kind")), wait_s=600 if held else 0) as con:
            with transaction(con):
                return apply(con)
    except LakeBusy:
        return queue()


def pending_decisions(lake) -> list[Path]:
    """Queued decision files, in the order they are applied (name order)."""
    if not lake.decisions.is_dir():
        return []
    return sorted(p for p in lake.decisions.glob("*.json") if p.is_file() and not p.name.startswith("."))


def _redacted(decision: dict[str, Any]) -> dict[str, Any]:
    salt = secrets.token_bytes(32)  # the lake's salts cannot be read while it is busy

    def redact(value):
        if isinstance(value, str):
            return redact_text(value, salt)
        if isinstance(value, list):
            return [redact(v) for v in value]
        if isinstance(value, dict):
            return {k: redact(v) for k, v in value.items()}
        return value

    out = {}
    for key, value in decision.items():
        out[key] = value if key in STRUCTURE_FIELDS else redact(value)
        if key in NAMING_FIELDS and out[key] != value:
            raise InputError(
                f"the lake is busy, and {key} holds personal data that cannot be written to the queue: "
                "give the value as the lake stores it (its [EMAIL:...] or [PHONE:...] placeholder, "
                "see `memory-lake sql`) or try again when the run ends")
    return out
