"""Retention (package docstring, *retention*): the share of the source's key facts present in the
summary. A number, date, time or name is present when the summary holds it; a decision or todo
when a summary statement of the same polarity is close to it (content-word Dice, then MiniLM)."""

from __future__ import annotations

import unicodedata

from .cosine import _Cosine
from .dates import _dates_match, _times_match
from .fact import Fact, _Analysed
from .names import _name_in
from .polarity import _polarity_conflict
from .sentences import _clean_markdown
from .words import _dice

# Closeness thresholds (see the package docstring, *retention*).
RETAIN_DICE = 0.5
RETAIN_COSINE = 0.8


def _retention_by_words(source_facts: list[Fact], source: list[_Analysed], stated: list[_Analysed],
                        summary_markdown: str, cosine: _Cosine) -> tuple[list[bool], dict[int, list[_Analysed]]]:
    """The first pass: which source facts the summary holds by value or by word overlap (`present`,
    one per fact) and, for the decisions and todos it does not, the statements of the same
    polarity left for the cosine test (`undecided`, by fact index; their texts are asked of
    `cosine`)."""
    by_text = {a.text: a for a in source}
    summary_plain = _clean_markdown(unicodedata.normalize("NFKC", summary_markdown))
    summary_facts = [f for a in stated for f in a.facts]
    undecided: dict[int, list[_Analysed]] = {}
    present: list[bool] = []
    for n, fact in enumerate(source_facts):
        if fact.kind in ("decision", "todo"):
            said = by_text[fact.text]
            same_polarity = [a for a in stated if not _polarity_conflict(said, a)]
            found = any(_dice(fact.key, a.words) >= RETAIN_DICE for a in same_polarity)
            if not found and same_polarity:
                undecided[n] = same_polarity
                cosine.want(fact.text, *(a.text for a in same_polarity))
        else:
            found = _atomic_present(fact, summary_facts, summary_plain)
        present.append(found)
    return present, undecided


def _retention(source_facts: list[Fact], present: list[bool], undecided: dict[int, list[_Analysed]],
               cosine: _Cosine) -> tuple[float, list[str]]:
    """(retention, missing facts as labels in source order) once the cosines are computed: an
    undecided fact is present when a statement's MiniLM cosine reaches RETAIN_COSINE."""
    for n, candidates in undecided.items():
        present[n] = any((cosine(source_facts[n].text, a.text) or 0.0) >= RETAIN_COSINE for a in candidates)
    missing = [fact.label() for fact, found in zip(source_facts, present) if not found]
    retention = 1.0 if not source_facts else (len(source_facts) - len(missing)) / len(source_facts)
    return retention, missing


def _atomic_present(fact: Fact, summary_facts: list[Fact], summary_plain: str) -> bool:
    """Whether a number, date, time or name of the source is in the summary."""
    if fact.kind == "name":
        return _name_in(fact.text, summary_plain)
    match = {"number": lambda a, b: a == b, "date": _dates_match, "time": _times_match}[fact.kind]
    return any(f.kind == fact.kind and match(f.key, fact.key) for f in summary_facts)
