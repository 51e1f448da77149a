"""The end-of-run webhook (issue 14 item 4), against a real HTTP server on 127.0.0.1: the whole
body on success, retries on a 500 and a bounded time on a dead endpoint, never failing the run."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memory_lake.observe import WEBHOOK_ENV, notify, snapshot_health, timed

from ..conftest import AS_OF


class Endpoint:
    """A local HTTP server answering every POST with `status`, after `delay` seconds; keeps each
    body parsed (`received`) and as sent (`raw`), and when it came (`times`)."""

    def __init__(self, status: int = 200, delay: float = 0.0):
        self.received: list[dict] = []
        self.raw: list[bytes] = []
        self.times: list[float] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                endpoint.times.append(time.monotonic())
                body = self.rfile.read(int(self.headers["Content-Length"]))
                endpoint.raw.append(body)
                endpoint.received.append({"content_type": self.headers["Content-Type"], "body": json.loads(body)})
                time.sleep(delay)
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def bodies(self) -> list[dict]:
        return [r["body"] for r in self.received]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


STEPS = [
    {"name": "ingest", "counts": {"files": 1, "ingested": 2}, "details": {}},
    {"name": "publish_export", "counts": {"published": 1}, "details": {"status": "published", "version": "v1"}},
    {"name": "write_report", "counts": {"alerts": 0}, "details": {"path": "/tmp/reports/health-2026-11-30.html"}},
]


@pytest.fixture
def hooked(lake, monkeypatch):
    monkeypatch.delenv(WEBHOOK_ENV, raising=False)
    return lake


def test_a_run_posts_its_summary(hooked):
    snapshot_health(hooked, AS_OF)
    with Endpoint() as endpoint:
        result = timed(notify, hooked, AS_OF, "nightly-1", STEPS, url=endpoint.url)
    assert endpoint.received == [{"content_type": "application/json", "body": {
        "run_id": "nightly-1", "kind": "nightly", "as_of": "2026-11-30T00:00:00Z", "outcome": "ok",
        "counts": {"ingest": {"files": 1, "ingested": 2}, "publish_export": {"published": 1},
                   "write_report": {"alerts": 0}},
        "alerts": [], "publish_version": "v1", "report": "/tmp/reports/health-2026-11-30.html"}}]
    assert (result["counts"], result["details"]) == ({"sent": 1, "attempts": 1}, {
        "status": "sent", "attempts": 1, "http_status": 200, "error": None, "outcome": "ok"})


def test_a_failing_endpoint_is_retried_and_does_not_fail_the_run(hooked, capsys):
    hooked = type(hooked).open(hooked.root, policy_overrides={"notify": {"retries": 2, "backoff_s": 0.05}})
    with Endpoint(status=500) as endpoint:
        result = timed(notify, hooked, AS_OF, "nightly-2", STEPS, url=endpoint.url)
    assert len(endpoint.received) == 3 and {r["body"]["run_id"] for r in endpoint.received} == {"nightly-2"}
    warning = "warning: webhook not delivered after 3 attempt(s): HTTP 500; the run itself is unaffected"
    assert result["details"] == {"status": "failed", "attempts": 3, "http_status": 500, "error": "HTTP 500",
                                 "outcome": "ok", "warning": warning}
    assert capsys.readouterr().err.strip() == warning


def test_a_closed_port_and_a_slow_endpoint_take_bounded_time(hooked):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/hook"  # bound, never listening
    hooked = type(hooked).open(hooked.root, policy_overrides={"notify": {"retries": 1, "backoff_s": 0.01}})
    result = notify(hooked, AS_OF, "nightly-3", STEPS, url=closed)
    assert (result.details["status"], result.details["attempts"]) == ("failed", 2)
    assert "ConnectionRefusedError" in result.details["error"]
    slow = type(hooked).open(hooked.root, policy_overrides={
        "notify": {"timeout_s": 0.3, "retries": 5, "backoff_s": 0.05, "max_total_s": 1.0}})
    with Endpoint(delay=2.0) as endpoint:
        started = time.monotonic()
        result = notify(slow, AS_OF, "nightly-4", STEPS, url=endpoint.url)
        elapsed = time.monotonic() - started
    assert result.details["status"] == "failed" and "timed out" in result.details["error"]
    assert elapsed < 1.5 and 2 <= result.details["attempts"] <= 3


def test_the_url_comes_from_the_config_or_the_environment(hooked, monkeypatch):
    assert notify(hooked, AS_OF, "r", STEPS).details == {
        "status": "off", "reason": f"no webhook set ([notify] webhook_url or ${WEBHOOK_ENV})"}
    with Endpoint() as from_config, Endpoint() as from_env:
        (hooked.root / "memory-lake.toml").write_text(f'[notify]\nwebhook_url = "{from_config.url}"\n', encoding="utf-8")
        configured = type(hooked).open(hooked.root)
        assert notify(configured, AS_OF, "r1", STEPS).counts == {"sent": 1, "attempts": 1}
        monkeypatch.setenv(WEBHOOK_ENV, from_env.url)
        assert notify(configured, AS_OF, "r2", STEPS).counts == {"sent": 1, "attempts": 1}
    assert [r["body"]["run_id"] for r in from_config.received] == ["r1"]
    assert [r["body"]["run_id"] for r in from_env.received] == ["r2"]


class DripEndpoint:
    """A raw TCP server that answers a POST one byte every `every` seconds (a status line that never
    ends in time): each socket read gets a byte, so no read timeout ever trips."""

    def __init__(self, every: float = 0.2):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.every = every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def serve(self):
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self.drip, args=(conn,), daemon=True).start()

    def drip(self, conn):
        with conn:
            for byte in b"HTTP/1.1 200 OK\r\n" * 100:
                if self.stop.is_set():
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(self.every)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.sock.close()


def test_an_endpoint_that_drips_one_byte_at_a_time_is_cut_at_the_deadline(hooked):
    # issue 37.7: the timeout was per socket read, so a byte every 2 s held the run for minutes
    slow = type(hooked).open(hooked.root, policy_overrides={
        "notify": {"timeout_s": 0.5, "retries": 1, "backoff_s": 0.05, "max_total_s": 1.2}})
    with DripEndpoint(every=0.2) as endpoint:
        started = time.monotonic()
        result = notify(slow, AS_OF, "nightly-5", STEPS, url=endpoint.url)
        elapsed = time.monotonic() - started
    assert result.details["status"] == "failed" and result.details["error"].startswith("TimeoutError: timed out")
    assert elapsed < 1.6 and result.details["attempts"] == 2


@pytest.mark.parametrize("url, message", [
    ("hooks.example.com/services/T000/B000/SECRET", "the webhook URL ([notify] webhook_url or "
     "$MEMORY_LAKE_WEBHOOK_URL) is not an http(s) URL with a host; it is not printed, as a hook's URL can hold its secret"),
    ("file:///etc/passwd", "the webhook URL ([notify] webhook_url or $MEMORY_LAKE_WEBHOOK_URL) is not an http(s) URL "
     "with a host; it is not printed, as a hook's URL can hold its secret"),
    ("http://169.254.169.254/latest/meta-data", "the webhook URL points at a link-local address (169.254.0.0/16 or "
     "fe80::/10): refused"),
])
def test_a_bad_webhook_url_stops_the_run_at_start_and_is_never_printed(hooked, tmp_path, monkeypatch, capsys, url, message):
    # issue 37.7: a URL without a scheme failed the run after it published, and its secret went to
    # stderr, runs.report, the next export and Prefect's state
    from memory_lake import InputError
    from memory_lake.observe import run_nightly_steps

    monkeypatch.setenv(WEBHOOK_ENV, url)
    with pytest.raises(InputError) as refused:
        run_nightly_steps(hooked, AS_OF, tmp_path / "reports")
    assert str(refused.value) == message
    assert hooked.sql("SELECT count(*) AS n FROM runs").item() == 0  # nothing ran, nothing recorded
    assert not (hooked.exports / "CURRENT").exists()
    assert "SECRET" not in capsys.readouterr().err
    # and a notify asked directly refuses before any attempt, without the URL
    assert notify(hooked, AS_OF, "r", STEPS, url=url).details == {
        "status": "failed", "attempts": 0, "http_status": None, "error": message, "outcome": "ok",
        "warning": f"warning: webhook not delivered after 0 attempt(s): {message}; the run itself is unaffected"}
