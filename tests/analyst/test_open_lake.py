"""Issue 39.1: the analyst's read API. `open_lake(path, at=...)` reads the live lake (copied into
memory, the lock let go at once), the published version, or a kept version, and says which; while
another process holds the lake it reads the published version and says so; a path without a lake
is an error naming it, never a silent demo lake."""

from __future__ import annotations

import json
from datetime import timedelta

import duckdb
import pytest

from memory_lake import InputError, Lake, LakeBusy, LakeNotFound, changes_since, open_lake
from memory_lake.analyst import HEALTH_COLUMNS
from memory_lake.observe import snapshot_health

from ..conftest import AS_OF, copy_lake, held_by_another_process, rows, write_jsonl

SCOPE = {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "tier": "long_term"}


def _memories(prefix: str, n: int) -> list[dict]:
    return [SCOPE | {"id": f"{prefix}-{i}", "content": f"{prefix} fact number {i} about the billing service"}
            for i in range(n)]


@pytest.fixture(scope="module")
def versions_dir(tmp_path_factory):
    """v1 (3 memories), v2 (3 + 2, one of the first forgotten), then 4 more ingested, unpublished;
    built once for the module (two ingests and two publishes), each test reads or writes its copy."""
    folder = tmp_path_factory.mktemp("versions")
    lake = Lake.open(folder / "lake", create=True)
    lake.ingest([write_jsonl(folder / "a.jsonl", _memories("a", 3))], as_of=AS_OF)
    snapshot_health(lake, AS_OF)
    assert lake.publish(as_of=AS_OF).details["version"] == "v1"
    later = AS_OF + timedelta(days=1)
    lake.ingest([write_jsonl(folder / "b.jsonl", _memories("b", 2) + [SCOPE | {"id": "a-0", "deleted": True}])],
                as_of=later)
    snapshot_health(lake, later)
    assert lake.publish(as_of=later).details["version"] == "v2"
    lake.ingest([write_jsonl(folder / "c.jsonl", _memories("c", 4))], as_of=later + timedelta(days=1))
    return lake.root


@pytest.fixture
def versions(versions_dir, tmp_path):
    return copy_lake(versions_dir, tmp_path / "lake")


def _ids(relation) -> list[str]:
    return sorted(relation.pl()["id"].to_list())


def test_live_published_and_a_named_version_each_read_what_they_hold(versions):
    live, published, first = (open_lake(versions.root, at=at) for at in ("live", "published", "v1"))
    assert (live.source, live.version, live.note) == ("live", None, None)
    assert (published.source, published.version) == ("published v2", "v2")
    assert (first.source, first.version) == ("published v1", "v1")
    held = [r["id"] for r in rows(versions, "SELECT id FROM memories WHERE status NOT IN ('merged', 'deleted') ORDER BY id")]
    assert _ids(live.memories.filter("status NOT IN ('merged', 'deleted')")) == held
    assert held == ["a-1", "a-2", "b-0", "b-1", "c-0", "c-1", "c-2", "c-3"]
    for view, version in ((published, "v2"), (first, "v1")):
        path = versions.root / "exports" / version / "memories.parquet"
        assert _ids(view.memories) == sorted(duckdb.sql(f"SELECT id FROM '{path}'").pl()["id"].to_list())
    assert _ids(published.memories) == ["a-1", "a-2", "b-0", "b-1"]
    assert _ids(first.memories) == ["a-1", "a-2"]  # a forget scrubs the versions kept before it too
    # every table a notebook reads is in both, and the same SQL answers in both
    derived = {"health", "health_alerts", "run_steps", "run_counts", "summaries"}
    assert derived <= set(live.tables) and derived <= set(published.tables)
    assert set(live.tables) == set(published.tables)
    query = "SELECT tier, count(*) AS n FROM memories GROUP BY tier ORDER BY tier"
    assert published.sql(query).fetchall() == [("long_term", 4)]
    assert live.sql(query).fetchall() == [("long_term", 9)]  # the forgotten one is kept as deleted, live
    # a timestamp reads the same from the live table and the export (naive UTC both)
    one = "SELECT created_at FROM memories WHERE id = 'a-1'"
    assert live.sql(one).fetchall() == published.sql(one).fetchall() == first.sql(one).fetchall()
    assert [v["version"] for v in live.versions()] == ["v1", "v2"] and live.versions()[1]["current"]


def test_while_another_process_holds_the_lake_live_reads_the_published_version_and_says_so(versions):
    opened_before = open_lake(versions.root)
    with held_by_another_process(versions):
        view = open_lake(versions.root)
        assert (view.source, view.version) == ("published v2", "v2")
        assert view.note == "the lake is busy (a run holds it); read the published v2 instead"
        assert _ids(view.memories) == ["a-1", "a-2", "b-0", "b-1"]
        assert "published v2" in repr(view)
        exported = versions.root / "exports" / "v2" / "tables" / "postings.parquet"
        assert view.sql("SELECT count(*) FROM postings").fetchone() == duckdb.sql(f"SELECT count(*) FROM '{exported}'").fetchone()
        # a live view opened before: its copied tables answer; an index table it never read cannot be read now
        assert opened_before.memories.count("*").fetchone() == (9,)
        with pytest.raises(LakeBusy, match="postings is read from the live lake when first used, and a run holds it now"):
            opened_before.table("postings")


