"""The export contract: what every file of a published version holds, column by column, and the
format version that names it (issue 18).

One definition serves three readers: the writer (``export.py`` writes these columns in this order
with these types), `load_export` (refuses a version whose ``format_version`` it does not know) and
the data dictionary ``docs/EXPORT.md``, generated from here::

    python -m memory_lake.publish.exportdoc > docs/EXPORT.md

A field has one logical type and one spelling per file kind, everywhere:

* ``timestamp``: in Parquet a time-zone-aware UTC timestamp (microseconds); in JSON an ISO 8601
  UTC string ending in ``Z`` (``2026-11-30T08:15:00Z``, six fractional digits when the value has any);
* ``json``: a JSON object as text, in Parquet and in JSON alike (never Parquet's JSON/binary type);
* ``string[]``: a Parquet list of strings, a JSON array of strings.

Changing a column, its type or a file's shape is a change of the format: bump FORMAT_VERSION
(major for a change that breaks a reader, minor for an added column or file) and regenerate
docs/EXPORT.md; tests/publish/test_contract.py pins the current schema so a change is deliberate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..store import PUBLISHED_STATUSES, TIERS, TYPES

# Semantic version of the export layout. 1.0.0: the first versioned contract (issue 18). 1.1.0:
# `base_seq` added (a record written back is merged against exactly what was read). 1.2.0:
# `changes.parquet`, a scope's `memory.json#changes` and the manifest's `changes_from` (issue 38.3).
# 1.3.0: the lake table `embeddings` as a folder of parts, `tables/embeddings/<YYYY-MM-DD>.parquet`,
# one per night its vectors were made (issue 42: a night adds a part; the rest are hard-linked), in
# place of `tables/embeddings.parquet`; the files `load_export` reads are unchanged. 1.4.0: so are
# `memory_history`, `entity_facts` and `entity_extractions` (one part per night of their `as_of`).
FORMAT_VERSION = "1.4.0"
# The format versions `load_export` reads (same major: added columns or files only).
READABLE_MAJOR = 1

# Logical type -> (Parquet / Arrow type, JSON type), as docs and the manifest spell them.
TYPES_BY_FILE_KIND: dict[str, tuple[str, str]] = {
    "string": ("string", "string"),
    "string[]": ("list<string>", "array of strings"),
    "float64": ("double", "number"),
    "int64": ("int64", "integer"),
    "bool": ("bool", "boolean"),
    "timestamp": ("timestamp[us, tz=UTC]", "string, ISO 8601 UTC ending in Z"),
    "json": ("string (JSON object text)", "string (JSON object text)"),
    # manifest.json and memory.json structure (JSON only)
    "object": ("-", "object"),
    "object[]": ("-", "array of objects"),
}


@dataclass(frozen=True)
class Field:
    """One column of an exported file: name, logical type (TYPES_BY_FILE_KIND), nullable, meaning."""

    name: str
    type: str
    nullable: bool
    meaning: str

    def as_dict(self, kind: str) -> dict[str, object]:
        """The manifest's entry for this column in a file of `kind` (``parquet`` or ``json``)."""
        physical = TYPES_BY_FILE_KIND[self.type][0 if kind == "parquet" else 1]
        return {"column": self.name, "type": physical, "nullable": self.nullable, "meaning": self.meaning}


def _one_of(values: tuple[str, ...]) -> str:
    return "one of " + ", ".join(f"`{v}`" for v in values)


