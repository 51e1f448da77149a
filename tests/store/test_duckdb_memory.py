"""DuckDB's memory for a lake file is capped (store/lake.py `duckdb_memory`): 4GB unless
$MEMORY_LAKE_DUCKDB_MEMORY says otherwise ("default": DuckDB's own), for the run's held
connection and a reader alike; a bad value is one line and exit 2."""

from __future__ import annotations

import pytest

from memory_lake import Lake
from memory_lake.cli import main


def _limit(con) -> str:
    return con.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_a_lake_connection_holds_4gb_or_what_the_variable_says(tmp_path, monkeypatch):
    lake = Lake.init(tmp_path / "lake")
    monkeypatch.delenv("MEMORY_LAKE_DUCKDB_MEMORY", raising=False)
    with lake.writer() as con:
        assert _limit(con) == "3.7 GiB"  # 4GB, as DuckDB shows it
    with lake.reader() as con:  # sealed: the limit cannot be raised from a query
        assert _limit(con) == "3.7 GiB"
        with pytest.raises(Exception, match="configuration has been locked"):
            con.execute("SET memory_limit = '20GB'")
    monkeypatch.setenv("MEMORY_LAKE_DUCKDB_MEMORY", "1GB")
    with lake.reader() as con:
        assert _limit(con) == "953.6 MiB"
    monkeypatch.setenv("MEMORY_LAKE_DUCKDB_MEMORY", "default")
    with lake.reader() as con:
        assert _limit(con) not in ("3.7 GiB", "953.6 MiB")


@pytest.mark.parametrize("value", ["lots", "4", "-1GB"])
def test_a_bad_memory_lake_duckdb_memory_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, value):
    lake = Lake.init(tmp_path / "lake")
    monkeypatch.setenv("MEMORY_LAKE_DUCKDB_MEMORY", value)
    code = main(["--lake", str(lake.root), "publish"])
    assert (code, capsys.readouterr().err) == (
        2, f"error: MEMORY_LAKE_DUCKDB_MEMORY={value!r} is not an amount of memory: set it to e.g. 8GB, or to "
           "'default' for DuckDB's own limit (80 % of RAM); unset, it is 4GB\n")
