"""Structured summaries of a scope's short-term memory and of each session (seed 000 "自动摘要生成与
质量评估"), regenerated nightly and gated by the four-metric evaluator (``evaluate.evaluate_summary``).

**The extractive summariser** (offline, the default) works on sentences:

1. every source text (a memory, or a conversation turn) is split into sentences (``。！？；`` and
   ``.!?`` before a space or the end, or a line break);
2. pleasantries and process chatter are dropped: a sentence that is nothing but ``chatter`` cues
   (``thanks``, ``ok``, ``let me check``, ``好的``, ``谢谢``, ``稍等`` ...) and stop words, and holds
   no number;
3. the rest is classified as an event, a decision, a lesson or a todo by rules for English and
   Chinese: the cues of ``data/summary_cues.tsv`` (``decided``, ``agreed``, ``采用``, ``决定``;
   ``lesson``, ``root cause``, ``教训``, ``注意``; ``need to``, ``deadline``, ``待办``, ``截止`` ...)
   count one each, and the memory's own ``type`` (event / decision / lesson / todo) counts two. A
   sentence with no cue and no typed memory behind it, but holding a date, is an event; any other
   sentence is background, kept (under ``## Facts`` / ``## 事实``) only for a key fact no other
   line holds;
4. near-duplicate sentences are dropped with dedup's own machinery (``dedup.near_pairs``: MinHash
   over character n-grams, numbers read as ``0``) and its contradiction guard: two sentences that
   differ in a number, a date, a negation or an antonym are both kept;
5. the budget is ``[summaries] max_tokens`` (500, the embedding model's tokenizer) and at most the
   source tokens / ``min_compression`` (so compression never fails). It is filled by key-fact
   coverage first: the line holding the most of the source's key facts not yet kept, per token
   (the evaluator's ``extract_facts`` and its own presence test), ties by importance; then by
   importance (decisions, todos, lessons, raised by the memory's importance and the numbers, dates
   and names a line holds) for the decisions, todos, lessons and typed lines that still fit;
6. the Markdown has a title and one section per category present (``## Events`` ``## Decisions``
   ``## Lessons`` ``## Todos``; ``## 事件`` ``## 决策`` ``## 教训`` ``## 待办`` for a Chinese scope),
   one fact per bullet, in time order, under a ``###`` heading per day the memories were written
   (the timestamp an item keeps; a heading is structure, not a statement, for the evaluator).

Lines are extracted, never rewritten, apart from a leading label the section heading repeats
(``TODO:``, ``教训：``): the source's numbers, dates and names stay verbatim, which is what the
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
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import heapq
import html
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

import polars as pl

from ..store import (HISTORY_COLUMNS, MemoryLakeError, Policy, StepReport, iso, next_history_seq, row_image,
                     step_error, transaction)
from ..store import register_scrubber

CUES_FILE = Path(__file__).parent / "data" / "summary_cues.tsv"
CATEGORIES = ("events", "decisions", "lessons", "todos")
# a memory's type names its category (seed 000: 事件 / 决策 / 教训 / 待办)
TYPE_CATEGORY = {"event": "events", "decision": "decisions", "lesson": "lessons", "todo": "todos"}
_CUE_CATEGORY = {"event": "events", "decision": "decisions", "lesson": "lessons", "todo": "todos"}
# A sentence of no category that holds key facts (a name, a number, a date) goes under Facts.
FACTS = "facts"
SECTIONS = (*CATEGORIES, FACTS)
HEADINGS = {
    "en": {"events": "Events", "decisions": "Decisions", "lessons": "Lessons", "todos": "Todos", FACTS: "Facts"},
    "zh": {"events": "事件", "decisions": "决策", "lessons": "教训", "todos": "待办", FACTS: "事实"},
}
# Which category wins the budget first when everything does not fit (seed 000 lists decisions and
# todos as the key facts an agent acts on).
_CATEGORY_WEIGHT = {"decisions": 1.0, "todos": 0.9, "lessons": 0.8, "events": 0.7, FACTS: 0.3}
_TYPE_WEIGHT = 2  # a memory's own type counts as two cues
# The lake's own summaries, in SQL: never a source, never touched by tier rules or dedup.
LAKE_SUMMARY_SQL = "(type = 'summary' AND operator = 'system')"
SUMMARY_SOURCE = "memory-lake summarize"
# Bumped when the summariser's output for the same sources changes: every summary is regenerated.
SUMMARISER_VERSION = "3"

_HAN = re.compile(r"[\u3400-\u9fff]")
_SENTENCE_END = re.compile(r"(?<=[。！？；!?])\s*|(?<=[.])\s+(?=\S)|\n+")
_DIGIT = re.compile(r"\d")
# A label the section heading repeats ("TODO:", "Lesson:", "待办：", "教训：").
_LABEL = re.compile(r"^\s*(todo|to-do|action item|lesson|lessons learned|decision|event|待办|教训|经验|决策|事件)"
                    r"\s*[:：]\s*", re.IGNORECASE)
# a leading label names the category as a memory's type does
_LABEL_CATEGORY = {"todo": "todos", "to-do": "todos", "action item": "todos", "待办": "todos", "lesson": "lessons",
                   "lessons learned": "lessons", "教训": "lessons", "经验": "lessons", "decision": "decisions",
                   "决策": "decisions", "event": "events", "事件": "events"}
# A number, a date or a capitalised word inside a sentence: what makes a line worth its tokens.
_FACT = re.compile(r"\d+(?:[.,:/-]\d+)*|(?<=\s)[A-Z][\w-]+|[\u4e00-\u9fff]{2,}(?=[负参同决])")


# ---------------------------------------------------------------------------- cues and sentences
@functools.lru_cache(maxsize=1)
def summary_cues() -> dict[str, re.Pattern]:
    """One pattern per category (event, decision, lesson, todo, chatter) from ``data/summary_cues.tsv``:
    English cues as whole words, Chinese cues as substrings, case-insensitive."""
    cues: dict[str, list[str]] = {}
    for line in CUES_FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        category, lang, cue = line.split("\t")
        words = r"\s+".join(re.escape(w) for w in cue.split())
        cues.setdefault(category, []).append(words if lang == "zh" else rf"(?<![\w'-]){words}(?![\w'-])")
    # longest first, so "thank you" is taken before "thank"
    return {c: re.compile("|".join(sorted(p, key=len, reverse=True)), re.IGNORECASE) for c, p in cues.items()}


def split_sentences(text: str) -> list[str]:
    """The sentences of `text` (Chinese and English end marks, line breaks), stripped, non-empty."""
    return [s.strip() for s in _SENTENCE_END.split(text or "") if s and s.strip()]


_CLAUSE_END = re.compile(r"[，,;；:：、]")


@functools.lru_cache(maxsize=1)
def _addressee() -> re.Pattern:
    """Whom a greeting greets and nothing else: 陈女士, 张经理, Ms. Chen, Carol, a title alone."""
    titles = [line.split("\t") for line in CUES_FILE.read_text(encoding="utf-8").splitlines()
              if line.startswith("title\t")]
    zh = "|".join(re.escape(cue) for _, lang, cue in titles if lang == "zh")
    en = "|".join(re.escape(cue) for _, lang, cue in titles if lang == "en")
    return re.compile(rf"^\s*(?:[\u4e00-\u9fff]{{0,3}}(?:{zh})|(?:(?:{en})\.?\s*)?[A-Z][\w'-]*|(?:{en})\.?)?\s*$",
                      re.IGNORECASE)


def is_chatter(sentence: str) -> bool:
    """True for a pleasantry or process chatter, no number in it, each clause of it one of: nothing
    but chatter cues and stop words ("好的，谢谢！"), a greeting and whom it greets ("陈女士您好",
    "Hi Carol"), thanks for nothing but patience, help and the like ("感谢您的耐心说明")."""
    if _DIGIT.search(sentence):
        return False
    from ..text import tokenize

    cues = summary_cues()
    chatter, greeting, thanks = cues["chatter"], cues["greeting"], cues["thanks"]

    def idle(clause: str) -> bool:
        if not tokenize(chatter.sub(" ", clause)):
            return True
        if greeting.search(clause) and _addressee().match(greeting.sub(" ", clause).strip(" !！.。")):
            return True
        return bool(thanks.search(clause)) and not tokenize(cues["courtesy"].sub(" ", chatter.sub(" ", clause)))

    return all(idle(clause) for clause in _CLAUSE_END.split(sentence) if clause.strip())


def classify(sentence: str, memory_type: str | None = None) -> str | None:
    """The category of a sentence (events, decisions, lessons, todos), or None for background.
    Cues count one each, the memory's own type (or a leading label, ``Lesson:``) two; a tie goes to
    the type, then to the order of CATEGORIES. A sentence with no cue but a date reads as an event."""
    cues = summary_cues()
    scores = {category: len(cues[cue].findall(sentence)) for cue, category in _CUE_CATEGORY.items()}
    label = _LABEL.match(sentence)
    typed = TYPE_CATEGORY.get(memory_type or "") or (_LABEL_CATEGORY.get(label.group(1).lower()) if label else None)
    if typed:
        scores[typed] += _TYPE_WEIGHT
    best = max(CATEGORIES, key=lambda c: (scores[c], c == typed, -CATEGORIES.index(c)))
    if scores[best] > 0:
        return best
    if _looks_dated(sentence):
        return "events"
    return None


_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}月\d{1,2}[日号]|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)"
                   r"[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
                   r"|\b\d{1,2}:\d{2}\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|(?:周|星期|礼拜)[一二三四五六日天]",
                   re.IGNORECASE)


def _looks_dated(sentence: str) -> bool:
    return bool(_DATE.search(sentence))


def language(texts: Iterable[str]) -> str:
    """``zh`` when most letters of `texts` are Chinese characters, else ``en``."""
    han = other = 0
    for text in texts:
        han += len(_HAN.findall(text))
        other += len(re.findall(r"[A-Za-z]+", text))
    return "zh" if han > other else "en"


# ---------------------------------------------------------------------------- key facts and the skip rule
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
        from .evaluate import _analyse

        self._ctx.source_names = {f.key for f in self.facts if f.kind == "name"}
        return [self._held(_analyse(text, self._ctx, True), text) for text in texts]

    def _held(self, analysed: Any, text: str) -> frozenset[int]:
        from .evaluate import RETAIN_DICE, _atomic_present, _clean_markdown, _dice, _polarity_conflict

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
    from ..text import count_tokens_many
    from .evaluate import _analyse, _build_context, _unique_facts
    from .evaluate import split_sentences as evaluator_sentences

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
    from ..text import count_tokens

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


# ---------------------------------------------------------------------------- the extractive summariser
@dataclass(frozen=True)
class Source:
    """One text a summary draws on: a memory (id, type, creation time, importance) or a turn."""

    id: str
    content: str
    type: str | None = None
    created_at: datetime | None = None
    importance: float = 0.5


@dataclass
class Item:
    """One sentence the summary may keep."""

    category: str
    text: str
    source_id: str
    day: date | None
    position: tuple[int, int]
    score: float
    tokens: int = 0
    facts: frozenset[int] = frozenset()  # the source's key facts this line holds (Coverage.facts_in)
    typed: bool = False  # its memory's type (or a leading label) names its category

    def line(self) -> str:
        return f"- {self.text}"


@dataclass
class Extraction:
    """What the summariser made of its sources: the items kept for the budget and what it dropped."""

    items: list[Item]
    chatter: int = 0
    background: int = 0
    duplicates: int = 0


def extract_items(sources: Sequence[Source], policy: Policy | None = None) -> Extraction:
    """Classified, de-duplicated sentences of `sources`, each scored by importance."""
    policy = policy or Policy()
    result = Extraction([])
    for i, source in enumerate(sources):
        for j, sentence in enumerate(split_sentences(source.content)):
            if is_chatter(sentence):
                result.chatter += 1
                continue
            category = classify(sentence, source.type)
            if category is None:  # kept only if it holds a key fact no other line does (summarize_extractive)
                result.background += 1
                category = FACTS
            text = _LABEL.sub("", sentence, count=1).strip() or sentence
            facts = len(_FACT.findall(text))
            score = (_CATEGORY_WEIGHT[category] + source.importance + 0.2 * min(facts, 3)
                     + (0.5 if TYPE_CATEGORY.get(source.type or "") == category else 0))
            day = source.created_at.date() if source.created_at else None
            typed = (TYPE_CATEGORY.get(source.type or "") == category
                     or bool((label := _LABEL.match(sentence)) and _LABEL_CATEGORY.get(label.group(1).lower()) == category))
            result.items.append(Item(category, text, source.id, day, (i, j), score, typed=typed))
    before = len(result.items)
    result.items = drop_near_duplicates(result.items, policy)
    result.duplicates = before - len(result.items)
    return result


def drop_near_duplicates(items: list[Item], policy: Policy) -> list[Item]:
    """Keep one of each group of near-duplicate sentences (the most important, then the earliest);
    pairs come from ``dedup.near_pairs`` and pass dedup's contradiction guard, so two sentences
    that differ in a number, a date, a negation or an antonym are both kept."""
    from .dedup import contradiction, near_pairs

    if len(items) < 2:
        return items
    frame = pl.DataFrame({"row": list(range(len(items))), "scope": [""] * len(items),
                          "text": [item.text for item in items]}, schema={"row": pl.Int64, "scope": pl.String,
                                                                           "text": pl.String})
    pairs = near_pairs(frame, bands=policy.dedup.minhash_bands, rows=policy.dedup.minhash_rows,
                       threshold=policy.dedup.near_jaccard)
    neighbours: dict[int, set[int]] = {}
    for a, b in pairs.select("a", "b").iter_rows():
        if contradiction(items[a].text, items[b].text) is None:
            neighbours.setdefault(a, set()).add(b)
            neighbours.setdefault(b, set()).add(a)
    if not neighbours:
        return items
    kept: set[int] = set()
    for k in sorted(range(len(items)), key=lambda k: (-items[k].score, items[k].position)):
        if not neighbours.get(k, set()) & kept:
            kept.add(k)
    return [item for k, item in enumerate(items) if k in kept]


@dataclass
class Summary:
    """A summary's Markdown and what it was made from."""

    markdown: str
    tokens: int
    items: list[Item] = field(default_factory=list)
    left_out: int = 0  # items not kept (no room, or a line of no category with no new fact)
    extraction: Extraction | None = None