_F = Field
# Every field a memory can carry in an export, once; the files below pick from it by name.
MEMORY_FIELDS: dict[str, Field] = {f.name: f for f in (
    _F("id", "string", False, "stable id of the memory: the snapshot's, or `m_` + a hash of tenant, agent, user "
                              "and normalised content when it came without one"),
    _F("tenant", "string", False, "tenant; a name that holds PII is its pseudonym placeholder"),
    _F("agent_id", "string", True, "agent of the scope (a scope is tenant, agent_id, user_id); null: none"),
    _F("user_id", "string", True, "user of the scope; null: none"),
    _F("context_id", "string", True, "context the memory came from"),
    _F("session_id", "string", True, "session the memory came from"),
    _F("tier", "string", False, _one_of(TIERS)),
    _F("type", "string", False, _one_of(TYPES)),
    _F("content", "string", False, "the memory's text, PII redacted"),
    _F("summary", "string", True, "a short summary, when the writer gave one"),
    _F("tags", "string[]", True, "tags"),
    _F("importance", "float64", False, "0 to 1"),
    _F("source", "string", True, "where the memory came from, as the writer named it"),
    _F("created_at", "timestamp", False, "when the memory was created"),
    _F("updated_at", "timestamp", False, "when it last changed"),
    _F("last_accessed_at", "timestamp", False, "when an agent last used it"),
    _F("access_count", "int64", False, "how often agents used it"),
    _F("reference_count", "int64", False, "how often it was referenced"),
    _F("expires_at", "timestamp", True, "when it expires (then it is archived); null: never"),
    _F("version", "int64", False, "counts the changes agents and users made, from 1; send it back as the base of an edit"),
    _F("base_seq", "int64", True, "the memory's latest history row (`memory_history.seq`) when this version was "
                                  "published; a record written back with it is merged against exactly what was read, "
                                  "so usage counters and rule moves made before are not counted twice"),
    _F("status", "string", False, _one_of(PUBLISHED_STATUSES) + "; `conflicted`: a value waits for a user's decision"),
    _F("content_hash", "string", False, "SHA-256 of the normalised content"),
    _F("merged_into", "string", True, "always null here: a memory merged into another is not exported"),
    _F("operator", "string", False, "who made the last change: `agent`, `user` or `system`"),
    _F("trace_id", "string", True, "the writer's trace id of the last change"),
    _F("extra", "json", True, "the snapshot's fields memory-lake does not know, as a JSON object; null: none"),
    _F("conflict", "bool", False, "true when the value is disputed: status `conflicted`, or one side of an open "
                                  "contradiction"),
    _F("conflict_with", "string[]", False, "ids of the other side(s) of an open contradiction; `[]` when none"),
)}

SCOPE_FIELDS = ("tenant", "agent_id", "user_id")
# memories.parquet: every published row (not forgotten, not merged), ordered by id.
PARQUET_COLUMNS = tuple(MEMORY_FIELDS)
# A record of a scope's memory.json: the snapshot contract, so the file re-ingests as it is (the
# scope is in the document, `conflict` and `conflict_with` are ignored on ingest).
RECORD_COLUMNS = ("id", "tier", "type", "content", "summary", "tags", "importance", "source", "context_id",
                  "session_id", "created_at", "updated_at", "last_accessed_at", "access_count", "reference_count",
                  "expires_at", "version", "base_seq", "status", "trace_id", "extra", "conflict", "conflict_with")
# What `load_export` returns per memory: the scope, then a memory.json record.
LOAD_COLUMNS = (*SCOPE_FIELDS, *RECORD_COLUMNS)
# The statuses a scope file (and load_export) carries: what an agent works with.
SCOPE_STATUSES = ("active", "conflicted")
# The order of tiers in a scope file (then importance, then last use, both descending, then id).
TIER_ORDER = ("important", "working", "short_term", "long_term")
# Lake columns an export leaves out, and why (a test keeps every memory column accounted for).
NOT_EXPORTED_COLUMNS = {
    "published_at": "publish bookkeeping of the lake; the manifest's `as_of` says when a version was published",
    "publish_meta": "publish bookkeeping of the lake; the manifest's `version` and `run_id` say the same",
}

