"""The summary evaluator: four metrics that gate a summary before an agent relies on it (seed 000
"质量评估": 信息保留率 ≥ 90%, 压缩比 ≥ 3x, 可读性 ≥ 0.8, 准确性 ≥ 95%; thresholds and ``max_tokens`` in
``Policy().summaries``).

It works on any text: ``evaluate_summary(source_texts, summary_markdown)`` takes the source as a
list of texts (memories, turns, paragraphs) and a Markdown summary, and needs no lake.

Units
-----
* A **source sentence** is a piece of a source text between line breaks and sentence ends
  (``. ! ?`` followed by a space, ``。！？`` anywhere; not after ``Dr.``, ``St.``, ``e.g.`` or an
  initial, :data:`ABBREVIATIONS`).
* A **summary statement** is a list item (``-``, ``*``, ``+``, ``1.``; one statement however long)
  or a sentence of a non-list line. Headings (``#``), a line that is only bold text, a short non-list line
  ending in ``:`` (at most 40 characters, ``Decisions:``), rules (``---``) and table separators are not statements. Markdown emphasis and
  field labels of the seed's structure (``What:``, ``Why:``, ``时间：`` ...) are ignored.
* **Key facts** of a text (:func:`extract_facts`):
  - *numbers*: digit runs as whole tokens (``500`` never matches ``1500``), thousands commas and
    ``万``/``亿``/``千``/``k``/``thousand``/``million``/``billion`` multipliers folded (``1,500``,
    ``1500`` and ``0.15万`` are one number; ``42k`` = ``4.2万`` = ``4.2w``, ``w`` only in Chinese text), English number words two to twelve and the tens, and
    Chinese numerals before a measure word or after ``第`` (a lone ``一`` is an article, not a count);
  - *dates*: ISO ``2026-03-04`` (also ``/`` and ``.``), ``2026年3月4日``, ``3月4日``, ``March 4``,
    ``4 March 2026``, ``March 2026``, ``3/14/2026`` when the day is unambiguous, and weekdays
    (``Friday``, ``周五``). Two dates match when month and day agree and their years agree where both
    give one, so ``March 4``, ``2026-03-04`` and ``3月4日`` are one fact;
  - *times*: ``22:00``, ``10pm``, ``晚上10点``, ``3点半``. ``hh:mm`` without am/pm is the 24-hour
    clock; a Chinese hour without a period word (上午, 晚上 ...) could be either and matches both
    (``10点`` is 10:00 or 22:00); an hour in Chinese numerals needs a period word, minutes or 钟
    (``一点`` alone is "a little");
  - *names*: English capitalised spans (``Alice``, ``PostgreSQL``, ``Q3``, ``New York``). A capitalised
    word at a sentence start (no letter before it since the start or the last colon, so a leading
    timestamp does not count) is a name only when it is a speaker (a label that starts two lines or
    more of the source, ``Alice: ...``), an acronym or mixed-case word, or the same word is
    capitalised elsewhere in the texts; letters glued to a digit (``4S``, ``5G``) are no name; function and discourse words and chat roles
    (:data:`NOT_NAMES`: User, Assistant ...) never are. Accented letters are letters (``Inês``). In a summary statement a
    sentence-initial word that is a source name, or of which no form occurs in the source
    (``Payments`` occurs as ``payment``), is a name too. Chinese names are jieba's part-of-speech
    tags ``nr`` (people), ``ns`` (places), ``nt`` (organisations) and ``nz`` (other proper nouns)
    of two characters or more, except the pleasantries jieba's dictionary mistags
    (:data:`NOT_NAMES_ZH`); a person name (``nr``) must start with a common family name
    (:data:`COMMON_SURNAMES`, also after 老/小/阿) and not be a frequent dictionary word
    (:data:`COMMON_WORD_FREQ`). Person references jieba misses are names too: 老/小/阿 + family name
    (``老周``, ``小王``) or family name + title or kinship word (:data:`PERSON_TITLES`: ``刘工``,
    ``王总``, ``张经理``, ``李姐``), on jieba word boundaries (``周总结``, ``小程序`` are none);
  - *decisions* and *todos*: whole sentences with a cue (:data:`DECISION_CUES`, :data:`TODO_CUES`,
    English and Chinese; an acknowledgement ``Agreed,`` / ``同意，`` and a recollection ``我记得``
    are no cue).
  Only **informative** content holds key facts. A sentence is informative when it holds a *hard*
  fact outside its speaker label (a number in digits, a date, a time, a capitalised name, a
  Chinese person name; ``Anna: ...`` says who speaks, not what) or a category label
  (``Decision:``, ``TODO:``, ``决定：``, ``待办：``). A decision or todo is a key fact only in an
  informative sentence that is not a question (``Ha, agreed.`` is conversation); spelled-out counts
  (``three``, ``两个``, ``第一``) and jieba places/organisations are key facts only in an informative
  sentence, the latter only when they end in a place or institution word (:data:`_PLACE_ENDS`:
  ``区``, ``市``, ``大学``, ``部`` ...). jieba's ``nz`` words and other place tags are too often common
  words (a thing, to go on stage) to be key facts; they are still names in summary statements.
  A fact that recurs in the source counts once (numbers, names by value; dates and times when they
  match; statements whose content words overlap by Jaccard ≥ 0.8).
* **Content words** are the search tokeniser's tokens (stemmed English, jieba words for Chinese,
  stop words dropped) of a text with its numbers, dates and times cut out.
* **Polarity**: a negation word (``not``, ``never``, ``n't`` ..., ``不``, ``没``, ``未`` ... as jieba
  words, or a word jieba does not know that starts with one: ``未设``) or a contrast (``rather
  than``, ``instead of``, ``而非``) negates the content words after it up to the end of its clause
  (its *scope*; in Chinese also up to ``的``). Two texts conflict when more than half of a scope of
  one occurs in the other and no negation there shares a word with it (``decided not to migrate X``
  against ``decided to migrate X``); a summary that leaves out a negated clause of its source does
  not conflict with it. Conflicting texts are never close.

Metrics
-------
* ``retention`` = source key facts present in the summary / source key facts (1.0 when the source
  has none). A number, date, time is present when the summary holds a matching one; a name when its
  text occurs in the summary (case-insensitive, whole words for Latin script); a decision or todo
  when some summary statement is close to it: the Dice coefficient of their content words is at
  least :data:`RETAIN_DICE`, or, for texts without Chinese characters, the MiniLM cosine is at least
  :data:`RETAIN_COSINE` (MiniLM does not read Chinese). ``missing_facts`` lists the absent ones as
  ``"<kind>: <text>"`` in source order.
* ``compression`` = source tokens / summary tokens, counted with the embedding model's tokenizer
  (``search.count_tokens``; CJK one token per character). 0.0 for an empty summary.
* ``readability`` = a 0..1 structure score, the weighted sum of :data:`READABILITY_WEIGHTS`:
  ``headings`` 0.15 (1 when the summary has a heading), ``list_items`` 0.25 (share of statement
  lines that are list items), ``one_fact_per_line`` 0.25 (mean over statement lines of
  1 / sentences on the line), ``sections`` 0.15 (1 when a heading names a seed category: events,
  decisions, lessons, todos, 事件, 决策, 教训, 待办 ...; 0.5 when there are two headings or more
  otherwise), ``line_length`` 0.20 (share of statement lines at most :data:`MAX_LINE_WIDTH` columns
  wide, a CJK character two columns).
* ``accuracy`` = summary statements supported by the source / summary statements (0.0 when there
  are none). A statement is supported by ONE source sentence that holds every number, date, time
  and name of the statement (matched as above; a name as text, an acronym also as the initials of
  consecutive words: ``PB`` = ``personal best``), does not conflict with it in polarity, and is
  close to it: at least :data:`SUPPORT_CONTAINMENT` of the statement's content words occur in the
  sentence, or (no Chinese characters) their MiniLM cosine is at least :data:`SUPPORT_COSINE`.
  A sentence that ties a word of the statement to another value never supports it (the *anchors*
  of a value are the nearest content words before and after it in its clause, measure words
  skipped): ``月薪45k`` is not backed by a sentence saying ``月薪42k`` without 45k, nor ``3名医生、
  2名护士`` by ``2名医生和3名护士`` (values swapped between words).
  A line that condenses two source sentences is supported by the two JOINTLY when each of its
  clauses (pieces between ``; , ( )``; a piece of only values and names joins the clause before it)
  is supported by one of them in the same way, with at least :data:`JOINT_CONTAINMENT` of the
  clause's content words, and neither of the two ties a word of the whole line to another value.
  ``unsupported_statements`` lists the others as written (without the list marker).

A summary passes when retention, compression, readability and accuracy reach their thresholds and
it has at most ``max_tokens`` tokens; ``failed`` names the metrics that did not.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from ..store import Policy

SummaryPolicy = type(Policy().summaries)  # the [summaries] section of the policy (store/policy.py)

# Closeness thresholds (see the module docstring).
RETAIN_DICE = 0.5
RETAIN_COSINE = 0.8
SUPPORT_CONTAINMENT = 0.6
SUPPORT_COSINE = 0.85
JOINT_CONTAINMENT = 0.75
MAX_LINE_WIDTH = 120
READABILITY_WEIGHTS = {"headings": 0.15, "list_items": 0.25, "one_fact_per_line": 0.25, "sections": 0.15,
                       "line_length": 0.20}

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WIDE = re.compile(r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]")

# Words that are capitalised only because they start a sentence or a label: function words,
# discourse words of a conversation, the roles of a chat transcript (user, assistant, system ...)
# and the seed's summary labels. Never names.
NOT_NAMES = frozenset("""
a an the i we you he she it they me us him her them my our your his its their this that these those
there here what which who whom whose when where why how if then so and but or nor yet also too as at
by for from in into of on onto to with without about after before during since until while because
although though unless whether do does did done is are was were be been being am have has had will
would shall should can could may might must let lets let's not no yes yeah yep nope ok okay sure hi
hello hey thanks thank please sorry great good fine cool right well oh ah hmm now today tomorrow
yesterday tonight just still already again maybe perhaps anyway actually basically all any each every
user assistant system human ai bot agent
some most many more much few other another both either neither such only very really
note notes update updates summary summaries decision decisions decided lesson lessons learned todo todos
to-do task tasks event events fact facts problem cause root avoidance avoid impact outcome result why
what priority due deadline owner action actions item items next step steps time place people who
""".split())
# jieba's dictionary tags some pleasantries as person names (谢谢 is "nr"); chatter is never a name.
NOT_NAMES_ZH = frozenset("谢谢 感谢 多谢 好的 收到 辛苦 再见 哈哈 嗯嗯 没问题 不好意思 对不起".split())
LABELS = ("what", "why", "impact", "when", "time", "where", "place", "people", "who", "outcome", "result",
          "problem", "cause", "root cause", "avoidance", "avoid", "how to avoid", "task", "priority", "due",
          "deadline", "owner", "decision", "lesson", "todo", "event", "note",
          "时间", "地点", "人物", "结果", "内容", "原因", "影响", "问题", "规避", "避免", "任务", "优先级", "截止",
          "截止时间", "负责人", "决策", "决定", "教训", "经验", "待办", "事件", "备注")
CATEGORY_WORDS = ("event", "decision", "lesson", "todo", "to-do", "task", "action item",
                  "事件", "决策", "决定", "教训", "经验", "待办", "任务")
DECISION_CUES = re.compile(
    r"\b(?:decided|decide|decides|decision|agreed(?!\s*(?:[^\w\s]|$))|agree to|agrees to|chose|chosen|choose to|opted|settled on|"
    r"approved|going with|go with|will use|switch(?:ed)? to|adopt(?:ed|s)?|selected)\b|"
    r"决定|决策|采用|选定|选用|确定|同意(?!\s*(?:[^\w\s]|$))|批准|改用|定为|拍板|敲定|决议", re.IGNORECASE)
TODO_CUES = re.compile(
    r"\b(?:todo|to-do|to do|need to|needs to|must|have to|has to|action item|follow[- ]up|deadline|due|"
    r"remember to|reminder|assigned to|next step)\b|"
    r"待办|需要|必须|务必|截止|跟进|(?<![我都还也])记得|下一步|负责|提醒", re.IGNORECASE)
# "X rather than Y" says "not Y": contrastive markers count as negation, so that a summary's
# "X, not Y" keeps the polarity of its source's "X rather than Y".
_NEGATION_EN = re.compile(r"\b(?:not|no|never|none|cannot|without|neither|nor|rather than|instead of)\b|n't\b",
                          re.IGNORECASE)
_NEGATION_ZH = frozenset("不 没 没有 未 别 无 非 勿 不要 不会 不能 不再 不用 不必 未能 无法 并非 从不 从未 绝不 "
                         "而不是 而非 不是 并不 而不".split())
_NAME_FLAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})
# jieba's dictionary tags many ordinary words as person names (nr: 太贵-like adjectives, kinship and
# role words), so a person name must start with one of the common family names (the usual top
# surnames of 百家姓 frequency lists), optionally after 老/小/阿 (老周, 小王).
COMMON_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢"
    "姜崔钟谭陆汪范金石廖贾夏韦付傅方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧")

# ------------------------------------------------------------------ numbers
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
_CN_NUM = "零〇一二两三四五六七八九十百千万亿"
_MEASURE = ("个", "位", "名", "人", "次", "天", "周", "年", "小时", "分钟", "秒", "条", "项", "份", "台", "家", "件",
            "元", "块", "倍", "岁", "层", "轮", "套", "张", "本", "篇", "种", "星期", "季度", "期", "版", "组", "批")
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


# ------------------------------------------------------------------ dates and times
_MONTHS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10,
           "nov": 11, "dec": 12}
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_MONTH_NAMES = frozenset("january february march april may june july august september sept october november "
                         "december".split())
_WEEKDAYS = {"monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6, "sunday": 7}
_CN_WEEKDAYS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}
_CN_SMALL = "[一二三四五六七八九十]{1,3}"
_DATE_PATTERNS = [
    ("ymd", re.compile(r"(?<![\d.])(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?![\d])")),
    ("cn_ymd", re.compile(rf"(\d{{4}}|[零〇一二三四五六七八九]{{4}})\s*年\s*(\d{{1,2}}|{_CN_SMALL})\s*月"
                          rf"(?:\s*(\d{{1,2}}|{_CN_SMALL})\s*[日号號])?")),
    ("cn_md", re.compile(rf"(?<![\d])(\d{{1,2}}|{_CN_SMALL})\s*月\s*(\d{{1,2}}|{_CN_SMALL})\s*[日号號]")),
    ("mdy", re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?")),
    ("dmy", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b\.?(?:,?\s+(\d{{4}})\b)?")),
    ("my", re.compile(rf"\b({_MONTH})\.?,?\s+(\d{{4}})\b")),
    ("slash", re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")),
    ("weekday", re.compile(r"\b(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b")),
    ("cn_weekday", re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")),
]
_PM_WORDS = ("下午", "傍晚", "晚上", "夜里", "夜间", "晚")
_AM_WORDS = ("凌晨", "早上", "早晨", "上午", "清晨", "早")
_TIME_PATTERNS = [
    ("hm", re.compile(r"(?<![\d:.])([01]?\d|2[0-3])[:：]([0-5]\d)(?:[:：][0-5]\d(?:\.\d+)?)?"
                      r"(?:\s*([AaPp])\.?[Mm]\.?(?![A-Za-z]))?(?![\d])")),
    ("h_ampm", re.compile(r"(?<![\d.:])(1[0-2]|0?[1-9])\s*([AaPp])\.?[Mm]\.?(?![A-Za-z])")),
    ("cn", re.compile(rf"(凌晨|早上|早晨|上午|清晨|中午|下午|傍晚|晚上|夜里|夜间)?\s*(\d{{1,2}}|{_CN_SMALL})\s*[点點時时]"
                      rf"(?:\s*(半|一刻|三刻|(\d{{1,2}}|{_CN_SMALL})\s*分?))?")),
]


def _small_int(text: str) -> int | None:
    return int(text) if text.isdigit() else _parse_cn_number(text)


def _valid(month: int | None, day: int | None) -> bool:
    return month is not None and 1 <= month <= 12 and (day is None or 1 <= day <= 31)


@dataclass(frozen=True)
class Fact:
    """One key fact: its kind (number, date, time, name, decision, todo), a match key and the text
    it was read from (``pos``: its place in the text, for source order). ``grade`` says how sure the
    reading is: ``hard`` (digits, dates, times, capitalised names, Chinese person names), ``soft``
    (spelled-out counts, jieba place and organisation tags: key facts only in an informative
    sentence) or ``support`` (jieba's other proper-noun tag: checked in statements, never a key fact)."""

    kind: str
    key: Any
    text: str
    pos: int = 0
    grade: str = "hard"

    def label(self) -> str:
        return f"{self.kind}: {self.text}"


def _dates_match(a: tuple, b: tuple) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "w" or a[0] == "raw":
        return a[1] == b[1]
    (_, y1, m1, d1), (_, y2, m2, d2) = a, b
    return m1 == m2 and d1 == d2 and (y1 is None or y2 is None or y1 == y2)


def _times_match(a: tuple, b: tuple) -> bool:
    (h1, m1, amb1), (h2, m2, amb2) = a, b
    if m1 != m2:
        return False
    return h1 == h2 or ((amb1 or amb2) and h1 % 12 == h2 % 12)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _read_dates_times(text: str) -> tuple[list[Fact], str]:
    """Dates and times of `text`, and the text with their spans blanked."""
    facts: list[Fact] = []
    for kind, pattern in _DATE_PATTERNS:
        for m in list(pattern.finditer(text)):
            key = None
            g = m.groups()
            if kind == "ymd":
                y, mo, d = int(g[0]), int(g[1]), int(g[2])
                key = ("d", y, mo, d) if _valid(mo, d) else None
            elif kind == "cn_ymd":
                y = _small_int(g[0]) if g[0].isdigit() else _parse_cn_number(g[0])
                mo, d = _small_int(g[1]), _small_int(g[2]) if g[2] else None
                key = ("d", y, mo, d) if _valid(mo, d) else None
            elif kind == "cn_md":
                mo, d = _small_int(g[0]), _small_int(g[1])
                key = ("d", None, mo, d) if _valid(mo, d) else None
            elif kind == "mdy":
                mo, d = _MONTHS[g[0][:3].lower()], int(g[1])
                key = ("d", int(g[2]) if g[2] else None, mo, d) if _valid(mo, d) else None
            elif kind == "dmy":
                mo, d = _MONTHS[g[1][:3].lower()], int(g[0])
                key = ("d", int(g[2]) if g[2] else None, mo, d) if _valid(mo, d) else None
            elif kind == "my":
                key = ("d", int(g[1]), _MONTHS[g[0][:3].lower()], None)
            elif kind == "slash":
                a, b, y = int(g[0]), int(g[1]), int(g[2])
                if a > 12 and _valid(b, a):
                    key = ("d", y, b, a)
                elif b > 12 and _valid(a, b):
                    key = ("d", y, a, b)
                elif _valid(a, b):
                    key = ("raw", m.group(0))  # 3/4/2026: March 4 or 3 April; only the same text matches
            elif kind == "weekday":
                key = ("w", _WEEKDAYS[g[0].lower()])
            elif kind == "cn_weekday":
                key = ("w", _CN_WEEKDAYS[g[0]])
            if key is not None:
                facts.append(Fact("date", key, m.group(0).strip(), m.start()))
                text = _blank(text, m.start(), m.end())
    for kind, pattern in _TIME_PATTERNS:
        for m in list(pattern.finditer(text)):
            g = m.groups()
            if kind == "hm":
                # hh:mm without am/pm reads as the 24-hour clock: 10:00 is not 22:00
                hour, minute, ampm, ambiguous = int(g[0]), int(g[1]), (g[2] or "").lower(), False
            elif kind == "h_ampm":
                hour, minute, ampm, ambiguous = int(g[0]), 0, g[1].lower(), False
            else:
                period, hour = g[0] or "", _small_int(g[1])
                if hour is None or hour > 24:
                    continue
                if g[2] == "半":
                    minute = 30
                elif g[2] == "一刻":
                    minute = 15
                elif g[2] == "三刻":
                    minute = 45
                else:
                    minute = _small_int(g[3]) if g[3] else 0
                if minute is None or minute > 59:
                    continue
                ampm = "p" if period in _PM_WORDS or (period == "中午" and hour < 6) else "a" if period else ""
                ambiguous = not period and 1 <= hour <= 12
                if not period and not g[2] and not g[1].isdigit() and not text[m.end():m.end() + 1] == "钟":
                    continue  # 一点 / 两点 alone mostly mean "a little" / "two points", not a time
            if ampm == "p" and hour < 12:
                hour += 12
            elif ampm == "a" and hour == 12:
                hour = 0
            facts.append(Fact("time", (hour % 24, minute, ambiguous), m.group(0).strip(), m.start()))
            text = _blank(text, m.start(), m.end())
    return facts, text


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
        facts.append(Fact("number", key, m.group(0).strip(), m.start()))
        text = _blank(text, m.start(), m.end())
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
        facts.append(Fact("number", str(value), numeral, m.start("num"), "soft"))
        text = _blank(text, m.start("num"), m.end("num"))
    return facts, text


# ------------------------------------------------------------------ names
_L = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"  # Latin letters, accented too (Inês)
_LATIN_WORD = re.compile(rf"[{_L}][{_L}0-9]*(?:['’][{_L}]+)?(?:-[{_L}0-9]+)*")
_OPENERS = " \t\"'“‘([{*_•·-–—>"


def _strip_possessive(word: str) -> str:
    """The word without a possessive or clitic: Alice's -> Alice, I'd -> I, We're -> We."""
    return re.sub(r"['’](?:s|d|ll|ve|m|re|t)$", "", word, flags=re.IGNORECASE)


def _is_marked(word: str) -> bool:
    """An acronym (TLS), a mixed-case word (PostgreSQL, iOS) or a word with a digit (Q3)."""
    return (sum(ch.isupper() for ch in word) >= 2) or any(ch.isdigit() for ch in word)


@dataclass
class _Context:
    """What the name rules know about all the texts: words capitalised mid-sentence, the source's
    lower-cased vocabulary and (for summary statements) the source's names."""

    capitalised_inside: set[str] = field(default_factory=set)
    speakers: set[str] = field(default_factory=set)
    speaker_labels: set[str] = field(default_factory=set)
    source_words: set[str] = field(default_factory=set)
    source_stems: set[str] = field(default_factory=set)
    source_names: set[str] = field(default_factory=set)


def _latin_words(text: str) -> list[tuple[str, int, int, bool]]:
    """(word, start, end, initial) for each Latin word; `initial` when only openers precede it in the
    sentence or it follows a colon."""
    words = []
    for m in _LATIN_WORD.finditer(text):
        # initial: no letter of any script since the sentence start or the last colon, so a
        # timestamp or a list number before the word does not make it mid-sentence
        segment = re.split(r"[:：.!?。！？]", text[: m.start()])[-1]
        initial = not re.search(r"[^\W\d_]", segment)
        words.append((_strip_possessive(m.group(0)), m.start(), m.end(), initial))
    return words


def _latin_names(text: str, ctx: _Context, summary: bool) -> list[Fact]:
    words = _latin_words(text)
    names: list[Fact] = []
    span: list[tuple[str, int]] = []

    def close() -> None:
        if span:
            names.append(Fact("name", " ".join(w for w, _ in span).casefold(), " ".join(w for w, _ in span),
                              span[0][1]))
            span.clear()

    previous_end = None
    for word, start, end, initial in words:
        lower = word.casefold()
        capital = word[0].isupper()
        if previous_end is not None and text[previous_end:start] != " ":
            close()
        previous_end = end
        if not capital or lower in NOT_NAMES or lower in _MONTH_NAMES or lower in _WEEKDAYS:
            close()
            continue
        if initial:
            speaker = lower in ctx.speakers
            name = (speaker or _is_marked(word) or lower in ctx.capitalised_inside
                    or (summary and (lower in ctx.source_names or _new_word(word, ctx))))
            if not name:
                close()
                continue
        span.append((word, start))
    close()
    return names


def _new_word(word: str, ctx: _Context) -> bool:
    """Whether no form of `word` occurs in the source (``Payments`` occurs as ``payment``,
    ``Passive`` as ``passively``: a source word with the same stem, or starting with it)."""
    from ..text import tokenize

    stems = set(tokenize(word))
    return bool(stems) and not stems & ctx.source_stems and not any(
        known.startswith(s) for s in stems if len(s) >= 4 for known in ctx.source_stems)


# Places and organisations jieba tags reliably end in an administrative, geographic or
# institutional word (浦东新区, 杭州市, 西湖, 北京大学, 法务部); jieba's dictionary tags many common
# words ns/nt too (a thing, to go on stage), so an ns/nt word without such an ending is checked in
# summary statements but is not a key fact.
_PLACE_ENDS = tuple("省市区县州镇乡村路街道巷山江河湖海岛港湾站城国府园寺桥楼"
                    "部局厅处署委院所校社行司团馆店") + ("大学", "学院", "医院", "公司", "集团", "银行", "中心", "协会")
# A person name that jieba's dictionary knows with a corpus frequency this high is a common word
# it mis-tags (段时间 "period", 白白 "in vain"); the names of people are rare in its corpus.
COMMON_WORD_FREQ = 100


def _surname_head(word: str) -> bool:
    head = word[1:] if word[0] in "老小阿" and len(word) >= 2 else word
    return head[:1] in COMMON_SURNAMES


# A personal pronoun is never part of a name: jieba tags 谢谢您 / 谢谢你们 (谢 is a family name) as a person.
_PRONOUN_ZH = re.compile("[您你我他她它们咱俺]")


def _jieba_names(text: str) -> list[Fact]:
    from ..text import jieba_segmenter

    jieba_segmenter()
    import jieba.posseg

    names, pos = [], 0
    pairs = jieba.posseg.lcut(text)
    for pair in pairs:
        at = text.find(pair.word, pos)
        pos = at + len(pair.word) if at >= 0 else pos
        if (pair.flag in _NAME_FLAGS and len(pair.word) >= 2 and _CJK.search(pair.word)
                and pair.word not in NOT_NAMES_ZH and not _PRONOUN_ZH.search(pair.word)
                and (not pair.flag.startswith("nr") or pair.flag == "nrt" or _surname_head(pair.word))):
            # a person (nr with a family name) is a name; jieba's dictionary also tags common words
            # as places and organisations (ns, nt) and as other proper nouns (nz) far more often
            grade = ("support" if pair.flag == "nz" or (pair.flag in ("ns", "nt") and not pair.word.endswith(_PLACE_ENDS))
                     or (pair.flag.startswith("nr") and jieba.dt.FREQ.get(pair.word, 0) >= COMMON_WORD_FREQ)
                     else "hard" if pair.flag.startswith("nr") else "soft")
            names.append(Fact("name", pair.word, pair.word, max(at, 0), grade))
    return _person_references(text, pairs, names)


# How Chinese refers to a person by family name: 老/小/阿 before it (老周, 小王) or a title or kinship
# word after it (刘工, 王总, 张经理, 李老师, 陈医生, 王师傅, 李姐). A general resource, like the surnames.
PERSON_TITLES = ("工程师", "总经理", "总监", "经理", "老师", "医生", "大夫", "师傅", "主任", "老板", "教授", "律师",
                 "博士", "院长", "局长", "处长", "科长", "部长", "所长", "校长", "书记", "主管", "队长", "班长",
                 "同学", "护士", "阿姨", "先生", "女士", "小姐", "工", "总", "董", "姐", "哥", "叔", "姨", "婶")
_PERSON_REF = re.compile(rf"[老小阿][{''.join(sorted(COMMON_SURNAMES))}]|[{''.join(sorted(COMMON_SURNAMES))}]"
                         rf"(?:{'|'.join(sorted(PERSON_TITLES, key=len, reverse=True))})")


def _person_references(text: str, pairs: list, names: list[Fact]) -> list[Fact]:
    """`names` (jieba's) with the person references its tags miss or grade low (老周 is tagged a time
    word, 老王 is frequent): :data:`_PERSON_REF` spans that begin and end on jieba word boundaries
    (周总结 = 周 + 总结 and 小程序 = 小 + 程序 are no reference) and, when the span is one frequent
    dictionary word, jieba tags it a person (小于 "less than" is none). They are hard facts."""
    import jieba

    bounds, pos = set(), 0
    tokens: dict[int, Any] = {}
    for pair in pairs:
        tokens[pos] = pair
        bounds.add(pos)
        pos += len(pair.word)
    bounds.add(pos)
    refs = []
    for m in _PERSON_REF.finditer(text):
        start, end = m.span()
        if start not in bounds or end not in bounds:
            continue
        token = tokens.get(start)
        if (token is not None and token.word == m.group(0) and not token.flag.startswith("nr")
                and jieba.dt.FREQ.get(m.group(0), 0) >= COMMON_WORD_FREQ):
            continue
        refs.append(Fact("name", m.group(0), m.group(0), start, "hard"))
    spans = {(f.pos, f.text) for f in refs}
    return [f for f in names if (f.pos, f.text) not in spans] + refs


# ------------------------------------------------------------------ text units
_SENTENCE_END = re.compile(r"(?<=[。！？!?])\s*|(?<=[.!?][\"'”’)\]])\s+|(?<=[.!?])\s+(?=\S)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_LABEL_RE = re.compile(r"(?:^|(?<=[;；,，(（]))\s*(?:" + "|".join(re.escape(label) for label in
                                                          sorted(LABELS, key=len, reverse=True))
                       + r")\s*[:：]\s*", re.IGNORECASE)


# A full stop after these (and after a single capital, an initial) does not end a sentence.
ABBREVIATIONS = frozenset("mr mrs ms dr prof st jr sr mt no vs etc inc ltd co corp dept approx e.g i.e a.m p.m".split())


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`: pieces between line breaks and sentence ends (see module docstring);
    a full stop after a title or common abbreviation (Dr., Mr., St., e.g.) or an initial is no end."""
    out = []
    for line in text.splitlines():
        pieces: list[str] = []
        for piece in _SENTENCE_END.split(line.strip()):
            if not piece or not piece.strip():
                continue
            last = pieces[-1].rstrip() if pieces else ""
            word = last.rsplit(None, 1)[-1].lower().rstrip(".") if last.endswith(".") else ""
            if word and (word in ABBREVIATIONS or (len(word) == 1 and word.isalpha())):
                pieces[-1] = f"{last} {piece.strip()}"
            else:
                pieces.append(piece.strip())
        out += pieces
    return out


def _clean_markdown(text: str) -> str:
    text = re.sub(r"(\*\*|__|`)", "", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)([^*]+)(?<!\s)\*(?![\w*])", r"\1", text)
    return text.strip()