def title_for(scope: Sequence[str | None], session: str | None, lang: str) -> str:
    """The summary's first line: what it summarises."""
    label = " / ".join(p if p else "_" for p in scope)
    if lang == "zh":
        return f"# 会话摘要：{session}" if session else f"# 短期记忆摘要：{label}"
    return f"# Summary of session {session}" if session else f"# Summary of short-term memory: {label}"


def summarize_extractive(sources: Sequence[Source], *, title: str, max_tokens: int, lang: str | None = None,
                         policy: Policy | None = None, coverage: Coverage | None = None) -> Summary:
    """The extractive summary of `sources` within `max_tokens` (title and headings included).

    Lines are chosen in two passes: first by key-fact coverage, the line holding the most key facts
    not yet kept per token (the evaluator's facts, `coverage`), ties by importance, while any line
    with a new fact fits; then by importance, the decisions, todos and lessons and the lines whose
    memory's type (or label) names their category, while they fit. An untyped event line with no
    new fact is left out (a restatement); a line of no category is kept only for a new fact."""
    from ..text import count_tokens, count_tokens_many

    policy = policy or Policy()
    lang = lang or language(s.content for s in sources)
    extraction = extract_items(sources, policy)
    items = extraction.items
    coverage = coverage or key_fact_coverage([s.content for s in sources])
    if items:
        for item, n, held in zip(items, count_tokens_many([item.line() for item in items]),
                                 coverage.facts_in([item.text for item in items])):
            item.tokens, item.facts = n, held
    used = count_tokens(title)
    heading_cost = {c: count_tokens(f"## {HEADINGS[lang][c]}") for c in SECTIONS}
    day_cost = count_tokens("### 2026-01-01")
    chosen: list[Item] = []
    taken: set[int] = set()
    opened: set[Any] = set()
    covered: set[int] = set()

    def cost(item: Item) -> int:
        return (item.tokens + (0 if item.category in opened else heading_cost[item.category])
                + (day_cost if item.day and (item.category, item.day) not in opened else 0))

    def take(k: int) -> None:
        nonlocal used
        item = items[k]
        used += cost(item)
        opened.update({item.category, (item.category, item.day)})
        covered.update(item.facts)
        taken.add(k)
        chosen.append(item)

    # 1. key facts per token (lazy greedy: a line's count of new facts only falls as others are kept)
    heap = [(-len(it.facts) / max(it.tokens, 1), -it.score, it.position, k) for k, it in enumerate(items) if it.facts]
    heapq.heapify(heap)
    while heap:
        _, _, _, k = heapq.heappop(heap)
        item = items[k]
        new = len(item.facts - covered)
        if not new:
            continue
        entry = (-new / max(item.tokens, 1), -item.score, item.position, k)
        if heap and entry > heap[0]:
            heapq.heappush(heap, entry)
            continue
        if used + cost(item) <= max_tokens:
            take(k)
    # 2. importance, for what room is left: decisions, todos, lessons, and lines whose memory is typed
    # as their category; an untyped event or fact line with no new key fact restates what is kept
    # and never a line that holds no key fact and is chatter or a question (去客套: "好的，谢谢您配合",
    # "Could you send us the new VAT number?"), nor a background line with no key fact
    chatter = summary_cues()["chatter"]
    for k in sorted(range(len(items)), key=lambda k: (-items[k].score, items[k].position)):
        item = items[k]
        idle = not item.facts and (item.category == FACTS or chatter.search(item.text)
                                   or item.text.rstrip().endswith(("?", "？")))
        if (k not in taken and not idle and (item.typed or item.category in ("decisions", "todos", "lessons"))
                and used + cost(item) <= max_tokens):
            take(k)
    markdown = render_markdown(title, chosen, lang)
    return Summary(markdown, count_tokens(markdown), chosen, len(items) - len(chosen), extraction)


