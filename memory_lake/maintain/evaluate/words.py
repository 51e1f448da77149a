"""Content words (package docstring, *Content words*): the search tokeniser's tokens without numbers,
the clause ends that bound negation scopes and value anchors, and the word-overlap measures."""

from __future__ import annotations

import re

_CLAUSE_END = re.compile(r"[,;:.!?()\[\]{}，；：。！？（）、—–]")


def _content_words(text: str) -> frozenset[str]:
    from ...text import tokenize

    return frozenset(w for w in tokenize(text) if not any(ch.isdigit() for ch in w))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def _dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 1.0


def _containment(part: frozenset[str], whole: frozenset[str]) -> float:
    return len(part & whole) / len(part) if part else 1.0
