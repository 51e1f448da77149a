"""The publish suite (Great Expectations, real validations): every expectation can fail and is named."""

from __future__ import annotations

from datetime import datetime

import polars as pl

from memory_lake.publish.checks import batches, validate
from memory_lake.publish.checks import PUBLISH_EXPECTATIONS

T = datetime(2026, 1, 1)


def frames(**overrides):
    memories = pl.DataFrame({
        "id": ["a", "b"], "tier": ["working", "long_term"], "status": ["active", "dormant"], "type": ["fact", "todo"],
        "content": ["fine", "also fine [PHONE:3f2a9c1d]"], "summary": [None, None], "version": [1, 2],
        "importance": [0.5, 1.0], "created_at": [T, T], "updated_at": [T, T], "last_accessed_at": [T, T],
    }).with_columns(**{k: pl.Series(v) for k, v in overrides.items()})
    scopes = pl.DataFrame({"tenant": ["t"], "agent_id": [None], "user_id": [None], "working": [1], "short_term": [0],
                           "working_over": [-19], "short_term_over": [-100]})
    return batches(memories, scopes)


def test_clean_rows_pass_every_expectation():
    report = validate(frames())
    assert report.success and report.failed == []
    assert [r.expectation for r in report.results] == [name for name, *_ in PUBLISH_EXPECTATIONS]


def test_each_broken_rule_is_named():
    broken = frames(id=["a", "a"], tier=["working", "forever"], status=["active", "deleted"], type=["fact", "rant"],
                    content=["", "call 13812345678"], version=[0, 1], importance=[0.5, 2.0],
                    updated_at=[datetime(2025, 1, 1), T], last_accessed_at=[T, datetime(2025, 1, 1)])
    broken["scopes"] = broken["scopes"].with_columns(working_over=pl.Series([5]), short_term_over=pl.Series([1]))
    broken["diff_scopes"] = pl.DataFrame({"unexplained_drop": ["t/_/_: 10 -> 2 active, 8 unexplained (at most 2 allowed)"]})
    broken["diff_memories"] = pl.DataFrame({"id": ["a", "b"], "important_changed": [None, "b changed with no user history row"],
                                            "tenant_moved": ["a: t -> u", None]})
    report = validate(broken)
    assert report.failed == [name for name, *_ in PUBLISH_EXPECTATIONS if name != "ids not null"]
    observed = {r.expectation: r.observed for r in report.results}
    assert observed["ids unique"] == "2 unexpected of 2 (e.g. a, a)"
    assert observed["no raw PII"] == "1 unexpected of 2 (e.g. True)"
    assert observed["working within capacity per scope"] == "1 unexpected of 1 (e.g. 5)"
    assert observed["active per scope not dropped beyond max_active_drop unexplained"] == (
        "1 unexpected of 1 (e.g. t/_/_: 10 -> 2 active, 8 unexplained (at most 2 allowed))")
    assert observed["important memories changed only with a user history row"] == (
        "1 unexpected of 2 (e.g. b changed with no user history row)")
    assert observed["no memory moved to another tenant"] == "1 unexpected of 2 (e.g. a: t -> u)"


def test_raw_pii_in_any_published_text_column_blocks_the_publish():
    # issue 12: the check uses the ingest's detectors on every text a published row carries
    for column, values in (("summary", [None, "mail bob＠example.com"]), ("tags", [["ok"], ["10.0.0.1"]]),
                           ("extra", [None, '{"api_key":"abc123"}']), ("user_id", [None, "bob at example dot com"])):
        report = validate(frames(**{column: values}))
        assert report.failed == ["no raw PII"], column
    clean = frames(summary=[None, "version 1.2.3.4, due 2026-11-30, Ticket 5512, id m_3f2a9c1d"],
                   tags=[["ok"], ["[IP:3f2a9c1d]"]], extra=[None, '{"api_key":"[SECRET]","max_tokens":500}'])
    assert validate(clean).success


def test_zone_aware_times_are_compared_naive_in_utc():
    """A frame handed to the gate with UTC-aware times (a notebook's, another reader's) is compared
    as naive UTC, as the lake stores it: the same rows, the same verdict, and pandas sees no zone."""
    aware = {k: pl.Series([T, T]).dt.replace_time_zone("UTC") for k in ("created_at", "updated_at", "last_accessed_at")}
    checked = frames(**aware)["memories"]
    assert {k: checked.schema[k] for k in aware} == {k: pl.Datetime("us") for k in aware}
    assert checked.drop("raw_pii").equals(frames()["memories"].drop("raw_pii"))
    assert validate(frames(**aware)).success
