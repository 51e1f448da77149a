"""The Chroma target: a collection of a ``PersistentClient`` (a folder, no server), cosine space,
created without an embedding function: the lake passes every vector itself, so Chroma never loads
(or downloads) a model. A record's document is ``content``; its metadata the row's metadata
(`rows.METADATA_COLUMNS`); Chroma drops a metadata key whose value is None (a scope without an
agent or a user), which reads back as None."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .rows import HELD_COLUMNS, HELD_SCHEMA, METADATA_COLUMNS, ROW_COLUMNS

# Records per page when reading a collection back.
GET_PAGE = 5000


class ChromaTarget:
    """A Chroma collection in the persistent client at `path`."""

    kind = "chroma"

    def __init__(self, name: str, path: Path, collection: str):
        import chromadb
        from chromadb.config import Settings

        self.name, self.collection_name = name, collection
        self._client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))

    def _collection(self, create: bool = False):
        if create:
            return self._client.get_or_create_collection(self.collection_name, embedding_function=None,
                                                         metadata={"hnsw:space": "cosine"})
        if self.collection_name not in {c.name for c in self._client.list_collections()}:
            return None
        return self._client.get_collection(self.collection_name, embedding_function=None)

    def _pages(self, collection, include: list[str]):
        offset = 0
        while True:
            page = collection.get(include=include, limit=GET_PAGE, offset=offset)
            yield page
            if len(page["ids"]) < GET_PAGE:
                return
            offset += GET_PAGE

    def held(self) -> pl.DataFrame:
        collection = self._collection()
        if collection is None:
            return pl.DataFrame(schema=HELD_SCHEMA)
        ids, metadatas = [], []
        for page in self._pages(collection, ["metadatas"]):
            ids += page["ids"]
            metadatas += [m or {} for m in page["metadatas"]]
        return pl.DataFrame({"id": ids, **{c: [m.get(c) for m in metadatas] for c in HELD_COLUMNS[1:]}},
                            schema=HELD_SCHEMA, strict=False)

    def dimension(self) -> int | None:
        collection = self._collection()
        if collection is None:
            return None
        first = collection.get(limit=1, include=["embeddings"])["embeddings"]
        return None if first is None or len(first) == 0 else len(first[0])

    def write(self, rows: pl.DataFrame) -> None:
        collection = self._collection(create=True)
        collection.upsert(ids=rows["id"].to_list(), embeddings=rows["vector"].to_list(),
                          documents=rows["content"].to_list(),
                          metadatas=rows.select(METADATA_COLUMNS).to_dicts())

    def delete(self, ids: list[str]) -> None:
        collection = self._collection()
        if collection is not None and ids:
            collection.delete(ids=ids)

    def dump(self) -> pl.DataFrame:
        collection = self._collection()
        if collection is None:
            return pl.DataFrame(schema={c: pl.String for c in ROW_COLUMNS})
        ids, vectors, documents, metadatas = [], [], [], []
        for page in self._pages(collection, ["embeddings", "documents", "metadatas"]):
            ids += page["ids"]
            vectors += [list(map(float, v)) for v in page["embeddings"]] if len(page["ids"]) else []
            documents += page["documents"]
            metadatas += [m or {} for m in page["metadatas"]]
        frame = pl.DataFrame({"id": ids, "vector": pl.Series(vectors, dtype=pl.List(pl.Float32)), "content": documents,
                              **{c: [m.get(c) for m in metadatas] for c in METADATA_COLUMNS}}, strict=False)
        return frame.select(ROW_COLUMNS).sort("id")

    def close(self) -> None:
        self._client = None
