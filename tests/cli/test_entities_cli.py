"""`memory-lake entities` and `memory-lake context`: --json shapes, the people's output, empty
scopes that say why, unknown names (exit 2)."""

from __future__ import annotations

import json

import pytest

from memory_lake import Lake
from memory_lake.maintain.entities import extract_entities

from ..conftest import AS_OF, write_jsonl
from .test_cli import run


def lake_with_alice(tmp_path, extract=True) -> str:
    lake = Lake.init(tmp_path / "lake")
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        {"id": "m1", "tenant": "acme", "user_id": "u1", "content": "Alice lives in Paris.",
         "created_at": "2026-10-01T00:00:00Z", "tier": "long_term"},
        {"id": "m2", "tenant": "acme", "user_id": "u1", "content": "Alice lives in Berlin.",
         "created_at": "2026-11-01T00:00:00Z", "tier": "long_term"},
        {"id": "m3", "tenant": "acme", "user_id": "u2", "content": "nothing proper here",
         "created_at": "2026-11-01T00:00:00Z"},
    ])], as_of=AS_OF)
    if extract:
        extract_entities(lake, AS_OF)
    return str(lake.root)


def test_entities_json_shape(capsys, tmp_path):
    lake = lake_with_alice(tmp_path)
    code, out, err = run(capsys, "--lake", lake, "entities", "--tenant", "acme", "--user", "u1", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["notes"] == []
    alice = result["entities"][0]
    assert {k: v for k, v in alice.items() if k not in ("entity_id", "facts", "history")} == {
        "tenant": "acme", "agent_id": None, "user_id": "u1", "name": "Alice", "kind": "person", "mention_count": 2,
        "first_mentioned": "2026-10-01T00:00:00Z", "last_mentioned": "2026-11-01T00:00:00Z"}
    (fact,) = alice["facts"]
    (old,) = alice["history"]
    assert {k: v for k, v in fact.items() if k != "fact_id"} == {
        "content": "Alice lives in Berlin.", "sources": ["m2"], "mentions": 1, "confidence": 0.9,
        "valid_from": "2026-11-01T00:00:00Z", "valid_to": None, "superseded_by": None, "change": None,
        "disputed": None}
    assert {k: v for k, v in old.items() if k != "fact_id"} == {
        "content": "Alice lives in Paris.", "sources": ["m1"], "mentions": 1, "confidence": 0.9,
        "valid_from": "2026-10-01T00:00:00Z", "valid_to": "2026-11-01T00:00:00Z", "superseded_by": fact["fact_id"],
        "change": "place", "disputed": None}
    assert [e["name"] for e in result["entities"]] == ["Alice", "Berlin", "Paris"]


def test_entities_for_people(capsys, tmp_path):
    lake = lake_with_alice(tmp_path)
    code, out, _ = run(capsys, "--lake", lake, "entities", "--tenant", "acme", "--user", "u1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("Alice (person, 2 mentions, last 2026-11-01) [acme / - / u1] e_")
    assert lines[1] == "  - Alice lives in Berlin.  (2026-11-01; 1x from m2; confidence 0.9)"
    assert lines[2].startswith("  ~ Alice lives in Paris.  (2026-10-01 to 2026-11-01; place changed, superseded by f_")
    assert lines[-1] == "3 entities"


def test_entities_empty_scopes_say_why(capsys, tmp_path):
    lake = lake_with_alice(tmp_path)
    code, out, _ = run(capsys, "--lake", lake, "entities", "--tenant", "acme", "--user", "u2")
    assert (code, out.strip()) == (0, "0 entities: no entities in scope tenant acme, user u2: its one memory names "
                                      "no person, place, organisation or thing")
    code, out, _ = run(capsys, "--lake", lake_with_alice(tmp_path / "fresh", extract=False), "entities", "--json")
    assert code == 0
    assert json.loads(out) == {"entities": [], "notes": [
        "no entities in the lake: its 3 memories were not read for entities yet (the nightly run's "
        "extract_entities step does it: memory-lake run nightly)"]}
    code, _, err = run(capsys, "--lake", lake, "entities", "--tenant", "acmee")
    assert code == 2 and err.startswith("error: unknown tenant 'acmee'") and "acme" in err


@pytest.mark.models
def test_context_json_and_markdown(capsys, tmp_path):
    lake = lake_with_alice(tmp_path)
    code, out, err = run(capsys, "--lake", lake, "context", "Where does Alice live?", "--tenant", "acme",
                         "--user", "u1", "--max-tokens", "120", "--json")
    assert code == 0, err
    pack = json.loads(out)
    assert sorted(pack) == ["dropped", "markdown", "max_tokens", "notes", "sections", "tokens"]
    assert pack["max_tokens"] == 120 and 0 < pack["tokens"] <= 120
    assert [s["name"] for s in pack["sections"]] == ["relevant", "entities"]
    assert pack["sections"][0]["lines"] == ["- 2026-11-01 (other) Alice lives in Berlin.",
                                            "- 2026-10-01 (other) Alice lives in Paris."]
    code, out, err = run(capsys, "--lake", lake, "context", "Where does Alice live?", "--tenant", "acme",
                         "--user", "u1")
    assert code == 0
    assert out.splitlines()[0] == "# Memory context: acme / (all) / u1"
    assert "## Known entities" in out and err.strip().endswith("of 2000 tokens")


@pytest.mark.models
def test_context_errors_are_one_line(capsys, tmp_path):
    lake = lake_with_alice(tmp_path)
    code, _, err = run(capsys, "--lake", lake, "context", "x", "--tenant", "acme", "--max-tokens", "0")
    assert (code, err.strip()) == (2, "error: --max-tokens must be a positive integer, not 0")
    code, _, err = run(capsys, "--lake", lake, "context", "x")
    assert code == 2 and "Missing option '--tenant'" in err
    code, out, err = run(capsys, "--lake", lake, "context", "x", "--tenant", "acme", "--user", "u2", "--json")
    assert code == 0
    assert json.loads(out)["notes"] == []


@pytest.mark.models
def test_a_fact_superseded_by_a_memory_it_contradicts_is_shown_as_disputed(tmp_path, capsys):
    """A stranger saw entities call "$600" the current budget, superseding "$500", while the conflict
    queue held the two memories as an open contradiction for a user to decide: two answers about one
    fact. The superseded fact now names the open conflict."""
    lake = Lake.init(tmp_path / "lake")
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [
        {"id": "maria-4", "tenant": "home", "user_id": "maria", "content": "Maria budget for the trip is $500",
         "created_at": "2026-11-01T00:00:00Z"},
        {"id": "maria-5", "tenant": "home", "user_id": "maria", "content": "Maria budget for the trip is $600",
         "created_at": "2026-11-20T00:00:00Z"}])], as_of=AS_OF)
    code, _, err = run(capsys, "--lake", str(lake.root), "run", "nightly", "--no-prefect", "--as-of", "2026-12-01T03:00:00Z")
    assert code == 0, err
    code, out, _ = run(capsys, "--lake", str(lake.root), "--json", "conflicts", "list")
    (conflict,) = json.loads(out)
    assert {conflict["memory_id"], conflict["other_memory_id"]} == {"maria-4", "maria-5"}
    code, out, _ = run(capsys, "--lake", str(lake.root), "--json", "entities", "--tenant", "home")
    (maria,) = json.loads(out)["entities"]
    assert [(f["content"], f["disputed"]) for f in maria["facts"]] == [("Maria budget for the trip is $600", None)]
    assert [(f["content"], f["change"], f["disputed"]) for f in maria["history"]] == [
        ("Maria budget for the trip is $500", "number", conflict["conflict_id"])]
    code, out, _ = run(capsys, "--lake", str(lake.root), "entities", "--tenant", "home")
    assert out.splitlines()[2].endswith(f"- disputed: open conflict {conflict['conflict_id']}, a user decides "
                                        "(memory-lake conflicts list)")
