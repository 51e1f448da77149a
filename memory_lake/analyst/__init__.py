"""The analyst's read API (issue 39): `open_lake(path, at=...)` gives the lake's tables as DuckDB
relations (``.pl()`` for Polars), live or as a published version, and says which it read."""

from __future__ import annotations

from .view import HEALTH_COLUMNS, INDEX_TABLES, LakeView, open_lake

__all__ = ["open_lake", "LakeView", "HEALTH_COLUMNS", "INDEX_TABLES"]