@dataclass
class _Statement:
    shown: str            # as written, without the list marker
    text: str             # markup and labels removed
    list_item: bool
    line: int


def summary_statements(markdown: str) -> tuple[list[_Statement], list[str], list[tuple[int, bool, int]]]:
    """Statements, headings and per-line (line number, is list item, sentences on the line)."""
    statements: list[_Statement] = []
    headings: list[str] = []
    lines: list[tuple[int, bool, int]] = []
    for number, raw in enumerate(markdown.splitlines()):
        line = raw.strip()
        if not line or re.fullmatch(r"[-*_=]{3,}|\|?[\s:|-]+\|?", line):
            continue
        if _HEADING.match(line):
            headings.append(line.lstrip("#").strip())
            continue
        cleaned = _clean_markdown(line)
        if re.fullmatch(r"\*\*[^*]+\*\*[:：]?", line) or (cleaned.endswith((":", "：")) and len(cleaned) <= 40
                                                           and not _LIST_ITEM.match(line)):
            headings.append(cleaned.rstrip(":："))
            continue
        marker = _LIST_ITEM.match(line)
        if marker:
            shown = line[marker.end():].strip()
            if shown:
                statements.append(_Statement(shown, _LABEL_RE.sub(" ", _clean_markdown(shown)).strip(), True, number))
                lines.append((number, True, max(1, len(split_sentences(_clean_markdown(shown))))))
            continue
        pieces = split_sentences(line)
        for piece in pieces:
            statements.append(_Statement(piece, _LABEL_RE.sub(" ", _clean_markdown(piece)).strip(), False, number))
        lines.append((number, False, max(1, len(pieces))))
    return statements, headings, lines


