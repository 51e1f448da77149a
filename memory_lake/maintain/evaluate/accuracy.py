"""Accuracy (package docstring, *accuracy*): the share of summary statements one source sentence
supports (its values and names, the same polarity, close in words or MiniLM cosine, no value tied
to another word) or two source sentences support jointly, clause by clause."""

from __future__ import annotations

import re
import unicodedata

from .anchors import _value_conflict
from .cosine import _Cosine
from .dates import _dates_match, _times_match
from .extract import _analyse
from .fact import Fact, _Analysed
from .names import _L, _Context, _name_in
from .numerals import same_currency
from .polarity import _polarity_conflict
from .sentences import _Statement
from .words import _containment, _content_words

# Closeness thresholds (see the package docstring, *accuracy*).
SUPPORT_CONTAINMENT = 0.6
SUPPORT_COSINE = 0.85
JOINT_CONTAINMENT = 0.75


def _support_by_words(statements: list[_Statement], stated: list[_Analysed], source: list[_Analysed],
                      ctx: _Context, cosine: _Cosine) -> list[tuple[bool, list[_Analysed]]]:
    """The first pass, per statement: (supported by word overlap alone or jointly, the candidate
    sentences left for the cosine test; their texts are asked of `cosine`)."""
    support = [_support_candidates(a, source) for a in stated]
    support = [(True, []) if not supported and _joint_support(s.text, source, ctx) else (supported, candidates)
               for s, (supported, candidates) in zip(statements, support)]
    for a, (supported, candidates) in zip(stated, support):
        if not supported and candidates:
            cosine.want(a.text, *(c.text for c in candidates))
    return support


def _accuracy(statements: list[_Statement], stated: list[_Analysed], support: list[tuple[bool, list[_Analysed]]],
              cosine: _Cosine) -> tuple[float, list[str]]:
    """(accuracy, unsupported statements as written) once the cosines are computed: a candidate
    sentence supports a statement when their MiniLM cosine reaches SUPPORT_COSINE."""
    unsupported = [s.shown for s, a, (supported, candidates) in zip(statements, stated, support)
                   if not supported and not any((cosine(a.text, c.text) or 0.0) >= SUPPORT_COSINE
                                                for c in candidates)]
    accuracy = (len(statements) - len(unsupported)) / len(statements) if statements else 0.0
    return accuracy, unsupported


def _support_candidates(statement: _Analysed, source: list[_Analysed]) -> tuple[bool, list[_Analysed]]:
    """(supported by word overlap, the other candidate sentences): the source sentences that hold
    every number, date, time and name of `statement` with its polarity; supported when one holds
    at least SUPPORT_CONTAINMENT of its content words. The candidates go to the cosine test."""
    candidates = []
    for sentence in source:
        if _polarity_conflict(statement, sentence) or _value_conflict(statement, sentence):
            continue
        if not all(_fact_in(fact, sentence) for fact in statement.facts):
            continue
        if _containment(statement.words, sentence.words) >= SUPPORT_CONTAINMENT:
            return True, []
        candidates.append(sentence)
    return False, candidates


_CLAUSE_SPLIT = re.compile(r"[;；,，()（）\[\]]")


def _clauses(text: str, ctx: _Context) -> list[str]:
    """The clauses of a statement: pieces between ``; , ( )`` (and their Chinese forms); a piece
    with no content word besides its numbers, dates, times and names (``$300``, ``(Bob)``) belongs
    to the clause before it (the first clause: after it), so that a value or a name is always
    judged together with the words it qualifies."""
    pieces = [p.strip() for p in _CLAUSE_SPLIT.split(text) if p.strip()]
    clauses: list[str] = []
    carry = ""
    for piece in pieces:
        analysed = _analyse(piece, ctx, True)
        named = _content_words(" ".join(f.text for f in analysed.facts if f.kind == "name"))
        if not analysed.words - named:
            if clauses:
                clauses[-1] = f"{clauses[-1]}; {piece}"
            else:
                carry = f"{carry}; {piece}".strip("; ")
            continue
        clauses.append(f"{carry}; {piece}".strip("; "))
        carry = ""
    if carry:
        if clauses:
            clauses[-1] = f"{clauses[-1]}; {carry}"
        else:
            clauses.append(carry)
    return clauses


def _joint_support(text: str, source: list[_Analysed], ctx: _Context) -> bool:
    """Whether a statement is supported by two source sentences jointly (a summary line that
    condenses two of them): every clause of it (:func:`_clauses`) is supported by one of the two
    as a whole statement would be (its numbers, dates, times and names in that sentence, no
    polarity conflict), but closer: at least JOINT_CONTAINMENT of the clause's content words, since
    a short clause finds common words anywhere."""
    clauses = [_analyse(c, ctx, True) for c in _clauses(text, ctx)]
    if len(clauses) < 2:
        return False
    whole = _analyse(text, ctx, True)
    covers: list[frozenset[int]] = []
    for sentence in source:
        if _value_conflict(whole, sentence):
            continue  # it ties a word of the statement to another value: never a supporter
        covered = frozenset(i for i, clause in enumerate(clauses)
                            if not _polarity_conflict(clause, sentence)
                            and all(_fact_in(fact, sentence) for fact in clause.facts)
                            and _containment(clause.words, sentence.words) >= JOINT_CONTAINMENT)
        if covered:
            covers.append(covered)
    want = frozenset(range(len(clauses)))
    return any(a | b == want for i, a in enumerate(covers) for b in covers[i:])


def _fact_in(fact: Fact, sentence: _Analysed) -> bool:
    if fact.kind == "number":
        return any(f.kind == "number" and f.key == fact.key and same_currency(f, fact) for f in sentence.facts)
    if fact.kind == "date":
        return any(f.kind == "date" and _dates_match(f.key, fact.key) for f in sentence.facts)
    if fact.kind == "time":
        return any(f.kind == "time" and _times_match(f.key, fact.key) for f in sentence.facts)
    text = unicodedata.normalize("NFKC", sentence.text)
    return _name_in(fact.text, text) or _acronym_of(fact.text, text)


def _acronym_of(acronym: str, text: str) -> bool:
    """Whether an acronym (``PB``, ``QA``) spells the initials of consecutive words of `text`
    (``personal best``): a summary may abbreviate a phrase of its source."""
    if not re.fullmatch(r"[A-Z]{2,6}", acronym):
        return False
    initials = "".join(w[0] for w in re.findall(rf"[{_L}]+", text)).upper()
    return acronym in initials and any(
        "".join(w[0] for w in words).upper() == acronym
        for words in zip(*(re.findall(rf"[{_L}]+", text)[k:] for k in range(len(acronym)))))
