"""Polarity (package docstring, *Polarity*): the content words each negation or contrast applies to,
the common opposites a text holds, and when two texts disagree in polarity."""

from __future__ import annotations

import functools
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

# Common opposites (issue 37.8): a statement that puts one where its source sentence has the other
# ("dislikes" for "likes", 减少 for 增加) contradicts it. A short list of general opposites, not a
# thesaurus, so that a paraphrase is never read as a contradiction: ``a|b/c|d`` pairs each of a, b
# (forms or near synonyms) with each of c, d. English words match by their search stem (likes,
# liked -> like), Chinese ones as substrings. Dedup keeps its own wider list (data/antonyms.tsv) of
# values that differ as well as opposites (tea / coffee), for another question: may two memories merge.
OPPOSITES = tuple(tuple(side.split("|") for side in pair.split("/")) for pair in """
like/dislike love/hate always/never increase/decrease rise|rose|risen|raise|grow|grew/fall|fell|fallen|drop|lower|shrink
accept|approve/reject|decline|deny allow|allowed|permit/forbid|forbidden|forbade|prohibit agree/disagree
enable/disable include/exclude pass|succeed|succeeded|success/fail|failure win/lose|lost true/false
correct/incorrect|wrong valid/invalid possible/impossible available/unavailable legal/illegal open/closed
buy|bought/sell|sold gain|profit/loss cheap/expensive maximum/minimum better/worse best/worst improve/worsen
喜欢/讨厌 爱/恨 总是/从不 增加|增长|上升|上涨|提高|提升|上调|升到|升至|涨/减少|下降|下跌|降低|下调|降到|降至|跌
涨价/降价 接受|同意|批准|支持/拒绝|反对|驳回 允许/禁止 开启|打开|启用/关闭|禁用 成功/失败 盈利/亏损 买入/卖出
有效/无效 正确/错误 合法/违法 提前/推迟 高于/低于 多于/少于 最高/最低 最多/最少
""".split())


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


@functools.lru_cache(maxsize=1)
def _opposite_table() -> dict[str, frozenset[str]]:
    """Each term of :data:`OPPOSITES` (an English stem, a Chinese word) -> its opposites."""
    def terms(words: list[str]) -> set[str]:
        return {word if _CJK.search(word) else min(_content_words(word)) for word in words}

    table: dict[str, set[str]] = {}
    for left, right in OPPOSITES:
        for x in terms(left):
            for y in terms(right):
                table.setdefault(x, set()).add(y)
                table.setdefault(y, set()).add(x)
    return {term: frozenset(others) for term, others in table.items()}


def _opposite_terms(text: str, words: frozenset[str], scopes: tuple[frozenset[str], ...]) -> dict[str, bool]:
    """The terms of :data:`OPPOSITES` in `text` (`words` its content words, `scopes` its negation
    scopes), each with whether a negation applies to it (``doesn't like``, 不喜欢)."""
    found = {}
    for term in _opposite_table():
        if _CJK.search(term):
            if term in text:
                found[term] = any(term in word for scope in scopes for word in scope)
        elif term in words:
            found[term] = any(term in scope for scope in scopes)
    return found


def _opposite_conflict(a: _Analysed, b: _Analysed) -> bool:
    """Whether one text holds a term where the other holds its opposite and neither holds both,
    with the same polarity (``likes`` / ``dislikes``; ``doesn't like`` / ``dislikes`` agree)."""
    table = _opposite_table()
    for term, negated in a.opposites.items():
        if term in b.opposites:
            continue
        if any(other in b.opposites and other not in a.opposites and b.opposites[other] == negated
               for other in table[term]):
            return True
    return False


def _polarity_conflict(a: _Analysed, b: _Analysed) -> bool:
    """Whether `a` and `b` disagree in polarity: one negates what the other states, i.e. more than
    half of a negation's scope words occur in the other text and no negation there shares one of
    them (``decided not to migrate X`` against ``decided to migrate X``), or one says the opposite
    of the other (:func:`_opposite_conflict`). A summary that drops a negated clause of its source
    (``..., without telling her``) is no conflict, nor one that negates the opposite of what its
    source states (``doesn't like`` for ``dislikes``, 不喜欢 for 讨厌)."""
    for x, y in ((a, b), (b, a)):
        for scope in x.scopes:
            if (2 * len(scope & y.words) > len(scope) and not any(scope & other for other in y.scopes)
                    and not _states_an_opposite(scope, y)):
                return True
    return _opposite_conflict(a, b)


def _states_an_opposite(scope: frozenset[str], y: _Analysed) -> bool:
    """Whether `y` states, not negated, the opposite of a word of a negation's `scope`."""
    table = _opposite_table()
    stated = {term for term, negated in y.opposites.items() if not negated}
    return bool(stated) and any(table[term] & stated for term in table
                                if any(term == word or (_CJK.search(term) and term in word) for word in scope))
