"""The lake store: creation, migrations, the write lock, read-only SQL and reads while busy."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from memory_lake import InputError, Lake, LakeBusy
from memory_lake.store.schema import MIGRATIONS, MEMORY_COLUMNS

from ..conftest import rows


def test_open_creates_the_layout_and_tables(tmp_path):
    lake = Lake.open(tmp_path / "new" / "lake", create=True)
    assert sorted(p.name for p in lake.root.iterdir()) == [".generation", ".lock", "events", "exports", "inbox", "lake.duckdb", "raw", "secrets.json"]
    assert (lake.inbox / "decisions").is_dir()
    tables = {r["table_name"] for r in rows(lake, "SELECT table_name FROM information_schema.tables")}
    assert {"memories", "memory_history", "quarantine", "runs", "ingested_files", "schema_migrations"} <= tables
    assert "tenant_salts" not in tables  # the salts live in secrets.json (store/keys.py)
    columns = [r["column_name"] for r in rows(
        lake, "SELECT column_name FROM information_schema.columns WHERE table_name = 'memories' ORDER BY ordinal_position")]
    assert columns == list(MEMORY_COLUMNS)
    assert rows(lake, "SELECT version FROM schema_migrations") == [{"version": v} for v, _, _ in MIGRATIONS]


def test_open_is_idempotent_and_keeps_data(tmp_path):
    lake = Lake.open(tmp_path / "lake", create=True)
    with lake.writer() as con:
        con.execute("INSERT INTO runs VALUES ('r1', 'test', '2026-11-30', 'ok', 0, NULL)")
    again = Lake.open(tmp_path / "lake", create=True)
    assert rows(again, "SELECT run_id FROM runs") == [{"run_id": "r1"}]
    assert rows(again, "SELECT count(*) AS n FROM schema_migrations") == [{"n": len(MIGRATIONS)}]


def test_open_refuses_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        Lake.open(tmp_path / "afile", create=True)


def test_lake_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_LAKE_DIR", str(tmp_path / "envlake"))
    assert Lake.open(create=True).root == (tmp_path / "envlake").resolve()


def test_second_writer_gets_a_clear_message(lake):
    with lake.writer(purpose="nightly run"):
        with pytest.raises(LakeBusy, match=rf"pid {os.getpid()} \(nightly run\) holds the write lock"):
            with lake.writer(wait_s=0):
                pass
    with lake.writer(wait_s=0):
        pass  # free again


def test_a_writer_met_before_it_names_itself_is_still_named(lake):
    """A writer's flock succeeds a moment before it writes its name into the lock file; a second
    writer refused in that moment names it anyway (CI once got "another process" here, under load)."""
    import fcntl
    import json
    import threading

    fd = os.open(lake.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)  # held, not named yet
    later = threading.Timer(0.1, lambda: os.pwrite(fd, json.dumps({"pid": 4242, "purpose": "tier rules"}).encode(), 0))
    later.start()
    try:
        with pytest.raises(LakeBusy) as refused:
            with lake.writer(wait_s=0):
                pass
    finally:
        later.join()
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert str(refused.value) == (f"lake {lake.root} is busy: pid 4242 (tier rules) holds the write lock; "
                                  "try again when it finishes")


@pytest.mark.process  # starts a process (the subject here)
def test_writer_waits_for_the_lock(lake, tmp_path):
    # another process holds the lock for one second; the writer waits and then gets it
    script = textwrap.dedent(f"""
        import time
        from memory_lake import Lake
        lake = Lake.open({str(lake.root)!r}, create=True)
        with lake.writer(purpose="other process"):
            print("held", flush=True)
            time.sleep(1.0)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    with lake.writer(wait_s=30):
        pass
    assert proc.wait(timeout=30) == 0


def test_sql_is_read_only(lake):
    with pytest.raises(InputError, match="read-only"):
        lake.sql("INSERT INTO runs VALUES ('x', 'y', now(), 'ok', 0, NULL)")
    with pytest.raises(InputError, match="query failed"):
        lake.sql("SELECT * FROM no_such_table")


def test_reads_while_busy_use_the_published_version_or_say_busy(lake):
    with lake.writer(purpose="nightly run"):
        with pytest.raises(LakeBusy, match="nothing is published yet"):
            lake.sql("SELECT count(*) FROM memories")
        version = lake.exports / "v1"
        (version / "tables").mkdir(parents=True)
        pl.DataFrame({"id": ["a", "b"], "tier": ["working", "important"]}).write_parquet(version / "memories.parquet")
        pl.DataFrame({"run_id": ["r1"]}).write_parquet(version / "tables" / "runs.parquet")
        (lake.exports / "CURRENT").symlink_to("v1")
        result = lake.read("SELECT tier FROM memories ORDER BY id")
        assert result.frame.to_dicts() == [{"tier": "working"}, {"tier": "important"}]
        assert result.source == "published v1"
        assert "answered from published v1" in result.note
        assert lake.sql("SELECT run_id FROM runs").to_dicts() == [{"run_id": "r1"}]
    assert lake.read("SELECT count(*) AS n FROM memories").source == "live"


