"""Names a person types: tenants, agents, users, memory and conflict ids.

An unknown name is an error that suggests the closest known ones (STYLE "Outputs speak to
strangers"), never an empty success: ``search --tenant nosuch`` saying "0 rows" hides a typo.
Checked against the live lake. While another process's run holds the lake, nothing is checked: the
published version may lag the run (a command then answers from it, or queues, as it says).
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterator, Sequence

import duckdb

from .errors import InputError, LakeBusy

# How many close matches an error suggests, and how many known names it lists besides.
SUGGESTIONS = 3
LISTED = 5
# Ids are many: the closest by Jaro-Winkler (in SQL, over the whole table) are ranked by difflib.
ID_CANDIDATES = 50
# Scopes found known, per data identity (`Lake.data_identity`): a repeated search reads nothing more.
KNOWN_SCOPES_KEPT = 1024
_KNOWN_SCOPES: set[tuple] = set()

# kind -> (table, column, how the user lists them)
ID_KINDS = {
    "memory": ("memories", "id", 'memory-lake sql "SELECT id, tenant, content FROM memories"'),
    "conflict": ("conflicts", "conflict_id", "memory-lake conflicts list --all"),
}
PLURALS = {"memory": "memories", "conflict": "conflicts"}


_NOW = object()


def check_scope(lake, tenant: str | None, agent: str | None = None, user: str | None = None,
                identity: object = _NOW) -> None:
    """Raise InputError when `tenant` has no memories, or `agent` / `user` has none within the scope
    named before it, suggesting the closest known names. None means "not narrowed". `identity`:
    the lake's `data_identity()` when the caller has just taken it (a search takes it once)."""
    levels = [(label, column, value) for label, column, value in
              (("tenant", "tenant", tenant), ("agent", "agent_id", agent), ("user", "user_id", user)) if value is not None]
    if not levels:
        return
    identity = lake.data_identity() if identity is _NOW else identity
    key = (identity, tenant, agent, user)
    if identity is not None and key in _KNOWN_SCOPES:
        return  # a search repeats its scope: no read while nothing changed
    with _live(lake) as con:
        if con is None:
            return
        where: list[str] = []
        params: list[str] = []
        for label, column, value in levels:
            clause = " AND ".join([*where, f"{column} = ?"])
            if not con.execute(f"SELECT EXISTS (SELECT 1 FROM memories WHERE {clause})", [*params, value]).fetchone()[0]:
                inside = " AND ".join([*where, f"{column} IS NOT NULL"])
                known = [k for (k,) in con.execute(f"SELECT DISTINCT {column} FROM memories WHERE {inside} ORDER BY 1",
                                                   params).fetchall()]
                scope = ", ".join(f"{l} {v!r}" for l, _, v in levels[:len(where)])
                raise InputError(unknown_message(label, value, known, within=scope))
            where.append(f"{column} = ?")
            params.append(value)
    if identity is not None:
        if len(_KNOWN_SCOPES) >= KNOWN_SCOPES_KEPT:
            _KNOWN_SCOPES.clear()
        _KNOWN_SCOPES.add(key)


def check_ids(lake, ids: Sequence[str] | str | None, kind: str = "memory") -> None:
    """Raise InputError naming every id of `ids` that the lake does not hold (`kind` memory or
    conflict), with the closest known ids of each."""
    wanted = [] if ids is None else [ids] if isinstance(ids, str) else list(ids)
    if not wanted:
        return
    table, column, listing = ID_KINDS[kind]
    with _live(lake) as con:
        if con is None:
            return
        unknown = [i for (i,) in con.execute(f"SELECT w FROM unnest(?::VARCHAR[]) AS t(w) WHERE w NOT IN "
                                             f"(SELECT {column} FROM {table}) ORDER BY w", [wanted]).fetchall()]
        if not unknown:
            return
        parts = []
        for name in unknown[:SUGGESTIONS]:  # a few names, each one bulk query
            near = [n for (n,) in con.execute(f"SELECT {column} FROM {table} ORDER BY jaro_winkler_similarity({column}, ?) "
                                              f"DESC, {column} LIMIT {ID_CANDIDATES}", [name]).fetchall()]
            close = difflib.get_close_matches(name, near, n=SUGGESTIONS)
            parts.append(f"{name!r} (did you mean {', '.join(repr(c) for c in close)}?)" if close else repr(name))
        (total,) = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    more = f" and {len(unknown) - SUGGESTIONS} more" if len(unknown) > SUGGESTIONS else ""
    label = f"unknown {kind} id{'s' if len(unknown) > 1 else ''}"
    raise InputError(f"{label} {', '.join(parts)}{more}; the lake holds {total} {kind if total == 1 else PLURALS[kind]}: see `{listing}`")


def unknown_message(label: str, name: str, known: Sequence[str], within: str = "") -> str:
    """``unknown tenant 'acmee': did you mean 'acme'? known tenants: acme, globex (2)``."""
    close = difflib.get_close_matches(name, list(known), n=SUGGESTIONS)
    hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    where = f" in {within}" if within else ""
    if not known:
        return f"unknown {label} {name!r}: no memory{where} names any {label}"
    listed = ", ".join(known[:LISTED]) + (f", … ({len(known)} in all)" if len(known) > LISTED else "")
    return f"unknown {label} {name!r}: {hint}known {label}s{where}: {listed}"


@contextlib.contextmanager
def _live(lake) -> Iterator[duckdb.DuckDBPyConnection | None]:
    """A read connection to the live lake, or None while another process's run holds it."""
    stack = contextlib.ExitStack()
    try:
        con, source, _ = stack.enter_context(lake.reading())
    except LakeBusy:
        con, source = None, None
    with stack:
        yield con if source == "live" else None
