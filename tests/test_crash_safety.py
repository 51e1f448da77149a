"""Crash safety (issue 14 item 5): a nightly run killed with SIGKILL at any point, then re-run with
the same as_of, leaves the lake as an uninterrupted run does.

The nightly's library steps run in a separate process (a child of the warm Python, tests/warm.py)
through ``run_nightly_steps`` (the steps the flow wires, in order; no Prefect), inside ``lake.hold``. The process kills itself
(``memory_lake.store.crash_point``) after each step returns, and inside ingest (after one file's transaction committed), dedup (after the merge
transaction, before its cleanup log) and publish (staging written; renamed to ``v<N>``; CURRENT
switched, before the publish is recorded). Then: the kernel released the lock, a re-run converges
to the tables of an uninterrupted run on an identical lake, CURRENT resolves to a complete version
and no staging folder is left.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
from pathlib import Path

import duckdb
import pytest

from memory_lake import Lake
from memory_lake.demo import generate_demo
from memory_lake.observe import NIGHTLY_STEPS
from memory_lake.store import CRASH_AT_ENV

AS_OF = "2026-11-30T03:02:00Z"

# The nightly run's steps (NIGHTLY_STEPS, the list the flow wires); the subprocess runs them with
# `run_nightly_steps`, which passes a crash point after each step, after the run's record and after
# the compaction.
STEPS = (*(step.name for step in NIGHTLY_STEPS), "record_run", "compact_database")

NIGHTLY = r"""
import sys
from memory_lake import Lake
from memory_lake.observe import run_nightly_steps
from memory_lake.store import resolve_as_of

