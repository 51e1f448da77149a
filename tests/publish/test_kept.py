"""Export files kept from version to version (publish/kept.py): an export that links the unchanged
tables and takes the unchanged scopes' records from the last version stages the same files as one
that writes everything, a kept file changed since is written again, and the manifest's checksums
are those of the files on disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memory_lake.demo import night_as_of
from memory_lake.publish.export import check_export, publish_export, stage_export
from memory_lake.store import file_sha256, resolve_as_of

from ..conftest import copy_lake, write_jsonl

pytestmark = pytest.mark.xdist_group("notebooks")
CACHES = ("tables/export_files.parquet", "tables/export_packs.parquet")  # what each copy kept differs, by design


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and str(p.relative_to(root)) not in CACHES and p.name != ".staged.json"}


def test_kept_files_give_the_files_writing_everything_gives(three_nights, tmp_path):
    as_of = resolve_as_of(night_as_of(4))
    tonight = copy_lake(three_nights.root, tmp_path / "tonight" / "lake")
    assert tonight.sql("SELECT count(*) FROM export_files WHERE kind = 'scope'").item() > 0  # night 3 kept them
    scope = tonight.sql("SELECT tenant, agent_id, user_id FROM memories WHERE status = 'active' ORDER BY id LIMIT 1"
                        ).to_dicts()[0]
    tonight.ingest([write_jsonl(tmp_path / "tonight.jsonl", [
        {"id": "night-4-kept", **scope, "content": "The user now keeps a paper diary.",
         "type": "fact", "tier": "long_term", "created_at": "2026-12-02T08:00:00Z"}])], as_of=as_of)
    written, kept = (copy_lake(tonight.root, tmp_path / name / "lake") for name in ("written", "kept"))
    with written.writer() as con:
        con.execute("DELETE FROM export_files")  # this copy writes every file
        con.execute("DELETE FROM export_packs")
    # a kept memory.json changed since it was written (as a forget's rewrite would): written again
    version, folder = kept.sql("SELECT version, name FROM export_files WHERE kind = 'scope' ORDER BY name DESC LIMIT 1"
                               ).row(0)
    edited = kept.root / "exports" / version / "scopes" / folder / "memory.json"
    edited.write_text(edited.read_text(encoding="utf-8")[:-2] + ', {"id": "an edit"}]}', encoding="utf-8")

    fresh = stage_export(written, as_of, run_id="night-4")
    reused = stage_export(kept, as_of, run_id="night-4")

    scopes = reused.details["scopes"]
    assert (fresh.counts["scopes_kept"], fresh.counts["tables_linked"]) == (0, 0)
    assert 0 < reused.counts["scopes_kept"] <= scopes - 2  # the new memory's scope and the edited one were written
    assert reused.counts["tables_linked"] > 0
    staged = {name: Path(report.details["staging"]) for name, report in (("written", fresh), ("kept", reused))}
    assert _files(staged["kept"]) == _files(staged["written"])
    assert len(list((staged["kept"] / "scopes").rglob("memory.json"))) == scopes
    # a linked table is the file of the last version itself (one inode), not a copy
    linked = kept.sql("SELECT name, version FROM export_files WHERE kind = 'table' AND version <> ? ORDER BY name",
                      [reused.details["changes"]["to"]]).rows()
    assert linked and all((staged["kept"] / "tables" / f"{name}.parquet").stat().st_ino
                          == (kept.root / "exports" / at / "tables" / f"{name}.parquet").stat().st_ino
                          for name, at in linked)
    assert "night-4-kept" in (staged["kept"] / [p for p in reused.details["scope_list"] if p["tenant"] == scope["tenant"]
                              and p["agent_id"] == scope["agent_id"] and p["user_id"] == scope["user_id"]][0]["path"]
                              / "memory.json").read_text(encoding="utf-8")

    # published: the manifest lists every file with the checksum of its bytes (staging's hashes used)
    checks = check_export(kept, reused.details["staging"], run_id="night-4", as_of=as_of)
    assert checks.details["success"] and checks.details["failed"] == []
    # the row expectations read the rows of the scopes not kept; every check_export of the copy that
    # kept nothing reads them all
    everything = check_export(written, fresh.details["staging"], run_id="night-4", as_of=as_of)
    assert everything.details["rows_checked"] == everything.details["rows"] == checks.details["rows"]
    assert 0 < checks.details["rows_checked"] < checks.details["rows"]
    published = publish_export(kept, as_of, reused.details, checks.details, run_id="night-4")
    folder = Path(published.details["path"])
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    on_disk = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json"}
    assert set(manifest["files"]) == on_disk and ".staged.json" not in on_disk
    assert all(manifest["files"][name] == file_sha256(folder / name) for name in on_disk)


def test_ids_are_unique_over_the_whole_version_when_only_changed_scopes_are_checked(three_nights, tmp_path):
    """A row of an unchanged scope sent twice (a bug in staging, say) fails "ids unique" though
    that scope's rows are not read again; the row expectations of a changed scope still run."""
    import polars as pl

    as_of = resolve_as_of(night_as_of(4))
    lake = copy_lake(three_nights.root, tmp_path / "lake")
    lake.ingest([write_jsonl(tmp_path / "tonight.jsonl", [
        {"id": "night-4-pii", "tenant": "acme", "content": "Call me at alice@example.com"}])], as_of=as_of)
    staged = stage_export(lake, as_of, run_id="night-4")
    assert staged.counts["scopes_kept"] > 0
    memories = Path(staged.details["staging"]) / "memories.parquet"
    rows = pl.read_parquet(memories)
    unchanged = {tuple(s) for s in json.loads((memories.parent / ".staged.json").read_text())["unchanged"]}
    twice = rows.filter(pl.struct("tenant", "agent_id", "user_id").map_elements(
        lambda s: (s["tenant"], s["agent_id"], s["user_id"]) in unchanged, return_dtype=pl.Boolean)).head(1)
    assert twice.height == 1
    pl.concat([rows, twice]).write_parquet(memories)

    checks = check_export(lake, staged.details["staging"], run_id="night-4", as_of=as_of)

    failed = {c["expectation"]: c["observed"] for c in checks.details["checks"] if not c["success"]}
    assert set(failed) == {"ids unique"}, failed  # the e-mail was redacted at ingest: no raw PII
    assert twice["id"][0] in failed["ids unique"]
    assert checks.details["rows_checked"] < checks.details["rows"] == rows.height + 1