# What changed in the memories agents load (status active or conflicted) between two versions
# (publish/changes.py): a change per memory and scope, and why a removed memory left.
CHANGE_KINDS = ("added", "updated", "removed")
REMOVAL_REASONS = {
    "forgotten": "forgotten (status deleted): its text is gone from every kept version",
    "merged_into": "merged into another memory by dedup (`merged_into` names it)",
    "moved": "its tenant, agent or user changed: it is `added` in its new scope",
    "expired": "archived by the `expire` rule: its `expires_at` passed",
    "archived": "archived (a tier rule, a user, an agent, or the lake's summaries)",
    "dormant": "long-term and unused for the dormant limit: kept, out of the scope's memories",
    "rolled_back": "in `from_version`, but not in a version CURRENT was rolled back to on the way to "
                   "`to_version` (only in an answer that crosses a rollback)",
    "unpublished": "not published any more for a reason the lake no longer records",
}
CHANGE_FIELDS = (
    MEMORY_FIELDS["tenant"], MEMORY_FIELDS["agent_id"], MEMORY_FIELDS["user_id"], MEMORY_FIELDS["id"],
    _F("change", "string", False, _one_of(CHANGE_KINDS) + ", for the memory in this scope: `added` (not loaded "
                                  "from `from_version`), `updated` (its row differs), `removed` (gone from the scope)"),
    _F("reason", "string", True, "why a removed memory left: " + _one_of(tuple(REMOVAL_REASONS))
                                 + " (see below); null unless removed"),
    _F("merged_into", "string", True, "the memory a removed one was merged into (reason `merged_into`); null "
                                      "otherwise"),
    _F("version_before", "int64", True, "the memory's `version` in `from_version`; null when added"),
    _F("version_after", "int64", True, "the memory's `version` in `to_version`; null when removed"),
    _F("from_version", "string", True, "the version the change is against (`v<N>`); null in the first version"),
    _F("to_version", "string", False, "the version the change leads to (`v<N>`)"),
)
CHANGE_COLUMNS = tuple(f.name for f in CHANGE_FIELDS)
# What `load_export(..., since=...)` returns per changed memory: the change, then the memory.json
# record of an added or updated memory (null when removed).
LOAD_CHANGE_COLUMNS = (*CHANGE_COLUMNS, *(c for c in RECORD_COLUMNS if c != "id"))

MEMORY_DOCUMENT_FIELDS = (
    _F("format_version", "string", False, "the FORMAT_VERSION this file was written in"),
    _F("tenant", "string", False, "the scope's tenant"),
    _F("agent_id", "string", True, "the scope's agent"),
    _F("user_id", "string", True, "the scope's user"),
    _F("as_of", "timestamp", False, "the logical time of the publish"),
    _F("changes", "object", False, "the scope's changes against the version before (`memory.json#changes`)"),
    _F("memories", "object[]", False, "the scope's records (`memory.json#memories`)"),
)
SCOPE_CHANGES_FIELDS = (
    _F("from", "string", True, "the version the changes are against (the manifest's `changes_from`); null: the "
                               "first version, every memory is added"),
    _F("added", "string[]", False, "ids of the memories added to the scope, by id"),
    _F("updated", "string[]", False, "ids of the memories whose row changed, by id"),
    _F("removed", "object[]", False, "the memories that left the scope, by id: `id`, `reason` and `merged_into`, as "
                                     "in `changes.parquet`"),
)

