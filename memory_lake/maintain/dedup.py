"""Deduplication that never merges contradictions (seed 004: fingerprint, then semantic > 0.90).

Per scope (tenant, agent_id, user_id), over active memories that are not merged and not important
(automation never changes an important memory, on either side of a merge), three set-based passes:

1. **exact**: the same content after normalisation (NFKC width, case, whitespace, punctuation);
2. **near**: MinHash over the character 3-grams (2-grams in Chinese) of the normalised text (so
   Chinese works without segmentation; a word-level change moves several n-grams), LSH-bucketed (``bands`` x ``rows``
   hashes; only memories sharing a bucket are compared, never all pairs), verified by the exact
   Jaccard similarity of the two 3-gram sets >= ``near_jaccard``. Every number reads as ``0``
   here, so that a changed number never hides a pair from the guard ("Budget is $500" / "$600");
3. **semantic**: cosine > ``semantic_cosine`` (seed 004: 0.90) between memories that share their type
   or a tag, with the cached embeddings, only where the model covers both texts' language (MiniLM
   maps most Chinese to [UNK]); candidates come from random-hyperplane LSH buckets.

A fourth source of candidates sits in the near pass: memories of one scope whose word sequences
differ in exactly one word (``substitution_pairs``), which a short memory's n-grams and the models
both miss ("不吃香菜" / "不吃芫荽").

**Contradiction guard.** A candidate pair (near or semantic) is never merged when its texts differ
in a number, a weekday or month, a negation (not/never/n't/no/不/没/别/无/未..., counted), one side
of an antonym pair (``data/antonyms.tsv``: dark/light, like/dislike, 喜欢/讨厌, 深色/浅色 ...; and
WordNet's antonyms, ``lexicon.py``), the order of two items (Parquet over PDF / PDF over Parquet),
new detail (``ADDED_DETAIL_WORDS``), or a content word replaced by one that is not its synonym:
not a typo, not in ``data/synonyms.tsv``, not a synonym by the offline dictionaries (``lexicon.py``:
WordNet 3.0, CC-CEDICT), and, with embedding models, not put close by them (``_rewording``). Every run of digits is a number (0 too),
and so are Chinese numerals and English number words. A number is read by its neighbours: after a
label (``ticket 88``, ``order 5512``, ``#42``, ``INC-4411``, ``订单5512``, ``第3号``) it is an
identifier, and two identifiers that differ name two different things; with a unit, a currency,
a date or time, or after a verb or copula (``31 years``, ``$500``, ``3pm``, ``2026-03-04``,
``预算500元``, ``是500``) it is a value of the same thing. A changed value, date, negation, antonym
or swap is a sign of a contradiction: the pair goes to the ``conflicts`` queue as kind
``contradiction`` for a person to decide. A changed identifier or a replaced word means two
different memories ("ticket 88" / "ticket 89", "updates about billing" / "about search"): they
are kept apart and counted, not queued.

**Clusters** grow by complete linkage on the guard: from the canonical memory along the candidate
pairs, a memory joins only if it passes the guard against every member already in the cluster, so
A~B and B~C never merge A with a C that differs from A. The guard runs within a cluster's few
members, never over all pairs of a scope.

**Merge.** The canonical memory is the most important one, then the oldest (created_at), then the
smallest id. It takes the union of the tags, the sum of the access and reference counts, the max
importance, the earliest created_at and the latest last_accessed_at; the others get ``merged_into``
and status ``merged`` (they are not deleted; search, publish, health and the tier rules skip them;
forget still reaches them). A merge is a system move: no version bump, a ``memory_history`` row
(change ``merge``) per memory with its before image, a ``dedup_merges`` row per member, and the
cleanup log. ``unmerge(canonical)`` restores the whole cluster exactly from those before images
(the status too); the pairs it separates are never merged again.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..store import schema
from ..store import iso, resolve_as_of
from ..store import crash_point, transaction
from ..store import InputError, MemoryLakeError, NotApplicable, step_error
from ..store import HISTORY_COLUMNS, next_history_seq, row_image
from ..store import Policy
from ..store import StepReport
from ..text import NEGATION_CHARACTERS

PASSES = ("exact", "near", "semantic")
CHANGED_VALUE = "changed value"
IDENTIFIER = "identifier"
# Reasons that mean two different memories, not one fact with two values: kept apart, not queued.
# At most this many kept-apart pairs are listed in a dedup report (all are counted).
KEPT_APART_SHOWN = 1000
# Chat (issue 35, ``chat.py``): two turns by different speakers say what each of them thinks, and
# a turn of greetings, thanks, goodbyes or questions states no fact: never a contradiction.
OTHER_SPEAKER = "other speaker"
NO_STATEMENT = "states nothing"
# A changed value of two different things ("the checklist for Hooli by Nov 26" / "for Wayne Retail
# by Nov 14", "the churn report every Monday" / "the SLA report every Tuesday"): two memories.
OTHER_THING = "other thing"
# More content words than this that only one of two texts holds make a "swap" two statements.
SWAP_OTHER_WORDS = 2
# A pair the guard raised on (recorded as a step error): kept apart, never merged on doubt.
UNREADABLE = "unreadable"
DIFFERENT = (CHANGED_VALUE, IDENTIFIER, OTHER_SPEAKER, NO_STATEMENT, OTHER_THING, UNREADABLE)
ANTONYMS_FILE = Path(__file__).parent / "data" / "antonyms.tsv"
_SHINGLE = 3
# The near pass works on at most about this many memories at once (whole scopes per chunk).
NEAR_CHUNK_ROWS = 150_000
# Within an LSH bucket, each member is paired with the first one and with this many before it.
BUCKET_WINDOW = 4


# ---------------------------------------------------------------------------- the guard
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
# Between two swapped items, only these make it a list in another order ("CSV and PDF"), not a swap.
_CONJUNCTIONS = frozenset("and or & 和 与 及 或 跟 以及 还有".split())
# Words that attach a new place, time, partner or purpose to a clause (see ADDED_DETAIL_WORDS).
_PREPOSITIONS = frozenset("in on at for with to from by about during near after before since until via "
                          "without 在 给 从 对 为 向 替 于 用 去 到".split())


@functools.lru_cache(maxsize=1)
def antonym_pairs() -> tuple[tuple[str, str], ...]:
    """The antonym pairs of ``data/antonyms.tsv`` (comments and blank lines skipped)."""
    pairs = []
    for line in ANTONYMS_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            left, _, right = line.partition("\t")
            if left.strip() and right.strip():
                pairs.append((left.strip().lower(), right.strip().lower()))
    return tuple(pairs)


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
    from ..text import ENGLISH_STOP_WORDS

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
    from ..text import jieba_segmenter as _jieba

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
    from ..text import jieba_segmenter as _jieba

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
    from ..text import lexicon

    counts = [(token, 0 if token in _NOT_NEGATING_ZH else sum(token.count(c) for c in _NEGATIONS_ZH))
              for token in sequence]
    return sum(n for token, n in counts if n and lexicon.negating(token))


def _has(facts: _Facts, word: str) -> bool:
    return word in facts.words if word.isascii() else word in facts.text


@functools.lru_cache(maxsize=200_000)
def _content_words(text: str) -> frozenset:
    """Words that carry content: Latin words (lower case, not stop words) and jieba's Chinese words."""
    from ..text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS, jieba_segmenter as _jieba

    norm = _normalise(text)
    words = {w for w in _WORD_RE.findall(norm) if w not in ENGLISH_STOP_WORDS}
    for run in re.findall(r"[\u3400-\u9fff]+", norm):
        words.update(w for w in _jieba().lcut(run) if w not in CHINESE_STOP_WORDS)
    return frozenset(words)


def _typo(x: str, y: str) -> bool:
    """One slip apart: two adjacent letters swapped, one letter missing or extra, or (in a word of
    six or more) one letter wrong. ``west``/``east`` is not a slip; ``moed``/``mode`` is."""
    if x == y:
        return True
    if len(x) == len(y):
        diff = [i for i in range(len(x)) if x[i] != y[i]]
        if len(diff) == 2 and diff[1] == diff[0] + 1 and x[diff[0]] == y[diff[1]] and x[diff[1]] == y[diff[0]]:
            return len(x) >= 3
        return len(diff) == 1 and len(x) >= 6
    short, long_ = sorted((x, y), key=len)
    if len(long_) - len(short) != 1 or len(short) < 3:
        return False
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


SYNONYMS_FILE = Path(__file__).parent / "data" / "synonyms.tsv"


@functools.lru_cache(maxsize=1)
def synonym_groups() -> dict[str, int]:
    """Each word of ``data/synonyms.tsv`` -> the number of its group."""
    groups: dict[str, int] = {}
    for number, line in enumerate(SYNONYMS_FILE.read_text(encoding="utf-8").splitlines()):
        if line.strip() and not line.startswith("#"):
            for word in line.split("\t"):
                if word.strip():
                    groups.setdefault(word.strip().lower(), number)
    return groups


@functools.lru_cache(maxsize=1)
def _chinese_synonym_map() -> tuple[list[str], list[str]]:
    """(words, the first word of their group) for the Chinese words of two or more characters in
    ``data/synonyms.tsv`` (single characters would rewrite inside other words), longest first."""
    heads: dict[int, str] = {}
    pairs = []
    for word, group in synonym_groups().items():
        if re.fullmatch(r"[\u3400-\u9fff]{2,}", word):
            heads.setdefault(group, word)
            pairs.append((word, group))
    pairs.sort(key=lambda p: -len(p[0]))
    return [w for w, _ in pairs], [heads[g] for _, g in pairs]


def _same_meaning(x: str, y: str) -> bool:
    """A slip of the keyboard, or two words of one synonym group."""
    if _typo(x, y):
        # a slip of the keyboard, unless both are words of the dictionary with no sense in
        # common (hotel / hostel are two words, not one misspelt)
        from ..text import lexicon

        return not lexicon.two_words(x, y)
    groups = synonym_groups()
    return x in groups and groups.get(y) == groups[x]


def _replaced(a: str, b: str) -> tuple[list[str], list[str]]:
    """The content words of `a` and of `b` that the other text lacks and that no typo or synonym
    (``data/synonyms.tsv``) of the other side explains."""
    wa, wb = _content_words(a), _content_words(b)
    only_a, only_b = wa - wb, wb - wa
    if not only_a or not only_b:
        return [x for x in only_a if not any(_same_meaning(x, y) for y in only_b)], \
            [y for y in only_b if not any(_same_meaning(x, y) for x in only_a)]
    left = [x for x in only_a if not any(_same_meaning(x, y) for y in only_b)]
    right = [y for y in only_b if not any(_same_meaning(x, y) for x in only_a)]
    return left, right


# A name or other entity: English words capitalised inside a sentence (Alice, Postgres), written
# with two capitals (MySQL, AWS) or joined to others by a hyphen or digits (eu-west, gpt4);
# Chinese words jieba tags as a person, place, organisation or other proper noun, a Latin word,
# a time or a numeral (张伟 nr, 杭州 ns, PostgreSQL eng, 下午 t).
_ENTITY_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9'’]*(?:[-_][A-Za-z0-9]+)*")
_ENTITY_FLAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz", "eng", "t", "m"})
# jieba's name tags: a word with one of them that CC-CEDICT glosses as a common word (伯父 nr
# "father's elder brother", 海鲜 ns "seafood") names no entity.
_NAME_FLAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})
# Inserted (or dropped) content words from this many on make new detail, not a filler: "User likes
# jazz" / "User likes jazz and plays guitar in a band" are two memories, not one; so are "bought a
# Kindle" / "bought a Kindle for her mother's birthday". One new word joined by "and" / 和 or
# brought by a preposition is a new item and counts as many ("allergic to penicillin" / "... and
# latex", "likes hiking" / "likes hiking in the mountains"). Words that only moved, stop words
# ("also", "very", 都, 也) and numbers (the number guard reads those) are not counted. One other
# new word ("Reminder: meeting at 3pm", "owns a black cat") is left to the thresholds.
ADDED_DETAIL_WORDS = 2


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

        from ..text import lexicon

        from ..text import jieba_segmenter

        jieba_segmenter()
        for run in re.findall(r"[\u3400-\u9fff]+", _normalise(raw)):
            found.update(w.word for w in posseg.lcut(run) if w.flag in _ENTITY_FLAGS
                         and not (w.flag in _NAME_FLAGS and lexicon.common_word(w.word)))
    return frozenset(found)


def _coded(token: str) -> bool:
    """Whether a lower-case token joined by "-" or "_" reads as a code (eu-west, us_east_1), not as
    a hyphenated word (one-way, tight-knit, carry-on, black-and-white): WordNet knows a hyphenated
    word whole, or each of its parts is a word of three letters or more or a particle."""
    from ..text import lexicon

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


@functools.lru_cache(maxsize=20_000)
def _word_opcodes(norm_a: str, norm_b: str) -> tuple[tuple[str, int, int, int, int], ...]:
    """difflib's opcodes between the word sequences of two normalised texts (`_phrase_words`),
    computed once per pair for the guard's several readings of it."""
    import difflib

    return tuple(difflib.SequenceMatcher(a=_phrase_words(norm_a), b=_phrase_words(norm_b), autojunk=False)
                 .get_opcodes())


