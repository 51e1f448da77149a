"""The score: :func:`evaluate_summary` runs the four metrics (each in its module) on a source and
a summary and gates them with the ``[summaries]`` thresholds into a :class:`SummaryScore`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...store import Policy
from .accuracy import _accuracy, _support_by_words
from .compression import _compression
from .cosine import _Cosine
from .extract import _analyse, _unique_facts
from .names import _build_context
from .readability import _readability
from .retention import _retention, _retention_by_words
from .sentences import split_sentences, summary_statements

SummaryPolicy = type(Policy().summaries)  # the [summaries] section of the policy (store/policy.py)


@dataclass(frozen=True)
class SummaryScore:
    """The four metrics of a summary against its source (see the package docstring), whether it
    passed the policy's thresholds, and what it lost or made up."""

    retention: float
    compression: float
    readability: float
    accuracy: float
    passed: bool
    failed: list[str]
    thresholds: dict[str, float]
    missing_facts: list[str]
    unsupported_statements: list[str]
    source_tokens: int
    summary_tokens: int

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `memory-lake summary-score --json`."""
        return {"retention": self.retention, "compression": self.compression, "readability": self.readability,
                "accuracy": self.accuracy, "passed": self.passed, "thresholds": dict(self.thresholds),
                "missing_facts": list(self.missing_facts), "unsupported_statements": list(self.unsupported_statements),
                "source_tokens": self.source_tokens, "summary_tokens": self.summary_tokens}


def evaluate_summary(source_texts: list[str], summary_markdown: str, policy: SummaryPolicy | None = None, *,
                     model: str | None = None) -> SummaryScore:
    """Score `summary_markdown` against `source_texts` on retention, compression, readability and
    accuracy (each defined in the package docstring) and gate it with `policy`'s thresholds
    (default ``Policy().summaries``; also ``max_tokens``). `model` is the embedding model for the
    English cosines (default the search policy's model; ``"none"`` uses word overlap only)."""
    policy = policy or Policy().summaries
    model = model if model is not None else Policy().search.model
    texts = [t for t in source_texts if isinstance(t, str)]
    summary_markdown = summary_markdown or ""

    sentences = [s for t in texts for s in split_sentences(t)]
    statements, headings, lines = summary_statements(summary_markdown)
    ctx = _build_context(sentences, [s.text for s in statements])
    source = [_analyse(s, ctx, False) for s in sentences]
    source_facts = _unique_facts(list(enumerate(source)))
    ctx.source_names = {f.key for f in source_facts if f.kind == "name"}
    stated = [_analyse(s.text, ctx, True) for s in statements]
    cosine = _Cosine(model)

    # Word overlap first; the pairs it cannot settle go to MiniLM in one batch, then are decided.
    present, undecided = _retention_by_words(source_facts, source, stated, summary_markdown, cosine)
    support = _support_by_words(statements, stated, source, ctx, cosine)
    cosine.compute()
    retention, missing = _retention(source_facts, present, undecided, cosine)
    accuracy, unsupported = _accuracy(statements, stated, support, cosine)

    compression, source_tokens, summary_tokens = _compression(texts, summary_markdown)
    readability = _readability(statements, headings, lines, summary_markdown)

    thresholds = {"retention": policy.min_retention, "compression": policy.min_compression,
                  "readability": policy.min_readability, "accuracy": policy.min_accuracy,
                  "max_tokens": policy.max_tokens}
    scores = {"retention": round(retention, 4), "compression": round(compression, 4),
              "readability": round(readability, 4), "accuracy": round(accuracy, 4)}
    failed = [name for name, value in scores.items() if value < thresholds[name]]
    if summary_tokens > policy.max_tokens:
        failed.append("max_tokens")
    return SummaryScore(**scores, passed=not failed, failed=failed, thresholds=thresholds, missing_facts=missing,
                        unsupported_statements=unsupported, source_tokens=source_tokens,
                        summary_tokens=summary_tokens)
