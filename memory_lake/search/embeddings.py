"""Embeddings: computed once per content hash and model, cached in the `embeddings` table, and
routed by language (issue 17).

The lake uses up to two models (`models(policy)`): ``[search] model`` (MiniLM by default, English)
and ``[search] multilingual_model`` (USE multilingual v3 by default, 16 languages, Chinese among
them); `memory_lake.text.models` loads them offline. Each text is embedded by every model
that *covers* it: the share of the model's unknown tokens in it is at most ``[search]
max_unknown_ratio``. A text a model does not cover gets a row with an empty vector and its
unknown share, so it is assessed once and never embedded by that model; a Chinese memory thus
has a USE vector and no MiniLM one, an English memory both.

The ``index`` step (`memory_lake.search.indexing`) embeds only what has no row for a model yet
(or an empty one that a raised ``max_unknown_ratio`` now covers), in batches, so re-running the
nightly flow on unchanged content computes nothing, and a model change re-embeds lazily (rows
are keyed by model). Coverage is measured with the model's own tokenizer before any vector is
computed (MiniLM: its Rust tokenizer; USE: counted during its own tokenisation).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl

from ..store import MemoryLakeError, transaction
from ..text import coverage_first as _coverage_first  # the name tests spy on
from ..text import PACKAGED_MODEL, ModelUnavailable, encode, get_provider, load_model, model_scripts, script_class
from ..text import embedding_models as models

__all__ = ["PACKAGED_MODEL", "ModelUnavailable", "models", "encode", "load_model", "embed_missing",
           "covered_sql"]

# With a progress callback, texts are encoded this many batches at a time (one report each).
EMBED_CHUNK_BATCHES = 16


def covered_sql(alias: str = "e") -> str:
    """SQL that is true where the embeddings row `alias` holds a vector the model may be trusted with
    (bind one parameter: ``max_unknown_ratio``)."""
    return f"(len({alias}.vector) > 0 AND {alias}.unknown_ratio <= ?)"


def embed_missing(con, model_names: tuple[str, ...] | str, as_of: datetime, batch_size: int, progress: bool,
                  on_progress: Callable[[str, int, int], None] | None = None,
                  max_unknown_ratio: float = 1.0) -> dict[str, Any]:
    """Embed, on the writer connection `con`, every content hash without a row for one of
    `model_names` (or with an empty row that `max_unknown_ratio` now covers), each model given
    only the texts it lacks; `on_progress("embedded", done, total)` hears each chunk of
    EMBED_CHUNK_BATCHES batches, counted in texts.

    Returns ``{"missing": texts, "embedded": texts, "models": {model: {"missing", "embedded",
    "not_covered", "embed_s"}}}`` (a text counts once however many models embed it) and a
    ``note`` per model that cannot be loaded (then that model embeds nothing and search says so)."""
    import time

    if isinstance(model_names, str):
        model_names = (model_names,)
    out: dict[str, Any] = {"missing": 0, "embedded": 0, "models": {}}
    if not model_names:
        return out
    for name in model_names:
        out["models"][name] = {"remeasured": _remeasure(con, name, max_unknown_ratio)}
    todo = _todo(con, model_names, max_unknown_ratio)
    out["missing"] = todo.height
    providers = {}
    for i, name in enumerate(model_names):
        wanted = int(todo[f"lacks{i}"].sum()) if todo.height else 0
        out["models"][name] = {"missing": wanted, "embedded": 0, "not_covered": 0, "embed_s": 0.0,
                               "remeasured": out["models"][name]["remeasured"]}
        if not wanted:
            continue
        try:
            providers[name] = get_provider(name)
        except ModelUnavailable as exc:
            out["models"][name]["note"] = str(exc)
    if todo.height == 0 or not providers:
        return out
    texts = todo["content"].to_list()
    lacking = [todo[f"lacks{i}"].to_list() for i in range(len(model_names))]
    chunk = batch_size * EMBED_CHUNK_BATCHES if on_progress else len(texts)
    results: dict[str, tuple[list[int], list[Any], list[float]]] = {name: ([], [], []) for name in providers}
    embedded_any = np.zeros(len(texts), dtype=bool)
    for start in range(0, len(texts), chunk):
        stop = min(start + chunk, len(texts))
        for i, name in enumerate(model_names):
            if name not in providers:
                continue
            rows = [r for r in range(start, stop) if lacking[i][r]]
            if not rows:
                continue
            started = time.perf_counter()
            try:
                part = _coverage_first(providers[name], [texts[r] for r in rows], batch_size, max_unknown_ratio)
            except (MemoryLakeError, ModelUnavailable):
                raise
            except Exception:
                # one text the model cannot take must not cost the others theirs: text by text, and
                # a text that raises is left without a vector (the next run tries it again)
                rows, part = _one_by_one(providers[name], rows, texts, batch_size, max_unknown_ratio,
                                         name, hashes_of=todo["text_hash"], failures=out.setdefault("failures", []))
            out["models"][name]["embed_s"] += time.perf_counter() - started
            kept = results[name]
            kept[0].extend(rows)
            kept[1].extend(part.vectors)
            kept[2].extend(part.unknown.tolist())
            embedded_any[[r for r, v in zip(rows, part.vectors) if v is not None]] = True
        if on_progress:
            on_progress("embedded", stop, len(texts))
    hashes = todo["text_hash"]
    with transaction(con):
        for name, (rows, vectors, unknown) in results.items():
            frame = _rows_frame(hashes.gather(rows), vectors, unknown)
            con.register("new_embeddings", frame)
            try:
                # an empty row that the current ratio covers is replaced by the real vector
                con.execute("DELETE FROM embeddings WHERE model = ? AND text_hash IN (SELECT text_hash FROM new_embeddings)",
                            [name])
                con.execute("INSERT INTO embeddings SELECT text_hash, ?, vector, unknown_ratio, ? FROM new_embeddings",
                            [name, as_of])
            finally:
                con.unregister("new_embeddings")
            report = out["models"][name]
            report["not_covered"] = sum(1 for v in vectors if v is None)
            report["embedded"] = len(rows) - report["not_covered"]
            report["embed_s"] = round(report["embed_s"], 3)
    out["embedded"] = int(embedded_any.sum())
    return out


def _one_by_one(provider, rows: list[int], texts: list[str], batch_size: int, max_unknown_ratio: float, name: str,
                hashes_of: pl.Series, failures: list) -> tuple[list[int], Any]:
    """`_coverage_first` text by text: the rows that embedded and their results; each text that
    raises goes to `failures` as (text hash, what, exception)."""
    kept_rows, vectors, unknown = [], [], []
    for r in rows:
        try:
            one = _coverage_first(provider, [texts[r]], batch_size, max_unknown_ratio)
        except (MemoryLakeError, ModelUnavailable):
            raise
        except Exception as exc:
            failures.append((hashes_of[r], f"embedding with {name}", exc))
            continue
        kept_rows.append(r)
        vectors.extend(one.vectors)
        unknown.extend(one.unknown.tolist())
    return kept_rows, SimpleNamespace(vectors=vectors, unknown=np.asarray(unknown, dtype=np.float64))


def _rows_frame(hashes: pl.Series, vectors: list[Any], unknown: list[float]) -> pl.DataFrame:
    """(text_hash, vector, unknown_ratio) rows: a vector where the model covers the text, else []."""
    frame = pl.DataFrame({"text_hash": hashes, "unknown_ratio": pl.Series(unknown, dtype=pl.Float64),
                          "i": pl.int_range(0, hashes.len(), eager=True)})
    covered = [i for i, v in enumerate(vectors) if v is not None]
    parts = []
    if covered:
        matrix = np.stack([vectors[i] for i in covered]).astype(np.float32)
        parts.append(pl.DataFrame({"i": pl.Series(covered, dtype=pl.Int64),
                                   "vector": pl.Series(matrix).cast(pl.List(pl.Float32))}))
    missing = [i for i, v in enumerate(vectors) if v is None]
    if missing:
        parts.append(pl.DataFrame({"i": pl.Series(missing, dtype=pl.Int64),
                                   "vector": pl.Series([[] for _ in missing], dtype=pl.List(pl.Float32))}))
    vectors_frame = pl.concat(parts)
    return (frame.with_columns(pl.col("i").cast(pl.Int64)).join(vectors_frame, on="i")
            .sort("i").select("text_hash", "vector", "unknown_ratio"))


def _remeasure(con, name: str, max_unknown_ratio: float) -> int:
    """Empty the vectors `name` holds for texts mostly written in a script it does not read (rows
    a lake stored before the script check: MiniLM vectors of short Chinese texts its tokenizer
    half knew), keeping the share, as the index would write them now; how many. One SQL pass over
    the texts holding a letter outside those scripts (100,000 Chinese texts: about 0.1 s), so an
    index run on unchanged content stays cheap."""
    scripts = model_scripts(name)
    if scripts is None:
        return 0
    rows = con.execute(
        rf"""
        UPDATE embeddings SET vector = []::FLOAT[], unknown_ratio = s.share
        FROM (SELECT content_hash AS text_hash,
                     max(1 - length(regexp_replace(content, '[^{script_class(scripts)[1:-1]}]', '', 'g'))
                             / length(regexp_replace(content, '[^\p{{L}}]', '', 'g'))) AS share
              FROM memories
              WHERE regexp_matches(content, '[^{script_class(scripts)[1:-1]}\P{{L}}]')  -- a letter outside
              GROUP BY content_hash) s
        WHERE embeddings.text_hash = s.text_hash AND embeddings.model = ? AND len(embeddings.vector) > 0
          AND s.share > ?
        """, [name, max_unknown_ratio]).fetchone()
    return int(rows[0]) if rows else 0


def _todo(con, model_names: tuple[str, ...], max_unknown_ratio: float) -> pl.DataFrame:
    """Content hashes (with one content each) that lack a row for some model; ``lacks<i>`` says which."""
    lacks = ", ".join(
        f"NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash = c.text_hash AND e.model = $m{i} "
        f"AND (len(e.vector) > 0 OR e.unknown_ratio > $ratio)) AS lacks{i}" for i in range(len(model_names)))
    return con.execute(
        f"""
        WITH c AS (SELECT content_hash AS text_hash, any_value(content ORDER BY id) AS content FROM memories
                   WHERE status <> 'deleted' AND content <> '' GROUP BY content_hash),
        l AS (SELECT text_hash, content, {lacks} FROM c)
        SELECT * FROM l WHERE {" OR ".join(f"lacks{i}" for i in range(len(model_names)))} ORDER BY text_hash
        """,
        {"ratio": max_unknown_ratio} | {f"m{i}": name for i, name in enumerate(model_names)},
    ).pl()
