"""The health report in real headless Chromium (tests/browser.py): the page a person opens from a
real lake loads clean (no console error or warning, no uncaught exception, nothing fetched but the
file itself), draws something, and the report's font stack draws Chinese with a real CJK font."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from ..browser import blank_ratio, chromium_or_skip, decode_png, non_white_ratio, open_page
from ..conftest import AS_OF, write_jsonl

pytestmark = pytest.mark.process  # starts Chromium (and Playwright's driver)

# the report's font stack (memory_lake/observe/report.py), written out: the test must not lean on
# the report module's private names, which its author may rename
FONT_STACK = 'system-ui, "Segoe UI", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif'


def _memory(i: int, tier: str, tenant: str, content: str, *, days_old: int, user: str = "u-liuyang") -> dict:
    at = (AS_OF - timedelta(days=days_old)).isoformat() + "Z"
    return {"id": f"{tenant}-{i}", "tenant": tenant, "agent_id": "yanfa-assistant", "user_id": user, "tier": tier,
            "type": "preference" if i % 2 else "fact", "content": content, "created_at": at, "last_accessed_at": at}


@pytest.fixture
def report(lake, tmp_path) -> Path:
    from memory_lake.observe.runs import write_report

    records = [_memory(0, "working", "zhongke", "用户偏好深色模式", days_old=1),
               _memory(1, "working", "zhongke", "项目周报每周五下午提交", days_old=2),
               _memory(2, "short_term", "zhongke", "刘洋负责研发部的检索服务", days_old=12),
               _memory(3, "long_term", "zhongke", "会议室预订走行政系统", days_old=45),
               _memory(4, "important", "zhongke", "客户数据不得离开境内", days_old=90, user="u-wangfang")]
    records += [_memory(10 + i, "working", "acme", f"Alice prefers dark mode ({i})", days_old=i, user="alice")
                for i in range(6)]
    lake.ingest([write_jsonl(tmp_path / "inbox" / "memories.jsonl", records)], as_of=AS_OF)
    step = write_report(lake, AS_OF, "r1", out_dir=tmp_path / "reports")
    return Path(step.details["path"])


def test_the_report_loads_clean_and_draws_in_chromium(report, tmp_path):
    chromium_or_skip()
    page = open_page(report, tmp_path / "report.png")
    assert page.problems == [], page.problems
    assert page.page_errors == []
    assert page.requests[:1] == [report.resolve().as_uri()]
    assert page.other_requests == [], page.other_requests  # no http(s), no data: fetch, no other file
    assert page.failed == []
    assert page.png.stat().st_size > 10_000
    assert blank_ratio(page.png) < 0.97  # not a blank page: the report's tables and charts are drawn
    assert non_white_ratio(page.png) > 0.03
    assert "zhongke" in report.read_text(encoding="utf-8")  # the lake's tenant reached the page


def _text_page(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.html"
    style = ("html, body { margin: 0; height: 100%; overflow: hidden; } p { margin: 0; } body { padding: 8px; "
             f"background: #fff; color: #111827; font-family: {FONT_STACK}; font-size: 40px; }}")
    path.write_text('<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>glyphs</title>'
                    f"<style>{style}</style></head><body><p id='t'>{text}</p></body></html>", encoding="utf-8")
    return path


def test_the_report_font_stack_draws_chinese(tmp_path):
    """The report never shows memory content, but its tenants, alerts and labels may be Chinese:
    with fonts-noto-cjk installed they are drawn with a CJK font, not as tofu boxes. The page of
    Chinese is drawn, and differs from a page of private-use characters (no font has them: each is
    a tofu box), which is what the Chinese would look like without a CJK font."""
    chromium_or_skip()
    chinese = open_page(_text_page(tmp_path, "zh", "用户偏好深色模式"), tmp_path / "zh.png",
                        width=480, height=80, fonts_of="#t")
    # the same box for both: the page is the viewport (a font of other metrics would change its height)
    tofu = open_page(_text_page(tmp_path, "tofu", "\ue000" * 8), tmp_path / "tofu.png", width=480, height=80)
    assert chinese.problems == [] and chinese.other_requests == []
    assert any("CJK" in family for family in chinese.fonts), chinese.fonts  # e.g. {'Noto Sans CJK SC': 8}
    assert blank_ratio(chinese.png) < 0.97 and non_white_ratio(chinese.png) > 0.03
    drawn, boxes = decode_png(chinese.png), decode_png(tofu.png)
    assert drawn.shape == boxes.shape
    assert np.count_nonzero(np.any(drawn != boxes, axis=2)) > 0.02 * drawn.shape[0] * drawn.shape[1]