# ------------------------------------------------------------------ analysed text
@dataclass
class _Analysed:
    text: str
    facts: list[Fact]
    words: frozenset[str]
    scopes: tuple[frozenset[str], ...]   # content words each negation applies to (see _negation_scopes)
    cjk: bool
    informative: bool = True             # holds a hard fact outside its speaker label, or a category label
    question: bool = False
    anchors: tuple[tuple[str, str, Fact], ...] = ()   # (side, word, value): see _value_anchors

    def of(self, kind: str) -> list[Fact]:
        return [f for f in self.facts if f.kind == kind]

    @property
    def negated(self) -> bool:
        return bool(self.scopes)


_CLAUSE_END = re.compile(r"[,;:.!?()\[\]{}，；：。！？（）、—–]")
_NEGATION_CHARS = "不没未无非别"


def _content_words(text: str) -> frozenset[str]:
    from ..text import tokenize

    return frozenset(w for w in tokenize(text) if not any(ch.isdigit() for ch in w))


def _negation_scopes(text: str) -> tuple[frozenset[str], ...]:
    """The content words each negation of `text` applies to: from the negation word to the end of
    its clause (``didn't get the change orders in writing``, ``rather than granite``). A negation
    with no content word after it (``... or not?``) is left out. Chinese negations are jieba words
    (:data:`_NEGATION_ZH`) or words jieba's dictionary does not know that start with a negation
    character (``未设`` = 未 + 设)."""
    scopes = []
    for m in _NEGATION_EN.finditer(text):
        end = _CLAUSE_END.search(text, m.end())
        scope = _content_words(text[m.end(): end.start() if end else len(text)])
        if scope:
            scopes.append(scope)
    if _CJK.search(text):
        from ..text import jieba_segmenter

        jieba_segmenter()
        import jieba

        tokens = jieba.lcut(text)
        for i, token in enumerate(tokens):
            unknown = len(token) == 2 and token[0] in _NEGATION_CHARS and not jieba.dt.FREQ.get(token)
            if token not in _NEGATION_ZH and not unknown:
                continue
            rest = []
            for following in tokens[i + 1:]:
                if _CLAUSE_END.fullmatch(following) or following == "的":  # 不要的旧沙发: 的 ends an attribute
                    break
                rest.append(following)
            scope = _content_words(("".join(rest)) + (token[1:] if unknown else ""))
            if scope:
                scopes.append(scope)
    return tuple(scopes)