_HYPHENATED_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def _hyphen_parts(*norms: str) -> set[str]:
    """The parts of the hyphenated words of normalised texts (great-grandfather: great, grandfather)."""
    return {w for text in norms for token in _HYPHENATED_RE.findall(text) for w in token.split("-")}
_PHRASE_RE = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?|[\u3400-\u9fff]+")


@functools.lru_cache(maxsize=200_000)
def _phrase_words(norm: str) -> tuple[str, ...]:
    """The words of a normalised text in order, as a phrase is read: codes whole (q3, gpt4),
    Chinese cut by jieba."""
    from ..text import jieba_segmenter as _jieba

    out: list[str] = []
    for token in _PHRASE_RE.findall(norm):
        out.extend(_jieba().lcut(token) if _HAN.match(token) else [token])
    return tuple(out)


# jieba's tags of words that carry a fact: nouns, verbs, adjectives, names, places, organisations,
# Latin words. Adverbs (已, 还, 都), particles, prepositions, pronouns and numerals do not.
_DETAIL_FLAGS = ("n", "v", "a", "eng", "j", "l", "i")


@functools.lru_cache(maxsize=100_000)
@functools.lru_cache(maxsize=100_000)
def _jieba_flags(word: str) -> tuple[str, ...]:
    """jieba's part-of-speech tag of each piece it cuts a Chinese word into."""
    import jieba.posseg as posseg

    from ..text import jieba_segmenter

    jieba_segmenter()
    return tuple(piece.flag for piece in posseg.lcut(word))


def _chinese_noun(word: str) -> bool:
    """Whether jieba tags a Chinese word as one common noun (n, not a name: 茶, 绿茶, 鲫鱼), or as a
    name that CC-CEDICT glosses as a common word (胡萝卜 nr "carrot")."""
    from ..text import lexicon

    flags = _jieba_flags(word)
    return flags in (("n",), ("ng",)) or (len(flags) == 1 and flags[0] in _NAME_FLAGS and lexicon.common_word(word))


@functools.lru_cache(maxsize=100_000)
def _detail_word(word: str) -> bool:
    """Whether a new word adds a fact: a Chinese word jieba tags as a noun, verb, adjective or name
    (``（已确认）`` adds 确认 but not 已); an English word unless WordNet knows it only as an adverb
    ("really", "probably")."""
    if _HAN.match(word):
        return any(flag.startswith(_DETAIL_FLAGS) for flag in _jieba_flags(word))
    from ..text import lexicon

    return not lexicon.adverb_only(word)


def _new_thing(word: str, neighbours: tuple[str, ...], text: str) -> bool:
    """Whether one inserted word names a new thing, which makes new detail by itself: a Chinese
    common noun of two or more characters ("在一所大学的图书馆工作", "读计算机专业的研究生"),
    unless it completes one dictionary word with a neighbour (平板 / 平板电脑: "tablet computer");
    an English word whose most frequent sense is a noun ("studying chemistry", "a crime novel"), or
    that makes one WordNet compound with its neighbour ("civil engineering"). A heading before a
    colon ("Reminder: meeting at 3pm", "备注：") labels the text and adds nothing."""
    from ..text import lexicon

    if re.search(rf"(?<![\w]){re.escape(word)}\s*[:：]", text):
        return False

    if _HAN.match(word):
        return (len(word) >= 2 and _chinese_noun(word)
                and not any(_HAN.match(n) and (lexicon.is_chinese_word(n + word) or lexicon.is_chinese_word(word + n))
                            for n in neighbours))
    return lexicon.noun_first(word) or any(lexicon.is_phrase((word, n)) or lexicon.is_phrase((n, word))
                                           for n in neighbours if n.isascii())


def _replaced_spans(fa: "_Facts", fb: "_Facts", window: int, replaced: set[str], entities: frozenset = frozenset()
                    ) -> tuple[list[tuple[str, str]], int, list[tuple[tuple[str, ...], tuple[str, ...]]],
                               list[tuple[str, ...]]]:
    """(pairs of phrases, content words added, pairs of stretches, what follows each stretch): each
    stretch of the two texts' word sequences that replaces one of the words `replaced`, as a phrase
    with `window` words of context on each side and as the bare words, with the (up to two) words
    both texts have after it; and how many content words one text inserts that the other lacks. A new word among `entities` (a name, a place, an organisation; in Chinese also
    a time or an amount, as jieba tags them), a new number ("bought a used Civic" / "... for
    £6,000") or a new code (1Password, A320) is new detail by itself: "works at a bank" / "works at
    Lloyds Bank", "去成都出差" / "去成都出差，要待三天"."""
    from ..text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS
    from ..text import lexicon

    def phrase(words: tuple[str, ...]) -> str:
        text = ""
        for w in words:
            text += w if text and (_HAN.match(w[:1]) and _HAN.match(text[-1:])) else (" " + w if text else w)
        return text

    spans, added, stretches, following = [], 0, [], []
    sa, sb = _phrase_words(fa.text), _phrase_words(fb.text)
    # a word added inside a hyphenated word changes what it names (grandfather / great-grandfather)
    hyphenated = _hyphen_parts(fa.text, fb.text)
    stop = ENGLISH_STOP_WORDS | CHINESE_STOP_WORDS
    for op, i1, i2, j1, j2 in _word_opcodes(fa.text, fb.text):
        converted = False
        if (op == "replace" and not all(w in stop for w in sa[i1:i2] + sb[j1:j2])
                and not lexicon.synonyms(sa[i1:i2], sb[j1:j2])):
            # a stretch of stop words replaced by content words is an insertion ("at a bank" /
            # "at Lloyds Bank"), and the reverse a deletion; unless the dictionary reads the two
            # stretches as one ("prior to" / "before", "do it yourself" / DIY)
            if all(w in stop for w in sa[i1:i2]):
                op, converted = "insert", True
            elif all(w in stop for w in sb[j1:j2]):
                op, converted = "delete", True
        if op == "replace":
            # one side's words only moved (a word the other text has elsewhere): the other side's
            # words are inserted ("在上小学" / "在实验小学上四年级": 小学 moved, 四年级 is new)
            moved_a, moved_b = set(sa[i1:i2]) <= set(sb), set(sb[j1:j2]) <= set(sa)
            if moved_a != moved_b:
                op = "insert" if moved_a else "delete"
        if op == "replace" and replaced & set(sa[i1:i2] + sb[j1:j2]):
            spans.append((phrase(sa[max(0, i1 - window):i2 + window]), phrase(sb[max(0, j1 - window):j2 + window])))
            stretches.append((sa[i1:i2], sb[j1:j2]))
            following.append(sa[i2:i2 + 2] if sa[i2:i2 + 2] == sb[j2:j2 + 2] else sa[i2:i2 + 1])
        elif op in ("insert", "delete"):
            words, other = (sa[i1:i2], set(sb)) if op == "delete" else (sb[j1:j2], set(sa))
            new = [w for w in words if w not in stop
                   and not w[:1].isdigit() and w not in other     # a word moved elsewhere is not new
                   and _detail_word(w)]
            # a new item joined by "and" / 和, or a new place, time or purpose brought by a
            # preposition, is new detail by itself ("penicillin and latex", "hiking in the mountains");
            # not where the other text has function words in its place: there one connective
            # replaces another ("due to" / "because of", "prior to" / "before")
            listed = (bool(new) and not converted
                      and any(w in _CONJUNCTIONS or w in _PREPOSITIONS for w in words))
            valued = any(w not in other and (w in entities or w in hyphenated or _CODE_RE.fullmatch(w) or w.isdigit()
                                             or _counted(w))
                         for w in words)
            neighbours, text = ((sb[j1 - 1:j1] + sb[j2:j2 + 1], fb.text) if op == "insert"
                                else (sa[i1 - 1:i1] + sa[i2:i2 + 1], fa.text))
            named = not converted and len(new) == 1 and _new_thing(new[0], neighbours, text)
            added += max(len(new), ADDED_DETAIL_WORDS if listed or valued or named else 0)
    return spans, added, stretches, following


def _counted(word: str) -> bool:
    """A Chinese word that states a quantity: a numeral other than a lone 一 with its measure or noun
    (三年级, 两千块, 六岁), not a dictionary word that only holds a numeral (十分 "very", 万一 "in
    case", 千万 "by all means"; 一起, 一样 hold 一). Added or dropped, it is new detail by itself,
    as a new number in digits is: "在上小学三年级" / "在上小学"."""
    from ..text import lexicon

    return bool(_HAN.match(word)) and any(n.value != 1 for n in _numbers(_normalise(word))) \
        and not lexicon.is_chinese_word(word)


def _quantified(words: tuple[str, ...]) -> bool:
    """Whether a stretch states a number: digits, an English number word, a Chinese quantity
    (``_counted``: 三次, not 十分 or the 一 of 一心一意)."""
    return any(w[:1].isdigit() or w in _EN_NUMBERS or _counted(w) for w in words)


def _states_number(words: tuple[str, ...], hyphenated: set[str]) -> bool:
    """`_quantified`, but a hyphenated English word that WordNet lists whole (one-way, one-sided)
    is a word, not a number."""
    from ..text import lexicon

    return _quantified(words) and not (set(words) <= hyphenated and lexicon.is_phrase(("-".join(words),)))


# Opposing prefixes (increase / decrease, upgrade / downgrade, overpaid / underpaid) and negating
# ones (able / unable, like / dislike): a word and its opposite share the rest.
_OPPOSING_PREFIXES = (("in", "de"), ("in", "ex"), ("im", "ex"), ("up", "down"), ("over", "under"), ("pre", "post"),
                      ("max", "min"), ("inc", "dec"))
_NEGATING_PREFIXES = ("un", "dis", "in", "im", "il", "ir", "non", "mis")
# Chinese characters of opposite meaning: two words that differ in such a character at one place
# (上涨 / 下跌, 增加 / 减少, 本周 / 下周) say opposite or other things, not the same one.
_OPPOSING_CHARS = frozenset(tuple(p) for p in (
    "上下 增减 升降 涨跌 多少 大小 高低 长短 早晚 前后 左右 内外 开关 进出 买卖 来去 好坏 新旧 快慢 冷热 深浅 轻重 "
    "强弱 加减 正负 男女 东西 南北 先后 盈亏 输赢 胜负 有无 真假 对错 是非 收支 借还 赚赔 存取 推拉 宽窄 厚薄 "
    "粗细 远近 松紧 明暗 干湿 软硬 贵贱 忙闲 难易 生死 老少 首末 始终 入出 本下 本上 这下 这上 今明 今昨 明昨 今去 "
    "明去 最").split() if len(p) == 2)


def _comparative(word: str) -> bool:
    """A comparative or superlative of an adjective WordNet knows (larger, cheapest, busier), not
    any word ending in -er ("hoover", "trainer")."""
    from ..text import lexicon

    if len(word) <= 4 or not word.endswith(("er", "est")):
        return False
    stem = word[:-2] if word.endswith("er") else word[:-3]
    bases = {stem, stem + "e", stem[:-1] + "y" if stem.endswith("i") else stem,
             stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem}
    return any(lexicon.is_adjective(b) for b in bases)


def _opposed(left: list[str], right: list[str]) -> str | None:
    """A sign that the replaced words mean opposite or different degrees ("antonym" reasons): a
    unit (meters / yards is a changed value), comparatives or superlatives on both sides (larger /
    smaller), a word and its opposite by prefix (increase / decrease, able / unable), or Chinese
    words that differ in a pair of opposite characters (上涨 / 下跌) or in a unit (斤 / 公斤)."""
    from ..text import lexicon

    for x in left:
        for y in right:
            if x.isascii() and y.isascii():
                if all(w in _UNITS_EN or _singular(w) in _UNITS_EN or lexicon.is_unit(w) for w in (x, y)):
                    return f"unit {x}/{y}"                # both units: "a day" / "daily" is not
                if all(_comparative(w) for w in (x, y)) and x[-2:] == y[-2:]:
                    return f"degree {x}/{y}"
                for p, q in _OPPOSING_PREFIXES:
                    for u, v in ((x, y), (y, x)):
                        if u.startswith(p) and v.startswith(q) and u[len(p):] == v[len(q):] and len(u) - len(p) >= 3:
                            return f"antonym {x}/{y}"
                for p in _NEGATING_PREFIXES:
                    if (x == p + y or y == p + x) and min(len(x), len(y)) >= 3:
                        return f"antonym {x}/{y}"
            elif x in _UNITS_ZH and y in _UNITS_ZH:
                return f"unit {x}/{y}"
            elif _HAN.match(x) and _HAN.match(y) and any(
                    u in _UNITS_ZH and v in _UNITS_ZH and u != v for u, v in lexicon._stripped(x, y)):
                return f"unit {x}/{y}"                    # 十斤 / 十公斤, cut as one word each
            elif len(x) == len(y) and _HAN.match(x) and _HAN.match(y):
                if any((c, d) in _OPPOSING_CHARS or (d, c) in _OPPOSING_CHARS for c, d in zip(x, y) if c != d):
                    return f"antonym {x}/{y}"
    return None


