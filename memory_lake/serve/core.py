"""What the query service answers, shared by the HTTP API (`http.py`) and the MCP server (`mcp.py`),
so the two return the same data for the same question (issue 38, items 1 and 2).

**Reads come from the published version.** `PublishedLake` is the `Lake` whose every read answers
from the version ``exports/CURRENT`` points at, the data that passed the publish gate, whether or
not a run holds the lake: it reports the live file as unavailable, so the storage lake's busy-time
reads (`Lake.reading`: views over the version's Parquet files, here opened once per version and
kept; `Lake.data_identity`: the key of search's scope cache) serve every request. CURRENT is
resolved on each request (one ``readlink`` and a few ``stat`` calls), so a new publish or a
rollback is seen by the next request without a restart, and each answer names the version it read
(``version``).

**Same calls as the CLI.** A search is `Lake.search` (which appends its line to
``events/searches-<day>.jsonl``, so the nightly run's hit rate counts it), a context pack
`Lake.build_context`, the entities `Lake.entities`, the health `Lake.health`, a scope's records
`load_export`, the changes `changes_since`. The answers are those functions' JSON forms,
with ``version`` first. The library's note that a read "answered from published vN because a run
holds the lake" is left out: here every read does, and ``version`` says which.

**Names are checked against the version read.** An unknown tenant, agent or user is an
`UnknownScope` naming the closest published names (load_export's rule), so a typo never looks like
an empty memory.

**Writes go through the inbox.** `remember` writes a one-record snapshot with `write_snapshot`,
never into the database: the next ingest (``memory-lake ingest``, or the nightly run) brings it in,
and the next publish makes it searchable here. A tenant the published version does not name is
written all the same (a new tenant starts that way), with a warning naming the known tenants, the
closest first: a typo is seen before the ingest makes it a tenant.
"""

from __future__ import annotations

import contextlib
import difflib
import hmac
import ipaddress
import json
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import polars as pl

from ..api import Lake
from ..ingest import write_snapshot
from ..publish import UnknownScope, changes_since, check_names, load_export
from ..store import LISTED, SUGGESTIONS, InputError, LakeBusy, iso, resolve_as_of, schema
from ..text import ModelUnavailable, embedding_models, load_model, redact_text, tokenize

TOKEN_ENV = "MEMORY_LAKE_TOKEN"
LOOPBACK_NAMES = ("localhost",)
MODES = ("keyword", "semantic", "hybrid")  # for the schemas clients read; search checks the mode itself
MAX_K = 100  # results of one search
MAX_PAGE = 1000  # records of one /v1/memories page
DEFAULT_PAGE = 100
# Search's own notes for a read of the published version while a run holds the lake
# (memory_lake.search.query and store.Lake.reading): every read of this service is one.
BUSY_NOTE = "the lake is busy (a run holds it); answered from published {version}"
BUSY_EMPTY_TAIL = "memories ingested since that publish become searchable when the run ends"
QUEUED_NOTE = ("written to the inbox; the next ingest (`memory-lake ingest`, or the nightly run) brings it into "
               "the lake, and the publish after it makes it searchable here (this server reads published "
               "versions only)")


class NothingPublished(LakeBusy):
    """The lake has no published version yet: there is nothing this service may read."""


