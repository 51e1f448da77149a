"""The LanceDB target (embedded: a folder, no server): one table whose columns are the row itself,
``id``, ``vector`` (a fixed-size float32 list, so LanceDB's vector search and indexes work on it),
``content`` and the metadata columns (`rows.ROW_COLUMNS`). Writes are a merge on ``id``; deletes a
predicate on ``id``."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .rows import HELD_COLUMNS, HELD_SCHEMA, ROW_COLUMNS

# Ids per delete predicate (`id IN (...)`): a bounded statement however many go.
DELETE_IDS = 500


class LanceDBTarget:
    """A LanceDB table at `path` (a folder LanceDB creates)."""

    kind = "lancedb"

    def __init__(self, name: str, path: Path, table: str):
        import lancedb

        self.name, self.table_name = name, table
        self._db = lancedb.connect(str(path))

    def _table(self):
        try:
            return self._db.open_table(self.table_name)
        except ValueError:  # LanceDB: "Table '...' was not found"
            return None

    def held(self) -> pl.DataFrame:
        table = self._table()
        if table is None:
            return pl.DataFrame(schema=HELD_SCHEMA)
        present = set(table.schema.names)
        columns = [c for c in HELD_COLUMNS if c in present]
        frame = pl.from_arrow(table.search().select(columns).limit(None).to_arrow())
        return frame.with_columns(pl.lit(None).alias(c) for c in HELD_COLUMNS if c not in present) \
                    .select(HELD_COLUMNS).cast(HELD_SCHEMA)

    def dimension(self) -> int | None:
        table = self._table()
        if table is None or "vector" not in table.schema.names:
            return None
        return getattr(table.schema.field("vector").type, "list_size", None)

    def write(self, rows: pl.DataFrame) -> None:
        data = _arrow(rows)
        table = self._table()
        if table is None:
            self._db.create_table(self.table_name, data=data)
            return
        table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)

    def delete(self, ids: list[str]) -> None:
        table = self._table()
        if table is None:
            return
        for start in range(0, len(ids), DELETE_IDS):
            quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ids[start:start + DELETE_IDS])
            table.delete(f"id IN ({quoted})")

    def dump(self) -> pl.DataFrame:
        table = self._table()
        if table is None:
            return pl.DataFrame(schema={c: pl.String for c in ROW_COLUMNS})
        frame = pl.from_arrow(table.search().select(list(ROW_COLUMNS)).limit(None).to_arrow())
        return frame.with_columns(pl.col("vector").cast(pl.List(pl.Float32))).sort("id")

    def close(self) -> None:
        self._db = None


def _arrow(rows: pl.DataFrame):
    """The rows as an Arrow table with a fixed-size vector column (LanceDB's vector type)."""
    import pyarrow as pa

    table = rows.select(ROW_COLUMNS).to_arrow()
    size = rows["vector"].list.len().first()
    values = pa.array(rows["vector"].explode().to_numpy(), type=pa.float32())
    vectors = pa.FixedSizeListArray.from_arrays(values, size)
    return table.set_column(table.schema.get_field_index("vector"), pa.field("vector", vectors.type), vectors)
