"""Incremental sync (issue 38.3): what changed between two published versions, for agents that hold
one and want only the difference.

Every published version carries ``changes.parquet`` against the version CURRENT pointed at when it
was staged (its manifest's ``changes_from``; after a rollback, the version rolled back to; the first
version: every memory ``added``), and each scope's ``memory.json`` the same rows of its scope in a
``changes`` section. The changes are those of the memories agents load (status active or
conflicted), per memory and scope:

* ``added``: loaded now, not then; ``updated``: loaded both times, its published row differs (a
  digest of the row, as the export's content hash takes it); ``removed``: loaded then, not now,
  with the reason the lake records (``contract.REMOVAL_REASONS``): ``forgotten`` (a tombstone),
  ``merged_into`` (dedup, naming the memory it went into), ``moved`` (another tenant, agent or
  user: ``added`` there), ``expired`` (archived by the ``expire`` rule), ``archived``, ``dormant``.
  A held scope (``diff.py``) keeps its published rows, so it shows no change but its forgets.
* A forget scrubs every kept version (``forget.py``), the one the changes are against too, so a
  memory forgotten since then is missing from it: it is taken from the lake's history as it was
  when that version was staged (the newest history row the version's copy of ``memory_history``
  holds) and listed as ``forgotten`` whenever that version published it.

``changes.parquet`` holds ids, scopes, version numbers and reasons, never text, so a forget has
nothing to scrub in it: a forgotten memory keeps its row (its id and ``forgotten``), while its record
leaves every file. ``compose_changes`` reads these files for ``load_export(..., since=...)`` and
``changes_since``: from the version an agent holds to the one it asks for, step by step along
``changes_from`` (back up to the version both descend from, then down), composed per memory
(added then removed: nothing; updated twice: one update); a step back up a rollback undoes that
version's changes (what only it added is removed as ``rolled_back``). A ``since`` that is not kept,
or whose steps are not all kept, is a ``ReloadInFull``: never a partial answer.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ..store import InputError, parquet_sql, table_files
from . import contract

CHANGES_FILE = "changes.parquet"
KEY = (*contract.SCOPE_FIELDS, "id")
ACTIVE = "status IN (" + ", ".join(f"'{s}'" for s in contract.SCOPE_STATUSES) + ")"
PUBLISHED = "(" + ", ".join(f"'{s}'" for s in contract.PUBLISHED_STATUSES) + ")"
CHANGE_SCHEMA = {f.name: (pl.Int64 if f.type == "int64" else pl.String) for f in contract.CHANGE_FIELDS}
_SQL_TYPES = {"string": "VARCHAR", "int64": "BIGINT"}


class ReloadInFull(InputError):
    """`since` names a version whose changes up to the version asked for are not all kept (pruned,
    unknown, or published before ``changes.parquet`` existed): load the scope in full instead."""


# ---------------------------------------------------------------------------- writing (stage)
@dataclass
class StagedChanges:
    """The changes a staged version carries: its ``changes.parquet`` is written; `sections` are the
    ``memory.json#changes`` of the scopes with a change."""

    from_version: str | None
    to_version: str
    counts: dict[str, int]
    sections: dict[tuple[str, str | None, str | None], dict[str, Any]] = field(default_factory=dict)

    def section(self, tenant: str, agent_id: str | None, user_id: str | None) -> dict[str, Any]:
        """A scope's ``memory.json#changes`` (empty lists when nothing changed in it)."""
        return self.sections.get((tenant, agent_id, user_id),
                                 {"from": self.from_version, "added": [], "updated": [], "removed": []})

    def summary(self) -> dict[str, Any]:
        """For the stage report: the versions and how many memories were added, updated, removed."""
        return {"from": self.from_version, "to": self.to_version, **self.counts}


