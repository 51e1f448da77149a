"""Dedup on a labelled pair set written blind (by someone who had not read the dedup code):
each pair in its own scope, the real nightly dedup step with real MiniLM embeddings, then what
happened to each pair: merged, queued as a contradiction, or kept apart.

    python benchmarks/dedup_blind.py [PAIRS.jsonl]     # default tests/data/dedup_pairs_blind.jsonl

Prints a confusion table per language and the headline figures: duplicates merged (recall),
contradictions merged (must be 0), contradictions queued, distinct pairs merged (must be 0) and
distinct pairs falsely queued. The set is for measuring, never for tuning the rules.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from datetime import datetime
from pathlib import Path

from memory_lake import Lake

ROOT = Path(__file__).resolve().parents[1]
AS_OF = datetime(2026, 11, 30)


def outcomes(pairs: list[dict]) -> list[str]:
    """What the nightly dedup step did to each pair, each in its own scope of a fresh lake:
    "merged", "queued" (a contradiction) or "apart"."""
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.open(Path(tmp) / "lake", create=True)
        records = []
        for n, p in enumerate(pairs):
            scope = f"pair-{n:04d}"
            records += [{"id": f"{scope}-a", "tenant": "blind", "user_id": scope, "content": p["a"], "type": "fact",
                         "created_at": "2026-11-01T00:00:00Z"},
                        {"id": f"{scope}-b", "tenant": "blind", "user_id": scope, "content": p["b"], "type": "fact",
                         "created_at": "2026-11-02T00:00:00Z"}]
        snapshot = Path(tmp) / "pairs.jsonl"
        snapshot.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
        ingested = lake.ingest([snapshot], as_of=AS_OF)
        assert ingested.total("quarantined") == 0, ingested.reasons
        lake.index(as_of=AS_OF)
        lake.dedup(as_of=AS_OF)
        merged = {r[0] for r in lake.sql("SELECT user_id FROM memories WHERE merged_into IS NOT NULL").iter_rows()}
        queued = {r[0] for r in lake.sql(
            "SELECT m.user_id FROM conflicts c JOIN memories m ON m.id = c.memory_id "
            "WHERE c.kind = 'contradiction'").iter_rows()}
    return ["merged" if f"pair-{n:04d}" in merged else "queued" if f"pair-{n:04d}" in queued else "apart"
            for n in range(len(pairs))]


def main(path: Path) -> dict:
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    outcome = Counter()
    for p, got in zip(pairs, outcomes(pairs)):
        outcome[(p["lang"], p["label"], got)] += 1
    print(f"{path.name}: {len(pairs)} pairs")
    print(f"{'lang':4} {'label':13} {'merged':>7} {'queued':>7} {'apart':>7}")
    for lang in ("en", "zh"):
        for label in ("duplicate", "contradiction", "distinct"):
            row = [outcome[(lang, label, g)] for g in ("merged", "queued", "apart")]
            print(f"{lang:4} {label:13} {row[0]:7} {row[1]:7} {row[2]:7}")
    total = {label: sum(v for (l, lab, g), v in outcome.items() if lab == label) for label in
             ("duplicate", "contradiction", "distinct")}
    figures = {
        "duplicates_merged": round(sum(v for (l, lab, g), v in outcome.items() if lab == "duplicate" and g == "merged") / total["duplicate"], 3),
        "contradictions_merged": sum(v for (l, lab, g), v in outcome.items() if lab == "contradiction" and g == "merged"),
        "contradictions_queued": round(sum(v for (l, lab, g), v in outcome.items() if lab == "contradiction" and g == "queued") / total["contradiction"], 3),
        "distinct_merged": sum(v for (l, lab, g), v in outcome.items() if lab == "distinct" and g == "merged"),
        "distinct_queued": sum(v for (l, lab, g), v in outcome.items() if lab == "distinct" and g == "queued"),
    }
    print(json.dumps(figures))
    return figures


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Dedup on the oldest blind set: duplicates merged, contradictions "
                                     "merged (must be 0) and queued, distinct pairs merged.")
    parser.add_argument("pairs", nargs="?", type=Path, default=ROOT / "tests" / "data" / "dedup_pairs_blind.jsonl",
                        help="a JSON Lines set of pairs (default: tests/data/dedup_pairs_blind.jsonl)")
    args = parser.parse_args()
    if not args.pairs.is_file():
        parser.error(f"no such file: {args.pairs}")
    main(args.pairs)
