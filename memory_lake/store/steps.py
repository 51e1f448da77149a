"""What every pipeline step returns, and helpers steps share.

A step is a plain function ``step(lake, as_of, policy, run_id) -> StepReport``: callable from a
test, a notebook, the CLI or a Prefect task, never reading the clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import polars as pl

from .clock import iso
from .policy import Policy


@dataclass
class StepReport:
    """The outcome of one step: counts for dashboards, details for people."""

    name: str
    as_of: datetime
    run_id: str
    counts: dict[str, int] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    # how a count reads in the summary when its key alone would mislead ("missing": "missing before")
    labels: dict[str, str] = field(default_factory=dict)
    # what the step skipped because it raised (a scope, a summary key): `step_error` entries; the
    # run records them (`step_errors`) and ends degraded instead of failed
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def summary(self) -> str:
        text = ", ".join(f"{v} {_counted(v, self.labels.get(k, k.replace('_', ' ')))}"
                         for k, v in self.counts.items()) or "nothing to do"
        if self.errors:
            text += f"; {len(self.errors)} skipped after an error ({describe_error(self.errors[0])}" + \
                    (f" and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ")")
        return text

    def as_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "as_of": iso(self.as_of), "run_id": self.run_id, "counts": self.counts,
               "details": self.details, "summary": self.summary}
        if self.errors:
            out["errors"] = self.errors
        return out


SCOPE_FIELDS = ("tenant", "agent_id", "user_id", "session_id")


def step_error(step: str, exc: BaseException, item: str | None = None, **scope: Any) -> dict[str, Any]:
    """What a step records when one scope (or one item of it) raised, instead of failing the run:
    the step, the scope (tenant, agent_id, user_id, session_id; None where not known), the item, the
    error as one line and its traceback."""
    import traceback

    message = (str(exc).strip().splitlines() or [""])[0][:500]
    return {"step": step, **{k: scope.get(k) for k in SCOPE_FIELDS}, "item": item,
            "error": f"{type(exc).__name__}: {message}" if message else type(exc).__name__,
            "traceback": "".join(traceback.format_exception(exc))}


def error_scope(error: dict[str, Any]) -> str:
    """``acme/bot/u1``: the scope a step error names, or "" when it names none (the whole step)."""
    return "/".join(str(error[k]) for k in ("tenant", "agent_id", "user_id") if error.get(k) is not None)


def describe_error(error: dict[str, Any]) -> str:
    """``scope acme/bot/u1 session s1: OverflowError: ...`` (or ``the whole step: ...``)."""
    scope = error_scope(error)
    where = f"scope {scope}" if scope else "the whole step"
    if error.get("session_id"):
        where += f" session {error['session_id']}"
    if error.get("item"):
        where += f" ({error['item']})"
    return f"{where}: {error['error']}"


_SINGULAR = {"memories": "memory", "summaries": "summary", "entities": "entity", "copies": "copy"}


def _counted(n: int, label: str) -> str:
    """`label` read after the count `n`: a leading plural noun is singular after 1 ("1 tenant",
    "1 file", "1 memory"), other labels ("1 merged exact", "1 missing before") as they are."""
    if n != 1:
        return label
    first, space, rest = label.partition(" ")
    if first in _SINGULAR:
        first = _SINGULAR[first]
    elif len(first) > 3 and first.endswith("s") and not first.endswith(("ss", "us", "is")):
        first = first[:-1]
    return first + space + rest


def tenant_limits(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    """Temp table ``tenant_limits(tenant, working, short_term)``: each tenant's capacities, with
    its own overrides from the policy (seed 000 lists fixed capacities as a limitation; ours vary)."""
    tenants = [t for (t,) in con.execute("SELECT DISTINCT tenant FROM memories").fetchall()]
    rows = []
    for tenant in tenants:
        tiers = policy.for_tenant(tenant).tiers
        rows.append((tenant, tiers.working_capacity, tiers.short_term_capacity))
    frame = pl.DataFrame(rows, schema={"tenant": pl.String, "working": pl.Int64, "short_term": pl.Int64}, orient="row")
    con.register("tenant_limits_frame", frame)
    con.execute("CREATE OR REPLACE TEMP TABLE tenant_limits AS SELECT * FROM tenant_limits_frame")
    con.unregister("tenant_limits_frame")
