"""Publish targets (issue 38.4): after a publish, every vector store named in ``[[targets]]``
(`store.policy.TargetPolicy`) receives what agents work with, and only what changed.

The rule, in one place:

* **The set** is the version CURRENT points at: the rows of its ``memories.parquet`` with status
  active or conflicted (``contract.SCOPE_STATUSES``, what ``load_export`` returns), each with the
  vector its content has for the target's model (the lake's ``[search] model`` unless the target
  names another) in the same version's ``tables/embeddings/`` (one file per night, export.PARTED): the lake's cached vectors,
  never re-embedded. A memory the model does not cover (its languages; an empty vector) or has not
  embedded yet is not sent, and the report counts it (``not_covered``). Forgotten, merged,
  archived, dormant and expired memories are not in the set.
* **A row** is keyed by the memory id and carries the vector, the text (``content``) and the
  metadata ``METADATA_COLUMNS``: the scope, tier, type, status, creation and update times (ISO
  8601 UTC text), the memory's ``version``, the ``export_version`` it was last written from, and
  ``digest``, the SHA-256 of everything written but the export version.
* **Changes** are found by comparing what the target holds (id -> version and digest, read back
  from the store) with the set: a missing or different row is written, a row the set lacks is
  deleted, and nothing else is touched. No bookkeeping is kept in the lake, so a target that
  missed a run (down, failed, added later, emptied by hand) catches up on the next sync by
  itself, and a second sync of an unchanged lake writes nothing.
* **Failures** stay with the target: a target that raises is recorded (state ``failed``, the
  error, and a step error of ``sync_targets``, so the run ends degraded) and the others go on; the
  lake and its publish are never touched (the sync only reads the published files) and the next
  sync retries until the target matches. A ``[[targets]]`` entry memory-lake.toml gets wrong
  (`store.policy.InvalidTarget`) is such a failure too (state ``invalid``), of the sync and the
  status alone: every other command works.

A target is a small object (`Target`): what it holds, write rows, delete ids, its vector
dimension, every row for checks, close (the row: ``rows.py``). ``lancedb.py``, ``qdrant.py`` and
``chroma.py`` are the three there are; `open_target` picks one by ``kind``.
"""

from __future__ import annotations

import difflib
import urllib.parse
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from ..publish import contract, current_version
from ..store import InputError, InvalidTarget, MemoryLakeError, Policy, StepReport, connect, step_error, table_files
from .rows import HELD_COLUMNS, HELD_SCHEMA, METADATA_COLUMNS, ROW_COLUMNS

# Rows per write call (each store takes a batch in one request).
BATCH_ROWS = 1000
# What a person does about a failed target.
RETRY_ACTION = ("fix the cause (see the error); the next nightly run, or `memory-lake targets sync {name}`, "
                "brings it level")
FIX_ACTION = ("fix the entry in memory-lake.toml (see the error); the next nightly run, or `memory-lake targets "
              "sync`, brings the target level")


class TargetError(MemoryLakeError):
    """A target cannot take the lake's rows as configured (another vector dimension, no model)."""


class Target(Protocol):
    """One vector store, as the sync sees it. Rows are Polars frames with ROW_COLUMNS (``vector`` a
    list of float32); ids are memory ids."""

    kind: str
    name: str

    def held(self) -> pl.DataFrame:
        """HELD_COLUMNS of every row the store holds (an empty frame when its table or collection
        does not exist yet; None in ``version`` / ``digest`` for a row this lake did not write)."""

    def dimension(self) -> int | None:
        """The vector size of its table or collection, or None when there is none yet."""

    def write(self, rows: pl.DataFrame) -> None:
        """Insert or replace `rows` by id, creating the table or collection when it is missing."""

    def delete(self, ids: list[str]) -> None:
        """Remove the rows of `ids` (ids it does not hold are ignored)."""

    def dump(self) -> pl.DataFrame:
        """Every row it holds with ROW_COLUMNS, ordered by id (for status checks and tests)."""

    def close(self) -> None:
        """Release the store (Qdrant's local mode locks its folder while a client is open)."""


@dataclass(frozen=True)
class PublishedSet:
    """The set of one version for one model: ``rows`` (ROW_COLUMNS, ordered by id) and how many
    published memories had no vector of the model (``not_covered``)."""

    version: str
    model: str
    rows: pl.DataFrame
    not_covered: int


