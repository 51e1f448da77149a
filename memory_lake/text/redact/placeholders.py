"""What a found value becomes: ``[KIND:xxxxxxxx]`` for PII, ``[SECRET]`` for a secret.

``xxxxxxxx`` is the first 8 hex characters of HMAC-SHA256(salt, normalised value), so one value of
one tenant always gets one placeholder. A classifier (``validate``) reports each value it finds as
a :class:`_Hit`; :func:`_render` writes the candidate back with its hits replaced.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass

PLACEHOLDER_KINDS = ("PHONE", "EMAIL", "ID_CN", "CARD", "IP")
SECRET_PLACEHOLDER = "[SECRET]"
HASH_HEX_CHARS = 8


@dataclass(frozen=True)
class _Hit:
    """One PII value inside a candidate string: [start, end) and its normalised form."""

    start: int
    end: int
    kind: str
    normalised: str


def _render(candidate: str, hits: Sequence[_Hit], salt: bytes) -> str:
    """``candidate`` with each hit replaced by its placeholder."""
    if len(hits) == 1 and hits[0].start == 0 and hits[0].end == len(candidate):
        return _placeholder(hits[0].kind, hits[0].normalised, salt)
    pieces: list[str] = []
    position = 0
    for hit in hits:
        pieces.append(candidate[position:hit.start])
        pieces.append(_placeholder(hit.kind, hit.normalised, salt))
        position = hit.end
    pieces.append(candidate[position:])
    return "".join(pieces)


def _placeholder(kind: str, normalised: str, salt: bytes) -> str:
    if kind == "SECRET":
        return SECRET_PLACEHOLDER  # secrets are dropped, never hashed
    digest = hmac.digest(salt, normalised.encode("utf-8"), hashlib.sha256)
    return f"[{kind}:{digest.hex()[:HASH_HEX_CHARS]}]"
