"""The index step: keyword postings and embeddings for new or changed content (DESIGN "Search").

Both are keyed by content hash, so a memory whose content did not change costs nothing, identical
contents share one entry, and re-running on unchanged content tokenises and embeds nothing:

* ``keyword_docs`` / ``postings``: the tokens of `text.tokenize` (jieba for Chinese, light
  stemming for English) counted per content, with the tokenizer's version. Search computes BM25
  from them at query time over the scope it searches, so adding a few memories never rebuilds
  anything. Only a new tokenizer version re-tokenises what the old one made.
* ``embeddings``: see `memory_lake.search.embeddings` (once per content hash and model, each text
  by the models that cover its language; a model change re-embeds lazily).

The nightly and sync runs call it; ingest never does (a search still finds memories ingested since
the last index: their postings are computed at query time, and their semantic part is 0 with a note).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime

import duckdb
import polars as pl

from ..store import register_scrubber, transaction
from .embeddings import embed_missing, models
from ..store import Policy
from ..store import MemoryLakeError, StepReport, step_error
from ..text import TOKENIZER_VERSION, term_counts

# Contents tokenised per batch (bounded memory; the progress bar advances per batch).
TOKENIZE_BATCH = 20_000


def index(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None,
          progress: bool | None = None, on_progress: Callable[[str, int, int], None] | None = None,
          wait_s: float | None = None) -> StepReport:
    """Tokenise and embed every content hash the index does not hold yet; report the counts.
    `on_progress(what, done, total)` hears each batch ("tokenised" then "embedded" texts); given
    it, the caller shows progress and the built-in bars stay off."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("index", as_of)
    show = (sys.stderr.isatty() if progress is None else progress) and on_progress is None
    # "missing": the texts that had no vector when the step began (embedded now, or not covered)
    report = StepReport("index", as_of, run_id, {}, labels={"missing": "missing before"})
    waiting = {} if wait_s is None else {"wait_s": wait_s}
    failures: list = []
    with lake.writer(purpose="index", **waiting) as con:
        report.counts["tokenized"] = index_keywords(con, as_of, show, on_progress, failures)
        missing_without_models = 0 if models(policy) else con.execute(
            "SELECT count(DISTINCT content_hash) FROM memories WHERE status <> 'deleted' AND content <> ''").fetchone()[0]
        embedded = embed_missing(con, models(policy), as_of, policy.search.batch_size, show, on_progress,
                                 max_unknown_ratio=policy.search.max_unknown_ratio)
        report.errors = _text_errors(con, failures + embedded.pop("failures", []))
    # texts, each counted once however many models embedded it; per model in the details
    report.counts["embedded"] = embedded["embedded"]
    report.counts["missing"] = embedded["missing"]
    report.details["model"] = policy.search.model
    report.details["models"] = embedded["models"]
    report.details["tokenizer"] = TOKENIZER_VERSION
    notes = [m["note"] for m in embedded["models"].values() if "note" in m]
    if not models(policy):
        notes = ['semantic search is switched off ([search] model = "none")']
        report.counts["missing"] = missing_without_models
    if notes:
        report.details["note"] = "; ".join(notes)
    return report


def _text_errors(con, failures: list) -> list[dict]:
    """Step errors for texts the index could not take, each named by a memory that holds it."""
    errors = []
    for text_hash, what, exc in failures:
        found = con.execute("SELECT id, tenant, agent_id, user_id FROM memories WHERE content_hash = ? ORDER BY id "
                            "LIMIT 1", [text_hash]).fetchone() or (None, None, None, None)
        errors.append(step_error("index", exc, item=f"{what} memory {found[0]}", tenant=found[1], agent_id=found[2],
                                 user_id=found[3]))
    return errors