def render_markdown(title: str, items: Sequence[Item], lang: str) -> str:
    """Title, then one ``##`` section per category present, items in time (then source) order under
    a ``###`` heading per day their memories were written (none for undated sources)."""
    lines = [title]
    for category in SECTIONS:
        section = sorted((it for it in items if it.category == category),
                         key=lambda it: (it.day or date.min, it.position))
        if not section:
            continue
        lines += ["", f"## {HEADINGS[lang][category]}"]
        day: Any = False
        for item in section:
            if item.day != day:
                lines += ["", f"### {item.day.isoformat()}"] if item.day else [""]
                day = item.day
            lines.append(item.line())
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- scoring and the LLM
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
    from .evaluate import evaluate_summary

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
        from .llm import LLMError, summarize_llm

        try:
            markdown = summarize_llm(sources, title=title, max_tokens=room, lang=lang, policy=policy)
        except LLMError as exc:
            fallback = f"LLM endpoint failed: {exc}"
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


# ---------------------------------------------------------------------------- seed example 1
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
    from ..text import count_tokens

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


# ---------------------------------------------------------------------------- scopes and sessions
_KEY = ("tenant", "agent_id", "user_id", "session_id")
_SOURCE_COLUMNS = "id, tenant, agent_id, user_id, session_id, tier, type, content, content_hash, importance, created_at"


