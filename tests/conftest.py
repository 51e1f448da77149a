"""Shared fixtures: every test gets a fresh lake in its own temporary folder."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Prefect keeps its state in a folder the test run owns, never ~/.prefect.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="memory-lake-prefect-")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
# A worker of `make test` (two xdist workers on two cores) runs torch on one thread: with torch's
# default of one thread per core, each worker's embeddings contended with the other worker for
# both cores (the demo's first nightly 64 s against 34 s, 600 texts through MiniLM 43 s against
# 14 s, with another busy process beside it). The warm Python does the same (tests/warm.py).
# Set before torch is imported, so that its child processes (a command run as its own process)
# inherit it; a single-process run keeps torch's default.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)

from memory_lake import Lake  # noqa: E402
from memory_lake.demo import (DemoData, DemoSearches, NightData, demo_searches, generate_demo,  # noqa: E402
                              generate_night, night_as_of)
from memory_lake.store import resolve_as_of  # noqa: E402

AS_OF = datetime(2026, 11, 30, 0, 0, 0)


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect API for the whole session (it takes ~20-30 s to start)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def warm_python():
    """A warm Python per test worker (tests/warm.py): a child process that runs the code under test
    with the stack imported and the models loaded, for tests whose subject is a separate process."""
    from .warm import WarmPython

    server = WarmPython(code_env())
    yield server
    server.close()


CLI_MAIN = "import sys\nfrom memory_lake.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def cli_process(warm, *args: str, env: dict[str, str] | None = None, timeout: float = 300):
    """`memory-lake ARGS` as its own process (exit code, stdout and stderr of a real process, the
    lock of a real process), forked from the warm Python: the console script's entry point without
    its 2-30 s of start-up. The console script itself runs in `test_console_script_*` and the
    README journey."""
    return warm.run(CLI_MAIN, *args, env=env, timeout=timeout)


# Tests that start Prefect or the warm Python are of the whole suite, not of the edit loop
# (`make test-fast` leaves out `slow` and `process`).
PROCESS_FIXTURES = {"prefect_harness", "warm_python"}
# Fixtures built with the embedding models (a lake after a nightly, a module's embedded pairs or
# queries): their tests are `models` tests, whichever test happens to build the fixture first.
MODEL_FIXTURES = {"first_night", "three_nights", "fourteen_nights", "nights_lake_dir", "nights_copy",  # this file, tests/notebooks/conftest.py
                  "demo_lake_dir", "demo_copy",       # tests/publish/conftest.py
                  "pairs_lake",                       # tests/maintain/test_dedup_thresholds.py
                  "judge",                            # tests/maintain/test_dedup_paraphrase.py
                  "zh_lake", "measured"}              # tests/search/test_retrieval_zh.py


# Expensive state a test shares with others (a lake built once per run, a process started once per
# worker): the tests that use it share an xdist group, so that under `make test` one worker builds or
# starts it once while the other runs other tests (split between the workers, it was built, or waited
# for, on both: 4 min of the 15 of a run went to that). First match wins; a file's own
# `xdist_group` mark is kept. (`first_night` alone, the publish tests' demo lake, is not grouped:
# the group "notebooks" builds it first thing.) A test with none of these that uses a module-scoped
# fixture shares a group with the rest of its module, for the same reason (`_group`). A process
# started per worker comes first: a test of the demo nights under Prefect (tests/demo/test_nights.py)
# in the group "notebooks" started a second Prefect API (~10 s of CPU) whenever the group "prefect"
# ran on the other worker, while a lake built once per run is only read by the other worker.
GROUP_FIXTURES = {"prefect_harness": "prefect", "warm_python": "warm",
                  "three_nights": "notebooks", "fourteen_nights": "notebooks", "nights_lake_dir": "notebooks"}


def _group(item, fixtures: set[str]) -> str | None:
    group = next((g for f, g in GROUP_FIXTURES.items() if f in fixtures), None)
    if group:
        return group
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if any(d and d[-1].scope == "module" for d in (defs.get(name) for name in fixtures)):
        return item.nodeid.split("::")[0]
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if PROCESS_FIXTURES & fixtures:
            item.add_marker(pytest.mark.process)
        if MODEL_FIXTURES & fixtures:
            item.add_marker(pytest.mark.models)
        group = _group(item, fixtures)
        if group and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))
    if getattr(config.option, "loadgroup", False):  # a worker of `--dist loadgroup` (xdist sets it there)
        _schedule_for_loadgroup(items)


def _schedule_for_loadgroup(items) -> None:
    """What `--dist loadgroup` needs from a worker's collection, on pytest 9.

    pytest-xdist groups a test by the ``@group`` suffix it writes into ``item._nodeid``; pytest 9 reads
    a node's id from ``item._id``, so the suffix never reached the scheduler and every group was
    split between the workers. The suffix is written where pytest 9 reads it (unless some version
    already wrote it). And the `slow` tests go first: the scheduler hands out the groups, largest
    first, then single tests in collection order, so a minute-long test collected last would run
    alone at the end of the run while the other worker waits."""
    from _pytest.nodeid import NodeId

    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: otherwise as collected


# A test that runs an embedding model (loads one, or embeds with one) carries the `models` mark
# (or `slow` or `process`, which the edit loop leaves out as well): `make test-fast` leaves those
# out, so the edit loop loads no model. The mark is checked, not trusted: a test that embeds without
# one fails and says so (under `make test` too, so CI keeps the marks honest). MODEL_USE_LOG=path
# writes every test that embedded, one node id a line.
_MODEL_USE = {"used": False}


def _watch_model_use() -> None:
    from memory_lake.text import models as providers

    def watched(method):
        def call(*args, **kwargs):
            _MODEL_USE["used"] = True
            return method(*args, **kwargs)
        call.__wrapped__ = method
        return call

    for cls in (providers.SentenceTransformerProvider, providers.UniversalSentenceEncoderProvider,
                providers.E5Provider):
        for name in ("__init__", "embed", "embed_queries"):
            if name in vars(cls) and not hasattr(vars(cls)[name], "__wrapped__"):
                setattr(cls, name, watched(vars(cls)[name]))


# The session's embedding cache. The demo's first night embeds ~900 texts with both models, and
# several tests run that night again on a lake of their own (the nightly under Prefect, `demo` from
# the CLI, the PII scenario...), each embedding the same texts once more. What a model's `embed`
# returns is kept for the rest of the run, in a SQLite file in the run's shared temporary folder (both
# xdist workers read what either wrote), keyed on the model, the batch size and the text:
# - a call of BULK texts or more (an index step's) is kept text by text: a later call gets, for each
#   text, the vector the model made of that exact text (within float rounding of another batch's
#   padding, as any index run's), and the model embeds only the texts not seen yet (a lake's salted
#   PII placeholders make a few texts of each lake its own);
# - a smaller call (the dedup guard's phrases, a test's own few texts) is kept whole, keyed on every
#   text in order: it gets exactly what the model computed for that very call.
# Queries (`embed_queries`) are not kept. A call still counts as model use (the watch below wraps
# the cache). Off under `make mutate` (MUTANT_UNDER_TEST) and with MEMORY_LAKE_TEST_EMBED_CACHE=0.
EMBED_CACHE_BULK = 16


class _EmbeddingStore:
    """Keyed arrays in one SQLite file, shared by processes (each opens its own connection)."""

    def __init__(self, path: Path):
        import sqlite3
        import threading

        import fcntl

        self.path, self._lock = path, threading.Lock()
        self._con = sqlite3.connect(path, timeout=120, isolation_level=None, check_same_thread=False)
        # Both workers open the file at once: switching it to WAL and creating the table answered
        # "database is locked" at once to the second (SQLite does not wait there), so one at a time.
        with open(path.with_name(path.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._con.execute("PRAGMA journal_mode = WAL")
            self._con.execute("CREATE TABLE IF NOT EXISTS kept (key TEXT PRIMARY KEY, vectors BLOB, unknown BLOB)")
        self._con.execute("PRAGMA synchronous = OFF")  # a run's scratch: a crash loses only the cache

    def get(self, keys: list[str]) -> dict[str, tuple]:
        import numpy as np

        found = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = keys[start:start + 500]
                found.update((k, (v, u)) for k, v, u in self._con.execute(
                    f"SELECT key, vectors, unknown FROM kept WHERE key IN ({','.join('?' * len(part))})", part))
        return {k: (np.load(io.BytesIO(v)), np.load(io.BytesIO(u))) for k, (v, u) in found.items()}

    def put(self, items: dict[str, tuple]) -> None:
        import numpy as np

        def blob(array) -> bytes:
            out = io.BytesIO()
            np.save(out, np.asarray(array), allow_pickle=False)
            return out.getvalue()

        with self._lock:
            self._con.executemany("INSERT OR IGNORE INTO kept VALUES (?, ?, ?)",
                                  [(k, blob(v), blob(u)) for k, (v, u) in items.items()])


_EMBED_CACHE: dict[str, _EmbeddingStore | None] = {"store": None}


def _cache_embeddings() -> None:
    import hashlib

    import numpy as np

    from memory_lake.text import models as providers

    def digest(*parts) -> str:
        return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()

    def cached(method):
        def call(self, texts, batch_size, *args, **kwargs):
            store = _EMBED_CACHE["store"]
            if store is None:
                return method(self, texts, batch_size, *args, **kwargs)
            texts, model = list(texts), (type(self).__name__, self.name, batch_size)
            if len(texts) < EMBED_CACHE_BULK:
                key = digest(*model, texts)
                found = store.get([key])
                if key in found:
                    return providers.Embedded(*found[key])
                out = method(self, texts, batch_size, *args, **kwargs)
                store.put({key: (out.vectors, out.unknown)})
                return out
            keys = [digest(*model, text) for text in texts]
            found = store.get(list(dict.fromkeys(keys)))
            todo = {k: t for k, t in zip(keys, texts) if k not in found}
            if todo:
                out = method(self, list(todo.values()), batch_size, *args, **kwargs)
                made = {k: (v, u) for k, v, u in zip(todo, out.vectors, out.unknown)}
                store.put(made)
                found.update(made)
            return providers.Embedded(np.stack([found[k][0] for k in keys]),
                                      np.array([found[k][1] for k in keys], dtype=np.float64))
        call.embedding_cache = True
        return call

    for cls in (providers.SentenceTransformerProvider, providers.UniversalSentenceEncoderProvider,
                providers.E5Provider):
        embed = vars(cls).get("embed")
        if embed is not None and not getattr(embed, "embedding_cache", False) and not hasattr(embed, "__wrapped__"):
            setattr(cls, "embed", cached(embed))


_cache_embeddings()
_watch_model_use()


@pytest.fixture(scope="session", autouse=True)
def _embedding_cache(tmp_path_factory):
    """Switch the session's embedding cache on (see `_cache_embeddings`), in the run's shared folder."""
    if os.environ.get("MUTANT_UNDER_TEST") or os.environ.get("MEMORY_LAKE_TEST_EMBED_CACHE") == "0":
        yield None
        return
    base = tmp_path_factory.getbasetemp()
    folder = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    _EMBED_CACHE["store"] = store = _EmbeddingStore(folder / "embedding-cache.sqlite")
    try:
        yield store
    finally:
        _EMBED_CACHE["store"] = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    _MODEL_USE["used"] = False  # a fixture that embeds (a lake after a nightly) counts for its test
    yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield  # a test that failed on its own is reported as it failed
    if not _MODEL_USE["used"]:
        return result
    log = os.environ.get("MODEL_USE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(item.nodeid + "\n")
    elif not any(item.get_closest_marker(mark) for mark in ("models", "slow", "process")):
        pytest.fail(f"{item.nodeid} runs an embedding model but is not marked `models`: add "
                    f"@pytest.mark.models (make test-fast leaves such tests out; make test runs them)", pytrace=False)
    return result


@pytest.fixture(scope="session")
def new_lake_dir(tmp_path_factory) -> Path:
    """A lake as `Lake.open(path, create=True)` leaves it, made once per worker (creating the schema
    took ~0.2 s, in some 500 tests); read-only, `lake` gives each test its copy."""
    return Lake.open(tmp_path_factory.mktemp("new") / "lake", create=True).root


@pytest.fixture
def lake(new_lake_dir: Path, tmp_path: Path) -> Lake:
    """A new lake of the test's own at tmp_path / "lake" (a copy of `new_lake_dir`)."""
    return copy_lake(new_lake_dir, tmp_path / "lake")