def open_target(config, lake_root: Path) -> Target:
    """The adapter of a `TargetPolicy` (its store's client imported only now); a relative path is
    inside the lake."""
    path = Path(config.path).expanduser() if config.path else None
    if path is not None and not path.is_absolute():
        path = Path(lake_root) / path
    if config.kind == "lancedb":
        from .lancedb import LanceDBTarget
        return LanceDBTarget(config.name, path, config.collection)
    if config.kind == "qdrant":
        from .qdrant import QdrantTarget
        return QdrantTarget(config.name, config.collection, path=path, url=config.url or None,
                            api_key_env=config.api_key_env or None)
    if config.kind == "chroma":
        from .chroma import ChromaTarget
        return ChromaTarget(config.name, path, config.collection)
    raise InputError(f"target {config.name}: unknown kind {config.kind!r}")


def select_targets(policy: Policy, names: list[str] | tuple[str, ...] | None = None) -> list:
    """The configured targets, or those named (an unknown name is an InputError naming the known
    ones): each a `TargetPolicy`, or the `InvalidTarget` of an entry memory-lake.toml gets wrong."""
    configured = [*policy.targets, *policy.invalid_targets]
    if not names:
        return configured
    known = [t.name for t in configured if t.name]
    unnamed = "".join(f"; {t.error}" for t in policy.invalid_targets if not t.name)  # it may be the one meant
    for name in names:
        if name not in known:
            if not known:
                none = ("no valid target is configured" if unnamed else
                        "no target is configured (add a [[targets]] table to memory-lake.toml; see README, "
                        "Vector-store targets)")
                raise InputError(f"unknown target {name!r}: {none}{unnamed}")
            close = difflib.get_close_matches(name, known, n=3)
            hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
            raise InputError(f"unknown target {name!r}: {hint}configured targets: {', '.join(known)}{unnamed}")
    return [t for t in configured if t.name in names]


def _invalid_entry(config: InvalidTarget, version: str | None) -> dict[str, Any]:
    """The entry of an invalid [[targets]] table in a sync's or a status's result."""
    return {"name": config.name, "entry": config.entry, "kind": None, "where": None, "collection": None,
            "model": None, "version": version, "state": "invalid", "error": config.error, "action": FIX_ACTION}


def target_model(config, policy: Policy) -> str:
    """The model whose vectors a target receives: its own ``model``, else the lake's ``[search] model``."""
    model = config.model or policy.search.model
    if not model or model == "none":
        raise TargetError(f"target {config.name}: the lake has no embedding model ([search] model = "
                          f"{policy.search.model!r}); name the model whose vectors it receives (model = ...)")
    # only the lake's own models have vectors: any other name would find none and empty the target
    lakes = [m for m in (policy.search.model, policy.search.multilingual_model) if m and m != "none"]
    if model not in lakes:
        raise TargetError(f"target {config.name}: model = {model!r} is not one of the lake's models "
                          f"({', '.join(lakes) or 'none'}; [search] model and multilingual_model), so it has no "
                          f"vectors to send")
    return model


# The contract's JSON time (publish/export.py writes memory.json the same way): ISO 8601 UTC ending
# in Z, with six fractional digits only when the value has any.
def _iso_sql(column: str) -> str:
    return (f"CASE WHEN {column} IS NOT NULL THEN strftime({column}, '%Y-%m-%dT%H:%M:%S') "
            f"|| CASE WHEN epoch_us({column}) % 1000000 <> 0 THEN strftime({column}, '.%f') ELSE '' END || 'Z' END")


