"""Which candidates hold PII, checked in Python on the unique candidates only.

Each classifier takes one match of its pattern (``patterns``) and returns the values it holds as
``_Hit``s, normalised for hashing: e-mail addresses (spelt-out ones too), IPv4 and IPv6 addresses
(versions, times and MAC addresses are not), AWS secret access keys (40 mixed base64 characters),
and digit runs, split on their separators into resident IDs (ISO 7064 MOD 11-2 check character
and a real birth date), payment cards (Luhn, card prefixes and groupings), and phones (Chinese
mobiles, international numbers, US and Chinese landlines with their area code).
"""

from __future__ import annotations

import ipaddress
import re
from datetime import date

from .patterns import _JSON_ESCAPE, _SPELT_AT_WORD, _SPELT_DOT_WORD
from .placeholders import _Hit

_MAX_GROUPS_PER_VALUE = 8  # more groups than any phone/card/ID spelling has
_GROUP = re.compile(r"[^ ()-]+")
_CN_MOBILE = re.compile(r"1[3-9]\d{9}")
_CN_COUNTRY_CODE = "86"
_INTL_DIGITS = range(8, 18)  # country code (1-3) + 7..14 digits
_MAX_COUNTRY_CODE_DIGITS = 3
# Landlines with their area code: US/NANP 3-3-4 (area and exchange start with 2-9, an optional
# leading 1), China 0 + a 2-digit (10, 2x) or 3-digit area code + a 7-8 digit local number.
_US_GROUPINGS = ((3, 3, 4), (1, 3, 3, 4))
_US_NUMBER = re.compile(r"1?([2-9]\d{2}[2-9]\d{6})")
_CN_LANDLINE = re.compile(r"0(?:10|2\d|[3-9]\d{2})[2-9]\d{6,7}")
_CN_AREA = re.compile(r"0(?:10|2\d|[3-9]\d{2})")
_CARD_DIGITS = range(13, 20)
_CARD_GROUPINGS_AMEX = ((4, 6, 5), (4, 6, 4))
_ID_GROUPING = (6, 8, 4)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK_CHARS = "10X98765432"
_ID_BIRTH_YEARS = range(1900, 2100)
_JSON_ESCAPE_PREFIX = re.compile(_JSON_ESCAPE)
_IPV6_MIN_GROUPS = 3  # "d::" of "std::vector" and "::1" are no one's address
_AWS_SECRET_CHARS = 40  # an AWS secret access key, exactly (patterns._AWS_SECRET_RUN)


def _email_hits(candidate: str) -> list[_Hit]:
    start = _json_escape_length(candidate)
    address = candidate[start:].replace("＠", "@")
    if "@" not in address:  # spelt out: "alice at example dot com"
        address = _SPELT_DOT_WORD.sub(".", _SPELT_AT_WORD.sub("@", address, count=1))
    return [_Hit(start, len(candidate), "EMAIL", address.lower())]


def _ip_hits(candidate: str) -> list[_Hit]:
    """An IPv4 or IPv6 address, normalised (IPv6 compressed); versions and times are not."""
    start = _json_escape_length(candidate)
    text = candidate[start:]
    if "." in text:
        parts = text.split(".")
        if (len(parts) != 4 or not text[0].isdigit() or all(len(p) == 1 for p in parts)
                or any(len(p) > 1 and p[0] == "0" for p in parts) or any(int(p) > 255 for p in parts)):
            return []
        return [_Hit(start, len(candidate), "IP", text)]
    if sum(1 for group in text.split(":") if group) < _IPV6_MIN_GROUPS:
        return []
    if "::" not in text and text.count(":") != 7:
        return []  # times (10:30:00) and MAC addresses (00:1a:2b:3c:4d:5e)
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        return []
    return [_Hit(start, len(candidate), "IP", address.compressed)]


