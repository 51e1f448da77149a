"""The `Lake` users import: the storage lake (`memory_lake.store.Lake`: folder, lock, connections,
reads) plus one method per step of the data flow, each a thin call into its stage package.

Stage code receives a storage `Lake` and never calls these methods; they exist for people and the
CLI (``from memory_lake import Lake``).
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Sequence

import polars as pl

from .store import DEFAULT_WRITE_WAIT_S, InputError, resolve_as_of
from .store import Lake as StoreLake


class Lake(StoreLake):
    """A memory lake on disk, with its steps. ``Lake.init(path)`` (or ``Lake.open(path, create=True)``)
    creates one; ``Lake.open(path)`` opens an existing lake and refuses a path that holds none."""

    # ---------------------------------------------------------------- steps
    def ingest(self, paths: Sequence[str | os.PathLike] | None = None, *, as_of: datetime | str | None = None,
               dry_run: bool = False, wait_s: float = DEFAULT_WRITE_WAIT_S, fmt: str | None = None,
               tenant: str | None = None, agent: str | None = None, user: str | None = None):
        """Ingest snapshot files (default: everything in the inbox). `fmt` forces a format, `tenant`
        gives the tenant of a format that carries none (a Mem0 export). See `memory_lake.ingest`."""
        from .ingest import ingest_paths

        return ingest_paths(self, paths, as_of=resolve_as_of(as_of), dry_run=dry_run, wait_s=wait_s, fmt=fmt,
                            tenant=tenant, agent=agent, user=user)

    def search(self, query: str, *, tenant: str, agent: str | None = None, user: str | None = None,
               mode: str = "hybrid", limit: int = 10, **filters):
        """Read-only search of a scope; see `memory_lake.search.search` (filters, as_of, explain). An
        unknown tenant, agent or user is an InputError that names the known ones."""
        from .search import search

        return search(self, query, tenant=tenant, agent=agent, user=user, mode=mode, limit=limit, **filters)

    def build_context(self, query: str, *, tenant: str, agent: str | None = None, user: str | None = None,
                      max_tokens: int | None = None, as_of: datetime | str | None = None):
        """The context pack for `query` (seed 002 buildContext): important memories, the latest
        summary, relevant long-term memories, known entities and recent items as Markdown within
        `max_tokens` (default ``[context] max_tokens``); read-only like search. See
        `memory_lake.search.build_context`."""
        from .search import build_context

        return build_context(self, query, tenant=tenant, agent=agent, user=user, max_tokens=max_tokens, as_of=as_of)

    def entities(self, *, tenant: str | None = None, agent: str | None = None, user: str | None = None) -> dict:
        """The entities of a scope with their merged current facts, sources and history (read-only):
        ``{"entities": [...], "notes": [...]}``. See `memory_lake.maintain.list_entities`."""
        from .maintain import list_entities

        return list_entities(self, tenant=tenant, agent=agent, user=user)

    def health(self, *, tenant: str | None = None, as_of: datetime | str | None = None) -> dict:
        """The latest stored health snapshot, or one computed now (read-only) before the first run;
        an unknown tenant is an InputError that names the known ones."""
        from .observe import compute_health, latest_health
        from .store import check_scope

        check_scope(self, tenant)
        stored = latest_health(self, tenant=tenant) if as_of is None else None
        if stored is not None:
            return stored
        with self.reading() as (con, _source, _note):  # the published version while a run holds the lake
            health = compute_health(con, resolve_as_of(as_of), self.policy)
        if tenant is not None:
            health["overall"] = health["tenants"].get(tenant)
            health["tenants"] = {k: v for k, v in health["tenants"].items() if k == tenant}
            health["scopes"] = [s for s in health["scopes"] if s["tenant"] == tenant]
        return health

    def index(self, *, as_of: datetime | str | None = None, on_progress=None, wait_s: float | None = None):
        """Embed new or changed content (cached by content hash and model); ingest never does.
        `on_progress(what, done, total)` hears each batch (see `memory_lake.search.index`); `wait_s`
        bounds the wait for another process's lock (default 10 minutes)."""
        from .search import index

        return index(self, resolve_as_of(as_of), on_progress=on_progress, wait_s=wait_s)

    def publish(self, *, as_of: datetime | str | None = None):
        """Stage, check and publish an export version (see `memory_lake.publish`)."""
        from .publish import publish

        return publish(self, resolve_as_of(as_of))

    def publishes(self) -> dict:
        """The kept export versions, newest first, with their manifests and check results, every
        rollback and the blocked publishes (see `memory_lake.publish.list_publishes`)."""
        from .publish import list_publishes

        return list_publishes(self)

    def rollback(self, version: str | None = None, *, reason: str, by: str | None = None,
                 as_of: datetime | str | None = None) -> dict:
        """Point exports/CURRENT back at a kept `version` (default: the one before CURRENT) and record
        who (`by`, default $USER) and why; the next publish goes forward again (see
        `memory_lake.publish.rollback`)."""
        from .publish import rollback

        who = by or os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
        return rollback(self, version, reason=reason, by=who, as_of=resolve_as_of(as_of))

    def holds(self):
        """The scopes the publish gate holds now (see `memory_lake.publish.diff`), as a DataFrame."""
        from .publish import open_holds

        return open_holds(self)

    def release_hold(self, tenant: str, agent: str | None = None, user: str | None = None, *, reason: str,
                     by: str | None = None, as_of: datetime | str | None = None) -> list[dict]:
        """A user's confirmation of a held scope's removals: the next publish lets them through."""
        from .publish import release_hold

        who = by or os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
        return release_hold(self, tenant, agent, user, by=who, reason=reason, as_of=resolve_as_of(as_of))

    def dedup(self, *, as_of: datetime | str | None = None, dry_run: bool = False):
        """Merge duplicates per scope, never contradictions (see `memory_lake.maintain.dedup`); `dry_run`
        shows the clusters a run would make and writes nothing."""
        from .maintain import dedup

        return dedup(self, resolve_as_of(as_of), dry_run=dry_run)

    def unmerge(self, canonical_id: str, *, operator: str = "user", as_of: datetime | str | None = None) -> dict:
        """Restore the latest dedup cluster merged into `canonical_id` exactly (queued while busy)."""
        from .maintain import unmerge
        from .store import check_ids

        check_ids(self, canonical_id)
        return unmerge(self, canonical_id, operator=operator, as_of=as_of)

    def summarize(self, *, tenant: str, agent: str | None = None, user: str | None = None,
                  session: str | None = None, max_tokens: int | None = None) -> dict:
        """Preview the structured summaries of a scope's short-term memory and of its sessions (or of
        one session), each scored by the evaluator: ``{"scopes": [...], "skipped": [...], "note"}``.
        A read: it writes nothing and never waits for a run (it then reads the published version);
        the nightly run publishes the summaries that pass. See `memory_lake.maintain.summaries`."""
        from .maintain import preview_summaries
        from .store import check_scope

        if max_tokens is not None and max_tokens < 1:
            raise InputError(f"max_tokens must be a positive number of tokens, not {max_tokens}")
        check_scope(self, tenant, agent, user)
        return preview_summaries(self, tenant=tenant, agent=agent, user=user, session=session, max_tokens=max_tokens)

    def conflicts(self, *, tenant: str | None = None, status: str | None = "open") -> pl.DataFrame:
        """The conflict queue (open conflicts by default), oldest first (see `memory_lake.maintain.conflicts`)."""
        from .maintain import list_conflicts
        from .store import check_scope

        check_scope(self, tenant)
        return list_conflicts(self, tenant=tenant, status=status)

    def resolve_conflict(self, conflict_id: str, take: str, *, value: str | None = None, operator: str = "user",
                         as_of: datetime | str | None = None) -> dict:
        """Resolve a conflict: take ``lake``, ``incoming``, ``both`` or ``value`` (with `value`);
        queued in inbox/decisions/ while another process holds the lake."""
        from .maintain import resolve_conflict
        from .store import check_ids

        check_ids(self, conflict_id, "conflict")
        return resolve_conflict(self, conflict_id, take, value=value, operator=operator, as_of=as_of)

    def edit(self, memory_id: str, *, operator: str = "user", as_of: datetime | str | None = None,
             **changes: str) -> dict:
        """A manual edit through the versioned write path, e.g. ``lake.edit("m1", tier="important")``."""
        from .ingest import edit_memory
        from .store import check_ids

        check_ids(self, memory_id)
        return edit_memory(self, memory_id, changes, operator=operator, as_of=as_of)

    def quarantine(self, *, status: str | None = "open", reason: str | None = None) -> pl.DataFrame:
        """Quarantined lines (open ones by default), oldest first. A `reason` no quarantined line
        has is an InputError naming the reasons there are (case does not matter)."""
        where, params = [], []
        if status:
            where.append("status = ?")
            params.append(status)
        if reason:
            import difflib

            known = [r for (r,) in self.read("SELECT DISTINCT reason FROM quarantine ORDER BY 1").frame.iter_rows()]
            exact = [k for k in known if k.lower() == reason.strip().lower()]
            if not exact:
                close = difflib.get_close_matches(reason.lower(), [k.lower() for k in known], n=3, cutoff=0.5)
                hint = f"did you mean {', '.join(repr(k) for k in known if k.lower() in close)}? " if close else ""
                listed = ", ".join(known) if known else "none: nothing was ever quarantined"
                raise InputError(f"no quarantined line has reason {reason!r}: {hint}reasons in the quarantine: {listed}")
            where.append("reason = ?")
            params.append(exact[0])
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return self.sql(f"SELECT * FROM quarantine {clause} ORDER BY quarantine_id", params)

    def replay_quarantine(self, path: str | os.PathLike, *, as_of: datetime | str | None = None,
                          wait_s: float = DEFAULT_WRITE_WAIT_S):
        """Ingest a file of fixed lines and mark the quarantine rows they fix as replayed."""
        from .ingest import replay_quarantine

        return replay_quarantine(self, Path(path), as_of=resolve_as_of(as_of), wait_s=wait_s)
