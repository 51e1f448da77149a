"""`conflicts list --tenant` shows that tenant's disputed values and no other tenant's (issue 19):
two tenants with a write conflict each, one of them also with a resolved one, through the CLI
(--json) and the Python API."""

from __future__ import annotations

import json

from memory_lake.cli import main

from ..conftest import AS_OF, write_jsonl


def pref(tenant, memory_id):
    return {"id": memory_id, "tenant": tenant, "type": "preference", "content": f"{tenant} prefers light mode",
            "created_at": "2026-11-01T00:00:00Z"}


def two_tenants_in_conflict(lake, tmp_path):
    """acme: two conflicts on two memories (one resolved afterwards); globex: one conflict."""
    base = [pref("acme", "a-theme"), pref("acme", "a-font"), pref("globex", "g-theme")]
    lake.ingest([write_jsonl(tmp_path / "v1.jsonl", base)], as_of=AS_OF)
    for writer in ("one", "two"):  # two writers change the same version 1 differently
        lake.ingest([write_jsonl(tmp_path / f"{writer}.jsonl", [
            {**record, "version": 1, "content": f"{record['tenant']} prefers {writer} mode", "trace_id": writer}
            for record in base])], as_of=AS_OF)
    (font,) = [c for c in lake.conflicts(tenant="acme").to_dicts() if c["memory_id"] == "a-font"]
    lake.resolve_conflict(font["conflict_id"], "lake", as_of=AS_OF)


def listed(capsys, lake, *args) -> list[tuple[str, str, str]]:
    assert main(["--lake", str(lake.root), "conflicts", "list", "--json", *args]) == 0
    return [(c["tenant"], c["memory_id"], c["status"]) for c in json.loads(capsys.readouterr().out)]


def test_conflicts_list_filters_by_tenant(lake, tmp_path, capsys):
    two_tenants_in_conflict(lake, tmp_path)
    assert listed(capsys, lake) == [("acme", "a-theme", "open"), ("globex", "g-theme", "open")]
    assert listed(capsys, lake, "--tenant", "acme") == [("acme", "a-theme", "open")]
    assert listed(capsys, lake, "--tenant", "globex") == [("globex", "g-theme", "open")]
    assert listed(capsys, lake, "--tenant", "acme", "--all") == [("acme", "a-theme", "open"),
                                                                  ("acme", "a-font", "resolved")]
    assert listed(capsys, lake, "--tenant", "globex", "--all") == [("globex", "g-theme", "open")]


def test_the_api_filters_by_tenant_with_whole_rows(lake, tmp_path):
    two_tenants_in_conflict(lake, tmp_path)
    everyone = lake.conflicts(status=None).to_dicts()
    assert len(everyone) == 3
    for tenant in ("acme", "globex"):
        assert lake.conflicts(tenant=tenant, status=None).to_dicts() == [c for c in everyone if c["tenant"] == tenant]
    (theme,) = lake.conflicts(tenant="globex").to_dicts()
    assert {k: theme[k] for k in ("kind", "status", "memory_id", "field", "lake_value", "incoming_value",
                                  "lake_trace_id", "incoming_trace_id", "memory_status")} == {
        "kind": "write", "status": "open", "memory_id": "g-theme", "field": "content",
        "lake_value": '"globex prefers one mode"', "incoming_value": '"globex prefers two mode"',
        "lake_trace_id": "one", "incoming_trace_id": "two", "memory_status": "conflicted"}
