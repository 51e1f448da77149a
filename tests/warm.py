"""A warm Python for tests whose subject is a separate process (a kill, a lock, an exit code).

Starting a child Python that runs the nightly costs 15-30 s here before it does anything: it
imports the stack and loads both embedding models. `WarmPython` pays that once per test worker: one
server process imports `memory_lake`, loads the models and opens nothing else (no lake, no DuckDB
database), then forks a child for every call. Each child is a real, separate process with its own
pid, its own file descriptors and locks, killed by a real SIGKILL at a crash point; the server only
saved it the start-up.

torch runs with one thread in the server: a fork of a process whose torch (OpenMP) thread pool
has started hangs the child's first embedding (seen here), while a single-threaded torch forks
safely. Under `make test` two workers share two cores, so one thread each is what they would get
anyway.

The server runs the code this process imported (`conftest.code_env`), so under `make mutate` a
child runs the mutant, and each call passes the caller's environment.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SERVER = r'''
import contextlib, json, os, sys, time, traceback, signal
import torch
torch.set_num_threads(1)
import memory_lake, memory_lake.cli  # noqa: F401  the whole stack, as a command would import it
if os.environ.get("WARM_MODELS", "1") == "1":
    # What the steps load on first use, loaded here so that no child pays for it again: both models,
    # jieba, every word list a module keeps in a one-entry cache (CC-CEDICT alone is ~10 s), the
    # entity step's jieba, Great Expectations. (vl-convert's engine cannot be: a child forked after
    # its first chart hangs on its own, so each child that writes a report starts it, ~0.5 s.)
    # Nothing here may start a worker pool (Polars', DuckDB's, torch's): a child forked after one has
    # started hangs on its first parallel operation (seen here with a whole warm-up nightly), which
    # the self-check of WarmPython.__init__ would catch.
    import functools, inspect
    from memory_lake.search.embeddings import encode, models
    from memory_lake.text.models import get_provider
    from memory_lake.text import jieba_segmenter
    from memory_lake.store.policy import Policy
    from memory_lake.maintain import dedup, summaries  # noqa: F401  their word lists, warmed below
    from memory_lake.text import lexicon  # noqa: F401
    import great_expectations  # noqa: F401
    for name in models(Policy()):
        encode(get_provider(name), ["warm up", "预热"], 8)
    jieba_segmenter()
    from memory_lake.maintain.entities import chinese as entity_chinese
    for module in [m for name, m in sorted(sys.modules.items()) if name.startswith("memory_lake")]:
        for value in list(vars(module).values()):
            if (isinstance(value, functools._lru_cache_wrapper) and value.cache_parameters()["maxsize"] == 1
                    and not inspect.signature(value).parameters):
                value()
    # the entity step's own jieba with its part-of-speech tags, for the default policy's user
    # dictionary (1.9 s of every child's nightly when the child loaded it)
    entity_chinese._chinese_tokenizer(tuple(Policy().entities.user_dict))
print("ready", flush=True)
running = {}
for line in sys.stdin:
    call = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            out = os.open(call["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            err = os.open(call["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(out, 1); os.dup2(err, 2)
            null = os.open(os.devnull, os.O_RDONLY); os.dup2(null, 0)
            sys.stdin = open(os.devnull)
            os.environ.clear(); os.environ.update(call["env"])
            os.chdir(call["cwd"])
            sys.argv = ["-c", *call["argv"]]
            try:
                exec(compile(call["code"], "<warm child>", "exec"), {"__name__": "__main__"})
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if not isinstance(exc.code, (int, type(None))):
                    print(exc.code, file=sys.stderr)
            except BaseException:
                traceback.print_exc()
                code = 1
            sys.stdout.flush(); sys.stderr.flush()
        finally:
            os._exit(code)
    if call.get("wait", True):
        deadline, timed_out = time.monotonic() + call["timeout"], False
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline and not timed_out:
                os.kill(pid, signal.SIGKILL); timed_out = True
            time.sleep(0.005)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(json.dumps({"pid": pid, "returncode": code, "timed_out": timed_out}), flush=True)
    else:
        running[pid] = True
        print(json.dumps({"pid": pid}), flush=True)
    for child in list(running):  # reap the background children that ended
        try:
            done, _ = os.waitpid(child, os.WNOHANG)
        except ChildProcessError:
            done = child
        if done:
            running.pop(child, None)
'''


# A child must be able to use every pool the steps use (a hang here means the server started one).
SELF_CHECK = """
import duckdb, polars as pl
from memory_lake.search.embeddings import encode, models
from memory_lake.text.models import get_provider
from memory_lake.store.policy import Policy
frame = pl.DataFrame({"a": list(range(200_000))}).with_columns(b=pl.col("a") % 7)
assert frame.group_by("b").agg(pl.len()).height == 7
assert duckdb.connect().execute("SELECT count(*) FROM range(1000000)").fetchone() == (1_000_000,)
for name in models(Policy()):
    encode(get_provider(name), ["a child embeds", "子进程"], 8)