def test_the_growing_tables_are_a_part_per_night_and_a_night_writes_only_its_own(three_nights, tmp_path):
    """``tables/embeddings/`` holds one part per night the vectors were made (export.PARTED), and
    the history and entity tables one per night of their rows: the next export hard-links every
    earlier part from the version holding it (one inode) and writes only tonight's; the parts read
    together are the lake's table."""
    import duckdb

    from memory_lake.store import table_files

    as_of = resolve_as_of(night_as_of(4))
    lake = copy_lake(three_nights.root, tmp_path / "lake")
    current = (lake.exports / "CURRENT").resolve()
    nights = sorted(p.stem for p in (current / "tables" / "embeddings").glob("*.parquet"))
    assert len(nights) >= 2 and not (current / "tables" / "embeddings.parquet").exists()
    lake.ingest([write_jsonl(tmp_path / "tonight.jsonl", [  # a change to publish
        {"id": "night-4-parts", "tenant": "acme", "content": "A new scope's only memory.",
         "created_at": "2026-12-02T08:00:00Z"}])], as_of=as_of)
    with lake.writer() as con:  # tonight's vectors (as the index step writes them)
        con.execute("INSERT INTO embeddings SELECT text_hash || '-tonight', model, vector, unknown_ratio, ? "
                    "FROM embeddings ORDER BY text_hash, model LIMIT 3", [as_of])
    report = stage_export(lake, as_of, run_id="night-4")
    staged = Path(report.details["staging"])
    parts = {p.stem: p for p in (staged / "tables" / "embeddings").glob("*.parquet")}
    assert sorted(parts) == sorted([*nights, as_of.strftime("%Y-%m-%d")])
    # every earlier part is the file of the version export_files names (one inode), not a copy
    # (a forget rewrites a part in each version, so that may be an older version than CURRENT)
    tonight = as_of.strftime("%Y-%m-%d")
    linked = dict(lake.sql("SELECT name, version FROM export_files WHERE kind = 'table' AND name LIKE 'embeddings/%' "
                           "AND version <> ?", [report.details["changes"]["to"]]).rows())
    assert sorted(linked) == [f"embeddings/{n}" for n in nights]
    assert all(parts[n].stat().st_ino == (lake.exports / linked[f"embeddings/{n}"] / "tables" / "embeddings"
                                          / f"{n}.parquet").stat().st_ino for n in nights)
    assert parts[tonight].stat().st_nlink == 1  # tonight's, written
    read = duckdb.sql(f"SELECT text_hash, model, vector, unknown_ratio FROM read_parquet("
                      f"{[str(p) for p in table_files(staged)['embeddings']]}) ORDER BY ALL").fetchall()
    assert read == lake.sql("SELECT text_hash, model, vector, unknown_ratio FROM embeddings ORDER BY ALL").rows()
    assert len(read) == lake.sql("SELECT count(*) FROM embeddings").item()
    # the other tables that grow night by night, the same way (format 1.4.0): tonight's ingest made
    # history rows (a part of tonight's), no entity was extracted tonight (every part linked)
    keys = {"memory_history": "seq, memory_id, change", "entity_facts": "fact_id, memory_id, entity_id",
            "entity_extractions": "memory_id, extractor, content_hash"}
    for table, columns in keys.items():
        folder = staged / "tables" / table
        assert not (staged / "tables" / f"{table}.parquet").exists()
        days = lake.sql(f"SELECT DISTINCT strftime(as_of, '%Y-%m-%d') FROM {table} ORDER BY 1").to_series().to_list()
        assert sorted(p.stem for p in folder.glob("*.parquet")) == days and len(days) >= 1, table
        assert [(p.stem, p.stat().st_nlink > 1) for p in sorted(folder.glob("*.parquet"))] == [
            (day, day != tonight or table != "memory_history") for day in days], table
        read = duckdb.sql(f"SELECT {columns} FROM read_parquet({[str(p) for p in table_files(staged)[table]]}) "
                          "ORDER BY ALL").fetchall()
        assert read == lake.sql(f"SELECT {columns} FROM {table} ORDER BY ALL").rows(), table


