"""The text units (package docstring, *Units*): source sentences (:func:`split_sentences`) and
summary statements, headings and lines (:func:`summary_statements`), with the Markdown and the
field labels of the seed's structure taken off."""

from __future__ import annotations

import re
from dataclasses import dataclass

LABELS = ("what", "why", "impact", "when", "time", "where", "place", "people", "who", "outcome", "result",
          "problem", "cause", "root cause", "avoidance", "avoid", "how to avoid", "task", "priority", "due",
          "deadline", "owner", "decision", "lesson", "todo", "event", "note",
          "时间", "地点", "人物", "结果", "内容", "原因", "影响", "问题", "规避", "避免", "任务", "优先级", "截止",
          "截止时间", "负责人", "决策", "决定", "教训", "经验", "待办", "事件", "备注")

_SENTENCE_END = re.compile(r"(?<=[。！？!?])\s*|(?<=[.!?][\"'”’)\]])\s+|(?<=[.!?])\s+(?=\S)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_LABEL_RE = re.compile(r"(?:^|(?<=[;；,，(（]))\s*(?:" + "|".join(re.escape(label) for label in
                                                          sorted(LABELS, key=len, reverse=True))
                       + r")\s*[:：]\s*", re.IGNORECASE)


# A full stop after these (and after a single capital, an initial) does not end a sentence.
ABBREVIATIONS = frozenset("mr mrs ms dr prof st jr sr mt no vs etc inc ltd co corp dept approx e.g i.e a.m p.m".split())


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`: pieces between line breaks and sentence ends (see package docstring);
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
