"""`open_lake`: a lake's tables for an analyst, as DuckDB relations, from one of three places.

- ``at="live"`` (the default): the lake's database as it is now. Its tables are copied into an
  in-memory DuckDB when the lake is opened (the big search-index tables, `INDEX_TABLES`, on first
  use), under the lake's shared read lock, which is let go at once: a notebook left open never
  keeps the nightly run from writing. `refresh()` copies again. While a run holds the lake, the
  live tables cannot be read; the latest published version is read instead, and `source` says so.
- ``at="published"``: the version agents load (``exports/CURRENT``).
- ``at="v3"``: a version kept under ``exports/`` (time travel).

A published version holds every table (``tables/<name>.parquet``; ``memories.parquet`` is the clean
set: no merged or deleted rows), read in place as views. Either way the same names answer the same
SQL, with timestamps as naive UTC, and the derived views are the same: `health` (one typed column per
health figure, `HEALTH_COLUMNS`), `health_alerts`, `run_steps`, `run_counts`, `summaries`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb

from ..store import Lake, LakeBusy, InputError, is_lake, lake_not_found, published_views, resolve_lake_dir, unknown_message
from ..publish import compose_changes
from ..store import views as lake_views

# Copied from the live lake only when a query names them (they hold every token and vector).
INDEX_TABLES = ("embeddings", "postings", "keyword_docs")

# the typed health figures (store/views.py): one column per figure of a snapshot
HEALTH_COLUMNS = lake_views.HEALTH_COLUMNS
_HEALTH_SQL = f"CREATE OR REPLACE VIEW health AS {lake_views.HEALTH_SERIES_SQL}"

_DERIVED = {
    "health": _HEALTH_SQL,
    "health_alerts": f"CREATE OR REPLACE VIEW health_alerts AS {lake_views.HEALTH_ALERTS_SQL}",
    # the lake's own views (store/views.py), made again here over the copied tables
    **{name: f"CREATE OR REPLACE VIEW {name} AS {sql}" for name, sql in lake_views.VIEWS.items() if name != "health_alerts"},
    "run_steps": """CREATE OR REPLACE VIEW run_steps AS
        SELECT run_id, kind, as_of, status AS run_status, position, step,
               steps->(concat('$."', step, '"')) AS detail,
               steps->>(concat('$."', step, '".summary')) AS summary,
               TRY_CAST(steps->>(concat('$."', step, '".duration_s')) AS DOUBLE) AS duration_s
        FROM (SELECT run_id, kind, as_of, status, steps,
                     unnest(json_keys(steps)) AS step, unnest(range(1, len(json_keys(steps)) + 1)) AS position
              FROM (SELECT *, coalesce(report->'$.steps', '{}') AS steps FROM runs))""",
    "run_counts": """CREATE OR REPLACE VIEW run_counts AS
        SELECT run_id, kind, as_of, position, step, name,
               TRY_CAST(counts->>(concat('$."', name, '"')) AS BIGINT) AS value
        FROM (SELECT *, unnest(json_keys(counts)) AS name
              FROM (SELECT *, coalesce(detail->'$.counts', '{}') AS counts FROM run_steps))""",
    "history": "CREATE OR REPLACE VIEW history AS SELECT * FROM memory_history",
    "summary_scores": "CREATE OR REPLACE VIEW summary_scores AS SELECT * FROM summary_state",
    "summaries": """CREATE OR REPLACE VIEW summaries AS
        SELECT m.id, m.tenant, m.agent_id, m.user_id, m.session_id, m.tier, m.status, m.content, m.created_at,
               s.method, s.retention, s.compression, s.readability, s.accuracy, s.passed, s.failed,
               s.missing_facts, s.unsupported_statements, s.source_tokens, s.summary_tokens, s.source_ids,
               s.as_of AS scored_at, s.run_id
        FROM memories m LEFT JOIN summary_state s ON s.summary_id = m.id
        WHERE m.type = 'summary'""",
}
# the tables each derived view reads (a view is made only when they are all there)
_NEEDS = {"health_series": ("health_snapshots",), "run_series": ("runs",), "run_step_durations": ("runs",),
          "history": ("memory_history",), "summary_scores": ("summary_state",), "health": ("health_snapshots",), "health_alerts": ("health_snapshots",), "run_steps": ("runs",),
          "run_counts": ("runs",), "summaries": ("memories", "summary_state")}


def open_lake(path: str | os.PathLike | None = None, at: str = "live") -> "LakeView":
    """The lake at `path` (None: $MEMORY_LAKE_DIR or ./lake) for reading, as of `at`: ``"live"``
    (while a run holds the lake: the latest published version, and `source` says so),
    ``"published"`` or a version name ``"v3"``. Raises LakeNotFound when `path` holds no lake (it
    never builds one), InputError for an `at` that is none of these or a version not kept."""
    root = resolve_lake_dir(path)
    if not is_lake(root):
        raise lake_not_found(root, "open_lake(path) takes the folder `memory-lake init` or `make demo` made")
    view = LakeView(root, str(at).strip() if at is not None else "live")
    view.refresh()
    return view


class LakeView:
    """One lake's tables, read from one place: `source` is ``"live"`` or ``"published v<N>"``
    (with the reason when live was asked for and could not be read), `version` the published
    version read (None when live). Tables and views are attributes (`memories`, `health` …) and
    `table(name)`; `sql` runs any read query over them; each answer is a DuckDB relation
    (``.pl()`` gives a Polars frame, ``.df()`` pandas)."""

    def __init__(self, root: Path, at: str):
        self.root, self.at = Path(root), at
        self.con: duckdb.DuckDBPyConnection | None = None
        self.source, self.version, self.note = "", None, None
        self._lazy: tuple[str, ...] = ()

    # ------------------------------------------------------------------ opening
    def refresh(self) -> "LakeView":
        """Read again: the live tables are copied anew, `published` follows ``exports/CURRENT``."""
        self.close()
        self.con = duckdb.connect(":memory:")
        self.con.execute("SET TimeZone = 'UTC'")
        if self.at == "live":
            try:
                self._copy_live()
                self.source, self.version, self.note = "live", None, None
            except LakeBusy:
                folder = self._version_folder("published")
                self._read_version(folder)
                self.note = f"the lake is busy (a run holds it); read the published {folder.name} instead"
        else:
            self._read_version(self._version_folder(self.at))
            self.note = None
        self._derive()
        return self

    def _copy_live(self) -> None:
        lake = Lake.open(self.root)
        with lake.reader(wait_s=0) as live:
            names = [r[0] for r in live.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
                "AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]
            for name in names:
                if name not in INDEX_TABLES:
                    self._copy(live, name)
        self._lazy = tuple(n for n in INDEX_TABLES if n in names)

    def _copy(self, live: duckdb.DuckDBPyConnection, name: str) -> None:
        data = live.execute(f'SELECT * FROM "{name}"').to_arrow_table()
        self.con.register("_copying", data)
        try:
            self.con.execute(f'CREATE OR REPLACE TABLE "{name}" AS SELECT * FROM _copying')
        finally:
            self.con.unregister("_copying")

    def _version_folder(self, at: str) -> Path:
        exports = self.root / "exports"
        kept = sorted((p.name for p in exports.glob("v*") if p.name[1:].isdigit() and (p / "manifest.json").is_file()),
                      key=lambda n: int(n[1:]))
        if at == "published":
            current = exports / "CURRENT"
            if not current.exists():
                raise LakeBusy(f"lake {self.root} has nothing published yet"
                               + (" and a run holds it (its live tables cannot be read now); try again when it "
                                  "finishes" if self.at == "live" else "; open it with at=\"live\""))
            return current.resolve()
        name = at if at.startswith("v") else f"v{at}"
        if not name[1:].isdigit():
            raise InputError(f"at={at!r}: expected \"live\", \"published\" or a version name like \"v3\"")
        if name not in kept:
            raise InputError(f"version {name} is not kept in {exports} (kept: {', '.join(kept) or 'none'})")
        return exports / name

    def _read_version(self, folder: Path) -> None:
        published_views(self.con, folder)
        self.source, self.version, self._lazy = f"published {folder.name}", folder.name, ()

    def _derive(self) -> None:
        have = set(self._names(include_lazy=False))
        for name, sql in _DERIVED.items():
            if all(table in have for table in _NEEDS[name]):
                self.con.execute(sql)

    def _names(self, include_lazy: bool = True) -> list[str]:
        names = [r[0] for r in self._con().execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        return sorted(set(names) | (set(self._lazy) if include_lazy else set()))

    def _con(self) -> duckdb.DuckDBPyConnection:
        if self.con is None:
            raise InputError(f"this view of {self.root} is closed; open_lake() it again")
        return self.con

    # ------------------------------------------------------------------ reading
    @property
    def tables(self) -> list[str]:
        """Every table and view a query can name."""
        return self._names()

    def table(self, name: str) -> duckdb.DuckDBPyRelation:
        """The table or view `name` (see `tables`)."""
        if name in self._lazy:
            self._load_lazy(name)
        if name not in self._names():
            raise InputError(f"no table {name!r} in {self.source}; tables: {', '.join(self.tables)}")
        return self._con().table(name)

    def sql(self, query: str, params: Any = None) -> duckdb.DuckDBPyRelation:
        """Any read query over the tables (and views) of `tables`, as a relation."""
        for name in self._lazy:
            if name in query:
                self._load_lazy(name)
        return self._con().sql(query, params=params)

    def _load_lazy(self, name: str) -> None:
        try:
            with Lake.open(self.root).reader(wait_s=0) as live:
                self._copy(live, name)
        except LakeBusy as exc:
            raise LakeBusy(f"{name} is read from the live lake when first used, and a run holds it now: {exc}") from None
        self._lazy = tuple(n for n in self._lazy if n != name)

    @property
    def published_by(self) -> dict[str, Any] | None:
        """For a published version: the run that published it (``run_id``, ``as_of`` from its
        manifest). That run writes its own report after the publish, so the version's `runs`
        table ends with the run before it. None when live."""
        if self.version is None:
            return None
        return next(({"run_id": v["run_id"], "as_of": v["as_of"]} for v in self.versions()
                     if v["version"] == self.version), None)

    def check_tenant(self, tenant: str | None) -> str | None:
        """`tenant` when the lake (as read) holds memories of it, or None for None; else InputError
        naming the known tenants (a close one first), as the CLI says it."""
        if tenant is None:
            return None
        known = [r[0] for r in self._con().execute(
            "SELECT DISTINCT tenant FROM memories WHERE tenant IS NOT NULL ORDER BY 1").fetchall()]
        if tenant not in known:
            raise InputError(unknown_message("tenant", tenant, known, within=self.source))
        return tenant

    def versions(self) -> list[dict[str, Any]]:
        """The published versions kept under ``exports/``, oldest first: name, when, rows, current."""
        exports = self.root / "exports"
        current = (exports / "CURRENT").resolve().name if (exports / "CURRENT").exists() else None
        out = []
        for folder in sorted(exports.glob("v*"), key=lambda p: int(p.name[1:]) if p.name[1:].isdigit() else -1):
            manifest = folder / "manifest.json"
            if not (folder.name[1:].isdigit() and manifest.is_file()):
                continue
            data = json.loads(manifest.read_text(encoding="utf-8"))
            out.append({"version": folder.name, "as_of": data.get("as_of"), "run_id": data.get("run_id"),
                        "rows": (data.get("counts") or {}).get("rows"), "previous": data.get("previous"),
                        "current": folder.name == current})
        return out

    def changes(self, since: str | int, until: str | None = None, *, tenant: str | None = None,
                agent: str | None = None, user: str | None = None) -> duckdb.DuckDBPyRelation:
        """What changed in the published memories from version `since` to `until` (default: the
        version this view reads, or the current one when live): one row per memory and scope,
        ``change`` added / updated / removed with the removal's ``reason`` (the export's
        ``changes.parquet`` contract). Raises ReloadInFull when a version on the way is not kept."""
        if not (until or self.version) and not (self.root / "exports" / "CURRENT").exists():
            raise InputError(f"nothing is published in {self.root} yet: changes are between published versions "
                             "(the nightly run publishes one)")
        target = until or self.version or self._version_folder("published").name
        frame = compose_changes(self.root / "exports", since, str(target), tenant=tenant, agent=agent, user=user)
        return self._con().from_arrow(frame.to_arrow())

    # one attribute per table a notebook reads
    memories = property(lambda self: self.table("memories"), doc="every memory (published: the clean set)")
    history = property(lambda self: self.table("history"), doc="each version of each memory, before/after")
    conflicts = property(lambda self: self.table("conflicts"), doc="concurrent writes and contradictions")
    dedup_merges = property(lambda self: self.table("dedup_merges"), doc="each merged memory: cluster, canonical, pass, score")
    entities = property(lambda self: self.table("entities"), doc="the people, places and things named in memories")
    entity_facts = property(lambda self: self.table("entity_facts"), doc="what the memories say about each entity")
    summaries = property(lambda self: self.table("summaries"), doc="summary memories with their scores")
    summary_scores = property(lambda self: self.table("summary_scores"), doc="each summary's latest attempt and its scores")
    health = property(lambda self: self.table("health"), doc="health snapshots, one typed column per figure")
    health_alerts = property(lambda self: self.table("health_alerts"), doc="each alert of each snapshot")
    runs = property(lambda self: self.table("runs"), doc="nightly and ingest runs")
    run_steps = property(lambda self: self.table("run_steps"), doc="each step of each run, in order")
    run_counts = property(lambda self: self.table("run_counts"), doc="each count of each step of each run")
    step_errors = property(lambda self: self.table("step_errors"), doc="scopes a step failed for (skipped)")
    quarantine = property(lambda self: self.table("quarantine"), doc="rejected input: file, line, reason")
    retrieval_log = property(lambda self: self.table("retrieval_log"), doc="every search and whether it hit")
    cleanup_log = property(lambda self: self.table("cleanup_log"), doc="every tier move and status change by rule")
    publishes = property(lambda self: self.table("publishes"), doc="every publish attempt and its outcome")

    # ------------------------------------------------------------------ the rest
    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    def __enter__(self) -> "LakeView":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return f"<LakeView {self.root}: {self.source or 'closed'}{note}>"