def copy_lake(source: Path, target: Path) -> Lake:
    """A test's own copy of a lake built once (a folder copy is milliseconds; building it is seconds)."""
    shutil.copytree(source, target, symlinks=True)
    return Lake.open(target)


def write_jsonl(path: Path, records: list, raw_lines: dict[int, str] | None = None) -> Path:
    """Write records as JSON Lines; `raw_lines` puts literal text at given 1-based line numbers."""
    lines = [json.dumps(r, ensure_ascii=False) if not isinstance(r, str) else r for r in records]
    for line_no, text in sorted((raw_lines or {}).items()):
        lines.insert(line_no - 1, text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def signed_by_user(lake, path: Path) -> Path:
    """`path` renamed as a user's edit names its snapshot: signed with the lake's key, so its
    ``operator: user`` counts (issue 37.4; an unsigned file's counts as an agent's)."""
    from memory_lake.store import keys

    target = path.with_name(f"{path.stem}{keys.USER_MARK}{lake.sign(path.read_bytes())}{path.suffix}")
    path.rename(target)
    return target


def unsigned(lake, decision: dict) -> dict:
    """A queued decision without its signature, after checking the signature is the lake's (37.4)."""
    from memory_lake.maintain.queue import canonical_decision

    fields = {k: v for k, v in decision.items() if k != "signature"}
    assert lake.signed(canonical_decision({k: v for k, v in fields.items() if k != "failure"}), decision.get("signature"))
    return fields


def user_claims(records: list) -> bool:
    return any(isinstance(r, dict) and r.get("operator") == "user" for r in records)


# A plain ASCII locale without Python's UTF-8 mode (cron's POSIX on a host without C.UTF-8
# coercion): for a child process that must not depend on the locale's encoding.
ASCII_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "PYTHONIOENCODING": "utf-8"}


