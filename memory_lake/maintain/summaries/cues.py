"""Cues and sentences: steps 1-3 of the extractive summariser of seed 000 "自动摘要生成与质量评估"
(the package docstring has the whole of it):

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
   line holds.

The categories and their section headings (``## Events`` ... ``## 事件`` ...), the weights that decide
which category wins the budget first, and ``language`` (``zh`` for a Chinese scope) live here too.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Iterable


CUES_FILE = Path(__file__).parent.parent / "data" / "summary_cues.tsv"
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
    from ...text import tokenize

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
