"""The daily patrol (seed 000 示例三 记忆健康度巡检, 心跳任务每天): read the health alerts, move the
oldest working and short_term memories of scopes above 85 % of capacity, report the advice.

The flow only wires the library step; `memory-lake patrol` gives the same result without Prefect.
"""

from __future__ import annotations

from prefect import flow, task

from memory_lake.observe import lake_for_run
from memory_lake.observe import patrol as patrol_step
from memory_lake.store import iso, resolve_as_of


@task(name="patrol")
def run_patrol(lake_dir: str, as_of: str) -> dict:
    """The patrol on a freshly opened lake; returns its report (JSON-ready)."""
    return patrol_step(lake_for_run(lake_dir), resolve_as_of(as_of)).as_dict()


@flow(name="patrol", log_prints=True)
def patrol(lake_dir: str, as_of: str | None = None) -> dict:
    """The health patrol of `<lake_dir>` (lake_dir: absolute path of an existing lake; as_of: now,
    taken once)."""
    lake_for_run(lake_dir)  # a relative or missing lake fails here, before any task
    report = run_patrol(lake_dir, iso(resolve_as_of(as_of)))
    print(report["details"]["final"])
    for advice in report["details"]["advice"]:
        print(f"advice [{advice['level']}] {advice['code']}: {advice['message']} → {advice['action']}")
    return report
