"""The demo lake after its first night (seed 7, published v1), built once per session without
Prefect; a test takes its own copy (`demo_copy`) to plant a defect in."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lake import Lake
from memory_lake.demo import DEMO_AS_OF, generate_demo
from memory_lake.observe.runs import run_nightly_steps

from ..conftest import copy_lake


@pytest.fixture(scope="session")
def demo_lake_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("demo") / "lake"
    lake = Lake.init(root)
    generate_demo(lake.inbox, seed=7)
    summary = run_nightly_steps(lake, DEMO_AS_OF, reports_dir=root.parent / "reports")
    assert summary["publish"]["version"] == "v1", summary
    return root


@pytest.fixture
def demo_copy(demo_lake_dir, tmp_path) -> Lake:
    return copy_lake(demo_lake_dir, tmp_path / "lake")
