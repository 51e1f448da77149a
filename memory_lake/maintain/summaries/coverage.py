"""Key facts and the skip rule of seed 000 "自动摘要生成与质量评估": summarise where compression is
possible, say so where it is not.

A summary passes only if it keeps ``min_retention`` (90 %) of the source's key facts in at most
source tokens / ``min_compression`` (3x) tokens. Before summarising a key, its sources' key facts are
found (the evaluator's ``extract_facts`` and its own presence test: `Coverage`) and each gets a cost:
its share of the cheapest source sentence that holds it (the sentence's tokens as a list line,
divided by the key facts it holds). The cheapest 90 % of the facts, plus the title and one heading,
is a lower bound on any summary made of whole source sentences that keeps them (a sentence's tokens
pay for at most its own facts). When that bound exceeds source tokens / 3, no such summary can pass:
the sources are already as dense as a summary (atomic one-fact memories), agents read them directly,
and the key is recorded as ``skipped`` with a reason that says so in numbers
(`why_not_summarised`). The rule looks only at the sources and the thresholds, never at the budget
asked for: a chatty source whose facts would fit but that is squeezed into a too small
``max_tokens`` (or summarised badly) is attempted, fails and is reported.

The budget (step 5 of the extractive summariser) is ``[summaries] max_tokens`` and at most the
source tokens / ``min_compression``, so compression never fails (`summary_budget`).
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Sequence

from ...store import Policy
from .cues import HEADINGS


# least_tokens when the facts a summary must keep are not all held by whole sentences
UNREACHABLE_TOKENS = 10**9


@dataclass
class Coverage:
    """The source's key facts (the evaluator's ``extract_facts``) and which of them each text holds,
    by the evaluator's own presence test (a number, date, time or name matched as retention matches
    it; a decision or todo by content-word Dice ≥ ``RETAIN_DICE`` at the same polarity)."""

    facts: list[Any]  # evaluate.Fact
    source_tokens: int
    sentences: list[str]  # the source's sentences, as the evaluator splits them
    sentence_facts: list[frozenset[int]]
    sentence_tokens: list[int]  # of each sentence as a list line ("- " + sentence)
    _ctx: Any = None
    _said: list[Any] = field(default_factory=list)  # the analysed source sentence of each fact

    def facts_in(self, texts: Sequence[str]) -> list[frozenset[int]]:
        """The indexes of the key facts each of `texts` (summary lines) holds."""
        from ..evaluate import _analyse

        self._ctx.source_names = {f.key for f in self.facts if f.kind == "name"}
        return [self._held(_analyse(text, self._ctx, True), text) for text in texts]

    def _held(self, analysed: Any, text: str) -> frozenset[int]:
        from ..evaluate import RETAIN_DICE, _atomic_present, _clean_markdown, _dice, _polarity_conflict

        plain = _clean_markdown(unicodedata.normalize("NFKC", text))
        folded = plain.casefold()
        kinds = {f.kind for f in analysed.facts}
        held = set()
        for n, fact in enumerate(self.facts):
            if fact.kind in ("decision", "todo"):
                if (analysed.words and _dice(fact.key, analysed.words) >= RETAIN_DICE
                        and not _polarity_conflict(self._said[n], analysed)):
                    held.add(n)
            elif fact.kind == "name":
                if fact.text.casefold() in folded and _atomic_present(fact, analysed.facts, plain):
                    held.add(n)
            elif fact.kind in kinds and _atomic_present(fact, analysed.facts, plain):
                held.add(n)
        return frozenset(held)

    def least_tokens(self, min_retention: float) -> int:
        """A lower bound on the tokens of list lines, each a whole source sentence, that together
        hold ``min_retention`` of the key facts: each fact costs its share of the cheapest sentence
        that holds it (the sentence's tokens over the facts it holds), and the cheapest
        ``ceil(min_retention * facts)`` facts are summed. Any set of whole sentences holding that
        many facts costs at least this much (a sentence's tokens cover at most its own facts)."""
        share = [float("inf")] * len(self.facts)
        for held, tokens in zip(self.sentence_facts, self.sentence_tokens):
            for n in held:
                share[n] = min(share[n], tokens / len(held))
        need = math.ceil(min_retention * len(self.facts) - 1e-9)
        least = sum(sorted(share)[:need]) if need else 0
        # a fact that no whole sentence holds (seen on a LoCoMo turn quoting a book title: the fact
        # is found in the text, not in any one of its sentences) costs more than any budget
        return math.ceil(least) if math.isfinite(least) else UNREACHABLE_TOKENS


def key_fact_coverage(texts: Sequence[str]) -> Coverage:
    """The key facts of `texts` and the facts each of their sentences holds (see `Coverage`)."""
    from ...text import count_tokens_many
    from ..evaluate import _analyse, _build_context, _unique_facts
    from ..evaluate import split_sentences as evaluator_sentences

    sentences = [s for t in texts for s in evaluator_sentences(t)]
    ctx = _build_context(sentences, [])
    analysed = [_analyse(s, ctx, False) for s in sentences]
    facts = _unique_facts(list(enumerate(analysed)))
    by_text = {a.text: a for a in analysed}
    coverage = Coverage(facts, sum(count_tokens_many(list(texts))) if texts else 0, sentences, [],
                        count_tokens_many([f"- {s}" for s in sentences]) if sentences else [], ctx,
                        [by_text.get(f.text) for f in facts])
    coverage.sentence_facts = [coverage._held(a, s) for a, s in zip(analysed, sentences)]
    return coverage


def summary_budget(source_tokens: int, max_tokens: int, policy: Policy) -> int:
    """The most tokens a summary of `source_tokens` may take and still pass: within ``max_tokens``
    and at least ``min_compression`` times smaller than its source."""
    return min(max_tokens, math.floor(source_tokens / policy.summaries.min_compression))


def why_not_summarised(coverage: Coverage, *, what: str, title: str, policy: Policy,
                       lang: str = "en") -> str | None:
    """Why no summary of these sources can pass, or None when one can (the skip rule, module
    docstring): the key facts a summary must keep (``min_retention`` of them), each in a whole
    source sentence, take more tokens than ``min_compression`` allows (source tokens / 3). The
    sources are then already as dense as a summary. A budget (``max_tokens``) too small for facts
    that would fit that bound is not a reason to skip: that summary is made, fails and is reported."""
    from ...text import count_tokens

    if not coverage.facts:
        return None
    limit = math.floor(coverage.source_tokens / policy.summaries.min_compression)
    heading = min(count_tokens(f"## {h}") for h in HEADINGS[lang].values())
    share = f"{policy.summaries.min_retention:.0%}".replace("%", " %")
    fact_tokens = coverage.least_tokens(policy.summaries.min_retention)
    if fact_tokens >= UNREACHABLE_TOKENS:
        return (f"{what} hold key facts that no whole sentence of them holds ({len(coverage.facts)} key facts): "
                f"a summary of whole sentences cannot keep {share} of them; agents read them directly")
    least = count_tokens(title) + heading + fact_tokens
    if least <= limit:
        return None
    return (f"{what} are already dense facts ({len(coverage.facts)} key facts in {coverage.source_tokens} tokens): "
            f"keeping {share} of them takes at least {least} tokens, more than the {limit} a "
            f"{policy.summaries.min_compression:g}x summary may use, so any summary would drop facts; "
            f"agents read them directly")
