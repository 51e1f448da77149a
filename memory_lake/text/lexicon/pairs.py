"""How two stretches are set side by side: which language they are in (`_is_chinese`), and two
Chinese words without the characters they share at their edges (`_stripped`)."""

from __future__ import annotations

import re


def _is_chinese(words: tuple[str, ...]) -> bool:
    return any(re.search(r"[\u3400-\u9fff]", w) for w in words)


def _stripped(x: str, y: str) -> list[tuple[str, str]]:
    """The two words, then the two without the characters they begin or end with alike (王大夫 /
    王医生 -> 大夫 / 医生, 生日礼物 / 生日礼品 -> 礼物 / 礼品, 太冷 / 太热 -> 冷 / 热): jieba does
    not always cut both sides the same way."""
    out = [(x, y)]
    while len(x) > 1 and len(y) > 1 and x[0] == y[0]:
        x, y = x[1:], y[1:]
        out.append((x, y))
    while len(x) > 1 and len(y) > 1 and x[-1] == y[-1]:
        x, y = x[:-1], y[:-1]
        out.append((x, y))
    return out
