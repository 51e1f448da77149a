"""Dedup: quality on the labelled pair set, and wall time / peak memory at 100k and 1M memories.

1. **Quality**: ``tests/data/dedup_pairs.json`` (English and Chinese pairs labelled duplicate,
   contradiction or different; each pair in its own scope, real MiniLM embeddings for the semantic
   pass). Prints the confusion counts (merged / filed as a contradiction / kept) per label, precision
   and recall on true duplicates, and how many contradictions were merged (the target is zero).
2. **Scale**: generated memories (100 per scope, templated English and Chinese sentences with
   random slots) of which 5 % are planted near-duplicates of another memory of the same scope (case,
   punctuation, a filler word, a typo, a suffix, spaces). Per size: ingest in one child process (not
   timed), then the dedup step in a fresh one (timed; exact and near passes, no embeddings), its
   peak RSS, and the share of planted duplicates it merged. The 1M / 100k time ratio shows the growth
   (linear is 10x). Target (issue 7): < 3 minutes for 1M, embeddings excluded.

    python benchmarks/dedup.py [--sizes 100000 1000000] [--skip-quality]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
PAIRS = HERE.parent / "tests" / "data" / "dedup_pairs.json"
AS_OF = "2026-11-30T00:00:00Z"
NAMES = "Alice Bob Carol Dave Erin Frank Grace Henry Ivy Jack Kate Leo Mia Nora Oscar Paul Rita Sam Tina".split()
THINGS = ("the billing service", "the search index", "the mobile app", "the data platform", "the support console",
          "the orders API", "the nightly backup", "the staging cluster", "the marketing site", "the CI pipeline",
          "the payroll export", "the customer portal", "the analytics warehouse", "the email gateway",
          "the identity provider", "the pricing engine", "the inventory sync", "the audit trail")
EN = ("{n} prefers updates about {t} by email every {d}", "{n} owns {t} and reviews every change to it",
      "Deploy {t} after the review on {d} at {h}pm", "{n} reported {k} errors in {t} last week",
      "Remind {n} to check {t} before the {d} sync", "{n} asked for a summary of {t} with {k} bullet points",
      "{n} thinks {t} needs a rewrite before the {d} release", "Budget for {t} was cut by {k} percent",
      "{n} will present the roadmap of {t} on {d}", "Incident review: {t} was down for {k} minutes",
      "{n} wants dashboards for {t} refreshed hourly", "Lesson: test {t} on staging before {d}")
ZH = ("{n}负责{t}，每周{d}检查一次", "{n}希望每天收到关于{t}的{k}条摘要", "{t}在周{d}下午{h}点部署",
      "{n}上周报告了{t}的{k}个错误")
ZH_THINGS = ("账单服务", "搜索索引", "移动应用", "数据平台", "客服控制台", "订单接口", "夜间备份", "测试集群")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def variation(text: str, rng: random.Random) -> str:
    """A surface variation a memory system really produces (what the near pass must catch)."""
    kind = rng.randrange(6)
    if kind == 0:
        return text.upper()
    if kind == 1:
        return text + "."
    if kind == 2:
        return ("Note: " if text.isascii() else "备注：") + text
    if kind == 3 and text.isascii():
        words = text.split()
        i = max(range(len(words)), key=lambda j: len(words[j]) if words[j].isalpha() else 0)
        w = words[i]
        words[i] = w[:-2] + w[-1] + w[-2]
        return " ".join(words)
    if kind == 4:
        return text + (" (confirmed)" if text.isascii() else "（已确认）")
    return "  " + text.replace(" ", "  ") + " " if text.isascii() else text + " "


def generate(path: Path, rows: int, seed: int = 7) -> int:
    """`rows` memories, 100 per scope, 5 % planted near-duplicates; returns how many were planted."""
    rng = random.Random(seed)
    records, planted, pairs = [], 0, []
    per_scope = 100
    for i in range(rows):
        scope = i // per_scope
        if i % per_scope >= 5 and rng.random() < 0.05:
            source = records[rng.randrange(scope * per_scope, i)]
            text = variation(source["content"], rng)
            planted += 1
            pairs.append((source["id"], f"m{i}"))
        elif rng.random() < 0.2:
            text = rng.choice(ZH).format(n=rng.choice(NAMES), t=rng.choice(ZH_THINGS), d=rng.randint(1, 5),
                                         k=rng.randint(2, 999), h=rng.randint(1, 9))
        else:
            text = rng.choice(EN).format(n=rng.choice(NAMES), t=rng.choice(THINGS), d=rng.choice(DAYS),
                                         k=rng.randint(2, 999), h=rng.randint(1, 9))
        records.append({"id": f"m{i}", "tenant": f"t{scope % 10}", "user_id": f"u{scope}", "type": "fact",
                        "content": text, "created_at": f"2026-11-{1 + i % 28:02d}T00:00:00Z"})
    pl.DataFrame(records).write_ndjson(path)
    pl.DataFrame(pairs, schema={"source": pl.String, "copy": pl.String}, orient="row").write_parquet(
        path.with_suffix(".planted.parquet"))
    return planted


def child(lake_dir: str, file: str) -> None:
    """Runs in a fresh process (its peak RSS is the dedup's own): the dedup step on an ingested lake."""
    from memory_lake import Lake
    from memory_lake.store import resolve_as_of
    from memory_lake.maintain import dedup

    lake = Lake.open(lake_dir, create=True)
    started = time.perf_counter()
    report = dedup(lake, resolve_as_of(AS_OF))
    seconds = time.perf_counter() - started
    roots = lake.sql("SELECT id, coalesce(merged_into, id) AS root FROM memories")
    merged = roots.filter(pl.col("id") != pl.col("root")).height
    # lake.sql reads only the lake's tables: the planted pairs are joined here
    planted = pl.read_parquet(Path(file).with_suffix(".planted.parquet"))
    caught = (planted.join(roots.rename({"id": "source", "root": "ra"}), on="source")
              .join(roots.rename({"id": "copy", "root": "rb"}), on="copy")
              .filter(pl.col("ra") == pl.col("rb")).height)
    print(json.dumps({"seconds": seconds, "merged": merged, "planted_caught": caught, "counts": report.counts,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def quality() -> None:
    from memory_lake import Lake
    from memory_lake.maintain import plan_dedup

    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="bench-dedup-") as tmp:
        lake = Lake.open(Path(tmp) / "lake", create=True)
        records = []
        for p in pairs:
            records += [{"id": f"{p['id']}-a", "tenant": p["id"], "content": p["a"], "type": "fact",
                         "created_at": "2026-11-01T00:00:00Z"},
                        {"id": f"{p['id']}-b", "tenant": p["id"], "content": p["b"], "type": "fact",
                         "created_at": "2026-11-02T00:00:00Z"}]
        file = Path(tmp) / "pairs.jsonl"
        pl.DataFrame(records).write_ndjson(file)
        lake.ingest([file], as_of=AS_OF)
        lake.index(as_of=AS_OF)
        with lake.reader() as con:
            plan, _ = plan_dedup(con, lake.policy)
    merged = {m.rsplit("-", 1)[0] for m in plan.merges["member"].to_list()}
    flagged = {a.rsplit("-", 1)[0] for a in plan.contradictions["a"].to_list()}
    table: dict[tuple[str, str], int] = {}
    for p in pairs:
        outcome = "merged" if p["id"] in merged else "filed" if p["id"] in flagged else "kept"
        table[(p["label"], outcome)] = table.get((p["label"], outcome), 0) + 1
    print(f"\nlabelled pairs: {len(pairs)} ({sum(p['lang'] == 'en' for p in pairs)} English, "
          f"{sum(p['lang'] == 'zh' for p in pairs)} Chinese)")
    print(f"{'label':<15}{'merged':>8}{'filed':>8}{'kept':>8}   (filed = kept apart, in the conflict queue)")
    for label in ("duplicate", "contradiction", "different"):
        print(f"{label:<15}" + "".join(f"{table.get((label, o), 0):>8}" for o in ("merged", "filed", "kept")))
    tp = table.get(("duplicate", "merged"), 0)
    fp = table.get(("contradiction", "merged"), 0) + table.get(("different", "merged"), 0)
    dup = sum(v for (label, _), v in table.items() if label == "duplicate")
    print(f"precision {tp / (tp + fp) if tp + fp else 1:.3f}, recall {tp / dup:.3f} on true duplicates; "
          f"contradictions merged: {table.get(('contradiction', 'merged'), 0)} (target 0)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if not args.skip_quality:
        quality()
    results = {}
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-dedup-") as tmp:
            file = Path(tmp) / "memories.jsonl"
            planted = generate(file, size)
            subprocess.run([sys.executable, "-c", "import sys; from memory_lake import Lake; "
                            f"Lake.open(sys.argv[1], create=True).ingest([sys.argv[2]], as_of={AS_OF!r})",
                            str(Path(tmp) / "lake"), str(file)], check=True)
            out = subprocess.run([sys.executable, __file__, "--child", str(Path(tmp) / "lake"), str(file)],
                                 capture_output=True, text=True, check=True)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            result["planted"] = planted
            results[size] = result
            print(f"\n{size:,} memories ({planted:,} planted near-duplicates): dedup {result['seconds']:.1f} s, "
                  f"peak RSS {result['peak_rss_mb']:,.0f} MB, merged {result['merged']:,} "
                  f"({result['counts']['merged_exact']:,} exact, {result['counts']['merged_near']:,} near), "
                  f"{result['counts']['contradictions']:,} pairs kept apart; planted duplicates caught "
                  f"{result['planted_caught']:,}/{planted:,} ({result['planted_caught'] / max(planted, 1):.1%})",
                  flush=True)
    if len(results) > 1:
        small, large = min(results), max(results)
        print(f"\ngrowth: {large / small:.0f}x the memories took {results[large]['seconds'] / results[small]['seconds']:.1f}x "
              f"the time (linear = {large / small:.0f}x); target < 180 s at 1M: "
              f"{'met' if large < 1_000_000 or results[large]['seconds'] < 180 else 'NOT met'}")


if __name__ == "__main__":
    main()
