"""Scheduling: the deployments of `prefect.yaml` (the one place their names, entrypoints and cron
strings live) registered with a Prefect server (`memory-lake deploy`) or served from this process
(`memory-lake serve-flows`), and a probe of whether any Prefect API answers at all."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
PREFECT_YAML = ROOT / "prefect.yaml"
WORK_POOL = "memory-lake"


@dataclass(frozen=True)
class DeploymentSpec:
    """One deployment of prefect.yaml: its flow's entrypoint, cron string and fixed parameters."""

    name: str
    entrypoint: str
    cron: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)

    def load_flow(self):
        path, name = self.entrypoint.split(":")
        return getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), name)


def deployment_specs(path: Path = PREFECT_YAML) -> list[DeploymentSpec]:
    """The deployments of prefect.yaml; parameters templated from the environment (lake_dir) are
    left to the caller."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    specs = []
    for item in config["deployments"]:
        (schedule,) = item["schedules"]
        fixed = {k: v for k, v in (item.get("parameters") or {}).items() if not str(v).startswith("{{")}
        specs.append(DeploymentSpec(item["name"], item["entrypoint"], schedule["cron"], item.get("description", ""), fixed))
    return specs


def _check(lake_dir: str, timezone: str) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from memory_lake.observe import lake_for_run

    lake_for_run(lake_dir)  # absolute, and a lake is there
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        from memory_lake.store import InputError

        raise InputError(f"unknown time zone {timezone!r}; give an IANA name such as Europe/Berlin or UTC") from exc


def ensure_work_pool(name: str = WORK_POOL) -> bool:
    """Create the process work pool `name` unless it exists; True when it was created."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists
    from prefect.workers.process import ProcessWorker

    with get_client(sync_client=True) as client:
        try:
            client.create_work_pool(WorkPoolCreate(name=name, type="process",
                                                   base_job_template=ProcessWorker.get_default_base_job_template()))
        except ObjectAlreadyExists:
            return False
    return True


def deploy_all(lake_dir: str, timezone: str, reports_dir: str | None = None, pool: str = WORK_POOL) -> list[str]:
    """Prepare a Prefect server: the work pool, then every deployment of prefect.yaml against the
    absolute `lake_dir`, its cron read in `timezone`. Idempotent (a second call updates). Returns
    the deployments' full names."""
    from prefect.schedules import Cron

    _check(lake_dir, timezone)
    ensure_work_pool(pool)
    names = []
    for spec in deployment_specs():
        source_flow = spec.load_flow().from_source(source=str(ROOT), entrypoint=spec.entrypoint)
        parameters = {**spec.parameters, "lake_dir": lake_dir}
        if reports_dir and spec.name == "nightly":
            parameters["reports_dir"] = reports_dir
        source_flow.deploy(name=spec.name, work_pool_name=pool, description=spec.description,
                           schedules=[Cron(spec.cron, timezone=timezone)], parameters=parameters,
                           print_next_steps=False)
        names.append(f"{source_flow.name}/{spec.name}")
    return names


def worker_deployments() -> list[str]:
    """The deployments of prefect.yaml's names that a worker runs (they have a work pool: `memory-lake
    deploy` made them), as ``flow/name (pool)``."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    found = []
    with get_client(sync_client=True) as client:
        for spec in deployment_specs():
            name = f"{spec.load_flow().name}/{spec.name}"
            try:
                deployment = client.read_deployment_by_name(name)
            except ObjectNotFound:
                continue
            if deployment.work_pool_name:
                found.append(f"{name} (work pool {deployment.work_pool_name})")
    return found


def serve_all(lake_dir: str, timezone: str, reports_dir: str | None = None) -> None:
    """Run every deployment of prefect.yaml on its schedule from this process (no work pool).
    Refused while deployments of the same names run on a work pool: serve() would take them over
    and pause them when it stops (the 03:02 run would silently disappear), and both would run."""
    from prefect import serve
    from prefect.schedules import Cron

    from memory_lake.store import InputError

    _check(lake_dir, timezone)
    taken = worker_deployments()
    if taken:
        raise InputError(
            f"not serving: {', '.join(taken)} already run on a worker (memory-lake deploy made them); serving "
            f"the same names here would take them over and pause them when this process stops, and every job "
            f"would run twice. Keep the worker (prefect worker start --pool memory-lake), or delete those "
            f"deployments first (prefect deployment delete NAME) to serve from this process instead")
    deployments = []
    for spec in deployment_specs():
        parameters = {**spec.parameters, "lake_dir": lake_dir}
        if reports_dir and spec.name == "nightly":
            parameters["reports_dir"] = reports_dir
        deployments.append(spec.load_flow().to_deployment(name=spec.name, description=spec.description,
                                                          schedules=[Cron(spec.cron, timezone=timezone)],
                                                          parameters=parameters))
    serve(*deployments)


def api_reachable() -> str | None:
    """None when a Prefect API answers (the configured one, or the temporary one Prefect starts);
    else why not, in one line."""
    try:
        from prefect.client.orchestration import get_client

        with get_client(sync_client=True) as client:
            problem = client.api_healthcheck()
    except Exception as exc:  # start-up timeout, refused connection, bad URL: all mean "no API"
        problem = exc
    if problem is None:
        return None
    return (f"{type(problem).__name__}: " + ((str(problem).strip().splitlines() or [""])[0])).strip()
