"""Relatives: two words for two different relatives (aunt / cousin, 叔叔 / 舅舅) are two people, by
WordNet's "relative" and Cilin's class of relatives (read by `kinds.same_kind`)."""

from __future__ import annotations

from .cilin import _cilin_any
from .pointers import _ancestors


# WordNet's "relative, relation: a person related by blood or marriage" (10235549). Every aunt,
# cousin, grandmother, son and spouse is under it, however far down (aunt: kinswoman: relative).
RELATIVE = 10235549
# Cilin's class of relatives (Ah: 亲属, 长辈, 父母, 夫妻, 兄弟姐妹, 子女 ...).
CILIN_RELATIVES = "Ah"
_FAMILY_DEPTH = 15


def _relatives(nouns: set[int]) -> set[int]:
    return {o for o in nouns if RELATIVE in _ancestors(o, _FAMILY_DEPTH)}


def _two_relatives(a: set[int], b: set[int]) -> str | None:
    """Two words that name two different relatives (aunt / cousin, grandmother / aunt, uncle /
    grandfather): relatives are a closed set of people, each one person, and the models put any two
    of them close (lives with her aunt / lives with her cousin, 0.91). Not when one word's sense is
    under the other's (mum / mother, brother / sibling: the wider word may name the same person)
    or when they share a sense."""
    kin_a, kin_b = _relatives(a), _relatives(b)
    if not kin_a or not kin_b:
        return None
    if any(x == y or y in _ancestors(x, _FAMILY_DEPTH) or x in _ancestors(y, _FAMILY_DEPTH) for x in a for y in b):
        return None
    return f"relatives {min(kin_a):08d} / {min(kin_b):08d}"


def _two_relatives_zh(x: str, y: str, nouns_x: set[int], nouns_y: set[int]) -> str | None:
    """Two Chinese words for two different relatives (舅舅 / 姑姑, 叔叔 / 舅舅): both in Cilin's class of
    relatives on no line together (外公 / 姥爷 share one: one person); a word Cilin lacks (表姐)
    counts by the WordNet nouns of its CC-CEDICT senses ("older female cousin")."""
    every = _cilin_any()
    cx = {c for c in every.get(x, frozenset()) if c.startswith(CILIN_RELATIVES)}
    cy = {c for c in every.get(y, frozenset()) if c.startswith(CILIN_RELATIVES)}
    if cx and cy:
        return None if cx & cy else f"relatives cilin {x}/{y} {sorted(cx)[0]} / {sorted(cy)[0]}"
    if (cx or _relatives(nouns_x)) and (cy or _relatives(nouns_y)) and nouns_x and nouns_y:
        found = _two_relatives(nouns_x, nouns_y)
        return f"relatives {x}/{y} -> {found}" if found else None
    return None
