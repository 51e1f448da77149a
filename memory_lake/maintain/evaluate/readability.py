"""Readability (package docstring, *readability*): a 0..1 structure score of the summary's Markdown,
the weighted sum of :data:`READABILITY_WEIGHTS`."""

from __future__ import annotations

import re

from .sentences import _Statement

MAX_LINE_WIDTH = 120
READABILITY_WEIGHTS = {"headings": 0.15, "list_items": 0.25, "one_fact_per_line": 0.25, "sections": 0.15,
                       "line_length": 0.20}
CATEGORY_WORDS = ("event", "decision", "lesson", "todo", "to-do", "task", "action item",
                  "事件", "决策", "决定", "教训", "经验", "待办", "任务")
_WIDE = re.compile(r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]")


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