# A capital letter standing alone inside a sentence is a value (blood type O / A, size S / M, plan
# B / C; 血型O型 / A型): not the pronoun I, not a sentence's first word ("A user ...").
_LETTER_VALUE = re.compile(r"(?<![A-Za-z0-9.!?。！？])(?<!^)(?<![.!?。！？] )[A-HJ-Z](?![A-Za-z0-9])")


def _letter_values(text: str) -> Counter:
    return Counter(_LETTER_VALUE.findall(text.strip()))


# Chinese individual classifiers (个体量词): the word a noun takes when it is counted, chosen by the
# noun's shape or kind, not by how much there is. One swapped for another with the same number
# before it counts the same thing (一条金毛 / 一只金毛, 一部手机 / 一台手机). Measures and
# containers (斤 / 公斤, 杯 / 瓶) are not among them: those change an amount.
_CLASSIFIERS = frozenset("个只条头匹部台辆架件本张把位名口座栋所间家棵株朵颗粒块支根枚封首篇幅项门")


def _classifier_swap(x: str, y: str) -> bool:
    """Two Chinese phrases that differ only in an individual classifier after the same numeral."""
    while x and y and x[0] == y[0]:
        prefix, x, y = x[0], x[1:], y[1:]
        if not x or not y:
            return False
        if x[0] in _CLASSIFIERS and y[0] in _CLASSIFIERS and x[1:] == y[1:] and x[0] != y[0]:
            return bool(_NUMBER_RE.fullmatch(prefix)) or prefix in "几每这那哪某"
    return False


def _single_character_change(x: str, y: str) -> bool:
    """Two Chinese words that differ in one character only, in the same place (很好 / 很差,
    采光好 / 采光差): a single character carries the whole change there, and the models read the
    rest of the phrase; only a dictionary may call that a rewording."""
    from ..text import lexicon

    if x == y or not (_HAN.search(x) and _HAN.search(y)):
        return False
    x, y = lexicon._stripped(x, y)[-1]                 # without the characters both share at the edges
    return len(x) == 1 and len(y) == 1


def _two_verbs(x: str, y: str) -> bool:
    """Two Chinese words of two or more characters that jieba reads as verbs, one character apart
    where the dictionaries see no opposites (改到 / 调到, 补课 / 补习, 打车 / 叫车): a verb's
    character is a way of doing, and the models judge the phrase. Nouns and adjectives stay under
    the one-character rule (表哥 / 堂哥, 很好 / 很差)."""
    from ..text import lexicon

    if len(x) < 2 or len(y) < 2 or _jieba_flags(x)[:1] != ("v",) or _jieba_flags(y)[:1] != ("v",):
        return False
    cx, cy = lexicon._stripped(x, y)[-1]
    found = lexicon.relation((cx,), (cy,))
    return not (found and found[0] == "antonym") and not lexicon.antonyms((x,), (y,))


