"""Structured summaries of a scope's short-term memory and of each session (seed 000 "自动摘要生成与
质量评估"), regenerated nightly and gated by the four-metric evaluator (``evaluate.evaluate_summary``).

**The extractive summariser** (offline, the default) works on sentences, in six steps: split
every source text into sentences, drop pleasantries and process chatter, and classify the rest as
events, decisions, lessons and todos by cues for English and Chinese (steps 1-3, ``cues.py``); drop
near-duplicate sentences with dedup's machinery and guard, fill the token budget by key-fact
coverage, then importance, and write the Markdown, one section per category and a heading per day
(steps 4-6, ``extract.py``). Lines are extracted, never rewritten, apart from a leading label the
section heading repeats: the source's numbers, dates and names stay verbatim, which is what the
evaluator's accuracy checks.

**What is summarised.** A scope's summary covers its active short-term memories (seed 000 example
1: the short-term memory is what gets compressed; working memory stays verbatim); a session's covers
the active memories of that session, any tier. A scope or session is summarised only when its
sources hold more tokens than the budget (below that they fit as they are and there is nothing to
compress) and a summary of them can pass (the skip rule below). A summary memory of the lake itself (type ``summary``, operator ``system``) is never a
source.

**The skip rule: summarise where compression is possible, say so where it is not.** A summary
passes only if it keeps ``min_retention`` (90 %) of the source's key facts in at most source tokens
/ ``min_compression`` (3x) tokens. Before summarising a key, its sources' key facts are found and
each gets a cost: its share of the cheapest source sentence that holds it (the sentence's tokens as
a list line, divided by the key facts it holds). The cheapest 90 % of the facts, plus the title and
one heading, is a lower bound on any summary made of whole source sentences that keeps them (a
sentence's tokens pay for at most its own facts). When that bound exceeds source tokens / 3, no
such summary can pass: the sources are already as dense as a summary (atomic one-fact memories),
agents read them directly, and the key is recorded as ``skipped`` with a reason that says so in
numbers ("51 short-term memories are already dense facts (58 key facts in 785 tokens): keeping
90 % of them takes at least 361 tokens, more than the 261 a 3x summary may use ..."). It is not a
failure and not silent: the step's counts and details, ``summary_state`` (status ``skipped``,
``reason``) and ``memory-lake summarize`` show it. The rule looks only at the sources and the
thresholds, never at the budget asked for: a chatty source whose facts would fit but that is
squeezed into a too small ``max_tokens`` (or summarised badly) is attempted, fails and is reported.
A scope whose short-term memories are exactly one session's is left to that session's summary.

**The optional LLM summariser** (``llm.py``) sits behind the same interface and is used when
``[summaries] llm_base_url`` is set; its output is scored by the same evaluator and the extractive
summary replaces it when it fails the gate or the endpoint errs (``SummaryResult.fallback`` says why).

**Nightly regeneration** (the ``summarize`` step, after dedup): a scope's or session's summary is
regenerated only when the hash of its sources (ids and content hashes, plus the budget) changed.
One that passes all four thresholds is published as a memory of type ``summary``, tier
``long_term``, operator ``system``, linked to its sources (``extra.summary_of`` and the
``summary_sources`` table, which keeps every source a summary ever drew on). One that fails is not
published: the previous summary stays, and ``summary_state`` keeps the scores, the failed
thresholds, the missing facts and the unsupported statements, which the run result and the report
show. Forgetting a source forgets every summary that ever drew on it (their text holds it); the
next run summarises again from what is left.

**Where the parts live** (each file opens with the rule it implements; they import one way, in this
order):

- ``cues.py``: steps 1-3, sentences, chatter and the four categories (``data/summary_cues.tsv``);
- ``coverage.py``: the source's key facts and the skip rule (``why_not_summarised``, the budget);
- ``extract.py``: steps 4-6, the extractive summariser (``summarize_extractive``);
- ``gate.py``: scoring by the evaluator and the optional LLM (``summarize_sources``);
- ``compress.py``: seed example 1 (``compress_conversation``);
- ``plan.py``: the scopes and sessions summarised, their source hashes, ``preview_summaries``;
- ``step.py``: the nightly ``summarize`` step: publish, keep the previous, record, archive;
- ``report.py``: forget (the ``summary_state`` scrubber) and the report (``failed_summaries``,
  ``scrub_summary_report``).
"""

from __future__ import annotations

from .cues import (CATEGORIES, CUES_FILE, FACTS, HEADINGS, SECTIONS, TYPE_CATEGORY, _addressee, classify, is_chatter,
                   language, split_sentences, summary_cues)
from .coverage import UNREACHABLE_TOKENS, Coverage, key_fact_coverage, summary_budget, why_not_summarised
from .extract import (Extraction, Item, Source, Summary, drop_near_duplicates, extract_items, render_markdown,
                      summarize_extractive, title_for)
from .gate import SummaryResult, describe_failure, summarize_sources
from .compress import CompressedConversation, compress_conversation
from .plan import (LAKE_SUMMARY_SQL, SUMMARISER_VERSION, SUMMARY_SOURCE, Planned, _scope_title, make_summary,
                   plan_summaries, preview_summaries, summary_id)
from .step import summarize
from .report import failed_summaries, scrub_summary_report

__all__ = [
    "CATEGORIES", "CUES_FILE", "FACTS", "HEADINGS", "SECTIONS", "TYPE_CATEGORY", "classify", "is_chatter", "language",
    "split_sentences", "summary_cues",
    "UNREACHABLE_TOKENS", "Coverage", "key_fact_coverage", "summary_budget", "why_not_summarised",
    "Extraction", "Item", "Source", "Summary", "drop_near_duplicates", "extract_items", "render_markdown",
    "summarize_extractive", "title_for",
    "SummaryResult", "describe_failure", "summarize_sources",
    "CompressedConversation", "compress_conversation",
    "LAKE_SUMMARY_SQL", "SUMMARISER_VERSION", "SUMMARY_SOURCE", "Planned", "make_summary", "plan_summaries",
    "preview_summaries", "summary_id",
    "summarize",
    "failed_summaries", "scrub_summary_report",
    # private names used outside the package: `_scope_title` (benchmarks/summaries.py) and `_addressee`
    # (a zero-argument lru_cache that tests/warm.py finds in this namespace and warms)
    "_scope_title", "_addressee",
]
