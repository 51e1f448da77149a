"""The lake's secrets, kept out of the database: the per-tenant PII salts and the key that signs a
user's queued decisions.

``<lake>/secrets.json`` (mode 0600) is read and written only by this module. No SQL connection the
lake hands out can reach it: the user's ``sql`` runs on sealed connections (no file access) and
the database holds no copy, so no query text, however built (``query_table('tenant_' || 'salts')``),
finds a salt. With a tenant's salt a ``[PHONE:…]`` placeholder could be reversed by trying every
number, and with the signing key an agent could forge a user's decision.

The file is created on first use under the write lock (every writer of it holds the lake's
write lock) and replaced whole (`atomic_write`), so a crash leaves the old file or the new one.
Lakes made before secrets moved here kept the salts in a ``tenant_salts`` table: schema migration
15 moves them into this file, then drops the table (`move_salts_out`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

import duckdb

from .errors import MemoryLakeError

SECRETS_FILE = "secrets.json"
SECRETS_FORMAT = 1


def secrets_path(root: Path) -> Path:
    return root / SECRETS_FILE


def _load(root: Path) -> dict:
    path = secrets_path(root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"format": SECRETS_FORMAT, "salts": {}, "signing_key": None}
    except (OSError, ValueError) as exc:
        raise MemoryLakeError(f"{path} cannot be read ({exc}): it holds the lake's PII salts and signing key; "
                              "restore it from a backup (`memory-lake restore-backup`)") from None
    data.setdefault("salts", {})
    data.setdefault("signing_key", None)
    return data


def _store(root: Path, data: dict) -> None:
    """Replace the file whole, readable by its owner only."""
    path = secrets_path(root)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def tenant_salts(root: Path, tenants, create: bool = True) -> dict[str, bytes]:
    """The HMAC salt of each tenant ('' = lake-wide), created on first use when `create` (the
    caller holds the write lock). Without `create`, an unknown tenant is left out."""
    wanted = sorted(set(tenants) | {""})
    data = _load(root)
    known = data["salts"]
    missing = [t for t in wanted if t not in known]
    if missing and create:
        for tenant in missing:
            known[tenant] = secrets.token_bytes(32).hex()
        _store(root, data)
    return {t: bytes.fromhex(known[t]) for t in wanted if t in known}


def signing_key(root: Path) -> bytes:
    """The lake's key for signing a user's queued decisions, created on first use."""
    data = _load(root)
    if not data["signing_key"]:
        data["signing_key"] = secrets.token_bytes(32).hex()
        _store(root, data)
    return bytes.fromhex(data["signing_key"])


def move_salts_out(con: duckdb.DuckDBPyConnection) -> None:
    """Migration 15's first half: copy a ``tenant_salts`` table's salts into the secrets file of the
    lake whose database `con` is (a salt already in the file wins: it is the one in use)."""
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'tenant_salts' "
                         "AND database_name = current_database()").fetchone()[0]
    if not exists:
        return
    rows = con.execute("SELECT tenant, salt FROM tenant_salts").fetchall()
    if not rows:
        return
    (db_file,) = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    root = Path(db_file).parent
    data = _load(root)
    added = {t: bytes(s).hex() for t, s in rows if t not in data["salts"]}
    if added:
        data["salts"].update(added)
        _store(root, data)


def sign(root: Path, data: bytes) -> str:
    """A user's mark on `data` (a snapshot file's bytes, a decision's canonical JSON): HMAC-SHA256
    with the lake's signing key, 32 hex digits. Only a process that can read secrets.json (the CLI
    or the Python API on the lake's machine) can make it; an agent writing to the inbox cannot."""
    return hmac.new(signing_key(root), data, hashlib.sha256).hexdigest()[:32]


def signed(root: Path, data: bytes, signature: str | None) -> bool:
    """Whether `signature` is the lake's mark on `data` (constant-time)."""
    if not signature or not secrets_path(root).exists():
        return False
    return hmac.compare_digest(sign(root, data), str(signature))


# A snapshot a user's edit writes (ingest's `edit_memory`) ends its name in this mark and the
# lake's signature of its bytes: only then does ingest honour its ``operator: user``.
USER_MARK = "~user-"


def name_signature(path: Path) -> str | None:
    """The signature a snapshot's name carries (None: the file is not signed)."""
    stem = path.name.rsplit(".", 1)[0]
    return stem.rpartition(USER_MARK)[2] if USER_MARK in stem else None