def published_set(version_dir: Path, model: str, max_unknown_ratio: float) -> PublishedSet:
    """Read the set of one published version (`version_dir`, ``exports/v<N>``) for `model`: one
    DuckDB pass over its ``memories.parquet`` and ``tables/embeddings/`` (one file per night, export.PARTED). A vector counts
    where search trusts it (non-empty, unknown-token share at most `max_unknown_ratio`, the rule of
    ``search.embeddings.covered_sql``)."""
    memories = version_dir / "memories.parquet"
    embeddings = table_files(version_dir).get("embeddings")  # the parts of tables/embeddings/
    statuses = list(contract.SCOPE_STATUSES)
    con = connect(Path(":memory:"))
    try:
        if embeddings:
            con.execute(
                "CREATE TEMP TABLE vectors AS SELECT text_hash, vector FROM read_parquet(?) "
                "WHERE model = ? AND len(vector) > 0 AND unknown_ratio <= ? "
                "QUALIFY row_number() OVER (PARTITION BY text_hash ORDER BY as_of DESC) = 1",
                [[str(p) for p in embeddings], model, max_unknown_ratio])
        else:  # a version written before the index ever ran
            con.execute("CREATE TEMP TABLE vectors (text_hash VARCHAR, vector FLOAT[])")
        written = ["id", "vector", "content", *METADATA_COLUMNS[:-2]]
        frame = con.execute(
            f"""
            WITH m AS (SELECT * FROM read_parquet(?) WHERE status IN (SELECT unnest(?::VARCHAR[]))),
            r AS (
                SELECT m.id, v.vector, m.content, m.tenant, m.agent_id, m.user_id, m.tier, m.type, m.status,
                       {_iso_sql('m.created_at')} AS created_at, {_iso_sql('m.updated_at')} AS updated_at,
                       m.version::BIGINT AS version
                FROM m LEFT JOIN vectors v ON v.text_hash = m.content_hash)
            SELECT *, ? AS export_version,
                   CASE WHEN vector IS NOT NULL THEN
                        sha256(? || to_json(struct_pack({', '.join(f'{c} := {c}' for c in written)}))::VARCHAR)
                   END AS digest
            FROM r ORDER BY id
            """, [str(memories), statuses, version_dir.name, model]).pl()
    finally:
        con.close()
    covered = frame.filter(pl.col("vector").is_not_null())
    dimensions = covered["vector"].list.len().unique().to_list()
    if len(dimensions) > 1:
        raise TargetError(f"model {model} has vectors of {len(dimensions)} sizes in {version_dir.name} "
                          f"({', '.join(map(str, sorted(dimensions)))}); re-run the index step")
    rows = covered.with_columns(pl.col("vector").cast(pl.List(pl.Float32))).select(ROW_COLUMNS)
    return PublishedSet(version_dir.name, model, rows, frame.height - covered.height)


def plan_changes(published: pl.DataFrame, held: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows to write, held rows to delete): a published row the target lacks or holds with
    another version or digest is written; a held id the set lacks is deleted."""
    held = held.select(HELD_COLUMNS).cast(HELD_SCHEMA)
    same = held.select("id", "version", "digest").unique()
    to_write = published.join(same, on=["id", "version", "digest"], how="anti")
    to_delete = held.join(published.select("id"), on="id", how="anti").unique("id", keep="first").sort("id")
    return to_write, to_delete


def changed_scopes(to_write: pl.DataFrame, to_delete: pl.DataFrame) -> int:
    """How many scopes (tenant, agent, user) a sync touches."""
    scope = ["tenant", "agent_id", "user_id"]
    return pl.concat([to_write.select(scope), to_delete.select(scope).cast(pl.String)]).unique().height


def sync_target(target: Target, published: PublishedSet) -> dict[str, Any]:
    """Bring one target level with `published`: deletes, then writes in batches of BATCH_ROWS.
    Returns the counts; raises whatever the store raises (the caller records it)."""
    held = target.held()
    to_write, to_delete = plan_changes(published.rows, held)
    if to_write.height:
        size = published.rows["vector"].list.len().first()
        existing = target.dimension()
        if existing is not None and existing != size:
            raise TargetError(
                f"target {target.name} holds {existing}-d vectors and model {published.model} gives {size}-d: name "
                f"another table or collection for this model (or remove the old one)")
    if to_delete.height:
        ids = to_delete["id"].to_list()
        for start in range(0, len(ids), BATCH_ROWS):
            target.delete(ids[start:start + BATCH_ROWS])
    for start in range(0, to_write.height, BATCH_ROWS):
        target.write(to_write.slice(start, BATCH_ROWS))
    return {"written": to_write.height, "deleted": to_delete.height, "scopes": changed_scopes(to_write, to_delete),
            "held": held.height + to_write.join(held.select("id"), on="id", how="anti").height - to_delete.height,
            "published": published.rows.height, "not_covered": published.not_covered}


def where(config) -> str:
    """Where a target lives, for people: its path, or its URL without path, query or credentials."""
    if config.url:
        parts = urllib.parse.urlsplit(config.url)
        return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return config.path


def _entry(config, model: str | None, version: str | None) -> dict[str, Any]:
    return {"name": config.name, "kind": config.kind, "where": where(config), "collection": config.collection,
            "model": model, "version": version}


def sync_targets(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None,
                 names: list[str] | None = None) -> StepReport:
    """The nightly step after ``publish_export`` (and `memory-lake targets sync`): bring every
    configured target (or those `names`) level with the version CURRENT points at. Holds the
    lake's write lock (re-entrant inside a run), so two syncs never write one target at once; reads
    only the published files. A target that raises is recorded, never raised: ``details["targets"]``
    has one entry per target (state ``in_sync``, ``synced``, ``failed``, ``invalid`` (its
    [[targets]] entry: `_invalid_entry`) or ``nothing_published``, the counts, the error and what to
    do), ``errors`` a step error per failed or invalid target."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("targets", as_of)
    chosen = select_targets(policy, names)
    report = StepReport("sync_targets", as_of, run_id,
                        labels={"written": "rows written", "deleted": "rows deleted", "failed": "targets failed"})
    if not chosen:
        report.details = {"targets": [], "note": "no target configured ([[targets]] in memory-lake.toml)"}
        return report
    results = []
    with lake.hold("sync targets"):
        version = current_version(lake)
        sets: dict[str, PublishedSet] = {}
        for config in chosen:
            if isinstance(config, InvalidTarget):  # a failed target, whether or not anything is published
                report.errors.append(step_error("sync_targets", InputError(config.error), item=config.entry))
                results.append({**_invalid_entry(config, version), "written": 0, "deleted": 0})
                continue
            entry = _entry(config, None, version)
            if version is None:
                results.append({**entry, "state": "nothing_published", "written": 0, "deleted": 0})
                continue
            target = None
            try:
                model, target = _open_with_set(lake, config, version, policy, sets)
                entry["model"] = model
                counts = sync_target(target, sets[model])
                state = "synced" if counts["written"] or counts["deleted"] else "in_sync"
                results.append({**entry, "state": state, **counts})
            except Exception as exc:
                failure = step_error("sync_targets", exc, item=f"target {config.name}")
                report.errors.append(failure)
                results.append({**entry, "state": "failed", "written": 0, "deleted": 0, "error": failure["error"],
                                "action": RETRY_ACTION.format(name=config.name)})
            finally:
                if target is not None:
                    _close(target, config, report)
    report.counts = {"targets": len(results), "written": sum(r["written"] for r in results),
                     "deleted": sum(r["deleted"] for r in results),
                     "failed": sum(r["state"] in ("failed", "invalid") for r in results)}
    report.details = {"version": version, "targets": results}
    return report


