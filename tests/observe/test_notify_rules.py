"""Rules of the end-of-run webhook that the mutation sample of issue 34 showed untested: the health
alerts of this run in the body, a failed run's step and error kind (never its message), the body
sent when the run's summary cannot be built, the report's run id, the doubling pause between
attempts and the UTF-8 body. A real HTTP server on 127.0.0.1, a real lake."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memory_lake.observe import WEBHOOK_ENV, notify, snapshot_health

from ..conftest import AS_OF, write_jsonl
from .test_notify import Endpoint

STEPS = [
    {"name": "ingest", "counts": {"files": 1}, "details": {}},
    {"name": "write_report", "counts": {"alerts": 1}, "details": {"path": "/tmp/报告/health-2026-11-30.html"}},
]


@pytest.fixture
def hooked(lake, monkeypatch):
    monkeypatch.delenv(WEBHOOK_ENV, raising=False)
    return lake


def test_the_body_holds_this_runs_health_alerts_as_level_and_message(hooked, tmp_path):
    hooked.ingest([write_jsonl(tmp_path / "a.jsonl", [
        {"id": "m1", "tenant": "acme", "user_id": "u1", "content": "Alice likes tea.",
         "created_at": "2026-09-01T00:00:00Z"}])], as_of=AS_OF)
    snapshot_health(hooked, AS_OF)
    with Endpoint() as endpoint:
        report = notify(hooked, AS_OF, "nightly-5", STEPS, url=endpoint.url)
        later = notify(hooked, AS_OF + timedelta(days=1), "nightly-6", STEPS, url=endpoint.url)
    alert = {"level": "info", "message": "1 memories not accessed for 30 days (100%, above 10%)"}  # its "action" stays home
    assert endpoint.bodies[0] == {
        "run_id": "nightly-5", "kind": "nightly", "as_of": "2026-11-30T00:00:00Z", "outcome": "ok",
        "counts": {"ingest": {"files": 1}, "write_report": {"alerts": 1}}, "alerts": [alert],
        "publish_version": None, "report": "/tmp/报告/health-2026-11-30.html"}
    # a snapshot of another day is not this run's: no alerts
    assert endpoint.bodies[1]["alerts"] == [] and endpoint.bodies[1]["as_of"] == "2026-12-01T00:00:00Z"
    assert (report.name, report.run_id, report.as_of, later.run_id) == ("notify", "nightly-5", AS_OF, "nightly-6")


def test_the_body_is_utf8_json_with_non_ascii_text_as_is(hooked):
    with Endpoint() as endpoint:
        notify(hooked, AS_OF, "nightly-7", STEPS, url=endpoint.url)
    (raw,) = endpoint.raw
    assert "/tmp/报告/health-2026-11-30.html".encode("utf-8") in raw
    assert raw == json.dumps(endpoint.bodies[0], ensure_ascii=False, sort_keys=True).encode("utf-8")


def test_a_failed_run_names_its_step_and_the_error_kind_never_the_message(hooked):
    error = RuntimeError("Alice's phone is 555-0100")
    error.failed_step = "dedup"
    with Endpoint() as endpoint:
        report = notify(hooked, AS_OF, "nightly-8", STEPS, kind="weekly", error=error, url=endpoint.url)
    (raw,) = endpoint.raw
    assert b"555-0100" not in raw and b"Alice" not in raw
    assert endpoint.bodies == [{
        "run_id": "nightly-8", "kind": "weekly", "as_of": "2026-11-30T00:00:00Z", "outcome": "failed",
        "counts": {"ingest": {"files": 1}, "write_report": {"alerts": 1}}, "alerts": [], "publish_version": None,
        "report": "/tmp/报告/health-2026-11-30.html", "failed_step": "dedup", "error": "RuntimeError"}]
    assert report.details == {"status": "sent", "attempts": 1, "http_status": 200, "error": None, "outcome": "failed"}
    # an error that names no step says so with null
    with Endpoint() as endpoint:
        notify(hooked, AS_OF, "nightly-9", STEPS, error=KeyError("x"), url=endpoint.url)
    assert (endpoint.bodies[0]["failed_step"], endpoint.bodies[0]["error"]) == (None, "KeyError")


@pytest.mark.parametrize("error,outcome", [(None, "unknown"), (ValueError("boom"), "failed")])
def test_a_run_summary_that_cannot_be_built_still_notifies(hooked, error, outcome):
    broken = [{"name": "ingest", "details": {}}]  # no counts: the summary cannot be built
    with Endpoint() as endpoint:
        report = notify(hooked, AS_OF, "nightly-10", broken, error=error, url=endpoint.url)
    assert endpoint.bodies == [{"run_id": "nightly-10", "kind": "nightly", "as_of": "2026-11-30T00:00:00Z",
                                "outcome": outcome, "counts": {}, "alerts": [], "report": None,
                                "note": "summary unavailable: KeyError"}]
    assert report.details == {"status": "sent", "attempts": 1, "http_status": 200, "error": None, "outcome": outcome}
    assert report.counts == {"sent": 1, "attempts": 1}


def test_the_pause_between_attempts_doubles(hooked):
    retrying = type(hooked).open(hooked.root, policy_overrides={"notify": {"retries": 2, "backoff_s": 0.1}})
    with Endpoint(status=503) as endpoint:
        report = notify(retrying, AS_OF, "nightly-11", STEPS, url=endpoint.url)
    first, second = (b - a for a, b in zip(endpoint.times, endpoint.times[1:]))
    assert first >= 0.1 and second >= 0.2  # backoff_s, then 2 x backoff_s
    assert report.details["attempts"] == 3 and report.details["error"] == "HTTP 503"