def code_env(**extra: str) -> dict[str, str]:
    """The environment for a child Python process that must run the code under test: the folder
    this process imported `memory_lake` from comes first on its path (a checkout, an installed
    copy, or the mutants folder of `make mutate`, which only this process's sys.path names)."""
    import memory_lake

    return {**os.environ, "PYTHONPATH": str(Path(memory_lake.__file__).resolve().parents[1]), **extra}


def rows(lake: Lake, query: str, params=None) -> list[dict]:
    """Rows of a read, as a test inspects a lake: every table, the PII salts too (`Lake.sql`, the
    user's query, refuses to read those)."""
    return lake.read(query, params).frame.to_dicts()


@contextlib.contextmanager
def held_by_another_process(lake, seconds: float = 60):
    """A real second process holding the lake for a run (`Lake.hold`, as `run nightly` does) for at
    most `seconds`; yields its pid once it holds the lock, and kills it on exit.

    The process is a fork of this one (milliseconds; a new Python importing the stack took 2-5 s at
    each of some 30 call sites). The child only takes the ``flock`` and sleeps: it touches no
    DuckDB, Polars or torch, whose worker threads do not survive a fork. The lock is the kernel's, so
    the other process is as real to the lake as a `run nightly` would be."""
    root = lake if isinstance(lake, (str, os.PathLike)) else lake.root  # a Path has a .root too ("/")
    holder = Lake.open(root)  # opened here: the child must not open a database
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: hold, say so, sleep; never return into pytest
        code = 1
        try:
            os.close(read)
            with holder.hold("nightly run"):
                os.write(write, b"held\n")
                time.sleep(seconds)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    try:
        with os.fdopen(read, "rb") as said:
            assert said.readline().strip() == b"held", "the lock-holding child ended before it held the lake"
        yield pid
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


