"""The context pack (seed 002 ``buildContext(query)``): one Markdown block an agent loads into its
prompt, within a token budget.

Sections, in the order they print:

1. **Important** - the scope's important memories;
2. **Latest summary** - the newest active summary the lake wrote for the scope (type ``summary`` in
   long_term, operator ``system``: it passed the summary gate), when there is one; a memory an agent
   sent as type ``summary`` is shown like any other memory;
3. **Relevant memories** - long-term memories the hybrid search finds for the query (only in a
   pack built for a query);
4. **Known entities** - people, places, organisations and things with their current facts (for a
   query: the entities it names or its relevant memories mention; without one, the most mentioned,
   then the most recently mentioned);
5. **Recent** - the most recent working and short-term memories.

**Budget.** Tokens are counted with the embedding model's tokenizer (``count_tokens``: Chinese one
token per character; a word it cannot read or a character it drops counts by its length, and any
text at least one token per 16 bytes, so a budget of N tokens also bounds the pack to 16 N bytes).
Lines are kept in this order of importance - important, summary, relevant (best first), entities,
recent (newest first) - and the pack stops at the first line that does not fit, so the least
important lines go first and an important memory is never dropped while a recent one stays. A
single line longer than a quarter of the budget (the query's line too) is shortened (``…``). The
pack's count is at most the sum of its lines' counts (each with its newline), so it never exceeds
the budget.

Every memory line starts with its date (``created_at``); an entity's facts carry theirs. A memory
whose value is disputed (status ``conflicted``, or a side of an open contradiction) ends with
``[disputed, id X: contradicts Y; ...]``, and the other side of the contradiction is printed right
below it (also marked), within the same budget, so an agent never reads one side alone.

``build_context`` reads like search (one read of the scope, live or, while a run holds the lake,
from the published version) and writes nothing but the search's log line. The published
``context.md`` of each scope is ``scope_pack`` without a query (publish's stage step).
"""

from __future__ import annotations

import unicodedata

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..store import InputError, Policy, check_scope, iso, resolve_as_of
from ..text import count_tokens

# How many lines each section offers before the budget decides (seed 002: search(query, 3),
# getRecent(10)); an entity line shows its newest current facts.
RELEVANT_LIMIT = 5
ENTITY_LIMIT = 10
FACTS_PER_ENTITY = 3
RECENT_LIMIT = 10
TITLES = {"important": "Important", "summary": "Latest summary", "relevant": "Relevant memories",
          "entities": "Known entities", "recent": "Recent"}
DISPLAY_ORDER = ("important", "summary", "relevant", "entities", "recent")
KEEP_ORDER = ("important", "summary", "relevant", "entities", "recent")
_ELLIPSIS = "…"


