"""The lake: a folder holding the inbox, raw copies, events, a DuckDB file and exports.

One process writes at a time. The write lock is an advisory ``flock`` on ``<lake>/.lock`` whose
content names the holder, so a second writer gets a clear message. Readers never hold a
connection: they open the DuckDB file read-only, query and close. While a writer holds the lake,
reads answer from the latest published export (``exports/CURRENT``), or say the lake is busy.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from . import keys, schema
from .errors import InputError, LakeBusy, LakeNotFound, MemoryLakeError
from .policy import Policy, load_policy

DEFAULT_LAKE_DIR = "lake"
LAKE_ENV = "MEMORY_LAKE_DIR"
DB_FILE = "lake.duckdb"
LOCK_FILE = ".lock"
SUBDIRS = ("inbox", "inbox/decisions", "raw", "events", "exports")
# DESIGN "The way data flows": the run retries the write lock for a while, then fails clearly.
DEFAULT_WRITE_WAIT_S = 600.0
# How long every wait for the lake's lock lasts (a writer, or a read that needs the live file), in
# seconds; unset means DEFAULT_WRITE_WAIT_S. Read where the lock is taken (`write_wait_s`), so
# every command honours it, not only those that pass it on.
WAIT_ENV = "MEMORY_LAKE_WAIT_S"


def write_wait_s(default: float = DEFAULT_WRITE_WAIT_S) -> float:
    """Seconds a wait for the lake's lock lasts: $MEMORY_LAKE_WAIT_S, else `default`. A value that
    is not a number of seconds >= 0 is an InputError (a typo never means "wait forever")."""
    raw = os.environ.get(WAIT_ENV, "").strip()
    if not raw:
        return default
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise InputError(f"{WAIT_ENV}={raw!r} is not a number of seconds: set it to e.g. 30 (0 = do not wait), "
                         f"or unset it to wait up to {default:.0f} s")
    return seconds


def resolve_lake_dir(path: str | os.PathLike | None) -> Path:
    """The lake folder: the argument, else $MEMORY_LAKE_DIR, else ./lake."""
    chosen = path if path not in (None, "") else os.environ.get(LAKE_ENV) or DEFAULT_LAKE_DIR
    return Path(chosen).expanduser().resolve()


def is_lake(path: str | os.PathLike) -> bool:
    """Whether `path` is a lake's folder (it holds the lake's database); reads nothing else."""
    return (Path(path) / DB_FILE).is_file()


def lake_not_found(root: Path, instead: str = f"point --lake (or ${LAKE_ENV}) at an existing lake") -> LakeNotFound:
    """The one "no lake at PATH" error: what is missing, how to create one, and `instead` (what the
    caller may pass in its place)."""
    inside = next((parent for parent in Path(root).resolve().parents if is_lake(parent)), None)
    if inside is not None:
        # `--lake mine/inbox`: a folder inside a lake is no place for another one
        return LakeNotFound(f"no lake at {root}: it is inside the lake {inside}; did you mean `--lake {inside}`?")
    return LakeNotFound(f"no lake at {root}: create one with `memory-lake init --lake {root}`, or {instead}")


@dataclass
class ReadResult:
    """Rows of a read, and where they came from (the live file or a published version)."""

    frame: pl.DataFrame
    source: str  # "live" or "published v<N>"
    note: str | None = None


@dataclass(frozen=True)
class ReadSource:
    """Where a read came from: ``live`` (the DuckDB file), or ``published v<N>`` while a run holds
    the lake, with a note that says so."""

    source: str
    note: str | None = None

    @property
    def published(self) -> bool:
        return self.source != "live"


# The most memory DuckDB may hold for a lake file (its cache of the file's blocks and its operators;
# beyond it, it evicts and spills to `<file>.tmp`): $MEMORY_LAKE_DUCKDB_MEMORY, e.g. "8GB", or
# "default" for DuckDB's own (80 % of the machine's RAM). A nightly run holds one connection from
# step to step, and with DuckDB's own limit its cache grew to 8.6 GB over a night of the 1M-memory
# lake; with 4 GB the same night peaked at 5.9 GB (helpers included) for the same CPU (issue 42).
MEMORY_ENV = "MEMORY_LAKE_DUCKDB_MEMORY"
DEFAULT_DUCKDB_MEMORY = "4GB"


def duckdb_memory() -> str | None:
    """DuckDB's memory limit for a lake file ($MEMORY_LAKE_DUCKDB_MEMORY, else 4GB); None: DuckDB's
    own. A value DuckDB does not read as an amount of memory is an InputError."""
    raw = os.environ.get(MEMORY_ENV, "").strip() or DEFAULT_DUCKDB_MEMORY
    if raw.lower() == "default":
        return None
    if not re.fullmatch(r"\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)", raw, re.IGNORECASE):
        raise InputError(f"{MEMORY_ENV}={raw!r} is not an amount of memory: set it to e.g. 8GB, or to "
                         f"'default' for DuckDB's own limit (80 % of RAM); unset, it is {DEFAULT_DUCKDB_MEMORY}")
    return raw


def connect(path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the lake's session settings (UTC, no progress bar noise, and for a
    lake file the memory limit of `duckdb_memory`)."""
    limit = duckdb_memory() if str(path) != ":memory:" else None
    con = duckdb.connect(str(path), read_only=read_only)
    # A progress bar printed to stdout would corrupt `--json` output. (Inside Jupyter DuckDB refuses
    # to change the setting without ipywidgets; there it does not print to stdout anyway.) A
    # sealed reader of this process may share the database and have locked its settings: they
    # are the lake's already.
    settings = ["SET TimeZone = 'UTC'", "SET enable_progress_bar = false"] + (
        [f"SET memory_limit = '{limit}'"] if limit else [])
    for setting in settings:
        try:
            con.execute(setting)
        except duckdb.InvalidInputException:
            pass
    return con