print("ok")
"""


@dataclass
class Finished:
    """What `subprocess.run(..., capture_output=True, text=True)` would have returned."""
    args: list[str]
    returncode: int
    stdout: str
    stderr: str


class WarmPython:
    """One warm server process; `run(code, *argv)` runs `code` as ``python -c code argv...`` would,
    in a forked child, and returns its exit code (negative: killed by that signal) and output."""

    def __init__(self, env: dict[str, str], models: bool = True):
        self._dir = Path(tempfile.mkdtemp(prefix="memory-lake-warm-"))
        self._env = env
        self._calls = 0
        self._server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env={**env, "WARM_MODELS": "1" if models else "0"})
        ready = self._server.stdout.readline().strip()
        if ready != "ready":
            self.close()
            raise RuntimeError(f"the warm Python did not start (said {ready!r}); run it by hand: python -c SERVER")
        check = self.run(SELF_CHECK, timeout=120)
        if check.returncode != 0 or check.stdout.strip() != "ok":
            self.close()
            raise RuntimeError(f"a child of the warm Python cannot run Polars, DuckDB and torch: {check}")

    def _call(self, code: str, argv, env, cwd, wait: bool, timeout: float = 300) -> tuple[dict, Path, Path]:
        self._calls += 1
        out, err = self._dir / f"{self._calls}.out", self._dir / f"{self._calls}.err"
        call = {"code": code, "argv": [str(a) for a in argv], "env": env,
                "cwd": str(cwd or os.getcwd()), "stdout": str(out), "stderr": str(err), "wait": wait,
                "timeout": timeout}
        self._server.stdin.write(json.dumps(call) + "\n")
        self._server.stdin.flush()
        answer = self._server.stdout.readline()
        if not answer:
            raise RuntimeError("the warm Python ended; see the test's stderr")
        return json.loads(answer), out, err

    def run(self, code: str, *argv, env: dict[str, str] | None = None, cwd=None,
            remove_env: tuple[str, ...] = (), timeout: float = 300) -> Finished:
        """Run to the end. `env` is added to the server's environment, `remove_env` taken out of it."""
        full = {k: v for k, v in {**self._env, **(env or {})}.items() if k not in remove_env}
        answer, out, err = self._call(code, argv, full, cwd, wait=True, timeout=timeout)
        if answer["timed_out"]:
            raise subprocess.TimeoutExpired([sys.executable, "-c", code, *map(str, argv)], timeout,
                                            out.read_text(errors="replace"), err.read_text(errors="replace"))
        return Finished([sys.executable, "-c", code, *map(str, argv)], answer["returncode"],
                        out.read_text(encoding="utf-8", errors="replace"), err.read_text(encoding="utf-8", errors="replace"))

    def start(self, code: str, *argv, env: dict[str, str] | None = None, cwd=None) -> "Child":
        """Start in the background; the caller ends it (`Child.kill`)."""
        answer, out, err = self._call(code, argv, {**self._env, **(env or {})}, cwd, wait=False)
        return Child(answer["pid"], out, err)

    def close(self) -> None:
        if self._server.poll() is None:
            self._server.stdin.close()
            try:
                self._server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._server.kill()
                self._server.wait()
        self._server.stdout.close()


@dataclass
class Child:
    pid: int
    stdout_path: Path
    stderr_path: Path

    def wait_for_line(self, text: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.stdout_path.read_text(encoding="utf-8", errors="replace").splitlines():
                return
            if not _alive(self.pid):
                break
            time.sleep(0.02)
        raise AssertionError(f"the child never printed {text!r}: {self.stderr_path.read_text(errors='replace')[-2000:]}")

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped by the server) counts as ended
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return True
