"""Flows: every prefect.yaml entrypoint imports; the ingest flow runs for real under Prefect."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
import yaml

from .conftest import rows, write_jsonl

ROOT = Path(__file__).resolve().parents[1]


def entrypoints() -> list[str]:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    return [d["entrypoint"] for d in config["deployments"]]


@pytest.mark.parametrize("entrypoint", entrypoints())
def test_every_prefect_yaml_entrypoint_imports(entrypoint):
    from prefect.flows import Flow

    path, name = entrypoint.split(":")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    assert isinstance(getattr(module, name), Flow)


def test_the_library_never_imports_prefect():
    pattern = re.compile(r"^\s*(import|from)\s+prefect\b", re.MULTILINE)
    for path in (ROOT / "memory_lake").glob("*.py"):
        assert not pattern.search(path.read_text()), f"{path.name} imports Prefect"


@pytest.mark.slow
def test_ingest_flow_runs_under_prefect(prefect_harness, lake):
    from flows.ingest import ingest_inbox

    write_jsonl(lake.inbox / "0001.jsonl", [{"tenant": "acme", "content": "from a flow"}, "broken"])
    report = ingest_inbox(str(lake.root), as_of="2026-11-30T00:00:00Z")
    assert (report["ingested"], report["quarantined"], report["as_of"]) == (1, 1, "2026-11-30T00:00:00Z")
    assert rows(lake, "SELECT content FROM memories") == [{"content": "from a flow"}]