def _crossed(stretches: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> tuple[str, str] | None:
    """Two items that changed places, seen in the replaced stretches: what one stretch takes out
    comes back inside another, and what it puts in came from there ("比起火车更喜欢坐飞机" /
    "比起飞机更喜欢坐火车": 火车 -> 飞机 and 坐飞机 -> 坐火车). `_swap` misses this when jieba
    cuts the two texts differently (起火 / 起飞)."""
    def within(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
        if not part or part == whole:
            return False
        if _HAN.search("".join(part)):
            return "".join(part) in "".join(whole)
        return set(part) <= set(whole)

    for i, (x1, y1) in enumerate(stretches):
        for x2, y2 in stretches[i + 1:]:
            if (within(y1, x2) and within(x1, y2)) or (within(y2, x1) and within(x2, y1)):
                return "".join(x1) if _HAN.search("".join(x1)) else " ".join(x1), \
                    "".join(y1) if _HAN.search("".join(y1)) else " ".join(y1)
    return None


def _relation(x: tuple[str, ...], y: tuple[str, ...], after: tuple[str, ...]) -> tuple[str, str] | None:
    """What the dictionaries say of stretch `x` replaced by `y` (``lexicon.relation``), or of a
    swapped Chinese classifier; an English verb is also read with the particles both texts have
    after it, since the particle is part of the verb ("bumped into" / "ran into", "showed up" /
    "turned up": the stretches alone are "bumped" / "ran"), and a modifier with the noun both have
    after it when WordNet lists both compounds ("current account" / "checking account")."""
    from ..text import lexicon

    recut = _negation_recut(x, y)
    if recut is not None:
        return lexicon.relation(*recut) if all(recut) else None
    found = lexicon.relation(x, y)
    if found:
        return found
    if _classifier_swap("".join(x), "".join(y)):
        return "synonym", "classifier"
    particles = 0
    while particles < len(after) and after[particles] in lexicon.PARTICLES:
        particles += 1
        found = lexicon.relation(x + after[:particles], y + after[:particles])
        if found:
            return found
    if after and not particles and after[0].isascii() and after[0].isalpha():
        # a compound noun whose head both texts share: "current account" / "checking account"
        # (found only when WordNet lists both compounds whole)
        found = lexicon.relation(x + after[:1], y + after[:1])
        if found and all(lexicon.is_lemma("_".join(side + after[:1])) for side in (x, y)):
            return found
    return None


_NEGATION_CHARACTERS = "不没"


def _negation_recut(x: tuple[str, ...], y: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """Two Chinese stretches that jieba cut at a negation differently, read with the negation as
    a word of its own, less what both then share: 从来不 吃 / 向来 不吃 is 从来 / 向来 (both say
    "never eats"; looked up whole, 从来不 "never" against 向来 "always" read as antonyms). None when
    the stretches hold no such cut (a negation only one side has stays where it is)."""
    if not (_HAN.search("".join(x)) and _HAN.search("".join(y))):
        return None

    from ..text import lexicon

    def cut(words: tuple[str, ...]) -> tuple[str, ...]:
        out: list[str] = []
        for w in words:
            negates = len(w) >= 2 and lexicon.negating(w)  # not 不错 "not bad", 沉没 "to sink"
            if negates and w[-1] in _NEGATION_CHARACTERS and lexicon.is_chinese_word(w[:-1]):
                out += [w[:-1], w[-1]]                    # 从来不 -> 从来 不, 从不 -> 从 不
            elif negates and w[0] in _NEGATION_CHARACTERS and lexicon.is_chinese_word(w[1:]):
                out += [w[0], w[1:]]                      # 不吃 -> 不 吃
            else:
                out.append(w)
        return tuple(out)

    cx, cy = cut(x), cut(y)
    if (cx, cy) == (x, y) or sum(w in _NEGATION_CHARACTERS for w in cx) != sum(w in _NEGATION_CHARACTERS for w in cy):
        return None
    start = 0
    while start < min(len(cx), len(cy)) and cx[start] == cy[start]:
        start += 1
    end = 0
    while end < min(len(cx), len(cy)) - start and cx[len(cx) - 1 - end] == cy[len(cy) - 1 - end]:
        end += 1
    if not any(w in _NEGATION_CHARACTERS for w in cx[:start] + cx[len(cx) - end:]):
        return None                                       # the negation did not line up: no recut to read
    return cx[start:len(cx) - end], cy[start:len(cy) - end]


# Where one clause ends and another begins: a memory that adds a clause of its own adds a fact.
# Not a colon ("Reminder: meeting at 3pm" is one clause), nor a full stop inside 3.5 or a.m.
_BRACKETED = re.compile(r"\([^()]*\)|（[^（）]*）")
_CLAUSE_BREAK = re.compile(r"(?:[,，;；。!！?？、]|\.(?=\s|$))+")


def _new_clause(norm_a: str, norm_b: str) -> bool:
    """Whether one text has more clauses than the other and one of them mostly new: at least half
    of its fact-bearing words (``_detail_word``) missing from the other text, or a Chinese noun
    among them ("用户吃芒果会过敏，吃菠萝也会" / "用户吃芒果会过敏"). "用户的丈夫在银行工作，
    经常出差" / "用户的丈夫在银行工作" (blind set K merged it: one new verb, 出差, was left to the
    thresholds); "用户去年在郊区买了房，还买了一辆车" / "用户去年在郊区买了房" (blind set P: 买 is in
    both, 车 is new)."""
    # a note in brackets ("... last week. (confirmed)", "（已确认）") annotates; it is no clause
    norm_a, norm_b = _BRACKETED.sub(" ", norm_a), _BRACKETED.sub(" ", norm_b)
    whole = {norm_a: set(_phrase_words(norm_a)), norm_b: set(_phrase_words(norm_b))}
    count = {text: len([c for c in _CLAUSE_BREAK.split(text) if c.strip()]) for text in (norm_a, norm_b)}
    for text, other in ((norm_a, norm_b), (norm_b, norm_a)):
        clauses = [c for c in _CLAUSE_BREAK.split(text) if c.strip()]
        if len(clauses) <= count[other]:
            continue                                      # a clause reworded in place is no new one
        for clause in clauses:
            words = [w for w in _phrase_words(clause) if not w[:1].isdigit() and _content_word(w)]
            new = [w for w in words
                   if not (w in whole[other] or any(w in o or o in w for o in whole[other] if len(o) > 1))]
            if new and (2 * len(new) >= len(words) or any(_chinese_noun(w) for w in new)):
                return True                               # mostly new, or a new thing named (吃菠萝也会)
    return False


def _content_word(word: str) -> bool:
    from ..text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    return word not in ENGLISH_STOP_WORDS and word not in CHINESE_STOP_WORDS and _detail_word(word)


def _narrowed(norm_a: str, norm_b: str) -> bool:
    """Whether one text names a narrower kind of a thing the other names, by one noun put before
    it: "reads fiction" / "reads crime fiction", "buys milk" / "buys oat milk", 喝茶 / 喝绿茶 (a
    jieba word that ends with the other's word: 绿茶 / 茶). A new adjective ("a new car") is left
    to the thresholds; so is a noun after the shared one ("jazz" / "jazz music" may be one thing)."""
    from ..text import lexicon
    from ..text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    sa, sb = _phrase_words(norm_a), _phrase_words(norm_b)
    changes = [op for op in _word_opcodes(norm_a, norm_b) if op[0] != "equal"]
    if len(changes) != 1:
        return False
    tag, i1, i2, j1, j2 = changes[0]
    for (x, y, after) in ((sa[i1:i2], sb[j1:j2], sb[j2:j2 + 1]), (sb[j1:j2], sa[i1:i2], sa[i2:i2 + 1])):
        if tag in ("insert", "delete") and not x and len(y) == 1 and after:
            word, head = y[0], after[0]
            if (word.isalpha() and word.isascii() and word not in ENGLISH_STOP_WORDS
                    and re.search(rf"\b{word} {head}\b", norm_a if tag == "delete" else norm_b)
                    and lexicon.is_lemma(word) and lexicon.is_lemma(head) and not lexicon.is_adjective(word)):
                return True
        if tag == "replace" and len(x) == 1 and len(y) == 1 and _HAN.match(x[0]) and _HAN.match(y[0]):
            shorter, longer = x[0], y[0]
            if (len(longer) > len(shorter) and longer.endswith(shorter) and shorter not in CHINESE_STOP_WORDS
                    and _chinese_noun(shorter) and _chinese_noun(longer)
                    and not lexicon.synonyms((shorter,), (longer,))):
                return True                               # 茶 / 绿茶; not 修 / 维修, 订 / 预订 (verbs)
    return False


def _rewording(a: str, b: str, close, window: int) -> str | None:
    """None when `b` rewords `a`, else the reason they are two memories. Each stretch of words
    that `b` puts in place of one in `a` is looked up in the dictionary of its language
    (``lexicon.py``: WordNet, CC-CEDICT): antonyms there are a contradiction ("antonym"); synonyms
    there are a rewording, whatever the models say (couch / sofa, 同意 / 批准). A stretch the
    dictionary does not call synonyms keeps the pair apart (CHANGED_VALUE) when it names an entity
    (a name, a place, a product, a time), when its words are opposed by form (``_opposed``: a
    unit, a comparative, a negating prefix), or when the models covering the language do not put
    the two phrases close (`close(x, y)`: a cosine of at least ``[dedup] paraphrase_cosine`` with
    `window` words of context). New detail added (ADDED_DETAIL_WORDS) keeps a pair apart too."""
    from ..text import lexicon

    left, right = _replaced(a, b)
    fa, fb = _facts(a), _facts(b)
    spans, added, stretches, following = _replaced_spans(fa, fb, window, set(left) | set(right),
                                                         _entities(a) | _entities(b))
    if added >= ADDED_DETAIL_WORDS or _narrowed(fa.text, fb.text) or _new_clause(fa.text, fb.text):
        return CHANGED_VALUE
    if not left or not right:
        return None
    crossed = _crossed(stretches)
    if crossed:
        return f"swap {crossed[0]}/{crossed[1]}"
    relations = [_relation(x, y, after) for (x, y), after in zip(stretches, following)]
    # a negated word against its antonym says the same ("doesn't like" / "dislikes")
    relations = [("synonym", "negated antonym") if (not found or found[0] == "antonym") and _negated_antonym(x, y) else found
                 for (x, y), found in zip(stretches, relations)]
    hyphenated = _hyphen_parts(fa.text, fb.text)
    for (x, y), found in zip(stretches, relations):
        if found and found[0] == "antonym":
            return f"antonym {' '.join(x)}/{' '.join(y)}"
        if not found and _states_number(x, hyphenated) != _states_number(y, hyphenated):
            return CHANGED_VALUE                          # "several times" / "three times": a value given
    unexplained = [(x, y) for (x, y), found in zip(stretches, relations) if not found]
    explained = {w for (x, y), found in zip(stretches, relations) if found for w in x + y}
    # a word is explained when a stretch with a synonym holds it (also inside a token: "st" of "1st")
    rest_left = [w for w in left if not any(w in token for token in explained)]
    rest_right = [w for w in right if not any(w in token for token in explained)]
    if stretches and not unexplained and not rest_left and not rest_right:
        return None                                       # every replaced word has a synonym in its place
    named_a, named_b = _entities(a), _entities(b)
    if (set(rest_left) & (named_a - named_b)) or (set(rest_right) & (named_b - named_a)):
        # a name only one text has; one both name is only cut differently (每个月攒 / 每个月存: 月存)
        return CHANGED_VALUE
    opposed = _opposed(rest_left, rest_right)
    if opposed:
        return opposed
    for (x, y), found in zip(stretches, relations):
        if (not found and _single_character_change("".join(x), "".join(y))
                and not lexicon.head_sense("".join(x), "".join(y)) and not lexicon.one_group("".join(x), "".join(y))
                and not _two_verbs("".join(x), "".join(y))):
            return CHANGED_VALUE
        if not found and lexicon.same_kind(x, y):
            return CHANGED_VALUE                          # violin / cello: the models put them close
    unexplained_spans = [span for span, found in zip(spans, relations) if not found]
    if not unexplained_spans or not all(close(x, y) for x, y in unexplained_spans):
        return CHANGED_VALUE
    return None


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


def _swap(fa: _Facts, fb: _Facts) -> tuple[str, str] | None:
    """Two items that changed places (Parquet over PDF / PDF over Parquet; from 3 to 4 / from 4
    to 3; Alice told Bob / Bob told Alice): words x and y (each once in both texts) whose order
    flips while a word between them stays between them. A clause moved to the other end (no word
    stays between) is a rewording; items with only "and"/"or"/和 between them are a list in
    another order."""
    from ..text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    counts_a, counts_b = Counter(fa.sequence), Counter(fb.sequence)
    position_b = {t: i for i, t in enumerate(fb.sequence) if counts_b[t] == 1}
    anchors = [(t, position_b[t]) for t in fa.sequence if counts_a[t] == 1 and t in position_b]
    order = [p for _, p in anchors]
    if all(x < y for x, y in zip(order, order[1:])):
        return None  # the shared words keep their order

    def item(word: str) -> bool:
        # only content words are items: a clause moved around "the", "every" or 的 swaps nothing
        # ("Tyler's car insurance renews every October" / "Every October, ... Tyler's car ...")
        return word not in ENGLISH_STOP_WORDS and word not in CHINESE_STOP_WORDS

    for i, (x, px) in enumerate(anchors):
        if not item(x):
            continue
        for j in range(i + 2, len(anchors)):
            y, py = anchors[j]
            if py < px and item(y) and any(py < pm < px and m not in _CONJUNCTIONS for m, pm in anchors[i + 1:j]):
                return x, y
    return None


# Closed classes of words that grade one scale: a memory that swaps one degree for another states
# another fact ("answered most / all of the questions", "may / must leave early", "usually / always
# takes the bus"), though search ignores them as stop words and the models put the two close.
# Words on one line are one degree (often / frequently, 应该 / 应当); Chinese quantifiers and
# modals are content words and reach the dictionaries too, which may not see the degree.
_DEGREES = {
    "quantity": ("all every each 所有 全部 全都", "most 大多数 大部分 多数", "many much lots 许多 很多 好多 不少",
                 "some several 一些 有些 部分", "few 少数 很少", "no none 没有"),
    "obligation": ("must 必须 务必 必需", "should ought 应该 应当", "may might can could 可以 可能 也许 或许 能",
                   "will 肯定 一定 必定"),
    "frequency": ("always 总是 一直 始终 从来都", "usually normally generally typically 通常 一般 往往",
                  "often frequently 经常 常常 时常", "sometimes occasionally 有时 有时候 偶尔",
                  "rarely seldom 很少 难得", "never 从不 从来不 从没"),
}
_DEGREE_OF = {word: (scale, rank) for scale, ranks in _DEGREES.items()
              for rank, words in enumerate(ranks) for word in words.split()}
# Function words of opposite direction or stance (logged in / out, above / below, for / against).
_OPPOSED_WORDS = frozenset(frozenset(p.split("/")) for p in (
    "in/out into/out inside/outside up/down on/off above/below over/under before/after for/against "
    "with/without to/from more/less more/fewer").split())


def _degree_words(ranks: set[int]) -> str:
    return ",".join(_DEGREES["frequency"][r].split()[0] for r in sorted(ranks)) or "-"


def _phrasal_synonyms(verb: tuple[str, ...], x: str, y: str) -> bool:
    """Whether the word before two opposed particles makes two phrasal verbs of one sense with
    them (fill in / fill out a form), by WordNet."""
    from ..text import lexicon

    return bool(verb) and lexicon.phrasal_synonyms(verb[-1], x, y)


# Words that make a negation a low degree: "almost never" is rarely, "nearly no" is few.
_APPROXIMATORS = frozenset("almost nearly practically virtually".split())
# Two-word degrees: "hardly ever" is rarely (hardly, scarcely and barely are not counted as negations).
_LOW_FREQUENCY = frozenset({("almost", "never"), ("nearly", "never"), ("practically", "never"),
                            ("virtually", "never"), ("hardly", "ever"), ("scarcely", "ever"), ("barely", "ever")})
_RARELY = _DEGREE_OF["rarely"]


def _frequencies(words: tuple[str, ...]) -> set[int]:
    """The degrees of the frequency scale a text states (0 always ... 5 never), two-word degrees
    read as one ("hardly ever", "almost never": rarely)."""
    found, skip = set(), False
    for k, w in enumerate(words):
        if skip:
            skip = False
            continue
        if tuple(words[k:k + 2]) in _LOW_FREQUENCY:
            found.add(_RARELY[1])
            skip = True
        elif _DEGREE_OF.get(w, ("",))[0] == "frequency":
            found.add(_DEGREE_OF[w][1])
    return found


def _degree_change(fa: _Facts, fb: _Facts) -> str | None:
    """A word of a graded closed class replaced by one of another degree of the same scale
    (quantity, obligation, frequency), or a function word by its opposite, in one replaced
    stretch of the two word sequences: "quantity most/all", "opposite in/out". A low frequency
    (rarely, hardly ever, almost never) that only one text states, or states at another degree,
    changes the fact too: "rarely eats breakfast" / "eats breakfast"."""
    sa, sb = _phrase_words(fa.text), _phrase_words(fb.text)
    never = len(_DEGREES["frequency"]) - 1                # "never" / "doesn't": the negations are counted
    stated_a, stated_b = _frequencies(sa), _frequencies(sb)
    freq_a, freq_b = stated_a - {never}, stated_b - {never}
    if freq_a != freq_b and max(freq_a | freq_b) >= _RARELY[1]:
        return f"frequency {_degree_words(freq_a)}/{_degree_words(freq_b)}"
    same_frequency = stated_a == stated_b                 # "almost never" / "rarely": one degree
    for op, i1, i2, j1, j2 in _word_opcodes(fa.text, fb.text):
        if op != "replace":
            continue
        for x in sa[i1:i2]:
            for y in sb[j1:j2]:
                dx, dy = _DEGREE_OF.get(x), _DEGREE_OF.get(y)
                if dx and dy and dx[0] == dy[0] and dx[1] != dy[1] and not (dx[0] == "frequency" and same_frequency):
                    return f"{dx[0]} {x}/{y}"
                if frozenset((x, y)) in _OPPOSED_WORDS and not _phrasal_synonyms(sa[max(0, i1 - 1):i1], x, y):
                    return f"opposite {x}/{y}"
    return None


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

    from ..text import jieba_segmenter

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


def contradiction(a: str, b: str, close=None, window: int = 3) -> str | None:
    """Why two similar texts must not be merged, or None. Signs of a contradiction (queued for a
    person): a changed number, weekday, month or time of day, a negation, an antonym, two items
    swapped. Signs of two different memories (kept apart, counted): a changed identifier or code,
    a content word replaced by another.

    Without `close`, any content word replaced by one that is neither a typo nor a synonym from
    ``data/synonyms.tsv`` keeps the pair apart. With `close` (issue 17: a function of two phrases,
    True when the embedding models covering their language put them close in meaning), a replaced
    word is a rewording when `close` says so for the replaced words with `window` words of context,
    unless it names an entity (a name, a place, a product, a time) or the other text adds new
    detail (see `_rewording`).

    Chat turns are read as a speaker and an utterance (``chat.py``): turns of two speakers are two
    memories (OTHER_SPEAKER), and only what the utterances state is compared: their questions and
    phatic sentences ("Hey Mel! Good to see you!", "不用谢！") are left out, and a text that states
    nothing is kept apart (NO_STATEMENT), never queued."""
    from .chat import split_turn, statement

    turn_a, turn_b = split_turn(a), split_turn(b)
    if turn_a and turn_b and turn_a.key != turn_b.key:
        return OTHER_SPEAKER
    said_a, said_b = statement(a), statement(b)
    if not said_a or not said_b:
        return NO_STATEMENT
    said_a, said_b = _titled(said_a), _titled(said_b)
    why = _guard(said_a, said_b, close, window)
    if why.startswith("swap") if why else False:
        # a swap is two items trading places in one statement; two statements that differ in more
        # than a couple of words besides are two things said ("I appreciate your support. It means
        # a lot" / "Your support means a lot. I really appreciate it. I'll keep you posted")
        return OTHER_THING if len(_content_words(said_a) ^ _content_words(said_b)) > SWAP_OTHER_WORDS else why
    if why is None or why in DIFFERENT or why.startswith(("antonym", "comparison")):
        return why
    if _about_other_things(said_a, said_b):
        return OTHER_THING
    return why


_TITLE = re.compile(r"《([^《》]{1,60})》")


def _titled(text: str) -> str:
    """`text` with each title in 《》 read as one name: its numbers are part of it (《流浪地球2》),
    and two titles are two names."""
    def name(match: re.Match) -> str:
        digest = hashlib.md5(match.group(1).encode("utf-8")).hexdigest()
        return "《Title" + "".join(chr(ord("a") + int(c, 16) % 26) for c in digest[:8]) + "》"
    return _TITLE.sub(name, text) if "《" in text else text


def _guard(a: str, b: str, close, window: int) -> str | None:
    """`contradiction` on two statements (see there)."""
    fa, fb = _facts(a), _facts(b)
    idioms_a, idioms_b = _fixed_expressions(fa.text), _fixed_expressions(fb.text)
    if idioms_a - idioms_b and idioms_b - idioms_a:
        # one fixed expression for another (一团糟 / 乱七八糟, 忐忑不安 / 七上八下): the numerals and
        # negations inside them are not values; the dictionaries and the models judge the two
        fa, fb = _without(a, idioms_a - idioms_b), _without(b, idioms_b - idioms_a)
    codes_a, codes_b = _codes(fa.text), _codes(fb.text)
    if codes_a and codes_b and codes_a != codes_b:
        return IDENTIFIER                                 # seat 14A / seat 14C: two seats
    changed = _number_change(fa, fb) if not _numeral_reworded(fa, fb) else None
    if changed:
        return changed
    units_a, units_b = _amounts_zh(fa.text), _amounts_zh(fb.text)
    if len(units_a) == len(units_b):
        for (va, ua), (vb, ub) in zip(units_a, units_b):
            if va == vb and ua != ub:
                return f"unit {ua}/{ub}"                  # 一百二十斤 / 一百二十公斤
    letters_a, letters_b = _letter_values(a), _letter_values(b)
    if letters_a and letters_b and letters_a != letters_b:
        return "letter"                                   # blood type O / A: a changed value, queued
    for va, vb, reason in zip(fa.values, fb.values, _VALUE_REASONS):
        if va and vb and va != vb and not (set(va) < set(vb) or set(vb) < set(va)):
            return reason                                 # (今天 / 今天下午: a time added, not changed)
    if fa.negations != fb.negations and not _negation_reworded(a, b, fa, fb):
        # counted, not by parity: "has a licence, so he can drive" / "doesn't have a licence, so
        # he can't drive" negates twice and says the opposite
        return "negation"
    degree = _degree_change(fa, fb)
    if degree:
        return degree
    # negations the texts do not share that got this far sit in a reworded stretch ("doesn't like" /
    # "dislikes"); the stretches are judged one by one below
    for left, right in antonym_pairs() if fa.negations == fb.negations else ():
        a_left, a_right, b_left, b_right = _has(fa, left), _has(fa, right), _has(fb, left), _has(fb, right)
        if (a_left and not a_right and b_right and not b_left) or (a_right and not a_left and b_left and not b_right):
            return f"antonym {left}/{right}"
    swapped = _swap(fa, fb)
    if swapped:
        return f"swap {swapped[0]}/{swapped[1]}"
    compared = _compared(fa, fb)
    if compared:
        return f"comparison: {compared[0]} moved across {compared[1]}"
    return _rewording(a, b, close or _never_close, window)


# The word that puts two things side by side in a comparison: 比 ("她丈夫比她大五岁"), than.
_COMPARISON_WORDS = frozenset({"比", "than"})


def _compared(fa: _Facts, fb: _Facts) -> tuple[str, str] | None:
    """Two sides of a comparison that changed places: a content word before 比 / "than" in one
    text and after it in the other ("用户的丈夫比她大五岁" / "用户比她丈夫大五岁": who is older
    flips). `_swap` needs a word between two items that stays between; here the pronoun on the
    other side (她, her) is not a content word."""
    from ..text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    def sides(sequence: tuple[str, ...]) -> tuple[set[str], set[str]] | None:
        at = [i for i, w in enumerate(sequence) if w in _COMPARISON_WORDS]
        if len(at) != 1:
            return None
        content = lambda words: {w for w in words if w not in ENGLISH_STOP_WORDS and w not in CHINESE_STOP_WORDS
                                 and w not in _COMPARISON_WORDS}
        return content(sequence[:at[0]]), content(sequence[at[0] + 1:])

    found_a, found_b = sides(fa.sequence), sides(fb.sequence)
    if not found_a or not found_b:
        return None
    (before_a, after_a), (before_b, after_b) = found_a, found_b
    moved = sorted((before_a & after_b) - before_b) or sorted((after_a & before_b) - after_b)
    if moved:
        return moved[0], next(iter(sorted(_COMPARISON_WORDS & (set(fa.sequence)))))
    return None


def _inside_equated_words(fa: _Facts, fb: _Facts, measure, whole: dict, explains=None) -> bool:
    """True when what `measure` counts in a stretch of words (negations, numbers) differs between
    the texts by `whole` (a's count minus b's) and only inside stretches the dictionaries equate:
    a negation or a numeral inside one dictionary word is its meaning, not a value (不及格 / 挂科
    "fail", 甭 / 不用 "need not", 总共 / 一共 "altogether", 一起 / 一块儿 "together"). Only a
    shared sense, Cilin or a cross-reference equates here: a near link or a reading of the English
    glosses through WordNet is too loose (可以 "not bad" and 不行 "be no good" meet only through
    WordNet's similar adjectives), and a stretch whose negation stands beside a word ("did not
    learn" / "learned") is no word (`_lexicalised`). `explains(x, y)`, when given, equates two
    stretches the dictionaries do not."""
    from ..text import lexicon

    sa, sb = _phrase_words(fa.text), _phrase_words(fb.text)
    explained: Counter = Counter()
    for tag, i1, i2, j1, j2 in _word_opcodes(fa.text, fb.text):
        x, y = sa[i1:i2], sb[j1:j2]
        mx, my = measure(x), measure(y)
        if tag == "equal" or mx == my:
            continue
        why = lexicon.synonyms(x, y) if x and y and _lexicalised(x) and _lexicalised(y) else None
        if (not why or " ~ " in why or "-> wordnet" in why) and not (explains and explains(x, y)):
            return False
        explained.update(mx)
        explained.subtract(my)
    return bool(whole) and _nonzero(explained) == whole


def _numeral_reworded(fa: _Facts, fb: _Facts) -> bool:
    """The numbers the texts do not share all sit inside equated words (`_inside_equated_words`)."""
    whole = Counter(n.value for n in fa.numbers)
    whole.subtract(Counter(n.value for n in fb.numbers))
    return _inside_equated_words(fa, fb, lambda words: Counter(n.value for n in _numbers(" ".join(words))),
                                 _nonzero(whole))


def _negation_reworded(a: str, b: str, fa: _Facts, fb: _Facts) -> bool:
    """The negations the texts do not share all sit inside equated words (`_inside_equated_words`)."""
    return _inside_equated_words(fa, fb, lambda words: Counter(negation=_negation_count(words)),
                                 _nonzero(Counter(negation=fa.negations - fb.negations)), _negated_antonym)


def _negated_antonym(x: tuple[str, ...], y: tuple[str, ...]) -> bool:
    """Whether one stretch negates one word and the other states that word's antonym, which says
    the same: "doesn't like" / "dislikes", "isn't happy" / "is unhappy", "didn't remember" /
    "forgot", 不喜欢 / 讨厌 (WordNet's antonym links; Chinese through CC-CEDICT's senses)."""
    from ..text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS
    from ..text import lexicon

    stop = ENGLISH_STOP_WORDS | CHINESE_STOP_WORDS
    for negated, other in ((x, y), (y, x)):
        if _negation_count(negated) != 1 or _negation_count(other):
            continue
        rest = []
        for w in negated:
            if _HAN.match(w) and len(w) >= 2 and _negation_count((w[0],)) and _negation_count((w,)) == 1:
                rest.append(w[1:])                        # 不喜欢: 喜欢
            elif not _negation_count((w,)) and w not in stop:
                rest.append(w)
        plain = tuple(w for w in other if w not in stop)
        if len(rest) == 1 and len(plain) == 1 and lexicon.antonyms(tuple(rest), plain):
            return True
    return False


def _nonzero(counts: Counter) -> dict:
    """The counts that are not 0, signs kept (a's count minus b's)."""
    return {key: value for key, value in counts.items() if value}


def _lexicalised(words: tuple[str, ...]) -> bool:
    """Whether every negation in a stretch is part of one dictionary word: an English stretch that
    WordNet lists whole ("in no time"), a Chinese word of two or more characters that CC-CEDICT
    lists (不及格, 不用). "did not learn" / "learned" share a verb, not a meaning: not lexicalised."""
    from ..text import lexicon

    if not _negation_count(words):
        return True
    if any(_HAN.match(w) for w in words):
        return all(len(w) >= 2 and lexicon.is_chinese_word(w) for w in words if _negation_count((w,)))
    return lexicon.is_phrase(words)


def _negation_count(words: tuple[str, ...]) -> int:
    """Negations in a stretch of words, counted as `_facts` counts them."""
    english = sum(1 for w in words if w.replace("'", "") in _NEGATIONS_EN or w.endswith("n't"))
    return english + _chinese_negations(tuple(w for w in words if _HAN.match(w)))


_MASKED_VALUE = re.compile(r"\d+(?:[.,:/-]\d+)*(?:\s?(?:am|pm|st|nd|rd|th))?(?![a-z])|[$€£¥]", re.IGNORECASE)
_MASKED_DAY = re.compile(r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|"
                         r"may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|"
                         r"sept|oct|nov|dec|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\b\.?", re.IGNORECASE)
_MASKED_TIME = re.compile(r"\b(?:" + "|".join(w for w in _VALUE_WORDS[3] if w.isascii()) + r")\b", re.IGNORECASE)
_MASKED_TIME_ZH = re.compile("|".join(sorted((w for w in _VALUE_WORDS[3] if not w.isascii()), key=len, reverse=True)))
_MASKED_DAY_ZH = re.compile(r"(?:星期|礼拜|周)[一二三四五六日天]")


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
    from ..text import lexicon

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


def _never_close(x: str, y: str) -> bool:
    """The judge when no embedding model is switched on: only the dictionaries explain a replaced word."""
    return False


class Closeness:
    """``close(x, y)``: True when the embedding models that cover the language of both phrases put
    them at a cosine of at least ``[dedup] paraphrase_cosine`` (the mean over those models: MiniLM
    and USE for English, USE for Chinese). The models load at the first question; vectors are kept
    per phrase and model for the run."""

    def __init__(self, names: tuple[str, ...], threshold: float, max_unknown: float, batch_size: int = 64):
        self.names, self.threshold, self.max_unknown, self.batch_size = names, threshold, max_unknown, batch_size
        self._providers: list | None = None
        self._vectors: dict[tuple[str, str], tuple[np.ndarray, float]] = {}

    @property
    def providers(self) -> list:
        """The models that load here, in the policy's order (none: every phrase is "not close")."""
        if self._providers is None:
            from ..text import ModelUnavailable, load_model

            self._providers = []
            for name in self.names:
                try:
                    self._providers.append(load_model(name))
                except ModelUnavailable:
                    continue
        return self._providers

    def cosine(self, x: str, y: str) -> float | None:
        """The mean cosine of the two phrases over the models covering both (None: none covers them)."""
        values = []
        for provider in self.providers:
            missing = [t for t in dict.fromkeys((x, y)) if (provider.name, t) not in self._vectors]
            if missing:
                out = provider.embed(missing, self.batch_size)
                for t, v, u in zip(missing, out.vectors, out.unknown):
                    self._vectors[(provider.name, t)] = (v, float(u))
            (vx, ux), (vy, uy) = self._vectors[(provider.name, x)], self._vectors[(provider.name, y)]
            if ux <= self.max_unknown and uy <= self.max_unknown:
                values.append(float(vx @ vy))
        return sum(values) / len(values) if values else None

    def __call__(self, x: str, y: str) -> bool:
        value = self.cosine(x, y)
        return value is not None and value >= self.threshold


def closeness(policy: Policy) -> Closeness | None:
    """The judge of rewordings for `policy`'s models, or None when semantic search is switched off
    (then a replaced word keeps a pair apart unless it is a typo or a listed synonym)."""
    from ..text import embedding_models

    names = embedding_models(policy)
    if not names:
        return None
    return Closeness(names, policy.dedup.paraphrase_cosine, policy.search.max_unknown_ratio,
                     policy.search.batch_size)


# ---------------------------------------------------------------------------- candidate pairs
def _strict_key(expr: pl.Expr) -> pl.Expr:
    """Content for the exact pass: NFKC, lower case, no whitespace or punctuation, except that a
    separator between two digits and a minus sign stay (1.5 is not 15, 3 4 is not 34, -5 is not 5)."""
    lowered = expr.str.normalize("NFKC").str.to_lowercase()
    between_digits = r"(\d)[\p{P}\p{S}\s]+(\d)"
    return (lowered.str.replace_all(r"(^|[^\p{L}\p{N}])[-\u2212](\d)", "${1}\x02${2}")
            .str.replace_all(between_digits, "${1}\x01${2}").str.replace_all(between_digits, "${1}\x01${2}")
            .str.replace_all(r"[\p{P}\p{S}\s]+", ""))


def _bucket_pairs(buckets: pl.DataFrame, member: str = "row") -> pl.DataFrame:
    """(a, b) pairs within each bucket (a list column `members`, sorted): every member with the
    first one and with the ``BUCKET_WINDOW`` before it (linear, never quadratic). A path through
    one neighbour is not enough: the guard may cut it (a sibling that differs in a number)."""
    exploded = (buckets.filter(pl.col("members").list.len() > 1)
                .with_columns(first=pl.col("members").list.first())
                .explode("members")
                .with_columns([pl.col("members").shift(k).over("bucket").alias(f"prev{k}")
                               for k in range(1, BUCKET_WINDOW + 1)]))
    star = exploded.filter(pl.col("members") != pl.col("first")).select(a="first", b="members")
    chains = [exploded.drop_nulls(f"prev{k}").select(a=f"prev{k}", b="members") for k in range(1, BUCKET_WINDOW + 1)]
    return (pl.concat([star, *chains]).filter(pl.col("a") != pl.col("b"))
            .select(a=pl.min_horizontal("a", "b"), b=pl.max_horizontal("a", "b")).unique())


def near_pairs(frame: pl.DataFrame, *, bands: int, rows: int, threshold: float) -> pl.DataFrame:
    """Verified near-duplicate pairs (a, b, score = Jaccard of 3-gram sets) among `frame`'s rows
    (columns ``row``, ``scope``, ``text``), from MinHash LSH buckets within a scope."""
    patterns, heads = _chinese_synonym_map()
    texts = frame.select("row", "scope", norm=pl.col("text").str.normalize("NFKC").str.to_lowercase()
                         # a number reads as "0" here: texts that differ only in a number are
                         # candidates, and the guard (not the n-grams) decides what the number means
                         .str.replace_all(r"\d+(?:[.,:/-]\d+)*", "0")
                         .str.replace_all(r"[\p{P}\p{S}\s]+", "")
                         # Chinese synonyms read as one word, so a rewording shares its n-grams
                         .str.replace_many(patterns, heads))
    # Chinese carries more per character: bigrams there, 3-grams elsewhere
    texts = texts.with_columns(size=pl.when(pl.col("norm").str.contains(r"\p{Han}")).then(2).otherwise(_SHINGLE))
    texts = texts.with_columns(n=(pl.col("norm").str.len_chars() - pl.col("size") + 1).clip(1))
    grams = (texts.select("row", "scope", "norm", "size", start=pl.int_ranges(0, "n"))
             .explode("start")
             .select("row", "scope", h=pl.col("norm").str.slice(pl.col("start"), pl.col("size")).hash(seed=7))
             .unique(["row", "h"]))
    if grams.height == 0:
        return pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64})
    signatures = grams.group_by("row", "scope").agg(
        [pl.col("h").hash(seed=100 + i).min().alias(f"m{i}") for i in range(bands * rows)])
    keyed = signatures.select(
        "row", "scope",
        *[pl.concat_list([pl.col(f"m{band * rows + r}") for r in range(rows)]).hash(seed=band).alias(f"b{band}")
          for band in range(bands)])
    buckets = (keyed.unpivot(index=["row", "scope"], variable_name="band", value_name="key")
               .group_by("scope", "band", "key").agg(members=pl.col("row").sort())
               .with_row_index("bucket"))
    pairs = _bucket_pairs(buckets)
    if pairs.height == 0:
        return pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64})
    sets = grams.group_by("row").agg(grams=pl.col("h"))
    scored = (pairs.join(sets.rename({"row": "a", "grams": "ga"}), on="a")
              .join(sets.rename({"row": "b", "grams": "gb"}), on="b")
              .with_columns(score=pl.col("ga").list.set_intersection("gb").list.len()
                            / pl.col("ga").list.set_union("gb").list.len())
              .filter(pl.col("score") >= threshold))
    return scored.select(pl.col("a").cast(pl.Int64), pl.col("b").cast(pl.Int64), "score")