@dataclass
class ContextPack:
    """A context pack: its Markdown, its size in tokens, the budget, the lines of each section
    (``sections``: title and lines, in print order), how many lines the budget left out, and notes."""

    markdown: str
    max_tokens: int
    sections: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        """The Markdown's token count, counted when asked (the export writes context.md without it:
        counting every pack's whole text was a fifth of rebuilding it)."""
        return count_tokens(self.markdown) if self.markdown else 0

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of ``memory-lake context --json``."""
        return {"markdown": self.markdown, "tokens": self.tokens, "max_tokens": self.max_tokens,
                "sections": self.sections, "dropped": self.dropped, "notes": list(self.notes)}


def _day(value: Any) -> str:
    """The date of a timestamp (a datetime or ISO text) as YYYY-MM-DD."""
    if value is None:
        return "????-??-??"
    if isinstance(value, datetime):
        return value.date().isoformat()
    return str(value)[:10]


def _when(value: Any) -> tuple:
    """A sort key for a timestamp given as a datetime or ISO text: its ``iso`` text (a pack sorts its
    memories and entities by it, a few hundred keys each: a naive datetime, as the lake holds them,
    skips ``iso``'s dropping of the time zone)."""
    if value is None:
        return (0, "")
    if isinstance(value, datetime):
        return (1, value.isoformat() + "Z" if value.tzinfo is None else iso(value))
    return (1, str(value))


def _text(content: str | None) -> str:
    return " ".join((content or "").split())


def _escape(value: str | None) -> str:
    return markdown_text(value)


# ---------------------------------------------------------------------------- context.md
_MD_SPECIAL = set("\\`*_[]<>#|~!&\"/")
_LINE_BREAKS = {"\u0085", "\u2028", "\u2029"}


def markdown_text(value: str | None) -> str:
    """A scope field or id as inert Markdown on one line: ``_`` for a missing value, ``""`` for
    an empty one, Markdown punctuation backslash-escaped and control or line-break characters
    written as ``\\uXXXX`` - so a name can neither start a line nor a section, and two different
    values never print alike."""
    if value is None:
        return "_"  # as publish names the folder of a missing agent or user
    if value == "":
        return '""'
    if value.isascii() and value.isprintable() and _MD_SPECIAL.isdisjoint(value):
        return value  # nothing to escape (ASCII's only Cc characters are not printable; it has no Cf, Zl, Zp)
    out = []
    for char in value:
        if char in _MD_SPECIAL:
            out.append("\\" + char)
        elif unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") or char in _LINE_BREAKS:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return "".join(out)


def _dispute(record: dict[str, Any]) -> str:
    if not record.get("conflict"):
        return ""
    others = list(record.get("conflict_with") or [])
    parts = []
    if others:
        parts.append("contradicts " + ", ".join(_escape(o) for o in others))
    if record.get("status") == "conflicted" or not others:
        parts.append("another value")
    return f" [disputed, id {_escape(record['id'])}: {' and '.join(parts)}; waits for a user's decision]"


def memory_line(record: dict[str, Any]) -> str:
    """``- YYYY-MM-DD (type) content`` and the dispute mark."""
    return f"- {_day(record.get('created_at'))} ({record['type']}) {_text(record['content'])}{_dispute(record)}"


def _shorten(line: str, cap: int) -> str:
    """`line` cut to at most `cap` tokens (so at most 16 bytes a token), ending in an ellipsis; never
    inside a Latin word ("Postgres" is not cut to "Pos…"): the cut goes back to the space before it.
    The result always fits: a guess from the token rate, then a search over the cut."""
    if count_tokens(line) <= cap:
        return line

    def fits(keep: int) -> bool:
        return count_tokens(line[:keep].rstrip() + _ELLIPSIS) <= cap

    keep = len(line)
    for _ in range(8):
        keep = max(1, int(keep * cap / max(count_tokens(line[:keep] + _ELLIPSIS), 1) * 0.95))
        if fits(keep):
            break
    if not fits(keep):  # the rate misled the guess (a count that is not proportional to length)
        low, high = 0, keep  # fits(0): the ellipsis alone is one token, and cap >= 1
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if fits(mid) else (low, mid - 1)
        keep = low
    if 0 < keep < len(line) and _latin(line[keep - 1]) and _latin(line[keep]):
        start = keep                                      # back to where the Latin word (or number) starts
        while start > 0 and _latin(line[start - 1]):
            start -= 1
        if start > len(line) // 4 and fits(start):
            keep = start
    return line[:keep].rstrip() + _ELLIPSIS


def _latin(char: str) -> bool:
    return char.isascii() and char.isalnum()


def entity_line(entity: dict[str, Any], facts: list[dict[str, Any]]) -> str:
    """``- Name (kind, N mentions): fact (YYYY-MM-DD); ...`` with the newest current facts."""
    shown = "; ".join(f"{_text(f['content'])} ({_day(f['valid_from'])})" for f in facts[:FACTS_PER_ENTITY])
    more = len(facts) - FACTS_PER_ENTITY
    return (f"- {_escape(entity['name'])} ({entity['kind']}, {entity['mentions']} mention"
            f"{'s' if entity['mentions'] != 1 else ''}): {shown}" + (f"; and {more} more" if more > 0 else ""))


# What _entities reads of an entity fact row besides what maintain.group_facts reads (FACT_ROW_FIELDS).
ENTITY_FIELDS = ("entity_id", "name", "kind")


def _entities(entity_rows: list[dict[str, Any]], allowed: set[str]) -> list[dict[str, Any]]:
    """Entities with their current facts counted over `allowed` memories only (the pack's), newest
    fact first; entities with no current fact left out."""
    from ..maintain import group_facts

    by_entity: dict[str, list[dict[str, Any]]] = {}
    for row in entity_rows:
        by_entity.setdefault(row["entity_id"], []).append(row)
    out = []
    for entity_id, rows in by_entity.items():
        facts = group_facts(rows, allowed)
        current = [f for f in reversed(facts) if f["current"]]
        if not current:
            continue
        sources = {s for f in facts for s in f["sources"]}
        out.append({"entity_id": entity_id, "name": rows[0]["name"], "kind": rows[0]["kind"],
                    "mentions": len(sources), "sources": sources, "facts": current,
                    "last": _latest(facts)})
    return out


def _latest(facts: list[dict[str, Any]]) -> tuple:
    """``max(_when(f["valid_from"]) for f in facts)`` for facts in ``group_facts``' order (oldest first),
    keying only the newest second's when they are naive datetimes: their iso texts order as they do
    but within one second (a whole second's text has no fraction), so no earlier fact can be later."""
    newest = facts[-1]["valid_from"]
    if not isinstance(newest, datetime) or newest.tzinfo is not None:
        return max(_when(f["valid_from"]) for f in facts)
    second = newest.replace(microsecond=0)
    latest = _when(newest)
    for fact in reversed(facts[:-1]):
        value = fact["valid_from"]
        if not isinstance(value, datetime) or value.tzinfo is not None:
            return max(_when(f["valid_from"]) for f in facts)
        if value < second:
            break
        latest = max(latest, _when(value))
    return latest


def pack_head(header: dict[str, Any], query: str | None = None, cap: int = 0) -> list[str]:
    """The pack's first lines: its scope, ``As of <as_of>.`` (the third line, the only one that
    reads `as_of`) and, with a query, the query cut to `cap` tokens."""
    scope = header.get("scope") or " / ".join(_escape(header.get(k)) for k in ("tenant", "agent_id", "user_id"))
    head = [f"# Memory context: {scope}", "", f"As of {header['as_of']}."]
    if query is not None:
        head.append(_shorten(f"Query: {_text(_escape(query))}", cap))
    return head


def scope_pack(header: dict[str, Any], records: list[dict[str, Any]], entity_rows: list[dict[str, Any]] | None,
               *, max_tokens: int, query: str | None = None, relevant: list[str] | None = None,
               notes: list[str] | None = None) -> ContextPack:
    """The pack of one scope. `header`: tenant, agent_id, user_id, as_of; `records`: its active and
    disputed memories (id, tier, type, content, status, conflict, conflict_with, created_at,
    importance); `entity_rows`: its entity facts (``maintain.scope_entity_facts`` rows); `relevant`:
    the ids a search found for `query`, best first (None: a pack without a query, as context.md)."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InputError(f"max_tokens must be a positive integer, not {max_tokens!r}")
    by_id = {r["id"]: r for r in records}
    order = sorted(sorted(records, key=lambda r: r["id"]), key=lambda r: _when(r.get("created_at")), reverse=True)
    # most important first, then newest (order is newest first; sorted() keeps it among equals)
    important = sorted((r for r in order if r["tier"] == "important"), key=lambda r: -(r.get("importance") or 0))
    # the lake's own summary, which passed the summary gate (operator system); a memory an agent
    # typed `summary` is a memory like any other (issue 37.5: one dated 9999-12-31 led every pack).
    # A record that does not say who wrote it is a caller's own, as before operators were passed.
    summaries = [r for r in order if r["type"] == "summary" and r["tier"] == "long_term"
                 and r.get("operator", "system") == "system"]
    summary = summaries[:1]
    taken = {r["id"] for r in important} | {r["id"] for r in summary}
    found = [by_id[i] for i in (relevant or []) if i in by_id and i not in taken][:RELEVANT_LIMIT]
    taken |= {r["id"] for r in found}
    recent = [r for r in order if r["tier"] in ("working", "short_term") and r["id"] not in taken][:RECENT_LIMIT]

    entities = _entities(entity_rows or [], set(by_id))
    if query is not None:
        text = " ".join(query.lower().split())
        hits = set(relevant or [])
        scored = [(e["name"].lower() in text, len(e["sources"] & hits), e) for e in entities]
        entities = [e for named, linked, e in sorted(scored, key=lambda s: (not s[0], -s[1], -s[2]["mentions"],
                                                                            s[2]["name"])) if named or linked]
    else:
        entities.sort(key=lambda e: e["name"])
        entities.sort(key=lambda e: e["last"], reverse=True)
        entities.sort(key=lambda e: -e["mentions"])
    entities = entities[:ENTITY_LIMIT]

    cap = max(8, max_tokens // 4)
    items: dict[str, list[list[str]]] = {name: [] for name in TITLES}
    shown: set[str] = set()

    def unit(record: dict[str, Any]) -> list[str]:
        """A memory line and, when disputed, the other side's lines right below it."""
        lines = [_shorten(memory_line(record), cap)]
        shown.add(record["id"])
        for other in record.get("conflict_with") or []:
            if other in by_id and other not in shown:
                shown.add(other)
                lines.append(_shorten(memory_line(by_id[other]), cap))
        return lines

    for name, rows in (("important", important), ("summary", summary), ("relevant", found), ("recent", recent)):
        for record in rows:
            if record["id"] not in shown:
                items[name].append(unit(record))
    items["entities"] = [[_shorten(entity_line(e, e["facts"]), cap)] for e in entities]

    head = pack_head(header, query, cap)
    # The Markdown is the head, then per section "\n## Title\n\n" and each line with its newline:
    # the sum of those parts' counts bounds the whole's (text/tokens.py), bytes included.
    total = count_tokens("\n".join(head) + "\n")
    kept: dict[str, list[list[str]]] = {name: [] for name in TITLES}
    offered = sum(len(v) for v in items.values())
    full = total > max_tokens
    for name in KEEP_ORDER:
        for lines in items[name]:
            if full:
                break
            cost = (sum(count_tokens(line + "\n") for line in lines)
                    + (0 if kept[name] else count_tokens(f"\n## {TITLES[name]}\n\n")))
            if total + cost > max_tokens:
                full = True
                break
            kept[name].append(lines)
            total += cost
    out = list(head)
    sections = []
    for name in DISPLAY_ORDER:
        if kept[name]:
            lines = [line for unit_lines in kept[name] for line in unit_lines]
            out += ["", f"## {TITLES[name]}", "", *lines]
            sections.append({"name": name, "title": TITLES[name], "lines": lines})
    markdown = "\n".join(out) + "\n"
    notes = list(notes or [])
    dropped = offered - sum(len(v) for v in kept.values())
    if total > max_tokens:
        notes.append(f"the budget of {max_tokens} tokens is smaller than the pack's heading ({total} tokens)")
        markdown, total = "", 0
    elif dropped:
        notes.append(f"{dropped} line(s) left out to stay within {max_tokens} tokens")
    shortened = sum(line.endswith(_ELLIPSIS) for section in sections for line in section["lines"])
    if shortened and markdown:
        notes.append(f"{shortened} line(s) shortened (…) to a quarter of the budget, {cap} tokens: a larger "
                     "max_tokens keeps them whole")
    return ContextPack(markdown, max_tokens, sections, dropped, notes)


def build_context(lake, query: str, *, tenant: str, agent: str | None = None, user: str | None = None,
                  max_tokens: int | None = None, as_of: datetime | str | None = None) -> ContextPack:
    """The context pack for `query` in a scope (seed 002 buildContext), read-only like search. The
    budget defaults to ``[context] max_tokens``. An unknown tenant, agent or user is an InputError
    naming the known ones; an empty scope gives a pack with a note saying so."""
    from ..maintain import CONTRADICTION_PARTNERS_SQL, scope_entity_facts
    from .query import search

    policy: Policy = lake.policy
    budget = policy.for_tenant(tenant).context.max_tokens if max_tokens is None else max_tokens
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InputError(f"--max-tokens must be a positive integer, not {budget!r}")
    if not isinstance(tenant, str) or not tenant:
        raise InputError("a tenant is required (--tenant)")
    when = resolve_as_of(as_of)
    check_scope(lake, tenant, agent, user)
    where, params = ["m.tenant = ?"], [tenant]
    for column, value in (("agent_id", agent), ("user_id", user)):
        if value is not None:
            where.append(f"m.{column} = ?")
            params.append(value)
    with lake.reading() as (con, _source, note):
        has_conflicts = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'conflicts'").fetchone()[0]
        partners = CONTRADICTION_PARTNERS_SQL if has_conflicts else \
            "SELECT NULL::VARCHAR AS id, []::VARCHAR[] AS conflict_with WHERE false"
        records = con.execute(
            f"""
            WITH partners AS ({partners})
            SELECT m.id, m.tier, m.type, m.content, m.status, m.importance, m.created_at, m.operator,
                   m.status = 'conflicted' OR p.id IS NOT NULL AS conflict,
                   coalesce(p.conflict_with, []::VARCHAR[]) AS conflict_with
            FROM memories m LEFT JOIN partners p ON p.id = m.id
            WHERE {' AND '.join(where)} AND m.status IN ('active', 'conflicted')
            ORDER BY m.id
            """, params).pl().to_dicts()
        entity_rows = scope_entity_facts(con, " AND ".join(w.replace("m.", "e.") for w in where), params).to_dicts()
    notes = [note] if note else []
    relevant: list[str] = []
    if records and query and query.strip():
        results = search(lake, query, tenant=tenant, agent=agent, user=user, limit=RELEVANT_LIMIT, tier="long_term",
                         as_of=when)
        relevant = [r.id for r in results]
    scope_name = ", ".join(f"{label} {value}" for label, value in (("tenant", tenant), ("agent", agent), ("user", user))
                           if value is not None)
    if not records:
        notes.append(f"no active memory in {scope_name}: the pack has nothing to show")
    scope = " / ".join("(all)" if v is None else _escape(v) for v in (tenant, agent, user))
    header = {"tenant": tenant, "agent_id": agent, "user_id": user, "as_of": iso(when), "scope": scope}
    return scope_pack(header, records, entity_rows, max_tokens=budget, query=query, relevant=relevant, notes=notes)
