"""Seed 000 "自动摘要生成与质量评估" example 1: compress a long conversation to fit an agent's context.

All but the last ``[summaries] keep_recent_turns`` turns (5) are summarised, the last ones kept
verbatim (the short-term memory is what gets compressed; working memory stays verbatim). The summary
is scored against the older turns by the same gate as the nightly one; older turns already as dense
as a summary may be (the skip rule, ``coverage.why_not_summarised``), or whose summary fails its gate,
are kept whole, and ``CompressedConversation.note`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

from ...store import Policy
from .cues import language
from .coverage import key_fact_coverage, why_not_summarised
from .extract import Source
from .gate import SummaryResult, describe_failure, summarize_sources


@dataclass
class CompressedConversation:
    """A long conversation made to fit: the summary of the older turns and the last turns verbatim."""

    summary: str
    recent: list[dict[str, Any]]
    context: str
    source_tokens: int
    context_tokens: int
    result: SummaryResult | None
    note: str | None = None  # why the older turns were kept whole, when they were

    def as_dict(self) -> dict[str, Any]:
        out = {"summary": self.summary, "recent": self.recent, "context": self.context,
               "source_tokens": self.source_tokens, "context_tokens": self.context_tokens, "note": self.note}
        if self.result is not None:
            out |= {"scores": self.result.scores(), "passed": self.result.passed, "method": self.result.method}
        return out


def _turn_text(turn: dict[str, Any]) -> str:
    role = turn.get("role")
    return f"{role}: {turn['content']}" if role else str(turn["content"])


def compress_conversation(turns: Sequence[dict[str, Any] | str], keep_last: int | None = None,
                          max_tokens: int | None = None, policy: Policy | None = None,
                          title: str | None = None) -> CompressedConversation:
    """Seed 000 example 1: summarise all but the last `keep_last` turns (default ``[summaries]
    keep_recent_turns``, 5) and keep those verbatim. `turns` are chat messages (``{"role",
    "content"}``, optionally ``created_at``) or strings. `max_tokens` bounds the whole context
    (summary plus kept turns); by default the summary gets ``[summaries] max_tokens`` of its own.
    The summary is scored against the older turns (``result``). Older turns already as dense as a
    summary may be (the nightly's skip rule, `why_not_summarised`) are kept whole when they fit the
    budget, and `note` says why: a summary of them would drop facts."""
    from ...text import count_tokens

    policy = policy or Policy()
    keep = policy.summaries.keep_recent_turns if keep_last is None else keep_last
    messages = [t if isinstance(t, dict) else {"content": t} for t in turns]
    older, recent = (messages[:-keep], messages[-keep:]) if keep else (messages, [])
    recent_text = "\n\n".join(_turn_text(t) for t in recent)
    recent_tokens = count_tokens(recent_text)
    budget = (max_tokens - recent_tokens - 2) if max_tokens is not None else policy.summaries.max_tokens
    source_tokens = count_tokens("\n\n".join(_turn_text(t) for t in messages))
    if not older:
        return CompressedConversation("", recent, recent_text, source_tokens, recent_tokens, None)
    if budget <= 0:
        raise ValueError(f"the last {keep} turns alone take {recent_tokens} tokens, more than max_tokens={max_tokens}")
    sources = [Source(f"turn-{k + 1}", str(t["content"]), t.get("type"), _as_datetime(t.get("created_at")),
                      float(t.get("importance", policy.ingest.default_importance)))
               for k, t in enumerate(older)]
    lang = language(s.content for s in sources)
    heading = title or ("# 早前对话摘要" if lang == "zh" else f"# Summary of turns 1-{len(older)}")
    coverage = key_fact_coverage([s.content for s in sources])
    older_text = "\n\n".join(_turn_text(t) for t in older)
    dense = why_not_summarised(coverage, what=f"turns 1-{len(older)}", title=heading, policy=policy, lang=lang)
    if dense and count_tokens(older_text) <= budget:
        context = older_text + "\n\n" + recent_text + "\n" if recent_text else older_text + "\n"
        return CompressedConversation("", messages, context, source_tokens, count_tokens(context), None,
                                      f"kept every turn whole: {dense}")
    result = summarize_sources(sources, title=heading, max_tokens=budget, policy=policy, lang=lang,
                               coverage=coverage)
    if not result.passed:
        # a summary that failed its own gate never stands in for the turns (it drops facts or says
        # what they do not): the turns stay verbatim, `result` keeps the scores, `note` says why
        context = older_text + "\n\n" + recent_text + "\n" if recent_text else older_text + "\n"
        tokens = count_tokens(context)
        over = (f"; the context takes {tokens} tokens, over max_tokens={max_tokens}"
                if max_tokens is not None and tokens > max_tokens else "")
        return CompressedConversation("", messages, context, source_tokens, tokens, result,
                                      f"kept every turn whole: the summary of turns 1-{len(older)} failed its gate "
                                      f"({describe_failure(result.score)}){over}")
    context = result.markdown + ("\n" + recent_text + "\n" if recent_text else "")
    return CompressedConversation(result.markdown, recent, context, source_tokens, count_tokens(context), result)


def _as_datetime(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).replace(tzinfo=None)
