"""Export files kept from version to version (issue 42: a night where little changed costs little).

Staging an export wrote every file of a version every night: at 1M memories that is every lake
table to ``tables/*.parquet`` (the embeddings alone are gigabytes) and every scope's
``memory.json``, though most of them did not change. So each staged file is recorded in
``export_files`` with a digest of what it is made from and the version it went to:

* a table (kind ``table``): its columns and types, its row count and the sum of its rows' hashes
  (order aside), with the export's format version; a table written in parts (``export.PARTED``:
  the embeddings, one file per night they were made) has one entry per part, ``<table>/<part>``. A table with the same digest is hard-linked
  from the version that holds it (its size checked), not written again: the same rows, and the
  version folders stay independent (a file is removed only when no version links to it).
* a scope's records (kind ``scope``): the digest of the scope's published rows (``publish_scopes``)
  and the code that writes them. The records part of ``memory.json`` (everything after
  ``"memories": ``) is read back from that version, its SHA-256 checked (a forget's rewrite or an
  edit builds it again), and written after tonight's header and changes: the same bytes building it
  would give (tests/publish/test_kept.py compares both).

Every file this module writes or links has its SHA-256 noted, so the manifest hashes only the rest
(``take_hashes``); the scopes whose records were kept are noted for the publish suite, which checks
the other scopes' rows and whole-lake aggregates (``unchanged_scopes``, export.check_export). The table holds digests, hashes, sizes, names and versions, never text.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from ..store import code_fingerprint, file_sha256
from . import contract
from .packs import replace_rows

MEMORIES_MARK = ', "memories": '  # in memory.json, between the header and the records
_VERSION = re.compile(r"v[0-9]+")  # a version folder (export._versions)
STAGED_FILE = ".staged.json"  # staging only: what staging knows for the checks and the manifest (removed then)
# What turns a scope's rows into its records' text besides the rows: this code and DuckDB; and what
# the publish suite judged them with (a scope kept is not checked again, see export.check_export).
_SOURCES = ("publish/export.py", "publish/contract.py", "publish/kept.py", "publish/checks.py", "text/redact",
            "store/schema.py")
_PACKAGES = ("duckdb",)


def table_digests(con: duckdb.DuckDBPyConnection, tables: list[str]) -> dict[str, str]:
    """Per table: a digest of its columns, types and rows (count and the sum of the rows' hashes)."""
    digests = {}
    for table in tables:
        columns = con.execute(f'DESCRIBE "{table}"').fetchall()
        count, total = con.execute(f'SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM "{table}" t').fetchone()
        digests[table] = _digest(columns, count, total)
    return digests


def part_digests(con: duckdb.DuckDBPyConnection, table: str, part: str) -> dict[str, str]:
    """Per part of a table written one file per part (`part`: the SQL of a row's part name): the
    digest `table_digests` gives a table, of the part's rows."""
    columns = con.execute(f'DESCRIBE "{table}"').fetchall()
    return {name: _digest(columns, count, total) for name, count, total in con.execute(
        f'SELECT {part} AS part, count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM "{table}" t GROUP BY ALL ORDER BY 1'
    ).fetchall()}


def _digest(columns: list[tuple], count: int, total: int) -> str:
    payload = json.dumps([contract.FORMAT_VERSION, [c[:2] for c in columns], count, str(total)])
    return hashlib.sha256(payload.encode()).hexdigest()


def scope_digest(rows_digest: str) -> str:
    """The digest a scope's records are kept under: its rows' digest and the code that writes them."""
    return hashlib.sha256((code_fingerprint(_SOURCES, _PACKAGES) + rows_digest).encode()).hexdigest()


@dataclass
class KeptFiles:
    """The files of the last staged export (``export_files``) and those staged tonight."""

    exports: Path
    version: str = ""  # the version tonight's files are staged for
    known: dict[tuple[str, str], tuple[str, str, int, str]] = field(default_factory=dict)  # (kind, name) -> (digest, sha256, size, version)
    tonight: list[tuple[str, str, str, str, int, str]] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)  # path below the staging folder -> SHA-256
    unchanged: list[tuple[str, str | None, str | None]] = field(default_factory=list)  # scopes whose records were kept
    linked_tables: int = 0
    _version_names: list[str] | None = field(default=None, repr=False)
    _checked: dict[str, tuple[str, str, int]] = field(default_factory=dict, repr=False)  # scope_records' (text, sha256, size)

    def link_table(self, table: str, digest: str, target: Path, relpath: str | None = None) -> bool:
        """Hard-link `table`'s file (`relpath` in a version, default ``tables/<file name>``; a part of
        a table written in parts is named ``<table>/<part>``) from the version that holds it when its
        digest is the same; False when there is none (or its file is gone or another size).

        The file is recorded under the newest version holding that very file (one inode), usually
        CURRENT, not under the version that first wrote it: that one is pruned after
        ``[publish] keep_versions`` nights, and a part that never changes (the first night's
        embeddings, gigabytes at 1M memories) would be written again each time it was. When the
        version named is gone, a version holding a file of the same size and SHA-256 serves."""
        relpath = relpath or f"tables/{target.name}"
        found = self.known.get(("table", table))
        if found is None or found[0] != digest:
            return False
        source = self._source(found, relpath)
        if source is None:
            return False
        try:
            os.link(source, target)
            holder = self._newest_holder(source, relpath)
        except OSError:
            return False
        self.linked_tables += 1
        self._record("table", table, digest, found[1], found[2], relpath, holder)
        return True

    def _versions(self) -> list[str]:
        """The version folders, newest first (read once)."""
        if self._version_names is None:
            try:
                names = [p.name for p in self.exports.iterdir() if _VERSION.fullmatch(p.name) and p.is_dir()]
            except OSError:
                names = []
            self._version_names = sorted(names, key=lambda name: -int(name[1:]))
        return self._version_names

    def _source(self, found: tuple[str, str, int, str], relpath: str) -> Path | None:
        """The file recorded as `found` (digest, sha256, size, version): in its version when there,
        else in the newest other version holding the same bytes."""
        named = self.exports / found[3] / relpath
        try:
            if named.stat().st_size == found[2]:
                return named
        except OSError:
            pass
        for version in self._versions():
            other = self.exports / version / relpath
            try:
                if version != found[3] and other.stat().st_size == found[2] and file_sha256(other) == found[1]:
                    return other
            except OSError:
                continue
        return None

    def _newest_holder(self, source: Path, relpath: str) -> str:
        """The newest version whose `relpath` is `source` itself (the same inode)."""
        held = source.stat()
        for version in self._versions():
            try:
                other = (self.exports / version / relpath).stat()
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (held.st_dev, held.st_ino):
                return version
        return source.parents[relpath.count("/")].name  # its own version

    def wrote_table(self, table: str, digest: str, path: Path, relpath: str | None = None) -> None:
        self._record("table", table, digest, file_sha256(path), path.stat().st_size, relpath or f"tables/{path.name}",
                     self.version)

    def scope_records(self, folder: str, digest: str) -> str | None:
        """The records text of `folder`'s memory.json kept under `digest`; None when there is none,
        or the file is gone or changed since."""
        found = self.known.get(("scope", folder))
        if found is None or found[0] != digest:
            return None
        try:
            data = (self.exports / found[3] / "scopes" / folder / "memory.json").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        start = data.find(MEMORIES_MARK)
        if start < 0 or not data.endswith("}"):
            return None
        records = data[start + len(MEMORIES_MARK):-1]
        encoded = records.encode("utf-8")
        if hashlib.sha256(encoded).hexdigest() != found[1] or len(encoded) != found[2]:
            return None
        self._checked[folder] = (records, found[1], found[2])  # wrote_scope need not hash them again
        return records

    def wrote_scope(self, folder: str, digest: str, records: str, document: str, relpath: str) -> None:
        """Record tonight's memory.json of `folder` (its records kept under `digest`) and its hash."""
        checked = self._checked.pop(folder, None)
        if checked is not None and checked[0] is records:  # kept from the last version, its hash checked
            sha256, size = checked[1], checked[2]
        else:
            encoded = records.encode("utf-8")
            sha256, size = hashlib.sha256(encoded).hexdigest(), len(encoded)
        self.tonight.append(("scope", folder, digest, sha256, size, self.version))
        self.hashes[relpath] = hashlib.sha256(document.encode("utf-8")).hexdigest()

    def _record(self, kind: str, name: str, digest: str, sha256: str, size: int, relpath: str, version: str) -> None:
        self.tonight.append((kind, name, digest, sha256, size, version))
        if kind == "table":
            self.hashes[relpath] = sha256