def _nights_of_publishing(lake, tmp_path, nights: range, policy) -> dict[int, dict]:
    """Publish each of `nights` with one new memory (so that each publishes), vectors of its own."""
    from memory_lake.publish.export import publish

    reports = {}
    for night in nights:
        as_of = resolve_as_of(night_as_of(night))
        lake.ingest([write_jsonl(tmp_path / f"night-{night}.jsonl", [
            {"id": f"night-{night}-kept", "tenant": "acme", "content": f"Night {night}: the user bought a kettle.",
             "created_at": as_of.isoformat()}])], as_of=as_of)
        with lake.writer() as con:  # tonight's vectors (as the index step writes them)
            con.execute("INSERT INTO embeddings SELECT text_hash || ?, model, vector, unknown_ratio, ? "
                        "FROM embeddings ORDER BY text_hash, model LIMIT 2", [f"-{night}", as_of])
        report = publish(lake, as_of, policy, run_id=f"night-{night}")
        assert report.details["status"] == "published", report.details
        reports[night] = report
    return reports


def test_an_unchanged_part_is_linked_night_after_night_past_the_version_that_wrote_it(three_nights, tmp_path):
    """With ``keep_versions = 2`` the version that wrote the first night's parts is pruned two
    publishes later; each night's export still links every unchanged part (the same inode in every
    version) and writes only tonight's, since export_files names the newest version holding the file.
    (Naming the version that first wrote it, as it did, wrote every such part again once that
    version was pruned: at 1M memories, gigabytes of the first night's vectors every fifth night.)"""
    lake = copy_lake(three_nights.root, tmp_path / "lake")
    policy = lake.policy.with_overrides({"publish": {"keep_versions": 2}})
    first = sorted(p.stem for p in ((lake.exports / "CURRENT").resolve() / "tables" / "embeddings").glob("*.parquet"))

    reports = _nights_of_publishing(lake, tmp_path, range(4, 8), policy)

    versions = sorted(p.name for p in lake.exports.glob("v*"))
    assert len(versions) == 2 and reports[7].details["version"] in versions
    for night, report in reports.items():
        tonight = resolve_as_of(night_as_of(night)).strftime("%Y-%m-%d")
        parts = {p.stem: p for p in (lake.exports / report.details["version"] / "tables" / "embeddings").glob("*.parquet")
                 } if report.details["version"] in versions else None
        if parts is not None:
            # every part but tonight's is a link (of another version's file), tonight's alone written
            assert {day: part.stat().st_nlink > 1 for day, part in parts.items()} == {
                day: day != tonight or night != 7 for day in parts}, night
    oldest = [lake.exports / v / "tables" / "embeddings" / f"{first[0]}.parquet" for v in versions]
    assert oldest[0].stat().st_ino == oldest[1].stat().st_ino  # one file, never written again
    named = dict(lake.sql("SELECT name, version FROM export_files WHERE kind = 'table' AND name LIKE 'embeddings/%'"
                          ).rows())
    assert named[f"embeddings/{first[0]}"] == versions[0]  # the newest version holding it before tonight's


