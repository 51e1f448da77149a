"""Dates and times (package docstring, *dates* and *times*): how they are read and when two of them
match."""

from __future__ import annotations

import re

from .fact import Fact, _blank
from .numerals import _parse_cn_number

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
