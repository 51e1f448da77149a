"""The report's first line, "is everything fine?" (`verdict`), and which alerts to act on
(`alert_groups`: the lake's, then a tenant's only where it adds a condition the lake's do not name)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _get(data: Mapping[str, Any] | None, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def verdict(run: Mapping[str, Any], publish: Mapping[str, Any] | None, health: Mapping[str, Any]) -> tuple[str, str]:
    """The page's first line, answering "is everything fine?": (css class good|warn|bad, text)."""
    status = str(run.get("status", "ok"))
    alerts = _all_alerts(health)
    warnings = [a for _, a in alerts if a.get("level") == "warning"]
    infos = len(alerts) - len(warnings)
    if publish and publish.get("status") == "blocked":
        failed = ", ".join(publish.get("failed") or []) or "a data check"
        current = publish.get("current") or "nothing (no version published yet)"
        return "bad", (f"✗ Publish blocked: {failed} failed. Agents keep reading {current}; "
                       "the checks are under Publish below.")
    if status == "failed":
        return "bad", "✗ The run failed: see the steps below."
    if status == "degraded":
        errors = sum(len(s.get("errors") or []) for s in run.get("steps") or [])
        return "warn", (f"⚠ Degraded: {errors} scope(s) or step(s) skipped after an error; everything else ran and "
                        "published. See “Skipped after an error”.")
    version = (publish or {}).get("version")
    outside = run.get("steps_of") or not run.get("steps")  # rendered outside a run (memory-lake report)
    if outside:
        current = (publish or {}).get("current")
        published = f"Agents read {current}" if current else "Nothing is published yet"
    else:
        published = "Run " + (f"published {version}" if version else
                              f"nothing new to publish ({(publish or {}).get('current') or 'no version yet'})"
                              if publish else "no publish in this run")
    if warnings:
        first = str(warnings[0].get("message", ""))
        more = f" (+{len(warnings) - 1} more)" if len(warnings) > 1 else ""
        return "warn", f"⚠ {len(warnings)} warning(s) need attention: {first}{more}. {published}."
    note = f"; {infos} note(s) for information" if infos else ""
    if outside:
        return "good", f"✓ No warning{note}. {published}."
    return "good", f"✓ All fine: the {published[0].lower()}{published[1:]}, no warning{note}."


def _all_alerts(health: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The alerts to act on: the lake's, then a tenant's whose condition the lake's do not already
    name (`alert_groups`)."""
    return alert_groups(health)[0]


def alert_groups(health: Mapping[str, Any]) -> tuple[list[tuple[str, Mapping[str, Any]]], list[tuple[str, Mapping[str, Any]]]]:
    """(alerts to act on, the same conditions per tenant). The lake-wide alerts sum their tenants'
    (13 scopes above 85 % = 5 + 4 + 4), so a tenant's alert of a condition the lake's alerts
    already name repeats it; a condition only a tenant has (its hit rate alone is low) is its own."""
    def family(alert: Mapping[str, Any]) -> str | None:
        code = alert.get("code")
        return str(code).removesuffix("_scopes") if code else None

    main: list[tuple[str, Mapping[str, Any]]] = [("overall", a) for a in _get(health, "overall", "alerts") or []]
    named = {family(a) for _, a in main} - {None}
    repeated: list[tuple[str, Mapping[str, Any]]] = []
    for tenant, stats in (health.get("tenants") or {}).items():
        for alert in stats.get("alerts") or []:
            (repeated if family(alert) in named else main).append((tenant, alert))
    return main, repeated