# ------------------------------------------------------------------ the demo lake after three nights
# (tests/demo, tests/notebooks: one build per session, on the worker of the xdist group "nights")
NIGHTS = 3  # nights of the session's demo lake (`three_nights`)


@dataclass(frozen=True)
class Nights:
    """A demo lake after its nights, and what each night planted, searched and reported."""

    root: Path
    first: DemoData
    later: dict[int, NightData]  # night -> what generate_night wrote
    searches: dict[int, DemoSearches]  # night -> the searches of its day (made before the next night)
    runs: dict[int, dict]  # night -> the run summary
    seconds: dict[int, float]  # night -> wall time of its searches, files and run


def build_nights(root: Path, nights: int = NIGHTS, seed: int = 7, after: Nights | None = None) -> Nights:
    """Build the demo lake at `root` over `nights` nights (see the module docstring); with `after`
    (a copy of whose lake is at `root`), only the nights after its last."""
    lake = Lake.open(root) if after else Lake.init(root)
    later, searches, runs, seconds = ({**after.later}, {**after.searches}, {**after.runs}, {**after.seconds}) if after \
        else ({}, {}, {}, {})
    first = after.first if after else None
    for night in range(len(runs) + 1, nights + 1):
        start = time.perf_counter()
        if night == 1:
            first = generate_demo(lake.inbox, seed=seed)
        else:
            searches[night - 1] = demo_searches(lake, night - 1)
            later[night] = generate_night(lake.inbox, night, seed=seed)
        from memory_lake.observe.runs import run_nightly_steps

        runs[night] = run_nightly_steps(lake, resolve_as_of(night_as_of(night)), reports_dir=root.parent / "reports")
        seconds[night] = round(time.perf_counter() - start, 1)
    return Nights(root=root, first=first, later=later, searches=searches, runs=runs, seconds=seconds)


