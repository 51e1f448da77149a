"""The guard on more than one core (maintain/dedup/helpers.py): a plan whose pairs are judged partly
by helper processes is the plan judged in one process, and a helper that dies costs time, not a
verdict."""

from __future__ import annotations

import os
import signal

import polars as pl
import pytest

from memory_lake.maintain.dedup import find_duplicates
from memory_lake.maintain.dedup import helpers as guard_helpers
from memory_lake.maintain.dedup.helpers import GuardHelpers
from memory_lake.store.policy import Policy

from ..conftest import AS_OF

# spawns a helper (it loads the dictionaries and the models itself)
pytestmark = [pytest.mark.process, pytest.mark.models]

TEMPLATES = [
    "{name} moved the {thing} review to {day}.", "{name} moved the {thing} review to {day} afternoon.",
    "The {thing} budget is ${n}00 for {name}.", "The {thing} budget is ${m}00 for {name}.",
    "{name} does not like the new {thing} dashboard.", "{name} likes the new {thing} dashboard.",
    "{name} bought a new couch for the office.", "{name} bought a new sofa for the office.",
    "{name_zh}每周{zh_day}检查{thing_zh}的账单。", "{name_zh}每周{zh_day}检查{thing_zh}的帐单。",
    "{name_zh}不喜欢{thing_zh}的新界面。", "{name_zh}喜欢{thing_zh}的新界面。",
]
SLOTS = [("Alice", "王芳", "billing service", "账单服务", "Monday", "一", 5, 6),
         ("Bob", "李雷", "search index", "搜索索引", "Friday", "三", 3, 9),
         ("Chen", "张伟", "mobile app", "移动应用", "Tuesday", "五", 7, 7)]


def _frame() -> pl.DataFrame:
    """Three scopes of chat-like memories: rewordings, changed values, negations, other names, in
    English and Chinese; every scope holds the others' names too, so names differ within a scope."""
    records = []
    for scope in range(3):
        for k, (name, name_zh, thing, thing_zh, day, zh_day, n, m) in enumerate(SLOTS):
            for i, template in enumerate(TEMPLATES):
                records.append({
                    "id": f"s{scope}-{k}-{i}", "tenant": "t", "agent_id": "bot", "user_id": f"u{scope}",
                    "type": "fact", "tags": [], "importance": 0.5, "created_at": AS_OF, "covered": False,
                    "content": template.format(name=name, name_zh=name_zh, thing=thing, thing_zh=thing_zh,
                                               day=day, zh_day=zh_day, n=n + scope, m=m + scope)})
    return pl.DataFrame(records, schema_overrides={"tags": pl.List(pl.String)})


def _same(plan, other) -> None:
    assert plan.merges.sort(pl.all()).to_dicts() == other.merges.sort(pl.all()).to_dicts()
    assert plan.contradictions.sort(pl.all()).to_dicts() == other.contradictions.sort(pl.all()).to_dicts()
    assert sorted(map(repr, plan.apart)) == sorted(map(repr, other.apart))
    assert (plan.candidates, plan.different, plan.left_out, plan.errors) == (
        other.candidates, other.different, other.left_out, other.errors)


def test_helpers_give_the_plan_of_one_process_and_survive_a_dead_helper(monkeypatch):
    frame, policy = _frame(), Policy()
    alone = find_duplicates(frame, None, policy)
    assert alone.merges.height and alone.contradictions.height and alone.different  # every kind of verdict
    # a test-sized batch is handed to a helper a few pairs at a time
    monkeypatch.setattr(guard_helpers, "HELPER_MIN_PAIRS", 1)
    monkeypatch.setattr(guard_helpers, "CHUNK_PAIRS", 3)
    two = Policy().with_overrides({"dedup": {"guard_processes": 2}})
    with GuardHelpers(two, two.dedup.paraphrase_window) as helpers:
        assert helpers.count == 1
        shared = find_duplicates(frame, None, two, helpers=helpers)
        assert helpers.judged > 0  # the helper judged some of the pairs
        _same(shared, alone)
        for pid in list(helpers.pool._processes):  # the helper dies: this process judges its pairs
            os.kill(pid, signal.SIGKILL)
        judged = helpers.judged
        after = find_duplicates(frame, None, two, helpers=helpers)
        assert helpers.judged == judged
        _same(after, alone)


def test_one_process_or_a_small_batch_starts_no_helper():
    frame = _frame()
    one = Policy().with_overrides({"dedup": {"guard_processes": 1}})
    with GuardHelpers(one, 3) as helpers:
        assert helpers.count == 0
        find_duplicates(frame, None, one, helpers=helpers)
        assert helpers._pool is None
    with GuardHelpers(Policy().with_overrides({"dedup": {"guard_processes": 2}}), 3) as helpers:
        find_duplicates(frame, None, Policy(), helpers=helpers)  # fewer pairs than HELPER_MIN_PAIRS
        assert helpers._pool is None and helpers.judged == 0


SCRIPT = '''
print("top level of the script", flush=True)
import polars as pl
from memory_lake.maintain.dedup import find_duplicates, helpers
from memory_lake.store.policy import Policy
helpers.HELPER_MIN_PAIRS, helpers.CHUNK_PAIRS = 1, 2
texts = [f"The billing budget for team {t} is ${n}00 this year." for t in ("red", "blue") for n in range(1, 6)]
frame = pl.DataFrame([{"id": f"m{i}", "tenant": "t", "agent_id": None, "user_id": None, "type": "fact", "tags": [],
                       "content": x, "importance": 0.5, "created_at": "2026-12-01T00:00:00Z", "covered": False}
                      for i, x in enumerate(texts)],
                     schema_overrides={"tags": pl.List(pl.String), "agent_id": pl.String, "user_id": pl.String})
policy = Policy().with_overrides({"dedup": {"guard_processes": 2}})
with helpers.GuardHelpers(policy, 3) as started:
    plan = find_duplicates(frame, None, policy, helpers=started)
    print("judged by a helper:", started.judged > 0, "contradictions:", plan.contradictions.height, flush=True)
'''


def test_a_script_without_a_main_guard_is_not_run_again_by_its_helpers(tmp_path):
    """A spawned process runs its parent's __main__ again unless the script guards its work: the
    helpers start with __main__ hidden, so a plain script (an analyst's, with an ingest and a lock
    at the top) runs once."""
    import subprocess
    import sys

    script = tmp_path / "nightly_dedup.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["top level of the script", "judged by a helper: True contradictions: 34"]


def _running(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper has ended)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in status)
    except FileNotFoundError:
        return False


def test_a_helper_ends_when_its_step_is_killed(tmp_path):
    """A nightly run killed mid-dedup (kill -9, a crash) leaves no helper behind holding its models."""
    import subprocess
    import sys
    import time

    script = tmp_path / "killed.py"
    script.write_text(SCRIPT + '''
    import os, signal
    print(*started.pool._processes, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
''')
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == -9
    helpers_pids = [int(pid) for pid in done.stdout.splitlines()[-1].split()]
    assert helpers_pids
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in helpers_pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_running(pid) for pid in helpers_pids)