class PublishedLake(Lake):
    """The lake as the service reads it: every read answers from ``exports/CURRENT`` (see the
    module's docstring). Writes are not made through it.

    The storage lake opens a version's views for each read (tens of milliseconds: a DESCRIBE per
    Parquet file), which a busy-time CLI command pays once; a server pays it per request. So the
    views of the version being served are opened once and kept, and each read gets its own cursor
    on them (DuckDB cursors may run in parallel threads). The two newest versions stay open, so a
    request that started before a publish finishes on the version it began with."""

    KEPT_VERSIONS = 2

    def __init__(self, root: Path, policy) -> None:
        super().__init__(root, policy)
        self._open: dict[tuple, tuple[contextlib.ExitStack, Any, str, str | None]] = {}
        self._open_guard = threading.Lock()
        self._served = threading.local()

    def is_busy(self) -> bool:
        return True  # data_identity: the published version's key, never the live file's

    @contextlib.contextmanager
    def reader(self, wait_s: float | None = None) -> Iterator[Any]:
        raise LakeBusy(f"{self.root}: the query service reads the published version only")
        yield  # pragma: no cover (a generator, so that entering the context raises)

    @contextlib.contextmanager
    def reading(self) -> Iterator[tuple[Any, str, str | None]]:
        con, source, note = self._views()
        cursor = con.cursor()
        try:
            self._served.source = source
            yield cursor, source, note
        finally:
            cursor.close()

    def answered(self, call) -> tuple[Any, str | None]:
        """`call()`'s result and the version (``v<N>``) its last read in this thread answered from;
        None when it read nothing."""
        self._served.source = None
        result = call()
        source = getattr(self._served, "source", None)
        return result, source.removeprefix("published ") if source else None

    def _views(self) -> tuple[Any, str, str | None]:
        """The open views of the version CURRENT points at (opened by `Lake.reading`, kept open)."""
        for _ in range(3):  # a publish may switch CURRENT while the views open: then open the new one
            key = _version_key(self.exports / "CURRENT")
            with self._open_guard:
                if key in self._open:
                    _, con, source, note = self._open[key]
                    return con, source, note
                stack = contextlib.ExitStack()
                con, source, note = stack.enter_context(super().reading())
                if key is not None and source == f"published {Path(key[0]).name}":
                    self._open[key] = (stack, con, source, note)
                    while len(self._open) > self.KEPT_VERSIONS:
                        self._open.pop(next(iter(self._open)))[0].close()
                    return con, source, note
                stack.close()
        raise LakeBusy(f"{self.root}: exports/CURRENT kept changing while it was read; try again")

    def close(self) -> None:
        """Close the kept views (a server shutting down)."""
        with self._open_guard:
            while self._open:
                self._open.pop(next(iter(self._open)))[0].close()


def _version_key(current: Path) -> tuple | None:
    """What identifies the published version's files now: its folder and the state of its manifest
    and memories (a forget rewrites a kept version in place), as `Lake.data_identity` reads them."""
    folder = current.resolve()
    try:
        manifest, memories = (folder / "manifest.json").stat(), (folder / "memories.parquet").stat()
    except OSError:
        return None
    return (str(folder), manifest.st_ino, manifest.st_size, manifest.st_mtime_ns,
            memories.st_ino, memories.st_size, memories.st_mtime_ns)


@dataclass(frozen=True)
class Version:
    """One published version as read for a request: its name, folder and manifest."""

    name: str
    folder: Path
    manifest: dict[str, Any]
    names: pl.DataFrame  # distinct (tenant, agent_id, user_id) of every published row
    known: set[tuple] = field(default_factory=set)  # scopes `check_scope` found in it

    @property
    def scopes(self) -> list[dict[str, Any]]:
        """The scopes with active or disputed memories (the manifest's ``counts.scopes``)."""
        return list(self.manifest.get("counts", {}).get("scopes", []))


def package_version() -> str:
    """memory-lake's installed version, which both servers report."""
    from importlib import metadata

    try:
        return metadata.version("memory-lake")
    except metadata.PackageNotFoundError:  # pragma: no cover (run from a source tree)
        return "0"


def jsonable(data: Any) -> Any:
    """`data` as JSON values (datetimes as ISO 8601 UTC text with Z), as the CLI's --json prints it."""
    def default(value: Any) -> Any:
        if isinstance(value, datetime):
            return iso(value) if value.tzinfo is None else value.isoformat()
        if isinstance(value, date):
            return value.isoformat()
        if isinstance(value, pl.DataFrame):
            return value.to_dicts()
        if isinstance(value, (set, frozenset, tuple)):
            return list(value)
        if hasattr(value, "as_dict"):
            return value.as_dict()
        if hasattr(value, "item"):  # numpy scalars
            return value.item()
        return str(value)

    return json.loads(json.dumps(data, ensure_ascii=False, default=default))