def seal(con: duckdb.DuckDBPyConnection, allowed_paths: Sequence[Path] = ()) -> duckdb.DuckDBPyConnection:
    """Close a read connection to the world outside the lake's tables: no file, network or
    extension access (except `allowed_paths`, the published files a busy-time view reads), and the
    configuration locked so a query cannot turn it back on."""
    if allowed_paths:
        con.execute("SET allowed_paths = ?", [[str(p) for p in allowed_paths]])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def table_files(version_dir: Path) -> dict[str, list[Path]]:
    """The lake tables an export version folder holds, by name: ``tables/<name>.parquet``, or the
    parts of a table written in parts (``tables/<name>/<part>.parquet``, in name order; see
    ``publish.export.PARTED``). ``memories.parquet`` is not among them."""
    folder = Path(version_dir) / "tables"
    files = {p.stem: [p] for p in folder.glob("*.parquet") if p.is_file()}
    for sub in (p for p in folder.glob("*") if p.is_dir()):
        parts = sorted(sub.glob("*.parquet"))
        if parts:
            files[sub.name] = parts
    return dict(sorted(files.items()))


def parquet_sql(paths: Sequence[Path]) -> str:
    """SQL that reads `paths` (a table's file or its parts) as one table."""
    return "read_parquet([" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "])"


def published_views(con: duckdb.DuckDBPyConnection, version_dir: Path) -> list[Path]:
    """A view per table of an export version folder (``memories`` and `table_files`), with the
    lake's naive UTC timestamps (exports store UTC-aware ones, the export contract); returns the
    files the views read."""
    tables = {"memories": [Path(version_dir) / "memories.parquet"]} | table_files(version_dir)
    read: list[Path] = []
    for name, files in tables.items():
        if not all(f.exists() for f in files):
            continue
        source = parquet_sql(files)
        columns = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
        naive = ", ".join(f'"{c}"::{t.replace("TIMESTAMP WITH TIME ZONE", "TIMESTAMP")} AS "{c}"'
                          for c, t, *_ in columns if "TIMESTAMP WITH TIME ZONE" in t)
        select = f"* REPLACE ({naive})" if naive else "*"
        con.execute(f'CREATE OR REPLACE VIEW "{name}" AS SELECT {select} FROM {source}')
        read += files
    return read


