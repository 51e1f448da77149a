"""Entity and context commands: `entities` (who and what a scope's memories mention, with merged
facts) and `context` (the context pack an agent loads for a query, within a token budget)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.text import Text

from .common import JsonOpt, LakeOpt, _open, _options, _show, err, out


def entities(
    ctx: typer.Context,
    tenant: Annotated[Optional[str], typer.Option(help="Only this tenant.")] = None,
    agent: Annotated[Optional[str], typer.Option(help="Only this agent's memories.")] = None,
    user: Annotated[Optional[str], typer.Option(help="Only this user's memories.")] = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """People, places, organisations and things the memories mention, most mentioned first: each
    with its current facts (merged: how many mentions, which memories), and its history (facts a
    newer value superseded). Read-only; the nightly run's extract_entities step keeps them."""
    opts = _options(ctx, lake, json_out)
    result = _open(opts).entities(tenant=tenant, agent=agent, user=user)
    _show(opts, result, lambda: _print_entities(result))


def _print_entities(result: dict) -> None:
    for note in result["notes"][:-1] if not result["entities"] else result["notes"]:
        err.print(f"note: {note}")
    if not result["entities"]:
        out.print(Text(f"0 entities: {result['notes'][-1]}" if result["notes"] else "0 entities"))
        return
    for entity in result["entities"]:
        scope = " / ".join(v or "-" for v in (entity["tenant"], entity["agent_id"], entity["user_id"]))
        out.print(Text(f"{entity['name']} ({entity['kind']}, {entity['mention_count']} mention"
                       f"{'s' if entity['mention_count'] != 1 else ''}, last {entity['last_mentioned'][:10]}) "
                       f"[{scope}] {entity['entity_id']}"))
        for fact in entity["facts"]:
            out.print(Text(f"  - {fact['content']}  ({fact['valid_from'][:10]}; {fact['mentions']}x from "
                           f"{', '.join(fact['sources'])}; confidence {fact['confidence']:g})"))
        for fact in entity["history"]:
            out.print(Text(f"  ~ {fact['content']}  ({fact['valid_from'][:10]} to {(fact['valid_to'] or '?')[:10]}; "
                           f"{fact['change']} changed, superseded by {fact['superseded_by']}; from "
                           f"{', '.join(fact['sources'])})"
                           + (f" - disputed: open conflict {fact['disputed']}, a user decides "
                              f"(memory-lake conflicts list)" if fact.get("disputed") else "")))
    out.print(f"{len(result['entities'])} entities")


def context(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What the agent is about to answer (English or Chinese).")],
    tenant: Annotated[str, typer.Option(help="Tenant (required).")],
    agent: Annotated[Optional[str], typer.Option(help="Only this agent's memories.")] = None,
    user: Annotated[Optional[str], typer.Option(help="Only this user's memories.")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(
        "--max-tokens", help="Token budget (the embedding model's tokenizer); default [context] max_tokens, 2000.",
        show_default=False)] = None,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The context pack for QUERY as Markdown: important memories, the latest summary, relevant
    long-term memories (hybrid search), known entities with their current facts and the most recent
    items, each line dated, disputed ones marked with their other side, within the token budget
    (the least important lines go first). Read-only, like search."""
    opts = _options(ctx, lake, json_out)
    pack = _served_pack(opts, query, tenant=tenant, agent=agent, user=user, max_tokens=max_tokens)
    if pack is None:
        pack = _open(opts).build_context(query, tenant=tenant, agent=agent, user=user, max_tokens=max_tokens)
    _show(opts, pack.as_dict(), lambda: _print_pack(pack))


class _ServedPack:
    """A context pack a running `memory-lake serve` built (its JSON, printed as a local one)."""

    def __init__(self, data: dict):
        self._data = {k: v for k, v in data.items() if k != "version"}
        self.notes = [*data.get("notes", []), f"answered by memory-lake serve from published {data.get('version')}"]
        self._data["notes"] = self.notes
        self.markdown, self.tokens, self.max_tokens = data.get("markdown"), data.get("tokens"), data.get("max_tokens")

    def as_dict(self) -> dict:
        return self._data


def _served_pack(opts, query: str, **params):
    """Issue 38.5: the pack from a `memory-lake serve` running for this lake, or None."""
    from ..serve import ask
    from ..store import resolve_lake_dir

    data = ask(resolve_lake_dir(opts.lake), "/v1/context", {"query": query, **params})
    return _ServedPack(data) if data is not None else None


def _print_pack(pack) -> None:
    for note in pack.notes:
        err.print(f"note: {note}")
    if pack.markdown:
        out.print(Text(pack.markdown.rstrip("\n")))
    err.print(f"{pack.tokens} of {pack.max_tokens} tokens")
