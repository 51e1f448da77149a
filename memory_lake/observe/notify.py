"""The end-of-run webhook (issue 14; the seed's ``callback_url``).

At the end of every run the lake POSTs one JSON object to ``notify.webhook_url`` (or
``$MEMORY_LAKE_WEBHOOK_URL``): the run id, kind, as_of, outcome, each step's counts, the lake-wide
health alerts and the report path. No memory text and no ids of agents or users leave the lake
this way. Each attempt has a timeout, failed attempts are retried with a backoff, and all attempts
together are bounded in time; whatever happens, the step reports it and never raises, so a dead
endpoint never fails or blocks a run.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from typing import Any

from ..store import InputError, Policy, StepReport, check_resolved_host, check_url, iso, within
from .health import latest_health

WEBHOOK_ENV = "MEMORY_LAKE_WEBHOOK_URL"


def webhook_url(policy: Policy, url: str | None = None) -> str:
    """Where to POST: the argument, else $MEMORY_LAKE_WEBHOOK_URL, else ``[notify] webhook_url``
    ("" when none is set: notifications are off)."""
    return (url or os.environ.get(WEBHOOK_ENV) or policy.notify.webhook_url or "").strip()


# What the webhook URL is called in messages: the URL itself is never printed or stored (a
# Slack-style hook's path is its secret).
_WEBHOOK = "the webhook URL"
_WEBHOOK_SETTING = f"[notify] webhook_url or ${WEBHOOK_ENV}"


def check_webhook_url(url: str) -> None:
    """Raise InputError (exit 2, the URL left out) unless `url` is http(s) with a host that is not a
    link-local address (169.254.0.0/16, fe80::/10: cloud metadata services live there); the rule is
    ``store.check_url``'s, the LLM summariser's URL follows it too."""
    check_url(url, _WEBHOOK, setting=_WEBHOOK_SETTING, secret="a hook's URL can hold its secret")


def run_payload(lake, as_of: datetime, run_id: str, steps: list[dict[str, Any]], kind: str = "nightly",
                error: BaseException | None = None) -> dict[str, Any]:
    """The notification body: ids, counts, alerts and the report path only."""
    report = next((s["details"].get("path") for s in steps if s["name"] == "write_report"), None)
    publish = next((s["details"] for s in steps if s["name"] in ("publish_export", "publish")), {})
    health = latest_health(lake)
    alerts = []
    if health is not None and health.get("overall") and health["as_of"] == iso(as_of):
        alerts = [{"level": a.get("level"), "message": a.get("message")} for a in health["overall"]["alerts"]]
    outcome = "failed" if error is not None else run_status(steps)
    body = {"run_id": run_id, "kind": kind, "as_of": iso(as_of), "outcome": outcome,
            "counts": {s["name"]: s["counts"] for s in steps},
            "alerts": alerts, "publish_version": publish.get("version"), "report": report}
    errors = [e for s in steps for e in s.get("errors") or []]
    if errors:  # a degraded run: the step, the scope and the error's kind (its message may quote data)
        body["step_errors"] = [{"step": e["step"], **{k: e.get(k) for k in ("tenant", "agent_id", "user_id",
                                                                            "session_id")},
                                "error": e["error"].split(":", 1)[0]} for e in errors]
    if error is not None:
        body["failed_step"] = getattr(error, "failed_step", None)
        body["error"] = type(error).__name__  # the message may quote data: only the error's kind leaves
    return body


def post_json(url: str, body: dict[str, Any], *, timeout_s: float, retries: int, backoff_s: float,
              max_total_s: float) -> dict[str, Any]:
    """POST `body` until an endpoint answers 2xx, at most 1 + `retries` attempts within `max_total_s`;
    returns ``{"status": "sent" | "failed", "attempts", "http_status", "error"}``, never raises."""
    try:
        check_webhook_url(url)
        check_resolved_host(url, _WEBHOOK)  # a name is refused as its link-local address would be
    except InputError as exc:
        return {"status": "failed", "attempts": 0, "http_status": None, "error": str(exc)}
    except OSError as exc:  # the name does not resolve: an attempt would fail the same way
        return {"status": "failed", "attempts": 0, "http_status": None, "error": f"{type(exc).__name__}: {exc}"}
    data = json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")
    deadline = time.monotonic() + max_total_s
    attempts, http_status, error = 0, None, None
    for attempt in range(1 + max(0, retries)):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        attempts += 1
        request = urllib.request.Request(url, data=data, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "User-Agent": "memory-lake"})
        try:
            http_status = within(lambda: _post(request, min(timeout_s, left)), min(timeout_s, left))
            return {"status": "sent", "attempts": attempts, "http_status": http_status, "error": None}
        except urllib.error.HTTPError as exc:
            http_status, error = exc.code, f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError, ValueError) as exc:  # refused, timeout, bad URL
            reason = getattr(exc, "reason", exc)
            http_status, error = None, f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
        pause = backoff_s * (2 ** attempt)
        if attempt < retries and time.monotonic() + pause < deadline:
            time.sleep(pause)
        elif attempt < retries:
            break  # no time left for another attempt after the pause
    return {"status": "failed", "attempts": attempts, "http_status": http_status, "error": error}


def _post(request: urllib.request.Request, timeout_s: float) -> int:
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        response.read()
        return response.status


def notify(lake, as_of: datetime, run_id: str, steps: list[dict[str, Any]], *, kind: str = "nightly",
           error: BaseException | None = None, url: str | None = None, policy: Policy | None = None) -> StepReport:
    """Tell the webhook how the run went (see the module docstring); a failure to deliver is a
    warning in the step's details (and on stderr), never an exception."""
    policy = policy or lake.policy
    report = StepReport("notify", as_of, run_id)
    target = webhook_url(policy, url)
    if not target:
        report.details = {"status": "off", "reason": f"no webhook set ([notify] webhook_url or ${WEBHOOK_ENV})"}
        return report
    try:
        body = run_payload(lake, as_of, run_id, steps, kind, error)
    except Exception as exc:  # noqa: BLE001 - a notification never fails a run
        body = {"run_id": run_id, "kind": kind, "as_of": iso(as_of), "outcome": "failed" if error else "unknown",
                "counts": {}, "alerts": [], "report": None, "note": f"summary unavailable: {type(exc).__name__}"}
    n = policy.notify
    result = post_json(target, body, timeout_s=n.timeout_s, retries=n.retries, backoff_s=n.backoff_s,
                       max_total_s=n.max_total_s)
    report.counts = {"sent": int(result["status"] == "sent"), "attempts": result["attempts"]}
    report.details = {**result, "outcome": body["outcome"]}
    if result["status"] != "sent":
        warning = (f"warning: webhook not delivered after {result['attempts']} attempt(s): {result['error']}; "
                   f"the run itself is unaffected")
        report.details["warning"] = warning
        print(warning, file=sys.stderr)
    return report


def run_status(steps: list[dict[str, Any]]) -> str:
    """ok; blocked when the publish was blocked by a failed check; degraded when a step skipped a
    scope (or itself) because it raised, and the run published the rest."""
    blocked = any(s["name"] in ("publish_export", "publish") and s["details"].get("status") == "blocked" for s in steps)
    if blocked:
        return "blocked"
    return "degraded" if any(s.get("errors") for s in steps) else "ok"