def _open_with_set(lake, config, version: str, policy: Policy, sets: dict) -> tuple[str, Target]:
    """The target's model (its published set read once per model into `sets`) and the open target."""
    model = target_model(config, policy)
    if model not in sets:
        sets[model] = published_set(lake.exports / version, model, policy.search.max_unknown_ratio)
    return model, open_target(config, lake.root)


def _close(target: Target, config, report: StepReport) -> None:
    try:
        target.close()
    except Exception as exc:  # a store that fails to close must not hide the sync's own result
        report.errors.append(step_error("sync_targets", exc, item=f"target {config.name} (closing)"))


def target_status(lake, policy: Policy | None = None, names: list[str] | None = None) -> dict[str, Any]:
    """Each configured target (or those `names`) against the version CURRENT points at, read-only:
    ``{"version", "targets": [{name, kind, where, collection, model, state, held, published,
    not_covered, to_write, to_delete, error?}]}`` with state ``in_sync``, ``behind`` (the next sync
    writes or deletes), ``unreachable`` (the store raised), ``invalid`` (its [[targets]] entry, with
    the error naming the file) or ``nothing_published``."""
    policy = policy or lake.policy
    chosen = select_targets(policy, names)
    version = current_version(lake)
    sets: dict[str, PublishedSet] = {}
    out = []
    for config in chosen:
        if isinstance(config, InvalidTarget):
            out.append(_invalid_entry(config, version))
            continue
        entry = _entry(config, None, version)
        if version is None:
            out.append({**entry, "state": "nothing_published"})
            continue
        target = None
        try:
            model, target = _open_with_set(lake, config, version, policy, sets)
            entry["model"] = model
            held = target.held()
            to_write, to_delete = plan_changes(sets[model].rows, held)
            out.append({**entry, "state": "behind" if to_write.height or to_delete.height else "in_sync",
                        "held": held.height, "published": sets[model].rows.height,
                        "not_covered": sets[model].not_covered, "to_write": to_write.height,
                        "to_delete": to_delete.height})
        except Exception as exc:
            message = (str(exc).strip().splitlines() or [""])[0][:500]
            out.append({**entry, "state": "unreachable",
                        "error": f"{type(exc).__name__}: {message}" if message else type(exc).__name__})
        finally:
            if target is not None:
                try:
                    target.close()
                except Exception:
                    pass
    return {"version": version, "targets": out}
