"""Fact extraction (package docstring, *Key facts*): a text analysed into its facts, content words,
negation scopes and value anchors (:func:`_analyse`), and the key facts of a source, each once
(:func:`extract_facts`)."""

from __future__ import annotations

import re
import unicodedata

from .anchors import _value_anchors
from .dates import _dates_match, _read_dates_times, _times_match
from .fact import _CJK, Fact, _Analysed
from .names import _SPEAKER, _Context, _build_context, _jieba_names, _latin_names
from .numerals import _read_numbers
from .polarity import _negation_scopes, _opposite_terms
from .sentences import split_sentences
from .words import _content_words, _jaccard

DECISION_CUES = re.compile(
    r"\b(?:decided|decide|decides|decision|agreed(?!\s*(?:[^\w\s]|$))|agree to|agrees to|chose|chosen|choose to|opted|settled on|"
    r"approved|going with|go with|will use|switch(?:ed)? to|adopt(?:ed|s)?|selected)\b|"
    r"决定|决策|采用|选定|选用|确定|同意(?!\s*(?:[^\w\s]|$))|批准|改用|定为|拍板|敲定|决议", re.IGNORECASE)
TODO_CUES = re.compile(
    r"\b(?:todo|to-do|to do|need to|needs to|must|have to|has to|action item|follow[- ]up|deadline|due|"
    r"remember to|reminder|assigned to|next step)\b|"
    r"待办|需要|必须|务必|截止|跟进|(?<![我都还也])记得|下一步|负责|提醒", re.IGNORECASE)


# A sentence labelled as a decision or todo by its author ("Decision:", "TODO:", "待办：").
_CATEGORY_LABEL = re.compile(r"(?:^|[\s:：])(?:decision|decided|todo|to-do|action item|决定|决策|待办)\s*[:：]",
                             re.IGNORECASE)


def _analyse(text: str, ctx: _Context, summary: bool) -> _Analysed:
    normalised = unicodedata.normalize("NFKC", text)
    dated, rest = _read_dates_times(normalised)
    numbers, rest = _read_numbers(rest)
    # letters glued to a digit (4S店, 5G, 3D) are a code or a unit with that number, not a name
    names = [f for f in _latin_names(rest, ctx, summary) if not (f.pos and normalised[f.pos - 1].isdigit())]
    if _CJK.search(rest):
        names += _jieba_names(rest)
    facts = dated + numbers + names
    # informative: a hard fact outside the speaker label ("Anna: ..." names who speaks, not what
    # is said), or a category label; a sentence without one is conversation, not content
    speaker = _SPEAKER.match(normalised)
    label_end = speaker.end() if speaker and speaker.group(1).casefold() in ctx.speaker_labels else 0
    informative = (any(f.grade == "hard" and (f.kind != "name" or f.pos >= label_end) for f in facts)
                   or bool(_CATEGORY_LABEL.search(normalised)))
    question = normalised.rstrip().endswith(("?", "？"))
    words, scopes = _content_words(rest), _negation_scopes(rest)
    return _Analysed(text, facts, words, scopes, bool(_CJK.search(text)), informative, question,
                     _value_anchors(normalised, dated + numbers), _opposite_terms(rest, words, scopes))


def extract_facts(texts: list[str]) -> list[Fact]:
    """The key facts of `texts` (numbers, dates, times, names, decisions, todos), each once, in text
    order; see the package docstring for the rules."""
    sentences = [s for t in texts for s in split_sentences(t)]
    ctx = _build_context(sentences, [])
    return _unique_facts([(i, _analyse(s, ctx, False)) for i, s in enumerate(sentences)])


def _statement_kind(text: str) -> str | None:
    if DECISION_CUES.search(text):
        return "decision"
    if TODO_CUES.search(text):
        return "todo"
    return None


def _unique_facts(analysed: list[tuple[int, _Analysed]]) -> list[Fact]:
    facts: list[tuple[tuple[int, int], Fact]] = []
    seen_numbers: set[str] = set()
    seen_names: set[str] = set()
    dates: list[tuple] = []
    times: list[tuple] = []
    statements: list[tuple[str, frozenset[str]]] = []
    for index, a in analysed:
        kind = _statement_kind(a.text) if a.informative and not a.question else None
        if kind and a.words and not any(k == kind and _jaccard(a.words, w) >= 0.8 for k, w in statements):
            statements.append((kind, a.words))
            facts.append(((index, -1), Fact(kind, a.words, a.text, 0)))
        for fact in a.facts:
            if fact.grade == "support" or (fact.grade == "soft" and not a.informative):
                continue
            if fact.kind == "number":
                if fact.key in seen_numbers:
                    continue
                seen_numbers.add(fact.key)
            elif fact.kind == "name":
                if fact.key in seen_names:
                    continue
                seen_names.add(fact.key)
            elif fact.kind == "date":
                if any(_dates_match(fact.key, d) for d in dates):
                    continue
                dates.append(fact.key)
            elif fact.kind == "time":
                if any(_times_match(fact.key, t) for t in times):
                    continue
                times.append(fact.key)
            facts.append(((index, fact.pos), fact))
    return [f for _, f in sorted(facts, key=lambda item: item[0])]