def _source_frame(con, *, tenant: str | None = None, agent: str | None = None, user: str | None = None,
                  session: str | None = None) -> pl.DataFrame:
    """Every source row: a row per (summary key, memory). A scope's key has session_id NULL and its
    short-term memories; a session's key has its active memories of any tier."""
    where = [f"status = 'active'", f"NOT {LAKE_SUMMARY_SQL}"]
    params: dict[str, Any] = {}
    for column, value in (("tenant", tenant), ("agent_id", agent), ("user_id", user)):
        if value is not None:
            where.append(f"{column} = ${column}")
            params[column] = value
    base = f"SELECT {_SOURCE_COLUMNS} FROM memories WHERE {' AND '.join(where)}"
    scope_part = f"SELECT * REPLACE (NULL::VARCHAR AS session_id) FROM ({base}) WHERE tier = 'short_term'"
    session_part = f"SELECT * FROM ({base}) WHERE session_id IS NOT NULL"
    if session is not None:
        params["session"] = session
        query = f"{session_part} AND session_id = $session"
    else:
        query = f"{scope_part} UNION ALL {session_part}"
    return con.execute(f"SELECT * FROM ({query}) ORDER BY tenant, agent_id, user_id, session_id NULLS FIRST, "
                       "created_at, id", params).pl()


def _source_hashes(frame: pl.DataFrame, max_tokens: int) -> pl.DataFrame:
    """Per key: the source ids (in time order) and the hash of ids, content hashes, budget and
    summariser version (a change to any of them regenerates the summary)."""
    salt = f"v{SUMMARISER_VERSION}|{max_tokens}|"
    return (frame.group_by(list(_KEY), maintain_order=True)
            .agg(source_ids=pl.col("id"),
                 fingerprint=(pl.col("id") + ":" + pl.col("content_hash")).sort().str.join(","))
            .with_columns(source_hash=(pl.lit(salt) + pl.col("fingerprint"))
                          .map_elements(lambda s: hashlib.sha256(s.encode()).hexdigest(), return_dtype=pl.String))
            .drop("fingerprint"))


def _sources_of(frame: pl.DataFrame) -> list[Source]:
    return [Source(r["id"], r["content"], r["type"], r["created_at"], float(r["importance"]))
            for r in frame.iter_rows(named=True)]


def _scope_title(key: dict[str, Any], lang: str) -> str:
    return title_for((key["tenant"], key["agent_id"], key["user_id"]), key["session_id"], lang)


