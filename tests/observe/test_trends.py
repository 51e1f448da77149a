"""The report's "Over time" section on its own: a chart needs two runs, and a lake of many tenants
draws the largest twelve (a thousand tenants must not make a page nobody reads, nor a run that
spends minutes drawing it)."""

from __future__ import annotations

import re

from memory_lake.observe.trends import trends_section


def rows(total: int, nights: int = 3) -> list[dict]:
    return [{"as_of": f"2026-12-{d:02d}T00:00:00Z", "run_id": f"r{d}", "total": total, "working_used": d * total}
            for d in range(1, nights + 1)]


def test_the_largest_twelve_tenants_get_their_own_charts():
    health = {"overall": rows(100), "tenants": {f"t{i:02d}": rows(i) for i in range(15)}}
    page = trends_section(health, [], 30)
    shown = re.findall(r'<summary>Tenant <b>([^<]*)</b></summary>', page)
    assert shown == [f"t{i:02d}" for i in range(14, 2, -1)]
    assert "the 12 largest of 15 tenants" in page
    # each shown tenant's capacity chart carries its numbers
    (table,) = re.findall(r'<table class="series" data-chart="capacity:t14">.*?</table>', page, re.S)
    assert re.findall(r'data-column="working_used" data-value="([^"]*)"', table) == ["14", "28", "42"]


def test_one_run_is_a_sentence_not_a_chart():
    health = {"overall": rows(5, nights=1), "tenants": {}}
    page = trends_section(health, [{"as_of": "2026-12-01T00:00:00Z", "run_id": "r1", "steps": {"dedup": 1.5}}], 30)
    assert "<svg" not in page
    figures = dict(re.findall(r'<figure class="trend" data-chart="([^"]*)">(.*?)</figure>', page, re.S))
    said = {name: re.search(r"A line needs two runs with a value: (\d) so far", body).group(1)
            for name, body in figures.items()}
    # one snapshot with memories and one run with a step's seconds; nothing else has a value yet
    assert said == {"capacity": "1", "utilization": "0", "hit_rate": "0", "staleness": "0", "quarantine": "0",
                    "conflicts": "0", "summary_quality": "0", "ingest": "0", "merges": "0", "moves": "0",
                    "durations": "1"}
