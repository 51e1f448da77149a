"""**Merging** of an entity's facts (seed 002 "实体记忆": the same fact is stored once), with dedup's
machinery: candidate pairs among an entity's facts come from dedup's MinHash pass (``near_pairs``)
over the sentences with their places and placeholders read as ``0`` (numbers already are), so
"Alice lives in Paris" and "Alice lives in Berlin" are one slot; then dedup's contradiction guard
(``contradiction``) decides, oldest fact first, against the facts still current:

- the same fact (no sign at all): the newer mention is merged into the older fact
  (``merged_into``), whose sources and count grow;
- a changed value - another place or placeholder in the same slot, or a changed number, date, a
  negation, an antonym or a swap: the newer one is a new fact that supersedes the old one
  (``superseded_by``, ``change``, ``valid_to``); both stay, the old one as history. Never a silent
  merge;
- an identifier or a replaced content word (two different things): two facts, both current.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

import polars as pl

from ...store import Policy
from ..dedup import DIFFERENT, contradiction, near_pairs
from .rows import _PLACEHOLDER, _key

SAME = "same"


def compare_facts(older: dict[str, Any], newer: dict[str, Any]) -> str | None:
    """How `newer` relates to `older`, two similar facts of one entity: ``"same"`` (merge), the
    kind of change that makes it supersede `older` (``place``, ``phone``..., or the guard's
    ``number``, ``date``, ``negation``, ``antonym x/y``, ``swap x/y``), or None (two facts)."""
    va, vb = Counter(older["slot_values"] or []), Counter(newer["slot_values"] or [])
    if va and vb and va != vb:
        if _frame(older["content"], va) != _frame(newer["content"], vb):
            return None  # more than the value changed ("the team for invoices" / "for refunds"): two facts
        changed = sorted((va - vb) + (vb - va))
        placeholder = next((m.group(1).lower() for v in changed for m in [_PLACEHOLDER.fullmatch(v)] if m), None)
        return placeholder or "place"
    reason = contradiction(older["content"], newer["content"])
    if reason is None:
        return SAME
    if reason in DIFFERENT:
        return None
    kind, _, detail = reason.partition(" ")
    if kind == "swap":
        items = [v for v in detail.split("/") if v]
        if _frame(older["content"], items) != _frame(newer["content"], items):
            return None  # a swap within a different statement is not a change of this one
    elif kind in ("number", "date") and _frame(older["content"]) != _frame(newer["content"]):
        return None
    return kind


# Values a fact may change while staying the same statement: numbers, weekdays, month names.
_VALUE_WORDS = re.compile(
    r"\d+(?:[.:/-]\d+)*|\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
    r"|(?:周|星期|礼拜)[一二三四五六日天]|[一二三四五六七八九十两]+(?=[月日号点个位人元天周年次])")


def _frame(content: str, values=()) -> str:
    """The statement with its changeable values (the given slot values, numbers, weekdays and
    months) read as "0": two facts supersede only when this frame is the same."""
    text = _key(content)
    for value in sorted((_key(v) for v in values), key=len, reverse=True):
        text = text.replace(value, "0")
    return _VALUE_WORDS.sub("0", text)


def _masked(content: str, values: list[str]) -> str:
    """The sentence with its places and placeholders read as "0" (dedup reads numbers so)."""
    text = _key(content)
    for value in sorted(values or [], key=len, reverse=True):
        text = text.replace(_key(value), "0")
    return text


def link_facts(facts: pl.DataFrame, policy: Policy) -> pl.DataFrame:
    """merged_into, superseded_by, change, valid_from and valid_to for every fact of the entities in
    `facts` (all their rows), oldest first per entity (see the module docstring)."""
    schema = {"fact_id": pl.String, "merged_into": pl.String, "superseded_by": pl.String, "change": pl.String,
              "valid_from": pl.Datetime("us"), "valid_to": pl.Datetime("us")}
    if facts.height == 0:
        return pl.DataFrame(schema=schema)
    order = ["entity_id", "mentioned_at", *(["written"] if "written" in facts.columns else []), "fact_id"]
    facts = facts.sort(order).with_row_index("row").with_columns(
        pl.col("row").cast(pl.Int64))
    frame = facts.select("row", scope=pl.col("entity_id").hash(),
                         text=pl.struct("content", "slot_values").map_elements(
                             lambda r: _masked(r["content"], r["slot_values"]), return_dtype=pl.String))
    d = policy.dedup
    pairs = near_pairs(frame, bands=d.minhash_bands, rows=d.minhash_rows, threshold=d.near_jaccard)
    neighbours: dict[int, set[int]] = defaultdict(set)
    for a, b in pairs.select("a", "b").iter_rows():
        neighbours[max(a, b)].add(min(a, b))  # compared when the newer one comes
    records = facts.to_dicts()
    canonical: dict[int, int] = {}
    current: set[int] = set()
    superseded: dict[int, tuple[int, str]] = {}
    for row in records:
        i = row["row"]
        heads = sorted({canonical[j] for j in neighbours.get(i, ()) if canonical.get(j) in current})
        same, replaced = None, []
        for h in heads:
            verdict = compare_facts(records[h], row)
            if verdict == SAME:
                same = h
                break
            if verdict is not None:
                replaced.append((h, verdict))
        if same is not None:
            canonical[i] = same
            continue
        canonical[i] = i
        current.add(i)
        for h, why in replaced:
            current.discard(h)
            superseded[h] = (i, why)
    out = []
    for row in records:
        i = row["row"]
        head = canonical[i]
        by, why = superseded.get(head, (None, None))
        out.append((row["fact_id"], None if head == i else records[head]["fact_id"],
                    records[by]["fact_id"] if by is not None and head == i else None,
                    why if head == i else None,
                    records[head]["mentioned_at"], records[by]["mentioned_at"] if by is not None and head == i else None))
    return pl.DataFrame(out, schema=schema, orient="row")