def _polarity_conflict(a: _Analysed, b: _Analysed) -> bool:
    """Whether `a` and `b` disagree in polarity: one negates what the other states, i.e. more than
    half of a negation's scope words occur in the other text and no negation there shares one of
    them (``decided not to migrate X`` against ``decided to migrate X``). A summary that drops a
    negated clause of its source (``..., without telling her``) is no conflict."""
    for x, y in ((a, b), (b, a)):
        for scope in x.scopes:
            if 2 * len(scope & y.words) > len(scope) and not any(scope & other for other in y.scopes):
                return True
    return False


# A sentence labelled as a decision or todo by its author ("Decision:", "TODO:", "待办：").
_CATEGORY_LABEL = re.compile(r"(?:^|[\s:：])(?:decision|decided|todo|to-do|action item|决定|决策|待办)\s*[:：]",
                             re.IGNORECASE)


def _analyse(text: str, ctx: _Context, summary: bool) -> _Analysed:
    normalised = unicodedata.normalize("NFKC", text)
    dated, rest = _read_dates_times(normalised)
    numbers, rest = _read_numbers(rest)
    # letters glued to a digit (4S店, 5G, 3D) are a code or a unit with that number, not a name
    names = [f for f in _latin_names(rest, ctx, summary) if not (f.pos and normalised[f.pos - 1].isdigit())]
    if _CJK.search(rest):
        names += _jieba_names(rest)
    facts = dated + numbers + names
    # informative: a hard fact outside the speaker label ("Anna: ..." names who speaks, not what
    # is said), or a category label; a sentence without one is conversation, not content
    speaker = _SPEAKER.match(normalised)
    label_end = speaker.end() if speaker and speaker.group(1).casefold() in ctx.speaker_labels else 0
    informative = (any(f.grade == "hard" and (f.kind != "name" or f.pos >= label_end) for f in facts)
                   or bool(_CATEGORY_LABEL.search(normalised)))
    question = normalised.rstrip().endswith(("?", "？"))
    return _Analysed(text, facts, _content_words(rest), _negation_scopes(rest), bool(_CJK.search(text)),
                     informative, question, _value_anchors(normalised, dated + numbers))


