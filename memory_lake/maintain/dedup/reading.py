"""How the contradiction guard reads a text (seed 004, issue 17): `_facts`.

A text is normalised (NFKC, lower case, no accents on Latin letters, no spaces between Chinese
characters) and read as its numbers, its weekdays, months and times of day, its negations
(not/never/n't/no/不/没/别/无/未..., counted; "no wonder", 不错 and the like negate nothing), its words
and its words in order (Chinese cut by jieba). Every run of digits is a number (0 too), and so are
Chinese numerals and English number words. A number is read by its neighbours (`_number_role`):
after a label (``ticket 88``, ``order 5512``, ``#42``, ``INC-4411``, ``订单5512``, ``第3号``) it is an
identifier; with a unit, a currency, a date or time, or after a verb or copula (``31 years``,
``$500``, ``3pm``, ``2026-03-04``, ``预算500元``, ``是500``) it is a value of the same thing.

Also here, for every other part of the guard: the content words of a text, its words as a phrase
is read (`_phrase_words`), difflib's opcodes between two of them, and jieba's tags of a word.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from ...text import NEGATION_CHARACTERS


_NEGATIONS_EN = frozenset("not no never none nobody nothing neither nor cannot without dont doesnt didnt isnt "
                          "arent wasnt werent wont cant couldnt shouldnt wouldnt hasnt havent hadnt".split())
_NEGATIONS_ZH = NEGATION_CHARACTERS  # 不没别无未非勿莫
_VALUE_WORDS = [
    "monday tuesday wednesday thursday friday saturday sunday".split(),
    "january february march april may june july august september october november december".split(),
    ["周一", "周二", "周三", "周四", "周五", "周六", "周日", "周天", "星期一", "星期二", "星期三", "星期四", "星期五", "星期六",
     "星期日", "星期天", "礼拜一", "礼拜二", "礼拜三", "礼拜四", "礼拜五", "礼拜六", "礼拜日", "礼拜天"],
    # issue 17: times of day and relative days are values too (a changed one is a sign of a contradiction)
    "today tonight tomorrow yesterday morning noon afternoon evening night midnight weekend weekday".split()
    + ["今天", "今晚", "明天", "昨天", "后天", "前天", "早上", "上午", "中午", "下午", "傍晚", "晚上", "凌晨", "半夜", "周末"],
]
_VALUE_REASONS = ("date", "date", "date", "time")
# One weekday written three ways (周六 = 星期六 = 礼拜六) is one value, not a changed date.
_VALUE_CANON = {f"{prefix}{day}": f"周{day}" for prefix in ("星期", "礼拜", "周") for day in "一二三四五六日天"}
_VALUE_CANON |= {f"{prefix}天": "周日" for prefix in ("星期", "礼拜", "周")}
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000, "亿": 100_000_000}
# Every run of digits is a number (0 too), with its thousands separators and decimals; so is a run
# of Chinese numerals and an English number word (_EN_NUMBERS).
_NUMBER_RE = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?|[零〇一二两三四五六七八九十百千万亿]+|半")
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?")
# What a number names, read from its neighbours (see `_number_role`). A unit or counted noun after
# it, a currency sign before it, a date or a time around it make it a value ("31 years", "$500",
# "3pm", "2026-03-04", "预算500元", "三点"); a label right before it makes it an identifier: a noun
# ("ticket 88", "order 5512", "订单5512"), "#", "no.", an ordinal 第, or letters glued to it (INC-4411).
_UNITS_EN = frozenset("""
    percent pct per cent am pm bn
    ms msec sec second minute min hour hr day week month year decade century time
    kb mb gb tb pb byte bit px pixel
    mm cm km metre meter kilometre kilometer mile inch foot feet yard mph kph
    mg kg gram kilogram kilo pound lb lbs ounce oz ton tonne stone
    ml liter litre gallon pint quart
    usd eur gbp cny rmb jpy dollar euro yuan
    degree celsius fahrenheit kelvin
    """.split())
# Verbs that take an amount directly ("need 3 servers", "paid 40"): the word before a number is
# not its label when it is one of these (or looks like a verb: -ed, -s).
_QUANTITY_VERBS = frozenset("""
    need want get got take took make made buy bought pay paid spend spent sell sold win won lose lost
    score cost weigh drink drank eat ate run ran walk add owe keep kept hold held give gave send sent
    receive reach hit use used set count expect allow limit cap raise lower cut increase reduce
    """.split())
# Chinese: a measure word or unit after a number makes it a quantity (3杯, 12个, 7天, 500元, 30秒);
# these characters before a bare number introduce a value (是500, 提高到1000, 约30).
_MEASURES_ZH = frozenset("个只条杯次天年月日点分秒元块岁人位名本件张台周倍度米克斤里页项份家座层级遍毛角折成万千百亿")
_VALUE_BEFORE_ZH = frozenset("是为到至在约共有达于过超近满剩了成降升涨跌改设比等周期拜每从花付用要需喝吃买卖跑走")
_HAN = re.compile(r"[\u3400-\u9fff]")
# Chinese units of measure and currency: one for another after the same number is another amount
# (一百二十斤 / 一百二十公斤).
_UNITS_ZH = frozenset("""
    斤 公斤 千克 克 毫克 两 吨 磅 盎司 米 公里 千米 里 英里 厘米 毫米 寸 尺 英寸 英尺 码 升 毫升 加仑
    秒 分钟 小时 钟头 天 周 星期 个月 月 年 元 块 角 毛 分 美元 英镑 欧元 日元 港币 度 摄氏度 华氏度
    """.split())
_CONTEXT = 32  # characters read on each side of a number to tell its role
_SEQUENCE_RE = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?|[a-z]+|[\u3400-\u9fff]+")


def _cn_number(text: str) -> float:
    if text == "半":
        return 0.5  # 四点半, 半小时: half is a number
    if all(c in _CN_DIGITS for c in text):
        return float("".join(str(_CN_DIGITS[c]) for c in text))
    total, section, digit = 0, 0, 0
    for c in text:
        if c in _CN_DIGITS:
            digit = _CN_DIGITS[c]
        elif c in _CN_UNITS:
            unit = _CN_UNITS[c]
            if unit >= 10000:
                total += (section + digit or 1) * unit
                section = 0
            else:
                section += (digit or 1) * unit
            digit = 0
    return float(total + section + digit)


@dataclass(frozen=True)
class _Number:
    value: float
    identifier: bool  # names a thing (ticket 88, 订单5512), not an amount, date or time of it


@dataclass(frozen=True)
class _Facts:
    numbers: tuple[_Number, ...]
    values: tuple[frozenset, ...]
    negations: int
    words: frozenset
    text: str
    sequence: tuple[str, ...]  # the words and numbers in order (Chinese cut by jieba)


_EN_NUMBERS = {w: float(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_EN_NUMBERS |= {"thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "seventy": 70.0, "eighty": 80.0,
                "ninety": 90.0, "hundred": 100.0, "thousand": 1000.0, "million": 1e6, "once": 1.0, "twice": 2.0,
                "dozen": 12.0, "half": 0.5}
# Ordinals are numbers too (fourth grade / fifth grade).
_EN_NUMBERS |= {w: float(i) for i, w in enumerate(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split()) if i}
# Weekdays and months, with their short forms: a number beside one is a date ("dec 20", "3 may").
_DATE_WORDS = frozenset(_VALUE_WORDS[0] + _VALUE_WORDS[1] + "mon tue tues wed thu thur thurs fri sat sun jan feb mar apr "
                        "jun jul aug sep sept oct nov dec".split())
_HAN_SPACE = re.compile(r"(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])")


# Accents on Latin letters (résumé, café, naïve): a word is looked up and compared without them.
_LATIN_ACCENTS = re.compile(r"(?<=[a-z])[\u0300-\u036f]+")


def _normalise(text: str) -> str:
    """NFKC, lower case, no accents on Latin letters (résumé is resume, as WordNet spells it), and
    no spaces between Chinese characters (``市 场 部`` is ``市场部``)."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    if not text.isascii():
        text = unicodedata.normalize("NFC", _LATIN_ACCENTS.sub("", unicodedata.normalize("NFD", text)))
    return _HAN_SPACE.sub("", text)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