MANIFEST_FIELDS = (
    _F("format_version", "string", False, "semantic version of this layout (FORMAT_VERSION); a reader refuses a "
                                          "major version it does not know"),
    _F("version", "string", False, "the version's name, `v<N>`"),
    _F("as_of", "timestamp", False, "the logical time of the run that published it"),
    _F("run_id", "string", False, "the run that published it"),
    _F("content_hash", "string", False, "identity of the published rows; a publish with the same hash makes no "
                                        "new version"),
    _F("previous", "string", True, "the version CURRENT pointed at before (the diff gate's baseline); null: none"),
    _F("changes_from", "string", True, "the version `changes.parquet` is against: the one CURRENT pointed at when "
                                       "this one was staged (after a rollback, the one rolled back to); null: none"),
    _F("counts", "object", False, "`rows`, `by_tier`, `by_status`, and `scopes`: every scope (`tenant`, `agent_id`, "
                                "`user_id`, `by_tier`) with its folder `path`"),
    _F("checks", "object[]", False, "every check of the gate (`expectation`, `success`, `observed`), the diff gate's too"),
    _F("files", "object", False, "SHA-256 of every file of the version, by path"),
    _F("schema", "object", False, "per file: its kind and columns (`column`, `type`, `nullable`, `meaning`), as in "
                                "this document"),
    _F("rewrites", "object[]", False, "forgets that rewrote the version after its publish: `as_of`, `run_id`, "
                                  "`memories` (a count) and the `files` rewritten, never their text"),
)

# File (pattern) -> (kind, description, fields). `tables/<table>.parquet` follows the lake's schema
# (its columns are listed per version in the manifest), so it is not pinned here.
FILES: dict[str, tuple[str, str, tuple[Field, ...]]] = {
    "memories.parquet": ("parquet", "every published memory (not forgotten, not merged into another), ordered by id",
                         tuple(MEMORY_FIELDS[c] for c in PARQUET_COLUMNS)),
    "changes.parquet": ("parquet", "what changed in the memories agents load (status active or conflicted) since "
                                   "the manifest's `changes_from`: one row per changed memory and scope, ordered by "
                                   "scope and id; ids and reasons only, never text (a memory forgotten after the "
                                   "publish keeps its row here, while its record leaves every file)",
                        CHANGE_FIELDS),
    "scopes/<tenant>/<agent>/<user>/memory.json": (
        "json", "a scope's active and conflicted memories as a re-ingestable save file (the folder names are "
                "`memory_lake.publish.scope_folder`; the manifest's `counts.scopes` lists every scope's folder)",
        MEMORY_DOCUMENT_FIELDS),
    "scopes/<tenant>/<agent>/<user>/memory.json#memories": (
        "json", "a record of a memory.json's `memories`, ordered important, working, short-term, long-term, then "
                "by importance and last use (both descending) and id",
        tuple(MEMORY_FIELDS[c] for c in RECORD_COLUMNS)),
    "scopes/<tenant>/<agent>/<user>/memory.json#changes": (
        "json", "a memory.json's `changes`: this scope's rows of `changes.parquet` (a scope left with no active "
                "memory has no memory.json: its removals are in `changes.parquet` only)",
        SCOPE_CHANGES_FIELDS),
    "manifest.json": ("json", "what the version is and how it was checked", MANIFEST_FIELDS),
}
OTHER_FILES = {
    "scopes/<tenant>/<agent>/<user>/context.md": "the same memories as a Markdown context pack, by tier; a "
                                                 "disputed line ends in `[disputed, id …]`",
    "tables/<table>.parquet": "every other table of the lake (the PII salts are not in the database), with the same "
                              "type rules (timestamps UTC-aware, JSON columns as text); the manifest's `schema` "
                              "lists each one's columns and types",
    "tables/<table>/<part>.parquet": "a table written in parts, read as one (DuckDB: `read_parquet('tables/embeddings/"
                                     "*.parquet')`): `embeddings`, `memory_history`, `entity_facts` and "
                                     "`entity_extractions`, one part per night of their rows' `as_of` (`YYYY-MM-DD`; "
                                     "`undated` for a row without one, `empty` when the table has no row); a night "
                                     "adds a part",
}


def file_schema(name: str) -> dict[str, object]:
    """The manifest's ``schema`` entry of a contract file."""
    kind, description, fields = FILES[name]
    return {"kind": kind, "description": description, "columns": [f.as_dict(kind) for f in fields]}