def _value_anchors(text: str, values: list[Fact]) -> tuple[tuple[str, str, Fact], ...]:
    """What each number, date and time of `text` qualifies: the nearest content word before it and
    the nearest after it (``("before", "月薪", 42k)``, ``("after", "医生", 2)``), looked for only
    within its clause and not past a neighbouring value; measure words (名, 天, 元 ...) are skipped,
    they belong to the value. Two texts that tie one word to different values disagree
    (:func:`_value_conflict`)."""
    spans = sorted((f.pos, f.pos + len(f.text), f) for f in values)
    anchors = []
    for i, (start, end, fact) in enumerate(spans):
        left = max([0] + [m.end() for m in _CLAUSE_END.finditer(text, 0, start)] + [e for _, e, _ in spans[:i]
                                                                                     if e <= start])
        after_end = _CLAUSE_END.search(text, end)
        right = min([after_end.start() if after_end else len(text)] + [b for b, _, _ in spans[i + 1:] if b >= end])
        before = _anchor_words(text[left:start])
        after = _anchor_words(text[end:right])
        if before:
            anchors.append(("before", before[-1], fact))
        if after:
            anchors.append(("after", after[0], fact))
    return tuple(anchors)


def _anchor_words(segment: str) -> list[str]:
    if not segment.strip():
        return []
    from ..text import jieba_segmenter

    jieba_segmenter()
    import jieba

    words = []
    for token in jieba.lcut(segment):
        if token in _MEASURE:
            continue
        words += sorted(_content_words(token))
    return words