def index_keywords(con, as_of: datetime, progress: bool = False,
                   on_progress: Callable[[str, int, int], None] | None = None,
                   failures: list | None = None) -> int:
    """Write the postings of every content hash that has none from this tokenizer version; returns
    how many contents were tokenised. Postings of an older tokenizer version are replaced. A batch
    that raises is tokenised text by text; a text that raises gets no postings (the next run tries
    it again) and goes to `failures` as (text hash, what, exception)."""
    failures = [] if failures is None else failures
    from tqdm import tqdm

    with transaction(con):
        stale = con.execute("SELECT count(*) FROM keyword_docs WHERE tokenizer <> ?", [TOKENIZER_VERSION]).fetchone()[0]
        if stale:
            con.execute("DELETE FROM postings WHERE text_hash IN (SELECT text_hash FROM keyword_docs WHERE tokenizer <> ?)",
                        [TOKENIZER_VERSION])
            con.execute("DELETE FROM keyword_docs WHERE tokenizer <> ?", [TOKENIZER_VERSION])
    todo = con.execute(
        """
        SELECT content_hash AS text_hash, any_value(content ORDER BY id) AS content
        FROM memories m
        WHERE status <> 'deleted'
          AND NOT EXISTS (SELECT 1 FROM keyword_docs k WHERE k.text_hash = m.content_hash)
        GROUP BY content_hash ORDER BY content_hash
        """
    ).pl()
    if todo.height == 0:
        return 0
    bar = tqdm(total=todo.height, desc="tokenise", unit="memory", disable=not progress, file=sys.stderr)
    with transaction(con):
        for start in range(0, todo.height, TOKENIZE_BATCH):
            batch = todo.slice(start, TOKENIZE_BATCH)
            try:
                docs, postings = term_counts(batch["text_hash"].to_list(), batch["content"].to_list())
            except MemoryLakeError:
                raise
            except Exception:
                docs, postings = _one_by_one(batch, failures)
            con.register("new_docs", docs)
            con.register("new_postings", postings)
            try:
                con.execute("INSERT INTO keyword_docs SELECT text_hash, ?, length, ? FROM new_docs",
                            [TOKENIZER_VERSION, as_of])
                con.execute("INSERT INTO postings SELECT text_hash, term, tf FROM new_postings")
            finally:
                con.unregister("new_docs")
                con.unregister("new_postings")
            bar.update(batch.height)
            if on_progress:
                on_progress("tokenised", start + batch.height, todo.height)
    bar.close()
    return todo.height - len(failures)


def _one_by_one(batch: pl.DataFrame, failures: list) -> tuple[pl.DataFrame, pl.DataFrame]:
    docs, postings = [], []
    for text_hash, content in batch.select("text_hash", "content").iter_rows():
        try:
            d, p = term_counts([text_hash], [content])
        except MemoryLakeError:
            raise
        except Exception as exc:
            failures.append((text_hash, "tokenising", exc))
            continue
        docs.append(d)
        postings.append(p)
    if not docs:
        d, p = term_counts([], [])
        return d, p
    return pl.concat(docs, how="vertical_relaxed"), pl.concat(postings, how="vertical_relaxed")


# ---------------------------------------------------------------- forget (store.registry)
def _scrub_by_content_hash(con: duckdb.DuckDBPyConnection, table: str) -> None:
    # Entries of content no remaining memory shares go (DESIGN: embeddings no other memory
    # shares; the same holds for the postings, whose terms spell the content). On an exported copy
    # `memories` is a view of that version's memories.parquet, which still holds the rows then.
    if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'memories'").fetchone()[0]:
        return
    con.execute(
        f"""
        DELETE FROM {table}
        WHERE text_hash IN (SELECT content_hash FROM memories WHERE id IN (SELECT id FROM forget_ids))
          AND text_hash NOT IN (SELECT content_hash FROM memories
                                WHERE status <> 'deleted' AND id NOT IN (SELECT id FROM forget_ids))
        """
    )


@register_scrubber("embeddings")
def _scrub_embeddings(con: duckdb.DuckDBPyConnection) -> None:
    _scrub_by_content_hash(con, "embeddings")


@register_scrubber("postings")
def _scrub_postings(con: duckdb.DuckDBPyConnection) -> None:
    _scrub_by_content_hash(con, "postings")


@register_scrubber("keyword_docs")
def _scrub_keyword_docs(con: duckdb.DuckDBPyConnection) -> None:
    _scrub_by_content_hash(con, "keyword_docs")

