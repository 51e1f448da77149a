"""Importing other memory systems' exports (issue 41): a Mem0 ``get_all`` dump of N memories
(default 10,000; English and Chinese, 200 users, Mem0's own field shapes) into a new lake, next
to a baseline measured in the same run: the same memories as our own JSON Lines. Prints seconds,
rows/s and the ratio; the target is < 5 s for 10k. A second import of the same file is the
idempotent skip; a third, of the dump with 1 % of its memories changed, updates only those.

    python benchmarks/import_formats.py [--rows 10000]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = ("prefers dark mode", "meeting on Friday", "refund policy", "用户喜欢喝咖啡", "项目截止日期是下周五",
         "allergic to peanuts", "打印机卡纸", "moved to Lisbon", "weekly report", "深色模式")


def dump(rows: int, changed_every: int = 0, seed: int = 1) -> dict:
    rng = random.Random(seed)
    items = []
    for i in range(rows):
        text = " ".join(rng.choice(WORDS) for _ in range(6)) + f" #{i}"
        if changed_every and i % changed_every == 0:
            text += " (updated)"
        items.append({"id": f"5b1c{i:08d}-0000-4000-8000-000000000000", "memory": text, "hash": f"{hash(text) & 0xffffffff:08x}",
                      "metadata": {"source": "chat"} if i % 3 else None, "categories": ["personal_details"],
                      "created_at": "2026-11-20T08:15:00.123456-08:00", "updated_at": None,
                      "user_id": f"user-{i % 200}", "agent_id": "support-bot" if i % 2 else None, "run_id": None})
    return {"results": items}


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    args = parser.parse_args()
    from memory_lake import Lake

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        document = dump(args.rows)
        mem0_file = tmp / "mem0.json"
        mem0_file.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        ours = tmp / "ours.jsonl"
        ours.write_text("\n".join(json.dumps({"id": m["id"], "tenant": "acme", "user_id": m["user_id"],
                                              "agent_id": m["agent_id"], "content": m["memory"],
                                              "created_at": m["created_at"], "tags": m["categories"]},
                                             ensure_ascii=False) for m in document["results"]) + "\n", encoding="utf-8")
        base_s, _ = timed(lambda: Lake.init(tmp / "base").ingest([ours], as_of="2026-11-30T00:00:00Z"))
        lake = Lake.init(tmp / "lake")
        first_s, first = timed(lambda: lake.ingest([mem0_file], as_of="2026-11-30T00:00:00Z", tenant="acme"))
        again_s, again = timed(lambda: lake.ingest([mem0_file], as_of="2026-11-30T00:00:00Z", tenant="acme"))
        changed = tmp / "mem0-changed.json"
        changed.write_text(json.dumps(dump(args.rows, changed_every=100), ensure_ascii=False), encoding="utf-8")
        update_s, update = timed(lambda: lake.ingest([changed], as_of="2026-12-01T00:00:00Z", tenant="acme"))
    f, u = first.files[0], update.files[0]
    print(f"Mem0 get_all dump, {args.rows:,} memories ({mem0_file.name}, {len(json.dumps(document)) / 1e6:.1f} MB)")
    print(f"  import           {first_s:6.2f} s  {args.rows / first_s:9,.0f} rows/s  ingested {f.ingested:,}, "
          f"quarantined {f.quarantined}  (target < 5 s)")
    print(f"  baseline JSONL   {base_s:6.2f} s  {args.rows / base_s:9,.0f} rows/s  (our own format, same memories)")
    print(f"  ratio            {first_s / base_s:6.2f}x of the baseline")
    print(f"  same file again  {again_s:6.2f} s  ({again.files[0].status})")
    print(f"  1% changed       {update_s:6.2f} s  updated {u.updated:,}, unchanged {u.unchanged:,}, new {u.ingested}")


if __name__ == "__main__":
    main()
