"""The extractive summariser of seed 000 "自动摘要生成与质量评估" (offline, the default), steps 4-6 (steps
1-3, sentences, chatter and categories, are ``cues.py``; the package docstring has the whole):

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
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Sequence

import polars as pl

from ...store import Policy
from .cues import (_CATEGORY_WEIGHT, _FACT, _LABEL, _LABEL_CATEGORY, FACTS, HEADINGS, SECTIONS, TYPE_CATEGORY,
                   classify, is_chatter, language, split_sentences, summary_cues)
from .coverage import Coverage, key_fact_coverage


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
    from ..dedup import contradiction, near_pairs

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
    from ...text import count_tokens, count_tokens_many

    policy = policy or Policy()
    lang = lang or language(s.content for s in sources)
    extraction = extract_items(sources, policy)
    items = extraction.items
    coverage = coverage or key_fact_coverage([s.content for s in sources])
    # Each part is counted with the newlines render_markdown gives it (a heading with the blank
    # lines around it), so the parts' counts add up to at least the whole's, bytes included
    # (text/tokens.py): the Markdown never exceeds `max_tokens`, however long a source's line.
    if items:
        for item, n, held in zip(items, count_tokens_many([item.line() + "\n" for item in items]),
                                 coverage.facts_in([item.text for item in items])):
            item.tokens, item.facts = n, held
    used = count_tokens(title + "\n")
    heading_cost = {c: count_tokens(f"\n## {HEADINGS[lang][c]}\n\n") for c in SECTIONS}
    day_cost = count_tokens("\n### 2026-01-01\n")
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