run_nightly_steps(Lake.open(sys.argv[1]), resolve_as_of(sys.argv[2]), sys.argv[3])
print("done")
"""

CRASH_POINTS = [f"after:{s}" for s in STEPS] + [
    "ingest:file-committed", "dedup:merged", "publish:staged", "publish:renamed", "publish:switched"]

# Columns that legitimately differ between two runs of the same night, and why:
EXCLUDED = {
    # a run id is random per run (lake.new_run_id); a re-run is a new run by design
    "run_id", "replayed_run_id",
    # wall-clock durations measure the machine, not the data
    "duration_s",
}
# Columns of one table that legitimately differ, and why: `dedup_scopes.settled` says whether a
# scope's plan merged nothing (maintain/dedup/settled.py). A scope merged by dedup stays unsettled
# until a dedup plans it again and merges nothing: the re-run of a run killed after dedup is that
# second dedup, an uninterrupted run leaves it to the next night. The digests must still match.
TABLE_EXCLUDED = {"dedup_scopes": {"settled"}}
# Whole columns whose values embed a run id or a timing inside a JSON document, with the keys dropped.
JSON_DROP = {"run_id", "duration_s", "per_step"}
# `runs` is a log of processes, not lake state: a run killed before its record leaves no row, one
# killed after it (in compact_database) is complete and its re-run adds another; and its `report` is
# the re-run's own account of the work it did (less, after a kill). So only the latest nightly
# row's kind, as_of and status are compared.
LOG_TABLES = {"runs"}
LOG_EXCLUDED = {"report"}
# `publishes` logs every publish attempt: a run killed after its publish re-runs to an 'unchanged'
# row (nothing new to publish) that an uninterrupted run does not write; the versions published
# (status 'published' or 'blocked') must be the same.
ATTEMPT_LOGS = {"publishes": "status <> 'unchanged'"}
# Rows compared of a table that also describes the logs above: `export_files` (publish/kept.py) holds a
# digest of every exported table, the log tables among them, so its table rows differ with the logs;
# its scope rows (a digest of each scope's published rows) must be the same.
ROWS_COMPARED = {**ATTEMPT_LOGS, "export_files": "kind = 'scope'"}


def run_nightly(warm, lake_dir: Path, reports: Path, crash_at: str | None = None):
    """The nightly in a separate process (a child of the warm Python, tests/warm.py: the stack and
    models already loaded, so a case costs the run, not 15-30 s of start-up per process)."""
    return warm.run(NIGHTLY, lake_dir, AS_OF, reports, env={CRASH_AT_ENV: crash_at} if crash_at else None,
                    remove_env=() if crash_at else (CRASH_AT_ENV,), timeout=300)


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in JSON_DROP}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return _strip(json.loads(value))
        except ValueError:
            return value
    return value


def tables(lake_dir: Path) -> dict[str, list]:
    """Every table of the lake, rows sorted, without the columns of EXCLUDED."""
    con = duckdb.connect(str(lake_dir / "lake.duckdb"), read_only=True)
    try:
        out = {}
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE' "
            "ORDER BY 1").fetchall()]  # the views (store/views.py) read these tables
        for name in names:
            cols = [r[0] for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = 'main' "
                "ORDER BY ordinal_position", [name]).fetchall()]
            kept = [c for c in cols if c not in EXCLUDED and not (name in LOG_TABLES and c in LOG_EXCLUDED)
                    and c not in TABLE_EXCLUDED.get(name, ())]
            query = f'SELECT {", ".join(chr(34) + c + chr(34) for c in kept)} FROM "{name}"'
            if name in ROWS_COMPARED:
                query += f" WHERE {ROWS_COMPARED[name]}"
            if name in LOG_TABLES:
                query += " WHERE kind = 'nightly' ORDER BY as_of DESC LIMIT 1"
            rows = [tuple(json.dumps(_strip(v), sort_keys=True, default=str) for v in row)
                    for row in con.execute(query).fetchall()]
            out[name] = (kept, sorted(rows))
        return out
    finally:
        con.close()


def assert_current_complete(lake_dir: Path) -> str:
    exports = lake_dir / "exports"
    current = (exports / "CURRENT").resolve()
    manifest = json.loads((current / "manifest.json").read_text(encoding="utf-8"))
    files = {str(p.relative_to(current)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(current.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    assert manifest["files"] == files
    assert manifest["version"] == current.name
    assert not list(exports.glob(".staging-*"))
    return current.name


def _tenants(inbox: Path) -> set[str]:
    found: set[str] = set()

    def walk(value):
        if isinstance(value, dict):
            if isinstance(value.get("tenant"), str):
                found.add(value["tenant"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for path in (p for p in inbox.iterdir() if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        for chunk in [text] + text.splitlines():
            try:
                walk(json.loads(chunk))
            except ValueError:
                pass
    return found


# The lines of the demo's 0002-globex-ops.jsonl (seed 7, 0-based) the base lake keeps besides its
# first 40: the partners of its two exact duplicates (114, 175), the memories its contradictions
# are filed on (12, 38, 66, 171, 176, 183, 232), its bad line (53) and two with PII (a card
# number, a phone: 63, 64). A quarter of the file exercises every step as the whole did, in 1.8 s
# a nightly instead of 3 (`reference` checks that a merge, contradictions, a quarantined line and
# redacted PII are still there).
KEPT_LINES = {12, 38, 53, 63, 64, 66, 114, 171, 175, 176, 183, 232}


@pytest.fixture(scope="module")
def base_lake(tmp_path_factory) -> Path:
    """A small lake with part of the demo in its inbox (duplicates, contradictions, PII, a bad line,
    a save file), its tenants' salts already made so that copies redact alike."""
    root = tmp_path_factory.mktemp("base") / "lake"
    lake = Lake.init(root)
    demo = tmp_path_factory.mktemp("demo")
    generate_demo(demo, seed=7)
    lines = (demo / "0002-globex-ops.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for n, line in enumerate(lines) if n < 40 or n in KEPT_LINES]
    (lake.inbox / "0002-globex-ops.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    shutil.copy(demo / "0005-orchestrator-save.json", lake.inbox / "0005-orchestrator-save.json")
    with lake.writer(purpose="test salts"):  # salts are made under the write lock
        lake.tenant_salts(sorted(_tenants(lake.inbox)))
    return root


@pytest.fixture(scope="module")
def reference(base_lake, tmp_path_factory, warm_python) -> tuple[dict, str]:
    lake_dir = tmp_path_factory.mktemp("reference") / "lake"
    shutil.copytree(base_lake, lake_dir, symlinks=True)
    done = run_nightly(warm_python, lake_dir, lake_dir.parent / "reports")
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr
    # the small lake still exercises what a crash must not break: a merge, contradictions, a
    # quarantined line, redacted PII
    with duckdb.connect(str(lake_dir / "lake.duckdb"), read_only=True) as con:
        found = con.execute("SELECT (SELECT count(*) FROM dedup_merges), (SELECT count(*) FROM conflicts), "
                            "(SELECT count(*) FROM quarantine), (SELECT count(*) FROM memories "
                            "WHERE regexp_matches(content, '\\[[A-Z_]+:[0-9a-f]+\\]'))").fetchone()
    assert all(found), found
    return tables(lake_dir), assert_current_complete(lake_dir)


@pytest.mark.parametrize("crash_at", CRASH_POINTS)
def test_a_killed_nightly_reruns_to_the_state_of_an_uninterrupted_one(crash_at, base_lake, reference, tmp_path,
                                                                      warm_python):
    lake_dir = tmp_path / "lake"
    shutil.copytree(base_lake, lake_dir, symlinks=True)
    reports = tmp_path / "reports"

    killed = run_nightly(warm_python, lake_dir, reports, crash_at=crash_at)
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr[-2000:])
    assert "done" not in killed.stdout

    # the kernel released the lock with the process: a new writer gets it at once
    with Lake.open(lake_dir).hold("after the crash", wait_s=0):
        pass

    rerun = run_nightly(warm_python, lake_dir, reports)
    assert rerun.returncode == 0 and rerun.stdout.strip() == "done", rerun.stderr[-2000:]
    expected_tables, expected_version = reference
    got = tables(lake_dir)
    assert sorted(got) == sorted(expected_tables)
    for name in expected_tables:
        assert got[name] == expected_tables[name], name
    assert assert_current_complete(lake_dir) == expected_version
