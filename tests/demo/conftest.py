"""The demo lake after three nights (seed 7), built once per session without Prefect, as
`memory-lake demo` builds it: night 1 on `generate_demo`, then for nights 2 and 3 the searches of the
day before, `generate_night` and the nightly run. Tests that change it work on a copy."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory_lake import Lake
from memory_lake.demo import DemoData, DemoSearches, NightData, demo_searches, generate_demo, generate_night, night_as_of
from memory_lake.observe.runs import run_nightly_steps
from memory_lake.store import resolve_as_of

NIGHTS = 3


@dataclass(frozen=True)
class Nights:
    """A demo lake after its nights, and what each night planted, searched and reported."""

    root: Path
    first: DemoData
    later: dict[int, NightData]  # night -> what generate_night wrote
    searches: dict[int, DemoSearches]  # night -> the searches of its day (made before the next night)
    runs: dict[int, dict]  # night -> the run summary
    seconds: dict[int, float]  # night -> wall time of its searches, files and run


def build_nights(root: Path, nights: int = NIGHTS, seed: int = 7) -> Nights:
    """Build the demo lake at `root` over `nights` nights (see the module docstring)."""
    lake = Lake.init(root)
    later, searches, runs, seconds = {}, {}, {}, {}
    first = None
    for night in range(1, nights + 1):
        start = time.perf_counter()
        if night == 1:
            first = generate_demo(lake.inbox, seed=seed)
        else:
            searches[night - 1] = demo_searches(lake, night - 1)
            later[night] = generate_night(lake.inbox, night, seed=seed)
        runs[night] = run_nightly_steps(lake, resolve_as_of(night_as_of(night)), reports_dir=root.parent / "reports")
        seconds[night] = round(time.perf_counter() - start, 1)
    return Nights(root=root, first=first, later=later, searches=searches, runs=runs, seconds=seconds)


@pytest.fixture(scope="session")
def three_nights(tmp_path_factory) -> Nights:
    return build_nights(tmp_path_factory.mktemp("demo-nights") / "lake")