def load_kept(con: duckdb.DuckDBPyConnection, exports: Path, version: str) -> KeptFiles:
    kept = KeptFiles(exports, version)
    if con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'export_files'").fetchone()[0]:
        kept.known = {(kind, name): (digest, sha, size, at) for kind, name, digest, sha, size, at in con.execute(
            "SELECT kind, name, digest, sha256, size, version FROM export_files").fetchall()}
    return kept


def save_kept(con: duckdb.DuckDBPyConnection, kept: KeptFiles) -> None:
    """Keep tonight's files for the next export (replacing the last one's)."""
    replace_rows(con, "export_files", pl.DataFrame(
        kept.tonight, schema={"kind": pl.String, "name": pl.String, "digest": pl.String, "sha256": pl.String,
                              "size": pl.Int64, "version": pl.String}, orient="row"))


def put_staged(staging: Path, kept: KeptFiles) -> None:
    """Leave what staging knows for the checks (`unchanged_scopes`) and the manifest (`take_hashes`)."""
    (staging / STAGED_FILE).write_text(json.dumps({"hashes": kept.hashes, "unchanged": kept.unchanged}),
                                       encoding="utf-8")


def unchanged_scopes(staging: Path) -> list[tuple[str, str | None, str | None]]:
    """The scopes whose rows staging found as a published version holds them (so the publish suite
    passed them); [] when staging left nothing."""
    try:
        return [tuple(scope) for scope in json.loads((staging / STAGED_FILE).read_text(encoding="utf-8"))["unchanged"]]
    except (OSError, ValueError, KeyError):
        return []


def take_hashes(staging: Path) -> dict[str, str]:
    """The hashes staging left (removing their file); {} when there are none."""
    path = staging / STAGED_FILE
    try:
        hashes = json.loads(path.read_text(encoding="utf-8"))["hashes"]
    except (OSError, ValueError, KeyError):
        hashes = {}
    path.unlink(missing_ok=True)
    return hashes


__all__ = ["KeptFiles", "MEMORIES_MARK", "STAGED_FILE", "load_kept", "part_digests", "put_staged", "save_kept",
           "scope_digest", "table_digests", "take_hashes", "unchanged_scopes"]
