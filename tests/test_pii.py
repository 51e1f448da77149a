"""Acceptance: no planted PII value from the demo data appears in any file under the lake or in
any text column of any table (raw copies and quarantine included)."""

from __future__ import annotations

import re

import pytest

from memory_lake import Lake
from memory_lake.demo import generate_demo


def _forms(value: str) -> set[str]:
    """The value as planted and its compact form (digits without separators)."""
    compact = re.sub(r"[\s\-()]", "", value)
    return {value, compact} if len(compact) >= 6 else {value}


@pytest.fixture(scope="module")
def demo_lake(tmp_path_factory):
    lake = Lake.open(tmp_path_factory.mktemp("pii") / "lake", create=True)
    data = generate_demo(lake.inbox, seed=7)
    report = lake.ingest(as_of=data.as_of).as_dict()
    return lake, data, report


def test_demo_lands_with_its_planted_quarantine(demo_lake):
    lake, data, report = demo_lake
    got = {(r["file"], r["line"], r["reason"]) for r in lake.sql("SELECT file, line, reason FROM quarantine").to_dicts()}
    assert got == set(data.malformed)
    assert report["ingested"] + report["updated"] == data.good_lines
    assert report["forgotten"] == 1
    # the late sync based on version 1 ends in the conflict queue, not in quarantine
    assert report["conflicted"] == len(data.conflicts) == 1
    assert {(c["source_file"].rsplit("/", 1)[-1], c["source_line"], c["field"])
            for c in lake.conflicts().to_dicts()} == set(data.conflicts)
    assert list(lake.inbox.glob("*.json*")) == []


def test_no_planted_pii_in_any_file_under_the_lake(demo_lake):
    lake, data, _ = demo_lake
    needles = set().union(*(_forms(v) for v in data.planted_pii))
    files = [p for p in lake.root.rglob("*") if p.is_file()]
    assert any(p.parent == lake.raw for p in files)
    for path in files:
        blob = path.read_bytes()
        found = [n for n in needles if n.encode() in blob]
        assert not found, f"{path.relative_to(lake.root)} holds {found}"


def test_no_planted_pii_in_any_text_column(demo_lake):
    lake, data, _ = demo_lake
    needles = set().union(*(_forms(v) for v in data.planted_pii))
    columns = lake.sql(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE data_type IN ('VARCHAR', 'JSON') OR data_type LIKE 'VARCHAR[]%'"
    ).rows()
    assert ("quarantine", "raw") in columns and ("memories", "content") in columns
    for table, column in columns:
        text = lake.sql(f'SELECT string_agg("{column}"::VARCHAR, chr(10)) AS t FROM "{table}"').item() or ""
        found = [n for n in needles if n in text]
        assert not found, f"{table}.{column} holds {found}"


def test_placeholders_are_typed(demo_lake):
    lake, _, _ = demo_lake
    kinds = lake.sql(
        "SELECT DISTINCT regexp_extract(unnest(regexp_extract_all(content || coalesce(extra::VARCHAR, ''), '\\[[A-Z_]+:[0-9a-f]{8}\\]')), "
        "'\\[([A-Z_]+):', 1) AS kind FROM memories ORDER BY 1"
    )["kind"].to_list()
    assert {"PHONE", "EMAIL", "CARD", "ID_CN"} <= set(kinds)
    assert lake.sql("SELECT count(*) FROM memories WHERE content LIKE '%[SECRET]%'").item() >= 4
