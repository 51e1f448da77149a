"""The kept export versions, and rolling CURRENT back to one of them (issue 18, DESIGN "Publish").

A version that passed its checks can still be wrong in a way no check saw. `rollback` points
``exports/CURRENT`` back at a kept version atomically (readers switch on their next open) and
records who and why in ``rollbacks``. Nothing else changes: the lake keeps its data, the next
publish compares with the version CURRENT now points at and publishes forward again as
``v<max + 1>``. Retention (``[publish] keep_versions``) keeps the newest versions and always
CURRENT. A forget rewrites every kept version, so a rollback never brings forgotten text back.
"""

from __future__ import annotations

import unicodedata

from datetime import datetime
from typing import Any

from ..store import InputError, iso, transaction
from . import contract
from .export import _manifest, _versions, current_version, switch_current

# Manifest keys a listing shows (``files`` and ``schema`` are long and the same for every version).
LISTED = ("format_version", "version", "as_of", "run_id", "content_hash", "previous", "counts", "checks", "rewrites")


def list_publishes(lake) -> dict[str, Any]:
    """Every kept version, newest first, with its manifest (``LISTED`` keys), whether CURRENT
    points at it and its check results; every rollback; and the publishes the checks blocked
    (no version exists for those: the failed checks say why)."""
    current = current_version(lake)
    versions = []
    for number in reversed(_versions(lake.exports)):
        name = f"v{number}"
        manifest = _manifest(lake.exports / name)
        if not manifest:
            continue  # a folder without a manifest is no version (a publish killed before it)
        checks = manifest.get("checks") or []
        versions.append({**{k: manifest.get(k) for k in LISTED}, "current": name == current,
                         "checks_passed": sum(1 for c in checks if c.get("success")), "checks_total": len(checks),
                         "failed": [c["expectation"] for c in checks if not c.get("success")]})
    rollbacks = lake.sql("SELECT as_of, from_version, to_version, rolled_back_by, reason, run_id FROM rollbacks "
                         "ORDER BY as_of DESC, run_id DESC").to_dicts()
    blocked = lake.sql("SELECT as_of, run_id, failed FROM publishes WHERE status = 'blocked' "
                       "ORDER BY as_of DESC, run_id DESC").to_dicts()
    for row in rollbacks:
        row.update(as_of=iso(row["as_of"]), from_version=_name(row["from_version"]), to_version=_name(row["to_version"]))
    for row in blocked:
        row["as_of"] = iso(row["as_of"])
    return {"current": current, "versions": versions, "rollbacks": rollbacks, "blocked": blocked}


def rollback(lake, version: str | None = None, *, reason: str, by: str, as_of: datetime) -> dict[str, Any]:
    """Point CURRENT at `version` (default: the newest kept version older than CURRENT) and record
    who (`by`) and why (`reason`) in ``rollbacks``, both redacted like every other text.

    Refused (InputError, nothing changed): nothing published, an empty reason, a version not kept
    (the error lists the kept ones), the version CURRENT already points at, or one written in a
    format this memory-lake cannot read. Also refused when CURRENT moved while the rollback waited
    for the lake (a run published a new version): a rollback never undoes a version its caller
    did not see; the error names both. Returns ``{"from", "to", "by", "reason", "as_of", "run_id"}``."""
    from ..text import redact_text

    if not reason or not reason.strip():
        raise InputError("a rollback needs a reason (--reason TEXT): it is kept in the rollbacks table")
    for label, text in (("--by", by), ("--reason", reason)):
        hidden = sorted({f"U+{ord(c):04X}" for c in text or "" if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")})
        if hidden:
            # printed by `publishes` later, a control character would drive the reader's terminal
            raise InputError(f"{label} holds control or invisible characters ({', '.join(hidden)}): "
                             "write it as plain text on one line")
    run_id = lake.new_run_id("rollback", as_of)
    seen = current_version(lake)  # what the caller sees now, before any wait for the lock
    with lake.writer(purpose="rollback") as con:
        current = current_version(lake)
        if current != seen:
            raise InputError(f"CURRENT moved from {seen or 'nothing published'} to {current} while this rollback waited "
                             f"for the lake (a run published it): nothing rolled back; check `memory-lake publishes` "
                             f"and run rollback again if {current} should go too")
        if current is None:
            raise InputError("nothing is published yet: there is no CURRENT to roll back")
        kept = [f"v{n}" for n in _versions(lake.exports) if _manifest(lake.exports / f"v{n}")]
        target = version if version is None or version.startswith("v") else f"v{version}"
        if target is None:
            older = [name for name in kept if int(name[1:]) < int(current[1:])]
            if not older:
                raise InputError(f"no version older than CURRENT ({current}) is kept; kept versions: "
                                 f"{', '.join(kept) or 'none'} ([publish] keep_versions keeps the newest)")
            target = older[-1]
        elif target not in kept:
            raise InputError(f"version {version!r} is not kept; kept versions: {', '.join(kept) or 'none'}")
        if target == current:
            raise InputError(f"CURRENT already points at {target}; kept versions: {', '.join(kept)}")
        found = _manifest(lake.exports / target).get("format_version")
        if contract.format_major(found) != contract.READABLE_MAJOR:
            raise InputError(f"{target} was written in export format {found!r}, which agents loading format "
                             f"{contract.FORMAT_VERSION} cannot read; roll back to a version published since")
        salt = lake.tenant_salts([""])[""]
        who, why = redact_text(by, salt), redact_text(reason.strip(), salt)
        with transaction(con):  # the record commits only once CURRENT has switched
            con.execute("INSERT INTO rollbacks VALUES (?, ?, ?, ?, ?, ?)",
                        [as_of, int(current[1:]), int(target[1:]), who, why, run_id])
            switch_current(lake.exports, target)
    return {"from": current, "to": target, "by": who, "reason": why, "as_of": iso(as_of), "run_id": run_id}


def _name(number: int | None) -> str | None:
    return None if number is None else f"v{number}"

