"""The demo lake after its first night (seed 7, published v1), built once per run without Prefect
(the session's `first_night`, tests/conftest.py); a test takes its own copy (`demo_copy`) to plant a
defect in."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lake import Lake

from ..conftest import copy_lake


@pytest.fixture(scope="session")
def demo_lake_dir(first_night) -> Path:
    """The lake of `first_night` (its nightly: generate_demo, then run_nightly_steps at DEMO_AS_OF);
    read-only, `demo_copy` to write."""
    assert first_night.runs[1]["publish"]["version"] == "v1", first_night.runs[1]
    return first_night.root


@pytest.fixture
def demo_copy(demo_lake_dir, tmp_path) -> Lake:
    return copy_lake(demo_lake_dir, tmp_path / "lake")
