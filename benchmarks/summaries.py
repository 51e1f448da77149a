"""Summaries: the nightly summarize step on 10k memories, in summaries per second.

A lake of `--memories` short-term memories (100 scopes, each a planning conversation of long turns,
see tests/maintain/conversation.py) is ingested (not timed); then the summarize step runs twice, timed:
the first run summarises and scores every scope; the second finds every source unchanged and
regenerates nothing (its time is the cost of the hash check). Prints both, summaries per second and
the share of summaries that passed the gate.

    python benchmarks/summaries.py [--memories 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory_lake import Lake, write_snapshot  # noqa: E402
from memory_lake.maintain import summarize  # noqa: E402
from tests.maintain.conversation import build_conversation  # noqa: E402

AS_OF = datetime(2026, 11, 30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    args = parser.parse_args()
    per_scope = 100
    scopes = max(1, args.memories // per_scope)
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.open(Path(tmp) / "lake", create=True)
        records = []
        for s in range(scopes):
            turns = build_conversation(turns=per_scope, filler=4, seed=s)
            records += [{"id": f"s{s}-t{k}", "tenant": "bench", "agent_id": "bot", "user_id": f"u{s}",
                         "tier": "short_term", "content": t["content"],
                         "created_at": (AS_OF - timedelta(hours=per_scope - k)).isoformat() + "Z"}
                        for k, t in enumerate(turns)]
        write_snapshot(records, lake.root)
        lake.ingest(as_of=AS_OF)
        started = time.perf_counter()
        first = summarize(lake, AS_OF)
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        second = summarize(lake, AS_OF + timedelta(days=1))
        second_s = time.perf_counter() - started
    made = first.counts["regenerated"]
    print(f"summaries: {len(records)} memories in {scopes} scopes")
    print(f"  first run : {made} summaries in {first_s:.1f} s = {made / first_s:.2f} summaries/s "
          f"({first.counts['published']} passed the gate, {first.counts['failed']} failed)")
    print(f"  second run: {second.counts['regenerated']} regenerated, {second.counts['unchanged']} unchanged in "
          f"{second_s:.2f} s ({first_s / max(second_s, 1e-9):.0f}x faster than the first)")


if __name__ == "__main__":
    main()