def is_loopback(host: str) -> bool:
    """True for an address only this machine reaches (127.0.0.0/8, ::1, localhost)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def resolve_token(host: str, token: str | None) -> str | None:
    """The token requests must carry: `token`, else $MEMORY_LAKE_TOKEN, else none. Binding an
    address other machines reach without one is an InputError: the lake's memories would be open
    to the network."""
    token = token if token is not None else os.environ.get(TOKEN_ENV) or None
    if token is not None and not token.strip():
        raise InputError(f"the token is empty: give --token a secret (or set {TOKEN_ENV})")
    if token is None and not is_loopback(host):
        raise InputError(f"binding {host} opens the lake to other machines: give --token SECRET (or set {TOKEN_ENV}); "
                         "clients then send 'Authorization: Bearer SECRET'. Without a token, bind 127.0.0.1")
    return token


def token_matches(expected: str, header: str | None) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <expected>`` (compared in constant time)."""
    scheme, _, given = (header or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), expected.encode())


UNAUTHORIZED = ("this server needs a token: send the header 'Authorization: Bearer <token>' with the token it was "
                f"started with (--token or ${TOKEN_ENV})")


class Service:
    """One lake, read from its published version: every answer of the HTTP API and the MCP server.

    ``Service(path)`` opens an existing lake (LakeNotFound otherwise) and loads its policy once;
    `warm` loads the embedding models, once per process."""

    def __init__(self, lake_dir: str | os.PathLike | None = None):
        opened = Lake.open(lake_dir)
        self.root = opened.root
        self.lake = PublishedLake(opened.root, opened.policy)
        self._versions: dict[tuple, Version] = {}
        self._guard = threading.Lock()
        self._loads_version: str | None = None  # _first_load's bookkeeping, for the version served
        self._loaded: set[tuple] = set()
        self._loading: dict[tuple, threading.Lock] = {}

    def warm(self) -> list[str]:
        """Load the lake's embedding models, the tokenizer's dictionaries and the published version's
        views now, so the first request does not pay for them; returns the models loaded (a model that
        cannot load is left to search, which says so in its notes)."""
        loaded = []
        for name in embedding_models(self.lake.policy):
            with contextlib.suppress(ModelUnavailable):
                load_model(name).embed_queries(["warm"], 1)  # a query encoder made on first use, now
                loaded.append(name)
        tokenize("warm 预热")
        with contextlib.suppress(LakeBusy), self.lake.reading():
            pass  # the published version's views, opened before the first request
        return loaded

    # ---------------------------------------------------------------- the version read
    def current(self) -> Version:
        """The version CURRENT points at now (its manifest and names read once per version and
        kept while its files are unchanged); NothingPublished before the first publish."""
        key = _version_key(self.lake.exports / "CURRENT")
        if key is None:
            raise NothingPublished(f"nothing is published in {self.root} yet: run `memory-lake publish` (or the nightly "
                                   "run); this server picks the version up without a restart")
        with self._guard:
            found = self._versions.get(key)
        if found is None:
            folder = Path(key[0])
            manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            names = pl.read_parquet(folder / "memories.parquet", columns=["tenant", "agent_id", "user_id"]).unique()
            found = Version(folder.name, folder, manifest, names)
            with self._guard:
                self._versions = {key: found}  # only the version being served is kept
        return found

    def _read(self, call) -> tuple[Any, str]:
        """`call()`'s result and the version it read: the one its reads answered from (a publish
        may land between CURRENT's check and the read), else the current one."""
        result, version = self.lake.answered(call)
        return result, version or self.current().name

    @contextlib.contextmanager
    def _first_load(self, version: str, *scope: str | None) -> Iterator[None]:
        """The first search of a scope in a version loads it (seconds at 10k memories) into search's
        cache; concurrent first searches of that scope wait for it instead of each loading it."""
        key = (version, *scope)
        with self._guard:
            if self._loads_version != version:
                self._loads_version, self._loaded, self._loading = version, set(), {}
            if key in self._loaded:
                lock = None
            else:
                lock = self._loading.setdefault(key, threading.Lock())
        if lock is None:
            yield
            return
        with lock:
            yield
            with self._guard:
                if self._loads_version == version:
                    self._loaded.add(key)

    @staticmethod
    def _notes(notes: list[str], version: str) -> list[str]:
        """The library's notes without its busy-time wording (here every read is of a published
        version, whose names were checked): the note of a read "answered from published" goes, and
        an empty published scope is said as search says it of the live lake."""
        kept = []
        for note in notes:
            if note == BUSY_NOTE.format(version=version):
                continue
            if note.startswith("no memory of ") and note.endswith(BUSY_EMPTY_TAIL):
                scope = note.removeprefix("no memory of ").split(f" is in published {version},")[0]
                note = f"no memory to search in {scope}: none is active or conflicted"
            kept.append(note)
        return kept

    def check_scope(self, version: Version, tenant: str | None, agent: str | None = None,
                    user: str | None = None) -> None:
        """UnknownScope when `version` holds no memory of `tenant`, or of `agent` / `user` within the
        scope named before it, with the closest published names; InputError for a missing tenant."""
        if not isinstance(tenant, str) or not tenant.strip():
            raise InputError("tenant is required: the tenant whose memories to read, e.g. tenant=acme")
        if (tenant, agent, user) in version.known:
            return
        if any(isinstance(n, str) and redact_text(n, b"probe") != n for n in (tenant, agent, user)):
            return  # a name holding PII is stored as its placeholder: search maps it (and says when nothing matched)
        check_names(version.names, tenant, agent, user, f" (published {version.name})")
        version.known.add((tenant, agent, user))

    # ---------------------------------------------------------------- reads
    def search(self, query: str, *, tenant: str, agent: str | None = None, user: str | None = None,
               mode: str = "hybrid", k: int = 10, as_of: str | None = None) -> dict[str, Any]:
        """`Lake.search` of the published version (logged to events/ as the CLI's search is):
        ``{"version", "search_id", "mode_used", "notes", "results"}``."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("query is empty: give the words to look for, e.g. query=dark mode")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise InputError(f"k must be a whole number from 1 to {MAX_K}, not {k!r}")
        current = self.current()
        self.check_scope(current, tenant, agent, user)
        with self._first_load(current.name, tenant, agent, user):
            found = self.lake.search(query, tenant=tenant, agent=agent, user=user, mode=mode, limit=k, as_of=as_of)
        version = found.source.removeprefix("published ") if found.source else current.name
        answer = found.as_dict()
        answer["notes"] = self._notes(answer["notes"], version)
        return {"version": version, **answer}

    def context(self, query: str | None, *, tenant: str, agent: str | None = None, user: str | None = None,
                max_tokens: int | None = None, as_of: str | None = None) -> dict[str, Any]:
        """`Lake.build_context` of the published version: ``{"version", "markdown", "tokens",
        "max_tokens", "sections", "dropped", "notes"}``. Without a query, the pack has no relevant
        section (as the published context.md)."""
        self.check_scope(self.current(), tenant, agent, user)
        pack, version = self._read(lambda: self.lake.build_context(
            query, tenant=tenant, agent=agent, user=user, max_tokens=max_tokens, as_of=as_of))
        answer = pack.as_dict()
        answer["notes"] = self._notes(answer["notes"], version)
        return {"version": version, **answer}

    def entities(self, *, tenant: str, agent: str | None = None, user: str | None = None) -> dict[str, Any]:
        """`Lake.entities` of the published version: ``{"version", "entities", "notes"}``."""
        self.check_scope(self.current(), tenant, agent, user)
        found, version = self._read(lambda: self.lake.entities(tenant=tenant, agent=agent, user=user))
        answer = jsonable(found)
        answer["notes"] = self._notes(answer.get("notes", []), version)
        return {"version": version, **answer}

    def health(self, *, tenant: str | None = None) -> dict[str, Any]:
        """`Lake.health` of the published version (the latest stored snapshot, whole lake or one tenant)."""
        current = self.current()
        if tenant is not None:
            self.check_scope(current, tenant)
        found, version = self._read(lambda: self.lake.health(tenant=tenant))
        return {"version": version, **jsonable(found)}

    def scopes(self, tenant: str) -> dict[str, Any]:
        """The tenant's published scopes (agent, user, memories per tier, folder under the version):
        ``{"version", "tenant", "scopes"}``."""
        current = self.current()
        self.check_scope(current, tenant)
        scopes = [s for s in current.scopes if s.get("tenant") == tenant]
        return {"version": current.name, "tenant": tenant, "scopes": scopes}

    def memories(self, *, tenant: str, agent: str | None = None, user: str | None = None,
                 limit: int = DEFAULT_PAGE, offset: int = 0) -> dict[str, Any]:
        """One page of a scope's published records, as `load_export` gives them (active and disputed
        memories, in memory.json's order): ``{"version", "total", "offset", "limit", "next_offset",
        "memories"}``; `next_offset` is null on the last page."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InputError(f"limit must be a whole number from 1 to {MAX_PAGE}, not {limit!r}")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InputError(f"offset must be a whole number >= 0, not {offset!r}")
        current = self.current()
        self.check_scope(current, tenant, agent, user)
        records = load_export(self.root, tenant=tenant, agent=agent, user=user, version=current.name, missing_ok=True)
        page = records[offset: offset + limit]
        more = offset + len(page) < len(records)
        return {"version": current.name, "tenant": tenant, "agent": agent, "user": user, "total": len(records),
                "offset": offset, "limit": limit, "next_offset": offset + len(page) if more else None,
                "memories": jsonable(page)}

    def changes(self, since: str | None = None, *, tenant: str, agent: str | None = None, user: str | None = None,
                records: bool = False) -> dict[str, Any]:
        """What changed in a scope's loaded memories since version `since` (default: the version the
        current one's changes are against, i.e. the latest publish's changes): `publish.changes_since`
        up to the version named, ``{"version", "from", "to", "changes"}``; with `records`, each added or
        updated memory carries its record. ReloadInFull when `since` is not kept; UnknownScope for a
        name neither the version nor its changes know."""
        current = self.current()
        if not isinstance(tenant, str) or not tenant.strip():
            raise InputError("tenant is required: the tenant whose changes to read, e.g. tenant=acme")
        if since is None:
            since = current.manifest.get("changes_from")
            if since is None:
                raise InputError(f"{current.name} is the first published version: there is nothing before it to "
                                 "compare with; load the scope in full (its memories, or load_export)")
        else:
            since = self.check_since(current, since)
        try:
            # a scope forgotten entirely since `since` is gone from the current names, not from the changes
            found = changes_since(self.root, since, tenant=tenant, agent=agent, user=user, version=current.name,
                                  records=records)
        except UnknownScope:
            self.check_scope(current, tenant, agent, user)  # the same finding, in this service's words
            raise
        return {"version": current.name, **jsonable(found)}

    def check_since(self, current: Version, since: str | int) -> str:
        """`since` as a version's name (``"v3"`` from ``"v3"``, ``3`` or ``"3"``); InputError naming the
        form and the version the lake is at when it is no version's name (``abc``, ``v0``) or later
        than every version published here. One published but no longer kept passes: changes_since
        answers it with ReloadInFull (reload in full)."""
        text = str(since) if isinstance(since, (str, int)) and not isinstance(since, bool) else ""
        match = re.fullmatch(r"v?(\d+)", text)
        number, at = int(match[1]) if match else 0, int(current.name[1:])
        ask = 'pass the "version" an answer of this server named (the lake is at {})'
        if number == 0:
            counted = " (versions count from v1)" if match else ""
            raise InputError(f"since must be a published version, v<N>, not {since!r}{counted}: "
                             + ask.format(current.name))
        newest = max((int(p.name[1:]) for p in self.lake.exports.glob("v*")
                      if p.name[1:].isdigit() and (p / "manifest.json").is_file()), default=at)
        if number > max(newest, at):
            rolled_back = f", rolled back from v{newest}" if newest > at else ""
            raise InputError(f"since v{number} is later than any version published here: "
                             + ask.format(current.name + rolled_back))
        return f"v{number}"

    def published_scopes(self) -> tuple[str, list[dict[str, Any]]]:
        """(version, the manifest's scopes): what MCP lists as resources."""
        current = self.current()
        return current.name, current.scopes

    def scope_context_file(self, path: str) -> str:
        """The published ``context.md`` of the scope whose folder is ``scopes/<path>``; UnknownScope
        for a path the version does not list (names are looked up, never joined into a path)."""
        current = self.current()
        for scope in current.scopes:
            if scope.get("path") == f"scopes/{path}":
                return (current.folder / scope["path"] / "context.md").read_text(encoding="utf-8")
        raise UnknownScope(f"published {current.name} has no scope folder {path!r}: list the resources again")

    # ---------------------------------------------------------------- the one write
    def remember(self, content: str, *, tenant: str, agent: str | None = None, user: str | None = None,
                 type: str | None = None, tier: str | None = None, tags: list[str] | None = None,
                 importance: float | None = None, source: str | None = None, context_id: str | None = None,
                 session_id: str | None = None, id: str | None = None, as_of: str | None = None) -> dict[str, Any]:
        """Write one memory as a snapshot into the inbox (`write_snapshot`; never the database),
        stamped ``created_at`` `as_of` (default now): ``{"file", "queued", "record", "note",
        "warnings"}``; `warnings` (`new_tenant_warnings`) say when the tenant is new to the lake."""
        if not isinstance(tenant, str) or not tenant.strip():
            raise InputError("tenant is required: the tenant the memory belongs to, e.g. tenant=acme")
        if not isinstance(content, str) or not content.strip():
            raise InputError("content is empty: give the text to remember")
        if tier is not None and _alias(tier) not in schema.TIER_ALIASES:
            raise InputError(f"tier must be one of {', '.join(schema.TIERS)}, not {tier!r}")
        if type is not None and _alias(type) not in schema.TYPE_ALIASES:
            raise InputError(f"type must be one of {', '.join(schema.TYPES)}, not {type!r}")
        if importance is not None and (isinstance(importance, bool) or not 0 <= importance <= 1):
            raise InputError(f"importance must be a number from 0 to 1, not {importance!r}")
        if tags is not None and (isinstance(tags, str) or not all(isinstance(t, str) for t in tags)):
            raise InputError(f"tags must be a list of words, not {tags!r}")
        record: dict[str, Any] = {"id": id, "tenant": tenant, "agent_id": agent, "user_id": user, "content": content,
                                  "type": type, "tier": tier, "tags": tags, "importance": importance,
                                  "source": source, "context_id": context_id, "session_id": session_id,
                                  "created_at": iso(resolve_as_of(as_of))}
        record = {key: value for key, value in record.items() if value is not None}
        path = write_snapshot([record], self.root)
        file = f"inbox/{path.name}"
        return {"file": file, "queued": True, "record": record, "note": QUEUED_NOTE,
                "warnings": self.new_tenant_warnings(tenant, file)}

    def new_tenant_warnings(self, tenant: str, file: str) -> list[str]:
        """[a warning] when the published version names no memory of `tenant`: legitimate for a new
        tenant, a silent new tenant for a typo, so it names the known tenants (the closest first) and
        the inbox `file` to remove before the next ingest if it is one. [] when the tenant is known,
        when nothing is published yet (no tenant to compare with), and for a name holding PII (stored
        as its placeholder, which the published names hold)."""
        try:
            current = self.current()
        except LakeBusy:
            return []
        known = sorted(current.names.get_column("tenant").drop_nulls().unique().to_list())
        if tenant in known or redact_text(tenant, b"probe") != tenant:
            return []
        close = difflib.get_close_matches(tenant, known, n=SUGGESTIONS)
        hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
        listed = ", ".join(known[:LISTED]) + (f", … ({len(known)} in all)" if len(known) > LISTED else "")
        return [f"tenant {tenant!r} has no memories yet ({hint}known tenants: {listed}; published {current.name}); "
                f"the snapshot will create it at the next ingest (a typo? remove {file} before then)"]


def _alias(value: str) -> str:
    """A tier or type as the snapshot contract compares spellings (store.schema's aliases)."""
    return "".join(ch for ch in str(value).lower() if ch not in "-_ ")