# What `Lake.sql` and `memory-lake sql` run: one query that reads (DuckDB's own parser says which
# statement it is), on a sealed connection (see `seal`).
READ_STATEMENTS = ("SELECT", "WITH", "FROM", "VALUES", "TABLE", "DESCRIBE", "SHOW", "SUMMARIZE", "(")
READ_ONLY_RULE = "one SELECT (or WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN) over the lake's tables"


def check_read_query(query: str) -> None:
    """Raise InputError unless `query` is a single statement that only reads (see READ_ONLY_RULE)."""
    try:
        statements = duckdb.extract_statements(query)
        tokens = duckdb.tokenize(query)
    except duckdb.Error as exc:
        raise InputError(f"query failed: {str(exc).splitlines()[0]}") from None
    if not statements:
        raise InputError(f"no query given: run {READ_ONLY_RULE}")
    if len(statements) > 1:
        raise InputError(f"sql runs one statement at a time, not {len(statements)}: run {READ_ONLY_RULE}")
    words = [(re.match(r"\(|\w+", query[start:]) or re.match(r"\S+", query[start:]))[0].upper() for start, _ in tokens[:3]]
    while words[:1] in (["EXPLAIN"], ["ANALYZE"]):
        words = words[1:]
    kind = statements[0].type
    if kind not in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN) or not words or words[0] not in READ_STATEMENTS:
        shown = words[0] if words and words[0] not in READ_STATEMENTS else kind.name
        raise InputError(f"sql is read-only: {shown} is not allowed; run {READ_ONLY_RULE}")


# How often an empty lock file is read before the holder is "another process" (0.02 s apart).
HOLDER_READS = 10

# Told once when a write has to wait for another process's lock: ``listener(message)``. The CLI
# prints it on stderr, so a command waiting for a nightly run does not look hung.
WAIT_LISTENERS: list = []

# Table functions a query may call in a process that holds the lake for a run (`Lake.sql` there
# reads through the run's write connection, which cannot be sealed without sealing the run).
HELD_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest", "duckdb_tables", "duckdb_views",
                                  "duckdb_columns", "duckdb_schemas", "duckdb_types", "pragma_table_info"})


def check_held_query(query: str) -> None:
    """Raise InputError when `query` could reach a file (``read_text(...)``, ``FROM 'x.parquet'``,
    ``query(...)``): what sealing forbids on every other connection, refused by the query's tree."""
    with duckdb.connect(":memory:") as con:
        tree = con.execute("SELECT json_serialize_sql(?)", [query]).fetchone()[0]
    called = set(re.findall(r'"type":"TABLE_FUNCTION".*?"function_name":"([^"]*)"', tree))
    files = [n for n in re.findall(r'"table_name":"([^"]*)"', tree) if re.search(r"[./\\:]", n)]
    if json.loads(tree).get("error") or called - HELD_TABLE_FUNCTIONS or files:
        shown = sorted(called - HELD_TABLE_FUNCTIONS) + files
        raise InputError(f"sql reads only the lake's tables: {', '.join(shown) or 'this query'} is not allowed "
                         "in a process that holds the lake for a run")


@dataclass
class _Hold:
    """A run's hold on a lake in this process: nesting depth and the one connection its steps share
    (opening and checkpointing a DuckDB file per step costs more than most steps)."""

    depth: int = 1
    con: duckdb.DuckDBPyConnection | None = None
    use: threading.RLock = field(default_factory=threading.RLock)


# States of database files (`_file_state`) this process found at schema.SCHEMA_VERSION or later.
_SCHEMA_CURRENT: set[tuple] = set()
_SCHEMA_CURRENT_MAX = 4096


