"""What the publish suite tells the operator per expectation (issue 19, found by mutation
testing): the counts of a passing run, at most three examples of a failure, and the error of an
expectation that could not run (a missing column), which used to be an empty text."""

from __future__ import annotations

from memory_lake.publish.checks import PUBLISH_EXPECTATIONS, validate

from .test_checks import frames


def test_a_passing_run_reports_zero_unexpected_per_expectation():
    # two memories in one scope; no previous version, so the diff gate's frames are empty
    rows_of = {"memories": 2, "scopes": 1, "diff_scopes": 0, "diff_memories": 0}
    report = validate(frames())
    assert [(r.expectation, r.success, r.observed) for r in report.results] == [
        (name, True, f"0 unexpected of {rows_of[target]}") for name, target, *_ in PUBLISH_EXPECTATIONS]


def test_a_failure_shows_at_most_three_examples():
    import polars as pl

    two = frames(tier=["w1", "w2"])
    many = {**two, "memories": pl.concat([two["memories"], two["memories"].with_columns(
        id=pl.Series(["c", "d"]), tier=pl.Series(["w3", "w4"]))])}
    (failed,) = [r for r in validate(many).results if not r.success]
    assert (failed.expectation, failed.observed) == ("tier in set", "4 unexpected of 4 (e.g. w1, w2, w3)")


def test_an_expectation_that_cannot_run_fails_with_its_error():
    broken = frames()
    broken["memories"] = broken["memories"].drop("importance")
    report = validate(broken)
    assert report.failed == ["importance within 0..1"]
    (failed,) = [r for r in report.results if not r.success]
    assert failed.observed == 'error: Error: The column "importance" in BatchData does not exist.'
