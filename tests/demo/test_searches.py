"""Tests for memory_lake.demo.searches: the searches of the demo's days (`demo_searches`) are real
searches, logged once, and counted by the next nightly run (the session's `three_nights` lake)."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from memory_lake.demo import SEARCH_HOUR, DemoSearches, demo_searches, night_as_of

from ..conftest import copy_lake
from .test_nights import table

# the lake of three nights (and every search) runs the embedding models; one build, on the notebooks' worker
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("notebooks")]


def logged(lake_root, stamp: str) -> list[dict]:
    """The search log lines of `events/` made at `stamp`."""
    lines = [json.loads(line) for path in sorted((lake_root / "events").glob("*.jsonl"))
             for line in path.read_text(encoding="utf-8").splitlines()]
    return [rec for rec in lines if rec.get("ts") == stamp and "search_id" in rec]


def test_the_searches_of_each_day_are_counted_by_the_next_night(three_nights) -> None:
    made = {night: [(s["tenant"], s["query"], s["results"] > 0) for s in found.searches]
            for night, found in three_nights.searches.items()}
    assert made == {
        1: [("acme", "refund manager approval", True), ("acme", "procurement meeting on Friday", True),
            ("globex", "deploy freeze over the holidays", True), ("globex", "zebra saxophone recital", False),
            ("zhongke", "数据库备份时间", True), ("zhongke", "火星探测器发射窗口", False)],
        2: [("acme", "Brightline refund to the Visa card", True), ("acme", "invoices on the first of the month", True),
            ("acme", "quantum teleportation budget", False), ("globex", "coffee in the morning", True),
            ("globex", "hospital appointment", True), ("zhongke", "每周三的周会", True),
            ("zhongke", "打印机卡纸 上门维修", True), ("zhongke", "研发周会 会议室", True)],
    }
    assert [(f.night, f.as_of, f.already_logged, f.with_results) for f in three_nights.searches.values()] == [
        (1, night_as_of(1).replace(hour=SEARCH_HOUR), False, 4), (2, night_as_of(2).replace(hour=SEARCH_HOUR), False, 7)]
    in_log = table(three_nights.root, "SELECT ts, list(search_id ORDER BY search_id), count(*) FILTER "
                                      "(WHERE keyword_match OR semantic_match) FROM retrieval_log GROUP BY 1 ORDER BY 1")
    assert in_log == [
        (datetime(2026, 11, 30, 12), sorted(s["search_id"] for s in three_nights.searches[1].searches), 4),
        (datetime(2026, 12, 1, 12), sorted(s["search_id"] for s in three_nights.searches[2].searches), 7)]


def test_a_day_is_searched_once(three_nights, tmp_path) -> None:
    lake = copy_lake(three_nights.root, tmp_path / "lake")
    found = demo_searches(lake, 3)
    assert isinstance(found, DemoSearches) and (found.night, found.as_of, found.already_logged) == (
        3, night_as_of(3).replace(hour=SEARCH_HOUR), False)
    assert [(s["tenant"], s["agent"], s["user"], s["query"], s["results"] > 0) for s in found.searches] == [
        ("acme", "support-bot", "u-alice", "refund approval threshold", True),
        ("acme", None, None, "annual plan discount", True),
        ("globex", "ops-agent", "u-erin", "deploy freeze", True),
        ("globex", None, None, "volcano insurance for penguins", False),
        ("zhongke", "kefu-bot", "u-chenjing", "新打印机 安装", True),
        ("zhongke", None, None, "研发周会", True),
        ("zhongke", "kefu-bot", "u-wangfang", "深色模式", True)]
    lines = logged(lake.root, "2026-12-02T12:00:00Z")
    assert [rec["search_id"] for rec in lines] == [s["search_id"] for s in found.searches]
    again = demo_searches(lake, 3)
    assert (again.already_logged, again.searches, again.with_results) == (True, [], 0)
    assert logged(lake.root, "2026-12-02T12:00:00Z") == lines
    # a day whose searches the next run loaded (and whose events file is gone) is known by retrieval_log
    for path in (lake.root / "events").glob("*.jsonl"):
        path.unlink()
    assert demo_searches(lake, 1).already_logged and demo_searches(lake, 2).already_logged