# A memory longer than this many words is not looked at by the one-word pass (its other passes
# still see it): one word of 60 changes too little for the n-grams to miss the pair anyway.
SUBSTITUTION_MAX_WORDS = 60
# A stretch of one to three words is blanked: a phrasal verb, a compound or an idiom replaced by
# one word ("turned down" / "declined", "vacuum cleaner" / "hoover", "out of work" / "unemployed",
# "cut down on" / "reduce") pairs too.
SUBSTITUTION_WIDTHS = (1, 2, 3)
# The words a text must keep around a blanked stretch of that width: three blanked words of "User
# loves going hiking" leave one, and would pair it with anything that ends in "hiking".
SUBSTITUTION_KEPT = {3: 4}


def substitution_pairs(frame: pl.DataFrame) -> pl.DataFrame:
    """Pairs (a, b, score) of `frame`'s rows (columns ``row``, ``scope``, ``text``) in one scope whose
    word sequences differ in one stretch of at most two words, replaced by another ("the old couch"
    / "the old sofa", "不吃香菜" / "不吃芫荽", "turned down" / "declined"). In a short memory one replaced word moves too many n-grams for
    the near pass and too little meaning for the models to tell a synonym from another value, so
    such pairs come here and the guard (``contradiction``: the dictionaries, the hard signals)
    decides. Each text is keyed once per word position and width (``SUBSTITUTION_WIDTHS``) with
    that stretch blanked out; texts sharing a key are the pairs (linear in the words, never all
    pairs). Words as ``_phrase_words`` reads
    them: Latin words and codes by a regular expression in Polars, Chinese cut by jieba (only the
    texts with Chinese go through Python). Score: the share of words kept."""
    empty = pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64})
    if frame.height == 0:
        return empty
    norm = pl.col("text").str.normalize("NFKC").str.to_lowercase()
    texts = frame.select(pl.col("row").cast(pl.Int64), "scope", "text", han=pl.col("text").str.contains(r"\p{Han}"))
    latin = (texts.filter(~pl.col("han"))
             .select("row", "scope", words=norm.str.extract_all(r"[a-z0-9]+(?:['’][a-z]+)?")))
    han = texts.filter(pl.col("han"))
    if han.height:
        han = han.select("row", "scope", words=pl.col("text").map_elements(
            lambda t: list(_phrase_words(_normalise(t))), return_dtype=pl.List(pl.String)))
        words = pl.concat([latin, han])
    else:
        words = latin
    from ..text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    stop = sorted(ENGLISH_STOP_WORDS | CHINESE_STOP_WORDS)
    words = words.with_columns(n=pl.col("words").list.len(),
                               h=pl.col("words").list.eval(pl.element().hash(seed=11)),
                               content=pl.col("words").list.eval(pl.element().filter(~pl.element().is_in(stop))))
    positions = words.filter(pl.col("n").is_between(2, SUBSTITUTION_MAX_WORDS)).with_columns(
        i=pl.int_ranges(0, "n")).explode("i")
    keyed = pl.concat([
        positions.filter((pl.col("i") + width <= pl.col("n"))
                         & (pl.col("n") - width >= SUBSTITUTION_KEPT.get(width, 0))).select("row", key=pl.struct(
            "scope",
            prefix=pl.col("h").list.slice(0, pl.col("i")),
            suffix=pl.col("h").list.slice(pl.col("i") + width, pl.col("n"))).hash(seed=12))
        for width in SUBSTITUTION_WIDTHS])
    if keyed.height == 0:
        return empty
    buckets = keyed.group_by("key").agg(members=pl.col("row").unique().sort()).with_row_index("bucket")
    pairs = _bucket_pairs(buckets)
    if pairs.height == 0:
        return empty
    sizes = words.select("row", "n", "content")
    joined = (pairs.join(sizes.rename({"row": "a", "n": "na", "content": "ca"}), on="a")
              .join(sizes.rename({"row": "b", "n": "nb", "content": "cb"}), on="b"))
    # a word added ("likes jazz" / "likes modern jazz", "a car" / "an electric car") is not a
    # replacement: the thresholds of the near and semantic passes decide such pairs, so each text
    # must hold a content word the other lacks
    replaced = ((pl.col("na") == pl.col("nb"))
                | ((pl.col("ca").list.set_difference("cb").list.len() > 0)
                   & (pl.col("cb").list.set_difference("ca").list.len() > 0)))
    return (joined.filter(replaced)
            .select(pl.col("a").cast(pl.Int64), pl.col("b").cast(pl.Int64),
                    score=(1 - 1 / pl.max_horizontal("na", "nb")).cast(pl.Float64)))