def _label(word: str) -> bool:
    """A word that names what the number after it identifies (ticket, order, room, number): a
    content word that is not a verb taking an amount, a unit, a date or a number word."""
    from ...text import ENGLISH_STOP_WORDS

    return (word not in ENGLISH_STOP_WORDS and word not in _EN_NUMBERS and word not in _DATE_WORDS
            and word not in _UNITS_EN and word not in _QUANTITY_VERBS and word not in _NEGATIONS_EN
            and not (len(word) > 4 and word.endswith("ed")) and _singular(word) == word)


def _number_role(before: str, after: str) -> bool:
    """True when the number between `before` and `after` (normalised text) is an identifier."""
    if re.search(r"(?:#|\bno\.|\bnr\.?|\bid:?)\s*$", before) or re.search(r"[a-z][-_]?$", before):
        return True                                      # #42, no. 7, id 12, INC-4411, v2
    if re.search(r"[$€£¥]\s*$", before) or re.match(r"\s*[%‰°]|[a-z]", after):
        return False                                     # $500, 5%, 3pm, 32gb, 3rd
    if re.search(r"\d[-/:.]$", before) or re.match(r"[-/:.]\d", after):
        return False                                     # 2026-03-04, 7:45, 3/4
    if before.endswith("第"):
        return True                                      # 第3号机柜: an ordinal names the thing
    if after.startswith("号"):
        return not before.endswith("月")                 # 12号房间; 3月4号 is a date
    if after[:1] in _MEASURES_ZH:
        return False                                     # 3杯, 500元, 三点
    if _HAN.match(before[-1:] or " "):
        return before[-1] not in _VALUE_BEFORE_ZH         # 订单5512 / 预算是500
    next_word = re.match(r"\s+([a-z]+)", after)
    previous = re.search(r"([a-z]+)\s+$", before)
    if next_word and (_singular(next_word[1]) in _UNITS_EN or next_word[1] in _UNITS_EN
                      or next_word[1] in _DATE_WORDS):
        return False                                     # 31 years, 5 km, 3 march
    if previous and previous[1] in _DATE_WORDS:
        return False                                     # march 3
    return bool(previous) and _label(previous[1])        # ticket 88, item number 7; else a value


