"""Every wait for the lake's lock honours $MEMORY_LAKE_WAIT_S (store/lake.py `write_wait_s`), with
one message and exit 3; a read that needs the live lake says what is true while a version is
published; a rollback never undoes a version published while it waited. Each test holds the lake
from a real second process, as `run nightly` does."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from memory_lake import Lake
from memory_lake.cli import main

from ..conftest import AS_OF, cli_process, copy_lake, held_by_another_process, rows, write_jsonl

CLI = str(Path(sys.executable).parent / "memory-lake")


def published_lake(tmp_path: Path, versions: int = 2) -> Lake:
    """A lake with `versions` published versions (CURRENT the newest)."""
    lake = Lake.init(tmp_path / "lake")
    for day in range(versions):
        lake.ingest([write_jsonl(tmp_path / f"d{day}.jsonl", [
            {"id": f"m-{day}", "tenant": "acme", "agent_id": "bot", "user_id": "alice",
             "content": f"note number {day} about tea", "created_at": "2026-11-01T00:00:00Z"}])],
            as_of=AS_OF + timedelta(days=day))
        assert lake.publish(as_of=AS_OF + timedelta(days=day)).details["version"] == f"v{day + 1}"
    return lake


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory) -> Path:
    """`published_lake` with v1 and v2, built once per module (~1.5 s of CPU); a test takes a copy."""
    return published_lake(tmp_path_factory.mktemp("published")).root


@pytest.fixture
def cli(warm_python):
    """`memory-lake ARGS` in its own process (forked from the warm Python), waiting `wait` s."""
    return lambda *args, wait: cli_process(warm_python, *args, env={"MEMORY_LAKE_WAIT_S": wait}, timeout=120)


@pytest.mark.parametrize("command", [["publish"], ["backup", "{tmp}/bk1"], ["rollback", "--reason", "test"]])
def test_publish_backup_and_rollback_wait_only_memory_lake_wait_s(two_versions, tmp_path, command, cli):
    """Finding 5: with MEMORY_LAKE_WAIT_S=2 these said "waiting up to 600 s" and waited for the whole
    run; ingest and index gave up after 2 s with exit 3."""
    lake = copy_lake(two_versions, tmp_path / "lake")
    args = [a.format(tmp=tmp_path) for a in command]
    with held_by_another_process(lake, seconds=90) as pid:
        started = time.monotonic()
        proc = cli("--lake", str(lake.root), *args, wait="1")
        took = time.monotonic() - started
        ingest = cli("--lake", str(lake.root), "ingest", wait="1")
    assert took < 30, took  # start-up included; the holder keeps the lake for 90 s
    assert proc.returncode == ingest.returncode == 3, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"lake busy: pid {pid} (nightly run) holds the write lock; waiting up to 1 s for it (MEMORY_LAKE_WAIT_S sets how long)",
        f"error: lake {lake.root} is busy: pid {pid} (nightly run) holds the write lock; try again when it finishes",
    ]
    assert proc.stderr == ingest.stderr  # the same words as ingest
    assert os.readlink(lake.exports / "CURRENT") == "v2" and not (tmp_path / "bk1").exists()


def test_a_read_that_needs_the_live_lake_waits_and_names_the_published_version(two_versions, tmp_path, cli):
    """Finding 9: `dedup --dry-run` during a run said "nothing is published yet" while v2 was
    published (its live-only read borrowed the message of `sql`'s no-published-version case) and
    did not wait at all."""
    lake = copy_lake(two_versions, tmp_path / "lake")
    with held_by_another_process(lake, seconds=90) as pid:
        dry = cli("--lake", str(lake.root), "dedup", "--dry-run", wait="1")
        summary = cli("--lake", str(lake.root), "sql", "SELECT count(*) AS n FROM memories", wait="1")
    assert dry.returncode == 3 and dry.stdout == ""
    assert dry.stderr.splitlines() == [
        f"lake busy: pid {pid} (nightly run) holds the write lock; waiting up to 1 s for it (MEMORY_LAKE_WAIT_S sets how long)",
        f"error: lake {lake.root} is busy: pid {pid} (nightly run) holds the write lock, and this command needs the "
        "live lake (published v2 cannot answer it); try again when it finishes",
    ]
    # a read that a published version can answer still answers from it, at once
    assert summary.returncode == 0 and summary.stderr == (
        "note: the lake is busy (a run holds it); answered from published v2\n")


def test_a_read_before_anything_is_published_still_says_so(tmp_path, cli):
    lake = Lake.init(tmp_path / "lake")
    with held_by_another_process(lake, seconds=90) as pid:
        proc = cli("--lake", str(lake.root), "sql", "SELECT 1", wait="1")
    assert proc.returncode == 3
    assert proc.stderr == (f"error: lake {lake.root} is busy: pid {pid} (nightly run) is writing and nothing is "
                           "published yet to read from; try again when it finishes\n")


def test_a_dry_run_waits_for_the_run_then_answers_live(two_versions, tmp_path, capsys, monkeypatch):
    """In this process (a command started as a new process may take longer than the 3 s hold to
    import, and then finds the lake free)."""
    lake = copy_lake(two_versions, tmp_path / "lake")
    monkeypatch.setenv("MEMORY_LAKE_WAIT_S", "60")
    with held_by_another_process(lake, seconds=3) as pid:
        started = time.monotonic()
        code = main(["--lake", str(lake.root), "--json", "dedup", "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert time.monotonic() - started >= 2  # it waited for the holder
    assert err == (f"lake busy: pid {pid} (nightly run) holds the write lock; waiting up to 60 s for it "
                   "(MEMORY_LAKE_WAIT_S sets how long)\n")
    assert '"dry_run": true' in out, out


HOLD_THEN_PUBLISH = """
import sys
from datetime import timedelta
from memory_lake import Lake
from tests.conftest import AS_OF, write_jsonl
lake = Lake.open(sys.argv[1])
with lake.hold('nightly run'):
    print('held', flush=True)
    sys.stdin.readline()  # the test says when the rollback is waiting
    lake.ingest([write_jsonl(lake.root.parent / 'night.jsonl', [
        {'id': 'm-night', 'tenant': 'acme', 'agent_id': 'bot', 'user_id': 'alice',
         'content': 'a new note of the night', 'created_at': '2026-11-01T00:00:00Z'}])], as_of=AS_OF + timedelta(days=5))
    print(lake.publish(as_of=AS_OF + timedelta(days=5)).details['version'], flush=True)
"""


@pytest.mark.parametrize("version", [[], ["v1"]])
@pytest.mark.process  # starts a process (the subject here)
def test_a_rollback_never_undoes_a_version_published_while_it_waited(two_versions, tmp_path, version, cli):
    """Finding 5: CURRENT was v2 when the rollback was typed; it waited, the run published v3, and
    the rollback then undid v3 (`CURRENT v3 -> v2`)."""
    lake = copy_lake(two_versions, tmp_path / "lake")
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": repo + os.pathsep + os.environ.get("PYTHONPATH", "")}
    holder = subprocess.Popen([sys.executable, "-c", HOLD_THEN_PUBLISH, str(lake.root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env, cwd=repo)
    try:
        assert holder.stdout.readline().strip() == "held"
        rollback = subprocess.Popen([CLI, "--lake", str(lake.root), "rollback", *version, "--reason", "test"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env={**os.environ, "MEMORY_LAKE_WAIT_S": "120"})
        assert rollback.stderr.readline().startswith(f"lake busy: pid {holder.pid} (nightly run) holds the write lock")
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "v3"
        out, err = rollback.communicate(timeout=120)
    finally:
        holder.kill()
        holder.wait()
    assert rollback.returncode == 2 and out == ""
    assert err == ("error: CURRENT moved from v2 to v3 while this rollback waited for the lake (a run published it): "
                   "nothing rolled back; check `memory-lake publishes` and run rollback again if v3 should go too\n")
    assert os.readlink(lake.exports / "CURRENT") == "v3"
    assert rows(lake, "SELECT count(*) AS n FROM rollbacks") == [{"n": 0}]
    # asked again, with v3 seen, it rolls back as asked
    again = cli("--lake", str(lake.root), "rollback", *version, "--reason", "test", wait="1")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"CURRENT v3 -> {version[0] if version else 'v2'} ")


@pytest.mark.parametrize("value", ["abc", "-1", "nan"])
def test_a_bad_memory_lake_wait_s_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, value):
    lake = Lake.init(tmp_path / "lake")
    monkeypatch.setenv("MEMORY_LAKE_WAIT_S", value)
    code = main(["--lake", str(lake.root), "publish"])
    assert (code, capsys.readouterr().err) == (2, f"error: MEMORY_LAKE_WAIT_S={value!r} is not a number of seconds: "
                                                  "set it to e.g. 30 (0 = do not wait), or unset it to wait up to 600 s\n")


def test_forget_reads_memory_lake_wait_s_too(tmp_path, capsys, monkeypatch):
    """Stranger's leftover: forget waited its own 10 s whatever MEMORY_LAKE_WAIT_S said; a bad
    value is now the same one line, and a good one is the wait."""
    from memory_lake.maintain import forget

    lake = published_lake(tmp_path, versions=1)
    monkeypatch.setenv("MEMORY_LAKE_WAIT_S", "abc")
    code = main(["--lake", str(lake.root), "forget", "m-0", "--reason", "test"])
    assert (code, capsys.readouterr().err) == (2, "error: MEMORY_LAKE_WAIT_S='abc' is not a number of seconds: "
                                                  "set it to e.g. 30 (0 = do not wait), or unset it to wait up to 10 s\n")
    monkeypatch.setenv("MEMORY_LAKE_WAIT_S", "0")
    assert forget(lake, ids=["m-0"], reason="test", as_of=AS_OF + timedelta(days=2))["forgotten"] == ["m-0"]
