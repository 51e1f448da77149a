"""The in-memory index of one searched scope, and the process-wide cache that keeps it between searches.

A search loads its scope once from the lake (rows, the index's postings and vectors, see
`memory_lake.search.indexing`) into arrays, and scores every row with NumPy and SciPy:

* **keyword**: BM25 (`search.bm25`'s formula: Lucene's idf, k1 = 1.2, b = 0.75) over the scope's
  documents. A document is a memory together with the ``context_window`` memories before and after
  it in its session (time order), so a reply that names neither the question nor the speaker is
  still found, while what is returned is the memory itself. With ``A`` the scope's band matrix
  (1 where two memories are within the window of each other in one session, and on the diagonal)
  and ``M`` the memory-by-term counts, the documents' counts are ``A @ M`` and their lengths
  ``A @ lengths``; N, document frequencies and the average length are the scope's.
* **semantic**: the dot product of the stored L2-normalised vectors with the query's (= cosine),
  only within one model's space (issue 17). The scope holds one vector set per model (a model's
  vectors only where it covers the memory's language); each memory is scored by the first model,
  in the policy's order, that covers both it and the query, so an English query meets English
  memories through MiniLM and Chinese ones through the multilingual model, and a Chinese query
  meets every memory through the multilingual model. Each model's cosine is read against its own
  relevance floor: ``(cosine - floor) / (1 - floor)``, then min-max scaled over the scope (for one
  model alone this is the plain min-max of its cosines).
* **relevance floor**: only a memory with evidence of relevance is ranked at all: a raw keyword
  match, or a raw cosine >= ``min_cosine`` (close to the evidence that makes a search a "hit",
  DESIGN "Search"; cosine counts only where the model covers the query's language). Min-max
  scaling and the weighted sum rank memories; they cannot tell that nothing matched.
* **conflicts**: each row carries its ``status`` and ``conflict_with``, the other side(s) of its
  open contradictions (`conflicts.CONTRADICTION_PARTNERS_SQL`), so no result hides a dispute.

Content ingested since the last ``index`` run has no postings yet: it is tokenised while loading.

**Cache.** Loading costs one read of the scope; scoring a loaded scope costs a few milliseconds.
An agent searches the same scope again and again, so loaded scopes are kept per process, keyed by
the identity of what was read: the live database file and its write-ahead log (inode, size,
modification time), or the published version read while a run holds the lake. Any write changes
that identity, so a cached scope is never stale: the next search after a write loads again. The
cache holds at most ``search.cache_rows`` rows (least recently used scopes go first; 0 disables it).
Search stays read-only and never holds the lake between searches: a cache hit does not open it.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..maintain import CONTRADICTION_PARTNERS_SQL
from ..text import TOKENIZER_VERSION, term_counts
from .bm25 import BM25_B, BM25_K1

# Columns a search returns or scores; `session_id` orders the neighbours.
COLUMNS = ("id", "content", "tier", "type", "tags", "created_at", "importance", "source",
           "tenant", "agent_id", "user_id", "status", "last_accessed_at", "session_id", "content_hash")
# Columns of `conflicts` that CONTRADICTION_PARTNERS_SQL reads (a published version may predate them).
CONFLICT_COLUMNS = {"memory_id", "other_memory_id", "status", "kind"}
# Ties are broken by id; rounding the sort key keeps float noise from deciding a tie.
TIE_DIGITS = 12
# In a hybrid search with a query vector, a word found in more than this share of the scope's
# documents is no evidence of relevance by itself ("user" in "where does the user live", when
# every memory says "User ..."): it still scores, but only a rarer word or the cosine admits a row.
COMMON_TERM_SHARE = 0.5


@dataclass
class Scored:
    """The best rows of one search: their positions in the scope and every part of their score."""

    rows: list[dict[str, Any]]
    keyword_raw: np.ndarray
    keyword: np.ndarray
    cosine: np.ndarray        # NaN where the memory has no vector
    semantic: np.ndarray
    recency: np.ndarray
    importance: np.ndarray
    score: np.ndarray
    model: list[str | None] | None = None  # the model whose cosine scored each row (None: none)
    scored_by: dict[str, int] | None = None  # per model, how many memories of the scope it scored


class ScopeIndex:
    """One scope, loaded: its rows in session order, the documents' term counts, their lengths and
    the memories' vectors. Built by :func:`load_scope`; read-only afterwards (threads may share it)."""

    def __init__(self, rows: pl.DataFrame, doc_terms, vocabulary: dict[str, int], lengths: np.ndarray,
                 spaces: dict[str, tuple[np.ndarray, np.ndarray]], conflicts_known: bool = True):
        self.rows = rows
        self.conflicts_known = conflicts_known  # False: what was read had no conflicts table
        self.size = rows.height
        self.ids = rows["id"].to_numpy()
        self.doc_terms = doc_terms          # scipy CSC, documents x terms
        self.vocabulary = vocabulary
        self.lengths = lengths              # document lengths (with the neighbours)
        self.avgdl = float(lengths.mean()) if self.size else 0.0
        # per model, first choice first: (its vectors: rows with one x dimensions, float32; which rows)
        self.spaces = spaces
        any_vector = np.zeros(self.size, dtype=bool)
        for _, has in spaces.values():
            any_vector |= has
        self.with_vectors = int(any_vector.sum())
        accessed = rows["last_accessed_at"]
        self.accessed_s = (accessed.dt.epoch("us").cast(pl.Float64) / 1e6).to_numpy()  # NaN where null
        self.importance = rows["importance"].fill_null(0.0).cast(pl.Float64).to_numpy()

    @property
    def cost(self) -> int:
        return max(self.size, 1)

    # ------------------------------------------------------------------ scoring
    def bm25(self, tokens: list[str]) -> np.ndarray:
        """BM25 of every document for the distinct query tokens (summed in term order)."""
        scores = np.zeros(self.size)
        if not self.size or not self.avgdl:
            return scores
        indptr, indices, data = self.doc_terms.indptr, self.doc_terms.indices, self.doc_terms.data
        for term in sorted(set(tokens)):
            column = self.vocabulary.get(term)
            if column is None:
                continue
            docs = indices[indptr[column]:indptr[column + 1]]
            tf = data[indptr[column]:indptr[column + 1]]
            df = len(docs)
            idf = math.log(1.0 + (self.size - df + 0.5) / (df + 0.5))
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self.lengths[docs] / self.avgdl)
            scores[docs] += idf * tf * (BM25_K1 + 1.0) / (tf + norm)
        return scores

    def distinctive_match(self, tokens: list[str]) -> np.ndarray:
        """Whether each document holds a query word that at most ``COMMON_TERM_SHARE`` of the
        documents hold."""
        found = np.zeros(self.size, dtype=bool)
        indptr, indices = self.doc_terms.indptr, self.doc_terms.indices
        for term in set(tokens):
            column = self.vocabulary.get(term)
            if column is None:
                continue
            docs = indices[indptr[column]:indptr[column + 1]]
            if len(docs) <= COMMON_TERM_SHARE * self.size:
                found[docs] = True
        return found

    def cosines(self, query_vectors: dict[str, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
        """(cosine, model index) of every memory with the query: the cosine in the first space (in
        the policy's order) where both the memory and the query have a vector; NaN and -1 where
        none has. `query_vectors` maps a model to the query's vector in its space."""
        out = np.full(self.size, np.nan)
        which = np.full(self.size, -1)
        for index, (model, (vectors, has)) in enumerate(self.spaces.items()):
            vector = (query_vectors or {}).get(model)
            if vector is None or not has.any():
                continue
            free = has & (which < 0)
            if not free.any():
                continue
            vector = np.asarray(vector, dtype=np.float32)
            if free.sum() == len(vectors):
                out[free] = vectors @ vector
            else:  # only the rows no earlier space scored (often a few of a large scope)
                out[free] = vectors[np.cumsum(has)[free] - 1] @ vector
            which[free] = index
        return out, which

    def rank(self, tokens: list[str], query_vectors: dict[str, np.ndarray] | None, mode: str, limit: int, policy,
             when: datetime, floors: dict[str, float] | None = None) -> Scored:
        """The best `limit` rows, best first then by id.

        keyword: BM25 / the best BM25 of the scope; semantic: cosine min-max scaled over the
        scope's vectors; recency: 0.5 ** (days since last access / half-life), 1 when never
        accessed; importance as stored. Keyword mode ranks by keyword alone, semantic by semantic
        alone, hybrid by the weighted sum (weights from the policy, the seed's 0.4 / 0.4 / 0.1 / 0.1
        by default). Only rows with evidence of relevance are ranked: a keyword match (keyword,
        hybrid) or a raw cosine >= the floor of the model that scored it (`floors`, default
        ``policy.min_cosine``; semantic, hybrid). `query_vectors` holds the query's vector per model
        that covers the query's language (None or empty: no semantic part).
        """
        keyword_raw = self.bm25(tokens) if tokens else np.zeros(self.size)
        best = keyword_raw.max() if self.size else 0.0
        keyword = keyword_raw / best if best > 0 else np.zeros(self.size)
        cosine, which = self.cosines(query_vectors)
        names = list(self.spaces)
        floor = np.full(self.size, np.nan)
        for index, name in enumerate(names):
            floor[which == index] = (floors or {}).get(name, policy.min_cosine)
        has = ~np.isnan(cosine)
        semantic = np.zeros(self.size)
        if has.any():
            relative = (cosine[has] - floor[has]) / (1.0 - floor[has])
            low, high = relative.min(), relative.max()
            semantic[has] = (relative - low) / (high - low) if high > low else 1.0
        now_s = when.timestamp() if when.tzinfo else (when - datetime(1970, 1, 1)).total_seconds()
        age_days = np.nan_to_num((now_s - self.accessed_s) / 86400.0, nan=0.0)
        recency = np.power(0.5, np.clip(age_days, 0.0, None) / policy.recency_half_life_days)
        with np.errstate(invalid="ignore"):
            close = cosine >= floor  # False where NaN (no vector, or no query vector)
        if mode == "keyword":
            score, eligible = keyword, keyword_raw > 0
        elif mode == "semantic":
            score, eligible = semantic, close
        else:
            keyword_weight, semantic_weight = policy.keyword_weight, policy.semantic_weight
            if not query_vectors:
                keyword_weight, semantic_weight = keyword_weight + semantic_weight, 0.0
            score = (keyword_weight * keyword + semantic_weight * semantic + policy.recency_weight * recency
                     + policy.importance_weight * self.importance)
            matched = keyword_raw > 0
            if query_vectors and has.any():
                # with a cosine to judge by, a word nearly every memory holds admits nothing alone
                matched = matched & self.distinctive_match(tokens)
            eligible = matched | close
        order = self._top(score, eligible, limit)
        rows = [self.rows.row(int(i), named=True) for i in order]
        scored_by = {name: int((which == index).sum()) for index, name in enumerate(names) if (which == index).any()}
        return Scored(rows, keyword_raw[order], keyword[order], cosine[order], semantic[order], recency[order],
                      self.importance[order], score[order],
                      [names[w] if w >= 0 else None for w in which[order]], scored_by)

    def _top(self, score: np.ndarray, eligible: np.ndarray, limit: int) -> np.ndarray:
        candidates = np.flatnonzero(eligible)
        if not len(candidates):
            return candidates
        rounded = np.round(score[candidates], TIE_DIGITS)
        if len(candidates) > limit:
            # everything tied with the limit-th best stays a candidate; ids then decide
            threshold = np.partition(rounded, len(rounded) - limit)[len(rounded) - limit]
            keep = rounded >= threshold
            candidates, rounded = candidates[keep], rounded[keep]
        order = np.lexsort((self.ids[candidates], -rounded))
        return candidates[order][:limit]


# ---------------------------------------------------------------------------- loading
def load_scope(con, where: str, params: dict[str, Any], *, models: tuple[str, ...] | str, window: int,
               index_dates: bool = True, max_unknown_ratio: float = 1.0) -> ScopeIndex:
    """Read the scope (rows matching `where`) and its postings and, per model of `models`, the
    vectors of the memories whose language the model covers (unknown share <= `max_unknown_ratio`)."""
    if isinstance(models, str):
        models = (models,)
    from scipy import sparse

    tables = {name for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() UNION ALL SELECT view_name FROM duckdb_views()").fetchall()}
    has_postings = {"keyword_docs", "postings"} <= tables  # versions published before the index have none
    has_embeddings = "embeddings" in tables
    # A published version from before conflicts were exported has no table (or an older one):
    # then no row is marked as a side of a contradiction, and the search says so.
    conflicts_known = "conflicts" in tables and CONFLICT_COLUMNS <= {
        d[0] for d in con.execute("SELECT * FROM conflicts LIMIT 0").description}
    columns = ", ".join(f"m.{c}" for c in COLUMNS)
    join = ""
    partners = "cp.conflict_with" if conflicts_known else "NULL::VARCHAR[] AS conflict_with"
    if conflicts_known:
        join += f" LEFT JOIN ({CONTRADICTION_PARTNERS_SQL}) cp ON cp.id = m.id"
    frame = _execute(con, f"SELECT {columns}, {partners} FROM memories m {join} WHERE {where} "
                          "ORDER BY m.session_id NULLS LAST, m.created_at, m.id", params).pl()
    frame = frame.unique("id", keep="first", maintain_order=True)
    size = frame.height
    hashes = frame.select("content_hash").unique()

    postings, lengths = _postings(con, hashes, has_postings, frame)
    row_of = frame.select(pl.int_range(0, size, dtype=pl.Int64).alias("row"), pl.col("content_hash").alias("text_hash"))
    per_row = row_of.join(postings, on="text_hash", how="inner").select("row", "term", pl.col("tf").cast(pl.Int32))
    date_terms = _date_terms(frame) if index_dates else None
    if date_terms is not None:
        per_row = pl.concat([per_row, date_terms])
    terms = per_row["term"].unique(maintain_order=False).sort()
    vocabulary = {term: i for i, term in enumerate(terms.to_list())}
    counts = per_row.join(pl.DataFrame({"term": terms, "col": pl.int_range(0, terms.len(), dtype=pl.Int64, eager=True)}),
                          on="term")
    memory_terms = sparse.csr_matrix(
        (counts["tf"].cast(pl.Float64).to_numpy(), (counts["row"].to_numpy(), counts["col"].to_numpy())),
        shape=(size, len(vocabulary)))
    memory_lengths = (row_of.join(lengths, on="text_hash", how="left").sort("row")["length"]
                      .fill_null(0).cast(pl.Float64).to_numpy())
    if date_terms is not None:
        memory_lengths = memory_lengths + DATE_TERMS
    band = _band(frame["session_id"], window)
    doc_terms = (band @ memory_terms).tocsc()
    doc_terms.sort_indices()
    doc_lengths = band @ memory_lengths

    spaces = _spaces(con, row_of, models, max_unknown_ratio) if has_embeddings and size else {}
    return ScopeIndex(frame.drop("content_hash"), doc_terms, vocabulary, np.asarray(doc_lengths),
                      spaces, conflicts_known)


def _spaces(con, row_of: pl.DataFrame, models: tuple[str, ...], max_unknown_ratio: float
            ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per model: (the vectors of the rows it covers, in row order; a mask of those rows)."""
    size = row_of.height
    spaces = {}
    hashes = row_of.select("text_hash").unique()
    con.register("scope_vector_hashes", hashes)
    try:
        for model in models:
            found = con.execute(
                "SELECT e.text_hash, e.vector FROM embeddings e JOIN scope_vector_hashes s USING (text_hash) "
                "WHERE e.model = ? AND len(e.vector) > 0 AND e.unknown_ratio <= ?", [model, max_unknown_ratio]).pl()
            if not found.height:
                continue
            joined = row_of.join(found, on="text_hash", how="inner").sort("row")
            has = np.zeros(size, dtype=bool)
            has[joined["row"].to_numpy()] = True
            width = joined["vector"].list.len().max()
            vectors = np.ascontiguousarray(joined["vector"].list.to_array(width).to_numpy(), dtype=np.float32)
            spaces[model] = (vectors, has)
    finally:
        con.unregister("scope_vector_hashes")
    return spaces


DATE_TERMS = 3  # day, month name, year


def _date_terms(frame: pl.DataFrame) -> pl.DataFrame:
    """(row, term, tf) for the day, month name and year a memory was created ("8", "may", "2023"):
    a question that names a time ("what happened in May 2023?") then meets the memories of it."""
    created = frame["created_at"]
    months = pl.Series(["january", "february", "march", "april", "may", "june", "july", "august", "september",
                        "october", "november", "december"])
    dates = pl.DataFrame({"row": pl.int_range(0, frame.height, dtype=pl.Int64, eager=True),
                          "day": created.dt.day().cast(pl.String), "month": months.gather(created.dt.month() - 1),
                          "year": created.dt.year().cast(pl.String)})
    return (dates.unpivot(index="row", value_name="term").drop("variable").drop_nulls("term")
            .with_columns(tf=pl.lit(1, dtype=pl.Int32)).select("row", "term", "tf"))


def _postings(con, hashes: pl.DataFrame, has_postings: bool, frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(postings, lengths) of the scope's content: from the index, and tokenised here where it has none."""
    empty_postings = pl.DataFrame(schema={"text_hash": pl.String, "term": pl.String, "tf": pl.Int32})
    empty_lengths = pl.DataFrame(schema={"text_hash": pl.String, "length": pl.Int32})
    postings, lengths = empty_postings, empty_lengths
    if has_postings and hashes.height:
        con.register("scope_hashes", hashes)
        try:
            lengths = con.execute("SELECT k.text_hash, k.length FROM keyword_docs k JOIN scope_hashes s "
                                  "ON s.content_hash = k.text_hash WHERE k.tokenizer = ?", [TOKENIZER_VERSION]).pl()
            postings = con.execute("SELECT p.text_hash, p.term, p.tf FROM postings p JOIN scope_hashes s "
                                   "ON s.content_hash = p.text_hash").pl()
        finally:
            con.unregister("scope_hashes")
        # postings of an older tokenizer version (not yet re-indexed) are not read: that content is
        # tokenised here, and its old terms must not add to the new ones
        postings = postings.join(lengths.select("text_hash"), on="text_hash", how="semi")
    missing = hashes.join(lengths, left_on="content_hash", right_on="text_hash", how="anti")["content_hash"]
    if missing.len():
        todo = frame.filter(pl.col("content_hash").is_in(missing.implode())).unique("content_hash", keep="first")
        docs, extra = term_counts(todo["content_hash"].to_list(), todo["content"].fill_null("").to_list())
        lengths = pl.concat([lengths.cast({"length": pl.Int32}), docs.cast({"length": pl.Int32})])
        postings = pl.concat([postings.cast({"tf": pl.Int32}), extra.cast({"tf": pl.Int32})])
    return postings.cast({"tf": pl.Int32}), lengths


def _band(sessions: pl.Series, window: int):
    """n x n: 1 on the diagonal and between memories within `window` places of each other in one
    session (rows are in session order; a memory without a session stands alone)."""
    from scipy import sparse

    size = sessions.len()
    rows, cols = [np.arange(size)], [np.arange(size)]
    values = sessions.to_numpy()
    known = sessions.is_not_null().to_numpy()
    for step in range(1, max(window, 0) + 1):
        if step >= size:
            break
        same = known[:-step] & known[step:] & (values[:-step] == values[step:])
        left = np.flatnonzero(same)
        rows += [left, left + step]
        cols += [left + step, left]
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(size, size))


def _execute(con, sql: str, params: dict[str, Any]):
    import re

    used = set(re.findall(r"\$(\w+)", sql))  # DuckDB refuses named parameters a query does not use
    return con.execute(sql, {k: v for k, v in params.items() if k in used})


# ---------------------------------------------------------------------------- the cache
class ScopeCache:
    """Loaded scopes, least recently used first out, at most `max_rows` rows in all."""

    def __init__(self):
        self._entries: OrderedDict[tuple, ScopeIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> ScopeIndex | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: tuple, scope: ScopeIndex, max_rows: int) -> None:
        if max_rows <= 0 or scope.cost > max_rows:
            return
        with self._lock:
            # an older identity of the same lake and scope can never be asked for again
            stale = [k for k in self._entries if k[1:] == key[1:] and k[0][0] == key[0][0]]
            for k in stale:
                del self._entries[k]
            self._entries[key] = scope
            while sum(s.cost for s in self._entries.values()) > max_rows:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


SCOPES = ScopeCache()