def _aws_secret_hits(candidate: str) -> list[_Hit]:
    start = _json_escape_length(candidate)
    text = candidate[start:]
    if (len(text) != _AWS_SECRET_CHARS or text[0] == "/" or text[-1] == "/" or "//" in text
            or not any(c.isupper() for c in text) or not any(c.islower() for c in text)
            or not any(c.isdigit() for c in text)):
        return []
    return [_Hit(start, len(candidate), "SECRET", "")]


def _json_escape_length(candidate: str) -> int:
    """Length of the JSON escape (\\n, \\u001f) that ``candidate`` starts with, kept as text."""
    escape = _JSON_ESCAPE_PREFIX.match(candidate)
    return escape.end() if escape else 0


def _digit_run_hits(run: str) -> list[_Hit]:
    """PII values inside one digit run: the longest valid span from the left, repeatedly."""
    skip = _json_escape_length(run)
    if skip:
        return [_Hit(h.start + skip, h.end + skip, h.kind, h.normalised) for h in _digit_run_hits(run[skip:])]
    if run.isdecimal():  # most runs are bare digits: one group, nothing to split
        classified = _classify_bare_digits(_ascii_digits(run))
        return [] if classified is None else [_Hit(0, len(run), *classified)]
    has_plus = run.startswith("+")
    groups = [(m.start(), m.end()) for m in _GROUP.finditer(run, 1 if has_plus else 0)]
    found: list[_Hit] = []
    i = 0
    while i < len(groups):
        last = min(len(groups), i + _MAX_GROUPS_PER_VALUE) - 1
        for j in range(last, i - 1, -1):
            parts = [run[start:end] for start, end in groups[i:j + 1]]
            classified = _classify_groups(parts, international=has_plus and i == 0)
            if classified is not None:
                kind, normalised, keeps_trailing_x = classified
                start = 0 if has_plus and i == 0 else groups[i][0]
                if start and run[start - 1] == "(":
                    start -= 1  # "(415) 555-0132": the parenthesis goes with the area code
                end = groups[j][1] - (0 if keeps_trailing_x or not _ends_with_x(parts[-1]) else 1)
                found.append(_Hit(start, end, kind, normalised))
                i = j + 1
                break
        else:
            i += 1
    return found


def _classify_groups(parts: list[str], *, international: bool) -> tuple[str, str, bool] | None:
    """(kind, normalised, keeps_trailing_x) for groups that form one PII value, else None."""
    if any("." in part for part in parts):
        return None  # a decimal number, never PII
    raw = "".join(parts)
    sizes = tuple(len(part) for part in parts)
    if not international and _is_resident_id(raw) and sizes in ((18,), _ID_GROUPING):
        return "ID_CN", _ascii_digits(raw).upper(), True
    if _ends_with_x(raw):
        raw = raw[:-1]  # an X that is not an ID check character stays in the text
        sizes = sizes[:-1] + (sizes[-1] - 1,)
        if sizes[-1] == 0:
            return None
    if not raw.isdecimal():
        return None
    digits = _ascii_digits(raw)
    if international:
        return _classify_international(digits, sizes)
    if _is_card(digits) and _is_card_grouping(sizes):
        return "CARD", digits, False
    national = _cn_mobile_national(digits, sizes)
    if national is not None:
        return "PHONE", national, False
    landline = _landline(digits, sizes)
    if landline is not None:
        return "PHONE", landline, False
    return None


def _landline(digits: str, sizes: tuple[int, ...]) -> str | None:
    """A US or Chinese landline written with its area code, normalised as the international
    spelling is ("+14155550132", "+861062345678"), so both hash alike."""
    us = _US_NUMBER.fullmatch(digits)
    if us and sizes in _US_GROUPINGS and (len(sizes) == 3 or digits[0] == "1"):
        return "+1" + us.group(1)
    if _CN_LANDLINE.fullmatch(digits):
        area = _CN_AREA.match(digits).group()
        # "010-62345678", "0755 1234 5678", or bare: the area code is its own group
        if len(sizes) == 1 or (sizes[0] == len(area) and min(sizes[1:]) >= 3 and len(sizes) <= 3):
            return "+86" + digits[1:]
    return None