def test_open_refuses_a_path_without_a_lake_and_creates_nothing(tmp_path):
    from memory_lake import LakeNotFound

    with pytest.raises(LakeNotFound, match=r"no lake at .*nowhere.*memory-lake init"):
        Lake.open(tmp_path / "nowhere")
    assert not (tmp_path / "nowhere").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(LakeNotFound):
        Lake.open(tmp_path / "empty")
    # a folder inside a lake (its inbox, say) points at the lake instead of suggesting a lake in it
    lake = Lake.init(tmp_path / "mine")
    with pytest.raises(LakeNotFound) as raised:
        Lake.open(lake.inbox)
    assert str(raised.value) == f"no lake at {lake.inbox}: it is inside the lake {lake.root}; did you mean `--lake {lake.root}`?"
    assert list((tmp_path / "empty").iterdir()) == []
    assert Lake.init(tmp_path / "empty").db_path.exists()
    assert Lake.open(tmp_path / "empty").root == (tmp_path / "empty").resolve()


# ---------------------------------------------------------------- issue 12.11: sql reads the lake's tables only
READ_ONLY = "run one SELECT (or WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN) over the lake's tables"


def refused_queries(lake, outside):
    """(query, the one-line error) for everything `sql` must refuse; `outside` is a folder beside the lake."""
    export = lake.exports / "v1" / "memories.parquet"
    denied = "sql reads only the lake's tables: Permission Error: Cannot access file"
    return [
        (f"COPY (SELECT * FROM memories LIMIT 1) TO '{export}' (FORMAT parquet)",
         f"sql is read-only: COPY is not allowed; {READ_ONLY}"),
        ("SELECT * FROM read_text('/etc/passwd')",
         f'{denied} "/etc/passwd" - file system operations are disabled by configuration'),
        (f"SELECT * FROM read_csv('{outside / 'secrets.csv'}')",
         f'{denied} "{outside / "secrets.csv"}" - file system operations are disabled by configuration'),
        (f"ATTACH '{outside / 'other.duckdb'}' AS other", f"sql is read-only: ATTACH is not allowed; {READ_ONLY}"),
        ("INSTALL httpfs", f"sql is read-only: INSTALL is not allowed; {READ_ONLY}"),
        ("LOAD httpfs", f"sql is read-only: LOAD is not allowed; {READ_ONLY}"),
        ("SET enable_external_access = true", f"sql is read-only: SET is not allowed; {READ_ONLY}"),
        ("PRAGMA database_list", f"sql is read-only: PRAGMA is not allowed; {READ_ONLY}"),
        ("SELECT 1; DELETE FROM memories", f"sql runs one statement at a time, not 2: {READ_ONLY}"),
        ("EXPLAIN ANALYZE COPY memories TO '/tmp/x.csv'", f"sql is read-only: COPY is not allowed; {READ_ONLY}"),
    ]


def publish_by_hand(lake) -> Path:
    """A published version v1 with one memory (CURRENT -> v1), as publish leaves it."""
    version = lake.exports / "v1"
    (version / "tables").mkdir(parents=True)
    pl.DataFrame({"id": ["a"], "tier": ["working"]}).write_parquet(version / "memories.parquet")
    pl.DataFrame({"run_id": ["r1"]}).write_parquet(version / "tables" / "runs.parquet")
    (lake.exports / "CURRENT").symlink_to("v1")
    return version / "memories.parquet"


@pytest.mark.parametrize("state", ["live", "busy"])
def test_sql_reads_the_lake_tables_and_nothing_else(lake, tmp_path, state):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secrets.csv").write_text("password\nhunter2\n")
    export = publish_by_hand(lake)
    published = export.read_bytes()
    with lake.writer(purpose="nightly run") if state == "busy" else contextlib.nullcontext():
        for query, message in refused_queries(lake, outside):
            with pytest.raises(InputError) as caught:
                lake.sql(query)
            assert str(caught.value) == message, query
        source = lake.read("SELECT id FROM memories").source
        assert source == ("live" if state == "live" else "published v1")
        assert lake.sql("SELECT count(*) AS n FROM runs").rows() == [(0,) if state == "live" else (1,)]
    assert export.read_bytes() == published
    assert sorted(p.name for p in outside.iterdir()) == ["secrets.csv"]
    assert not Path("/tmp/x.csv").exists()