def summary_id(key: dict[str, Any], source_hash: str) -> str:
    """The id of a new summary memory: derived from its key and the sources it was first made from."""
    text = "\x1f".join(str(key[k] or "") for k in _KEY) + "\x1f" + source_hash
    return "sum_" + hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass
class Planned:
    """A key to summarise, its sources and (once made) its result."""

    key: dict[str, Any]
    source_hash: str
    sources: list[Source]
    source_tokens: int
    result: SummaryResult | None = None
    skip_reason: str | None = None  # why no summary can pass (why_not_summarised)
    key_facts: int = 0
    error: dict[str, Any] | None = None  # making it raised (`step_error`): left as it was, tried next run

    @property
    def status(self) -> str:
        """passed | failed | skipped (no summary can pass: see the module docstring) | error."""
        if self.error:
            return "error"
        if self.skip_reason:
            return "skipped"
        return "passed" if self.result is not None and self.result.passed else "failed"

    def skipped(self) -> dict[str, Any]:
        """The key and why it was skipped, as the step's details and `summarize` show it."""
        return dict(self.key) | {"status": "skipped", "reason": self.skip_reason, "source_tokens": self.source_tokens,
                                 "key_facts": self.key_facts, "sources": len(self.sources)}

    def entry(self) -> dict[str, Any]:
        """The key, the scores and the failure, as `summarize --json` and the step's details show it."""
        out = dict(self.key) | {"status": self.status}
        if self.result is None:
            return out | {"summary": None, "scores": None, "passed": False, "missing_facts": [],
                          "unsupported_statements": [], "source_tokens": self.source_tokens}
        score = self.result.score
        return out | {"summary": self.result.markdown, "scores": {k: round(v, 4) for k, v in self.result.scores().items()},
                      "passed": self.result.passed, "failed": list(score.failed),
                      "missing_facts": list(score.missing_facts),
                      "unsupported_statements": list(score.unsupported_statements),
                      "method": self.result.method, "fallback": self.result.fallback,
                      "source_tokens": score.source_tokens, "summary_tokens": score.summary_tokens,
                      "sources": len(self.sources)}


def plan_summaries(con, policy: Policy, *, max_tokens: int | None = None, tenant: str | None = None,
                   agent: str | None = None, user: str | None = None, session: str | None = None
                   ) -> tuple[list[Planned], list[dict[str, Any]]]:
    """The keys worth summarising (sources over the budget) with their sources, and the keys left
    out because their sources fit the budget as they are (``{key, source_tokens, reason}``)."""
    from ..text import count_tokens_many

    budget = max_tokens or policy.summaries.max_tokens
    frame = _source_frame(con, tenant=tenant, agent=agent, user=user, session=session)
    if frame.height == 0:
        return [], []
    frame = frame.with_columns(tokens=pl.Series(count_tokens_many(frame["content"].to_list()), dtype=pl.Int64))
    hashes = _source_hashes(frame, budget)
    totals = frame.group_by(list(_KEY), maintain_order=True).agg(source_tokens=pl.col("tokens").sum())
    keys = hashes.join(totals, on=list(_KEY), nulls_equal=True, maintain_order="left")
    # a scope whose short-term memories are exactly one session's would get that session's summary twice
    sessions = {(r["tenant"], r["agent_id"], r["user_id"], frozenset(r["source_ids"])): r["session_id"]
                for r in keys.iter_rows(named=True) if r["session_id"] is not None}
    planned, small = [], []
    for row in keys.iter_rows(named=True):
        key = {k: row[k] for k in _KEY}
        same = (sessions.get((row["tenant"], row["agent_id"], row["user_id"], frozenset(row["source_ids"])))
                if row["session_id"] is None else None)
        if row["source_tokens"] <= budget or same:
            reason = (f"its short-term memories are exactly those of session {same}, summarised as that session"
                      if same else f"its sources hold {row['source_tokens']} tokens, within the {budget}-token "
                                   "budget: nothing to compress")
            small.append(key | {"status": "skipped", "source_tokens": row["source_tokens"], "reason": reason})
            continue
        rows = frame.filter(*[(pl.col(k) == key[k]) if key[k] is not None else pl.col(k).is_null() for k in _KEY])
        planned.append(Planned(key, row["source_hash"], _sources_of(rows), int(row["source_tokens"])))
    return planned, small


def make_summary(item: Planned, policy: Policy, max_tokens: int | None = None) -> Planned:
    """Summarise and score one planned key, or say why no summary of it can pass (`skip_reason`,
    the skip rule of the module docstring). In place; returned for chaining."""
    lang = language(s.content for s in item.sources)
    title = _scope_title(item.key, lang)
    budget = max_tokens or policy.summaries.max_tokens
    coverage = key_fact_coverage([s.content for s in item.sources])
    item.key_facts = len(coverage.facts)
    n = len(item.sources)
    what = (f"the {n} memories of session {item.key['session_id']}" if item.key["session_id"]
            else f"{n} short-term memories")
    item.skip_reason = why_not_summarised(coverage, what=what, title=title, policy=policy, lang=lang)
    if item.skip_reason is None:
        item.result = summarize_sources(item.sources, title=title, max_tokens=budget, policy=policy, lang=lang,
                                        coverage=coverage)
    return item


