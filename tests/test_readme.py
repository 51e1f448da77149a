"""The README's Python examples run, in order, against a demo lake (issue 13): the README cannot
drift from the API."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memory_lake import Lake
from memory_lake.demo import DEMO_AS_OF, generate_demo
from memory_lake.maintain import enforce_tiers

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)


@pytest.mark.models
def test_the_readme_python_examples_run_against_the_demo_lake(tmp_path, monkeypatch):
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2  # write_snapshot, and the library tour
    lake = Lake.init(tmp_path / "lake")
    generate_demo(lake.inbox, seed=7)
    assert lake.ingest(as_of=DEMO_AS_OF).as_dict()["files"] >= 6
    enforce_tiers(lake, DEMO_AS_OF)  # within capacity, so that the demo publishes ("Loading the export" reads it)
    assert lake.publish(as_of=DEMO_AS_OF).details["version"] == "v1"
    monkeypatch.chdir(tmp_path)  # the examples name the lake "lake", relative to here

    namespace: dict = {}
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"README.md python block {number}", "exec"), namespace)

    # What the examples did, seen in the lake: the snapshot of block 1 was ingested by block 2,
    # whose edit made it important, and the conflict it resolved is no longer open.
    pref = lake.sql("SELECT tenant, user_id, tier, status FROM memories WHERE id = 'pref-7'").to_dicts()
    assert pref == [{"tenant": "acme", "user_id": "alice", "tier": "important", "status": "active"}]
    assert namespace["report"].as_dict()["ingested"] == 1
    assert namespace["lake"].last_read is not None
    assert len(namespace["memories"]) > 50 and {m["user_id"] for m in namespace["memories"]} == {"u-alice"}