def test_every_read_statement_kind_still_reads(lake):
    with lake.writer() as con:
        con.execute("INSERT INTO runs VALUES ('r1', 'test', '2026-11-30', 'ok', 0, NULL)")
    assert lake.sql("WITH r AS (SELECT run_id FROM runs) SELECT * FROM r").rows() == [("r1",)]
    assert lake.sql("FROM runs SELECT run_id").rows() == [("r1",)]
    assert lake.sql("(SELECT run_id FROM runs)").rows() == [("r1",)]
    assert lake.sql("VALUES (1, 'a')").rows() == [(1, "a")]
    assert "run_id" in lake.sql("DESCRIBE runs")["column_name"].to_list()
    assert "memories" in lake.sql("SHOW TABLES")["name"].to_list()
    assert lake.sql("EXPLAIN SELECT * FROM runs").height == 1
    # the sealed reader keeps the lake's session settings
    assert lake.sql("SELECT current_setting('TimeZone') AS tz").item() == "UTC"


@pytest.mark.parametrize("query", [
    "SELECT * FROM tenant_salts",
    "SELECT * FROM query_table('tenant_' || 'salts')",
    "SELECT * FROM query('SELECT * FROM tenant_' || 'salts')",
    "SELECT * FROM read_text('{root}/secrets.json')",
    "SELECT * FROM read_json('{root}/secrets.json')",
    "SELECT * FROM '{root}/secrets.json'",
])
def test_sql_never_reads_the_pii_salts(lake, query):
    """A stranger read every tenant's salt with `query_table('tenant_' || 'salts')` (the check
    looked for the table's name in the query text): with a salt, a `[PHONE:…]` placeholder is
    reversed by trying numbers in under 2 s. The salts are not in the database now, and the file
    that holds them is out of reach of every connection `sql` runs on, live or held by a run."""
    from memory_lake.cli import main

    salts = lake.tenant_salts(["acme"])  # as the first ingest of tenant acme makes them
    query = query.format(root=lake.root)
    with pytest.raises(InputError) as refused:
        lake.sql(query)
    assert salts["acme"].hex() not in str(refused.value)
    assert main(["--lake", str(lake.root), "sql", query]) == 2
    with lake.hold("nightly run"):  # the run's own connection cannot be sealed: the query tree is checked
        with pytest.raises(InputError):
            lake.sql(query)
        assert lake.sql("SELECT count(*) AS n FROM memories").item() == 0
    assert lake.sql("SELECT count(*) AS n FROM memories").item() == 0  # other tables still read
    assert (lake.root / "secrets.json").stat().st_mode & 0o777 == 0o600


def _schema_14_lake(root: Path) -> Path:
    """A lake as memory-lake's schema 14 left it (its salts still in a table), in `root`'s database
    file (an existing one is emptied first, by DuckDB: the same file); returns the database's path."""
    import duckdb

    for sub in ("inbox/decisions", "raw", "events", "exports"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    db = root / "lake.duckdb"
    with duckdb.connect(str(db)) as con:
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            con.execute(f'DROP TABLE "{table}"')
        con.execute("CREATE TABLE schema_migrations (version INTEGER NOT NULL, name VARCHAR NOT NULL)")
        for version, name, ddl in MIGRATIONS[:14]:
            con.execute(ddl)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?)", [version, name])
        con.execute("INSERT INTO tenant_salts VALUES ('', ?), ('acme', ?)", [b"\x01" * 32, b"\x02" * 32])
    return db


@pytest.mark.parametrize("how", ["copied over it", "moved in its place", "rewritten in place"])
def test_open_migrates_a_lake_that_became_older_since_this_process_opened_it(tmp_path, how):
    """Lake.open asks the schema once per state of the database file in a process (a connection per
    open was 16 % of a test's time); a file older than the code in the same place is still migrated,
    however it got there: a backup copied over it (same inode, its old modification time kept), a
    file moved in (another inode), or the file itself rewritten by an old version."""
    import shutil

    root = tmp_path / "lake"
    Lake.open(root, create=True)
    Lake.open(root)  # asked, and remembered as current
    if how == "rewritten in place":
        _schema_14_lake(root)
    else:
        old = _schema_14_lake(tmp_path / "old")
        (shutil.copy2 if how == "copied over it" else os.replace)(old, root / "lake.duckdb")
    lake = Lake.open(root)
    assert lake.sql("SELECT max(version) AS v FROM schema_migrations").item() == MIGRATIONS[-1][0]
    assert "tenant_salts" not in lake.sql("SHOW TABLES")["name"].to_list()  # migration 15 ran
    assert lake.tenant_salts(["acme"], create=False) == {"": b"\x01" * 32, "acme": b"\x02" * 32}


def test_a_lake_made_before_secrets_moved_keeps_its_salts(tmp_path):
    """A lake of schema 14 kept its salts in a table; the migration moves them to secrets.json and
    drops the table, so the placeholders already stored keep matching."""
    root = tmp_path / "old"
    _schema_14_lake(root)
    lake = Lake.open(root)
    assert lake.tenant_salts(["acme"], create=False) == {"": b"\x01" * 32, "acme": b"\x02" * 32}
    assert "tenant_salts" not in lake.sql("SHOW TABLES")["name"].to_list()
    assert lake.sql("SELECT max(version) AS v FROM schema_migrations").item() == MIGRATIONS[-1][0]