def preview_summaries(lake, *, tenant: str, agent: str | None = None, user: str | None = None,
                      session: str | None = None, max_tokens: int | None = None) -> dict[str, Any]:
    """What `memory-lake summarize` prints: the summaries of the scope(s) and sessions asked for,
    made and scored now, written nowhere (a read: while a run holds the lake, from the published
    version). ``{"scopes": [...], "skipped": [...], "note"}``: `scopes` the summaries made (status
    passed or failed), `skipped` the keys not summarised and why (their sources fit the budget, or
    no summary of them can pass); `note` says why `scopes` is empty."""
    policy = lake.policy.for_tenant(tenant)
    with lake.reading() as (con, _source, read_note):
        planned, small = plan_summaries(con, policy, max_tokens=max_tokens, tenant=tenant, agent=agent,
                                        user=user, session=session)
    made = [make_summary(p, policy, max_tokens) for p in planned]
    scopes = [p.entry() for p in made if p.status != "skipped"]
    dense = [p.skipped() for p in made if p.status == "skipped"]
    note = read_note
    if not scopes:
        what = f"session {session}" if session else "scope"
        if dense:
            note = (f"nothing summarised: no summary of the {what}s asked for can pass the gate "
                    f"(their memories are already dense facts; 'skipped' says why for each)")
        elif small:
            note = (f"nothing to summarise: every {what} asked for fits within the budget as it is "
                    f"(largest {max(s['source_tokens'] for s in small)} tokens; --max-tokens lower summarises it)")
        else:
            note = (f"nothing to summarise: no active short-term memories{' in that session' if session else ''} "
                    f"for the {what} asked for")
    return {"scopes": scopes, "skipped": dense + small, "note": note}


# ---------------------------------------------------------------------------- the nightly step
_STATE_COLUMNS = ("tenant", "agent_id", "user_id", "session_id", "source_hash", "source_ids", "status", "reason", "method",
                  "fallback", "summary_id", "retention", "compression", "readability", "accuracy", "passed", "failed",
                  "missing_facts", "unsupported_statements", "source_tokens", "summary_tokens", "as_of", "run_id")
_KEY_MATCH = " AND ".join(f"s.{k} IS NOT DISTINCT FROM k.{k}" for k in _KEY)


