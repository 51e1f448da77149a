"""The forget registry (issue 36): the stores that hold memory text are declared in store, their
owners register scrubbers when imported, and a forget that could not reach one does not start."""

import pytest

from memory_lake.maintain import forget
from memory_lake.store import MemoryLakeError, SCRUBBED_FILES, SCRUBBED_TABLES, file_scrubbers, register_scrubber, scrubbers
from memory_lake.store import registry

from ..conftest import rows, write_jsonl

AS_OF = "2026-12-01T00:00:00Z"


def test_importing_memory_lake_registers_every_declared_store():
    assert scrubbers() == list(SCRUBBED_TABLES)
    assert file_scrubbers() == list(SCRUBBED_FILES)


def test_a_store_that_is_not_declared_cannot_register():
    with pytest.raises(ValueError, match="table 'notes' is not declared in store.registry"):
        register_scrubber("notes")


@pytest.mark.parametrize("kind, name", [("table", "entity_facts"), ("file", "reports")])
def test_a_forget_that_cannot_reach_a_store_does_not_start(lake, tmp_path, monkeypatch, kind, name):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [{"id": "m1", "tenant": "t", "content": "Alice likes green tea"}])],
                as_of=AS_OF)
    monkeypatch.delitem(registry._SCRUBBERS if kind == "table" else registry._FILE_SCRUBBERS, name)
    with pytest.raises(MemoryLakeError, match=f"forget cannot reach {name}: the stage that owns it registered no scrubber"):
        forget(lake, ids=["m1"], reason="asked", as_of="2026-12-02T00:00:00Z")
    # nothing was written: the memory is whole, no tombstone, no history row, no debt
    assert rows(lake, "SELECT id, status, content FROM memories") == [
        {"id": "m1", "status": "active", "content": "Alice likes green tea"}]
    assert rows(lake, "SELECT count(*) AS n FROM memory_history WHERE change = 'forget'") == [{"n": 0}]
    assert rows(lake, "SELECT count(*) AS n FROM pending_compactions") == [{"n": 0}]