@functools.lru_cache(maxsize=100_000)
def _han_words(run: str) -> tuple[tuple[int, int, str], ...]:
    """jieba's words of a run of Chinese characters, with their offsets in it."""
    from ...text import jieba_segmenter as _jieba

    return tuple((start, end, word) for word, start, end in _jieba().tokenize(run))


def _chinese_numerals(norm: str, start: int, end: int) -> list[tuple[int, str]]:
    """The numbers in a run of Chinese numeral characters ``norm[start:end]``, read word by word:
    a numeral belongs to the word jieba cuts around it, so 周六一定 holds no 61 (周六 is a weekday,
    read as a date; 一定 "certainly" is an adverb) and 五十八千克 holds 58, not 58,000 (千克 is a
    unit). A numeral inside a unit (千克), or inside a word jieba reads as neither a number nor a
    time unless a measure follows it in the word (三年级 counts), is part of that word's meaning
    (一定, 一直, 唯一). Numerals running on across a word boundary make one number (坐二零 / 二六)."""
    left = start
    while left and _HAN.match(norm[left - 1]):
        left -= 1
    right = end
    while right < len(norm) and _HAN.match(norm[right]):
        right += 1
    pieces: list[tuple[int, str]] = []
    joined = False
    for w_start, w_end, word in _han_words(norm[left:right]):
        w_start, w_end = w_start + left, w_end + left
        if w_end <= start or w_start >= end:
            joined = False
            continue
        a, b = max(start, w_start), min(end, w_end)
        numeral_word = all(c in _CN_DIGITS or c in _CN_UNITS for c in word)
        counted = b < w_end and norm[b] in _MEASURES_ZH         # 三年级, 两口子: a numeral with its measure
        if word in _UNITS_ZH or not (numeral_word or counted
                                     or any(flag.startswith(("m", "t")) for flag in _jieba_flags(word))):
            joined = False
            continue
        if joined and pieces and a == w_start:
            pieces[-1] = (pieces[-1][0], pieces[-1][1] + norm[a:b])
        else:
            pieces.append((a, norm[a:b]))
        joined = b == w_end
    return pieces


