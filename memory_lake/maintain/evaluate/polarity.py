"""Polarity (package docstring, *Polarity*): the content words each negation or contrast applies to,
and when two texts disagree in polarity."""

from __future__ import annotations

import re

from .fact import _CJK, _Analysed
from .words import _CLAUSE_END, _content_words

# "X rather than Y" says "not Y": contrastive markers count as negation, so that a summary's
# "X, not Y" keeps the polarity of its source's "X rather than Y".
_NEGATION_EN = re.compile(r"\b(?:not|no|never|none|cannot|without|neither|nor|rather than|instead of)\b|n't\b",
                          re.IGNORECASE)
_NEGATION_ZH = frozenset("不 没 没有 未 别 无 非 勿 不要 不会 不能 不再 不用 不必 未能 无法 并非 从不 从未 绝不 "
                         "而不是 而非 不是 并不 而不".split())
_NEGATION_CHARS = "不没未无非别"


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
        from ...text import jieba_segmenter

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