def _classify_bare_digits(digits: str) -> tuple[str, str] | None:
    """(kind, normalised) for one unseparated ASCII digit run, in the order ID, card, phone."""
    length = len(digits)
    if length == 18 and _is_resident_id(digits):
        return "ID_CN", digits
    if _is_card(digits):
        return "CARD", digits
    if length == 13 and digits.startswith(_CN_COUNTRY_CODE):
        digits = digits[2:]
    if len(digits) == 11 and _CN_MOBILE.fullmatch(digits):
        return "PHONE", digits
    if digits[0] == "0" and _CN_LANDLINE.fullmatch(digits):
        return "PHONE", "+86" + digits[1:]
    return None


def _classify_international(digits: str, sizes: tuple[int, ...]) -> tuple[str, str, bool] | None:
    if digits.startswith(_CN_COUNTRY_CODE) and _CN_MOBILE.fullmatch(digits[2:]):
        return "PHONE", digits[2:], False
    # A written-out number starts with its 1-3 digit country code ("+44 20 ..."); "+1500 2000"
    # is arithmetic, not a phone.
    if len(sizes) > 1 and sizes[0] > _MAX_COUNTRY_CODE_DIGITS:
        return None
    if len(digits) in _INTL_DIGITS and digits[0] != "0":
        return "PHONE", "+" + digits, False
    return None


def _cn_mobile_national(digits: str, sizes: tuple[int, ...]) -> str | None:
    """The 11 national digits of a Chinese mobile spelt with an optional 86 prefix."""
    if len(digits) == 13 and digits.startswith(_CN_COUNTRY_CODE) and sizes[0] in (2, 13):
        digits, sizes = digits[2:], (sizes[1:] if sizes[0] == 2 else (11,))
    if not _CN_MOBILE.fullmatch(digits):
        return None
    # 138-1234-5678, 138 12345678: groups of at least 3 (not "1 3812345678" by accident).
    if len(sizes) <= 3 and min(sizes) >= 3:
        return digits
    return None


def _is_resident_id(raw: str) -> bool:
    if len(raw) != 18 or not raw[:17].isdecimal() or not (raw[17].isdecimal() or raw[17] in "Xx"):
        return False
    body = _ascii_digits(raw[:17])
    check = _ID_CHECK_CHARS[sum(int(c) * w for c, w in zip(body, _ID_WEIGHTS)) % 11]
    return check == _ascii_digits(raw[17]).upper() and _is_birth_date(body[6:14])


def _is_birth_date(yyyymmdd: str) -> bool:
    # A real ID always holds a real birth date; most random 18-digit numbers do not.
    year, month, day = int(yyyymmdd[:4]), int(yyyymmdd[4:6]), int(yyyymmdd[6:])
    if year not in _ID_BIRTH_YEARS:
        return False
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _is_card(digits: str) -> bool:
    # Payment cards start with 3-6 or the 2221-2720 Mastercard range; this keeps timestamps
    # (1...) and date-prefixed order numbers (20...) out even when they happen to pass Luhn.
    if len(digits) not in _CARD_DIGITS:
        return False
    if not (digits[0] in "3456" or 2221 <= int(digits[:4]) <= 2720):
        return False
    return _luhn_ok(digits)


def _is_card_grouping(sizes: tuple[int, ...]) -> bool:
    if len(sizes) == 1:
        return True
    if sizes in _CARD_GROUPINGS_AMEX:
        return True
    return all(size == 4 for size in sizes[:-1]) and 1 <= sizes[-1] <= 4


def _luhn_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _ends_with_x(text: str) -> bool:
    return text[-1:] in ("X", "x")


def _ascii_digits(text: str) -> str:
    # Rust's \d also matches full-width and other Unicode digits; hash them as ASCII.
    return text if text.isascii() else "".join(str(int(c)) if c.isdecimal() else c for c in text)