def semantic_pairs(frame: pl.DataFrame, vectors: np.ndarray, *, threshold: float, bands: int = 16,
                   bits: int = 8, seed: int = 11) -> pl.DataFrame:
    """Pairs (a, b, score = cosine) with cosine > `threshold` among rows that have a vector
    (``frame``: ``row``, ``scope``, ``type``, ``tags``; `vectors` aligned with it, L2-normalised),
    sharing a scope and a type or a tag; candidates from random-hyperplane LSH buckets."""
    empty = pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64})
    if frame.height < 2:
        return empty
    planes = np.random.default_rng(seed).standard_normal((vectors.shape[1], bands * bits)).astype(np.float32)
    signs = (vectors @ planes) > 0
    weights = (1 << np.arange(bits)).astype(np.int64)
    keys = np.stack([signs[:, b * bits:(b + 1) * bits].astype(np.int64) @ weights for b in range(bands)], axis=1)
    keyed = frame.select("row", "scope").with_columns(
        [pl.Series(f"b{b}", keys[:, b]) for b in range(bands)])
    buckets = (keyed.unpivot(index=["row", "scope"], variable_name="band", value_name="key")
               .group_by("scope", "band", "key").agg(members=pl.col("row").sort())
               .with_row_index("bucket"))
    pairs = _bucket_pairs(buckets)
    if pairs.height == 0:
        return empty
    position = {row: i for i, row in enumerate(frame["row"].to_list())}
    a_idx = np.array([position[r] for r in pairs["a"].to_list()])
    b_idx = np.array([position[r] for r in pairs["b"].to_list()])
    cosine = np.einsum("ij,ij->i", vectors[a_idx], vectors[b_idx])
    meta = frame.select("row", "type", tags=pl.col("tags").fill_null([]))
    scored = (pairs.with_columns(score=pl.Series(cosine.astype(np.float64)))
              .filter(pl.col("score") > threshold)
              .join(meta.rename({"row": "a", "type": "ta", "tags": "ga"}), on="a")
              .join(meta.rename({"row": "b", "type": "tb", "tags": "gb"}), on="b")
              .filter((pl.col("ta") == pl.col("tb")) | (pl.col("ga").list.set_intersection("gb").list.len() > 0)))
    return scored.select(pl.col("a").cast(pl.Int64), pl.col("b").cast(pl.Int64), "score")


# ---------------------------------------------------------------------------- clustering
@dataclass
class Plan:
    """What a dedup run found: ``merges`` (cluster, canonical, member, pass, score) and
    ``contradictions`` (a, b, reason, pass, score), both as memory ids."""

    merges: pl.DataFrame
    contradictions: pl.DataFrame
    candidates: int
    examined: int
    different: int = 0  # similar pairs kept apart as two memories (an identifier or a content word changed; not filed)
    left_out: int = 0  # memories similar to a cluster member that differ from another member (not merged)
    errors: list = field(default_factory=list)  # step errors: a pair the guard could not read, a scope that raised
    apart: list = field(default_factory=list)  # the similar pairs kept apart: {a, b, reason, pass, score}


