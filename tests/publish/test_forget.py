"""The export scrub's change count (publish/forget.py `_changed_rows`): the rows a replayed table
scrubber changed are counted as a full EXCEPT ALL of the table against its copy counts them, whatever
the scrubber did (an update in place, an update DuckDB carries out as a delete and an insert, a
delete, an insert, a rebuild of the same rows), so a forget rewrites exactly the files it rewrote
when every row was compared. `_changed`, which compares the table with the file it was read from
(row by row in the file's order first), answers "changed" exactly when that count is not zero."""

from __future__ import annotations

import duckdb
import pytest

from memory_lake.publish.forget import _changed, _changed_rows

ROWS = ("SELECT range AS id, 'text ' || range AS content, [range::FLOAT, 0.5] AS vector, "
        "CASE WHEN range % 3 = 0 THEN NULL ELSE {'k': range, 'v': NULL} END AS meta FROM range(50)")

SCRUBS = {
    "nothing": [],
    "an update to the same value": ["UPDATE t SET content = content WHERE id = 3"],
    "an update in place": ["UPDATE t SET content = '[forgotten]' WHERE id IN (3, 4)"],
    "a list update (a delete and an insert inside DuckDB)": ["UPDATE t SET vector = [9.0, 9.0] WHERE id = 7"],
    "a list update to the same list": ["UPDATE t SET vector = vector WHERE id < 10"],
    "a null set": ["UPDATE t SET meta = NULL WHERE id = 8"],
    "a delete": ["DELETE FROM t WHERE id IN (1, 2, 40)"],
    "an insert of a copy": ["INSERT INTO t SELECT * FROM t WHERE id = 5"],
    "the same rows rebuilt": ["CREATE OR REPLACE TEMP TABLE keep AS SELECT * FROM t", "DELETE FROM t",
                              "INSERT INTO t SELECT * FROM keep ORDER BY id DESC"],
    "a row swapped for another's values": ["UPDATE t SET id = 6, content = 'text 6', vector = [6.0, 0.5], "
                                           "meta = {'k': 6, 'v': NULL} WHERE id = 5"],
    "a delete, then an identical row inserted": ["DELETE FROM t WHERE id = 10",
                                                 "INSERT INTO t SELECT * FROM (" + ROWS + ") WHERE id = 10"],
}


@pytest.mark.parametrize("case", SCRUBS)
def test_changed_rows_count_as_a_full_except_all(case):
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t AS {ROWS}")
    con.execute("CREATE TEMP TABLE scrub_before AS SELECT rowid AS scrub_row, * FROM t")
    con.execute("CREATE TEMP TABLE whole_before AS SELECT * FROM t")
    for statement in SCRUBS[case]:
        con.execute(statement)
    (full,) = con.execute("SELECT (SELECT count(*) FROM (FROM t EXCEPT ALL FROM whole_before)) "
                          "+ (SELECT count(*) FROM (FROM whole_before EXCEPT ALL FROM t))").fetchone()
    assert _changed_rows(con, "t") == full
    expected = {"nothing": 0, "an update to the same value": 0, "a list update to the same list": 0,
                "the same rows rebuilt": 0, "a delete, then an identical row inserted": 0,
                "an update in place": 4, "a list update (a delete and an insert inside DuckDB)": 2,
                "a null set": 2, "a delete": 3, "an insert of a copy": 1, "a row swapped for another's values": 2}
    assert full == expected[case]


@pytest.mark.parametrize("case", SCRUBS)
def test_changed_against_the_file_is_a_nonzero_full_except_all(case, tmp_path):
    con = duckdb.connect()
    source = tmp_path / "t.parquet"
    con.execute(f"COPY ({ROWS}) TO '{source}' (FORMAT parquet)")
    con.execute(f"CREATE TABLE t AS SELECT * FROM read_parquet('{source}')")
    con.execute("CREATE TEMP TABLE whole_before AS SELECT * FROM t")
    for statement in SCRUBS[case]:
        con.execute(statement)
    (full,) = con.execute("SELECT (SELECT count(*) FROM (FROM t EXCEPT ALL FROM whole_before)) "
                          "+ (SELECT count(*) FROM (FROM whole_before EXCEPT ALL FROM t))").fetchone()
    assert _changed(con, "t", source) is (full > 0)
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'scrub_before'").fetchone() == (0,)
