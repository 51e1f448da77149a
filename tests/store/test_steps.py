"""A step's one-line summary reads as English: a leading plural noun is singular after 1."""

from __future__ import annotations

from memory_lake.store.clock import resolve_as_of as parse_as_of
from memory_lake.store.steps import StepReport


def test_a_summary_counts_one_thing_in_the_singular():
    report = StepReport("snapshot_health", parse_as_of("2026-11-30"), "run-1",
                        {"scopes": 1, "tenants": 1, "alerts": 2, "memories": 1, "merged_exact": 1, "missing": 1},
                        labels={"missing": "missing before"})
    assert report.summary == "1 scope, 1 tenant, 2 alerts, 1 memory, 1 merged exact, 1 missing before"
    assert StepReport("x", parse_as_of("2026-11-30"), "run-1").summary == "nothing to do"
