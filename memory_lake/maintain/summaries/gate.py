"""Scoring and the LLM: every summary is scored by the four-metric evaluator of seed 000
"自动摘要生成与质量评估" (``evaluate.evaluate_summary``: retention, compression, readability, accuracy)
against its sources, and passes the gate only when it meets all four thresholds.

**The optional LLM summariser** (``llm.py``) sits behind the same interface and is used when
``[summaries] llm_base_url`` is set; its output is scored by the same evaluator and the extractive
summary replaces it when it fails the gate or the endpoint errs (``SummaryResult.fallback`` says why).
Either writes within `summary_budget`, so that compression is never what fails.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

from ...store import Policy
from .cues import language
from .coverage import Coverage, key_fact_coverage, summary_budget
from .extract import Source, summarize_extractive


@dataclass
class SummaryResult:
    """A summary as the gate saw it: the Markdown, its scores, and how it was made."""

    markdown: str
    score: Any  # evaluate.SummaryScore
    method: str  # extractive | llm
    fallback: str | None = None  # why the LLM summary was not used
    source_ids: list[str] = field(default_factory=list)
    source_tokens: int = 0

    @property
    def passed(self) -> bool:
        return bool(self.score.passed)

    def scores(self) -> dict[str, float]:
        return {k: getattr(self.score, k) for k in ("retention", "compression", "readability", "accuracy")}


def summarize_sources(sources: Sequence[Source], *, title: str, max_tokens: int | None = None,
                      policy: Policy | None = None, lang: str | None = None,
                      coverage: Coverage | None = None) -> SummaryResult:
    """Summarise and score `sources`: with the LLM when ``[summaries] llm_base_url`` is set (its
    summary is kept only when it passes the gate), else, or as the fallback, extractively. Either
    writes within `summary_budget` (``max_tokens``, and ``min_compression`` times smaller than the
    sources), so that compression is never what fails."""
    from ...text import count_tokens
    from ..evaluate import evaluate_summary

    policy = policy or Policy()
    budget = max_tokens or policy.summaries.max_tokens
    gate = dataclasses.replace(policy.summaries, max_tokens=budget)  # the thresholds, at this budget
    lang = lang or language(s.content for s in sources)
    texts = [s.content for s in sources]
    ids = [s.id for s in sources]
    coverage = coverage or key_fact_coverage(texts)
    room = summary_budget(coverage.source_tokens, budget, policy)
    fallback = None
    if policy.summaries.llm_base_url:
        from ..llm import LLMError, summarize_llm

        try:
            markdown = summarize_llm(sources, title=title, max_tokens=room, lang=lang, policy=policy)
        except LLMError as exc:
            fallback = f"LLM endpoint failed: {exc}"
        else:
            # an answer over the budget fails the gate's max_tokens whatever it says: it is not
            # scored (scoring a 20,000-character line takes over a minute). The count bounds bytes too.
            tokens = count_tokens(markdown)
            if tokens > budget:
                fallback = f"LLM summary failed the gate: {tokens} tokens > max_tokens {budget}"
            else:
                score = evaluate_summary(texts, markdown, policy=gate)
                if score.passed:
                    return SummaryResult(markdown, score, "llm", None, ids, score.source_tokens)
                fallback = "LLM summary failed the gate: " + describe_failure(score)
    summary = summarize_extractive(sources, title=title, max_tokens=room, lang=lang, policy=policy,
                                   coverage=coverage)
    score = evaluate_summary(texts, summary.markdown, policy=gate)
    return SummaryResult(summary.markdown, score, "extractive", fallback, ids, score.source_tokens)


def describe_failure(score: Any) -> str:
    """One line: each failed threshold with its value, then the first missing facts and unsupported
    statements."""
    parts = [f"{name} {getattr(score, name):.2f} < {score.thresholds.get(name)}" if isinstance(getattr(score, name, None), float)
             else f"{score.summary_tokens} tokens > {name} {score.thresholds.get(name)}" if name == "max_tokens"
             else name for name in score.failed]
    if score.missing_facts:
        parts.append("missing: " + "; ".join(map(str, score.missing_facts[:5])))
    if score.unsupported_statements:
        parts.append("unsupported: " + "; ".join(map(str, score.unsupported_statements[:3])))
    return ", ".join(parts) or "failed"
