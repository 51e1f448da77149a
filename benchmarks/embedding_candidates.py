"""Offline multilingual embedding candidates, side by side (docs/EMBEDDINGS.md is written from this).

For each candidate that is installed: load time, sentences per second on this machine (the
memories of ``tests/data/zh_retrieval.json`` plus as many English sentences, batch 64), the share
of unknown tokens on Chinese, recall@10 of plain cosine on ``tests/data/zh_retrieval.json``
(tenant-wide, as in ``benchmarks/zh_recall.py``), and the cosine of a few one-word paraphrase
pairs against contradiction and unrelated pairs (the issue's own examples, written before any
tuning). A candidate that is not installed is reported as such.

    python benchmarks/embedding_candidates.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data" / "zh_retrieval.json"
K = 10
# (a, b, kind): the examples of one-word paraphrases, and pairs that must stay apart.
PAIRS = [
    ("The manager must sign off the budget", "The manager must approve the budget", "paraphrase"),
    ("Alice will watch the deployment tonight", "Alice will monitor the deployment tonight", "paraphrase"),
    ("Keep the status report short", "Keep the status report brief", "paraphrase"),
    ("The team organised the offsite", "The team organized the offsite", "paraphrase"),
    ("需要经理确认这份预算", "需要经理同意这份预算", "paraphrase"),
    ("年会在上海举行", "年会在上海举办", "paraphrase"),
    ("报销单应当在周五前提交", "报销单应该在周五前提交", "paraphrase"),
    ("User prefers dark mode", "User prefers light mode", "contradiction"),
    ("The meeting is on Monday", "The meeting is on Tuesday", "contradiction"),
    ("用户喜欢喝咖啡", "用户讨厌喝咖啡", "contradiction"),
    ("会议在周一举行", "会议在周三举行", "contradiction"),
    ("User likes jazz", "User likes jazz and plays guitar in a band every weekend", "near_miss"),
    ("The deploy runs in eu-west", "The deploy runs in us-east", "near_miss"),
    ("部署在华东区", "部署在华北区", "near_miss"),
    ("User prefers dark mode", "The printer on floor 3 is broken", "unrelated"),
    ("用户喜欢喝咖啡", "服务器每天凌晨备份", "unrelated"),
]


def _minilm():
    from memory_lake.text.models import get_provider

    return get_provider("all-MiniLM-L6-v2")


def _use():
    from memory_lake.text.models import get_provider

    return get_provider("use-multilingual-v3")


def _e5():
    from memory_lake.text.models import get_provider

    return get_provider("multilingual-e5-small-q4")


CANDIDATES = {"all-MiniLM-L6-v2": _minilm, "use-multilingual-v3": _use, "multilingual-e5-small-q4": _e5}


def recall_at_10(provider, data: dict) -> float:
    memories, queries = data["memories"], data["queries"]
    docs = provider.embed([m["content"] for m in memories], 64).vectors
    ids = np.array([m["id"] for m in memories])
    total = 0.0
    for q in queries:
        qv = provider.embed_queries([q["query"]], 64).vectors[0]
        top = ids[np.argsort(-(docs @ qv), kind="stable")[:K]]
        total += len(set(q["relevant"]) & set(top)) / len(q["relevant"])
    return total / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    zh = [m["content"] for m in data["memories"]]
    en = [f"{p[0]} (note {i})" for i, p in enumerate(PAIRS * 40) if p[0].isascii()][: len(zh)]
    results = {}
    for name, make in CANDIDATES.items():
        if args.only and name not in args.only:
            continue
        started = time.perf_counter()
        try:
            provider = make()
            provider.embed(["warm up"], 1)
        except Exception as exc:  # not installed here
            results[name] = {"error": str(exc)[:200]}
            continue
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        zh_out = provider.embed(zh, 64)
        zh_rate = len(zh) / (time.perf_counter() - started)
        started = time.perf_counter()
        provider.embed(en, 64)
        en_rate = len(en) / (time.perf_counter() - started)
        started = time.perf_counter()
        for q in data["queries"][:20]:
            provider.embed_queries([q["query"]], 1)
        query_ms = (time.perf_counter() - started) / 20 * 1000
        pairs = {}
        for a, b, kind in PAIRS:
            va, vb = provider.embed([a, b], 2).vectors
            pairs.setdefault(kind, []).append(round(float(va @ vb), 3))
        results[name] = {"load_s": round(load_s, 2), "zh_per_s": round(zh_rate, 1), "en_per_s": round(en_rate, 1),
                         "query_ms": round(query_ms, 1),
                         "zh_unknown_share": round(float(np.mean(zh_out.unknown)), 3),
                         "zh_retrieval_recall@10": round(recall_at_10(provider, data), 3), "pairs": pairs}
        print(name, json.dumps(results[name], ensure_ascii=False), flush=True)
    (ROOT / "benchmarks" / "out").mkdir(exist_ok=True)
    (ROOT / "benchmarks" / "out" / "embedding_candidates.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
