"""Issue 41.5: the run report counts memories per format. On the demo's second night (which brings a
Mem0, Letta and Zep export, a hot-memory tree and a chat transcript besides its JSON Lines), the
page's "Ingest by format" section holds, row for row, what the run's ingest reported per format,
and the lake's totals equal ``ingested_files``; night 3 (JSON Lines only) shows just that."""

from __future__ import annotations

import html
import re

import pytest

from memory_lake.observe.reportingest import FORMAT_NAMES
from memory_lake.store import Lake

pytestmark = pytest.mark.slow


def section_tables(page: str) -> dict[str, list[list[str]]]:
    """The ingest section's tables by their heading: rows of cell texts (body and foot)."""
    found = re.search(r'<section id="ingest">(.*?)</section>', page, re.S)
    assert found, "no Ingest by format section"
    tables = {}
    for title, body in re.findall(r"<h3>(.*?)</h3><table>(.*?)</table>", found.group(1), re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", body.split("</thead>", 1)[1], re.S)
        tables[html.unescape(title)] = [[html.unescape(re.sub(r"<[^>]+>", "", c))
                                         for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)] for r in rows]
    return tables


def n(value) -> str:
    return f"{value:,}"


def test_night_two_page_counts_each_format_as_the_run_did(three_nights):
    run = three_nights.runs[2]
    page = (three_nights.root.parent / "reports" / "2026-12-01" / f"{run['run_id']}.html").read_text(encoding="utf-8")
    tables = section_tables(page)
    lake = Lake.open(three_nights.root)
    # what the run's ingest recorded per file, summed per format; why quarantined from the quarantine
    formats = lake.sql("SELECT format, count(*) AS files, sum(ingested) AS ingested, sum(updated) AS updated, "
                       "sum(unchanged) AS unchanged, sum(quarantined) AS quarantined FROM ingested_files "
                       "WHERE run_id = ? GROUP BY 1 ORDER BY 1", [run["run_id"]]).to_dicts()
    assert [f["format"] for f in formats] == ["hottree", "jsonl", "letta", "mem0", "transcript", "zep"]
    why = dict(lake.sql("SELECT 'jsonl', string_agg(k || ' ' || reason, ', ' ORDER BY reason) FROM (SELECT reason, "
                        "count(*)::VARCHAR AS k FROM quarantine WHERE run_id = ? GROUP BY 1)", [run["run_id"]]).rows())
    skipped = {"letta": "1 deleted", "transcript": "2 assistant, 1 other, 2 pleasantry"}  # demo/formats.py's inputs
    expected = [[FORMAT_NAMES[r["format"]], *(n(r[k]) for k in ("files", "ingested", "updated", "unchanged",
                                                                  "quarantined")),
                 why.get(r["format"]) or "—", skipped.get(r["format"], "—")] for r in formats]
    totals = ["total", *(n(sum(r[k] for r in formats))
                         for k in ("files", "ingested", "updated", "unchanged", "quarantined")), "", ""]
    assert tables["This run"] == [*expected, totals]
    assert tables["This run"][2] == ["Letta passages", "1", "3", "0", "0", "0", "—", "1 deleted"]
    # the lake table of night 2's page: every ingest up to night 2
    upto = lake.sql("SELECT format, count(*) AS files, sum(records) AS records, sum(ingested) AS ingested, "
                    "sum(updated) AS updated, sum(quarantined) AS quarantined FROM ingested_files "
                    "WHERE as_of <= TIMESTAMP '2026-12-01' GROUP BY format ORDER BY ingested DESC, format").to_dicts()
    assert tables["The lake, every ingest"] == [[FORMAT_NAMES[r["format"]], *(n(r[k]) for k in (
        "files", "records", "ingested", "updated", "quarantined"))] for r in upto]


def test_a_night_of_json_lines_only_shows_one_format(three_nights):
    run = three_nights.runs[3]
    page = (three_nights.root.parent / "reports" / "2026-12-02" / f"{run['run_id']}.html").read_text(encoding="utf-8")
    rows = section_tables(page)["This run"]
    assert [r[0] for r in rows] == ["JSON Lines", "total"]