def test_a_busy_lake_with_nothing_published_is_a_clear_error(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", _memories("a", 1))], as_of=AS_OF)
    assert open_lake(lake.root).memories.count("*").fetchone() == (1,)  # one memory, free: live
    with pytest.raises(InputError, match="nothing is published in .* yet: changes are between published versions"):
        open_lake(lake.root).changes("v1")
    with held_by_another_process(lake):
        with pytest.raises(LakeBusy, match="has nothing published yet and a run holds it"):
            open_lake(lake.root)


def test_an_open_view_never_keeps_the_nightly_run_from_writing(versions, tmp_path):
    view = open_lake(versions.root)
    before = _ids(view.memories)
    versions.ingest([write_jsonl(tmp_path / "d.jsonl", _memories("d", 1))], as_of=AS_OF + timedelta(days=3))
    assert _ids(view.memories) == before          # a snapshot of when it was opened
    assert "d-0" in _ids(view.refresh().memories)  # until refreshed


def test_a_path_without_a_lake_is_an_error_naming_it_and_nothing_is_created(tmp_path):
    missing = tmp_path / "no-lake-here"
    with pytest.raises(LakeNotFound, match=str(missing)):
        open_lake(missing)
    assert not missing.exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(LakeNotFound, match="open_lake"):
        open_lake(tmp_path / "empty")
    assert list((tmp_path / "empty").iterdir()) == []


def test_a_version_not_kept_or_a_bad_at_names_what_is_kept(versions):
    with pytest.raises(InputError, match=r"version v9 is not kept in .* \(kept: v1, v2\)"):
        open_lake(versions.root, at="v9")
    with pytest.raises(InputError, match='expected "live", "published" or a version name like "v3"'):
        open_lake(versions.root, at="yesterday")
    assert open_lake(versions.root, at="2").source == "published v2"


def test_health_has_one_typed_column_per_figure_equal_to_the_stored_json(versions):
    view = open_lake(versions.root)
    stored = rows(versions, "SELECT as_of, level, tenant, metrics FROM health_snapshots ORDER BY as_of, level, tenant")
    typed = view.sql("SELECT * FROM health ORDER BY as_of, level, tenant").pl().to_dicts()
    assert len(typed) == len(stored) > 0
    for row, snapshot in zip(typed, stored):
        metrics = json.loads(snapshot["metrics"])
        for name, path, _, _ in HEALTH_COLUMNS:
            value = metrics
            for key in path[2:].split("."):
                value = value.get(key) if isinstance(value, dict) else None
            assert row[name] == value, (name, snapshot["as_of"], snapshot["level"])
        assert row["alerts"] == len(metrics["alerts"])
    assert view.health.pl().schema["working_utilization"].is_float()
    assert view.health.pl().schema["total"].is_integer()


def test_changes_between_two_versions_are_the_exports_changes(versions):
    view = open_lake(versions.root)
    found = view.changes("v1").pl().to_dicts()
    assert [(c["id"], c["change"], c["reason"]) for c in found] == [
        ("a-0", "removed", "forgotten"), ("b-0", "added", None), ("b-1", "added", None)]
    told = changes_since(versions.root, "v1")
    assert (told["from"], told["to"]) == ("v1", "v2")
    assert [{k: c[k] for k in ("tenant", "agent_id", "user_id", "id", "change", "reason", "merged_into")}
            for c in told["changes"]] == [
        {k: c[k] for k in ("tenant", "agent_id", "user_id", "id", "change", "reason", "merged_into")} for c in found]
    assert open_lake(versions.root, at="v1").changes("v1").pl().height == 0


def test_the_search_index_tables_are_read_from_the_live_lake_when_first_named(versions):
    view = open_lake(versions.root)
    assert "postings" in view.tables
    count = rows(versions, "SELECT count(*) AS n FROM postings")[0]["n"]
    assert view.sql("SELECT count(*) FROM postings").fetchone() == (count,)
    with pytest.raises(InputError, match="no table 'nope'"):
        view.table("nope")


def test_a_tenant_is_checked_against_what_the_view_holds_and_a_version_names_its_publisher(versions):
    view = open_lake(versions.root)
    assert view.check_tenant("acme") == "acme" and view.check_tenant(None) is None
    with pytest.raises(InputError, match=r"unknown tenant 'acmee': did you mean 'acme'\? known tenants in live: acme"):
        view.check_tenant("acmee")
    assert view.published_by is None
    first = open_lake(versions.root, at="v1")
    manifest = json.loads((versions.root / "exports" / "v1" / "manifest.json").read_text())
    assert first.published_by == {"run_id": manifest["run_id"], "as_of": manifest["as_of"]}
    # the README's table names answer SQL too
    assert view.sql("SELECT count(*) FROM history").fetchone() == view.history.count("*").fetchone()
    assert view.sql("SELECT count(*) FROM summary_scores").fetchone() == (0,)
