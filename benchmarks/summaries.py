"""Summaries: the summariser and the evaluator on 10k memories, timed apart, and the nightly step.

A lake of `--memories` short-term memories in `--sessions` sessions (each a planning conversation of
long turns, tests/maintain/conversation.py: a handful of facts in chatter) is ingested (not timed).
Then, on the same planned keys:

1. the summariser alone: key facts found, the skip rule checked and the extractive summary made
   (``make``: ``key_fact_coverage`` + ``why_not_summarised`` + ``summarize_extractive``), in
   summaries per second;
2. the evaluator alone: ``evaluate_summary`` of each summary against its sources, in scores per
   second (its English cosines use MiniLM, loaded before the clock starts);
3. the nightly ``summarize`` step twice: the first run plans, summarises, scores and publishes every
   key; the second finds every source unchanged and regenerates nothing (the cost of the hash check).

    python benchmarks/summaries.py [--memories 10000] [--sessions 100]
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
from memory_lake.maintain.evaluate import evaluate_summary  # noqa: E402
from memory_lake.maintain.summaries import (  # noqa: E402
    _scope_title, key_fact_coverage, language, plan_summaries, summarize_extractive, why_not_summarised)
from memory_lake.text import count_tokens  # noqa: E402
from tests.maintain.conversation import build_conversation  # noqa: E402

AS_OF = datetime(2026, 11, 30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    sessions = max(1, args.sessions)
    per_session = max(1, args.memories // sessions)
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.open(Path(tmp) / "lake", create=True)
        records = []
        for s in range(sessions):
            turns = build_conversation(turns=per_session, filler=4, seed=s)
            records += [{"id": f"s{s}-t{k}", "tenant": "bench", "agent_id": "bot", "user_id": f"u{s % 10}",
                         "session_id": f"sess-{s}", "tier": "short_term", "content": t["content"],
                         "created_at": (AS_OF - timedelta(hours=per_session - k)).isoformat() + "Z",
                         "last_accessed_at": AS_OF.isoformat() + "Z"}
                        for k, t in enumerate(turns)]
        write_snapshot(records, lake.root)
        lake.ingest(as_of=AS_OF)
        policy = lake.policy
        budget = policy.summaries.max_tokens
        count_tokens("warm up the tokenizer")
        evaluate_summary(["Warm up: we decided to use MiniLM."], "# W\n\n## Decisions\n- We decided to use MiniLM.\n")

        started = time.perf_counter()
        with lake.reading() as (con, _source, _note):
            planned, small = plan_summaries(con, policy)
        plan_s = time.perf_counter() - started
        source_tokens = sum(p.source_tokens for p in planned)

        started = time.perf_counter()
        made = []
        skipped = 0
        for p in planned:
            texts = [s.content for s in p.sources]
            lang = language(texts)
            title = _scope_title(p.key, lang)
            coverage = key_fact_coverage(texts)
            if why_not_summarised(coverage, what="", title=title, policy=policy, lang=lang):
                skipped += 1
                continue
            room = min(budget, int(coverage.source_tokens / policy.summaries.min_compression))
            made.append((texts, summarize_extractive(p.sources, title=title, max_tokens=room, lang=lang,
                                                     policy=policy, coverage=coverage).markdown))
        make_s = time.perf_counter() - started

        started = time.perf_counter()
        scores = [evaluate_summary(texts, markdown, policy.summaries) for texts, markdown in made]
        eval_s = time.perf_counter() - started
        passed = sum(score.passed for score in scores)

        started = time.perf_counter()
        first = summarize(lake, AS_OF)
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        second = summarize(lake, AS_OF + timedelta(days=1))
        second_s = time.perf_counter() - started

    n = len(made)
    print(f"summaries: {len(records)} memories in {sessions} sessions ({source_tokens} source tokens in "
          f"{len(planned)} keys to summarise; {len(small)} keys left out: a scope that is one session, or fits)")
    print(f"  plan (sources, token counts, hashes): {plan_s:.1f} s")
    print(f"  summariser: {n} summaries in {make_s:.1f} s = {n / make_s:.2f} summaries/s "
          f"({skipped} skipped as too dense)")
    print(f"  evaluator : {n} scores in {eval_s:.1f} s = {n / eval_s:.2f} scores/s ({passed} of {n} passed; "
          f"the evaluator takes {eval_s / max(make_s, 1e-9):.1f}x the summariser's time)")
    made_step = first.counts["regenerated"]
    print(f"  nightly step, first run : {made_step} summaries in {first_s:.1f} s = {made_step / first_s:.2f} "
          f"summaries/s ({first.counts['published']} published, {first.counts['failed']} failed, "
          f"{first.counts['skipped']} skipped)")
    print(f"  nightly step, second run: {second.counts['regenerated']} regenerated, {second.counts['unchanged']} "
          f"unchanged in {second_s:.2f} s ({first_s / max(second_s, 1e-9):.0f}x faster than the first)")


if __name__ == "__main__":
    main()