def _file_state(db_path: Path) -> tuple | None:
    """The state of a database file and its write-ahead log, as the file system tells it: path,
    device, inode, size, and modification and change times (any write changes them, and a file
    put in its place is another inode with another change time). None when it cannot be read."""
    state: list = [str(db_path)]
    for path in (db_path, db_path.with_name(db_path.name + ".wal")):
        try:
            st = path.stat()
        except FileNotFoundError:
            state.append(None)
            continue
        except OSError:
            return None
        state.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(state) if state[1] is not None else None


# Lakes whose write lock this process holds for a whole run (see Lake.hold).
_HELD: dict[Path, _Hold] = {}
_HELD_GUARD = threading.RLock()


class Lake:
    """A memory lake on disk. ``Lake.init(path)`` (or ``Lake.open(path, create=True)``) creates one;
    ``Lake.open(path)`` opens an existing lake and refuses a path that holds none, so a wrong path or
    working directory never silently becomes a new, empty lake."""

    def __init__(self, root: Path, policy: Policy):
        self.root = root
        self.policy = policy
        self._reads = threading.local()

    # ---------------------------------------------------------------- layout
    @property
    def db_path(self) -> Path:
        return self.root / DB_FILE

    @property
    def inbox(self) -> Path:
        return self.root / "inbox"

    @property
    def decisions(self) -> Path:
        return self.root / "inbox" / "decisions"

    @property
    def raw(self) -> Path:
        return self.root / "raw"

    @property
    def events(self) -> Path:
        return self.root / "events"

    @property
    def exports(self) -> Path:
        return self.root / "exports"

    @property
    def lock_path(self) -> Path:
        return self.root / LOCK_FILE

    # ---------------------------------------------------------------- open
    @classmethod
    def open(
        cls,
        path: str | os.PathLike | None = None,
        *,
        policy_overrides: dict[str, dict[str, Any]] | None = None,
        wait_s: float | None = None,
        create: bool = False,
    ) -> "Lake":
        """Open the lake at `path` (default $MEMORY_LAKE_DIR or ./lake). A path without a lake is an
        error (`LakeNotFound`) unless `create` is true, when the lake is created there. `wait_s`
        (default `write_wait_s()`) bounds the wait for the lock when the lake must be created or
        migrated."""
        root = resolve_lake_dir(path)
        if root.exists() and not root.is_dir():
            raise InputError(f"{root} is a file, not a lake folder")
        if not create and not is_lake(root):
            raise lake_not_found(root)
        for sub in SUBDIRS:
            (root / sub).mkdir(parents=True, exist_ok=True)
        lake = cls(root, load_policy(root, policy_overrides))
        if not lake.db_path.exists() or lake._needs_migration():
            with lake.writer(wait_s=wait_s, purpose="create lake"):
                pass  # writer() migrates
        return lake

    @classmethod
    def init(cls, path: str | os.PathLike | None = None, **kwargs: Any) -> "Lake":
        """Create a lake at `path` (or open the one already there)."""
        return cls.open(path, create=True, **kwargs)

    def _needs_migration(self) -> bool:
        """Whether the database is older than this code's schema. Asked once per state of the file
        in a process (`_file_state`): a connection costs more than most reads, and a process opens
        the same lake many times. A file in any other state (a restored backup, a lake of an older
        version, any write) is asked again."""
        state = _file_state(self.db_path)
        if state is not None and state in _SCHEMA_CURRENT:
            return False
        try:
            with self.reader(wait_s=0) as con:
                (version,) = con.execute("SELECT max(version) FROM schema_migrations").fetchone()
        except LakeBusy:
            return False  # the writer holding it migrates on its own
        except duckdb.CatalogException:
            return True
        if (version or 0) < schema.SCHEMA_VERSION:
            return True
        if state is not None and state == _file_state(self.db_path):  # unchanged while it was read
            if len(_SCHEMA_CURRENT) >= _SCHEMA_CURRENT_MAX:
                _SCHEMA_CURRENT.clear()
            _SCHEMA_CURRENT.add(state)
        return False

    # ---------------------------------------------------------------- locking
    @contextlib.contextmanager
    def _flock(self, exclusive: bool, wait_s: float | None, purpose: str) -> Iterator[None]:
        """The lock on ``.lock``: exclusive for a writer, shared for a live read. It waits up to
        `wait_s` seconds (None: `write_wait_s()`, so $MEMORY_LAKE_WAIT_S bounds every wait), telling
        WAIT_LISTENERS once, then raises LakeBusy naming the holder."""
        wait_s = write_wait_s() if wait_s is None else wait_s
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + wait_s
            waited = False
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LakeBusy(self._busy_message(exclusive)) from None
                    if not waited:
                        waited = True
                        for listener in list(WAIT_LISTENERS):
                            listener(f"{self._holder()} holds the write lock; "
                                     f"waiting up to {wait_s:g} s for it ({WAIT_ENV} sets how long)")
                    time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
            if exclusive:
                holder = {"pid": os.getpid(), "purpose": purpose}
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(holder).encode(), 0)
            try:
                yield
            finally:
                if exclusive:
                    os.ftruncate(fd, 0)
                    self._next_generation()
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _next_generation(self) -> None:
        """Mark that the lake may have changed (every write lock ends with it): readers' caches of
        loaded data (`data_identity`) then load again. File times alone can miss two quick writes."""
        tmp = self.root / f".generation.{os.getpid()}.tmp"
        try:
            tmp.write_text(uuid.uuid4().hex)
            os.replace(tmp, self.root / ".generation")
        except OSError:
            tmp.unlink(missing_ok=True)

    def _holder(self) -> str:
        """Who holds the write lock, as ``pid N (purpose)`` (the lock file names it). A writer names
        itself just after its flock succeeds and clears the name just before letting go, so an empty
        file is read again for a moment before the answer is "another process" (a reader's shared
        lock names nobody)."""
        for attempt in range(HOLDER_READS):
            try:
                holder = json.loads(self.lock_path.read_text() or "{}")
            except (OSError, ValueError):
                holder = {}
            if holder.get("pid"):
                return f"pid {holder['pid']} ({holder.get('purpose', '?')})"
            if attempt + 1 < HOLDER_READS:
                time.sleep(0.02)
        return "another process"

    def _busy_message(self, exclusive: bool) -> str:
        """Why a wait for the lock failed. A writer and a read that needs the live file (`reader`,
        e.g. ``dedup --dry-run``) get the same words, and when a version is published the read's
        says that version cannot answer it; `reading` says "nothing is published yet" itself, the
        one case where that is what stopped it."""
        who = self._holder()
        if exclusive:
            return f"lake {self.root} is busy: {who} holds the write lock; try again when it finishes"
        current = self.exports / "CURRENT"
        published = f" (published {current.resolve().name} cannot answer it)" if current.exists() else ""
        return (f"lake {self.root} is busy: {who} holds the write lock, and this command needs the live lake{published}; "
                "try again when it finishes")

    def is_busy(self) -> bool:
        """True while another process holds the write lock."""
        try:
            with self._flock(exclusive=False, wait_s=0, purpose="probe"):
                return False
        except LakeBusy:
            return True

    def held_here(self) -> bool:
        """True while this process holds the lake for a run (Lake.hold)."""
        return self._hold() is not None

    def _hold(self) -> _Hold | None:
        with _HELD_GUARD:
            return _HELD.get(self.root)

    @contextlib.contextmanager
    def hold(self, purpose: str, wait_s: float | None = None) -> Iterator["Lake"]:
        """Hold the write lock for a whole run: the steps inside share it and one connection, other
        writers wait (up to `wait_s`, default `write_wait_s()`), and other processes' reads answer
        from the latest published version."""
        existing = self._hold()
        if existing is not None:
            with _HELD_GUARD:
                existing.depth += 1
            try:
                yield self
            finally:
                with _HELD_GUARD:
                    existing.depth -= 1
            return
        with self._flock(exclusive=True, wait_s=wait_s, purpose=purpose):
            hold = _Hold()
            with _HELD_GUARD:
                _HELD[self.root] = hold
            try:
                yield self
            finally:
                with _HELD_GUARD:
                    _HELD.pop(self.root, None)
                if hold.con is not None:
                    hold.con.close()

    def _connect_writer(self, wait_s: float | None) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + (write_wait_s() if wait_s is None else wait_s)
        while True:
            try:
                con = connect(self.db_path)
                break
            except duckdb.IOException as exc:
                # A reader of another process has the file open read-only for a moment.
                if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                    raise LakeBusy(f"lake {self.root} is busy: {exc}") from None
                time.sleep(0.1)
        schema.migrate(con)
        keys.signing_key(self.root)  # made under the lock, before any user's write needs it
        return con

    @contextlib.contextmanager
    def writer(self, wait_s: float | None = None, purpose: str = "write") -> Iterator[duckdb.DuckDBPyConnection]:
        """Hold the write lock and a read-write connection (schema migrated) for the block, after
        waiting for it up to `wait_s` seconds (default `write_wait_s()`: $MEMORY_LAKE_WAIT_S)."""
        hold = self._hold()
        if hold is not None:
            with hold.use:
                if hold.con is None:
                    hold.con = self._connect_writer(wait_s)
                yield hold.con
            return
        with self._flock(exclusive=True, wait_s=wait_s, purpose=purpose):
            con = self._connect_writer(wait_s)
            try:
                yield con
            finally:
                con.close()

    @contextlib.contextmanager
    def reader(self, wait_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived read-only connection to the live file, sealed (see `seal`). While a writer
        holds it (unless the holder is this process's own run, whose steps read live, through its
        connection) it waits like a writer, up to `wait_s` (default `write_wait_s()`), then raises
        LakeBusy: a read that needs the live data (``dedup --dry-run``) cannot answer from a published
        version. `reading` asks with ``wait_s=0`` and answers from the published version instead."""
        hold = self._hold()
        if hold is not None and hold.con is not None:
            with hold.use:
                yield hold.con
            return
        with contextlib.nullcontext() if hold is not None else self._flock(exclusive=False, wait_s=wait_s, purpose="read"):
            if not self.db_path.exists():
                raise MemoryLakeError(f"{self.root} is not a lake yet: run `memory-lake init`")
            con = seal(connect(self.db_path, read_only=True))
            try:
                yield con
            finally:
                con.close()

    # ---------------------------------------------------------------- reading
    def read(self, query: str, params: Sequence[Any] | None = None) -> ReadResult:
        """Run a read-only query; while a run holds the lake, against the latest published version."""
        with self.reading() as (con, source, note):
            return ReadResult(_query(con, query, params), source, note)

    @contextlib.contextmanager
    def reading(self) -> Iterator[tuple[duckdb.DuckDBPyConnection, str, str | None]]:
        """``(connection, source, note)`` for several read-only queries: the live file, or while a run
        holds the lake, an in-memory connection whose views are the latest published version's files
        (``memories`` and every ``tables/<name>.parquet``: publish exports every table a read command
        needs). `note` says when it is the latter; `last_read` keeps it for callers that get only rows
        (``lake.conflicts()``, ``lake.quarantine()``, ``lake.health()``). Before anything is
        published, a busy lake raises LakeBusy. Both are sealed: queries read those tables and nothing
        else on disk or the network."""
        live = contextlib.ExitStack()
        try:
            con = live.enter_context(self.reader(wait_s=0))
        except LakeBusy:
            current = self.exports / "CURRENT"
            if not current.exists():
                raise LakeBusy(f"lake {self.root} is busy: {self._holder()} is writing and nothing is published "
                               "yet to read from; try again when it finishes") from None
        else:
            with live:  # only the opening falls back; an error of the caller's queries propagates
                self._reads.last = ReadSource("live")
                yield con, "live", None
            return
        version_dir = current.resolve()
        con = duckdb.connect(":memory:")
        try:
            con.execute("SET TimeZone = 'UTC'")
            # the views read these files, nothing else
            seal(con, allowed_paths=published_views(con, version_dir))
            note = f"the lake is busy (a run holds it); answered from published {version_dir.name}"
            source = ReadSource(f"published {version_dir.name}", note)
            self._reads.last = source
            yield con, source.source, note
        finally:
            con.close()

    @property
    def last_read(self) -> ReadSource | None:
        """Where this thread's latest read through this Lake came from (None before the first):
        a command that prints rows says "answered from published v<N>" when it was not live."""
        return getattr(self._reads, "last", None)

    def data_identity(self) -> tuple | None:
        """What a read would see now, as a cache key: ``(root, "live", None, stats)`` from the database
        file and its write-ahead log, or ``(root, "published", "v<N>", stats)`` while a run holds
        the lake. Every write changes it. None when this process holds the lake (its run changes
        the data as it goes) or when nothing could be read."""
        if self.held_here():
            return None

        def stat(path: Path) -> tuple[int, int, int] | None:
            try:
                st = path.stat()
            except OSError:
                return None
            return (st.st_ino, st.st_size, st.st_mtime_ns)

        if not self.is_busy():
            wal = self.db_path.with_name(self.db_path.name + ".wal")
            try:
                generation = (self.root / ".generation").read_text()
            except OSError:
                generation = None
            return (str(self.root), "live", None, (generation, stat(self.db_path), stat(wal)))
        current = self.exports / "CURRENT"
        if not current.exists():
            return None
        version = current.resolve()
        return (str(self.root), "published", version.name,
                (stat(version / "memories.parquet"), stat(version / "manifest.json")))

    def sql(self, query: str, params: Sequence[Any] | None = None) -> pl.DataFrame:
        """Read-only SQL over the lake's tables, as a Polars DataFrame: one SELECT-like query (see
        READ_ONLY_RULE) on a sealed connection, so it cannot write, copy, attach, load extensions,
        change settings or read files outside the lake's tables (InputError). A process holding the
        lake for a run (`hold`) reads through its own write connection; the statement rule still
        applies there, and no file can be read (`check_held_query`). The PII salts are not in the
        database (store/keys.py): no query can read them."""
        if self.held_here():
            check_held_query(query)
        return self.read(query, params).frame

    # ---------------------------------------------------------------- runs
    def new_run_id(self, kind: str, as_of: datetime) -> str:
        return f"{kind}-{as_of:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"

    def tenant_salts(self, tenants: Sequence[str], create: bool = True) -> dict[str, bytes]:
        """The HMAC salt of each tenant ('' = lake-wide), created on first use when `create` (the
        caller holds the write lock); kept outside the database (store/keys.py)."""
        return keys.tenant_salts(self.root, tenants, create=create)

    def sign(self, data: bytes) -> str:
        """The lake's mark of a user's write on `data` (store/keys.py: a snapshot file a user's edit
        writes, a decision the CLI or API queues)."""
        return keys.sign(self.root, data)

    def signed(self, data: bytes, signature: str | None) -> bool:
        """Whether `signature` is the lake's mark on `data`."""
        return keys.signed(self.root, data, signature)


def _query(con: duckdb.DuckDBPyConnection, query: str, params: Sequence[Any] | None) -> pl.DataFrame:
    check_read_query(query)
    try:
        rel = con.execute(query, params or [])
        if rel.description is None:
            return pl.DataFrame()
        return rel.pl()
    except duckdb.PermissionException as exc:
        raise InputError(f"sql reads only the lake's tables: {str(exc).splitlines()[0]}") from None
    except duckdb.Error as exc:
        message = str(exc).splitlines()[0]
        if "read-only" in message.lower() or "configuration has been locked" in message:
            raise InputError(f"sql is read-only: {message}") from None
        raise InputError(f"query failed: {message}") from None
