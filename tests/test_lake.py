"""The lake store: creation, migrations, the write lock, read-only SQL and reads while busy."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import polars as pl
import pytest

from memory_lake import InputError, Lake, LakeBusy
from memory_lake.schema import MIGRATIONS, MEMORY_COLUMNS

from .conftest import rows


def test_open_creates_the_layout_and_tables(tmp_path):
    lake = Lake.open(tmp_path / "new" / "lake", create=True)
    assert sorted(p.name for p in lake.root.iterdir()) == [".generation", ".lock", "events", "exports", "inbox", "lake.duckdb", "raw"]
    assert (lake.inbox / "decisions").is_dir()
    tables = {r["table_name"] for r in rows(lake, "SELECT table_name FROM information_schema.tables")}
    assert {"memories", "memory_history", "quarantine", "runs", "ingested_files", "tenant_salts",
            "schema_migrations"} <= tables
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
    assert list((tmp_path / "empty").iterdir()) == []
    assert Lake.init(tmp_path / "empty").db_path.exists()
    assert Lake.open(tmp_path / "empty").root == (tmp_path / "empty").resolve()
