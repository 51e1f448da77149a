"""Forget in published exports (seed 003; DESIGN "Forget reaches everything"): the ``exports`` file
scrubber, registered with `memory_lake.store.registry` and run by `memory_lake.ingest.forget`'s
``scrub_files`` after a forget commits.

Every kept export version loses the forgotten memories: ``memories.parquet`` drops their rows,
each ``tables/<table>.parquet`` gets that table's scrubber replayed on it, the affected scopes'
``memory.json`` and ``context.md`` are rewritten from what is left, and the manifest records the
rewrite (files and a count, never the text).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ..store import FileScrub, Scrubber, atomic_write, connect, iso, register_file_scrubber, sql_path, table_files
from ..store import READS_MEMORIES, table_scrubbers
from ..maintain import published_entity_facts
from .export import _context_pack, folder_name as _segment


@register_file_scrubber("exports")
def _scrub_exports(job: FileScrub) -> list[str]:
    """Remove forgotten memories from every kept export version (and any leftover staging folder).

    Per version: ``memories.parquet`` drops their rows (agents do not load tombstones); each
    ``tables/<table>.parquet`` gets that table's scrubber replayed on it; the affected scopes'
    ``memory.json`` lose their records and ``context.md`` is rebuilt from the rest (a scope left
    empty is removed, as publish would not have written it); the manifest gets new checksums and
    counts, and a ``rewrites`` entry that names the files and how many memories, never their text.
    """
    exports = job.lake.exports
    rewritten: list[str] = []
    replayed: dict[tuple[int, ...], Path | None] = {}  # see _replay_part
    con = connect(Path(":memory:"))
    try:
        con.execute("CREATE TEMP TABLE forget_ids (id VARCHAR, operator VARCHAR, reason VARCHAR, line BIGINT, "
                    "as_of TIMESTAMP)")
        con.executemany("INSERT INTO forget_ids (id, as_of) VALUES (?, ?)", [[i, job.as_of] for i in job.ids])
        for folder in sorted(p for p in exports.iterdir() if p.is_dir() and not p.is_symlink()):
            changed = _scrub_version(con, folder, job, replayed)
            rewritten += [str((folder / name).relative_to(job.lake.root)) for name in changed]
    finally:
        con.close()
    return rewritten


def _scrub_version(con: duckdb.DuckDBPyConnection, folder: Path, job: FileScrub,
                   replayed: dict[tuple[int, ...], Path | None]) -> list[str]:
    """Scrub one export version; return the files it rewrote or removed (relative to `folder`).

    ``memories.parquet`` is rewritten last, because it tells which scopes held a forgotten memory:
    a scrub interrupted before it is finished by the next forget of the same ids. The manifest is
    reconciled with the files on disk, so an interrupted scrub's files are recorded too.
    """
    changed: list[str] = []
    memories = folder / "memories.parquet"
    source = f"read_parquet('{sql_path(memories)}')"
    scopes = pl.DataFrame(schema={"tenant": pl.String, "agent_id": pl.String, "user_id": pl.String})
    if memories.is_file():
        scopes = con.execute(
            f"SELECT DISTINCT tenant, agent_id, user_id FROM {source} WHERE id IN (SELECT id FROM forget_ids)").pl()
    changed += _scrub_scopes(folder, scopes, job.ids, job.lake.policy)
    names = dict(table_scrubbers())
    # Scrubbers keyed by content hash read the version's memories, still whole at this point.
    con.execute("DROP VIEW IF EXISTS memories")
    if memories.is_file():
        con.execute(f"CREATE TEMP VIEW memories AS SELECT * FROM {source}")
    for name, files in table_files(folder).items():  # a table written in parts: part by part
        scrub = names.get(name)
        for table in files if scrub is not None else []:
            if _replay_part(con, table, scrub, name, None if name in READS_MEMORIES else replayed):
                changed.append(str(table.relative_to(folder)))
    con.execute("DROP VIEW IF EXISTS memories")
    if scopes.height:
        _copy_parquet(con, f"SELECT * FROM {source} WHERE id NOT IN (SELECT id FROM forget_ids)", memories)
        changed.append("memories.parquet")
    if (folder / "manifest.json").is_file():
        changed = _update_manifest(folder, changed, job)
    return changed


def _copy_parquet(con: duckdb.DuckDBPyConnection, query: str, target: Path) -> None:
    """Write `query` to `target` atomically (DuckDB keeps the column types publish wrote)."""
    tmp = target.with_name(f".{target.name}.forget-tmp")
    con.execute(f"COPY ({query}) TO '{sql_path(tmp)}' (FORMAT parquet)")
    os.replace(tmp, target)


def _replay_part(con: duckdb.DuckDBPyConnection, table: Path, scrub: Scrubber, name: str,
                 replayed: dict[tuple[int, ...], Path | None] | None) -> bool:
    """Replay the scrubber of table `name` on one exported part, once per file: publish hard-links a
    part that did not change into the next version, so one file is often a part of several kept
    versions. A scrubber that reads only its own table and the ids (not one of ``READS_MEMORIES``,
    which read each version's own memories: `replayed` is None for those) gives the same result on
    the same file in every version: `replayed` maps a file already replayed in this scrub (device,
    inode, size and mtime, taken before any rewrite: every part looked up was there when the scrub
    began, so no two of them share an inode) to the part it was rewritten as, or None when the
    scrubber changed nothing. A rewritten file's other links get that part, linked in its place."""
    if replayed is None:
        return _replay_scrubber(con, table, scrub, name)
    stat = table.stat()
    key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if key not in replayed:
        changed = _replay_scrubber(con, table, scrub, name)
        replayed[key] = table if changed else None
        return changed
    if replayed[key] is None:
        return False
    tmp = table.with_name(f".{table.name}.forget-tmp")
    tmp.unlink(missing_ok=True)
    os.link(replayed[key], tmp)
    os.replace(tmp, table)
    return True


def _replay_scrubber(con: duckdb.DuckDBPyConnection, table: Path, scrub: Scrubber, name: str) -> bool:
    """Run the scrubber of table `name` on an exported copy of it (or of one of its parts); rewrite
    the file if anything changed."""
    source = f"read_parquet('{sql_path(table)}')"
    con.execute(f'CREATE OR REPLACE TABLE "{name}" AS SELECT * FROM {source}')
    try:
        scrub(con)
        if _changed(con, name, table):
            _copy_parquet(con, f'SELECT * FROM "{name}"', table)
            return True
        return False
    finally:
        con.execute(f'DROP TABLE IF EXISTS "{name}"')


def _changed(con: duckdb.DuckDBPyConnection, name: str, table: Path) -> bool:
    """Whether the scrubber changed table `name`: whether its rows differ, as a multiset, from those
    of the file it was read from (`table`, not yet rewritten).

    The file is compared, not a copy of the table made before the scrub (copying the embeddings'
    vectors cost as much as reading them). Most replays change nothing, and then the table's rows
    are the file's, in the file's order: when the counts are equal and every row equals the file's
    row at the same position, the two are the same multiset (a one-to-one pairing of equal rows).
    Otherwise a different count is a change, and the rest is `_changed_rows`, the exact count."""
    columns = [d[0] for d in con.execute(f'SELECT * FROM "{name}" LIMIT 0').description]
    source = f"read_parquet('{sql_path(table)}')"
    same = " AND ".join(f'a."{c}" IS NOT DISTINCT FROM b."{c}"' for c in columns)
    after, before, paired = con.execute(
        f'SELECT (SELECT count(*) FROM "{name}"), (SELECT count(*) FROM {source}), '
        f'(SELECT count(*) FROM "{name}" a POSITIONAL JOIN {source} b WHERE {same})').fetchone()
    if after != before:
        return True
    if paired == after:
        return False
    con.execute(f"CREATE OR REPLACE TEMP VIEW scrub_before AS SELECT file_row_number AS scrub_row, "
                f"* EXCLUDE (file_row_number) FROM read_parquet('{sql_path(table)}', file_row_number = true)")
    try:
        return _changed_rows(con, name) > 0
    finally:
        con.execute("DROP VIEW IF EXISTS scrub_before")


def _changed_rows(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """Rows the scrubber changed, added or removed: the size of the multiset difference, both ways,
    between the table and ``scrub_before`` (the file it was read from, each row's position in
    ``scrub_row``, which is the table's rowid as read).

    A row that kept its rowid and every value is the same row on both sides, so it leaves both
    before the comparison; the rest (rows an UPDATE or DELETE touched, which DuckDB may move to a
    new rowid, and inserted ones) are compared as whole rows with EXCEPT ALL. The count is the one
    a full EXCEPT ALL of the two tables gives, at the cost of the rows touched: comparing every row
    (the embeddings' vectors) took most of a forget's export scrub."""
    columns = [d[0] for d in con.execute(f'SELECT * FROM "{name}" LIMIT 0').description]
    row = ", ".join(f'"{c}"' for c in columns)
    after_row = ", ".join(f'after."{c}"' for c in columns)
    before_row = ", ".join(f'b."{c}"' for c in columns)
    (changed,) = con.execute(
        f'WITH after AS (SELECT rowid AS scrub_row, * FROM "{name}"), '
        f"same AS (SELECT scrub_row FROM after JOIN scrub_before b USING (scrub_row) "
        f"WHERE ({after_row}) IS NOT DISTINCT FROM ({before_row})), "
        f"added AS (SELECT {row} FROM after WHERE scrub_row NOT IN (SELECT scrub_row FROM same)), "
        f"removed AS (SELECT {row} FROM scrub_before WHERE scrub_row NOT IN (SELECT scrub_row FROM same)) "
        "SELECT (SELECT count(*) FROM (FROM added EXCEPT ALL FROM removed)) "
        "+ (SELECT count(*) FROM (FROM removed EXCEPT ALL FROM added))").fetchone()
    return changed


def _scrub_scopes(folder: Path, scopes: pl.DataFrame, ids: list[str], policy=None) -> list[str]:
    """Rewrite the scope files of the scopes that held a forgotten memory (loop per scope)."""
    from ..store import Policy

    policy = policy or Policy()
    facts = published_entity_facts(folder) if scopes.height else None

    gone = set(ids)
    changed = []
    for tenant, agent, user in scopes.iter_rows():
        scope_dir = folder / "scopes" / _segment(tenant) / _segment(agent) / _segment(user)
        memory_json = scope_dir / "memory.json"
        if not memory_json.is_file():
            continue  # the memory was not active there (e.g. archived): no scope file holds it
        document = json.loads(memory_json.read_text(encoding="utf-8"))
        records = [r for r in document.get("memories", []) if r.get("id") not in gone]
        if len(records) == len(document.get("memories", [])):
            continue
        rel = str(scope_dir.relative_to(folder))
        if not records:
            # publish writes no folder for a scope without active memories
            shutil.rmtree(scope_dir)
            for parent in (scope_dir.parent, scope_dir.parent.parent):
                with contextlib.suppress(OSError):
                    parent.rmdir()  # only when empty
            changed += [f"{rel}/memory.json", f"{rel}/context.md"]
            continue
        header = {k: v for k, v in document.items() if k != "memories"}
        atomic_write(memory_json, json.dumps({**header, "memories": records}, ensure_ascii=False).encode("utf-8"))
        # the records carry what context.md shows (tier, type, content, dates and the dispute marks);
        # the entity facts count only from the records that stay
        rows = facts.filter((pl.col("tenant") == tenant) & pl.col("agent_id").eq_missing(agent)
                            & pl.col("user_id").eq_missing(user)).to_dicts()
        pack = _context_pack(header, records, rows, policy.for_tenant(tenant).context.max_tokens)
        atomic_write(scope_dir / "context.md", pack.encode("utf-8"))
        changed += [f"{rel}/memory.json", f"{rel}/context.md"]
    return changed


def _update_manifest(folder: Path, changed: list[str], job: FileScrub) -> list[str]:
    """New checksums and counts for a rewritten version, and a ``rewrites`` entry (ids' count
    only); returns the files recorded as rewritten (with the manifest), or [] when none."""
    from ..store import file_sha256 as _sha256  # noqa: the manifest's checksums

    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    old = manifest.get("files", {})
    files = {str(p.relative_to(folder)): _sha256(p) for p in sorted(folder.rglob("*"))
             if p.is_file() and p.name != "manifest.json"}
    # files this scrub changed, plus any a previous, interrupted scrub changed without recording
    rewritten = sorted(set(changed) | {name for name in set(old) | set(files) if old.get(name) != files.get(name)})
    if not rewritten:
        return []
    manifest["files"] = files
    memories = folder / "memories.parquet"
    if memories.is_file():
        rows = pl.read_parquet(memories, columns=["tier", "status"])
        by_tier = dict(sorted(rows["tier"].value_counts().iter_rows()))
        by_status = dict(sorted(rows["status"].value_counts().iter_rows()))
        counts = manifest.setdefault("counts", {})
        counts.update(rows=sum(by_tier.values()), by_tier=by_tier, by_status=by_status)
        counts["scopes"] = [_recount_scope(folder, s) for s in counts.get("scopes", [])
                            if (folder / s["path"] / "memory.json").is_file()]
    manifest.setdefault("rewrites", []).append({
        "as_of": iso(job.as_of), "run_id": job.run_id, "reason": "forget", "memories": len(job.ids),
        "files": rewritten})
    atomic_write(path, json.dumps(manifest, ensure_ascii=False, indent=1).encode("utf-8"))
    return rewritten + ["manifest.json"]


def _recount_scope(folder: Path, scope: dict[str, Any]) -> dict[str, Any]:
    records = json.loads((folder / scope["path"] / "memory.json").read_text(encoding="utf-8"))["memories"]
    by_tier: dict[str, int] = {}
    for record in records:
        by_tier[record["tier"]] = by_tier.get(record["tier"], 0) + 1
    return {**scope, "by_tier": by_tier}


