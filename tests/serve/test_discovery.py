"""Issue 38.5: how `memory-lake search` and `context` find a running `serve` of their lake
(``<lake>/.serve.json``). From a stranger's findings: two servers of one lake overwrote each other's
entry (the first to stop hid the other), and a server that requires a token was skipped without a word."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memory_lake.cli import main
from memory_lake.serve import Service, announce, create_app, running_server, serve_in_thread, withdraw

from ..conftest import copy_lake

HOLD = ("import sys, time; from memory_lake.serve import announce; announce(sys.argv[1], sys.argv[2]); "
        "print('ready', flush=True); time.sleep(120)")


def test_two_servers_of_one_lake_are_both_found_and_the_first_to_stop_does_not_hide_the_other(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    # another process's server (the pid is what tells a live server from a dead one's entry)
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(root), "http://127.0.0.1:8766"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "ready"
        announce(root, "http://127.0.0.1:8765")
        listed = json.loads((root / ".serve.json").read_text())
        assert listed == {"servers": [{"url": "http://127.0.0.1:8766", "pid": other.pid, "token": False},
                                      {"url": "http://127.0.0.1:8765", "pid": _pid(), "token": False}]}
        assert running_server(root) == "http://127.0.0.1:8766"  # the first that started
        other.kill()
        other.wait()
        assert running_server(root) == "http://127.0.0.1:8765"  # the dead one's entry is passed over
        withdraw(root)
        assert not (root / ".serve.json").exists()              # the last entry takes the file with it
        assert running_server(root) is None
    finally:
        other.kill()
        other.wait()


def test_an_old_single_server_file_and_a_broken_one_are_read_without_failing(tmp_path):
    (tmp_path / ".serve.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": _pid()}))
    assert running_server(tmp_path) == "http://127.0.0.1:9"
    (tmp_path / ".serve.json").write_text("{not json")
    assert running_server(tmp_path) is None
    announce(tmp_path, "http://127.0.0.1:10")  # a broken file is replaced, not a crash
    assert running_server(tmp_path) == "http://127.0.0.1:10"
    withdraw(tmp_path)


@pytest.mark.models
def test_a_server_that_requires_a_token_is_named_when_the_command_has_none(published_dir, tmp_path, capsys, monkeypatch):
    lake = copy_lake(published_dir, tmp_path / "lake")
    monkeypatch.delenv("MEMORY_LAKE_TOKEN", raising=False)
    argv = ["--lake", str(lake.root), "--json", "search", "dark mode editor", "--tenant", "acme", "--mode", "keyword"]
    with serve_in_thread(create_app(Service(lake.root), token="s3cret-t0ken")) as url:
        announce(lake.root, url.rstrip("/"), token=True)
        try:
            assert main(argv) == 0
            out = capsys.readouterr()
            assert "answered by memory-lake serve" not in out.out  # answered here
            assert json.loads(out.out)["results"][0]["id"] == "pref-1"
            assert out.err.strip().endswith(
                f"memory-lake serve runs for this lake at {url.rstrip('/')} but requires its token (set "
                "MEMORY_LAKE_TOKEN to use it); answering here instead (slower: the models load in this command)")
            monkeypatch.setenv("MEMORY_LAKE_TOKEN", "s3cret-t0ken")
            assert main(argv) == 0
            assert json.loads(capsys.readouterr().out)["notes"][-1] == "answered by memory-lake serve from published v1"
        finally:
            withdraw(lake.root)


def _pid() -> int:
    import os

    return os.getpid()
