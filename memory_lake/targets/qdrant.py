"""The Qdrant target: local mode (``QdrantClient(path=...)``, a folder, no server) or a server URL.
A point's id must be an integer or a UUID, so it is the UUID a memory id hashes to (`point_ids`);
the payload holds the memory id (``memory_id``), ``content`` and the metadata
(`rows.METADATA_COLUMNS`). The collection compares vectors by cosine."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import polars as pl

from .rows import HELD_COLUMNS, HELD_SCHEMA, METADATA_COLUMNS, ROW_COLUMNS

# Points per page when reading a collection back.
SCROLL_PAGE = 1000
# The namespace of point ids (uuid5 of the memory id): a fixed value, so every sync names a memory alike.
POINT_NAMESPACE = uuid.UUID("6f1d3a52-8c4e-5b7a-9d21-3e8f0c6b4a17")


def point_ids(ids: pl.Series) -> list[str]:
    """The point id of each memory id: the UUID 5 of the id in POINT_NAMESPACE (stable everywhere).
    One call per id: Qdrant's client takes a list of ids and converts each point on its own anyway."""
    return [str(uuid.uuid5(POINT_NAMESPACE, i)) for i in ids.to_list()]


class QdrantTarget:
    """A Qdrant collection, in a local folder (`path`) or on a server (`url`)."""

    kind = "qdrant"

    def __init__(self, name: str, collection: str, *, path: Path | None = None, url: str | None = None,
                 api_key_env: str | None = None):
        from qdrant_client import QdrantClient

        self.name, self.collection = name, collection
        if url:
            self._client = QdrantClient(url=url, api_key=os.environ.get(api_key_env) if api_key_env else None)
        else:
            self._client = QdrantClient(path=str(path))

    def _exists(self) -> bool:
        return self._client.collection_exists(self.collection)

    def _scroll(self, payload, vectors: bool):
        offset = None
        while True:
            points, offset = self._client.scroll(self.collection, limit=SCROLL_PAGE, offset=offset,
                                                 with_payload=payload, with_vectors=vectors)
            yield from points
            if offset is None:
                return

    def held(self) -> pl.DataFrame:
        if not self._exists():
            return pl.DataFrame(schema=HELD_SCHEMA)
        keys = ["memory_id", *HELD_COLUMNS[1:]]
        payloads = [p.payload or {} for p in self._scroll(keys, False)]
        return pl.DataFrame({"id": [p.get("memory_id") for p in payloads],
                             **{c: [p.get(c) for p in payloads] for c in HELD_COLUMNS[1:]}},
                            schema=HELD_SCHEMA, strict=False)

    def dimension(self) -> int | None:
        if not self._exists():
            return None
        vectors = self._client.get_collection(self.collection).config.params.vectors
        return getattr(vectors, "size", None)

    def write(self, rows: pl.DataFrame) -> None:
        from qdrant_client import models

        if not self._exists():
            size = rows["vector"].list.len().first()
            self._client.create_collection(
                self.collection, vectors_config=models.VectorParams(size=size, distance=models.Distance.COSINE))
        payloads = rows.select(pl.col("id").alias("memory_id"), "content", *METADATA_COLUMNS).to_dicts()
        self._client.upsert(self.collection, wait=True, points=models.Batch(
            ids=point_ids(rows["id"]), vectors=rows["vector"].to_list(), payloads=payloads))

    def delete(self, ids: list[str]) -> None:
        from qdrant_client import models

        if not self._exists():
            return
        self._client.delete(self.collection, wait=True,
                            points_selector=models.PointIdsList(points=point_ids(pl.Series(ids, dtype=pl.String))))

    def dump(self) -> pl.DataFrame:
        if not self._exists():
            return pl.DataFrame(schema={c: pl.String for c in ROW_COLUMNS})
        points = list(self._scroll(True, True))
        payloads = [p.payload or {} for p in points]
        frame = pl.DataFrame({"id": [p.get("memory_id") for p in payloads],
                              "vector": pl.Series([p.vector for p in points], dtype=pl.List(pl.Float32)),
                              **{c: [p.get(c) for p in payloads] for c in ("content", *METADATA_COLUMNS)}},
                             strict=False)
        return frame.select(ROW_COLUMNS).sort("id")

    def close(self) -> None:
        self._client.close()
