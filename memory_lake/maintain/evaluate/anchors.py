"""Value anchors (package docstring, *accuracy*): the words each number, date and time of a text
qualifies, and when a source sentence ties a word of a statement to another value."""

from __future__ import annotations

from .dates import _dates_match, _times_match
from .fact import Fact, _Analysed
from .numerals import _MEASURE
from .words import _CLAUSE_END, _content_words


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
    from ...text import jieba_segmenter

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