def _same_value(a: Fact, b: Fact) -> bool:
    if a.kind != b.kind:
        return False
    if a.kind == "date":
        return _dates_match(a.key, b.key)
    if a.kind == "time":
        return _times_match(a.key, b.key)
    return a.key == b.key


def _value_conflict(statement: _Analysed, sentence: _Analysed) -> bool:
    """Whether `sentence` ties a word of `statement` to another value and so tells a different
    story: the statement says ``月薪45k`` where the sentence says ``月薪42k`` and has no 45k at all,
    or the two swap values between words (``3名医生、2名护士`` against ``2名医生和3名护士``: the
    sentence ties the statement's value to a word the statement ties to another value). A sentence
    that holds the statement's value next to other words (a paraphrase: ``alerts only at 95%``
    against ``alerts only fired at 95%``) is no conflict."""
    mine = {(side, word): [v for s, w, v in statement.anchors if (s, w) == (side, word)]
            for side, word, _ in statement.anchors}
    for side, word, value in statement.anchors:
        theirs = [v for s, w, v in sentence.anchors if s == side and w == word and v.kind == value.kind]
        if not theirs or any(_same_value(value, v) for v in theirs):
            continue
        held = [(s, w) for s, w, v in sentence.anchors if _same_value(value, v)]
        if not any(_same_value(value, f) for f in sentence.facts):
            return True   # the sentence has another value here and not this one
        if any(key in mine and not any(_same_value(value, v) for v in mine[key]) for key in held):
            return True   # the values are swapped between words
    return False


