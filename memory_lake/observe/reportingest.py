"""The report's "Ingest by format" section (issue 41): what this run's ingest read per format (files,
new, updated, unchanged, quarantined and why, skipped on purpose and of what kind), and what the
lake holds from each format over all its ingests (``ingested_files``)."""

from __future__ import annotations

from typing import Any, Mapping

import duckdb

# The formats' names as a reader knows them
FORMAT_NAMES = {"jsonl": "JSON Lines", "json": "save file (JSON)", "parquet": "Parquet", "mem0": "Mem0 export",
                "letta": "Letta passages", "zep": "Zep facts", "hottree": "hot-memory tree",
                "transcript": "chat transcript"}


def lake_formats(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Per format, over every ingest the lake recorded: files, records read, memories new and updated."""
    return [dict(zip(("format", "files", "records", "ingested", "updated", "quarantined"), row)) for row in con.execute(
        "SELECT format, count(*), sum(records), sum(ingested), sum(updated), sum(quarantined) FROM ingested_files "
        "GROUP BY format ORDER BY sum(ingested) DESC, format").fetchall()]


def ingest_tables(ingest: Mapping[str, Any] | None,
                  overall: list[dict[str, Any]]) -> tuple[str | None, list[tuple[str, list, list, list | None]]]:
    """The section's content as plain text: (a note or None, [(title, headers, rows, foot)]): this
    run's ingest per format (``ingest`` is its ``ingest --json`` document, None outside a run), then
    the lake's totals per format. A header is a name or (name, "num"); the report renders them."""
    tables: list[tuple[str, list, list, list | None]] = []
    formats = (ingest or {}).get("formats") or {}
    note = None
    if ingest is None:
        note = "No ingest in this page's run."
    elif not formats:
        note = "This run found nothing new to ingest."
    else:
        counted = ("files", "ingested", "updated", "unchanged", "quarantined")
        rows = [[FORMAT_NAMES.get(fmt, fmt), *(_int(row.get(k)) for k in counted),
                 ", ".join(f"{n} {reason}" for reason, n in (row.get("reasons") or {}).items()) or "—",
                 ", ".join(f"{n} {kind}" for kind, n in (row.get("skipped") or {}).items()) or "—"]
                for fmt, row in formats.items()]
        foot = ["total", *(_int(sum(int(r.get(k) or 0) for r in formats.values())) for k in counted), "", ""]
        tables.append(("This run", ["format", ("files", "num"), ("new", "num"), ("updated", "num"),
                                    ("unchanged", "num"), ("quarantined", "num"), "why quarantined",
                                    "skipped, not memories"], rows, foot))
    if overall:
        rows = [[FORMAT_NAMES.get(r["format"], r["format"]), *(_int(r[k]) for k in (
            "files", "records", "ingested", "updated", "quarantined"))] for r in overall]
        tables.append(("The lake, every ingest", ["format", ("files", "num"), ("records", "num"), ("new", "num"),
                                                   ("updated", "num"), ("quarantined", "num")], rows, None))
    return note, tables


def _int(value: Any) -> str:
    return f"{int(value or 0):,}"


__all__ = ["FORMAT_NAMES", "ingest_tables", "lake_formats"]
