"""What `Lake.search` adds to its own parts (issue 38, "in-process first"), at 400 and 10k memories.

A warm hybrid search is one query encoding (each model the scope uses) plus a keyword search plus
the fusion, the filters and the search log; the issue's target is hybrid p95 <= 1.3x (raw query
encoding p95 + keyword p95), all measured in the same run on the same questions. Memories: the
LoCoMo turns, topped up and mixed with Chinese as in ``benchmarks/search.py`` (read in place from
../shared). Prints one line per size and the figures as JSON.

    python benchmarks/search_overhead.py [--sizes 400 10000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from search import AS_OF, DEFAULT_DATA, TENANT, build_memories, stats, write_snapshot


def measure(size: int, questions: list[str], data: Path) -> dict:
    from memory_lake import Lake
    from memory_lake.store import Policy
    from memory_lake.text import embedding_models, load_model

    memories = build_memories(data, size)
    batch_size = Policy().search.batch_size
    models = {name: load_model(name) for name in embedding_models(Policy())}
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        lake = Lake.init(Path(tmp) / "lake")
        lake.ingest([write_snapshot(memories, Path(tmp) / "m.jsonl")], as_of=AS_OF)
        lake.index(as_of=AS_OF)
        for mode in ("keyword", "hybrid"):
            lake.search(questions[0], tenant=TENANT, mode=mode, as_of=AS_OF)  # warm
        for model in models.values():
            model.embed_queries([questions[0]], batch_size)
        times: dict[str, list[float]] = {"encode": [], "keyword": [], "hybrid": []}
        for q in questions:  # interleaved, so each part sees the same machine
            started = time.perf_counter()
            for model in models.values():
                model.embed_queries([q], batch_size)
            times["encode"].append(time.perf_counter() - started)
            for mode in ("keyword", "hybrid"):
                started = time.perf_counter()
                lake.search(q, tenant=TENANT, mode=mode, as_of=AS_OF)
                times[mode].append(time.perf_counter() - started)
    figures = {name: stats(seconds) for name, seconds in times.items()}
    parts = figures["encode"]["p95_ms"] + figures["keyword"]["p95_ms"]
    return {"memories": memories.height, **figures, "parts_p95_ms": parts,
            "ratio_p95": figures["hybrid"]["p95_ms"] / parts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[400, 10_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    questions = [q["question"] for q in map(json.loads, (args.data / "queries.jsonl").read_text().splitlines())]
    questions = questions[: args.queries]
    out = []
    for size in args.sizes:
        found = measure(size, questions, args.data)
        out.append(found)
        print(f"{found['memories']:>6} memories: hybrid p95 {found['hybrid']['p95_ms']:.1f} ms = "
              f"{found['ratio_p95']:.2f}x (encoding p95 {found['encode']['p95_ms']:.1f} + keyword p95 "
              f"{found['keyword']['p95_ms']:.1f} ms; target <= 1.3x)", flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
