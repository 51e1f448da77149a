"""The row a target holds, shared by the sync (``base.py``) and every store's adapter: one row per
published memory, keyed by its id, with its vector, its text and the metadata below."""

from __future__ import annotations

import polars as pl

# The metadata every row carries, in this order (created_at / updated_at as ISO 8601 UTC text;
# version: the memory's; export_version: the published version the row was last written from;
# digest: the SHA-256 of everything written but the export version).
METADATA_COLUMNS = ("tenant", "agent_id", "user_id", "tier", "type", "status", "created_at", "updated_at",
                    "version", "export_version", "digest")
# A row as the adapters receive it and `Target.dump` returns it (``vector``: a list of float32).
ROW_COLUMNS = ("id", "vector", "content", *METADATA_COLUMNS)
# What `Target.held` returns: enough to tell a row that changed, and the scope it belongs to.
HELD_COLUMNS = ("id", "version", "digest", "tenant", "agent_id", "user_id")
HELD_SCHEMA = {"id": pl.String, "version": pl.Int64, "digest": pl.String, "tenant": pl.String,
               "agent_id": pl.String, "user_id": pl.String}
