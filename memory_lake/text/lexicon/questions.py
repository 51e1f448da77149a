"""The questions dedup asks of two stretches: `relation` (synonyms or antonyms, and why), by the
dictionary of their language (`english`, `chinese`), and its two readings `synonyms`, `antonyms`."""

from __future__ import annotations

import functools

from .chinese import _chinese
from .english import _english
from .pairs import _is_chinese


@functools.lru_cache(maxsize=50_000)
def relation(left: tuple[str, ...], right: tuple[str, ...]) -> tuple[str, str] | None:
    """("synonym" or "antonym", why) for two stretches of words (lower case, as dedup reads them:
    English words, or Chinese words as jieba cut them) by the dictionary of their language, or
    None when it does not know them or finds no such relation."""
    if not left or not right or _is_chinese(left) != _is_chinese(right):
        return None
    return _chinese(left, right) if _is_chinese(left) else _english(left, right)


def synonyms(left: tuple[str, ...], right: tuple[str, ...]) -> str | None:
    """Why `left` means what `right` means by the dictionary (a shared WordNet synset, a shared
    CC-CEDICT sense), or None."""
    found = relation(tuple(left), tuple(right))
    return found[1] if found and found[0] == "synonym" else None


def antonyms(left: tuple[str, ...], right: tuple[str, ...]) -> bool:
    """True when WordNet links a sense of `left` to a sense of `right` as its antonym (increase /
    decrease, large / small; for Chinese words, through their CC-CEDICT senses: 上涨 / 下跌)."""
    found = relation(tuple(left), tuple(right))
    return bool(found and found[0] == "antonym")
