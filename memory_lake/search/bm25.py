"""BM25 scoring (DESIGN "Search", mode ``keyword``) over token lists of `memory_lake.text.tokenize`.

``score(d) = sum over distinct query terms t of idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))``
with Lucene's non-negative ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``. ``N``, ``df`` and
``avgdl`` are taken over the documents given (the scope that is searched). A query term given twice
counts once: a search box query is a set of words.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

# BM25 parameters (the usual defaults of Robertson et al. and Lucene).
BM25_K1 = 1.2
BM25_B = 0.75


def bm25_scores(
    query_tokens: Sequence[str],
    docs_tokens: Sequence[Sequence[str]],
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> list[float]:
    """BM25 score of each document (one token list each) for the query tokens, in input order.

    Computed set-wise with Polars: the token lists are exploded, term frequencies counted per
    (document, term) with one group_by, document frequencies with a window, and the sum per
    document with expressions; no Python loop runs per document or term. A document that
    shares no term with the query scores 0.0.
    """
    n_docs = len(docs_tokens)
    terms = list(dict.fromkeys(t for t in query_tokens if t))
    if n_docs == 0:
        return []
    if not terms:
        return [0.0] * n_docs
    docs = pl.DataFrame(
        {"tokens": [list(tokens) for tokens in docs_tokens]}, schema={"tokens": pl.List(pl.String)}
    ).with_row_index("doc").with_columns(pl.col("tokens").list.len().alias("dl"))
    avgdl = docs["dl"].mean()
    if not avgdl:
        return [0.0] * n_docs
    tf = pl.col("tf").cast(pl.Float64)
    df = pl.col("df").cast(pl.Float64)
    idf = (1.0 + (n_docs - df + 0.5) / (df + 0.5)).log()
    norm = k1 * (1.0 - b + b * pl.col("dl").cast(pl.Float64) / avgdl)
    per_doc = (
        docs.select("doc", "dl", "tokens")
        .explode("tokens")
        .filter(pl.col("tokens").is_in(terms))
        .group_by("doc", "dl", "tokens")
        .agg(pl.len().alias("tf"))
        .with_columns(pl.col("doc").n_unique().over("tokens").alias("df"))
        .with_columns((idf * tf * (k1 + 1.0) / (tf + norm)).alias("part"))
        # A fixed summing order (by term) makes equal documents score bit-for-bit equal, so a
        # tie is broken by id, never by float noise.
        .sort("doc", "tokens")
        .group_by("doc", maintain_order=True)
        .agg(pl.col("part").sum().alias("score"))
    )
    scored = docs.select("doc").join(per_doc, on="doc", how="left").sort("doc")
    return scored["score"].fill_null(0.0).to_list()
