"""Issue 35.6: the Python API returns what the CLI's JSON returns (a developer should not have to
re-derive in a notebook what `--json` gives)."""

from __future__ import annotations

import json

from memory_lake.cli import main

from ..conftest import AS_OF, write_jsonl


def test_lake_conflicts_carries_found_by_as_conflicts_list_json_does(lake, tmp_path, capsys):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [{"id": "m1", "tenant": "acme", "content": "The office opens at 9."}])],
                as_of=AS_OF)
    lake.ingest([write_jsonl(tmp_path / "b.jsonl", [{"id": "m1", "tenant": "acme", "version": 1,
                                                     "content": "The office opens at 8."}]),
                 write_jsonl(tmp_path / "c.jsonl", [{"id": "m1", "tenant": "acme", "version": 1,
                                                     "content": "The office opens at 10."}])], as_of=AS_OF)
    (conflict,) = lake.conflicts().to_dicts()
    assert conflict["found_by"] == "c.jsonl:1"
    assert main(["--lake", str(lake.root), "--json", "conflicts", "list"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["found_by"] == conflict["found_by"] and listed["conflict_id"] == conflict["conflict_id"]
    assert set(listed) == set(conflict)  # the same keys: the values of three are JSON values there


def test_search_results_read_as_the_mappings_search_json_prints(lake, tmp_path, capsys):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        {"id": "m1", "tenant": "acme", "content": "The office opens at 9 on weekdays.", "tags": ["office"]},
        {"id": "m2", "tenant": "acme", "content": "Lunch is served at noon."}])], as_of=AS_OF)
    found = lake.search("office opens", tenant="acme", mode="keyword")
    assert main(["--lake", str(lake.root), "--json", "search", "office opens", "--tenant", "acme", "--mode", "keyword"]) == 0
    printed = json.loads(capsys.readouterr().out)["results"]
    assert [dict(r) for r in found] == printed
    first = found[0]
    assert (first["id"], first.id, first["tags"], "content" in first) == ("m1", "m1", ["office"], True)
