"""Names in the contradiction guard (seed 004; chat, issue 35): entities, and texts about other things.

A name or other entity (Alice, Postgres, MySQL, AWS, eu-west, gpt4; 张伟, 杭州, as jieba tags them)
that only one text has is new detail, never a rewording (`_entities`). Two texts about two different
named things ("the checklist for Hooli by Nov 26" / "for Wayne Retail by Nov 14", "Alice does not
like tea" / "Bob likes tea"), read past their values (numbers, dates, weekdays, times: `_masked`),
are two memories (``OTHER_THING``): kept apart and counted, not queued.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from .reading import _EN_NUMBERS, _HAN, _VALUE_WORDS, _normalise
from .words import _replaced
from .values import _LETTER_VALUE, _NUMERAL_RUN


# A name or other entity: English words capitalised inside a sentence (Alice, Postgres), written
# with two capitals (MySQL, AWS) or joined to others by a hyphen or digits (eu-west, gpt4);
# Chinese words jieba tags as a person, place, organisation or other proper noun, a Latin word,
# a time or a numeral (张伟 nr, 杭州 ns, PostgreSQL eng, 下午 t).
_ENTITY_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9'’]*(?:[-_][A-Za-z0-9]+)*")
_ENTITY_FLAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz", "eng", "t", "m"})
# jieba's name tags: a word with one of them that CC-CEDICT glosses as a common word (伯父 nr
# "father's elder brother", 海鲜 ns "seafood") names no entity.
_NAME_FLAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})


@functools.lru_cache(maxsize=200_000)
def _entities(text: str) -> frozenset:
    """The lower-case words of `text` that name an entity (see _ENTITY_TOKEN_RE and _ENTITY_FLAGS)."""
    raw = unicodedata.normalize("NFKC", text or "")
    found: set[str] = set()
    for match in _ENTITY_TOKEN_RE.finditer(raw):
        token = match.group()
        before = raw[:match.start()].rstrip()
        starts_sentence = not before or before[-1] in ".!?:;。！？：；\n"
        capitals = sum(c.isupper() for c in token)
        if ((token[0].isupper() and not starts_sentence) or capitals >= 2 or _coded(token)
                or any(c.isdigit() for c in token) or (_HAN.search(raw) and token.isascii())):
            found.update(w for w in re.split(r"[-_'’]", token.lower()) if w)
    if _HAN.search(raw):
        import jieba.posseg as posseg  # jieba is initialised by the search package

        from ...text import lexicon

        from ...text import jieba_segmenter

        jieba_segmenter()
        for run in re.findall(r"[\u3400-\u9fff]+", _normalise(raw)):
            found.update(w.word for w in posseg.lcut(run) if w.flag in _ENTITY_FLAGS
                         and not (w.flag in _NAME_FLAGS and lexicon.common_word(w.word)))
    return frozenset(found)


def _coded(token: str) -> bool:
    """Whether a lower-case token joined by "-" or "_" reads as a code (eu-west, us_east_1), not as
    a hyphenated word (one-way, tight-knit, carry-on, black-and-white): WordNet knows a hyphenated
    word whole, or each of its parts is a word of three letters or more or a particle."""
    from ...text import lexicon

    if "-" not in token and "_" not in token:
        return False
    lowered = token.lower()
    parts = [w for w in re.split(r"[-_]", lowered) if w]
    if lexicon.is_phrase((lowered,)) or lexicon.is_phrase(tuple(parts)):
        return False
    return not all(w in lexicon.PARTICLES or w in _JOINING_WORDS or (len(w) >= 3 and lexicon.is_phrase((w,)))
                   for w in parts)


# Words that join the parts of a hyphenated word (black-and-white, five-a-side, mother-in-law).
_JOINING_WORDS = frozenset({"and", "a", "the", "of", "or"})


_MASKED_VALUE = re.compile(r"\d+(?:[.,:/-]\d+)*(?:\s?(?:am|pm|st|nd|rd|th))?(?![a-z])|[$€£¥]", re.IGNORECASE)
_MASKED_DAY = re.compile(r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|"
                         r"may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|"
                         r"sept|oct|nov|dec|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\b\.?", re.IGNORECASE)
_MASKED_TIME = re.compile(r"\b(?:" + "|".join(w for w in _VALUE_WORDS[3] if w.isascii()) + r")\b", re.IGNORECASE)
_MASKED_TIME_ZH = re.compile("|".join(sorted((w for w in _VALUE_WORDS[3] if not w.isascii()), key=len, reverse=True)))
_MASKED_DAY_ZH = re.compile(r"(?:星期|礼拜|周)[一二三四五六日天]")


@functools.lru_cache(maxsize=200_000)
def _masked(text: str) -> str:
    """`text` with its numbers, times, dates, weekdays and months read as one placeholder each."""
    text = _MASKED_DAY_ZH.sub("周几", text)
    text = _MASKED_DAY.sub("someday", text)
    text = _MASKED_TIME.sub("sometime", text)
    text = _MASKED_TIME_ZH.sub("某时", text)
    text = _LETTER_VALUE.sub("X", text)                   # blood type O / A
    text = re.sub(r"(?<![a-z])(?:" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True)) + r")(?![a-z])",
                  "0", text, flags=re.IGNORECASE)
    text = _NUMERAL_RUN.sub("0", text)
    return _MASKED_VALUE.sub("0", text)


@functools.lru_cache(maxsize=200_000)
def _names(text: str) -> frozenset:
    """`_entities` of `text` without its values (numbers, dates, weekdays, times): the things it names."""
    return frozenset(w for w in _entities(text) if _masked(w) == w and not _NUMERAL_RUN.fullmatch(w)
                     and not any(c.isdigit() for c in w) and w != "i")


def _opening_word(text: str) -> str:
    """The capitalised word a text opens with, lower case ("" when none): `_entities` reads no
    capital at the start of a sentence."""
    match = re.match(r"\s*([A-Z][a-z]+)\b", text)
    return match.group(1).lower() if match else ""


def _name_like(word: str) -> bool:
    from ...text import lexicon

    return not lexicon.is_english_word(word)


def _about_other_things(a: str, b: str) -> bool:
    """Whether two texts are about two different named things: one names what the other does not
    (a customer, a person, a project, a product: "the checklist for Hooli by Nov 26" / "for Wayne
    Retail by Nov 14"; "Alice does not like tea" / "Bob likes tea"), read past their values
    (numbers, dates, weekdays, times). A contradiction changes what is said of one and the same
    thing; a replaced common word is left to the guard (a contradiction is often said in other
    words: "I go running every morning" / "I never go running")."""
    if _normalise(_masked(a)) == _normalise(_masked(b)):
        return False
    open_a, open_b = _opening_word(a), _opening_word(b)
    if open_a and open_b and open_a != open_b and (_name_like(open_a) or _name_like(open_b)):
        return True                                       # "Alice does not like tea" / "Bob likes tea"
    named_a, named_b = _names(a), _names(b)
    if named_a - named_b and named_b - named_a:
        return True
    # a name in place of a common word: "the churn report every Monday" / "the SLA report every Tuesday"
    left, right = _replaced(_masked(a), _masked(b))
    return bool(left and right and len(left) == len(right) == 1
                and ((set(left) & named_a - named_b) or (set(right) & named_b - named_a)))