_SPEAKER = re.compile(r"^[\W\d_]*?([^\W\d_][\w'’.-]*(?:\s+[^\W\d_][\w'’.-]*){0,2})\s*[:：]")


def _build_context(source_sentences: list[str], statements: list[str]) -> _Context:
    ctx = _Context()
    labels: dict[str, int] = {}
    for text in source_sentences:
        m = _SPEAKER.match(text)
        if m:
            labels[m.group(1)] = labels.get(m.group(1), 0) + 1
    # a speaker labels two lines or more of the source ("Alice: ..."); a one-off "Results:" is not one
    ctx.speakers = {w.casefold() for label, n in labels.items() if n >= 2 for w in label.split()}
    ctx.speaker_labels = {label.casefold() for label, n in labels.items() if n >= 2}
    for text in source_sentences + statements:
        for word, _, _, initial in _latin_words(unicodedata.normalize("NFKC", text)):
            if not initial and word[:1].isupper():
                ctx.capitalised_inside.add(word.casefold())
    for text in source_sentences:
        for word, _, _, _ in _latin_words(unicodedata.normalize("NFKC", text)):
            if word.islower():
                ctx.source_words.add(word)
    from ..text import tokenize

    ctx.source_stems = {w for text in source_sentences for w in tokenize(text)}
    return ctx


def extract_facts(texts: list[str]) -> list[Fact]:
    """The key facts of `texts` (numbers, dates, times, names, decisions, todos), each once, in text
    order; see the module docstring for the rules."""
    sentences = [s for t in texts for s in split_sentences(t)]
    ctx = _build_context(sentences, [])
    return _unique_facts([(i, _analyse(s, ctx, False)) for i, s in enumerate(sentences)])


def _statement_kind(text: str) -> str | None:
    if DECISION_CUES.search(text):
        return "decision"
    if TODO_CUES.search(text):
        return "todo"
    return None


def _unique_facts(analysed: list[tuple[int, _Analysed]]) -> list[Fact]:
    facts: list[tuple[tuple[int, int], Fact]] = []
    seen_numbers: set[str] = set()
    seen_names: set[str] = set()
    dates: list[tuple] = []
    times: list[tuple] = []
    statements: list[tuple[str, frozenset[str]]] = []
    for index, a in analysed:
        kind = _statement_kind(a.text) if a.informative and not a.question else None
        if kind and a.words and not any(k == kind and _jaccard(a.words, w) >= 0.8 for k, w in statements):
            statements.append((kind, a.words))
            facts.append(((index, -1), Fact(kind, a.words, a.text, 0)))
        for fact in a.facts:
            if fact.grade == "support" or (fact.grade == "soft" and not a.informative):
                continue
            if fact.kind == "number":
                if fact.key in seen_numbers:
                    continue
                seen_numbers.add(fact.key)
            elif fact.kind == "name":
                if fact.key in seen_names:
                    continue
                seen_names.add(fact.key)
            elif fact.kind == "date":
                if any(_dates_match(fact.key, d) for d in dates):
                    continue
                dates.append(fact.key)
            elif fact.kind == "time":
                if any(_times_match(fact.key, t) for t in times):
                    continue
                times.append(fact.key)
            facts.append(((index, fact.pos), fact))
    return [f for _, f in sorted(facts, key=lambda item: item[0])]


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def _dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 1.0


def _containment(part: frozenset[str], whole: frozenset[str]) -> float:
    return len(part & whole) / len(part) if part else 1.0


def _name_in(name: str, text: str) -> bool:
    if _CJK.search(name):
        return name in text
    return re.search(rf"(?<![{_L}0-9]){re.escape(name)}(?![{_L}0-9])", text, re.IGNORECASE) is not None


