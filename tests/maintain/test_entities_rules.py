"""Rules of entity memory that the mutation sample of issue 34 showed untested: the note of a
scope whose memories name no entity, and the entity facts of a published version's files."""

from __future__ import annotations

from memory_lake.maintain.entities import extract_entities, published_entity_facts, scope_entity_facts

from ..conftest import AS_OF, write_jsonl


def memory(memory_id, content, created, **extra):
    return {"id": memory_id, "tenant": "acme", "agent_id": "bot", "user_id": "u1", "content": content,
            "created_at": created, **extra}


def test_a_scope_whose_memories_name_nothing_says_how_many_were_read(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        memory("m1", "nothing proper here", "2026-10-01T00:00:00Z"),
        memory("m2", "still nothing proper", "2026-10-02T00:00:00Z")])], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    assert lake.entities(tenant="acme", user="u1") == {"entities": [], "notes": [
        "no entities in scope tenant acme, user u1: none of its 2 memories names a person, place, organisation "
        "or thing"]}


def test_the_entity_facts_of_a_published_version_are_those_of_the_lake(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        memory("m1", "Alice lives in Paris.", "2026-10-01T00:00:00Z"),
        memory("m2", "Alice lives in Berlin.", "2026-11-01T00:00:00Z")])], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    version = tmp_path / "v1"
    (version / "tables").mkdir(parents=True)
    for name in ("entities", "entity_facts"):
        lake.read(f"SELECT * FROM {name}").frame.write_parquet(version / "tables" / f"{name}.parquet")
    with lake.reader() as con:
        live = scope_entity_facts(con)
    published = published_entity_facts(version)
    assert published.to_dicts() == live.to_dicts() and published.height == 4
    assert published_entity_facts(tmp_path / "v0").height == 0  # a version without entity tables


def test_a_name_with_accented_letters_is_one_name(lake, tmp_path):
    # issue 37.8: "José García" came out as the entities `Jos` and `Garc` (the capitalised-span
    # pattern stopped at the first letter outside A-Z)
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        memory("m1", "Yesterday José García joined the call from Málaga.", "2026-10-01T00:00:00Z"),
        memory("m2", "Ask José García about the Zürich office.", "2026-10-02T00:00:00Z")])], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    names = sorted(e["name"] for e in lake.entities(tenant="acme", user="u1")["entities"])
    assert names == ["José García", "Málaga", "Zürich"]
