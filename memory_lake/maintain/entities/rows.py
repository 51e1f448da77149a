"""What a row of ``entity_facts`` is made of (seed 002 "实体记忆", **Facts**): the sentences of a
memory that mention an entity (one row per entity, memory and sentence), with the source memory, a
confidence, and the places and PII placeholders the sentence holds (``slot_values``).

Here: the sentences of a memory (``sentences``), a name's identity within a scope (``_key``: NFKC,
lower case, single spaces) and the short hashes of entity and fact ids (``_hash``), the confidence
each extraction signal gives (``CONFIDENCE``), the patterns of ingest's PII placeholders, and the
extractor's identity (**Incremental**: ``extractor_key``, ``EXTRACTOR_VERSION`` with the user
dictionary's hash; a change re-reads every memory).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from ...store import Policy

EXTRACTOR_VERSION = "entities-1"
KINDS = ("person", "place", "organisation", "thing")
# Extraction confidence per signal: a user-dictionary word is certain; a tag or a pattern strong;
# a bare capitalised word weaker; one that opens a sentence weaker still.
CONFIDENCE = {"user_dict": 1.0, "pattern": 0.9, "tag": 0.8, "capitalised": 0.7, "sentence_start": 0.6, "new_word": 0.6}


# PII placeholders (ingest's redaction): a changed one is a changed value of the same slot.
_PLACEHOLDER = re.compile(r"\[(PHONE|EMAIL|ID_CN|CARD|IP):[0-9A-Fa-f]+\]")
_ANY_PLACEHOLDER = re.compile(r"\[(?:PHONE|EMAIL|ID_CN|CARD|IP):[0-9A-Fa-f]+\]|\[SECRET\]")
_SENTENCE = re.compile(r"[^.!?。！？；;\n]+(?:[.!?。！？；;]+|$)")
_HAN = re.compile(r"[\u3400-\u9fff]")


def _key(name: str) -> str:
    """The identity of a name within a scope: NFKC, lower case, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", name).lower().split())


def _hash(*parts: str | None) -> str:
    return hashlib.md5("\x1f".join("\x00" if p is None else p for p in parts).encode("utf-8")).hexdigest()[:16]


def extractor_key(policy: Policy) -> str:
    """The extractor's identity: its version and the user dictionary (a change re-reads everything)."""
    return f"{EXTRACTOR_VERSION}:{_hash(*sorted(policy.entities.user_dict))[:8]}"


def sentences(text: str) -> list[str]:
    """The sentences of a memory (., !, ?, ;, their Chinese forms, line breaks), trimmed."""
    return [s.strip() for s in _SENTENCE.findall(text or "") if s.strip(" \t.!?。！？；;")]