def summarize(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """The nightly summary step (see the module docstring): regenerate the summary of each scope
    and session whose sources changed, publish the ones that pass the gate, keep the previous one
    where the new one fails, archive the summaries of keys that no longer need one."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("summarize", as_of)
    report = StepReport("summarize", as_of, run_id, {})
    with lake.writer(purpose="summaries") as con:
        planned, small = plan_summaries(con, policy)
        state = con.execute(f"SELECT {', '.join(_KEY)}, source_hash, summary_id FROM summary_state").pl()
        known = {tuple(r[k] for k in _KEY): (r["source_hash"], r["summary_id"]) for r in state.iter_rows(named=True)}
        todo = [p for p in planned if known.get(tuple(p.key[k] for k in _KEY), (None,))[0] != p.source_hash]
        for item in todo:
            try:
                make_summary(item, policy.for_tenant(item.key["tenant"]), policy.summaries.max_tokens)
            except MemoryLakeError:
                raise  # the lake's own settings (an LLM endpoint misconfigured): one clear error
            except Exception as exc:  # one key's text must not stop every other key's summary
                item.error = step_error("summarize", exc, item="session summary" if item.key["session_id"]
                                        else "scope summary", **item.key)
        errors = [p for p in todo if p.error]
        todo = [p for p in todo if not p.error]  # an errored key keeps its summary and state: tried next run
        wanted = {tuple(p.key[k] for k in _KEY) for p in planned}
        gone = [key for key in known if key not in wanted]
        skipped = [p for p in todo if p.status == "skipped"]
        with transaction(con):
            published = _publish(con, [p for p in todo if p.status == "passed"], known, as_of, run_id)
            # a key whose sources became too dense to summarise needs no summary: its old one goes too
            archived = _retire(con, gone + [k for k in (tuple(p.key[c] for c in _KEY) for p in skipped) if k in known],
                               known, as_of, run_id)
            _record_state(con, todo, published, known, as_of, run_id)
    failed = [p for p in todo if p.status == "failed"]
    report.counts = {"keys": len(planned) + len(small), "unchanged": len(planned) - len(todo) - len(errors),
                     "regenerated": len(todo) - len(skipped), "published": len(published), "failed": len(failed),
                     "skipped": len(skipped), "fits_budget": len(small), "archived": archived}
    report.errors = [p.error for p in errors]
    report.details = {"published": [dict(p.key, summary_id=published[id(p)]) for p in todo if id(p) in published],
                      "failed": [_failure(p) for p in failed], "skipped": [p.skipped() for p in skipped],
                      "fallbacks": [dict(p.key, reason=p.result.fallback) for p in todo
                                    if p.result is not None and p.result.fallback]}
    return report


def _failure(item: Planned) -> dict[str, Any]:
    entry = item.entry()
    return {k: entry[k] for k in (*_KEY, "scores", "failed", "missing_facts", "unsupported_statements", "method",
                                  "fallback")}


def _publish(con, passed: list[Planned], known: dict, as_of: datetime, run_id: str) -> dict[int, str]:
    """Insert or update the summary memories of `passed`; history rows and source links. Returns
    {id(planned): summary memory id}."""
    from ..text import normalise_content

    if not passed:
        return {}
    live = {i for (i,) in con.execute("SELECT id FROM memories WHERE status <> 'deleted' AND id IN (SELECT unnest(?))",
                                      [[v[1] for v in known.values() if v[1]]]).fetchall()}
    rows, ids = [], {}
    for item in passed:
        previous = known.get(tuple(item.key[k] for k in _KEY), (None, None))[1]
        memory_id = previous if previous in live else summary_id(item.key, item.source_hash)
        ids[id(item)] = memory_id
        extra = {"summary_of": item.result.source_ids, "source_hash": item.source_hash,
                 "method": item.result.method, "scores": {k: round(v, 4) for k, v in item.result.scores().items()}}
        rows.append({"id": memory_id, **item.key, "content": item.result.markdown,
                     "extra": json.dumps(extra, ensure_ascii=False), "update": memory_id == previous})
    frame = pl.DataFrame(rows, schema={"id": pl.String, "tenant": pl.String, "agent_id": pl.String,
                                       "user_id": pl.String, "session_id": pl.String, "content": pl.String,
                                       "extra": pl.String, "update": pl.Boolean})
    frame = frame.with_columns(content_hash=normalise_content(pl.col("content")).map_elements(
        lambda s: hashlib.sha256(s.encode()).hexdigest(), return_dtype=pl.String))
    con.register("summary_rows", frame)
    try:
        params = {"as_of": as_of, "run_id": run_id}
        changed = ("content", "extra", "status")
        new = {"content": "r.content", "content_hash": "r.content_hash", "extra": "r.extra::JSON", "status": "'active'",
               "version": "m.version + 1", "updated_at": "$as_of"}
        con.execute(
            f"""INSERT INTO memory_history ({HISTORY_COLUMNS})
                SELECT $seq + row_number() OVER (ORDER BY m.id), m.id, m.tenant, m.version + 1, 'update',
                       {list(changed)!r}, 'system', $run_id, 'summary regenerated: its sources changed', $as_of,
                       {row_image('m')}, {row_image('m', **new)}, NULL, NULL, NULL
                FROM memories m JOIN summary_rows r ON r.id = m.id AND r.update""",
            params | {"seq": next_history_seq(con)})
        con.execute(
            """UPDATE memories SET content = r.content, content_hash = r.content_hash, extra = r.extra::JSON,
                      status = 'active', version = memories.version + 1, updated_at = $as_of
               FROM summary_rows r WHERE memories.id = r.id AND r.update""", {"as_of": as_of})
        con.execute(
            """INSERT INTO memories (id, tenant, agent_id, user_id, context_id, session_id, tier, type, content, summary,
                                     tags, importance, source, created_at, updated_at, last_accessed_at, access_count,
                                     reference_count, expires_at, version, status, content_hash, merged_into, operator,
                                     trace_id, extra)
               SELECT id, tenant, agent_id, user_id, NULL, session_id, 'long_term', 'summary', content, NULL,
                      []::VARCHAR[], 0.5, $source, $as_of, $as_of, $as_of, 0, 0, NULL, 1, 'active', content_hash,
                      NULL, 'system', NULL, extra::JSON
               FROM summary_rows WHERE NOT update""", {"as_of": as_of, "source": SUMMARY_SOURCE})
        con.execute(
            f"""INSERT INTO memory_history ({HISTORY_COLUMNS})
                SELECT $seq + row_number() OVER (ORDER BY m.id), m.id, m.tenant, 1, 'insert', NULL, 'system', $run_id,
                       'summary published', $as_of, NULL, {row_image('m')}, NULL, NULL, NULL
                FROM memories m JOIN summary_rows r ON r.id = m.id AND NOT r.update""",
            params | {"seq": next_history_seq(con)})
    finally:
        con.unregister("summary_rows")
    links = pl.DataFrame([(ids[id(item)], source) for item in passed for source in item.result.source_ids],
                         schema={"summary_id": pl.String, "source_id": pl.String}, orient="row")
    con.register("summary_links", links)
    try:
        con.execute("""INSERT INTO summary_sources SELECT DISTINCT l.summary_id, l.source_id, $as_of, $run_id
                       FROM summary_links l WHERE NOT EXISTS (SELECT 1 FROM summary_sources s
                           WHERE s.summary_id = l.summary_id AND s.source_id = l.source_id)""",
                    {"as_of": as_of, "run_id": run_id})
    finally:
        con.unregister("summary_links")
    return ids


def _record_state(con, todo: list[Planned], published: dict[int, str], known: dict, as_of: datetime,
                  run_id: str) -> None:
    """One `summary_state` row per key attempted: its source hash (so unchanged sources are not
    summarised again), scores and failure; a failed key keeps the summary id it had."""
    if not todo:
        return
    rows = []
    for item in todo:
        if item.result is None:  # skipped: no summary can pass (the reason says why); none kept
            rows.append({**item.key, "source_hash": item.source_hash, "source_ids": [s.id for s in item.sources],
                         "status": "skipped", "reason": item.skip_reason, "failed": [], "missing_facts": [],
                         "unsupported_statements": [], "source_tokens": item.source_tokens, "as_of": as_of,
                         "run_id": run_id})
            continue
        score = item.result.score
        previous = known.get(tuple(item.key[k] for k in _KEY), (None, None))[1]
        rows.append({**item.key, "source_hash": item.source_hash, "source_ids": item.result.source_ids,
                     "status": "published" if id(item) in published else "failed", "reason": None,
                     "method": item.result.method,
                     "fallback": item.result.fallback, "summary_id": published.get(id(item), previous),
                     **{k: float(v) for k, v in item.result.scores().items()}, "passed": item.result.passed,
                     "failed": list(score.failed), "missing_facts": [str(f) for f in score.missing_facts],
                     "unsupported_statements": [str(s) for s in score.unsupported_statements],
                     "source_tokens": int(score.source_tokens), "summary_tokens": int(score.summary_tokens),
                     "as_of": as_of, "run_id": run_id})
    frame = pl.DataFrame(rows, schema={"tenant": pl.String, "agent_id": pl.String, "user_id": pl.String,
                                       "session_id": pl.String, "source_hash": pl.String,
                                       "source_ids": pl.List(pl.String), "status": pl.String, "reason": pl.String,
                                       "method": pl.String,
                                       "fallback": pl.String, "summary_id": pl.String, "retention": pl.Float64,
                                       "compression": pl.Float64, "readability": pl.Float64, "accuracy": pl.Float64,
                                       "passed": pl.Boolean, "failed": pl.List(pl.String),
                                       "missing_facts": pl.List(pl.String),
                                       "unsupported_statements": pl.List(pl.String), "source_tokens": pl.Int64,
                                       "summary_tokens": pl.Int64, "as_of": pl.Datetime("us"), "run_id": pl.String})
    con.register("state_rows", frame)
    try:
        con.execute(f"DELETE FROM summary_state s WHERE EXISTS (SELECT 1 FROM state_rows k WHERE {_KEY_MATCH})")
        con.execute(f"INSERT INTO summary_state ({', '.join(_STATE_COLUMNS)}) "
                    f"SELECT {', '.join(_STATE_COLUMNS)} FROM state_rows")
    finally:
        con.unregister("state_rows")


def _retire(con, gone: list[tuple], known: dict, as_of: datetime, run_id: str) -> int:
    """Keys that no longer need a summary (their sources fit the budget, or are gone): the state
    row goes and the summary memory is archived (a system move, kept for its history)."""
    if not gone:
        return 0
    frame = pl.DataFrame([dict(zip(_KEY, key)) | {"summary_id": known[key][1]} for key in gone],
                         schema={**{k: pl.String for k in _KEY}, "summary_id": pl.String})
    con.register("gone_keys", frame)
    try:
        con.execute(f"DELETE FROM summary_state s WHERE EXISTS (SELECT 1 FROM gone_keys k WHERE {_KEY_MATCH})")
        con.execute(
            f"""CREATE OR REPLACE TEMP TABLE retired AS
                SELECT m.* FROM memories m JOIN gone_keys g ON g.summary_id = m.id WHERE m.status = 'active'""")
        count = con.execute("SELECT count(*) FROM retired").fetchone()[0]
        con.execute(
            f"""INSERT INTO memory_history ({HISTORY_COLUMNS})
                SELECT $seq + row_number() OVER (ORDER BY id), id, tenant, version, 'status', ['status'], 'system',
                       $run_id, 'summary archived: its sources fit the budget, are gone, or are too dense to summarise', $as_of, {row_image('r')},
                       {row_image('r', status="'archived'")}, NULL, NULL, NULL
                FROM retired r""", {"seq": next_history_seq(con), "run_id": run_id, "as_of": as_of})
        con.execute("INSERT INTO cleanup_log SELECT id, tenant, agent_id, user_id, tier, tier, status, 'archived', "
                    "'summary_retired', $run_id, $as_of FROM retired", {"run_id": run_id, "as_of": as_of})
        con.execute("UPDATE memories SET status = 'archived' WHERE id IN (SELECT id FROM retired)")
        con.execute("DROP TABLE retired")
    finally:
        con.unregister("gone_keys")
    return count


# ---------------------------------------------------------------------------- forget and the report
@register_scrubber("summary_state")
def _scrub_summary_state(con) -> None:
    # Missing facts and unsupported statements are pieces of the sources' text: a state row that
    # drew on a forgotten memory (or whose summary was forgotten) loses them, and its hash, so the
    # next run summarises what is left. Touches only this table (replayed on exported copies).
    con.execute("""UPDATE summary_state SET missing_facts = []::VARCHAR[], unsupported_statements = []::VARCHAR[],
                          source_hash = '', fallback = NULL
                   WHERE list_has_any(source_ids, (SELECT coalesce(list(id), []::VARCHAR[]) FROM forget_ids))
                      OR summary_id IN (SELECT id FROM forget_ids)""")


# SUMMARIES_OF_SQL (ingest.forget): the summaries a forget takes along with their sources.


def failed_summaries(con) -> list[dict[str, Any]]:
    """The keys whose latest summary attempt failed the gate (for the report): key, scores,
    failed thresholds, missing facts, unsupported statements, source ids and whether an older
    summary is still published."""
    if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'summary_state'").fetchone()[0]:
        return []
    return con.execute(
        f"""SELECT {', '.join(_KEY)}, summary_id, method, fallback, retention, compression, readability, accuracy,
                   failed, missing_facts, unsupported_statements, source_ids, as_of
            FROM summary_state WHERE status = 'failed' ORDER BY {', '.join(_KEY)}""").pl().to_dicts()


_FAILURE_ROW = re.compile(r'<tr data-sources="([^"]*)">(.*?)</tr>', re.DOTALL)


def scrub_summary_report(page: str, ids: Iterable[str]) -> str:
    """A report's summary section without the missing facts and unsupported statements of the
    failures that drew on a forgotten memory (their cells become ``[forgotten]``)."""
    from ..store import FORGOTTEN

    gone = set(ids)
    start = page.find('<section id="summaries">')
    end = page.find("</section>", start)
    if start < 0 or end < 0:
        return page

    def scrub(match: re.Match) -> str:
        if not gone & set(html.unescape(match.group(1)).split()):
            return match.group(0)
        cells = re.findall(r"<td[^>]*>.*?</td>", match.group(2), re.DOTALL)
        cells = cells[:-2] + [f"<td>{FORGOTTEN}</td>", f"<td>{FORGOTTEN}</td>"]
        return f'<tr data-sources="{match.group(1)}">{"".join(cells)}</tr>'

    return page[:start] + _FAILURE_ROW.sub(scrub, page[start:end]) + page[end:]
