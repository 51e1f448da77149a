"""Entity extraction throughput (issue 16): memories per second on 100k generated memories.

The memories are the demo's sentence templates (``memory_lake/demo/data``) with random slots:
people, places, companies, products, in English and Chinese (``--zh-share``, default 0.3), 100 per
scope, with 10 % planted repeats and changed values of an earlier fact of the same scope (what
merging and superseding work on). Measured in this process on one lake:

1. ``extract_mentions`` alone on all memories: the NLP part (regex spans for English, jieba for
   Chinese; each distinct sentence read once), per language;
2. the whole ``extract_entities`` step (read, extract, write, merge and supersede facts, rebuild
   entities) - the nightly cost of a first run;
3. the same step again with nothing new (incremental: it reads nothing);
4. after 1 % of the memories change, the step again (only those, and the entities they touch).

    python benchmarks/entities.py [--memories 100000] [--zh-share 0.3]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from memory_lake import Lake  # noqa: E402
from memory_lake.maintain.entities import extract_entities, extract_mentions  # noqa: E402

DATA = HERE.parent / "memory_lake" / "demo" / "data"
AS_OF = datetime(2026, 11, 30)


def texts(n: int, zh_share: float, rng: random.Random) -> list[tuple[str, str, str]]:
    """(scope user, content, created_at) for n memories from the demo's templates."""
    templates = json.loads((DATA / "templates.json").read_text(encoding="utf-8"))
    vocab = json.loads((DATA / "vocabulary.json").read_text(encoding="utf-8"))

    def fill(template: str, zh: bool, user: str) -> str:
        suffix = "_zh" if zh else "_en"
        slots = {}
        for key in ("topic", "channel", "style", "weekday", "report", "system", "verb", "component", "team",
                    "region", "city", "company"):
            slots[key] = rng.choice(vocab.get(f"{key}s{suffix}") or vocab.get(f"{key}es{suffix}")
                                    or vocab.get(f"{key[:-1]}ies{suffix}") or [key])
        slots["topic2"] = rng.choice(vocab[f"topics{suffix}"])
        slots["person"] = rng.choice(vocab[f"people{suffix}"])
        slots["company"] = rng.choice(vocab[f"companies{suffix}"])
        slots["city"] = rng.choice(vocab[f"cities{suffix}"])
        slots["tech"] = rng.choice(vocab["tech"])
        slots["plan"] = rng.choice(vocab["plans"])
        slots["format"], slots["format2"] = rng.sample(vocab["formats"], 2)
        slots["n"] = rng.randrange(5, 500)
        slots["date"] = f"{rng.randrange(1, 13)}月{rng.randrange(1, 29)}日" if zh else \
            f"{rng.choice(['Oct', 'Nov', 'Dec'])} {rng.randrange(1, 29)}"
        slots["user"] = user
        for key in ("lesson", "event", "event_lc", "outcome", "todo", "misc"):
            slots[key] = rng.choice(vocab.get(f"{key}s{suffix}") or vocab.get(f"{key}s") or ["the usual"])
        try:
            return template.format(**slots)
        except (KeyError, IndexError):
            return template
    out = []
    names_en, names_zh = vocab["people_en"], vocab["people_zh"]
    for i in range(n):
        zh = rng.random() < zh_share
        user = f"{rng.choice(names_zh if zh else names_en)}{i // 100}"
        lang = templates["zh" if zh else "en"]
        kind = rng.choice(list(lang))
        created = (AS_OF - timedelta(days=rng.uniform(0, 90))).strftime("%Y-%m-%dT%H:%M:%SZ")
        if out and rng.random() < 0.1 and out[-1][0] == f"u{i // 100}":
            previous = out[-1][1]
            city = next((c for c in vocab["cities_zh" if zh else "cities_en"] if c in previous), None)
            content = previous.replace(city, rng.choice(vocab["cities_zh" if zh else "cities_en"])) if city else previous
        else:
            content = fill(rng.choice(lang[kind]), zh, user.rstrip("0123456789"))
        out.append((f"u{i // 100}", content, created))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--zh-share", type=float, default=0.3)
    args = parser.parse_args()
    rng = random.Random(16)
    rows = texts(args.memories, args.zh_share, rng)
    frame = pl.DataFrame({"id": [f"m{i:07d}" for i in range(len(rows))], "tenant": "bench",
                          "agent_id": "bot", "user_id": [r[0] for r in rows], "content": [r[1] for r in rows],
                          "created_at": [r[2] for r in rows]})
    with tempfile.TemporaryDirectory() as folder:
        lake = Lake.init(Path(folder) / "lake")
        path = Path(folder) / "bench.parquet"
        frame.write_parquet(path)
        lake.ingest([path], as_of=AS_OF)
        memories = lake.read("SELECT id, tenant, agent_id, user_id, content, created_at FROM memories").frame
        zh = memories.filter(pl.col("content").str.contains(r"\p{Han}"))
        en = memories.filter(~pl.col("content").str.contains(r"\p{Han}"))
        extract_mentions(memories.head(50), lake.policy)  # load jieba's dictionary once, outside the timing
        print(f"entity extraction on {memories.height} memories ({zh.height} Chinese, {en.height} English); "
              f"distinct sentences: {memories['content'].n_unique()}")
        for label, part in (("English", en), ("Chinese", zh)):
            started = time.perf_counter()
            found = extract_mentions(part, lake.policy)
            took = time.perf_counter() - started
            print(f"  extract_mentions {label}: {part.height} memories in {took:.1f} s = "
                  f"{part.height / took:,.0f} memories/s ({found.height} mentions)")
        started = time.perf_counter()
        first = extract_entities(lake, AS_OF, run_id="bench-1")
        took = time.perf_counter() - started
        print(f"  extract_entities, first run: {took:.1f} s = {memories.height / took:,.0f} memories/s {first.counts}")
        started = time.perf_counter()
        again = extract_entities(lake, AS_OF, run_id="bench-2")
        idle = time.perf_counter() - started
        print(f"  extract_entities, nothing new: {idle:.2f} s ({idle / took:.1%} of the first run) {again.counts}")
        changed = memories.sample(fraction=0.01, seed=16).with_columns(
            content=pl.col("content") + pl.lit(" Updated by Kenji in Lisbon."))
        path = Path(folder) / "changes.parquet"
        changed.select("id", "tenant", "agent_id", "user_id", "content", version=pl.lit(1)).write_parquet(path)
        lake.ingest([path], as_of=AS_OF + timedelta(days=1))
        started = time.perf_counter()
        third = extract_entities(lake, AS_OF + timedelta(days=1), run_id="bench-3")
        step = time.perf_counter() - started
        print(f"  extract_entities after 1% changed: {step:.1f} s ({step / took:.1%} of the first run) {third.counts}")
        counts = lake.read("SELECT count(*) AS entities, sum(mention_count) AS mentions FROM entities").frame.row(0)
        facts = lake.read("SELECT count(*) FILTER (WHERE merged_into IS NOT NULL) AS merged, "
                          "count(*) FILTER (WHERE superseded_by IS NOT NULL) AS superseded FROM entity_facts").frame.row(0)
        print(f"  entities: {counts[0]:,}, mentions {counts[1]:,}; facts merged {facts[0]:,}, superseded {facts[1]:,}")


if __name__ == "__main__":
    main()
