"""as_of parsing: every step gets a naive-UTC datetime; only entry points default to now."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memory_lake import InputError
from memory_lake.store.clock import iso, resolve_as_of


@pytest.mark.parametrize("value, expected", [
    ("2026-11-30T00:00:00Z", datetime(2026, 11, 30)),
    ("2026-11-30T08:00:00+08:00", datetime(2026, 11, 30)),
    ("2026-11-30", datetime(2026, 11, 30)),
    (datetime(2026, 11, 30, 1, tzinfo=timezone(timedelta(hours=1))), datetime(2026, 11, 30)),
    (datetime(2026, 11, 30), datetime(2026, 11, 30)),
])
def test_resolve_as_of(value, expected):
    assert resolve_as_of(value) == expected


def test_now_is_naive_utc_and_bad_text_is_a_clear_error():
    now = resolve_as_of(None)
    assert now.tzinfo is None and abs(now - datetime.now(timezone.utc).replace(tzinfo=None)) < timedelta(seconds=5)
    with pytest.raises(InputError, match="not an ISO 8601 timestamp"):
        resolve_as_of("next tuesday")
    assert iso(datetime(2026, 11, 30, 1, 2, 3)) == "2026-11-30T01:02:03Z"
