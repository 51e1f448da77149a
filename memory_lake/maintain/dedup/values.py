"""Changed values in the contradiction guard (seed 004): numbers, identifiers, codes, units, letters.

A changed value (31 -> 32 years, $500 -> $600, 3月4日 -> 3月5日) is a sign of a contradiction, queued
for a person; a changed identifier ("ticket 88" / "ticket 89") or code (seat 14A / seat 14C) names
two different things, kept apart (`_number_change`, `_codes`). Numbers count with their repeats, so
0 and a repeated number are numbers too. Also here: one amount in another unit (一百二十斤 /
一百二十公斤), a capital letter that stands for a value (blood type O / A), a Chinese word that states
a quantity (三年级, `_counted`), and the Chinese fixed expressions (乱七八糟, 三天两头) whose numerals
and negations are no values.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

from .verdicts import IDENTIFIER
from .reading import _EN_NUMBERS, _Facts, _HAN, _UNITS_EN, _UNITS_ZH, _facts, _normalise, _numbers, _singular


# A code: one token that mixes letters and digits (seat 14A, SKU A-1047, gate B12, 3号楼B2). Its
# letters belong to what it names, so it is compared whole; letters that are only a unit, a time or
# an ordinal or a magnitude glued to a number (3pm, 32gb, 5km, 2nd, 1.5m) make a quantity, not a code.
_CODE_RE = re.compile(r"(?<![0-9a-z])[0-9a-z]*(?:[a-z]\d|\d[a-z])[0-9a-z]*(?:-[0-9a-z]+)*(?![0-9a-z])")
_NOT_CODE_LETTERS = frozenset({"st", "nd", "rd", "th", "s", "x", "k", "m", "b", "mn", "bn"})  # 2nd, 3x, 5k, 1.5m


@functools.lru_cache(maxsize=200_000)
def _codes(norm: str) -> Counter:
    found = Counter()
    for match in _CODE_RE.finditer(norm):
        letters = re.findall(r"[a-z]+", match.group())
        if all(w in _UNITS_EN or _singular(w) in _UNITS_EN or w in _NOT_CODE_LETTERS for w in letters):
            continue
        found[match.group()] += 1
    return found


# One unit written two ways: 块 is the spoken 元, 毛 the spoken 角 (三千块 / 三千元).
_UNIT_CANON_ZH = {"块": "元", "毛": "角", "钟头": "小时", "星期": "周", "千米": "公里", "千克": "公斤"}
_AMOUNT_ZH = re.compile(r"([零〇一二两三四五六七八九十百千万亿半\d.,]+)("
                        + "|".join(sorted(_UNITS_ZH, key=len, reverse=True)) + ")")


def _amounts_zh(norm: str) -> list[tuple[str, str]]:
    """(number, unit) of each Chinese amount in a normalised text, in order (一百二十斤 -> 一百二十, 斤)."""
    if not _HAN.search(norm):
        return []
    return [(value, _UNIT_CANON_ZH.get(unit, unit)) for value, unit in _AMOUNT_ZH.findall(norm)]


def _number_change(fa: _Facts, fb: _Facts) -> str | None:
    """``number`` when a value changed (31 -> 32 years, $500 -> $600, 3月4日 -> 3月5日),
    ``identifier`` when what changed names two different things (ticket 88 / ticket 89), or None.
    Numbers count with their repeats, so 0 and a repeated number are numbers too; a side with no
    number at all adds no signal."""
    if not fa.numbers or not fb.numbers:
        return None
    ca, cb = Counter(n.value for n in fa.numbers), Counter(n.value for n in fb.numbers)
    if ca == cb:
        return None
    only_a, only_b = ca - cb, cb - ca
    ids_a = [n.identifier for n in fa.numbers if n.value in only_a]
    ids_b = [n.identifier for n in fb.numbers if n.value in only_b]
    changed = ids_a + ids_b
    # two identifiers that differ, or one added: another thing, whatever values it carries
    if (ids_a and ids_b and any(ids_a) and any(ids_b)) or (changed and all(changed)):
        return IDENTIFIER
    return "number"


# A capital letter standing alone inside a sentence is a value (blood type O / A, size S / M, plan
# B / C; 血型O型 / A型): not the pronoun I, not a sentence's first word ("A user ...").
_LETTER_VALUE = re.compile(r"(?<![A-Za-z0-9.!?。！？])(?<!^)(?<![.!?。！？] )[A-HJ-Z](?![A-Za-z0-9])")


def _letter_values(text: str) -> Counter:
    return Counter(_LETTER_VALUE.findall(text.strip()))


def _counted(word: str) -> bool:
    """A Chinese word that states a quantity: a numeral other than a lone 一 with its measure or noun
    (三年级, 两千块, 六岁), not a dictionary word that only holds a numeral (十分 "very", 万一 "in
    case", 千万 "by all means"; 一起, 一样 hold 一). Added or dropped, it is new detail by itself,
    as a new number in digits is: "在上小学三年级" / "在上小学"."""
    from ...text import lexicon

    return bool(_HAN.match(word)) and any(n.value != 1 for n in _numbers(_normalise(word))) \
        and not lexicon.is_chinese_word(word)


def _quantified(words: tuple[str, ...]) -> bool:
    """Whether a stretch states a number: digits, an English number word, a Chinese quantity
    (``_counted``: 三次, not 十分 or the 一 of 一心一意)."""
    return any(w[:1].isdigit() or w in _EN_NUMBERS or _counted(w) for w in words)


def _states_number(words: tuple[str, ...], hyphenated: set[str]) -> bool:
    """`_quantified`, but a hyphenated English word that WordNet lists whole (one-way, one-sided)
    is a word, not a number."""
    from ...text import lexicon

    return _quantified(words) and not (set(words) <= hyphenated and lexicon.is_phrase(("-".join(words),)))


_NUMERAL_RUN = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")


@functools.lru_cache(maxsize=100_000)
def _fixed_expressions(norm: str) -> frozenset[str]:
    """The Chinese fixed expressions of a normalised text: words of three or more characters that
    jieba's dictionary tags as an idiom or set phrase (成语 i, 习用语 l: 乱七八糟, 忐忑不安, 隔三差五),
    or four or more tagged as a numeral that hold two numerals apart (三天两头, 七上八下, 十有八九),
    which no amount is written as."""
    if not _HAN.search(norm):
        return frozenset()
    import jieba.posseg as posseg

    from ...text import jieba_segmenter

    jieba_segmenter()
    found = set()
    for run in re.findall(r"[\u3400-\u9fff]+", norm):
        for piece in posseg.lcut(run):
            if len(piece.word) >= 3 and piece.flag in ("i", "l"):
                found.add(piece.word)
            elif len(piece.word) >= 4 and piece.flag == "m" and len(_NUMERAL_RUN.findall(piece.word)) >= 2:
                found.add(piece.word)
    return frozenset(found)


def _without(text: str, expressions: frozenset[str]) -> _Facts:
    """The facts of `text` with the fixed `expressions` taken out (read for values, not for words)."""
    norm = _normalise(text)
    for expression in sorted(expressions, key=len, reverse=True):
        norm = norm.replace(expression, "，")
    return _facts(norm)
