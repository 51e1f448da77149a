"""Scheduled ingest (the sync run): take every complete snapshot from the lake's inbox into the
lake, then index what is new (keyword postings and embeddings), so searches see it semantically
before the nightly run.

The flow only wires library steps; `memory-lake ingest` then `memory-lake index` give the same
result without Prefect.
"""

from __future__ import annotations

from prefect import flow, task

from memory_lake import Lake
from memory_lake.observe import lake_for_run
from memory_lake.store import iso, resolve_as_of


@task(name="ingest", retries=2, retry_delay_seconds=30)  # reads the inbox's files: the one I/O task
def ingest(lake_dir: str, as_of: str) -> dict:
    """Ingest the inbox; returns the ingest report (JSON-ready)."""
    return Lake.open(lake_dir).ingest(as_of=as_of).as_dict()


@task(name="index")
def index(lake_dir: str, as_of: str) -> dict:
    """Tokenise and embed new or changed content; returns the index report (JSON-ready)."""
    return Lake.open(lake_dir).index(as_of=as_of).as_dict()


@flow(name="ingest-inbox", log_prints=True)
def ingest_inbox(lake_dir: str, as_of: str | None = None) -> dict:
    """Ingest every complete snapshot waiting in `<lake_dir>/inbox`, then index (lake_dir: absolute
    path of an existing lake; as_of: now, taken once)."""
    lake_for_run(lake_dir)  # a relative or missing lake fails here, before any task
    as_of = iso(resolve_as_of(as_of))
    report = ingest(lake_dir, as_of)
    print(f"ingested {report['ingested']} new, {report['updated']} updated, "
          f"{report['quarantined']} quarantined from {report['files']} file(s)")
    indexed = index(lake_dir, as_of)
    print(f"indexed: {indexed['counts']['tokenized']} tokenised, {indexed['counts']['embedded']} embedded")
    report["index"] = indexed
    return report