def find_duplicates(frame: pl.DataFrame, vectors: dict[str, np.ndarray] | None, policy: Policy,
                    kept_apart: set[tuple[str, str]] | None = None, *,
                    spaces: dict[str, tuple[dict[str, np.ndarray], float]] | None = None,
                    close: Any = "policy") -> Plan:
    """The merge plan for `frame` (columns id, tenant, agent_id, user_id, type, tags, content,
    importance, created_at, and ``covered``: the model covers its language). `vectors` maps ids to
    L2-normalised embeddings (None: no semantic pass), compared at ``semantic_cosine``; or
    `spaces` maps each model to (its vectors by id, only where it covers the language; its
    threshold), and the semantic pass runs in each space. `close` judges rewordings (see
    `contradiction`; "policy": `closeness(policy)`, None: the synonym list alone). Reads and
    writes nothing."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    d = policy.dedup
    kept_apart = kept_apart or set()
    frame = frame.with_row_index("row").with_columns(
        scope=pl.concat_str([pl.col("tenant"), pl.col("agent_id").fill_null("\x00"), pl.col("user_id").fill_null("\x00")],
                            separator="\x1f").hash(),
        key=_strict_key(pl.col("content")))
    frame = frame.with_columns(pl.col("row").cast(pl.Int64))
    ids = frame["id"].to_list()
    contents = frame["content"].to_list()
    edges = []  # (a, b, pass, score)
    # 1. exact: everyone with the first of their group
    groups = frame.group_by("scope", "key").agg(members=pl.col("row").sort()).filter(pl.col("members").list.len() > 1)
    exact = groups.select(a=pl.col("members").list.first(), b=pl.col("members")).explode("b").filter(pl.col("a") != pl.col("b"))
    edges.append(exact.with_columns(kind=pl.lit("exact"), score=pl.lit(1.0)))
    representatives = frame.unique(["scope", "key"], keep="first", maintain_order=True)
    candidates = []
    # 2. near, in chunks of whole scopes (pairs never cross a scope), so memory stays bounded
    if "near" in d.passes:
        texts = representatives.select("row", "scope", text="content")
        chunks = max(1, -(-texts.height // NEAR_CHUNK_ROWS))
        parts = (texts.with_columns(chunk=pl.col("scope") % chunks).partition_by("chunk", include_key=False)
                 if chunks > 1 else [texts])
        for part in parts:
            candidates.append(near_pairs(part, bands=d.minhash_bands, rows=d.minhash_rows,
                                         threshold=d.near_jaccard).with_columns(kind=pl.lit("near")))
            candidates.append(substitution_pairs(part).with_columns(kind=pl.lit("near")))
    # 3. semantic
    if spaces is None:  # one space: the vectors of the memories whose language the model covers
        covered_ids = frame.filter(pl.col("covered"))["id"].to_list() if vectors else []
        spaces = {"": ({i: vectors[i] for i in covered_ids if i in vectors}, d.semantic_cosine)} if vectors else {}
    if "semantic" in d.passes:
        for space, threshold in spaces.values():
            covered = representatives.filter(pl.col("id").is_in(list(space)))
            if covered.height > 1:
                matrix = np.stack([space[i] for i in covered["id"].to_list()]).astype(np.float32)
                candidates.append(semantic_pairs(covered, matrix, threshold=threshold).with_columns(
                    kind=pl.lit("semantic")))
    judge = closeness(policy) if isinstance(close, str) else close
    window = d.paraphrase_window
    errors: list[dict[str, Any]] = []
    scope_columns = frame.select("tenant", "agent_id", "user_id").rows()

    def guard(a: int, b: int) -> str | None:
        """The contradiction guard on the texts of rows a and b; a pair it cannot read is kept
        apart (UNREADABLE) and recorded, never merged on doubt."""
        try:
            return contradiction(contents[a], contents[b], judge, window)
        except MemoryLakeError:
            raise
        except Exception as exc:
            tenant, agent, user = scope_columns[a]
            errors.append(step_error("dedup", exc, item=f"memories {ids[a]} and {ids[b]}", tenant=tenant,
                                     agent_id=agent, user_id=user))
            return UNREADABLE
    pairs = (pl.concat(candidates).sort("score", descending=True).unique(["a", "b"], keep="first")
             if candidates else pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64, "kind": pl.String}))
    good, bad = [], []
    for a, b, score, kind in pairs.select("a", "b", "score", "kind").iter_rows():
        if (ids[a], ids[b]) in kept_apart or (ids[b], ids[a]) in kept_apart:
            continue
        why = guard(a, b)
        (bad if why else good).append((a, b, kind, score, why))
    edges.append(pl.DataFrame([(a, b, k, s) for a, b, k, s, _ in good],
                              schema={"a": pl.Int64, "b": pl.Int64, "kind": pl.String, "score": pl.Float64}, orient="row"))
    all_edges = pl.concat([e.select(pl.col("a").cast(pl.Int64), pl.col("b").cast(pl.Int64), "kind",
                                    pl.col("score").cast(pl.Float64)) for e in edges])
    if kept_apart and all_edges.height:
        apart = pl.DataFrame(sorted(kept_apart), schema={"x": pl.String, "y": pl.String}, orient="row")
        names = frame.select("row", "id")
        all_edges = (all_edges.join(names.rename({"row": "a", "id": "x"}), on="a")
                     .join(names.rename({"row": "b", "id": "y"}), on="b")
                     .join(apart, on=["x", "y"], how="anti").drop("x", "y"))
    merges, left_out = _clusters(frame, all_edges, ids, contents, coo_matrix, connected_components, guard)
    # a pair is filed between the memories that stay: a member stands for its canonical memory
    canonical = dict(zip(merges["member"].to_list(), merges["canonical"].to_list()))
    # Only the signals of a contradiction (number, date, negation, antonym, swap) go to a person; a
    # changed identifier or a replaced content word means two different memories, kept apart.
    seen, filed, different, apart = set(), [], 0, []
    for a, b, kind, score, why in bad:
        if why in DIFFERENT:
            different += 1
            apart.append({"a": ids[a], "b": ids[b], "reason": why, "pass": kind, "score": round(float(score), 3)})
            continue
        x, y = sorted((canonical.get(ids[a], ids[a]), canonical.get(ids[b], ids[b])))
        if x != y and (x, y) not in seen:
            seen.add((x, y))
            filed.append((x, y, why, kind, score))
    contradictions = pl.DataFrame(
        filed,
        schema={"a": pl.String, "b": pl.String, "reason": pl.String, "pass": pl.String, "score": pl.Float64},
        orient="row")
    return Plan(merges, contradictions, candidates=pairs.height + exact.height, examined=frame.height,
                different=different, left_out=left_out, errors=errors, apart=apart)


def _clusters(frame, edges, ids, contents, coo_matrix, connected_components, guard) -> tuple[pl.DataFrame, int]:
    """Clusters from the guarded edges, and how many memories were left out of one. Complete
    linkage on the guard: a memory joins a cluster only through an edge to one of its members and
    only if it passes the guard (`guard(row_a, row_b)`) against every member already in it (A~B and B~C never merge A
    with a C that differs from A). Memories with the same strict key count once, and the guard
    runs per cluster (a few members), never over all pairs of a scope."""
    import heapq

    schema_ = {"cluster": pl.String, "canonical": pl.String, "member": pl.String, "pass": pl.String,
               "score": pl.Float64}
    if edges.height == 0:
        return pl.DataFrame(schema=schema_), 0
    n = frame.height
    graph = coo_matrix((np.ones(edges.height), (edges["a"].to_numpy(), edges["b"].to_numpy())), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    touched = np.unique(np.concatenate([edges["a"].to_numpy(), edges["b"].to_numpy()]))
    members = (frame.filter(pl.col("row").is_in(touched))
               .with_columns(label=pl.lit(pl.Series(labels)).gather(pl.col("row")))
               .sort(["label", "importance", "created_at", "id"], descending=[False, True, False, False]))
    # how each member joined: the strongest edge touching it
    how = (pl.concat([edges.select(row="a", kind="kind", score="score"), edges.select(row="b", kind="kind", score="score")])
           .with_columns(rank=pl.col("kind").replace_strict({"exact": 0, "near": 1, "semantic": 2}, return_dtype=pl.Int8))
           .sort("rank", pl.col("score").neg()).unique("row", keep="first"))
    # one node per (component, strict key), numbered in canonical order: its first row speaks for it
    rows_in_order = members["row"].to_list()
    position = {row: i for i, row in enumerate(rows_in_order)}
    node_of_key: dict[tuple[int, str], int] = {}
    node_rows: list[list[int]] = []
    node_label: list[int] = []
    node_of_row: dict[int, int] = {}
    for row, label, key in zip(rows_in_order, members["label"].to_list(), members["key"].to_list()):
        node = node_of_key.setdefault((label, key), len(node_rows))
        if node == len(node_rows):
            node_rows.append([])
            node_label.append(label)
        node_rows[node].append(row)
        node_of_row[row] = node
    neighbours: list[set[int]] = [set() for _ in node_rows]
    for a, b in zip(edges["a"].to_list(), edges["b"].to_list()):
        x, y = node_of_row[a], node_of_row[b]
        if x != y:
            neighbours[x].add(y)
            neighbours[y].add(x)
    out, left_out, assigned = [], 0, [False] * len(node_rows)
    for seed in range(len(node_rows)):
        if assigned[seed]:
            continue
        assigned[seed] = True
        cluster, tried = [seed], {seed}
        frontier = sorted(neighbours[seed])
        heapq.heapify(frontier)
        while frontier:
            node = heapq.heappop(frontier)
            if assigned[node] or node in tried:
                continue
            tried.add(node)
            if all(guard(node_rows[m][0], node_rows[node][0]) is None for m in cluster):
                cluster.append(node)
                assigned[node] = True
                for nxt in neighbours[node]:
                    if not assigned[nxt] and nxt not in tried:
                        heapq.heappush(frontier, nxt)
        rows = sorted((r for node in cluster for r in node_rows[node]), key=position.__getitem__)
        if len(rows) < 2:
            left_out += 1  # similar to another memory, but it differs from every cluster it could join
            continue
        canonical, kept = rows[0], rows[1:]
        cluster_ids = sorted(ids[r] for r in rows)
        cluster_id = hashlib.sha256("\x1f".join(cluster_ids).encode()).hexdigest()[:16]
        out.extend((cluster_id, ids[canonical], ids[r], r) for r in kept)
    if not out:
        return pl.DataFrame(schema=schema_), left_out
    plan = pl.DataFrame(out, schema={"cluster": pl.String, "canonical": pl.String, "member": pl.String,
                                     "row": pl.Int64}, orient="row")
    return plan.join(how.select("row", pl.col("kind").alias("pass"), "score"), on="row", how="left").select(
        "cluster", "canonical", "member", "pass", "score"), left_out


# ---------------------------------------------------------------------------- the step
_COLUMNS = "m.id, m.tenant, m.agent_id, m.user_id, m.type, m.tags, m.content, m.importance, m.created_at, m.content_hash"


def plan_dedup(con, policy: Policy) -> tuple[Plan, pl.DataFrame]:
    """Read the eligible memories and, per embedding model, the vectors of those whose language it
    covers, on `con`; return (plan, the rows read). The semantic pass runs in each model's space, each
    memory in that of the first model covering its language
    (``semantic_cosine`` for ``[search] model``, ``multilingual_semantic_cosine`` for the
    multilingual one), so Chinese memories are compared through the multilingual model."""
    from ..text import embedding_models

    has_embeddings = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'embeddings'").fetchone()[0]
    frame = con.execute(
        f"""SELECT {_COLUMNS}, false AS covered FROM memories m
            WHERE m.status = 'active' AND m.merged_into IS NULL AND m.tier <> 'important'
              AND NOT (m.type = 'summary' AND m.operator = 'system')
            ORDER BY m.tenant, m.agent_id, m.user_id, m.id""").pl()
    spaces: dict[str, tuple[dict[str, np.ndarray], float]] = {}
    names = embedding_models(policy) if has_embeddings else ()
    taken: set[str] = set()
    for name in names:
        found = con.execute(
            """SELECT m.id, e.vector FROM memories m JOIN embeddings e ON e.text_hash = m.content_hash AND e.model = ?
               WHERE m.status = 'active' AND m.merged_into IS NULL AND m.tier <> 'important'
                 AND NOT (m.type = 'summary' AND m.operator = 'system')
                 AND len(e.vector) > 0 AND e.unknown_ratio <= ?""",
            [name, policy.search.max_unknown_ratio]).pl()
        # each memory is compared in one space only: that of the first model covering its language
        # (MiniLM for English, the multilingual model for what MiniLM does not cover)
        found = found.filter(~pl.col("id").is_in(list(taken)))
        if not found.height:
            continue
        taken.update(found["id"].to_list())
        width = found["vector"].list.len().max()
        matrix = found["vector"].list.to_array(width).to_numpy().astype(np.float32)
        threshold = policy.dedup.semantic_cosine if name == policy.search.model else policy.dedup.multilingual_semantic_cosine
        spaces[name] = (dict(zip(found["id"].to_list(), matrix)), threshold)
    if names:
        covered = set(spaces[names[0]][0]) if names[0] in spaces else set()
        frame = frame.with_columns(covered=pl.col("id").is_in(list(covered)))
    # a cluster a person unmerged stays apart: no two of its memories are merged again (a member
    # that left because a write changed its content may be merged again if it is a duplicate again)
    kept_apart = set()
    for (members,) in con.execute(
            "SELECT list_distinct(list(member_id) || list(canonical_id)) FROM dedup_merges "
            "WHERE unmerged_at IS NOT NULL AND unmerged_by IS DISTINCT FROM ? GROUP BY cluster_id",
            [schema.UNMERGED_BY_WRITE]).fetchall():
        kept_apart |= {(x, y) for x in members for y in members if x != y}
    return _isolated_plan(frame, policy, kept_apart, spaces), frame


def _isolated_plan(frame: pl.DataFrame, policy: Policy, kept_apart: set, spaces: dict) -> Plan:
    """`find_duplicates` over every scope at once; when that raises, scope by scope (pairs never
    cross a scope), and a scope that raises is left out of tonight's plan with its error."""
    try:
        return find_duplicates(frame, None, policy, kept_apart, spaces=spaces)
    except MemoryLakeError:
        raise
    except Exception:
        pass
    plans, errors = [], []
    for (tenant, agent, user), part in frame.group_by(["tenant", "agent_id", "user_id"], maintain_order=True):
        mine = set(part["id"].to_list())
        own = {name: ({i: v for i, v in vectors.items() if i in mine}, threshold)
               for name, (vectors, threshold) in spaces.items()}
        try:
            plans.append(find_duplicates(part, None, policy, kept_apart, spaces=own))
        except MemoryLakeError:
            raise
        except Exception as exc:
            errors.append(step_error("dedup", exc, item=f"{part.height} memor{'y' if part.height == 1 else 'ies'}",
                                     tenant=tenant, agent_id=agent, user_id=user))
    empty = find_duplicates(frame.head(0), None, policy, kept_apart, spaces={})
    return Plan(pl.concat([empty.merges, *(p.merges for p in plans)]),
                pl.concat([empty.contradictions, *(p.contradictions for p in plans)]),
                candidates=sum(p.candidates for p in plans), examined=frame.height,
                different=sum(p.different for p in plans), left_out=sum(p.left_out for p in plans),
                errors=errors + [e for p in plans for e in p.errors], apart=[x for p in plans for x in p.apart])


