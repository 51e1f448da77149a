"""Issue 35.2: the text rules of the maintenance steps never raise, whatever the chat text (Hypothesis).

Real chat does surprising things (a LoCoMo turn quoting a book title stopped every nightly run):
speaker prefixes, quotes and titles, numbers and dates, emoji, mixed scripts, very short and very
long texts, many turns in one session. Each example goes through what the steps do with text: the
summary's key facts and its skip rule, the extractive summary and its evaluator, entity mentions,
and the dedup contradiction guard. No model is loaded (the steps' text rules only)."""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_lake.maintain.dedup import contradiction
from memory_lake.maintain.entities import extract_mentions
from memory_lake.maintain.summaries import (Source, key_fact_coverage, summarize_extractive, why_not_summarised)
from memory_lake.store import Policy

WORDS = ["I", "we", "you", "she", "Caroline", "Melanie", "王芳", "周杰", "the", "a", "book", "Charlotte's Web",
         "\"Becoming Nicole\"", "《三体》", "Mr. Smith", "Dr.", "e.g.", "U.S.", "3", "3.5", "1,200", "2026-11-30",
         "May 7", "11月2日", "100%", "$40", "😊", "🎉", "—", "...", "!!", "?", "(", ")", "'", "\"", ":", "：", "，",
         "。", "not", "never", "don't", "不", "没有", "likes", "喜欢", "moved to", "搬到", "Berlin", "杭州", "Wow",
         "Hey", "Thanks!", "好的", "lol", "http://x.y/z", "#tag", "@bob", "\n", "\t", " "]
SPEAKERS = ["Caroline", "Melanie", "用户", "助手", "User", "Assistant", "Dr. Lee", ""]

text = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=40).map(" ".join),
    st.text(min_size=0, max_size=80),  # any Unicode at all
    st.lists(st.sampled_from(WORDS), min_size=200, max_size=400).map(" ".join),  # a very long turn
)
turn = st.tuples(st.sampled_from(SPEAKERS), text, st.sampled_from([":", "：", " -", ""])).map(
    lambda t: f"{t[0]}{t[2]} {t[1]}" if t[0] else t[1])
session = st.lists(turn, min_size=1, max_size=30)
POLICY = Policy()
T0 = datetime(2026, 11, 1)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(session)
def test_the_summary_rules_never_raise_on_chat(turns):
    coverage = key_fact_coverage(turns)
    assert coverage.least_tokens(POLICY.summaries.min_retention) >= 0
    why_not_summarised(coverage, what="these turns", title="# Summary", policy=POLICY)
    sources = [Source(f"t{n}", t, "other", T0 + timedelta(minutes=n)) for n, t in enumerate(turns)]
    summary = summarize_extractive(sources, title="# Summary", max_tokens=POLICY.summaries.max_tokens)
    assert summary.tokens >= 0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(session)
def test_entity_mentions_never_raise_on_chat(turns):
    memories = pl.DataFrame({"id": [f"m{n}" for n in range(len(turns))], "tenant": "t", "agent_id": "a",
                             "user_id": "u", "content": turns,
                             "created_at": [T0 + timedelta(minutes=n) for n in range(len(turns))]})
    mentions = extract_mentions(memories, POLICY)
    assert set(mentions["memory_id"].to_list()) <= set(memories["id"].to_list())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turn, turn)
def test_the_contradiction_guard_never_raises_on_chat(a, b):
    contradiction(a, b)
    contradiction(b, a)


# ---------------------------------------------------------------------------- whole snapshots, every step
NO_MODELS = '[search]\nmodel = "none"\nmultilingual_model = "none"\n'
record = st.fixed_dictionaries({
    "user_id": st.sampled_from(["u1", "u2", "用户甲", "a b", ""]),
    "session_id": st.sampled_from(["s1", "s2", None]),
    "tier": st.sampled_from(["working", "short_term", "long_term", "important"]),
    "type": st.sampled_from(["event", "fact", "preference", "todo", "other"]),
    "content": turn,
    "minutes": st.integers(min_value=0, max_value=60 * 24 * 200),
})


@pytest.mark.slow  # a lake and a whole nightly run per example
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(snapshot=st.lists(record, min_size=1, max_size=40))
def test_a_generated_snapshot_goes_through_every_nightly_step_without_a_step_error(snapshot, tmp_path_factory):
    """Issue 35.2: generated snapshots (any Unicode, speaker prefixes, quotes, titles, numbers, emoji,
    mixed scripts, very short and very long texts, many turns in one session, every tier) through
    ingest and every step of the nightly run: the run ends ok (a step that raised would make it
    degraded, naming the scope), every record is in the lake (summaries the run wrote aside) or in quarantine with a reason."""
    from memory_lake import Lake
    from memory_lake.observe import run_nightly_steps

    from ..conftest import write_jsonl

    root = tmp_path_factory.mktemp("fuzz")
    lake = Lake.init(root / "lake")
    (lake.root / "memory-lake.toml").write_text(NO_MODELS, encoding="utf-8")
    lake = Lake.open(lake.root)
    as_of = datetime(2026, 11, 30, 3, 0)
    records = [{"id": f"r{n}", "tenant": "fuzz", "agent_id": "bot", "user_id": r["user_id"] or None,
                "session_id": r["session_id"], "tier": r["tier"], "type": r["type"], "content": r["content"],
                "created_at": (as_of - timedelta(minutes=r["minutes"] + 1)).isoformat() + "Z"}
               for n, r in enumerate(snapshot)]
    write_jsonl(lake.inbox / "fuzz.jsonl", records)
    summary = run_nightly_steps(lake, as_of, root / "reports")
    assert summary["status"] in ("ok", "blocked"), summary.get("errors")
    assert not summary.get("errors")
    kept = lake.sql("SELECT count(*) AS n FROM memories WHERE NOT (type = 'summary' AND operator = 'system')").row(0)[0]
    quarantined = lake.sql("SELECT count(*) AS n FROM quarantine").row(0)[0]
    assert kept + quarantined == len(records)