def _numbers(norm: str) -> tuple[_Number, ...]:
    found = []
    matches = []
    for match in _NUMBER_RE.finditer(norm):
        if match.group()[0].isdigit() or match.group() == "半":
            matches.append((match.group(), match.start(), match.end()))
        else:
            matches.extend((text, at, at + len(text)) for at, text in _chinese_numerals(norm, match.start(), match.end()))
    for text, start, end in matches:
        if text[0].isdigit():
            value = float(text.replace(",", ""))
            if start and norm[start - 1] == "-" and (start == 1 or not norm[start - 2].isalnum()):
                value, start = -value, start - 1         # -5, not INC-4411 or 2026-03
        else:
            value = _cn_number(text)
        # half (半) is an amount, never a label
        identifier = text != "半" and _number_role(norm[max(0, start - _CONTEXT):start],
                                                  norm[end:end + _CONTEXT])
        found.append((start, _Number(value, identifier)))
    for match in _WORD_RE.finditer(norm):
        if match.group() in _EN_NUMBERS:
            found.append((match.start(), _Number(_EN_NUMBERS[match.group()], _number_role(
                norm[max(0, match.start() - _CONTEXT):match.start()], norm[match.end():match.end() + _CONTEXT]))))
    return tuple(n for _, n in sorted(found, key=lambda p: p[0]))


def _sequence(norm: str) -> tuple[str, ...]:
    from ...text import jieba_segmenter as _jieba

    out: list[str] = []
    for token in _SEQUENCE_RE.findall(norm):
        out.extend(_jieba().lcut(token) if _HAN.match(token) else [token])
    return tuple(out)


# Expressions whose negation word negates nothing ("whether or not I should", "not only ... but",
# "no wonder", "no doubt", "can't wait", "can't help"): not counted as negations.
_NOT_NEGATING_EN = re.compile(r"\b(?:whether or not|or not\b(?=[^.!?]*\?)|not only|no wonder|no doubt|"
                              r"can'?t wait|cannot wait|can'?t help|cannot help|not bad|no matter|"
                              r"never mind|why not|if not)\b")
# Chinese words with a negation character that negate nothing: 不错 "good", 不管 / 不论 / 无论 "no
# matter", 不过 "but", 不仅 / 不但 "not only", 不久 "soon", 不少 "quite a few", 不断 / 不停
# "constantly", 忍不住 / 不禁 "can't help", 了不起 / 不得了 "amazing", 不客气 / 没关系 / 没问题 / 没事
# (courtesies), 差不多 "about", 不如 "had better", and the A-not-A questions (有没有, 是不是, 要不要 ...).
_NOT_NEGATING_ZH = frozenset("""
    不错 不管 不论 无论 不过 不仅 不但 不久 不少 不断 不停 忍不住 不禁 了不起 不得了 不客气 没关系 没有关系 没问题
    没事 差不多 不如 有没有 是不是 要不要 好不好 能不能 会不会 可不可以 对不对 行不行 想不想 喜不喜欢 去不去 用不用
    """.split())


# Words that make a negation a low degree: "almost never" is rarely, "nearly no" is few.
_APPROXIMATORS = frozenset("almost nearly practically virtually".split())