def manifest_schema(tables: dict[str, list[tuple[str, str]]]) -> dict[str, object]:
    """The manifest's ``schema``: every contract file, and each ``tables/<name>.parquet`` with the
    (column, DuckDB type) pairs it was written with."""
    schema: dict[str, object] = {name: file_schema(name) for name in FILES}
    for table, columns in sorted(tables.items()):  # a table written in parts is named "<table>/*"
        name = table.removesuffix("/*")
        schema[f"tables/{table}.parquet"] = {
            "kind": "parquet", "description": f"a copy of the lake table `{name}`" + (
                ", one file per part" if name != table else ""),
            "columns": [{"column": c, "type": t} for c, t in columns]}
    return schema


def format_major(version: str | None) -> int | None:
    """The major number of a ``format_version`` ("1.0.0" -> 1); None when missing or malformed."""
    try:
        return int(str(version).split(".")[0])
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------------- docs/EXPORT.md
def export_markdown() -> str:
    """docs/EXPORT.md: the data dictionary of a published version, from the definitions above."""
    out = [
        "# The export contract",
        "",
        "<!-- generated by `python -m memory_lake.publish.exportdoc > docs/EXPORT.md`; "
        "tests/publish/test_contract.py fails when this file and the code differ -->",
        "",
        f"Format version **{FORMAT_VERSION}** (`format_version` in every `manifest.json` and `memory.json`). "
        "A reader refuses a major version it does not know; a minor version only adds columns or files.",
        "",
        "A published version is a folder `exports/v<N>/`; `exports/CURRENT` points at the one agents read. "
        "`memory_lake.load_export(path, tenant=..., agent=..., user=...)` returns a scope's records "
        f"({', '.join(f'`{c}`' for c in LOAD_COLUMNS[:3])} and the `memory.json` record fields) from it.",
        "",
        "An agent that holds a version syncs with `load_export(path, tenant=..., since=\"v41\")` (or "
        "`memory_lake.publish.changes_since`): only what changed from v41 to the chosen version, composed across "
        "every version between (added then removed: not there; updated twice: one update; across a rollback, what "
        "only the rolled-back versions held is removed as `rolled_back`), each row with `changes.parquet`'s columns "
        "and, for an added or updated memory, its `memory.json` record. A `since` that is not kept, or whose chain "
        "of `changes.parquet` files is not, raises `ReloadInFull`: load the scope in full instead; never a partial "
        "answer.",
        "",
        "## Types",
        "",
        "| logical type | in Parquet | in JSON |",
        "|---|---|---|",
    ]
    out += [f"| `{name}` | {parquet} | {json} |" for name, (parquet, json) in TYPES_BY_FILE_KIND.items()]
    out += ["", "Timestamps are UTC: time-zone-aware in Parquet, and in JSON `YYYY-MM-DDTHH:MM:SSZ` (with six "
            "fractional digits when a value has any).", ""]
    for name, (kind, description, fields) in FILES.items():
        out += [f"## `{name}`", "", description[0].upper() + description[1:] + ".", "",
                "| column | type | null | meaning |", "|---|---|---|---|"]
        for f in fields:
            physical = TYPES_BY_FILE_KIND[f.type][0 if kind == "parquet" else 1]
            out.append(f"| `{f.name}` | {physical} | {'yes' if f.nullable else 'no'} | {f.meaning} |")
        out.append("")
    out += ["## Why a memory was removed", "", "| reason | meaning |", "|---|---|"]
    out += [f"| `{name}` | {meaning} |" for name, meaning in REMOVAL_REASONS.items()]
    out += ["", "A memory forgotten since the version before is removed as `forgotten` whenever that version "
            "published it: the forget scrubbed it from that version's files, so an agent that loaded it before "
            "hears of it here.", ""]
    out += ["## Other files", ""]
    out += [f"- `{name}`: {text}." for name, text in OTHER_FILES.items()]
    out += ["", "Lake columns left out of the export:", ""]
    out += [f"- `{name}`: {why}." for name, why in NOT_EXPORTED_COLUMNS.items()]
    return "\n".join(out) + "\n"
