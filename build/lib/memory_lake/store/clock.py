"""`as_of` handling. Steps never read the clock: the entry point (CLI, flow) takes "now" once
and passes it down. Timestamps in the lake are naive UTC."""

from __future__ import annotations

from datetime import datetime, timezone

from .errors import InputError


def resolve_as_of(as_of: datetime | str | None) -> datetime:
    """Naive-UTC datetime for `as_of`; None means now (only entry points should pass None)."""
    if as_of is None:
        return datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    if isinstance(as_of, str):
        text = as_of.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            as_of = datetime.fromisoformat(text)
        except ValueError:
            raise InputError(f"--as-of {as_of!r} is not an ISO 8601 timestamp") from None
    if as_of.tzinfo is not None:
        as_of = as_of.astimezone(timezone.utc).replace(tzinfo=None)
    return as_of


def iso(ts: datetime | None) -> str | None:
    """ISO 8601 with a Z, for reports and JSON output."""
    return None if ts is None else ts.replace(tzinfo=None).isoformat() + "Z"
