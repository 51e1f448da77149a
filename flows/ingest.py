"""Scheduled ingest: take every complete snapshot from the lake's inbox into the lake.

The flow only wires the library step; run it with `memory-lake ingest` for the same result
without Prefect.
"""

from __future__ import annotations

from prefect import flow, task

from memory_lake import Lake
from memory_lake.clock import iso, resolve_as_of


@task(name="ingest", retries=2, retry_delay_seconds=30)
def ingest(lake_dir: str, as_of: str) -> dict:
    """Ingest the inbox; returns the ingest report (JSON-ready)."""
    return Lake.open(lake_dir).ingest(as_of=as_of).as_dict()


@flow(name="ingest-inbox", log_prints=True)
def ingest_inbox(lake_dir: str = "lake", as_of: str | None = None) -> dict:
    """Ingest every complete snapshot waiting in `<lake_dir>/inbox` (as_of: now, taken once)."""
    as_of = iso(resolve_as_of(as_of))
    report = ingest(lake_dir, as_of)
    print(f"ingested {report['ingested']} new, {report['updated']} updated, "
          f"{report['quarantined']} quarantined from {report['files']} file(s)")
    return report
