"""The two records every part of the evaluator passes around: a key fact (:class:`Fact`) and an
analysed text (:class:`_Analysed`: its facts, content words, negation scopes and value anchors,
filled in by ``extract._analyse``); and what the fact readers (``numerals``, ``dates``, ``names``)
share: the test for Chinese characters and the blanking of a span already read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Fact:
    """One key fact: its kind (number, date, time, name, decision, todo), a match key and the text
    it was read from (``pos``: its place in the text, for source order). ``grade`` says how sure the
    reading is: ``hard`` (digits, dates, times, capitalised names, Chinese person names), ``soft``
    (spelled-out counts, jieba place and organisation tags: key facts only in an informative
    sentence) or ``support`` (jieba's other proper-noun tag: checked in statements, never a key fact)."""

    kind: str
    key: Any
    text: str
    pos: int = 0
    grade: str = "hard"
    currency: frozenset[str] = frozenset()   # of an amount: the currencies its sign or word can mean

    def label(self) -> str:
        return f"{self.kind}: {self.text}"


@dataclass
class _Analysed:
    text: str
    facts: list[Fact]
    words: frozenset[str]
    scopes: tuple[frozenset[str], ...]   # content words each negation applies to (see _negation_scopes)
    cjk: bool
    informative: bool = True             # holds a hard fact outside its speaker label, or a category label
    question: bool = False
    anchors: tuple[tuple[str, str, Fact], ...] = ()   # (side, word, value): see _value_anchors
    opposites: dict[str, bool] = field(default_factory=dict)   # term -> negated: see _opposite_terms

    def of(self, kind: str) -> list[Fact]:
        return [f for f in self.facts if f.kind == kind]

    @property
    def negated(self) -> bool:
        return bool(self.scopes)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]