@functools.lru_cache(maxsize=200_000)
def _facts(text: str) -> _Facts:
    norm = _normalise(text)
    words = {w.replace("'", "") for w in _WORD_RE.findall(norm)}
    words |= {w[:-1] for w in words if len(w) > 3 and w.endswith("s")}  # plurals meet their word
    tokens = _WORD_RE.findall(_NOT_NEGATING_EN.sub(" ", norm))
    # "almost never", "nearly no": an approximated negation is a low degree, read by _degree_change
    negations = sum(1 for k, w in enumerate(tokens) if (w.replace("'", "") in _NEGATIONS_EN or w.endswith("n't"))
                    and not (k and tokens[k - 1] in _APPROXIMATORS))
    sequence = _sequence(norm)
    negations += _chinese_negations(sequence)
    values = tuple(frozenset(_VALUE_CANON.get(v, v) for v in group if (v in words if v.isascii() else v in norm))
                   for group in _VALUE_WORDS)
    return _Facts(_numbers(norm), values, negations, frozenset(words), norm, sequence)


def _chinese_negations(sequence: tuple[str, ...]) -> int:
    """The negation characters of the Chinese words in `sequence`, but for the words whose main
    sense negates nothing (``lexicon.negating``: 非常 "very", 特别 "especially", 差不多 "almost",
    别人 "others"): a pair that swaps 非常 for 十分 is a rewording to judge, not a negation."""
    from ...text import lexicon

    counts = [(token, 0 if token in _NOT_NEGATING_ZH else sum(token.count(c) for c in _NEGATIONS_ZH))
              for token in sequence]
    return sum(n for token, n in counts if n and lexicon.negating(token))


def _negation_count(words: tuple[str, ...]) -> int:
    """Negations in a stretch of words, counted as `_facts` counts them."""
    english = sum(1 for w in words if w.replace("'", "") in _NEGATIONS_EN or w.endswith("n't"))
    return english + _chinese_negations(tuple(w for w in words if _HAN.match(w)))


def _has(facts: _Facts, word: str) -> bool:
    return word in facts.words if word.isascii() else word in facts.text


@functools.lru_cache(maxsize=200_000)
def _content_words(text: str) -> frozenset:
    """Words that carry content: Latin words (lower case, not stop words) and jieba's Chinese words."""
    from ...text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS, jieba_segmenter as _jieba

    norm = _normalise(text)
    words = {w for w in _WORD_RE.findall(norm) if w not in ENGLISH_STOP_WORDS}
    for run in re.findall(r"[\u3400-\u9fff]+", norm):
        words.update(w for w in _jieba().lcut(run) if w not in CHINESE_STOP_WORDS)
    return frozenset(words)


@functools.lru_cache(maxsize=100_000)
@functools.lru_cache(maxsize=100_000)
def _jieba_flags(word: str) -> tuple[str, ...]:
    """jieba's part-of-speech tag of each piece it cuts a Chinese word into."""
    import jieba.posseg as posseg

    from ...text import jieba_segmenter

    jieba_segmenter()
    return tuple(piece.flag for piece in posseg.lcut(word))


_PHRASE_RE = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?|[\u3400-\u9fff]+")


@functools.lru_cache(maxsize=200_000)
def _phrase_words(norm: str) -> tuple[str, ...]:
    """The words of a normalised text in order, as a phrase is read: codes whole (q3, gpt4),
    Chinese cut by jieba."""
    out: list[str] = []
    for token in _PHRASE_RE.findall(norm):
        out.extend(_cut_han(token) if _HAN.match(token) else (token,))
    return tuple(out)


@functools.lru_cache(maxsize=100_000)
def _cut_han(run: str) -> tuple[str, ...]:
    """jieba's cut of one run of Chinese characters (cut alone, so the same in every text: names
    and places recur across a scope's memories)."""
    from ...text import jieba_segmenter

    return tuple(jieba_segmenter().lcut(run))


@functools.lru_cache(maxsize=20_000)
def _word_opcodes(norm_a: str, norm_b: str) -> tuple[tuple[str, int, int, int, int], ...]:
    """difflib's opcodes between the word sequences of two normalised texts (`_phrase_words`),
    computed once per pair for the guard's several readings of it."""
    import difflib

    return tuple(difflib.SequenceMatcher(a=_phrase_words(norm_a), b=_phrase_words(norm_b), autojunk=False)
                 .get_opcodes())