def stage_changes(con: duckdb.DuckDBPyConnection, staging: Path, previous: Path | None, to_version: str,
                  rows: str = "publish_rows") -> StagedChanges:
    """Write ``<staging>/changes.parquet``: the memories agents load in `rows` (the staged rows, a
    table behind `con` with the lake's tables) against those of the version folder `previous`
    (None: nothing published, every memory is added), with removal reasons from the lake's
    ``memories`` and ``memory_history``. `to_version` is the name the staged version will get."""
    from_version = previous.name if previous is not None else None
    before = _before_sql(con, previous)
    after_digest = _digest(_columns(con, rows))
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE publish_changes AS
        WITH a AS (SELECT tenant, agent_id, user_id, id, version, {after_digest} AS digest FROM {rows} WHERE {ACTIVE}),
             b AS ({before}),
             archived AS (SELECT memory_id, arg_max(reason, seq) AS how FROM memory_history
                          WHERE after.status = 'archived' AND before.status IS DISTINCT FROM 'archived'
                          GROUP BY memory_id),
             changed AS (
                 SELECT coalesce(a.tenant, b.tenant) AS tenant, coalesce(a.agent_id, b.agent_id) AS agent_id,
                        coalesce(a.user_id, b.user_id) AS user_id, coalesce(a.id, b.id) AS id,
                        CASE WHEN b.id IS NULL THEN 'added' WHEN a.id IS NULL THEN 'removed'
                             ELSE 'updated' END AS change,
                        b.version AS version_before, a.version AS version_after
                 FROM a FULL JOIN b ON a.id = b.id AND {_same('a', 'b')}
                 WHERE a.id IS NULL OR b.id IS NULL OR a.digest IS DISTINCT FROM b.digest)
        SELECT c.tenant, c.agent_id, c.user_id, c.id, c.change,
               CASE WHEN c.change <> 'removed' THEN NULL
                    WHEN m.id IS NULL THEN 'unpublished'
                    WHEN m.status = 'deleted' THEN 'forgotten'
                    WHEN m.status = 'merged' THEN 'merged_into'
                    WHEN NOT ({_same('m', 'c')}) THEN 'moved'
                    WHEN m.status = 'dormant' THEN 'dormant'
                    WHEN m.status = 'archived' AND r.how = 'expire' THEN 'expired'
                    WHEN m.status = 'archived' THEN 'archived'
                    ELSE 'unpublished' END AS reason,
               CASE WHEN c.change = 'removed' AND m.status = 'merged' THEN m.merged_into END AS merged_into,
               c.version_before, c.version_after, $from::VARCHAR AS from_version, $to::VARCHAR AS to_version
        FROM changed c LEFT JOIN memories m ON m.id = c.id LEFT JOIN archived r ON r.memory_id = c.id
        ORDER BY c.tenant, c.agent_id NULLS FIRST, c.user_id NULLS FIRST, c.id
        """, {"from": from_version, "to": to_version})
    staging.mkdir(parents=True, exist_ok=True)
    typed = ", ".join(f"{f.name}::{_SQL_TYPES[f.type]} AS {f.name}" for f in contract.CHANGE_FIELDS)
    con.execute(f"COPY (SELECT {typed} FROM publish_changes) TO '{_sql_path(staging / CHANGES_FILE)}' "
                "(FORMAT parquet)")
    counts = dict(zip(contract.CHANGE_KINDS, con.execute(
        "SELECT count(*) FILTER (WHERE change = 'added'), count(*) FILTER (WHERE change = 'updated'), "
        "count(*) FILTER (WHERE change = 'removed') FROM publish_changes").fetchone()))
    sections = {}
    for tenant, agent_id, user_id, added, updated, removed in con.execute(
            """
            SELECT tenant, agent_id, user_id,
                   coalesce(list(id ORDER BY id) FILTER (WHERE change = 'added'), []),
                   coalesce(list(id ORDER BY id) FILTER (WHERE change = 'updated'), []),
                   coalesce(list(struct_pack(id := id, reason := reason, merged_into := merged_into) ORDER BY id)
                            FILTER (WHERE change = 'removed'), [])
            FROM publish_changes GROUP BY ALL
            """).fetchall():
        sections[(tenant, agent_id, user_id)] = {"from": from_version, "added": added, "updated": updated,
                                                 "removed": removed}
    con.execute("DROP TABLE publish_changes")
    return StagedChanges(from_version, to_version, counts, sections)


def restamp_changes(version_dir: Path, to_version: str) -> None:
    """Rename the version ``changes.parquet`` leads to (`to_version`): the number a publish took
    when it differs from the one staging expected (another publish came between, outside a run)."""
    target = version_dir / CHANGES_FILE
    if not target.is_file():
        return
    tmp = target.with_name(f".{CHANGES_FILE}.tmp")
    with duckdb.connect(":memory:") as con:
        con.execute(f"COPY (SELECT * REPLACE ($to::VARCHAR AS to_version) FROM read_parquet('{_sql_path(target)}')) "
                    f"TO '{_sql_path(tmp)}' (FORMAT parquet)", {"to": to_version})
    os.replace(tmp, target)


def _before_sql(con: duckdb.DuckDBPyConnection, previous: Path | None) -> str:
    """SQL: the memories agents loaded from `previous` (tenant, agent_id, user_id, id, version,
    digest), and the ones forgotten since it was staged that it published (scrubbed from its files:
    their scope and version as they were then, from the lake's history; no digest)."""
    empty = "SELECT NULL::VARCHAR AS tenant, NULL::VARCHAR AS agent_id, NULL::VARCHAR AS user_id, " \
            "NULL::VARCHAR AS id, NULL::BIGINT AS version, NULL::VARCHAR AS digest WHERE false"
    if previous is None or not (previous / "memories.parquet").is_file():
        return empty
    parquet = f"read_parquet('{_sql_path(previous / 'memories.parquet')}')"
    rows = (f"SELECT tenant, agent_id, user_id, id, version, {_digest(_columns(con, parquet))} AS digest "
            f"FROM {parquet} WHERE {ACTIVE}")
    history = table_files(previous).get("memory_history")  # its parts (format 1.4.0) or its one file
    if not history:
        return rows
    (watermark,) = con.execute(f"SELECT max(seq) FROM {parquet_sql(history)}").fetchone()
    if watermark is None:
        return rows
    return f"""
        {rows}
        UNION ALL
        SELECT s.image.tenant, s.image.agent_id, s.image.user_id, s.memory_id, s.image.version, NULL
        FROM (SELECT memory_id, arg_max(after, seq) AS image FROM memory_history
              WHERE seq <= {int(watermark)} AND memory_id IN (SELECT id FROM memories WHERE status = 'deleted')
              GROUP BY memory_id) s
        WHERE s.image.status IN {PUBLISHED}
          AND s.memory_id NOT IN (SELECT id FROM {parquet} WHERE {ACTIVE})"""


def _columns(con: duckdb.DuckDBPyConnection, source: str) -> list[str]:
    """The contract's memory columns `source` (a table or ``read_parquet``) has, in contract order
    (an older version may lack one added since)."""
    have = {name for name, *_ in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    return [c for c in contract.PARQUET_COLUMNS if c in have]


def _digest(columns: list[str]) -> str:
    """SQL: a row's digest over `columns`, each in its contract type (a lake timestamp and its
    exported UTC-aware copy, a JSON value and its text, digest alike)."""
    cast = {"timestamp": "::TIMESTAMPTZ", "json": "::VARCHAR"}
    fields = ", ".join(f"{c} := {c}{cast.get(contract.MEMORY_FIELDS[c].type, '')}" for c in columns)
    return f"md5(to_json(struct_pack({fields}))::VARCHAR)"


def _same(x: str, y: str) -> str:
    """SQL: aliases `x` and `y` are of the same scope."""
    return " AND ".join(f"{x}.{c} IS NOT DISTINCT FROM {y}.{c}" for c in contract.SCOPE_FIELDS)


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


# ---------------------------------------------------------------------------- reading (sync)
def version_name(value: str | int, label: str = "since") -> str:
    """``"v41"`` from ``"v41"``, ``41`` or ``"41"``; InputError for anything else (a name, never a path)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{label} must be a version's name such as 'v41' (or its number), not {value!r}")
    text = str(value)
    name = f"v{text}" if text.isdigit() else text
    if not re.fullmatch(r"v\d+", name):
        raise InputError(f"{label} must be a version's name such as 'v41' (or its number), not {value!r}")
    return f"v{int(name[1:])}"


def compose_changes(exports: Path, since: str | int, target: str, *, tenant: str | None = None,
                    agent: str | None = None, user: str | None = None) -> pl.DataFrame:
    """The changes from the version `since` to the version `target` (both names under the folder
    `exports`) of the scope asked for (None leaves that part open), composed per memory and scope,
    as rows of ``changes.parquet`` (``from_version`` `since`, ``to_version`` `target`), ordered by
    scope and id. An added or updated memory the target no longer holds (forgotten after its
    publish) is left out when it was added, and removed as ``forgotten`` when it was updated.

    Raises ReloadInFull when `since` is not kept (or not a version here) or a version on the way
    is missing or has no ``changes.parquet``; InputError when `since` is no version's name."""
    since = version_name(since)
    kept = _kept(exports)
    if since not in kept:
        newest = max((int(k[1:]) for k in kept), default=0)
        what = "is no longer kept" if int(since[1:]) < newest else "is not a version published here"
        raise ReloadInFull(f"reload in full: {since} {what} (kept: {_ranges(kept)})")
    scope = _scope_filter(tenant, agent, user)
    if since == target:
        return pl.DataFrame(schema=CHANGE_SCHEMA)
    up, down = _ancestors(exports, since), _ancestors(exports, target)
    common = next((name for name in up if name in down), None)
    if common is None:
        # where a chain stops short: a version not kept, or one published without the file
        ends = [chain[-1] for chain in (up, down) if not (exports / chain[-1] / CHANGES_FILE).is_file()]
        broken = (ends or up[-1:])[0]
        why = (f"{broken} was published without {CHANGES_FILE}" if broken in kept else f"{broken} is no longer kept")
        raise ReloadInFull(f"reload in full: the changes from {since} to {target} are not all kept ({why}; "
                           f"kept: {_ranges(kept)})")
    steps = [_inverse(_read(exports / name, scope)) for name in up[:up.index(common)]]
    steps += [_read(exports / name, scope) for name in reversed(down[:down.index(common)])]
    net = _unchanged_out(_compose(steps), exports / since, exports / target)
    return _reconcile(net, exports / target, scope).with_columns(
        from_version=pl.lit(since), to_version=pl.lit(target)).select(contract.CHANGE_COLUMNS).cast(CHANGE_SCHEMA)


def _kept(exports: Path) -> list[str]:
    names = [p.name for p in exports.glob("v*") if p.name[1:].isdigit() and (p / "manifest.json").is_file()]
    return sorted(names, key=lambda name: int(name[1:]))


def _ranges(names: list[str]) -> str:
    """``v3, v5..v7``: kept version names, runs of numbers shortened."""
    numbers = sorted(int(n[1:]) for n in names)
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"v{r[0]}" if len(r) == 1 else f"v{r[0]}..v{r[-1]}" for r in runs) or "none"


def _ancestors(exports: Path, name: str) -> list[str]:
    """`name`, the version its changes are against, that one's, ... as far as kept versions with a
    ``changes.parquet`` tell (the last is a version without one, not kept, or the first)."""
    chain = [name]
    while (exports / chain[-1] / CHANGES_FILE).is_file():
        parent = _manifest(exports / chain[-1]).get("changes_from")
        if not parent or parent in chain:
            break
        chain.append(parent)
    return chain


def _manifest(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _scope_filter(tenant: str | None, agent: str | None, user: str | None) -> pl.Expr:
    scope = pl.lit(True)
    for column, value in (("tenant", tenant), ("agent_id", agent), ("user_id", user)):
        if value is not None:
            scope &= pl.col(column) == value
    return scope


def _read(version_dir: Path, scope: pl.Expr) -> pl.DataFrame:
    return (pl.scan_parquet(version_dir / CHANGES_FILE).filter(scope)
            .select(*KEY, "change", "reason", "merged_into", "version_before", "version_after").collect())


def _inverse(step: pl.DataFrame) -> pl.DataFrame:
    """A version's changes undone (the way back up a rollback): what it added is removed as
    ``rolled_back``, what it removed comes back, an update goes back."""
    change = pl.col("change")
    return step.with_columns(
        change=pl.when(change == "added").then(pl.lit("removed"))
        .when(change == "removed").then(pl.lit("added")).otherwise(pl.lit("updated")),
        reason=pl.when(change == "added").then(pl.lit("rolled_back")).otherwise(pl.lit(None, pl.String)),
        merged_into=pl.lit(None, pl.String),
        version_before=pl.col("version_after"), version_after=pl.col("version_before"))


def _compose(steps: list[pl.DataFrame]) -> pl.DataFrame:
    """Steps in order composed per memory and scope: present before its first step unless that
    added it, present after its last unless that removed it."""
    columns = [*KEY, "change", "reason", "merged_into", "version_before", "version_after"]
    if not steps:
        return pl.DataFrame(schema={c: CHANGE_SCHEMA[c] for c in columns})
    every = pl.concat([s.cast({c: CHANGE_SCHEMA[c] for c in columns}).with_columns(step=pl.lit(n))
                       for n, s in enumerate(steps)])
    net = every.sort("step").group_by(*KEY, maintain_order=True).agg(
        first=pl.col("change").first(), last=pl.col("change").last(), reason=pl.col("reason").last(),
        merged_into=pl.col("merged_into").last(), version_before=pl.col("version_before").first(),
        version_after=pl.col("version_after").last())
    was, still = pl.col("first") != "added", pl.col("last") != "removed"
    change = pl.when(was & still).then(pl.lit("updated")).when(still).then(pl.lit("added")) \
        .when(was).then(pl.lit("removed"))
    removed = change == "removed"
    return net.with_columns(change=change).filter(pl.col("change").is_not_null()).with_columns(
        reason=pl.when(removed).then(pl.col("reason")), merged_into=pl.when(removed).then(pl.col("merged_into")),
        version_before=pl.when(change != "added").then(pl.col("version_before")),
        version_after=pl.when(~removed).then(pl.col("version_after"))).select(columns)


def _unchanged_out(net: pl.DataFrame, since: Path, target: Path) -> pl.DataFrame:
    """Leave out a memory composed as updated whose row is the same in both versions (changed and
    changed back, or rolled back and published again as it was)."""
    updated = net.filter(pl.col("change") == "updated").select(KEY)
    if updated.height == 0:
        return net
    before, after = (pl.read_parquet_schema(folder / "memories.parquet") for folder in (since, target))
    columns = [c for c in contract.PARQUET_COLUMNS
               if c not in KEY and c in before and c in after and before[c] == after[c]]

    def rows(folder: Path) -> pl.DataFrame:
        return (pl.scan_parquet(folder / "memories.parquet").select(*KEY, *columns)
                .join(updated.lazy(), on=list(KEY), how="semi", nulls_equal=True).collect())

    same = rows(since).join(rows(target), on=[*KEY, *columns], how="semi", nulls_equal=True).select(KEY)
    return net.join(same, on=list(KEY), how="anti", nulls_equal=True)


def _reconcile(net: pl.DataFrame, target: Path, scope: pl.Expr) -> pl.DataFrame:
    """Added or updated memories the target no longer holds (a forget scrubbed them after its
    publish): an added one is left out, an updated one removed as ``forgotten``."""
    held = (pl.scan_parquet(target / "memories.parquet").filter(scope & pl.col("status").is_in(
        list(contract.SCOPE_STATUSES))).select(*KEY, there=pl.lit(True)).collect())
    joined = net.join(held, on=list(KEY), how="left", nulls_equal=True, maintain_order="left")
    gone = (pl.col("change") != "removed") & pl.col("there").is_null()
    return (joined.filter(~(gone & (pl.col("change") == "added")))
            .with_columns(reason=pl.when(gone).then(pl.lit("forgotten")).otherwise(pl.col("reason")),
                          version_after=pl.when(gone).then(None).otherwise(pl.col("version_after")),
                          change=pl.when(gone).then(pl.lit("removed")).otherwise(pl.col("change")))
            .drop("there").sort(*contract.SCOPE_FIELDS, "id", nulls_last=False))
