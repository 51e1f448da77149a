"""The searches of the demo's days (`demo_searches`): what agents asked the lake between two nights.

A search is read-only and logs itself to ``events/``; the next nightly run loads the log into
``retrieval_log``, counts the returned memories as accessed, and the health snapshot computes the hit
rate from it. So a demo lake has hit rates only if someone searched it, and they change only if the
searches do: each day asks other questions of other scopes, in English and Chinese, most about what
the demo planted (a hit) and a few about nothing it holds (a miss).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..search import search
from ..store import iso
from .nights import night_as_of
from .scenario import DEMO_TENANTS

__all__ = ["DemoSearches", "SEARCH_HOUR", "demo_searches"]

# Agents search during the day, between two nightly runs (which run at midnight).
SEARCH_HOUR = 12

# day -> (tenant, agent_id, user_id, query); days after the last listed repeat the list from day 1.
# Every query is about text that is the same for every seed, so the hits do not depend on it.
_DAYS: dict[int, list[tuple[str, str | None, str | None, str]]] = {
    1: [
        ("acme", "support-bot", "u-alice", "refund manager approval"),
        ("acme", "sales-assistant", "u-dave", "procurement meeting on Friday"),
        ("globex", "ops-agent", "u-erin", "deploy freeze over the holidays"),
        ("globex", "research-agent", "u-grace", "zebra saxophone recital"),
        ("zhongke", "yanfa-assistant", "u-zhangwei", "数据库备份时间"),
        ("zhongke", "yanfa-assistant", "u-liuyang", "火星探测器发射窗口"),
    ],
    2: [
        ("acme", "support-bot", "u-nina", "Brightline refund to the Visa card"),
        ("acme", "support-bot", "u-alice", "invoices on the first of the month"),
        ("acme", "sales-assistant", "u-dave", "quantum teleportation budget"),
        ("globex", "ops-agent", "u-frank", "coffee in the morning"),
        ("globex", "research-agent", "u-heidi", "hospital appointment"),
        ("zhongke", "kefu-bot", "u-wangfang", "每周三的周会"),
        ("zhongke", "kefu-bot", "u-chenjing", "打印机卡纸 上门维修"),
        ("zhongke", "yanfa-assistant", "u-zhangwei", "研发周会 会议室"),
    ],
    3: [
        ("acme", "support-bot", "u-alice", "refund approval threshold"),
        ("acme", None, None, "annual plan discount"),
        ("globex", "ops-agent", "u-erin", "deploy freeze"),
        ("globex", None, None, "volcano insurance for penguins"),
        ("zhongke", "kefu-bot", "u-chenjing", "新打印机 安装"),
        ("zhongke", None, None, "研发周会"),
        ("zhongke", "kefu-bot", "u-wangfang", "深色模式"),
    ],
}


@dataclass(frozen=True)
class DemoSearches:
    """The searches of one demo day.

    night: the night whose day it was (the searches follow that night's run and precede the next).
    as_of: when they were made: midday (`SEARCH_HOUR`) of `night_as_of(night)`.
    searches: one ``{"tenant", "agent", "user", "query", "search_id", "results"}`` per search made
        (``results``: how many memories it returned); empty when `already_logged`.
    already_logged: the lake held this day's searches already (in ``events/`` or ``retrieval_log``),
        so none was made again: a rerun of the demo counts nothing twice.
    """

    night: int
    as_of: datetime
    searches: list[dict[str, Any]] = field(default_factory=list)
    already_logged: bool = False

    @property
    def with_results(self) -> int:
        return sum(1 for s in self.searches if s["results"])


def demo_searches(lake, night: int) -> DemoSearches:
    """Make the searches of demo night `night`'s day on `lake` (a storage `Lake`): 6 to 8 real
    searches (`memory_lake.search.search`, hybrid, 5 results) in the three demo tenants, dated midday
    of `night_as_of(night)`, each logged to ``events/`` for the next nightly run to count.

    Idempotent: when the lake already logged searches at that instant, none is made and
    `already_logged` says so. Reads no clock. Returns a `DemoSearches`."""
    when = night_as_of(night) + timedelta(hours=SEARCH_HOUR)
    if _logged(lake, when):
        return DemoSearches(night=night, as_of=when, already_logged=True)
    made = []
    for tenant, agent, user, query in _DAYS[(night - 1) % len(_DAYS) + 1]:
        found = search(lake, query, tenant=tenant, agent=agent, user=user, as_of=when, limit=5)
        made.append({"tenant": tenant, "agent": agent, "user": user, "query": query,
                     "search_id": found.search_id, "results": len(found)})
    return DemoSearches(night=night, as_of=when, searches=made)


def _logged(lake, when: datetime) -> bool:
    """Whether the demo's searches of `when` are in the lake: in an events file the next run has
    yet to load (or has loaded and kept), or in ``retrieval_log`` (after the file was pruned)."""
    stamp = iso(when)
    for path in sorted(lake.events.glob("*.jsonl")) if lake.events.is_dir() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("ts") == stamp and "search_id" in record \
                    and record.get("tenant") in DEMO_TENANTS:
                return True
    found = lake.read("SELECT count(*) AS n FROM retrieval_log WHERE ts = ? AND tenant IN (SELECT unnest(?))",
                      [when.replace(tzinfo=None), list(DEMO_TENANTS)]).frame
    return bool(found["n"][0])