# ------------------------------------------------------------------ the score
@dataclass(frozen=True)
class SummaryScore:
    """The four metrics of a summary against its source (see the module docstring), whether it
    passed the policy's thresholds, and what it lost or made up."""

    retention: float
    compression: float
    readability: float
    accuracy: float
    passed: bool
    failed: list[str]
    thresholds: dict[str, float]
    missing_facts: list[str]
    unsupported_statements: list[str]
    source_tokens: int
    summary_tokens: int

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `memory-lake summary-score --json`."""
        return {"retention": self.retention, "compression": self.compression, "readability": self.readability,
                "accuracy": self.accuracy, "passed": self.passed, "thresholds": dict(self.thresholds),
                "missing_facts": list(self.missing_facts), "unsupported_statements": list(self.unsupported_statements),
                "source_tokens": self.source_tokens, "summary_tokens": self.summary_tokens}


_VECTOR_CACHE: dict[tuple[str, str], Any] = {}
_VECTOR_CACHE_MAX = 50_000


class _Cosine:
    """MiniLM cosines between texts without Chinese characters (MiniLM does not read Chinese).
    Only the pairs that word overlap could not settle are asked for (`want`), then encoded in one
    batch (`compute`); vectors are kept per process, so a source scored against many summaries is
    encoded once. None for a pair it cannot judge (Chinese text, no model)."""

    def __init__(self, model_name: str | None):
        self.model_name = model_name if model_name and model_name.lower() != "none" else None
        self.wanted: set[str] = set()

    def want(self, *texts: str) -> None:
        if self.model_name:
            self.wanted.update(t for t in texts if t and not _CJK.search(t))

    def compute(self) -> None:
        todo = sorted(t for t in self.wanted if (self.model_name, t) not in _VECTOR_CACHE)
        if not todo:
            return
        from ..text import ModelUnavailable, encode, load_model

        try:
            model = load_model(self.model_name)
        except ModelUnavailable:
            self.model_name = None
            return
        vectors, _ = encode(model, todo, batch_size=64)
        if len(_VECTOR_CACHE) + len(todo) > _VECTOR_CACHE_MAX:
            _VECTOR_CACHE.clear()
        for text, vector in zip(todo, vectors.to_numpy()):
            _VECTOR_CACHE[(self.model_name, text)] = vector

    def __call__(self, a: str, b: str) -> float | None:
        va, vb = _VECTOR_CACHE.get((self.model_name, a)), _VECTOR_CACHE.get((self.model_name, b))
        if self.model_name is None or va is None or vb is None:
            return None
        return float(va @ vb)


def _readability(statements: list[_Statement], headings: list[str], lines: list[tuple[int, bool, int]],
                 markdown: str) -> float:
    if not lines:
        return 0.0
    raw_lines = markdown.splitlines()
    lowered = [h.casefold() for h in headings]
    parts = {
        "headings": 1.0 if headings else 0.0,
        "list_items": sum(1 for _, is_item, _ in lines if is_item) / len(lines),
        "one_fact_per_line": sum(1 / n for _, _, n in lines) / len(lines),
        "sections": 1.0 if any(word in h for h in lowered for word in CATEGORY_WORDS)
        else 0.5 if len(headings) >= 2 else 0.0,
        "line_length": sum(1 for number, _, _ in lines if _width(raw_lines[number].strip()) <= MAX_LINE_WIDTH)
        / len(lines),
    }
    return sum(READABILITY_WEIGHTS[name] * value for name, value in parts.items())


def _width(text: str) -> int:
    return len(text) + len(_WIDE.findall(text))


def evaluate_summary(source_texts: list[str], summary_markdown: str, policy: SummaryPolicy | None = None, *,
                     model: str | None = None) -> SummaryScore:
    """Score `summary_markdown` against `source_texts` on retention, compression, readability and
    accuracy (each defined in this module's docstring) and gate it with `policy`'s thresholds
    (default ``Policy().summaries``; also ``max_tokens``). `model` is the embedding model for the
    English cosines (default the search policy's model; ``"none"`` uses word overlap only)."""
    from ..text import count_tokens, count_tokens_many

    policy = policy or Policy().summaries
    model = model if model is not None else Policy().search.model
    texts = [t for t in source_texts if isinstance(t, str)]
    summary_markdown = summary_markdown or ""

    sentences = [s for t in texts for s in split_sentences(t)]
    statements, headings, lines = summary_statements(summary_markdown)
    ctx = _build_context(sentences, [s.text for s in statements])
    source = [_analyse(s, ctx, False) for s in sentences]
    source_facts = _unique_facts(list(enumerate(source)))
    by_text = {a.text: a for a in source}
    ctx.source_names = {f.key for f in source_facts if f.kind == "name"}
    stated = [_analyse(s.text, ctx, True) for s in statements]
    cosine = _Cosine(model)

    # Word overlap first; the pairs it cannot settle go to MiniLM in one batch, then are decided.
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
    support = [_support_candidates(a, source) for a in stated]
    support = [(True, []) if not supported and _joint_support(s.text, source, ctx) else (supported, candidates)
               for s, (supported, candidates) in zip(statements, support)]
    for a, (supported, candidates) in zip(stated, support):
        if not supported and candidates:
            cosine.want(a.text, *(c.text for c in candidates))
    cosine.compute()

    # retention
    for n, candidates in undecided.items():
        present[n] = any((cosine(source_facts[n].text, a.text) or 0.0) >= RETAIN_COSINE for a in candidates)
    missing = [fact.label() for fact, found in zip(source_facts, present) if not found]
    retention = 1.0 if not source_facts else (len(source_facts) - len(missing)) / len(source_facts)

    # accuracy
    unsupported = [s.shown for s, a, (supported, candidates) in zip(statements, stated, support)
                   if not supported and not any((cosine(a.text, c.text) or 0.0) >= SUPPORT_COSINE
                                                for c in candidates)]
    accuracy = (len(statements) - len(unsupported)) / len(statements) if statements else 0.0

    source_tokens = sum(count_tokens_many(texts)) if texts else 0
    summary_tokens = count_tokens(summary_markdown) if summary_markdown.strip() else 0
    compression = source_tokens / summary_tokens if summary_tokens else 0.0
    readability = _readability(statements, headings, lines, summary_markdown)

    thresholds = {"retention": policy.min_retention, "compression": policy.min_compression,
                  "readability": policy.min_readability, "accuracy": policy.min_accuracy,
                  "max_tokens": policy.max_tokens}
    scores = {"retention": round(retention, 4), "compression": round(compression, 4),
              "readability": round(readability, 4), "accuracy": round(accuracy, 4)}
    failed = [name for name, value in scores.items() if value < thresholds[name]]
    if summary_tokens > policy.max_tokens:
        failed.append("max_tokens")
    return SummaryScore(**scores, passed=not failed, failed=failed, thresholds=thresholds, missing_facts=missing,
                        unsupported_statements=unsupported, source_tokens=source_tokens,
                        summary_tokens=summary_tokens)


def _atomic_present(fact: Fact, summary_facts: list[Fact], summary_plain: str) -> bool:
    """Whether a number, date, time or name of the source is in the summary."""
    if fact.kind == "name":
        return _name_in(fact.text, summary_plain)
    match = {"number": lambda a, b: a == b, "date": _dates_match, "time": _times_match}[fact.kind]
    return any(f.kind == fact.kind and match(f.key, fact.key) for f in summary_facts)


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
        return any(f.kind == "number" and f.key == fact.key for f in sentence.facts)
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
