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

    @property
    def summary(self) -> str:
        return ", ".join(f"{v} {_counted(v, self.labels.get(k, k.replace('_', ' ')))}"
                         for k, v in self.counts.items()) or "nothing to do"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "as_of": iso(self.as_of), "run_id": self.run_id, "counts": self.counts,
                "details": self.details, "summary": self.summary}


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