def _built_once(tmp_path_factory, name: str, build):
    """`build(folder)` once per run across xdist workers: the first worker to ask builds it under a
    lock in the run's shared temporary folder, the others read what it built."""
    import fcntl
    import pickle

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return build(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent / name
    shared.mkdir(exist_ok=True)
    with open(shared / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = shared / "built.pickle"
        if built.exists():
            return pickle.loads(built.read_bytes())
        result = build(shared)
        built.write_bytes(pickle.dumps(result))
        return result


@pytest.fixture(scope="session")
def fourteen_nights(tmp_path_factory, three_nights) -> Nights:
    """The demo lake after 14 nights (issue 40's simulation): a copy of `three_nights` with its
    reports, then nights 4 to 14, each after a day of searches. Built once per run; read-only."""
    return _nights_after(tmp_path_factory, "demo-fourteen", three_nights, 14)


def _nights_after(tmp_path_factory, name: str, before: Nights, nights: int) -> Nights:
    """A copy of `before`'s lake with its reports, then its nights up to `nights`; built once per run."""
    def build(folder: Path) -> Nights:
        shutil.copytree(before.root, folder / "lake", symlinks=True)  # exports/CURRENT stays a link
        shutil.copytree(before.root.parent / "reports", folder / "reports")
        return build_nights(folder / "lake", nights, after=before)

    return _built_once(tmp_path_factory, name, build)


@pytest.fixture(scope="session")
def first_night(tmp_path_factory) -> Nights:
    """The demo lake after its first night (seed 7, published v1), built once per run: the start of
    `three_nights`, and the publish tests' `demo_lake_dir`. Read-only."""
    return _built_once(tmp_path_factory, "demo-first-night", lambda folder: build_nights(folder / "lake", 1))


@pytest.fixture(scope="session")
def three_nights(tmp_path_factory, first_night) -> Nights:
    """Built once per run, whatever the xdist worker: the first worker to ask builds it under a
    lock in the run's shared temporary folder, the other reads what it built (its tests share the
    xdist group "notebooks", GROUP_FIXTURES, so the other seldom has to wait). Treat it as read-only."""
    return _nights_after(tmp_path_factory, "demo-nights", first_night, NIGHTS)