def dedup(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None,
          dry_run: bool = False) -> StepReport:
    """The nightly dedup step (see the module docstring). `dry_run` shows the clusters and
    contradictions a run would make and writes nothing."""
    from .tiers import append_cleanup_log

    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("dedup", as_of)
    report = StepReport("dedup", as_of, run_id, {})
    opener = lake.reader if dry_run else lambda: lake.writer(purpose="dedup")
    with opener() as con:
        plan, _ = plan_dedup(con, policy)
        counts = {p: int(plan.merges.filter(pl.col("pass") == p).height) for p in PASSES}
        report.counts = {"examined": plan.examined, "candidates": plan.candidates, "clusters":
                         plan.merges["cluster"].n_unique() if plan.merges.height else 0,
                         "merged": plan.merges.height, **{f"merged_{p}": n for p, n in counts.items()},
                         "contradictions": plan.contradictions.height, "kept_apart_different": plan.different,
                         "left_out_of_clusters": plan.left_out}
        report.details["clusters"] = _cluster_details(plan.merges)
        report.details["contradictions"] = plan.contradictions.to_dicts()
        # the similar pairs kept apart and why (another speaker, states nothing, another thing, an
        # identifier, a changed value): `dedup --dry-run --json` shows them
        report.details["kept_apart"] = plan.apart[:KEPT_APART_SHOWN]
        report.details["kept_apart_reasons"] = dict(Counter(
            p["reason"].split(" ")[0] if p["reason"].startswith(("unit", "antonym")) else p["reason"] for p in plan.apart))
        report.details["dry_run"] = dry_run
        report.errors = plan.errors
        if dry_run:
            return report
        log_lines: list[str] = []
        with transaction(con):
            filed = _file_contradictions(con, plan.contradictions, as_of, run_id)
            if plan.merges.height:
                _apply_merges(con, plan.merges, as_of, run_id, log_lines)
        report.counts["contradictions_filed"] = filed
        crash_point("dedup:merged")  # tests/test_crash_safety.py kills here
    append_cleanup_log(lake.root, log_lines)
    return report


def _cluster_details(merges: pl.DataFrame) -> list[dict[str, Any]]:
    if merges.height == 0:
        return []
    grouped = merges.group_by("cluster", "canonical", maintain_order=True).agg(
        members=pl.col("member").sort(), passes=pl.col("pass").unique().sort())
    return grouped.to_dicts()


def _file_contradictions(con, pairs: pl.DataFrame, as_of: datetime, run_id: str) -> int:
    """Open a ``contradiction`` conflict per pair not filed before (a person decides once)."""
    if pairs.height == 0:
        return 0
    con.register("dedup_contradictions", pairs)
    try:
        before = con.execute("SELECT count(*) FROM conflicts").fetchone()[0]
        con.execute(
            """
            INSERT INTO conflicts
            SELECT substr(sha256('contradiction:' || p.a || ':' || p.b), 1, 16), 'contradiction', 'open', ma.tenant,
                   p.a, p.b, 'content', ma.version, mb.version, NULL, to_json(ma.content)::VARCHAR,
                   to_json(mb.content)::VARCHAR, ma.operator, mb.operator, ma.trace_id, mb.trace_id, ma.status,
                   'dedup ' || p.pass || ' (' || p.reason || ', ' || round(p.score, 3) || ')', NULL, ?, ?,
                   NULL, NULL, NULL, NULL, NULL
            FROM dedup_contradictions p JOIN memories ma ON ma.id = p.a JOIN memories mb ON mb.id = p.b
            WHERE NOT EXISTS (
                -- filed before, maybe between memories merged since into these two
                SELECT 1 FROM conflicts c
                JOIN memories x ON x.id = c.memory_id JOIN memories y ON y.id = c.other_memory_id
                WHERE c.kind = 'contradiction'
                  AND least(coalesce(x.merged_into, x.id), coalesce(y.merged_into, y.id)) = p.a
                  AND greatest(coalesce(x.merged_into, x.id), coalesce(y.merged_into, y.id)) = p.b)
            """,
            [as_of, run_id])
        return con.execute("SELECT count(*) FROM conflicts").fetchone()[0] - before
    finally:
        con.unregister("dedup_contradictions")


def _apply_merges(con, merges: pl.DataFrame, as_of: datetime, run_id: str, log_lines: list[str]) -> None:
    con.register("dedup_plan", merges)
    try:
        con.execute(
            """
            CREATE OR REPLACE TEMP TABLE dedup_rows AS
            SELECT DISTINCT cluster, canonical, canonical AS id, 'canonical' AS role, NULL AS pass, NULL::DOUBLE AS score
            FROM dedup_plan
            UNION ALL SELECT cluster, canonical, member, 'member', pass, score FROM dedup_plan
            """)
        con.execute("CREATE OR REPLACE TEMP TABLE dedup_before AS SELECT m.* FROM memories m JOIN dedup_rows r USING (id)")
        con.execute(
            """
            CREATE OR REPLACE TEMP TABLE dedup_canonical AS
            SELECT r.canonical AS id,
                   list_sort(list_distinct(flatten(list(coalesce(m.tags, []::VARCHAR[]))))) AS tags,
                   sum(m.access_count) AS access_count, sum(m.reference_count) AS reference_count,
                   max(m.importance) AS importance, min(m.created_at) AS created_at,
                   max(m.last_accessed_at) AS last_accessed_at
            FROM dedup_rows r JOIN memories m USING (id) GROUP BY r.canonical
            """)
        con.execute(
            """
            UPDATE memories SET tags = c.tags, access_count = c.access_count, reference_count = c.reference_count,
                   importance = c.importance, created_at = c.created_at, last_accessed_at = c.last_accessed_at,
                   updated_at = greatest(memories.updated_at, c.created_at)
            FROM dedup_canonical c WHERE memories.id = c.id
            """)
        con.execute("UPDATE memories SET merged_into = p.canonical, status = 'merged' FROM dedup_plan p "
                    "WHERE memories.id = p.member")
        seq = next_history_seq(con)
        con.execute(
            f"""
            INSERT INTO memory_history ({HISTORY_COLUMNS})
            SELECT $seq + row_number() OVER (ORDER BY r.cluster, r.role, r.id), m.id, m.tenant, m.version, 'merge',
                   CASE WHEN r.role = 'canonical'
                        THEN ['tags', 'access_count', 'reference_count', 'importance', 'created_at', 'last_accessed_at']
                        ELSE ['merged_into', 'status'] END,
                   'system', $run_id,
                   'dedup ' || coalesce(r.pass, 'cluster') || ': cluster ' || r.cluster || ' into ' || r.canonical,
                   $as_of, {row_image('b')}, {row_image('m')}, 'dedup', NULL, m.trace_id
            FROM dedup_rows r JOIN memories m USING (id) JOIN dedup_before b USING (id)
            """,
            {"seq": seq, "run_id": run_id, "as_of": as_of})
        con.execute(
            """
            INSERT INTO dedup_merges
            SELECT p.cluster, p.canonical, p.member, p.pass, p.score, $run_id, $as_of, NULL, NULL FROM dedup_plan p
            """, {"run_id": run_id, "as_of": as_of})
        con.execute(
            """
            INSERT INTO cleanup_log
            SELECT m.id, m.tenant, m.agent_id, m.user_id, m.tier, m.tier, b.status, m.status, 'dedup_' || p.pass, $run_id, $as_of
            FROM dedup_plan p JOIN memories m ON m.id = p.member JOIN dedup_before b ON b.id = p.member
            """, {"run_id": run_id, "as_of": as_of})
        lines = con.execute(
            "SELECT concat_ws(' ', ?, ?, 'dedup_' || pass, member, 'merged into', canonical) FROM dedup_plan "
            "ORDER BY cluster, member", [iso(as_of), run_id]).fetchall()
        log_lines.extend(line for (line,) in lines)
        con.execute("DROP TABLE dedup_rows; DROP TABLE dedup_before; DROP TABLE dedup_canonical")
    finally:
        con.unregister("dedup_plan")


# ---------------------------------------------------------------------------- unmerge
def unmerge(lake, canonical_id: str, *, operator: str = "user", as_of: datetime | str | None = None,
            run_id: str | None = None, source: str | None = None) -> dict[str, Any]:
    """Undo the latest dedup merge into `canonical_id`: every memory of that cluster gets back what
    the merge changed (status, merged_into; the kept one's tags, counters, importance, dates) unless
    an edit changed it since, which stays (the version never goes back), and the pairs are never
    merged again; one with a write or
    important conflict still open stays ``conflicted`` (seed 000: 等待用户确认) and returns to its
    restored status when that is resolved. Queued in ``inbox/decisions/`` while another process
    holds the lake (``{"queued": path}``)."""
    from .queue import apply_or_queue

    as_of = resolve_as_of(as_of)
    decision = {"kind": "unmerge", "canonical_id": canonical_id, "operator": operator, "requested_at": iso(as_of)}
    run_id = run_id or lake.new_run_id("unmerge", as_of)
    return apply_or_queue(lake, decision, as_of, lambda con: _unmerge(con, canonical_id, operator, as_of, run_id,
                                                                      source or f"unmerge {canonical_id}"))


def _unmerged_value(column: str) -> str:
    """SET clause of `column` for unmerge: the value before the merge when the merge changed it and
    it still holds the merge's value; a counter minus what the merge added; else the current one."""
    changed = f"list_contains(i.fields, '{column}')"
    if column in schema.COUNTER_FIELDS:
        return (f"{column} = CASE WHEN {changed} THEN greatest(memories.{column} - (i.merged.{column} - "
                f"i.image.{column}), 0) ELSE memories.{column} END")
    return (f"{column} = CASE WHEN {changed} AND memories.{column} IS NOT DISTINCT FROM i.merged.{column} "
            f"THEN i.image.{column} ELSE memories.{column} END")


def _unmerge(con, canonical_id, operator, as_of, run_id, label) -> dict[str, Any]:
    if con.execute("SELECT 1 FROM memories WHERE id = ? AND status = 'deleted'", [canonical_id]).fetchone():
        # its members were forgotten with it, and history keeps no text to restore
        raise NotApplicable(f"{canonical_id} was forgotten (with the memories merged into it); a forgotten memory "
                            "cannot be unmerged")
    found = con.execute("SELECT cluster_id FROM dedup_merges WHERE canonical_id = ? AND unmerged_at IS NULL "
                        "ORDER BY as_of DESC, cluster_id LIMIT 1", [canonical_id]).fetchone()
    if not found:
        raise NotApplicable(f"{canonical_id} is not the canonical memory of a merge (see `memory-lake dedup --dry-run` "
                            "or the dedup_merges table)")
    (cluster,) = found
    members = [m for (m,) in con.execute("SELECT member_id FROM dedup_merges WHERE cluster_id = ? AND canonical_id = ? "
                                         "AND unmerged_at IS NULL ORDER BY member_id", [cluster, canonical_id]).fetchall()]
    ids = [canonical_id, *members]
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE unmerge_images AS
        SELECT memory_id AS id, arg_max(before, seq) AS image, arg_max(after, seq) AS merged,
               arg_max(changed_fields, seq) AS fields FROM memory_history
        WHERE change = 'merge' AND memory_id IN (SELECT unnest(?::VARCHAR[])) AND reason LIKE '%cluster ' || ? || ' into %'
          -- a memory forgotten since stays a tombstone: its image holds no text to give back
          AND memory_id NOT IN (SELECT id FROM memories WHERE status = 'deleted')
        GROUP BY memory_id
        """, [ids, cluster])
    restored = [i for (i,) in con.execute("SELECT id FROM unmerge_images ORDER BY id").fetchall()]
    con.execute("CREATE OR REPLACE TEMP TABLE unmerge_before AS SELECT m.* FROM memories m "
                "WHERE id IN (SELECT id FROM unmerge_images)")
    # Only what the merge changed goes back, and only where nothing changed it since: an edit made
    # after the merge (a user's tier, an agent's tags) stays, the version never goes back, and the
    # counters lose only what the merged memories brought.
    assignments = ", ".join(_unmerged_value(c) for c in schema.MEMORY_COLUMNS if c != "id")
    con.execute(f"UPDATE memories SET {assignments} FROM unmerge_images i WHERE memories.id = i.id")
    # A write or important conflict filed since the merge is still open: its memory stays
    # conflicted, and the status it returns to once resolved is the restored one, not `merged`.
    con.execute(
        """
        UPDATE conflicts SET lake_status = i.image.status FROM unmerge_images i
        WHERE conflicts.memory_id = i.id AND conflicts.status = 'open' AND conflicts.kind IN ('write', 'important')
          AND i.image.status <> 'conflicted'
        """)
    con.execute(
        """
        UPDATE memories SET status = 'conflicted'
        WHERE id IN (SELECT c.memory_id FROM conflicts c JOIN unmerge_images i ON i.id = c.memory_id
                     WHERE c.status = 'open' AND c.kind IN ('write', 'important'))
        """)
    con.execute(
        f"""
        INSERT INTO memory_history ({HISTORY_COLUMNS})
        SELECT ? + row_number() OVER (ORDER BY m.id), m.id, m.tenant, m.version, 'unmerge', NULL, ?, ?, ?, ?,
               {row_image('b')}, {row_image('m')}, ?, NULL, m.trace_id
        FROM memories m JOIN unmerge_before b USING (id)
        """,
        [next_history_seq(con), operator, run_id, f"unmerge cluster {cluster} of {canonical_id}", as_of, label])
    con.execute("UPDATE dedup_merges SET unmerged_at = ?, unmerged_by = ? WHERE cluster_id = ? AND canonical_id = ? "
                "AND unmerged_at IS NULL", [as_of, operator, cluster, canonical_id])
    restored = {i for (i,) in con.execute("SELECT id FROM unmerge_images").fetchall()}
    con.execute("DROP TABLE unmerge_images; DROP TABLE unmerge_before")
    return {"cluster": cluster, "canonical_id": canonical_id, "restored": [i for i in ids if i in restored],
            "run_id": run_id}
