"""The export contract (publish/contract.py, issue 18): the schema is pinned (a change must bump
format_version on purpose), docs/EXPORT.md is generated from it, and the files a publish writes
have exactly its columns and types, read by Polars, pyarrow and pandas alike."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from memory_lake.publish import contract, publish
from memory_lake.store import schema

from ..conftest import AS_OF, write_jsonl

EXPORT_MD = Path(__file__).resolve().parents[2] / "docs" / "EXPORT.md"
ISO_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z")

S, T, I, J = "string", "timestamp", "int64", "json"
# The contract as released. Changing a column, a type or nullability changes what agents read:
# bump contract.FORMAT_VERSION (major when a reader breaks), regenerate docs/EXPORT.md, update this.
PINNED_VERSION = "1.4.0"
PINNED_MEMORY = [
    ("id", S, False), ("tenant", S, False), ("agent_id", S, True), ("user_id", S, True), ("context_id", S, True),
    ("session_id", S, True), ("tier", S, False), ("type", S, False), ("content", S, False), ("summary", S, True),
    ("tags", "string[]", True), ("importance", "float64", False), ("source", S, True), ("created_at", T, False),
    ("updated_at", T, False), ("last_accessed_at", T, False), ("access_count", I, False),
    ("reference_count", I, False), ("expires_at", T, True), ("version", I, False), ("base_seq", I, True),
    ("status", S, False),
    ("content_hash", S, False), ("merged_into", S, True), ("operator", S, False), ("trace_id", S, True),
    ("extra", J, True), ("conflict", "bool", False), ("conflict_with", "string[]", False)]
PINNED_RECORD = ["id", "tier", "type", "content", "summary", "tags", "importance", "source", "context_id", "session_id",
                 "created_at", "updated_at", "last_accessed_at", "access_count", "reference_count", "expires_at",
                 "version", "base_seq", "status", "trace_id", "extra", "conflict", "conflict_with"]
PINNED_DOCUMENT = ["format_version", "tenant", "agent_id", "user_id", "as_of", "changes", "memories"]
PINNED_MANIFEST = ["format_version", "version", "as_of", "run_id", "content_hash", "previous", "changes_from",
                   "counts", "checks", "files", "schema", "rewrites"]
PINNED_TYPES = {"string": ("string", "string"), "string[]": ("list<string>", "array of strings"),
                "float64": ("double", "number"), "int64": ("int64", "integer"), "bool": ("bool", "boolean"),
                "timestamp": ("timestamp[us, tz=UTC]", "string, ISO 8601 UTC ending in Z"),
                "json": ("string (JSON object text)", "string (JSON object text)"),
                "object": ("-", "object"), "object[]": ("-", "array of objects")}

ARROW = {"string": pa.string(), "string[]": pa.list_(pa.string()), "float64": pa.float64(), "int64": pa.int64(),
         "bool": pa.bool_(), "timestamp": pa.timestamp("us", tz="UTC"), "json": pa.string()}
POLARS = {"string": pl.String, "string[]": pl.List(pl.String), "float64": pl.Float64, "int64": pl.Int64,
          "bool": pl.Boolean, "timestamp": pl.Datetime("us", "UTC"), "json": pl.String}
PANDAS = {"string": "str", "string[]": "object", "float64": "float64", "int64": "int64", "bool": "bool",
          "timestamp": "datetime64[us, UTC]", "json": "str"}


def test_the_schema_is_pinned_so_a_change_bumps_format_version_on_purpose():
    assert contract.FORMAT_VERSION == PINNED_VERSION
    assert [(f.name, f.type, f.nullable) for f in contract.MEMORY_FIELDS.values()] == PINNED_MEMORY
    assert list(contract.PARQUET_COLUMNS) == [name for name, *_ in PINNED_MEMORY]
    assert list(contract.RECORD_COLUMNS) == PINNED_RECORD
    assert [f.name for f in contract.MEMORY_DOCUMENT_FIELDS] == PINNED_DOCUMENT
    assert [f.name for f in contract.MANIFEST_FIELDS] == PINNED_MANIFEST
    assert contract.TYPES_BY_FILE_KIND == PINNED_TYPES


def test_every_memory_column_is_exported_or_said_why_not():
    exported = set(contract.PARQUET_COLUMNS) - {"conflict", "conflict_with", "base_seq"}  # from other tables
    assert exported | set(contract.NOT_EXPORTED_COLUMNS) == set(schema.MEMORY_COLUMNS)
    assert not exported & set(contract.NOT_EXPORTED_COLUMNS)


def test_docs_export_md_is_generated_from_the_contract():
    assert EXPORT_MD.read_text(encoding="utf-8") == contract.export_markdown(), (
        "docs/EXPORT.md differs from the contract: run `python -m memory_lake.publish.exportdoc > docs/EXPORT.md`")


def published(lake, tmp_path) -> Path:
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": "a", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "content": "likes tea", "tags": ["drink"],
         "created_at": "2026-11-01T08:15:00.250Z", "expires_at": "2027-01-01T00:00:00+01:00", "channel": "web",
         "trace_id": "t-1"},
        {"id": "b", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "content": "喜欢喝茶", "tier": "important",
         "created_at": 1764460800}])], as_of=AS_OF)
    assert publish(lake, AS_OF).details["version"] == "v1"
    return lake.exports / "v1"


def test_memories_parquet_has_the_contract_types_in_pyarrow_polars_and_pandas(lake, tmp_path):
    version = published(lake, tmp_path)
    fields = [contract.MEMORY_FIELDS[c] for c in contract.PARQUET_COLUMNS]
    arrow = pq.read_schema(version / "memories.parquet")
    assert [(f.name, f.type) for f in arrow] == [(f.name, ARROW[f.type]) for f in fields]
    frame = pl.read_parquet(version / "memories.parquet")
    assert frame.schema == pl.Schema({f.name: POLARS[f.type] for f in fields})
    pandas = pd.read_parquet(version / "memories.parquet")
    assert {k: str(v) for k, v in pandas.dtypes.items()} == {f.name: PANDAS[f.type] for f in fields}
    row = frame.filter(pl.col("id") == "a").to_dicts()[0]
    assert str(row["created_at"]) == "2026-11-01 08:15:00.250000+00:00"
    assert str(row["expires_at"]) == "2026-12-31 23:00:00+00:00"
    assert json.loads(row["extra"]) == {"channel": "web"}
    assert str(pandas.set_index("id").loc["b", "created_at"]) == "2025-11-30 00:00:00+00:00"


def test_json_files_write_iso_utc_with_z_and_extra_as_text(lake, tmp_path):
    version = published(lake, tmp_path)
    document = json.loads((version / "scopes" / "acme" / "bot" / "alice" / "memory.json").read_text())
    assert list(document) == PINNED_DOCUMENT
    assert document["format_version"] == contract.FORMAT_VERSION and document["as_of"] == "2026-11-30T00:00:00Z"
    records = {r["id"]: r for r in document["memories"]}
    assert [list(r) for r in document["memories"]] == [PINNED_RECORD, PINNED_RECORD]
    assert {k: records["a"][k] for k in ("created_at", "expires_at", "extra", "conflict", "conflict_with")} == {
        "created_at": "2026-11-01T08:15:00.250000Z", "expires_at": "2026-12-31T23:00:00Z",
        "extra": '{"channel":"web"}', "conflict": False, "conflict_with": []}
    assert (records["b"]["created_at"], records["b"]["extra"]) == ("2025-11-30T00:00:00Z", None)
    for record in document["memories"]:
        for name in ("created_at", "updated_at", "last_accessed_at"):
            assert ISO_Z.fullmatch(record[name]), (name, record[name])


def test_the_manifest_carries_format_version_and_every_files_schema(lake, tmp_path):
    version = published(lake, tmp_path)
    manifest = json.loads((version / "manifest.json").read_text())
    assert list(manifest) == PINNED_MANIFEST
    assert (manifest["format_version"], manifest["previous"]) == (contract.FORMAT_VERSION, None)
    for name in contract.FILES:
        assert manifest["schema"][name] == contract.file_schema(name)
    assert manifest["schema"]["memories.parquet"]["columns"][13] == {
        "column": "created_at", "type": "timestamp[us, tz=UTC]", "nullable": False, "meaning": "when the memory was created"}
    tables = sorted(p.name for p in (version / "tables").glob("*.parquet"))
    parted = sorted(p.name for p in (version / "tables").iterdir() if p.is_dir())
    # folders of parts (export.PARTED), one schema entry per table for all its parts
    assert parted == ["embeddings", "entity_extractions", "entity_facts", "memory_history"]
    assert sorted(k for k in manifest["schema"] if k.startswith("tables/")) == sorted(
        [f"tables/{t}" for t in tables] + [f"tables/{t}/*.parquet" for t in parted])
    # one type per field in the lake tables too: no naive timestamp, no JSON as binary, nested fields included
    parts = [str(p.relative_to(version / "tables")) for t in parted for p in sorted((version / "tables" / t).glob("*"))]
    assert parts  # an empty table has its one empty part, so the folder reads as the table
    for table in tables + parts:
        for name, dtype in pl.read_parquet_schema(version / "tables" / table).items():
            text = str(dtype)
            assert "Binary" not in text and ("Datetime" not in text or "time_zone='UTC'" in text), (table, name, text)
    history = manifest["schema"]["tables/memory_history/*.parquet"]["columns"]
    assert {"column": "as_of", "type": "TIMESTAMP WITH TIME ZONE"} in history