def test_a_part_whose_version_is_gone_is_linked_from_another_version_holding_the_same_bytes(three_nights, tmp_path):
    """export_files names a version that is gone (pruned before this rule, say) while another
    version holds a copy of the file (copy_lake copies, so the versions' files are copies): the
    part is linked from that copy when its size and SHA-256 are the recorded ones, and written
    when they are not."""
    as_of = resolve_as_of(night_as_of(4))
    lake = copy_lake(three_nights.root, tmp_path / "lake")
    name, version, sha = lake.sql("SELECT name, version, sha256 FROM export_files WHERE kind = 'table' "
                                  "AND name LIKE 'embeddings/%' ORDER BY name LIMIT 1").row(0)
    relpath = f"tables/{name}.parquet"
    holders = [p.parent.parent.parent.name for p in lake.exports.glob(f"v*/{relpath}")]
    assert version in holders and len(holders) >= 2
    shutil.rmtree(lake.exports / version)
    other = sorted(holders, key=lambda v: -int(v[1:]))
    other.remove(version)
    spoiled = copy_lake(lake.root, tmp_path / "spoiled" / "lake")  # a copy whose other holders differ by a byte
    for holder in other:
        path = spoiled.exports / holder / relpath
        path.write_bytes(path.read_bytes()[:-1] + b"\0")

    staged = {}
    for name_, one in (("lake", lake), ("spoiled", spoiled)):
        one.ingest([write_jsonl(tmp_path / f"{name_}.jsonl", [
            {"id": "night-4-kept", "tenant": "acme", "content": "A change to publish."}])], as_of=as_of)
        report = stage_export(one, as_of, run_id="night-4")
        staged[name_] = Path(report.details["staging"]) / relpath

    linked = staged["lake"].stat()
    source = (lake.exports / other[0] / relpath).stat()
    assert (linked.st_ino, linked.st_nlink) == (source.st_ino, 2) and file_sha256(staged["lake"]) == sha
    assert staged["spoiled"].stat().st_nlink == 1 and file_sha256(staged["spoiled"]) == sha  # written again
    assert lake.sql("SELECT version FROM export_files WHERE name = ?", [name]).item() == other[0]
