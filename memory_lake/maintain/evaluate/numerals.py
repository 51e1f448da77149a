"""Numbers (package docstring, *numbers*): digit runs as whole tokens with thousands commas and
multipliers folded, English number words and Chinese numerals before a measure word or after ``第``."""

from __future__ import annotations

import re

from .fact import _CJK, Fact, _blank

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
_CN_NUM = "零〇一二两三四五六七八九十百千万亿"
_MEASURE = ("个", "位", "名", "人", "次", "天", "周", "年", "小时", "分钟", "秒", "条", "项", "份", "台", "家", "件",
            "元", "块", "倍", "岁", "层", "轮", "套", "张", "本", "篇", "种", "星期", "季度", "期", "版", "组", "批",
            "美元", "欧元", "英镑", "日元", "港元")
_WORD_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split()) if i >= 2}
_WORD_NUMBERS.update({"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
                      "eighty": 80, "ninety": 90})
_MULTIPLIERS = {"万": 10_000, "亿": 100_000_000, "千": 1000, "k": 1000, "K": 1000, "thousand": 1000,
                "million": 1_000_000, "billion": 1_000_000_000, "bn": 1_000_000_000}
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*)"
    r"(?:(?P<mult>万|亿|千|(?:k|K|w|W|bn)(?![A-Za-z])|\s?(?:thousand|million|billion)\b)|(?:st|nd|rd|th)\b)?(?![0-9])")
_WORD_NUMBER = re.compile(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", re.IGNORECASE)
_CN_NUMBER = re.compile(rf"(?P<ord>第)?(?P<num>[{_CN_NUM}]+)(?=(?P<measure>{'|'.join(_MEASURE)})?)")

# Currencies (issue 37.8): the same amount in another currency is another fact ("50 dollars" is
# not "50 euros"). Each sign, code or word next to an amount names the currencies it can mean ($
# and "dollars" any dollar, ¥ yen or yuan); two amounts agree when those meet, and an amount
# written without one agrees with any. ISO codes, the common signs and names, English and Chinese.
_DOLLARS = "USD CAD AUD HKD SGD NZD TWD"
CURRENCIES = {marker.lower(): frozenset(codes.split()) for markers, codes in [
    ("$ dollar dollars bucks", _DOLLARS), ("US$ 美元 美金", "USD"), ("HK$ 港元 港币", "HKD"), ("C$", "CAD"),
    ("A$", "AUD"), ("€ euro euros 欧元", "EUR"), ("£ pound pounds quid 英镑", "GBP"), ("¥", "JPY CNY"),
    ("yen 日元 円", "JPY"), ("yuan rmb 元 块 块钱 人民币", "CNY"), ("₹ rupee rupees", "INR"), ("₩ 韩元", "KRW"),
    ("francs", "CHF"),
] for marker in markers.split()}
CURRENCIES.update({code.lower(): frozenset([code]) for code in
                   "USD EUR GBP JPY CNY HKD CAD AUD CHF INR KRW SGD NZD TWD".split()})
_BY_LENGTH = sorted(CURRENCIES, key=len, reverse=True)
_SIGNS = "|".join(re.escape(m) for m in _BY_LENGTH if not m.isalpha())
_WORDS = "|".join(m for m in _BY_LENGTH if m.isascii() and m.isalpha())
_CJK_WORDS = "|".join(m for m in _BY_LENGTH if _CJK.search(m))
_CURRENCY_BEFORE = re.compile(rf"(?:(?<![A-Za-z])(?:{_WORDS})|{_SIGNS}) ?$", re.IGNORECASE)
_CURRENCY_AFTER = re.compile(rf" ?(?:(?:{_WORDS})(?![A-Za-z])|{_CJK_WORDS}|{_SIGNS})", re.IGNORECASE)


def _currency(text: str, start: int, end: int) -> tuple[frozenset[str], int, int]:
    """The currencies the sign, code or word just before or after the amount at ``start:end``
    names (both: the ones they share), and the span with them."""
    before = _CURRENCY_BEFORE.search(text, max(0, start - 8), start)
    after = _CURRENCY_AFTER.match(text, end)
    found = [CURRENCIES[m.group(0).strip().lower()] for m in (before, after) if m]
    if not found:
        return frozenset(), start, end
    return (found[0] & found[-1] or found[0] | found[-1]), before.start() if before else start, \
        after.end() if after else end


def same_currency(a: Fact, b: Fact) -> bool:
    """Whether two amounts may be in one currency: their currencies meet, or one names none."""
    return not a.currency or not b.currency or bool(a.currency & b.currency)


def _parse_cn_number(text: str) -> int | None:
    """A Chinese numeral (三, 十二, 二十五, 一百零五, 三千, 两万五千) as an int; None if it is not one."""
    if all(ch in _CN_DIGITS for ch in text) and len(text) > 1:  # digit by digit: 二〇二六
        return int("".join(str(_CN_DIGITS[ch]) for ch in text))
    total, section, digit = 0, 0, None
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            section += (1 if digit is None else digit) * _CN_UNITS[ch]
            digit = None
        elif ch in _CN_BIG:
            total = (total + section + (digit or 0)) * _CN_BIG[ch]
            section, digit = 0, None
        else:
            return None
    return total + section + (digit or 0)


def _number_key(value: float) -> str:
    if value == int(value):
        return str(int(value))
    return f"{value:.10g}"


def _read_numbers(text: str) -> tuple[list[Fact], str]:
    """Numbers of `text` (dates and times already blanked) and the text with them blanked."""
    facts: list[Fact] = []
    for m in list(_NUMBER.finditer(text)):
        raw, mult = m.group("num"), (m.group("mult") or "").strip()
        if raw.count(".") > 1:
            key = raw  # a version: 2.3.1
        else:
            # w / W is 万 in Chinese writing (3.6w); in English text it may be weeks, so no multiplier
            factor = _MULTIPLIERS.get(mult, 10_000 if mult in ("w", "W") and _CJK.search(text) else 1)
            value = float(raw.replace(",", "")) * factor
            key = _number_key(value)
        currency, start, end = _currency(text, m.start(), m.end())
        facts.append(Fact("number", key, m.group(0).strip(), m.start(), currency=currency))
        text = _blank(text, start, end)  # a currency word is part of the amount: no name, no content word
    for m in list(_WORD_NUMBER.finditer(text)):
        facts.append(Fact("number", str(_WORD_NUMBERS[m.group(1).lower()]), m.group(0), m.start(), "soft"))
        text = _blank(text, m.start(), m.end())
    for m in list(_CN_NUMBER.finditer(text)):
        numeral = m.group("num")
        if not (m.group("ord") or m.group("measure")) or (numeral == "一" and not m.group("ord")):
            continue
        value = _parse_cn_number(numeral)
        if value is None:
            continue
        currency, start, end = _currency(text, m.start("num"), m.end("num"))
        facts.append(Fact("number", str(value), numeral, m.start("num"), "soft", currency))
        text = _blank(text, start, end)
    return facts, text
